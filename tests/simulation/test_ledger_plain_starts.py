"""The ledger's plain case (pooled BB, no bandwidth, no node set asked, no local SSD): a start
takes the lowest-numbered free nodes and the pool's BB, an end gives them back, and a start
that does not fit is refused with the reason, as in the general case."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import Job, Platform
from bbopt.errors import InvalidDecision
from bbopt.simulation.ledger import Ledger

PLATFORM = Platform(nodes=16, bb=100.0)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(1, 8), st.sampled_from([0.0, 10.0, 35.0])),
                max_size=40))
def test_lowest_free_nodes_and_pooled_bb(steps):
    ledger = Ledger(PLATFORM)
    held: list[tuple[Job, tuple[int, ...]]] = []
    for k, (start, n, bb) in enumerate(steps):
        if not start and held:
            job, nodes = held.pop(0)
            ledger.release(job, nodes)
        else:
            job = Job(f"j{k}", 0.0, 10.0, 10.0, n, bb)
            free = list(ledger.free_nodes)
            if n > len(free) or bb > PLATFORM.bb - ledger.used_bb + 1e-6:
                with pytest.raises(InvalidDecision):
                    ledger.admit(job, None, 0.0)
                continue
            nodes = ledger.admit(job, None, 0.0)
            assert nodes == tuple(free[:n])
            held.append((job, nodes))
        taken = sorted(x for _, nodes in held for x in nodes)
        assert ledger.free_nodes == sorted(set(range(16)) - set(taken))
        assert ledger.used_nodes == len(taken)
        assert ledger.used_bb == pytest.approx(sum(j.bb for j, _ in held))

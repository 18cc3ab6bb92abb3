"""The engine's node ledger: the free list stays sorted and exact through any sequence of
admissions and releases, for narrow jobs (one insertion per node) and wide ones (a merge)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bbopt.core import Job, Platform
from bbopt.simulation.ledger import Ledger

NODES = 96


@given(st.lists(st.tuples(st.integers(1, NODES), st.booleans()), min_size=1, max_size=40),
       st.randoms(use_true_random=False))
def test_free_nodes_stay_sorted_and_exact(steps, rnd):
    ledger = Ledger(Platform(NODES))
    held: dict[str, tuple[Job, tuple[int, ...]]] = {}
    for k, (width, ask) in enumerate(steps):
        free = list(ledger.free_nodes)
        if width <= len(free):
            job = Job(str(k), 0.0, 10.0, nodes=width)
            asked = tuple(rnd.sample(free, width)) if ask else None
            nodes = ledger.admit(job, asked, 0.0)
            assert len(set(nodes)) == width and set(nodes) <= set(free)
            if asked is not None:
                assert nodes == asked
            held[job.id] = (job, nodes)
        elif held:  # release a running job, in an order the test picks
            jid = rnd.choice(sorted(held))
            job, nodes = held.pop(jid)
            ledger.release(job, nodes)
        busy = [x for _, ns in held.values() for x in ns]
        assert ledger.free_nodes == sorted(set(range(NODES)) - set(busy))
        assert len(busy) == len(set(busy))

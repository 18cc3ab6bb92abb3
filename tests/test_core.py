"""Whether a job can ever run on a platform (``Platform.why_never_fits``), on named BB nodes
where a job's BB is split into one equal piece per node."""

from __future__ import annotations

import math

from hypothesis import example, given
from hypothesis import strategies as st

from bbopt.core import Job, Platform

NAMED = Platform(nodes=8, bb=21.0, bb_nodes=(10.0, 10.0, 1.0))


def _job(nodes: int, bb: float) -> Job:
    return Job(id="j", submit=0.0, walltime=60.0, nodes=nodes, bb=bb)


def test_a_subnormal_request_fits_instead_of_overflowing():
    # 2e-313 B per piece makes capacity / piece infinite: every BB node takes all the pieces
    assert NAMED.why_never_fits(_job(2, 2e-313)) is None
    assert NAMED.why_never_fits(_job(8, 5e-324)) is None


def test_pieces_per_bb_node_at_just_below_and_above_the_threshold():
    # pieces of 5 B: two on each 10 B node, none on the 1 B one, four in all
    assert NAMED.why_never_fits(_job(4, 20.0)) is None
    # pieces of 5.0001 B: one on each node, two in all, for four pieces
    assert NAMED.why_never_fits(_job(4, 20.0004)) == (
        "requests 4 pieces of 5 B of burst buffer, the 3 BB nodes hold 2 such pieces")
    # pieces of 4.999 B still two per node
    assert NAMED.why_never_fits(_job(4, 19.996)) is None
    # five pieces of 4 B: two per node, four in all
    assert NAMED.why_never_fits(_job(5, 20.0)) == (
        "requests 5 pieces of 4 B of burst buffer, the 3 BB nodes hold 4 such pieces")


@given(nodes=st.integers(1, 8), bb=st.floats(0.0, 20.0, allow_subnormal=True),
       caps=st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=4))
@example(nodes=2, bb=5e-324, caps=[1.0])
def test_the_answer_is_the_count_of_whole_pieces(nodes, bb, caps):
    platform = Platform(nodes=8, bb=sum(caps), bb_nodes=tuple(caps))
    job = _job(nodes, bb)
    reason = platform.why_never_fits(job)
    if bb > sum(caps):
        assert reason is not None and "platform has" in reason
        return
    if bb == 0:
        assert reason is None
        return
    piece = bb / nodes  # (0 when a subnormal request is split: every node then takes all)
    room = sum(nodes if piece == 0 or c / piece >= 1e300
               else min(nodes, math.floor(c / piece * (1 + 1e-12))) for c in caps)
    assert (reason is None) == (room >= nodes)


def test_a_nodes_local_ssd_is_refused_below_zero_above_the_limit_and_when_not_a_number():
    import pytest

    from bbopt.errors import InputError
    from bbopt.limits import MAX_BYTES

    for ok in (0.0, 1.0, float(MAX_BYTES)):
        assert Platform(nodes=2, bb=0.0, node_ssd=(ok, 1e12)).node_ssd[0] == ok
    for bad in (-1.0, -0.5, MAX_BYTES * 1.01, math.nan, math.inf):
        with pytest.raises(InputError, match=r"must be a finite number of bytes >= 0 and <= ") \
                as err:
            Platform(nodes=2, bb=0.0, node_ssd=(1e12, bad))
        assert err.value.field == "node_ssd[1]"

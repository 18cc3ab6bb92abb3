"""The compiled walk over swaps on named BB nodes (bbopt.planner.jit.named.walk_named and the
placement signature it compares) against the Python walk (bbopt.models.plan_walk.SwapWalk)
and the plan scored from scratch, on hand-made cases (Kopanski & Rzadca, Sections 3.3, 4.1):
a swap that moves two jobs to other compute nodes without changing their starts or pieces,
and the early rejection exactly at the threshold."""

from __future__ import annotations

import pytest

pytest.importorskip("numba")

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob  # noqa: E402
from bbopt.models.plan import PlanModel  # noqa: E402
from bbopt.models.plan_walk import SwapWalk  # noqa: E402
from bbopt.planner.named import NamedWalk  # noqa: E402

#: 8 compute nodes: 0-3 nearer BB node 0 (1 GB), 4-7 nearer BB node 1 (0.5 GB).
_SPLIT = Platform(nodes=8, bb=1.5 * GB, bb_nodes=(GB, GB / 2),
                  bb_proximity=((0, 1),) * 4 + ((1, 0),) * 4)


def _moved_nodes_model() -> tuple[PlanModel, PlanModel]:
    """A running job holds compute nodes 0 and 3 until t=100: runs of free nodes 1-2 and
    4-7. Jobs a (2 nodes) and b (1 node) need no BB, c (1 node) 0.5 GB, d (1 node) 1 GB, all
    submitted at 0 (alpha 1). In the order a, b, c, d: a takes 1-2, b 4, c 5 and fills BB
    node 1, d (node 6) takes BB node 0: all start now. In the order b, a, c, d: b takes 1,
    a 4-5, c node 2 and half of BB node 0, and d finds 1 GB on no BB node until c ends at
    t=30. a and b start now either way, with no pieces: only their compute nodes differ."""
    running = RunningJob(Job("r", 0, walltime=100, runtime=100, nodes=2, bb=0.0), 0.0,
                         (0, 3), ())
    queue = (Job("a", 0, walltime=10, nodes=2, bb=0.0),
             Job("b", 0, walltime=10, nodes=1, bb=0.0),
             Job("c", 0, walltime=30, nodes=1, bb=GB / 2),
             Job("d", 0, walltime=30, nodes=1, bb=GB))
    state = ClusterState(0.0, _SPLIT, (running,), queue)
    python = PlanModel.from_state(state, 1)
    python._njit = False
    return python, PlanModel.from_state(state, 1)


@pytest.mark.parametrize("stride", [1, 2])
def test_a_swap_that_moves_jobs_to_other_compute_nodes_places_the_later_jobs_again(stride):
    """Swapping a and b keeps both starts (now) and both placements' pieces (none) but not
    their compute nodes, which decide c's BB node and so d's start: the walk must see that
    a's and b's placements changed and place c and d again (d at t=30, term 30), as the
    Python walk and the plan from scratch do; swapping back gives 0 again."""
    py, jit = _moved_nodes_model()
    assert py.plan([0, 1, 2, 3]).starts == jit.plan([0, 1, 2, 3]).starts == (0.0,) * 4
    assert py.plan([1, 0, 2, 3]).starts == jit.plan([1, 0, 2, 3]).starts == (
        0.0, 0.0, 0.0, 30.0)
    assert py.score([1, 0, 2, 3]) == jit.score([1, 0, 2, 3]) == 30.0
    walk = NamedWalk(jit.named_arrays(), [0, 1, 2, 3], stride)
    slow = SwapWalk(py, [0, 1, 2, 3], stride)
    assert walk.score == slow.score == 0.0
    assert walk.try_swap(0, 1) == slow.try_swap(0, 1) == 30.0
    walk.accept()
    slow.accept()
    assert walk.order == slow.order == [1, 0, 2, 3]
    assert walk.start == slow.start == [0.0, 0.0, 0.0, 30.0]
    assert walk.try_swap(0, 1) == slow.try_swap(0, 1) == 0.0


def _free_model() -> tuple[PlanModel, PlanModel]:
    """Four jobs of 1 node and 1 GB, submitted at 0, on 8 compute nodes and two BB nodes of
    4 GB (no proximity): all start now, each term 0 and its lower bound 0."""
    platform = Platform(nodes=8, bb=8 * GB, bb_nodes=(4 * GB, 4 * GB))
    queue = tuple(Job(str(i), 0, walltime=10.0 * (i + 1), nodes=1, bb=GB) for i in range(4))
    state = ClusterState(0.0, platform, (), queue)
    python = PlanModel.from_state(state, 2)
    python._njit = False
    return python, PlanModel.from_state(state, 2)


def test_a_swap_scoring_exactly_the_threshold_is_not_rejected_early():
    """A swap of the last two jobs (the walk starts from the snapshot before them, stride 1)
    whose score is exactly the threshold: the known prefix plus the lower bounds of the jobs
    after it equal the threshold at every position, which is not above it: kept (0.0), as
    in Python; one ulp below 0 it is rejected (``inf``)."""
    py, jit = _free_model()
    assert jit.plan([0, 1, 2, 3]).starts == (0.0,) * 4
    walk = NamedWalk(jit.named_arrays(), [0, 1, 2, 3], 1)
    slow = SwapWalk(py, [0, 1, 2, 3], 1)
    assert walk.try_swap(2, 3, threshold=0.0) == slow.try_swap(2, 3, threshold=0.0) == 0.0
    walk.accept()
    slow.accept()
    assert walk.order == slow.order == [0, 1, 3, 2]
    below = -5e-324
    assert walk.try_swap(1, 3, threshold=below) == slow.try_swap(1, 3, threshold=below)
    assert walk.try_swap(1, 3, threshold=below) == float("inf")


def test_a_swap_at_the_threshold_is_judged_with_the_pythons_running_bound():
    """Jobs submitted at 0.3, 0.6 and 0.9 all start at 1.0 (alpha 1): each term is its lower
    bound, 0.7, 0.4 and about 0.1. The walk's bound on what is left (the bounds summed, then
    taken off one by one) ends 2**-52 above 0 after the order 1, 0, 2, so its score, 1.2 and
    2 ulps, plus that rest is above the threshold set to the score itself: rejected, in the
    compiled walk as in the Python one (the same floats, in the same order); one ulp higher,
    kept."""
    import math

    platform = Platform(nodes=8, bb=8 * GB, bb_nodes=(4 * GB, 4 * GB))
    queue = tuple(Job(str(i), s, walltime=10.0, nodes=1, bb=GB)
                  for i, s in enumerate((0.3, 0.6, 0.9)))
    state = ClusterState(1.0, platform, (), queue)
    py, jit = PlanModel.from_state(state, 1), PlanModel.from_state(state, 1)
    py._njit = False
    score = py.score([1, 0, 2])
    assert score == jit.score([1, 0, 2]) == 1.2000000000000002
    for threshold, want in ((score, math.inf), (math.nextafter(score, math.inf), score)):
        walk = NamedWalk(jit.named_arrays(), [0, 1, 2], 1)
        slow = SwapWalk(py, [0, 1, 2], 1)
        assert walk.try_swap(0, 1, threshold) == slow.try_swap(0, 1, threshold) == want


def test_a_swap_after_a_waiting_prefix_at_exactly_its_threshold_is_kept():
    """Jobs submitted 0.5, 0.25, 0.125 and 0.0625 s before t=1 all start at 1 (alpha 1):
    terms and lower bounds 0.5, 0.25, 0.125, 0.0625, sums exact in binary. Swapping the last
    two (stride 1: the walk starts after the first two, its prefix checked against the
    threshold position by position, the known partial plus the bounds left) scores 0.9375:
    kept at a threshold of exactly that, as in Python; rejected one ulp below."""
    import math

    platform = Platform(nodes=8, bb=8 * GB, bb_nodes=(4 * GB, 4 * GB))
    queue = tuple(Job(str(i), 1.0 - 0.5 ** (i + 1), walltime=10.0, nodes=1, bb=GB)
                  for i in range(4))
    state = ClusterState(1.0, platform, (), queue)
    py, jit = PlanModel.from_state(state, 1), PlanModel.from_state(state, 1)
    py._njit = False
    assert jit.plan([0, 1, 3, 2]).starts == (1.0,) * 4
    score = 0.9375
    for threshold, want in ((score, score), (math.nextafter(score, 0.0), math.inf)):
        walk = NamedWalk(jit.named_arrays(), [0, 1, 2, 3], 1)
        slow = SwapWalk(py, [0, 1, 2, 3], 1)
        assert walk.try_swap(2, 3, threshold) == slow.try_swap(2, 3, threshold) == want

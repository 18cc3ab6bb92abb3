"""The compiled exhaustive search of short queues on named BB nodes
(bbopt.planner.jit.named.exhaustive_named) against the Python search
(bbopt.solvers.plan.exhaustive.solve_exhaustive) on hand-made queues: its lower bounds (each
job's wait at its earliest start on the pool, with the pool's slack), the order it visits
children in (own term, then job) and the plan it returns among equal scores (Kopanski &
Rzadca, Sections 3.3 and 4.1)."""

from __future__ import annotations

import pytest

pytest.importorskip("numba")

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob  # noqa: E402
from bbopt.models.plan import PlanModel  # noqa: E402
from bbopt.planner.named import NamedArrays  # noqa: E402
from bbopt.solvers import Budget  # noqa: E402
from bbopt.solvers.plan.exhaustive import solve_exhaustive  # noqa: E402


def _models(state: ClusterState) -> tuple[PlanModel, PlanModel]:
    """The same scheduling point (alpha 1) scored by the Python loops, and compiled."""
    python, compiled = PlanModel.from_state(state, 1), PlanModel.from_state(state, 1)
    python._njit = False
    assert isinstance(compiled.named_arrays(), NamedArrays)  # (the compiled loops run)
    return python, compiled


def test_a_request_within_the_pools_slack_is_bounded_by_its_start_now():
    """Two BB nodes of 1 GB; job a (2 nodes, 10 s) asks 2 GB and 1.8e-3 B, within the pool's
    slack (2 B) and, in two pieces, within the pieces' tolerance: it starts now, its lower
    bound 0. Job b (1 node, no BB, 100 s). a then b scores 10, b then a 100: from the
    incumbent b, a the search visits the root and both children and returns a, b."""
    platform = Platform(nodes=2, bb=2 * GB, bb_nodes=(GB, GB))
    queue = (Job("a", 0, 10.0, nodes=2, bb=2 * GB + 1.8e-3), Job("b", 0, 100.0, nodes=1))
    python, compiled = _models(ClusterState(0.0, platform, (), queue))
    assert (python.score([0, 1]), python.score([1, 0])) == (10.0, 100.0)
    assert compiled.named_arrays().exhaustive(100.0, [1, 0]) == (10.0, [0, 1], 3)
    assert solve_exhaustive(compiled, Budget(60.0)).solution == solve_exhaustive(
        python, Budget(60.0)).solution


def test_the_lower_bounds_are_waits_in_seconds_not_segment_counts():
    """Three compute nodes freed at t=0.1, 0.2 and 0.3: job a (3 nodes, 1 s) can start at
    0.3 (the profile's fourth breakpoint), job b (1 node, 1 s) at 0.1 (the second). a then b
    scores 0.3 + 1.3, b then a 0.1 + 1.1: the bounds 0.3 and 0.1 (not 3 and 1, which would
    end the search at its root) let the search find b, a from the incumbent a, b."""
    platform = Platform(nodes=3, bb=2 * GB, bb_nodes=(GB, GB))
    running = tuple(RunningJob(Job(f"r{x}", 0, t, runtime=t, nodes=1), 0.0, (x,), ())
                    for x, t in enumerate((0.1, 0.2, 0.3)))
    queue = (Job("a", 0, 1.0, nodes=3, bb=GB), Job("b", 0, 1.0, nodes=1, bb=GB / 2))
    python, compiled = _models(ClusterState(0.0, platform, running, queue))
    incumbent, best = python.score([0, 1]), python.score([1, 0])
    assert (incumbent, best) == (0.3 + 1.3, 0.1 + 1.1)
    assert compiled.named_arrays().exhaustive(incumbent, [0, 1]) == (best, [1, 0], 3)
    assert solve_exhaustive(compiled, Budget(60.0)).solution == solve_exhaustive(
        python, Budget(60.0)).solution


def test_among_equal_scores_the_search_returns_the_plan_of_the_lower_job_first():
    """Jobs a and b alike (1 node, 10 s, 0.5 GB) on one compute node: either order scores 10.
    From an incumbent of 11 the children are visited by their own terms (both 0), then by
    job: a first, so a, b is the plan returned; b, a, found second, is not better."""
    platform = Platform(nodes=1, bb=2 * GB, bb_nodes=(GB, GB))
    queue = tuple(Job(x, 0, 10.0, nodes=1, bb=GB / 2) for x in "ab")
    python, compiled = _models(ClusterState(0.0, platform, (), queue))
    assert python.score([0, 1]) == python.score([1, 0]) == 10.0
    assert compiled.named_arrays().exhaustive(11.0, [1, 0]) == (10.0, [0, 1], 3)


def test_a_child_cut_by_its_bound_does_not_end_the_search_of_its_siblings():
    """At t=50 a running job expected to end at t=40 still holds all of BB node 0 (1 GB; BB
    node 1 has 0.5 GB): the profile has it free, the BB nodes now do not. Job x (1 GB,
    submitted at 50) cannot start now; placed first it starts when a node frees at t=55
    (term 5, bound 0); after job y (no BB, submitted at 44, bound and term 6, 1 s) it
    starts when y ends (t=51, term 1). From the incumbent x, y (11) the root cuts x
    (0 + 5 + 6 - 0 is not below 11) but not y (6), the later sibling, which leads to y, x
    (7)."""
    platform = Platform(nodes=4, bb=1.5 * GB, bb_nodes=(GB, GB / 2))
    running = (RunningJob(Job("r", 0, 40, runtime=100, nodes=1, bb=GB), 0.0, (0,),
                          ((0, GB),)),
               RunningJob(Job("s", 0, 55, runtime=55, nodes=1), 0.0, (1,), ()))
    queue = (Job("x", 50, 10.0, nodes=1, bb=GB), Job("y", 44, 1.0, nodes=1))
    python, compiled = _models(ClusterState(50.0, platform, running, queue))
    assert python.plan([0, 1]).starts == (55.0, 50.0)
    assert python.plan([1, 0]).starts == (51.0, 50.0)
    assert (python.score([0, 1]), python.score([1, 0])) == (11.0, 7.0)
    assert compiled.named_arrays().exhaustive(11.0, [0, 1]) == (7.0, [1, 0], 2)
    assert solve_exhaustive(compiled, Budget(60.0)).solution == solve_exhaustive(
        python, Budget(60.0)).solution

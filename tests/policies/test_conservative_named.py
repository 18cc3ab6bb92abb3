"""conservative-bb's decision on named BB nodes (bbopt.policies.conservative_named and its
compiled kernel): a worked compression whose search meets a start where the pool has room but
the BB nodes cannot take the job's pieces, and one where the pool is short on a later segment
of the window, decided the same compiled and in Python (Kopanski & Rzadca, Sections 3.2 and
4.1: a job's per-node pieces must fit on the BB nodes' least free space over its walltime)."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bbopt import simulate
from bbopt.core import GB, ClusterState, Job, Platform, RunningJob
from bbopt.planner.named import conservative_kernels
from bbopt.planner.profile import OverbookedError
from bbopt.policies.conservative import ConservativeBackfilling
from bbopt.policies.conservative_named import NamedArrays
from bbopt.policies.conservative_replan import came_free, holding_after
from tests._plan_checks import replay_against_fresh
from tests._random_workloads import crowded_workloads

# 4 compute nodes, three 10 GB BB nodes.
_PLATFORM = Platform(nodes=4, bb=30 * GB, bb_nodes=(10 * GB, 10 * GB, 10 * GB))


def _running(jid: str, walltime: float, nodes: int, pieces: tuple) -> RunningJob:
    bb = sum(size for _, size in pieces)
    return RunningJob(Job(jid, 0, walltime=walltime, runtime=walltime, nodes=nodes, bb=bb), 0.0,
                      None, pieces)


@pytest.mark.parametrize("compiled", [False, None])
def test_a_start_with_pool_room_but_no_room_for_the_pieces_is_passed_over(compiled):
    """At t=0 BB nodes 0 and 1 keep 6 GB free until t=200 (jobs A, B), node 2 is full until
    t=50 (C); every compute node is busy until t=50, one stays busy until t=200. m (2 nodes, no
    BB, 30 s), kept at t=100, moves up to t=50, leaving 2 free nodes from t=80. k (2 nodes,
    16 GB: two 8 GB pieces, 100 s), kept at t=300: the pool's earliest fit is t=80 (2 nodes,
    22 GB free), but only node 2 can take an 8 GB piece there, so its first start with room
    for both pieces is t=200 (A and B end), before 300: it moves there."""
    running = (_running("A", 200, 1, ((0, 4 * GB),)), _running("B", 200, 1, ((1, 4 * GB),)),
               _running("C", 50, 2, ((2, 10 * GB),)))
    queue = (Job("m", 0, walltime=30, nodes=2), Job("k", 0, walltime=100, nodes=2, bb=16 * GB))
    state = ClusterState(0.0, _PLATFORM, running, queue,
                         memory={"reservations": {"m": 100.0, "k": 300.0}})
    decision = ConservativeBackfilling(compiled=compiled).decide(state)
    assert decision.start == ()
    assert [(r.job_id, r.start) for r in decision.reservations] == [("m", 50.0), ("k", 200.0)]


@pytest.mark.parametrize("compiled", [False, None])
def test_a_start_whose_window_meets_a_short_segment_later_is_passed_over(compiled):
    """As above but B ends at t=150, and n (4 nodes, 10 s) is kept at t=250 (it cannot start
    before A ends at t=200; it moves up to t=200). k's candidate t=80 fails on its pieces (node
    1 has 6 GB free until 150), t=150 has room for the pool and the pieces on [150, 200) but
    not on the later segment [200, 210), whose nodes n holds, t=200 fails there too, and k
    moves up to t=210, still before 300."""
    running = (_running("A", 200, 1, ((0, 4 * GB),)), _running("B", 150, 1, ((1, 4 * GB),)),
               _running("C", 50, 2, ((2, 10 * GB),)))
    queue = (Job("m", 0, walltime=30, nodes=2), Job("n", 0, walltime=10, nodes=4),
             Job("k", 0, walltime=100, nodes=2, bb=16 * GB))
    state = ClusterState(0.0, _PLATFORM, running, queue,
                         memory={"reservations": {"m": 100.0, "n": 250.0, "k": 300.0}})
    decision = ConservativeBackfilling(compiled=compiled).decide(state)
    assert decision.start == ()
    assert [(r.job_id, r.start) for r in decision.reservations] == [
        ("m", 50.0), ("n", 200.0), ("k", 210.0)]


def _replay_checked(jobs, platform):
    """Replay under conservative-bb (compiled where numba is installed); every decision must
    equal a fresh policy's and the Python reference's on the same state (what the policy keeps
    between decisions must never stand for another job than the one in the state)."""
    return replay_against_fresh(jobs, platform, "conservative-bb",
                                fresh=({}, {"compiled": False}))


def test_a_long_replay_decides_as_from_scratch_at_every_decision():
    """320 jobs through a 4-node platform with three 10 GB BB nodes, hundreds of decisions
    with jobs arriving, ending early and reusing the room of others: every decision equals
    the from-scratch ones."""
    jobs = [Job(str(k), 2.0 * k, walltime=float(5 + k % 7), runtime=float(1 + k % 6),
                nodes=1 + k % 3, bb=float((k % 4) * 3 * GB)) for k in range(320)]
    res, compared = _replay_checked(jobs, _PLATFORM)
    assert len(compared) > 320
    assert all(s >= j.submit for s, j in zip(res.start, jobs, strict=True))


def test_a_replay_reserving_two_jobs_decides_as_from_scratch_at_every_decision():
    """The same 320 jobs with a depth of 2: the jobs beyond the two reserved get no start
    (``nan`` in the compiled plan) unless they fit now, so the plan's reserved jobs are not
    the queue's: every decision still equals the fresh ones."""
    jobs = [Job(str(k), 2.0 * k, walltime=float(5 + k % 7), runtime=float(1 + k % 6),
                nodes=1 + k % 3, bb=float((k % 4) * 3 * GB)) for k in range(320)]
    res, compared = replay_against_fresh(jobs, _PLATFORM, "conservative-bb", {"depth": 2},
                                         fresh=({}, {"compiled": False}))
    assert len(compared) > 320
    assert all(s >= j.submit for s, j in zip(res.start, jobs, strict=True))


def test_a_running_job_with_the_id_of_an_earlier_one_is_read_again():
    """A job that ran and ended, and another later running under the same id with other BB
    pieces: the decision reads the new pieces (what was kept under that id is not
    trusted), as a fresh policy does."""
    queue = (Job("w", 0, walltime=50, nodes=2, bb=16 * GB),)
    policy = ConservativeBackfilling()
    first = (_running("A", 100, 1, ((0, 10 * GB),)),)
    d1 = policy.decide(ClusterState(0.0, _PLATFORM, first, queue))
    # (w's two 8 GB pieces go to nodes 1 and 2 at once)
    assert d1.started_ids == ["w"]
    second = (_running("A", 100, 1, ((1, 10 * GB),)), _running("B", 100, 1, ((2, 10 * GB),)))
    state = ClusterState(0.0, _PLATFORM, second, queue, d1.memory)
    d2 = policy.decide(state)
    fresh = ConservativeBackfilling(compiled=False).decide(state)
    # only node 0 has room for a piece now: w waits for A and B to end at 100
    assert d2.started_ids == fresh.started_ids == []
    assert d2.reservations == fresh.reservations
    assert [(r.job_id, r.start) for r in d2.reservations] == [("w", 100.0)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded_workloads(nodes=4, bb=30 * GB))
def test_every_decision_with_ends_at_before_and_after_the_walltime_equals_the_fresh_ones(jobs):
    """Crowded workloads on the three named BB nodes (runtimes of zero, half the walltime, just
    under, at and just over it; arrivals and ends that coincide; sizes that fill the platform):
    each decision of a policy that keeps its plan between decisions equals a fresh policy's and
    the Python reference's on the same state."""
    res, compared = _replay_checked(jobs, _PLATFORM)
    assert compared or all(_PLATFORM.why_never_fits(j) for j in jobs)


@pytest.mark.parametrize("compiled", [False, None])
def test_a_kept_reservation_is_held_before_a_job_ahead_of_it_in_the_queue(compiled):
    """Every compute node is busy until t=50. b kept a reservation at t=50; a, ahead of it in
    the queue, has none (it arrived since, with a higher priority): the kept reservation is
    held again first, so b keeps t=50 and a is planned after it, at t=60 (planned from scratch
    in queue order, a would take t=50)."""
    running = (_running("R", 50, 4, ()),)
    queue = (Job("a", 0, walltime=10, nodes=4), Job("b", 0, walltime=10, nodes=4))
    state = ClusterState(0.0, _PLATFORM, running, queue, memory={"reservations": {"b": 50.0}})
    decision = ConservativeBackfilling(compiled=compiled).decide(state)
    assert decision.start == ()
    assert [(r.job_id, r.start) for r in decision.reservations] == [("b", 50.0), ("a", 60.0)]


@pytest.mark.parametrize("compiled", [False, None])
def test_two_pieces_of_a_running_job_on_one_bb_node_both_count(compiled):
    """A runs on two compute nodes with both its 3 GB pieces on BB node 0 (4 GB left there);
    B and C hold 7 GB on nodes 1 and 2 (3 GB left on each; 10 GB free in the pool). j (1 node,
    5 GB) has room on no BB node until A ends at t=100 (counting one of A's pieces only, node
    0 would show 7 GB free and j would start now)."""
    running = (_running("A", 100, 2, ((0, 3 * GB), (0, 3 * GB))),
               _running("B", 200, 1, ((1, 7 * GB),)), _running("C", 300, 1, ((2, 7 * GB),)))
    queue = (Job("j", 0, walltime=10, nodes=1, bb=5 * GB),)
    decision = ConservativeBackfilling(compiled=compiled).decide(
        ClusterState(0.0, Platform(nodes=5, bb=30 * GB, bb_nodes=(10 * GB,) * 3), running,
                     queue))
    assert decision.start == ()
    assert [(r.job_id, r.start) for r in decision.reservations] == [("j", 100.0)]


@pytest.mark.parametrize("compiled", [False, None])
@pytest.mark.parametrize(("request_b", "started"), [(600.0, True), (600.0 + 5e-10, True),
                                                    (600.0 + 1e-8, False), (601.0, False)])
def test_a_piece_filling_a_bb_node_exactly_starts(compiled, request_b, started):
    """Three BB nodes of 1,000 B (a piece may exceed a BB node's free space by 1e-12 of the
    largest, 1e-9 B), three running jobs holding 400 B on node 0 and the whole of nodes 1 and
    2: a job of 600 B starts now on node 0 (at its free space, and within the tolerance above
    it); 1e-8 B over, within the pool's slack but not the piece's, it waits for A's end."""
    platform = Platform(nodes=4, bb=3000.0, bb_nodes=(1000.0,) * 3)
    running = (_running("A", 100, 1, ((0, 400.0),)), _running("B", 200, 1, ((1, 1000.0),)),
               _running("C", 300, 1, ((2, 1000.0),)))
    queue = (Job("j", 0, walltime=10, nodes=1, bb=request_b),)
    decision = ConservativeBackfilling(compiled=compiled).decide(
        ClusterState(0.0, platform, running, queue))
    assert decision.started_ids == (["j"] if started else [])
    assert [(r.job_id, r.start) for r in decision.reservations] == (
        [] if started else [("j", 100.0)])


@pytest.mark.parametrize("compiled", [False, None])
def test_a_kept_reservation_is_not_delayed_by_a_job_behind_it(compiled):
    """Six nodes, BB nodes of 10 B; running until t=2 on 3 nodes, until 100 on 1 node with 5 B
    on BB node 1. Kept: c (3 nodes, 6 B, 8 s) at 2, a (1 node, 4 B + 5e-9, 20 s) at 5, q (1
    node, 6 B, 20 s) at 10; e (1 node, 6 B, 20 s) new. With a slack of 1e-9 of a BB node's
    bytes (1e-8) and pieces placed within 1e-12 of the largest (1e-11), a started now on BB
    node 0, 5e-9 over what c and q leave it; q's piece then no longer fitted node 0: planned at
    10 but held by none, e was planned at 20 on node 0 in q's window, and at the next decision
    q moved behind e, to 40. A BB node now admits what first fit places there
    (:func:`bbopt.planner.bb.profile_slacks`): a is not started over q's bytes, and q keeps
    10 at both decisions."""
    platform = Platform(nodes=6, bb=20.0, bb_nodes=(10.0, 10.0))
    running = (_running("r0", 2, 3, ()), _running("r1", 100, 1, ((1, 5.0),)))
    queue = (Job("c", 0, walltime=8, nodes=3, bb=6.0),
             Job("a", 0, walltime=20, nodes=1, bb=4.0 + 5e-9),
             Job("q", 0, walltime=20, nodes=1, bb=6.0), Job("e", 0, walltime=20, nodes=1,
                                                            bb=6.0))
    first = ConservativeBackfilling(compiled=compiled).decide(ClusterState(
        0.0, platform, running, queue,
        memory={"reservations": {"c": 2.0, "a": 5.0, "q": 10.0}}))
    kept = {r.job_id: r.start for r in first.reservations}
    assert kept["q"] == 10.0
    started = {s.job_id: s.bb_pieces for s in first.start}
    running += tuple(RunningJob(j, 0.0, None, started[j.id]) for j in queue if j.id in started)
    second = ConservativeBackfilling(compiled=compiled).decide(ClusterState(
        0.0, platform, running, tuple(j for j in queue if j.id not in started),
        memory=first.memory))
    assert "q" in second.started_ids or {
        r.job_id: r.start for r in second.reservations}["q"] <= 10.0


def test_a_policy_moved_to_another_platform_plans_on_its_bb_nodes():
    """The same policy decides on three 10 GB BB nodes, where a job of one node and 15 GB has
    no BB node that can take its piece (neither started nor reserved), then on BB nodes of 20,
    5 and 5 GB, where it starts at once on node 0: the second platform's capacities, not the
    first's."""
    policy = ConservativeBackfilling()
    queue = (Job("j", 0, walltime=10, nodes=1, bb=15 * GB),)
    first = policy.decide(ClusterState(0.0, _PLATFORM, (), queue))
    assert first.start == () and first.reservations == ()
    other = Platform(nodes=4, bb=30 * GB, bb_nodes=(20 * GB, 5 * GB, 5 * GB))
    second = policy.decide(ClusterState(0.0, other, (), queue))
    assert second.started_ids == ["j"] and second.reservations == ()


def test_a_policy_that_saw_hundreds_of_jobs_run_decides_as_a_fresh_one():
    """300 decisions, each with another job running (1 node, a 1 GB piece on BB node k % 3,
    until t = k + 5) and w (4 nodes, 2 GB) waiting: what the policy keeps per running job is
    forgotten for the jobs that ended (past 256 of them), and every decision still reserves w
    at the running job's end, as a fresh policy in Python does."""
    policy = ConservativeBackfilling()
    queue = (Job("w", 0, walltime=10, nodes=4, bb=2 * GB),)
    for k in range(300):
        running = (RunningJob(Job(f"r{k}", 0, walltime=5, nodes=1, bb=GB), float(k), None,
                              ((k % 3, GB),)),)
        state = ClusterState(float(k), _PLATFORM, running, queue)
        decision = policy.decide(state)
        assert decision.reservations == ConservativeBackfilling(compiled=False).decide(
            state).reservations
        assert [(r.job_id, r.start) for r in decision.reservations] == [("w", k + 5.0)]


# --------------------------------------------------------------------------- compiled arrays
# What NamedArrays keeps between decisions (its promise: each running job's holding worked out
# once while it runs, the running jobs' arrays while the state hands the same running jobs,
# the platform's arrays while the platform is the same, ended jobs forgotten past a bound).

_KERNELS = pytest.mark.skipif(conservative_kernels() is None,
                              reason="the compiled kernels do not load here")


def _plan_of(arrays: NamedArrays, state: ClusterState):
    """The compiled plan of ``state`` with its memory's reservations, any depth."""
    return arrays.plan(state, tuple(state.queue), state.memory.get("reservations", {}),
                       state.memory.get("pieces", {}), math.inf)


def _starts(arrays: NamedArrays, state: ClusterState):
    plan = _plan_of(arrays, state)
    return None if plan is None else plan.starts


@_KERNELS
def test_the_arrays_are_kept_while_the_platform_and_running_jobs_are_the_same():
    arrays = NamedArrays()
    a = _running("A", 100, 1, ((0, 4 * GB),))
    state = ClusterState(0.0, _PLATFORM, (a,), (Job("w", 0, walltime=10, nodes=4),))
    assert _starts(arrays, state) == [100.0]
    consts, kept, row = arrays._consts, arrays._running, arrays._consts[5]["A"]
    assert row == (a, (100.0, 1, 4 * GB, 4 * GB, 0.0, 0.0))
    assert _starts(arrays, state) == [100.0]
    assert arrays._consts is consts and arrays._running is kept  # the same state: all kept
    b = _running("B", 50, 1, ())
    assert _starts(arrays, ClusterState(0.0, _PLATFORM, (a, b), state.queue)) == [100.0]
    assert arrays._consts is consts and arrays._running is not kept
    assert arrays._consts[5]["A"] is row  # A's holding not worked out again


@_KERNELS
def test_a_job_started_again_alone_under_its_id_is_planned_with_its_new_pieces():
    """A (2 nodes, two 4 GB pieces) ran with one piece on BB node 0 and one on node 1; started
    again at t=5 it holds both on node 0 (6, 6, 10 GB free before, 2, 10, 10 now). w (2 nodes,
    two 7 GB pieces) fits now on nodes 1 and 2; with A's first holding only node 2 could take a
    piece, and w would wait for A's end at 105."""
    arrays = NamedArrays()
    w = Job("w", 0, walltime=10, nodes=2, bb=14 * GB)
    first = _running("A", 100, 2, ((0, 4 * GB), (1, 4 * GB)))
    assert _starts(arrays, ClusterState(0.0, _PLATFORM, (first,), (w,))) == [100.0]
    again = RunningJob(first.job, 5.0, None, ((0, 4 * GB), (0, 4 * GB)))
    assert _starts(arrays, ClusterState(5.0, _PLATFORM, (again,), (w,))) == [5.0]


@_KERNELS
def test_a_job_started_again_under_its_id_is_planned_with_its_new_pieces():
    """A (2 nodes, two 4 GB pieces) ran with both pieces on BB node 0; started again at t=5
    (requeued, say) it holds one on node 0 and one on node 1, and C fills node 2. w (1 node, one
    9 GB piece) has no BB node with 9 GB free until C ends at 55: the holding worked out for A's
    first run (node 1 all free) would start w now."""
    arrays = NamedArrays()
    w = Job("w", 0, walltime=10, nodes=1, bb=9 * GB)
    first = _running("A", 100, 2, ((0, 4 * GB), (0, 4 * GB)))
    assert _starts(arrays, ClusterState(0.0, _PLATFORM, (first,), (w,))) == [0.0]
    again = RunningJob(first.job, 5.0, None, ((0, 4 * GB), (1, 4 * GB)))
    state = ClusterState(5.0, _PLATFORM, (_running("C", 55, 1, ((2, 10 * GB),)), again), (w,))
    assert _starts(arrays, state) == [55.0]
    assert arrays._consts[5]["A"] == (again, (105.0, 2, 8 * GB, 4 * GB, 4 * GB, 0.0))
    python = ConservativeBackfilling(compiled=False).decide(state)
    assert python.start == () and [(r.job_id, r.start) for r in python.reservations] == [
        ("w", 55.0)]


@_KERNELS
def test_the_queue_is_kept_while_it_loses_only_the_jobs_started_and_gains_new_ones():
    """At t=0, R holds 2 of the 4 nodes until 50: a (2 nodes, 10 s) starts, b (4 nodes) is
    reserved at 50. At t=3 a runs, c (1 node, 5 GB, 10 s) has come: the kept queue (b) and c
    give c a start at 10, when a ends, b kept at 50; the plan says which reservations are new or
    moved (c's: it was kept, ``moved`` is known). A caller that did not start a hands a queue
    the kept one does not describe: planned from the queue given, as a fresh decision."""
    r = _running("R", 50, 2, ())
    a, b = Job("a", 0, walltime=10, nodes=2), Job("b", 0, walltime=20, nodes=4)
    c = Job("c", 3, walltime=10, nodes=1, bb=5 * GB)
    arrays = NamedArrays()
    first = _plan_of(arrays, ClusterState(0.0, _PLATFORM, (r,), (a, b)))
    assert first.starts == [0.0, 50.0] and first.started == [a] and first.later == {"b": 50.0}
    assert first.moved is None  # (nothing kept yet: planned from the queue given)
    memory = {"reservations": first.later, "pieces": first.held}
    carried = ClusterState(3.0, _PLATFORM, (r, RunningJob(a, 0.0, None, ())), (b, c), memory)
    second = _plan_of(arrays, carried)
    assert second.starts == [50.0, 10.0] and second.later == {"b": 50.0, "c": 10.0}
    assert second.started == [] and second.moved == ["c"]
    assert _plan_of(NamedArrays(), carried)[:3] == second[:3]
    arrays = NamedArrays()
    memory = {"reservations": _plan_of(arrays, ClusterState(0.0, _PLATFORM, (r,), (a, b))).later}
    refused = ClusterState(3.0, _PLATFORM, (r,), (a, b, c), memory)
    again = _plan_of(arrays, refused)
    assert again.moved is None and again[:3] == _plan_of(NamedArrays(), refused)[:3]
    assert again.starts == [3.0, 50.0, 13.0]


@_KERNELS
def test_the_kept_queue_grows_past_its_arrays_with_the_plan_kept():
    """30 jobs of 4 nodes wait for R (4 nodes, until 1000), reserved one after another every
    10 s; 40 more come at t=1: the arrays (64 jobs) grow and keep the 30 reservations, and the
    40 new ones are reserved after them, as a fresh plan does."""
    r = _running("R", 1000, 4, ())
    jobs = [Job(f"j{k}", 0, walltime=10, nodes=4) for k in range(70)]
    arrays = NamedArrays()
    first = _plan_of(arrays, ClusterState(0.0, _PLATFORM, (r,), tuple(jobs[:30])))
    assert first.starts == [1000.0 + 10 * k for k in range(30)]
    assert arrays._queue.jobs.shape == (3, 64)
    state = ClusterState(1.0, _PLATFORM, (r,), tuple(jobs),
                         {"reservations": first.later, "pieces": first.held})
    second = _plan_of(arrays, state)
    assert arrays._queue.jobs.shape == (3, 140)
    assert second.starts == [1000.0 + 10 * k for k in range(70)]
    assert second.moved == [f"j{k}" for k in range(30, 70)]
    assert second[:3] == _plan_of(NamedArrays(), state)[:3]


@_KERNELS
def test_kept_reservations_that_start_now_are_marked_gone_from_the_plan():
    """b and c (2 nodes each) wait for R (4 nodes) and are reserved at 50; at t=50 R has
    ended, and both start: the plan reserves nothing and marks both reservations as gone."""
    r = _running("R", 50, 4, ())
    b, c = Job("b", 0, walltime=10, nodes=2), Job("c", 0, walltime=10, nodes=2)
    arrays = NamedArrays()
    first = _plan_of(arrays, ClusterState(0.0, _PLATFORM, (r,), (b, c)))
    assert first.later == {"b": 50.0, "c": 50.0}
    state = ClusterState(50.0, _PLATFORM, (), (b, c),
                         {"reservations": first.later, "pieces": first.held})
    second = _plan_of(arrays, state)
    assert second.started == [b, c] and second.later == {} and second.moved == ["b", "c"]


@_KERNELS
def test_the_queue_is_kept_when_a_job_behind_the_first_starts():
    """b (4 nodes) waits for R's end at 50 and a (1 node, 10 s) behind it starts now; at t=3,
    with a running and c queued since, the kept queue is b then c: c (1 node) starts now
    beside a, and the plan was made from the kept arrays (``moved`` known)."""
    r = _running("R", 50, 2, ())
    b, a = Job("b", 0, walltime=20, nodes=4), Job("a", 0, walltime=10, nodes=1)
    c = Job("c", 3, walltime=10, nodes=1)
    arrays = NamedArrays()
    first = _plan_of(arrays, ClusterState(0.0, _PLATFORM, (r,), (b, a)))
    assert first.starts == [50.0, 0.0] and first.started == [a]
    state = ClusterState(3.0, _PLATFORM, (r, RunningJob(a, 0.0, None, ())), (b, c),
                         {"reservations": first.later, "pieces": first.held})
    second = _plan_of(arrays, state)
    assert second.starts == [50.0, 3.0] and second.started == [c] and second.moved == []
    assert second[:3] == _plan_of(NamedArrays(), state)[:3]


@_KERNELS
@pytest.mark.parametrize(("bb", "pieces", "compiled"), [
    (0.0, None, True),  # no BB: nothing to place
    (4 * GB, ((0, 4 * GB),), True),
    (0.5, None, False),  # half a byte whose pieces are not known: placed again in Python
    (4 * GB, None, False),
])
def test_a_running_job_whose_pieces_are_not_known_is_decided_in_python(bb, pieces, compiled):
    running = (RunningJob(Job("A", 0, walltime=100, nodes=1, bb=bb), 0.0, None, pieces),)
    state = ClusterState(0.0, _PLATFORM, running, (Job("w", 0, walltime=10, nodes=4),))
    got = _starts(NamedArrays(), state)
    assert got == ([100.0] if compiled else None)


@_KERNELS
def test_the_holdings_of_ended_jobs_are_forgotten_past_twice_the_running_plus_256():
    """One job running per decision, another each time: the holdings kept grow by one per
    decision up to 2 x 1 + 256 = 258, and the decision that would keep a 259th forgets every
    ended job's, keeping the running one's only."""
    arrays = NamedArrays()
    queue = (Job("w", 0, walltime=10, nodes=4),)
    sizes = []
    for k in range(262):
        running = (_running(f"r{k}", 5, 1, ((k % 3, GB),)),)
        assert _starts(arrays, ClusterState(0.0, _PLATFORM, running, queue)) == [5.0]
        sizes.append(len(arrays._consts[5]))
        assert f"r{k}" in arrays._consts[5]
    assert sizes[:258] == list(range(1, 259))
    assert sizes[258:] == [1, 2, 3, 4]


@_KERNELS
def test_a_running_job_past_its_walltime_anywhere_in_a_plain_tuple_is_left_to_python():
    """Running jobs handed as a plain tuple are not taken to be sorted: the second, due at 30,
    is past its walltime at t=40, so the kernel does not plan (its first is due at 100)."""
    running = (_running("a", 100, 1, ()), _running("b", 30, 1, ()))
    state = ClusterState(40.0, _PLATFORM, running, (Job("w", 0, walltime=10, nodes=1),))
    assert _starts(NamedArrays(), state) is None
    assert _starts(NamedArrays(), ClusterState(20.0, _PLATFORM, running, state.queue)) == [20.0]


@_KERNELS
def test_a_plan_the_kernel_refuses_raises_the_profiles_error_and_plans_again_next_time():
    """The kernel's ValueError (a reservation overbooking a BB node) is the planner's
    OverbookedError with its message; the arrays it may have left half compacted are not used
    again: the next plan equals a fresh one."""
    r = _running("R", 50, 2, ())
    a, b = Job("a", 0, walltime=10, nodes=2), Job("b", 0, walltime=20, nodes=4)
    arrays = NamedArrays()
    first = _plan_of(arrays, ClusterState(0.0, _PLATFORM, (r,), (a, b)))
    state = ClusterState(3.0, _PLATFORM, (r, RunningJob(a, 0.0, None, ())), (b,),
                         {"reservations": first.later})
    consts = arrays._consts

    def refuse(*_):
        raise ValueError("a reservation on the named BB nodes overbooks")

    arrays._consts = (*consts[:6], refuse, *consts[7:])
    with pytest.raises(OverbookedError, match=r"^a reservation on the named BB nodes overbooks$"):
        _plan_of(arrays, state)
    arrays._consts = consts
    assert _plan_of(arrays, state)[:3] == _plan_of(NamedArrays(), state)[:3] == (
        [50.0], [], {"b": 50.0})


@pytest.mark.parametrize("end", [30.0, 40.0, math.nextafter(40.0, math.inf)])
def test_a_running_job_at_or_past_its_walltime_is_decided_as_in_python(end):
    """A caller's state at t=40 with a 3-node job due to end at ``end`` still running, and a
    7-node job waiting (8 nodes): the job's nodes are not free while it runs, so the waiting
    job does not start now, compiled or in Python (the engine and ``bbopt.decide`` stretch
    such a job first: ``planning_state``; the kernel alone took its nodes to be free from its
    expected end on, and started the job on them). One ulp after now, both reserve it then."""
    platform = Platform(nodes=8, bb=27.5, bb_nodes=(10.0, 10.0, 7.5))
    running = (RunningJob(Job("r", 0, walltime=end, runtime=end, nodes=3, bb=0), 0.0, None, ()),)
    state = ClusterState(40.0, platform, running, (Job("q", 10, walltime=5, nodes=7, bb=3.0),))
    decisions = [ConservativeBackfilling(compiled=c).decide(state) for c in (False, None)]
    assert decisions[0].start == decisions[1].start == ()
    assert decisions[0].reservations == decisions[1].reservations
    assert [(r.job_id, r.start) for r in decisions[1].reservations] == (
        [("q", end)] if end > 40.0 else [])


@pytest.mark.parametrize("compiled", [False, None])
def test_a_policy_asked_about_two_states_in_turn_answers_each_as_a_fresh_one(compiled):
    """The same memory (b kept at 50) handed with two states in turn: the state with b waiting
    keeps b's reservation; the other (c waiting, b gone) reserves c; asked about the first
    again, the policy answers b at 50, not the reservations it returned last."""
    r = _running("R", 50, 4, ())
    b, c = Job("b", 0, walltime=10, nodes=4), Job("c", 0, walltime=10, nodes=4)
    memory = {"reservations": {"b": 50.0}}
    with_b = ClusterState(0.0, _PLATFORM, (r,), (b,), memory)
    with_c = ClusterState(0.0, _PLATFORM, (r,), (c,), memory)
    policy = ConservativeBackfilling(compiled=compiled)
    first = policy.decide(with_b)
    assert [(x.job_id, x.start) for x in policy.decide(with_c).reservations] == [("c", 50.0)]
    again = policy.decide(with_b)
    assert [(x.job_id, x.start) for x in again.reservations] == [("b", 50.0)]
    assert again.reservations == first.reservations


def test_a_replay_on_proximity_placement_plans_first_fit_pieces_compiled_and_in_python():
    """On the authors' proximity platform conservative-bb still places each reservation's
    pieces first fit over its window, a start's too, which the start names to the engine (the
    engine chooses the started jobs' nodes), compiled and in Python: the replay's decisions
    equal the Python reference's (2 compute nodes per chassis, 4 BB nodes of 25 GB)."""
    from tests._platforms import PROXIMITY

    jobs = [Job(str(k), 1.0 * k, walltime=float(20 + k % 7), runtime=float(10 + k % 9),
                nodes=1 + k % 4, bb=float((k % 5) * 7 * GB)) for k in range(120)]
    res, compared = replay_against_fresh(jobs, PROXIMITY, "conservative-bb",
                                         fresh=({"compiled": False},))
    assert len(compared) == 199
    assert sum(s > j.submit for s, j in zip(res.start, jobs, strict=True)) == 110


def _kept_at_37(holding: dict[str, float] | None, now: float = 14.0, compiled=None,
                gone: dict[str, float] | None = None):
    """At ``now`` A (1 node, 4 GB on BB node 0) runs until 26 and B (3 nodes, 4 GB on node 0)
    until 37; p (2 nodes, two 8 GB pieces, 10 s) and q (1 node, 4 GB, 60 s) hold reservations
    at 37 from the decision that returned ``holding`` (with those of ``gone``, which left the
    queue since)."""
    running = (_running("A", 26, 1, ((0, 4 * GB),)), _running("B", 37, 3, ((0, 4 * GB),)))
    queue = (Job("p", 0, walltime=10, nodes=2, bb=16 * GB),
             Job("q", 0, walltime=60, nodes=1, bb=4 * GB))
    memory = {"reservations": {"p": 37.0, "q": 37.0, **(gone or {})}}
    if holding is not None:
        memory["holding"] = holding
    decision = ConservativeBackfilling(compiled=compiled).decide(
        ClusterState(now, _PLATFORM, running, queue, memory))
    assert decision.started_ids == []
    return [(r.job_id, r.start) for r in decision.reservations]


@pytest.mark.parametrize("compiled", [False, None])
def test_reservations_move_up_only_when_something_came_free(compiled):
    """Held again at 37, p's pieces go to BB nodes 0 and 1 and q's to node 2, where q fits
    from 26 (A's end): a compression moves q up to 26. But nothing came free since the
    decision that reserved them (A and B run with the ends it saw), and conservative
    backfilling compresses only when a job ends before its walltime (Mu'alem & Feitelson),
    as on a pool, where nothing else can make room: both keep 37. A memory that does not say
    what held resources (a policy's first), that held B to another end (B was started again
    since) or that names a job gone since before its end (C, ending early) is compressed, as
    is one whose reservations name a job no longer queued."""
    held = {"A": 26.0, "B": 37.0}
    assert _kept_at_37(held, compiled=compiled) == [("p", 37.0), ("q", 37.0)]
    for other in (None, {"A": 26.0, "B": 40.0}, {**held, "C": 20.0}):
        assert _kept_at_37(other, compiled=compiled) == [("q", 26.0), ("p", 37.0)]
    # r's reservation at 50 left the queue with r (cancelled): its slot came free
    assert _kept_at_37(held, compiled=compiled, gone={"r": 50.0}) == [("q", 26.0), ("p", 37.0)]


@pytest.mark.parametrize(("c_end", "moved"), [(13.5, False), (14.0, False), (14.5, True)])
def test_a_job_gone_by_its_expected_end_freed_nothing_and_one_gone_before_it_did(c_end, moved):
    # C held resources until c_end and is gone at 14: by then it ended as expected (its room
    # was free from then on in the plan already), before it, it ended early
    got = _kept_at_37({"A": 26.0, "B": 37.0, "C": c_end})
    assert got == ([("q", 26.0), ("p", 37.0)] if moved else [("p", 37.0), ("q", 37.0)])


def test_in_a_replay_no_reservation_moves_up_unless_a_job_ended_early():
    """Crowded random workloads on the three BB nodes: at every decision where every job the
    previous one left holding resources still runs or ended at its expected end, no kept
    reservation starts or is reserved earlier than it was (compressed at every decision, its
    reservations held again with fresh first-fit pieces, some of these replays move one up
    where nothing came free)."""
    checked = 0
    for seed in range(40):
        rng = random.Random(seed)
        jobs = []
        for k in range(12):
            walltime = float(rng.randint(2, 12) * 5)
            jobs.append(Job(f"j{k}", float(rng.randint(0, 30)), walltime=walltime,
                            runtime=walltime * rng.choice([0.5, 1.0]), nodes=rng.randint(1, 4),
                            bb=rng.randint(0, 5) * 4 * GB))

        def observe(state, decision):
            nonlocal checked
            if came_free(state):
                return
            after = {r.job_id: r.start for r in decision.reservations}
            after.update((jid, state.time) for jid in decision.started_ids)
            for jid, start in state.memory["reservations"].items():
                assert after.get(jid, math.inf) >= start, (state.time, jid)
                checked += 1

        simulate(jobs, _PLATFORM, "conservative-bb", on_decision=observe)
    assert checked == 1995  # (kept reservations looked at, over the forty replays)


def _state_at(now: float, *running: tuple[str, float, float], memory=None) -> ClusterState:
    """A state at ``now`` with jobs ``(id, start, walltime)`` running (1 node, no BB)."""
    return ClusterState(now, _PLATFORM, tuple(
        RunningJob(Job(jid, 0, walltime=w, runtime=w, nodes=1), start, None, ())
        for jid, start, w in running), memory=memory or {})


def test_room_came_free_only_where_a_job_held_past_now_is_gone_or_ends_otherwise():
    def came(holding, reservations=None, queued=None):
        memory = {"reservations": reservations or {}}
        if holding is not None:
            memory["holding"] = holding
        state = _state_at(10.0, ("A", 0.0, 20.0), ("X", 0.0, 10.0), memory=memory)
        return came_free(state, queued)  # (X ends exactly now)

    assert came(None)  # (no decision known)
    assert not came({})
    assert not came({"A": 20.0})
    # every job held ended by its expected end (A, now running, was started by another hand)
    assert not came({"C": 9.0, "D": 10.0})
    assert came({"A": 20.0, "C": 10.5})  # C gone half a second early
    assert came({"A": 25.0})  # A held to another end: started again since
    # X, running with its end exactly now, does not stand for C, gone early
    assert came({"A": 20.0, "X": 10.0, "C": 12.0})
    assert not came({"A": 20.0, "X": 10.0})
    # reservations: all of them still queued, or one left the queue (its slot came free)
    assert not came({"A": 20.0}, {"p": 30.0, "q": 40.0}, 2)
    assert not came({"A": 20.0}, {"p": 30.0, "q": 40.0})  # (the caller's own queue)
    assert came({"A": 20.0}, {"p": 30.0, "q": 40.0}, 1)
    assert not came({"A": 20.0}, {}, 0)


def test_the_jobs_holding_resources_after_a_decision_are_those_running_past_now_and_started():
    state = _state_at(10.0, ("A", 0.0, 20.0), ("X", 0.0, 10.0), ("Y", 2.0, 8.5))
    started = [Job("s", 0, walltime=7.0, nodes=1)]
    assert holding_after(state, started) == {"A": 20.0, "Y": 10.5, "s": 17.0}
    assert holding_after(state, []) == {"A": 20.0, "Y": 10.5}


@st.composite
def _busy_workloads(draw):
    """8 to 25 jobs submitted within 20 s, each ending at or before its walltime, of 1 to 8
    nodes and 0 to 100 GB of BB: many wait with reservations at once, and early ends make
    the compression move them."""
    jobs = []
    for k in range(draw(st.integers(8, 25))):
        walltime = draw(st.integers(1, 20))
        jobs.append(Job(str(k), float(draw(st.integers(0, 20))), float(walltime),
                        float(draw(st.integers(0, walltime))), draw(st.integers(1, 8)),
                        float(draw(st.integers(0, 100))) * GB))
    return jobs


# What hypothesis shrank a violation to under the pieces held again and the engine's first
# fit (found in about 2,000 examples, on proximity placement): kept, so that the test fails on
# that rule under every seed. There job 9 (24 GB, one piece) was reserved at 2, then at 3.
@example([Job(str(k), float(s), float(w), float(r), n, b * GB) for k, (s, w, r, n, b) in
          enumerate([(1, 1, 0, 2, 2), (1, 1, 0, 1, 0), (0, 1, 0, 1, 0), (2, 1, 0, 1, 2),
                     (1, 1, 1, 4, 5), (0, 1, 0, 1, 0), (0, 1, 0, 1, 0), (0, 2, 2, 8, 0),
                     (0, 1, 0, 1, 0), (1, 1, 0, 1, 24)])], "proximity")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_busy_workloads(), st.sampled_from(["named", "proximity"]))
def test_no_reservation_is_ever_delayed_on_named_bb_nodes(jobs, kind):
    """Conservative backfilling's promise on four named BB nodes of 25 GB, first fit and by
    proximity: each reservation of a job is no later than its previous one, and the job starts
    no later than its first. Held again with fresh pieces at every decision, and started on the
    engine's first fit of the space free then, reservations broke it (on the whole KTH trace
    2,184 times on the 12 named nodes, ``benchmarks/promises.py``); held with their own pieces,
    a start placed over its window and naming them, they cannot."""
    from tests._platforms import PLATFORMS

    given_at: dict[str, list[float]] = {}

    def observe(state, decision):
        for r in decision.reservations:
            given_at.setdefault(r.job_id, []).append(r.start)

    res = simulate(jobs, PLATFORMS[kind], "conservative-bb", on_decision=observe)
    start = {job.id: s for job, s in zip(res.jobs, res.start, strict=True)}
    for job_id, starts in given_at.items():
        assert all(b <= a for a, b in zip(starts, starts[1:], strict=False)), (job_id, starts)
        assert start[job_id] <= starts[0], (job_id, starts, start[job_id])


@pytest.mark.parametrize("compiled", [False, None])
@pytest.mark.parametrize("came", [False, True])
def test_a_kept_reservation_keeps_the_pieces_its_memory_gives(compiled, came):
    """At 5, R holds the 4 nodes until 20; A (4 nodes, four pieces of 1 GB) is kept at 20
    with its pieces on BB node 1, where first fit would put them on node 0. Held again with its
    own pieces, with nothing come free or after a job ended early (X, due at 15, is gone: a
    compression that cannot move A), A keeps them, a fresh policy and the compiled one alike;
    without them in the memory they are placed again, first fit."""
    platform = Platform(nodes=4, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))
    state = ClusterState(5.0, platform, (_running("R", 20, 4, ()),),
                         (Job("A", 0, walltime=5, nodes=4, bb=4 * GB),),
                         {"reservations": {"A": 20.0}, "pieces": {"A": [0.0, 4 * GB]},
                          "holding": {"R": 20.0, **({"X": 15.0} if came else {})}})
    assert came_free(state) is came
    got = ConservativeBackfilling(compiled=compiled).decide(state)
    assert [(r.job_id, r.start) for r in got.reservations] == [("A", 20.0)]
    assert got.memory["pieces"] == {"A": [0.0, 4 * GB]}
    fresh = ConservativeBackfilling(compiled=compiled).decide(ClusterState(
        5.0, platform, state.running, state.queue, {"reservations": {"A": 20.0}}))
    assert fresh.memory["pieces"] == {"A": [4 * GB, 0.0]}


@pytest.mark.parametrize("compiled", [False, None])
def test_a_start_the_caller_did_not_run_frees_its_slot_at_the_next_decision(compiled):
    """4 nodes; R holds 2 of them until 100. At 0, A (2 nodes, 50 s) starts and B (2 nodes,
    10 s) is reserved at 50. At 1 the caller hands the same running jobs (it did not run A)
    and B alone: A's slot is free, so B is compressed to now, by the policy that decided at 0
    as by a fresh one given the same state."""
    platform = Platform(nodes=4, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))
    running = (_running("R", 100, 2, ()),)
    a, b = Job("A", 0, walltime=50, nodes=2, bb=2 * GB), Job("B", 0, walltime=10, nodes=2)
    policy = ConservativeBackfilling(compiled=compiled)
    first = policy.decide(ClusterState(0.0, platform, running, (a, b)))
    assert first.started_ids == ["A"] and [(r.job_id, r.start) for r in first.reservations] == [
        ("B", 50.0)]
    again = ClusterState(1.0, platform, running, (b,), first.memory)
    assert came_free(again)
    for got in (policy.decide(again), ConservativeBackfilling(compiled=compiled).decide(again)):
        assert got.started_ids == ["B"] and got.reservations == ()

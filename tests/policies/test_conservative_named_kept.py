"""conservative-bb on named BB nodes keeps its profile between decisions while every amount is
whole (bbopt.policies.conservative_named.NamedArrays): when it does and when it builds the
profile again, and that either way each decision is a fresh policy's and the Python
reference's on the same state (Kopanski & Rzadca, Sections 3.2 and 4.1)."""

from __future__ import annotations

import math

import pytest

from bbopt import simulate
from bbopt.core import GB, ClusterState, Job, Platform, RunningJob
from bbopt.planner.named import conservative_kernels
from bbopt.policies.conservative import ConservativeBackfilling
from bbopt.policies.conservative_named import (
    _EXACT,
    NamedArrays,
    _exact,
    _whole,
    _whole_amount,
)
from tests._plan_checks import replay_against_fresh

# 4 compute nodes, three 10 GB BB nodes.
_PLATFORM = Platform(nodes=4, bb=30 * GB, bb_nodes=(10 * GB, 10 * GB, 10 * GB))

_KERNELS = pytest.mark.skipif(conservative_kernels() is None,
                              reason="the compiled kernels do not load here")


@pytest.mark.parametrize(("bb", "nodes", "whole"), [
    (0.0, 1, True), (3 * GB, 3, True), (3.0, 2, False), (0.5, 1, False),
    (_EXACT - 2, 2, True), (_EXACT - 1, 1, True), (_EXACT, 1, False), (_EXACT + 2, 2, False)])
def test_a_job_is_whole_when_its_bb_and_each_piece_are_whole_numbers_below_2_50(
        bb, nodes, whole):
    assert _whole(Job("j", 0, walltime=1, nodes=nodes, bb=bb)) is whole


@pytest.mark.parametrize(("x", "whole"), [(0, True), (4.0, True), (-3.0, True), (0.5, False),
                                          (_EXACT - 1, True), (_EXACT, False),
                                          (-_EXACT, False), (math.inf, False)])
def test_an_amount_is_whole_below_2_50_either_side(x, whole):
    assert _whole_amount(x) is whole



@pytest.mark.parametrize(("tol", "exact"), [
    (0.5, True), (math.nextafter(0.5, 1.0), False), (math.nextafter(0.5, 0.0), True),
    (27.5, True), (27.6, False), (0.0, True), (0.99, False)])
def test_a_slack_whose_fraction_is_at_most_a_half_lets_the_profile_be_kept(tol, exact):
    assert _exact((4.0, 30.0 * GB), (0.0, tol)) is exact
    assert _exact((4.5, 30.0 * GB), (0.0, 0.0)) is False  # (a capacity not whole)


def _recorded(arrays: NamedArrays) -> list[tuple[float, int]]:
    """Record the time and the profile length each compiled decision of ``arrays`` is handed
    (0: the profile is built again from the running jobs) from its next decision on."""
    lengths: list[tuple[float, int]] = []
    consts = arrays._consts
    step = consts[6]

    def recording(*args):
        lengths.append((args[0], args[20]))
        return step(*args)

    arrays._consts = (*consts[:6], recording, *consts[7:])
    return lengths


def _jobs(count: int, bb_of=lambda k: float((k % 4) * 3 * GB)) -> list[Job]:
    return [Job(str(k), 2.0 * k, walltime=float(5 + k % 7), runtime=float(1 + k % 6),
                nodes=1 + k % 3, bb=bb_of(k)) for k in range(count)]


def _replay(jobs, platform=_PLATFORM):
    """Replay ``jobs`` under one conservative-bb, every decision checked against a fresh
    policy's and the Python reference's; the result and the (time, length) recorded after
    its first decision."""
    policy = ConservativeBackfilling()
    lengths: list[list[tuple[float, int]]] = []

    def observe(state, decision):
        if not lengths:
            lengths.append(_recorded(policy._named))
        for fresh in ({}, {"compiled": False}):
            again = ConservativeBackfilling(**fresh).decide(state)
            assert (again.start, again.reservations, again.memory) == (
                decision.start, decision.reservations, decision.memory), state.time

    res = simulate(jobs, platform, policy, on_decision=observe)
    return res, lengths[0]


@_KERNELS
def test_a_replay_of_whole_amounts_keeps_its_profile_after_the_first_decision():
    _, lengths = _replay(_jobs(200))
    assert len(lengths) > 200
    assert min(n for _, n in lengths) > 0


@_KERNELS
def test_a_job_with_pieces_of_a_fraction_of_a_byte_builds_the_profile_while_it_waits():
    """Job 100 asks 3 GB + 1 byte on 2 nodes (pieces of 1.5 GB and half a byte). It arrives at
    t=200, when the profile kept holds whole amounts only (it is used, the job planned on it);
    every decision after builds the profile again while the job waits, until it starts at 219
    with both pieces on one BB node (3 GB + 1 byte there, a whole number): from then on the
    profile is kept again. The decisions are the same throughout."""
    jobs = _jobs(150, lambda k: 3 * GB + 1 if k == 100 else float((k % 4) * 3 * GB))
    assert jobs[100].nodes == 2
    res, lengths = _replay(jobs)
    assert (res.start[100], res.end[100]) == (219.0, 224.0)
    assert min(n for t, n in lengths if t <= 200.0) > 0
    assert {n for t, n in lengths if 200.0 < t <= 219.0} == {0}
    assert min(n for t, n in lengths if t > 220.0) > 0


@_KERNELS
@pytest.mark.parametrize(("bb_nodes", "kept"), [((9 * GB,) * 3, True),
                                                ((9.2 * GB, 9.2 * GB, 8.8 * GB), True),
                                                ((9.2 * GB,) * 3, False)])
def test_a_slack_whose_fraction_passes_a_half_builds_every_profile(bb_nodes, kept):
    """The pool's slack is a billionth of its capacity: 27, 27.2 (a fraction of 0.2) or 27.6
    bytes (0.6); above a half a sum of whole amounts and the slack can round up to the next
    whole number, and the profile is built again at each decision."""
    platform = Platform(nodes=4, bb=sum(bb_nodes), bb_nodes=bb_nodes)
    _, lengths = _replay(_jobs(60), platform)
    assert {n > 0 for _, n in lengths} == {kept}


def _start_then(pieces_run):
    """At t=0 R runs (2 nodes, until 50) and s (1 node, a 4 GB piece) starts now on the named
    pieces; w (4 nodes) is reserved at 50. At t=1 s runs with ``pieces_run`` (``None``: the
    named ones), and a new job n (1 node, 1 GB) waits."""
    arrays = NamedArrays()
    r = RunningJob(Job("R", 0, walltime=50, runtime=50, nodes=2), 0.0, None, ())
    s, w = Job("s", 0, walltime=20, nodes=1, bb=4 * GB), Job("w", 0, walltime=10, nodes=4)
    state = ClusterState(0.0, _PLATFORM, (r,), (s, w))
    first = arrays.plan(state, (s, w), {}, {}, math.inf)
    assert first.started == [s] and first.later == {"w": 50.0}
    lengths = _recorded(arrays)
    named = first.placed["s"]
    running = (r, RunningJob(s, 0.0, None, named if pieces_run is None else pieces_run))
    n = Job("n", 1, walltime=5, nodes=1, bb=GB)
    memory = {"reservations": first.later, "pieces": first.held, "holding": first.holding}
    later = ClusterState(1.0, _PLATFORM, running, (w, n), memory)
    plan = arrays.plan(later, (w, n), first.later, first.held, math.inf)
    fresh = ConservativeBackfilling(compiled=False).decide(later)
    return named, lengths, plan, fresh


@_KERNELS
def test_a_job_run_on_the_pieces_named_keeps_the_profile():
    named, lengths, plan, fresh = _start_then(None)
    assert named == ((0, 4 * GB),)
    assert lengths[0][1] > 0
    assert plan.later == {"w": 50.0} and [j.id for j in plan.started] == ["n"]
    assert [(x.job_id, x.start) for x in fresh.reservations] == [("w", 50.0)]
    assert fresh.started_ids == ["n"]


@_KERNELS
def test_a_job_run_on_other_pieces_than_named_builds_the_profile_from_the_running_jobs():
    """s runs with its piece on BB node 2: the profile is built again (0) and n's piece goes
    to node 0, as the Python reference places it."""
    _, lengths, plan, fresh = _start_then(((2, 4 * GB),))
    assert lengths == [(1.0, 0)]
    assert plan.placed == {"n": ((0, GB),)} == {s.job_id: s.bb_pieces for s in fresh.start}


@_KERNELS
def test_a_job_running_that_the_last_decision_did_not_know_builds_the_profile():
    arrays = NamedArrays()
    r = RunningJob(Job("R", 0, walltime=50, runtime=50, nodes=2), 0.0, None, ())
    w = Job("w", 0, walltime=10, nodes=4)
    first = arrays.plan(ClusterState(0.0, _PLATFORM, (r,), (w,)), (w,), {}, {}, math.inf)
    lengths = _recorded(arrays)
    other = RunningJob(Job("x", 0, walltime=80, runtime=80, nodes=1), 0.5, None, ())
    memory = {"reservations": first.later, "pieces": first.held, "holding": first.holding}
    state = ClusterState(1.0, _PLATFORM, (r, other), (w,), memory)
    plan = arrays.plan(state, (w,), first.later, first.held, math.inf)
    assert lengths == [(1.0, 0)]
    assert plan.later == {"w": 80.5}
    assert [(x.job_id, x.start) for x in ConservativeBackfilling(compiled=False).decide(
        state).reservations] == [("w", 80.5)]


@_KERNELS
def test_a_job_ended_early_gives_back_the_rest_of_its_slot_and_the_reservations_move_up():
    """R (2 nodes, due at 50) ends at 10: w (4 nodes), reserved at 50, starts at 10 on the
    kept profile, as a fresh policy decides."""
    arrays = NamedArrays()
    r = RunningJob(Job("R", 0, walltime=50, runtime=10, nodes=2), 0.0, None, ())
    a = RunningJob(Job("A", 0, walltime=30, runtime=30, nodes=2), 0.0, None, ())
    w = Job("w", 0, walltime=10, nodes=4)
    first = arrays.plan(ClusterState(0.0, _PLATFORM, (r, a), (w,)), (w,), {}, {}, math.inf)
    assert first.later == {"w": 50.0}
    lengths = _recorded(arrays)
    memory = {"reservations": first.later, "pieces": first.held, "holding": first.holding}
    state = ClusterState(10.0, _PLATFORM, (a,), (w,), memory)
    plan = arrays.plan(state, (w,), first.later, first.held, math.inf)
    assert lengths[0][1] > 0
    assert plan.later == {"w": 30.0} and plan.moved == ["w"]
    assert [(x.job_id, x.start) for x in ConservativeBackfilling(compiled=False).decide(
        state).reservations] == [("w", 30.0)]


@_KERNELS
def test_reservations_left_untouched_count_towards_the_depth():
    """Depth 2: R (2 nodes, due at 50) ends at 10; w1 and w2 (4 nodes each), reserved at 100
    and 110 behind A (2 nodes until 100), cannot move (2 nodes free before 100) and stay
    where they are; they are the two reservations, so n (3 nodes), come at 10, gets none and
    does not fit now."""
    arrays = NamedArrays()
    r = RunningJob(Job("R", 0, walltime=50, runtime=10, nodes=2), 0.0, None, ())
    a = RunningJob(Job("A", 0, walltime=100, runtime=100, nodes=2), 0.0, None, ())
    w1, w2 = Job("w1", 0, walltime=10, nodes=4), Job("w2", 0, walltime=10, nodes=4)
    first = arrays.plan(ClusterState(0.0, _PLATFORM, (r, a), (w1, w2)), (w1, w2), {}, {}, 2)
    assert first.later == {"w1": 100.0, "w2": 110.0}
    lengths = _recorded(arrays)
    n = Job("n", 10, walltime=5, nodes=3)
    memory = {"reservations": first.later, "pieces": first.held, "holding": first.holding}
    state = ClusterState(10.0, _PLATFORM, (a,), (w1, w2, n), memory)
    plan = arrays.plan(state, (w1, w2, n), first.later, first.held, 2)
    assert lengths[0][1] > 0
    assert plan.later == {"w1": 100.0, "w2": 110.0} and plan.started == []
    python = ConservativeBackfilling(depth=2, compiled=False).decide(state)
    assert [(x.job_id, x.start) for x in python.reservations] == [("w1", 100.0), ("w2", 110.0)]


@_KERNELS
def test_a_plan_that_leaves_a_job_unreserved_lists_only_the_jobs_reserved():
    """Depth 2. At t=0 A (1 node, until 100) and R (1 node, due at 50) run; x (2 nodes,
    200 s) starts, w1 (4 nodes) is reserved at 200, w2 gets none. R ends at 10: w1 cannot
    move (x runs until 200), w2 is reserved at 210, and n (3 nodes), come at 10, gets none
    and does not fit now: the plan's reservations are w1 and w2 only."""
    arrays = NamedArrays()
    a = RunningJob(Job("A", 0, walltime=100, runtime=100, nodes=1), 0.0, None, ())
    r = RunningJob(Job("R", 0, walltime=50, runtime=10, nodes=1), 0.0, None, ())
    x = Job("x", 0, walltime=200, nodes=2)
    w1, w2 = Job("w1", 0, walltime=10, nodes=4), Job("w2", 0, walltime=10, nodes=4)
    first = arrays.plan(ClusterState(0.0, _PLATFORM, (a, r), (x, w1, w2)), (x, w1, w2), {},
                        {}, 2)
    assert first.started == [x] and first.later == {"w1": 200.0}
    lengths = _recorded(arrays)
    n = Job("n", 10, walltime=5, nodes=3)
    memory = {"reservations": first.later, "pieces": first.held, "holding": first.holding}
    state = ClusterState(10.0, _PLATFORM, (a, RunningJob(x, 0.0, None, ())), (w1, w2, n),
                         memory)
    plan = arrays.plan(state, (w1, w2, n), first.later, first.held, 2)
    assert lengths[0][1] > 0
    assert plan.later == {"w1": 200.0, "w2": 210.0} and plan.started == []
    assert plan.starts[:2] == [200.0, 210.0] and math.isnan(plan.starts[2])
    python = ConservativeBackfilling(depth=2, compiled=False).decide(state)
    assert [(j.job_id, j.start) for j in python.reservations] == [("w1", 200.0), ("w2", 210.0)]


@_KERNELS
def test_a_job_started_later_than_advised_builds_the_profile_from_the_running_jobs():
    """s (4 nodes, 20 s) is advised to start at 0; the caller starts it at 0.5, so it holds the
    nodes until 20.5: n (4 nodes), come at 1, is reserved then, not at 20."""
    arrays = NamedArrays()
    s = Job("s", 0, walltime=20, nodes=4)
    first = arrays.plan(ClusterState(0.0, _PLATFORM, (), (s,)), (s,), {}, {}, math.inf)
    assert first.started == [s]
    lengths = _recorded(arrays)
    n = Job("n", 1, walltime=5, nodes=4)
    memory = {"reservations": first.later, "pieces": first.held, "holding": first.holding}
    state = ClusterState(1.0, _PLATFORM, (RunningJob(s, 0.5, None, ()),), (n,), memory)
    plan = arrays.plan(state, (n,), first.later, first.held, math.inf)
    assert lengths == [(1.0, 0)]
    assert plan.later == {"n": 20.5}
    assert [(x.job_id, x.start) for x in ConservativeBackfilling(compiled=False).decide(
        state).reservations] == [("n", 20.5)]


@_KERNELS
def test_a_fractional_job_reserved_from_a_queue_planned_afresh_builds_the_next_profile():
    """A first decision plans the queue given (nothing kept): f (2 nodes, pieces of half a
    byte) is reserved behind R, so the next decision builds the profile; with whole jobs only
    it is kept."""
    for bb, built in ((3 * GB + 1, True), (3 * GB, False)):
        arrays = NamedArrays()
        r = RunningJob(Job("R", 0, walltime=50, runtime=50, nodes=4), 0.0, None, ())
        f = Job("f", 0, walltime=10, nodes=2, bb=bb)
        first = arrays.plan(ClusterState(0.0, _PLATFORM, (r,), (f,)), (f,), {}, {}, math.inf)
        assert first.later == {"f": 50.0}
        lengths = _recorded(arrays)
        memory = {"reservations": first.later, "pieces": first.held,
                  "holding": first.holding}
        n = Job("n", 1, walltime=5, nodes=1)
        state = ClusterState(1.0, _PLATFORM, (r,), (f, n), memory)
        assert arrays.plan(state, (f, n), first.later, first.held, math.inf).later == {
            "f": 50.0, "n": 50.0}
        assert (lengths[0][1] == 0) is built


@_KERNELS
def test_the_jobs_holding_resources_are_those_of_the_state_asked_about():
    """Asked about one state, then another whose memory it did not return (no start in
    either): the second plan's holders are the second state's running jobs."""
    arrays = NamedArrays()
    w = Job("w", 0, walltime=10, nodes=4)
    one = (RunningJob(Job("A", 0, walltime=50, runtime=50, nodes=1), 0.0, None, ()),)
    two = (RunningJob(Job("B", 0, walltime=70, runtime=70, nodes=2), 0.0, None, ()),)
    assert arrays.plan(ClusterState(0.0, _PLATFORM, one, (w,)), (w,), {}, {},
                       math.inf).holding == {"A": 50.0}
    plan = arrays.plan(ClusterState(0.0, _PLATFORM, two, (w,)), (w,), {}, {}, math.inf)
    assert plan.holding == {"B": 70.0} and plan.started == []


@_KERNELS
@pytest.mark.parametrize(("running", "queued"), [(300, 10), (0, 300)])
def test_a_profile_past_its_first_arrays_is_decided_as_in_python(running, queued):
    """Many running jobs with distinct ends (300 of 400 nodes, one each) or a long queue of
    jobs reserved one after another (300, of 350 or 120 nodes, walltimes apart): the profile
    outgrows its first arrays (256 breakpoints; 301 and 307 here), then the second decision plans on
    the kept profile, and the plans are the Python reference's."""
    platform = Platform(nodes=400, bb=30 * GB, bb_nodes=(10 * GB, 10 * GB, 10 * GB))
    run = tuple(RunningJob(Job(f"r{k}", 0, walltime=100.0 + k, runtime=100.0 + k, nodes=1),
                           0.0, None, ()) for k in range(running))
    queue = tuple(Job(f"q{k}", 0, walltime=1.0 + (k * 37 % 101) / 10,
                      nodes=350 if k % 3 else 120) for k in range(queued))
    arrays = NamedArrays()
    state = ClusterState(0.0, platform, run, queue)
    first = arrays.plan(state, queue, {}, {}, math.inf)
    assert arrays._queue.length > 256
    python = ConservativeBackfilling(compiled=False).decide(state)
    assert first.later == {x.job_id: x.start for x in python.reservations}
    assert [j.id for j in first.started] == python.started_ids
    rest = tuple(j for j in queue if j.id in first.later)
    extra = Job("x", 0, walltime=3, nodes=400)
    memory = {"reservations": first.later, "pieces": first.held, "holding": first.holding}
    later = ClusterState(0.0, platform, run + tuple(
        RunningJob(j, 0.0, None, first.placed[j.id]) for j in first.started), rest + (extra,),
        memory)
    second = arrays.plan(later, rest + (extra,), first.later, first.held, math.inf)
    again = ConservativeBackfilling(compiled=False).decide(later)
    assert second.later == {x.job_id: x.start for x in again.reservations}
    assert len(second.later) == len(rest) + 1


def test_a_replay_with_fractions_of_a_byte_decides_as_from_scratch():
    """Pieces of a third of 1 GB + 1 byte: the profile is built again at every decision; each
    equals the fresh one's and the Python reference's."""
    jobs = _jobs(120, lambda k: float((k % 4) * GB + 1))
    res, compared = replay_against_fresh(jobs, _PLATFORM, "conservative-bb",
                                         fresh=({}, {"compiled": False}))
    assert len(compared) > 120
    assert all(s >= j.submit for s, j in zip(res.start, jobs, strict=True))

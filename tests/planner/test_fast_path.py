"""The planner's two-dimension fast path on named BB nodes (``Planner.fast_path``) against the
profile of every dimension, the reference: the same EASY decisions (starts now, the head's
shadow time, its re-placeable reservation, the backfilled jobs), the same answers to later
fits, and, once the full profile is built from the fast path's holds, the same profile."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import simulate
from bbopt.core import ClusterState, Job, Platform, RunningJob
from bbopt.planner import Planner
from tests.planner.test_plan import GB, HEAD, _job, _queue, _shadow_case, _state


def _easy(planner: Planner, queue: list[Job]) -> tuple:
    """EASY's use of the planner (bbopt.policies.queue), every answer recorded."""
    out = []
    i = 0
    for job in queue:
        start = planner.start(job)
        if start is None:
            break
        out.append(start)
        i += 1
    if i == len(queue):
        return tuple(out), None, (), ()
    head = queue[i]
    shadow = planner.earliest(head)
    if shadow < math.inf:
        planner.reserve(head, shadow, replace=True)
    rest = queue[i + 1:]
    later = tuple(planner.fits(job, shadow + 1.0) for job in rest) if shadow < math.inf else ()
    return tuple(out), shadow, tuple(j.id for j in planner.start_each(rest)), later


class _Reference(Planner):
    """The planner on the profile of every dimension only."""

    __slots__ = ()
    fast_path = False


def _both(state):
    return Planner.of(state), _Reference.of(state)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["named", "proximity"]), st.lists(_job, max_size=6),
       st.lists(_job, min_size=1, max_size=8))
def test_easy_on_the_fast_path_is_the_reference(kind, running, queue):
    state, _ = _state(kind, running)
    fast, ref = _both(state)
    assert _easy(fast, _queue(kind, queue)) == _easy(ref, _queue(kind, queue))
    assert fast.bb.free == ref.bb.free and fast.free_nodes == ref.free_nodes
    assert fast.profile.times == ref.profile.times
    assert fast.profile.free == ref.profile.free


@settings(max_examples=100, deadline=None)
@given(st.lists(_job, max_size=6), st.lists(_job, min_size=1, max_size=6),
       st.floats(5.0, 40.0))
def test_a_later_fixed_hold_leaves_the_fast_path_with_the_same_answers(running, queue, t):
    """A reservation whose pieces are fixed later ends the fast path: the profile of every
    dimension is built with the holds so far, and the answers stay the reference's."""
    state, _ = _state("named", running)
    fast, ref = _both(state)
    jobs = _queue("named", queue)
    for planner in (fast, ref):
        planner.start(jobs[0])
    assert fast.hold(jobs[-1], t) == ref.hold(jobs[-1], t)
    assert [fast.earliest(j) for j in jobs] == [ref.earliest(j) for j in jobs]
    assert fast.profile.free == ref.profile.free


def test_the_head_keeps_its_pieces_placeable_on_the_fast_path():
    """The re-placeable reservation's case (tests/planner/test_plan.py) on the fast path: a
    late job moves the head's pieces, a second one would leave them unplaceable; a job that
    ends at the shadow time leaves the head untouched, one just after does not."""
    planner = _shadow_case()
    assert planner.earliest(HEAD) == 10.0
    planner.reserve(HEAD, 10.0, replace=True)
    assert planner._profile is None  # (still on the fast path)
    assert planner.start(Job("late", 0, 100.0, nodes=1, bb=6 * GB)) is not None
    assert not planner.fits_now(Job("late2", 0, 100.0, nodes=1, bb=2 * GB))
    assert planner.fits_now(Job("short", 0, 10.0, nodes=1, bb=2 * GB))
    assert not planner.fits_now(Job("short", 0, 10.5, nodes=1, bb=2 * GB))


@pytest.mark.parametrize("policy", ["fcfs-bb", "sjf-bb", "fcfs-easy"])
def test_easy_schedules_are_the_references(policy, monkeypatch):
    """Whole replays of EASY on named BB nodes, with and without the fast path: every job
    starts at the same time."""
    rnd = random.Random(7)
    platform = Platform(16, 120 * GB, bb_nodes=(30 * GB,) * 4)
    jobs, t = [], 0.0
    for k in range(400):
        t += rnd.expovariate(1 / 30.0)
        n = rnd.choice([1, 1, 2, 4, 8, 16])
        walltime = rnd.uniform(10.0, 600.0)
        jobs.append(Job(f"j{k}", t, walltime, runtime=walltime * rnd.uniform(0.2, 1.0),
                        nodes=n, bb=rnd.choice([0.0, 1.0, 5.0, 20.0, 60.0]) * GB))
    fast = simulate(jobs, platform, policy)
    monkeypatch.setattr(Planner, "fast_path", False)
    ref = simulate(jobs, platform, policy)
    assert list(fast.start) == list(ref.start)
    assert len(set(fast.start)) > 100  # (a busy machine: many distinct start times)


def test_a_fixed_reservation_now_holds_its_pieces_as_the_reference_does():
    """A reservation from now whose pieces no start took (``reserve``, not ``start``) ends the
    fast path: a later job is refused there exactly as on the profile of every dimension."""
    fast, ref = _shadow_case(), _shadow_case()
    ref.__class__ = _Reference
    wide = Job("wide", 0, 100.0, nodes=2, bb=20 * GB)
    for planner in (fast, ref):
        planner.reserve(wide, 0.0)
    jobs = [Job(f"j{k}", 0, 30.0 * k, nodes=1 + k % 2, bb=k * GB) for k in range(1, 8)]
    assert [fast.fits_now(j) for j in jobs] == [ref.fits_now(j) for j in jobs]
    assert [fast.earliest(j) for j in jobs] == [ref.earliest(j) for j in jobs]
    assert fast._profile is not None


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(["named", "proximity"]), st.lists(_job, max_size=6),
       st.lists(_job, min_size=1, max_size=12), st.integers(1, 4))
def test_a_pass_over_blocks_starts_what_a_pass_over_the_jobs_does(kind, running, queue, size):
    """``start_each_block`` skips a block whose least nodes or BB are not free now: the same
    starts as ``start_each`` over its jobs; ``may_start_now`` keeps every job either starts."""
    state, _ = _state(kind, running)
    jobs = _queue(kind, queue)
    blocks = [(jobs[i:i + size], (min(j.nodes for j in jobs[i:i + size]),
                                  min(j.bb for j in jobs[i:i + size])))
              for i in range(0, len(jobs), size)]
    flat, by_block, kept = Planner.of(state), Planner.of(state), Planner.of(state)
    started = flat.start_each(jobs)
    assert by_block.start_each_block(blocks) == started
    assert by_block.bb.free == flat.bb.free
    candidates = kept.may_start_now(jobs)
    assert set(map(id, started)) <= set(map(id, candidates))
    assert kept.start_each(candidates) == started


@pytest.mark.parametrize("unit", [GB, 1 / 12])  # (a head of 12 GB, or of one byte)
def test_a_later_start_keeps_the_heads_pieces_placeable_at_both_ends(unit):
    """Three BB nodes of 10 GB: node 0 held for good, 6 GB of node 2 until t=30, one node busy
    until t=10. The head (4 nodes, 12 GB: four pieces of 3 GB) is reserved at 10 on node 1's
    three pieces and node 2's one. A job of 6 GB at 30 or 40 would take node 1 (first fit, node
    2 now free): the head would then find 4 GB on node 1 at 10 and 4 GB on node 2 after, one
    piece each, where it needs four, so the job waits until the head ends, at 60; the same on
    the fast path and on the profile of every dimension; in GB, or for a head of one byte."""
    platform = Platform(6, 30 * unit, bb_nodes=(10 * unit,) * 3)
    running = (RunningJob(Job("r0", 0, 1e3, nodes=1, bb=10 * unit), 0.0, (0,), ((0, 10 * unit),)),
               RunningJob(Job("L", 0, 30.0, nodes=1, bb=6 * unit), 0.0, (1,), ((2, 6 * unit),)),
               RunningJob(Job("r", 0, 10.0, nodes=1), 0.0, (2,)))
    head = Job("head", 0, 50.0, nodes=4, bb=12 * unit)
    x = Job("x", 0, 100.0, nodes=1, bb=6 * unit)
    fast, ref = _both(ClusterState(0.0, platform, running))
    for planner in (fast, ref):
        assert planner.earliest(head) == 10.0
        planner.reserve(head, 10.0, replace=True)
        assert [planner.fits(x, t) for t in (5.0, 30.0, 40.0, 59.5, 60.0)] == [
            False, False, False, False, True]
    assert fast._profile is None  # (answered on the fast path)


def test_every_re_placeable_reservation_is_checked_not_only_the_first():
    """A re-placeable reservation far ahead (t=500) that a start now does not overlap, then
    the head's at 10: a second late job is refused for the head, as on the reference."""
    fast, ref = _shadow_case(), _shadow_case()
    ref.__class__ = _Reference
    for planner in (fast, ref):
        planner.reserve(Job("far", 0, 10.0, nodes=1, bb=GB), 500.0, replace=True)
        planner.reserve(HEAD, 10.0, replace=True)
        assert planner.start(Job("late", 0, 100.0, nodes=1, bb=6 * GB)) is not None
        assert not planner.fits_now(Job("late2", 0, 100.0, nodes=1, bb=2 * GB))
        assert planner.fits_now(Job("short", 0, 10.0, nodes=1, bb=2 * GB))
    assert fast._profile is None  # (answered on the fast path)


def test_a_start_now_past_the_heads_reservation_leaves_it_its_nodes():
    """Six nodes, four busy until 10, a head of 5 nodes reserved at 10 (re-placeable, on the
    fast path): two nodes are free now, one from 10 to 60. A 2-node job without BB starts now
    only if it ends by 10 (a walltime of 10, not 10.5); one node may run past, on the
    reference too."""
    head = Job("head", 0, 50.0, nodes=5, bb=12 * GB)
    answers = []
    for planner in (_shadow_case(), _shadow_case()):
        if answers:
            planner.__class__ = _Reference
        assert planner.earliest(head) == 10.0
        planner.reserve(head, 10.0, replace=True)
        answers.append([planner.fits_now(Job("j", 0, w, nodes=n)) for n, w in
                        ((2, 10.0), (2, 10.5), (2, 100.0), (1, 100.0), (1, 60.0))])
        assert (planner._profile is None) == (not isinstance(planner, _Reference))
    assert answers == [[True, False, False, True, True]] * 2


def test_a_start_now_past_the_heads_reservation_may_take_the_pooled_bb_left_exactly():
    """The head (5 nodes, 10 GB: five pieces of 2 GB) reserved at 10 leaves 10 GB of the pool
    from 10 to 60: a 1-node job of exactly 10 GB may run past it (its piece on BB node 0, the
    head's five on node 1), one of a megabyte more may not."""
    head = Job("head", 0, 50.0, nodes=5, bb=10 * GB)
    answers = []
    for planner in (_shadow_case(), _shadow_case()):
        if answers:
            planner.__class__ = _Reference
        planner.reserve(head, 10.0, replace=True)
        answers.append([planner.fits_now(Job("j", 0, 100.0, nodes=1, bb=b))
                        for b in (10 * GB, 10 * GB + 1e6)])
    assert answers == [[True, False]] * 2


def test_a_start_now_must_fit_every_later_reservation_it_overlaps():
    """A re-placeable reservation of 1 node at 10 for 100 s, another of 5 nodes at 200 for 50
    s: a 2-node job started now fits the first's rows but not the second's, so it may run until
    200 exactly (the second's start), not 200.5 nor 300."""
    answers = []
    for planner in (_shadow_case(), _shadow_case()):
        if answers:
            planner.__class__ = _Reference
        planner.reserve(Job("a", 0, 100.0, nodes=1, bb=GB), 10.0, replace=True)
        planner.reserve(Job("b", 0, 50.0, nodes=5, bb=GB), 200.0, replace=True)
        answers.append([planner.fits_now(Job("j", 0, w, nodes=2)) for w in
                        (10.0, 150.0, 200.0, 200.5, 300.0)])
        assert (planner._profile is None) == (not isinstance(planner, _Reference))
    assert answers == [[True, True, True, False, False]] * 2


def test_equal_ends_give_their_pieces_back_in_the_order_the_state_lists_them():
    """BB node 0 (10 GB) held whole by three running jobs ending together at 10, listed with
    pieces of 2/3 GB, 10 - 4/3 GB and 2/3 GB (a plain tuple, not the engine's list): given
    back in that order, as the reference adds them, the node has exactly 10 GB free at 10 (in
    the order of their sizes, one rounding more). A 1-node job of 10 GB plus the BB node's
    rounding tolerance (1e-12 of it) fits there; one of the next float does not, on both."""
    x = 2 * GB / 3
    sizes = (x, 10 * GB - x - x, x)
    running = tuple(RunningJob(Job(f"r{k}", 0, 10.0, nodes=1, bb=s), 0.0, (k,), ((0, s),))
                    for k, s in enumerate(sizes))
    running += (RunningJob(Job("full", 0, 10.0, nodes=1, bb=10 * GB), 0.0, (3,),
                           ((1, 10 * GB),)),)
    state = ClusterState(0.0, Platform(6, 20 * GB, bb_nodes=(10 * GB,) * 2), running)
    at = 10 * GB + 10 * GB * 1e-12
    jobs = [Job("at", 0, 5.0, nodes=1, bb=at),
            Job("above", 0, 5.0, nodes=1, bb=math.nextafter(at, math.inf))]
    fast, ref = _both(state)
    for planner in (fast, ref):
        assert [planner.fits(j, 10.0) for j in jobs] == [True, False]
        assert [planner.earliest(j) for j in jobs] == [10.0, math.inf]
    assert fast._profile is None  # (answered on the fast path)


def test_past_a_later_hold_a_start_now_may_take_the_pooled_bb_left_plus_its_tolerance():
    """A pool 20 bytes below its two 10 GB BB nodes' sum (the platform's rounding of 1e-9),
    the head (2 nodes, 4 GB) reserved re-placeably at 10 for 50 s: a 2-node job started now for
    100 s may take exactly the pooled bytes left from 10 plus the pool's tolerance (1e-9 of
    it), not the next float, on the fast path as on the reference."""
    pool = 20 * GB - 20
    state = ClusterState(0.0, Platform(4, pool, bb_nodes=(10 * GB,) * 2), ())
    at = (pool - 4 * GB) + pool * 1e-9
    answers = []
    for planner in _both(state):
        planner.reserve(Job("head", 0, 50.0, nodes=2, bb=4 * GB), 10.0, replace=True)
        answers.append([planner.fits_now(Job("j", 0, 100.0, nodes=2, bb=b)) for b in
                        (math.nextafter(at, 0.0), at, math.nextafter(at, math.inf))])
        assert (planner._profile is None) == (not isinstance(planner, _Reference))
    assert answers == [[True, True, False]] * 2


def test_a_start_now_may_take_the_whole_pool_plus_its_tolerance_and_no_more():
    """The same pool, 20 bytes below its BB nodes' sum, nothing held: a 2-node job started now
    may take the pool plus its tolerance (which rounds to the BB nodes' 20 GB), not the next
    float."""
    pool = 20 * GB - 20
    state = ClusterState(0.0, Platform(4, pool, bb_nodes=(10 * GB,) * 2), ())
    at = pool + pool * 1e-9
    bbs = (math.nextafter(at, 0.0), at, math.nextafter(at, math.inf))
    for planner in _both(state):
        assert [planner.fits_now(Job("j", 0, 100.0, nodes=2, bb=b)) for b in bbs] == [
            True, True, False]


def test_the_pool_refuses_a_start_now_that_the_bb_nodes_would_take():
    """The pool 20 bytes below its BB nodes' sum, and a running job of 10 GB whose pieces (5
    GB on each BB node) are 10 bytes short (both within the rounding the platform and the
    state accept): 10 GB less 20 bytes of the pool are free, 10 GB and 10 bytes of the BB
    nodes. A 2-node job of 10 GB and 5 bytes would fit the BB nodes (a piece each); the pool
    plus its tolerance of 20 bytes refuses it, as it refuses the next float above its bound,
    and admits the bound itself."""
    pool = 20 * GB - 20
    running = (RunningJob(Job("r", 0, 50.0, nodes=1, bb=10 * GB), 0.0, (0,),
                          ((0, 5 * GB - 5), (1, 5 * GB - 5))),)
    state = ClusterState(0.0, Platform(4, pool, bb_nodes=(10 * GB,) * 2), running)
    at = (pool - 10 * GB) + pool * 1e-9
    assert at < 10 * GB + 5
    for planner in _both(state):
        assert [planner.fits_now(Job("j", 0, 100.0, nodes=2, bb=b))
                for b in (at, math.nextafter(at, math.inf), 10 * GB + 5)] == [True, False, False]


def test_a_re_placeable_reservation_from_now_gives_back_no_pieces_at_its_end():
    """A re-placeable reservation may start now (1 node, 1 GB, for 10 s): its pieces are not
    fixed, so at its end (10) nothing comes back to the BB nodes; a job of both BB nodes' 20
    GB fits from 10 on, and the earliest is 10, on the fast path as on the reference."""
    state = ClusterState(0.0, Platform(6, 20 * GB, bb_nodes=(10 * GB,) * 2), ())
    big = Job("big", 0, 5.0, nodes=2, bb=20 * GB)
    for planner in _both(state):
        planner.reserve(Job("h", 0, 10.0, nodes=1, bb=GB), 0.0, replace=True)
        assert [planner.fits(big, t) for t in (9.5, 10.0, 20.0)] == [False, True, True]
        assert planner.earliest(big) == 10.0
        assert (planner._profile is None) == (not isinstance(planner, _Reference))


def _backfilled(planner_class):
    """Three BB nodes of 7 GB; running: 7/3 GB on node 1 until 20, 7/3 GB and 28/9 GB on
    node 2 until 10 and 20. The head (5 nodes, 14 GB) reserved re-placeably at 20, then three
    jobs backfilled now (4/3 GB for 15 s, 6/7 GB for 100 s, 0.1 GB for 5 s)."""
    third, two = 7 * GB * (1 / 3), (7 * GB - 7 * GB * (1 / 3)) * (2 / 3)
    running = (RunningJob(Job("r0", 0, 20.0, nodes=1, bb=third), 0.0, (0,), ((1, third),)),
               RunningJob(Job("r1", 0, 10.0, nodes=1, bb=third), 0.0, (1,), ((2, third),)),
               RunningJob(Job("r2", 0, 20.0, nodes=1, bb=two), 0.0, (2,), ((2, two),)))
    planner = planner_class.of(ClusterState(0.0, Platform(8, 21 * GB, bb_nodes=(7 * GB,) * 3),
                                            running))
    head = Job("head", 0, 50.0, nodes=5, bb=14 * GB)
    assert planner.earliest(head) == 20.0
    planner.reserve(head, 20.0, replace=True)
    for k, (w, b) in enumerate(((15.0, 1 / 3 * GB * 4), (100.0, 1 / 7 * GB * 6), (5.0, GB / 10))):
        assert planner.start(Job(f"j{k}", 0, w, nodes=1, bb=b)) is not None
    return planner


def test_after_backfilled_starts_the_largest_job_the_head_allows_is_the_references():
    """The largest BB of a 1-node job started now for 100 s that leaves the head's pieces
    placeable, found float by float on the reference, is admitted on the fast path, and the
    next float refused: the BB nodes' free space at the head's start, kept while jobs start,
    is the reference's to the last bit."""
    def fits(planner_class, b):
        return _backfilled(planner_class).fits_now(Job("x", 0, 100.0, nodes=1, bb=b))

    lo, hi = 0.0, 21 * GB
    assert fits(_Reference, lo) and not fits(_Reference, hi)
    while math.nextafter(lo, hi) < hi:
        mid = lo + (hi - lo) / 2
        mid = mid if lo < mid < hi else math.nextafter(lo, hi)
        lo, hi = (mid, hi) if fits(_Reference, mid) else (lo, mid)
    assert 3 * GB < lo < 4 * GB
    assert fits(Planner, lo) and not fits(Planner, hi)
    assert _backfilled(Planner)._profile is None  # (answered on the fast path)

"""The planner against the engine's ledger: a start the planner grants now is one the ledger
admits, on every BB placement (pool, named first fit, proximity) and with local SSDs; a job the
planner refuses now (with nothing reserved) the ledger refuses too; earliest starts, reserves
and snapshots agree with each other."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import ClusterState, Job, Platform, RunningJob, Start, dragonfly_proximity
from bbopt.errors import InvalidDecision
from bbopt.planner import OverbookedError, Planner, bb_placement
from bbopt.planner.bb import FirstFitBB, PooledBB, ProximityBB
from bbopt.simulation.ledger import Ledger, StartRefused

GB = 1e9
PLATFORMS = {
    "pool": Platform(8, 100 * GB),
    "named": Platform(8, 100 * GB, bb_nodes=(25 * GB,) * 4),
    "proximity": Platform(8, 100 * GB, bb_nodes=(25 * GB,) * 4,
                          bb_proximity=dragonfly_proximity(8, 2, 2)),
    "ssd": Platform(8, 100 * GB, node_ssd=(50 * GB,) * 4 + (100 * GB,) * 4),
}

_job = st.tuples(st.integers(1, 8), st.integers(0, 100), st.integers(1, 20),
                 st.sampled_from([0, 0, 50, 100]))


def _state(kind, running, now=5.0):
    """The state after the engine's ledger admitted ``running`` (those it admits), in order."""
    platform = PLATFORMS[kind]
    ledger = Ledger(platform)
    held = []
    for k, (n, b, w, ssd) in enumerate(running):
        job = Job(f"r{k}", 0.0, float(w) + now, nodes=n, bb=b * GB,
                  ssd=ssd * GB if kind == "ssd" else 0.0)
        try:
            nodes = ledger.admit(job, None, 0.0)
        except (InvalidDecision, StartRefused):
            continue
        held.append(RunningJob(job, 0.0, nodes, ledger.pieces_of(job)))
    return ClusterState(now, platform, tuple(held)), ledger


def _queue(kind, queue):
    return [Job(f"q{k}", 0.0, float(w), nodes=n, bb=b * GB,
                ssd=ssd * GB if kind == "ssd" else 0.0) for k, (n, b, w, ssd) in enumerate(queue)]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(PLATFORMS)), st.lists(_job, max_size=5),
       st.lists(_job, min_size=1, max_size=6))
def test_starts_now_are_exactly_the_ledgers(kind, running, queue):
    state, ledger = _state(kind, running)
    planner = Planner.of(state)
    for job in _queue(kind, queue):
        granted = planner.start(job)
        try:
            ledger.admit(job, None, state.time)
            admitted = True
        except (InvalidDecision, StartRefused):
            admitted = False
        assert admitted == (granted is not None), job
        assert granted is None or granted.job_id == job.id


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(sorted(PLATFORMS)), st.lists(_job, max_size=5),
       st.lists(_job, min_size=1, max_size=5))
def test_earliest_is_the_first_start_that_fits_and_reserve_takes_it(kind, running, queue):
    state, _ = _state(kind, running)
    planner = Planner.of(state)
    for job in _queue(kind, queue):
        if state.platform.why_never_fits(job) is not None:
            continue
        t = planner.earliest(job)
        assert t < math.inf
        assert planner.fits(job, t)
        for earlier in planner.profile.times:  # no earlier candidate fits
            if state.time <= earlier < t:
                assert not planner.fits(job, earlier), (job, earlier, t)
        if t > state.time:
            assert not planner.fits_now(job)
        snap = planner.snapshot()
        planner.reserve(job, t)
        assert job.id in planner.holds
        planner.rollback(snap)
        assert job.id not in planner.holds
        assert planner.earliest(job) == t  # the rollback gave everything back
        planner.reserve(job, t)


def test_a_reservation_holds_its_pieces_on_the_named_nodes():
    """Four BB nodes of 25 GB. A running job holds 20 GB on BB node 0 until 10; job a, two
    20 GB pieces reserved at 10, takes BB nodes 0 and 1 from 10 to 20. A job of two 10 GB
    pieces started now goes where the engine's first fit puts it, BB node 1 (node 0 has 5 GB):
    it fits if it ends by 10, not if it runs past 10 (a holds node 1 then); placed later, its
    pieces go on BB node 2, from 10 on."""
    platform = PLATFORMS["named"]
    r = RunningJob(Job("r", 0.0, 10.0, nodes=1, bb=20 * GB), 0.0, (0,), ((0, 20 * GB),))
    planner = Planner.of(ClusterState(0.0, platform, (r,)))
    planner.reserve(Job("a", 0.0, 10.0, nodes=2, bb=40 * GB), 10.0)
    assert planner.holds["a"][2] == (2, 40 * GB, 20 * GB, 20 * GB, 0.0, 0.0)
    assert planner.fits_now(Job("b", 0.0, 10.0, nodes=2, bb=20 * GB))
    long = Job("b", 0.0, 10.0 + 1e-6, nodes=2, bb=20 * GB)
    assert not planner.fits_now(long)
    assert planner.earliest(long) == 10.0
    planner.reserve(long, 10.0)
    assert planner.holds["b"][2] == (2, 20 * GB, 0.0, 0.0, 20 * GB, 0.0)
    with pytest.raises(OverbookedError):
        planner.reserve(Job("d", 0.0, 5.0, nodes=5), 12.0)


def test_the_bb_placement_is_chosen_once_from_the_platform():
    assert type(bb_placement(PLATFORMS["pool"])) is PooledBB
    assert type(bb_placement(PLATFORMS["ssd"])) is PooledBB
    assert type(bb_placement(PLATFORMS["named"])) is FirstFitBB
    assert type(bb_placement(PLATFORMS["proximity"])) is ProximityBB
    prox = bb_placement(PLATFORMS["proximity"])
    assert prox.chooses_nodes and prox.choose_nodes([0, 1, 2, 5, 6, 9], 2) == (5, 6)
    assert bb_placement(PLATFORMS["named"]).choose_nodes([0, 1, 2, 5, 6, 9], 2) is None


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(sorted(PLATFORMS)), st.lists(_job, max_size=5),
       st.lists(_job, min_size=1, max_size=6))
def test_take_bb_with_counted_nodes_and_pool_is_exactly_the_ledgers(kind, running, queue):
    """A policy that counts nodes and pooled bytes itself and takes BB with take_bb (fcfs,
    filler, the window and fair-share rules) starts exactly what the ledger admits, in order,
    on the nodes the placement chose (proximity) or the ledger's own."""
    state, ledger = _state(kind, running)
    planner = Planner.of(state)
    free_n, free_b = state.free()
    for job in _queue(kind, queue):
        if job.ssd > 0:
            continue  # (SSD nodes are the caller's to choose)
        counted = job.nodes <= free_n and job.bb <= free_b + state.platform.bb * 1e-9
        granted = counted and planner.take_bb(job)
        try:
            ledger.admit(job, planner.chosen.get(job.id), state.time)
            admitted = True
        except (InvalidDecision, StartRefused):
            admitted = False
        assert admitted == granted, job
        if granted:
            free_n -= job.nodes
            free_b -= job.bb
    assert (Planner.placing(state) is None) == (state.platform.bb_nodes is None)


def _shadow_case() -> Planner:
    """Six nodes, two BB nodes of 10 GB (20 GB pooled); four nodes busy until 10: a head of 4
    nodes and 12 GB (four pieces of 3 GB) can start at 10 at the earliest."""
    platform = Platform(6, 20 * GB, bb_nodes=(10 * GB, 10 * GB))
    running = (RunningJob(Job("r", 0, 10.0, nodes=4), 0.0, (0, 1, 2, 3)),)
    return Planner.of(ClusterState(0.0, platform, running))


HEAD = Job("head", 0, 50.0, nodes=4, bb=12 * GB)


def test_a_replaceable_reservation_chooses_its_pieces_again():
    """The head's pieces fixed first fit at 10 (three on BB node 0, one on node 1) leave 1 GB
    on node 0, so a late job whose 6 GB piece goes on node 0 now would not fit; re-placeable,
    the head moves to one piece on node 0 (4 GB left) and three on node 1, and the job starts.
    A second late job taking 2 GB more of node 0 leaves the head 2 GB there (no piece) and 10
    GB on node 1 (three pieces): four pieces do not fit, it is refused."""
    fixed = _shadow_case()
    assert fixed.earliest(HEAD) == 10.0
    fixed.reserve(HEAD, 10.0)
    late = Job("late", 0, 100.0, nodes=1, bb=6 * GB)
    assert not fixed.fits_now(late)
    planner = _shadow_case()
    planner.reserve(HEAD, 10.0, replace=True)
    assert planner.start(late) is not None
    assert not planner.fits_now(Job("late2", 0, 100.0, nodes=1, bb=2 * GB))
    # ending before the shadow time, it leaves the head untouched: it starts
    assert planner.fits_now(Job("short", 0, 10.0, nodes=1, bb=2 * GB))
    # (just after the shadow time it overlaps the head again)
    assert not planner.fits_now(Job("short", 0, 10.5, nodes=1, bb=2 * GB))


def test_a_replaceable_reservation_is_released_and_rolled_back():
    planner = _shadow_case()
    snap = planner.snapshot()
    planner.reserve(HEAD, 10.0, replace=True)
    late = Job("late", 0, 100.0, nodes=1, bb=6 * GB)
    assert planner.start(late) is not None
    planner.release(late)  # a start now undone: its node and pieces come back
    assert planner.free_nodes == [4, 5]
    assert planner.bb.free == [10 * GB, 10 * GB]
    planner.release(HEAD)
    assert not planner.floating
    assert planner.fits_now(Job("wide", 0, 100.0, nodes=2, bb=20 * GB))
    planner.reserve(HEAD, 10.0, replace=True)
    planner.rollback(snap)
    assert not planner.floating and not planner.holds


def test_list_schedule_places_each_job_at_its_earliest_start():
    planner = _shadow_case()
    got = planner.list_schedule([HEAD, Job("a", 0, 5.0, nodes=2, bb=20 * GB),
                                 Job("b", 0, 5.0, nodes=3)])
    assert [(j.id, s) for j, s in got] == [("head", 10.0), ("a", 0.0), ("b", 60.0)]


class _Profiled(Planner):
    """The planner on the profile of every dimension only (no fast path)."""

    __slots__ = ()
    fast_path = False


def test_a_replaceable_reservation_is_kept_placeable_on_the_profile_of_every_dimension():
    """The re-placeable head of :func:`test_a_replaceable_reservation_chooses_its_pieces_again`
    on the profile of every dimension: the same answers, each reservation checked whole."""
    planner = _shadow_case()
    planner.__class__ = _Profiled
    planner.reserve(HEAD, 10.0, replace=True)
    assert planner.start(Job("late", 0, 100.0, nodes=1, bb=6 * GB)) is not None
    assert planner._profile is not None
    assert not planner.fits_now(Job("late2", 0, 100.0, nodes=1, bb=2 * GB))
    assert planner.fits_now(Job("short", 0, 10.0, nodes=1, bb=2 * GB))
    assert not planner.fits_now(Job("short", 0, 10.5, nodes=1, bb=2 * GB))
    # a reservation the job could not overlap is no reason to refuse; one after it still is
    early = Job("early", 0, 20.0, nodes=1, bb=0.0)
    planner.reserve(early, 100.0, replace=True)  # [100, 120): after everything above
    assert list(planner.floating) == ["head", "early"]
    assert not planner.fits_now(Job("late2", 0, 100.0, nodes=1, bb=2 * GB))
    planner.release(early)
    planner.release(HEAD)
    other = Job("other", 0, 5.0, nodes=1, bb=1.0)
    planner.reserve(other, 200.0, replace=True)  # [200, 205), 1 B: before the head's check
    planner.reserve(HEAD, 10.0, replace=True)
    assert not planner.fits_now(Job("late2", 0, 100.0, nodes=1, bb=2 * GB))
    assert planner.fits_now(Job("short", 0, 10.0, nodes=1, bb=2 * GB))


def test_a_replaceable_reservation_of_one_byte_from_now_is_kept_placeable():
    """Two BB nodes of 0.75 B; a re-placeable reservation of 1 B on two nodes from now (two
    pieces of 0.5 B) leaves 0.5 B in the pool, but a start of 0.5 B that runs with it would
    leave room for one of its pieces only; one that starts when it ends fits."""
    platform = Platform(3, 1.5, bb_nodes=(0.75, 0.75))
    for cls in (Planner, _Profiled):
        planner = cls.of(ClusterState(0.0, platform, ()))
        planner.reserve(Job("tiny", 0, 10.0, nodes=2, bb=1.0), 0.0, replace=True)
        assert not planner.fits_now(Job("x", 0, 5.0, nodes=1, bb=0.5))
        assert planner.fits_now(Job("x", 0, 5.0, nodes=1, bb=0.25))
        assert planner.fits(Job("x", 0, 5.0, nodes=1, bb=0.5), 10.0)
        assert not planner.fits(Job("x", 0, 5.0, nodes=1, bb=0.5), 9.0)


def _case(*more, hold=None):
    """:func:`_shadow_case` on the profile of every dimension, ``more`` running jobs beside r
    (``(id, end, nodes, BB node, bytes)``), a fixed hold ``(job, start)``, then the head
    re-placeable at 10 (its four 3 GB pieces on the least free space of its interval)."""
    platform = Platform(6, 20 * GB, bb_nodes=(10 * GB, 10 * GB))
    running = [RunningJob(Job("r", 0, 10.0, nodes=4), 0.0, (0, 1, 2, 3))]
    for jid, end, node, b, size in more:
        running.append(RunningJob(Job(jid, 0, end, nodes=1, bb=size), 0.0, (node,),
                                  ((b, size),)))
    planner = _Profiled.of(ClusterState(0.0, platform, tuple(running)))
    if hold is not None:
        assert planner.hold(*hold)
    planner.reserve(HEAD, 10.0, replace=True)
    return planner


def test_a_replaceable_reservation_is_checked_on_the_least_free_space_of_its_interval():
    """The head holds [10, 60); a start now of 2 GB goes on BB node 0. Each case makes another
    segment of the head's interval the one where its pieces are tightest."""
    x = Job("x", 0, 100.0, nodes=1, bb=2 * GB)
    # BB node 1 has 4 GB until 30: with x, 8 and 4 GB hold three pieces, not four
    assert not _case(("r2", 30.0, 4, 1, 6 * GB)).fits_now(x)
    # a fixed 6 GB on BB node 0 from 30: 2 and 10 GB left there with x, three pieces
    fixed = (Job("f", 0, 50.0, nodes=1, bb=6 * GB), 30.0)
    assert not _case(hold=fixed).fits_now(x)
    # x gone at 30, where that hold starts: 8 then 4 GB on node 0, four pieces with node 1
    assert _case(hold=fixed).fits_now(Job("x", 0, 30.0, nodes=1, bb=2 * GB))
    # a hold from 60, when the head ends, is not in its interval
    after = (Job("f", 0, 30.0, nodes=1, bb=8 * GB), 60.0)
    assert _case(hold=after).fits_now(x)
    # a later hold from 30 on node 0 takes nothing from the stretch before 30, where BB node 0
    # is tightest (4 GB until r2 ends)
    planner = _case(("r2", 30.0, 4, 0, 6 * GB))
    assert planner.hold(Job("g", 0, 50.0, nodes=1, bb=6 * GB), 30.0)


# -- starts now over a pass, block by block: thresholds of the cheap tests ----------------------
TB = 1e12  # a pool whose fit tolerance is 1000 B
POOL = Platform(4, TB)


def _pool(*running):
    return Planner.of(ClusterState(0.0, POOL, tuple(running)))


def _ids(jobs):
    return [j.id for j in jobs]


def test_a_pass_starts_jobs_at_exactly_the_free_nodes_and_bb():
    busy = RunningJob(Job("r", 0, 10.0, nodes=3, bb=4e11), 0.0)  # 1 node and 600 GB free now
    one = [Job("a", 0, 5.0, nodes=2), Job("b", 0, 5.0, nodes=1, bb=6e11 + 1001.0),
           Job("c", 0, 5.0, nodes=1, bb=6e11 + 1000.0), Job("d", 0, 5.0, nodes=1)]
    assert _ids(_pool(busy).start_each(one)) == ["c"]
    assert _ids(_pool(busy).may_start_now(one)) == ["c", "d"]
    # no byte free: a job asking none still starts on the free node
    full = RunningJob(Job("r", 0, 10.0, nodes=3, bb=TB), 0.0)
    assert _ids(_pool(full).start_each([Job("e", 0, 5.0, nodes=1)])) == ["e"]
    assert _ids(_pool(full).may_start_now([Job("e", 0, 5.0, nodes=1),
                                           Job("f", 0, 5.0, nodes=1, bb=1001.0)])) == ["e"]
    # no node free: nothing, and an empty list
    none = RunningJob(Job("r", 0, 10.0, nodes=4), 0.0)
    assert _pool(none).start_each(one) == [] and _pool(none).may_start_now(one) == []
    # the nodes' tolerance is the nodes' own (4e-9), not the BB's 1000 B
    assert _pool(busy).may_start_now([Job("g", 0, 5.0, nodes=2)]) == []


def test_a_pass_over_blocks_skips_only_blocks_whose_least_job_cannot_start():
    busy = RunningJob(Job("r", 0, 10.0, nodes=2, bb=4e11), 0.0)  # 2 nodes and 600 GB free
    two = Job("two", 0, 5.0, nodes=2)
    bb = Job("bb", 0, 5.0, nodes=1, bb=6e11 + 1000.0)
    small = Job("small", 0, 5.0, nodes=1)
    for blocks, started in [
            ([((two,), (2, 0.0)), ((small,), (1, 0.0))], ["two"]),
            ([((bb,), (1, 6e11 + 1000.0)), ((small,), (1, 0.0))], ["bb", "small"]),
            ([((Job("x", 0, 5.0, nodes=3),), (3, 0.0)), ((bb,), (1, 6e11 + 1000.0))], ["bb"]),
            ([((Job("y", 0, 5.0, nodes=1, bb=6e11 + 1001.0),), (1, 6e11 + 1001.0)),
              ((small,), (1, 0.0))], ["small"]),
            ([((Job("x", 0, 5.0, nodes=3), small), (1, 0.0))], ["small"]),
            ([((two,), None), ((small,), None)], ["two"])]:
        assert _ids(_pool(busy).start_each_block(blocks)) == started, blocks


def test_a_pass_reads_what_is_free_now_after_each_start():
    # a reservation from 10 takes every node then: each start now must end by 10
    p = _pool()
    p.reserve(Job("h", 0, 10.0, nodes=4), 10.0)
    jobs = [Job("a", 0, 10.0, nodes=1), Job("b", 0, 10.0, nodes=1), Job("c", 0, 11.0, nodes=1)]
    assert _ids(p.start_each(jobs)) == ["a", "b"]
    q = _shadow_case()
    q.__class__ = _Profiled
    q.profile  # noqa: B018 (off the fast path from the start)
    q.reserve(Job("h", 0, 10.0, nodes=2), 10.0)
    jobs = [Job("a", 0, 10.0, nodes=1, bb=1.0), Job("b", 0, 10.0, nodes=1, bb=1.0)]
    assert _ids(q.start_each(jobs)) == ["a", "b"]


def test_starts_name_their_job_and_the_chosen_nodes():
    p = _pool()
    assert p.start(Job("a", 0, 5.0, nodes=2)) == Start("a", None)
    assert p.start(Job("b", 0, 5.0, nodes=1)) == Start("b", None)
    p.release(Job("a", 0, 5.0, nodes=2))  # its nodes come back; b's stay taken
    assert p.free_nodes == [0, 1, 3]
    assert p.hold(Job("c", 0, 5.0, nodes=1), 0.0) and "c" in p.started
    assert not p.hold(Job("d", 0, 5.0, nodes=4), 3.0)
    assert not p.hold(Job("d", 0, 5.0, nodes=4), 0.0)
    assert p.fits(Job("d", 0, 5.0, nodes=1), 0.0) and not p.fits(Job("d", 0, 5.0, nodes=3), 0.0)
    prox = Platform(8, 100 * GB, bb_nodes=(25 * GB,) * 4,
                    bb_proximity=dragonfly_proximity(8, 2, 2))
    q = Planner.of(ClusterState(0.0, prox, ()))
    assert q.start(Job("a", 0, 5.0, nodes=2, bb=10 * GB)) == Start("a", (0, 1))


def test_take_bb_on_a_pool_named_and_proximity_nodes():
    assert _pool().take_bb(Job("a", 0, 5.0, nodes=1, bb=2 * TB))  # a pool: the caller counts
    named = Planner.of(ClusterState(0.0, PLATFORMS["named"], ()))
    assert not named.bb_fits(Job("a", 0, 5.0, nodes=1, bb=26 * GB))  # no BB node holds it
    assert not named.take_bb(Job("a", 0, 5.0, nodes=1, bb=26 * GB))
    assert named.bb_fits(Job("a", 0, 5.0, nodes=1, bb=25 * GB))
    assert named.take_bb(Job("a", 0, 5.0, nodes=1, bb=25 * GB)) and named.chosen == {}
    assert named.bb.free == [0.0, 25 * GB, 25 * GB, 25 * GB]
    prox = Planner.of(ClusterState(0.0, PLATFORMS["proximity"], ()))
    assert prox.take_bb(Job("a", 0, 5.0, nodes=2, bb=10 * GB))
    assert prox.take_bb(Job("b", 0, 5.0, nodes=2, bb=10 * GB))
    assert prox.chosen == {"a": (0, 1), "b": (2, 3)} and prox.free_nodes == [4, 5, 6, 7]


def test_bb_taken_now_is_given_back_whole():
    # a start of the decision taken back: its pieces and compute nodes free again, the other
    # job's kept, and the next start placed as if the first had never been taken
    prox = Planner.of(ClusterState(0.0, PLATFORMS["proximity"], ()))
    a, b = Job("a", 0, 5.0, nodes=2, bb=10 * GB), Job("b", 0, 5.0, nodes=2, bb=10 * GB)
    assert prox.take_bb(a) and prox.take_bb(b)
    held = list(prox.bb.free)
    prox.give_back_bb(a)
    assert prox.chosen == {"b": (2, 3)} and prox.free_nodes == [0, 1, 4, 5, 6, 7]
    assert prox.bb.pieces_of(a) == () and prox.bb.pieces_of(b) != ()
    assert sum(prox.bb.free) == sum(held) + 10 * GB
    assert prox.take_bb(Job("c", 0, 5.0, nodes=2, bb=10 * GB)) and prox.chosen["c"] == (0, 1)
    named = Planner.of(ClusterState(0.0, PLATFORMS["named"], ()))
    whole = Job("w", 0, 5.0, nodes=1, bb=25 * GB)
    assert named.take_bb(whole) and not named.bb_fits(Job("x", 0, 5.0, nodes=4, bb=100 * GB))
    named.give_back_bb(whole)
    assert named.bb.free == [25 * GB] * 4
    assert named.bb_fits(Job("x", 0, 5.0, nodes=4, bb=100 * GB))
    pool = _pool()
    assert pool.take_bb(Job("p", 0, 5.0, nodes=1, bb=TB))
    pool.give_back_bb(Job("p", 0, 5.0, nodes=1, bb=TB))  # a pool: the caller counts bytes
    assert pool.holds == {} and pool.free_nodes == [0, 1, 2, 3]


def test_a_rollback_restores_every_part_of_the_planner():
    p = _pool(RunningJob(Job("r", 0, 10.0, nodes=2), 0.0))
    snap = p.snapshot()
    p.start(Job("a", 0, 5.0, nodes=1))
    p.reserve(Job("h", 0, 5.0, nodes=4), 10.0)
    p.rollback(snap)
    assert (p.holds, p.floating, p.started, p.named, p.free_nodes) == ({}, {}, {}, {}, [2, 3])
    assert p.profile.times == [0.0, 10.0] and p.profile.free[0] == [2.0, TB]
    assert p.start(Job("b", 0, 5.0, nodes=2)) == Start("b", None)
    assert p.started == {"b": (2, 3)}


def test_the_earliest_start_is_searched_up_to_its_limit_inclusive():
    p = _pool(RunningJob(Job("r", 0, 10.0, nodes=3), 0.0))
    wide = Job("w", 0, 5.0, nodes=2)
    assert p.earliest(wide) == 10.0
    assert p.earliest(wide, limit=10.0) == 10.0
    assert p.earliest(wide, limit=9.0) == math.inf


def test_the_earliest_start_asks_no_byte_of_a_bb_node_for_a_job_without_bb():
    # BB node 0 is full until 10, BB node 1 until 20; nodes are free at 10
    platform = Platform(4, 20.0, bb_nodes=(10.0, 10.0))
    running = (RunningJob(Job("r1", 0, 10.0, nodes=1, bb=10.0), 0.0, (0,), ((0, 10.0),)),
               RunningJob(Job("r2", 0, 20.0, nodes=1, bb=10.0), 0.0, (1,), ((1, 10.0),)),
               RunningJob(Job("r3", 0, 10.0, nodes=2), 0.0, (2, 3)))
    for cls in (Planner, _Profiled):
        assert cls.of(ClusterState(0.0, platform, running)).earliest(
            Job("j", 0, 5.0, nodes=3)) == 10.0


def test_a_reservation_on_too_few_free_nodes_says_so():
    platform = PLATFORMS["proximity"]
    p = Planner.of(ClusterState(0.0, platform, (RunningJob(Job("r", 0, 10.0, nodes=4), 0.0,
                                                           (0, 1, 2, 3)),)))
    with pytest.raises(OverbookedError, match=r"^6 compute nodes are not free at 5.0$"):
        p.reserve(Job("big", 0.0, 5.0, nodes=6), 5.0, replace=True)


def test_a_later_start_with_local_ssd_gets_nodes_that_hold_it():
    # one node of eight has local SSD: a job of two nodes asking 1 B of it never fits, even
    # after the same question for a job of two nodes without SSD
    platform = Platform(8, 100 * GB, bb_nodes=(25 * GB,) * 4,
                        bb_proximity=dragonfly_proximity(8, 2, 2),
                        node_ssd=(0.0,) * 7 + (50 * GB,))
    p = Planner.of(ClusterState(0.0, platform, ()))
    assert p.fits(Job("a", 0, 5.0, nodes=2), 5.0)
    assert not p.fits(Job("b", 0, 5.0, nodes=2, ssd=1.0), 5.0)
    assert p.fits(Job("c", 0, 5.0, nodes=1, ssd=1.0), 5.0)
    assert p.start(Job("d", 0, 5.0, nodes=1, ssd=1.0)) == Start("d", (7,))


def test_a_rollback_after_a_start_keeps_that_start_s_nodes_taken():
    p = _pool()
    p.start(Job("a", 0, 5.0, nodes=2))
    snap = p.snapshot()
    p.start(Job("b", 0, 5.0, nodes=1))
    p.rollback(snap)
    assert p.free_nodes == [2, 3]


def test_a_later_hold_places_its_pieces_on_the_least_free_space_of_its_interval():
    """On the profile of every dimension: a hold of 6 GB on one node from 20 to 40 goes on BB
    node 0 unless BB node 0 has less than 6 GB somewhere in [20, 40)."""
    platform = Platform(6, 20 * GB, bb_nodes=(10 * GB, 10 * GB))
    r = RunningJob(Job("r", 0, 10.0, nodes=4), 0.0, (0, 1, 2, 3))

    def pieces_of_l(*running, fixed_at=None, at=20.0):
        p = _Profiled.of(ClusterState(0.0, platform, (r, *running)))
        if fixed_at is not None:  # 6 GB on BB node 0 from fixed_at
            assert p.hold(Job("f", 0, 50.0, nodes=1, bb=6 * GB), fixed_at)
            assert p.holds["f"][2][2:] == (6 * GB, 0.0)
        assert p.hold(Job("l", 0, 20.0, nodes=1, bb=6 * GB), at)
        return p.holds["l"][2][2:]

    assert pieces_of_l() == (6 * GB, 0.0)
    assert pieces_of_l(fixed_at=30.0) == (0.0, 6 * GB)  # node 0 short from 30 on
    assert pieces_of_l(fixed_at=40.0) == (6 * GB, 0.0)  # from 40, when l ends
    # from 5, inside the first segment, where a running job holds 8 GB of node 0 until 10
    r3 = RunningJob(Job("r3", 0, 10.0, nodes=1, bb=8 * GB), 0.0, (4,), ((0, 8 * GB),))
    assert pieces_of_l(r3, at=5.0) == (0.0, 6 * GB)


def test_a_hand_built_state_s_running_bb_is_placed_again_on_the_bb_nodes():
    # a running job of 8 B (or 1 B) whose pieces the state does not name holds them on a BB
    # node all the same (first fit: BB node 0), so two pieces of half the rest do not fit
    for cap, held, job_bb in ((10.0, 8.0, 12.0), (1.0, 1.0, 2.0)):
        platform = Platform(4, 2 * cap, bb_nodes=(cap, cap))
        r = RunningJob(Job("r", 0, 10.0, nodes=1, bb=held), 0.0, (0,))
        p = Planner.of(ClusterState(0.0, platform, (r,)))
        assert p.pieces == {"r": ((0, held),)}
        assert not p.fits_now(Job("j", 0, 5.0, nodes=2, bb=job_bb))


def test_a_later_hold_reads_every_segment_of_its_interval_the_third_one_tightest():
    """Breakpoints at 5, 10 (two running jobs end), 20 and 30 (20 GB of BB node 0 held on [20,
    30)): a hold of one 10 GB piece on [5, 25) spans three segments, BB node 0 has 25 GB free
    on the first two and 5 GB on the third, so the piece goes on BB node 1; on [5, 20) (the
    first two only) it goes on BB node 0."""
    platform = Platform(8, 100 * GB, bb_nodes=(25 * GB,) * 4)
    running = (RunningJob(Job("r1", 0, 5.0, nodes=1), 0.0, (0,), ()),
               RunningJob(Job("r2", 0, 10.0, nodes=1), 0.0, (1,), ()))
    for walltime, piece_on in ((20.0, 1), (15.0, 0)):
        p = Planner.of(ClusterState(0.0, platform, running))
        p.reserve(Job("a", 0, 10.0, nodes=1, bb=20 * GB), 20.0)
        assert p.profile.times == [0.0, 5.0, 10.0, 20.0, 30.0]
        assert p.hold(Job("j", 0, walltime, nodes=1, bb=10 * GB), 5.0)
        bb_nodes = [0.0] * 4
        bb_nodes[piece_on] = 10 * GB
        assert p.holds["j"] == (5.0, 5.0 + walltime, (1, 10 * GB, *bb_nodes))

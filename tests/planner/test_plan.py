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
    """Two BB nodes of 0.5 B; a re-placeable reservation of 1 B on two nodes from now (two
    pieces of 0.5 B, one per BB node) leaves no room for a start of 0.25 B that runs with it,
    and leaves room for one that starts when it ends."""
    platform = Platform(3, 1.0, bb_nodes=(0.5, 0.5))
    for cls in (Planner, _Profiled):
        planner = cls.of(ClusterState(0.0, platform, ()))
        planner.reserve(Job("tiny", 0, 10.0, nodes=2, bb=1.0), 0.0, replace=True)
        assert not planner.fits_now(Job("x", 0, 5.0, nodes=1, bb=0.25))
        assert planner.fits_now(Job("x", 0, 5.0, nodes=1, bb=0.0))
        assert planner.fits(Job("x", 0, 5.0, nodes=1, bb=0.25), 10.0)
        assert not planner.fits(Job("x", 0, 5.0, nodes=1, bb=0.25), 9.0)


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

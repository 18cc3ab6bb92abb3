"""Compute node ids over time in the planner, for a BB placement that chooses a job's nodes (the
authors' proximity placement, Kopanski & Rzadca, Euro-Par 2021, Sections 3.2 and 4.1): the
ids free at a later time, reservations that name their nodes, starts now that avoid the nodes
of a reservation they would still run over, and EASY on proximity through the planner against
a direct transcription of the authors' backfilling (their ``backfill`` with and without future
BB reservations)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import decide
from bbopt.core import ClusterState, Job, Platform, RunningJob, dragonfly_proximity
from bbopt.errors import InvalidDecision
from bbopt.planner import OverbookedError, Planner
from bbopt.planner.pieces import bb_node_tolerance, contiguous_nodes, proximity_pieces
from bbopt.simulation.ledger import Ledger, StartRefused

GB = 1e9
# Eight nodes in four chassis of two (one 10 GB BB node each), two chassis per group.
PROX = Platform(8, 40 * GB, bb_nodes=(10 * GB,) * 4, bb_proximity=dragonfly_proximity(8, 2, 2))


def _at_zero(running=((0, 1, 2, 3), 10.0), more=()) -> ClusterState:
    """Nodes 0-3 busy until 10 (and ``more``: ``(nodes, end)`` pairs), nothing else."""
    jobs = []
    for k, (nodes, end) in enumerate((running, *more)):
        jobs.append(RunningJob(Job(f"r{k}", 0.0, end, nodes=len(nodes)), 0.0, nodes, ()))
    return ClusterState(0.0, PROX, tuple(jobs))


def _planner(running=((0, 1, 2, 3), 10.0), more=()) -> Planner:
    return Planner.of(_at_zero(running, more))


def test_free_ids_at_a_later_time_include_what_ended_by_then():
    planner = _planner(more=[((6, 7), 20.0)])
    assert planner.free_ids(0.0, 5.0) == [4, 5]
    assert planner.free_ids(9.5, 12.0) == [4, 5]  # (just before the end: still busy)
    assert planner.free_ids(10.0, 12.0) == [0, 1, 2, 3, 4, 5]  # (at the end: free)
    assert planner.free_ids(10.5, 12.0) == [0, 1, 2, 3, 4, 5]
    assert planner.free_ids(20.0, 30.0) == list(range(8))
    started = planner.start(Job("s", 0.0, 15.0, nodes=1))
    assert started.nodes == (4,)  # (the shortest run that holds it: 4-5, its first node)
    assert planner.free_ids(14.0, 16.0) == [0, 1, 2, 3, 5]
    assert planner.free_ids(15.0, 16.0) == [0, 1, 2, 3, 4, 5]


def test_a_head_reservation_names_its_nodes_and_a_late_start_avoids_them():
    """The head (6 nodes) can start at 10 on nodes 0-5 (one run of eight, its first six): nodes
    4 and 5, free now, are the head's from 10 on. A job still running at 10 gets 6-7 instead of
    4-5 (its own choice among the free ones); a job that ends at 10 exactly may take 4-5."""
    planner = _planner()
    head = Job("head", 0.0, 50.0, nodes=6)
    assert planner.earliest(head) == 10.0
    planner.reserve(head, 10.0, replace=True)
    assert planner.named["head"] == (10.0, 60.0, (0, 1, 2, 3, 4, 5))
    assert planner.free_ids(0.0, 10.0) == [4, 5, 6, 7]
    assert planner.free_ids(0.0, 10.5) == [6, 7]
    short = planner.start(Job("short", 0.0, 10.0, nodes=2))
    assert short.nodes == (4, 5)
    late = planner.start(Job("late", 0.0, 10.5, nodes=2))
    assert late.nodes == (6, 7)
    assert planner.chosen == {"short": (4, 5), "late": (6, 7)}


def test_a_late_start_that_only_the_head_nodes_could_hold_waits():
    """Nodes 4-5 free now, all eight at 10, the head's 0-5 from then: a late job of two nodes
    fits the count at 10 (8 - 6 = 2, nodes 6-7 then) but now only on the head's nodes, so it
    waits (where counting nodes alone, as first fit does, starts it); one ending by 10 starts."""
    state = _at_zero(more=[((6, 7), 10.0)])
    head = Job("head", 0.0, 50.0, nodes=6)
    late = Job("late", 0.0, 100.0, nodes=2)
    counted = Planner.of(state, first_fit=True)
    counted.reserve(head, counted.earliest(head), replace=True)
    assert counted.fits_now(late)
    planner = Planner.of(state)
    assert planner.earliest(head) == 10.0
    planner.reserve(head, 10.0, replace=True)
    assert planner.named["head"][2] == (0, 1, 2, 3, 4, 5)
    assert not planner.fits_now(late)
    assert not planner.fits_now(Job("late1", 0.0, 10.5, nodes=1))
    assert planner.start(Job("early", 0.0, 10.0, nodes=2)).nodes == (4, 5)


def test_the_head_stays_placeable_on_its_own_nodes():
    """Nodes 5-7 free now, all eight at 10. The head (4 nodes, 32 GB: four pieces of 8 GB) is
    reserved at 10 on nodes 0-3, one piece on each 10 GB BB node. A late job of two 2 GB pieces
    (nodes 5 and 6: BB nodes 2 and 3) leaves exactly 8 GB on both: it starts. Then a late 1 GB
    piece (node 7: BB node 3) would leave 7 GB there and is refused; the same job ending by 10,
    or without BB, starts."""
    planner = _planner(running=((0, 1), 10.0), more=[((2, 3, 4), 10.0)])
    head = Job("head", 0.0, 50.0, nodes=4, bb=32 * GB)
    assert planner.earliest(head) == 10.0
    planner.reserve(head, 10.0, replace=True)
    assert planner.named["head"][2] == (0, 1, 2, 3)
    first = Job("a", 0.0, 100.0, nodes=2, bb=4 * GB)
    assert planner.start(first).nodes == (5, 6)
    assert planner.bb.pieces_of(first) == ((2, 2 * GB), (3, 2 * GB))
    assert not planner.fits_now(Job("b", 0.0, 100.0, nodes=1, bb=1 * GB))
    assert planner.fits_now(Job("b", 0.0, 10.0, nodes=1, bb=1 * GB))  # (gone by 10)
    assert planner.fits_now(Job("b", 0.0, 100.0, nodes=1))


def test_a_fixed_later_reservation_holds_its_pieces_by_proximity():
    """Everything busy until 10; a job held from 10 on nodes 0-5, then one of two nodes
    reserved at 10 gets nodes 6-7 (chassis 3): both its 4 GB pieces on BB node 3, not on BB
    node 0 where first fit would put them."""
    planner = _planner(running=((0, 1, 2, 3, 4, 5, 6, 7), 10.0))
    assert planner.hold(Job("x", 0.0, 30.0, nodes=6), 10.0)
    assert planner.named["x"][2] == (0, 1, 2, 3, 4, 5)
    job = Job("j", 0.0, 20.0, nodes=2, bb=8 * GB)
    assert planner.earliest(job) == 10.0
    planner.reserve(job, 10.0)
    assert planner.named["j"][2] == (6, 7)
    i = planner.profile.times.index(10.0)
    assert list(planner.profile.free[i][2:]) == [10 * GB, 10 * GB, 10 * GB, 2 * GB]


def test_a_reservation_where_too_few_nodes_are_free_is_refused():
    planner = _planner()
    with pytest.raises(OverbookedError):
        planner.reserve(Job("big", 0.0, 5.0, nodes=6), 5.0, replace=True)


def test_snapshot_and_release_keep_the_named_nodes():
    planner = _planner()
    head = Job("head", 0.0, 50.0, nodes=6)
    snap = planner.snapshot()
    planner.reserve(head, 10.0, replace=True)
    planner.release(head)
    assert planner.named == {} and planner.free_ids(0.0, 100.0) == [4, 5, 6, 7]
    planner.reserve(head, 10.0, replace=True)
    planner.rollback(snap)
    assert planner.named == {} and planner.fits_now(Job("late", 0.0, 100.0, nodes=2))


# ------------------------------------------------------------------ the authors' EASY
def _authors_easy(state: ClusterState, reserve_bb: bool, sjf: bool):
    """EASY backfilling by proximity as the authors' scheduler does it, written out on node ids
    and BB node bytes: the starts ``(id, nodes)`` and the head's shadow time (``None``)."""
    platform, now = state.platform, state.time
    prox, tol = platform.bb_proximity, bb_node_tolerance(platform.bb_nodes)
    space = list(platform.bb_nodes)
    busy = set()
    for r in state.running:
        busy.update(r.allocation)
        for b, size in r.bb_pieces:
            space[b] -= size
    free = [x for x in range(platform.nodes) if x not in busy]

    def place(job, pool, bb_free):
        nodes = contiguous_nodes(pool, job.nodes)
        if nodes is None:
            return None
        pieces = proximity_pieces(bb_free, nodes, job.bb, tol, prox) if job.bb > 0 else ()
        return None if pieces is None else (nodes, pieces)

    def take(job, nodes, pieces):
        free[:] = [x for x in free if x not in nodes]
        for b, size in pieces:
            space[b] -= size
        starts.append((job.id, nodes))
        ends.append((now + job.walltime, nodes, pieces))

    starts: list = []
    ends = [(r.start + r.job.walltime, r.allocation, r.bb_pieces) for r in state.running]
    queue = list(state.queue)
    i = 0
    while i < len(queue) and (got := place(queue[i], free, space)) is not None:
        take(queue[i], *got)
        i += 1
    if i == len(queue):
        return starts, None
    head = queue[i]
    at, at_space = list(free), list(space)
    for t in sorted({now, *(e for e, _, _ in ends if e > now)}):
        at = sorted({*free, *(x for e, nodes, _ in ends if e <= t for x in nodes)})
        at_space = list(space)
        for e, _, pieces in ends:
            if e <= t:
                for b, size in pieces:
                    at_space[b] += size
        if len(at) >= head.nodes:
            reserved = contiguous_nodes(at, head.nodes)
            if not reserve_bb or head.bb <= 0 or proximity_pieces(
                    at_space, reserved, head.bb, tol, prox) is not None:
                shadow = t
                break
    rest = queue[i + 1:]
    if sjf:
        rest.sort(key=lambda j: j.walltime)
    for job in rest:
        late = now + job.walltime > shadow
        got = place(job, [x for x in free if not late or x not in reserved], space)
        if got is None:
            continue
        if late and reserve_bb and head.bb > 0 and got[1]:
            trial = list(at_space)
            for b, size in got[1]:
                trial[b] -= size
            if proximity_pieces(trial, reserved, head.bb, tol, prox) is None:
                continue
            at_space = trial
        take(job, *got)
    return starts, shadow


# Sixteen nodes in four chassis of four (one 20 GB BB node each), two chassis per group.
WIDE = Platform(16, 80 * GB, bb_nodes=(20 * GB,) * 4, bb_proximity=dragonfly_proximity(16, 4, 2))
_running = st.tuples(st.integers(1, 6), st.sampled_from([0, 0, 4, 8, 12, 24]),
                     st.integers(1, 30))
_waiting = st.tuples(st.integers(1, 8), st.sampled_from([0, 0, 2, 4, 6, 12, 24, 40]),
                     st.integers(1, 40))


def _proximity_state(running, queue, now: float = 5.0) -> ClusterState:
    """The jobs the engine's ledger admits from ``running`` (started at 0, in order), and the
    waiting jobs that can ever be placed."""
    ledger = Ledger(WIDE)
    held = []
    for k, (n, b, w) in enumerate(running):
        job = Job(f"r{k}", 0.0, float(w) + now, nodes=n, bb=b * GB)
        try:
            nodes = ledger.admit(job, None, 0.0)
        except (InvalidDecision, StartRefused):
            continue
        held.append(RunningJob(job, 0.0, nodes, ledger.pieces_of(job)))
    jobs = [Job(f"q{k}", 0.0, float(w), nodes=n, bb=b * GB) for k, (n, b, w) in enumerate(queue)]
    return ClusterState(now, WIDE, tuple(held),
                        tuple(j for j in jobs if WIDE.why_never_fits(j) is None))


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([("fcfs-bb", True, False), ("sjf-bb", True, True),
                        ("fcfs-easy", False, False)]),
       st.lists(_running, max_size=8), st.lists(_waiting, min_size=1, max_size=12))
def test_easy_on_proximity_is_the_authors_backfilling(policy, running, queue):
    name, reserve_bb, sjf = policy
    state = _proximity_state(running, queue)
    if not state.queue:
        return
    decision = decide(state, name)
    starts, shadow = _authors_easy(state, reserve_bb, sjf)
    assert [(s.job_id, s.nodes) for s in decision.start] == starts
    got = [r.start for r in decision.reservations]
    assert got == ([] if shadow is None else [shadow])
    assert shadow is None or shadow < math.inf

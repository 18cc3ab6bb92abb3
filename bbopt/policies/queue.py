"""Queue-based policies: FCFS, filler, EASY backfilling with and without burst-buffer
reservations (conservative backfilling, the same family, is in :mod:`bbopt.policies.conservative`).

Kopanski & Rzadca, Euro-Par 2021, Section 3.2, Algorithm 1 and the policy list of Section 4.2:

- ``fcfs``: start jobs in queue order; stop at the first that does not fit (nodes or BB).
- ``filler``: the backfill procedure without reservations: every job that fits now starts, in
  queue order.
- ``fcfs-easy``: EASY backfilling whose head-of-queue reservation holds processors only (the
  standard algorithm, "without line 14"); backfilled jobs still need free nodes and BB now.
  The head job can then act as a barrier (the paper's Section 3.1 example, job 3).
- ``fcfs-bb``: EASY with the head job's processors *and* burst buffer reserved together.
- ``sjf-bb``: as ``fcfs-bb``, backfill candidates taken by walltime, shortest first (the head
  stays the oldest job, as in the authors' code).

All of them plan with walltimes, never with the (unknown) runtimes.

Where the burst buffer is placed is the planner's placement strategy
(:mod:`bbopt.planner.bb`: one pool, BB nodes first fit, or the authors' proximity placement),
never a branch here. When it has pieces to place, every policy here starts a job only when the
planner places them now as the engine will (in the order of the decision's starts, naming the
compute nodes when the strategy chooses them), so no start is refused; EASY's shadow time and
backfill test are asked of the planner too (:meth:`EasyBackfilling._decide_named`): the head is
held from the first time its nodes and pieces can be placed (the BB nodes as they will be then,
and with a strategy that chooses compute nodes, the head's named nodes then), and a backfilled
job still running then must avoid the nodes it holds and leave its pieces placeable.

Length: the EASY variants share their reservation and backfill passes.
"""

from __future__ import annotations

import dataclasses
import math
import time as _time
from collections.abc import Callable, Iterable, Sequence
from itertools import islice
from operator import attrgetter, itemgetter

from bbopt.core import (
    ClusterState,
    Decision,
    Job,
    Reservation,
    RunningJobs,
    SolveStats,
    Start,
    Status,
    slack,
)
from bbopt.planner import Planner, Release, first_fit_time
from bbopt.policies.promises import Promise
from bbopt.policies.registry import register
from bbopt.queue_view import QueueView


def _fcfs_pass(state: ClusterState, queue: tuple[Job, ...],
               place_bb: Callable[[Job], bool] | None = None):
    """Start jobs in order while they fit now. Returns (started jobs, index of the first that
    does not fit, free nodes, free bb). ``place_bb(job)``: places and takes the job's BB where
    the engine will (:meth:`bbopt.planner.Planner.take_bb`), false when it cannot."""
    free_n, free_b = state.free()
    tol = slack(state.platform.bb)
    started: list[Job] = []
    i = 0
    for job in queue:
        if job.nodes <= free_n and job.bb <= free_b + tol and (
                place_bb is None or place_bb(job)):
            started.append(job)
            free_n -= job.nodes
            free_b -= job.bb
            i += 1
        else:
            break
    return started, i, free_n, free_b


_FEASIBLE = Status.FEASIBLE  # (an enum member looked up once: this runs at every decision)


def _decision(started: list[Job], reservations=(), t0: float = 0.0, memory=None,
              nodes: dict[str, tuple[int, ...]] | None = None,
              pieces: dict[str, tuple[tuple[int, float], ...]] | None = None) -> Decision:
    # A queue rule solves no optimisation model: its answer is feasible, with no optimality claim.
    # (Every field given, in order, to ``of_fields``: the cheapest construction on this hot path.)
    # ``nodes``: the compute nodes of the starts whose nodes the BB placement chose; ``pieces``:
    # the BB pieces of the starts that name them.
    if pieces:
        return Decision.of_fields(
            tuple([_start(j.id, None, pieces[j.id]) for j in started]),
            tuple(reservations), (), (), _rule_stats(t0), memory)
    if nodes:
        return Decision.of_fields(tuple([_start(j.id, nodes.get(j.id), None) for j in started]),
                                  tuple(reservations), (), (), _rule_stats(t0), memory)
    return Decision.of_fields(
        tuple([_start(j.id, None, None) for j in started]) if started else (),
        tuple(reservations), (), (), _rule_stats(t0), memory,
    )


def _rule_stats(t0: float) -> SolveStats:
    """The stats of a rule's decision begun at ``t0`` (``perf_counter``)."""
    return SolveStats.of_fields("rule", _FEASIBLE, None, None, None, _time.perf_counter() - t0,
                                None, False)


_start = Start.of_fields


@register("fcfs")
class FCFS:
    """First come, first served without backfilling: stop at the first job that does not fit."""

    io_aware = False
    idle_unless_fits = True  # (the engine skips decisions where no waiting job fits)

    def __init__(self, name: str = "fcfs") -> None:
        self.name = name

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        planner = Planner.placing(state)
        started, _, _, _ = _fcfs_pass(state, state.queue, planner and planner.take_bb)
        return _decision(started, t0=t0, nodes=planner and planner.chosen)


@register("filler")
class Filler:
    """Backfilling without reservations: every job that fits now starts, in queue order."""

    io_aware = False
    idle_unless_fits = True  # (the engine skips decisions where no waiting job fits)

    def __init__(self, name: str = "filler") -> None:
        self.name = name

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        free_n, free_b = state.free()
        tol = slack(state.platform.bb)
        planner = Planner.placing(state)
        started = []
        for job in state.queue:
            if job.nodes <= free_n and job.bb <= free_b + tol and (
                    planner is None or planner.take_bb(job)):
                started.append(job)
                free_n -= job.nodes
                free_b -= job.bb
                if free_n == 0:
                    break
        return _decision(started, t0=t0, nodes=planner and planner.chosen)


@register("fcfs-easy",
          about="EASY backfilling, head reservation of processors only (BB can block)",
          reserve_bb=False, order="fcfs")
@register("fcfs-bb",
          about="EASY backfilling with the head job's processors and BB reserved together",
          reserve_bb=True, order="fcfs")
@register("sjf-bb",
          about="as fcfs-bb, backfill candidates by walltime, shortest first",
          reserve_bb=True, order="sjf")
class EasyBackfilling:
    """EASY backfilling: the head job gets a reservation; others may start if they do not delay it.

    ``reserve_bb``: reserve the head's burst buffer together with its processors (``fcfs-bb``,
    ``sjf-bb``) or processors only (``fcfs-easy``). ``order``: backfill candidates in queue order
    (``fcfs``) or by walltime, shortest first (``sjf``).
    """

    io_aware = False
    idle_unless_fits = True  # (the engine skips decisions where no waiting job fits)

    def __init__(self, name: str = "fcfs-bb", reserve_bb: bool = True, order: str = "fcfs"):
        if order not in ("fcfs", "sjf"):
            raise ValueError(f"order must be 'fcfs' or 'sjf', got {order!r}")
        self.name = name
        self.reserve_bb = reserve_bb
        self.order = order
        # (a reservation of processors only can be delayed when BB is short: fcfs-easy)
        self.promise = Promise.HEAD_NEVER_DELAYED if reserve_bb else Promise.NONE

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        planner = Planner.placing(state)
        if planner is not None:
            return self._decide_named(state, planner, t0)
        queue = state.queue
        started, i, free_n, free_b = _fcfs_pass(state, queue)
        if i == len(queue):
            return _decision(started, t0=t0)
        head = queue[i]
        tol = slack(state.platform.bb)
        if type(state.running) is RunningJobs:  # (head_reservation's own test, one call less)
            shadow, extra_n, extra_b = _pooled_shadow(
                state.time, state.running, started, free_n, free_b, head.nodes,
                head.bb if self.reserve_bb else 0.0, tol)
        else:
            shadow, extra_n, extra_b = head_reservation(state, started, head, free_n, free_b,
                                                        reserve_bb=self.reserve_bb)
        # (a long queue in blocks, which the pass skips whole when no job of theirs can pass)
        blocks = queue.blocks_from(i + 1) if type(queue) is QueueView else None
        rest = islice(queue, i + 1, None)  # (no copy of the queue per decision)
        if self.order == "sjf" and blocks is not None:
            started += shortest_first(state.time, blocks, shadow, (free_n, free_b),
                                      (extra_n, extra_b), self.reserve_bb, tol)
            return _decision(started, (Reservation.of_fields(head.id, shadow),), t0=t0)
        if self.order == "sjf":
            # Only jobs that fit now can be backfilled (what is free only shrinks during the
            # pass): sorting just those gives them in the order the sorted queue would.
            fit_b = free_b + tol
            rest = sorted([j for j in rest if j.nodes <= free_n and j.bb <= fit_b],
                          key=_walltime) if free_n > 0 else ()
        if blocks is not None:
            started += backfill_blocks(state.time, blocks, shadow, (free_n, free_b),
                                       (extra_n, extra_b), self.reserve_bb, tol)
        else:
            started += backfill(state, rest, shadow, (free_n, free_b), (extra_n, extra_b),
                                reserve_bb=self.reserve_bb)
        return _decision(started, (Reservation.of_fields(head.id, shadow),), t0=t0)

    def _decide_named(self, state: ClusterState, planner: Planner, t0: float) -> Decision:
        """:meth:`decide` when the BB placement has pieces to place (named BB nodes): every
        start and the head's reservation asked of the ``planner`` -- starts placed now as the
        engine places them (with the compute nodes the placement chose), the head held from its
        shadow time (with ``reserve_bb`` its BB too, re-placeable: a backfilled job still
        running then must leave its pieces placeable there)."""
        queue = state.queue
        started: list[Job] = []
        i = 0
        for job in queue:
            if planner.start(job) is None:
                break
            started.append(job)
            i += 1
        if i == len(queue):
            return _decision(started, t0=t0, nodes=planner.chosen)
        head = queue[i]
        shadow = _shadow(planner, head, self.reserve_bb, not_now=True)
        if self.order == "sjf":
            started += planner.start_each(sorted(
                planner.may_start_now(islice(queue, i + 1, None)), key=_walltime))
        elif type(queue) is QueueView:  # (a long queue's blocks, skipped whole when none fits)
            started += planner.start_each_block(queue.blocks_from(i + 1))
        else:
            started += planner.start_each(islice(queue, i + 1, None))
        return _decision(started, [Reservation(head.id, shadow)], t0=t0, nodes=planner.chosen)


def _shadow(planner: Planner, head: Job, reserve_bb: bool, not_now: bool = False) -> float:
    """EASY's shadow time for ``head`` on the ``planner`` (its processors, and with
    ``reserve_bb`` its BB, whose pieces stay re-placeable), held there from then on.
    ``not_now``: the planner has just refused to start ``head`` now."""
    probe = head if reserve_bb else dataclasses.replace(head, bb=0.0)
    shadow = planner.earliest(probe, not_now=not_now and reserve_bb)
    if shadow < math.inf:
        planner.reserve(probe, shadow, replace=True)
    return shadow


def head_reservation(state: ClusterState, started: list[Job], head: Job, free_n: float,
                     free_b: float, *, reserve_bb: bool = True) -> tuple[float, float, float]:
    """EASY's reservation for ``head``: the shadow time and the nodes and BB left over there.

    Running jobs and the ``started`` ones release their resources at their expected ends;
    ``free_n``, ``free_b`` are what is free now once ``started`` run. With ``reserve_bb`` false
    only processors are reserved (the standard algorithm; Kopanski & Rzadca, Algorithm 1 without
    line 14).
    """
    now = state.time
    running = state.running
    need_n, need_b = head.nodes, (head.bb if reserve_bb else 0.0)
    tol = slack(state.platform.bb)
    if type(running) is RunningJobs:
        return _pooled_shadow(now, running, started, free_n, free_b, need_n, need_b, tol)
    ends = [Release(r.start + r.job.walltime, r.job.nodes, r.job.bb) for r in running]
    ends.extend(Release(now + j.walltime, j.nodes, j.bb) for j in started)
    ends.sort(key=_release_time)
    free = [free_n, free_b]

    def fits() -> bool:
        return free[0] >= need_n and free[1] + tol >= need_b

    def give(r: Release) -> None:
        free[0] += r.nodes
        free[1] += r.bb

    shadow = first_fit_time(now, ends, fits, give)
    if shadow == math.inf:  # cannot happen for jobs that fit the platform
        return math.inf, 0, 0.0
    return shadow, free[0] - need_n, free[1] - need_b


def _pooled_shadow(now: float, running: RunningJobs, started: list[Job], free_n: float,
                   free_b: float, need_n: float, need_b: float,
                   tol: float) -> tuple[float, float, float]:
    """:func:`~bbopt.planner.first_fit_time` written out for pooled nodes and BB over the
    engine's running jobs, which come sorted by expected end: they are merged on the fly with
    the (few) jobs started now, those of one instant given together (running ones first, as a
    stable sort of both would), and the scan stops at the shadow time -- no record per running
    job, no sort, no closure calls. Returns what :func:`head_reservation` returns."""
    if free_n >= need_n and free_b + tol >= need_b:
        return now, free_n - need_n, free_b - need_b
    inf = math.inf
    if not started:  # (most decisions: the running jobs alone, grouped by expected end)
        last = inf
        for r in running:
            job = r.job
            rt = r.start + job.walltime
            if rt != last and last != inf and free_n >= need_n and free_b + tol >= need_b:
                return (last if last > now else now), free_n - need_n, free_b - need_b
            free_n += job.nodes
            free_b += job.bb
            last = rt
        if last != inf and free_n >= need_n and free_b + tol >= need_b:
            return (last if last > now else now), free_n - need_n, free_b - need_b
        return inf, 0, 0.0  # cannot happen for jobs that fit the platform
    mine = sorted([(now + j.walltime, j.nodes, j.bb) for j in started], key=_first) \
        if started else []
    m, i = len(mine), 0
    mt = mine[0][0] if m else inf
    it = iter(running)
    r = next(it, None)
    rt = r.start + r.job.walltime if r is not None else inf
    while True:
        t = rt if rt <= mt else mt
        if t == inf:  # cannot happen for jobs that fit the platform
            return inf, 0, 0.0
        while rt == t:
            job = r.job
            free_n += job.nodes
            free_b += job.bb
            r = next(it, None)
            rt = r.start + r.job.walltime if r is not None else inf
        while mt == t:
            _, n, b = mine[i]
            free_n += n
            free_b += b
            i += 1
            mt = mine[i][0] if i < m else inf
        if free_n >= need_n and free_b + tol >= need_b:
            return (t if t > now else now), free_n - need_n, free_b - need_b


_first = itemgetter(0)
_release_time = attrgetter("time")
_walltime = attrgetter("walltime")


def backfill_blocks(now: float, blocks: Iterable[tuple[Sequence[Job], tuple[int, float, float]]],
                    shadow: float, free: tuple[float, float], extra: tuple[float, float],
                    reserve_bb: bool, tol: float) -> list[Job]:
    """:func:`backfill` over the jobs of ``blocks`` (``(jobs, (least nodes, least BB, least
    walltime))``, a long queue's :meth:`~bbopt.queue_view.QueueView.blocks_from`) on pooled nodes
    and BB: a block whose least job fails the test (compared as the pass compares a job's:
    ``now + walltime`` is at least the least one's) holds no job that passes, and is skipped
    whole. A deliberately inlined copy of the pass (checked against it by
    ``tests/simulation/test_queue_blocks.py``)."""
    free_n, free_b = free
    extra_n, extra_b = extra
    out: list[Job] = []
    for jobs, (n, b, w) in blocks:
        if free_n <= 0:
            break
        if n > free_n or b > free_b + tol or (
                now + w > shadow and (n > extra_n or (reserve_bb and b > extra_b + tol))):
            continue
        for job in jobs:
            n, b = job.nodes, job.bb
            if n > free_n or b > free_b + tol:
                continue
            if now + job.walltime > shadow:  # still running then: within what the head leaves
                if n > extra_n or (reserve_bb and b > extra_b + tol):
                    continue
                extra_n -= n
                if reserve_bb:
                    extra_b -= b
            out.append(job)
            free_n -= n
            free_b -= b
            if free_n <= 0:
                break
    return out


def shortest_first(now: float, blocks: Iterable[tuple[Sequence[Job], tuple[int, float, float]]],
                   shadow: float, free: tuple[float, float], extra: tuple[float, float],
                   reserve_bb: bool, tol: float) -> list[Job]:
    """What :func:`backfill` starts from the jobs of ``blocks`` (as it takes them) sorted by
    walltime, ties in queue order (sjf-bb), without sorting: the shortest job that passes its
    test with what is still free, then the next, until none does. Resources only shrink during
    the pass, so a job that failed the test never passes later: the same jobs in the same
    order. A deliberately inlined copy of the pass's test (checked against the sorted pass by
    ``tests/simulation/test_queue_blocks.py``); a block is skipped when its least job fails it or
    is no shorter than the best found."""
    blocks = list(blocks)
    free_n, free_b = free
    extra_n, extra_b = extra
    out: list[Job] = []
    taken: set[int] = set()
    inf = math.inf
    while free_n > 0:
        best, best_w = None, inf
        fit_b, extra_fit_b = free_b + tol, (extra_b + tol if reserve_bb else inf)
        for jobs, (n, b, w) in blocks:
            if w >= best_w or n > free_n or b > fit_b or (
                    now + w > shadow and (n > extra_n or b > extra_fit_b)):
                continue
            for job in jobs:
                w = job.walltime
                if w >= best_w:
                    continue
                n, b = job.nodes, job.bb
                if n > free_n or b > fit_b or (
                        now + w > shadow and (n > extra_n or b > extra_fit_b)):
                    continue
                if id(job) not in taken:
                    best, best_w = job, w
        if best is None:
            break
        if now + best_w > shadow:
            extra_n -= best.nodes
            if reserve_bb:
                extra_b -= best.bb
        out.append(best)
        taken.add(id(best))
        free_n -= best.nodes
        free_b -= best.bb
    return out


def backfill(state: ClusterState, candidates, shadow: float, free: tuple[float, float],
             extra: tuple[float, float], *, reserve_bb: bool = True,
             accept: Callable[[Job], bool] | None = None) -> list[Job]:
    """EASY's backfill pass: the ``candidates`` (in the order given) that start now.

    A candidate needs the nodes and BB free now; if it would still run at the ``shadow`` time
    it may only use the ``extra`` resources the head's reservation leaves there (BB counted only
    with ``reserve_bb``). ``accept(job)`` can veto a candidate that passes these checks (e.g. no
    nodes with enough local SSD); a vetoed job takes nothing. (On named BB nodes EASY asks
    the planner instead: :meth:`EasyBackfilling._decide_named`.)
    """
    now = state.time
    tol = slack(state.platform.bb)
    free_n, free_b = free
    extra_n, extra_b = extra
    out: list[Job] = []
    for job in candidates:
        if free_n <= 0:
            break
        n, b = job.nodes, job.bb
        if n > free_n or b > free_b + tol:
            continue
        late = now + job.walltime > shadow
        # A job still running at the shadow time may only use what the head leaves over there.
        if late and (n > extra_n or (reserve_bb and b > extra_b + tol)):
            continue
        if accept is not None and not accept(job):
            continue
        if late:
            extra_n -= n
            if reserve_bb:
                extra_b -= b
        out.append(job)
        free_n -= n
        free_b -= b
    return out


def keeps_reservation(state: ClusterState, slots: Sequence[Job], mask: Sequence[bool],
                      nodes: dict[str, tuple[int, ...]] | None = None) -> list[bool]:
    """``mask`` (jobs that fit now) narrowed to the starts that keep EASY's reservation for the
    oldest waiting job, nodes and BB (``fcfs-bb``'s, Kopanski & Rzadca, Algorithm 1): that job
    itself, and the jobs EASY's backfill pass would let start now, one at a time. Whatever the
    agent picks, the oldest job then starts no later than EASY plans at this instant, so no job
    starves (as RLBackfilling, Lamichhane et al. 2023, lets the agent choose the backfilled
    jobs only). For learned schedulers (:mod:`bbopt.gym`): the starts they may pick. When the
    BB placement chooses compute nodes (proximity), ``nodes`` (if given) receives those each
    allowed job but the oldest gets, as EASY's backfill pass gives them: clear of the nodes
    the oldest job's reservation holds while it would still run."""
    queue = state.queue
    if not queue or not any(mask):
        return list(mask)
    head = queue[0]
    planner = Planner.placing(state)
    if planner is not None:
        _shadow(planner, head, True)
        out = []
        for job, ok in zip(slots, mask, strict=False):
            if ok and job is not head:
                placed = planner.placement_now(job)
                ok = placed is not None
                if ok and nodes is not None and planner.bb.chooses_nodes:
                    nodes[job.id] = placed[0]
            out.append(ok)
        return out
    free_n, free_b = state.free()
    shadow, extra_n, extra_b = head_reservation(state, [], head, free_n, free_b)
    return [ok and (job is head or bool(backfill(state, (job,), shadow, (free_n, free_b),
                                                 (extra_n, extra_b))))
            for job, ok in zip(slots, mask, strict=False)]

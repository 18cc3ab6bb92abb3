"""Reservations on named burst-buffer nodes for the queue policies of
:mod:`bbopt.policies.queue` (Kopanski & Rzadca, Euro-Par 2021, Sections 3.2 and 4.1: the
authors' EASY reserves the head job's processors and burst buffer on the platform's 12 BB nodes,
not on a pool).

- :func:`named_head_reservation`: EASY's shadow time when the head's per-node pieces must be
  placeable (first fit, :func:`bbopt.models.bb_nodes.first_fit_pieces`) on the BB nodes as they
  will be then: running jobs give their pieces back at their expected ends.
- :class:`NamedProfile`: conservative backfilling's availability profile with one dimension per
  BB node; a reservation holds the job's first-fit pieces on the least free space of each BB
  node over its interval.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from operator import attrgetter

from bbopt.core import ClusterState, Job, slack
from bbopt.models.bb_nodes import (
    BBNodeSpace,
    Pieces,
    bb_node_space,
    bb_node_tolerance,
    first_fit_pieces,
    running_pieces,
)
from bbopt.planner import Profile, Release, first_fit_time

_release_time = attrgetter("time")


def named_head_reservation(state: ClusterState, started: list[Job], head: Job, free_n: float,
                           free_b: float, space: BBNodeSpace, held: dict[str, Pieces], *,
                           reserve_bb: bool = True
                           ) -> tuple[float, float, float, BBNodeSpace | None]:
    """:func:`head_reservation` on named BB nodes: also the BB nodes as they will be at the
    shadow time (``space``, what is free now once ``started`` run, plus the pieces ``held`` by
    every job that ends by then), where the head's pieces must be placeable. Without
    ``reserve_bb`` only processors are reserved and no BB-node space is returned."""
    now = state.time
    need_n, need_b = head.nodes, (head.bb if reserve_bb else 0.0)
    tol = slack(state.platform.bb)
    ends = [Release(r.start + r.job.walltime, r.job.nodes, r.job.bb, held.get(r.job.id, ()))
            for r in state.running]
    ends.extend(Release(now + j.walltime, j.nodes, j.bb, held.get(j.id, ())) for j in started)
    ends.sort(key=_release_time)
    free = [free_n, free_b]
    at = space.copy() if reserve_bb else None

    def fits() -> bool:
        return (free[0] >= need_n and free[1] + tol >= need_b
                and (at is None or at.fits(head)))

    def give(r: Release) -> None:
        free[0] += r.nodes
        free[1] += r.bb
        if at is not None:
            at.give(r.allocation)

    shadow = first_fit_time(now, ends, fits, give)
    if shadow == math.inf:  # cannot happen for jobs that fit the platform
        return math.inf, 0, 0.0, at
    return shadow, free[0] - need_n, free[1] - need_b, at


class NamedProfile:
    """Conservative backfilling's profile on named BB nodes: dimensions (nodes, BB pool, one
    per BB node). A job reserved from a later ``start`` holds its first-fit pieces on the least
    free space of each BB node over its interval. A job held at the decision's time takes the
    pieces the engine will give it (first fit on the BB nodes as they are now, in the order of
    the decision's starts) and is held now only if the profile admits those pieces."""

    def __init__(self, state: ClusterState) -> None:
        caps = state.platform.bb_nodes
        held = running_pieces(state)
        k = len(caps)
        self.now = state.time
        self.k = k
        self.tol = bb_node_tolerance(caps)
        self.bb_tol = slack(state.platform.bb)
        self.space = bb_node_space(state, held)  # the BB nodes now, for starts now
        releases = []
        for r in state.running:
            releases.append((r.start + r.job.walltime,
                             self._demand(r.job, held.get(r.job.id, ()))))
        self.profile = Profile(state.time, (state.platform.nodes, state.platform.bb, *caps),
                               releases)
        self.holding: dict[str, tuple[float, float, tuple[float, ...], Pieces | None]] = {}

    def _demand(self, job: Job, pieces: Pieces) -> tuple[float, ...]:
        vec = [0.0] * self.k
        for b, size in pieces:
            vec[b] += size
        return (job.nodes, job.bb, *vec)

    def _pieces_over(self, job: Job, start: float) -> Pieces | None:
        """The job's first-fit pieces on the least free space of each BB node over
        ``[start, start + walltime)``, if its nodes and pool BB fit there too."""
        p = self.profile
        times, rows = p.times, p.free
        i = max(bisect_right(times, start) - 1, 0)
        end = start + job.walltime
        low = list(rows[i])
        i += 1
        while i < len(times) and times[i] < end:
            low = [a if a < c else c for a, c in zip(low, rows[i], strict=True)]
            i += 1
        if low[0] < job.nodes or low[1] + self.bb_tol < job.bb:
            return None
        return first_fit_pieces(low[2:], job.nodes, job.bb, self.tol)

    def hold(self, job: Job, start: float) -> bool:
        """Reserve ``job`` from ``start`` if it fits there; true if it does."""
        now_pieces = None
        if start <= self.now:
            start = self.now
            pieces = self.space.place(job.nodes, job.bb) if job.bb > 0 else ()
            if pieces is None:
                return False
            demand = self._demand(job, pieces)
            if not self.profile.fits(start, job.walltime, demand):
                return False
            self.space.take_pieces(pieces)
            now_pieces = pieces
        else:
            pieces = self._pieces_over(job, start)
            if pieces is None:
                return False
            demand = self._demand(job, pieces)
        self.profile.reserve(start, start + job.walltime, demand)
        self.holding[job.id] = (start, start + job.walltime, demand, now_pieces)
        return True

    def drop(self, job: Job) -> None:
        start, end, demand, now_pieces = self.holding.pop(job.id)
        self.profile.release(start, end, demand)
        if now_pieces is not None:
            self.space.give(now_pieces)

    def earliest(self, job: Job, limit: float = math.inf) -> float:
        """The earliest start (now, or a later profile breakpoint) where ``job`` can be held,
        not searched beyond ``limit``; ``inf`` if none."""
        now = self.now
        pieces = self.space.place(job.nodes, job.bb) if job.bb > 0 else ()
        if pieces is not None and self.profile.fits(now, job.walltime,
                                                    self._demand(job, pieces)):
            return now
        p = self.profile
        first = p.earliest_fit(now, job.walltime, (job.nodes, job.bb) + (0.0,) * self.k)
        for t in list(p.times):
            if t <= now or t < first:
                continue
            if t > limit:
                break
            if self._pieces_over(job, t) is not None:
                return t
        return math.inf


    def conservative(self, order: list[Job], previous: dict[str, float], depth: float,
                     queue) -> dict[str, float]:
        """Conservative backfilling's plan on this profile (``ConservativeBackfilling.
        _decide_named``; its compiled twin is :func:`bbopt.planner.named.
        conservative_named`): the kept reservations (``previous``) held again in ``order``,
        compressed earliest first (never later than before), then the other jobs of
        ``queue`` in queue order, up to ``depth`` reservations (beyond: a start now if
        possible). The starts by job id, in the order they were planned."""
        now = self.now
        kept = [job for job in order if self.hold(job, max(previous[job.id], now))]
        planned: dict[str, float] = {}
        for job in kept:  # compression, earliest first: never later than before
            old = max(previous[job.id], now)
            self.drop(job)
            start = self.earliest(job, limit=old)
            if start == math.inf or not self.hold(job, start):
                start = old
                self.hold(job, old)  # the slot it held a moment ago
            planned[job.id] = start
        for job in queue:
            if job.id in planned:
                continue
            if len(planned) < depth:
                start = self.earliest(job)
                if start < math.inf and self.hold(job, start):
                    planned[job.id] = start
            elif self.hold(job, now):
                planned[job.id] = now
        return planned


def plan_on_named_nodes(state: ClusterState, jobs: list[Job]) -> list[tuple[Job, float]]:
    """List scheduling of ``jobs`` in this order on named BB nodes: each at the earliest time
    at which its nodes, its pool BB and its first-fit pieces on the BB nodes are free for its
    whole walltime (:class:`NamedProfile`), reserving them. Returns ``(job, start)`` in
    ``jobs``' order (a job that cannot be placed is left out). The jobs starting now are held
    in this order, the order in which the engine must place them."""
    profile = NamedProfile(state)
    out = []
    for job in jobs:
        start = profile.earliest(job)
        if start < math.inf and profile.hold(job, start):
            out.append((job, start))
    return out

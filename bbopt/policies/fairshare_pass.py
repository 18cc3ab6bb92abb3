"""One pass of a fair-share decision over the submitted queue (Zvi & Oren, OMFS, Algorithm 1
lines 16-31; the capping, partition and classic fair-share baselines use it too): the nodes and
BB free for starts, and EASY backfilling of the jobs offered one at a time in priority order.

A start of the pass can be taken back (:meth:`Easy.take_back`): Algorithm 1's runner counts a
job it has just started among the running jobs, so a job behind it in the queue, within its
entity's entitlement, may evict it (lines 34-39) when its quantum allows; taking it back before
it runs wastes nothing.
"""

from __future__ import annotations

import math

from bbopt.core import ClusterState, Job, Reservation
from bbopt.planner import Planner
from bbopt.policies.queue import head_reservation


class Free:
    """Nodes and BB free for starts in the current decision; with a ``planner``, a job's BB
    must also be placeable where the engine places it (named BB nodes), and starts take it."""

    __slots__ = ("nodes", "bb", "tol", "planner")

    def __init__(self, nodes: float, bb: float, tol: float,
                 planner: Planner | None = None) -> None:
        self.nodes, self.bb, self.tol, self.planner = nodes, bb, tol, planner

    def fits(self, job: Job) -> bool:
        return job.nodes <= self.nodes and job.bb <= self.bb + self.tol and (
            self.planner is None or self.planner.bb_fits(job))

    def take(self, job: Job) -> None:
        self.nodes -= job.nodes
        self.bb -= job.bb
        if self.planner is not None:
            self.planner.take_bb(job)

    def give_back(self, job: Job) -> None:
        """Undo :meth:`take` of ``job``: its nodes and BB (its pieces) free again."""
        self.nodes += job.nodes
        self.bb += job.bb
        if self.planner is not None:
            self.planner.give_back_bb(job)


class Easy:
    """EASY backfilling over jobs offered one at a time in priority order: the first job that
    does not fit gets a reservation (its shadow time), later ones start only if they fit now and
    do not delay it (Kopanski & Rzadca, Algorithm 1, processors and BB reserved together)."""

    def __init__(self, state: ClusterState, free: Free) -> None:
        self.state, self.free = state, free
        self.started: list[Job] = []
        self.head: Job | None = None
        self.shadow = math.inf
        self.extra_n, self.extra_b = 0.0, 0.0
        self.late: set[str] = set()

    def offer(self, job: Job, force: bool = False) -> bool:
        """Start ``job`` if EASY allows it (``force``: if it merely fits); else, if no job holds
        the reservation yet, give it the reservation. True if started."""
        free = self.free
        if free.fits(job):
            if self.head is None or force:
                return self._start(job, late=self.head is not None
                                   and self.state.time + job.walltime > self.shadow)
            late = self.state.time + job.walltime > self.shadow
            if not late or (job.nodes <= self.extra_n and job.bb <= self.extra_b + free.tol):
                return self._start(job, late)
            return False
        if self.head is None:
            self.head = job
            self.shadow, self.extra_n, self.extra_b = head_reservation(
                self.state, self.started, job, free.nodes, free.bb)
        return False

    def _start(self, job: Job, late: bool) -> bool:
        self.started.append(job)
        self.free.take(job)
        if late:
            self.late.add(job.id)
            self.extra_n -= job.nodes
            self.extra_b -= job.bb
        return True

    def take_back(self, job: Job) -> None:
        """Undo the start of ``job`` (it waits again): what it took is free, and what a late
        start took of the spare resources at the reservation is spare again. The reservation
        stays where it is: with the job gone it can only start as planned or earlier."""
        self.started.remove(job)
        self.free.give_back(job)
        if job.id in self.late:
            self.late.discard(job.id)
            self.extra_n += job.nodes
            self.extra_b += job.bb

    def reservations(self) -> list[Reservation]:
        if self.head is None or not math.isfinite(self.shadow):
            return []
        return [Reservation(self.head.id, self.shadow)]

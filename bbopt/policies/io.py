"""I/O-aware FCFS and EASY backfilling over the platform's bandwidth tree.

Herbein et al., HPDC 2016, Section 3.4: I/O is one more constraint when deciding whether a job can
start. A job starts only on nodes where its per-node bandwidth (``Job.bandwidth``) is available on
every vertex from each node up to the PFS, counting what its other nodes take (Herbein's greedy
placement, :meth:`bbopt.topology.IOTree.select`); if it cannot get enough such nodes nothing is
allocated. The policies never start a job that would over-allocate any link.

- ``io-fcfs``: jobs in queue order; stop at the first that does not fit (nodes, bandwidth, BB).
- ``io-easy``: EASY backfilling whose head-of-queue reservation holds nodes, bandwidth on every
  vertex and burst buffer: the shadow time is the first expected end (start + walltime) after
  which the head fits the tree; a later job may start now if it fits now and either ends before
  the shadow time or leaves the head able to fit at the shadow time.

The I/O-ignorant baselines are ``fcfs`` and ``fcfs-easy`` (:mod:`bbopt.policies.queue`). Every
start names its nodes, so the engine (and :class:`bbopt.topology.BandwidthLedger`) can check the
bandwidth charged on each vertex. The platform needs an :class:`~bbopt.topology.IOTree` as
``Platform.topology``.
"""

from __future__ import annotations

import math
import time as _time

from bbopt.core import ClusterState, Decision, Reservation, SolveStats, Start, slack
from bbopt.planner import Release, first_fit_time
from bbopt.policies.registry import register
from bbopt.policies.window_common import tree_of, without_tree
from bbopt.topology import AllocState


@register("io-fcfs",
          about="FCFS with link bandwidth as a resource: no link over-allocated (Herbein)",
          backfill=False)
@register("io-easy",
          about="EASY with nodes, BB and link bandwidth reserved for the head (Herbein)",
          backfill=True)
class IOAwareQueue:
    """FCFS or EASY backfilling where link bandwidth is a constraint like nodes (Herbein)."""

    #: The engine checks the bandwidth this policy allocates on every link.
    io_aware = True
    unsuited = staticmethod(without_tree)

    def __init__(self, name: str = "io-easy", backfill: bool = True) -> None:
        self.name = name
        self.backfill = backfill

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        tree = tree_of(state, self.name)
        now = state.time
        platform = state.platform
        alloc = AllocState.of_running(tree, state.running)
        free_b = state.free()[1]
        tol = slack(platform.bb)
        queue = state.queue
        started: list[Start] = []
        placed: list[Release] = []  # the jobs started in this decision
        i = 0
        for job in queue:
            if job.bb > free_b + tol:
                break
            nodes = alloc.select(job.nodes, job.bandwidth)
            if nodes is None:
                break
            alloc.take(nodes, job.bandwidth)
            free_b -= job.bb
            started.append(Start(job.id, tuple(int(x) for x in nodes)))
            placed.append(Release(now + job.walltime, job.nodes, job.bb, nodes, job.bandwidth))
            i += 1
        reservations: list[Reservation] = []
        if self.backfill and i < len(queue):
            res, more = easy_backfill(state, alloc, free_b, placed, queue[i], queue[i + 1:],
                                      tol)
            reservations.extend(res)
            started.extend(more)
        return Decision(start=tuple(started), reservations=tuple(reservations),
                        stats=SolveStats(backend="greedy", wall_time=_time.perf_counter() - t0))


def easy_backfill(state: ClusterState, alloc: AllocState, free_b: float, placed: list, head,
                  candidates, tol: float
                  ) -> tuple[list[Reservation], list[Start]]:
    """EASY backfilling on the I/O tree (Herbein, Section 3.4): ``head`` gets a reservation of
    nodes, bandwidth on every vertex and BB at its shadow time; each of ``candidates`` (in
    order) starts now if it fits now and either ends before the shadow time or leaves the head
    able to fit there. ``alloc``/``free_b``: what is free now (updated in place); ``placed``:
    what the jobs started earlier in this decision hold until their expected ends."""
    now = state.time
    started: list[Start] = []
    reservations: list[Reservation] = []
    shadow, at_shadow, b_shadow = _shadow(state, alloc, free_b, placed, head, tol)
    if math.isfinite(shadow):
        reservations.append(Reservation(head.id, shadow))
    for job in candidates:
        if alloc.n_free == 0:
            break
        if job.nodes > alloc.n_free or job.bb > free_b + tol:
            continue
        nodes = alloc.select(job.nodes, job.bandwidth)
        if nodes is None:
            continue
        if now + job.walltime > shadow:
            # Still running at the shadow time: the head must fit beside it there.
            if job.bb > b_shadow - head.bb + tol:
                continue
            trial = at_shadow.copy()
            trial.take(nodes, job.bandwidth)
            if not trial.fits(head.nodes, head.bandwidth):
                continue
            at_shadow = trial
            b_shadow -= job.bb
        alloc.take(nodes, job.bandwidth)
        free_b -= job.bb
        started.append(Start(job.id, tuple(int(x) for x in nodes)))
    return reservations, started


def _shadow(state: ClusterState, alloc: AllocState, free_b: float, placed: list[Release],
            head, tol: float) -> tuple[float, AllocState, float]:
    """The head's earliest start under expected ends, and the free resources then."""
    now = state.time
    at = alloc.copy()
    free = [free_b]
    ends = [Release(max(r.start + r.job.walltime, now), r.job.nodes, r.job.bb, r.allocation,
                    r.job.bandwidth) for r in state.running]
    ends.extend(placed)
    ends.sort(key=lambda e: e.time)

    def fits() -> bool:
        return head.bb <= free[0] + tol and at.fits(head.nodes, head.bandwidth)

    def give(r: Release) -> None:
        at.give(r.allocation, r.bandwidth)
        free[0] += r.bb

    return first_fit_time(now, ends, fits, give), at, free[0]

"""Conservative backfilling on named BB nodes: the reservations planned again at every decision,
compiled or in Python (Kopanski & Rzadca, Euro-Par 2021, Sections 3.2 and 4.1: a job's
processors and its per-node BB pieces on the BB nodes, reserved for its whole walltime).

:class:`bbopt.policies.conservative.ConservativeBackfilling` on a platform whose BB nodes are
named asks :meth:`NamedArrays.starts` (the compiled kernel
:func:`bbopt.planner.jit.named_conservative.conservative_running`, fed with arrays kept
between decisions)
and, without the kernels, :func:`replan` (the planner's Python path, the kernel's reference):
the same starts, bit for bit.
"""

from __future__ import annotations

import math

import numpy as np

from bbopt.core import ClusterState, Job, RunningJobs, slack
from bbopt.planner import Planner, bb_placement
from bbopt.planner.bb import profile_slacks
from bbopt.planner.named import conservative_kernels
from bbopt.planner.profile import OverbookedError


def _end(r) -> float:
    return r.start + r.job.walltime


class NamedArrays:
    """What the compiled decision keeps between decisions: the platform with its capacities
    and slacks as arrays, what each running job holds (by id), and the running jobs last seen
    with their arrays."""

    __slots__ = ("_consts", "_running")

    def __init__(self) -> None:
        self._consts: tuple | None = None
        self._running: tuple | None = None

    def starts(self, state: ClusterState, queue: tuple[Job, ...],
               previous: dict[str, float], depth: float) -> list[float] | None:
        """The start of each job of ``queue`` (``nan``: none) on named BB nodes,
        computed by the compiled kernel from arrays
        (:func:`bbopt.planner.jit.named_conservative.conservative_running`): what each running
        job holds
        (nodes, pool BB, bytes per BB node) is worked out once per job and kept while it runs,
        the arrays of the running jobs while the state hands the same running jobs. ``None``
        without the kernels, or when some running job's pieces are not known, or when one is at or
        past its walltime (then Python decides: the kernel takes a running job's nodes and BB
        to be free from its expected end on, which the engine and :func:`bbopt.decide` never
        let pass, :func:`bbopt.core.planning_state`, but a caller of ``decide`` may)."""
        loaded = conservative_kernels()
        if loaded is None:
            return None
        platform = state.platform
        consts = self._consts
        if consts is None or consts[0] is not platform:
            bb = bb_placement(platform)
            caps = (float(platform.nodes), float(platform.bb), *bb.capacity)
            consts = self._consts = (
                platform, np.array(caps), np.array(profile_slacks(platform)),
                slack(platform.bb), bb.tol, {})
            self._running = None
        _, caps, tol, bb_tol, ftol, rows = consts
        running = state.running
        if running:  # (a job at or past its walltime: see the docstring)
            first = running[0] if type(running) is RunningJobs else min(running, key=_end)
            if first.start + first.job.walltime <= state.time:
                return None
        kept = self._running
        if kept is not None and kept[0] is running:
            ends, held = kept[1], kept[2]
        else:
            ends = []
            held = []
            for r in running:
                job = r.job
                row = rows.get(job.id)
                if row is None:
                    pieces = r.bb_pieces
                    if pieces is None:
                        if job.bb > 0:
                            return None
                        pieces = ()
                    vec = [0.0] * (len(caps) - 2)
                    for b, size in pieces:
                        vec[b] += size
                    row = rows[job.id] = (job.nodes, job.bb, *vec)
                ends.append(r.start + job.walltime)
                held.append(row)
            if len(rows) > 2 * len(running) + 256:  # (forget the jobs that ended)
                ids = {r.job.id for r in running}
                for jid in [jid for jid in rows if jid not in ids]:
                    del rows[jid]
            ends = np.array(ends, dtype=np.float64)
            held = np.array(held, dtype=np.float64).reshape(len(ends), len(caps))
            self._running = (running, ends, held)
        count = len(queue)
        get = previous.get
        nan = math.nan
        table = np.array([(j.nodes, j.bb, j.walltime, get(j.id, nan)) for j in queue],
                         dtype=np.float64).reshape(count, 4).T
        jobs = table[:3].copy()
        prev = table[3].copy()
        starts = np.empty(count)
        try:
            loaded.conservative_running(
                float(state.time), caps, tol, bb_tol, ftol, ends, held, jobs, prev,
                float(depth), starts, np.empty(count, dtype=np.int64))
        except ValueError as exc:
            raise OverbookedError(str(exc)) from None
        return starts.tolist()


def replan(planner: Planner, order: list[Job], previous: dict[str, float], depth: float,
            queue) -> dict[str, float]:
    """Conservative backfilling planned again on ``planner`` (the reference of the compiled
    decision, :func:`bbopt.planner.jit.named_conservative.conservative_named`): the kept
    reservations
    (``previous``) held again in ``order``, compressed earliest first (never later than
    before), then the other jobs of ``queue`` in queue order, up to ``depth`` reservations
    (beyond: a start now if possible). The starts by job id, in the order they were planned."""
    now = planner.now
    kept = [job for job in order if planner.hold(job, max(previous[job.id], now))]
    planned: dict[str, float] = {}
    for job in kept:  # compression, earliest first: never later than before
        old = max(previous[job.id], now)
        planner.release(job)
        start = planner.earliest(job, limit=old)
        if start == math.inf or not planner.hold(job, start):
            start = old
            planner.hold(job, old)  # the slot it held a moment ago
        planned[job.id] = start
    for job in queue:
        if job.id in planned:
            continue
        if len(planned) < depth:
            start = planner.earliest(job)
            if start < math.inf and planner.hold(job, start):
                planned[job.id] = start
        elif planner.hold(job, now):
            planned[job.id] = now
    return planned

"""conservative-bb on named BB nodes in Python, the reference of the compiled decision
(:func:`replan` on the planner, the profile built at every decision), and the memory's record
of the jobs holding resources that tells a decision whether room came free since the previous
one (:func:`came_free`, :func:`holding_after`; Kopanski & Rzadca, Euro-Par 2021, Sections 3.2
and 4.1; Mu'alem & Feitelson: compress when a job ends early).
"""

from __future__ import annotations

import math

from bbopt.core import ClusterState, Job
from bbopt.planner import Planner
from bbopt.planner.profile import OverbookedError


def came_free(state: ClusterState, queued: int | None = None) -> bool:
    """Whether room came free since the decision that returned ``state.memory``: one of the
    jobs it left holding resources (``"holding"``: id -> expected end) due to hold them past
    now is no longer running with that end (it ended before its walltime, or was stopped), or
    one of its reservations left the queue (``queued``: how many of them are still queued;
    ``None``: all, the queue being the one that decision planned); or the memory does not
    say. Only then can a kept reservation move earlier, and conservative backfilling
    compresses (Mu'alem & Feitelson: when a job ends early)."""
    memory = state.memory
    holding = memory.get("holding")
    if holding is None:
        return True
    if queued is not None and queued < len(memory.get("reservations", ())):
        return True
    now = state.time
    due = 0
    for end in holding.values():
        if end > now:
            due += 1
    if not due:
        return False
    get = holding.get
    for r in state.running:
        end = get(r.job.id)
        if end is not None and end > now and end == r.expected_end:
            due -= 1
    return due > 0


def holding_after(state: ClusterState, started: list[Job]) -> dict[str, float]:
    """The jobs holding resources once ``started`` start now: each running job due to hold
    them past now and each started job, by id, with its expected end (what :func:`came_free`
    reads at the next decision)."""
    now = state.time
    out = {}
    for r in state.running:
        end = r.expected_end
        if end > now:
            out[r.job.id] = end
    for job in started:
        out[job.id] = now + job.walltime
    return out


def replan(planner: Planner, order: list[Job], previous: dict[str, float],
           pieces: dict[str, list[float]], depth: float, queue, compress: bool
           ) -> tuple[dict[str, float], dict[str, tuple[float, ...]]]:
    """Conservative backfilling planned again on ``planner`` (the reference of the compiled
    decision, :func:`bbopt.planner.jit.named_conservative.conservative_named`; a start now
    places its pieces over its window, ``Planner(window_now=True)``): the kept reservations
    (``previous``) held again in ``order`` with the bytes on each BB node they hold
    (``pieces``; placed again where not given), compressed earliest first when ``compress``
    (something came free): one moves, with pieces placed again, only to an earlier start, and
    else holds its own slot again; then the other jobs of ``queue`` in queue order, up to
    ``depth`` reservations (beyond: a start now if possible). The starts by job id, in the order
    they were planned, and the bytes each holds on each BB node."""
    now = planner.now
    get = pieces.get

    def hold_kept(job: Job) -> bool:
        held = get(job.id)
        start = max(previous[job.id], now)
        return planner.hold(job, start) if held is None else planner.hold_with(job, start, held)

    kept = [job for job in order if hold_kept(job)]
    planned: dict[str, float] = {}
    for job in kept:  # compression, earliest first: never later than before
        old = max(previous[job.id], now)
        if compress:
            held = planner.holds[job.id][2][2:]
            planner.release(job)
            start = planner.earliest(job, limit=old)
            if not (start < old and planner.hold(job, start)):
                start = old
                if not planner.hold_with(job, old, held):  # the slot it held a moment ago
                    raise OverbookedError("a reservation no longer fits the slot it held")
            old = start
        planned[job.id] = old
    for job in queue:
        if job.id in planned:
            continue
        if len(planned) < depth:
            start = planner.earliest(job)
            if start < math.inf and planner.hold(job, start):
                planned[job.id] = start
        elif planner.hold(job, now):
            planned[job.id] = now
    holds = planner.holds
    return planned, {jid: holds[jid][2][2:] for jid in planned}

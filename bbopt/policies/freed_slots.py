"""The slots freed in a conservative-backfilling profile, and where a reservation can use them.

Conservative backfilling (Kopanski & Rzadca, Section 3.2; Mu'alem & Feitelson's compression)
moves a reservation earlier only when something came free before it: a job that ended before its
walltime, a start that did not happen, or another reservation that moved up. At a reservation's
last check no earlier start fitted, so a start that fits now must cover a point where the
profile has gained room since, and there the free capacity must cover the whole demand. The
profile only gains room by such frees, and each is logged here with the running maxima of the
free capacity over its segments as it left them (later reservations only take room away, and a
later free is logged with its own maxima), so the maxima bound the free capacity of every point
of the slot from then on.

:func:`window` turns that into the interval of start times worth scanning for one reservation:
only the slots it has not seen, only their part before its current start (a start before it
covers no point after it but its own slot), and only slots whose maxima admit its demand in
every dimension. Most reservations get an empty window and cost no profile scan at all. This is
the part of Fluxion's planner idea (flux-sched ``resource/planner``: earliest-fit queries pruned
by the maximum free capacity of a subtree of spans) that keeps schedules identical; the bound is
per freed slot instead of per tree node, since what changed is what can help.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import NamedTuple

from bbopt.resources import Profile


class Freed(NamedTuple):
    """A slot ``[start, end)`` that came free, with the segment starts inside it (``times[0]``
    is ``start``) and the running maxima of free nodes and BB from ``start`` up to each."""

    start: float
    end: float
    times: list[float]
    max_nodes: list[float]
    max_bb: list[float]


def freed(profile: Profile, start: float, end: float) -> Freed:
    """Log ``[start, end)`` of ``profile`` just after it was given back."""
    times, free = profile.times, profile.free
    i = max(bisect_left(times, start), 0)
    if i == len(times) or times[i] != start:
        i -= 1
    ts: list[float] = []
    mn: list[float] = []
    mb: list[float] = []
    n = b = -math.inf
    k = len(times)
    while i < k and times[i] < end:
        row = free[i]
        if row[0] > n:
            n = row[0]
        if row[1] > b:
            b = row[1]
        ts.append(times[i] if times[i] > start else start)
        mn.append(n)
        mb.append(b)
        i += 1
    if not ts:  # an empty slot frees nothing
        return Freed(start, end, [start], [-math.inf], [-math.inf])
    return Freed(start, end, ts, mn, mb)


def window(log: list[Freed], now: float, old: float, walltime: float,
           need_nodes: float, need_bb: float) -> tuple[float, float]:
    """Where a reservation at ``old`` (for ``walltime``, needing ``need_nodes`` and ``need_bb``
    less the fit tolerance) may find an earlier start, given the slots freed since its last
    check: ``(lo, hi)``, empty when ``lo >= hi``."""
    lo, hi = math.inf, -math.inf
    for slot in log:
        a = slot.start
        if a >= old:
            continue
        b = slot.end if slot.end < old else old
        if a >= lo and b <= hi:  # adds nothing to the window
            continue
        ts = slot.times
        j = bisect_left(ts, old) - 1 if ts[-1] >= old else len(ts) - 1
        if slot.max_nodes[j] < need_nodes or slot.max_bb[j] < need_bb:
            continue
        if a < lo:
            lo = a
        if b > hi:
            hi = b
    return max(now, lo - walltime), hi

"""The two-dimensional scans of an availability profile (free nodes and BB over time): the hot
path of every earliest start and of conservative backfilling's compression (Kopanski & Rzadca,
Section 3.2: a job starts where its processors *and* its burst buffer are free for its whole
walltime; Mu'alem & Feitelson's compression moves a reservation to the earliest such start).

They take :class:`bbopt.planner.Profile`'s ``times`` and ``free`` rows and answer exactly as
its general n-dimensional scan does (``tests/planner/test_profile_scans.py``). What makes them
faster: the segments a candidate start must hold are found by bisection, split where the job's
own hold begins and ends, and each stretch is walked by ``enumerate`` over a slice, with no bound
test, index arithmetic or own-hold test per segment.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence


def earliest_fit2(times: list[float], free: list[list[float]], now: float, duration: float,
                  need0: float, need1: float, i: int) -> float:
    """:meth:`bbopt.planner.Profile.earliest_fit` for two dimensions (nodes, BB), from
    segment ``i``, with ``need0`` and ``need1`` the demand less the fit tolerance."""
    k = len(times)
    while i < k:
        for j in range(i, k):  # the first segment with room
            row = free[j]
            if row[0] >= need0 and row[1] >= need1:
                break
        else:
            return math.inf
        i = j
        start = times[i] if times[i] > now else now
        e = bisect_left(times, start + duration, i + 1)
        for j, row in enumerate(free[i + 1:e], i + 1):
            if row[0] < need0 or row[1] < need1:
                i = j + 1  # segment j is too full: the next candidate lies after it
                break
        else:
            return start
    return math.inf


def earlier_fit2(times: list[float], free: list[list[float]], tol: Sequence[float], now: float,
                 duration: float, demand: Sequence[float], held_from: float, limit: float,
                 i: int, own_fits: bool = False) -> float:
    """:meth:`bbopt.planner.Profile.earlier_fit` for two dimensions (nodes, BB), from
    segment ``i`` for starts before ``limit``: the hot path of conservative backfilling's
    compression.
    The stretches a candidate start must hold (before its own hold, in it, after it) are
    bounded by bisection, and each is walked by ``enumerate`` over a slice.

    ``own_fits``: the caller knows that no row of the profile holds less than minus half the
    fit tolerance (``Profile._low`` is false). Then the job's own hold, given back, always
    admits it: on a row ``f >= -tol / 2`` the test ``f + d >= d - tol`` holds in floating
    point too (rounding is monotone: ``fl(f + d) >= fl(d - tol / 2) >= fl(d - tol)``), so the
    segments of the hold are not walked (27 % of the segments a scan visited on KTH x 2).

    Every candidate start lies in ``[now, limit)``, so when the walltime is longer than that
    range each one holds ``[limit, now + duration)``: that stretch (up to the own hold) is
    tested first, and where it lacks room no start fits. On KTH x 2 a third of
    conservative-bb's scans have such a stretch, and in 97 % of them it lacks room (the
    freed room that opened the window ends before the job would)."""
    d0, d1 = demand
    need0, need1 = d0 - tol[0], d1 - tol[1]
    stop = bisect_left(times, limit, i)  # candidate segments: [i, stop)
    h = bisect_left(times, held_from, stop)  # its own hold starts at segment h
    common = now + duration  # every candidate holds [limit, common) before its own hold
    if common > held_from:
        common = held_from
    if limit < common:
        for row in free[bisect_right(times, limit, i) - 1:bisect_left(times, common, stop)]:
            if row[0] < need0 or row[1] < need1:
                return held_from
    while i < stop:
        for j, row in enumerate(free[i:stop], i):  # noqa: B007 (the first with room)
            if row[0] >= need0 and row[1] >= need1:
                break
        else:
            return held_from
        i = j
        start = times[i] if times[i] > now else now
        e = bisect_left(times, start + duration, i + 1)
        # (a candidate lies before the hold: i < stop <= h)
        if e <= h:
            for j, row in enumerate(free[i + 1:e], i + 1):
                if row[0] < need0 or row[1] < need1:
                    i = j + 1
                    break
            else:
                return start
            continue
        for j, row in enumerate(free[i + 1:h], i + 1):
            if row[0] < need0 or row[1] < need1:
                i = j + 1
                break
        else:
            # (start < limit <= held_from, so the run ends by its own hold's end: the rest,
            # [h, e), lies in its own hold)
            if own_fits:  # which admits it
                return start
            for j, row in enumerate(free[h:e], h):  # its own hold, given back
                if row[0] + d0 < need0 or row[1] + d1 < need1:
                    i = j + 1
                    break
            else:
                return start
    return held_from

"""The two-dimensional availability profile's operations compiled with numba, on arrays: the
same floating-point operations in the same order as :class:`bbopt.resources.Profile`'s
(``_split``, ``_merge``, ``advance``, ``fits``, ``reserve``) and as the scans of
:mod:`bbopt.profile_scans` (``earliest_fit2``, ``earlier_fit2``) and
:func:`bbopt.policies.freed_slots._take`, so the same answers bit for bit.

Kopanski & Rzadca, Euro-Par 2021, Section 3.2: a job starts where its processors *and* its burst
buffer are free for its whole walltime. These are the pieces conservative-bb's compiled
compression (:mod:`bbopt.policies.compression_jit`) and its profile kept in arrays
(:class:`~bbopt.policies.compression_jit.ArrayProfile`) are made of. A profile is ``T[cap]``
(breakpoints) and ``F[cap, 2]`` (free nodes and BB), the first ``n`` rows in use; the callers
make room for the breakpoints an operation adds (at most two). Imported with that module only
(it needs numba, the extra ``fast``); code cached on disk. No fastmath.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def bisect_left(a: np.ndarray, x: float, lo: int, hi: int) -> int:
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def bisect_right(a: np.ndarray, x: float, lo: int, hi: int) -> int:
    while lo < hi:
        mid = (lo + hi) // 2
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def split(T: np.ndarray, F: np.ndarray, n: int, t: float) -> tuple[int, int]:
    """``Profile._split``: make ``t`` a breakpoint; ``(its index, new n)``. ``t`` is never
    before the origin here (every slot lies after now)."""
    i = bisect_left(T, t, 0, n)
    if i < n and T[i] == t:
        return i, n
    for r in range(n, i, -1):
        T[r] = T[r - 1]
        F[r, 0] = F[r - 1, 0]
        F[r, 1] = F[r - 1, 1]
    T[i] = t
    F[i, 0] = F[i - 1, 0]
    F[i, 1] = F[i - 1, 1]
    return i, n + 1


@njit(cache=True)
def _delete(T: np.ndarray, F: np.ndarray, n: int, r: int) -> int:
    for q in range(r, n - 1):
        T[q] = T[q + 1]
        F[q, 0] = F[q + 1, 0]
        F[q, 1] = F[q + 1, 1]
    return n - 1


@njit(cache=True)
def merge(T: np.ndarray, F: np.ndarray, n: int, i: int, j: int) -> int:
    """``Profile._merge``: drop the breakpoints at ``j`` and ``i`` between equal rows."""
    if j < n and F[j, 0] == F[j - 1, 0] and F[j, 1] == F[j - 1, 1]:
        n = _delete(T, F, n, j)
    if i > 0 and F[i, 0] == F[i - 1, 0] and F[i, 1] == F[i - 1, 1]:
        n = _delete(T, F, n, i)
    return n


@njit(cache=True)
def take(T: np.ndarray, F: np.ndarray, n: int, start: float, end: float, d0: float, d1: float,
          h0: float, h1: float) -> tuple[int, bool]:
    """``freed_slots._take``: ``(new n, whether a row went below minus half the tolerance)``."""
    low = False
    if end <= start:
        return n, low
    i, n = split(T, F, n, start)
    j, n = split(T, F, n, end)
    for r in range(i, j):
        F[r, 0] -= d0
        F[r, 1] -= d1
        if F[r, 0] < h0 or F[r, 1] < h1:
            low = True
    return merge(T, F, n, i, j), low


@njit(cache=True)
def earlier_fit(T: np.ndarray, F: np.ndarray, n: int, tol0: float, tol1: float, now: float,
                  duration: float, d0: float, d1: float, held_from: float, limit: float,
                  i: int, own_fits: bool) -> float:
    """``profile_scans.earlier_fit2``, index for index."""
    need0 = d0 - tol0
    need1 = d1 - tol1
    stop = bisect_left(T, limit, i, n)
    h = bisect_left(T, held_from, stop, n)
    oh = bisect_left(T, held_from + duration, h, n)
    common = now + duration
    if common > held_from:
        common = held_from
    if limit < common:
        for r in range(bisect_right(T, limit, i, n) - 1, bisect_left(T, common, stop, n)):
            if F[r, 0] < need0 or F[r, 1] < need1:
                return held_from
    while i < stop:
        j = i
        while j < stop and not (F[j, 0] >= need0 and F[j, 1] >= need1):
            j += 1
        if j == stop:
            return held_from
        i = j
        start = T[i] if T[i] > now else now
        e = bisect_left(T, start + duration, i + 1, n)
        if e <= h:
            failed = False
            for r in range(i + 1, e):
                if F[r, 0] < need0 or F[r, 1] < need1:
                    i = r + 1
                    failed = True
                    break
            if not failed:
                return start
            continue
        failed = False
        for r in range(i + 1, h):
            if F[r, 0] < need0 or F[r, 1] < need1:
                i = r + 1
                failed = True
                break
        if failed:
            continue
        if own_fits and e <= oh:
            return start
        mm = e if e < oh else oh
        for r in range(h, mm):
            if F[r, 0] + d0 < need0 or F[r, 1] + d1 < need1:
                i = r + 1
                failed = True
                break
        if failed:
            continue
        for r in range(oh, e):
            if F[r, 0] < need0 or F[r, 1] < need1:
                i = r + 1
                failed = True
                break
        if not failed:
            return start
    return held_from


@njit(cache=True)
def _earliest_fit2(T: np.ndarray, F: np.ndarray, n: int, now: float, duration: float,
                   need0: float, need1: float) -> float:
    """``profile_scans.earliest_fit2`` from the segment holding ``now``."""
    i = bisect_right(T, now, 0, n) - 1
    if i < 0:
        i = 0
    while i < n:
        j = i
        while j < n and not (F[j, 0] >= need0 and F[j, 1] >= need1):
            j += 1
        if j == n:
            return math.inf
        i = j
        start = T[i] if T[i] > now else now
        e = bisect_left(T, start + duration, i + 1, n)
        failed = False
        for r in range(i + 1, e):
            if F[r, 0] < need0 or F[r, 1] < need1:
                i = r + 1
                failed = True
                break
        if not failed:
            return start
    return math.inf


@njit(cache=True)
def earliest_fit(T: np.ndarray, F: np.ndarray, n: int, now: float, duration: float,
                 d0: float, d1: float, tol0: float, tol1: float) -> float:
    """``Profile.earliest_fit`` on two dimensions."""
    return _earliest_fit2(T, F, n, now, duration, d0 - tol0, d1 - tol1)


@njit(cache=True)
def fits(T: np.ndarray, F: np.ndarray, n: int, start: float, duration: float, d0: float,
         d1: float, tol0: float, tol1: float) -> bool:
    """``Profile.fits``: ``(d0, d1)`` free on the whole of ``[start, start + duration)``."""
    i = bisect_right(T, start, 0, n) - 1
    if i < 0:
        i = 0
    end = start + duration
    while True:
        if F[i, 0] + tol0 < d0 or F[i, 1] + tol1 < d1:
            return False
        i += 1
        if i == n or T[i] >= end:
            return True


@njit(cache=True)
def reserve(T: np.ndarray, F: np.ndarray, n: int, start: float, end: float, d0: float,
            d1: float, tol0: float, tol1: float) -> tuple[int, int]:
    """``Profile.reserve`` on two dimensions: ``(new n, status)``, the status 0, 1 when a row
    went below minus half the tolerance, or -1 when the demand is not free (nothing changed
    but breakpoints)."""
    if end <= start:
        return n, 0
    i, n = split(T, F, n, start if start > T[0] else T[0])
    if math.isfinite(end):
        j, n = split(T, F, n, end)
    else:
        j = n
    h0 = -tol0 / 2
    h1 = -tol1 / 2
    status = 0
    for r in range(i, j):
        if F[r, 0] - d0 < h0 or F[r, 1] - d1 < h1:
            for q in range(i, j):
                if F[q, 0] + tol0 < d0 or F[q, 1] + tol1 < d1:
                    return n, -1
            status = 1
            break
    for r in range(i, j):
        F[r, 0] -= d0
        F[r, 1] -= d1
    return merge(T, F, n, i, j), status


@njit(cache=True)
def advance(T: np.ndarray, F: np.ndarray, n: int, t: float) -> int:
    """``Profile.advance``: forget what lies before ``t``; the new ``n``."""
    if t <= T[0]:
        return n
    i = bisect_right(T, t, 0, n) - 1
    if i > 0:
        for r in range(n - i):
            T[r] = T[r + i]
            F[r, 0] = F[r + i, 0]
            F[r, 1] = F[r + i, 1]
        n -= i
    T[0] = t
    return n

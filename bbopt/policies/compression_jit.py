"""Conservative backfilling's compression compiled with numba: the loop of
:meth:`ConservativeBackfilling.decide <bbopt.policies.conservative.ConservativeBackfilling>` over
the kept reservations on the BB pool, with the same floating-point operations in the same order,
so the same starts, bit for bit.

Kopanski & Rzadca, Euro-Par 2021, Section 3.2 (a reservation holds processors *and* burst buffer)
and Mu'alem & Feitelson's compression: after something came free, every reservation, earliest
first, moves to its earliest start that delays no other. This module translates, one for one, the
pure-Python pieces that loop calls: :func:`bbopt.profile_scans.earlier_fit2` (the scan),
:func:`bbopt.policies.freed_slots.reach` (where a scan can stop), :func:`~bbopt.policies.
freed_slots.move` with its :func:`~bbopt.policies.freed_slots.give_back` and
:func:`~bbopt.policies.freed_slots._take`, the profile's ``_split`` and ``_merge``
(:class:`bbopt.resources.Profile`), and the log of freed slots (:func:`~bbopt.policies.
freed_slots.log_slot`). On KTH x 2 a compression walks 41 reservations of a 40-breakpoint
profile on average, a third of a million moves in all; interpreted, it was half the replay.

Layout. The profile: ``T[cap]`` (breakpoints) and ``F[cap, 2]`` (free nodes and BB), the first
``n`` rows in use, ``cap`` leaving room for the four breakpoints a move can add. The freed-slot
log: one row per slot in ``L[k, 5]`` (start, end, last breakpoint, maxima of nodes and BB) with
``LO[k, 2]`` (offset and length of its segments in the flat ``S[:, 3]``: breakpoint, free nodes,
free BB), and ``order``, the slots' indices sorted by end (ties in insertion order, as
``insort``). The imported module needs numba (the optional extra ``fast``); it is imported only
by a compression large enough to pay for the conversion (see :mod:`bbopt.jit`), and its code is
cached on disk (``cache=True``). No fastmath.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Columns of the log's slot table ``L``.
START, END, LAST, TOP0, TOP1 = range(5)
#: How many stuck reservations one compression remembers (``conservative._STUCK``).
STUCK = 8


@njit(cache=True, inline="always")
def _bisect_left(a: np.ndarray, x: float, lo: int, hi: int) -> int:
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def _bisect_right(a: np.ndarray, x: float, lo: int, hi: int) -> int:
    while lo < hi:
        mid = (lo + hi) // 2
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@njit(cache=True)
def _split(T: np.ndarray, F: np.ndarray, n: int, t: float) -> tuple[int, int]:
    """``Profile._split``: make ``t`` a breakpoint; ``(its index, new n)``. ``t`` is never
    before the origin here (every slot lies after now)."""
    i = _bisect_left(T, t, 0, n)
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
def _merge(T: np.ndarray, F: np.ndarray, n: int, i: int, j: int) -> int:
    """``Profile._merge``: drop the breakpoints at ``j`` and ``i`` between equal rows."""
    if j < n and F[j, 0] == F[j - 1, 0] and F[j, 1] == F[j - 1, 1]:
        n = _delete(T, F, n, j)
    if i > 0 and F[i, 0] == F[i - 1, 0] and F[i, 1] == F[i - 1, 1]:
        n = _delete(T, F, n, i)
    return n


@njit(cache=True)
def _take(T: np.ndarray, F: np.ndarray, n: int, start: float, end: float, d0: float, d1: float,
          h0: float, h1: float) -> tuple[int, bool]:
    """``freed_slots._take``: ``(new n, whether a row went below minus half the tolerance)``."""
    low = False
    if end <= start:
        return n, low
    i, n = _split(T, F, n, start)
    j, n = _split(T, F, n, end)
    for r in range(i, j):
        F[r, 0] -= d0
        F[r, 1] -= d1
        if F[r, 0] < h0 or F[r, 1] < h1:
            low = True
    return _merge(T, F, n, i, j), low


@njit(cache=True)
def _give_back(T: np.ndarray, F: np.ndarray, n: int, start: float, end: float, a0: float,
               a1: float, horizon: float, L: np.ndarray, LO: np.ndarray, S: np.ndarray,
               k: int, fill: int) -> tuple[int, np.ndarray, int]:
    """``freed_slots.give_back``: add ``(a0, a1)`` on ``[start, end)`` and write the slot's log
    row ``k`` (its segments before the horizon at ``S[fill:]``, grown if needed; no segment:
    maxima of -inf). ``(new n, S, new fill)``."""
    i, n = _split(T, F, n, start)
    j, n = _split(T, F, n, end)
    for r in range(i, j):
        F[r, 0] += a0
        F[r, 1] += a1
    s = _bisect_left(T, end if end < horizon else horizon, i, j) - i
    L[k, START] = start
    L[k, END] = end
    if s <= 0:
        L[k, LAST] = start
        L[k, TOP0] = -math.inf
        L[k, TOP1] = -math.inf
        LO[k, 0] = fill
        LO[k, 1] = 0
        return _merge(T, F, n, i, j), S, fill
    if fill + s > S.shape[0]:
        grown = np.empty((2 * S.shape[0] + s, 3))
        grown[:fill] = S[:fill]
        S = grown
    top0 = -math.inf
    top1 = -math.inf
    for q in range(s):
        S[fill + q, 0] = T[i + q]
        S[fill + q, 1] = F[i + q, 0]
        S[fill + q, 2] = F[i + q, 1]
        if F[i + q, 0] > top0:
            top0 = F[i + q, 0]
        if F[i + q, 1] > top1:
            top1 = F[i + q, 1]
    L[k, LAST] = T[i + s - 1]
    L[k, TOP0] = top0
    L[k, TOP1] = top1
    LO[k, 0] = fill
    LO[k, 1] = s
    return _merge(T, F, n, i, j), S, fill + s


@njit(cache=True)
def _reach(L: np.ndarray, LO: np.ndarray, S: np.ndarray, order: np.ndarray, m: int,
           floor: float, old: float, need0: float, need1: float) -> float:
    """``freed_slots.reach`` over the ``m`` logged slots (``order``: by end)."""
    for p in range(m - 1, -1, -1):
        k = order[p]
        a = L[k, START]
        b = L[k, END]
        if b <= floor:
            return floor
        if a >= old or L[k, TOP0] < need0 or L[k, TOP1] < need1:
            continue
        if L[k, LAST] >= old:
            off = LO[k, 0]
            length = LO[k, 1]
            j = _bisect_left(S[off:off + length, 0], old, 0, length)
            top0 = -math.inf
            top1 = -math.inf
            for q in range(off, off + j):
                if S[q, 1] > top0:
                    top0 = S[q, 1]
                if S[q, 2] > top1:
                    top1 = S[q, 2]
            if top0 < need0 or top1 < need1:
                continue
        return b if b < old else old
    return floor


@njit(cache=True)
def _log(L: np.ndarray, order: np.ndarray, m: int, k: int) -> int:
    """``freed_slots.log_slot``: insert slot ``k`` into ``order`` after every slot ending no
    later (``insort`` by end), unless it has no room logged; the new count."""
    if L[k, TOP0] == -math.inf:
        return m
    end = L[k, END]
    lo, hi = 0, m
    while lo < hi:  # bisect_right by end
        mid = (lo + hi) // 2
        if end < L[order[mid], END]:
            hi = mid
        else:
            lo = mid + 1
    for p in range(m, lo, -1):
        order[p] = order[p - 1]
    order[lo] = k
    return m + 1


@njit(cache=True)
def _earlier_fit2(T: np.ndarray, F: np.ndarray, n: int, tol0: float, tol1: float, now: float,
                  duration: float, d0: float, d1: float, held_from: float, limit: float,
                  i: int, own_fits: bool) -> float:
    """``profile_scans.earlier_fit2``, index for index."""
    need0 = d0 - tol0
    need1 = d1 - tol1
    stop = _bisect_left(T, limit, i, n)
    h = _bisect_left(T, held_from, stop, n)
    oh = _bisect_left(T, held_from + duration, h, n)
    common = now + duration
    if common > held_from:
        common = held_from
    if limit < common:
        for r in range(_bisect_right(T, limit, i, n) - 1, _bisect_left(T, common, stop, n)):
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
        e = _bisect_left(T, start + duration, i + 1, n)
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
def _remember(stuck: np.ndarray, count: int, t: float, need0: float, need1: float,
              walltime: float) -> int:
    """``insort(stuck, (t, need0, need1, walltime))`` and drop the first beyond
    :data:`STUCK`: the stuck reservations sorted as tuples; the new count."""
    p = count
    while p > 0:  # bisect_right over the tuples
        q = p - 1
        a = stuck[q, 0]
        if a < t or (a == t and (stuck[q, 1] < need0 or (stuck[q, 1] == need0 and (
                stuck[q, 2] < need1 or (stuck[q, 2] == need1 and stuck[q, 3] <= walltime))))):
            break
        p = q
    for r in range(count, p, -1):
        stuck[r, 0] = stuck[r - 1, 0]
        stuck[r, 1] = stuck[r - 1, 1]
        stuck[r, 2] = stuck[r - 1, 2]
        stuck[r, 3] = stuck[r - 1, 3]
    stuck[p, 0] = t
    stuck[p, 1] = need0
    stuck[p, 2] = need1
    stuck[p, 3] = walltime
    count += 1
    if count > STUCK:
        for r in range(count - 1):
            stuck[r, 0] = stuck[r + 1, 0]
            stuck[r, 1] = stuck[r + 1, 1]
            stuck[r, 2] = stuck[r + 1, 2]
            stuck[r, 3] = stuck[r + 1, 3]
        count -= 1
    return count


@njit(cache=True)
def compress(times: np.ndarray, rows: np.ndarray, low: bool, tol0: float, tol1: float,
             now: float, horizon: float, kept: np.ndarray, use_log: bool, log: np.ndarray,
             log_segments: np.ndarray) -> tuple[np.ndarray, np.ndarray, bool, np.ndarray,
                                                    np.ndarray]:
    """The compression loop of ``ConservativeBackfilling.decide`` over the kept reservations,
    ``kept`` holding (old start, nodes, BB, walltime) for each in turn (by start, ties in queue
    order), on the profile of breakpoints ``times`` and free nodes and BB ``rows`` (flat:
    ``rows[2 r]``, ``rows[2 r + 1]``). ``use_log``: the slots of ``log`` (start, end, last
    breakpoint, maxima, number of segments; by end) are those freed since the reservations were
    last checked, their segments in turn in ``log_segments`` (breakpoint, nodes, BB); otherwise
    none was checked and every start before its own is scanned. Returns the new profile
    (breakpoints, rows ``[n, 2]``), its ``low`` flag, every reservation's start and the
    indices of those that moved."""
    n = times.shape[0]
    m = kept.shape[0]
    T = np.empty(n + 4 * m + 2)  # (a move adds at most four breakpoints)
    F = np.empty((n + 4 * m + 2, 2))
    T[:n] = times
    for r in range(n):
        F[r, 0] = rows[2 * r]
        F[r, 1] = rows[2 * r + 1]
    k = log.shape[0]
    L = np.empty((k + m, 5))
    LO = np.empty((k + m, 2), dtype=np.int64)
    S = np.empty((log_segments.shape[0] + 64, 3))
    order = np.arange(k + m)
    fill = 0
    for q in range(k):
        L[q, :] = log[q, :5]
        s = int(log[q, 5])
        LO[q, 0] = fill
        LO[q, 1] = s
        S[fill:fill + s, :] = log_segments[fill:fill + s, :]
        fill += s
    starts = np.empty(m)
    moved = np.empty(m, dtype=np.int64)
    h0 = -tol0 / 2
    h1 = -tol1 / 2
    max0 = -math.inf
    max1 = -math.inf
    for q in range(k):
        max0 = max(max0, L[q, TOP0])
        max1 = max(max1, L[q, TOP1])
    slots = k  # rows of L in use (a slot with no room logged has one too)
    stuck = np.empty((STUCK + 1, 4))
    count = 0
    n_moved = 0
    for r in range(m):
        old = kept[r, 0]
        nodes = kept[r, 1]
        bb = kept[r, 2]
        walltime = kept[r, 3]
        starts[r] = old
        need0 = nodes - tol0
        need1 = bb - tol1
        if use_log and (need0 > max0 or need1 > max1):
            continue
        floor = now
        for q in range(count - 1, -1, -1):
            if need0 >= stuck[q, 1] and need1 >= stuck[q, 2] and walltime >= stuck[q, 3]:
                floor = stuck[q, 0]
                break
        if not use_log or floor >= old:
            hi = old
        else:
            hi = _reach(L, LO, S, order, k, floor, old, need0, need1)
        if not floor < hi:
            continue
        start = _earlier_fit2(T, F, n, tol0, tol1, floor, walltime, nodes, bb, old, hi,
                              _bisect_right(T, floor, 0, n) - 1, not low)
        if start < old:
            # freed_slots.move: the part of the old slot the new one leaves is given back
            cut = start + walltime
            if cut <= old:
                n, S, fill = _give_back(T, F, n, old, old + walltime, nodes, bb, horizon, L, LO,
                                        S, slots, fill)
                n, went_low = _take(T, F, n, start, cut, nodes, bb, h0, h1)
            else:
                n, went_low = _take(T, F, n, start, old, nodes, bb, h0, h1)
                n, S, fill = _give_back(T, F, n, cut, old + walltime, nodes, bb, horizon, L, LO,
                                        S, slots, fill)
            if went_low:
                low = True
            if start > now:
                count = _remember(stuck, count, start, need0, need1, walltime)
            if use_log:
                k = _log(L, order, k, slots)
                if L[slots, TOP0] > max0:
                    max0 = L[slots, TOP0]
                if L[slots, TOP1] > max1:
                    max1 = L[slots, TOP1]
            slots += 1
            starts[r] = start
            moved[n_moved] = r
            n_moved += 1
            continue
        count = _remember(stuck, count, old, need0, need1, walltime)
    return T[:n], F[:n], low, starts, moved[:n_moved]

"""Conservative backfilling's profile and compression compiled with numba: the operations of
the two-dimensional availability profile (free nodes and BB over time) and the compression loop
of :meth:`ConservativeBackfilling.decide <bbopt.policies.conservative.ConservativeBackfilling>`
on the BB pool, each with the same floating-point operations in the same order as the Python
code it translates, so the same answers and starts, bit for bit.

Kopanski & Rzadca, Euro-Par 2021, Section 3.2 (a job starts where its processors *and* its burst
buffer are free for its whole walltime; a reservation holds both) and Mu'alem & Feitelson's
compression: after something came free, every reservation, earliest first, moves to its
earliest start that delays no other. Translated one for one: :class:`bbopt.planner.Profile`'s
``_split``, ``_merge``, ``advance``, ``fits`` and ``reserve`` on two dimensions, the scans of
:mod:`bbopt.planner.scans` (``earliest_fit2``, ``earlier_fit2``), and
:mod:`bbopt.policies.freed_slots` (``reach``: where a scan can stop; ``move`` with ``give_back``
and ``_take``; ``log_slot``: the log of freed slots). On KTH x 2 a compression walks 41
reservations of a 40-breakpoint profile on average, 202,000 moves in a replay; in Python the
compressions were half of its CPU time.

Layout. A profile is ``T[cap]`` (breakpoints) and ``F[cap, 2]`` (free nodes and BB), the first
``n`` rows in use; the caller makes room for the breakpoints an operation adds (two per
reservation or free, four per move): :class:`bbopt.planner.jit.arrays.ArrayProfile`.
Within :func:`compress`, the log of freed slots is one row per slot in ``L[k, 5]`` (start, end,
last breakpoint, maxima of nodes and BB) with ``LO[k, 2]`` (offset and length of its segments
in the flat ``S[:, 3]``: breakpoint, free nodes, free BB), and ``order``, the slots' indices by
end (ties in insertion order, as ``insort``). The searches and scans are the backend's
primitives (:mod:`bbopt.planner.jit.primitives`). Needs numba (the optional extra ``fast``);
code cached on disk against the whole backend (:mod:`bbopt.planner.jit.cache`). No fastmath.
"""

from __future__ import annotations

import math

import numpy as np

from bbopt.planner.jit.cache import kernel
from bbopt.planner.jit.primitives import bisect_left, bisect_right, room, short, window


@kernel()
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


@kernel()
def _delete(T: np.ndarray, F: np.ndarray, n: int, r: int) -> int:
    for q in range(r, n - 1):
        T[q] = T[q + 1]
        F[q, 0] = F[q + 1, 0]
        F[q, 1] = F[q + 1, 1]
    return n - 1


@kernel()
def merge(T: np.ndarray, F: np.ndarray, n: int, i: int, j: int) -> int:
    """``Profile._merge``: drop the breakpoints at ``j`` and ``i`` between equal rows."""
    if j < n and F[j, 0] == F[j - 1, 0] and F[j, 1] == F[j - 1, 1]:
        n = _delete(T, F, n, j)
    if i > 0 and F[i, 0] == F[i - 1, 0] and F[i, 1] == F[i - 1, 1]:
        n = _delete(T, F, n, i)
    return n


@kernel()
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


@kernel()
def earlier_fit(T: np.ndarray, F: np.ndarray, n: int, tol0: float, tol1: float, now: float,
                duration: float, d0: float, d1: float, held_from: float, limit: float,
                i: int, own_fits: bool) -> float:
    """``profile_scans.earlier_fit2``, stretch for stretch."""
    need0 = d0 - tol0
    need1 = d1 - tol1
    F0, F1 = F[:, 0], F[:, 1]
    stop = bisect_left(T, limit, i, n)
    h = bisect_left(T, held_from, stop, n)
    oh = bisect_left(T, held_from + duration, h, n)
    common = now + duration
    if common > held_from:
        common = held_from
    if limit < common and short(F0, F1, bisect_right(T, limit, i, n) - 1,
                                       bisect_left(T, common, stop, n), need0, need1,
                                       0.0, 0.0) >= 0:
        return held_from
    while i < stop:
        i = room(F0, F1, i, stop, need0, need1, 0.0, 0.0)
        if i == stop:
            return held_from
        start = T[i] if T[i] > now else now
        e = bisect_left(T, start + duration, i + 1, n)
        if e <= h:  # (a candidate lies before the hold: i < stop <= h)
            r = short(F0, F1, i + 1, e, need0, need1, 0.0, 0.0)
        else:
            r = short(F0, F1, i + 1, h, need0, need1, 0.0, 0.0)
            if r < 0:
                if own_fits and e <= oh:
                    return start
                r = short(F0, F1, h, e if e < oh else oh, need0, need1, d0, d1)
                if r < 0:
                    r = short(F0, F1, oh, e, need0, need1, 0.0, 0.0)
        if r < 0:
            return start
        i = r + 1
    return held_from


@kernel()
def earliest_fit(T: np.ndarray, F: np.ndarray, n: int, now: float, duration: float,
                 d0: float, d1: float, tol0: float, tol1: float) -> float:
    """``Profile.earliest_fit`` on two dimensions (``profile_scans.earliest_fit2`` from the
    segment holding ``now``)."""
    need0 = d0 - tol0
    need1 = d1 - tol1
    i = bisect_right(T, now, 0, n) - 1
    if i < 0:
        i = 0
    return window(T, F[:, 0], F[:, 1], i, n, now, duration, need0, need1, 0.0, 0.0)[0]


@kernel()
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


@kernel()
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


@kernel()
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


#: Columns of the log's slot table ``L``.
START, END, LAST, TOP0, TOP1 = range(5)
#: How many stuck reservations one compression remembers (``conservative._STUCK``).
STUCK = 8


@kernel()
def _give_back(T: np.ndarray, F: np.ndarray, n: int, start: float, end: float, a0: float,
               a1: float, horizon: float, L: np.ndarray, LO: np.ndarray, S: np.ndarray,
               k: int, fill: int) -> tuple[int, np.ndarray, int]:
    """``freed_slots.give_back``: add ``(a0, a1)`` on ``[start, end)`` and write the slot's log
    row ``k`` (its segments before the horizon at ``S[fill:]``, grown if needed; no segment:
    maxima of -inf). ``(new n, S, new fill)``."""
    i, n = split(T, F, n, start)
    j, n = split(T, F, n, end)
    for r in range(i, j):
        F[r, 0] += a0
        F[r, 1] += a1
    s = bisect_left(T, end if end < horizon else horizon, i, j) - i
    L[k, START] = start
    L[k, END] = end
    if s <= 0:
        L[k, LAST] = start
        L[k, TOP0] = -math.inf
        L[k, TOP1] = -math.inf
        LO[k, 0] = fill
        LO[k, 1] = 0
        return merge(T, F, n, i, j), S, fill
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
    return merge(T, F, n, i, j), S, fill + s


@kernel()
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
            j = bisect_left(S[off:off + length, 0], old, 0, length)
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


@kernel()
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


@kernel()
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


@kernel()
def compress(T: np.ndarray, F: np.ndarray, n: int, low: bool, tol0: float, tol1: float,
             now: float, horizon: float, frees: np.ndarray, kept: np.ndarray, use_log: bool,
             starts: np.ndarray, moved: np.ndarray) -> tuple[int, bool, int]:
    """Give back ``frees`` (start, end, nodes, BB: the slots jobs left since the last decision,
    logged) and run the compression loop of ``ConservativeBackfilling.decide`` over the kept
    reservations, ``kept`` holding (old start, nodes, BB, walltime) for each in turn (by start,
    ties in queue order), on the profile ``T, F[:n]`` (with room for two breakpoints per free
    and four per reservation). ``use_log``: the logged slots are the only room that came since
    the reservations were last checked (otherwise none was checked: every start before a
    reservation's own is scanned). Like the Python loop, it compresses only when a slot was
    logged or ``use_log`` is false. Writes every reservation's start to ``starts`` and the
    indices of those that moved to ``moved``; returns ``(new n, low, how many moved)``."""
    k0 = frees.shape[0]
    m = kept.shape[0]
    L = np.empty((k0 + m, 5))
    LO = np.empty((k0 + m, 2), dtype=np.int64)
    S = np.empty((n + 64, 3))
    order = np.arange(k0 + m)
    fill = 0
    k = 0  # slots in the log
    slots = 0  # rows of L in use (a slot with no room logged has one too)
    for q in range(k0):
        n, S, fill = _give_back(T, F, n, frees[q, 0], frees[q, 1], frees[q, 2], frees[q, 3],
                                horizon, L, LO, S, slots, fill)
        k = _log(L, order, k, slots)
        slots += 1
    if use_log and k == 0:
        for r in range(m):
            starts[r] = kept[r, 0]
        return n, low, 0
    h0 = -tol0 / 2
    h1 = -tol1 / 2
    max0 = -math.inf
    max1 = -math.inf
    for q in range(k):
        max0 = max(max0, L[order[q], TOP0])
        max1 = max(max1, L[order[q], TOP1])
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
        if not low:  # (the stuck bound holds on a profile never low: conservative.decide)
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
        start = earlier_fit(T, F, n, tol0, tol1, floor, walltime, nodes, bb, old, hi,
                              bisect_right(T, floor, 0, n) - 1, not low)
        if start < old:
            # freed_slots.move: the part of the old slot the new one leaves is given back
            cut = start + walltime
            if cut <= old:
                n, S, fill = _give_back(T, F, n, old, old + walltime, nodes, bb, horizon, L, LO,
                                        S, slots, fill)
                n, went_low = take(T, F, n, start, cut, nodes, bb, h0, h1)
            else:
                n, went_low = take(T, F, n, start, old, nodes, bb, h0, h1)
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
    return n, low, n_moved

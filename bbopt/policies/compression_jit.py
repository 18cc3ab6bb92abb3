"""Conservative backfilling's profile and compression compiled with numba: the loop of
:meth:`ConservativeBackfilling.decide <bbopt.policies.conservative.ConservativeBackfilling>` over
the kept reservations on the BB pool, and the profile operations around it, with the same
floating-point operations in the same order as the Python ones, so the same starts, bit for bit.

Kopanski & Rzadca, Euro-Par 2021, Section 3.2 (a reservation holds processors *and* burst buffer)
and Mu'alem & Feitelson's compression: after something came free, every reservation, earliest
first, moves to its earliest start that delays no other. This module translates, one for one,
the Python loop and the pieces it calls that the profile has not: :func:`bbopt.policies.
freed_slots.reach` (where a scan can stop), :func:`~bbopt.policies.freed_slots.move` with
:func:`~bbopt.policies.freed_slots.give_back`, and the log of freed slots
(:func:`~bbopt.policies.freed_slots.log_slot`); the profile's own operations and scans are
:mod:`bbopt.policies.profile_jit`. On KTH x 2 a compression walks 41 reservations of a
40-breakpoint profile on average, 202,000 moves in a replay; in Python the compressions were
half of its CPU time.

Layout. :class:`ArrayProfile` keeps the profile between decisions as ``T[cap]`` (breakpoints)
and ``F[cap, 2]`` (free nodes and BB), the first ``n`` rows in use; the Python side makes room
before each call (two breakpoints per reservation or free, four per move). Within
:func:`compress`, the log of freed slots is one row per slot in ``L[k, 5]`` (start, end, last
breakpoint, maxima of nodes and BB) with ``LO[k, 2]`` (offset and length of its segments in the
flat ``S[:, 3]``: breakpoint, free nodes, free BB), and ``order``, the slots' indices by end
(ties in insertion order, as ``insort``). The module needs numba (the optional extra ``fast``)
and is imported by :func:`bbopt.jit.kernels` only when conservative-bb decides to run compiled
(:meth:`ConservativeBackfilling._kernels <bbopt.policies.conservative.ConservativeBackfilling>`);
its code is cached on disk (``cache=True``). No fastmath.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
from numba import njit

from bbopt.core import Job
from bbopt.policies.profile_jit import (
    advance,
    bisect_left,
    bisect_right,
    earlier_fit,
    earliest_fit,
    fits,
    merge,
    reserve,
    split,
    take,
)
from bbopt.resources import OverbookedError, Profile

#: Columns of the log's slot table ``L``.
START, END, LAST, TOP0, TOP1 = range(5)
#: How many stuck reservations one compression remembers (``conservative._STUCK``).
STUCK = 8


@njit(cache=True)
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


class ArrayProfile:
    """A two-dimensional :class:`~bbopt.resources.Profile` (free nodes and BB over time) kept in
    arrays for the kernels above: the profile conservative-bb keeps between decisions once its
    compression runs compiled. The same methods as the list profile that the policy calls
    (``advance``, ``earliest_fit``, ``fits``, ``reserve``), with the same answers, and
    :meth:`compress`. ``T[:n]`` holds the breakpoints and ``F[:n]`` the free nodes and BB."""

    __slots__ = ("T", "F", "n", "_low", "_tol")

    def __init__(self, profile: Profile) -> None:
        n = len(profile.times)
        self.T = np.empty(2 * n + 64)
        self.F = np.empty((2 * n + 64, 2))
        self.T[:n] = profile.times
        self.F[:n] = profile.free
        self.n = n
        self._low = profile._low
        self._tol = tuple(profile._tol)

    @property
    def origin(self) -> float:
        return float(self.T[0])

    @property
    def times(self) -> list[float]:
        return self.T[:self.n].tolist()

    @property
    def free(self) -> list[list[float]]:
        return self.F[:self.n].tolist()

    def _room(self, more: int) -> None:
        """Room for ``more`` breakpoints."""
        if self.n + more > self.T.shape[0]:
            size = 2 * (self.n + more)
            T, F = np.empty(size), np.empty((size, 2))
            T[:self.n] = self.T[:self.n]
            F[:self.n] = self.F[:self.n]
            self.T, self.F = T, F

    def advance(self, t: float) -> None:
        self.n = advance(self.T, self.F, self.n, t)

    def earliest_fit(self, now: float, duration: float, demand: Sequence[float]) -> float:
        return earliest_fit(self.T, self.F, self.n, now, duration, demand[0], demand[1],
                            *self._tol)

    def fits(self, start: float, duration: float, demand: Sequence[float]) -> bool:
        return fits(self.T, self.F, self.n, start, duration, demand[0], demand[1], *self._tol)

    def reserve(self, start: float, end: float, demand: Sequence[float]) -> None:
        self._room(2)
        self.n, status = reserve(self.T, self.F, self.n, start, end, demand[0], demand[1],
                                 *self._tol)
        if status < 0:
            raise OverbookedError(f"reserving {tuple(demand)} on [{start}, {end}) overbooks")
        if status:
            self._low = True

    def compress(self, now: float, horizon: float, frees: list[tuple[float, float, int, float]],
                 kept: list[tuple[float, int, Job]], use_log: bool) -> list[tuple[int, float]]:
        """:func:`compress` on this profile: give back ``frees`` (start, end, nodes, BB) and
        compress the ``kept`` reservations ((start, queue position, job), by start); the
        reservations that moved, as (index in ``kept``, new start)."""
        m = len(kept)
        self._room(2 * len(frees) + 4 * m + 2)
        table = np.fromiter(chain([(old, job.nodes, job.bb, job.walltime)
                                   for old, _, job in kept]), np.float64, 4 * m)
        starts = np.empty(m)
        moved = np.empty(m, dtype=np.int64)
        frees_table = np.array(frees, dtype=np.float64).reshape(-1, 4)
        self.n, low, count = compress(self.T, self.F, self.n, self._low, *self._tol, now,
                                      horizon, frees_table, table.reshape(m, 4), use_log,
                                      starts, moved)
        self._low = bool(low)
        if not count:
            return []
        out = starts.tolist()
        return [(r, out[r]) for r in moved[:count].tolist()]


chain = itertools.chain.from_iterable

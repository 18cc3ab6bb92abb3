"""The primitives every compiled kernel of the planner is made of, each written once: searches
in the breakpoints, the earliest-fit scan of a two-dimensional (nodes, BB) profile, the
reservation of a window, the first fit of a job's pieces on named BB nodes and the score term
of a wait. The pool plan walk (:mod:`~bbopt.planner.jit.pool`), named placement
(:mod:`~bbopt.planner.jit.named`, :mod:`~bbopt.planner.jit.named_conservative`) and
conservative-bb's compression (:mod:`~bbopt.planner.jit.compression`) call them; each keeps the
floating-point operations of the Python code it translates, in the same order.

Kopanski & Rzadca, Euro-Par 2021, Section 3.2 (a job starts where its nodes and its burst
buffer are free for its whole walltime; a reservation holds both) and Section 4.1 (pieces of
equal size placed first fit on the BB nodes).

Layout of a profile: ``prof[rows, cap]``, row 0 the breakpoints, the next rows the free amount
of each dimension on the segment starting there (nodes, pool BB, then each BB node's space);
a scan reads a breakpoint row ``T`` and two free rows ``F0``, ``F1`` (any strides). No
fastmath: every sum, product and comparison is the IEEE operation of the Python code.
"""

from __future__ import annotations

import math

import numpy as np

from bbopt.planner.jit.cache import kernel


@kernel(inline=True)
def bisect_left(a: np.ndarray, x: float, lo: int, hi: int) -> int:
    """``bisect.bisect_left(a, x, lo, hi)``."""
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@kernel(inline=True)
def bisect_right(a: np.ndarray, x: float, lo: int, hi: int) -> int:
    """``bisect.bisect_right(a, x, lo, hi)``."""
    while lo < hi:
        mid = (lo + hi) // 2
        if x < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@kernel(inline=True)
def segment(T: np.ndarray, t: float, length: int) -> int:
    """The segment holding ``t``: ``max(bisect_right(T, t) - 1, 0)`` (distinct breakpoints)."""
    i = bisect_left(T, t, 0, length)
    return max(i if i < length and T[i] == t else i - 1, 0)


@kernel(inline=True)
def room(F0: np.ndarray, F1: np.ndarray, i: int, stop: int, need0: float, need1: float,
         add0: float, add1: float) -> int:
    """The first segment of ``[i, stop)`` with room for the demand, ``F + add >= need`` in
    both rows, else ``stop``. (``add`` 0.0 where the Python test is ``F >= need``: ``x + 0.0``
    compares as ``x`` for every float.)"""
    while i < stop and not (F0[i] + add0 >= need0 and F1[i] + add1 >= need1):
        i += 1
    return i


@kernel(inline=True)
def short(F0: np.ndarray, F1: np.ndarray, a: int, b: int, need0: float, need1: float,
          add0: float, add1: float) -> int:
    """The first segment of ``[a, b)`` without room for the demand (``F + add < need`` in a
    row), else -1."""
    for r in range(a, b):
        if F0[r] + add0 < need0 or F1[r] + add1 < need1:
            return r
    return -1


@kernel(inline=True)
def window(T: np.ndarray, F0: np.ndarray, F1: np.ndarray, i: int, n: int, now: float,
           duration: float, need0: float, need1: float, add0: float,
           add1: float) -> tuple[float, int, int]:
    """The earliest fit from segment ``i``: the first start ``max(T[i], now)`` among the
    segments before ``n`` from which every segment up to ``start + duration`` has room
    (:func:`room`); ``(start, i, e)`` with ``e`` the first breakpoint at or after the end, or
    ``(inf, n, n)``. ``profile_scans.earliest_fit2`` and the scans of ``PlanModel._run``,
    ``_earliest_pool`` and ``planner.lists.pool_window`` (``now`` -inf: ``start = T[i]``).
    The end is found by the same walk that checks the segments (the breakpoints are sorted, so
    it is ``bisect_left``'s index; a window holds a few segments, where a walk beats a binary
    search)."""
    while i < n:
        i = room(F0, F1, i, n, need0, need1, add0, add1)
        if i == n:
            break
        start = T[i] if T[i] > now else now
        end = start + duration
        e = i + 1
        while e < n and T[e] < end:
            if F0[e] + add0 < need0 or F1[e] + add1 < need1:  # (short: no room there)
                break
            e += 1
        else:
            return start, i, e
        i = e + 1
    return math.inf, n, n


@kernel(inline=True)
def insert(prof: np.ndarray, length: int, j: int, t: float) -> int:
    """A breakpoint ``t`` at index ``j`` with the rows of segment ``j - 1``; the new length."""
    for r in range(prof.shape[0]):  # (row by row: each row is contiguous)
        for q in range(length, j, -1):
            prof[r, q] = prof[r, q - 1]
    prof[0, j] = t
    for r in range(1, prof.shape[0]):
        prof[r, j] = prof[r, j - 1]
    return length + 1


@kernel(inline=True)
def add(prof: np.ndarray, i: int, j: int, amount: np.ndarray | tuple, sign: float) -> None:
    """Add ``sign * amount`` (``sign`` 1 or -1: exactly a sum or difference) on ``i .. j-1``;
    ``amount`` an array or a tuple of floats (no allocation on a hot path)."""
    for d in range(len(amount)):  # (row by row: each row is contiguous)
        a = sign * amount[d]
        for q in range(i, j):
            prof[1 + d, q] += a


@kernel(inline=True)
def reserve(prof: np.ndarray, length: int, i: int, j: int, end: float,
            demand: np.ndarray | tuple) -> int:
    """Take ``demand`` on segments ``i .. j - 1`` of a profile whose breakpoint ``j`` is the
    first at or after ``end`` (``planner.lists.reserve_named``, ``PlanModel._run``'s
    reservation); the new length."""
    if prof[0, j] != end:
        length = insert(prof, length, j, end)
    add(prof, i, j, demand, -1.0)
    return length


@kernel(inline=True)
def least(prof: np.ndarray, i: int, j: int, low: np.ndarray, top: int) -> None:
    """``low[d]``: the least of row ``top + d`` over segments ``i .. j - 1``."""
    for d in range(low.shape[0]):
        f = prof[top + d, i]
        for q in range(i + 1, j):
            g = prof[top + d, q]
            if g < f:
                f = g
        low[d] = f


@kernel(inline=True)
def first_fit(free: np.ndarray, todo: int, bb: float, ftol: float, cnt: np.ndarray) -> int:
    """``planner.pieces.first_fit_runs``: ``cnt`` pieces per BB node; the pieces left without
    room."""
    for node in range(cnt.shape[0]):
        cnt[node] = 0
    if bb <= 0:
        return 0
    piece = bb / todo
    lack = piece - ftol
    guard = 1e-9 * piece
    limit = piece - guard
    for node in range(free.shape[0]):
        f = free[node]
        if f < lack:
            continue
        x = f - lack
        k = math.floor(x / piece) + 1
        m = x - (k - 1) * piece
        if not (guard < m < limit and k <= 1000):
            k = 0
            left = f
            while left >= lack and k < todo:
                left -= piece
                k += 1
        if k >= todo:
            cnt[node] = todo
            return 0
        cnt[node] = k
        todo -= k
    return todo


@kernel(inline=True)
def demand_of(n: float, bb: float, cnt: np.ndarray, demand: np.ndarray) -> None:
    """``(nodes, bb, bytes per BB node)``, the pieces summed one by one (``_demand``)."""
    demand[0] = n
    demand[1] = bb
    for node in range(cnt.shape[0]):
        a = 0.0
        for _ in range(cnt[node]):
            a += bb / n
        demand[2 + node] = a


@kernel(inline=True)
def term(wait: float, alpha: int) -> float:
    """``PlanModel._term`` for alpha 1, 2, 3: ``max(wait, 0)`` times itself."""
    wait = wait if wait > 0.0 else 0.0
    return wait if alpha == 1 else wait * wait if alpha == 2 else wait * wait * wait


@kernel(inline=True)
def copy_profile(src: np.ndarray, dst: np.ndarray) -> int:
    """Copy a plan's profile (up to its sentinel at infinity) into ``dst``; its length."""
    k = 0
    while True:
        for r in range(src.shape[0]):
            dst[r, k] = src[r, k]
        k += 1
        if src[0, k - 1] == math.inf:
            return k

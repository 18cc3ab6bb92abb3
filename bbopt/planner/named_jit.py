"""Plans on named burst-buffer nodes compiled with numba: the placement of
:func:`bbopt.models.plan_named.place`, the plan score of ``PlanModel._run_named`` and the
annealing's incremental walk of ``SwapWalk._walk_named``, with the same floating-point
operations in the same order, so the same starts, pieces and scores, bit for bit.

Kopanski & Rzadca, Euro-Par 2021, Sections 3.3 and 4.1 (12 BB nodes of 40 GB, Algorithm 2):
every annealing move scores the greedy plan of a permutation, each job placed at the earliest
time at which its nodes, its pool BB and its per-node pieces on the BB nodes are free for its
whole walltime (first fit on the BB nodes' least free space over the window; a start now takes
the pieces the engine will give it: first fit on what is free now, or on a proximity platform
the authors' resource filter and proximity placement). The pure-Python functions stay the
reference; ``tests/models/test_plan_named_jit.py`` compares the two.

This module imports numba and is imported only when a plan model on named BB nodes is scored
(:func:`bbopt.planner.named.kernels`); ``BBOPT_NO_JIT=1`` or no numba runs the Python loops.

Layout (:class:`bbopt.planner.named.NamedArrays` builds it). A profile is ``prof[3 + K,
cap]``: breakpoints (ending with the sentinel at infinity), free nodes, free pool BB, then the
free space of each of the ``K`` BB nodes per segment; ``cap`` leaves room for one new
breakpoint per job. The state now is ``now[K + NN]``: the BB nodes' free space now, then, on a
proximity platform, ``1.0`` for each of the ``NN`` compute nodes free now (``NN = 0``
otherwise). A placement's *signature* ``sig[1 + K + W]`` tells two placements apart as the
Python walk compares its pieces: the kind (``NONE``: fits nowhere, ``RUNS``: first-fit runs,
``NODES``: compute nodes and runs, a start now on a proximity platform), the pieces per BB node
and the compute nodes as ``W`` 64-bit words. No fastmath.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Rows of the per-job table ``jobs[JOB_ROWS, n]``.
NODES, BB, WALL, EARLY, SUBMIT, BOUND = range(6)
JOB_ROWS = 6
#: Kinds of a placement (its signature's first entry).
NONE, RUNS, NODES_RUNS = 0, 1, 2


@njit(cache=True, inline="always")
def _bisect(T: np.ndarray, x: float, lo: int, hi: int) -> int:
    """``bisect_left(T, x, lo, hi)``."""
    while lo < hi:
        mid = (lo + hi) // 2
        if T[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def _term(wait: float, alpha: int) -> float:
    """``PlanModel._term`` for alpha 1, 2, 3."""
    if wait < 0.0:
        wait = 0.0
    if alpha == 2:
        return wait * wait
    if alpha == 1:
        return wait
    return wait * wait * wait


@njit(cache=True)
def cumulative(jobs: np.ndarray, width: int) -> np.ndarray:
    """Each job's cumulative piece sums (``plan_named.cumulative_pieces``: ``acc[p, c]`` the
    bytes ``c`` pieces take on one BB node, summed piece by piece)."""
    count = jobs.shape[1]
    acc = np.zeros((count, width))
    for p in range(count):
        n = int(jobs[NODES, p])
        b = jobs[BB, p]
        if b <= 0:
            continue
        piece = b / n
        a = 0.0
        for c in range(1, n + 1):
            a += piece
            acc[p, c] = a
    return acc


@njit(cache=True, inline="always")
def _copy(src: np.ndarray, dst: np.ndarray, src_now: np.ndarray, dst_now: np.ndarray) -> int:
    """Copy a profile (up to its sentinel) and a state now; the profile's length."""
    rows = src.shape[0]
    k = 0
    while True:
        for r in range(rows):
            dst[r, k] = src[r, k]
        k += 1
        if src[0, k - 1] == math.inf:
            break
    for x in range(src_now.shape[0]):
        dst_now[x] = src_now[x]
    return k


@njit(cache=True, inline="always")
def _pool_window(prof: np.ndarray, length: int, i: int, n: float, b: float, w: float,
                 tol: float) -> tuple[int, int]:
    """``plan_named._pool_window``: the first window from segment ``i`` on where the nodes and
    the pool BB stay free for ``w``; ``(-1, -1)`` when only the sentinel is left."""
    T, FN, FB = prof[0], prof[1], prof[2]
    last = length - 1
    while True:
        while i < last and (FN[i] < n or FB[i] + tol < b):
            i += 1
        if i == last:
            return -1, -1
        j = _bisect(T, T[i] + w, i + 1, length)
        q = i + 1
        while q < j and FN[q] >= n and FB[q] + tol >= b:
            q += 1
        if q < j:
            i = q + 1
            continue
        return i, j


@njit(cache=True, inline="always")
def _reserve(prof: np.ndarray, length: int, i: int, j: int, end: float, n: float, b: float,
             cnt: np.ndarray, acc_p: np.ndarray) -> int:
    """``plan_named.reserve``: take ``n`` nodes, ``b`` pool bytes and ``acc_p[cnt[node]]`` on
    each BB node from segments ``i .. j - 1``, splitting the segment ``end`` falls in; the new
    length."""
    rows = prof.shape[0]
    if prof[0, j] != end:
        for q in range(length, j, -1):
            for r in range(rows):
                prof[r, q] = prof[r, q - 1]
        prof[0, j] = end
        for r in range(1, rows):
            prof[r, j] = prof[r, j - 1]
        length += 1
    k = rows - 3
    for q in range(i, j):
        prof[1, q] -= n
        prof[2, q] -= b
        for node in range(k):
            c = cnt[node]
            if c > 0:
                prof[3 + node, q] -= acc_p[c]
    return length


@njit(cache=True, inline="always")
def _least(prof: np.ndarray, i: int, j: int, least: np.ndarray) -> None:
    """Each BB node's least free space over segments ``i .. j - 1``."""
    k = least.shape[0]
    for node in range(k):
        f = prof[3 + node, i]
        for q in range(i + 1, j):
            g = prof[3 + node, q]
            if g < f:
                f = g
        least[node] = f


@njit(cache=True, inline="always")
def _first_fit(free: np.ndarray, todo: int, piece: float, short: float, guard: float,
               limit: float, cnt: np.ndarray) -> int:
    """``bb_nodes.first_fit_runs`` on the free space ``free``: the pieces per BB node in
    ``cnt``; the pieces left without room (0: it fits)."""
    for node in range(free.shape[0]):
        f = free[node]
        if f < short:
            continue
        x = f - short
        k = math.floor(x / piece) + 1
        m = x - (k - 1) * piece
        if not (guard < m < limit and k <= 1000):
            k = 0
            left = f
            while left >= short and k < todo:
                left -= piece
                k += 1
        if k >= todo:
            cnt[node] = todo
            return 0
        cnt[node] = k
        todo -= k
    return todo


@njit(cache=True, inline="always")
def _fits_now(prof: np.ndarray, j: int, cnt: np.ndarray, acc_p: np.ndarray,
              ktol: np.ndarray, least: np.ndarray) -> bool:
    """``plan_named._reserve_now``'s test: each BB node keeps room for its pieces over
    segments ``0 .. j - 1``."""
    _least(prof, 0, j, least)
    for node in range(cnt.shape[0]):
        c = cnt[node]
        if c > 0 and least[node] + ktol[node] < acc_p[c]:
            return False
    return True


@njit(cache=True)
def _contiguous(now: np.ndarray, k: int, n: int, out: np.ndarray, runs: np.ndarray) -> int:
    """``bb_nodes.contiguous_nodes`` on the compute nodes free now (``now[k + x] == 1``): the
    chosen ids, ascending, in ``out``; their count, or ``-1`` (``None``: fewer are free)."""
    nn = now.shape[0] - k
    free = 0
    r = 0
    x = 0
    while x < nn:  # runs of consecutive free ids: runs[0] lengths, runs[1] first ids
        if now[k + x] == 1.0:
            first = x
            while x < nn and now[k + x] == 1.0:
                x += 1
            runs[0, r] = x - first
            runs[1, r] = first
            free += x - first
            r += 1
        else:
            x += 1
    if n > free:
        return -1
    if n <= 0:
        return 0
    best = -1
    for q in range(r):  # the shortest run that holds n, the lowest of equal ones
        if runs[0, q] >= n and (best < 0 or runs[0, q] < runs[0, best]):
            best = q
    if best >= 0:
        for c in range(n):
            out[c] = runs[1, best] + c
        return n
    # The longest runs first (the highest of equal ones), the last cut to what is needed.
    got = 0
    mark = np.zeros(nn, dtype=np.bool_)
    used = np.zeros(r, dtype=np.bool_)
    while got < n:
        best = -1
        for q in range(r):
            if not used[q] and (best < 0 or runs[0, q] > runs[0, best]
                                or (runs[0, q] == runs[0, best] and runs[1, q] > runs[1, best])):
                best = q
        used[best] = True
        take = min(runs[0, best], n - got)
        for c in range(take):
            mark[runs[1, best] + c] = True
        got += take
    c = 0
    for x in range(nn):
        if mark[x]:
            out[c] = x
            c += 1
    return n


@njit(cache=True, inline="always")
def _take(now: np.ndarray, k: int, ids: np.ndarray, count: int, sig: np.ndarray,
          words: int) -> None:
    """Drop the compute nodes ``ids[:count]`` from the free ones and write them in the
    signature's words."""
    base = sig.shape[0] - words
    for c in range(count):
        x = ids[c]
        now[k + x] = 0.0
        sig[base + x // 64] |= np.int64(1) << np.int64(x % 64)


@njit(cache=True)
def place(prof: np.ndarray, length: int, now: np.ndarray, jobs: np.ndarray, acc: np.ndarray,
          p: int, prox: np.ndarray, ktol: np.ndarray, ftol: float, tol: float,
          sig: np.ndarray, scratch: np.ndarray, ids: np.ndarray, runs: np.ndarray
          ) -> tuple[float, int]:
    """``plan_named.place``: job ``p`` at its earliest start in ``prof`` (changed in place,
    with the state ``now``), its signature in ``sig``; ``(start, new length)``, start ``inf``
    when it fits nowhere. ``prox``: the proximity rows (``-1`` padded), no rows without
    proximity; ``scratch[2, K]``, ``ids[NN]`` and ``runs[2, NN]`` are work space."""
    k = prof.shape[0] - 3
    words = sig.shape[0] - 1 - k
    proximity = prox.shape[0] > 0
    for x in range(sig.shape[0]):
        sig[x] = 0
    cnt = sig[1:1 + k]
    n = jobs[NODES, p]
    b = jobs[BB, p]
    w = jobs[WALL, p]
    acc_p = acc[p]
    T = prof[0]
    i = _bisect(T, jobs[EARLY, p], 0, length)
    if b <= 0:
        i, j = _pool_window(prof, length, i, n, b, w, tol)
        if i < 0:
            return math.inf, length
        start = T[i]
        length = _reserve(prof, length, i, j, start + w, n, b, cnt, acc_p)
        if i == 0 and proximity:
            sig[0] = NODES_RUNS
            got = _contiguous(now, k, int(n), ids, runs)
            if got > 0:
                _take(now, k, ids, got, sig, words)
            return start, length
        sig[0] = RUNS
        return start, length
    todo = int(n)
    piece = b / n
    short = piece - ftol
    guard = 1e-9 * piece
    limit = piece - guard
    least = scratch[0]
    left = scratch[1]
    while True:
        i, j = _pool_window(prof, length, i, n, b, w, tol)
        if i < 0:
            return math.inf, length
        start = T[i]
        end = start + w
        if i == 0 and proximity:
            # Now, on a proximity platform: the engine's compute nodes and pieces.
            got = _contiguous(now, k, todo, ids, runs)
            ok = got >= 0
            if ok:
                for node in range(k):
                    left[node] = now[node]
                for c in range(got):  # proximity_pieces, in ascending compute node order
                    x = ids[c]
                    placed = False
                    for q in range(prox.shape[1]):
                        node = prox[x, q]
                        if node < 0:
                            break
                        if left[node] >= short:
                            left[node] -= piece
                            cnt[node] += 1
                            placed = True
                            break
                    if not placed:
                        ok = False
                        break
            if ok and _fits_now(prof, j, cnt, acc_p, ktol, least):
                length = _reserve(prof, length, 0, j, end, n, b, cnt, acc_p)
                for node in range(k):
                    now[node] = left[node]
                sig[0] = NODES_RUNS
                _take(now, k, ids, got, sig, words)
                return start, length
            for node in range(k):
                cnt[node] = 0
            i = 1
            continue
        if i == 0:
            # Now: the engine's pieces (first fit on what is free now), if they stay free.
            if (_first_fit(now[:k], todo, piece, short, guard, limit, cnt) == 0
                    and _fits_now(prof, j, cnt, acc_p, ktol, least)):
                length = _reserve(prof, length, 0, j, end, n, b, cnt, acc_p)
                for node in range(k):
                    f = now[node]
                    for _ in range(cnt[node]):
                        f -= piece
                    now[node] = f
                sig[0] = RUNS
                return start, length
            for node in range(k):
                cnt[node] = 0
            i = 1
            continue
        # First fit on each BB node's least free space in the window.
        _least(prof, i, j, least)
        if _first_fit(least, todo, piece, short, guard, limit, cnt):
            for node in range(k):
                cnt[node] = 0
            i += 1
            continue
        length = _reserve(prof, length, i, j, end, n, b, cnt, acc_p)
        sig[0] = RUNS
        return start, length


@njit(cache=True)
def score_named(jobs: np.ndarray, acc: np.ndarray, base: np.ndarray, base_now: np.ndarray,
                work: np.ndarray, work_now: np.ndarray, order: np.ndarray, alpha: int,
                threshold: float, starts: np.ndarray, prox: np.ndarray, ktol: np.ndarray,
                ftol: float, tol: float, sig: np.ndarray, scratch: np.ndarray,
                ids: np.ndarray, runs: np.ndarray) -> float:
    """``PlanModel._run_named``: the score of the greedy plan of ``order`` on a copy of
    ``base``, each job's start in ``starts``; ``inf`` as soon as the partial score plus the
    bounds of the jobs still to place exceeds ``threshold`` (``inf``: no check)."""
    length = _copy(base, work, base_now, work_now)
    check = threshold != math.inf
    rest = 0.0
    if check:
        for q in range(order.shape[0]):
            rest += jobs[BOUND, order[q]]
    score = 0.0
    for q in range(order.shape[0]):
        p = order[q]
        start, length = place(work, length, work_now, jobs, acc, p, prox, ktol, ftol, tol,
                              sig, scratch, ids, runs)
        if start != math.inf:
            score += _term(start - jobs[SUBMIT, p], alpha)
        else:
            score += jobs[BOUND, p]
        starts[p] = start
        if check:
            rest -= jobs[BOUND, p]
            if score + rest > threshold:
                return math.inf
    return score


@njit(cache=True)
def walk_named(jobs: np.ndarray, acc: np.ndarray, orders: np.ndarray, vals: np.ndarray,
               sigs: np.ndarray, pool: np.ndarray, pool_now: np.ndarray, side: np.ndarray,
               work: np.ndarray, work_now: np.ndarray, cur: int, lo: int, hi: int,
               diverged: bool, alpha: int, stride: int, threshold: float, prox: np.ndarray,
               ktol: np.ndarray, ftol: float, tol: float, sig: np.ndarray,
               scratch: np.ndarray, ids: np.ndarray, runs: np.ndarray) -> float:
    """``SwapWalk._walk_named``: the plan of the current order (buffer ``cur``) with positions
    ``lo`` and ``hi`` swapped, written to the other buffer; its score, or ``inf`` when the
    early-rejection rule rejects it for ``threshold``.

    Per buffer ``b``, as :func:`bbopt.models.plan_jit.walk_pool`: ``orders[b]``, ``vals[b,
    0]`` starts, ``vals[b, 1]`` score terms, ``vals[b, 2]`` partial scores, and ``sigs[b, p]``
    job ``p``'s placement signature; snapshot ``s`` (profile and state now before position
    ``s * stride``) is ``pool[s, side[b, s]]``, ``pool_now[s, side[b, s]]``. A job kept its
    placement only if it kept its start and its signature."""
    new = 1 - cur
    count = orders.shape[1]
    order = orders[new]
    for q in range(count):
        order[q] = orders[cur, q]
        vals[new, 0, q] = vals[cur, 0, q]
        vals[new, 1, q] = vals[cur, 1, q]
        vals[new, 2, q] = vals[cur, 2, q]
        for x in range(sigs.shape[2]):
            sigs[new, q, x] = sigs[cur, q, x]
    vals[new, 2, count] = vals[cur, 2, count]
    order[lo], order[hi] = order[hi], order[lo]
    for s in range(side.shape[1]):
        side[new, s] = side[cur, s]
    start_of, term_of, parts = vals[new, 0], vals[new, 1], vals[new, 2]
    cur_start = vals[cur, 0]
    base = lo - lo % stride
    slot = side[cur, base // stride]
    length = _copy(pool[base // stride, slot], work, pool_now[base // stride, slot], work_now)
    check = threshold != math.inf
    score = parts[base]
    rest = 0.0
    if check:
        for q in range(count):
            rest += jobs[BOUND, order[q]]
        for q in range(base):
            rest -= jobs[BOUND, order[q]]
            if parts[q + 1] + rest > threshold:
                return math.inf
    tail = hi + 1
    converged = count
    snap_at = base + stride
    width = sig.shape[0]
    for q in range(base, count):
        if q == tail and not diverged:
            converged = q
            break
        p = order[q]
        if q == snap_at:
            s = q // stride
            slot = 1 - side[cur, s]
            _copy(work, pool[s, slot], work_now, pool_now[s, slot])
            side[new, s] = slot
            snap_at += stride
        start, length = place(work, length, work_now, jobs, acc, p, prox, ktol, ftol, tol,
                              sig, scratch, ids, runs)
        term = _term(start - jobs[SUBMIT, p], alpha) if start != math.inf else jobs[BOUND, p]
        same = start == cur_start[p]
        if same:
            for x in range(width):
                if sig[x] != sigs[cur, p, x]:
                    same = False
                    break
        if not same:
            diverged = True
            start_of[p] = start
            term_of[p] = term
            for x in range(width):
                sigs[new, p, x] = sig[x]
        score += term
        parts[q + 1] = score
        if check:
            rest -= jobs[BOUND, p]
            if score + rest > threshold:
                return math.inf
    for q in range(converged, count):
        p = order[q]
        score += term_of[p]
        parts[q + 1] = score
        if check:
            rest -= jobs[BOUND, p]
            if score + rest > threshold:
                return math.inf
    return score


@njit(cache=True)
def anneal_named(jobs: np.ndarray, acc: np.ndarray, orders: np.ndarray, vals: np.ndarray,
                 sigs: np.ndarray, pool: np.ndarray, pool_now: np.ndarray, side: np.ndarray,
                 work: np.ndarray, work_now: np.ndarray, alpha: int, stride: int,
                 prox: np.ndarray, ktol: np.ndarray, ftol: float, tol: float, sig: np.ndarray,
                 scratch: np.ndarray, ids: np.ndarray, runs: np.ndarray, first: np.ndarray,
                 second: np.ndarray, slack: np.ndarray, state: np.ndarray, fstate: np.ndarray,
                 best_order: np.ndarray) -> None:
    """``state[2]`` moves of the annealing's loop (``solve_annealing``: a swap of positions
    ``first[s]`` and ``second[s]`` is accepted when its score is at most ``current +
    temperature * slack[s]``) from step ``state[1]``, each scored by :func:`walk_named` from
    the current buffer ``state[0]``. ``state``: ``[cur, step, count, accepted, improved,
    aborted, evaluations]``, ``fstate``: ``[current, temperature, best]``, updated in place;
    ``best_order`` takes the order of every improvement."""
    cur = state[0]
    step = state[1]
    end = step + state[2]
    accepted, improved, aborted, evaluations = state[3], state[4], state[5], state[6]
    current, temperature, best = fstate[0], fstate[1], fstate[2]
    while step < end:
        a, b, u = first[step], second[step], slack[step]
        step += 1
        if a == b:
            accepted += 1
            continue
        threshold = current + temperature * u
        lo, hi = (a, b) if a < b else (b, a)
        score = walk_named(jobs, acc, orders, vals, sigs, pool, pool_now, side, work,
                           work_now, cur, lo, hi, False, alpha, stride, threshold, prox, ktol,
                           ftol, tol, sig, scratch, ids, runs)
        evaluations += 1
        if score == math.inf:
            aborted += 1
        if score <= threshold:
            cur = 1 - cur
            current = score
            accepted += 1
            if score < best:
                best = score
                for q in range(best_order.shape[0]):
                    best_order[q] = orders[cur, q]
                improved += 1
    state[0], state[1] = cur, step
    state[3], state[4], state[5], state[6] = accepted, improved, aborted, evaluations
    fstate[0], fstate[2] = current, best

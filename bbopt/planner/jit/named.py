"""Named burst-buffer nodes compiled with numba (Kopanski & Rzadca, Euro-Par 2021, Sections
3.2, 3.3, 4.1): the plan model's placement and annealing walk (:mod:`bbopt.models.plan_named`,
``PlanModel._run_named``, ``SwapWalk._walk_named``) and conservative-bb's decision
(:func:`bbopt.policies.conservative._replan`), with the same floating-point
operations in the same order as those Python loops, the reference: the same starts, pieces and
scores, bit for bit (``tests/planner/jit/test_named.py``). Imported on first use
(:func:`bbopt.planner.named.kernels`; ``BBOPT_NO_JIT=1`` or no numba: the Python loops).

Layout: ``prof[3 + K, cap]`` breakpoints, free nodes, pool BB, each BB node's space (a plan's
with a sentinel at infinity); ``now[K + NN]`` the BB nodes now and 1.0 per free compute node
(proximity); ``consts``: pool slack, piece tolerance, BB node slacks; ``sig[1 + K + W]`` a
placement (kind, pieces per BB node, compute nodes in ``W`` words). No fastmath.

Length: one module, because numba checks a cached function against its own file only (a
helper changed in another file would leave its callers' cached code stale).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Rows of the per-job table ``jobs[6, n]`` of a plan.
NODES, BB, WALL, EARLY, SUBMIT, BOUND = range(6)
#: Kinds of a placement: fits nowhere, first-fit runs, compute nodes and runs (now, proximity).
NONE, RUNS, NODES_RUNS = 0, 1, 2


@njit(cache=True, inline="always")
def _bisect(T, x, lo, hi):
    """``bisect_left(T, x, lo, hi)``."""
    while lo < hi:
        mid = (lo + hi) // 2
        if T[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(cache=True, inline="always")
def _segment(T, t, length):
    """The segment holding ``t``: ``max(bisect_right(T, t) - 1, 0)`` (distinct breakpoints)."""
    i = _bisect(T, t, 0, length)
    return max(i if i < length and T[i] == t else i - 1, 0)


@njit(cache=True, inline="always")
def _insert(prof, length, j, t):
    """A breakpoint ``t`` at index ``j`` with the row of segment ``j - 1``; the new length."""
    for r in range(prof.shape[0]):  # (row by row: each row is contiguous)
        for q in range(length, j, -1):
            prof[r, q] = prof[r, q - 1]
    prof[0, j] = t
    for r in range(1, prof.shape[0]):
        prof[r, j] = prof[r, j - 1]
    return length + 1


@njit(cache=True, inline="always")
def _add(prof, i, j, amount, sign):
    """Add ``sign * amount`` (``sign`` 1 or -1: exactly a sum or difference) on ``i .. j-1``."""
    for d in range(amount.shape[0]):  # (row by row: each row is contiguous)
        a = sign * amount[d]
        for q in range(i, j):
            prof[1 + d, q] += a


@njit(cache=True, inline="always")
def _least(prof, i, j, least, top):
    """``least[d]``: the least of row ``top + d`` over segments ``i .. j - 1``."""
    for d in range(least.shape[0]):
        f = prof[top + d, i]
        for q in range(i + 1, j):
            g = prof[top + d, q]
            if g < f:
                f = g
        least[d] = f


@njit(cache=True, inline="always")
def _first_fit(free, todo, bb, ftol, cnt):
    """``bb_nodes.first_fit_runs``: ``cnt`` pieces per BB node; the pieces left without room."""
    for node in range(cnt.shape[0]):
        cnt[node] = 0
    if bb <= 0:
        return 0
    piece = bb / todo
    short = piece - ftol
    guard = 1e-9 * piece
    limit = piece - guard
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
def _demand(n, bb, cnt, demand):
    """``(nodes, bb, bytes per BB node)``, the pieces summed one by one (``_demand``)."""
    demand[0] = n
    demand[1] = bb
    for node in range(cnt.shape[0]):
        a = 0.0
        for _ in range(cnt[node]):
            a += bb / n
        demand[2 + node] = a


@njit(cache=True, inline="always")
def _term(wait, alpha):
    """``PlanModel._term`` for alpha 1, 2, 3: ``max(wait, 0)`` times itself."""
    wait = wait if wait > 0.0 else 0.0
    return wait if alpha == 1 else wait * wait if alpha == 2 else wait * wait * wait


@njit(cache=True, inline="always")
def _copy(src, dst, src_now, dst_now):
    """Copy a plan's profile (up to its sentinel) and state now; the profile's length."""
    k = 0
    while True:
        for r in range(src.shape[0]):
            dst[r, k] = src[r, k]
        k += 1
        if src[0, k - 1] == math.inf:
            break
    for x in range(src_now.shape[0]):
        dst_now[x] = src_now[x]
    return k


@njit(cache=True, inline="always")
def _pool_window(prof, length, i, n, b, w, tol):
    """``planner.lists.pool_window``: ``(i, j)``; ``(-1, -1)`` when only the sentinel is left."""
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
        if q == j:
            return i, j
        i = q + 1


@njit(cache=True, inline="always")
def _reserve(prof, length, i, j, end, demand):
    """``planner.lists.reserve_named``: take ``demand`` on ``i .. j - 1``; the new length."""
    if prof[0, j] != end:
        length = _insert(prof, length, j, end)
    _add(prof, i, j, demand, -1.0)
    return length


@njit(cache=True, inline="always")
def _fits_now(prof, j, cnt, demand, consts, least):
    """``plan_named._reserve_now``'s test: the pieces stay free on segments ``0 .. j - 1``."""
    _least(prof, 0, j, least, 3)
    for node in range(cnt.shape[0]):
        if cnt[node] > 0 and least[node] + consts[2 + node] < demand[2 + node]:
            return False
    return True


@njit(cache=True)
def _contiguous(now, k, n, out, runs):
    """``bb_nodes.contiguous_nodes`` on ``now[k:]``: the ids in ``out``; their count or -1."""
    nn = now.shape[0] - k
    r = x = 0
    while x < nn:  # runs of consecutive free ids: runs[0] lengths, runs[1] first ids
        if now[k + x] == 1.0:
            first = x
            while x < nn and now[k + x] == 1.0:
                x += 1
            runs[0, r], runs[1, r] = x - first, first
            r += 1
        else:
            x += 1
    if n > runs[0, :r].sum():
        return -1
    best = -1
    for q in range(r):  # the shortest run that holds n, the lowest of equal ones
        if runs[0, q] >= n and (best < 0 or runs[0, q] < runs[0, best]):
            best = q
    if best >= 0:
        out[:n] = runs[1, best] + np.arange(n)
        return n
    # The longest runs first (the highest of equal ones), the last cut to what is needed.
    mark = np.zeros(nn, dtype=np.bool_)
    used = np.zeros(r, dtype=np.bool_)
    got = 0
    while got < n:
        best = -1
        for q in range(r):
            if not used[q] and (best < 0 or runs[0, q] > runs[0, best] or (
                    runs[0, q] == runs[0, best] and runs[1, q] > runs[1, best])):
                best = q
        used[best] = True
        take = min(runs[0, best], n - got)
        mark[runs[1, best]:runs[1, best] + take] = True
        got += take
    out[:n] = np.nonzero(mark)[0]
    return n


@njit(cache=True)
def place(prof: np.ndarray, length: int, now: np.ndarray, jobs: np.ndarray, p: int,
          prox: np.ndarray, consts: np.ndarray, sig: np.ndarray, work: np.ndarray,
          iwork: np.ndarray) -> tuple[float, int]:
    """``plan_named.place``, its signature in ``sig``: ``(start or inf, new length)``."""
    k = prof.shape[0] - 3
    sig[:] = 0
    cnt = sig[1:1 + k]
    least, left, demand = work[0, :k], work[1, :k], work[2]
    ids, runs = iwork[0], iwork[1:]
    n, b, w = jobs[NODES, p], jobs[BB, p], jobs[WALL, p]
    todo = int(n)
    T = prof[0]
    i = _bisect(T, jobs[EARLY, p], 0, length)
    while True:
        i, j = _pool_window(prof, length, i, n, b, w, consts[0])
        if i < 0:
            return math.inf, length
        start, end = T[i], T[i] + w
        if b <= 0:  # no pieces: the nodes (and, now on a proximity platform, their ids)
            _demand(n, b, cnt, demand)
            length = _reserve(prof, length, i, j, end, demand)
            sig[0] = RUNS
            if i == 0 and prox.shape[0] > 0:
                sig[0] = NODES_RUNS
                got = _contiguous(now, k, todo, ids, runs)
                for c in range(max(got, 0)):
                    _take_node(now, k, ids[c], sig)
            return start, length
        if i == 0 and prox.shape[0] > 0:  # now, by proximity: the engine's nodes and pieces
            got = _contiguous(now, k, todo, ids, runs)
            ok = got >= 0
            left[:] = now[:k]
            for c in range(max(got, 0)):  # proximity_pieces, ascending compute nodes
                ok = False
                for q in range(prox.shape[1]):
                    node = prox[ids[c], q]
                    if node < 0:
                        break
                    if left[node] >= b / n - consts[1]:
                        left[node] -= b / n
                        cnt[node] += 1
                        ok = True
                        break
                if not ok:
                    break
            _demand(n, b, cnt, demand)
            if ok and _fits_now(prof, j, cnt, demand, consts, least):
                length = _reserve(prof, length, 0, j, end, demand)
                now[:k] = left
                sig[0] = NODES_RUNS
                for c in range(got):
                    _take_node(now, k, ids[c], sig)
                return start, length
            i = 1
            cnt[:] = 0
            continue
        if i == 0:  # now: the engine's pieces (first fit on what is free now) if they stay free
            if _first_fit(now[:k], todo, b, consts[1], cnt) == 0:
                _demand(n, b, cnt, demand)
                if _fits_now(prof, j, cnt, demand, consts, least):
                    length = _reserve(prof, length, 0, j, end, demand)
                    for node in range(k):  # BBNodeSpace.take_pieces' sums
                        for _ in range(cnt[node]):
                            now[node] -= b / n
                    sig[0] = RUNS
                    return start, length
            i = 1
            continue
        # First fit on each BB node's least free space in the window.
        _least(prof, i, j, least, 3)
        if _first_fit(least, todo, b, consts[1], cnt):
            i += 1
            continue
        _demand(n, b, cnt, demand)
        length = _reserve(prof, length, i, j, end, demand)
        sig[0] = RUNS
        return start, length


@njit(cache=True, inline="always")
def _take_node(now, k, x, sig):
    """Compute node ``x`` is no longer free now; it goes in the signature's words."""
    now[k + x] = 0.0
    sig[1 + k + x // 64] |= np.int64(1) << np.int64(x % 64)


@njit(cache=True)
def walk_named(jobs: np.ndarray, orders: np.ndarray, vals: np.ndarray, sigs: np.ndarray,
               pool: np.ndarray, pool_now: np.ndarray, side: np.ndarray, dirty: np.ndarray,
               cur: int, lo: int,
               hi: int, diverged: bool, alpha: int, stride: int, threshold: float,
               prox: np.ndarray, consts: np.ndarray, sig: np.ndarray, fwork: np.ndarray,
               iwork: np.ndarray) -> float:
    """``SwapWalk._walk_named`` from buffer ``cur`` into the other, as
    :func:`bbopt.planner.jit.pool.walk_pool` (``sigs[b, p]``: job ``p``'s signature, ``pool_now``
    the snapshots' states now, ``pool[-1, 0]`` work space); the score or ``inf``. Only what the
    last move wrote is copied back first (``dirty``: count, first partial, swap, changed jobs;
    ``dirty[0] < 0``: all)."""
    new, count = 1 - cur, orders.shape[1]
    order = orders[new]
    if dirty[0] < 0:
        order[:] = orders[cur]
        vals[new] = vals[cur]
        sigs[new] = sigs[cur]
    else:
        order[dirty[2]], order[dirty[3]] = orders[cur, dirty[2]], orders[cur, dirty[3]]
        vals[new, 2, dirty[1]:] = vals[cur, 2, dirty[1]:]
        for p in dirty[4:4 + dirty[0]]:
            vals[new, 0, p], vals[new, 1, p] = vals[cur, 0, p], vals[cur, 1, p]
            sigs[new, p] = sigs[cur, p]
    side[new] = side[cur]
    order[lo], order[hi] = order[hi], order[lo]
    dirty[0], dirty[1], dirty[2], dirty[3] = 0, lo - lo % stride + 1, lo, hi
    start_of, term_of, parts, cur_start = vals[new, 0], vals[new, 1], vals[new, 2], vals[cur, 0]
    work, work_now, base = pool[-1, 0], pool_now[-1, 0], lo - lo % stride
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
    converged = False
    snap_at = base + stride
    for q in range(base, count):
        p = order[q]
        # Positions lo..hi kept their placements: so does every later job (its term known).
        converged = converged or (q == hi + 1 and not diverged)
        if not converged:
            if q == snap_at:
                s = q // stride
                slot = 1 - side[cur, s]
                _copy(work, pool[s, slot], work_now, pool_now[s, slot])
                side[new, s] = slot
                snap_at += stride
            start, length = place(work, length, work_now, jobs, p, prox, consts, sig, fwork,
                                  iwork)
            term = _term(start - jobs[SUBMIT, p], alpha) if start != math.inf else jobs[BOUND, p]
            if start != cur_start[p] or not np.array_equal(sig, sigs[cur, p]):
                diverged = True
                start_of[p] = start
                term_of[p] = term
                sigs[new, p] = sig
                dirty[4 + dirty[0]] = p
                dirty[0] += 1
        score += term_of[p]
        parts[q + 1] = score
        if check:
            rest -= jobs[BOUND, p]
            if score + rest > threshold:
                return math.inf
    return score


@njit(cache=True)
def anneal_named(jobs: np.ndarray, orders: np.ndarray, vals: np.ndarray, sigs: np.ndarray,
                 pool: np.ndarray, pool_now: np.ndarray, side: np.ndarray, dirty: np.ndarray,
                 alpha: int,
                 stride: int, prox: np.ndarray, consts: np.ndarray, sig: np.ndarray,
                 fwork: np.ndarray, iwork: np.ndarray, first: np.ndarray, second: np.ndarray,
                 slack: np.ndarray, state: np.ndarray, fstate: np.ndarray,
                 best_order: np.ndarray) -> None:
    """``state[2]`` moves of ``solve_annealing``'s loop; ``state``: ``[cur, step, count,
    accepted, improved, aborted, evaluations]``, ``fstate``: ``[current, temperature, best]``."""
    cur, step, end = state[0], state[1], state[1] + state[2]
    accepted, improved, aborted, evaluations = state[3], state[4], state[5], state[6]
    current, temperature, best = fstate[0], fstate[1], fstate[2]
    while step < end:
        a, b, u = first[step], second[step], slack[step]
        step += 1
        if a == b:
            accepted += 1
            continue
        threshold = current + temperature * u
        score = walk_named(jobs, orders, vals, sigs, pool, pool_now, side, dirty, cur, min(a, b),
                           max(a, b), False, alpha, stride, threshold, prox, consts, sig,
                           fwork, iwork)
        evaluations += 1
        if score == math.inf:
            aborted += 1
        if score <= threshold:
            cur = 1 - cur
            current = score
            accepted += 1
            if score < best:
                best = score
                best_order[:] = orders[cur]
                improved += 1
    state[0], state[1] = cur, step
    state[3], state[4], state[5], state[6] = accepted, improved, aborted, evaluations
    fstate[0], fstate[2] = current, best


# ------------------------------------------ the exhaustive search of short queues
@njit(cache=True, inline="always")
def _earliest_pool(prof, length, n, bneed, w):
    """``PlanModel._earliest_pool`` on the nodes and pool BB (the BB a segment must have free:
    ``bneed``), from the first segment: the earliest start."""
    T, FN, FB = prof[0], prof[1], prof[2]
    i = 0
    while True:
        while FN[i] < n or FB[i] < bneed:
            i += 1
        start = T[i]
        end = start + w
        j = i + 1
        while j < length and T[j] < end:
            if FN[j] < n or FB[j] < bneed:
                break
            j += 1
        else:
            return start
        i = j + 1


@njit(cache=True)
def exhaustive_named(jobs: np.ndarray, prof: np.ndarray, length: int, now: np.ndarray,
                     rem: np.ndarray, depth: int, partial: float, best: float,
                     prefix: np.ndarray, order_out: np.ndarray, alpha: int, prox: np.ndarray,
                     consts: np.ndarray, sig: np.ndarray, fwork: np.ndarray,
                     iwork: np.ndarray, profs: np.ndarray, nows: np.ndarray,
                     work: np.ndarray, ints: np.ndarray, visits: np.ndarray) -> float:
    """``visit_named`` of :func:`bbopt.solvers.plan.exhaustive.solve_exhaustive` without its
    memo (which only skips prefixes whose completions cannot beat the best plan, so the same
    plan is found): the node of the prefix ``prefix[:depth]`` with the jobs ``rem`` still to
    place on ``prof`` / ``now``; returns the best score, ``order_out`` takes each better
    plan's order. Per depth ``d``: ``profs[d, c]`` / ``nows[d, c]`` the children's profiles,
    ``work[d]`` their lower bounds, terms and lengths, ``ints[d]`` the jobs in visit order
    and the remaining jobs handed down."""
    visits[0] += 1
    count = rem.shape[0]
    lbs, terms, lens = work[depth, 0], work[depth, 1], work[depth, 2]
    kids, down = ints[depth, 0], ints[depth, 1]
    total = 0.0
    for c in range(count):
        p = rem[c]
        start = _earliest_pool(prof, length, jobs[NODES, p], jobs[BB, p] - consts[0],
                               jobs[WALL, p])
        lbs[c] = _term(start - jobs[SUBMIT, p], alpha)
        total += lbs[c]
    if partial + total >= best:
        return best
    for c in range(count):
        p = rem[c]
        child, child_now = profs[depth, c], nows[depth, c]
        size = _copy(prof, child, now, child_now)
        start, size = place(child, size, child_now, jobs, p, prox, consts, sig, fwork, iwork)
        terms[c] = (_term(start - jobs[SUBMIT, p], alpha) if start != math.inf
                    else jobs[BOUND, p])
        lens[c] = size
    if count == 1:
        score = partial + terms[0]
        if score < best:
            best = score
            order_out[:depth] = prefix[:depth]
            order_out[depth] = rem[0]
        return best
    for c in range(count):  # children by (own term, job), insertion sort
        kids[c] = c
        q = c
        while q > 0 and (terms[kids[q - 1]] > terms[c] or (
                terms[kids[q - 1]] == terms[c] and rem[kids[q - 1]] > rem[c])):
            kids[q] = kids[q - 1]
            q -= 1
        kids[q] = c
    for r in range(count):
        c = kids[r]
        p = rem[c]
        if partial + terms[c] + total - lbs[c] >= best:
            continue
        prefix[depth] = p
        m = 0
        for q in range(count):
            if rem[q] != p:
                down[m] = rem[q]
                m += 1
        best = exhaustive_named(jobs, profs[depth, c], int(lens[c]), nows[depth, c],
                                down[:m].copy(), depth + 1, partial + terms[c], best, prefix,
                                order_out, alpha, prox, consts, sig, fwork, iwork, profs, nows,
                                work, ints, visits)
    return best


# ------------------------------------------ conservative backfilling (profiles: no sentinel)
@njit(cache=True, inline="always")
def _ok(prof, i, tol, demand):
    """``Profile._ok``: every dimension of segment ``i`` holds its demand (with its slack)."""
    for d in range(demand.shape[0]):  # noqa: SIM110 (compiled: a plain loop)
        if prof[1 + d, i] + tol[d] < demand[d]:
            return False
    return True


@njit(cache=True)
def _change(prof, length, start, end, amount, sign, tol):
    """``Profile.reserve`` (``sign`` -1; -1 if it overbooks) or ``release``; the length."""
    if end <= start:
        return length
    span = np.empty(2, dtype=np.int64)
    for e, t in enumerate((max(start, prof[0, 0]), end)):
        i = _bisect(prof[0], t, 0, length) if t != math.inf else length
        if t != math.inf and not (i < length and prof[0, i] == t):
            length = _insert(prof, length, i, t)
        span[e] = i
    if sign < 0:
        for r in range(span[0], span[1]):
            if not _ok(prof, r, tol, amount):
                return -1
    _add(prof, span[0], span[1], amount, sign)
    return length


@njit(cache=True)
def _fits(prof, length, start, duration, tol, demand):
    """``Profile.fits``."""
    i = _segment(prof[0], start, length)
    end = start + duration
    while True:
        if not _ok(prof, i, tol, demand):
            return False
        i += 1
        if i == length or prof[0, i] >= end:
            return True


@njit(cache=True)
def _earliest_fit(prof, length, now, duration, tol, demand):
    """``Profile.earliest_fit`` (its general path)."""
    i = _segment(prof[0], now, length)
    while i < length:
        if not _ok(prof, i, tol, demand):
            i += 1
            continue
        start = max(prof[0, i], now)
        j = i + 1
        while j < length and prof[0, j] < start + duration and _ok(prof, j, tol, demand):
            j += 1
        if j == length or prof[0, j] >= start + duration:
            return start
        i = j + 1
    return math.inf


@njit(cache=True)
def _pieces_over(prof, length, start, n, bb, w, bb_tol, ftol, low, cnt):
    """``Planner._pieces_over``: whether the pieces (``cnt``) and the pool fit there."""
    i = _segment(prof[0], start, length)
    j = i + 1
    while j < length and prof[0, j] < start + w:
        j += 1
    _least(prof, i, j, low, 1)
    if low[0] < n or low[1] + bb_tol < bb:
        return False
    return _first_fit(low[2:], int(n), bb, ftol, cnt) == 0


@njit(cache=True)
def conservative_named(now: float, tol: np.ndarray, bb_tol: float, ftol: float,
                       prof: np.ndarray, length: int, space: np.ndarray, jobs: np.ndarray,
                       previous: np.ndarray, kept_order: np.ndarray, depth: float,
                       planned: np.ndarray, seq: np.ndarray) -> int:
    """conservative-bb's ``_replan`` on the running jobs' profile and ``space`` (the BB nodes
    now); ``jobs[3, Q]``: nodes, BB, walltime; ``previous[q]``: ``nan`` or a kept start.
    ``planned[q]``: starts (``nan``: none), ``seq``: the planned jobs in order; their count.
    Raises ``ValueError`` where the Python profile raises ``OverbookedError``."""
    dims, count = prof.shape[0] - 1, jobs.shape[1]
    k = dims - 2
    held = np.zeros((count, dims))  # each holder's demand, [start, end), pieces taken now
    span = np.zeros((count, 2))
    now_cnt = np.full((count, k), -1, dtype=np.int64)
    cnt = np.zeros(k, dtype=np.int64)
    demand, low, pool_only = np.zeros(dims), np.zeros(dims), np.zeros(dims)
    planned[:] = math.nan
    # found[0] 1: the last ``earliest`` found its start fits and left its pieces in ``cnt``
    # (and, for a start now, its demand in ``demand``): the next ``hold`` there takes them
    found = np.zeros(1, dtype=np.int64)

    def hold(q: int, start: float, length: int) -> int:  # Planner.hold; -1: no room
        n, bb, w = jobs[0, q], jobs[1, q], jobs[2, q]
        taken = start <= now
        ready = found[0] == 1
        found[0] = 0
        if taken:
            start = now
            if not ready:
                if _first_fit(space, int(n), bb, ftol, cnt):
                    return -1
                _demand(n, bb, cnt, demand)
                if not _fits(prof, length, start, w, tol, demand):
                    return -1
            for node in range(k):
                for _ in range(cnt[node]):
                    space[node] -= bb / n
        else:
            if not ready and not _pieces_over(prof, length, start, n, bb, w, bb_tol, ftol,
                                              low, cnt):
                return -1
            _demand(n, bb, cnt, demand)
        length = _change(prof, length, start, start + w, demand, -1.0, tol)
        if length < 0:
            raise ValueError("a reservation on the named BB nodes overbooks")
        span[q, 0], span[q, 1] = start, start + w
        held[q] = demand
        now_cnt[q] = -1
        if taken:
            now_cnt[q] = cnt
        return length

    def drop(q: int, length: int) -> int:  # Planner.release
        length = _change(prof, length, span[q, 0], span[q, 1], held[q], 1.0, tol)
        for node in range(k):
            for _ in range(now_cnt[q, node]):
                space[node] += jobs[1, q] / jobs[0, q]
        return length

    def earliest(q: int, limit: float, length: int) -> float:  # Planner.earliest
        n, bb, w = jobs[0, q], jobs[1, q], jobs[2, q]
        # (a start now: not when the nodes or the pool are short now, where _fits fails first)
        i = _segment(prof[0], now, length)
        if (prof[1, i] + tol[0] >= n and prof[2, i] + tol[1] >= bb
                and _first_fit(space, int(n), bb, ftol, cnt) == 0):
            _demand(n, bb, cnt, demand)
            if _fits(prof, length, now, w, tol, demand):
                found[0] = 1
                return now
        pool_only[0], pool_only[1] = n, bb
        first = _earliest_fit(prof, length, now, w, tol, pool_only)
        for r in range(_bisect(prof[0], first, 0, length), length):
            t = prof[0, r]
            if t <= now:
                continue
            if t > limit:
                break
            if _pieces_over(prof, length, t, n, bb, w, bb_tol, ftol, low, cnt):
                found[0] = 1
                return t
        return math.inf

    kept = np.empty(count, dtype=np.int64)
    kept_n = planned_n = 0
    for q in kept_order:
        got = hold(q, max(previous[q], now), length)
        if got >= 0:
            length = got
            kept[kept_n] = q
            kept_n += 1
    for q in kept[:kept_n]:  # compression, earliest first: never later than before
        old = max(previous[q], now)
        length = drop(q, length)
        start = earliest(q, old, length)
        got = -1 if start == math.inf else hold(q, start, length)
        if got < 0:
            start = old
            got = hold(q, old, length)  # the slot it held a moment ago
        length = max(got, length)
        planned[q] = start
        seq[planned_n] = q
        planned_n += 1
    for q in range(count):
        if not math.isnan(planned[q]):
            continue
        start = earliest(q, math.inf, length) if planned_n < depth else now
        if start < math.inf:
            got = hold(q, start, length)
            if got >= 0:
                length = got
                planned[q] = start
                seq[planned_n] = q
                planned_n += 1
    return planned_n


@njit(cache=True)
def conservative_running(now: float, caps: np.ndarray, tol: np.ndarray, bb_tol: float,
                         ftol: float, ends: np.ndarray, held: np.ndarray, jobs: np.ndarray,
                         previous: np.ndarray, depth: float, planned: np.ndarray,
                         seq: np.ndarray) -> int:
    """:func:`conservative_named` from the running jobs themselves, so that a decision hands
    over arrays only: ``ends[R]`` their expected ends, ``held[R, 2 + K]`` what each holds
    (nodes, pool BB, bytes per BB node). The profile is built as ``Profile`` builds it
    (releases sorted by ``max(end, now)``, stable; held sums in that order; equal times merged),
    the BB nodes now are the capacities less each running job's bytes (in the order given) and
    the kept reservations (``previous`` not ``nan``) are held again by ``(max(start, now),
    queue position)``, as ``ConservativeBackfilling`` orders them."""
    count, dims = jobs.shape[1], caps.shape[0]
    k = dims - 2
    order = np.argsort(np.maximum(ends, now), kind="mergesort")
    total = np.zeros(dims)
    for r in order:
        for d in range(dims):
            total[d] += held[r, d]
    prof = np.empty((1 + dims, ends.shape[0] + 1 + 6 * count + 4))
    prof[0, 0] = now
    for d in range(dims):
        prof[1 + d, 0] = caps[d] - total[d]
    length = 1
    cur = prof[1:, 0].copy()
    for r in order:
        t = max(ends[r], now)
        for d in range(dims):
            cur[d] = cur[d] + held[r, d]
        if t != prof[0, length - 1]:
            prof[0, length] = t
            length += 1
        prof[1:, length - 1] = cur
    space = caps[2:].copy()
    for r in range(ends.shape[0]):
        for b in range(k):
            if held[r, 2 + b] != 0.0:
                space[b] -= held[r, 2 + b]
    keys = np.full(count, math.inf)
    kept = 0
    for q in range(count):
        if not math.isnan(previous[q]):
            keys[q] = max(previous[q], now)
            kept += 1
    kept_order = np.argsort(keys, kind="mergesort")[:kept]
    return conservative_named(now, tol, bb_tol, ftol, prof, length, space, jobs, previous,
                              kept_order, depth, planned, seq)

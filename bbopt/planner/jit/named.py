"""Named burst-buffer nodes in the plan model, compiled with numba (Kopanski & Rzadca,
Euro-Par 2021, Sections 3.3, 4.1): a job's placement (:func:`place`: its start and its pieces
on the BB nodes, or its compute nodes and their nearest BB nodes on a proximity platform) and
the searches over orders that call it, the annealing walk and the exhaustive search of short
queues. The Python loops they translate, with the same floating-point operations in the same
order, are the reference (:mod:`bbopt.models.plan_named`, ``PlanModel._run_named``,
``SwapWalk._walk_named``, ``solve_exhaustive``): the same starts, pieces and scores, bit for
bit (``tests/planner/jit/test_named.py``). The scans, reservations and first fit of pieces are
the backend's primitives (:mod:`bbopt.planner.jit.primitives`). Imported on first use
(:func:`bbopt.planner.named.kernels`; ``BBOPT_NO_JIT=1`` or no numba: the Python loops).

Layout: ``prof[3 + K, cap]`` breakpoints, free nodes, pool BB, each BB node's space, with a
sentinel at infinity; ``now[K + NN]`` the BB nodes now and 1.0 per free compute node
(proximity); ``consts``: pool slack, piece tolerance, BB node slacks; ``sig[1 + K + W]`` a
placement (kind, pieces per BB node, compute nodes in ``W`` words). No fastmath.
"""

from __future__ import annotations

import math

import numpy as np

from bbopt.planner.jit.cache import kernel
from bbopt.planner.jit.primitives import (
    bisect_left,
    copy_profile,
    demand_of,
    first_fit,
    reserve,
    term,
    window,
)
from bbopt.planner.jit.primitives import least as least_of

#: Rows of the per-job table ``jobs[6, n]`` of a plan.
NODES, BB, WALL, EARLY, SUBMIT, BOUND = range(6)
#: Kinds of a placement: fits nowhere, first-fit runs, compute nodes and runs (now, proximity).
NONE, RUNS, NODES_RUNS = 0, 1, 2


@kernel(inline=True)
def _copy(src, dst, src_now, dst_now):
    """Copy a plan's profile (up to its sentinel) and state now; the profile's length."""
    k = copy_profile(src, dst)
    for x in range(src_now.shape[0]):
        dst_now[x] = src_now[x]
    return k


@kernel(inline=True)
def _fits_now(prof, j, cnt, demand, consts, least):
    """``plan_named._reserve_now``'s test: the pieces stay free on segments ``0 .. j - 1``."""
    least_of(prof, 0, j, least, 3)
    for node in range(cnt.shape[0]):
        if cnt[node] > 0 and least[node] + consts[2 + node] < demand[2 + node]:
            return False
    return True


@kernel()
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


@kernel()
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
    i = bisect_left(T, jobs[EARLY, p], 0, length)
    while True:  # (the pool's window, its sentinel never a start: planner.lists.pool_window)
        start, i, j = window(T, prof[1], prof[2], i, length - 1, -math.inf, w, n, b, 0.0,
                             consts[0])
        if start == math.inf:
            return math.inf, length
        end = start + w
        if b <= 0:  # no pieces: the nodes (and, now on a proximity platform, their ids)
            demand_of(n, b, cnt, demand)
            length = reserve(prof, length, i, j, end, demand)
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
            demand_of(n, b, cnt, demand)
            if ok and _fits_now(prof, j, cnt, demand, consts, least):
                length = reserve(prof, length, 0, j, end, demand)
                now[:k] = left
                sig[0] = NODES_RUNS
                for c in range(got):
                    _take_node(now, k, ids[c], sig)
                return start, length
            i = 1
            cnt[:] = 0
            continue
        if i == 0:  # now: the engine's pieces (first fit on what is free now) if they stay free
            if first_fit(now[:k], todo, b, consts[1], cnt) == 0:
                demand_of(n, b, cnt, demand)
                if _fits_now(prof, j, cnt, demand, consts, least):
                    length = reserve(prof, length, 0, j, end, demand)
                    for node in range(k):  # BBNodeSpace.take_pieces' sums
                        for _ in range(cnt[node]):
                            now[node] -= b / n
                    sig[0] = RUNS
                    return start, length
            i = 1
            continue
        # First fit on each BB node's least free space in the window.
        least_of(prof, i, j, least, 3)
        if first_fit(least, todo, b, consts[1], cnt):
            i += 1
            continue
        demand_of(n, b, cnt, demand)
        length = reserve(prof, length, i, j, end, demand)
        sig[0] = RUNS
        return start, length


@kernel(inline=True)
def _take_node(now, k, x, sig):
    """Compute node ``x`` is no longer free now; it goes in the signature's words."""
    now[k + x] = 0.0
    sig[1 + k + x // 64] |= np.int64(1) << np.int64(x % 64)


@kernel()
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
            wait = term(start - jobs[SUBMIT, p], alpha) if start != math.inf else jobs[BOUND, p]
            if start != cur_start[p] or not np.array_equal(sig, sigs[cur, p]):
                diverged = True
                start_of[p] = start
                term_of[p] = wait
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


@kernel()
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
@kernel()
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
        start = window(prof[0], prof[1], prof[2], 0, length, -math.inf, jobs[WALL, p],
                       jobs[NODES, p], jobs[BB, p] - consts[0], 0.0, 0.0)[0]  # _earliest_pool
        lbs[c] = term(start - jobs[SUBMIT, p], alpha)
        total += lbs[c]
    if partial + total >= best:
        return best
    for c in range(count):
        p = rem[c]
        child, child_now = profs[depth, c], nows[depth, c]
        size = _copy(prof, child, now, child_now)
        start, size = place(child, size, child_now, jobs, p, prox, consts, sig, fwork, iwork)
        terms[c] = (term(start - jobs[SUBMIT, p], alpha) if start != math.inf
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



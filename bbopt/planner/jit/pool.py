"""The pool plan's placement loop compiled with numba: the same floating-point operations in the
same order as the pure-Python loops of :meth:`PlanModel._run <bbopt.models.plan.PlanModel>` and
:meth:`SwapWalk._walk <bbopt.models.plan_walk.SwapWalk>`, so the same scores, bit for bit.

Kopanski & Rzadca, Euro-Par 2021, Section 3.3 and Algorithm 2: every move of the annealing scores
the greedy plan of a permutation, each job placed at the earliest time at which its nodes and its
burst buffer are free for its whole walltime. That placement is the inner loop of plan-2 (about
1.2 us per placement in Python, millions per KTH replay); compiled, a move costs about the call.

This module imports numba and is itself imported only when a plan model on the BB pool is
scored (:func:`bbopt.models.plan.kernels`), so runs that never plan do not pay numba's
import; without numba (the optional extra ``fast``) or with ``BBOPT_NO_JIT=1`` the Python loops
run. The compiled functions are cached on disk (``cache=True``): the first run compiles them
once.

Layout of a profile: one float64 array ``prof[3, cap]`` holding the breakpoints, the free nodes
and the free BB (node counts are small integers, exact as floats), ending with the model's
sentinel breakpoint at infinity; ``cap`` leaves room for one inserted breakpoint per job. No
fastmath: the sums, products and comparisons are IEEE operations in the Python order.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

#: Rows of the per-job table ``jobs[JOB_ROWS, n]`` (the model's lists as float64, made by
#: :meth:`PlanModel.compiled_arrays <bbopt.models.plan.PlanModel.compiled_arrays>`).
NODES, BNEED, WALL, EARLY, BB, SUBMIT, BOUND = range(7)
JOB_ROWS = 7


@njit(cache=True, inline="always")
def _copy_profile(src: np.ndarray, dst: np.ndarray) -> int:
    """Copy the profile ``src`` (up to its sentinel at infinity) into ``dst``; its length."""
    k = 0
    while True:
        dst[0, k] = src[0, k]
        dst[1, k] = src[1, k]
        dst[2, k] = src[2, k]
        k += 1
        if src[0, k - 1] == math.inf:
            return k


@njit(cache=True, inline="always")
def _place(prof: np.ndarray, length: int, jobs: np.ndarray, p: int) -> tuple[float, int]:
    """Place job ``p`` at its earliest start in ``prof`` and reserve it: ``(start, new
    length)``. The earliest-fit scan and the reservation of ``PlanModel._run``, from the job's
    earliest start in the base profile on (``bisect_left``), half-open segments."""
    T, FN, FB = prof[0], prof[1], prof[2]
    n = jobs[NODES, p]
    bneed = jobs[BNEED, p]
    w = jobs[WALL, p]
    early = jobs[EARLY, p]
    lo, hi = 0, length
    while lo < hi:  # bisect_left(T, early)
        mid = (lo + hi) // 2
        if T[mid] < early:
            lo = mid + 1
        else:
            hi = mid
    i = lo
    while True:
        while FN[i] < n or FB[i] < bneed:
            i += 1
        start = T[i]
        end = start + w
        j = i + 1
        fits = True
        while T[j] < end:
            if FN[j] < n or FB[j] < bneed:
                fits = False
                break
            j += 1
        if fits:
            break
        i = j + 1
    if T[j] != end:  # a new breakpoint at the end: shift the rest right
        for q in range(length, j, -1):
            T[q] = T[q - 1]
            FN[q] = FN[q - 1]
            FB[q] = FB[q - 1]
        T[j] = end
        FN[j] = FN[j - 1]
        FB[j] = FB[j - 1]
        length += 1
    breq = jobs[BB, p]
    for q in range(i, j):
        FN[q] -= n
        FB[q] -= breq
    return start, length


@njit(cache=True, inline="always")
def _term(wait: float, alpha: int) -> float:
    """``max(wait, 0) ** alpha`` written as the products of ``PlanModel._term`` (alpha 1-3)."""
    if wait < 0.0:
        wait = 0.0
    if alpha == 2:
        return wait * wait
    if alpha == 1:
        return wait
    return wait * wait * wait


@njit(cache=True)
def score_pool(jobs: np.ndarray, base: np.ndarray, work: np.ndarray, order: np.ndarray,
               alpha: int, threshold: float, rest: float, starts: np.ndarray) -> float:
    """``PlanModel._run`` on the pool: the score of the greedy plan of ``order`` placed on a
    copy of ``base`` (in ``work``), each job's start written to ``starts``; ``inf`` as soon as
    the partial score plus ``rest`` (the bounds of the jobs still to place, which the caller
    sums as Python does) exceeds ``threshold`` (``inf``: no check)."""
    length = _copy_profile(base, work)
    check = threshold != math.inf
    score = 0.0
    for k in range(order.shape[0]):
        p = order[k]
        start, length = _place(work, length, jobs, p)
        score += _term(start - jobs[SUBMIT, p], alpha)
        starts[p] = start
        if check:
            rest -= jobs[BOUND, p]
            if score + rest > threshold:
                return math.inf
    return score


@njit(cache=True)
def walk_pool(jobs: np.ndarray, orders: np.ndarray, vals: np.ndarray, pool: np.ndarray,
              side: np.ndarray, work: np.ndarray, cur: int, lo: int, hi: int, diverged: bool,
              alpha: int, stride: int) -> float:
    """``SwapWalk._walk`` on the pool: the plan of the current order (buffer ``cur``) with
    positions ``lo`` and ``hi`` swapped, written to the other buffer ``1 - cur`` (the pending
    state of the walk); its score, before the early-rejection rule (which the caller asks).

    Per buffer ``b``: ``orders[b]`` the permutation, ``vals[b, 0]`` each job's start,
    ``vals[b, 1]`` its score term, ``vals[b, 2]`` the partial scores (``[k]``: the first ``k``
    positions). Snapshot ``s`` (the profile before position ``s * stride``) of buffer ``b`` is
    ``pool[s, side[b, s]]``: each snapshot has two slots and the pending buffer writes the one
    the current buffer does not use, so accepting is choosing the other buffer and rejecting
    is forgetting it. ``diverged``: place every position (the first walk); else positions from
    ``hi`` on are placed again only if a job before ``hi`` changed its start (see the
    docstring of :class:`~bbopt.models.plan_walk.SwapWalk`)."""
    new = 1 - cur
    count = orders.shape[1]
    order = orders[new]
    for k in range(count):
        order[k] = orders[cur, k]
        vals[new, 0, k] = vals[cur, 0, k]
        vals[new, 1, k] = vals[cur, 1, k]
        vals[new, 2, k] = vals[cur, 2, k]
    vals[new, 2, count] = vals[cur, 2, count]
    order[lo], order[hi] = order[hi], order[lo]
    for s in range(side.shape[1]):
        side[new, s] = side[cur, s]
    start_of, term_of, parts = vals[new, 0], vals[new, 1], vals[new, 2]
    cur_start = vals[cur, 0]
    base = lo - lo % stride
    length = _copy_profile(pool[base // stride, side[cur, base // stride]], work)
    score = parts[base]
    stop = count if diverged else hi
    snap_at = base + stride
    k = base
    while k < stop:
        p = order[k]
        if k == snap_at:
            _snapshot(work, length, pool, side, cur, new, k // stride)
            snap_at += stride
        start, length = _place(work, length, jobs, p)
        term = _term(start - jobs[SUBMIT, p], alpha)
        if start != cur_start[p]:
            stop = count  # diverged: every later job is placed again
            start_of[p] = start
            term_of[p] = term
        score += term
        k += 1
        parts[k] = score
    if k == snap_at:  # stopped at hi: the profile before it holds the new order's jobs
        _snapshot(work, length, pool, side, cur, new, k // stride)
    while k < count:  # positions lo..hi-1 kept their starts: so does every later job
        score += term_of[order[k]]
        k += 1
        parts[k] = score
    return score


@njit(cache=True, inline="always")
def _snapshot(work: np.ndarray, length: int, pool: np.ndarray, side: np.ndarray, cur: int,
              new: int, s: int) -> None:
    """Keep ``work`` as snapshot ``s`` of buffer ``new``, in the slot buffer ``cur`` does not
    use."""
    slot = 1 - side[cur, s]
    for k in range(length):
        pool[s, slot, 0, k] = work[0, k]
        pool[s, slot, 1, k] = work[1, k]
        pool[s, slot, 2, k] = work[2, k]
    side[new, s] = slot


"""Exact subset sums of the capacity rows, and the two-capacity Pareto front they give.

Fan et al., BBSched (HPDC 2019), Section 3.2. A window's selections are subsets of job requests,
so a capacity row's reachable sums are a bitset (one shift per job): :func:`reachable_max` and
:func:`subset_with_sum` tighten the rows and rebuild witnesses for the exact backends
(:mod:`bbopt.solvers.window.forms`).

When the two objectives are the two capacity rows themselves (nodes and BB), every
Pareto-optimal selection lies near the corner ``(N, B)`` of the free capacities, and
:func:`two_capacity_front` finds them all without a solver, by the two-list idea of Horowitz and
Sahni:

- jobs that ask nothing of the *band* row ``q`` (BB, usually) only add to the other row ``p``
  (nodes): their reachable sums are one bitset, and ``fill[r]`` is the largest of them ``<= r``;
- the other jobs (at most 2 x :data:`MAX_HALF` of them) are split into two halves; each half's
  subsets are listed with their sums (``p``, ``q``), the second sorted by ``q``;
- the front points with ``q >= B - delta`` are exactly the Pareto-maximal pairs (one subset of
  each half, plus the best fill) whose ``q`` lies in the band ``[B - delta, B]``: nothing outside
  the band can dominate a point inside it. ``delta`` doubles until the band holds a point with
  ``p`` at its upper bound (then every point below the band is dominated, and the front is
  complete) or the band covers ``[0, B]``.

It gives up (returns None) when the pairs in the band would exceed a limit, and the caller
solves the front with its solver; it only ever returns a front it has proved complete.

On a window's integer program (:class:`~bbopt.solvers.window.forms.LinearForm`):
:func:`tighten_rows` lowers each capacity row to its largest reachable sum,
:func:`corner_witness` rebuilds a selection with the second objective at its bound, and
:func:`capacity_front` lists the whole front when the two objectives are the two capacity rows.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class LinearForm(Protocol):
    """What these functions read of a window's integer program
    (:class:`bbopt.solvers.window.forms.LinearForm` has it)."""

    k: int  # auxiliary variables: none for the capacity rows
    fix0: np.ndarray  # bool (w,): x_i = 0
    fix1: np.ndarray  # bool (w,): x_i = 1
    rows: list[tuple[np.ndarray, np.ndarray, int]]  # (coefficients of x, of A, upper bound)
    objectives: dict[str, tuple[np.ndarray, np.ndarray]]

#: Largest capacity (in integer units) whose reachable sums are enumerated by these bitsets.
MAX_SUBSET_SUM_BITS = 1 << 24


def reachable_max(coeffs: np.ndarray, cap: int, free: np.ndarray, base: int = 0) -> int | None:
    """The largest ``base + sum of a subset of coeffs[free]`` that is ``<= cap`` (subset-sum by
    a bitset of the reachable sums, one shift per job), or None when ``cap`` is too large."""
    room = int(cap) - int(base)
    if room < 0 or room > MAX_SUBSET_SUM_BITS:
        return None
    mask = (1 << (room + 1)) - 1
    bits = 1
    for c in coeffs[free]:
        c = int(c)
        if 0 < c <= room:
            bits |= (bits << c) & mask
    return int(base) + bits.bit_length() - 1


def subset_with_sum(coeffs: np.ndarray, target: int) -> np.ndarray | None:
    """Indices into ``coeffs`` (non-negative integers) of a subset summing to ``target``, or None
    (bitset subset-sum, keeping each prefix's bitset to walk back)."""
    if target < 0 or target > MAX_SUBSET_SUM_BITS:
        return None
    mask = (1 << (target + 1)) - 1
    prefix = [1]
    for c in coeffs:
        prefix.append(prefix[-1] | ((prefix[-1] << int(c)) & mask))
    if not (prefix[-1] >> target) & 1:
        return None
    chosen = []
    for i in range(len(coeffs) - 1, -1, -1):
        if not (prefix[i] >> target) & 1:  # target needs job i
            chosen.append(i)
            target -= int(coeffs[i])
    return np.array(chosen[::-1], dtype=np.int64)

#: Largest half of the band-row jobs (2 ** MAX_HALF subsets listed per half).
MAX_HALF = 16
#: Most pairs materialised over all bands before giving up.
PAIR_LIMIT = 3_000_000
#: First band width, as a fraction of the band row's capacity.
FIRST_BAND = 1 / 4096


def _subsets(p: np.ndarray, q: np.ndarray, cap_p: int, cap_q: int
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sums ``(p, q)`` and bitmasks of every subset of the items that fits both capacities."""
    sp = np.zeros(1, np.int64)
    sq = np.zeros(1, np.int64)
    mask = np.zeros(1, np.int64)
    for i in range(len(p)):
        np_, nq = sp + p[i], sq + q[i]
        ok = (np_ <= cap_p) & (nq <= cap_q)
        sp = np.concatenate([sp, np_[ok]])
        sq = np.concatenate([sq, nq[ok]])
        mask = np.concatenate([mask, mask[ok] | (1 << i)])
    return sp, sq, mask


def _staircase(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Indices of the Pareto-maximal points of ``(p, q)`` (one per distinct point), by
    decreasing ``q``."""
    o = np.lexsort((-p, -q))
    best = np.maximum.accumulate(p[o])
    keep = np.ones(len(o), bool)
    keep[1:] = best[1:] > best[:-1]
    return o[keep]


def two_capacity_front(cp: np.ndarray, cq: np.ndarray, cap_p: int, cap_q: int,
                       free: np.ndarray, fixed: np.ndarray, pair_limit: int = PAIR_LIMIT
                       ) -> list[np.ndarray] | None:
    """Every Pareto-optimal selection (one per point) of maximising ``(cp . x, cq . x)`` subject
    to ``cp . x <= cap_p``, ``cq . x <= cap_q``, ``x[fixed] = 1`` and ``x[~free & ~fixed] = 0``
    (non-negative integer coefficients), or None when it would take more than ``pair_limit``
    pairs (see the module docstring). Selections come by decreasing ``cq . x``."""
    cap_p -= int(cp[fixed].sum())
    cap_q -= int(cq[fixed].sum())
    if cap_p < 0 or cap_q < 0:
        return []
    band_jobs = np.flatnonzero(free & (cq > 0) & (cp <= cap_p) & (cq <= cap_q))
    fill_jobs = np.flatnonzero(free & (cq == 0) & (cp <= cap_p))
    if len(band_jobs) > 2 * MAX_HALF or cap_p > MAX_SUBSET_SUM_BITS:
        return None
    # fill[r]: the largest sum of fill-job p's that is <= r.
    bits = 1
    mask = (1 << (cap_p + 1)) - 1
    for c in cp[fill_jobs]:
        bits |= (bits << int(c)) & mask
    reach = np.unpackbits(np.frombuffer(bits.to_bytes(cap_p // 8 + 1, "little"), np.uint8),
                          bitorder="little")[:cap_p + 1].astype(bool)
    fill = np.where(reach, np.arange(cap_p + 1), -1)
    fill = np.maximum.accumulate(fill)
    for c in cp[band_jobs]:
        bits |= (bits << int(c)) & mask
    p_bound = bits.bit_length() - 1  # no selection has more p
    half = len(band_jobs) // 2
    left, right = band_jobs[:half], band_jobs[half:]
    lp, lq, lm = _subsets(cp[left], cq[left], cap_p, cap_q)
    rp, rq, rm = _subsets(cp[right], cq[right], cap_p, cap_q)
    o = np.argsort(rq, kind="stable")
    rp, rq, rm = rp[o], rq[o], rm[o]

    points_p = np.zeros(0, np.int64)
    points_q = np.zeros(0, np.int64)
    pairs_l = np.zeros(0, np.int64)
    pairs_r = np.zeros(0, np.int64)
    used = 0
    done_hi = cap_q  # the band [lo, done_hi] still to enumerate, shrinking downward
    delta = max(1, int(cap_q * FIRST_BAND))
    while True:
        lo = max(0, cap_q - delta)
        # pairs with lo <= lq + rq <= done_hi, minus those already enumerated (> done_hi)
        start = np.searchsorted(rq, lo - lq, side="left")
        stop = np.searchsorted(rq, done_hi - lq, side="right")
        counts = np.maximum(stop - start, 0)
        n = int(counts.sum())
        used += n
        if used > pair_limit:
            return None
        if n:
            li = np.repeat(np.arange(len(lq)), counts)
            offs = np.arange(n) - np.repeat(np.cumsum(counts) - counts, counts)
            ri = np.repeat(start, counts) + offs
            sp = lp[li] + rp[ri]
            ok = sp <= cap_p
            li, ri, sp = li[ok], ri[ok], sp[ok]
            tp = sp + fill[cap_p - sp]
            tq = lq[li] + rq[ri]
            points_p = np.concatenate([points_p, tp])
            points_q = np.concatenate([points_q, tq])
            pairs_l = np.concatenate([pairs_l, li])
            pairs_r = np.concatenate([pairs_r, ri])
            keep = _staircase(points_p, points_q)
            points_p, points_q = points_p[keep], points_q[keep]
            pairs_l, pairs_r = pairs_l[keep], pairs_r[keep]
        if lo == 0 or (len(points_p) and points_p.max() >= p_bound):
            break
        done_hi = lo - 1
        delta *= 2
    out = []
    for k in range(len(points_p)):
        x = fixed.copy()
        for items, m in ((left, lm[pairs_l[k]]), (right, rm[pairs_r[k]])):
            x[items[[(int(m) >> i) & 1 == 1 for i in range(len(items))]]] = True
        sp = int(cp[x & ~fixed].sum())
        want = int(points_p[k]) - sp
        if want:
            x[fill_jobs[subset_with_sum(cp[fill_jobs], want)]] = True
        out.append(x)
    return out


# --- the capacity rows of a window's integer program ----------------------------------------


def capacity_rows(form: LinearForm, f1: str, f2: str
                  ) -> tuple[np.ndarray, np.ndarray, int, int] | None:
    """``(c1, c2, cap1, cap2)`` when the form is just the two capacity rows and they are the
    objectives ``f1`` and ``f2`` (BBSched's nodes and BB), else None."""
    (c1, a1), (c2, a2) = form.objectives[f1], form.objectives[f2]
    if form.k or len(form.rows) != 2 or np.any(a1) or np.any(a2):
        return None
    rows = {r[0].tobytes(): r[2] for r in form.rows}
    if c1.tobytes() not in rows or c2.tobytes() not in rows or np.array_equal(c1, c2):
        return None
    return c1, c2, int(rows[c1.tobytes()]), int(rows[c2.tobytes()])


def capacity_front(form: LinearForm, f1: str, f2: str) -> list[np.ndarray] | None:
    """The whole front of the two capacity rows by two-list enumeration
    (:func:`~.subset_sums.two_capacity_front`; the band is laid on the row of larger
    capacity), or None when the form is not of that shape or the enumeration gives up."""
    rows = capacity_rows(form, f1, f2)
    if rows is None:
        return None
    c1, c2, cap1, cap2 = rows
    if cap1 > cap2:
        c1, c2, cap1, cap2 = c2, c1, cap2, cap1
    return two_capacity_front(c1, c2, cap1, cap2, ~form.fix0 & ~form.fix1, form.fix1.copy())


def corner_witness(form: LinearForm, f1: str, f2: str, tries: int = 8,
                   seed: int = 0) -> np.ndarray | None:
    """A selection with ``f2`` at its bound and ``f1`` as large as a few random subset-sum
    reconstructions give, when the form is just the two capacity rows ``f1`` and ``f2``
    (None otherwise). Used to skip solves whose optimum is the bound (exactness is untouched:
    a witness only ever replaces a solve it provably equals)."""
    rows = capacity_rows(form, f1, f2)
    if rows is None:
        return None
    c1, c2, cap1, cap2 = rows
    free = ~form.fix0 & ~form.fix1
    base1, base2 = int(c1[form.fix1].sum()), int(c2[form.fix1].sum())
    pos = np.flatnonzero(free & (c2 > 0))
    zero = np.flatnonzero(free & (c2 == 0))
    rng = np.random.default_rng(seed)
    best, best_v1 = None, -1
    for t in range(tries):
        perm = pos if t == 0 else rng.permutation(pos)
        pick = subset_with_sum(c2[perm], cap2 - base2)
        if pick is None:
            return best
        x = form.fix1.copy()
        x[perm[pick]] = True
        room = cap1 - base1 - int(c1[perm[pick]].sum())
        if room < 0:
            continue
        fill_to = reachable_max(c1[zero], room, np.ones(len(zero), bool))
        if fill_to:
            x[zero[subset_with_sum(c1[zero], fill_to)]] = True
        v1 = int(c1 @ x)
        if v1 > best_v1:
            best, best_v1 = x, v1
        if v1 == cap1:
            break
    return best


def tighten_rows(form: LinearForm) -> None:
    """Lower the right-hand side of every capacity row ``c . x <= ub`` (``c >= 0``, no
    auxiliary variables) to the largest sum its jobs can reach (:func:`reachable_max`): exact
    (no selection is lost) and often the optimum of that objective, which spares the solvers
    a subset-sum proof."""
    free = ~form.fix0 & ~form.fix1
    for r, (cx, ca, ub) in enumerate(form.rows):
        if np.any(ca) or np.any(cx < 0):
            continue
        best = reachable_max(cx, ub, free, int(cx[form.fix1].sum()))
        if best is not None and best < ub:
            form.rows[r] = (cx, ca, best)

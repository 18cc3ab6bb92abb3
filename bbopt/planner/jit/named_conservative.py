"""Conservative backfilling on named burst-buffer nodes compiled with numba (Kopanski &
Rzadca, Euro-Par 2021, Sections 3.2, 4.1; Mu'alem & Feitelson's compression): one decision of
conservative-bb from the running jobs (:func:`conservative_running`): the kept reservations
held again with their own pieces and, when something came free since the previous decision,
moved to earlier starts, earliest first; then the rest of the queue planned after them, each
job's pieces placed first fit on each BB node's least free space over its window (a start
now's too). The Python code it translates, with the same floating-point operations in the same
order, is the reference (conservative-bb's ``replan`` on the planner: ``Planner.hold``,
``hold_with``, ``release``, ``earliest``; ``Profile.fits``, ``earliest_fit``, ``reserve``):
the same starts, bit for bit (``tests/planner/jit/test_named_conservative.py``). Where every
amount is whole the profile is kept between decisions (:func:`conservative_step`) and the
compression leaves untouched a reservation that cannot move: the same values, so the same
starts (``tests/planner/jit/test_named_kept_profile.py``). Imported on first use
(:func:`bbopt.planner.named.conservative_kernels`).

Layout: ``prof[1 + D, cap]``, breakpoints then the free amount of each dimension (nodes, pool
BB, each BB node's space), no sentinel. No fastmath.
"""

from __future__ import annotations

import math

import numpy as np

from bbopt.planner.jit.cache import kernel
from bbopt.planner.jit.primitives import (
    add,
    bisect_left,
    demand_of,
    first_fit,
    insert,
    least,
    segment,
)


@kernel(inline=True)
def _ok(prof, i, tol, demand):
    """``Profile._ok``: every dimension of segment ``i`` holds its demand (with its slack)."""
    for d in range(demand.shape[0]):  # noqa: SIM110 (compiled: a plain loop)
        if prof[1 + d, i] + tol[d] < demand[d]:
            return False
    return True


@kernel()
def _change(prof, length, start, end, amount, sign, tol):
    """``Profile.reserve`` (``sign`` -1; -1 if it overbooks) or ``release``; the length.
    ``ValueError`` rather than a breakpoint written past ``prof``'s columns."""
    if end <= start:
        return length
    t = max(start, prof[0, 0])
    i = bisect_left(prof[0], t, 0, length) if t != math.inf else length
    if t != math.inf and not (i < length and prof[0, i] == t):
        if length == prof.shape[1]:
            raise ValueError("the profile's arrays are full")
        length = insert(prof, length, i, t)
    j = bisect_left(prof[0], end, 0, length) if end != math.inf else length
    if end != math.inf and not (j < length and prof[0, j] == end):
        if length == prof.shape[1]:
            raise ValueError("the profile's arrays are full")
        length = insert(prof, length, j, end)
    if sign < 0:
        for r in range(i, j):
            if not _ok(prof, r, tol, amount):
                return -1
    add(prof, i, j, amount, sign)
    return length


@kernel()
def _fits(prof, length, start, duration, tol, demand):
    """``Profile.fits``."""
    i = segment(prof[0], start, length)
    end = start + duration
    while True:
        if not _ok(prof, i, tol, demand):
            return False
        i += 1
        if i == length or prof[0, i] >= end:
            return True


@kernel()
def _earliest_fit(prof, length, now, duration, tol, demand):
    """``Profile.earliest_fit`` (its general path)."""
    i = segment(prof[0], now, length)
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


@kernel(inline=True)
def _pieces_at(prof, length, i, start, n, bb, w, bb_tol, ftol, low, cnt):
    """``Planner._pieces_over`` from segment ``i``, the one holding ``start``: whether the
    pool fits over ``[start, start + w)`` and the pieces (``cnt``) on each BB node's least
    free space there. The pool is tested segment by segment first (most starts a compression
    tries fail there), so the BB nodes' least is taken only where the pool fits: the same
    answer as the least of every dimension tested after (a least is short iff a segment is)."""
    end = start + w
    j = i
    while j < length and (j == i or prof[0, j] < end):
        if prof[1, j] < n or prof[2, j] + bb_tol < bb:
            return False
        j += 1
    least(prof, i, j, low[2:], 3)
    return first_fit(low[2:], int(n), bb, ftol, cnt) == 0


@kernel()
def _pieces_over(prof, length, start, n, bb, w, bb_tol, ftol, low, cnt):
    """``Planner._pieces_over``: whether the pieces (``cnt``) and the pool fit there."""
    return _pieces_at(prof, length, segment(prof[0], start, length), start, n, bb, w, bb_tol,
                      ftol, low, cnt)


@kernel()
def conservative_named(now: float, tol: np.ndarray, bb_tol: float, ftol: float,
                       prof: np.ndarray, length: int, jobs: np.ndarray, previous: np.ndarray,
                       pieces: np.ndarray, kept_order: np.ndarray, depth: float,
                       planned: np.ndarray, seq: np.ndarray, got: np.ndarray,
                       compress: bool) -> int:
    """:func:`_plan` on the running jobs' profile, every kept reservation held again; the
    count of jobs planned."""
    return _plan(now, tol, bb_tol, ftol, prof, length, jobs, previous, pieces, kept_order,
                 depth, planned, seq, got, compress, False, False)[0]


@kernel()
def _plan(now: float, tol: np.ndarray, bb_tol: float, ftol: float, prof: np.ndarray,
          length: int, jobs: np.ndarray, previous: np.ndarray, pieces: np.ndarray,
          kept_order: np.ndarray, depth: float, planned: np.ndarray, seq: np.ndarray,
          got: np.ndarray, compress: bool, in_profile: bool, exact: bool
          ) -> tuple[int, int]:
    """conservative-bb's ``replan`` on the running jobs' profile; ``jobs[3, Q]``: nodes, BB,
    walltime; ``previous[q]``: ``nan`` or a kept start; ``pieces[q]``: the bytes on each BB
    node that kept reservation holds (``nan``: placed again); ``compress``: whether the kept
    reservations are compressed (something came free). Every placement, a start now's too,
    puts the pieces on each BB node's least free space over the job's window.
    ``planned[q]``: starts (``nan``: none), ``seq``: the planned jobs in order, ``got[q]``:
    the bytes each planned job holds on each BB node; ``in_profile``: the kept reservations
    hold their slots in ``prof`` already (a profile kept between decisions: each is taken as
    held again there, which it is when every amount is a whole number, see
    :func:`conservative_step`); ``exact``: every amount is a whole number (as there), so a
    reservation released and held again in its own slot leaves every value as it was: the
    compression then leaves in place, untouched, a reservation the nodes and pool BB free
    before its start do not fit at any earlier start (its own slot lies after). Their count
    and the profile's length. Raises ``ValueError`` where the Python profile raises
    ``OverbookedError``."""
    dims, count = prof.shape[0] - 1, jobs.shape[1]
    k = dims - 2
    held = np.zeros((count, dims))  # each holder's demand, [start, end)
    span = np.zeros((count, 2))
    cnt = np.zeros(k, dtype=np.int64)
    demand, low, pool_only = np.zeros(dims), np.zeros(dims), np.zeros(dims)
    planned[:] = math.nan
    # found[0] 1: the last ``earliest`` found its start fits and left its pieces in ``cnt``:
    # the next ``hold`` there takes them
    found = np.zeros(1, dtype=np.int64)

    def take(q: int, start: float, amount: np.ndarray, length: int) -> int:
        end = start + jobs[2, q]
        length = _change(prof, length, start, end, amount, -1.0, tol)
        if length < 0:
            raise ValueError("a reservation on the named BB nodes overbooks")
        span[q, 0], span[q, 1] = start, end
        held[q] = amount
        return length

    def hold(q: int, start: float, length: int) -> int:  # Planner.hold; -1: no room
        n, bb, w = jobs[0, q], jobs[1, q], jobs[2, q]
        start = max(start, now)
        ready = found[0] == 1
        found[0] = 0
        if not ready and not _pieces_over(prof, length, start, n, bb, w, bb_tol, ftol, low,
                                          cnt):
            return -1
        demand_of(n, bb, cnt, demand)
        return take(q, start, demand, length)

    def hold_with(q: int, start: float, own: np.ndarray, length: int) -> int:
        # Planner.hold_with: its own bytes on each BB node, if they fit there
        start = max(start, now)
        demand[0], demand[1] = jobs[0, q], jobs[1, q]
        demand[2:] = own
        if not _fits(prof, length, start, jobs[2, q], tol, demand):
            return -1
        return take(q, start, demand, length)

    def drop(q: int, length: int) -> int:  # Planner.release
        return _change(prof, length, span[q, 0], span[q, 1], held[q], 1.0, tol)

    def earliest(q: int, limit: float, length: int) -> float:  # Planner.earliest
        n, bb, w = jobs[0, q], jobs[1, q], jobs[2, q]
        if _pieces_over(prof, length, now, n, bb, w, bb_tol, ftol, low, cnt):
            found[0] = 1
            return now
        pool_only[0], pool_only[1] = n, bb
        first = _earliest_fit(prof, length, now, w, tol, pool_only)
        for r in range(bisect_left(prof[0], first, 0, length), length):
            t = prof[0, r]
            if t <= now:
                continue
            if t > limit:
                break
            if _pieces_at(prof, length, r, t, n, bb, w, bb_tol, ftol, low, cnt):
                found[0] = 1
                return t
        return math.inf

    kept = np.empty(count, dtype=np.int64)
    kept_n = planned_n = 0
    for q in kept_order:
        if in_profile:  # (held at its start with its own pieces: the slot it holds)
            start = max(previous[q], now)
            span[q, 0], span[q, 1] = start, start + jobs[2, q]
            held[q, 0], held[q, 1] = jobs[0, q], jobs[1, q]
            held[q, 2:] = pieces[q]
            got_q = length
        elif k and math.isnan(pieces[q, 0]):
            got_q = hold(q, previous[q], length)
        else:
            got_q = hold_with(q, previous[q], pieces[q], length)
        if got_q >= 0:
            length = got_q
            kept[kept_n] = q
            kept_n += 1
    for q in kept[:kept_n]:  # compression, earliest first: never later than before
        start = max(previous[q], now)
        if compress and exact:  # (no earlier start for the pool dimensions: it stays)
            pool_only[0], pool_only[1] = jobs[0, q], jobs[1, q]
            if _earliest_fit(prof, bisect_left(prof[0], start, 0, length), now, jobs[2, q],
                             tol, pool_only) == math.inf:
                planned[q] = start
                seq[planned_n] = q
                planned_n += 1
                continue
        if compress:
            old = start
            length = drop(q, length)
            start = earliest(q, old, length)
            got_q = hold(q, start, length) if start < old else -1
            if got_q < 0:
                found[0] = 0
                start = old
                got_q = hold_with(q, old, held[q, 2:].copy(), length)  # the slot it held
                if got_q < 0:
                    raise ValueError("a reservation no longer fits the slot it held")
            length = got_q
        planned[q] = start
        seq[planned_n] = q
        planned_n += 1
    for q in range(count):
        if not math.isnan(planned[q]):
            continue
        start = earliest(q, math.inf, length) if planned_n < depth else now
        if start < math.inf:
            got_q = hold(q, start, length)
            if got_q >= 0:
                length = got_q
                planned[q] = start
                seq[planned_n] = q
                planned_n += 1
    for q in range(count):
        for b in range(k):
            got[q, b] = held[q, 2 + b] if not math.isnan(planned[q]) else math.nan
    return planned_n, length


@kernel()
def conservative_running(now: float, caps: np.ndarray, tol: np.ndarray, bb_tol: float,
                         ftol: float, ends: np.ndarray, held: np.ndarray, jobs: np.ndarray,
                         previous: np.ndarray, pieces: np.ndarray, depth: float,
                         planned: np.ndarray, seq: np.ndarray, got: np.ndarray,
                         compress: bool) -> int:
    """:func:`conservative_named` from the running jobs themselves, so that a decision hands
    over arrays only: ``ends[R]`` their expected ends, ``held[R, 2 + K]`` what each holds
    (nodes, pool BB, bytes per BB node), the profile built by :func:`_build` and the kept
    reservations (``previous`` not ``nan``) held again by ``(max(start, now), queue
    position)``, as ``ConservativeBackfilling`` orders them."""
    prof = np.empty((1 + caps.shape[0], ends.shape[0] + 1 + 6 * jobs.shape[1] + 4))
    length = _build(prof, now, caps, ends, held)
    return conservative_named(now, tol, bb_tol, ftol, prof, length, jobs, previous, pieces,
                              _kept_order(previous, now), depth, planned, seq, got, compress)


@kernel()
def _build(prof: np.ndarray, now: float, caps: np.ndarray, ends: np.ndarray,
           held: np.ndarray) -> int:
    """The running jobs' profile from ``now`` into ``prof``, as ``Profile`` builds it
    (releases sorted by ``max(end, now)``, stable; held sums in that order; equal times
    merged); its length (``ValueError`` if ``prof`` has too few columns)."""
    if ends.shape[0] + 1 > prof.shape[1]:
        raise ValueError("the profile's arrays are full")
    dims = caps.shape[0]
    order = np.argsort(np.maximum(ends, now), kind="mergesort")
    total = np.zeros(dims)
    for r in order:
        for d in range(dims):
            total[d] += held[r, d]
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
    return length


@kernel()
def _kept_order(previous: np.ndarray, now: float) -> np.ndarray:
    """The kept reservations (``previous`` not ``nan``) by ``(max(start, now), position)``."""
    count = previous.shape[0]
    keys = np.full(count, math.inf)
    kept = 0
    for q in range(count):
        if not math.isnan(previous[q]):
            keys[q] = max(previous[q], now)
            kept += 1
    return np.argsort(keys, kind="mergesort")[:kept]


@kernel()
def _advance(prof: np.ndarray, length: int, now: float, tol: np.ndarray,
             gone: np.ndarray) -> int:
    """A kept profile brought to ``now``: the segments before it dropped, the one holding it
    starting there, the rest of the slot of each job gone before its expected end given back
    (``gone[M, 1 + D]``: its expected end, then what it held), and each breakpoint between
    equal segments dropped (left by slots given back or moved: they change no earliest start
    and no least free space, only the work); the new length."""
    i = segment(prof[0], now, length)
    prof[0, i] = now
    for m in range(gone.shape[0]):
        length = _change(prof, length, now, gone[m, 0], gone[m, 1:], 1.0, tol)
    rows = prof.shape[0]
    w = 0
    for q in range(i, length):
        if w:
            same = True
            for r in range(1, rows):
                if prof[r, q] != prof[r, w - 1]:
                    same = False
                    break
            if same:
                continue
        for r in range(rows):
            prof[r, w] = prof[r, q]
        w += 1
    return w


@kernel()
def conservative_step(now: float, caps: np.ndarray, tol: np.ndarray, bb_tol: float,
                      ftol: float, ends: np.ndarray, held: np.ndarray, depth: float,
                      jobs: np.ndarray, previous: np.ndarray, pieces: np.ndarray,
                      planned: np.ndarray, seq: np.ndarray, got: np.ndarray, marks: np.ndarray,
                      last: int, then: float, new: np.ndarray, compress: bool,
                      prof: np.ndarray, length: int, gone: np.ndarray, exact: bool
                      ) -> tuple[int, int, int, int, float]:
    """:func:`conservative_running` on a queue kept between decisions: ``jobs[3, C]``,
    ``previous[C]``, ``pieces[C, K]`` and ``planned[C]`` hold the last decision's queue in
    their first ``last`` columns (its time ``then``), which this decision compacts (the jobs
    started at ``then`` leave; a start after ``then`` is a kept reservation, with its pieces)
    and extends with the rows of ``new[M, 4 + K]``: nodes, BB, walltime, kept start (``nan``:
    none) and bytes on each BB node (``nan``: none kept) of each job queued since (with
    ``last`` 0, the whole queue). ``got[C, K]`` is scratch; ``pieces`` holds the planned
    jobs' bytes on each BB node on return. What the plan says, by queue position: ``marks[0]``
    the jobs starting now, ``marks[1]`` those reserved later, ``marks[2]`` those whose
    reservation is new, moved, placed on other pieces or gone; their three counts.

    ``prof`` holds the profile, kept for the next decision: with ``length`` 0 it is built
    from the running jobs (``ends``, ``held``: :func:`_build`) and the kept reservations held
    again; else it is the one the last decision left (its first ``length`` columns), brought
    to ``now`` (``gone``: :func:`_advance`), the kept reservations in it already. The caller
    keeps it only while every amount (capacities, nodes, BB, each piece ``bb / nodes``) is a
    whole number below 2**50 and each slack's fraction at most a half: then every sum is
    exact in any order, each value of the kept profile is the one :func:`_build` and the
    holds give (where breakpoints differ, between equal segments, no earliest start or least
    free space does), and each kept reservation fits where it is held again (its slot's
    values, less the other reservations, are what they were when it was placed or more), so
    the decisions are the same; ``exact`` says so (:func:`_plan`). Also returned: the
    profile's length and the earliest start reserved later (``inf``: none)."""
    k = pieces.shape[1]
    count = 0
    for i in range(last):
        t = planned[i]
        if t == then:
            continue
        for d in range(3):
            jobs[d, count] = jobs[d, i]
        previous[count] = t if t > then else math.nan
        for b in range(k):
            pieces[count, b] = pieces[i, b]
        count += 1
    for m in range(new.shape[0]):
        for d in range(3):
            jobs[d, count] = new[m, d]
        previous[count] = new[m, 3]
        for b in range(k):
            pieces[count, b] = new[m, 4 + b]
        count += 1
    in_profile = length > 0
    if in_profile:
        length = _advance(prof, length, now, tol, gone)
    else:
        length = _build(prof, now, caps, ends, held)
    length = _plan(now, tol, bb_tol, ftol, prof, length, jobs[:, :count], previous[:count],
                   pieces[:count], _kept_order(previous[:count], now), depth,
                   planned[:count], seq[:count], got[:count], compress, in_profile,
                   exact)[1]
    started = later = moved = 0
    first = math.inf
    for q in range(count):
        t, p = planned[q], previous[q]
        if t == now:
            marks[0, started] = q
            started += 1
        if t > now:
            marks[1, later] = q
            later += 1
            first = min(first, t)
            other = t != p
            for b in range(k):
                other = other or got[q, b] != pieces[q, b]
            if other:
                marks[2, moved] = q
                moved += 1
        elif not math.isnan(p):
            marks[2, moved] = q
            moved += 1
        for b in range(k):
            pieces[q, b] = got[q, b]
    return started, later, moved, length, first

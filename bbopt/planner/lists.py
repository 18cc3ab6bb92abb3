"""The plan searches' availability profile as plain lists: earliest start and reservation of
one job, the inner loop of every plan evaluation (Kopanski & Rzadca, Euro-Par 2021, Sections
3.2 and 3.3: a job is placed at the earliest time at which its nodes *and* its burst buffer
are free for its whole walltime, and takes them).

A plan search places a job tens of millions of times on KTH, on profiles of 10-300
breakpoints, where the per-call overhead of the general :class:`~bbopt.planner.Profile`
dominates; the plan model (:class:`bbopt.models.plan.PlanModel`), its incremental walk
(:mod:`bbopt.models.plan_walk`) and its placement on named BB nodes
(:mod:`bbopt.models.plan_named`) keep their profile as parallel lists instead -- breakpoints
``T``, free nodes ``FN``, free pooled BB ``FB`` and, on named BB nodes, the BB nodes' free space
per segment ``FK`` (a tuple per segment) -- and place jobs with these functions. Segments are
half-open (a job that ends at ``t`` frees its resources for one that starts at ``t``). The
compiled twins (:mod:`bbopt.planner.jit.pool`, :mod:`bbopt.planner.jit.named`) do the same
floating-point operations in the same order.
"""

from __future__ import annotations

from bisect import bisect_left


def earliest(T: list, FN: list, FB: list, i: int, n: float, bneed: float, w: float
             ) -> tuple[float, int, int]:
    """The earliest start, from segment ``i`` on, of a job of ``n`` nodes needing ``bneed``
    pooled bytes free (its request less the fit slack) for ``w`` seconds: ``(start, i, j)``,
    the job holding segments ``i .. j - 1``. The job must fit the last segment (or a sentinel
    breakpoint at infinity must end the lists, which no window reaches).

    >>> earliest([0.0, 10.0, 20.0], [1, 4, 2], [0.0, 5.0, 5.0], 0, 2, 1.0, 15.0)
    (10.0, 1, 3)
    """
    k = len(T)
    while True:
        while FN[i] < n or FB[i] < bneed:
            i += 1
        start = T[i]
        end = start + w
        j = i + 1
        while j < k and T[j] < end:
            if FN[j] < n or FB[j] < bneed:
                break
            j += 1
        else:
            return start, i, j
        i = j + 1


def reserve(T: list, FN: list, FB: list, i: int, j: int, end: float, n: float, b: float
            ) -> None:
    """Take ``n`` nodes and ``b`` pooled bytes on segments ``i .. j - 1`` (as found by
    :func:`earliest`), up to ``end``: the segment ``end`` falls in is split first.

    >>> T, FN, FB = [0.0, 10.0], [4, 4], [5.0, 5.0]
    >>> reserve(T, FN, FB, 0, 1, 5.0, 2, 1.0); T, FN, FB
    ([0.0, 5.0, 10.0], [2, 4, 4], [4.0, 5.0, 5.0])
    """
    if j == len(T) or T[j] != end:
        T.insert(j, end)
        FN.insert(j, FN[j - 1])
        FB.insert(j, FB[j - 1])
    for q in range(i, j):
        FN[q] -= n
        FB[q] -= b


def pool_window(T: list, FN: list, FB: list, i: int, n: float, b: float, w: float, tol: float
                ) -> tuple[int, int] | None:
    """The first segment ``i`` on or after the given one where ``n`` nodes and ``b`` pooled
    bytes (with the fit slack ``tol``) stay free for ``w`` seconds, with the segment ``j``
    where that window ends; ``None`` when only the sentinel is left (the lists end with a
    breakpoint at infinity). Every placement on named BB nodes needs the nodes and the pool, so
    a window with a short segment is skipped along with every later start that would still
    hold that segment."""
    last = len(T) - 1  # the sentinel
    while True:
        while FN[i] < n or FB[i] + tol < b:
            i += 1
        if i == last:
            return None
        j = bisect_left(T, T[i] + w, i + 1)
        if j > i + 1 and (min(FN[i + 1:j]) < n or min(FB[i + 1:j]) + tol < b):
            q = i + 1
            while FN[q] >= n and FB[q] + tol >= b:
                q += 1
            i = q + 1
            continue
        return i, j


def reserve_named(prof: list, i: int, j: int, end: float, n: float, b: float,
                  need: list[tuple[int, float]]) -> None:
    """Take ``n`` nodes, ``b`` pooled bytes and each ``(BB node, bytes)`` of ``need`` from the
    named-BB profile ``prof`` (``[T, FN, FB, FK, ...]``) on segments ``i .. j - 1``, splitting
    the segment that ``end`` falls in (a new breakpoint shares its neighbour's ``FK`` tuple; a
    reservation replaces the tuples of its segments)."""
    T, FN, FB, FK = prof[:4]
    if T[j] != end:
        T.insert(j, end)
        FN.insert(j, FN[j - 1])
        FB.insert(j, FB[j - 1])
        FK.insert(j, FK[j - 1])
    for q in range(i, j):
        FN[q] -= n
        FB[q] -= b
        if need:
            row = list(FK[q])
            for node, size in need:
                row[node] -= size
            FK[q] = tuple(row)

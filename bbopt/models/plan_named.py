"""Placing one job of a plan on named burst-buffer nodes: the inner loop of the plan model
(:class:`~bbopt.models.plan.PlanModel`) when the platform names its BB nodes.

Kopanski & Rzadca, Euro-Par 2021, Sections 3.3 and 4.1 (12 BB nodes of 40 GB): each compute node
of a job takes a piece ``bb / nodes`` on one BB node, placed by the one first-fit rule of
:func:`bbopt.planner.pieces.first_fit_runs`, as conservative backfilling places jobs on named
nodes (:class:`bbopt.policies.named_bb.NamedProfile`). The profile is ``[T, FN, FB, FK, SN,
NOW]``: breakpoints with a sentinel at infinity, free nodes, free pool BB, the free space of
the BB nodes on each segment (a tuple per segment: a breakpoint inserts one shared tuple, not
one value per BB node), the BB nodes' free space now and, on a platform placing by proximity,
the compute node ids free now (a start now then takes its nodes by the authors' resource filter
and its pieces by proximity, as the engine does; else ``None``) (see :meth:`PlanModel.named_profile
<bbopt.models.plan.PlanModel.named_profile>`). :func:`place` is :meth:`PlanModel.place
<bbopt.models.plan.PlanModel.place>`; it reads the model's private per-job lists and finds
windows and reserves them with the planner's list primitives (:mod:`bbopt.planner.lists`).
Pure evaluation, no solver.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Any

from bbopt.planner.lists import pool_window, reserve_named
from bbopt.planner.pieces import first_fit_runs, proximity_pieces


def cumulative_pieces(piece: float, count: int) -> list[float]:
    """``[0, piece, piece + piece, ...]`` up to ``count`` pieces, summed piece by piece (as the
    policies' profile sums a job's demand, so the same floats): entry ``c`` is the bytes ``c``
    pieces take on one BB node."""
    out = [0.0]
    a = 0.0
    for _ in range(count):
        a += piece
        out.append(a)
    return out


def place(model: Any, prof: list, p: int) -> tuple[float, tuple[tuple[int, int], ...] | None]:
    """Place job ``p`` of the plan model ``model`` (a :class:`~bbopt.models.plan.PlanModel` on
    named BB nodes) in the named-BB profile ``prof`` (changed in place) at its earliest
    start, as :class:`~bbopt.policies.named_bb.NamedProfile` does (module docstring):
    ``(start, runs)`` with the first-fit runs ``(BB node, pieces)`` of
    :func:`~bbopt.planner.pieces.first_fit_runs`, or ``(inf, None)`` when it fits nowhere
    (only possible when a running job outlives its expected end).

    The reference of the compiled placement (:func:`bbopt.planner.jit.named.place`): the
    window on the nodes and the pool and the reservation are the planner's
    (:func:`~bbopt.planner.lists.pool_window`, :func:`~bbopt.planner.lists.reserve_named`),
    the pieces are first fit on the least free space of each BB node over the window
    (:func:`first_fit_runs`), a job's per-node amounts the model's cumulative sums of its
    pieces (:func:`cumulative_pieces`)."""
    T, FN, FB, FK, SN, NOW = prof
    n, b, w = model._n[p], model._b[p], model._w[p]
    tol = model.tol
    i = bisect_left(T, model._t0[p])
    if b <= 0:
        # No burst buffer: no pieces, only the nodes (and the pool's rounding rule).
        window = pool_window(T, FN, FB, i, n, b, w, tol)
        if window is None:
            return math.inf, None
        i, j = window
        reserve_named(prof, i, j, T[i] + w, n, b, [])
        if i == 0 and NOW is not None:  # the compute nodes the engine will give it now
            return T[0], (_take_nodes(model, NOW, n), ())
        return T[i], ()
    piece = b / n
    acc = model._acc[p]
    if acc is None:
        acc = model._acc[p] = cumulative_pieces(piece, n)
    while True:
        window = pool_window(T, FN, FB, i, n, b, w, tol)
        if window is None:
            return math.inf, None
        i, j = window
        start = T[i]
        end = start + w
        if i == 0 and NOW is not None:
            # Now, on a proximity platform: the engine's compute nodes and pieces.
            got = _proximity_now(model, prof, j, end, n, b, piece, acc)
            if got is not None:
                return start, got
            i = 1
            continue
        if i == 0:
            # Now: the engine's pieces (first fit on what is free now), if they stay free.
            runs = first_fit_runs(SN, n, b, model._ftol)
            if runs is not None and _reserve_now(model, prof, j, end, n, b, runs, acc):
                for node, count in runs:
                    f = SN[node]
                    for _ in range(count):  # BBNodeSpace.take_pieces' sums
                        f -= piece
                    SN[node] = f
                return start, runs
            i = 1
            continue
        # First fit on each BB node's least free space in the window.
        runs = first_fit_runs(FK[i] if j == i + 1 else tuple(map(min, *FK[i:j])), n, b,
                              model._ftol)
        if runs is None:
            i += 1
            continue
        reserve_named(prof, i, j, end, n, b, [(node, acc[count]) for node, count in runs])
        return start, runs


def _take_nodes(model: Any, NOW: list, n: int) -> tuple[int, ...]:
    """Take from the free compute node ids ``NOW`` (changed in place) the ``n`` nodes the
    authors' resource filter gives a job now (:func:`~bbopt.planner.pieces.contiguous_nodes`),
    as the engine does for a start that names none."""
    nodes = model.placement.choose_nodes(NOW, n) or ()
    _drop_ids(NOW, nodes)
    return nodes


def _drop_ids(NOW: list, nodes: tuple[int, ...]) -> None:
    """Remove the compute node ids ``nodes`` from the free ids ``NOW`` (in place)."""
    taken = set(nodes)
    NOW[:] = [x for x in NOW if x not in taken]


def _reserve_now(model: Any, prof: list, j: int, end: float, n: int, b: float,
                 runs: tuple[tuple[int, int], ...], acc: list[float]) -> bool:
    """Reserve a start now on segments ``0 .. j - 1`` with the pieces ``runs`` (``(BB node,
    pieces)``) if each BB node's column keeps room for them over the window; ``False`` with
    nothing changed otherwise."""
    FK, ktol = prof[3], model._ktol
    least = FK[0] if j == 1 else tuple(map(min, *FK[0:j]))
    for node, count in runs:
        if least[node] + ktol[node] < acc[count]:
            return False
    reserve_named(prof, 0, j, end, n, b, [(node, acc[count]) for node, count in runs])
    return True


def _proximity_now(model: Any, prof: list, j: int, end: float, n: int, b: float,
                   piece: float, acc: list[float]):
    """Start a job of ``n`` nodes and ``b`` bytes now on a proximity platform, as the engine
    will: its compute nodes from the free ids now by the resource filter, its pieces by
    proximity on the BB nodes' free space now (:func:`~bbopt.planner.pieces.
    proximity_pieces`, the same floats), if they stay free on segments ``0 .. j - 1``. Returns
    ``(compute nodes, runs)`` (runs: ``(BB node, pieces)`` in BB node order) and reserves it
    in ``prof``, or ``None`` with nothing changed."""
    SN, NOW = prof[4], prof[5]
    nodes = model.placement.choose_nodes(NOW, n)
    if nodes is None:
        return None
    pieces = proximity_pieces(SN, nodes, b, model._ftol, model.proximity)
    if pieces is None:
        return None
    counts: dict[int, int] = {}
    for node, _ in pieces:
        counts[node] = counts.get(node, 0) + 1
    runs = tuple(sorted(counts.items()))
    if not _reserve_now(model, prof, j, end, n, b, runs, acc):
        return None
    for node, size in pieces:  # proximity_pieces' sums, piece by piece
        SN[node] -= size
    _drop_ids(NOW, nodes)
    return nodes, runs

"""``exhaustive`` backend of the window model: all ``2^w`` selections enumerated with numpy
(w <= 22), the reference the other backends are tested against (Fan et al., BBSched, Section
3.2.2: "to find all solutions, one has to exhaustively examine 2^w possible solutions").

Capacity rows are summed by meet in the middle (sums of the low half of the bits plus sums of the
high half, in chunks of about a million selections); feasible selections are evaluated in exact
bytes by the model itself. Forms: ``pareto`` (default; the non-dominated objective vectors, one
selection each, the one nearest the window front among equals), ``weighted`` and
``lexicographic``, as in :mod:`bbopt.solvers.window.forms`. Deterministic, no seed needed; the
budget is checked between chunks (out of budget: the contract's greedy fallback).
"""

from __future__ import annotations

import time as _time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.models.window import WindowModel, pareto_filter
from bbopt.solvers.base import Budget, BudgetExceeded, Result
from bbopt.solvers.window.forms import model_value, pareto_result

MAX_WINDOW = 22
_CHUNK = 1 << 20


def _bits(count: int, width: int) -> np.ndarray:
    return ((np.arange(count, dtype=np.int64)[:, None] >> np.arange(width)) & 1).astype(bool)


def feasible_selections(model: WindowModel, deadline: float | None = None):
    """Yield boolean matrices holding every feasible selection, chunk by chunk."""
    w = model.size
    if w > MAX_WINDOW:
        raise InputError(f"exhaustive enumeration is limited to w <= {MAX_WINDOW}, got {w}",
                         field="w")
    h = w // 2
    lo_bits, hi_bits = _bits(1 << h, h), _bits(1 << (w - h), w - h)
    rows = [model.nodes.astype(float), model.bb]
    caps = [model.free_nodes + 0.5, model.free_bb * (1 + 1e-12) + 1e-6]
    lo_sums = [lo_bits @ r[:h] for r in rows]
    hi_sums = [hi_bits @ r[h:] for r in rows]
    step = max(1, _CHUNK >> h)
    for start in range(0, len(hi_bits), step):
        if deadline is not None and _time.perf_counter() > deadline:
            raise BudgetExceeded
        sl = slice(start, start + step)
        ok = np.ones((len(lo_bits), len(hi_bits[sl])), dtype=bool)
        for ls, hs, cap in zip(lo_sums, hi_sums, caps, strict=False):
            ok &= (ls[:, None] + hs[None, sl]) <= cap
        li, hj = np.nonzero(ok)
        if li.size == 0:
            continue
        X = np.concatenate([lo_bits[li], hi_bits[sl][hj]], axis=1)
        X = X[model.feasible_many(X)]  # SSD placement and forced jobs
        if len(X):
            yield X


def solve_exhaustive(model: WindowModel, budget: Budget, seed: int, form: str = "pareto",
                     weights: Sequence[float] | None = None,
                     priority: Sequence[str] | None = None, tiebreak: bool = True,
                     **_: Any) -> Result:
    """Enumerate every selection (see the module docstring)."""
    deadline = _time.perf_counter() + budget.seconds
    if form == "pareto":
        keep_X, keep_F = [], []
        for X in feasible_selections(model, deadline):
            F = model.evaluate_many(X)
            # Within a chunk, keep the front plus ties nearest the window front.
            o = np.argsort(-(X @ model.order), kind="stable")
            X, F = X[o], F[o]
            idx = pareto_filter(F)
            keep_X.append(X[idx])
            keep_F.append(F[idx])
        if not keep_X:
            return Result(Status.INFEASIBLE, None, backend="exhaustive")
        xs = list(np.concatenate(keep_X))
        return pareto_result(model, xs, Status.OPTIMAL, "exhaustive",
                             {"enumerated": 1 << model.size})
    if form not in ("weighted", "lexicographic"):
        raise InputError(f"unknown form {form!r}", field="form")
    names = list(priority or model.objectives)
    best_x, best_key = None, None
    for X in feasible_selections(model, deadline):
        if form == "weighted":
            wts = np.asarray(weights or [1.0] * len(model.objectives), dtype=float)
            keys = [np.round((model.evaluate_many(X) / model.scales()) @ wts, 12)]
        else:
            keys = [np.array([model_value(model, n, x) for x in X]) if n not in model.objectives
                    else model.evaluate_many(X)[:, model.objectives.index(n)] for n in names]
        if tiebreak:
            keys.append((X @ model.order).astype(float))
        K = np.column_stack(keys)
        i = np.lexsort(tuple(-K[:, j] for j in range(K.shape[1] - 1, -1, -1)))[0]
        if best_key is None or tuple(K[i]) > best_key:
            best_key, best_x = tuple(K[i]), X[i].copy()
    if best_x is None:
        return Result(Status.INFEASIBLE, None, backend="exhaustive")
    values = model.evaluate(best_x)
    if form == "weighted":
        return Result(Status.OPTIMAL, best_x, float(best_key[0]), bound=float(best_key[0]),
                      backend="exhaustive", info={"objectives": values})
    return Result(Status.OPTIMAL, best_x, tuple(best_key[:len(names)]), backend="exhaustive",
                  info={"objectives": values})

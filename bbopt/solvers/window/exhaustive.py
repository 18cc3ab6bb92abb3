"""``exhaustive`` backend of the window model: all ``2^w`` selections enumerated with numpy
(w <= 22), the reference the other backends are tested against (Fan et al., BBSched, Section
3.2.2: "to find all solutions, one has to exhaustively examine 2^w possible solutions").

Capacity rows are summed by meet in the middle (sums of the low half of the bits plus sums of the
high half, in chunks of about a million selections); feasible selections are evaluated in exact
bytes by the model itself. Forms: ``pareto`` (default; the non-dominated objective vectors, one
selection each, the one nearest the window front among equals), ``weighted`` and
``lexicographic``, as in :mod:`bbopt.solvers.scalarize`. Deterministic, no seed needed; the
budget is checked between chunks (out of budget: the contract's greedy fallback).
"""

from __future__ import annotations

import time as _time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bbopt.errors import InputError
from bbopt.models.window import WindowModel, pareto_filter
from bbopt.solvers.base import Budget, BudgetExceeded, Result
from bbopt.solvers.scalarize import Candidates, Form, best_index, best_result

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
    caps = [model.free_nodes + 0.5, model.bb_room]
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
    spec = Form.of(model.objectives, form, weights, priority, tiebreak)
    kept, keys = [], []
    for X in feasible_selections(model, deadline):
        if spec.kind == "pareto":
            # Within a chunk, keep the front plus ties nearest the window front.
            F = model.evaluate_many(X)
            o = np.argsort(-(X @ model.order), kind="stable")
            X, F = X[o], F[o]
            kept.extend(X[pareto_filter(F)])
        else:  # the best of each chunk
            i, key = best_index(spec, model, X)
            kept.append(X[i].copy())
            keys.append(key)
    return best_result(Candidates(model), kept, spec, "exhaustive",
                       {"enumerated": 1 << model.size}, keys=keys or None)

"""``exhaustive`` backend of the victim-choice model: every subset of the candidates (at most
:data:`MAX_CANDIDATES`) enumerated with numpy, the reference the exact backends are tested
against. Ties are broken towards fewer victims, then the lexicographically first set in Algorithm
1's order. Deterministic; the budget is checked between chunks."""

from __future__ import annotations

import time as _time
from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.models.preemption import PreemptionModel
from bbopt.solvers.base import Budget, BudgetExceeded, Result

MAX_CANDIDATES = 20
_CHUNK = 1 << 16


def solve_exhaustive(model: PreemptionModel, budget: Budget, seed: int, **_: Any) -> Result:
    m = model.size
    if m > MAX_CANDIDATES:
        raise InputError(f"exhaustive victim choice is limited to {MAX_CANDIDATES} candidates, "
                         f"got {m}", field="candidates")
    deadline = _time.perf_counter() + budget.seconds
    best_x, best = None, (np.inf, np.inf)
    cols = np.arange(m)
    onehot = np.zeros((len(model.slack), m))
    onehot[model.entity, cols] = model.nodes
    for lo in range(0, 1 << m, _CHUNK):
        if _time.perf_counter() > deadline:
            raise BudgetExceeded
        codes = np.arange(lo, min(lo + _CHUNK, 1 << m), dtype=np.int64)
        X = ((codes[:, None] >> cols) & 1).astype(bool)
        ok = X @ model.nodes >= model.need_nodes
        ok &= X @ model.bb + model.bb_tol >= model.need_bb
        ok &= np.all((X @ onehot.T) - model.slack <= 0, axis=1)
        if not ok.any():
            continue
        X = X[ok]
        cost = X @ model.cost + model.penalty * X.sum(axis=1)
        count = X.sum(axis=1)
        i = np.lexsort((count, cost))[0]
        if (cost[i], count[i]) < best:
            best, best_x = (float(cost[i]), int(count[i])), X[i].copy()
    if best_x is None:
        return Result(Status.INFEASIBLE, None, backend="exhaustive")
    return Result(Status.OPTIMAL, best_x, model.evaluate(best_x), bound=best[0],
                  backend="exhaustive")

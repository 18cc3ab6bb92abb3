"""``greedy`` backend of the victim-choice model: Algorithm 1's least-prioritised-first rule
(Zvi & Oren, OMFS, lines 35-39), each victim kept within its entity's slack. Status FEASIBLE (no
optimality claim); INFEASIBLE when the candidates cannot cover the deficit this way."""

from __future__ import annotations

from typing import Any

from bbopt.core import Status
from bbopt.models.preemption import PreemptionModel
from bbopt.solvers.base import Budget, Result


def solve_greedy(model: PreemptionModel, budget: Budget, seed: int, **_: Any) -> Result:
    x = model.greedy()
    if x is None:
        return Result(Status.INFEASIBLE, None, backend="greedy")
    return Result(Status.FEASIBLE, x, model.evaluate(x), backend="greedy")

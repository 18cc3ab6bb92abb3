"""``scip`` backend of the victim-choice model (Zvi & Oren, OMFS, Algorithm 1 as a 0-1
program): SCIP on the program of the ``milp`` backend (:mod:`bbopt.solvers.preemption.milp`;
SCIP's settings in :mod:`bbopt.solvers.scip`). OPTIMAL when SCIP proves it, FEASIBLE when the
budget ends first with a solution; ``Result.info["trace"]``: the incumbents as ``(seconds,
victim set)`` pairs, seconds counted from the backend's start."""

from __future__ import annotations

import time as _time
from dataclasses import replace
from typing import Any

import numpy as np

from bbopt.models.preemption import PreemptionModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.preemption.milp import read_answer, victims_problem
from bbopt.solvers.scip import ScipCommand


def solve_scip(model: PreemptionModel, budget: Budget, seed: int, trace: bool = True,
               **_: Any) -> Result:
    t0 = _time.perf_counter()
    trace: list[tuple[float, list[int]]] = []
    prob, x = victims_problem(model)

    def seen(values: list[float]) -> None:
        trace.append((_time.perf_counter() - t0, np.round(values).astype(int).tolist()))

    status = prob.solve(ScipCommand(budget.seconds, seed, x, seen))
    result = read_answer(model, prob, x, status, "scip")
    return replace(result, info={**result.info, "trace": trace})

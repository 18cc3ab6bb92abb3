"""``scip`` backend of the victim-choice model (Zvi & Oren, OMFS, Algorithm 1 as a 0-1
program): SCIP on the program of the ``milp`` backend (:mod:`bbopt.solvers.preemption.milp`;
SCIP's settings in :mod:`bbopt.solvers.scip`). OPTIMAL when SCIP proves it, FEASIBLE when the
budget ends first with a solution; with ``trace=True``, ``Result.info["trace"]``: the
incumbents as ``(seconds, victim set)`` pairs, seconds counted from the backend's start. A set
SCIP's tolerance admits short of the BB deficit is cut off and the program solved again
(:func:`bbopt.solvers.preemption.milp.solve_with_cover_cuts`)."""

from __future__ import annotations

import time as _time
from dataclasses import replace
from typing import Any

import numpy as np

from bbopt.models.preemption import PreemptionModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.preemption.milp import solve_with_cover_cuts
from bbopt.solvers.scip import ScipCommand


def solve_scip(model: PreemptionModel, budget: Budget, seed: int, trace: bool = False,
               **_: Any) -> Result:
    t0 = _time.perf_counter()
    incumbents: list[tuple[float, list[int]]] = []

    def seen(values: list[float]) -> None:
        incumbents.append((_time.perf_counter() - t0, np.round(values).astype(int).tolist()))

    def solve(prob, x, seconds: float) -> int:
        return prob.solve(ScipCommand(max(seconds, 0.01), seed, x, seen if trace else None))

    result = solve_with_cover_cuts(model, budget, "scip", solve)
    if not trace:
        return result
    return replace(result, info={**result.info, "trace": incumbents})

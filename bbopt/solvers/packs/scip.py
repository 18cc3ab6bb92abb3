"""``scip`` backend of the pack model: SCIP on the duration-threshold program of the ``milp``
backend (Jeannot, Pallez & Vidal, "I/O-aware Pack-Scheduling", solved exactly; the program in
:mod:`bbopt.solvers.packs.milp`, the stages in :mod:`bbopt.solvers.packs._stages`, SCIP's
settings in :mod:`bbopt.solvers.scip`).

With ``trace=True``, ``Result.info["trace"]``: the incumbents of the first stage (the
objective) as ``(seconds, selection over all applications)`` pairs, seconds counted from the
backend's start.
"""

from __future__ import annotations

import time as _time
from dataclasses import replace
from typing import Any

import numpy as np

from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, Result, binary_answer
from bbopt.solvers.packs._stages import solve_stages
from bbopt.solvers.packs.milp import MIN_SOLVE_SECONDS, pack_problem, set_stage
from bbopt.solvers.scip import ScipCommand


def solve_scip(model: PackModel, budget: Budget, seed: int, trace: bool = False,
               **_: Any) -> Result:
    """Solve the pack model with SCIP (see the module docstring)."""
    t0 = _time.perf_counter()
    incumbents: list[tuple[float, list[int]]] = []

    def make(keep, t_int, u_int, q, capacity):
        prob, x = pack_problem(t_int, u_int, q, capacity)
        added = [0]

        def seen(values: list[float]) -> None:
            full = np.zeros(model.size, dtype=int)
            full[keep] = np.round(values).astype(int)
            incumbents.append((_time.perf_counter() - t0, full.tolist()))

        def solve(c, fixed, seconds, hint):
            if seconds < MIN_SOLVE_SECONDS:
                return "none", None, None
            first = not fixed
            added[0] = set_stage(prob, x, c, fixed, added[0])
            prob.solve(ScipCommand(seconds, seed, x, seen if first and trace else None))
            if prob.sol_status not in (1, 2):
                return "none", None, None
            xs = binary_answer(v.value() for v in x)
            if xs is None:
                return "none", None, None
            return ("optimal" if prob.sol_status == 1 else "feasible"), xs, None

        return solve

    result = solve_stages(model, budget, "scip", make)
    if not trace:
        return result
    return replace(result, info={**result.info, "trace": incumbents})

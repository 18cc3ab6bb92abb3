"""``cpsat`` backend of the pack model (OR-Tools CP-SAT): one Boolean per application, the pack
duration as an integer variable equal to the longest member (``add_max_equality``), the node row
and the linear average-bandwidth row ``sum u_i x_i <= D`` (Jeannot, Pallez & Vidal, "I/O-aware
Pack-Scheduling", solved exactly; stages in :mod:`bbopt.solvers.packs._stages`).

One worker, ``random_seed = seed``, the wall-clock budget left as ``max_time_in_seconds`` and
``max_deterministic_time`` when the budget gives one; the greedy pack (the model's fallback
order) is the first hint. Coefficients are the model's integer form (durations rounded down, I/O
times up: every answer is truly feasible). Option ``trace`` (default false): the incumbents of
the first stage, through a solution callback, as ``(seconds since the backend started,
selection over all applications)`` pairs in ``Result.info["trace"]`` (for the solver
benchmark).
"""

from __future__ import annotations

import time as _time
from dataclasses import replace
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.packs._stages import solve_stages


class _Incumbents(cp_model.CpSolverSolutionCallback):
    def __init__(self, x: list, keep: np.ndarray, size: int, t0: float, out: list) -> None:
        super().__init__()
        self.x, self.keep, self.size, self.t0, self.out = x, keep, size, t0, out

    def on_solution_callback(self) -> None:
        full = np.zeros(self.size, dtype=int)
        full[self.keep] = [int(self.boolean_value(v)) for v in self.x]
        self.out.append((_time.perf_counter() - self.t0, full.tolist()))


def _maker(budget: Budget, seed: int, trace: list | None = None, size: int = 0,
           t0: float = 0.0):
    def make(keep, t_int, u_int, q, capacity):
        m = cp_model.CpModel()
        n = len(keep)
        x = [m.new_bool_var(f"x{i}") for i in range(n)]
        d = m.new_int_var(0, int(t_int.max()), "D")
        m.add_max_equality(d, [int(t_int[i]) * x[i] for i in range(n)])
        m.add(cp_model.LinearExpr.weighted_sum(x, [int(v) for v in q]) <= int(capacity))
        m.add(cp_model.LinearExpr.weighted_sum(x, [int(v) for v in u_int]) <= d)
        det = [0.0]
        added = [0]

        def solve(c, fixed, seconds, hint):
            for coef, rhs in fixed[added[0]:]:
                m.add(cp_model.LinearExpr.weighted_sum(x, [int(v) for v in coef]) >= int(rhs))
                added[0] += 1
            m.maximize(cp_model.LinearExpr.weighted_sum(x, [int(v) for v in c]))
            m.clear_hints()
            if hint is not None:
                for v, h in zip(x, hint, strict=True):
                    m.add_hint(v, bool(h))
            solver = cp_model.CpSolver()
            p = solver.parameters
            p.num_workers = 1
            p.random_seed = int(seed)
            p.max_time_in_seconds = max(float(seconds), 1e-4)
            if budget.deterministic is not None:
                p.max_deterministic_time = max(budget.deterministic - det[0], 1e-4)
            if trace is not None and not fixed:  # the first stage's incumbents
                status = solver.solve(m, _Incumbents(x, keep, size, t0, trace))
            else:
                status = solver.solve(m)
            det[0] += solver.deterministic_time
            if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
                return "none", None, None
            xs = np.array([solver.boolean_value(v) for v in x], dtype=bool)
            outcome = "optimal" if status == cp_model.OPTIMAL else "feasible"
            return outcome, xs, float(solver.best_objective_bound)

        return solve

    return make


def solve_cpsat(model: PackModel, budget: Budget, seed: int, trace: bool = False,
                **_: Any) -> Result:
    """Solve the pack model with CP-SAT (see the module docstring)."""
    if not trace:
        return solve_stages(model, budget, "cpsat", _maker(budget, seed))
    out: list = []
    result = solve_stages(model, budget, "cpsat",
                          _maker(budget, seed, out, model.size, _time.perf_counter()))
    return replace(result, info={**result.info, "trace": out})

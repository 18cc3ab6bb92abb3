"""``cpsat`` backend of the victim-choice model: a 0-1 program for OR-Tools CP-SAT.

Costs are scaled to integers (node-seconds, rounded to a millisecond) and BB to a fraction of the
model's BB tolerance, as CP-SAT needs (so no set the model accepts is lost to rounding); the
answer is evaluated by the model in exact floats. OPTIMAL when CP-SAT proves it, FEASIBLE when
the budget ends first, INFEASIBLE when no victim set covers the deficit. Option ``trace`` (default
false): the incumbents, through a solution callback, as ``(seconds since the backend started,
victim set)`` pairs in ``Result.info["trace"]`` (for the solver benchmark)."""

from __future__ import annotations

import time as _time
from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.models.preemption import PreemptionModel
from bbopt.solvers.base import Budget, Result

_SCALE = 1000.0


def solve_cpsat(model: PreemptionModel, budget: Budget, seed: int, workers: int = 1,
                trace: bool = False, **_: Any) -> Result:
    from ortools.sat.python import cp_model

    t0 = _time.perf_counter()

    m = model.size
    cp = cp_model.CpModel()
    x = [cp.NewBoolVar(f"x{i}") for i in range(m)]
    nodes = model.nodes.tolist()
    cp.Add(sum(nodes[i] * x[i] for i in range(m)) >= model.need_nodes)
    if model.need_bb > model.bb_tol:
        # BB in units of tol / (m + 1), rounded down per victim, and the deficit lowered by m
        # units: every set the model accepts (sum >= need - tol) is admitted, and an admitted
        # set falls short of that by less than one tol (checked by evaluate below).
        tol = model.bb_tol or max(model.need_bb, float(model.bb.max(initial=0.0))) * 1e-9
        unit = tol / (m + 1)
        bb = np.floor(model.bb / unit).astype(np.int64).tolist()
        need = int(np.ceil((model.need_bb - tol) / unit)) - m
        cp.Add(sum(bb[i] * x[i] for i in range(m)) >= need)
    for e, slack in enumerate(model.slack.tolist()):
        members = [i for i in range(m) if model.entity[i] == e]
        if members and sum(nodes[i] for i in members) > slack:
            cp.Add(sum(nodes[i] * x[i] for i in members) <= slack)
    cost = np.rint((model.cost + model.penalty) * _SCALE).astype(np.int64).tolist()
    # Ties: fewer victims (cost counts in units of 1/_SCALE; a victim adds 1/(m+1) of a unit).
    cp.Minimize(sum((cost[i] * (m + 1) + 1) * x[i] for i in range(m)))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = budget.seconds
    if budget.deterministic is not None:
        solver.parameters.max_deterministic_time = budget.deterministic
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = seed
    incumbents: list = []
    if trace:
        class Incumbents(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                incumbents.append((_time.perf_counter() - t0,
                                   [int(self.boolean_value(v)) for v in x]))

        status = solver.Solve(cp, Incumbents())
    else:
        status = solver.Solve(cp)
    if status == cp_model.INFEASIBLE:
        return Result(Status.INFEASIBLE, None, backend="cpsat")
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Result(Status.FALLBACK, None, backend="cpsat")
    sol = np.array([bool(solver.Value(v)) for v in x], dtype=bool)
    value = model.evaluate(sol)
    if not np.isfinite(value):  # rounding of BB units let an infeasible set through
        return Result(Status.FALLBACK, None, backend="cpsat")
    st = Status.OPTIMAL if status == cp_model.OPTIMAL else Status.FEASIBLE
    return Result(st, sol, value, bound=solver.BestObjectiveBound() / _SCALE / (m + 1),
                  backend="cpsat", info={"trace": incumbents} if trace else {})

"""``cpsat`` backend of the victim-choice model: a 0-1 program for OR-Tools CP-SAT.

Costs are scaled to integers (node-seconds, rounded to a millisecond). BB is scaled to at most
:data:`BB_UNITS` units per victim, each victim's amount rounded up and the deficit down, so the
row relaxes the model's (no set the model accepts is lost to rounding) while its coefficients
stay small: CP-SAT's presolve answered a costlier set as optimal on BB rows of ~4e9 units per
victim (ten candidates, two of them alike; the exhaustive optimum was lost). A set the relaxed
row admits but the model, in exact floats, does not is cut off with every set whose BB victims
are among its own (a cover cut) and CP-SAT solves again, so the first set that passes is the
model's optimum. OPTIMAL when CP-SAT proves it, FEASIBLE when the budget ends first,
INFEASIBLE when no victim set covers the deficit. Option ``trace`` (default false): the
incumbents, through a solution callback, as ``(seconds since the backend started, victim set)``
pairs in ``Result.info["trace"]`` (for the solver benchmark)."""

from __future__ import annotations

import time as _time
from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.models.preemption import PreemptionModel
from bbopt.solvers.base import Budget, Result

_SCALE = 1000.0
#: The BB row's resolution: the largest amount (deficit or victim) is this many units.
BB_UNITS = 1 << 20


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
        top = max(model.need_bb, float(model.bb.max(initial=0.0)))
        unit = top / BB_UNITS
        # rounded up per victim (none stays none), the deficit less the model's tolerance
        # down: a relaxation of the model's row
        bb = np.where(model.bb > 0, np.floor(model.bb / unit) + 1, 0).astype(np.int64).tolist()
        need = int(np.floor((model.need_bb - model.bb_tol) / unit))
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
    callback = None
    used = 0.0  # deterministic time of the solves before a cut
    if trace:
        class Incumbents(cp_model.CpSolverSolutionCallback):
            def on_solution_callback(self) -> None:
                incumbents.append((_time.perf_counter() - t0,
                                   [int(self.boolean_value(v)) for v in x]))

        callback = Incumbents()
    while True:
        status = solver.Solve(cp, callback)
        if status == cp_model.INFEASIBLE:
            return Result(Status.INFEASIBLE, None, backend="cpsat")
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return Result(Status.FALLBACK, None, backend="cpsat")
        sol = np.array([bool(solver.Value(v)) for v in x], dtype=bool)
        value = model.evaluate(sol)
        if np.isfinite(value):
            break
        # the relaxed BB row admitted a set short of the deficit in exact floats: cut it off
        left = budget.seconds - (_time.perf_counter() - t0)
        if left <= 0:
            return Result(Status.FALLBACK, None, backend="cpsat")
        solver.parameters.max_time_in_seconds = left
        if budget.deterministic is not None:
            used += solver.deterministic_time
            if used >= budget.deterministic:
                return Result(Status.FALLBACK, None, backend="cpsat")
            solver.parameters.max_deterministic_time = budget.deterministic - used
        # a set short of BB needs a victim with BB outside it: every set whose BB victims are
        # among these is short too
        cp.AddBoolOr([x[i] for i in range(m) if not sol[i] and model.bb[i] > 0])
    st = Status.OPTIMAL if status == cp_model.OPTIMAL else Status.FEASIBLE
    return Result(st, sol, value, bound=solver.BestObjectiveBound() / _SCALE / (m + 1),
                  backend="cpsat", info={"trace": incumbents} if trace else {})

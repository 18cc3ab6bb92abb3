"""``milp`` backend of the victim-choice model: the same 0-1 program through PuLP and CBC (or
HiGHS when PuLP finds it). OPTIMAL when the solver proves it; out of time without a solution,
the contract's greedy fallback. A set that the solver's tolerance admits but the model, in
exact floats, does not (its BB short of the deficit) is cut off with every set whose BB victims
are among its own, and the program solved again within the budget, as the ``cpsat`` backend
does (:func:`solve_with_cover_cuts`, shared with the ``scip`` backend)."""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.models.preemption import PreemptionModel
from bbopt.solvers.base import Budget, Result, binary_answer


def victims_problem(model: PreemptionModel):
    """The 0-1 program of ``model`` for PuLP and its variables (the ``milp`` and ``scip``
    backends and the MPS / LP export share it)."""
    import pulp

    m = model.size
    prob = pulp.LpProblem("victims", pulp.LpMinimize)
    x = [pulp.LpVariable(f"x{i}", cat="Binary") for i in range(m)]
    tie = 1e-6 * float(max(model.cost.max(initial=0.0), 1.0))
    prob += pulp.lpSum((float(model.cost[i]) + model.penalty + tie) * x[i] for i in range(m))
    prob += pulp.lpSum(int(model.nodes[i]) * x[i] for i in range(m)) >= model.need_nodes
    if model.need_bb > model.bb_tol:
        # BB in units of a thousandth of the largest amount: byte counts (1e11) as
        # coefficients made CBC answer a fractional set as optimal, or call a feasible
        # program infeasible; the answer is checked in exact bytes by the model
        unit = max(float(model.bb.max(initial=0.0)), model.need_bb) / 1000.0
        prob += (pulp.lpSum(float(model.bb[i]) / unit * x[i] for i in range(m))
                 >= (model.need_bb - model.bb_tol) / unit)
    for e, slack in enumerate(model.slack.tolist()):
        members = [i for i in range(m) if model.entity[i] == e]
        if members:
            prob += pulp.lpSum(int(model.nodes[i]) * x[i] for i in members) <= int(slack)
    return prob, x


def solve_milp(model: PreemptionModel, budget: Budget, seed: int, **_: Any) -> Result:
    import pulp

    # CBC's preprocessing returns a non-optimal set as optimal on some of these covering rows
    # (nodes 2, 2, 1, 4 of cost 0, 0, 7, 0, need 7, slack 8: it answers cost 7), so it is off;
    # without it CBC fails outright on some infeasible programs, which it then solves as usual.
    def solve(prob, x, seconds: float) -> int:
        def run(options: list[str]) -> int:
            return prob.solve(pulp.PULP_CBC_CMD(msg=False, timeLimit=max(seconds, 0.01),
                                                options=options))

        try:
            return run(["preprocess off"])
        except pulp.PulpSolverError:
            return run([])

    return solve_with_cover_cuts(model, budget, "milp", solve)


def solve_with_cover_cuts(model: PreemptionModel, budget: Budget, backend: str,
                          solve: Callable[[Any, list, float], int]) -> Result:
    """:func:`victims_problem` solved by ``solve(prob, x, seconds)`` (a PuLP status) and read by
    :func:`read_answer`; an integral set the model rejects (short of BB in exact floats, which
    the solver's tolerance admitted) is cut off with every set whose BB victims are among its
    own, and solved again with what is left of ``budget``."""
    import pulp

    t0 = _time.perf_counter()
    prob, x = victims_problem(model)
    while True:
        left = budget.seconds - (_time.perf_counter() - t0)
        status = solve(prob, x, left)
        result = read_answer(model, prob, x, status, backend)
        if result.status is not Status.FALLBACK or pulp.LpStatus[status] != "Optimal":
            return result
        sol = binary_answer(v.value() for v in x)
        if sol is None or _time.perf_counter() - t0 >= budget.seconds:
            return result
        outside = [x[i] for i in range(model.size) if not sol[i] and model.bb[i] > 0]
        if not outside:  # no victim left to add BB: no set covers the deficit
            return Result(Status.INFEASIBLE, None, backend=backend)
        prob += pulp.lpSum(outside) >= 1


def read_answer(model: PreemptionModel, prob, x, status: int, backend: str) -> Result:
    """The Result of a solved victims program (the model's own evaluation of the answer)."""
    import pulp

    if pulp.LpStatus[status] == "Infeasible":
        return Result(Status.INFEASIBLE, None, backend=backend)
    if pulp.LpStatus[status] != "Optimal" or prob.sol_status not in (1, 2):
        return Result(Status.FALLBACK, None, backend=backend)
    sol = binary_answer(v.value() for v in x)
    value = model.evaluate(sol)  # inf for no answer (a fractional point)
    if not np.isfinite(value):
        return Result(Status.FALLBACK, None, backend=backend)
    if prob.sol_status == 2:  # stopped by the time limit with a solution
        return Result(Status.FEASIBLE, sol, value, backend=backend)
    return Result(Status.OPTIMAL, sol, value, bound=value, backend=backend)

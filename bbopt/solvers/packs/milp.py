"""``milp`` backend of the pack model (PuLP with CBC): the duration-threshold linearisation.

Applications sorted by non-increasing time alone (rank ``r``); ``y_r = 1`` says application ``r``
is the longest member, ``z_r = y_1 + ... + y_r`` (at most 1) that the longest member is among the
``r`` longest; then ``x_r <= z_r`` (only applications no longer than the longest member),
``y_r <= x_r``, the node row, and the average-bandwidth row ``sum u_i x_i <= sum T_k y_k``
(Jeannot, Pallez & Vidal, "I/O-aware Pack-Scheduling": a family of knapsacks over a duration
threshold in one MILP). Integer coefficients as in :func:`bbopt.models.packs.integer_form`,
divided by a common scale for CBC. CBC runs serially with its own time limit (``-sec``, what is
left of the budget) and ``randomSeed = seed + 1``; a solve stopped by the limit with a solution
is FEASIBLE (PuLP's ``sol_status`` 2); CBC's preprocessing is off (it declared feasible stages
infeasible). CBC is a separate process (some 10-30 ms a solve): with
less than ``MIN_SOLVE_SECONDS`` left no solve starts and the contract's fallback answers.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pulp

from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, Result, binary_answer
from bbopt.solvers.packs._stages import solve_stages

MIN_SOLVE_SECONDS = 0.05
#: The largest coefficient of a row keeping an earlier stage (see :func:`set_stage`).
KEEP_ROW_MAX = 1e6


def pack_problem(t_int: np.ndarray, u_int: np.ndarray, q: np.ndarray, capacity: int
                 ) -> tuple[pulp.LpProblem, list[pulp.LpVariable]]:
    """The pack program over the kept applications (no objective yet) and its ``x``."""
    n = len(t_int)
    order = np.lexsort((np.arange(n), -t_int))
    scale = float(t_int.max())
    prob = pulp.LpProblem("pack", pulp.LpMaximize)
    x = [pulp.LpVariable(f"x{i}", cat="Binary") for i in range(n)]
    y = [pulp.LpVariable(f"y{i}", cat="Binary") for i in range(n)]
    z = [pulp.LpVariable(f"z{r}", 0, 1) for r in range(n)]
    for r, i in enumerate(order):
        prob += (z[r] == (z[r - 1] if r else 0) + y[i]), f"cum{r}"
        prob += x[i] <= z[r], f"thr{r}"
        prob += y[i] <= x[i], f"lng{r}"
    prob += pulp.lpSum(int(q[i]) * x[i] for i in range(n)) <= int(capacity), "nodes"
    prob += (pulp.lpSum(float(u_int[i]) / scale * x[i] for i in range(n))
             <= pulp.lpSum(float(t_int[i]) / scale * y[i] for i in range(n))), "avg_bw"
    return prob, x


def set_stage(prob: pulp.LpProblem, x: list[pulp.LpVariable], c: np.ndarray,
              fixed: list[tuple[np.ndarray, int]], added: int) -> int:
    """Add the rows keeping the stages ``fixed[added:]`` and set stage ``c`` as the objective;
    returns how many stage rows the program now has."""
    n = len(x)
    cmax = float(max(np.abs(c).max(), 1))
    for coef, rhs in fixed[added:]:
        # the integer coefficients divided by a unit that brings the largest to KEEP_ROW_MAX:
        # for binaries the row is >= rhs exactly with half a unit of slack, which stays far
        # above CBC's 1e-7 tolerance (a row scaled to 1 let CBC give up ~1e-7 of an earlier
        # stage to a later one), while coefficients of ~1e9 as they are made CBC without
        # preprocessing answer a fractional point as optimal, or call the stage infeasible
        # although the earlier stage's pack satisfies it
        unit = max(float(np.abs(coef).max()) / KEEP_ROW_MAX, 1.0)
        prob.addConstraint(pulp.lpSum(float(coef[i]) / unit * x[i] for i in range(n))
                           >= (int(rhs) - 0.5) / unit, f"keep{added}")
        added += 1
    prob.setObjective(pulp.lpSum(float(c[i]) / cmax * x[i] for i in range(n)))
    return added


def _maker(seed: int):
    def make(keep, t_int, u_int, q, capacity):
        prob, x = pack_problem(t_int, u_int, q, capacity)
        k = [0]

        def solve(c, fixed, seconds, hint):
            if seconds < MIN_SOLVE_SECONDS:
                return "none", None, None
            k[0] = set_stage(prob, x, c, fixed, k[0])
            # (CBC by default ignores an improvement below its cutoff increment of 1e-4: a 1-node
            # application of work 1 beside one of 40,040, 2.5e-5 of the scaled objective, was
            # left out of a pack answered as optimal)
            seeds = [f"randomSeed {seed + 1}", f"randomCbcSeed {seed + 1}", "increment 1e-12"]

            def run(options: list[str]) -> None:
                prob.solve(pulp.PULP_CBC_CMD(msg=False, timeLimit=max(seconds - 0.02, 0.01),
                                             options=seeds + options))

            # CBC's preprocessing declares a later stage infeasible although the earlier
            # stage's answer satisfies it (six applications, objective work then the Char
            # order: answered FEASIBLE under a 20 s budget), so it is off; a program CBC then
            # fails on outright is solved again with it.
            try:
                run(["preprocess off"])
            except pulp.PulpSolverError:
                run([])
            if prob.sol_status not in (1, 2):
                return "none", None, None
            xs = binary_answer(v.value() for v in x)
            if xs is None:
                return "none", None, None
            outcome = "optimal" if prob.sol_status == 1 else "feasible"
            return outcome, xs, None

        return solve

    return make


def solve_milp(model: PackModel, budget: Budget, seed: int, **_: Any) -> Result:
    """Solve the pack model with CBC through PuLP (see the module docstring)."""
    return solve_stages(model, budget, "milp", _maker(seed))

"""``milp`` backend of the window model (PuLP; CBC by default, the HiGHS command-line solver when
installed): weighted, lexicographic and the exact Pareto front by epsilon-constraint, the same
forms as ``cpsat`` (drivers in :mod:`bbopt.solvers.window.forms`; Fan et al., BBSched,
Section 3.2, solved exactly).

The disjunctions of the epsilon-constraint front become big-M rows with one binary per
objective, the M taken from the variable boxes. CBC runs serially (no ``threads`` option: the
bundled CBC 2.10.3 with ``-threads 1`` sometimes hangs for 10 s when it exits), with its own
time limit (``-sec``, wall clock) set to what is left of the budget for the whole front -- every
solve of the epsilon-constraint loop gets the remaining time, and a front cut short comes back
with status FEASIBLE -- and ``randomSeed``/``randomCbcSeed`` = seed. CBC checks its limit only
between steps, so the process is also killed when the remaining budget (plus
``KILL_GRACE_SECONDS``) has passed; that solve then counts as not finished. PuLP reports status
"Optimal" when CBC stops at the time limit with a solution, so the outcome is read from
``sol_status`` (1: optimal, 2: feasible, -1: infeasible, 0: none found). CBC runs as a separate
process, so each solve costs some 10-30 ms; with less than ``min_solve_seconds`` (0.02 s) of the
budget left no solve is started and the contract's greedy fallback answers.

Options: as ``cpsat`` plus ``solver`` ("cbc" | "highs").
"""

from __future__ import annotations

import itertools
import os
import subprocess
from typing import Any

import numpy as np
import pulp

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.models.window import WindowModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.window.forms import LinearForm, solve_window

MIN_SOLVE_SECONDS = 0.02
#: Time CBC may overrun its own limit before the process is killed.
KILL_GRACE_SECONDS = 0.02
#: CBC's own limit is what is left minus this (its exit and the solution file take ~20 ms).
EXIT_SECONDS = 0.02


class _DeadlineCbc(pulp.PULP_CBC_CMD):
    """PuLP's CBC command with a hard wall-clock deadline on the CBC process (PuLP waits for
    it without one); otherwise the same files and the same solution reader."""

    def __init__(self, seconds: float, seed: int) -> None:
        super().__init__(msg=False, timeLimit=max(seconds - EXIT_SECONDS, 0.01),
                         options=[f"randomSeed {seed + 1}", f"randomCbcSeed {seed + 1}"])
        self.deadline = max(seconds - EXIT_SECONDS, 0.01) + KILL_GRACE_SECONDS
        self.killed = False

    def solve_CBC(self, lp, use_mps=True):
        if not self.executable(self.path):
            raise pulp.PulpSolverError(f"cannot execute CBC at {self.path}")
        tmp_mps, tmp_sol = self.create_tmp_files(lp.name, "mps", "sol")
        vs, var_names, con_names, _ = lp.writeMPS(tmp_mps, rename=1)
        args = [self.path, tmp_mps]
        if lp.sense == pulp.LpMaximize:
            args.append("-max")
        args += ["-sec", f"{self.timeLimit}", "-timeMode", "elapsed"]
        for option in self.options:
            args += ["-" + option.split()[0], *option.split()[1:]]
        args += ["-branch", "-printingOptions", "all", "-solution", tmp_sol]
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)
        try:
            proc.wait(timeout=self.deadline)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            self.killed = True
        try:
            if self.killed or proc.returncode != 0 or not os.path.exists(tmp_sol):
                lp.assignStatus(pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound)
                return pulp.LpStatusNotSolved
            status, values, _, _, _, sol_status = self.readsol_MPS(tmp_sol, lp, vs, var_names,
                                                                   con_names)
            lp.assignVarsVals(values)
            lp.assignStatus(status, sol_status)
            return status
        finally:
            self.delete_tmp_files(tmp_mps, tmp_sol)


class _Pulp:
    def __init__(self, form: LinearForm, budget: Budget, seed: int, solver: str) -> None:
        self.form = form
        self.prob = pulp.LpProblem("window", pulp.LpMaximize)
        self.x = [pulp.LpVariable(f"x{i}", cat="Binary") for i in range(form.w)]
        self.a = [pulp.LpVariable(f"A{j}", lowBound=0, upBound=int(form.a_hi[j]), cat="Integer")
                  for j in range(form.k)]
        for i in range(form.w):
            if form.fix0[i]:
                self.x[i].upBound = 0
            elif form.fix1[i]:
                self.x[i].lowBound = 1
        for r, (cx, ca, ub) in enumerate(form.rows):
            self.prob += (self._expr(cx, ca) <= int(ub), f"row{r}")
        self.seed = seed
        self.solver = solver
        self.names = itertools.count()

    def _expr(self, cx: np.ndarray, ca: np.ndarray):
        terms = [(v, int(c)) for v, c in zip(self.x, cx, strict=False) if c]
        terms += [(v, int(c)) for v, c in zip(self.a, ca, strict=False) if c]
        return pulp.LpAffineExpression(terms)

    def _cmd(self, seconds: float):
        if self.solver == "cbc":
            return _DeadlineCbc(seconds, self.seed)
        if self.solver == "highs":
            cmd = pulp.HiGHS_CMD(msg=False, timeLimit=max(seconds, 0.01), threads=1,
                                 options=[f"random_seed={self.seed}"])
            if not cmd.available():
                raise InputError("the HiGHS command-line solver is not installed; use solver=cbc",
                                 field="solver")
            return cmd
        raise InputError(f"unknown MILP solver {self.solver!r}; known: cbc, highs",
                         field="solver")

    def maximize(self, cx, ca, seconds, hint=None, work=None):
        if work is not None:
            seconds = min(seconds, max(work * 4, MIN_SOLVE_SECONDS * 5))
        if seconds < MIN_SOLVE_SECONDS:
            return Status.FALLBACK, None, None, None
        self.prob.setObjective(self._expr(cx, ca) + 0)
        self.prob.solve(self._cmd(seconds))
        sol = self.prob.sol_status
        if sol == pulp.LpSolutionInfeasible or self.prob.status == pulp.LpStatusInfeasible:
            return Status.INFEASIBLE, None, None, None
        if sol not in (pulp.LpSolutionOptimal, pulp.LpSolutionIntegerFeasible):
            return Status.FALLBACK, None, None, None
        x = np.array([round(v.varValue or 0.0) for v in self.x], dtype=np.int64)
        a = np.array([round(v.varValue or 0.0) for v in self.a], dtype=np.int64)
        if not self._feasible(x, a):
            return Status.FALLBACK, None, None, None
        outcome = Status.OPTIMAL if sol == pulp.LpSolutionOptimal else Status.FEASIBLE
        return outcome, x.astype(bool), a, None

    def _feasible(self, x: np.ndarray, a: np.ndarray) -> bool:
        """Rounded values still satisfy every integer row (guards against tolerances)."""
        for cx, ca, ub in self.form.rows:
            if int(cx @ x) + (int(ca @ a) if self.form.k else 0) > ub:
                return False
        return True

    def push_ge(self, cx, ca, rhs):
        name = f"tmp{next(self.names)}"
        self.prob += (self._expr(cx, ca) >= int(rhs), name)
        return name

    def pop(self, handle) -> None:
        del self.prob.constraints[handle]

    def add_any_ge(self, terms) -> None:
        k = next(self.names)
        bs = [pulp.LpVariable(f"cut{k}_{j}", cat="Binary") for j in range(len(terms))]
        for b, (cx, ca, rhs) in zip(bs, terms, strict=False):
            lo, _ = self.form.bounds(cx, ca)
            big_m = max(int(rhs) - lo, 0)
            self.prob += (self._expr(cx, ca) >= int(rhs) - big_m * (1 - b),
                          f"cut{k}_{id(b)}")
        self.prob += (pulp.lpSum(bs) >= 1, f"cutany{k}")


def solve_milp(model: WindowModel, budget: Budget, seed: int, solver: str = "cbc",
               **options: Any) -> Result:
    """Solve the window model with PuLP (see the module docstring for options)."""
    return solve_window(model, budget, lambda lf: _Pulp(lf, budget, seed, solver), "milp",
                        **options)

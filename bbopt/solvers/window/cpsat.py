"""``cpsat`` backend of the window model (OR-Tools CP-SAT): weighted, lexicographic and the exact
Pareto front by epsilon-constraint (Fan et al., BBSched, Section 3.2, solved exactly; the
drivers are in :mod:`bbopt.solvers.window.forms`).

Reproducibility: one worker, ``random_seed = seed`` and, when the budget gives one,
``max_deterministic_time``; the wall-clock budget is ``max_time_in_seconds`` for each solve (what
is left). With one worker and a fixed seed the answer is the same from run to run unless the
wall-clock limit bites; a deterministic limit makes even a cut-short answer reproducible.
Coefficients are the model's integer form (BB rounded up, capacities down: always truly
feasible).

Options: ``form`` ("pareto" | "weighted" | "lexicographic"), ``weights``, ``priority``,
``tiebreak`` (prefer jobs nearest the window front among equal objective values, default true;
"solver" adds a work-limited solve per front point), ``max_points`` (stop the front after so
many points), ``method`` (front: "auto", "sequential" for two objectives, "disjunctive"),
``two_list`` (list the nodes/BB front by enumeration before solving, default true; see
:mod:`bbopt.solvers.window.subset_sums`), ``trace`` (default false: record the incumbents of
the first solve, through a CP-SAT solution callback, as ``(seconds since the backend started,
selection)`` pairs in ``Result.info["trace"]``; for the solver benchmark).
"""

from __future__ import annotations

import time as _time
from dataclasses import replace
from typing import Any

import numpy as np
from ortools.sat.python import cp_model

from bbopt.core import Status
from bbopt.models.window import WindowModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.window.forms import LinearForm, solve_window

#: CP-SAT ``linearization_level``: 2 linearises the enforced epsilon-constraint rows, which
#: turns some w = 50 fronts from tens of seconds into 0.1 s (window instances, docs/bench.md).
LINEARIZATION: int | None = 2
#: CP-SAT's presolve (``cp_model_presolve``). The model is two or three knapsack rows over at
#: most a few hundred Booleans, already reduced (``tighten_rows``); each solve of a front would
#: presolve it again. Off, the random-scarce w = 50 fronts take 2.5x less deterministic time
#: (median; 1.4x at p95) with the same fronts.
PRESOLVE = False


class _Model(cp_model.CpModel):
    """A CP-SAT model without OR-Tools' pre-PEP 8 aliases: ``CpModel()`` installs a camel-case
    alias of each of its ~100 ``add_*``/``new_*`` methods on every construction (about a third
    of a millisecond, as much as a small window's whole solve; a window policy builds one model
    per decision). Only the snake-case names are used here; the model is the same."""

    def _add_pre_pep8_methods(self) -> None:
        pass


class _Incumbents(cp_model.CpSolverSolutionCallback):
    """Appends ``(seconds since t0, values of x)`` at every solution CP-SAT finds."""

    def __init__(self, x: list, t0: float, out: list) -> None:
        super().__init__()
        self.x, self.t0, self.out = x, t0, out

    def on_solution_callback(self) -> None:
        self.out.append((_time.perf_counter() - self.t0, [int(self.value(v)) for v in self.x]))


class _CpSat:
    """One CP-SAT model of a window's integer program, solved repeatedly by the drivers.

    The model is built at the first call that needs it, not here: most fronts are listed by
    enumeration (:mod:`bbopt.solvers.window.subset_sums`) and never reach the solver, and
    building an OR-Tools model costs more than such a whole decision (``CpModel()`` alone
    installs its camel-case aliases at every construction). Built later, it is the same model:
    the same variables and rows, in the same order, from a copy of the form's rows taken now.
    """

    def __init__(self, form: LinearForm, budget: Budget, seed: int) -> None:
        self._form = form
        self._rows = list(form.rows)
        self._model: cp_model.CpModel | None = None
        self.budget = budget
        self.seed = seed
        self.det_used = 0.0
        self.trace: list | None = None  # a list: record the first solve's incumbents
        self.traced = False
        self.trace_counts = False  # trace the auxiliaries (the I/O window's counts), not x
        self.t0 = 0.0

    @property
    def model(self) -> cp_model.CpModel:
        if self._model is None:
            self._build()
        return self._model

    def _build(self) -> None:
        form = self._form
        m = _Model()
        self._model = m
        self.x = [m.new_bool_var(f"x{i}") for i in range(form.w)]
        self.a = [m.new_int_var(0, int(form.a_hi[j]), f"A{j}") for j in range(form.k)]
        for i in range(form.w):
            if form.fix0[i]:
                m.add(self.x[i] == 0)
            elif form.fix1[i]:
                m.add(self.x[i] == 1)
        for cx, ca, ub in self._rows:
            m.add(self._expr(cx, ca) <= int(ub))

    def _expr(self, cx: np.ndarray, ca: np.ndarray):
        terms = [(v, int(c)) for v, c in zip(self.x, cx, strict=False) if c]
        terms += [(v, int(c)) for v, c in zip(self.a, ca, strict=False) if c]
        if not terms:
            return cp_model.LinearExpr.constant(0)
        return cp_model.LinearExpr.weighted_sum([v for v, _ in terms], [c for _, c in terms])

    def maximize(self, cx, ca, seconds, hint=None, work=None):
        model = self.model  # built now if need be (before _expr reads the variables)
        model.maximize(self._expr(cx, ca))
        self.model.clear_hints()
        if hint is not None:
            for v, h in zip(self.x, hint, strict=True):
                self.model.add_hint(v, bool(h))
        solver = cp_model.CpSolver()
        p = solver.parameters
        p.num_workers = 1
        if LINEARIZATION is not None:
            p.linearization_level = LINEARIZATION
        p.cp_model_presolve = PRESOLVE
        p.random_seed = int(self.seed)
        p.max_time_in_seconds = max(float(seconds), 1e-4)
        limit = work
        if self.budget.deterministic is not None:
            left = max(self.budget.deterministic - self.det_used, 1e-4)
            limit = left if limit is None else min(limit, left)
        if limit is not None:
            p.max_deterministic_time = limit
        if self.trace is not None and not self.traced:
            self.traced = True
            watched = self.a if self.trace_counts else self.x
            status = solver.solve(self.model, _Incumbents(watched, self.t0, self.trace))
        else:
            status = solver.solve(self.model)
        self.det_used += solver.deterministic_time
        if status == cp_model.INFEASIBLE:
            return Status.INFEASIBLE, None, None, None
        if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            return Status.FALLBACK, None, None, None
        x = np.array([solver.boolean_value(v) for v in self.x], dtype=bool)
        a = np.array([solver.value(v) for v in self.a], dtype=np.int64)
        outcome = Status.OPTIMAL if status == cp_model.OPTIMAL else Status.FEASIBLE
        return outcome, x, a, float(solver.best_objective_bound)

    def push_ge(self, cx, ca, rhs):
        model = self.model
        return model.add(self._expr(cx, ca) >= int(rhs))

    def pop(self, handle) -> None:
        handle.proto.clear_linear()  # an empty constraint is ignored by CP-SAT

    def add_any_ge(self, terms) -> None:
        self.model  # noqa: B018  (built now if need be)
        lits = []
        for cx, ca, rhs in terms:
            b = self.model.new_bool_var("")
            self.model.add(self._expr(cx, ca) >= int(rhs)).only_enforce_if(b)
            lits.append(b)
        self.model.add_bool_or(lits)


def solve_cpsat(model: WindowModel, budget: Budget, seed: int, trace: bool = False,
                **options: Any) -> Result:
    """Solve the window model with CP-SAT (see the module docstring for options)."""
    if not trace:
        return solve_window(model, budget, lambda lf: _CpSat(lf, budget, seed), "cpsat",
                            **options)
    made: list[_CpSat] = []
    result = solve_window(model, budget, traced(budget, seed, made), "cpsat", **options)
    return replace(result, info={**result.info, "trace": made[0].trace if made else []})


def traced(budget: Budget, seed: int, made: list, counts: bool = False):
    """A ``make_solver`` for the drivers whose solver records the first solve's incumbents
    (of the auxiliary integers when ``counts``); the solvers made are appended to ``made``."""
    t0 = _time.perf_counter()

    def make(lf: LinearForm) -> _CpSat:
        solver = _CpSat(lf, budget, seed)
        solver.trace, solver.t0, solver.trace_counts = [], t0, counts
        made.append(solver)
        return solver

    return make

"""The window model as an integer linear program, and the drivers the exact backends share.

Fan et al., BBSched (HPDC 2019), Sections 3.2.1 and 5, solved exactly instead of by a genetic
algorithm. :func:`linear_form` writes a :class:`~bbopt.models.window.WindowModel` as integer rows
over the binary selection ``x`` and, when the wasted-SSD objective is used, auxiliary integer
counts ``A_j`` (nodes assigned at SSD level ``>= j``; see the model's docstring). Two backends
(``cpsat``, ``milp``) implement the small :class:`IntSolver` protocol; the drivers here do the rest:

- **lexicographic**: maximise the objectives one after another, each stage keeping the earlier
  ones at their optimum;
- **weighted**: one stage with the weighted sum of utilisation fractions (weights rounded to
  integers with 1e-3 relative precision of the smallest), then the queue-order tie-break;
- **exact Pareto front by epsilon-constraint**. With two objectives ``(f1, f2)`` the classic
  sequential form (:func:`run_pareto_sequential`): maximise ``f1`` subject to ``f2 >= eps``,
  then ``f2`` with ``f1`` at its optimum; the next ``eps`` is ``f2 + 1`` (and ``f1`` must drop
  below the last value), until infeasible or ``f2`` is at its bound -- each solve a knapsack
  with two more rows. With three or more, the disjunctive form (``method="disjunctive"``
  forces it for two): every found point ``p`` adds the constraint "some objective beats ``p`` by one
  unit" (``OR_k f_k >= p_k + 1``, integer objectives); maximising the plain sum of the objectives
  under these constraints yields a new Pareto-optimal point (any point dominating it would also
  satisfy them and have a larger sum) until the problem is infeasible, which proves the front
  complete. Each point's representative selection is then chosen by the queue-order tie-break
  (the jobs nearest the window front), as the paper's decision maker prefers: interchangeable
  jobs (equal in every row and objective) are taken front-most first
  (:meth:`LinearForm.canonical`); ``tiebreak="solver"`` also runs a work-limited order solve.

Capacity rows are first tightened to the largest sum their jobs can reach (a bitset
subset-sum, :func:`tighten_rows`): exact, and when that sum is the optimum the solvers need not
prove it. When the two objectives are the two capacity rows (BBSched's nodes and BB), a few
subset-sum reconstructions look for a selection with ``f2`` at its bound and ``f1`` as high as
possible (:func:`corner_witness`); with ``f1`` at its bound too it is the whole front (the usual
case when resources are scarce). Otherwise the whole front is listed by two-list enumeration
(:func:`~bbopt.solvers.window.subset_sums.two_capacity_front`, option ``two_list``), which
either proves its front complete or gives up, and only then do the solvers run. Either way the
front is exact; ``Result.info["front_by"]`` says whether a solver was needed.

Every solve gets what is left of the budget; a front cut short is returned with status FEASIBLE
(its points are still Pareto-optimal when each solve finished), and nothing at all leads to the
contract's greedy FALLBACK.
"""

from __future__ import annotations

import time as _time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.models.window import WindowModel, objective
from bbopt.solvers.base import Budget, BudgetExceeded, Result
from bbopt.solvers.scalarize import TIEBREAK, Candidates, Form, pareto_result, scalar_result
from bbopt.solvers.window.subset_sums import (  # noqa: F401  (reachable_max: re-exported)
    capacity_front,
    corner_witness,
    reachable_max,
    tighten_rows,
)

#: Work allowed to the queue-order tie-break of one point (CP-SAT deterministic seconds; wall
#: seconds for CBC). The tie-break only chooses among selections with the same objective values,
#: so any feasible answer is valid; proving the best one can be a hard subset-sum.
TIEBREAK_WORK = 0.01



@dataclass
class LinearForm:
    """Integer rows ``cx . x + ca . A <= ub`` over binaries ``x`` and integers ``A``."""

    w: int
    k: int  # number of auxiliary A variables (0 unless a non-linear objective is used)
    a_hi: np.ndarray  # upper bounds of A (lower bounds are 0)
    fix0: np.ndarray  # bool (w,): x_i = 0
    fix1: np.ndarray  # bool (w,): x_i = 1
    rows: list[tuple[np.ndarray, np.ndarray, int]] = field(default_factory=list)
    objectives: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)

    def value(self, name: str, x: np.ndarray, a: np.ndarray) -> int:
        cx, ca = self.objectives[name]
        return int(cx @ x.astype(np.int64) + (ca @ a.astype(np.int64) if self.k else 0))

    def canonical(self, x: np.ndarray) -> np.ndarray:
        """``x`` with, in every class of interchangeable jobs (the same coefficients in every
        row and objective but ``order``, the same fixings), the selected ones moved to the
        jobs of largest order weight: every row and objective keeps its value, ``order`` does
        not decrease. The free part of the queue-order tie-break."""
        x = np.asarray(x, dtype=bool).copy()
        for members in self._classes():
            k = int(x[members].sum())
            x[members] = False
            x[members[:k]] = True
        return x

    def _classes(self) -> list[np.ndarray]:
        if getattr(self, "_class_cache", None) is None:
            cols = [r[0] for r in self.rows] + [c for n, (c, _) in self.objectives.items()
                                                 if n != TIEBREAK]
            M = np.column_stack(cols + [self.fix0, self.fix1]).astype(np.int64)
            order = self.objectives[TIEBREAK][0] if TIEBREAK in self.objectives else \
                np.zeros(self.w, np.int64)
            groups: dict[bytes, list[int]] = {}
            for i in range(self.w):
                groups.setdefault(M[i].tobytes(), []).append(i)
            self._class_cache = [np.array(sorted(g, key=lambda i: (-order[i], i)))
                                 for g in groups.values() if len(g) > 1]
        return self._class_cache

    def bounds(self, cx: np.ndarray, ca: np.ndarray) -> tuple[int, int]:
        """Lower and upper bound of ``cx . x + ca . A`` over the variable boxes."""
        lo = int(np.sum(np.minimum(cx, 0))) + int(np.sum(np.minimum(ca * self.a_hi, 0)))
        hi = int(np.sum(np.maximum(cx, 0))) + int(np.sum(np.maximum(ca * self.a_hi, 0)))
        for rx, ra, ub in self.rows:  # an objective that is a capacity row is bounded by it
            if np.array_equal(rx, cx) and np.array_equal(ra, ca):
                hi = min(hi, int(ub))
        return lo, hi


def linear_form(model: WindowModel, names: Sequence[str] | None = None) -> LinearForm:
    """The integer program of ``model``; ``names``: the objectives to express (default: the
    model's objectives plus ``order``)."""
    f = model.integer_form()
    w = model.size
    names = list(dict.fromkeys(list(names or model.objectives) + [TIEBREAK]))
    levels = any(objective(n).level_integer is not None for n in names)
    k = len(f.level_size) if (levels and model.has_ssd) else 0
    avail = np.cumsum(f.level_count[::-1])[::-1].astype(np.int64)
    form = LinearForm(w=w, k=k, a_hi=avail[:k].copy() if k else np.zeros(0, np.int64),
                      fix0=~f.allowed, fix1=f.forced.copy())
    z = np.zeros(k, dtype=np.int64)
    form.rows.append((f.nodes.copy(), z, f.free_nodes))
    form.rows.append((f.bb.copy(), z, f.free_bb))
    if model.has_ssd:
        D = f.level_demand()
        for j in range(1, len(f.level_size)):
            form.rows.append((D[j], z, int(avail[j])))
    if k:
        D = f.level_demand()
        e = np.eye(k, dtype=np.int64)
        form.rows.append((D[0], -e[0], 0))  # A_0 = D_0
        form.rows.append((-D[0], e[0], 0))
        for j in range(1, k):
            form.rows.append((D[j], -e[j], 0))  # A_j >= D_j
            form.rows.append((np.zeros(w, np.int64), e[j - 1] - e[j], int(f.level_count[j - 1])))
            form.rows.append((np.zeros(w, np.int64), e[j] - e[j - 1], 0))  # A_j <= A_{j-1}
    tighten_rows(form)
    for name in names:
        obj = objective(name)
        if obj.level_integer is None:
            form.objectives[name] = (obj.integer(model).astype(np.int64), z)
        elif k:  # over x and the assigned counts per level A
            form.objectives[name] = (obj.integer(model).astype(np.int64), obj.level_integer(model))
        else:
            form.objectives[name] = (np.zeros(w, np.int64), z)
    return form


class IntSolver(Protocol):
    """What a backend offers the drivers (one model, solved repeatedly)."""

    def maximize(self, cx: np.ndarray, ca: np.ndarray, seconds: float,
                 hint: np.ndarray | None = None, work: float | None = None
                 ) -> tuple[Status, np.ndarray | None, np.ndarray | None, float | None]:
        """Maximise within ``seconds`` (and ``work``: a deterministic limit where the solver has
        one), starting from ``hint`` if given; return (status, x, A, bound). Status OPTIMAL,
        FEASIBLE (a solution, not proven), INFEASIBLE, or FALLBACK: no answer within the limits
        (``x`` is None; the caller falls back)."""

    def push_ge(self, cx: np.ndarray, ca: np.ndarray, rhs: int) -> Any:
        """Add the temporary row ``cx . x + ca . A >= rhs``; returns a handle."""

    def pop(self, handle: Any) -> None:
        """Remove a row added by :meth:`push_ge`."""

    def add_any_ge(self, terms: list[tuple[np.ndarray, np.ndarray, int]]) -> None:
        """Add the permanent disjunction: at least one ``cx . x + ca . A >= rhs`` holds."""


class Clock:
    """What is left of a budget."""

    def __init__(self, budget: Budget) -> None:
        self.t0 = _time.perf_counter()
        self.budget = budget

    def left(self) -> float:
        return self.budget.seconds - (_time.perf_counter() - self.t0)

    def small(self, seconds: float) -> float:
        """The wall cap of a small work-limited solve (the tie-break): ``seconds`` at most in the
        wall mode; in the deterministic mode only what is left, so that the work limit, not the
        machine's load, ends it."""
        left = self.left()
        return left if self.budget.mode == "deterministic" else min(left, seconds)


def _combine(form: LinearForm, weights: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
    cx = np.zeros(form.w, dtype=np.int64)
    ca = np.zeros(form.k, dtype=np.int64)
    for name, q in weights.items():
        ox, oa = form.objectives[name]
        cx += q * ox
        ca += q * oa
    return cx, ca


def run_lexicographic(solver: IntSolver, form: LinearForm,
                      stages: list[dict[str, int]], clock: Clock
                      ) -> tuple[str, np.ndarray | None, np.ndarray | None,
                                 list[tuple[int, float | None]]]:
    """Maximise ``stages`` (each a weighted sum of objectives) in order. Returns the outcome of
    the first stage that did not prove optimality (or OPTIMAL), the last solution and, per
    finished stage, its integer value and the solver's bound."""
    handles = []
    x = a = None
    bounds: list[tuple[int, float | None]] = []
    outcome = Status.OPTIMAL
    try:
        for k, stage in enumerate(stages):
            tie = stage == {TIEBREAK: 1} and x is not None
            cx, ca = _combine(form, stage)
            if k + 1 < len(stages) and not cx.any() and not ca.any():
                bounds.append((0, 0.0))  # (every selection scores 0: nothing to keep)
                continue
            left = clock.left()
            if left <= 0:
                outcome = Status.FEASIBLE if x is not None else Status.FALLBACK
                break
            if tie:
                res, x2, a2, bound = solver.maximize(cx, ca, clock.small(4 * TIEBREAK_WORK),
                                                     hint=x, work=TIEBREAK_WORK)
                if x2 is not None:
                    x, a = x2, a2
                break
            res, x2, a2, bound = solver.maximize(cx, ca, left)
            if res == Status.INFEASIBLE:
                return Status.INFEASIBLE, None, None, bounds
            if x2 is None:
                outcome = Status.FEASIBLE if x is not None else Status.FALLBACK
                break
            x, a = x2, a2
            value = int(cx @ x.astype(np.int64) + (ca @ a.astype(np.int64) if form.k else 0))
            bounds.append((value, bound))
            if res != Status.OPTIMAL:
                outcome = Status.FEASIBLE
                break
            handles.append(solver.push_ge(cx, ca, value))
    finally:
        for h in reversed(handles):
            solver.pop(h)
    return outcome, x, a, bounds


def _tiebreak(solver: IntSolver, form: LinearForm, names: Sequence[str], point: list[int],
              x: np.ndarray, clock: Clock) -> tuple[np.ndarray, int]:
    """Among selections with objective values ``point``, one with a larger queue-order weight
    (work-limited: any answer is valid). Returns (selection, solves)."""
    handles = [solver.push_ge(*form.objectives[n], v) for n, v in zip(names, point, strict=True)]
    try:
        _, x2, _, _ = solver.maximize(*form.objectives[TIEBREAK],
                                      clock.small(4 * TIEBREAK_WORK),
                                      hint=x, work=TIEBREAK_WORK)
    finally:
        for h in reversed(handles):
            solver.pop(h)
    return (x if x2 is None else x2), 1


def run_pareto(solver: IntSolver, form: LinearForm, names: Sequence[str], clock: Clock,
               tiebreak: bool = True, max_points: int | None = None,
               method: str = "auto", two_list: bool = True
               ) -> tuple[bool, list[np.ndarray], int]:
    """The exact Pareto front (see the module docstring). Returns (complete, selections, solves).

    ``method``: "sequential" (two objectives only), "disjunctive" (any number) or "auto"
    (sequential for two objectives)."""
    if method not in ("auto", "sequential", "disjunctive"):
        raise InputError(f"unknown front method {method!r}; known: auto, sequential, "
                         "disjunctive", field="method")
    if method == "sequential" and len(names) != 2:
        raise InputError("the sequential front needs exactly two objectives", field="method")
    if len(names) == 2 and method != "disjunctive":
        return run_pareto_sequential(solver, form, names, clock, tiebreak, max_points,
                                     two_list)
    return run_pareto_disjunctive(solver, form, names, clock, tiebreak, max_points)


def run_pareto_sequential(solver: IntSolver, form: LinearForm, names: Sequence[str],
                          clock: Clock, tiebreak: bool = True, max_points: int | None = None,
                          two_list: bool = True) -> tuple[bool, list[np.ndarray], int]:
    """The classic epsilon-constraint front of two objectives ``(f1, f2)``: maximise ``f1``
    subject to ``f2 >= eps``, then ``f2`` with ``f1`` kept at its optimum (a lexicographic
    optimum, hence Pareto-optimal); the next ``eps`` is that ``f2`` plus one, until the problem
    is infeasible or ``f2`` reaches its upper bound. Each solve is a knapsack with one more
    row, warm-started from the previous selection. Points come by decreasing ``f1``."""
    f1, f2 = names
    o1, o2 = form.objectives[f1], form.objectives[f2]
    _, hi1 = form.bounds(*o1)
    _, hi2 = form.bounds(*o2)
    found: list[np.ndarray] = []
    solves = 0
    # A selection with f2 at its bound: if its f1 is at its bound too, it is the whole front;
    # otherwise it answers the second stage of the first point when its f1 is high enough.
    corner = corner_witness(form, f1, f2)
    if corner is not None and form.value(f1, corner, np.zeros(0, np.int64)) >= hi1:
        if tiebreak and TIEBREAK not in names:
            corner = form.canonical(corner)
        return True, [corner], 0
    listed = capacity_front(form, f1, f2) if two_list else None
    if listed is not None:
        listed.sort(key=lambda x: -form.value(f1, x, np.zeros(0, np.int64)))
        cut = listed if max_points is None else listed[:max_points]
        found = []
        for x in cut:
            _, x, k = _representative(solver, form, names, x, np.zeros(0, np.int64),
                                      Status.OPTIMAL, clock, tiebreak)
            solves += k
            found.append(x.astype(bool))
        return len(cut) == len(listed), found, solves
    eps: int | None = None
    cap1: int | None = None
    hint: np.ndarray | None = None
    while max_points is None or len(found) < max_points:
        if clock.left() <= 0:
            return False, found, solves
        # The next point beats the last one in f2, so it is worse in f1 (f2 was maximal with f1
        # at least the last f1): both rows hold for every remaining Pareto point.
        handles = [] if eps is None else [solver.push_ge(*o2, eps),
                                          solver.push_ge(-o1[0], -o1[1], -cap1)]
        try:
            res, x, a, _ = solver.maximize(*o1, clock.left(), hint=hint)
            solves += 1
            if res == Status.INFEASIBLE:
                return True, found, solves
            if x is None:
                return False, found, solves
            v1 = form.value(f1, x, a)
            if res == Status.OPTIMAL and corner is not None and \
                    form.value(f1, corner, a) >= v1 and form.value(f2, corner, a) >= hi2:
                x = corner  # f2 at its bound with f1 optimal: the lexicographic optimum
            elif res == Status.OPTIMAL and clock.left() > 0:
                handles.append(solver.push_ge(*o1, v1))
                res, x2, a2, _ = solver.maximize(*o2, clock.left(), hint=x)
                solves += 1
                if x2 is not None:
                    x, a = x2, a2
            elif res == Status.OPTIMAL:
                res = Status.FEASIBLE
        finally:
            for h in reversed(handles):
                solver.pop(h)
        point, x, k = _representative(solver, form, names, x, a, res, clock, tiebreak)
        solves += k
        found.append(x.astype(bool))
        if res != Status.OPTIMAL:
            return False, found, solves
        if point[1] >= hi2:
            return True, found, solves
        eps, cap1 = point[1] + 1, point[0] - 1
        hint = x
    return False, found, solves


def _representative(solver: IntSolver, form: LinearForm, names: Sequence[str], x: np.ndarray,
                    a: Any, res: str, clock: Clock, tiebreak: bool | str
                    ) -> tuple[list[float], np.ndarray, int]:
    """A front point's objective values and its representative selection (the queue-order
    tie-break among equal-valued selections), with the number of extra solves it took."""
    point = [form.value(n, x, a) for n in names]
    k = 0
    if tiebreak and TIEBREAK not in names:
        x = form.canonical(x)
        if tiebreak == "solver" and res == Status.OPTIMAL and clock.left() > 0:
            x, k = _tiebreak(solver, form, names, point, x, clock)
    return point, x, k


def run_pareto_disjunctive(solver: IntSolver, form: LinearForm, names: Sequence[str],
                           clock: Clock, tiebreak: bool = True, max_points: int | None = None
                           ) -> tuple[bool, list[np.ndarray], int]:
    """The disjunctive epsilon-constraint front of any number of objectives (module doc)."""
    found: list[np.ndarray] = []
    solves = 0
    total = {name: 1 for name in names}
    while max_points is None or len(found) < max_points:
        left = clock.left()
        if left <= 0:
            return False, found, solves
        cx, ca = _combine(form, total)
        res, x, a, _ = solver.maximize(cx, ca, left)
        solves += 1
        if res == Status.INFEASIBLE:
            return True, found, solves
        if x is None:
            return False, found, solves
        point, x, k = _representative(solver, form, names, x, a, res, clock, tiebreak)
        solves += k
        found.append(x.astype(bool))
        if res != Status.OPTIMAL:
            return False, found, solves
        solver.add_any_ge([(*form.objectives[n], v + 1)
                           for n, v in zip(names, point, strict=True)])
    return False, found, solves


def solve_exact(cands: Candidates, lf: LinearForm, solver: IntSolver, backend: str,
                form: Form, clock: Clock, candidate=None, *,
                max_points: int | None = None, method: str = "auto", two_list: bool = True
                ) -> Result:
    """The common body of the exact backends: ``form`` solved on the integer program ``lf`` by
    ``solver``, the answers turned into a Result. ``candidate(x, a)``: the backend's answer for
    a selection ``x`` with auxiliaries ``a`` (default: ``x``)."""
    candidate = candidate or (lambda x, a: x)
    if clock.left() <= 0:
        raise BudgetExceeded
    if form.kind == "pareto":
        complete, xs, solves = run_pareto(solver, lf, form.names, clock, form.tiebreak,
                                          max_points, method, two_list)
        if not xs:
            if complete:
                return Result(Status.INFEASIBLE, None, backend=backend, info={"solves": solves})
            raise BudgetExceeded
        return pareto_result(cands, [candidate(x, None) for x in xs],
                             Status.OPTIMAL if complete else Status.FEASIBLE, backend,
                             {"solves": solves, "front_complete": complete,
                              "front_by": "enumeration" if solves == 0 else "solver"})
    outcome, x, a, bounds = run_lexicographic(solver, lf, form.stages(cands.window), clock)
    if outcome is Status.INFEASIBLE:
        return Result(Status.INFEASIBLE, None, backend=backend)
    if x is None:
        raise BudgetExceeded
    status = Status.OPTIMAL if outcome is Status.OPTIMAL else Status.FEASIBLE
    return scalar_result(cands, candidate(x.astype(bool), a), form, status, backend, bounds)


def solve_window(model: WindowModel, budget: Budget, make_solver, backend: str, *,
                 form: str = "pareto", weights: Sequence[float] | None = None,
                 priority: Sequence[str] | None = None, tiebreak: bool = True,
                 **front: Any) -> Result:
    """The window backends' body (``make_solver(linear_form) -> IntSolver``); ``front``:
    ``max_points``, ``method``, ``two_list`` of :func:`run_pareto`."""
    clock = Clock(budget)
    spec = Form.of(model.objectives, form, weights, priority, tiebreak)
    lf = linear_form(model, spec.names)
    return solve_exact(Candidates(model), lf, make_solver(lf), backend, spec, clock, **front)

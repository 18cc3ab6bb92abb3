"""The select-and-place window model as an integer program, and its exact-solve driver.

Beyond Herbein et al. (HPDC 2016) and Fan et al. (BBSched, HPDC 2019, Section 3.2): the
:class:`~bbopt.models.io_window.IOWindowModel` written in the :class:`~bbopt.solvers.window.forms.
LinearForm` of the window backends, with the placement counts ``y_{j,g}`` as its auxiliary
integer variables (``A``, flattened row-major: index ``j * G + g``). The window's own rows and
objectives come from :func:`~bbopt.solvers.window.forms.linear_form`; added are

    sum_g y_{j,g} - n_j x_j = 0,    sum_j y_{j,g} <= c_g,
    sum_j b_j sum_{g under v} y_{j,g} <= a_v   (bandwidth in the model's integer unit),

so the window drivers (``run_pareto``: exact front by disjunctive epsilon-constraint;
``run_lexicographic``: weighted and lexicographic stages with the queue-order tie-break) solve it
unchanged. The selections they return are paired with the placement found in the same solve (the
solver records the counts of every solution it reports). Objective values come from the model in
exact units.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.models.io_window import IOWindowModel
from bbopt.solvers.base import Budget, BudgetExceeded, Result, Solution
from bbopt.solvers.window.forms import (
    INFEASIBLE,
    OPTIMAL,
    Clock,
    LinearForm,
    linear_form,
    pareto_result,
    run_lexicographic,
    run_pareto,
    scalar_stages,
)


def io_linear_form(model: IOWindowModel, names: Sequence[str] | None = None) -> LinearForm:
    """The integer program of ``model`` (see the module docstring)."""
    base = linear_form(model.window, names)
    if base.k:
        raise InputError("the select-and-place model has no SSD-waste objective")
    w, G = model.size, model.groups
    k = w * G
    hi = model.upper().ravel()
    form = LinearForm(w=w, k=k, a_hi=hi, fix0=base.fix0.copy(), fix1=base.fix1.copy())
    z = np.zeros(k, dtype=np.int64)
    form.rows = [(cx, z, ub) for cx, _, ub in base.rows]
    form.objectives = {n: (cx, z) for n, (cx, _) in base.objectives.items()}
    nodes = model.window.nodes
    for j in range(w):
        ca = np.zeros(k, dtype=np.int64)
        ca[j * G:(j + 1) * G] = 1
        cx = np.zeros(w, dtype=np.int64)
        cx[j] = -nodes[j]
        form.rows.append((cx, ca, 0))
        form.rows.append((-cx, -ca, 0))
    zx = np.zeros(w, dtype=np.int64)
    for g, c in enumerate(model.group_size()):
        ca = np.zeros(k, dtype=np.int64)
        ca[g::G] = 1
        form.rows.append((zx, ca, int(c)))
    req, cap, _ = model.integer_bandwidth()
    for r in range(len(model.vertices)):
        ca = (req[:, None] * model.membership[r][None, :]).astype(np.int64).ravel()
        if ca.any():
            form.rows.append((zx, ca, int(cap[r])))
    return form


def counts_of(model: IOWindowModel, a: np.ndarray) -> np.ndarray:
    """The ``w x G`` count matrix of the flattened auxiliaries."""
    return np.asarray(a, dtype=np.int64).reshape(model.size, model.groups)


class Recording:
    """Wraps an :class:`~bbopt.solvers.window.forms.IntSolver` and remembers the placement of
    every selection it reports."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seen: dict[bytes, np.ndarray] = {}

    def maximize(self, cx, ca, seconds, hint=None, work=None):
        out = self.inner.maximize(cx, ca, seconds, hint=hint, work=work)
        _, x, a, _ = out
        if x is not None:
            self.seen[np.asarray(x, dtype=bool).tobytes()] = np.asarray(a, dtype=np.int64)
        return out

    def push_ge(self, cx, ca, rhs):
        return self.inner.push_ge(cx, ca, rhs)

    def pop(self, handle) -> None:
        self.inner.pop(handle)

    def add_any_ge(self, terms) -> None:
        self.inner.add_any_ge(terms)


def placement_result(model: IOWindowModel, ys: Sequence[np.ndarray], status: Status,
                     backend: str, info: dict[str, Any]) -> Result:
    """A Result whose Pareto set holds placements (count matrices): the non-dominated
    selections of ``ys`` as the window model's :func:`pareto_result` keeps them, each with its
    placement. ``solution`` is the first."""
    by_sel = {}
    for y in ys:
        by_sel.setdefault(model.selection(y).tobytes(), np.asarray(y, dtype=np.int64))
    xs = [model.selection(y) for y in ys]
    res = pareto_result(model.window, xs, status, backend, info)
    sols = tuple(Solution(by_sel[np.asarray(s.x, dtype=bool).tobytes()], s.objectives)
                 for s in res.pareto)
    return Result(status, sols[0].x, sols[0].objectives, pareto=sols, backend=backend, info=info)


def solve_io_window(model: IOWindowModel, budget: Budget, make_solver, backend: str, *,
                    form: str = "pareto", weights: Sequence[float] | None = None,
                    priority: Sequence[str] | None = None, tiebreak: bool = True,
                    max_points: int | None = None) -> Result:
    """The exact-backend body (``make_solver(linear_form) -> IntSolver``), as
    :func:`~bbopt.solvers.window.forms.solve_window` for the window model."""
    clock = Clock(budget)
    if form not in ("pareto", "weighted", "lexicographic"):
        raise InputError(f"unknown form {form!r}; known: pareto, weighted, lexicographic",
                         field="form")
    names = list(model.objectives)
    if form == "lexicographic":
        names = list(priority or model.objectives)
    lf = io_linear_form(model, names)
    solver = Recording(make_solver(lf))
    if clock.left() <= 0:
        raise BudgetExceeded
    if form == "pareto":
        complete, xs, solves = run_pareto(solver, lf, names, clock, tiebreak, max_points)
        if not xs:
            if complete:
                return Result(Status.INFEASIBLE, None, backend=backend, info={"solves": solves})
            raise BudgetExceeded
        ys = [counts_of(model, solver.seen[x.tobytes()]) for x in xs]
        return placement_result(model, ys, Status.OPTIMAL if complete else Status.FEASIBLE,
                                backend, {"solves": solves, "front_complete": complete})
    stages = scalar_stages(model.window, form, names, weights, tiebreak)
    outcome, x, a, bounds = run_lexicographic(solver, lf, stages, clock)
    if outcome == INFEASIBLE:
        return Result(Status.INFEASIBLE, None, backend=backend)
    if x is None:
        raise BudgetExceeded
    y = counts_of(model, a)
    values = model.evaluate(y)
    status = Status.OPTIMAL if outcome == OPTIMAL else Status.FEASIBLE
    if form == "weighted":
        wts = np.asarray(weights or [1.0] * len(values), dtype=float)
        objective = float(np.dot(wts, np.asarray(values) / model.window.scales()))
        bound = objective if outcome == OPTIMAL else None
        if bounds and bounds[0][1] is not None and bounds[0][0] > 0:
            bound = max(objective, objective * bounds[0][1] / bounds[0][0])
        return Result(status, y, objective, bound=bound, backend=backend,
                      info={"objectives": values})
    from bbopt.solvers.window.forms import model_value

    xb = model.selection(y)
    lex = tuple(model_value(model.window, n, xb) for n in names)
    return Result(status, y, lex, backend=backend, info={"objectives": values})

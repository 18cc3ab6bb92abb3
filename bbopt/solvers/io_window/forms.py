"""The select-and-place window model as an integer program, and its exact-solve driver.

Beyond Herbein et al. (HPDC 2016) and Fan et al. (BBSched, HPDC 2019, Section 3.2): the
:class:`~bbopt.models.io_window.IOWindowModel` written in the :class:`~bbopt.solvers.window.forms.
LinearForm` of the window backends, with the placement counts ``y_{j,g}`` as its auxiliary
integer variables (``A``, flattened row-major: index ``j * G + g``). The window's own rows and
objectives come from :func:`~bbopt.solvers.window.forms.linear_form`; added are

    sum_g y_{j,g} - n_j x_j = 0,    sum_j y_{j,g} <= c_g,
    sum_j b_j sum_{g under v} y_{j,g} <= a_v   (bandwidth in the model's integer unit),

so the window drivers (:func:`~bbopt.solvers.window.forms.solve_exact`: exact front by
epsilon-constraint, weighted and lexicographic stages with the queue-order tie-break) solve it
unchanged. What differs is the placement: the selections they return are paired with the
placement found in the same solve (the solver records the counts of every solution it
reports), and :func:`candidates` scores a placement by its selection. Objective values come from
the window model in exact units.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from bbopt.errors import InputError
from bbopt.models.io_window import IOWindowModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.scalarize import Candidates, Form
from bbopt.solvers.window.forms import Clock, LinearForm, linear_form, solve_exact


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


def candidates(model: IOWindowModel) -> Candidates:
    """The adapter the window drivers score placements through: a count matrix is worth the
    selection of the jobs it places."""
    return Candidates(model.window, model.selection)


def solve_io_window(model: IOWindowModel, budget: Budget, make_solver, backend: str, *,
                    form: str = "pareto", weights: Sequence[float] | None = None,
                    priority: Sequence[str] | None = None, tiebreak: bool = True,
                    **front: Any) -> Result:
    """The exact-backend body (``make_solver(linear_form) -> IntSolver``): the window drivers
    (:func:`~bbopt.solvers.window.forms.solve_exact`) on :func:`io_linear_form`, each selection
    answered with the placement its solve found."""
    clock = Clock(budget)
    spec = Form.of(model.objectives, form, weights, priority, tiebreak)
    lf = io_linear_form(model, spec.names)
    solver = Recording(make_solver(lf))

    def placement(x: np.ndarray, a: np.ndarray | None) -> np.ndarray:
        return counts_of(model, solver.seen[x.tobytes()] if a is None else a)

    return solve_exact(candidates(model), lf, solver, backend, spec, clock, placement, **front)

"""One objective form for the window models: Pareto, weighted or lexicographic, and the
queue-order tie-break, turned into a :class:`~bbopt.solvers.base.Result`.

Fan et al., BBSched (HPDC 2019), Sections 3.2 and 3.2.4: a window selection has several
objectives (:data:`~bbopt.models.window.OBJECTIVES`), all maximised. A backend is asked for

- ``form="pareto"``: the non-dominated objective vectors, one selection each;
- ``form="weighted"``: the largest ``sum_k weights_k f_k / scale_k`` (utilisation fractions;
  default weights: one per objective);
- ``form="lexicographic"``: the objectives of ``priority`` (default: the model's) maximised one
  after another.

Among selections with equal objective values the one whose jobs are nearest the window front
(the largest ``order`` weight) is preferred, as the paper's decision maker does (``tiebreak``,
default true). :class:`Form` parses these options once for every backend; the exact backends
turn a weighted form into integer stages (:meth:`Form.stages`), and :func:`pareto_result`,
:func:`scalar_result` and :func:`best_result` turn integer solves or candidate sets into a
Result with the status vocabulary of :class:`bbopt.core.Status`.

A backend's candidates need not be selections: the select-and-place model's are placements.
:class:`Candidates` says how a candidate maps to the selection that the window model scores.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.models.window import EMPTY_SCALE, WindowModel, objective, pareto_filter
from bbopt.solvers.base import Result, Solution

FORMS: tuple[str, ...] = ("pareto", "weighted", "lexicographic")
#: The objective that breaks ties: jobs nearest the window front weigh most.
TIEBREAK = "order"


@dataclass(frozen=True)
class Form:
    """A backend's objective form, parsed once (see the module docstring).

    ``names``: the objectives in play (lexicographic: in priority order). ``weights``: one per
    model objective (weighted form; ones by default)."""

    kind: str
    names: tuple[str, ...]
    weights: np.ndarray
    tiebreak: bool | str = True

    @classmethod
    def of(cls, objectives: Sequence[str], form: str = "pareto",
           weights: Sequence[float] | None = None, priority: Sequence[str] | None = None,
           tiebreak: bool | str = True) -> Form:
        if form not in FORMS:
            raise InputError(f"unknown form {form!r}; known: {', '.join(FORMS)}", field="form")
        names = tuple(priority or objectives) if form == "lexicographic" else tuple(objectives)
        wts = np.asarray(weights if weights is not None and len(weights) else
                         [1.0] * len(objectives), dtype=float)
        return cls(form, names, wts, tiebreak)

    def stages(self, window: WindowModel) -> list[dict[str, int]]:
        """The integer stages an exact backend maximises one after another: the weighted sum in
        integer units (:func:`integer_weights`) or each objective of ``names``, then the
        queue-order tie-break when ``tiebreak``."""
        tie = [{TIEBREAK: 1}] if self.tiebreak else []
        if self.kind == "weighted":
            return [integer_weights(window, self.weights)] + tie
        return [{n: 1} for n in self.names] + (tie if TIEBREAK not in self.names else [])

    def value(self, window: WindowModel, objectives: Sequence[float]) -> float | tuple:
        """The scalar this form maximises, from a selection's objective values (in
        ``window.objectives`` order)."""
        if self.kind == "weighted":
            return float(np.dot(self.weights, np.asarray(objectives) / window.scales()))
        return tuple(objectives[window.objectives.index(n)] for n in self.names)

    def keys(self, window: WindowModel, X: np.ndarray) -> np.ndarray:
        """Per row of ``X``, the key the best selection maximises lexicographically: the
        weighted sum (rounded to 1e-12) or the objectives of ``names``, then the order weight
        when ``tiebreak``."""
        if self.kind == "weighted":
            cols = [np.round((window.evaluate_many(X) / window.scales()) @ self.weights, 12)]
        else:
            cols = [window.values(n, X) for n in self.names]
        if self.tiebreak:
            cols.append((X @ window.order).astype(float))
        return np.column_stack(cols)


def integer_weights(model: WindowModel, weights: Sequence[float]) -> dict[str, int]:
    """Integer multipliers of the model's integer objectives equivalent (to 1e-3 of the smallest)
    to ``sum_k weights_k * f_k / scale_k`` (utilisation fractions)."""
    if len(weights) != len(model.objectives):
        raise InputError(f"{len(weights)} weights for {len(model.objectives)} objectives",
                         field="weights")
    if not all(wt >= 0 for wt in weights):  # (NaN too)
        raise InputError("weights must be >= 0", field="weights")
    scales = model.scales()
    units = [s / objective(n).integer_unit(model)
             for n, s in zip(model.objectives, scales, strict=True)]
    # (an objective over a capacity of 0 scores 0 for every selection: it weighs nothing)
    r = np.array([wt / u if s > EMPTY_SCALE else 0.0
                  for wt, u, s in zip(weights, units, scales, strict=True)], dtype=float)
    if not any(wt > 0 for wt in weights):
        raise InputError("at least one weight must be positive", field="weights")
    pos = r[r > 0]
    if pos.size == 0:  # every weight on objectives over a capacity of 0
        return {}
    q = np.round(r / pos.min() * 1000).astype(np.int64)
    return {name: int(v) for name, v in zip(model.objectives, q, strict=False) if v}


def _as_selection(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=bool)


@dataclass(frozen=True)
class Candidates:
    """How a backend's candidates map to window selections: ``window`` scores them,
    ``selection(candidate)`` is the selection (identity for the window model; the
    select-and-place model maps a placement to the jobs it places)."""

    window: WindowModel
    selection: Callable[[Any], np.ndarray] = _as_selection


def _lexmax_order(K: np.ndarray) -> np.ndarray:
    """Row indices of ``K`` sorted by decreasing columns, first column first (stable)."""
    return np.lexsort(tuple(-K[:, j] for j in range(K.shape[1] - 1, -1, -1)))


def pareto_result(cands: Candidates, cs: Sequence[Any], status: Status, backend: str,
                  info: dict[str, Any]) -> Result:
    """A Result holding the non-dominated candidates of ``cs`` (one per objective vector; among
    equal vectors the one with the largest order weight, then the first), sorted by decreasing
    first objective. ``solution`` is the first of them."""
    window = cands.window
    X = np.array([cands.selection(c) for c in cs], dtype=bool).reshape(len(cs), window.size)
    F = window.evaluate_many(X)
    order_w = X @ window.order
    # Prefer, among equal objective vectors, the selection nearest the window front.
    pref = np.lexsort((-order_w,) + tuple(-F[:, j] for j in range(F.shape[1] - 1, -1, -1)))
    idx = pref[pareto_filter(F[pref])]
    idx = idx[_lexmax_order(F[idx])]
    sols = tuple(Solution(np.array(cs[i]), tuple(float(v) for v in F[i])) for i in idx)
    return Result(status, sols[0].x, sols[0].objectives, pareto=sols, backend=backend,
                  info=info)


def scalar_result(cands: Candidates, c: Any, form: Form, status: Status, backend: str,
                  bounds: Sequence[tuple[int, float | None]] = ()) -> Result:
    """The Result of an exact weighted or lexicographic solve whose answer is candidate ``c``;
    ``bounds``: per finished integer stage, its value and the solver's bound (the first stage's
    ratio bounds the weighted objective)."""
    window = cands.window
    x = cands.selection(c)
    values = window.evaluate(x)
    if form.kind == "weighted":
        objective = form.value(window, values)
        bound = objective if status is Status.OPTIMAL else None
        if bounds and bounds[0][1] is not None and bounds[0][0] > 0:
            # The stage-1 bound in integer units, on the scale of ``objective``.
            bound = max(objective, objective * bounds[0][1] / bounds[0][0])
        return Result(status, c, objective, bound=bound, backend=backend,
                      info={"objectives": values})
    lex = tuple(float(window.values(n, x[None, :])[0]) for n in form.names)
    return Result(status, c, lex, backend=backend, info={"objectives": values})


def best_index(form: Form, window: WindowModel, X: np.ndarray) -> tuple[int, tuple]:
    """The row of ``X`` a weighted or lexicographic form prefers (the first of equals) and its
    key (:meth:`Form.keys`)."""
    K = form.keys(window, X)
    i = int(_lexmax_order(K)[0])
    return i, tuple(float(v) for v in K[i])


def best_result(cands: Candidates, cs: Sequence[Any], form: Form, backend: str,
                info: dict[str, Any], keys: Sequence[tuple] | None = None) -> Result:
    """The OPTIMAL Result of a complete candidate set ``cs`` (every feasible candidate, or for a
    scalar form at least the best of each part, with its key in ``keys``): the Pareto set or
    the best candidate; INFEASIBLE when ``cs`` is empty."""
    if not len(cs):
        return Result(Status.INFEASIBLE, None, backend=backend)
    if form.kind == "pareto":
        return pareto_result(cands, cs, Status.OPTIMAL, backend, info)
    if keys is None:
        X = np.array([cands.selection(c) for c in cs], dtype=bool)
        i, key = best_index(form, cands.window, X)
    else:
        i = int(_lexmax_order(np.array(keys, dtype=float))[0])
        key = keys[i]
    values = cands.window.evaluate(cands.selection(cs[i]))
    info = {"objectives": values, **info}
    if form.kind == "weighted":
        return Result(Status.OPTIMAL, cs[i], key[0], bound=key[0], backend=backend, info=info)
    return Result(Status.OPTIMAL, cs[i], key[:len(form.names)], backend=backend, info=info)

"""Shared driver of the exact pack backends: lexicographic objective stages solved one after the
other, each later stage constrained to keep the earlier ones within the model's tolerance
(:mod:`bbopt.models.packs`), under one wall-clock budget.

Building a backend's model and reading its answer cost time outside the solver's own limit,
about 30 us per application with CP-SAT (one Boolean, its hint and its value): on 20,000
waiting jobs that alone is 0.6 s. So a model offers the solver at most :data:`APPS_PER_SECOND`
applications per second of nominal budget (:func:`offered`): the fallback's pack and then the
applications of highest first-stage value (the objective), so the answer is never worse than
the fallback and the decision stays within its budget.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from typing import Any

import numpy as np

from bbopt.core import Status, decision_slowdown
from bbopt.models.packs import PackModel, integer_form
from bbopt.solvers.base import DET_PER_SECOND, Budget, Result

#: A stage solve: (coefficients, lower bounds on earlier stages [(coef, rhs)], seconds, hint)
#: -> (outcome "optimal" | "feasible" | "none", x over the kept applications, bound).
StageSolve = Callable[[np.ndarray, list[tuple[np.ndarray, int]], float, np.ndarray | None],
                      tuple[str, np.ndarray | None, float | None]]


def reduced(model: PackModel) -> np.ndarray:
    """Indices of the applications that can be in a pack at all (they fit the free nodes)."""
    return np.flatnonzero(model.nodes <= model.capacity)


#: Applications offered to an exact backend per second of nominal budget (a quarter of the
#: budget at ~30 us each), and never fewer than :data:`MIN_OFFERED`.
APPS_PER_SECOND = 8000
MIN_OFFERED = 64


def offered(model: PackModel, keep: np.ndarray, hint: np.ndarray, budget: Budget,
            slowdown: float = 1.0) -> np.ndarray:
    """The applications of ``keep`` the backend is given under ``budget``: all when they are
    few; else the fallback's picks (``hint``, over all applications) and then the most valuable
    in the first stage, ties in queue order, as increasing indices. ``slowdown``: wall seconds
    per CPU second of the decision so far (:func:`bbopt.core.decision_slowdown`): a wall budget
    on a loaded machine offers that many times fewer applications, since building them costs
    wall time in that proportion."""
    nominal = budget.seconds if budget.mode != "deterministic" or budget.deterministic is None \
        else budget.deterministic / DET_PER_SECOND
    cap = max(MIN_OFFERED, int(nominal * APPS_PER_SECOND / max(slowdown, 1.0)))
    if len(keep) <= cap:
        return keep
    picked = keep[hint[keep]]
    rest = keep[~hint[keep]]
    best = rest[np.argsort(-model.stages[0][rest], kind="stable")[:max(cap - len(picked), 0)]]
    return np.sort(np.concatenate([picked, best]))


def solve_stages(model: PackModel, budget: Budget, backend: str,
                 make: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int], StageSolve],
                 **info: Any) -> Result:
    """Run the stages with ``make(keep, T_int, u_int, q, capacity)`` building the backend's
    stage solver over the kept applications (integer durations and I/O times, see
    :func:`bbopt.models.packs.integer_form`)."""
    t0 = _time.perf_counter()
    keep = reduced(model)
    m = model.size
    if len(keep) == 0:
        x = np.zeros(m, dtype=bool)
        vals = model.evaluate(x)
        return Result(Status.OPTIMAL, x, vals[0], bound=vals[0], backend=backend,
                      info={"stages": vals, **info})
    t_int, u_int, stages, _ = integer_form(model)
    fallback = model.fallback()
    keep = offered(model, keep, fallback, budget,
                   decision_slowdown() if budget.mode == "wall" else 1.0)
    solve = make(keep, t_int[keep], u_int[keep], model.nodes[keep], model.capacity)
    hint = fallback[keep]
    fixed: list[tuple[np.ndarray, int]] = []
    status = Status.OPTIMAL
    best: np.ndarray | None = None
    bound = None
    took = 0.0  # the wall time of the last stage: a later one given less is not started
    for s, c in enumerate(stages):
        started = _time.perf_counter()
        left = budget.seconds - (started - t0)
        if left <= 0 or (s and budget.mode == "wall" and left < took):
            break
        outcome, xs, b = solve(c[keep], fixed, left, hint)
        took = _time.perf_counter() - started
        if xs is None:
            break
        best = xs
        hint = xs
        if s == 0:
            bound = b
        if outcome != "optimal":
            status = Status.FEASIBLE
            break
        value = int(c[keep][xs].sum())
        last = s == len(stages) - 1
        slack = 0 if last else int(np.floor(model.tolerance * abs(value)))
        fixed.append((c[keep], value - slack))
    if best is None:  # out of time before any answer: the fallback's pack, already built
        return _fallback(model, fallback, backend, info)
    if len(fixed) < len(stages) and status is Status.OPTIMAL:
        status = Status.FEASIBLE  # out of time before the last stage
    x = np.zeros(m, dtype=bool)
    x[keep[best]] = True
    if not model.feasible(x):  # a solver tolerance let a row slip: not an answer
        return _fallback(model, fallback, backend, info)
    vals = model.evaluate(x)
    scale0 = float(np.abs(model.stages[0]).max()) / float(max(np.abs(stages[0]).max(), 1))
    bound_f = float(bound) * scale0 if bound is not None else None
    if status is Status.OPTIMAL:
        bound_f = vals[0]
    return Result(status, x, vals[0], bound=bound_f, backend=backend,
                  info={"stages": vals, **info})


def _fallback(model: PackModel, x: np.ndarray, backend: str, info: dict[str, Any]) -> Result:
    """The contract's FALLBACK answer (:func:`bbopt.solvers.base.solve`) with the fallback's
    pack the stages started from, so that it is not built twice."""
    return Result(Status.FALLBACK, x, model.evaluate(x), backend=backend,
                  info={**info, "fallback": "greedy"})

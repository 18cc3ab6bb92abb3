"""``scip`` backend of the window model: SCIP on the integer program the ``milp`` backend writes
(Fan et al., BBSched, Section 3.2, solved exactly; drivers in :mod:`bbopt.solvers.window.forms`,
the PuLP program in :mod:`bbopt.solvers.window.milp`, SCIP's settings in
:mod:`bbopt.solvers.scip`).

With ``trace=True`` (the solver benchmark), ``Result.info["trace"]``: the incumbents of the
first objective stage (the weighted sum, or the first objective of a lexicographic or Pareto
form) as ``(seconds, selection)`` pairs, seconds counted from the backend's start. Options: as
``cpsat``.
"""

from __future__ import annotations

import time as _time
from dataclasses import replace
from typing import Any

import numpy as np

from bbopt.models.window import WindowModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.scip import ScipCommand
from bbopt.solvers.window.forms import LinearForm, solve_window
from bbopt.solvers.window.milp import _Pulp


class _ScipPulp(_Pulp):
    """``counts``: trace the auxiliary integers (the I/O window's placement counts) instead of
    the selection."""

    def __init__(self, form: LinearForm, budget: Budget, seed: int, t0: float,
                 counts: bool = False, trace: bool = True) -> None:
        super().__init__(form, budget, seed, "scip")
        self.t0 = t0
        self.counts = counts
        self.traced = trace
        self.trace: list[tuple[float, list[int]]] = []
        self.solves = 0

    def _cmd(self, seconds: float):
        self.solves += 1
        if self.solves > 1 or not self.traced:
            return ScipCommand(seconds, self.seed)

        def seen(values: list[float]) -> None:
            x = np.round(values).astype(int).tolist()
            self.trace.append((_time.perf_counter() - self.t0, x))

        return ScipCommand(seconds, self.seed, self.a if self.counts else self.x, seen)


def solve_scip(model: WindowModel, budget: Budget, seed: int, trace: bool = False,
               **options: Any) -> Result:
    """Solve the window model with SCIP (see the module docstring for options)."""
    t0 = _time.perf_counter()
    made: list[_ScipPulp] = []

    def make(lf: LinearForm) -> _ScipPulp:
        made.append(_ScipPulp(lf, budget, seed, t0, trace=trace))
        return made[0]

    result = solve_window(model, budget, make, "scip", **options)
    if not trace:
        return result
    return replace(result, info={**result.info, "trace": made[0].trace if made else []})

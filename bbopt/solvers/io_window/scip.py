"""``scip`` backend of the select-and-place window model: SCIP on the integer program of the
window drivers (Herbein et al., HPDC 2016, and Fan et al., BBSched, Section 3.2, as
:mod:`bbopt.solvers.io_window.cpsat` states them; the PuLP program of
:mod:`bbopt.solvers.window.milp`, SCIP's settings in :mod:`bbopt.solvers.scip`).

With ``trace=True``, ``Result.info["trace"]``: the incumbents of the first objective stage as
``(seconds, count matrix)`` pairs (nodes of each group per job), seconds counted from the
backend's start.
Options: as ``cpsat``.
"""

from __future__ import annotations

import time as _time
from dataclasses import replace
from typing import Any

from bbopt.models.io_window import IOWindowModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.io_window.forms import counts_of, solve_io_window
from bbopt.solvers.window.forms import LinearForm
from bbopt.solvers.window.scip import _ScipPulp


def solve_scip(model: IOWindowModel, budget: Budget, seed: int, trace: bool = False,
               **options: Any) -> Result:
    """Select and place with SCIP (see the module docstring for options)."""
    t0 = _time.perf_counter()
    made: list[_ScipPulp] = []

    def make(lf: LinearForm) -> _ScipPulp:
        made.append(_ScipPulp(lf, budget, seed, t0, counts=True, trace=trace))
        return made[0]

    result = solve_io_window(model, budget, make, "scip", **options)
    if not trace:
        return result
    incumbents = [(t, counts_of(model, a).tolist()) for t, a in (made[0].trace if made else [])]
    return replace(result, info={**result.info, "trace": incumbents})

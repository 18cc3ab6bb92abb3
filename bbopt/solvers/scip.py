"""SCIP through PuLP's in-process interface (``pyscipopt``), with an anytime trace.

The SCIP backends of the window, pack and victim models (``bbopt/solvers/*/scip.py``) solve the
very PuLP programs the ``milp`` backends write (one translation of each model), handed to SCIP
instead of CBC by :class:`ScipCommand`: one thread, ``randomization/randomseedshift = seed``,
the time limit (wall seconds) of what is left of the budget, zero relative and absolute gap
(the exact-agreement tests compare optima, and SCIP's default stops at 0.01 %).

Anytime trace: an event handler on SCIP's ``BESTSOLFOUND`` calls ``on_solution(values)`` with
the values of the PuLP variables at each new incumbent; the backends turn them into
``(seconds since the backend started, solution)`` pairs in ``Result.info["trace"]``
(Berthold's primal integral and the gap-over-time curves of :mod:`bbopt.bench.measures` read
them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pulp
from pyscipopt import SCIP_EVENTTYPE, Eventhdlr


class _Incumbents(Eventhdlr):
    def __init__(self, on_solution: Callable[[Any], None]) -> None:
        self.on_solution = on_solution

    def eventinit(self) -> None:
        self.model.catchEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

    def eventexit(self) -> None:
        self.model.dropEvent(SCIP_EVENTTYPE.BESTSOLFOUND, self)

    def eventexec(self, event) -> None:
        self.on_solution(self.model.getBestSol())


class ScipCommand(pulp.SCIP_PY):
    """PuLP's SCIP interface with bbopt's settings and an incumbent callback.

    ``watch``: the PuLP variables whose values ``on_solution`` receives (a list of floats, in
    that order) at every new incumbent."""

    def __init__(self, seconds: float, seed: int, watch: Sequence[pulp.LpVariable] = (),
                 on_solution: Callable[[list[float]], None] | None = None) -> None:
        super().__init__(msg=False, timeLimit=max(float(seconds), 0.01), gapRel=0.0,
                         gapAbs=0.0, options=[f"randomization/randomseedshift={int(seed)}"])
        self.watch = list(watch)
        self.on_solution = on_solution

    def callSolver(self, lp) -> None:
        if self.on_solution is not None:
            model = lp.solverModel

            def seen(sol) -> None:
                self.on_solution([model.getSolVal(sol, v.solverVar) for v in self.watch])

            model.includeEventhdlr(_Incumbents(seen), "bbopt-incumbents",
                                   "records every new incumbent")
        super().callSolver(lp)

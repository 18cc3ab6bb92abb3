"""``greedy`` backend of the select-and-place window model: Herbein et al.'s allocation (HPDC
2016, Section 3.4) job by job in window order, the contract's fallback.

``rule``: ``"first-fit"`` (every job that can be placed, in window order; default) or
``"in-order"`` (stop at the first that cannot: Herbein's I/O-aware FCFS over the window). Status
FEASIBLE: no optimality is claimed; for ``form="pareto"`` the one placement is a one-point set.
"""

from __future__ import annotations

from typing import Any

from bbopt.core import Status
from bbopt.models.io_window import IOWindowModel
from bbopt.solvers.base import Budget, Result, Solution


def solve_greedy(model: IOWindowModel, budget: Budget, seed: int, rule: str = "first-fit",
                 form: str = "pareto", **_: Any) -> Result:
    """Place by ``rule`` (see the module docstring)."""
    y = model.greedy(rule)
    values = model.evaluate(y)
    pareto = (Solution(y, values),) if form == "pareto" else ()
    return Result(Status.FEASIBLE, y, values, pareto=pareto, backend="greedy",
                  info={"rule": rule, "objectives": values})

"""``greedy`` backend of the window model: one-by-one selection rules (the baselines of Fan et
al., BBSched, Section 4.3, and the contract's fallback).

``rule``: ``"in-order"`` (Slurm's naive method: window order until a job does not fit),
``"first-fit"`` (every job that fits, in window order; the model's fallback) or
``"bin-packing"`` (highest alignment score first: dot product of the free resources and the
request, both as fractions of the platform; Grandl et al.). Status FEASIBLE: no optimality is
claimed. For ``form="pareto"`` the one selection is also returned as a one-point set.
"""

from __future__ import annotations

from typing import Any

from bbopt.core import Status
from bbopt.models.window import WindowModel
from bbopt.solvers.base import Budget, Result, Solution


def solve_greedy(model: WindowModel, budget: Budget, seed: int, rule: str = "first-fit",
                 form: str = "pareto", **_: Any) -> Result:
    """Select by ``rule`` (see the module docstring)."""
    x = model.greedy(rule)
    values = model.evaluate(x)
    pareto = (Solution(x, values),) if form == "pareto" else ()
    return Result(Status.FEASIBLE, x, values, pareto=pareto, backend="greedy",
                  info={"rule": rule, "objectives": values})

"""``greedy`` backend of the pack model: the paper's builders, first fit in an order
(Jeannot, Pallez & Vidal, "Variants for building packs").

Option ``order``: ``"random"`` (seeded by ``seed``), ``"max"`` (non-increasing time alone,
default), ``"char"`` (non-decreasing characteristic time) or ``"char-desc"`` (non-increasing).
Status FEASIBLE: no optimality is claimed.
"""

from __future__ import annotations

from typing import Any

from bbopt.core import Status
from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, Result


def solve_greedy(model: PackModel, budget: Budget, seed: int, order: str = "max",
                 **_: Any) -> Result:
    """First fit in ``order`` (see the module docstring)."""
    if order == "random" and seed != model.seed:
        from dataclasses import replace

        model = replace(model, seed=seed)
    x = model.greedy(order)
    values = model.evaluate(x)
    return Result(Status.FEASIBLE, x, values[0], backend="greedy",
                  info={"order": order, "stages": values})

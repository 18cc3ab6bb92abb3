"""``widest``: a backend of bbopt's window model (BBSched's selection problem) that selects the
widest jobs first while they fit, e.g. ``bbopt compare --policies bbsched -o backend=widest``.
Importing this module registers it."""

from __future__ import annotations

from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.models.window import WindowModel
from bbopt.solvers.base import Budget, Result, Solution, register_backend


@register_backend(WindowModel, "widest")
def solve_widest(model: WindowModel, budget: Budget, seed: int, form: str = "pareto",
                 **_: Any) -> Result:
    """Every job that fits, widest first."""
    x = model.greedy("first-fit", order=np.argsort(-model.nodes, kind="stable"))
    values = model.evaluate(x)
    pareto = (Solution(x, values),) if form == "pareto" else ()
    return Result(Status.FEASIBLE, x, values, pareto=pareto, backend="widest")

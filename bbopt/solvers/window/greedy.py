"""``greedy`` backend of the window models: one-by-one rules (the baselines of Fan et al.,
BBSched, Section 4.3, Herbein et al.'s allocation, HPDC 2016, Section 3.4, and the contract's
fallback), each the model's own ``greedy(rule)``.

``rule``: ``"in-order"`` (Slurm's naive method: window order until a job does not fit; on the
select-and-place model Herbein's I/O-aware FCFS over the window), ``"first-fit"`` (every job
that fits, or can be placed, in window order; the models' fallback) or ``"bin-packing"``
(window model only: highest alignment score first, the dot product of the free resources and
the request, both as fractions of the platform; Grandl et al.). Status FEASIBLE: no optimality
is claimed. For ``form="pareto"`` the one answer is also returned as a one-point set.
"""

from __future__ import annotations

from typing import Any

from bbopt.core import Status
from bbopt.models.io_window import IOWindowModel
from bbopt.models.window import WindowModel
from bbopt.solvers.base import Budget, Result, Solution


def solve_greedy(model: WindowModel | IOWindowModel, budget: Budget, seed: int,
                 rule: str = "first-fit", form: str = "pareto", **_: Any) -> Result:
    """Select (and place) by ``rule`` (see the module docstring)."""
    x = model.greedy(rule)
    values = model.evaluate(x)
    pareto = (Solution(x, values),) if form == "pareto" else ()
    return Result(Status.FEASIBLE, x, values, pareto=pareto, backend="greedy",
                  info={"rule": rule, "objectives": values})

"""The ``greedy`` backend of the plan model: the submission-order plan.

This is the plan-based scheduler without search (Kopanski & Rzadca, Section 3.3: "the easiest way
to create the execution plan is to iterate over the queue of jobs"), i.e. conservative
backfilling rebuilt from scratch at every scheduling point; it is also every backend's fallback.
"""

from __future__ import annotations

import time as _time

from bbopt.core import Status
from bbopt.models.plan import PlanModel
from bbopt.solvers.base import Budget, Result


def solve_greedy(model: PlanModel, budget: Budget, seed: int = 0, **options) -> Result:
    """The submission-order plan; its objective is an upper bound of every search's."""
    t0 = _time.perf_counter()
    plan = model.fallback()
    return Result(Status.FEASIBLE, plan, model.evaluate(plan),
                  wall_time=_time.perf_counter() - t0, backend="greedy",
                  info={"evaluations": 1})

"""Checks shared by the plan-model tests on named and proximity BB nodes."""

from __future__ import annotations

import random

from bbopt.models.plan import PlanModel
from bbopt.models.plan_walk import SwapWalk


def check_swaps_score_as_fresh_plans(model: PlanModel, rnd: random.Random, stride: int,
                                     moves: int = 12) -> None:
    """Random swaps scored incrementally (:class:`SwapWalk`) equal a fresh plan's score, and an
    accepted swap leaves the walk on that order with that plan's starts (nothing to swap in a
    model of fewer than two jobs: jobs that never fit the platform are not part of it)."""
    if model.n < 2:
        return
    walk = SwapWalk(model, range(model.n), stride=stride)
    for _ in range(moves):
        a, b = rnd.randrange(model.n), rnd.randrange(model.n)
        swapped = walk.order[:]
        swapped[a], swapped[b] = swapped[b], swapped[a]
        assert walk.try_swap(a, b) == model.score(swapped)
        if rnd.random() < 0.6:
            walk.accept()
            assert walk.order == swapped
            assert walk.start == list(model.plan(swapped).starts)

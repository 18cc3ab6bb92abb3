"""Checks shared by the plan tests: plan models on named and proximity BB nodes, and replays of
a planning policy whose every decision is checked against fresh policies on the same state."""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence

import pytest

from bbopt import simulate
from bbopt.models.plan import PlanModel
from bbopt.models.plan_walk import SwapWalk
from bbopt.policies import make_policy


def check_swaps_score_as_fresh_plans(model: PlanModel, rnd: random.Random, stride: int,
                                     moves: int = 12) -> None:
    """Random swaps scored incrementally (:class:`SwapWalk`) equal a fresh plan's score under
    the same threshold (the score, or ``inf`` when rejected early: thresholds at, just below
    and around the swapped order's score, and none), and an accepted swap leaves the walk on
    that order with that plan's starts (nothing to swap in a model of fewer than two jobs: jobs
    that never fit the platform are not part of it)."""
    if model.n < 2:
        return
    walk = SwapWalk(model, range(model.n), stride=stride)
    for _ in range(moves):
        a, b = rnd.randrange(model.n), rnd.randrange(model.n)
        swapped = walk.order[:]
        swapped[a], swapped[b] = swapped[b], swapped[a]
        fresh = model.score(swapped)
        threshold = rnd.choice([math.inf, math.inf, fresh, math.nextafter(fresh, -math.inf),
                                fresh * rnd.uniform(0.3, 1.2), walk.score * rnd.uniform(0.5, 1.5)])
        got = walk.try_swap(a, b, threshold)
        assert got == model.score(swapped, threshold)
        if got > threshold:
            with pytest.raises(ValueError, match="nothing to accept"):
                walk.accept()
            continue
        assert got == fresh
        if rnd.random() < 0.6:
            walk.accept()
            assert walk.order == swapped
            assert walk.score == fresh
            assert walk.start == list(model.plan(swapped).starts)


def replay_against_fresh(jobs: Sequence, platform, policy: str,
                         options: Mapping | None = None, tick: float | None = None,
                         fresh: Sequence[Mapping] = ({},)) -> tuple:
    """Replay ``jobs`` under ``policy`` (with ``options``); every decision must start the same jobs
    (on the same nodes, with the same BB pieces), keep the same reservations and memory as a
    fresh policy built with ``options`` and each of ``fresh`` (e.g. ``{"compiled": False}``:
    the Python reference) decides on the same state. Returns the result and the times compared."""
    compared = []

    def observe(state, decision):
        for extra in fresh:
            again = make_policy(policy, **{**(options or {}), **extra}).decide(state)
            assert decision.start == again.start, state.time  # (nodes and BB pieces too)
            assert decision.reservations == again.reservations, state.time
            assert decision.memory == again.memory, state.time
        compared.append(state.time)

    res = simulate(jobs, platform, policy, options=options, tick=tick, on_decision=observe)
    return res, compared

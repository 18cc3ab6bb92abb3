"""``cpsat`` backend of the select-and-place window model (OR-Tools CP-SAT).

Beyond Herbein et al. (HPDC 2016, Section 3.4) and Fan et al. (BBSched, HPDC 2019, Section 3.2):
the window's jobs are selected and placed on groups of free nodes in one CP-SAT model under the
per-subtree bandwidth rows (:mod:`bbopt.solvers.io_window.forms`). Forms as the window's
``cpsat`` backend: ``pareto`` (exact front by disjunctive epsilon-constraint, default),
``weighted`` and ``lexicographic``; options ``weights``, ``priority``, ``tiebreak``,
``max_points``, ``trace`` (the first solve's incumbents as ``(seconds, count matrix)`` pairs in
``Result.info["trace"]``, for the solver benchmark).

Reproducibility and budget as :mod:`bbopt.solvers.window.cpsat` (one worker, ``random_seed =
seed``, ``max_deterministic_time`` when ``Budget.deterministic`` is set, ``max_time_in_seconds``
from what is left); no answer in time raises :class:`~bbopt.solvers.base.BudgetExceeded`, and the
contract answers with the model's greedy placement (status FALLBACK).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bbopt.models.io_window import IOWindowModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.io_window.forms import counts_of, solve_io_window
from bbopt.solvers.window.cpsat import _CpSat, traced


def solve_cpsat(model: IOWindowModel, budget: Budget, seed: int, trace: bool = False,
                **options: Any) -> Result:
    """Select and place with CP-SAT (see the module docstring for options)."""
    if not trace:
        return solve_io_window(model, budget, lambda lf: _CpSat(lf, budget, seed), "cpsat",
                               **options)
    made: list = []
    result = solve_io_window(model, budget, traced(budget, seed, made, counts=True), "cpsat",
                             **options)
    incumbents = [(t, counts_of(model, a).tolist()) for t, a in (made[0].trace if made else [])]
    return replace(result, info={**result.info, "trace": incumbents})

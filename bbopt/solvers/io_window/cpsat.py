"""``cpsat`` backend of the select-and-place window model (OR-Tools CP-SAT).

Beyond Herbein et al. (HPDC 2016, Section 3.4) and Fan et al. (BBSched, HPDC 2019, Section 3.2):
the window's jobs are selected and placed on groups of free nodes in one CP-SAT model under the
per-subtree bandwidth rows (:mod:`bbopt.solvers.io_window.forms`). Forms as the window's
``cpsat`` backend: ``pareto`` (exact front by disjunctive epsilon-constraint, default),
``weighted`` and ``lexicographic``; options ``weights``, ``priority``, ``tiebreak``,
``max_points``.

Reproducibility and budget as :mod:`bbopt.solvers.window.cpsat` (one worker, ``random_seed =
seed``, ``max_deterministic_time`` when ``Budget.deterministic`` is set, ``max_time_in_seconds``
from what is left); no answer in time raises :class:`~bbopt.solvers.base.BudgetExceeded`, and the
contract answers with the model's greedy placement (status FALLBACK).
"""

from __future__ import annotations

from typing import Any

from bbopt.models.io_window import IOWindowModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.io_window.forms import solve_io_window
from bbopt.solvers.window.cpsat import _CpSat


def solve_cpsat(model: IOWindowModel, budget: Budget, seed: int, **options: Any) -> Result:
    """Select and place with CP-SAT (see the module docstring for options)."""
    return solve_io_window(model, budget, lambda lf: _CpSat(lf, budget, seed), "cpsat",
                           **options)

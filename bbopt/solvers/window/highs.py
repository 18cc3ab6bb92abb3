"""``highs`` backend of the window model: the HiGHS MILP solver in-process, through
``scipy.optimize.milp`` (Fan et al., BBSched, Section 3.2, solved exactly like ``cpsat`` and
``milp``; the drivers are in :mod:`bbopt.solvers.window.forms`).

Each solve rebuilds the small integer program (a few knapsack rows over at most a few hundred
binaries) with the rows the drivers added; the disjunctions of the epsilon-constraint front
become big-M rows with one binary per objective, the M taken from the variable boxes. HiGHS runs
single-threaded with ``time_limit`` set to what is left of the budget and a zero relative gap;
it has no seed option and is deterministic. No answer in time: the contract's greedy FALLBACK.

Options: as ``cpsat`` (``form``, ``weights``, ``priority``, ``tiebreak``, ``max_points``,
``method``, ``two_list``).
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, milp

from bbopt.core import Status
from bbopt.models.window import WindowModel
from bbopt.solvers.base import Budget, Result
from bbopt.solvers.window.forms import LinearForm, solve_window


class _Highs:
    def __init__(self, form: LinearForm) -> None:
        self.form = form
        self.cuts = 0  # binaries of the disjunctions, after x and A
        # rows: (cx, ca, {cut: coefficient}, lower, upper)
        self.rows: list[tuple[np.ndarray, np.ndarray, dict[int, float], float, float]] = [
            (cx, ca, {}, -np.inf, float(ub)) for cx, ca, ub in form.rows]
        self.temp: dict[int, tuple] = {}
        self.names = itertools.count()

    def maximize(self, cx, ca, seconds, hint=None, work=None):
        f = self.form
        w, k = f.w, f.k
        n = w + k + self.cuts
        rows = self.rows + list(self.temp.values())
        M = np.zeros((len(rows), n))
        for r, (rx, ra, cut, _, _) in enumerate(rows):
            M[r, :w], M[r, w:w + k] = rx, ra
            for j, v in cut.items():
                M[r, w + k + j] = v
        lo = np.concatenate([f.fix1.astype(float), np.zeros(k + self.cuts)])
        hi = np.concatenate([(~f.fix0).astype(float), f.a_hi.astype(float),
                             np.ones(self.cuts)])
        c = -np.concatenate([cx, ca, np.zeros(self.cuts)]).astype(float)
        res = milp(c, integrality=np.ones(n), bounds=Bounds(lo, hi),
                   constraints=LinearConstraint(M, [r[3] for r in rows], [r[4] for r in rows])
                   if rows else None,
                   options={"time_limit": max(float(seconds), 1e-3), "disp": False,
                            "mip_rel_gap": 0.0})
        if res.status == 2:
            return Status.INFEASIBLE, None, None, None
        if res.x is None:
            return Status.FALLBACK, None, None, None
        x = np.round(res.x[:w]).astype(np.int64)
        a = np.round(res.x[w:w + k]).astype(np.int64)
        if any(int(rx @ x) + (int(ra @ a) if k else 0) > ub for rx, ra, ub in f.rows):
            return Status.FALLBACK, None, None, None  # rounding broke a row: not an answer
        bound = getattr(res, "mip_dual_bound", None)
        status = Status.OPTIMAL if res.status == 0 else Status.FEASIBLE
        return status, x.astype(bool), a, None if bound is None else -float(bound)

    def push_ge(self, cx, ca, rhs):
        handle = next(self.names)
        self.temp[handle] = (cx, ca, {}, float(rhs), np.inf)
        return handle

    def pop(self, handle) -> None:
        del self.temp[handle]

    def add_any_ge(self, terms) -> None:
        first = self.cuts
        for j, (cx, ca, rhs) in enumerate(terms):
            lo, _ = self.form.bounds(cx, ca)
            big_m = float(max(int(rhs) - lo, 0))
            # cx . x + ca . A >= rhs - M (1 - b_j)
            self.rows.append((cx, ca, {first + j: -big_m}, float(rhs) - big_m, np.inf))
        self.cuts += len(terms)
        self.rows.append((np.zeros(self.form.w), np.zeros(self.form.k),
                          {first + j: 1.0 for j in range(len(terms))}, 1.0, np.inf))


def solve_highs(model: WindowModel, budget: Budget, seed: int, **options: Any) -> Result:
    """Solve the window model with HiGHS (see the module docstring for options)."""
    return solve_window(model, budget, lambda lf: _Highs(lf), "highs", **options)

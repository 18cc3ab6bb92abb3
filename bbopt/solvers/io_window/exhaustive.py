"""``exhaustive`` backend of the select-and-place window model: every selection and, for each,
a search over every placement (count vectors per job, pruned at the first vertex, group or
link row broken). The reference that the ``cpsat`` backend is tested against on small cases
(beyond Herbein et al., HPDC 2016, and Fan et al., BBSched, HPDC 2019, Section 3.2.2).

Forms ``pareto`` (default), ``weighted`` and ``lexicographic`` as the window's exhaustive
backend; ties go to the selection nearest the window front. Windows of at most
:data:`MAX_WINDOW` jobs; the budget is checked during the search (out of budget: the contract's
greedy fallback). Deterministic.
"""

from __future__ import annotations

import itertools
import time as _time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from bbopt.core import REL_TOL
from bbopt.errors import InputError
from bbopt.models.io_window import IOWindowModel
from bbopt.solvers.base import Budget, BudgetExceeded, Result
from bbopt.solvers.io_window.forms import candidates
from bbopt.solvers.scalarize import Form, best_result

MAX_WINDOW = 12


def _rows(n: int, hi: np.ndarray) -> Iterator[np.ndarray]:
    """Every vector of ``len(hi)`` ints in ``[0, hi]`` summing to ``n``."""
    G = len(hi)
    if G == 0:
        if n == 0:
            yield np.zeros(0, dtype=np.int64)
        return
    suffix = np.concatenate([np.cumsum(hi[::-1])[::-1], [0]])
    cur = np.zeros(G, dtype=np.int64)

    def rec(g: int, left: int) -> Iterator[np.ndarray]:
        if g == G:
            if left == 0:
                yield cur.copy()
            return
        lo = max(0, left - int(suffix[g + 1]))
        for t in range(min(int(hi[g]), left), lo - 1, -1):
            cur[g] = t
            yield from rec(g + 1, left - t)
        cur[g] = 0

    yield from rec(0, n)


def find_placement(model: IOWindowModel, x: np.ndarray, deadline: float | None = None
                   ) -> np.ndarray | None:
    """A placement of selection ``x`` if one exists (exhaustive search), else ``None``."""
    sel = [int(j) for j in np.flatnonzero(x)]
    sel.sort(key=lambda j: -int(model.window.nodes[j]))  # big jobs first: prune early
    upper = model.upper()
    M = model.membership.astype(float)
    cap = model.vertex_avail * (1 + REL_TOL) + 1e-6
    y = np.zeros((model.size, model.groups), dtype=np.int64)
    calls = [0]

    def rec(k: int, left: np.ndarray, load: np.ndarray) -> bool:
        if k == len(sel):
            return True
        calls[0] += 1
        if deadline is not None and calls[0] % 256 == 0 and _time.perf_counter() > deadline:
            raise BudgetExceeded
        j = sel[k]
        for row in _rows(int(model.window.nodes[j]), np.minimum(upper[j], left)):
            extra = M @ (row * model.bandwidth[j]) if len(cap) else load
            new = load + extra if len(cap) else load
            if len(cap) and np.any(new > cap):
                continue
            y[j] = row
            if rec(k + 1, left - row, new):
                return True
        y[j] = 0
        return False

    if rec(0, model.group_size(), np.zeros(len(cap))):
        return y.copy()
    return None


def solve_exhaustive(model: IOWindowModel, budget: Budget, seed: int, form: str = "pareto",
                     weights: Sequence[float] | None = None,
                     priority: Sequence[str] | None = None, tiebreak: bool = True,
                     **_: Any) -> Result:
    """Enumerate every selection and placement (see the module docstring)."""
    deadline = _time.perf_counter() + budget.seconds
    w = model.size
    if w > MAX_WINDOW:
        raise InputError(f"exhaustive select-and-place is limited to w <= {MAX_WINDOW}, got {w}",
                         field="w")
    spec = Form.of(model.objectives, form, weights, priority, tiebreak)
    ys = []
    for bits in itertools.product((False, True), repeat=w):
        x = np.array(bits, dtype=bool)
        if not model.window.feasible(x):
            continue
        y = find_placement(model, x, deadline)
        if y is not None:
            ys.append(y)
    return best_result(candidates(model), ys, spec, "exhaustive", {"placeable": len(ys)})

"""``exhaustive`` backend of the pack model: every subset of a small instance, vectorised
(the reference the exact backends are tested against).

Enumerates the ``2^m`` selections in blocks with numpy and keeps the lexicographic best under the
model's stages (a later stage counts only among selections within ``tolerance`` of the best
earlier stage). Refuses (``BudgetExceeded``, hence the contract's FALLBACK) beyond
``max_items`` (default 20) applications or when the wall-clock budget runs out. OPTIMAL.
"""

from __future__ import annotations

import time as _time
from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.models.packs import REL, PackModel
from bbopt.solvers.base import Budget, BudgetExceeded, Result

BLOCK = 1 << 14


def solve_exhaustive(model: PackModel, budget: Budget, seed: int, max_items: int = 20,
                     **_: Any) -> Result:
    """Enumerate all packs (see the module docstring)."""
    m = model.size
    if m > max_items:
        raise BudgetExceeded(f"{m} applications > max_items={max_items}")
    t0 = _time.perf_counter()
    q, t, u = model.nodes, model.duration, model.io_time
    stages = np.vstack(model.stages) if m else np.zeros((len(model.stages), 0))
    bits = 1 << np.arange(m, dtype=np.int64)
    feasible_values = []
    feasible_masks = []
    for lo in range(0, 1 << m, BLOCK):
        if _time.perf_counter() - t0 > budget.seconds:
            raise BudgetExceeded("exhaustive enumeration out of time")
        masks = np.arange(lo, min(lo + BLOCK, 1 << m), dtype=np.int64)
        x = (masks[:, None] & bits[None, :]) != 0
        ok = (x @ q) <= model.capacity
        longest = np.where(x, t[None, :], 0.0).max(axis=1) if m else np.zeros(len(masks))
        ok &= (x @ u) <= longest * (1 + REL)
        feasible_masks.append(masks[ok])
        feasible_values.append(x[ok].astype(float) @ stages.T)
    masks = np.concatenate(feasible_masks)
    values = np.concatenate(feasible_values)
    keep = np.ones(len(masks), dtype=bool)
    for s in range(values.shape[1]):
        best = values[keep, s].max()
        last = s == values.shape[1] - 1
        slack = 0.0 if last else model.tolerance * abs(best)
        keep &= values[:, s] >= best - slack - 1e-9 * max(abs(best), 1.0)
    pick = int(masks[np.flatnonzero(keep)[0]])
    x = (pick & bits) != 0
    vals = model.evaluate(x)
    return Result(Status.OPTIMAL, x, vals[0], bound=vals[0], backend="exhaustive",
                  info={"stages": vals, "feasible": int(len(masks))})

"""The measures of solver benchmarking, by their published definitions.

- :func:`performance_profile`: Dolan & More, "Benchmarking optimization software with
  performance profiles" (Math. Programming 91, 2002): for solver ``s`` the share of problems
  whose time ratio to the best solver on that problem is at most ``tau``,
  ``rho_s(tau) = |{p : t_ps / min_s' t_ps' <= tau}| / n_p``; an unsolved problem has ratio
  infinity (it never counts); a problem no solver solves counts for none.
- :func:`shifted_geometric_mean`: ``exp(mean(log(t + s))) - s`` (Achterberg's thesis, MIPLIB
  2010/2017 reports with ``s`` = 10 s at a 2 h limit); unsolved runs count at the time limit.
- :func:`primal_integral`: Berthold, "Measuring the impact of primal heuristics" (Oper. Res.
  Letters 41, 2013): the integral over ``[0, T]`` of the primal gap of the incumbent, 1 while
  there is none; :func:`gap_at` is the step function it integrates (the gap-over-time curve).
- :func:`runtime_ecdf`: the COCO convention (Hansen et al., "COCO: a platform for comparing
  continuous optimizers", 2021; bi-objective: Brockhoff et al., 2016): for each (problem,
  target) pair the first time a run reaches the target; the empirical distribution of those
  times over all pairs (an unreached pair counts as never).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


def performance_profile(times: Mapping[str, Sequence[float]], taus: Sequence[float]
                        ) -> dict[str, np.ndarray]:
    """``rho_s(tau)`` for each solver ``s`` at each ``tau``; ``times[s][p]`` is the time solver
    ``s`` needed on problem ``p`` (``inf``: not solved). Every solver lists the same problems."""
    names = list(times)
    T = np.array([np.asarray(times[s], dtype=float) for s in names])  # solvers x problems
    if T.size == 0:
        return {s: np.zeros(len(taus)) for s in names}
    best = T.min(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        R = np.where(np.isfinite(T), T / np.maximum(best, 1e-300), np.inf)
    taus = np.asarray(taus, dtype=float)
    return {s: (R[k][:, None] <= taus[None, :]).mean(axis=0) for k, s in enumerate(names)}


def shifted_geometric_mean(values: Sequence[float], shift: float) -> float:
    """``exp(mean(log(v + shift))) - shift`` (``nan`` for no values)."""
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return float("nan")
    return float(np.exp(np.mean(np.log(v + shift))) - shift)


def gap_at(trace: Sequence[Sequence[float]], t: float | np.ndarray) -> np.ndarray:
    """The primal gap at time(s) ``t`` of a run whose incumbents are ``trace`` (``(time,
    gap)`` pairs): the gap of the last incumbent found by then, 1 before the first."""
    t = np.atleast_1d(np.asarray(t, dtype=float))
    if not len(trace):
        return np.ones_like(t)
    pts = sorted((float(a), float(b)) for a, b in trace)
    times = np.array([p[0] for p in pts])
    gaps = np.array([p[1] for p in pts])
    k = np.searchsorted(times, t, side="right") - 1
    return np.where(k >= 0, gaps[np.maximum(k, 0)], 1.0)


def primal_integral(trace: Sequence[Sequence[float]], horizon: float) -> float:
    """Berthold's primal integral of a run over ``[0, horizon]`` (seconds x gap)."""
    pts = sorted((float(a), float(b)) for a, b in trace if float(a) < horizon)
    total, t_prev, g_prev = 0.0, 0.0, 1.0
    for t, g in pts:
        total += (max(t, 0.0) - t_prev) * g_prev
        t_prev, g_prev = max(t, 0.0), g
    return total + (horizon - t_prev) * g_prev


def runtime_ecdf(first_times: Sequence[float], grid: Sequence[float]) -> np.ndarray:
    """The share of (problem, target) pairs reached by each time of ``grid``; ``first_times``
    holds one first-hitting time per pair (``inf``: never reached)."""
    v = np.asarray(first_times, dtype=float)
    if v.size == 0:
        return np.zeros(len(grid))
    return (v[:, None] <= np.asarray(grid, dtype=float)[None, :]).mean(axis=0)

"""Metrics of Jeannot, Pallez & Vidal (IJHPCA 2023, "Evaluation criterion" and "Starvation for
pack scheduling") for runs under the exclusive-I/O execution model.

- **Utilisation over time**: the fraction of the ``P`` nodes doing the applications' work at
  time ``t`` -- nodes held by a running application that is computing or transferring, not
  waiting for the I/O node (time spent in the FIFO is the work lost to I/O exclusivity; an
  application alone would not spend it). Averaged in time bins (:func:`usage_over_time`) and
  over two parts of the run (:func:`pack_metrics`): the *steady state* while applications still
  wait to start (up to the last start) and the *tail* after it, when the workload is exhausted.
- **Stretch** (equation (1)): ``(end - start) / T_i`` with ``T_i`` the time alone; maximum and
  mean. The flow stretch ``(end - submit) / T_i`` (waiting included) is reported too.
- **Idle ratio**: unallocated node-time over ``P x makespan`` (Figure 9).
- **Resource usage over time** (Figure 8): mean number of running applications, fraction of the
  nodes allocated, and fraction of the I/O nodes' time spent transferring ("used bandwidth"),
  plus the planned share (sum of the running applications' average bandwidths over ``b``).

All functions read a :class:`~bbopt.simulation.result.SimulationResult` and the
:class:`~bbopt.simulation.exclusive_io.ExclusiveIO` model object that ran it.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bbopt.core import periodic_spec
from bbopt.simulation.result import SimulationResult

#: Time bins of the usage curves a run keeps (:meth:`ExclusiveIO.curves`, Figures 4-5 and 8).
USAGE_BINS = 60


def _io_bandwidth(result: SimulationResult, model: Any, k: int) -> float:
    """The bandwidth of the I/O node that served periodic job ``k``: its rack's, else (no
    bandwidth given to the model) the one the job was generated for."""
    rack = model.rack_for(result.allocation[k]) if result.allocation[k] else 0
    b = model.bandwidth[rack]
    return b if b is not None else float(result.jobs[k].extra["io"]["io_bandwidth"])


def _times_alone(result: SimulationResult, model: Any) -> np.ndarray:
    out = np.empty(len(result.jobs))
    for k, job in enumerate(result.jobs):
        spec = periodic_spec(job)
        if spec is None:
            out[k] = job.runtime if job.runtime is not None else job.walltime
            continue
        n, w, v = spec
        out[k] = n * (w + v / _io_bandwidth(result, model, k))
    return out


def _integral(starts: np.ndarray, ends: np.ndarray, weights: np.ndarray,
              at: np.ndarray) -> np.ndarray:
    """``integral_0^t sum_i w_i [s_i <= x < e_i] dx`` at each ``t`` of ``at``."""
    if len(starts) == 0:
        return np.zeros(len(at))
    times = np.concatenate([starts, ends])
    deltas = np.concatenate([weights, -weights])
    order = np.argsort(times, kind="stable")
    times, deltas = times[order], deltas[order]
    level = np.cumsum(deltas)
    area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(times))])
    return np.interp(at, times, area, left=0.0, right=area[-1])


def _waits(model: Any, result: SimulationResult) -> tuple[np.ndarray, ...]:
    """FIFO waiting intervals with the nodes of the waiting job."""
    tr = model.transfers
    if not tr:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    k = np.array([x[0] for x in tr])
    start = np.array([x[2] for x in tr])
    due = np.asarray(model.due, dtype=float)
    q = np.array([result.jobs[i].nodes for i in k], dtype=float)
    keep = start > due
    return due[keep], start[keep], q[keep]


def usage_over_time(result: SimulationResult, model: Any, bins: int = 100,
                    horizon: float | None = None) -> dict[str, np.ndarray]:
    """Time-binned means over ``[0, horizon]`` (default: the makespan): ``t`` (bin centres,
    seconds), ``utilisation`` (useful node fraction), ``nodes`` (allocated fraction),
    ``running`` (applications), ``io_busy`` (fraction of I/O-node time transferring) and
    ``io_planned`` (sum of average bandwidths of running applications over the bandwidth)."""
    start = np.asarray(result.start, dtype=float)
    end = np.asarray(result.end, dtype=float)
    ok = np.isfinite(start) & np.isfinite(end)
    span = float(end[ok].max()) if ok.any() else 0.0
    horizon = span if horizon is None else horizon
    edges = np.linspace(0.0, max(horizon, 1e-9), bins + 1)
    width = np.diff(edges)
    p = result.platform.nodes
    q = np.array([j.nodes for j in result.jobs], dtype=float)

    def mean(s, e, w):
        return np.diff(_integral(s, e, w, edges)) / width

    alloc = mean(start[ok], end[ok], q[ok]) / p
    ws, we, wq = _waits(model, result)
    waiting = mean(ws, we, wq) / p
    running = mean(start[ok], end[ok], np.ones(ok.sum()))
    tr = model.transfers
    n_io = max(len(model.bandwidth), 1)
    io_busy = mean(np.array([x[2] for x in tr]), np.array([x[3] for x in tr]),
                   np.ones(len(tr))) / n_io if tr else np.zeros(bins)
    t_alone = _times_alone(result, model)
    avg_share = np.zeros(len(result.jobs))
    for k, job in enumerate(result.jobs):
        spec = periodic_spec(job)
        if spec is not None and ok[k]:
            n, w, v = spec
            avg_share[k] = n * v / _io_bandwidth(result, model, k) / t_alone[k]
    planned = mean(start[ok], end[ok], avg_share[ok]) / n_io
    return {"t": (edges[:-1] + edges[1:]) / 2, "utilisation": alloc - waiting, "nodes": alloc,
            "running": running, "io_busy": io_busy, "io_planned": planned}


def pack_metrics(result: SimulationResult, model: Any) -> dict[str, Any]:
    """The paper's run metrics (see the module docstring) as one flat dict."""
    start = np.asarray(result.start, dtype=float)
    end = np.asarray(result.end, dtype=float)
    submit = np.array([j.submit for j in result.jobs])
    q = np.array([j.nodes for j in result.jobs], dtype=float)
    ok = np.isfinite(start) & np.isfinite(end)
    t_alone = _times_alone(result, model)
    stretch = (end[ok] - start[ok]) / t_alone[ok]
    flow = (end[ok] - submit[ok]) / t_alone[ok]
    p = result.platform.nodes
    makespan = float(end[ok].max()) if ok.any() else 0.0
    t0 = float(submit.min()) if len(submit) else 0.0
    last_start = float(start[ok].max()) if ok.any() else 0.0
    ws, we, wq = _waits(model, result)
    marks = np.array([t0, last_start, makespan])
    held = _integral(start[ok], end[ok], q[ok], marks)
    lost = _integral(ws, we, wq, marks)
    useful = held - lost

    def part(i: int, j: int, what: np.ndarray) -> float:
        dt = marks[j] - marks[i]
        return float((what[j] - what[i]) / (p * dt)) if dt > 0 else float("nan")

    return {
        "jobs": int(ok.sum()),
        "makespan": makespan,
        "utilisation": part(0, 2, useful),
        "utilisation_steady": part(0, 1, useful),
        "utilisation_tail": part(1, 2, useful),
        "steady_fraction": (last_start - t0) / (makespan - t0) if makespan > t0 else 0.0,
        "allocated": part(0, 2, held),
        "idle_ratio": 1.0 - part(0, 2, held),
        "io_wait_share": float((lost[2] - lost[0]) / max(held[2] - held[0], 1e-300)),
        "max_stretch": float(stretch.max()) if len(stretch) else float("nan"),
        "mean_stretch": float(stretch.mean()) if len(stretch) else float("nan"),
        "max_flow_stretch": float(flow.max()) if len(flow) else float("nan"),
        "mean_flow_stretch": float(flow.mean()) if len(flow) else float("nan"),
    }


def usage_trend(usage: dict[str, np.ndarray], key: str, upto: float = 0.9) -> float:
    """Slope of ``usage[key]`` against normalised time over the first ``upto`` of the run
    (least squares): near 0 in a steady state; Figure 8's pack schedules on M-BN show nodes
    falling (< 0) and I/O rising (> 0) as compute-heavy applications are favoured first."""
    t = usage["t"]
    x = t / t[-1] if len(t) and t[-1] > 0 else t
    keep = x <= upto
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(x[keep], usage[key][keep], 1)[0])

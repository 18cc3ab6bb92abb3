"""Metrics of I/O-aware scheduling runs (Herbein et al., HPDC 2016, Sections 4.4 and 5).

From a :class:`~bbopt.simulation.result.SimulationResult` and the fluid execution model that ran
it (:class:`~bbopt.simulation.io_model.IOContention` or ``PhasedIO``):

- ``system_efficiency``: share of allocated node-time spent computing rather than blocked on I/O
  (Section 5.2; the paper's "% of time nodes spend in computation"), phases of phased jobs
  included in the allocated time;
- ``compute_share_min/p05/median/max``: per-job share of its run time spent computing (Section
  5.3, "variability": 66.7-100 % in the paper at 30 % underprovisioning under I/O-ignorant EASY);
- ``interfered_node_time_share``: share of compute node-time with interference factor I < 1,
  and ``interfered_wall_share``: share of the wall time, while some job computes, during which
  some computing job has I < 1 (Section 4.4: 55-65 % under I/O-ignorant scheduling);
- ``decision_time_p50/p75/p95``: the scheduler's decision times (Section 5.4);
- ``mean_turnaround`` (Section 5.5) and ``overran_walltime`` (jobs whose run exceeded their
  walltime: slowed by contention when the model does not kill them);
- for phased jobs, ``mean_<phase>_time`` for each phase (stage-in, compute, checkpoint,
  stage-out, drain wait, background drain).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from bbopt.core import JobState
from bbopt.simulation.result import SimulationResult


def io_summary(result: SimulationResult, model: Any) -> dict[str, float]:
    """I/O metrics of one run as a flat dict of floats (see the module docstring)."""
    stats = model.job_stats()
    ran = (JobState.FINISHED, JobState.KILLED)
    ks = [k for k, s in enumerate(result.state) if s in ran and k in stats]
    out: dict[str, float] = {"jobs_measured": float(len(ks))}
    if ks:
        nodes = np.array([result.jobs[k].nodes for k in ks], dtype=float)
        elapsed = np.array([stats[k]["elapsed"] for k in ks])
        computed = np.array([stats[k]["computed"] for k in ks])
        compute_wall = np.array([stats[k]["compute"] for k in ks])
        interfered = np.array([stats[k]["interfered"] for k in ks])
        total = float(np.sum(nodes * elapsed))
        out["system_efficiency"] = float(np.sum(nodes * computed)) / total if total > 0 else 1.0
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(elapsed > 0, computed / elapsed, 1.0)
        out["compute_share_min"] = float(np.min(share))
        out["compute_share_p05"] = float(np.percentile(share, 5))
        out["compute_share_median"] = float(np.median(share))
        out["compute_share_max"] = float(np.max(share))
        cw = float(np.sum(nodes * compute_wall))
        out["interfered_node_time_share"] = float(np.sum(nodes * interfered)) / cw if cw else 0.0
        walltimes = np.array([result.jobs[k].walltime for k in ks])
        out["overran_walltime"] = float(np.sum(elapsed > walltimes * (1 + 1e-9)))
        turnaround = np.array([result.end[k] - result.jobs[k].submit for k in ks])
        out["mean_turnaround"] = float(np.mean(turnaround))
        for phase in model.PHASE_NAMES:
            out[f"mean_{phase}_time"] = float(np.mean([stats[k][phase] for k in ks]))
    contended, busy = model.contended_time()
    out["interfered_wall_share"] = contended / busy if busy > 0 else 0.0
    times = np.asarray(result.decision_times, dtype=float)
    if times.size:
        for q in (50, 75, 95):
            out[f"decision_time_p{q}"] = float(np.percentile(times, q))
        out["decision_time_max"] = float(np.max(times))
    return out


def per_job_io(result: SimulationResult, model: Any) -> list[dict[str, Any]]:
    """One record per job that ran: id, nodes, elapsed, computed, compute share and phase
    times (for a DataFrame)."""
    stats = model.job_stats()
    rows = []
    for k, job in enumerate(result.jobs):
        s = stats.get(k)
        if s is None:
            continue
        rows.append({"job_id": job.id, "nodes": job.nodes, **s,
                     "compute_share": s["computed"] / s["elapsed"] if s["elapsed"] > 0 else 1.0})
    return rows

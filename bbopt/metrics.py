"""Per-job and per-run metrics of a simulation.

Per job (finished and killed jobs; rejected jobs are counted, not measured):

- wait = start - submit; turnaround = end - submit;
- slowdown = turnaround / max(execution, 1 s);
- bounded slowdown = max(turnaround / max(execution, 600 s), 1) (Kopanski & Rzadca, Section 4.2:
  bounded for jobs shorter than ten minutes);
- stretch = turnaround / execution (Batsim's jobs.csv definition).

Per run: mean, median and 95th percentile of those; node and BB utilisation (held node-seconds
and byte-seconds over capacity x span, span = first submission to last end); makespan; counts of
finished, killed and rejected jobs; the distribution of decision times; how the decisions were
reached (share that fell back to the greedy answer; with an audited policy, the relative gap of
each decision to the exact optimum).
"""

from __future__ import annotations

import numpy as np

from bbopt.simulation.result import FINISHED, KILLED, REJECTED, SimulationResult

BSLD_BOUND = 600.0


def per_job(result: SimulationResult) -> dict[str, np.ndarray]:
    """Metric arrays over the jobs that ran (finished or killed), in job order."""
    a = result.arrays()
    ran = (a["state"] == FINISHED) | (a["state"] == KILLED)
    submit, start, end = a["submit"][ran], a["start"][ran], a["end"][ran]
    execution = end - start
    wait = start - submit
    turnaround = end - submit
    with np.errstate(divide="ignore", invalid="ignore"):
        stretch = np.where(execution > 0, turnaround / execution, np.nan)
    return {
        "wait": wait,
        "turnaround": turnaround,
        "execution": execution,
        "slowdown": turnaround / np.maximum(execution, 1.0),
        "bounded_slowdown": np.maximum(turnaround / np.maximum(execution, BSLD_BOUND), 1.0),
        "stretch": stretch,
        "nodes": a["nodes"][ran],
        "bb": a["bb"][ran],
    }


def summarize(result: SimulationResult) -> dict[str, float]:
    """Run metrics as a flat, ordered dict of floats."""
    m = per_job(result)
    a = result.arrays()
    states = a["state"]
    out: dict[str, float] = {
        "jobs": float(len(result)),
        "finished": float(np.sum(states == FINISHED)),
        "killed": float(np.sum(states == KILLED)),
        "rejected": float(np.sum(states == REJECTED)),
    }
    for name in ("wait", "turnaround", "slowdown", "bounded_slowdown", "stretch"):
        values = m[name]
        values = values[~np.isnan(values)]
        if values.size:
            out[f"mean_{name}"] = float(np.mean(values))
            out[f"median_{name}"] = float(np.median(values))
            out[f"p95_{name}"] = float(np.percentile(values, 95))
            out[f"max_{name}"] = float(np.max(values))
        else:
            for stat in ("mean", "median", "p95", "max"):
                out[f"{stat}_{name}"] = float("nan")
    ran = (states == FINISHED) | (states == KILLED)
    if np.any(ran):
        first = float(np.min(a["submit"]))
        last = float(np.max(a["end"][ran]))
        span = max(last - first, 1e-12)
        out["makespan"] = last - first
        platform = result.platform
        out["node_utilization"] = float(np.sum(m["nodes"] * m["execution"])) / (
            platform.nodes * span)
        out["bb_utilization"] = (float(np.sum(m["bb"] * m["execution"])) / (platform.bb * span)
                                 if platform.bb > 0 else float("nan"))
    else:
        out["makespan"] = 0.0
        out["node_utilization"] = float("nan")
        out["bb_utilization"] = float("nan")
    times = np.asarray(result.decision_times, dtype=float)
    out["decisions"] = float(times.size)
    if times.size:
        out["decision_time_mean"] = float(np.mean(times))
        out["decision_time_p50"] = float(np.percentile(times, 50))
        out["decision_time_p95"] = float(np.percentile(times, 95))
        out["decision_time_max"] = float(np.max(times))
    out.update(decision_quality(result))
    out["simulation_wall_time"] = result.wall_time
    return out


def decision_quality(result: SimulationResult) -> dict[str, float]:
    """How the run's decisions were reached: counts by status, and the gaps of audited ones.

    ``decision_gap_*`` summarise ``SolveStats.gap`` over the decisions that carry one (e.g. a
    plan policy with ``audit="exhaustive"``): 0 means the heuristic's answer was optimal.
    """
    from bbopt.core import Status

    stats = result.decision_stats
    out: dict[str, float] = {
        "decisions_fallback": float(sum(s.status is Status.FALLBACK for s in stats)),
    }
    gaps = np.asarray([s.gap for s in stats if s.gap is not None], dtype=float)
    out["decisions_audited"] = float(gaps.size)
    if gaps.size:
        out["decision_gap_mean"] = float(np.mean(gaps))
        out["decision_gap_p95"] = float(np.percentile(gaps, 95))
        out["decision_gap_max"] = float(np.max(gaps))
        out["decisions_optimal_share"] = float(np.mean(gaps <= 1e-9))
    return out

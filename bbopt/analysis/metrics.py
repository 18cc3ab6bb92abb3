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
each decision to the exact optimum); on a platform with local SSDs, SSD utilisation and waste
(:func:`ssd_usage`).

A measurement ``interval`` ``(t0, t1)`` restricts both, as trace studies do to leave out the
warm-up and cool-down of the machine (Fan et al., BBSched, Section 4.2: the first and last half
month): the per-job metrics cover the jobs submitted in ``[t0, t1)``, and the utilisations the
node-seconds and byte-seconds held inside the interval over capacity x ``(t1 - t0)``.
"""

from __future__ import annotations

import math
from itertools import compress, repeat
from operator import attrgetter, is_

import numpy as np

from bbopt.core import JobState
from bbopt.errors import InputError
from bbopt.simulation.result import BSLD_BOUND, SimulationResult

__all__ = ["BSLD_BOUND", "per_job", "summarize"]


def per_job(result: SimulationResult, arrays: dict[str, np.ndarray] | None = None,
            ran: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Metric arrays over the jobs that ran (finished or killed), in job order (``arrays``:
    ``result.arrays()``, and ``ran``: :func:`ran_mask` of them, when the caller has them)."""
    a = result.arrays() if arrays is None else arrays
    ran = ran_mask(a) if ran is None else ran
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
        "submit": submit,
        "start": start,
        "end": end,
    }


def ran_mask(arrays: dict[str, np.ndarray]) -> np.ndarray:
    """Which jobs ran (finished or killed), from ``result.arrays()``."""
    return (arrays["state"] == JobState.FINISHED) | (arrays["state"] == JobState.KILLED)


def summarize(result: SimulationResult,
              interval: tuple[float, float] | None = None) -> dict[str, float]:
    """Run metrics as a flat, ordered dict of floats (over ``interval``, see the module doc)."""
    a = result.arrays()
    ran = ran_mask(a)
    m = per_job(result, a, ran)
    if interval is None:
        listed, measured = np.ones(len(result), dtype=bool), np.ones(len(m["wait"]), dtype=bool)
    else:
        t0, t1 = (float(v) for v in interval)
        if not t1 > t0:
            raise InputError(f"empty measurement interval ({t0}, {t1})", field="interval")
        listed = (a["submit"] >= t0) & (a["submit"] < t1)
        measured = (m["submit"] >= t0) & (m["submit"] < t1)
    # (counted in C on a list: == with an identity shortcut, as the array's == counts them)
    states = result.state if interval is None else a["state"][listed].tolist()
    out: dict[str, float] = {
        "jobs": float(listed.sum()),
        "finished": float(states.count(JobState.FINISHED)),
        "killed": float(states.count(JobState.KILLED)),
        "rejected": float(states.count(JobState.REJECTED)),
    }
    _job_stats(m, measured, out)
    if interval is not None:
        out.update(_utilisation(m, result.platform, t0, t1))
        return out
    if np.any(ran):
        first = float(np.min(a["submit"]))
        last = float(np.max(a["end"][ran]))
        out["makespan"] = last - first
        out.update(_utilisation(m, result.platform, first, last))
        if result.platform.node_ssd is not None:
            out.update(ssd_usage(result, max(last - first, 1e-12)))
    else:
        out["makespan"] = 0.0
        out["node_utilization"] = float("nan")
        out["bb_utilization"] = float("nan")
    times = np.asarray(result.decision_times, dtype=float)
    audit = audit_times(result)
    if audit is not None:  # the decisions' own time; the audit's reported apart
        times = times - audit
        out["audit_time_total"] = float(audit.sum())
    out["decisions"] = float(times.size)
    if times.size:
        out["decision_time_mean"] = float(np.mean(times))
        out["decision_time_p50"] = _percentile(times, 50)
        out["decision_time_p95"] = _percentile(times, 95)
        out["decision_time_max"] = float(np.max(times))
    out.update(decision_quality(result))
    out["simulation_wall_time"] = result.wall_time
    return out


def _utilisation(m: dict[str, np.ndarray], platform, t0: float, t1: float) -> dict[str, float]:
    """Node and BB utilisation: resource-seconds held inside ``[t0, t1]`` over capacity x its
    length."""
    held = np.clip(np.minimum(m["end"], t1) - np.maximum(m["start"], t0), 0.0, None)
    span = max(t1 - t0, 1e-12)
    return {
        "node_utilization": float(np.sum(m["nodes"] * held)) / (platform.nodes * span),
        "bb_utilization": (float(np.sum(m["bb"] * held)) / (platform.bb * span)
                           if platform.bb > 0 else float("nan")),
    }


def ssd_usage(result: SimulationResult, span: float) -> dict[str, float]:
    """Local-SSD utilisation and waste over ``span`` seconds (Fan et al., BBSched, Section 5):
    requested SSD bytes x nodes x execution time, and the bytes of the allocated nodes' SSDs
    left unused by their job, each over the platform's total SSD x span. Jobs without a node
    allocation count as requested (no waste known)."""
    node_ssd = np.asarray(result.platform.node_ssd, dtype=float)
    total = float(node_ssd.sum()) * span
    used = wasted = 0.0
    for job, alloc, state, t0, t1 in zip(result.jobs, result.allocation, result.state,
                                         result.start, result.end, strict=True):
        if state not in (JobState.FINISHED, JobState.KILLED):
            continue
        held = t1 - t0
        used += job.ssd * job.nodes * held
        if alloc:
            wasted += (float(node_ssd[list(alloc)].sum()) - job.ssd * len(alloc)) * held
    if total <= 0:
        return {"ssd_utilization": float("nan"), "ssd_waste": float("nan")}
    return {"ssd_utilization": used / total, "ssd_waste": wasted / total}


def _job_stats(m: dict[str, np.ndarray], keep: np.ndarray, out: dict[str, float]) -> None:
    for name in ("wait", "turnaround", "slowdown", "bounded_slowdown", "stretch"):
        values = m[name][keep]
        values = values[~np.isnan(values)]
        for stat, fn in (("mean", np.mean), ("median", _median),
                         ("p95", lambda v: _percentile(v, 95)), ("max", np.max)):
            out[f"{stat}_{name}"] = float(fn(values)) if values.size else float("nan")


def _median(values: np.ndarray) -> float:
    """``np.median`` of NaN-free ``values`` (the same partition points, the last included, and
    mean of the middle one or two: equal values such as 0.0 and -0.0 land where numpy's put
    them), without its NaN check, which imports ``numpy.ma`` (about 10 ms)."""
    n = values.size
    if n == 0:
        return float("nan")
    half = n // 2
    middle = slice(half, half + 1) if n % 2 else slice(half - 1, half + 1)
    kth = [half - 1, half, -1] if n % 2 == 0 else [half, -1]
    return float(np.mean(np.partition(values, kth)[middle]))


def _percentile(values: np.ndarray, q: float) -> float:
    """``np.percentile(values, q)`` (linear method) of NaN-free, non-empty ``values``: the same
    index, weight and interpolation, in the same float operations, on the same partition
    points (the first and last included, sorted as ``np.unique`` sorts them, so that equal
    values such as 0.0 and -0.0 land where numpy's put them), without the ``np.unique``, which
    imports ``numpy.ma``."""
    n = values.size
    virtual = (n - 1) * (q / 100)
    if virtual >= n - 1:  # (numpy's index -1, and its weight from it)
        lo = hi = n - 1
        gamma = virtual + 1
        kth = [-1, 0]
    else:
        lo = math.floor(virtual)
        hi = lo + 1
        gamma = virtual - lo
        kth = sorted({0, -1, lo, hi})
    part = np.partition(values, kth)
    a, b = float(part[lo]), float(part[hi])
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def audit_times(result: SimulationResult) -> np.ndarray | None:
    """Per decision, the seconds an audit spent solving it again exactly (``None`` when no
    decision was audited).

    The engine times the whole ``decide`` call; an audited policy's ``SolveStats.wall_time``
    stops before its audit (``bbopt.policies.plan``), so the rest of the call is the audit's.
    Decision-time metrics subtract it: they describe what a caller of the policy waits for
    without an audit, and ``audit_time_total`` reports the audit's own cost.
    """
    stats = result.decision_stats
    if len(stats) != len(result.decision_times) or not any(map(_audited, stats)):
        return None
    whole = np.asarray(result.decision_times, dtype=float)
    own = np.asarray([s.wall_time if s.audited else w for s, w in zip(stats, whole,
                                                                       strict=True)])
    return np.clip(whole - own, 0.0, None)


def decision_quality(result: SimulationResult) -> dict[str, float]:
    """How the run's decisions were reached: counts by status, and the gaps of audited ones.

    ``decision_gap_*`` and ``decisions_optimal_share`` summarise ``SolveStats.gap`` over the
    decisions an exact backend audited (``SolveStats.audited``, e.g. a plan policy with
    ``audit="exhaustive"``): 0 means the heuristic's answer was optimal. A backend's own gap
    (annealing searching a queue of <= 5 jobs exhaustively, CP-SAT's bound) is not an audit and
    is not counted: a run without an audit has no such rows.
    """
    from bbopt.core import Status

    stats = result.decision_stats
    # (the statuses and audit flags read in C: a replay has tens of thousands of decisions)
    out: dict[str, float] = {
        "decisions_fallback": float(sum(map(is_, map(_status, stats), repeat(Status.FALLBACK)))),
    }
    audited = compress(stats, map(_audited, stats))
    gaps = np.asarray([s.gap for s in audited if s.gap is not None], dtype=float)
    out["decisions_audited"] = float(gaps.size)
    if gaps.size:
        out["decision_gap_mean"] = float(np.mean(gaps))
        out["decision_gap_p95"] = float(np.percentile(gaps, 95))
        out["decision_gap_max"] = float(np.max(gaps))
        out["decisions_optimal_share"] = float(np.mean(gaps <= 1e-9))
    return out


_status = attrgetter("status")
_audited = attrgetter("audited")

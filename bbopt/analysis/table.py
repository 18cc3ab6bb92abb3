"""The comparison table of ``bbopt simulate`` and ``bbopt compare``: which run metrics it shows,
how they are labelled, scaled and formatted, including those a run adds when it has entitlements
(Zvi & Oren, OMFS: :func:`fairshare_metrics`) or runs under exclusive I/O (Jeannot, Pallez &
Vidal, Section 6) or I/O contention (Herbein et al., Section 5).

A run's metrics are gathered by :func:`bbopt.runs.measure`; :func:`metrics_table` lays out
several runs side by side (a row no run has is left out); :func:`rejections` lists the jobs that
could never run, grouped by reason.
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Rows of the comparison table: (metric key, label, scale, format).
TABLE_ROWS = (
    ("mean_wait", "mean wait [h]", 1 / 3600, "{:.2f}"),
    ("median_wait", "median wait [h]", 1 / 3600, "{:.2f}"),
    ("p95_wait", "p95 wait [h]", 1 / 3600, "{:.2f}"),
    ("mean_turnaround", "mean turnaround [h]", 1 / 3600, "{:.2f}"),
    ("mean_slowdown", "mean slowdown", 1, "{:.2f}"),
    ("mean_bounded_slowdown", "mean bounded slowdown", 1, "{:.2f}"),
    ("max_bounded_slowdown", "max bounded slowdown", 1, "{:.1f}"),
    ("node_utilization", "node utilisation [%]", 100, "{:.1f}"),
    ("bb_utilization", "BB utilisation [%]", 100, "{:.1f}"),
    # exclusive I/O (Jeannot et al.): work not lost waiting for the I/O node, time-alone stretch
    ("xio_utilisation", "useful utilisation [%]", 100, "{:.1f}"),
    ("xio_utilisation_steady", "  steady state [%]", 100, "{:.1f}"),
    ("xio_utilisation_tail", "  tail [%]", 100, "{:.1f}"),
    ("xio_idle_ratio", "idle ratio [%]", 100, "{:.1f}"),
    ("xio_max_stretch", "max stretch (eq. 1)", 1, "{:.3f}"),
    ("xio_mean_stretch", "mean stretch (eq. 1)", 1, "{:.3f}"),
    # I/O contention (Herbein et al.): node-time computing, per-job compute share, interference
    ("system_efficiency", "system efficiency [%]", 100, "{:.1f}"),
    ("compute_share_min", "min compute share [%]", 100, "{:.1f}"),
    ("interfered_node_time_share", "interfered node-time [%]", 100, "{:.1f}"),
    ("makespan", "makespan [d]", 1 / 86400, "{:.2f}"),
    ("finished", "finished", 1, "{:.0f}"),
    ("killed", "killed at walltime", 1, "{:.0f}"),
    ("rejected", "rejected", 1, "{:.0f}"),
    # fair-share runs (a ``shares`` option): bbopt.analysis.fairshare_metrics
    ("dropped", "dropped (preempted)", 1, "{:.0f}"),
    ("entitlement_p50", "entitlement wait p50 [min]", 1 / 60, "{:.1f}"),
    ("entitlement_p95", "entitlement wait p95 [min]", 1 / 60, "{:.1f}"),
    ("entitlement_within_quantum", "... within a quantum [%]", 100, "{:.1f}"),
    ("share_shortfall_max", "max share shortfall [%]", 100, "{:.1f}"),
    ("useful_utilization", "useful node utilisation [%]", 100, "{:.1f}"),
    ("checkpoints", "checkpoints", 1, "{:.0f}"),
    ("kills", "preemption kills", 1, "{:.0f}"),
    ("cr_node_hours", "C/R node-hours", 1, "{:.1f}"),
    ("lost_node_hours", "lost node-hours", 1, "{:.1f}"),
    ("thrashing_jobs", "jobs evicted > 3 times", 1, "{:.0f}"),
    ("decisions_fallback", "decisions fallen back", 1, "{:.0f}"),
    ("decisions_audited", "decisions audited", 1, "{:.0f}"),
    ("decisions_optimal_share", "audited: optimal [%]", 100, "{:.1f}"),
    ("decision_gap_mean", "audited: mean gap [%]", 100, "{:.2f}"),
    ("decision_gap_p95", "audited: p95 gap [%]", 100, "{:.2f}"),
    ("decision_time_p50", "decision p50 [ms]", 1000, "{:.3f}"),
    ("decision_time_p95", "decision p95 [ms]", 1000, "{:.3f}"),
    ("audit_time_total", "audit time, apart [s]", 1, "{:.2f}"),
    ("simulation_wall_time", "simulation [s]", 1, "{:.2f}"),
)


def fairshare_metrics(result: Any, shares: Any, quantum: float = 1800.0) -> dict[str, float]:
    """Entitlement satisfaction and preemption costs of a run with ``shares``."""
    from bbopt.analysis.fairshare_metrics import fairshare_summary
    from bbopt.workloads.shares import parse_shares

    m = fairshare_summary(result, parse_shares(shares), quantum=float(quantum))
    sat = m["satisfaction"]
    out = {k: float(m[k]) for k in ("dropped", "share_shortfall_max", "checkpoints", "kills",
                                    "cr_node_hours", "lost_node_hours", "thrashing_jobs")}
    out.update(entitlement_p50=sat["p50"], entitlement_p95=sat["p95"],
               entitlement_within_quantum=sat["within_quantum"],
               useful_utilization=float(m["utilisation"]), cr_overhead=float(m["cr_overhead"]))
    return out


def render(metrics: dict[str, dict[str, float]], fmt: str, title: str) -> str:
    """Runs side by side as ``fmt``: ``table`` (:func:`metrics_table`), ``csv`` (one row per
    metric, one column per run) or ``json``."""
    if fmt == "table":
        return metrics_table(metrics, title)
    if fmt == "json":
        import json

        return json.dumps(metrics, indent=2)
    keys = list(dict.fromkeys(k for m in metrics.values() for k in m))
    lines = ["metric," + ",".join(metrics)]
    lines += [k + "," + ",".join(repr(metrics[p].get(k, math.nan)) for p in metrics)
              for k in keys]
    return "\n".join(lines)


def metrics_table(metrics: dict[str, dict[str, float]], title: str) -> str:
    """Runs side by side (``{run name: metrics}``), one row per :data:`TABLE_ROWS` entry that
    some run has."""
    names = list(metrics)
    label_w = max(len(r[1]) for r in TABLE_ROWS)
    col_w = max(10, *(len(n) for n in names))
    lines = [title, "", " " * label_w + "  " + "  ".join(n.rjust(col_w) for n in names)]
    for key, label, scale, fmt in TABLE_ROWS:
        values = [metrics[n].get(key) for n in names]
        if all(v is None or (isinstance(v, float) and math.isnan(v)) for v in values):
            continue  # e.g. gap rows when no policy was audited
        if key in ("decisions_audited", "decisions_fallback") and not any(values):
            continue
        cells = []
        for n in names:
            v = metrics[n].get(key, math.nan)
            cells.append(("-" if v is None or (isinstance(v, float) and math.isnan(v))
                          else fmt.format(v * scale)).rjust(col_w))
        lines.append(label.ljust(label_w) + "  " + "  ".join(cells))
    return "\n".join(lines)


def rejections(results: dict[str, Any], shown: int = 5) -> str:
    """Rejected jobs grouped by reason (reasons do not depend on the policy: the first run's
    are printed), and the starts refused on named BB nodes per policy."""
    lines = []
    first = next(iter(results.values()))
    by_reason: dict[str, list[str]] = {}
    for job_id, why in first.reasons.items():
        # One group per kind of reason: "requests 7.9e+11 B of burst buffer, platform has ..."
        # and "requests 5.4e+11 B ..." are both "requests more burst buffer, platform has ...".
        kind = re.sub(r"^requests [-+0-9.e]+ (B of )?", "requests more ", why)
        by_reason.setdefault(kind, []).append(job_id)
    if by_reason:
        lines.append(f"\nrejected: {len(first.reasons)} jobs that can never run on the "
                     "platform")
        for why, ids in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
            more = f", ... ({len(ids) - shown} more)" if len(ids) > shown else ""
            lines.append(f"  {len(ids):>5} x {why}: jobs {', '.join(ids[:shown])}{more}")
    refused = {p: r.refused_starts for p, r in results.items() if r.refused_starts}
    if refused:
        lines.append("starts refused on the named BB nodes (the job kept waiting): "
                     + ", ".join(f"{p} {n}" for p, n in refused.items()))
    return "".join(line + "\n" for line in lines)

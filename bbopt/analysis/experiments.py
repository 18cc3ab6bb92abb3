"""Trace splitting and normalised policy comparison with confidence intervals.

Kopanski & Rzadca (Euro-Par 2021, Section 4.2): "we split the workload into 16 three-week-long
parts. We compute the average for each part and each policy, and then normalise it by the
corresponding average from the sjf-bb policy", and report the per-part values with their
spread. :func:`split_trace` cuts a trace into ``N`` non-overlapping parts of equal duration (by
submit time; each part's submit times start again at 0), :func:`run_parts` simulates every
policy on every part, and :func:`compare_split` normalises each part's metric by the reference
policy's value on the same part and reports, per policy and metric, the mean of the normalised
values, its 95 % confidence interval (Student's t over the parts) and the per-part values.

A part whose reference value is 0 (e.g. nobody waited under the reference) cannot be normalised:
its ratio is NaN, left out of the mean and CI and counted in ``n_parts``/``n_valid``.
Results are pandas DataFrames (pandas is a dependency of this module).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from bbopt.analysis.workers import run_all
from bbopt.core import Job, Platform
from bbopt.errors import InputError
from bbopt.runs import RunSpec, run

DEFAULT_METRICS = ("mean_wait", "mean_bounded_slowdown")


def split_trace(jobs: Sequence[Job], n_parts: int, *, rebase: bool = True,
                length: float | None = None) -> list[list[Job]]:
    """``n_parts`` non-overlapping parts of equal duration, by submit time.

    The span from the first to the last submission is cut into equal intervals; a job belongs to
    the interval of its submit time (the last one is closed). With ``length`` (seconds), the parts
    are instead consecutive windows of that length from the first submission, and jobs after the
    last window are left out (Kopanski & Rzadca's 16 parts of exactly three weeks). With
    ``rebase``, each part's submit times are shifted so that its interval starts at 0. Parts may
    be empty.
    """
    if isinstance(n_parts, bool) or not isinstance(n_parts, int) or n_parts < 1:
        raise InputError(f"the number of parts must be a positive integer, got {n_parts!r}",
                         field="split")
    jobs = list(jobs)
    if not jobs:
        raise InputError("empty workload: nothing to split", field="jobs")
    submit = np.array([j.submit for j in jobs])
    t0, t1 = float(submit.min()), float(submit.max())
    fixed = length is not None
    if fixed and not length > 0:
        raise InputError(f"the part length must be positive, got {length!r}", field="length")
    if not fixed:
        length = (t1 - t0) / n_parts
    if length <= 0:
        index = np.zeros(len(jobs), dtype=int)
    elif fixed:
        index = ((submit - t0) // length).astype(int)
    else:
        index = np.minimum(((submit - t0) // length).astype(int), n_parts - 1)
    parts: list[list[Job]] = [[] for _ in range(n_parts)]
    for job, k in zip(jobs, index.tolist(), strict=True):
        if k >= n_parts:
            continue
        origin = t0 + k * length
        parts[k].append(replace(job, submit=job.submit - origin) if rebase else job)
    return parts


def run_parts(parts: Sequence[Sequence[Job]], platform: Platform, policies: Sequence[str], *,
              metrics: Sequence[str] = DEFAULT_METRICS,
              options: dict[str, dict[str, Any]] | None = None, tick: float | None = None,
              progress: Callable[[int, int], None] | None = None,
              workers: int | None = 1, base: RunSpec | None = None) -> pd.DataFrame:
    """Simulate every policy on every non-empty part: a long DataFrame with columns
    ``part, policy, metric, value`` (``options`` maps a policy name to its options).
    ``workers``: processes to run the parts on (``None``: every core); the table is the same.
    ``base``: what the runs share besides (execution model, budget mode, seed)."""
    base = base or RunSpec()
    todo = [(k, p) for k, part in enumerate(parts) if part for p in policies]
    specs = [(replace(base, workload=parts[k], platform=platform, policy=policy,
                      options=(options or {}).get(policy) or {}, tick=tick,
                      name=f"part{k}"),) for k, policy in todo]
    summaries = run_all(_part_summary, specs, workers, progress)
    rows = []
    for (k, policy), summary in zip(todo, summaries, strict=True):
        for m in metrics:
            if m not in summary:
                raise InputError(f"unknown metric {m!r}; known: {', '.join(summary)}",
                                 field="metrics")
            rows.append({"part": k, "policy": policy, "metric": m, "value": summary[m]})
    return pd.DataFrame(rows, columns=["part", "policy", "metric", "value"])


def _part_summary(spec: RunSpec) -> dict[str, float]:
    return run(spec).metrics


def normalise(raw: pd.DataFrame, reference: str) -> pd.DataFrame:
    """Add a ``normalised`` column: each value over the reference policy's on the same part
    and metric (NaN where the reference value is 0 or missing)."""
    if reference not in set(raw["policy"]):
        raise InputError(f"reference policy {reference!r} was not run", field="reference")
    ref = raw[raw["policy"] == reference].set_index(["part", "metric"])["value"]
    keys = pd.MultiIndex.from_frame(raw[["part", "metric"]])
    denominators = ref.reindex(keys).to_numpy(dtype=float)
    out = raw.copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = out["value"].to_numpy(dtype=float) / denominators
    ratio[~np.isfinite(ratio)] = np.nan
    out["normalised"] = ratio
    return out


def confidence_interval(values: Sequence[float], level: float = 0.95) -> tuple[float, float,
                                                                               float]:
    """Mean and Student-t confidence interval of ``values`` (NaNs ignored)."""
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        return (math.nan, math.nan, math.nan)
    mean = float(x.mean())
    if x.size == 1:
        return (mean, math.nan, math.nan)
    sem = float(x.std(ddof=1)) / math.sqrt(x.size)
    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1)) * sem
    return (mean, mean - half, mean + half)


def summarise(normalised: pd.DataFrame, *, level: float = 0.95,
              column: str = "normalised") -> pd.DataFrame:
    """Per metric and policy: mean, CI bounds, n_parts, n_valid and the per-part values
    (columns ``part0``..), in the order policies and metrics first appear."""
    rows = []
    parts = sorted(set(normalised["part"]))
    for metric in dict.fromkeys(normalised["metric"]):
        for policy in dict.fromkeys(normalised["policy"]):
            sel = normalised[(normalised["metric"] == metric) & (normalised["policy"] == policy)]
            by_part = dict(zip(sel["part"], sel[column], strict=True))
            values = [by_part.get(p, math.nan) for p in parts]
            mean, lo, hi = confidence_interval(values, level)
            row = {"metric": metric, "policy": policy, "mean": mean, "ci_low": lo,
                   "ci_high": hi, "n_parts": len(values),
                   "n_valid": int(np.sum(~np.isnan(np.asarray(values, dtype=float))))}
            row.update({f"part{p}": v for p, v in zip(parts, values, strict=True)})
            rows.append(row)
    return pd.DataFrame(rows)


def compare_split(jobs: Sequence[Job], platform: Platform, policies: Sequence[str], *,
                  n_parts: int = 16, reference: str = "sjf-bb",
                  metrics: Sequence[str] = DEFAULT_METRICS, level: float = 0.95,
                  options: dict[str, dict[str, Any]] | None = None, tick: float | None = None,
                  progress: Callable[[int, int], None] | None = None,
                  workers: int | None = 1, base: RunSpec | None = None) -> pd.DataFrame:
    """Kopanski's split comparison: the :func:`summarise` table of the normalised metrics.

    The reference policy is run even if it is not in ``policies`` (and listed first). The raw
    per-part values are in ``result.attrs["raw"]`` (a long DataFrame with ``value`` and
    ``normalised``). ``workers``: processes for the runs (``None``: every core).
    """
    policies = list(dict.fromkeys([reference, *policies]))
    parts = split_trace(jobs, n_parts)
    raw = normalise(run_parts(parts, platform, policies, metrics=metrics, options=options,
                              tick=tick, progress=progress, workers=workers, base=base),
                   reference)
    table = summarise(raw, level=level)
    table.attrs["raw"] = raw
    table.attrs["reference"] = reference
    table.attrs["part_sizes"] = [len(p) for p in parts]
    return table


def format_split(table: pd.DataFrame, fmt: str, title: str = "") -> str:
    """A split comparison as ``fmt``: ``table`` (:func:`format_table`), ``csv`` or ``json``."""
    if fmt == "table":
        return format_table(table, title) + "\n"
    if fmt == "csv":
        return table.to_csv(index=False)
    return table.to_json(orient="records", indent=2) + "\n"


def format_table(table: pd.DataFrame, title: str = "") -> str:
    """A plain-text rendering of a :func:`compare_split` table for the CLI."""
    part_cols = [c for c in table.columns if c.startswith("part")]
    lines = [title] if title else []
    ref = table.attrs.get("reference")
    if ref:
        lines.append(f"each part's mean normalised by {ref}'s on the same part; "
                     f"{len(part_cols)} parts; 95% CI (Student t)")
    name_w = max(8, *(len(p) for p in table["policy"]))
    for metric in dict.fromkeys(table["metric"]):
        lines.append("")
        lines.append(f"{metric}")
        lines.append(f"{'policy'.ljust(name_w)}  {'mean':>8}  {'95% CI':>19}  per part")
        for _, row in table[table["metric"] == metric].iterrows():
            ci = ("-" if math.isnan(row["ci_low"])
                  else f"[{row['ci_low']:.3f}, {row['ci_high']:.3f}]")
            per = " ".join("-" if math.isnan(row[c]) else f"{row[c]:.2f}" for c in part_cols)
            mean = "-" if math.isnan(row["mean"]) else f"{row['mean']:.3f}"
            lines.append(f"{row['policy'].ljust(name_w)}  {mean:>8}  {ci:>19}  {per}")
    return "\n".join(lines)

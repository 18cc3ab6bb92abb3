"""How a decision's optimality gap shows in the schedule: audited runs of a sweep store.

A policy with an audit (``plan-2`` with ``audit="exhaustive"``, Kopanski & Rzadca's plan
model; ``omfs-opt``) solves every decision again exactly and records the relative gap of the
answer it applied (:func:`bbopt.analysis.metrics.summarize`: ``decision_gap_mean``). Each run
is compared with the run of the same workload part and seed whose decisions had the smallest
mean gap (the reference, usually an exact policy): the ratios of mean wait and mean bounded
slowdown to the reference's, against the mean decision gap. Spearman's rank correlation over all
non-reference runs says whether larger gaps go with longer waits. ``benchmarks/quality/
audit.yaml`` is such a sweep.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.errors import InputError

OUTCOMES = ("mean_wait", "mean_bounded_slowdown")


def outcome_rows(sweep: str | Path) -> list[dict[str, Any]]:
    """Per audited run: its label, mean decision gap and outcome ratios to the reference run
    of its (workload, part, platform, seed)."""
    from bbopt.analysis.store import collect

    frame = collect(sweep, include_timing=False)
    if not frame.empty and "decision_gap_mean" in frame:
        frame = frame[frame["decision_gap_mean"].notna()]
    if frame.empty or "decision_gap_mean" not in frame:
        raise InputError("holds no audited runs (a policy with an audit, e.g. plan-2 with "
                         "audit=exhaustive)", source=str(sweep))
    keys = [k for k in ("workload", "part", "platform", "seed") if k in frame]
    rows = []
    for _, group in frame.groupby(keys, dropna=False):
        ref = group.loc[group["decision_gap_mean"].idxmin()]
        for _, r in group.iterrows():
            if r.name == ref.name:
                continue
            row = {"policy": r["policy"], "gap_mean": float(r["decision_gap_mean"]),
                   "reference": ref["policy"], **{k: r[k] for k in keys}}
            for m in OUTCOMES:
                row[f"{m}_ratio"] = (float(r[m]) / float(ref[m]) if float(ref[m]) > 0
                                     else math.nan)
            rows.append(row)
    return rows


def spearman(rows: list[dict[str, Any]], metric: str) -> float:
    """Spearman's rank correlation of the mean decision gap with ``metric``'s ratio."""
    from scipy.stats import spearmanr

    x = [r["gap_mean"] for r in rows]
    y = [r[f"{metric}_ratio"] for r in rows]
    if len(x) < 3 or len(set(x)) < 2 or len(set(y)) < 2:
        return math.nan
    return float(spearmanr(x, y).statistic)


def outcomes_figure(rows: list[dict[str, Any]], path: Path | None):
    """The outcome ratios against the mean decision gap, one panel per outcome."""
    from bbopt.analysis.figures import _done, _plt

    plt = _plt()
    fig, axes = plt.subplots(1, len(OUTCOMES), figsize=(9.0, 3.6), squeeze=False)
    labels = sorted({r["policy"] for r in rows})
    for ax, metric in zip(axes[0], OUTCOMES, strict=True):
        for label in labels:
            mine = [r for r in rows if r["policy"] == label]
            ax.scatter([max(r["gap_mean"], 1e-9) for r in mine],
                       [r[f"{metric}_ratio"] for r in mine], label=label, s=18)
        ax.axhline(1.0, color="grey", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlabel("mean relative gap of the run's decisions")
        ax.set_ylabel(f"{metric} / reference's")
        ax.set_title(f"{metric} (Spearman {spearman(rows, metric):+.2f})", fontsize=9)
        ax.legend(fontsize=7)
    fig.suptitle("Decision gaps and schedule outcomes (audited runs; gaps of 0 drawn at 1e-9)",
                 fontsize=10)
    return _done(fig, path)


def outcomes_markdown(rows: list[dict[str, Any]]) -> str:
    labels = sorted({r["policy"] for r in rows})
    out = ["| policy | runs | mean decision gap | mean wait ratio | bounded slowdown ratio |",
           "|---|---|---|---|---|"]
    for label in labels:
        mine = [r for r in rows if r["policy"] == label]
        out.append(f"| {label} | {len(mine)} | "
                   f"{np.mean([r['gap_mean'] for r in mine]):.2e} | "
                   f"{np.nanmean([r['mean_wait_ratio'] for r in mine]):.3f} | "
                   f"{np.nanmean([r['mean_bounded_slowdown_ratio'] for r in mine]):.3f} |")
    out += ["", "Spearman's rank correlation of the mean decision gap with the ratio: "
            + ", ".join(f"{m} {spearman(rows, m):+.2f}" for m in OUTCOMES)
            + f" ({len(rows)} runs against the least-gap run of the same part and seed)."]
    return "\n".join(out)

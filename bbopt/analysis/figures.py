"""The figures researchers expect of a batch-scheduling study, as matplotlib ``Figure`` objects.

Length: one function per figure, each short; they share the style of :mod:`bbopt.analysis.plots`
(units, titles, intervals), and splitting them would only scatter that one style.

Every function returns a :class:`matplotlib.figure.Figure` and writes a file only when given
``path`` (format by suffix). They read :func:`~bbopt.analysis.frames.to_pandas` frames,
``jobs.csv`` frames or :class:`~bbopt.simulation.SimulationResult` objects alike. Units are
those a reader expects (hours, GB, %), intervals stay in the metric's domain, ``n`` is shown.

- :func:`comparison_plot` -- ``bbopt compare --plot``: each metric in its own panel, one dot
  per policy with its 95 % bootstrap interval over the jobs, and the tail of the waits
  (Kopanski & Rzadca, Section 4.2, where starvation shows);
- :func:`forest_plot` -- normalised metrics per policy (Kopanski & Rzadca, Section 4.2): per-unit
  ratios as dots, the mean with its bootstrap 95 % interval, and the geometric mean with the
  log-ratio interval (per-part ratios are skewed); ``n`` beside each policy;
- :func:`wait_ecdf` -- the distribution of waiting times per policy (log time axis, hours);
- :func:`utilisation_plot` -- node and BB utilisation and queue length over time, one row of
  panels per run (small multiples, shared axes), from :func:`~bbopt.analysis.frames.timeline`;
- :func:`gantt` -- one patch per started job on the node axis (its allocation, contiguous
  ranges as sub-rectangles of one path), coloured by BB request in GB; drawn as a single
  ``PathCollection``; beyond ``max_jobs`` jobs only the first ``max_jobs`` started are drawn
  (a window of the run, named in the title), since thousands of jobs make a texture;
- :func:`pareto_plot` -- the Pareto set of a window decision (``Decision.alternatives``, Fan et
  al., BBSched, Section 3) in units, on axes from zero, with the chosen point marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bbopt.analysis.frames import outcomes, timeline
from bbopt.analysis.plots import (
    GB,
    HOUR,
    MIN_N,
    axis_label,
    log_ticks,
    mean_interval,
    metric_label,
    pyplot,
)
from bbopt.errors import InputError

DAY = 86400.0
#: A Gantt chart draws at most this many jobs (the first started); more become a texture.
MAX_GANTT_JOBS = 3000


def _plt():
    return pyplot()


def _done(fig, path: str | Path | None, dpi: int = 150):
    fig.tight_layout()
    if path is not None:
        fig.savefig(Path(path), dpi=dpi)
    return fig


def _n_label(name: str, n: int, what: str = "") -> str:
    what = f" {what}" if what else ""
    return (f"{name}  (n={n:,}{what})" if n >= MIN_N
            else f"{name}  (n={n}{what} < {MIN_N}: no interval)")


def comparison_plot(results: Mapping[str, Any], path: str | Path | None = None, *,
                    title: str = "", metrics: Sequence[str] = ("mean_wait",
                                                               "mean_bounded_slowdown")):
    """``bbopt compare --plot``: one panel per metric with one dot per policy and its 95 %
    bootstrap interval over the jobs (``n`` jobs beside each name), and a panel of the longest
    waits per policy. A metric spread over more than a factor 20 is drawn on a log axis."""
    plt = _plt()
    names = list(results)
    frames = {n: outcomes(r) for n, r in results.items()}
    fig, axes = plt.subplots(1, len(metrics) + 1, figsize=(3.6 * (len(metrics) + 1),
                                                           1.2 + 0.38 * len(names)),
                             gridspec_kw={"width_ratios": [1] * len(metrics) + [1.2]})
    column = {"mean_wait": "wait", "mean_bounded_slowdown": "bounded_slowdown",
              "mean_turnaround": "turnaround", "mean_slowdown": "slowdown",
              "mean_stretch": "stretch"}
    y = np.arange(len(names))
    for ax, metric in zip(axes[:-1], metrics, strict=True):
        _, _, factor = metric_label(metric)
        col = column.get(metric, metric)
        stats = []
        for n in names:
            values = frames[n][col].dropna().to_numpy(float) * factor
            stats.append((*mean_interval(values, n_boot=500), values.size))
        mean = np.array([s[0] for s in stats])
        lo = np.array([s[1] for s in stats])
        hi = np.array([s[2] for s in stats])
        err = np.vstack([mean - np.where(np.isfinite(lo), lo, mean),
                         np.where(np.isfinite(hi), hi, mean) - mean])
        ax.errorbar(mean, y, xerr=err, fmt="o", color="tab:blue", ms=5, capsize=3)
        positive = mean[mean > 0]
        if positive.size and positive.max() > 20 * positive.min():
            ax.set_xscale("log")
            log_ticks(ax.xaxis)
        ax.set_xlabel(axis_label(metric))
        ax.set_yticks(y, [_n_label(n, s[3], "jobs") for n, s in zip(names, stats, strict=True)]
                      if ax is axes[0] else [""] * len(names))
        ax.set_ylim(len(names) - 0.5, -0.5)
        ax.grid(axis="y", alpha=0)
    tail = axes[-1]
    for n in names:
        waits = np.sort(frames[n]["wait"].dropna().to_numpy(float))[::-1][:1000] / HOUR
        tail.plot(np.arange(1, waits.size + 1), waits, label=n, lw=1.2)
    tail.set_xscale("log")
    tail.set_yscale("log")
    log_ticks(tail.xaxis)
    log_ticks(tail.yaxis)
    tail.set_xlabel("rank of the job by its wait (1 = longest)")
    tail.set_ylabel("wait [h]")
    tail.set_title("the 1,000 longest waits")
    tail.legend(fontsize=7, frameon=False)
    axes[0].set_title("mean, 95 % bootstrap interval over jobs", loc="left", fontsize=8)
    if title:
        fig.suptitle(title)
    return _done(fig, path)


def forest_plot(table: pd.DataFrame, *, reference: str = "", path: str | Path | None = None,
                title: str = "", log: bool = True):
    """Forest plot of an :func:`~bbopt.analysis.intervals.interval_table` (one panel per
    metric, one row per policy with its number of units ``n``). The intervals are the
    bootstrap interval of the mean ratio and the log-ratio interval of the geometric mean: both
    stay above zero, as a ratio does; below ``n = 3`` only the points are drawn."""
    plt = _plt()
    metrics = list(dict.fromkeys(table["metric"]))
    policies = list(dict.fromkeys(table["policy"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics),
                                                       1.2 + 0.42 * len(policies)),
                             squeeze=False, sharey=True)
    rng = np.random.default_rng(0)
    counts = table.groupby("policy", sort=False)["n"].min().to_dict()
    for ax, metric in zip(axes[0], metrics, strict=True):
        sel = table[table["metric"] == metric].set_index("policy")
        for y, pol in enumerate(policies):
            if pol not in sel.index:
                continue
            row = sel.loc[pol]
            vals = np.asarray(row["values"], dtype=float)
            vals = vals[np.isfinite(vals) & ((vals > 0) | (not log))]
            ax.scatter(vals, y + rng.uniform(-0.12, 0.12, vals.size), s=9, color="0.6",
                       alpha=0.7, zorder=2, label="per unit" if y == 0 else None)
            enough = row["n"] >= MIN_N
            for centre, lo, hi, dy, style, label in (
                    (row["mean"], row["boot_low"], row["boot_high"], 0.22, ("s", "tab:blue"),
                     "mean, 95 % bootstrap interval"),
                    (row["gmean"], row["log_ci_low"], row["log_ci_high"], -0.22,
                     ("D", "tab:red"), "geometric mean, 95 % log-ratio interval")):
                if not np.isfinite(centre):
                    continue
                err = (np.array([[centre - lo], [hi - centre]])
                       if enough and np.isfinite(lo) else None)
                ax.errorbar(centre, y + dy, xerr=err, fmt=style[0], color=style[1], ms=5,
                            capsize=3, zorder=3, label=label if y == 0 else None)
        ax.axvline(1.0, color="k", lw=0.8, ls="--")
        if log:
            ax.set_xscale("log")
            _ratio_ticks(ax)
        ax.set_xlabel(axis_label(metric, reference or None))
        ax.grid(axis="y", alpha=0)
    axes[0][0].set_yticks(range(len(policies)),
                          [_n_label(p, int(counts.get(p, 0)), "units") for p in policies])
    axes[0][0].invert_yaxis()
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=3, frameon=False, fontsize=7,
               bbox_to_anchor=(0.5, 0.0))
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    if path is not None:
        fig.savefig(Path(path))
    return fig


#: Tick values of a ratio axis (log scale): the ones inside the limits are labelled.
RATIO_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5,
               2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)


def _ratio_ticks(ax) -> None:
    from matplotlib.ticker import NullFormatter

    lo, hi = ax.get_xlim()
    ticks = [t for t in RATIO_TICKS if lo <= t <= hi]
    if len(ticks) > 8:
        ticks = [t for t in ticks if t in (0.01, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0)]
    if len(ticks) < 2:  # a narrow axis: its ends too, to two significant digits, inside it
        ends = [float(f"{v:.2g}") for v in (lo * 1.02, hi / 1.02)]
        ticks = sorted({*ticks, *(v for v in ends if lo <= v <= hi)})
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(lo, hi)


def wait_ecdf(runs: Mapping[str, Any], *, path: str | Path | None = None, title: str = ""):
    """Empirical CDF of waiting times per policy, in hours on a log axis (waits under a minute,
    most of them 0, sit at the left edge); ``n`` jobs in the legend."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.2, 4.0))
    for label, obj in runs.items():
        frames = obj if isinstance(obj, list) else [obj]
        waits = np.concatenate([outcomes(f)["wait"].dropna().to_numpy(float) for f in frames])
        if waits.size == 0:
            continue
        w = np.sort(np.maximum(waits, 60.0)) / HOUR
        ax.step(w, np.arange(1, w.size + 1) / w.size, where="post",
                label=f"{label} (n={w.size:,} jobs)")
    ax.set_xscale("log")
    log_ticks(ax.xaxis, most=8)
    ax.set_xlabel("waiting time [h] (waits under 1 min shown at 1 min)")
    ax.set_ylabel("share of jobs")
    ax.set_ylim(0, 1)
    ax.legend(frameon=False)
    if title:
        ax.set_title(title)
    return _done(fig, path)


def utilisation_plot(runs: Mapping[str, Any], nodes: int, bb: float, *,
                     path: str | Path | None = None, title: str = ""):
    """Small multiples: one row per run, nodes and BB in use [%] on the left (BB only when the
    platform has a burst buffer), jobs waiting on the right; axes shared, one legend."""
    plt = _plt()
    n = max(1, len(runs))
    fig, axes = plt.subplots(n, 2, figsize=(10, 0.6 + 1.55 * n), sharex=True,
                             sharey="col", squeeze=False,
                             gridspec_kw={"width_ratios": [1.6, 1]})
    for (label, obj), (left, right) in zip(runs.items(), axes, strict=False):
        tl = timeline(obj)
        t = tl["time"].to_numpy(float) / DAY
        left.step(t, tl["nodes"] / nodes * 100, where="post", lw=0.7, color="tab:blue",
                  label="nodes in use")
        if bb > 0:
            left.step(t, tl["bb"] / bb * 100, where="post", lw=0.7, color="tab:orange",
                      label="BB in use")
        right.step(t, tl["queued"], where="post", lw=0.7, color="0.3")
        left.set_ylim(0, 105)
        left.set_ylabel(f"{label}\n[%]")
        right.set_ylabel("jobs waiting")
    for ax in axes[-1]:
        ax.set_xlabel("time [days]")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", ncol=2, frameon=False)
    if title:
        fig.suptitle(title, x=0.02, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.97 if n > 1 else 0.92))
    if path is not None:
        fig.savefig(Path(path))
    return fig


def _ranges(alloc: str) -> list[tuple[int, int]]:
    """``"0-3 7"`` -> ``[(0, 4), (7, 8)]`` (half-open node ranges)."""
    out = []
    for tok in str(alloc).split():
        a, _, b = tok.partition("-")
        out.append((int(a), int(b or a) + 1))
    return out


def _first_fit(f: pd.DataFrame, nodes: int) -> list[list[tuple[int, int]]]:
    """Node ranges for jobs without an allocation: the lowest free nodes at their start
    (ends before starts at one instant)."""
    import heapq

    free = np.ones(nodes, dtype=bool)
    order = np.argsort(f["start"].to_numpy(float), kind="stable")
    ends: list[tuple[float, int, np.ndarray]] = []
    out: list[list[tuple[int, int]]] = [[] for _ in range(len(f))]
    start, end, width = (f["start"].to_numpy(float), f["end"].to_numpy(float),
                         f["nodes"].to_numpy(int))
    for k in order:
        while ends and ends[0][0] <= start[k]:
            _, _, held = heapq.heappop(ends)
            free[held] = True
        idx = np.flatnonzero(free)[:width[k]]
        if idx.size < width[k]:  # more than free (should not happen): stack on top
            idx = np.arange(width[k]) % nodes
        free[idx] = False
        heapq.heappush(ends, (end[k], int(k), idx))
        breaks = np.flatnonzero(np.diff(idx) != 1)
        lo = np.r_[idx[0], idx[breaks + 1]]
        hi = np.r_[idx[breaks], idx[-1]] + 1
        out[k] = list(zip(lo.tolist(), hi.tolist(), strict=True))
    return out


def gantt(obj: Any, nodes: int | None = None, *, path: str | Path | None = None,
          title: str = "", ax=None, max_jobs: int | None = MAX_GANTT_JOBS):
    """Gantt chart of a run: one path per started job (its node ranges), coloured by its BB
    request in GB on a log scale; jobs without BB are light grey (named in the legend).

    Runs with more than ``max_jobs`` started jobs are drawn from their first ``max_jobs``
    starts (the title says which share of the run and which days); ``None`` draws them all."""
    plt = _plt()
    from matplotlib.collections import PathCollection
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Patch
    from matplotlib.path import Path as MPath

    f = outcomes(obj)
    f = f[f["start"].notna()].reset_index(drop=True)
    total = len(f)
    nodes = int(nodes or f.attrs.get("platform_nodes") or max(1, int(f["nodes"].max())))
    allocs = [_ranges(a) for a in f["allocation"].fillna("")]
    if any(not a for a in allocs):
        fitted = _first_fit(f, nodes)
        allocs = [a or b for a, b in zip(allocs, fitted, strict=True)]
    window = ""
    if max_jobs is not None and total > max_jobs:
        keep = np.sort(np.argsort(f["start"].to_numpy(float), kind="stable")[:max_jobs])
        f = f.iloc[keep].reset_index(drop=True)
        allocs = [allocs[k] for k in keep]
        window = (f"the first {max_jobs:,} of {total:,} started jobs, days "
                  f"{f['start'].min() / DAY:.0f}-{f['start'].max() / DAY:.0f}")
    start = f["start"].to_numpy(float) / DAY
    end = f["end"].to_numpy(float) / DAY
    codes_one = [MPath.MOVETO, MPath.LINETO, MPath.LINETO, MPath.LINETO, MPath.CLOSEPOLY]
    paths = []
    for s, e, ranges in zip(start, end, allocs, strict=True):
        verts = []
        codes = []
        for lo, hi in ranges:
            verts += [(s, lo), (e, lo), (e, hi), (s, hi), (s, lo)]
            codes += codes_one
        paths.append(MPath(verts, codes))
    bb = f["bb"].to_numpy(float) / GB
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(10, 4.5))
    else:
        fig = ax.figure
    coll = PathCollection(paths, linewidths=0.2 if len(f) < 500 else 0.0, edgecolors="white")
    has_bb = bb > 0
    if has_bb.any():
        norm = LogNorm(vmin=bb[has_bb].min(), vmax=max(bb.max(), bb[has_bb].min() * 2))
        colors = plt.get_cmap("viridis")(norm(np.where(has_bb, bb, norm.vmin)))
        colors[~has_bb] = (0.82, 0.82, 0.82, 1.0)
        coll.set_facecolors(colors)
        sm = plt.cm.ScalarMappable(norm=norm, cmap="viridis")
        fig.colorbar(sm, ax=ax, label="BB request [GB]", pad=0.01)
        if not has_bb.all():
            ax.legend(handles=[Patch(color=(0.82, 0.82, 0.82), label="no BB request")],
                      loc="upper right", fontsize=7, framealpha=0.9)
    else:
        coll.set_facecolor((0.6, 0.7, 0.9, 1.0))
    ax.add_collection(coll)
    if len(f):
        ax.set_xlim(float(start.min()), float(end.max()))
    ax.set_ylim(0, nodes)
    ax.set_xlabel("time [days]")
    ax.set_ylabel("node")
    ax.grid(False)
    full = ": ".join(t for t in (title, window) if t)
    if full:
        ax.set_title(full)
    return _done(fig, path) if own else fig


#: Objective name of a window decision -> (axis label, factor from bbopt's value).
_OBJECTIVE_AXES = {"nodes": ("nodes started", 1.0), "bb": ("BB started [GB]", 1 / GB),
                   "ssd": ("local SSD used [GB]", 1 / GB),
                   "ssd_waste": ("local SSD wasted [GB] (negated)", 1 / GB),
                   "bandwidth": ("PFS bandwidth started [GB/s]", 1 / GB),
                   "order": ("queue-order score", 1.0)}


def pareto_plot(decision: Any, *, x: str | None = None, y: str | None = None,
                path: str | Path | None = None, title: str = ""):
    """The alternatives of a window decision in the plane of two objectives, in their units
    (nodes, GB) on axes that start at zero, so that a 1 % difference looks like 1 %; the chosen
    one is marked (a star) and labelled with its utilisation of the free resources."""
    plt = _plt()
    alts = list(getattr(decision, "alternatives", decision))
    if not alts:
        raise InputError("the decision carries no alternatives (use a window policy with "
                         "the Pareto method, e.g. bbsched)", field="alternatives")
    names = list(alts[0]["objectives"])
    x = x or names[0]
    y = y or (names[1] if len(names) > 1 else names[0])
    (xl, xf), (yl, yf) = (_OBJECTIVE_AXES.get(k, (k, 1.0)) for k in (x, y))
    xs = np.array([a["objectives"][x] for a in alts], dtype=float) * xf
    ys = np.array([a["objectives"][y] for a in alts], dtype=float) * yf
    chosen = np.array([bool(a.get("chosen")) for a in alts])
    fig, ax = plt.subplots(figsize=(5.2, 4.2))
    order = np.argsort(xs)
    ax.plot(xs[order], ys[order], color="0.6", lw=0.8, zorder=1)
    ax.scatter(xs[~chosen], ys[~chosen], s=26, color="tab:blue", zorder=2,
               label=f"Pareto set ({len(alts)} selections)")
    ax.scatter(xs[chosen], ys[chosen], s=170, marker="*", color="tab:red", zorder=3,
               label="chosen by the decision maker")
    for a, cx, cy in zip(alts, xs, ys, strict=True):
        util = a.get("utilization") or {}
        if a.get("chosen") and util:
            text = ", ".join(f"{k} {100 * v:.1f} %" for k, v in util.items())
            ax.annotate(text, (cx, cy), xytext=(-8, -14), textcoords="offset points",
                        ha="right", fontsize=7)
    ax.set_xlim(0, max(xs.max(), 1e-12) * 1.08)
    ax.set_ylim(0, max(ys.max(), 1e-12) * 1.08)
    ax.set_xlabel(xl)
    ax.set_ylabel(yl)
    ax.legend(loc="lower left", frameon=False)
    if title:
        ax.set_title(title)
    return _done(fig, path)


def close(figs: Sequence[Any] | Any) -> None:
    """Close figures (free their memory)."""
    plt = _plt()
    for f in figs if isinstance(figs, (list, tuple)) else [figs]:
        plt.close(f)

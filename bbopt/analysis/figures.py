"""The figures researchers expect of a batch-scheduling study, as matplotlib ``Figure`` objects.

Every function returns a :class:`matplotlib.figure.Figure` and writes a file only when given
``path`` (format by suffix). They read :func:`~bbopt.analysis.frames.to_pandas` frames,
``jobs.csv`` frames or :class:`~bbopt.simulation.SimulationResult` objects alike.

- :func:`forest_plot` -- normalised metrics per policy (Kopanski & Rzadca, Section 4.2): per-unit
  ratios as dots, the mean with its Student-t 95 % interval, and the geometric mean with the
  log-ratio interval (per-part ratios are skewed);
- :func:`wait_ecdf` -- the distribution of waiting times per policy (log time axis);
- :func:`utilisation_plot` -- node and BB utilisation and queue length over time, from
  :func:`~bbopt.analysis.frames.timeline` (ends before starts at one instant);
- :func:`gantt` -- one patch per started job on the node axis (its allocation, contiguous
  ranges as sub-rectangles of one path), coloured by BB request; drawn as a single
  ``PathCollection`` so 28 k jobs take about a second;
- :func:`pareto_plot` -- the Pareto set of a window decision (``Decision.alternatives``, Fan et
  al., BBSched, Section 3) with the chosen point marked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bbopt.analysis.frames import outcomes, timeline
from bbopt.errors import InputError

DAY = 86400.0


def _plt():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("plotting needs matplotlib: pip install 'bbopt[plot]'") from None
    return plt


def _done(fig, path: str | Path | None, dpi: int = 110):
    fig.tight_layout()
    if path is not None:
        fig.savefig(Path(path), dpi=dpi)
    return fig


def forest_plot(table: pd.DataFrame, *, reference: str = "", path: str | Path | None = None,
                title: str = "", log: bool = True):
    """Forest plot of an :func:`~bbopt.analysis.intervals.interval_table` (one panel per
    metric, one row per policy)."""
    plt = _plt()
    metrics = list(dict.fromkeys(table["metric"]))
    policies = list(dict.fromkeys(table["policy"]))
    fig, axes = plt.subplots(1, len(metrics), figsize=(5.2 * len(metrics),
                                                       1.0 + 0.5 * len(policies)),
                             squeeze=False, sharey=True)
    rng = np.random.default_rng(0)
    for ax, metric in zip(axes[0], metrics, strict=True):
        sel = table[table["metric"] == metric].set_index("policy")
        for y, pol in enumerate(policies):
            if pol not in sel.index:
                continue
            row = sel.loc[pol]
            vals = np.asarray(row["values"], dtype=float)
            vals = vals[np.isfinite(vals) & ((vals > 0) | (not log))]
            ax.scatter(vals, y + rng.uniform(-0.12, 0.12, vals.size), s=10, color="0.55",
                       alpha=0.7, zorder=2, label="per unit" if y == 0 else None)
            if np.isfinite(row["mean"]):
                lo, hi = row["ci_low"], row["ci_high"]
                err = (np.array([[row["mean"] - lo], [hi - row["mean"]]])
                       if np.isfinite(lo) else None)
                ax.errorbar(row["mean"], y + 0.22, xerr=err, fmt="s", color="tab:blue",
                            ms=5, capsize=3, zorder=3,
                            label="mean, 95% t-CI" if y == 0 else None)
            if np.isfinite(row["gmean"]):
                lo, hi = row["log_ci_low"], row["log_ci_high"]
                err = (np.array([[row["gmean"] - lo], [hi - row["gmean"]]])
                       if np.isfinite(lo) else None)
                ax.errorbar(row["gmean"], y - 0.22, xerr=err, fmt="D", color="tab:red",
                            ms=5, capsize=3, zorder=3,
                            label="geometric mean, 95% log-ratio CI" if y == 0 else None)
        ax.axvline(1.0, color="k", lw=0.8, ls="--")
        if log:
            ax.set_xscale("log")
            _ratio_ticks(ax)
        ax.set_xlabel(f"{metric} / {reference}" if reference else metric)
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(policies)), policies)
    axes[0][0].invert_yaxis()
    axes[0][-1].legend(fontsize=7, loc="best")
    if title:
        fig.suptitle(title)
    return _done(fig, path)


#: Tick values of a ratio axis (log scale): the ones inside the limits are labelled.
RATIO_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.5,
               2.0, 3.0, 5.0, 10.0, 20.0, 50.0, 100.0)


def _ratio_ticks(ax) -> None:
    from matplotlib.ticker import NullFormatter

    lo, hi = ax.get_xlim()
    ticks = [t for t in RATIO_TICKS if lo <= t <= hi]
    if len(ticks) > 8:
        ticks = [t for t in ticks if t in (0.01, 0.1, 0.5, 1.0, 2.0, 10.0, 100.0)]
    ax.set_xticks(ticks, [f"{t:g}" for t in ticks])
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlim(lo, hi)


def wait_ecdf(runs: Mapping[str, Any], *, path: str | Path | None = None, title: str = ""):
    """Empirical CDF of waiting times per policy (jobs that waited 0 s sit at the left edge)."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for label, obj in runs.items():
        frames = obj if isinstance(obj, list) else [obj]
        waits = np.concatenate([outcomes(f)["wait"].dropna().to_numpy(float) for f in frames])
        if waits.size == 0:
            continue
        w = np.sort(np.maximum(waits, 1.0))
        ax.step(w, np.arange(1, w.size + 1) / w.size, where="post", label=label)
    ax.set_xscale("log")
    ax.set_xlabel("waiting time [s] (0 shown at 1 s)")
    ax.set_ylabel("share of jobs")
    ax.set_ylim(0, 1)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return _done(fig, path)


def utilisation_plot(runs: Mapping[str, Any], nodes: int, bb: float, *,
                     path: str | Path | None = None, title: str = ""):
    """Node and BB utilisation and queue length over time, one line per run."""
    plt = _plt()
    fig, axes = plt.subplots(3, 1, figsize=(9, 7), sharex=True)
    for label, obj in runs.items():
        tl = timeline(obj)
        t = tl["time"].to_numpy(float) / DAY
        axes[0].step(t, tl["nodes"] / nodes * 100, where="post", lw=0.8, label=label)
        if bb > 0:
            axes[1].step(t, tl["bb"] / bb * 100, where="post", lw=0.8, label=label)
        axes[2].step(t, tl["queued"], where="post", lw=0.8, label=label)
    axes[0].set_ylabel("nodes in use [%]")
    axes[1].set_ylabel("BB in use [%]")
    axes[2].set_ylabel("jobs waiting")
    axes[2].set_xlabel("time [days]")
    for ax in axes[:2]:
        ax.set_ylim(0, 105)
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=min(4, len(runs)))
    if title:
        axes[0].set_title(title)
    return _done(fig, path)


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
          title: str = "", ax=None):
    """Gantt chart of a run: one path per started job (its node ranges), coloured by its BB
    request on a log scale (grey: no BB)."""
    plt = _plt()
    from matplotlib.collections import PathCollection
    from matplotlib.colors import LogNorm
    from matplotlib.path import Path as MPath

    f = outcomes(obj)
    f = f[f["start"].notna()].reset_index(drop=True)
    nodes = int(nodes or f.attrs.get("platform_nodes") or max(1, int(f["nodes"].max())))
    allocs = [_ranges(a) for a in f["allocation"].fillna("")]
    if any(not a for a in allocs):
        fitted = _first_fit(f, nodes)
        allocs = [a or b for a, b in zip(allocs, fitted, strict=True)]
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
    bb = f["bb"].to_numpy(float)
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(11, 5))
    else:
        fig = ax.figure
    coll = PathCollection(paths, linewidths=0.15, edgecolors="k")
    has_bb = bb > 0
    if has_bb.any():
        norm = LogNorm(vmin=max(bb[has_bb].min(), 1.0), vmax=max(bb.max(), 2.0))
        colors = plt.get_cmap("viridis")(norm(np.where(has_bb, bb, norm.vmin)))
        colors[~has_bb] = (0.8, 0.8, 0.8, 1.0)
        coll.set_facecolors(colors)
        sm = plt.cm.ScalarMappable(norm=norm, cmap="viridis")
        fig.colorbar(sm, ax=ax, label="BB request [bytes]")
    else:
        coll.set_facecolor((0.6, 0.7, 0.9, 1.0))
    ax.add_collection(coll)
    if len(f):
        ax.set_xlim(float(start.min()), float(end.max()))
    ax.set_ylim(0, nodes)
    ax.set_xlabel("time [days]")
    ax.set_ylabel("node")
    if title:
        ax.set_title(title)
    return _done(fig, path, dpi=130) if own else fig


def pareto_plot(decision: Any, *, x: str | None = None, y: str | None = None,
                path: str | Path | None = None, title: str = ""):
    """The alternatives of a window decision in the plane of two objectives; the chosen one
    is marked (a star)."""
    plt = _plt()
    alts = list(getattr(decision, "alternatives", decision))
    if not alts:
        raise InputError("the decision carries no alternatives (use a window policy with "
                         "the Pareto method, e.g. bbsched)", field="alternatives")
    names = list(alts[0]["objectives"])
    x = x or names[0]
    y = y or (names[1] if len(names) > 1 else names[0])
    xs = np.array([a["objectives"][x] for a in alts], dtype=float)
    ys = np.array([a["objectives"][y] for a in alts], dtype=float)
    chosen = np.array([bool(a.get("chosen")) for a in alts])
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    order = np.argsort(xs)
    ax.plot(xs[order], ys[order], color="0.6", lw=0.8, zorder=1)
    ax.scatter(xs[~chosen], ys[~chosen], s=28, color="tab:blue", zorder=2,
               label="Pareto set")
    ax.scatter(xs[chosen], ys[chosen], s=180, marker="*", color="tab:red", zorder=3,
               label="chosen")
    ax.set_xlabel(x)
    ax.set_ylabel(y)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title)
    return _done(fig, path)


def close(figs: Sequence[Any] | Any) -> None:
    """Close figures (free their memory)."""
    plt = _plt()
    for f in figs if isinstance(figs, (list, tuple)) else [figs]:
        plt.close(f)

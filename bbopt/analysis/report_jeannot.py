"""The part of ``bbopt report`` for a store of Jeannot, Pallez & Vidal's experiment (IJHPCA 2023,
"Evaluation and Results"; ``experiments/jeannot.yaml``): static batches of the paper's
generated applications under exclusive I/O, list against pack scheduling.

A run belongs to it when its workload is the ``jeannot`` generator and it has the ``xio_*``
metrics of :mod:`bbopt.simulation.pack_metrics`. Its family (M-BN, M-No, U-BN, U-No) and I/O
load alpha are read from the generator's parameters, its strategy is the policy's label. A
(family, alpha) cell counts only when every strategy of the store finished every seed there.

Written beside the report: ``jeannot.md`` (means over seeds per cell and strategy, and the
paper's Table 1 checked finding by finding) and the figures ``jeannot_fig4_5_utilisation``
(utilisation over time per alpha, one row of panels per family; Figures 4-5),
``jeannot_fig6_max_stretch`` and ``jeannot_fig7_mean_stretch`` (stretch against alpha; Figures
6-7), ``jeannot_fig8_usage`` (running applications, allocated nodes and planned bandwidth share
over normalised time on M-BN and M-No; Figure 8) and ``jeannot_fig9_stretch_idle`` (mean
stretch against idle ratio on M-BN; Figure 9). The usage curves are the ones each run kept
(:meth:`bbopt.simulation.exclusive_io.ExclusiveIO.curves`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.analysis.plots import pyplot
from bbopt.simulation.pack_metrics import USAGE_BINS, usage_trend

#: The family of a (protocol, I/O profile) of the generator.
FAMILIES = {("mira", "binormal"): "M-BN", ("mira", "normal"): "M-No",
            ("uniform", "binormal"): "U-BN", ("uniform", "normal"): "U-No"}
#: List strategies (policy labels), the strict-constraint reference first.
LISTS = ("io-list", "io-list-greedy")
#: The pack strategies (policy labels); the paper's own orders are :data:`PAPER_PACKS`.
PACKS = ("pack-random", "pack-max", "pack-char", "pack-char-desc", "pack-opt", "pack-opt-char")
PAPER_PACKS = ("pack-random", "pack-max", "pack-char")
COLORS = {"io-list": "k", "io-list-greedy": "tab:gray", "pack-random": "tab:blue",
          "pack-max": "tab:orange", "pack-char": "tab:green", "pack-char-desc": "tab:olive",
          "pack-opt": "tab:red", "pack-opt-char": "tab:purple"}
#: Means over seeds per (family, alpha, strategy).
METRICS = ("utilisation", "utilisation_steady", "utilisation_tail", "idle_ratio",
           "max_stretch", "mean_stretch", "makespan", "trend_nodes", "trend_io")
FIGURES = ("jeannot_fig4_5_utilisation", "jeannot_fig6_max_stretch",
           "jeannot_fig7_mean_stretch", "jeannot_fig8_usage", "jeannot_fig9_stretch_idle")

Curves = dict[tuple[str, float, int, str], dict[str, np.ndarray]]


def family(summary: Mapping[str, Any]) -> tuple[str, float] | None:
    """The (family, alpha) of a run of the paper's experiment, or ``None`` for another run."""
    gen = (summary.get("provenance") or {}).get("workload", {}).get("generator")
    if not isinstance(gen, Mapping) or gen.get("name") != "jeannot" \
            or "xio_utilisation" not in summary.get("metrics", {}):
        return None
    key = (gen.get("protocol", "mira"), gen.get("io_profile", "binormal"))
    if key not in FAMILIES or gen.get("alpha") is None:
        return None
    return FAMILIES[key], round(float(gen["alpha"]), 6)


def runs(summaries: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], Curves,
                                                           list[str]]:
    """The experiment's runs as rows (``family``, ``alpha``, ``seed``, ``strategy`` and the
    ``xio_*`` metrics without their prefix, plus the usage slopes), their usage curves, and the
    (family, alpha) cells left out because some strategy misses some seed there."""
    rows: list[dict[str, Any]] = []
    curves: Curves = {}
    for s in summaries:
        fa = family(s)
        if fa is None:
            continue
        f, a = fa
        seed, strategy = int(s["params"]["seed"]), str(s["params"]["policy"])
        row: dict[str, Any] = {"family": f, "alpha": a, "seed": seed, "strategy": strategy}
        row.update({k[4:]: float(v) for k, v in s["metrics"].items()
                    if k.startswith("xio_") and v is not None})
        u = {k: np.asarray(v, dtype=float) for k, v in (s.get("curves") or {}).items()}
        row["trend_nodes"] = usage_trend(u, "nodes") if u else math.nan
        row["trend_io"] = usage_trend(u, "io_planned") if u else math.nan
        rows.append(row)
        if u:
            curves[(f, a, seed, strategy)] = u
    seeds = {r["seed"] for r in rows}
    strategies = {r["strategy"] for r in rows}
    have: dict[tuple[str, float], set[tuple[int, str]]] = {}
    for r in rows:
        have.setdefault((r["family"], r["alpha"]), set()).add((r["seed"], r["strategy"]))
    partial = {c for c, got in have.items() if len(got) < len(seeds) * len(strategies)}
    rows = [r for r in rows if (r["family"], r["alpha"]) not in partial]
    curves = {k: v for k, v in curves.items() if (k[0], k[1]) not in partial}
    left = [f"{f} {a:.1f} ({len(have[(f, a)])} of {len(seeds) * len(strategies)} runs)"
            for f, a in sorted(partial)]
    return rows, curves, left


def summarise(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Means over seeds of :data:`METRICS` per (family, alpha, strategy), sorted."""
    groups: dict[tuple, list] = {}
    for r in rows:
        groups.setdefault((r["family"], r["alpha"], r["strategy"]), []).append(r)
    out = []
    for (f, a, s), rs in sorted(groups.items()):
        d: dict[str, Any] = {"family": f, "alpha": a, "strategy": s, "runs": len(rs)}
        for k in METRICS:
            vals = [r.get(k, math.nan) for r in rs]
            d[k] = float(np.nanmean(vals)) if not np.isnan(vals).all() else math.nan
        out.append(d)
    return out


def _get(summary: Sequence[Mapping[str, Any]], family: str, alpha: float, strategy: str,
         key: str) -> float:
    for d in summary:
        if d["family"] == family and d["alpha"] == alpha and d["strategy"] == strategy:
            return d[key]
    return math.nan


def _degenerate(summary: Sequence[Mapping[str, Any]], family: str, alpha: float) -> bool:
    """Every strategy gives the same utilisation: the applications run one after the other
    (on the Uniform protocol at alpha <= 0.3 every application takes all the nodes)."""
    vals = [d["utilisation"] for d in summary if d["family"] == family and d["alpha"] == alpha]
    return bool(vals) and max(vals) - min(vals) <= 1e-3


def verdicts(summary: Sequence[Mapping[str, Any]]) -> list[str]:
    """The paper's Table 1 findings checked on the means of ``summary``, as lines of text."""
    lines: list[str] = []
    fams = sorted({d["family"] for d in summary})
    alphas = sorted({d["alpha"] for d in summary})
    strategies = sorted({d["strategy"] for d in summary})
    lists = [s for s in LISTS if s in strategies]
    packs = [s for s in strategies if s in PACKS]
    paper = [s for s in PAPER_PACKS if s in strategies]
    if not lists or not paper:
        return [f"the findings compare a list strategy ({', '.join(LISTS)}) with the paper's "
                f"pack orders ({', '.join(PAPER_PACKS)}): the store has "
                f"{', '.join(strategies)}"]
    ran = [(f, a) for f in fams for a in alphas
           if not math.isnan(_get(summary, f, a, lists[0], "utilisation"))]
    live = [c for c in ran if not _degenerate(summary, *c)]
    dead = [c for c in ran if _degenerate(summary, *c)]
    if dead:
        lines.append("cells where every strategy gives the same schedule (left out below): "
                     + ", ".join(f"{f} {a:.1f}" for f, a in dead))

    # 1. list better utilisation for compute-intensive (low alpha) workloads
    low = [(f, a) for f, a in live if a <= 0.3]
    for lst in lists:
        parts, wins = [], 0
        for f, a in low:
            u = _get(summary, f, a, lst, "utilisation")
            best = max(_get(summary, f, a, s, "utilisation") for s in paper)
            wins += u > best
            parts.append(f"{f} {a:.1f} {u:.3f}/{best:.3f}")
        lines.append(f"(1) {lst}: whole-run utilisation above the best of the paper's pack "
                     f"orders at alpha <= 0.3 in {wins}/{len(low)} cells (list/best pack: "
                     f"{'; '.join(parts)})")

    # 2. pack lower stretch
    for lst in lists:
        for key in ("mean_stretch", "max_stretch"):
            better = {s: sum(_get(summary, f, a, s, key) < _get(summary, f, a, lst, key)
                             for f, a in live) for s in packs}
            lines.append(f"(2) {key}: cells (of {len(live)}) where a pack variant is below "
                         f"{lst}: " + ", ".join(f"{s} {n}" for s, n in better.items()))

    # 3. pack overtakes list in steady state above alpha ~ 0.6
    for lst in lists:
        for lo_hi, sel in (("alpha >= 0.6", [(f, a) for f, a in live if a >= 0.6]),
                           ("alpha < 0.6", [(f, a) for f, a in live if a < 0.6])):
            over = [(f, a) for f, a in sel
                    if max(_get(summary, f, a, s, "utilisation_steady") for s in paper)
                    > _get(summary, f, a, lst, "utilisation_steady")]
            lines.append(f"(3) best paper pack order above {lst} in steady-state utilisation, "
                         f"{lo_hi}: {len(over)}/{len(sel)} cells"
                         + (f" ({', '.join(f'{f} {a:.1f}' for f, a in over)})" if over else ""))

    # 4. Char best on uniform, worst on M-BN (mean stretch among the paper's pack orders)
    if "pack-char" in paper:
        for f in fams:
            best = worst = cells = 0
            for a in alphas:
                if (f, a) not in live:
                    continue
                vals = {s: _get(summary, f, a, s, "mean_stretch") for s in paper}
                cells += 1
                best += min(vals, key=vals.get) == "pack-char"
                worst += max(vals, key=vals.get) == "pack-char"
            lines.append(f"(4) {f}: Char has the lowest mean stretch of the paper's orders in "
                         f"{best}/{cells} alphas, the highest in {worst}/{cells}")

    # 5. no steady state for pack on M-BN (Figure 8): trends of nodes and I/O over time
    for f in fams:
        parts = []
        for s in strategies:
            tn = np.nanmean([_get(summary, f, a, s, "trend_nodes") for a in alphas])
            ti = np.nanmean([_get(summary, f, a, s, "trend_io") for a in alphas])
            parts.append(f"{s} nodes {tn:+.3f} io {ti:+.3f}")
        lines.append(f"(5) {f} usage slopes over the run (per run length, first 90 %): "
                     + "; ".join(parts))
    return lines


def section(summaries: Sequence[Mapping[str, Any]], out: str | Path, *, fmt: str = "png",
            dpi: int = 110) -> list[str]:
    """Write ``jeannot.md`` and the figures into ``out`` when the store holds runs of the
    paper's experiment; the report's lines about them (empty otherwise)."""
    rows, curves, left = runs(summaries)
    if not rows:
        return []
    out = Path(out)
    summary = summarise(rows)
    lines = verdicts(summary)
    seeds = len({r["seed"] for r in rows})
    strategies = list(dict.fromkeys(r["strategy"] for r in sorted(rows, key=_order)))
    cells = len({(r["family"], r["alpha"]) for r in rows})
    meta = (f"{len(rows)} runs: {cells} (family, alpha) cells x {seeds} seeds x "
            f"{len(strategies)} strategies ({', '.join(strategies)}), exclusive I/O.")
    figures(rows, curves, summary, out, fmt=fmt, dpi=dpi)
    (out / "jeannot.md").write_text(markdown(summary, lines, left, meta, fmt))
    return ["## Jeannot, Pallez & Vidal (IJHPCA 2023): Figures 4-9 and Table 1", "", meta,
            "Means per cell and strategy: [jeannot.md](jeannot.md).", "",
            "Table 1, finding by finding:", "", "```", *lines, "```", "",
            *[line for name in FIGURES for line in (f"![{name}]({name}.{fmt})", "")]]


def _order(r: Mapping[str, Any]) -> tuple[int, str]:
    known = (*LISTS, *PACKS)
    s = r["strategy"]
    return (known.index(s) if s in known else len(known), s)


def markdown(summary: Sequence[Mapping[str, Any]], lines: Sequence[str], left: Sequence[str],
             meta: str, fmt: str = "png") -> str:
    """The means over seeds and the findings, as a small markdown page."""
    out = ["# Jeannot, Pallez & Vidal (IJHPCA 2023): list vs pack scheduling under exclusive "
           "I/O", "", meta, "",
           "Means over seeds of: whole-run utilisation (node-time doing work, FIFO waits for "
           "the I/O node excluded), its steady-state part (up to the last start), idle ratio "
           "(unallocated node-time), max and mean stretch (run time over the time alone, "
           "equation (1)), makespan.", "",
           "| family | alpha | strategy | util | steady | idle | max stretch | mean stretch "
           "| makespan h |", "|---|---|---|---|---|---|---|---|---|"]
    for d in summary:
        out.append(f"| {d['family']} | {d['alpha']:.1f} | {d['strategy']} | "
                   f"{d['utilisation']:.3f} | {d['utilisation_steady']:.3f} | "
                   f"{d['idle_ratio']:.3f} | {d['max_stretch']:.3f} | "
                   f"{d['mean_stretch']:.4f} | {d['makespan'] / 3600:.1f} |")
    if left:
        out += ["", "Left out (some strategy misses some seed): " + ", ".join(left)]
    out += ["", "## Table 1, finding by finding", "", "```", *lines, "```", "",
            f"Figures: [utilisation over time]({FIGURES[0]}.{fmt}) (Figures 4-5), "
            f"[max stretch]({FIGURES[1]}.{fmt}) and [mean stretch]({FIGURES[2]}.{fmt}) vs "
            f"alpha (Figures 6-7), [resource usage]({FIGURES[3]}.{fmt}) (Figure 8), "
            f"[mean stretch vs idle ratio]({FIGURES[4]}.{fmt}) (Figure 9).", ""]
    return "\n".join(out)


def figures(rows: Sequence[Mapping[str, Any]], curves: Curves,
            summary: Sequence[Mapping[str, Any]], out: Path, *, fmt: str = "png",
            dpi: int = 110) -> None:
    """Figures 4-9 (see the module docstring) into ``out``."""
    plt = pyplot()
    fams = sorted({r["family"] for r in rows})
    alphas = sorted({r["alpha"] for r in rows})
    strategies = list(dict.fromkeys(r["strategy"] for r in sorted(rows, key=_order)))

    # Figures 4-5: utilisation over time (hours), mean over seeds, per family x alpha
    fig, axes = plt.subplots(len(fams), len(alphas), figsize=(3 * len(alphas), 2.4 * len(fams)),
                             squeeze=False, sharey=True)
    for i, f in enumerate(fams):
        for j, a in enumerate(alphas):
            ax = axes[i][j]
            for s in strategies:
                some = [u for (ff, aa, _, ss), u in curves.items() if (ff, aa, ss) == (f, a, s)]
                if not some:
                    continue
                horizon = max(u["t"][-1] for u in some) * (1 + 1 / USAGE_BINS)
                grid = np.linspace(0, horizon, 120)
                ys = np.array([np.interp(grid, u["t"], u["utilisation"], right=np.nan)
                               for u in some])
                mean = np.full(len(grid), np.nan)
                going = ~np.isnan(ys).all(axis=0)  # the runs still going at that time
                mean[going] = np.nanmean(ys[:, going], axis=0)
                ax.plot(grid / 3600, mean, color=COLORS.get(s), lw=1, label=s)
            ax.set_title(f"{f} alpha={a:.1f}", fontsize=8)
            ax.tick_params(labelsize=7)
            if j == 0:
                ax.set_ylabel("utilisation")
            if i == len(fams) - 1:
                ax.set_xlabel("time (h)")
    # the legend on the first panel with curves (an unreachable alpha leaves a panel empty)
    next((ax for row in axes for ax in row if ax.lines), axes[0][0]).legend(fontsize=6)
    _save(plt, fig, out / f"{FIGURES[0]}.{fmt}", dpi)

    # Figures 6-7: max and mean stretch vs alpha
    for key, name in (("max_stretch", FIGURES[1]), ("mean_stretch", FIGURES[2])):
        fig, axes = plt.subplots(1, len(fams), figsize=(3.4 * len(fams), 3), squeeze=False)
        for i, f in enumerate(fams):
            ax = axes[0][i]
            for s in strategies:
                pts = [(r["alpha"], r[key]) for r in rows
                       if r["family"] == f and r["strategy"] == s]
                if not pts:
                    continue
                xa = np.array(pts)
                ax.scatter(xa[:, 0], xa[:, 1], s=4, color=COLORS.get(s), alpha=0.4)
                means = [(a, _get(summary, f, a, s, key)) for a in alphas]
                means = [(a, v) for a, v in means if not math.isnan(v)]
                ax.plot(*zip(*means, strict=True), color=COLORS.get(s), label=s)
            ax.set_title(f, fontsize=9)
            ax.set_xlabel("I/O load alpha")
            if i == 0:
                ax.set_ylabel(key.replace("_", " "))
        axes[0][0].legend(fontsize=6)
        _save(plt, fig, out / f"{name}.{fmt}", dpi)

    # Figure 8: usage over normalised time on M-BN and M-No at the middle alpha with curves
    show = [f for f in ("M-BN", "M-No") if f in fams] or fams[:2]
    fig, axes = plt.subplots(len(show), 3, figsize=(11, 2.8 * len(show)), squeeze=False)
    for i, f in enumerate(show):
        have = sorted({aa for (ff, aa, _, _) in curves if ff == f})
        for j, (key, label) in enumerate((("running", "running applications"),
                                          ("nodes", "allocated nodes"),
                                          ("io_planned", "bandwidth share (average)"))):
            ax = axes[i][j]
            if not have:
                continue
            a = have[len(have) // 2]
            for s in strategies:
                some = [u for (ff, aa, _, ss), u in curves.items() if (ff, aa, ss) == (f, a, s)]
                if some:
                    x = np.linspace(0, 1, len(some[0][key]))
                    ax.plot(x, np.mean([u[key] for u in some], axis=0), color=COLORS.get(s),
                            lw=1, label=s)
            ax.set_title(f"{f} alpha={a:.1f}: {label}", fontsize=8)
            ax.set_xlabel("time / makespan", fontsize=7)
    if axes[0][0].lines:
        axes[0][0].legend(fontsize=6)
    _save(plt, fig, out / f"{FIGURES[3]}.{fmt}", dpi)

    # Figure 9: mean stretch vs idle ratio on M-BN
    f = "M-BN" if "M-BN" in fams else fams[0]
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for s in strategies:
        pts = np.array([(r["idle_ratio"], r["mean_stretch"]) for r in rows
                        if r["family"] == f and r["strategy"] == s])
        if len(pts):
            ax.scatter(pts[:, 0], pts[:, 1], s=5, color=COLORS.get(s), label=s, alpha=0.6)
    ax.set_xlabel("idle ratio")
    ax.set_ylabel("mean stretch")
    ax.set_title(f"{f}: mean stretch vs idle ratio", fontsize=9)
    ax.legend(fontsize=6)
    _save(plt, fig, out / f"{FIGURES[4]}.{fmt}", dpi)


def _save(plt: Any, fig: Any, path: Path, dpi: int) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=dpi)
    plt.close(fig)

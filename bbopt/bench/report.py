"""``bbopt bench report``: the field's measures of a ``bbopt bench run`` store, as figures and
tables (definitions in :mod:`bbopt.bench.measures`).

Per tier and per model (window weighted, window Pareto, pack, victims, plan orders):

- ``profiles-<tier>.png``: Dolan-More performance profiles of the time to reach the best known
  value (scalar forms) or the exact front (hypervolume ratio 1), at the largest budget, one
  problem per (instance, seed), log2 tau axis;
- ``gap-<tier>.png``: the mean primal gap over time (Berthold's step function), log time axis;
- ``hv-ecdf-<tier>.png``: runtime ECDFs of the hypervolume-ratio targets 0.9, 0.99, 0.999,
  0.9999 and 1 of the Pareto instances (COCO's convention), first-hitting times over the
  budgets;
- ``tables.md`` and ``tables.csv``: per model and backend the runs, the solved counts (proven
  optimal at the best known value; reached it), FALLBACK and error counts, the shifted
  geometric mean of the wall time (unsolved runs at the time limit; shift
  :data:`SHIFT` of the tier), the mean primal integral over the time limit and the worst gap;
  whether the exact backends agree on every instance; the solved counts per budget with the
  runs that took longer than their budget.

The best known value of an instance is its recorded optimum, else the best value any run found.
With a sweep store of audited runs (``--outcomes``), ``outcomes.png`` and a table relate each
run's mean decision gap to its mean wait and bounded slowdown (:mod:`bbopt.bench.outcomes`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.analysis.store import Store
from bbopt.bench.instances import PROBLEMS
from bbopt.bench.measures import (
    gap_at,
    performance_profile,
    primal_integral,
    runtime_ecdf,
    shifted_geometric_mean,
)
from bbopt.bench.run import EXACT, SEEDLESS, TOL, primal_gap
from bbopt.errors import InputError

#: Shift of the shifted geometric mean per tier (seconds): about 1 % of the smallest budget,
#: as MIPLIB's 10 s are of its limits.
SHIFT = {"small": 0.001, "medium": 0.01, "large": 0.1}
#: Hypervolume-ratio targets of the Pareto ECDFs.
HV_TARGETS = (0.9, 0.99, 0.999, 0.9999, 1.0 - 1e-9)
MODELS = (("window", "weighted"), ("window", "lexicographic"), ("window", "pareto"),
          ("io-window", "weighted"), ("pack", "stages"), ("victims", "min-cost"),
          ("plan", "min-score"))
#: One colour per backend in every figure.
COLOURS = {b: f"C{k}" for k, b in enumerate(
    ("cpsat", "exhaustive", "greedy", "highs", "milp", "nsga2", "scip", "annealing"))}


def load_runs(root: str | Path) -> list[dict[str, Any]]:
    """The runs of a bench store as flat records (parameters and metrics)."""
    store = Store(root)
    if not store.root.is_dir():
        raise InputError("no such results directory", source=str(root))
    runs = [{**s["params"], **s["metrics"]} for s in store.summaries()
            if s.get("sweep") == "bench"]
    if not runs:
        raise InputError("holds no bench runs (run `bbopt bench run` first)", source=str(root))
    return runs


def _best_known(runs: list[dict[str, Any]], known: dict[str, float]) -> dict[str, float]:
    """Per instance: the recorded optimum, else the best value of any run."""
    best: dict[str, float] = {}
    for r in runs:
        if r["form"] == "pareto" or r.get("objective") is None:
            continue
        v, i = float(r["objective"]), r["instance"]
        better = max if PROBLEMS[r["problem"]][1] == "max" else min
        best[i] = v if i not in best else better(best[i], v)
    best.update({i: v for i, v in known.items() if v is not None})
    return best


def _reached(r: dict[str, Any], best: dict[str, float]) -> bool:
    if r["form"] == "pareto":
        return r.get("hv_ratio", 0.0) >= 1.0 - 1e-9
    return primal_gap(best.get(r["instance"]), r.get("objective")) <= TOL


def _gap_trace(r: dict[str, Any], best: dict[str, float]) -> list[tuple[float, float]]:
    if r["form"] == "pareto":
        return [(t, 1.0 - v) for t, v in r.get("trace", [])]
    b = best.get(r["instance"])
    return [(t, primal_gap(b, v)) for t, v in r.get("trace", [])]


def _problems(runs: list[dict[str, Any]]) -> list[tuple[str, int]]:
    seeds = sorted({r["seed"] for r in runs})
    return [(i, s) for i in sorted({r["instance"] for r in runs}) for s in seeds]


def _at(runs: list[dict[str, Any]], backend: str, inst: str, seed: int) -> dict | None:
    """The run of ``backend`` on (instance, seed); a seedless backend's single run stands for
    every seed."""
    hits = [r for r in runs if r["backend"] == backend and r["instance"] == inst]
    for r in hits:
        if r["seed"] == seed:
            return r
    return hits[0] if hits and all(h["seed"] == 0 for h in hits) else None


def table(runs: list[dict[str, Any]], best: dict[str, float], tier: str) -> list[dict]:
    """One row per (model, backend) at the tier's largest budget (see the module docstring)."""
    rows = []
    for problem, form in MODELS:
        sel = [r for r in runs if r["problem"] == problem and r["form"] == form]
        if not sel:
            continue
        limit = max(r["budget"] for r in sel)
        sel = [r for r in sel if r["budget"] == limit]
        for backend in sorted({r["backend"] for r in sel}):
            mine = [r for r in sel if r["backend"] == backend]
            reached = [_reached(r, best) for r in mine]
            proven = [ok and r["status"] == "OPTIMAL" for ok, r in zip(reached, mine,
                                                                         strict=True)]
            times = [r["wall_time"] if ok else limit for ok, r in zip(reached, mine,
                                                                      strict=True)]
            pis = [primal_integral(_gap_trace(r, best), limit) for r in mine]
            gaps = [1.0 - r.get("hv_ratio", 0.0) if form == "pareto"
                    else primal_gap(best.get(r["instance"]), r.get("objective")) for r in mine]
            rows.append({
                "tier": tier, "model": f"{problem}-{form}", "backend": backend,
                "budget": limit, "runs": len(mine), "instances": len({r["instance"]
                                                                      for r in mine}),
                "proven": int(sum(proven)), "reached": int(sum(reached)),
                "fallback": sum(r["status"] == "FALLBACK" for r in mine),
                "error": sum(r["status"] == "error" for r in mine),
                "sgm_time": shifted_geometric_mean(times, SHIFT[tier]),
                "primal_integral": float(np.mean(pis)), "max_gap": float(max(gaps)),
            })
    return rows


def solved_by_budget(runs: list[dict[str, Any]], best: dict[str, float]) -> list[dict]:
    """Per model, backend and budget: runs, proven optimal, reached the best known value."""
    rows = []
    for problem, form in MODELS:
        sel = [r for r in runs if r["problem"] == problem and r["form"] == form]
        for backend in sorted({r["backend"] for r in sel}):
            for budget in sorted({r["budget"] for r in sel}):
                mine = [r for r in sel if r["backend"] == backend and r["budget"] == budget]
                reached = [_reached(r, best) for r in mine]
                rows.append({"model": f"{problem}-{form}", "backend": backend,
                             "budget": budget, "runs": len(mine),
                             "proven": sum(ok and r["status"] == "OPTIMAL"
                                           for ok, r in zip(reached, mine, strict=True)),
                             "reached": sum(reached),
                             "late": sum(r["wall_time"] > budget for r in mine)})
    return rows


def agreement(runs: list[dict[str, Any]]) -> tuple[int, list[str]]:
    """The instances on which every proven-optimal run of the exact backends (cpsat, milp,
    highs, scip) has the same value (the same front for Pareto instances), and the others."""
    by: dict[str, set] = {}
    for r in runs:
        if r["backend"] in EXACT and r["status"] == "OPTIMAL":
            key = (tuple(tuple(round(v, 9) for v in p) for p in r.get("front") or [])
                   if r["form"] == "pareto" else round(float(r["objective"]), 9))
            by.setdefault(r["instance"], set()).add(key)
    differ = sorted(i for i, values in by.items() if len(values) > 1)
    return len(by), differ


def _markdown(rows: list[dict]) -> str:
    head = ("| model | backend | runs | proven | reached | FALLBACK | error | SGM time (s) "
            "| primal integral (s) | max gap |")
    out = [head, "|" + "---|" * 10]
    for r in rows:
        out.append(f"| {r['model']} | {r['backend']} | {r['runs']} | {r['proven']} | "
                   f"{r['reached']} | {r['fallback']} | {r['error']} | {r['sgm_time']:.4f} | "
                   f"{r['primal_integral']:.2e} | {r['max_gap']:.2e} |")
    return "\n".join(out)


def _budget_markdown(rows: list[dict]) -> str:
    budgets = sorted({r["budget"] for r in rows})
    out = ["| model | backend | " + " | ".join(f"{b:g} s" for b in budgets) + " |",
           "|---|---|" + "---|" * len(budgets)]
    keys = sorted({(r["model"], r["backend"]) for r in rows},
                  key=lambda k: ([f"{p}-{f}" for p, f in MODELS].index(k[0]), k))
    for model, backend in keys:
        cells = []
        for b in budgets:
            r = next((r for r in rows if r["model"] == model and r["backend"] == backend
                      and r["budget"] == b), None)
            cells.append("" if r is None else f"{r['proven']}/{r['reached']} of {r['runs']}"
                         + (f", {r['late']} late" if r["late"] else ""))
        out.append(f"| {model} | {backend} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def _panels(plt, n: int):
    cols = min(n, 3)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.3 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat[:n])


def _models(runs: list[dict[str, Any]], forms: Sequence[str] | None = None):
    out = []
    for problem, form in MODELS:
        if forms is not None and form not in forms:
            continue
        sel = [r for r in runs if r["problem"] == problem and r["form"] == form]
        if sel:
            out.append((f"{problem}-{form}", sel))
    return out


def profiles_figure(runs: list[dict[str, Any]], best: dict[str, float], path: Path | None):
    """Performance profiles, one panel per model (largest budget)."""
    from bbopt.analysis.figures import _done, _plt

    plt = _plt()
    models = _models(runs)
    fig, axes = _panels(plt, len(models))
    taus = np.logspace(0, 12, 400, base=2.0)
    for ax, (name, sel) in zip(axes, models, strict=True):
        limit = max(r["budget"] for r in sel)
        sel = [r for r in sel if r["budget"] == limit]
        problems = _problems(sel)
        times = {}
        for b in sorted({r["backend"] for r in sel}):
            t = []
            for inst, seed in problems:
                r = _at(sel, b, inst, seed)
                t.append(r["wall_time"] if r is not None and _reached(r, best) else math.inf)
            times[b] = t
        for b, rho in performance_profile(times, taus).items():
            ax.step(taus, rho, where="post", label=b, color=COLOURS.get(b))
        ax.set_xscale("log", base=2)
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("tau (time / best time)")
        ax.set_ylabel("share of problems")
        ax.set_title(f"{name} ({len(problems)} problems, {limit:g} s)", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle("Performance profiles (Dolan-More): time to the best known value", fontsize=10)
    return _done(fig, path)


def gap_figure(runs: list[dict[str, Any]], best: dict[str, float], path: Path | None):
    """The mean primal gap over time per backend, one panel per scalar model."""
    from bbopt.analysis.figures import _done, _plt

    plt = _plt()
    models = _models(runs, tuple(form for _, form in MODELS if form != "pareto"))
    fig, axes = _panels(plt, max(len(models), 1))
    for ax, (name, sel) in zip(axes, models, strict=False):
        limit = max(r["budget"] for r in sel)
        sel = [r for r in sel if r["budget"] == limit]
        grid = np.logspace(-4, math.log10(limit), 200)
        for b in sorted({r["backend"] for r in sel}):
            curves = [gap_at(_gap_trace(r, best), grid) for r in sel if r["backend"] == b]
            ax.step(grid, np.mean(curves, axis=0), where="post", label=b, color=COLOURS.get(b))
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_xlabel("seconds")
        ax.set_ylabel("mean primal gap")
        ax.set_title(f"{name} ({limit:g} s)", fontsize=9)
        ax.legend(fontsize=7, loc="upper right")
    fig.suptitle("Primal gap over time (Berthold; 1 before the first solution)", fontsize=10)
    return _done(fig, path)


def hv_figure(runs: list[dict[str, Any]], path: Path | None):
    """Runtime ECDFs of the hypervolume-ratio targets (Pareto instances)."""
    from bbopt.analysis.figures import _done, _plt

    plt = _plt()
    sel = [r for r in runs if r["form"] == "pareto"]
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    if sel:
        limit = max(r["budget"] for r in sel)
        grid = np.logspace(-4, math.log10(limit), 200)
        for b in sorted({r["backend"] for r in sel}):
            firsts = []
            for inst, seed in _problems(sel):
                mine = [r for r in sel if r["backend"] == b and r["instance"] == inst
                        and (r["seed"] == seed or r["backend"] in SEEDLESS)]
                for target in HV_TARGETS:  # the first time any of its runs reached it
                    hits = [t for r in mine for t, hv in r.get("trace", []) if hv >= target]
                    firsts.append(min(hits) if hits else math.inf)
            ax.step(grid, runtime_ecdf(firsts, grid), where="post", label=b, color=COLOURS.get(b))
        ax.set_xscale("log")
        ax.set_ylim(0, 1.02)
        ax.set_xlabel("seconds")
        ax.set_ylabel("share of (instance, target) pairs")
        ax.legend(fontsize=7, loc="lower right")
    ax.set_title("Runtime ECDF of the hypervolume-ratio targets 0.9, 0.99, 0.999, 0.9999, 1 "
                 "(COCO)", fontsize=9)
    return _done(fig, path)


def report(root: str | Path, out: str | Path | None = None,
           outcomes: str | Path | None = None) -> list[Path]:
    """Write the figures and tables of a bench store; returns the files written.
    ``outcomes``: a sweep store of audited runs (:mod:`bbopt.bench.outcomes`) whose decision
    gaps are related to their schedules' waits."""
    from bbopt.analysis.figures import close
    from bbopt.outputs import write_text

    runs = load_runs(root)
    out = Path(out) if out is not None else Path(root) / "report"
    out.mkdir(parents=True, exist_ok=True)
    known = _known_optima(runs)
    written: list[Path] = []
    rows: list[dict] = []
    for tier in ("small", "medium", "large"):
        mine = [r for r in runs if r["tier"] == tier]
        if not mine:
            continue
        best = _best_known(mine, known)
        rows += table(mine, best, tier)
        figs = [(profiles_figure(mine, best, out / f"profiles-{tier}.png"),
                 out / f"profiles-{tier}.png"),
                (gap_figure(mine, best, out / f"gap-{tier}.png"), out / f"gap-{tier}.png")]
        if any(r["form"] == "pareto" for r in mine):
            figs.append((hv_figure(mine, out / f"hv-ecdf-{tier}.png"),
                         out / f"hv-ecdf-{tier}.png"))
        for fig, path in figs:
            close(fig)
            written.append(path)
    md = ["# Solver benchmark", ""]
    for tier in ("small", "medium", "large"):
        tier_rows = [r for r in rows if r["tier"] == tier]
        if not tier_rows:
            continue
        mine = [r for r in runs if r["tier"] == tier]
        best = _best_known(mine, known)
        n, differ = agreement(mine)
        md += [f"## Tier {tier}", "", _markdown(tier_rows), "",
               f"Exact backends ({', '.join(EXACT)}) agree on {n - len(differ)} of {n} "
               "instances (proven-optimal runs: the same value, the same front)"
               + (f"; they differ on {', '.join(differ)}." if differ else "."), "",
               "Solved per budget (proven optimal / reached the best known value, of runs; "
               "late: wall time above the budget):",
               "", _budget_markdown(solved_by_budget(mine, best)), ""]
    if outcomes is not None:
        from bbopt.bench.outcomes import outcome_rows, outcomes_figure, outcomes_markdown

        orows = outcome_rows(outcomes)
        close(outcomes_figure(orows, out / "outcomes.png"))
        written.append(out / "outcomes.png")
        md += ["## Decision gaps and schedule outcomes", "", outcomes_markdown(orows), ""]
    written.append(write_text(out / "tables.md", "\n".join(md)))
    cols = list(rows[0]) if rows else []
    csv = [",".join(cols)] + [",".join(str(r[c]) for c in cols) for r in rows]
    written.append(write_text(out / "tables.csv", "\n".join(csv) + "\n"))
    return written


def _known_optima(runs: list[dict[str, Any]]) -> dict[str, float]:
    """The recorded optima the runs were scored against."""
    return {r["instance"]: float(r["best_known"]) for r in runs
            if r.get("best_known") is not None}

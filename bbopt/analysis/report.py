"""``bbopt report DIR``: the tables and figures of a sweep's results store, as a page.

For every *scenario* of the store (a workload on a platform under one budget and execution
model), the page shows the mean of the chosen metrics per policy, the metrics normalised by the
reference policy unit by unit (part x seed) with three 95 % intervals
(:mod:`~bbopt.analysis.intervals`) and a forest plot of them, the waiting-time ECDF per policy
(pooled over the scenario's runs), node/BB utilisation and queue length over time and a Gantt
chart for the first unit of the scenario. A store of Jeannot et al.'s experiment also gets the
paper's figures and findings (:mod:`~bbopt.analysis.report_jeannot`). Written as ``index.md``
and ``index.html`` (the same content) beside the figures and ``results.csv`` (the collected
table).
"""

from __future__ import annotations

import html
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from bbopt.analysis import figures, report_jeannot
from bbopt.analysis.frames import from_jobs_csv
from bbopt.analysis.intervals import interval_table, normalise_runs
from bbopt.analysis.plots import MIN_N, axis_label, metric_label, run_title
from bbopt.analysis.store import Store, collect
from bbopt.errors import InputError

SCENARIO = ("workload", "platform", "budget", "execution")
#: At most this many runs per policy are read for the ECDFs of one scenario.
MAX_ECDF_RUNS = 64


def write_report(root: str | Path, out: str | Path, *, reference: str | None = None,
                 metrics: Sequence[str] | None = None, fmt: str = "png") -> Path:
    """Write the report of the store at ``root`` into ``out``; returns the HTML page."""
    store = Store(root)
    table = collect(root)
    if table.empty:
        raise InputError("the results directory holds no finished run", source=str(root))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "results.csv", index=False)
    summaries = {s["hash"]: s for s in store.summaries()}
    if reference is not None and reference not in set(table["policy"]):
        raise InputError(f"reference policy {reference!r} was not run; the store holds "
                         f"{', '.join(dict.fromkeys(table['policy']))}", source=str(root),
                         field="reference")
    reference = reference or _most_common(s.get("reference") for s in summaries.values()) \
        or table["policy"].iloc[0]
    metrics = list(metrics or _most_common(tuple(s.get("report_metrics") or ()) for s in
                                           summaries.values()) or
                   ("mean_wait", "mean_bounded_slowdown"))
    md: list[str] = [f"# Sweep report: {', '.join(sorted(set(table['sweep'])))}", "",
                     f"{len(table)} runs; policies: {', '.join(dict.fromkeys(table['policy']))};"
                     f" normalised by **{reference}**.", ""]
    md += report_jeannot.section(list(summaries.values()), out, fmt=fmt)
    keys = [k for k in SCENARIO if k in table]
    for n, (scenario, sel) in enumerate(table.groupby(keys, sort=False, dropna=False)):
        scenario = scenario if isinstance(scenario, tuple) else (scenario,)
        name = run_title(dict(zip(keys, scenario, strict=True)))
        tag = f"s{n}"
        md += [f"## {name}", ""]
        md += _means(sel, metrics)
        units = sel[["part", "seed"]].drop_duplicates() if {"part", "seed"} <= set(sel) else []
        md.append(f"{len(sel)} runs over {len(units)} units (part x seed).")
        md.append("")
        if reference in set(sel["policy"]):
            long = normalise_runs(sel, reference, metrics)
            stats = interval_table(long)
            md += _interval_md(stats, reference)
            fig = figures.forest_plot(stats, reference=reference, title=name,
                                      path=out / f"{tag}_forest.{fmt}")
            figures.close(fig)
            md += [f"![forest plot]({tag}_forest.{fmt})", ""]
        else:
            md += [f"(reference {reference} not run in this scenario: no normalised table)", ""]
        runs: dict[str, list[pd.DataFrame]] = {}
        for pol, rows in sel.groupby("policy", sort=False):
            runs[pol] = [from_jobs_csv(store.jobs_frame(h)) for h in
                         rows["run"].iloc[:MAX_ECDF_RUNS]]
        fig = figures.wait_ecdf(runs, title=name, path=out / f"{tag}_wait_ecdf.{fmt}")
        figures.close(fig)
        md += [f"![waiting-time ECDF]({tag}_wait_ecdf.{fmt})", ""]
        first = {pol: frames[0] for pol, frames in runs.items()}
        h0 = sel["run"].iloc[0]
        ident = summaries[h0]["provenance"]["hash_inputs"]["platform"]
        unit = {k: sel.iloc[0][k] for k in ("part", "seed") if k in sel}
        shown = run_title({"workload": name, **unit})
        if len(units):
            shown += f" (one of the {len(units)} units)"
        fig = figures.utilisation_plot(first, int(ident["nodes"]), float(ident["bb"]),
                                       title=shown, path=out / f"{tag}_utilisation.{fmt}")
        figures.close(fig)
        md += [f"![utilisation and queue]({tag}_utilisation.{fmt})", ""]
        gpol = reference if reference in first else next(iter(first))
        fig = figures.gantt(first[gpol], int(ident["nodes"]),
                            title=f"{gpol}, {shown}", path=out / f"{tag}_gantt.{fmt}")
        figures.close(fig)
        md += [f"![Gantt chart of {gpol}]({tag}_gantt.{fmt})", ""]
        md += _pareto(sel, summaries, shown, out, tag, fmt)
    md += ["## Provenance", "",
           f"bbopt {', '.join(sorted(set(map(str, table['bbopt_version']))))}; hosts "
           f"{', '.join(sorted(set(map(str, table['host']))))}; results table: "
           "[results.csv](results.csv)", ""]
    text = "\n".join(md)
    (out / "index.md").write_text(text)
    page = out / "index.html"
    page.write_text(_html(text))
    return page


def _pareto(sel: pd.DataFrame, summaries: dict, shown: str, out: Path, tag: str,
            fmt: str) -> list[str]:
    """The largest Pareto set a window policy met in the scenario's first run that has one
    (nodes and GB, the chosen selection starred), or nothing."""
    for h in sel["run"]:
        pareto = summaries.get(h, {}).get("pareto")
        if pareto:
            pol = summaries[h]["policy"]
            fig = figures.pareto_plot(pareto["alternatives"], path=out / f"{tag}_pareto.{fmt}",
                                      title=f"{pol}, day {pareto['time'] / 86400:.1f}: "
                                            f"{len(pareto['alternatives'])} selections")
            figures.close(fig)
            return [f"The largest Pareto set {pol} chose from ({shown}):", "",
                    f"![Pareto front of a {pol} decision]({tag}_pareto.{fmt})", ""]
    return []


def _most_common(values):
    c = Counter(v for v in values if v)
    return c.most_common(1)[0][0] if c else None


def _fmt(v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    return f"{v:.4g}"


def _means(sel: pd.DataFrame, metrics: Sequence[str]) -> list[str]:
    """Per policy, the mean over its runs of each metric, in the metric's unit (h, %, ...)."""
    cols = [m for m in metrics if m in sel] + [m for m in ("node_utilization",
                                                           "bb_utilization") if m in sel
                                               and m not in metrics]
    lines = ["| policy | runs | " + " | ".join(axis_label(c) for c in cols) + " |",
             "|---|---|" + "---|" * len(cols)]
    for pol, rows in sel.groupby("policy", sort=False):
        lines.append(f"| {pol} | {len(rows)} | " + " | ".join(
            _fmt(float(rows[c].mean()) * metric_label(c)[2]) for c in cols) + " |")
    return [*lines, "", "(means over the runs of each policy)", ""]


def _interval_md(stats: pd.DataFrame, reference: str) -> list[str]:
    """The ratios to the reference with intervals that stay above zero: the percentile
    bootstrap of the mean ratio and the log-ratio interval of the geometric mean (a Student t
    interval of a ratio can reach below zero on few skewed units, and is left out)."""
    lines = [f"Ratio to {reference} in each unit (part x seed), with 95 % intervals: percentile "
             "bootstrap of the mean ratio, log-ratio interval of the geometric mean; n units.",
             "", "| metric | policy | n | mean ratio | bootstrap interval | geometric mean | "
             "log-ratio interval |", "|---|---|---|---|---|---|---|"]
    few = False
    for _, r in stats.iterrows():
        enough = r["n"] >= MIN_N
        few |= not enough

        def ci(lo, hi, enough=enough):
            return f"[{_fmt(lo)}, {_fmt(hi)}]" if enough else "n < 3"

        lines.append(f"| {metric_label(r['metric'])[0]} | {r['policy']} | {r['n']} | "
                     f"{_fmt(r['mean'])} | {ci(r['boot_low'], r['boot_high'])} | "
                     f"{_fmt(r['gmean'])} | {ci(r['log_ci_low'], r['log_ci_high'])} |")
    if few:
        lines += ["", f"**Warning:** some policies have fewer than {MIN_N} units: their "
                  "intervals are not shown, and their ratios are single observations."]
    return [*lines, ""]


def _html(md: str) -> str:
    """A minimal rendering of the report's markdown (headings, tables, images, ``` blocks,
    text)."""
    body: list[str] = []
    table: list[str] = []

    def flush() -> None:
        if table:
            rows = [r.strip("|").split("|") for r in table if not set(r) <= set("|-")]
            body.append("<table>")
            for k, cells in enumerate(rows):
                tag = "th" if k == 0 else "td"
                body.append("<tr>" + "".join(f"<{tag}>{html.escape(c.strip())}</{tag}>"
                                             for c in cells) + "</tr>")
            body.append("</table>")
            table.clear()

    pre: list[str] | None = None  # the lines of an open ``` block
    for line in md.splitlines():
        if line.startswith("```"):
            flush()
            if pre is None:
                pre = []
            else:
                body.append("<pre>" + html.escape("\n".join(pre)) + "</pre>")
                pre = None
            continue
        if pre is not None:
            pre.append(line)
            continue
        if line.startswith("|"):
            table.append(line)
            continue
        flush()
        if line.startswith("## "):
            body.append(f"<h2>{html.escape(line[3:])}</h2>")
        elif line.startswith("# "):
            body.append(f"<h1>{html.escape(line[2:])}</h1>")
        elif line.startswith("!["):
            alt, _, src = line[2:].partition("](")
            body.append(f'<p><img src="{html.escape(src.rstrip(")"))}" '
                        f'alt="{html.escape(alt)}" style="max-width:100%"></p>')
        elif line.strip():
            text = html.escape(line).replace("**", "")
            body.append(f"<p>{text}</p>")
    flush()
    style = ("body{font-family:sans-serif;max-width:1100px;margin:auto}"
             "table{border-collapse:collapse}td,th{border:1px solid #bbb;padding:2px 6px}")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>bbopt report</title>"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")

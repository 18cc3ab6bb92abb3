"""The report's part for Jeannot et al.'s experiment: runs read from the store by their generator
parameters, cells missing a seed left out, Table 1's findings counted on the right cells, and
Figures 4-9 drawn from a real sweep's runs and their usage curves."""

from __future__ import annotations

import math

import pytest

from bbopt.analysis import report_jeannot as rj


def _summary(protocol="mira", profile="binormal", alpha=0.3, seed=0, policy="io-list",
             util=0.9, curves=None):
    s = {"params": {"seed": seed, "policy": policy},
         "metrics": {"xio_utilisation": util, "xio_mean_stretch": 1.1, "mean_wait": 5.0},
         "provenance": {"workload": {"generator": {"name": "jeannot", "protocol": protocol,
                                                   "io_profile": profile, "alpha": alpha,
                                                   "n_apps": 20}}}}
    if curves is not None:
        s["curves"] = curves
    return s


def test_family_and_alpha_come_from_the_generator_parameters():
    assert rj.family(_summary()) == ("M-BN", 0.3)
    assert rj.family(_summary("uniform", "normal", 0.45)) == ("U-No", 0.45)
    other = _summary()
    other["provenance"]["workload"] = {"file": "kth.swf"}
    assert rj.family(other) is None  # a trace, not the generator
    no_xio = _summary()
    no_xio["metrics"] = {"mean_wait": 1.0}
    assert rj.family(no_xio) is None  # not run under exclusive I/O


def test_runs_keep_a_cell_only_when_every_strategy_ran_every_seed():
    curve = {"t": [1.0, 2.0, 3.0], "nodes": [0.9, 0.6, 0.3], "io_planned": [0.2, 0.2, 0.2]}
    full = [_summary(alpha=0.3, seed=s, policy=p, curves=curve)
            for s in (0, 1) for p in ("io-list", "pack-max")]
    gap = [_summary(alpha=0.4, seed=s, policy=p)
           for s, p in ((0, "io-list"), (1, "io-list"), (0, "pack-max"))]
    rows, curves, left = rj.runs(full + gap)
    assert {(r["family"], r["alpha"]) for r in rows} == {("M-BN", 0.3)}
    assert len(rows) == 4 and left == ["M-BN 0.4 (3 of 4 runs)"]
    assert rows[0]["utilisation"] == 0.9 and "mean_wait" not in rows[0]
    # the slope of the nodes over normalised time (1/3, 2/3, 1): -0.3 per third = -0.9
    assert rows[0]["trend_nodes"] == pytest.approx(-0.9, abs=1e-9)
    assert rows[0]["trend_io"] == pytest.approx(0.0, abs=1e-12)
    assert len(curves) == 4


def _cell(f, a, util, steady, mean_stretch, strategies=("io-list", "pack-random", "pack-max",
                                                         "pack-char")):
    return [{"family": f, "alpha": a, "strategy": s, "runs": 1, "utilisation": util[k],
             "utilisation_steady": steady[k], "mean_stretch": mean_stretch[k],
             "max_stretch": mean_stretch[k] + 0.1, "trend_nodes": -0.1, "trend_io": 0.05}
            for k, s in enumerate(strategies)]


def test_table_1_findings_count_the_cells_at_the_papers_thresholds():
    summary = [
        # alpha 0.3 is compute-intensive (<= 0.3): list above the best pack order (0.91 > 0.9)
        *_cell("M-No", 0.3, (0.91, 0.8, 0.9, 0.85), (0.9, 0.8, 0.9, 0.8), (1.2, 1.1, 1.3, 1.0)),
        # alpha 0.4 is not, though list wins there too
        *_cell("M-No", 0.4, (0.95, 0.8, 0.9, 0.85), (0.9, 0.8, 0.9, 0.8), (1.2, 1.1, 1.3, 1.0)),
        # alpha 0.6 counts as high I/O load: a pack order above list in steady state
        *_cell("M-No", 0.6, (0.8, 0.7, 0.7, 0.7), (0.80, 0.79, 0.81, 0.7), (1.2, 1.3, 1.1, 1.4)),
        # every strategy within 1e-3: the same schedule, left out
        *_cell("U-No", 0.2, (0.999, 0.9995, 0.9992, 0.9991), (1, 1, 1, 1), (1.0, 1.0, 1.0, 1.0)),
    ]
    lines = rj.verdicts(summary)
    assert lines[0] == ("cells where every strategy gives the same schedule (left out below): "
                        "U-No 0.2")
    assert lines[1].startswith("(1) io-list: whole-run utilisation above the best of the "
                               "paper's pack orders at alpha <= 0.3 in 1/1 cells "
                               "(list/best pack: M-No 0.3 0.910/0.900)")
    # mean stretch below the list's (1.2): Random at 0.3 and 0.4, Max at 0.6, Char at 0.3, 0.4
    assert "(2) mean_stretch: cells (of 3) where a pack variant is below io-list: " \
           "pack-char 2, pack-max 1, pack-random 2" in lines
    assert "(3) best paper pack order above io-list in steady-state utilisation, " \
           "alpha >= 0.6: 1/1 cells (M-No 0.6)" in lines
    assert "(3) best paper pack order above io-list in steady-state utilisation, " \
           "alpha < 0.6: 0/2 cells" in lines
    assert "(4) M-No: Char has the lowest mean stretch of the paper's orders in 2/3 alphas, " \
           "the highest in 1/3" in lines
    five = [x for x in lines if x.startswith("(5) M-No")]
    assert five and "pack-max nodes -0.100 io +0.050" in five[0]


def test_findings_name_what_is_missing_without_a_list_or_a_paper_order():
    summary = _cell("M-No", 0.3, (0.9, 0.8), (0.9, 0.8), (1.1, 1.0),
                    strategies=("pack-opt", "pack-char-desc"))
    (line,) = rj.verdicts(summary)
    assert "io-list" in line and "pack-opt" in line


def test_summarise_means_over_seeds_per_cell_and_strategy():
    rows = [{"family": "M-No", "alpha": 0.5, "strategy": "io-list", "seed": s,
             "utilisation": u, "mean_stretch": 1.0 + s} for s, u in ((0, 0.8), (1, 0.9))]
    (d,) = rj.summarise(rows)
    assert d["runs"] == 2 and d["utilisation"] == pytest.approx(0.85)
    assert d["mean_stretch"] == pytest.approx(1.5) and math.isnan(d["makespan"])


@pytest.mark.slow
def test_a_sweep_of_the_generator_reports_figures_4_to_9(tmp_path):
    """Two strategies on one tiny batch under exclusive I/O: each run keeps its usage curves in
    its summary, and the report draws the paper's figures from them."""
    pytest.importorskip("matplotlib")
    from bbopt.analysis.report import write_report
    from bbopt.analysis.store import Store
    from bbopt.analysis.sweep import run_sweep
    from bbopt.analysis.sweep_spec import parse_spec
    from bbopt.simulation.pack_metrics import USAGE_BINS

    spec = parse_spec({
        "name": "tiny-jeannot",
        "workloads": {"M-No-0.5": {"generator": {"name": "jeannot", "protocol": "mira",
                                                 "io_profile": "normal", "n_apps": 20,
                                                 "alpha": 0.5}}},
        "platforms": [{"name": "mira", "nodes": 49152}],
        "policies": ["io-list", "pack-char"], "executions": ["exclusive-io"], "seeds": [0],
        "reference": "io-list", "metrics": ["xio_utilisation", "xio_mean_stretch"]})
    rep = run_sweep(spec, tmp_path / "r", executor="serial", progress=False)
    assert rep.failed == 0, rep.failures
    (s, _) = Store(tmp_path / "r").summaries()
    assert set(s["curves"]) == {"t", "utilisation", "nodes", "running", "io_busy",
                                "io_planned"}
    assert all(len(v) == USAGE_BINS for v in s["curves"].values())
    write_report(tmp_path / "r", tmp_path / "report")
    page = (tmp_path / "report" / "index.md").read_text()
    assert "## Jeannot, Pallez & Vidal (IJHPCA 2023): Figures 4-9 and Table 1" in page
    assert "(4) M-No: Char has the lowest mean stretch" in page
    for name in rj.FIGURES:
        assert (tmp_path / "report" / f"{name}.png").stat().st_size > 5_000
    md = (tmp_path / "report" / "jeannot.md").read_text()
    assert "| M-No | 0.5 | io-list |" in md and "| M-No | 0.5 | pack-char |" in md


def test_the_html_page_keeps_the_findings_as_one_preformatted_block():
    from bbopt.analysis.report import _html

    page = _html("## Findings\n\n```\n(1) io-list: 0/4 cells | a < b\n(2) x\n```\n\nafter\n")
    assert "<pre>(1) io-list: 0/4 cells | a &lt; b\n(2) x</pre>" in page
    assert "<table>" not in page and "```" not in page and "<p>after</p>" in page


def test_an_exclusive_io_run_keeps_its_usage_curves_and_other_models_none():
    from bbopt import Platform, runs
    from bbopt.simulation.exclusive_io import ExclusiveIO
    from bbopt.simulation.execution import Rigid
    from bbopt.simulation.pack_metrics import USAGE_BINS, usage_over_time
    from bbopt.workloads.generators.jeannot import generate

    wl = generate(20, alpha=0.5, protocol="mira", io_profile="normal", seed=0)
    record = runs.run(runs.RunSpec(workload=wl.jobs, platform=Platform(nodes=wl.nodes),
                                   policy="pack-max", execution=ExclusiveIO()))
    curves = record.model.curves(record.result)
    direct = usage_over_time(record.result, record.model, bins=USAGE_BINS)
    assert set(curves) == set(direct)
    for key, values in curves.items():
        assert values == [float(x) for x in direct[key]] and len(values) == USAGE_BINS
    assert Rigid().curves(record.result) == {}

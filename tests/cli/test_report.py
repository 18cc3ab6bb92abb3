"""`bbopt report` and `bbopt compare --split --plot` write the figures they promise."""

from __future__ import annotations

import pytest
import yaml

from bbopt.cli import main

pytest.importorskip("matplotlib")

SPEC = {"name": "r", "workloads": {"syn": {"generator": {"name": "kth-like", "n_jobs": 200},
                                           "split": {"parts": 2}}},
        "policies": ["fcfs-bb", "sjf-bb", "fcfs-easy"], "seeds": [0, 1], "reference": "sjf-bb",
        "metrics": ["mean_wait", "mean_bounded_slowdown"]}


def test_report_writes_page_tables_and_figures(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    assert main(["sweep", str(spec), "--out", str(tmp_path / "r"), "--serial",
                 "--no-progress"]) == 0
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "index.md").read_text()
    assert "normalised by **sjf-bb**" in md
    assert md.count("| mean wait | ") == 3  # one interval row per policy
    assert "## syn on kopanski" in md  # the scenario by its meaning, defaults left out
    assert "| policy | runs | mean wait [h] | mean bounded slowdown | node utilisation [%] |" in md
    # 2 parts x 2 seeds = 4 units: intervals shown, no warning
    assert "| mean wait | fcfs-bb | 4 |" in md and "n < 3" not in md
    for name in ("s0_forest.png", "s0_wait_ecdf.png", "s0_utilisation.png", "s0_gantt.png",
                 "index.html", "results.csv"):
        assert (tmp_path / "rep" / name).stat().st_size > 1000, name
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep2"),
                 "--reference", "nope"]) == 2


def test_compare_split_plot_draws_the_forest(tmp_path):
    out = tmp_path / "f.png"
    assert main(["compare", "--jobs", "300", "--split", "3", "--policies", "fcfs-bb",
                 "--plot", str(out), "--no-progress"]) == 0
    assert out.stat().st_size > 10_000


def test_report_says_when_a_policy_has_fewer_than_three_units(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "seeds": [0]}))  # 2 parts x 1 seed: n = 2
    assert main(["sweep", str(spec), "--out", str(tmp_path / "r"), "--serial",
                 "--no-progress"]) == 0
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "index.md").read_text()
    assert "| mean wait | fcfs-bb | 2 |" in md and "| n < 3 |" in md
    assert "**Warning:** some policies have fewer than 3 units" in md


def test_report_draws_the_largest_pareto_set_of_a_window_policy(tmp_path):
    import json

    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "policies": ["sjf-bb", "bbsched"], "seeds": [0],
                                    "workloads": {"syn": {"generator": {"name": "kth-like",
                                                                        "n_jobs": 300}}}}))
    assert main(["sweep", str(spec), "--out", str(tmp_path / "r"), "--serial",
                 "--no-progress"]) == 0
    summaries = {s["policy"]: s for s in map(json.loads, (p.read_text() for p in
                                                          (tmp_path / "r").rglob("summary.json")))}
    assert "pareto" not in summaries["sjf-bb"]  # a queue policy has no alternatives
    pareto = summaries["bbsched"]["pareto"]
    alts = pareto["alternatives"]
    assert len(alts) > 1 and sum(a["chosen"] for a in alts) == 1
    assert set(alts[0]["objectives"]) >= {"nodes", "bb"} and pareto["time"] >= 0
    assert main(["report", str(tmp_path / "r"), "--out", str(tmp_path / "rep")]) == 0
    md = (tmp_path / "rep" / "index.md").read_text()
    assert "The largest Pareto set bbsched chose from (syn on kopanski" in md
    assert (tmp_path / "rep" / "s0_pareto.png").stat().st_size > 10_000

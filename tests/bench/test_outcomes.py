"""Decision gaps against schedule outcomes: each audited run against the least-gap run of its
part and seed, and Spearman's rank correlation (on a hand-made sweep store)."""

from __future__ import annotations

import math

import pytest

from bbopt.analysis.store import Store
from bbopt.bench.outcomes import outcome_rows, spearman
from bbopt.bench.report import report
from bbopt.errors import InputError


def _store(tmp_path, runs):
    """``runs``: (part, policy, gap, wait, bounded slowdown) (:func:`_store_of`)."""
    return _store_of(tmp_path, [({"part": part, "policy": policy}, gap, wait, bsld)
                                for part, policy, gap, wait, bsld in runs])


RUNS = [(1, "exact", 0.0, 100.0, 2.0), (1, "a", 0.01, 110.0, 2.2), (1, "b", 0.1, 150.0, 3.0),
        (2, "exact", 0.0, 200.0, 4.0), (2, "a", 0.02, 180.0, 4.0), (2, "b", 0.2, 260.0, 5.0)]


def test_runs_are_measured_against_the_least_gap_run_of_their_part(tmp_path):
    rows = {(r["part"], r["policy"]): r for r in outcome_rows(_store(tmp_path, RUNS))}
    assert set(rows) == {(1, "a"), (1, "b"), (2, "a"), (2, "b")}  # the references are left out
    assert rows[(1, "b")]["mean_wait_ratio"] == pytest.approx(1.5)
    assert rows[(2, "a")]["mean_wait_ratio"] == pytest.approx(0.9)
    assert rows[(2, "b")]["mean_bounded_slowdown_ratio"] == pytest.approx(1.25)
    # gaps 0.01, 0.02, 0.1, 0.2 against wait ratios 1.1, 0.9, 1.5, 1.3: ranks 2,1,4,3 -> 0.6
    assert spearman(list(rows.values()), "mean_wait") == pytest.approx(0.6)


def test_report_adds_the_outcomes_section(tmp_path):
    from bbopt.bench.instances import LIBRARY
    from bbopt.bench.run import run_tier

    tier = tmp_path / "tier"
    tier.mkdir()
    name = next(p for p in sorted((LIBRARY / "small").glob("victims-*.json")))
    (tier / name.name).write_bytes(name.read_bytes())
    run_tier(tier, tmp_path / "bench", budgets=[0.5], seeds=1, backends=["cpsat"], workers=1)
    files = report(tmp_path / "bench", tmp_path / "out", outcomes=_store(tmp_path, RUNS))
    assert tmp_path / "out" / "outcomes.png" in files
    assert "Spearman's rank correlation" in (tmp_path / "out" / "tables.md").read_text()


def test_a_store_without_audits_is_refused(tmp_path):
    runs = [(1, "x", math.nan, 1.0, 1.0)]
    with pytest.raises(InputError, match="no audited runs"):
        outcome_rows(_store(tmp_path, runs))


def _store_of(tmp_path, runs, name="sweep"):
    """``runs``: (params overriding the defaults, gap, wait, bounded slowdown)."""
    store = Store(tmp_path / name)
    for k, (over, gap, wait, bsld) in enumerate(runs):
        params = {"workload": "kth", "part": 1, "platform": "kopanski", "policy": "p",
                  "seed": 0, "budget": None, "execution": "rigid", **over}
        metrics = {"mean_wait": wait, "mean_bounded_slowdown": bsld,
                   "decision_gap_mean": gap, "decisions_audited": 10.0}
        store.write_run(f"h{k}", {"hash": f"h{k}", "sweep": "audit", "params": params,
                                  "metrics": metrics, "provenance": {"hash_inputs": {
                                      "platform": {"nodes": 96, "bb": 480e9}}}}, None)
    return store.root


def test_the_reference_is_named_and_the_runs_after_it_kept(tmp_path):
    # sorted by policy x, y, z: the reference y (gap 0) sits between the two others
    runs = [({"policy": "x"}, 0.3, 30.0, 3.0), ({"policy": "y"}, 0.0, 20.0, 2.0),
            ({"policy": "z"}, 0.1, 10.0, 4.0)]
    rows = outcome_rows(_store_of(tmp_path, runs))
    assert [(r["policy"], r["reference"], r["gap_mean"]) for r in rows] == [
        ("x", "y", 0.3), ("z", "y", 0.1)]
    assert [(r["mean_wait_ratio"], r["mean_bounded_slowdown_ratio"]) for r in rows] == [
        (1.5, 1.5), (0.5, 2.0)]
    assert {k: rows[0][k] for k in ("workload", "part", "platform", "seed")} == {
        "workload": "kth", "part": 1, "platform": "kopanski", "seed": 0}


@pytest.mark.parametrize("key, values", [("workload", ("kth", "sdsc")),
                                         ("platform", ("kopanski", "other")),
                                         ("seed", (0, 1)), ("part", (None, 2))])
def test_each_workload_platform_seed_and_part_has_its_own_reference(tmp_path, key, values):
    u, v = values
    runs = [({key: u, "policy": "e"}, 0.0, 10.0, 1.0), ({key: u, "policy": "h"}, 0.5, 20.0, 1.0),
            ({key: v, "policy": "e"}, 0.2, 40.0, 1.0), ({key: v, "policy": "h"}, 0.1, 10.0, 1.0)]
    rows = outcome_rows(_store_of(tmp_path, runs))
    got = sorted((r["policy"], r["reference"], r["mean_wait_ratio"]) for r in rows)
    # key u: h against e (20 / 10); key v: e against h, whose gap 0.1 is the least (40 / 10)
    assert got == [("e", "h", 4.0), ("h", "e", 2.0)]


def test_a_reference_outcome_of_zero_gives_no_ratio_and_below_one_a_ratio(tmp_path):
    runs = [({"policy": "e"}, 0.0, 0.0, 0.5), ({"policy": "h"}, 0.5, 3.0, 1.5)]
    (row,) = outcome_rows(_store_of(tmp_path, runs))
    assert math.isnan(row["mean_wait_ratio"])
    assert row["mean_bounded_slowdown_ratio"] == pytest.approx(3.0)  # 1.5 / 0.5


def test_the_refusal_names_the_store_and_an_empty_store_is_refused(tmp_path):
    root = _store_of(tmp_path, [({}, math.nan, 1.0, 1.0)])
    with pytest.raises(InputError) as caught:
        outcome_rows(root)
    assert caught.value.reason == ("holds no audited runs (a policy with an audit, e.g. "
                                   "plan-2 with audit=exhaustive)")
    assert caught.value.source == str(root)
    store = Store(tmp_path / "unaudited")  # no run has the metric at all
    store.write_run("h0", {"hash": "h0", "sweep": "s", "params": {"policy": "easy", "seed": 0},
                           "metrics": {"mean_wait": 1.0}, "provenance": {"hash_inputs": {
                               "platform": {"nodes": 96, "bb": 480e9}}}}, None)
    with pytest.raises(InputError, match="no audited runs"):
        outcome_rows(store.root)
    empty = Store(tmp_path / "empty").root
    (empty / "runs").mkdir(parents=True)
    with pytest.raises(InputError, match="no audited runs"):
        outcome_rows(empty)


def _rows(gaps, ratios):
    return [{"policy": "p", "gap_mean": g, "mean_wait_ratio": w} for g, w in
            zip(gaps, ratios, strict=True)]


def test_spearman_needs_three_runs_and_two_gaps_and_two_ratios():
    assert math.isnan(spearman(_rows([0.1, 0.2], [1.0, 2.0]), "mean_wait"))
    assert spearman(_rows([0.1, 0.2, 0.3], [1.0, 3.0, 2.0]), "mean_wait") == pytest.approx(0.5)
    assert spearman(_rows([0.1, 0.1, 0.3], [1.0, 2.0, 3.0]), "mean_wait") == pytest.approx(
        math.sqrt(3) / 2)  # two gaps are enough (tied ranks 1.5, 1.5, 3)
    assert spearman(_rows([0.1, 0.2, 0.3], [1.0, 1.0, 3.0]), "mean_wait") == pytest.approx(
        math.sqrt(3) / 2)
    import warnings

    with warnings.catch_warnings():  # a constant column is answered without scipy's warning
        warnings.simplefilter("error")
        assert math.isnan(spearman(_rows([0.1, 0.1, 0.1], [1.0, 2.0, 3.0]), "mean_wait"))
    assert math.isnan(spearman(_rows([0.1, 0.2, 0.3], [2.0, 2.0, 2.0]), "mean_wait"))


def test_the_markdown_table_by_hand(tmp_path):
    from bbopt.bench.outcomes import outcomes_markdown

    rows = outcome_rows(_store(tmp_path, RUNS))
    # a: gaps 0.01, 0.02, wait ratios 1.1, 0.9, slowdown ratios 1.1, 1.0;
    # b: gaps 0.1, 0.2, wait 1.5, 1.3, slowdown 1.5, 1.25; both correlations 0.6
    assert outcomes_markdown(rows) == "\n".join([
        "| policy | runs | mean decision gap | mean wait ratio | bounded slowdown ratio |",
        "|---|---|---|---|---|",
        "| a | 2 | 1.50e-02 | 1.000 | 1.050 |",
        "| b | 2 | 1.50e-01 | 1.400 | 1.375 |",
        "",
        "Spearman's rank correlation of the mean decision gap with the ratio: mean_wait +0.60, "
        "mean_bounded_slowdown +0.60 (4 runs against the least-gap run of the same part and "
        "seed)."])


def test_the_figure_one_panel_per_outcome(tmp_path):
    from bbopt.bench.outcomes import outcomes_figure

    rows = outcome_rows(_store(tmp_path, RUNS))
    rows.append({**rows[0], "policy": "c", "gap_mean": 0.0})
    fig = outcomes_figure(rows, tmp_path / "o.png")
    assert (tmp_path / "o.png").stat().st_size > 0
    assert fig.get_size_inches().tolist() == [9.0, 3.6]
    assert fig._suptitle.get_text() == ("Decision gaps and schedule outcomes (audited runs; "
                                        "gaps of 0 drawn at 1e-9)")
    assert fig._suptitle.get_fontsize() == 10
    axes = fig.axes
    assert len(axes) == 2
    for ax, metric in zip(axes, ("mean_wait", "mean_bounded_slowdown"), strict=True):
        rho = spearman(rows, metric)
        assert ax.get_title() == f"{metric} (Spearman {rho:+.2f})"
        assert ax.title.get_fontsize() == 9
        assert ax.get_xscale() == "log"
        assert ax.get_xlabel() == "mean relative gap of the run's decisions"
        assert ax.get_ylabel() == f"{metric} / reference's"
        (line,) = ax.get_lines()
        assert list(line.get_ydata()) == [1.0, 1.0] and line.get_color() == "grey"
        assert line.get_linewidth() == 0.8
        legend = ax.get_legend()
        assert [t.get_text() for t in legend.get_texts()] == ["a", "b", "c"]
        assert legend.get_texts()[0].get_fontsize() == 7
        points = {lab.get_text(): c for lab, c in zip(legend.get_texts(), ax.collections,
                                                               strict=True)}
        assert points["c"].get_offsets().tolist() == [[1e-9, rows[0][f"{metric}_ratio"]]]
        assert sorted(points["a"].get_offsets().tolist()) == sorted(
            [r["gap_mean"], r[f"{metric}_ratio"]] for r in rows if r["policy"] == "a")
        assert points["a"].get_sizes().tolist() == [18.0]

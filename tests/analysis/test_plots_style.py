"""The one figure style (bbopt.analysis.plots) and what each figure shows: units, n, intervals
inside the metric's domain, readable titles, legible Gantt charts of long runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bbopt
from bbopt.analysis.frames import to_pandas
from bbopt.analysis.intervals import interval_table
from bbopt.analysis.plots import MIN_N, axis_label, mean_interval, metric_label, run_title
from bbopt.workloads.synthetic import kth_like

pytest.importorskip("matplotlib")
from bbopt.analysis import figures  # noqa: E402


@pytest.fixture(scope="module")
def runs():
    jobs = kth_like(300, seed=2)
    return {p: bbopt.simulate(jobs, bbopt.Platform.kopanski(), p) for p in ("fcfs", "sjf-bb")}


@pytest.mark.parametrize("metric, expected", [
    ("mean_wait", ("mean wait", "h", 1 / 3600)),
    ("p95_wait", ("95th percentile wait", "h", 1 / 3600)),
    ("median_turnaround", ("median turnaround", "h", 1 / 3600)),
    ("mean_bounded_slowdown", ("mean bounded slowdown", "", 1.0)),
    ("node_utilization", ("node utilisation", "%", 100.0)),
    ("makespan", ("makespan", "days", 1 / 86400)),
    ("xio_idle_ratio", ("xio idle ratio", "", 1.0)),
])
def test_metric_labels_and_units(metric, expected):
    assert metric_label(metric) == pytest.approx(expected)


def test_axis_labels_carry_units_and_ratios_carry_none():
    assert axis_label("bb_utilization") == "BB utilisation [%]"
    assert axis_label("mean_bounded_slowdown") == "mean bounded slowdown"
    assert axis_label("mean_wait", "sjf-bb") == "mean wait / sjf-bb's"


def test_run_titles_name_the_scenario_not_its_defaults():
    assert run_title({"workload": "kth", "platform": "kopanski", "budget": "default",
                      "execution": "rigid"}) == "kth on kopanski"
    assert run_title({"workload": "kth", "budget": None, "execution": None}) == "kth"
    assert run_title({"workload": "w", "platform": "p", "budget": "b2", "execution": "rigid",
                      "part": 0, "seed": 1}) == "w on p, budget b2, part 0, seed 1"


def test_mean_interval_below_at_and_above_min_n():
    assert MIN_N == 3
    m, lo, hi = mean_interval(np.array([1.0, 5.0]))
    assert m == 3.0 and np.isnan(lo) and np.isnan(hi)
    m, lo, hi = mean_interval(np.array([1.0, 5.0, 9.0]))
    assert m == 5.0 and 1.0 <= lo < 5.0 < hi <= 9.0
    m, lo, hi = mean_interval(np.array([1.0, 5.0, 9.0, 13.0]))
    assert m == 7.0 and 1.0 <= lo < 7.0 < hi <= 13.0
    assert mean_interval(np.array([1.0, 5.0, 9.0])) == mean_interval(np.array([1.0, 5.0, 9.0]))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=3, max_size=60))
def test_bootstrap_interval_stays_in_the_values_range(values):
    x = np.array(values)
    m, lo, hi = mean_interval(x, n_boot=200)
    eps = 1e-9 * max(1.0, x.max())
    assert x.min() - eps <= lo <= m + eps and m - eps <= hi <= x.max() + eps


def test_comparison_plot_draws_dots_with_intervals_in_hours(runs, tmp_path):
    fig = figures.comparison_plot(runs, tmp_path / "c.png", title="t")
    wait_ax, slow_ax, tail = fig.axes
    assert wait_ax.get_xlabel() == "mean wait [h]"
    assert slow_ax.get_xlabel() == "mean bounded slowdown"
    assert not wait_ax.patches  # no bars
    dots = wait_ax.lines[0].get_xdata()
    means = [bbopt.summarize(r)["mean_wait"] / 3600 for r in runs.values()]
    np.testing.assert_allclose(dots, means)
    labels = [t.get_text() for t in wait_ax.get_yticklabels()]
    waited = [int(to_pandas(r)["wait"].notna().sum()) for r in runs.values()]
    assert waited == [296, 296]  # 300 jobs, 4 of which never fit the platform
    assert labels == ["fcfs  (n=296 jobs)", "sjf-bb  (n=296 jobs)"]
    assert tail.get_ylabel() == "wait [h]"
    assert (tmp_path / "c.png").stat().st_size > 10_000
    figures.close(fig)


def test_forest_plot_shows_n_and_no_interval_below_three_units():
    long = pd.DataFrame({"metric": "mean_wait", "policy": ["r"] * 3 + ["p"] * 3 + ["q"] * 2,
                         "unit": [0, 1, 2, 0, 1, 2, 0, 1], "value": 1.0,
                         "normalised": [1, 1, 1, 0.8, 1.3, 1.1, 0.5, 0.7]})
    fig = figures.forest_plot(interval_table(long), reference="r")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["r  (n=3 units)", "p  (n=3 units)", "q  (n=2 units < 3: no interval)"]
    assert ax.get_xlabel() == "mean wait / r's"
    figures.close(fig)


def test_utilisation_is_one_row_per_run_and_has_no_bb_line_without_bb(runs):
    fig = figures.utilisation_plot(runs, 96, 480e9)
    assert len(fig.axes) == 4 and [len(ax.lines) for ax in fig.axes[::2]] == [2, 2]
    figures.close(fig)
    fig = figures.utilisation_plot({"fcfs": runs["fcfs"]}, 96, 0.0)
    assert len(fig.axes) == 2 and len(fig.axes[0].lines) == 1  # nodes only: no empty BB
    figures.close(fig)


def test_gantt_colours_bb_in_gb_and_windows_long_runs(runs):
    fig = figures.gantt(runs["sjf-bb"], 96, max_jobs=100, title="sjf-bb")
    ax = fig.axes[0]
    assert len(ax.collections[0].get_paths()) == 100
    assert ax.get_title().startswith("sjf-bb: the first 100 of 296 started jobs, days")
    assert fig.axes[1].get_ylabel() == "BB request [GB]"
    figures.close(fig)
    fig = figures.gantt(runs["sjf-bb"], 96, max_jobs=296)  # at the limit: the whole run
    assert len(fig.axes[0].collections[0].get_paths()) == 296 and fig.axes[0].get_title() == ""
    figures.close(fig)


@pytest.mark.parametrize("lo, hi, expected", [
    (2.7, 70.0, [5, 10, 20, 50]),
    (0.3, 9.0, [0.5, 1, 2, 5]),
    (25_000, 500_000, [50_000, 100_000, 200_000, 500_000]),
    (1.0, 200.0, [1, 3, 10, 30, 100]),       # 1-2-5 would give 7 ticks: 1-3 steps
    (1.0, 1000.0, [1, 10, 100, 1000]),       # 1-3 would give 7: powers of ten
])
def test_log_ticks_are_few_plain_numbers(lo, hi, expected):
    from bbopt.analysis.plots import log_ticks, pyplot

    plt = pyplot()
    fig, ax = plt.subplots()
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    log_ticks(ax.xaxis)
    assert list(ax.get_xticks()) == pytest.approx(expected)
    fig.canvas.draw()
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels == [f"{v:,.10g}" for v in expected]  # plain numbers, no 10^k mathtext
    plt.close(fig)

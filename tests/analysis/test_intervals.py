"""Normalised metrics and their three intervals (Kopanski & Rzadca, Section 4.2), on values
computed by hand: each value over the reference's in the same unit, Student's t with n - 1
degrees of freedom and the sample deviation (ddof 1), the geometric mean from the logs of the
positive ratios only, and a seeded percentile bootstrap."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from bbopt.analysis.intervals import (
    bootstrap_interval,
    from_split_table,
    interval_table,
    log_ratio_interval,
    normalise_runs,
    t_interval,
)
from bbopt.errors import InputError

T975_2 = 4.302652729749462   # Student's t, 97.5 % quantile, 2 degrees of freedom
T95_2 = 2.919985580355516    # 95 % quantile, 2 degrees of freedom (a 90 % interval)
T975_1 = 12.706204736174698  # 97.5 % quantile, 1 degree of freedom


def test_t_interval_uses_the_sample_deviation_and_n_minus_one_degrees():
    # 1, 2, 4: mean 7/3, sample variance (16 + 1 + 25) / 9 / 2 = 7/3, half = t * sqrt(7/3 / 3)
    mean, lo, hi = t_interval(np.array([1.0, 2.0, 4.0]))
    half = T975_2 * math.sqrt(7 / 9)
    assert mean == pytest.approx(7 / 3)
    assert lo == pytest.approx(7 / 3 - half)
    assert hi == pytest.approx(7 / 3 + half)
    assert hi - lo == pytest.approx(2 * 3.794583, rel=1e-6)


def test_t_interval_level_sets_the_quantile():
    mean, lo, hi = t_interval(np.array([1.0, 2.0, 4.0]), 0.9)
    assert hi == pytest.approx(7 / 3 + T95_2 * math.sqrt(7 / 9))
    assert lo == pytest.approx(7 / 3 - T95_2 * math.sqrt(7 / 9))


def test_t_interval_ignores_nan_and_needs_two_values_for_a_width():
    mean, lo, hi = t_interval(np.array([3.0, np.nan]))
    assert mean == 3.0 and math.isnan(lo) and math.isnan(hi)
    assert all(math.isnan(v) for v in t_interval(np.array([np.nan])))
    nan3 = t_interval(np.array([], dtype=float))
    assert len(nan3) == 3 and all(math.isnan(v) for v in nan3)
    mean, lo, hi = t_interval(np.array([2.0, np.nan, 4.0]))
    assert mean == 3.0
    assert hi == pytest.approx(3.0 + T975_1 * 1.0)  # sd sqrt(2), / sqrt(2)


def test_log_ratio_interval_is_geometric_and_drops_non_positive_ratios():
    # 0.5 and 2: logs -ln2, +ln2, mean 0 -> geometric mean 1 (the arithmetic mean is 1.25);
    # sd of the logs ln2 * sqrt(2), over sqrt(2): half = t(1) * ln2
    g, lo, hi = log_ratio_interval(np.array([0.5, 2.0, np.nan, 0.0, -1.0]))
    assert g == pytest.approx(1.0)
    assert lo == pytest.approx(math.exp(-T975_1 * math.log(2)))
    assert hi == pytest.approx(math.exp(T975_1 * math.log(2)))
    g, lo, hi = log_ratio_interval(np.array([4.0, 0.0]))
    assert g == pytest.approx(4.0) and math.isnan(lo) and math.isnan(hi)
    assert all(math.isnan(v) for v in log_ratio_interval(np.array([0.0, -2.0])))
    g, lo, hi = log_ratio_interval(np.array([1.0, 4.0, 16.0]), 0.9)
    assert g == pytest.approx(4.0)
    assert hi == pytest.approx(4.0 * math.exp(T95_2 * math.log(4) / math.sqrt(3)))


def test_bootstrap_interval_is_seeded_and_takes_the_level_quantiles():
    x = np.array([1.0, 2.0, 3.0, 10.0])
    a = bootstrap_interval(x, level=0.5, n=400, seed=3)
    assert a == bootstrap_interval(x, level=0.5, n=400, seed=3)
    rng = np.random.default_rng(3)
    means = x[rng.integers(0, 4, size=(400, 4))].mean(axis=1)
    assert a == (float(np.quantile(means, 0.25)), float(np.quantile(means, 0.75)))
    assert a == (2.25, 4.5)
    wide = bootstrap_interval(x, n=400, seed=3)
    assert wide == (float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975)))
    assert bootstrap_interval(x, level=0.5, n=400, seed=4) != a
    lo, hi = bootstrap_interval(np.array([5.0, np.nan]))
    assert math.isnan(lo) and math.isnan(hi)
    assert bootstrap_interval(np.array([2.0, 2.0])) == (2.0, 2.0)
    # the default draw count: 2000 resamples
    rng = np.random.default_rng(0)
    means = x[rng.integers(0, 4, size=(2000, 4))].mean(axis=1)
    assert bootstrap_interval(x) == (float(np.quantile(means, 0.025)),
                                     float(np.quantile(means, 0.975)))


def _runs() -> pd.DataFrame:
    return pd.DataFrame({
        "workload": ["w", "w", "w", "w", "w"],
        "part": [0, 0, 1, 1, 1],
        "policy": ["fcfs", "easy", "fcfs", "easy", "cons"],
        "wait": [10.0, 5.0, 4.0, 8.0, 0.0],
        "util": [0.5, 0.25, 0.0, 0.5, 1.0],
    })


def test_normalise_runs_divides_by_the_reference_in_the_same_unit():
    long = normalise_runs(_runs(), "fcfs", ["wait", "util"])
    assert list(long.columns) == ["workload", "part", "policy", "unit", "metric", "value",
                                  "normalised"]
    wait = long[long["metric"] == "wait"]
    assert wait["normalised"].tolist() == [1.0, 0.5, 1.0, 2.0, 0.0]
    assert wait["unit"].tolist() == ["w|0", "w|0", "w|1", "w|1", "w|1"]
    util = long[long["metric"] == "util"]["normalised"].tolist()
    # the reference's 0 in part 1: no ratio there (nan, not inf)
    assert util[:2] == [1.0, 0.5] and all(math.isnan(v) for v in util[2:])
    assert long["value"].tolist() == [10.0, 5.0, 4.0, 8.0, 0.0, 0.5, 0.25, 0.0, 0.5, 1.0]


def test_normalise_runs_units_named_and_the_first_reference_row_counts():
    t = _runs()
    t["part"] = [0, 0, 0, 0, 0]
    t.loc[2, "wait"] = 20.0  # a second fcfs run in the same unit: the first one is the reference
    long = normalise_runs(t, "fcfs", ["wait"], units=["part"])
    assert long["normalised"].tolist() == [1.0, 0.5, 2.0, 0.8, 0.0]
    assert long["unit"].tolist() == ["0"] * 5
    assert "workload" not in long.columns


def test_normalise_runs_rejects_an_unknown_reference_or_metric():
    with pytest.raises(InputError, match=r"reference policy 'sjf' is not in the results "
                                         r"\(cons, easy, fcfs\)") as e:
        normalise_runs(_runs(), "sjf", ["wait"])
    assert e.value.field == "reference"
    with pytest.raises(InputError, match="unknown metric 'size'") as e:
        normalise_runs(_runs(), "fcfs", ["wait", "size", "x"])
    assert e.value.field == "metrics"


def test_interval_table_one_row_per_metric_and_policy_in_order():
    long = normalise_runs(_runs(), "fcfs", ["wait"])
    tab = interval_table(long, n_boot=200, seed=1)
    assert tab["policy"].tolist() == ["fcfs", "easy", "cons"]
    easy = tab.iloc[1]
    assert easy["n"] == 2 and easy["values"] == [0.5, 2.0]
    assert easy["mean"] == pytest.approx(1.25)
    assert easy["ci_high"] == pytest.approx(1.25 + T975_1 * 0.75)
    assert easy["gmean"] == pytest.approx(1.0)
    assert easy["log_ci_high"] == pytest.approx(math.exp(T975_1 * math.log(2)))
    assert (easy["boot_low"], easy["boot_high"]) == bootstrap_interval(
        np.array([0.5, 2.0]), 0.95, 200, 1)
    assert easy["raw_mean"] == 6.5
    cons = tab.iloc[2]
    assert cons["n"] == 1 and cons["mean"] == 0.0 and math.isnan(cons["gmean"])
    narrow = interval_table(long, level=0.5, n_boot=200, seed=1).iloc[1]
    assert narrow["ci_high"] == pytest.approx(1.25 + 1.0 * 0.75)  # t(0.75, 1) = 1
    assert (narrow["boot_low"], narrow["boot_high"]) == bootstrap_interval(
        np.array([0.5, 2.0]), 0.5, 200, 1)


def test_from_split_table_reads_the_raw_frame():
    raw = pd.DataFrame({"part": [0, 1], "policy": ["a", "a"], "normalised": [1.0, 2.0]})
    summary = pd.DataFrame({"policy": ["a"]})
    summary.attrs["raw"] = raw
    out = from_split_table(summary)
    assert out.columns.tolist() == ["unit", "policy", "normalised"]
    assert out["unit"].tolist() == [0, 1]
    assert from_split_table(raw)["unit"].tolist() == [0, 1]
    with pytest.raises(InputError, match=r"^need compare_split's table \(with attrs\['raw'\]\)$"):
        from_split_table(pd.DataFrame({"policy": ["a"]}))


def test_the_default_seed_is_zero():
    # many distinct means, so two seeds give two intervals
    x = np.arange(1, 30) ** 1.5
    zero = bootstrap_interval(x)
    assert zero == bootstrap_interval(x, seed=0) != bootstrap_interval(x, seed=1)
    long = pd.DataFrame({"policy": ["a"] * x.size, "metric": ["m"] * x.size,
                         "value": x, "normalised": x})
    row = interval_table(long).iloc[0]
    assert (row["boot_low"], row["boot_high"]) == zero
    assert row.index.tolist() == ["metric", "policy", "n", "mean", "ci_low", "ci_high", "gmean",
                                  "log_ci_low", "log_ci_high", "boot_low", "boot_high",
                                  "values", "raw_mean"]
    other = interval_table(long, seed=1).iloc[0]
    assert (other["boot_low"], other["boot_high"]) == bootstrap_interval(x, seed=1)


def test_interval_table_passes_its_level_to_the_log_ratio_interval():
    long = normalise_runs(_runs(), "fcfs", ["wait"])
    narrow = interval_table(long, level=0.5, n_boot=200, seed=1).iloc[1]
    assert narrow["log_ci_high"] == pytest.approx(2.0)  # exp(t(0.75, 1) = 1 x ln 2)
    assert narrow["log_ci_low"] == pytest.approx(0.5)


def test_normalise_runs_keeps_a_table_s_own_index_and_numbers_its_rows():
    t = _runs()
    t.index = [10, 11, 12, 13, 14]
    t["wait"] = [10, 5, 4, 8, 0]  # integers: the values come out as floats
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the reference's 0 divides without a warning
        long = normalise_runs(t, "fcfs", ["wait", "util"])
    assert long.index.tolist() == list(range(10))
    assert long["value"].dtype == float
    assert long["normalised"].tolist()[:5] == [1.0, 0.5, 1.0, 2.0, 0.0]


def test_without_unit_columns_every_run_is_one_unit():
    t = pd.DataFrame({"policy": ["r", "p", "p"], "wait": [4.0, 2.0, 8.0]})
    long = normalise_runs(t, "r", ["wait"])
    assert long["unit"].tolist() == ["", "", ""]
    assert long["normalised"].tolist() == [1.0, 0.5, 2.0]


def test_integer_metrics_come_out_as_float_values():
    t = _runs()
    t["wait"] = [10, 5, 4, 8, 0]
    long = normalise_runs(t, "fcfs", ["wait"])
    assert long["value"].dtype == float and long["value"].tolist()[0] == 10.0


def test_a_policy_missing_from_a_metric_gets_an_empty_row_quietly():
    long = pd.DataFrame({"policy": ["a", "b"], "metric": ["m1", "m2"], "value": [1.0, 2.0],
                         "normalised": [1.0, 1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tab = interval_table(long, n_boot=10)
    empty = tab[(tab["metric"] == "m1") & (tab["policy"] == "b")].iloc[0]
    assert empty["n"] == 0 and math.isnan(empty["raw_mean"]) and math.isnan(empty["mean"])
    assert len(tab) == 4

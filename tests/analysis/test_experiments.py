"""Trace splitting and the normalised per-part comparison (Kopanski & Rzadca, Section 4.2)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.analysis.experiments import (
    compare_split,
    confidence_interval,
    normalise,
    split_trace,
    summarise,
)
from bbopt.core import Job, Platform
from bbopt.errors import InputError
from bbopt.workloads.synthetic import kth_like


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), min_size=1, max_size=60),
       st.integers(1, 20))
def test_split_is_a_partition_of_equal_duration_intervals(submits, n):
    jobs = [Job(str(k), s, 10.0, 5.0) for k, s in enumerate(submits)]
    parts = split_trace(jobs, n, rebase=False)
    assert len(parts) == n
    assert sorted(j.id for p in parts for j in p) == sorted(j.id for j in jobs)
    t0, t1 = min(submits), max(submits)
    length = (t1 - t0) / n
    for k, part in enumerate(parts):
        for j in part:
            if length > 0:
                assert t0 + k * length - 1e-6 <= j.submit <= t0 + (k + 1) * length + 1e-6
    rebased = split_trace(jobs, n)
    for part_r, part in zip(rebased, parts, strict=True):
        for a, b in zip(part_r, part, strict=True):
            assert a.id == b.id and 0 <= a.submit <= b.submit


def test_split_rejects_bad_counts():
    for bad in (0, -3, 2.5):
        with pytest.raises(InputError, match="positive integer"):
            split_trace([Job("1", 0, 1)], bad)
    with pytest.raises(InputError, match="empty"):
        split_trace([], 4)


def test_confidence_interval_is_student_t():
    mean, lo, hi = confidence_interval([1.0, 2.0, 3.0, 4.0])
    half = 3.182446305284263 * np.std([1, 2, 3, 4], ddof=1) / 2
    assert (mean, lo, hi) == pytest.approx((2.5, 2.5 - half, 2.5 + half))
    assert math.isnan(confidence_interval([1.0])[1])
    assert confidence_interval([1.0, math.nan, 3.0])[0] == 2.0


def test_normalisation_by_the_reference_and_zero_reference():
    raw = pd.DataFrame([
        {"part": 0, "policy": "ref", "metric": "m", "value": 2.0},
        {"part": 0, "policy": "a", "metric": "m", "value": 3.0},
        {"part": 1, "policy": "ref", "metric": "m", "value": 0.0},
        {"part": 1, "policy": "a", "metric": "m", "value": 1.0},
    ])
    out = normalise(raw, "ref")
    assert out["normalised"].tolist()[:2] == [1.0, 1.5]
    assert math.isnan(out["normalised"].tolist()[3])
    table = summarise(out)
    row = table[table["policy"] == "a"].iloc[0]
    assert row["mean"] == 1.5 and row["n_parts"] == 2 and row["n_valid"] == 1
    with pytest.raises(InputError, match="reference"):
        normalise(raw, "nope")


def test_compare_split_runs_every_policy_on_every_part():
    jobs = kth_like(600, seed=2)
    table = compare_split(jobs, Platform.kopanski(), ["fcfs-bb", "filler"], n_parts=3,
                          reference="sjf-bb")
    assert list(dict.fromkeys(table["policy"])) == ["sjf-bb", "fcfs-bb", "filler"]
    assert set(table["metric"]) == {"mean_wait", "mean_bounded_slowdown"}
    ref = table[table["policy"] == "sjf-bb"]
    assert (ref[["part0", "part1", "part2"]].to_numpy() == 1.0).all()
    raw = table.attrs["raw"]
    assert len(raw) == 3 * 3 * 2 and sum(table.attrs["part_sizes"]) == 600
    for _, row in table.iterrows():
        if row["n_valid"] >= 2:
            assert row["ci_low"] <= row["mean"] <= row["ci_high"]


def test_cli_compare_split(capsys):
    from bbopt.cli import main

    assert main(["compare", "--jobs", "300", "--split", "2", "--policies", "fcfs-bb",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "normalised by sjf-bb" in out and "95% CI" in out and "fcfs-bb" in out
    assert main(["compare", "--jobs", "300", "--split", "2", "--policies", "fcfs-bb",
                 "--reference", "nope", "--no-progress"]) == 2
    assert "unknown policy" in capsys.readouterr().err


def test_split_with_fixed_length_drops_the_tail():
    from bbopt import Job
    from bbopt.analysis.experiments import split_trace

    jobs = [Job(str(k), float(t), 10.0) for k, t in enumerate([0, 5, 10, 19, 20, 31])]
    parts = split_trace(jobs, 2, length=10.0)
    assert [[j.id for j in p] for p in parts] == [["0", "1"], ["2", "3"]]
    assert [j.submit for j in parts[1]] == [0.0, 9.0]

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
    store = Store(tmp_path / "sweep")
    for k, (part, policy, gap, wait, bsld) in enumerate(runs):
        params = {"workload": "kth", "part": part, "platform": "kopanski", "policy": policy,
                  "seed": 0, "budget": None, "execution": "rigid"}
        metrics = {"mean_wait": wait, "mean_bounded_slowdown": bsld,
                   "decision_gap_mean": gap, "decisions_audited": 10.0}
        store.write_run(f"h{k}", {"hash": f"h{k}", "sweep": "audit", "params": params,
                                  "metrics": metrics, "provenance": {"hash_inputs": {
                                      "platform": {"nodes": 96, "bb": 480e9}}}}, None)
    return store.root


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

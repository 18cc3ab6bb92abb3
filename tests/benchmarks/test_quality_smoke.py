"""The quality suite's outcome sweep (``benchmarks/quality/audit.yaml``: plan-2 decisions
audited by the exhaustive search) runs in its quick variant and relates each run's mean
decision gap to its waits, as ``bbopt bench report --outcomes`` reads it."""

from __future__ import annotations

from pathlib import Path

import pytest

from bbopt.analysis.sweep_spec import load_spec
from bbopt.bench.outcomes import outcome_rows
from bbopt.cli import main
from tests._workload_data import KTH_SWF, data_file

AUDIT = Path(__file__).resolve().parents[2] / "benchmarks" / "quality" / "audit.yaml"


def test_the_audit_grid_is_three_parts_four_searches_two_seeds(monkeypatch):
    monkeypatch.setenv("BBOPT_DATA", str(data_file(KTH_SWF).parent))
    assert len(load_spec(AUDIT).policies) == 4 and len(_tasks(quick=False)) == 3 * 4 * 2
    assert len(_tasks(quick=True)) == 2


def _tasks(quick: bool):
    from bbopt.analysis.sweep import plan

    return plan(load_spec(AUDIT, quick=quick))


@pytest.mark.slow
def test_the_audit_quick_sweep_gives_outcome_rows(tmp_path, monkeypatch):
    monkeypatch.setenv("BBOPT_DATA", str(data_file(KTH_SWF).parent))
    out = tmp_path / "audit"
    assert main(["sweep", str(AUDIT), "--quick", "--serial", "--no-progress",
                 "--out", str(out)]) == 0
    rows = outcome_rows(out)
    assert len(rows) == 1  # the shortest search against the exact plans of the same part
    (row,) = rows
    assert row["policy"] == "plan-2-t1" and row["reference"] == "plan-2-exact"
    assert row["gap_mean"] >= 0.0 and row["mean_wait_ratio"] > 0

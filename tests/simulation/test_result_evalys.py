"""bbopt's jobs.csv loads in evalys (Batsim's analysis package) when the [interop] extra is
installed; skipped otherwise."""

from __future__ import annotations

from pathlib import Path

import pytest

from bbopt.analysis.metrics import summarize
from bbopt.core import Platform
from bbopt.simulation import simulate
from bbopt.workloads.synthetic import kth_like


def test_evalys_reads_jobs_csv_and_computes_utilisation(tmp_path: Path):
    evalys_jobset = pytest.importorskip("evalys.jobset")
    jobs = kth_like(200, seed=3)
    platform = Platform.kopanski()
    result = simulate(jobs, platform, "fcfs-bb")
    path = result.to_csv(tmp_path / "jobs.csv")
    js = evalys_jobset.JobSet.from_csv(str(path), resource_bounds=(0, platform.nodes - 1))
    assert len(js.df) == len(jobs)
    util = js.utilisation  # a step function of busy resources over time
    assert 0 < util["load"].max() <= platform.nodes
    begin = min(j.submit for j in jobs)
    end = max(result.end)
    mean = js.mean_utilisation(begin_time=begin, end_time=end)
    # evalys's mean busy resources equals bbopt's node utilisation times the platform size
    assert mean == pytest.approx(summarize(result)["node_utilization"] * platform.nodes, rel=1e-3)

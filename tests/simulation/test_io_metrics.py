"""Herbein et al.'s run metrics (HPDC 2016, Sections 4.4 and 5) pinned on a hand-worked run
whose values separate each formula from its plausible variants: system efficiency weighted by
node-time (not a mean of per-job shares, not a sum over jobs unweighted by nodes), the
interference factor I = actual / requested rate, and the interfered share of compute node-time."""

from __future__ import annotations

import pytest

from bbopt import Job, simulate
from bbopt.core import MB
from bbopt.simulation.io_metrics import io_summary, per_job_io
from bbopt.simulation.io_model import IOContention


def _figure3_and_a_quiet_job(platform):
    """Job A: Herbein's Figure 3 job (3 nodes at 192 MB/s, two under one 256 MB/s switch), I =
    128/192 = 2/3 (the 384 MB/s network switch carries its 3 x 128), its 100 s of work take
    150 s. Job B: 1 node, no I/O, 50 s, I = 1."""
    jobs = [Job("A", 0, walltime=1000, runtime=100, nodes=3, bandwidth=192 * MB),
            Job("B", 0, walltime=1000, runtime=50, nodes=1)]
    model = IOContention()
    res = simulate(jobs, platform, "fcfs", execution=model)
    return res, model


def test_interference_factor_is_actual_over_requested_rate(io_tree_platform):
    res, model = _figure3_and_a_quiet_job(io_tree_platform)
    # I = 128/192: A's 100 s of computation last 100 / I = 150 s (not 100 x I, nor 100 + 1/I)
    assert res.end == pytest.approx([150.0, 50.0])
    rows = {r["job_id"]: r for r in per_job_io(res, model)}
    assert rows["A"]["compute_share"] == pytest.approx(2 / 3)
    assert rows["B"]["compute_share"] == pytest.approx(1.0)


def test_system_efficiency_weights_jobs_by_node_time(io_tree_platform):
    res, model = _figure3_and_a_quiet_job(io_tree_platform)
    s = io_summary(res, model)
    # sum(nodes x computed) / sum(nodes x elapsed) = (3 x 100 + 50) / (3 x 150 + 50) = 0.7;
    # a mean of per-job shares gives (2/3 + 1) / 2 = 0.833, a sum unweighted by nodes
    # 150 / 200 = 0.75
    assert s["system_efficiency"] == pytest.approx(0.7)
    assert s["compute_share_min"] == pytest.approx(2 / 3)
    assert s["compute_share_max"] == pytest.approx(1.0)
    # compute node-time with I < 1 over all compute node-time: 3 x 150 / (3 x 150 + 50) = 0.9
    # (unweighted by nodes: 150 / 200 = 0.75)
    assert s["interfered_node_time_share"] == pytest.approx(0.9)
    # wall time while some computing job has I < 1 over wall time while some job computes
    assert s["interfered_wall_share"] == pytest.approx(1.0)
    assert s["mean_turnaround"] == pytest.approx(100.0)

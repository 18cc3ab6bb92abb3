"""Herbein et al.'s run metrics (HPDC 2016, Sections 4.4 and 5) pinned on a hand-worked run
whose values separate each formula from its plausible variants: system efficiency weighted by
node-time (not a mean of per-job shares, not a sum over jobs unweighted by nodes), the
interference factor I = actual / requested rate, and the interfered share of compute node-time."""

from __future__ import annotations

import math

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


class _Model:
    """A fluid model's record, made by hand: per-job stats, contended and busy wall time."""

    PHASE_NAMES = ("stage_in", "compute")

    def __init__(self, stats, contended=0.0, busy=0.0):
        self.stats, self.contended, self.busy = stats, contended, busy

    def job_stats(self):
        return self.stats

    def contended_time(self):
        return self.contended, self.busy


def _stats(elapsed, computed, compute, interfered, stage_in=0.0):
    return {"elapsed": elapsed, "computed": computed, "compute": compute,
            "interfered": interfered, "stage_in": stage_in}


def _record(states, starts, ends, decision_times=()):
    from bbopt.core import Platform
    from bbopt.simulation.result import SimulationResult

    jobs = [Job("a", 0, 100, 100, 2), Job("b", 5, 10, 10, 1), Job("c", 10, 50, 50, 3),
            Job("d", 0, 40, 40, 1), Job("e", 0, 10, 10, 4)][:len(states)]
    return SimulationResult(jobs, Platform(8), "io-fcfs", start=list(starts), end=list(ends),
                            state=list(states), allocation=[()] * len(states),
                            decision_times=list(decision_times))


def test_io_summary_by_hand_weights_by_nodes_and_counts_only_jobs_that_ran():
    """a (2 nodes): 100 s elapsed, 50 computing, 80 in compute phases of which 40 interfered;
    b (1 node, killed): 10 of 10; c (3 nodes): a zero-length run (share 1); d (1 node): 40 s
    elapsed, 36 computed; e: rejected (its stats, if any, not counted)."""
    stats = {0: _stats(100.0, 50.0, 80.0, 40.0, 3.0), 1: _stats(10.0, 10.0, 10.0, 0.0, 1.0),
             2: _stats(0.0, 0.0, 0.0, 0.0), 3: _stats(40.0, 36.0, 40.0, 10.0, 2.0),
             4: _stats(99.0, 1.0, 99.0, 99.0)}
    res = _record(["finished", "killed", "finished", "finished", "rejected"],
                  [0.0, 5.0, 10.0, 0.0, math.nan], [100.0, 15.0, 10.0, 40.0, math.nan],
                  decision_times=[0.4, 0.1, 0.3, 0.2])
    s = io_summary(res, _Model(stats, contended=30.0, busy=120.0))
    assert s["jobs_measured"] == 4.0
    # (2 x 50 + 10 + 0 + 36) / (2 x 100 + 10 + 0 + 40) = 146 / 250
    assert s["system_efficiency"] == pytest.approx(146 / 250)
    # shares 0.5, 1, 1 (no elapsed time), 0.9: the 5th percentile interpolates 0.5 -> 0.9
    assert s["compute_share_min"] == 0.5 and s["compute_share_max"] == 1.0
    assert s["compute_share_p05"] == pytest.approx(0.5 + 0.15 * 0.4)
    assert s["compute_share_median"] == pytest.approx(0.95)
    # (2 x 40 + 10) / (2 x 80 + 10 + 40) = 90 / 210
    assert s["interfered_node_time_share"] == pytest.approx(90 / 210)
    assert s["overran_walltime"] == 0.0
    assert s["mean_turnaround"] == pytest.approx((100 + 10 + 0 + 40) / 4)
    assert s["mean_stage_in_time"] == pytest.approx(6 / 4)
    assert s["mean_compute_time"] == pytest.approx((80 + 10 + 0 + 40) / 4)
    assert s["interfered_wall_share"] == pytest.approx(0.25)
    assert (s["decision_time_p50"], s["decision_time_max"]) == (pytest.approx(0.25), 0.4)
    assert s["decision_time_p75"] == pytest.approx(0.325)
    assert s["decision_time_p95"] == pytest.approx(0.385)
    rows = per_job_io(res, _Model(stats))
    assert [r["job_id"] for r in rows] == ["a", "b", "c", "d", "e"]
    assert [r["compute_share"] for r in rows] == [0.5, 1.0, 1.0, 0.9, 1 / 99]
    assert rows[0]["nodes"] == 2 and rows[0]["elapsed"] == 100.0


@pytest.mark.parametrize("elapsed,overran", [(100.0, 0.0), (100.0 * (1 + 0.5e-9), 0.0),
                                             (100.0 * (1 + 2e-9), 1.0), (101.0, 1.0)])
def test_a_run_past_its_walltime_counts_beyond_a_relative_tolerance_of_1e9(elapsed, overran):
    res = _record(["finished"], [0.0], [elapsed])
    s = io_summary(res, _Model({0: _stats(elapsed, elapsed, elapsed, 0.0)}))
    assert s["overran_walltime"] == overran


def test_a_run_without_measured_time_or_decisions():
    """Only zero-length runs: efficiency 1, no interfered share; no busy time: 0; no decisions:
    no decision-time keys; no job measured: only the count and the wall share."""
    res = _record(["finished", "finished"], [0.0, 5.0], [0.0, 5.0])
    s = io_summary(res, _Model({0: _stats(0.0, 0.0, 0.0, 0.0), 1: _stats(0.0, 0.0, 0.0, 0.0)}))
    assert s["system_efficiency"] == 1.0 and s["interfered_node_time_share"] == 0.0
    assert s["interfered_wall_share"] == 0.0
    assert not any(key.startswith("decision_time") for key in s)
    empty = io_summary(_record(["rejected"], [math.nan], [math.nan]), _Model({}, 5.0, 10.0))
    assert empty == {"jobs_measured": 0.0, "interfered_wall_share": 0.5}


def test_runs_under_a_second_are_measured_too():
    """Half a second elapsed, a quarter computing, a busy half second a quarter contended: the
    shares are ratios whatever the scale (no cut at one second)."""
    res = _record(["finished"], [0.0], [0.5])
    stats = {0: _stats(0.5, 0.25, 0.5, 0.0)}
    s = io_summary(res, _Model(stats, contended=0.25, busy=0.5))
    assert s["system_efficiency"] == 0.5 and s["compute_share_min"] == 0.5
    assert s["interfered_wall_share"] == 0.5
    assert per_job_io(res, _Model(stats))[0]["compute_share"] == 0.5


def test_a_run_exactly_at_the_overrun_tolerance_is_not_counted():
    elapsed = 100.0 * (1 + 1e-9)
    res = _record(["finished"], [0.0], [elapsed])
    s = io_summary(res, _Model({0: _stats(elapsed, elapsed, elapsed, 0.0)}))
    assert s["overran_walltime"] == 0.0


def test_jobs_without_stats_are_skipped_not_the_end_of_the_list():
    res = _record(["finished", "rejected", "finished"], [0.0, math.nan, 10.0],
                  [100.0, math.nan, 60.0])
    stats = {0: _stats(100.0, 50.0, 100.0, 0.0), 2: _stats(50.0, 50.0, 50.0, 0.0)}
    assert [r["job_id"] for r in per_job_io(res, _Model(stats))] == ["a", "c"]


def test_a_zero_length_run_raises_no_numpy_warning():
    import warnings

    res = _record(["finished"], [0.0], [0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = io_summary(res, _Model({0: _stats(0.0, 0.0, 0.0, 0.0)}))
    assert s["compute_share_min"] == 1.0

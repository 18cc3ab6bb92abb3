"""The metrics' formulas on values that tell them apart from their plausible variants (a bound
of 10 s instead of Kopanski & Rzadca's ten minutes, a missing floor of 1, a factor of nodes), at
their limits (zero-length jobs, a measurement interval's ends, an empty interval) and the
quantiles on arrays large enough that numpy's partial sort leaves them unsorted.

Per-job and per-run metrics on a schedule computed by hand."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from bbopt import simulate
from bbopt.analysis.metrics import _median, _percentile, per_job, summarize
from bbopt.core import Job, JobState, Platform, SolveStats, Status
from bbopt.simulation.result import BSLD_BOUND, SimulationResult

F, K, R = JobState.FINISHED, JobState.KILLED, JobState.REJECTED


def _result(rows, platform: Platform | None = None, allocation=None, decision_times=(),
            stats=()) -> SimulationResult:
    """rows: (submit, start, end, state[, nodes, bb, ssd])."""
    jobs, start, end, state = [], [], [], []
    for k, row in enumerate(rows):
        submit, s, e, st, *rest = row
        nodes, bb, ssd = (rest + [1, 0.0, 0.0][len(rest):])
        jobs.append(Job(f"j{k}", submit, 1e6, 1e6, nodes=nodes, bb=bb, ssd=ssd))
        start.append(s)
        end.append(e)
        state.append(st)
    res = SimulationResult(jobs, platform or Platform(4, 10.0), "test", start=start, end=end,
                           state=state, allocation=allocation or [()] * len(jobs),
                           decision_times=list(decision_times), decision_stats=list(stats))
    return res


def test_the_bounded_slowdown_bound_is_ten_minutes_on_the_execution_time():
    assert BSLD_BOUND == 600.0
    # executions 599, 600, 601 s, each waiting 1200 s: turnaround / max(execution, 600)
    res = _result([(0, 1200, 1799, F), (0, 1200, 1800, F), (0, 1200, 1801, F)])
    got = per_job(res)["bounded_slowdown"]
    assert got.tolist() == [1799 / 600, 1800 / 600, 1801 / 601]


def test_bounded_slowdown_is_floored_at_one_and_slowdown_bounded_at_one_second():
    # a: 300 s without waiting: 300 / 600 = 0.5, floored to 1 (a bound of 10 s would give 1 too,
    # so b tells them apart: 100 s after 900 s of waiting is 1000 / 600, not 1000 / 100)
    res = _result([(0, 0, 300, F), (0, 900, 1000, F), (0, 10, 11.5, F), (0, 4, 4.5, F)])
    m = per_job(res)
    assert m["bounded_slowdown"].tolist() == [1.0, 1000 / 600, 1.0, 1.0]
    # slowdown divides by max(execution, 1 s): 1.5 s counts as 1.5 s, 0.5 s as 1 s
    assert m["slowdown"].tolist() == [1.0, 10.0, 11.5 / 1.5, 4.5]


def test_per_job_reads_the_result_itself_and_keeps_only_jobs_that_ran():
    res = _result([(0, 0, 10, F), (0, 5, 5, R), (2, 4, 8, K)])
    m = per_job(res)
    assert m["wait"].tolist() == [0.0, 2.0]
    assert m["execution"].tolist() == [10.0, 4.0]
    assert m["turnaround"].tolist() == [10.0, 6.0]
    assert m["stretch"].tolist() == [1.0, 1.5]
    assert m["submit"].tolist() == [0.0, 2.0] and m["end"].tolist() == [10.0, 8.0]


def test_stretch_of_short_and_zero_length_jobs():
    # 0.5 s of execution after 1.5 s of waiting: stretch 4 (turnaround / execution, no bound);
    # zero-length jobs have no stretch, and computing it warns of nothing
    res = _result([(0, 1.5, 2.0, F), (0, 3, 3, F), (0, 0, 0, F)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = per_job(res)
    assert m["stretch"][0] == 4.0
    assert np.isnan(m["stretch"][1]) and np.isnan(m["stretch"][2])
    s = summarize(res)
    assert s["mean_stretch"] == 4.0 and s["max_stretch"] == 4.0


def test_quantile_rows_are_the_median_p95_and_max():
    # 101 jobs waiting 0..100 s: median 50, p95 95 (not 96), max 100
    res = _result([(0, w, w + 10, F) for w in range(101)])
    s = summarize(res)
    assert (s["median_wait"], s["p95_wait"], s["max_wait"]) == (50.0, 95.0, 100.0)
    assert s["mean_wait"] == 50.0


def test_measurement_interval_takes_submissions_from_its_start_up_to_not_its_end():
    # jobs submitted at 10 (the interval's start), 20 (inside) and 30 (its end)
    res = _result([(10, 10, 11, F), (20, 22, 23, F), (30, 34, 35, F)])
    s = summarize(res, interval=(10, 30))
    assert s["jobs"] == 2.0 and s["finished"] == 2.0
    assert s["mean_wait"] == 1.0 and s["max_wait"] == 2.0


def test_utilisation_counts_only_what_is_held_inside_the_interval():
    # a ends before the interval: it holds nothing in it (not a negative time, not one second);
    # b runs 2 nodes from 100 to 200 inside (100, 300)
    res = _result([(0, 0, 50, F, 4, 10.0), (100, 100, 200, F, 2, 5.0)])
    s = summarize(res, interval=(100, 300))
    assert s["node_utilization"] == 2 * 100 / (4 * 200)
    assert s["bb_utilization"] == 5 * 100 / (10 * 200)


def test_utilisation_over_an_interval_shorter_than_a_second():
    res = _result([(0, 0, 0.25, F, 2, 0.0)])
    s = summarize(res, interval=(0, 0.5))
    assert s["node_utilization"] == 2 * 0.25 / (4 * 0.5)


def test_bb_utilisation_on_a_one_byte_burst_buffer_and_none_without_one():
    res = _result([(0, 0, 10, F, 1, 1.0)], platform=Platform(1, 1.0))
    assert summarize(res)["bb_utilization"] == 1.0
    res = _result([(0, 0, 10, F, 1, 0.0)], platform=Platform(1, 0.0))
    assert math.isnan(summarize(res)["bb_utilization"])


def test_an_empty_interval_of_jobs_has_nan_statistics():
    res = _result([(0, 0, 10, F)])
    s = summarize(res, interval=(100, 200))
    assert s["jobs"] == 0.0
    for stat in ("mean", "median", "p95", "max"):
        assert math.isnan(s[f"{stat}_wait"])


def test_an_empty_interval_is_refused_naming_it():
    from bbopt.errors import InputError

    res = _result([(0, 0, 10, F)])
    with pytest.raises(InputError, match=r"empty measurement interval \(5.0, 5.0\)") as err:
        summarize(res, interval=(5, 5))
    assert err.value.field == "interval"


def test_counts_of_states_over_the_whole_run_and_an_interval():
    res = _result([(0, 0, 10, F), (1, 1, 1, R), (2, 2, 5, K), (50, 50, 50, R)])
    s = summarize(res)
    assert (s["jobs"], s["finished"], s["killed"], s["rejected"]) == (4.0, 1.0, 1.0, 2.0)
    s = summarize(res, interval=(1, 10))
    assert (s["jobs"], s["finished"], s["killed"], s["rejected"]) == (2.0, 0.0, 1.0, 1.0)


def test_makespan_runs_from_the_first_submission_to_the_last_end():
    res = _result([(100, 150, 400, F, 2), (120, 130, 300, F, 1)])
    s = summarize(res)
    assert s["makespan"] == 300.0
    assert s["node_utilization"] == (2 * 250 + 1 * 170) / (4 * 300)


def test_a_run_where_nothing_ran_has_no_makespan_or_utilisation():
    s = summarize(_result([(0, 0, 0, R)]))
    assert s["makespan"] == 0.0
    assert math.isnan(s["node_utilization"]) and math.isnan(s["bb_utilization"])


def test_decision_time_rows():
    res = _result([(0, 0, 10, F)], decision_times=[float(t) for t in range(101)])
    res.wall_time = 2.5
    s = summarize(res)
    assert s["decisions"] == 101.0
    assert (s["decision_time_mean"], s["decision_time_p50"], s["decision_time_p95"],
            s["decision_time_max"]) == (50.0, 50.0, 95.0, 100.0)
    assert s["simulation_wall_time"] == 2.5


def test_decision_gap_rows_tell_the_optimal_share_at_its_tolerance():
    gaps = [0.0, 1e-9, 2e-9] + [k / 200 for k in range(1, 99)]
    stats = [SolveStats("cpsat", Status.OPTIMAL, audited=True, gap=g) for g in gaps]
    stats.append(SolveStats("greedy", Status.FALLBACK, audited=True, gap=None))
    s = summarize(_result([(0, 0, 10, F)], stats=stats))
    assert s["decisions_fallback"] == 1.0 and s["decisions_audited"] == 101.0
    assert s["decisions_optimal_share"] == 2 / 101  # 0 and 1e-9 count as optimal, 2e-9 not
    assert s["decision_gap_max"] == 98 / 200
    assert s["decision_gap_p95"] == float(np.percentile(np.asarray(gaps), 95))
    assert s["decision_gap_p95"] != float(np.percentile(np.asarray(gaps), 96))
    assert s["decision_gap_mean"] == float(np.mean(gaps))


def test_ssd_usage_and_waste_on_small_numbers():
    # node SSDs 3, 5 and 8 B; a (2 nodes x 2 B, on nodes 0 and 1, 10-20 s) and b (1 node x 8 B on
    # node 2, 10-30 s), after a rejected job listed first; span: first submission at 5, last end
    # at 30
    platform = Platform(3, 0.0, node_ssd=(3.0, 5.0, 8.0))
    res = _result([(5, 5, 5, R, 1, 0.0, 9.0), (5, 10, 20, F, 2, 0.0, 2.0),
                   (6, 10, 30, F, 1, 0.0, 8.0)], platform=platform,
                  allocation=[(), (0, 1), (2,)])
    s = summarize(res)
    total = 16.0 * 25
    assert s["ssd_utilization"] == (2 * 2 * 10 + 8 * 1 * 20) / total
    assert s["ssd_waste"] == ((3 + 5 - 2 * 2) * 10 + 0.0) / total


def test_ssd_usage_over_a_run_shorter_than_a_second():
    res = _result([(0, 0, 0.5, F, 1, 0.0, 1.0)], platform=Platform(2, 0.0, node_ssd=(1.0, 1.0)),
                  allocation=[(0,)])
    s = summarize(res)
    assert s["ssd_utilization"] == 1.0 * 0.5 / (2.0 * 0.5)
    assert s["ssd_waste"] == 0.0


@pytest.mark.parametrize("ssd", [(0.0, 0.0), (0.25, 0.25)])
def test_ssd_usage_on_empty_or_tiny_ssds(ssd):
    res = _result([(0, 0, 1, F)], platform=Platform(2, 0.0, node_ssd=ssd))
    s = summarize(res)
    if sum(ssd) == 0:
        assert math.isnan(s["ssd_utilization"]) and math.isnan(s["ssd_waste"])
    else:
        assert s["ssd_utilization"] == 0.0 and s["ssd_waste"] == 0.0


def _shuffled(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).permutation(np.arange(n, dtype=float) * 1.5)


@pytest.mark.parametrize("n", [40, 41, 100, 1000])
def test_median_of_arrays_numpy_leaves_unsorted(n):
    for seed in range(5):
        values = _shuffled(n, seed)
        assert _median(values) == float(np.median(values))


def test_median_of_nothing_is_nan():
    assert math.isnan(_median(np.array([])))


@pytest.mark.parametrize("q", [50, 90, 95, 99, 100])
def test_percentile_of_arrays_numpy_leaves_unsorted(q):
    for seed in range(5):
        values = _shuffled(1000, seed)
        assert _percentile(values, q) == float(np.percentile(values, q))


def test_percentile_halfway_interpolates_from_the_upper_value_as_numpy_does():
    # at weight 0.5 numpy computes b - (b - a) * 0.5, which differs in the last bit from
    # a + (b - a) * 0.5 on these two values
    values = np.array([-995.7878932977786, 524.5601649158839])
    assert _percentile(values, 50) == float(np.percentile(values, 50)) == -235.61386419094742


def test_metrics_by_hand():
    # 2 nodes. a: 0-100 on 2 nodes. b (submitted 10, 1 node, runs 1000 s) waits until 100.
    jobs = [Job("a", 0, 100, 100, 2, 5.0), Job("b", 10, 2000, 1000, 1, 0.0)]
    res = simulate(jobs, Platform(2, 10.0), "fcfs")
    m = summarize(res)
    assert res.start == [0, 100] and res.end == [100, 1100]
    assert m["mean_wait"] == pytest.approx((0 + 90) / 2)
    assert m["mean_turnaround"] == pytest.approx((100 + 1090) / 2)
    # bounded slowdown: a: max(100/600, 1) = 1; b: 1090/1000
    assert m["mean_bounded_slowdown"] == pytest.approx((1 + 1.09) / 2)
    assert m["mean_slowdown"] == pytest.approx((1 + 1.09) / 2)
    assert m["makespan"] == 1100
    assert m["node_utilization"] == pytest.approx((2 * 100 + 1 * 1000) / (2 * 1100))
    assert m["bb_utilization"] == pytest.approx((5 * 100) / (10 * 1100))
    # asked at 0 (a starts) and at 100 (b starts); at 10 nothing fits, so fcfs is not asked
    assert m["decisions"] == 2 and m["decision_time_p95"] >= 0


def test_metrics_over_a_measurement_interval_by_hand():
    # Same schedule: a runs 0-100 (2 nodes, 5 B of BB), b runs 100-1100 (1 node).
    jobs = [Job("a", 0, 100, 100, 2, 5.0), Job("b", 10, 2000, 1000, 1, 0.0)]
    res = simulate(jobs, Platform(2, 10.0), "fcfs")
    m = summarize(res, interval=(5, 600))
    # Only b was submitted inside [5, 600): its wait is 90 s.
    assert m["jobs"] == 1 and m["mean_wait"] == pytest.approx(90)
    # Held inside the interval: a 2 nodes x 95 s, b 1 node x 500 s; a's BB 5 B x 95 s.
    assert m["node_utilization"] == pytest.approx((2 * 95 + 500) / (2 * 595))
    assert m["bb_utilization"] == pytest.approx(5 * 95 / (10 * 595))
    with pytest.raises(ValueError, match="interval"):
        summarize(res, interval=(600, 600))


def test_ssd_usage_and_waste_by_hand():
    from bbopt.core import GB

    # Nodes with 128 GB and 256 GB SSDs; a asks 100 GB per node: least waste puts it on the
    # 128 GB node (28 GB unused), b asks 200 GB and must take the 256 GB node (56 GB unused).
    platform = Platform(2, 0.0, node_ssd=(128 * GB, 256 * GB))
    jobs = [Job("a", 0, 100, 100, 1, 0.0, ssd=100 * GB), Job("b", 0, 100, 50, 1, 0.0,
                                                               ssd=200 * GB)]
    res = simulate(jobs, platform, "bbsched")
    assert res.allocation == [(0,), (1,)]
    m = summarize(res)
    total = 384 * GB * 100  # SSD x span (0-100 s)
    assert m["ssd_utilization"] == pytest.approx((100 * GB * 100 + 200 * GB * 50) / total)
    assert m["ssd_waste"] == pytest.approx((28 * GB * 100 + 56 * GB * 50) / total)


def test_killed_jobs_count_and_short_jobs_are_bounded_at_ten_minutes():
    """2 nodes. a (2 nodes, walltime 1000 s, would run 2000 s) is killed at 1000. b (submitted at
    10, 1 node, runs 30 s) waits for it: 1000-1030. Waits: a 0, b 990, mean over both (killed
    jobs included) 495. Bounded slowdown (Kopanski & Rzadca, Section 4.2: bounded for jobs
    shorter than ten minutes): a max(1000 / 1000, 1) = 1; b 1020 / max(30, 600) = 1.7 (a
    60 s bound would give 17); mean 1.35."""
    jobs = [Job("a", 0, 1000, 2000, 2, 0.0), Job("b", 10, 60, 30, 1, 0.0)]
    res = simulate(jobs, Platform(2, 10.0), "fcfs")
    assert res.start == [0, 1000] and res.end == [1000, 1030]
    m = summarize(res)
    assert m["killed"] == 1 and m["finished"] == 1
    assert m["mean_wait"] == pytest.approx(495)
    assert m["mean_turnaround"] == pytest.approx((1000 + 1020) / 2)
    assert m["mean_bounded_slowdown"] == pytest.approx((1 + 1.7) / 2)
    assert m["mean_slowdown"] == pytest.approx((1 + 1020 / 30) / 2)

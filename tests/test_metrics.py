"""Per-job and per-run metrics on a schedule computed by hand."""

import pytest

from bbopt import Job, Platform, simulate
from bbopt.analysis.metrics import summarize


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

"""The paper's metrics on runs worked by hand: utilisation (useful node-time), stretch against
the time alone (equation (1)), idle ratio, and the Figure 8 usage view."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt import Job, Platform, simulate
from bbopt.simulation.exclusive_io import ExclusiveIO
from bbopt.simulation.pack_metrics import pack_metrics, usage_over_time, usage_trend

B = 1e9


def periodic(id_, n, w, io_seconds, nodes=1, submit=0.0):
    t = n * (w + io_seconds)
    return Job(id_, submit, walltime=t, runtime=t, nodes=nodes,
               extra={"io": {"iterations": n, "compute_seconds": w,
                             "io_bytes": io_seconds * B, "io_bandwidth": B}})


def test_figure2_metrics():
    """A: 0-9, B: 0-10 (waits 2-3 for the I/O node) on 4 nodes: 19 node-seconds held, 1 lost
    in the FIFO, 40 available."""
    model = ExclusiveIO()
    res = simulate([periodic("A", 3, 2.0, 1.0), periodic("B", 3, 2.0, 1.0)], Platform(nodes=4),
                   "fcfs", execution=model)
    m = pack_metrics(res, model)
    assert m["makespan"] == 10.0
    assert m["utilisation"] == pytest.approx(18 / 40)
    assert m["idle_ratio"] == pytest.approx(1 - 19 / 40)
    assert m["max_stretch"] == pytest.approx(10 / 9)
    assert m["mean_stretch"] == pytest.approx((1 + 10 / 9) / 2)
    assert m["io_wait_share"] == pytest.approx(1 / 19)
    u = usage_over_time(res, model, bins=10)
    assert u["t"].tolist() == pytest.approx(np.arange(10) + 0.5)
    assert u["nodes"].tolist() == pytest.approx([0.5] * 9 + [0.25])
    assert u["utilisation"][2] == pytest.approx(0.25)  # B waits during [2, 3)
    assert u["utilisation"][3] == pytest.approx(0.5)
    assert u["running"].tolist() == pytest.approx([2] * 9 + [1])
    # the I/O node transfers during [2,4), [5,7), [8,10)
    assert u["io_busy"].tolist() == pytest.approx([0, 0, 1, 1, 0, 1, 1, 0, 1, 1])
    # planned share: each application's average bandwidth is 1/3 of b
    assert u["io_planned"][0] == pytest.approx(2 / 3)


def test_steady_state_and_tail_split_at_the_last_start():
    """One node: A (T=4) then B (T=2) starts at 4: steady [0, 4) fully used, tail [4, 6)."""
    model = ExclusiveIO()
    res = simulate([periodic("A", 2, 1.0, 1.0), periodic("B", 1, 1.0, 1.0)], Platform(nodes=1),
                   "fcfs", execution=model)
    m = pack_metrics(res, model)
    assert res.start == [0.0, 4.0]
    assert m["utilisation_steady"] == pytest.approx(1.0)
    assert m["utilisation_tail"] == pytest.approx(1.0)
    assert m["steady_fraction"] == pytest.approx(4 / 6)
    assert m["mean_flow_stretch"] == pytest.approx((1 + 6 / 2) / 2)
    assert m["mean_stretch"] == pytest.approx(1.0)


def test_usage_trend_sees_a_drift():
    t = np.linspace(0.5, 99.5, 100)
    assert usage_trend({"t": t, "x": 1 - t / 100}, "x") == pytest.approx(-1.0, abs=0.02)
    assert usage_trend({"t": t, "x": np.full(100, 0.7)}, "x") == pytest.approx(0.0, abs=1e-9)


def test_figure2_metrics_count_from_the_first_submission():
    """Figure 2's run submitted at t = 5 (A: 5-14, B: 5-15, B waits 7-8 for the I/O node):
    utilisation is useful node-time over P x (makespan - first submission) = 18 / 40, not over
    P x makespan (18 / 60); stretch is actual over minimal execution time, 10 / 9 (>= 1, not
    9 / 10), and the flow stretch counts the wait from submission."""
    model = ExclusiveIO()
    jobs = [periodic("A", 3, 2.0, 1.0, submit=5.0), periodic("B", 3, 2.0, 1.0, submit=5.0)]
    res = simulate(jobs, Platform(nodes=4), "fcfs", execution=model)
    m = pack_metrics(res, model)
    assert m["makespan"] == 15.0
    assert m["utilisation"] == pytest.approx(18 / 40)
    assert m["allocated"] == pytest.approx(19 / 40)
    assert m["idle_ratio"] == pytest.approx(1 - 19 / 40)
    assert m["max_stretch"] == pytest.approx(10 / 9)
    assert m["max_flow_stretch"] == pytest.approx(10 / 9)
    assert m["steady_fraction"] == 0.0  # both start at the first submission


def test_flow_stretch_counts_the_wait_and_stretch_does_not():
    """One node, A (T = 4) then B (T = 2, submitted at 1, starts at 4): B's stretch is
    2 / 2 = 1, its flow stretch (6 - 1) / 2 = 2.5 (from submission, not from 0: 3)."""
    model = ExclusiveIO()
    jobs = [periodic("A", 2, 1.0, 1.0), periodic("B", 1, 1.0, 1.0, submit=1.0)]
    res = simulate(jobs, Platform(nodes=1), "fcfs", execution=model)
    m = pack_metrics(res, model)
    assert res.start == [0.0, 4.0]
    assert m["max_stretch"] == pytest.approx(1.0)
    assert m["max_flow_stretch"] == pytest.approx(2.5)
    assert m["mean_flow_stretch"] == pytest.approx((1 + 2.5) / 2)
    # utilisation from the first submission (0) to the makespan (6): 6 node-seconds of 6
    assert m["utilisation"] == pytest.approx(1.0)

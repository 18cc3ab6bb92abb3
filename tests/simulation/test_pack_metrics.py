"""The paper's metrics on runs worked by hand: utilisation (useful node-time), stretch against
the time alone (equation (1)), idle ratio, and the Figure 8 usage view."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt import Job, Platform, simulate
from bbopt.simulation.exclusive_io import ExclusiveIO
from bbopt.simulation.pack_metrics import pack_metrics, usage_over_time, usage_trend
from bbopt.simulation.result import SimulationResult

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


def test_steady_state_tail_and_the_io_wait_share_each_over_their_own_part():
    """3 nodes, all submitted at 2: A (1 node, T = 4) and C (2 nodes, T = 4) start at 2 and end
    their compute phase at 5; A transfers first (5-6), C's 2 nodes wait 5-6 and transfer 6-7;
    B (3 nodes, T = 2) starts at 7 and ends at 9. Held 4 + 10 + 6 = 20 node-seconds of
    3 x (9 - 2) = 21, 2 lost in the FIFO: utilisation 18 / 21; the steady state [2, 7) 12 / 15,
    the tail [7, 9) 6 / 6; the lost share 2 / 20, all of it before the last start."""
    model = ExclusiveIO()
    jobs = [periodic("A", 1, 3.0, 1.0, submit=2.0), periodic("C", 1, 3.0, 1.0, nodes=2,
                                                            submit=2.0),
            periodic("B", 1, 1.0, 1.0, nodes=3, submit=2.0)]
    res = simulate(jobs, Platform(nodes=3), "fcfs", execution=model)
    assert (res.start, res.end) == ([2.0, 2.0, 7.0], [6.0, 7.0, 9.0])
    m = pack_metrics(res, model)
    assert m["jobs"] == 3 and m["makespan"] == 9.0
    assert m["utilisation"] == pytest.approx(18 / 21)
    assert m["utilisation_steady"] == pytest.approx(12 / 15)
    assert m["utilisation_tail"] == pytest.approx(1.0)
    assert m["allocated"] == pytest.approx(20 / 21)
    assert m["idle_ratio"] == pytest.approx(1 / 21)
    assert m["steady_fraction"] == pytest.approx(5 / 7)
    assert m["io_wait_share"] == pytest.approx(0.1)
    assert m["max_stretch"] == pytest.approx(1.25)
    assert m["mean_stretch"] == pytest.approx((1 + 1.25 + 1) / 3)
    assert m["max_flow_stretch"] == pytest.approx(3.5)


def test_a_run_shorter_than_a_second_and_than_one_node_second():
    """Figure 2's run at a twentieth of its times (A: 0-0.45, B: 0-0.5, B waits 0.1-0.15):
    utilisation 0.9 / (4 x 0.5), lost share 0.05 / 0.95 of the node-time held, and the usage
    curves over the 0.5 s."""
    model = ExclusiveIO()
    res = simulate([periodic("A", 3, 0.1, 0.05), periodic("B", 3, 0.1, 0.05)],
                   Platform(nodes=4), "fcfs", execution=model)
    m = pack_metrics(res, model)
    assert m["makespan"] == pytest.approx(0.5)
    assert m["utilisation"] == pytest.approx(0.9 / 2.0)
    assert m["io_wait_share"] == pytest.approx(1 / 19)
    u = usage_over_time(res, model, bins=10)
    assert u["t"].tolist() == pytest.approx(np.arange(10) * 0.05 + 0.025)
    assert u["nodes"].tolist() == pytest.approx([0.5] * 9 + [0.25])


def test_the_nodes_lost_in_the_fifo_are_the_waiting_job_s():
    """3 nodes: A (1 node) and C (2 nodes), T = 4 each, end their compute phase at 3: A
    transfers, C's 2 nodes wait 3-4: 2 of the 4 + 10 node-seconds held are lost."""
    model = ExclusiveIO()
    res = simulate([periodic("A", 1, 3.0, 1.0), periodic("C", 1, 3.0, 1.0, nodes=2)],
                   Platform(nodes=3), "fcfs", execution=model)
    assert pack_metrics(res, model)["io_wait_share"] == pytest.approx(2 / 14)


def test_jobs_without_periodic_i_o_count_their_runtime_else_their_walltime():
    """X (runtime 5 of a 10 s walltime) and Y (no runtime, walltime 4) compute alone, then the
    periodic A: every stretch is 1; without a transfer nothing is lost, and X and Y plan no
    bandwidth."""
    model = ExclusiveIO()
    jobs = [Job("X", 0, walltime=10.0, runtime=5.0, nodes=1), Job("Y", 0, walltime=4.0),
            periodic("A", 2, 1.0, 1.0)]
    res = simulate(jobs, Platform(nodes=3), "fcfs", execution=model)
    assert res.end == [5.0, 4.0, 4.0]
    m = pack_metrics(res, model)
    assert (m["max_stretch"], m["mean_stretch"]) == (1.0, 1.0)
    assert m["io_wait_share"] == 0.0 and m["utilisation"] == pytest.approx(13 / 15)
    u = usage_over_time(res, model, bins=5)
    assert u["io_planned"].tolist() == pytest.approx([0.5] * 4 + [0.0])
    only_compute = ExclusiveIO()
    res = simulate(jobs[:2], Platform(nodes=3), "fcfs", execution=only_compute)
    m = pack_metrics(res, only_compute)
    assert (m["utilisation"], m["io_wait_share"]) == (pytest.approx(9 / 15), 0.0)
    u = usage_over_time(res, only_compute, bins=5)
    assert u["io_busy"].tolist() == [0.0] * 5
    assert u["utilisation"].tolist() == pytest.approx([2 / 3] * 4 + [1 / 3])


def test_a_job_s_time_alone_is_at_its_rack_s_io_node_bandwidth():
    """Two racks of 2 nodes, I/O nodes of 1 and 2 GB/s: A on rack 0 and B on rack 1 (2 nodes
    each), one phase of 3 s of compute and 2 GB: alone, A takes 5 s and B 4 s; each stretch is 1.
    The I/O nodes' busy share is over both: A transfers 3-5, B 3-4."""
    model = ExclusiveIO(racks=2, bandwidth=(1e9, 2e9))
    jobs = [periodic("A", 1, 3.0, 2.0, nodes=2), periodic("B", 1, 3.0, 2.0, nodes=2)]
    res = simulate(jobs, Platform(nodes=4), "fcfs", execution=model)
    assert res.allocation == [(0, 1), (2, 3)] and res.end == [5.0, 4.0]
    m = pack_metrics(res, model)
    assert (m["max_stretch"], m["mean_stretch"]) == (pytest.approx(1.0), pytest.approx(1.0))
    u = usage_over_time(res, model, bins=5)
    assert u["io_busy"].tolist() == pytest.approx([0, 0, 0, 1.0, 0.5])
    # planned: each job's average bandwidth as a share of its own I/O node's, 2 GB over 5 s of
    # 1 GB/s (0.4) and 2 GB over 4 s of 2 GB/s (0.25), over the two I/O nodes (not at the
    # 1 GB/s the jobs were generated for: (0.4 + 0.5) / 2)
    assert u["io_planned"][0] == pytest.approx((0.4 + 0.25) / 2)


def test_no_job_ran():
    """No job, or one that never ran: no makespan, the shares undefined (nan), no stretch; the
    usage curves over an empty horizon are zero."""
    empty = pack_metrics(SimulationResult([], Platform(nodes=4), "fcfs"), ExclusiveIO())
    waiting = SimulationResult([periodic("A", 1, 1.0, 1.0, submit=5.0)], Platform(nodes=4),
                               "fcfs")
    for m in (empty, pack_metrics(waiting, ExclusiveIO())):
        assert (m["jobs"], m["makespan"], m["steady_fraction"], m["io_wait_share"]) == (
            0, 0.0, 0.0, 0.0)
        for key in ("utilisation", "utilisation_steady", "utilisation_tail", "allocated",
                    "idle_ratio", "max_stretch", "mean_stretch", "max_flow_stretch",
                    "mean_flow_stretch"):
            assert np.isnan(m[key]), key
    u = usage_over_time(SimulationResult([], Platform(nodes=4), "fcfs"), ExclusiveIO(), bins=4)
    assert u["t"].tolist() == pytest.approx([0.125e-9, 0.375e-9, 0.625e-9, 0.875e-9])
    for key in ("utilisation", "nodes", "running", "io_busy", "io_planned"):
        assert u[key].tolist() == [0.0] * 4, key


def test_usage_over_a_horizon_of_its_own_in_bins_wider_than_a_second():
    """Figure 2's run (A: 0-9, B: 0-10 on 4 nodes) over 20 s in 4 bins of 5 s: 2 of 4 nodes in
    [0, 5), (4 + 5) / 5 node-seconds per second in [5, 10), none after the run; 100 bins by
    default."""
    model = ExclusiveIO()
    res = simulate([periodic("A", 3, 2.0, 1.0), periodic("B", 3, 2.0, 1.0)], Platform(nodes=4),
                   "fcfs", execution=model)
    u = usage_over_time(res, model, bins=4, horizon=20.0)
    assert u["t"].tolist() == [2.5, 7.5, 12.5, 17.5]
    assert u["nodes"].tolist() == pytest.approx([0.5, 0.45, 0.0, 0.0])
    assert u["running"].tolist() == pytest.approx([2.0, 1.8, 0.0, 0.0])
    assert len(usage_over_time(res, model)["t"]) == 100


@pytest.mark.parametrize(("t", "x", "upto", "slope"), [
    ([1.0, 2.0, 3.0, 4.0], [0.5, 1.0, 1.5, 2.0], 1.0, 2.0),  # time normalised by its last
    ([0.1, 0.2, 0.3, 0.4], [0.1, 0.2, 0.3, 0.4], 0.9, 0.4),  # (also under a second): 0.25..1
    ([1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 0.4, 9.0, 9.0, 9.0], 0.4, 2.0),  # two points: a line
    ([1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 0.4, 9.0, 9.0, 9.0], 0.3, float("nan")),  # one point
    ([5.0], [1.0], 1.0, float("nan")),  # one bin
    ([], [], 0.9, float("nan")),  # no bin
])
def test_usage_trend_is_the_least_squares_slope_over_normalised_time(t, x, upto, slope):
    got = usage_trend({"t": np.array(t), "x": np.array(x)}, "x", upto=upto)
    if np.isnan(slope):
        assert np.isnan(got)
    else:
        assert got == pytest.approx(slope, rel=1e-9)


def test_usage_trend_reads_the_first_nine_tenths_by_default_the_last_included():
    """Bins centred at 1..10: by default those up to 9 / 10 = 0.9 of the run, 9 included; a jump
    at 9 tilts the line, one at 10 does not."""
    t = np.arange(1.0, 11.0)
    flat_then_jump = {"t": t, "x": np.where(t >= 10, 5.0, 0.0)}
    assert usage_trend(flat_then_jump, "x") == pytest.approx(0.0, abs=1e-12)
    assert usage_trend({"t": t, "x": np.where(t >= 9, 5.0, 0.0)}, "x") > 0.5

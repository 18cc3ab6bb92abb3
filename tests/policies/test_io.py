"""Herbein et al.'s I/O-aware policies (Section 3.4) on the I/O tree: io-fcfs and io-easy place
a job only where every link on its nodes' paths has the bandwidth it asks, reject a job no empty
machine could hold, and io-easy backfills without delaying the head's reservation."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import ClusterState, Job, RunningJob, decide, simulate
from bbopt.core import GB, MB
from bbopt.errors import InputError
from bbopt.policies import make_policy
from bbopt.policies.io import IOAwareEasy, IOAwareFCFS
from bbopt.simulation.io_metrics import io_summary
from bbopt.simulation.io_model import IOContention
from bbopt.topology import AllocState, kopanski_dragonfly
from tests._platforms import IO_TREE, POOL


def test_herbein_walkthrough_job2_waits_for_job1():
    """Section 3.4: Job 1 (1 node, 64 MB/s) then Job 2 (3 nodes x 128 MB/s)."""
    platform = IO_TREE
    job1 = Job("1", 0, walltime=100, runtime=100, nodes=1, bandwidth=64 * MB)
    job2 = Job("2", 0, walltime=100, runtime=50, nodes=3, bandwidth=128 * MB)
    state = ClusterState(0.0, platform, queue=(job1, job2))
    d = decide(state, "io-fcfs")
    assert [s.job_id for s in d.start] == ["1"] and d.start[0].nodes == (0,)
    running = ClusterState(0.0, platform, running=(RunningJob(job1, 0.0, (0,)),), queue=(job2,))
    for policy in ("io-fcfs", "io-easy"):
        assert decide(running, policy).start == ()
    easy = decide(running, "io-easy")
    assert easy.reservations[0].job_id == "2" and easy.reservations[0].start == 100.0
    # On the empty machine Job 2 fits (nodes 0-2).
    empty = ClusterState(0.0, platform, queue=(job2,))
    assert decide(empty, "io-fcfs").start[0].nodes == (0, 1, 2)
    for policy in ("io-fcfs", "io-easy"):
        model = IOContention()
        res = simulate([job1, job2], platform, policy, execution=model)
        assert res.start == [0.0, 100.0]
        assert io_summary(res, model)["system_efficiency"] == 1.0


def test_unsatisfiable_jobs_rejected_only_under_io_aware_policies():
    platform = IO_TREE
    big = Job("big", 0, walltime=10, runtime=10, nodes=3, bandwidth=200 * MB)
    res = simulate([big], platform, "io-fcfs", execution=IOContention())
    assert res.state == ["rejected"] and "empty machine" in res.reasons["big"]
    res = simulate([big], platform, "fcfs", execution=IOContention())
    assert res.state == ["killed"]  # it runs, slowed by contention past its walltime


def _random_jobs(seed, n, max_nodes, bw_choices):
    rng = np.random.default_rng(seed)
    jobs = []
    t = 0.0
    for k in range(n):
        t += float(rng.exponential(5.0))
        run = float(rng.integers(1, 60))
        jobs.append(Job(str(k), round(t), walltime=run * float(rng.uniform(1, 3)), runtime=run,
                        nodes=int(rng.integers(1, max_nodes + 1)),
                        bandwidth=float(rng.choice(bw_choices))))
    return jobs


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), policy=st.sampled_from(["io-fcfs", "io-easy"]),
       which=st.sampled_from(["example", "dragonfly"]))
def test_io_aware_policies_never_over_allocate_a_link(seed, policy, which):
    if which == "example":
        platform = IO_TREE
        jobs = _random_jobs(seed, 25, 4, [0.0, 32 * MB, 64 * MB, 128 * MB, 200 * MB])
    else:
        platform = kopanski_dragonfly(router=2 * GB)
        jobs = _random_jobs(seed, 40, 24, [0.0, 50 * MB, 200 * MB, 600 * MB])
    tree = platform.topology
    peak = {"over": 0.0}

    def check(state, decision):
        alloc = AllocState.of_running(tree, state.running)
        by_id = {j.id: j for j in state.queue}
        for s in decision.start:
            job = by_id[s.job_id]
            assert s.nodes is not None and len(s.nodes) == job.nodes
            assert alloc.free[list(s.nodes)].all()
            alloc.take(list(s.nodes), job.bandwidth)
        over = -(alloc.avail[: tree.n_vertices] + 1e-6 * tree.capacity[: tree.n_vertices]).min()
        peak["over"] = max(peak["over"], over)

    model = IOContention()
    res = simulate(jobs, platform, policy, on_decision=check, execution=model)
    assert peak["over"] <= 0
    assert set(res.state) <= {"finished", "rejected"}
    s = io_summary(res, model)
    if s["jobs_measured"]:
        assert s["system_efficiency"] == pytest.approx(1.0)
        assert s["interfered_node_time_share"] == 0.0


def test_io_easy_backfills_without_delaying_the_head():
    platform = IO_TREE
    long1 = Job("long", 0, walltime=100, runtime=100, nodes=2, bandwidth=128 * MB)  # fills lls0
    head = Job("head", 1, walltime=10, runtime=10, nodes=4, bandwidth=10 * MB)
    short = Job("short", 2, walltime=50, runtime=50, nodes=1, bandwidth=100 * MB)
    late = Job("late", 3, walltime=500, runtime=500, nodes=1, bandwidth=100 * MB)
    res = simulate([long1, head, short, late], platform, "io-easy", execution=IOContention())
    start = dict(zip([j.id for j in res.jobs], res.start, strict=True))
    assert start["short"] == 2  # ends before the head's reservation at t=100
    assert start["head"] == 100
    assert start["late"] >= 110  # would hold a node the head needs at t=100


@pytest.mark.parametrize("name", ["io-fcfs", "io-easy"])
def test_each_io_policy_is_named_and_names_itself_without_a_tree(name):
    """The registered name is the policy's own, and on a platform without an I/O tree the
    error names it and the field to fix."""
    policy = make_policy(name)
    assert policy.name == name
    assert {"io-fcfs": IOAwareFCFS, "io-easy": IOAwareEasy}[name]().name == name
    with pytest.raises(InputError, match=f"policy '{name}' needs a platform") as err:
        decide(ClusterState(0.0, POOL, queue=(Job("a", 0, walltime=10, nodes=1),)), policy)
    assert err.value.field == "topology"


@pytest.mark.parametrize("name", ["io-fcfs", "io-easy"])
def test_an_io_decision_reports_its_own_time(name):
    """The decision's wall time is that of this decision (from its own start), not the
    clock's reading."""
    job = Job("1", 0, walltime=100, runtime=100, nodes=1, bandwidth=64 * MB)
    before = time.perf_counter()
    d = decide(ClusterState(0.0, IO_TREE, queue=(job,)), name)
    elapsed = time.perf_counter() - before
    assert [s.job_id for s in d.start] == ["1"]
    assert 0.0 <= d.stats.wall_time <= elapsed
    assert d.stats.backend == "rule"

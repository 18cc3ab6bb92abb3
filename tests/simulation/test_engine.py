"""The engine's promises at their edges: a job is killed at its walltime exactly when it would
run longer (not at equality), and on crowded workloads (exact capacity, coinciding ends and
arrivals, zero-length runs) no instant holds more nodes or BB than the platform has, every job
ends at start + min(runtime, walltime) and none starts before its submission."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.core import JobState
from tests._random_workloads import crowded_workloads


@pytest.mark.parametrize("runtime,state,end", [
    (100.0 - 1e-6, JobState.FINISHED, 100.0 - 1e-6),
    (100.0, JobState.FINISHED, 100.0),
    (100.0 + 1e-6, JobState.KILLED, 100.0),
])
def test_a_job_is_killed_at_its_walltime_only_when_it_would_run_longer(runtime, state, end):
    res = simulate([Job("a", 0.0, 100.0, runtime)], Platform(1), "fcfs")
    assert res.state == [state] and res.end == [end]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded_workloads(), st.sampled_from(["fcfs", "fcfs-bb", "sjf-bb", "conservative-bb",
                                             "filler"]))
def test_crowded_workloads_keep_capacity_and_walltimes(jobs, policy):
    platform = Platform(8, 100.0)
    res = simulate(jobs, platform, policy)
    events = []
    for job, start, end, state in zip(jobs, res.start, res.end, res.state, strict=True):
        if state not in (JobState.FINISHED, JobState.KILLED):
            continue
        assert start >= job.submit
        killed = job.runtime > job.walltime
        assert state == (JobState.KILLED if killed else JobState.FINISHED)
        assert end == start + min(job.runtime, job.walltime)
        events += [(end, 0, -job.nodes, -job.bb), (start, 1, job.nodes, job.bb)]
    nodes = bb = 0.0
    for _, _, dn, dbb in sorted(events):  # ends before starts at the same instant
        nodes += dn
        bb += dbb
        assert nodes <= platform.nodes and bb <= platform.bb + 1e-9

"""Invariants of every queue policy on random small workloads (hypothesis).

- at no instant do running jobs hold more nodes or burst buffer than exist;
- every submitted job ends finished, killed or rejected;
- EASY with BB reservations (fcfs-bb, sjf-bb) never delays the head job's reservation;
- conservative backfilling never delays any reservation.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.core import JobState

POLICIES = ["fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "conservative-bb"]
PLATFORM = Platform(nodes=8, bb=100.0)


@st.composite
def workloads(draw):
    n = draw(st.integers(1, 25))
    jobs = []
    for k in range(n):
        walltime = draw(st.integers(1, 20))
        runtime = draw(st.integers(0, walltime + 3))  # some exceed walltime: killed
        jobs.append(Job(
            id=str(k), submit=float(draw(st.integers(0, 40))), walltime=float(walltime),
            runtime=float(runtime), nodes=draw(st.integers(1, 9)),  # 9 > 8: rejected
            bb=float(draw(st.integers(0, 110))),  # > 100: rejected
        ))
    return jobs


def check_capacity(res):
    events = []
    for k, job in enumerate(res.jobs):
        if res.state[k] in (JobState.FINISHED, JobState.KILLED) and res.end[k] > res.start[k]:
            events.append((res.start[k], 1, job))
            events.append((res.end[k], 0, job))  # ends before starts at equal times
    events.sort(key=lambda e: (e[0], e[1]))
    n = b = 0.0
    for _, kind, job in events:
        sign = 1 if kind == 1 else -1
        n += sign * job.nodes
        b += sign * job.bb
        assert n <= PLATFORM.nodes
        assert b <= PLATFORM.bb + 1e-9


def check_outcomes(res):
    for k, job in enumerate(res.jobs):
        assert res.state[k] in (JobState.FINISHED, JobState.KILLED, JobState.REJECTED)
        if res.state[k] == JobState.REJECTED:
            assert job.nodes > PLATFORM.nodes or job.bb > PLATFORM.bb
            assert job.id in res.reasons
            continue
        assert res.start[k] >= job.submit
        ran = res.end[k] - res.start[k]
        assert ran == min(job.runtime, job.walltime)
        assert (res.state[k] == JobState.KILLED) == (job.runtime > job.walltime)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(POLICIES), st.sampled_from([None, 1.0, 5.0]))
def test_capacity_and_outcomes(jobs, policy, tick):
    res = simulate(jobs, PLATFORM, policy, tick=tick)
    check_capacity(res)
    check_outcomes(res)


def _reservation_log(policy, jobs):
    log: dict[str, list[float]] = {}

    def observe(state, decision):
        for r in decision.reservations:
            log.setdefault(r.job_id, []).append(r.start)

    res = simulate(jobs, PLATFORM, policy, on_decision=observe)
    return res, log


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(["fcfs-bb", "sjf-bb", "conservative-bb"]))
def test_reservations_never_delayed(jobs, policy):
    res, log = _reservation_log(policy, jobs)
    index = {j.id: k for k, j in enumerate(res.jobs)}
    for job_id, starts in log.items():
        # Each new reservation of the same job is no later than the previous one ...
        assert all(b <= a for a, b in zip(starts, starts[1:], strict=False)), starts
        # ... and the job starts no later than its first reservation.
        assert res.start[index[job_id]] <= starts[0]


def test_fcfs_easy_can_delay_its_head():
    """The counter-example: processor-only reservations are not kept when BB is short."""
    jobs = [Job("a", 0, 10, 10, 1, 60.0), Job("b", 1, 1, 1, 3, 60.0)]
    res, log = _reservation_log("fcfs-easy", jobs)
    assert log["b"][0] < res.start[1]
    assert math.isclose(res.start[1], 10.0)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(POLICIES), st.randoms(use_true_random=False))
def test_engine_shortcuts_change_no_decision(jobs, policy, rnd):
    """The engine hands the running jobs as RunningJobs (sorted by expected end, with their
    total held); every decision equals the one taken on the same state with the running jobs as
    a plain tuple in shuffled order, which the policies must sort and sum themselves."""
    from dataclasses import replace

    from bbopt.core import RunningJobs
    from bbopt.policies import make_policy

    seen = []

    def observe(state, decision):
        assert type(state.running) is RunningJobs
        ends = [r.expected_end for r in state.running]
        assert ends == sorted(ends)
        assert state.running.held == RunningJobs(tuple(state.running)).held
        seen.append((state, decision))

    simulate(jobs, PLATFORM, policy, on_decision=observe)
    fresh = make_policy(policy)
    for state, decision in seen:
        plain = list(state.running)
        rnd.shuffle(plain)
        again = fresh.decide(replace(state, running=tuple(plain)))
        assert again.start == decision.start
        assert again.reservations == decision.reservations

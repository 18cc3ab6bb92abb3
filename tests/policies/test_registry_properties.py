"""Invariants of every queue policy on random small workloads (hypothesis).

- at no instant do running jobs hold more nodes or burst buffer than exist;
- every submitted job ends finished, killed or rejected;
- EASY with BB reservations (fcfs-bb, sjf-bb) never delays the head job's reservation;
- conservative backfilling never delays any reservation, and moves reservations earlier when
  jobs end early.
"""

from __future__ import annotations

import math

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, make_policy, simulate
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


def check_never_delayed(res, log):
    index = {j.id: k for k, j in enumerate(res.jobs)}
    for job_id, starts in log.items():
        # Each new reservation of the same job is no later than the previous one ...
        assert all(b <= a for a, b in zip(starts, starts[1:], strict=False)), (job_id, starts)
        # ... and the job starts no later than its first reservation.
        assert res.start[index[job_id]] <= starts[0], (job_id, starts)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(["fcfs-bb", "sjf-bb"]))
def test_easy_head_reservation_never_delayed(jobs, policy):
    check_never_delayed(*_reservation_log(policy, jobs))


@st.composite
def crowded_workloads(draw):
    """Workloads on which a conservative backfilling that re-plans from scratch goes wrong often:
    8 to 25 jobs that all fit the platform, submitted within 20 s of each other (so many wait
    with reservations at once), each ending at or before its walltime (early ends are what let
    a re-plan move one reservation earlier and push another one later). A forgetful
    conservative-bb violates "never delayed" on about 1 in 4 of them (uniform draws)."""
    jobs = []
    for k in range(draw(st.integers(8, 25))):
        walltime = draw(st.integers(1, 20))
        jobs.append(Job(
            id=str(k), submit=float(draw(st.integers(0, 20))), walltime=float(walltime),
            runtime=float(draw(st.integers(0, walltime))), nodes=draw(st.integers(1, 8)),
            bb=float(draw(st.integers(0, 100)))))
    return jobs


def _instant(ident: int, walltime: float, bb: float) -> Job:
    return Job(str(ident), 0.0, walltime, 0.0, 1, bb)


# A workload hypothesis shrank to from a conservative-bb that lost its reservations between
# decisions (read under the wrong memory key): kept as an explicit example, so the property test
# fails on that bug under every seed, besides finding it on its own (crowded workloads: 20 of 20
# seeds with 60 examples). The ``slow`` hypothesis profile raises the example count.
@example([_instant(0, 2.0, 7.0), _instant(1, 2.0, 94.0),
          *[_instant(k, 1.0, 0.0) for k in range(2, 12)], _instant(12, 1.0, 7.0)])
@settings(max_examples=max(120, settings.default.max_examples), deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(crowded_workloads(), workloads()))
def test_conservative_reservations_never_delayed(jobs):
    check_never_delayed(*_reservation_log("conservative-bb", jobs))


def test_conservative_keeps_and_compresses_its_reservations():
    """4 nodes, 10 B of BB. A (1 node, 6 B, walltime 10, ends early at 4) and B (3 nodes, 4 s)
    start at 0. t=1: C (2 nodes, 6 B, 1 s) needs A's BB: reserved at 10. t=2: D (3 nodes, 4 B,
    1 s) fits when B ends: reserved at 4. t=4: A ends early, B on time. Compression in
    reservation order: D keeps 4 and starts; C moves up from 10 to 5 (at 4 only 1 node is left
    beside D). A policy that forgot its reservations would plan C first (queue order) at 4 and
    push D's reservation back to 5; one that kept but never compressed them would leave C
    at 10."""
    platform = Platform(4, 10.0)
    jobs = [Job("A", 0, 10, 4, 1, 6.0), Job("B", 0, 4, 4, 3, 0.0), Job("C", 1, 1, 1, 2, 6.0),
            Job("D", 2, 1, 1, 3, 4.0)]
    log: dict[str, list[tuple[float, float]]] = {}

    def observe(state, decision):
        for r in decision.reservations:
            log.setdefault(r.job_id, []).append((state.time, r.start))

    res = simulate(jobs, platform, "conservative-bb", on_decision=observe)
    assert log == {"C": [(1, 10), (2, 10), (4, 5)], "D": [(2, 4)]}
    assert res.start == [0, 0, 5, 4]


def test_fcfs_easy_can_delay_its_head():
    """The counter-example: processor-only reservations are not kept when BB is short."""
    jobs = [Job("a", 0, 10, 10, 1, 60.0), Job("b", 1, 1, 1, 3, 60.0)]
    policy = make_policy("fcfs-easy")
    policy.idle_unless_fits = False  # asked at 1 too, where b does not fit (BB): its reservation
    res, log = _reservation_log(policy, jobs)
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

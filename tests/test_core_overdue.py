"""A running job at or past its walltime (a resource manager's kill grace period) still holds
its nodes and BB: no registered policy may start a job on them, whether it is asked through
``bbopt.decide`` or by the engine (an execution model that does not kill at walltime). The rule
lives in one place, :func:`bbopt.core.planning_state`."""

from __future__ import annotations

import heapq

import pytest

from bbopt import Job, Platform, decide, simulate
from bbopt.core import (
    OVERDUE_GRACE,
    ClusterState,
    Decision,
    JobState,
    RunningJob,
    RunningJobs,
    Start,
    decide_planned,
    planning_state,
)
from bbopt.errors import InputError, InvalidDecision, OverbookedError
from bbopt.loading import load_platform
from bbopt.policies.registry import available_policies
from bbopt.simulation.execution import Rigid
from tests import _platforms

POLICIES = sorted(available_policies())


def _setting(policy: str) -> tuple[Platform, dict]:
    """A platform and options the policy accepts (I/O policies need a tree or a bandwidth)."""
    plain = _platforms.POOL  # 8 nodes, 100 GB of burst buffer
    queue = (Job("x", 0.0, 10.0),)
    for platform, options in ((plain, {}), (plain, {"bandwidth": 1e9}),
                              (load_platform("cts1"), {})):
        try:
            decide(ClusterState(0.0, platform, (), queue), policy, **options)
            return platform, options
        except InputError:
            continue
    pytest.skip(f"{policy}: no simple platform suits it")


def _state(platform: Platform, overdue: float, held: int) -> ClusterState:
    """At t=100, ``r`` holds ``held`` nodes and 60 % of the BB, ``overdue`` s past its walltime;
    the queue asks for more than is free, and for what is free."""
    wall = 100.0 - overdue
    r = RunningJob(Job("r", 0.0, wall, runtime=500.0, nodes=held, bb=0.6 * platform.bb),
                   0.0, tuple(range(held)))
    free = platform.nodes - held
    queue = (Job("wide", 10.0, 50.0, nodes=free + 1), Job("bb", 11.0, 50.0, nodes=1,
                                                          bb=0.5 * platform.bb),
             Job("fits", 12.0, 50.0, nodes=max(free, 1), bb=0.1 * platform.bb))
    return ClusterState(100.0, platform, (r,), queue)


@pytest.mark.parametrize("overdue", [0.0, 0.5, 60.0, 1e5 - 100.0 - 1.0])
@pytest.mark.parametrize("policy", POLICIES)
def test_no_policy_starts_a_job_on_the_resources_of_an_overdue_job(policy, overdue):
    platform, options = _setting(policy)
    held = platform.nodes - 2
    overdue = min(overdue, 99.0)
    state = _state(platform, overdue, held)
    decision = decide(state, policy, **options)
    started = {s.job_id for s in decision.start}
    assert "wide" not in started, (policy, decision.start)
    # a policy that plans no BB (the I/O pack policies) starts "bb" whether r is overdue or not
    twin = decide(_state(platform, -1000.0, held), policy, **options)
    blind = platform.bb == 0 or "bb" in {s.job_id for s in twin.start}
    assert "bb" not in started or blind, (policy, decision.start)
    nodes = sum(j.nodes for j in state.queue if j.id in started)
    assert nodes <= platform.nodes - held
    for res in decision.reservations:  # nothing is planned before the overdue job's end
        job = next(j for j in state.queue if j.id == res.job_id)
        if job.nodes > platform.nodes - held:
            assert res.start >= state.time + OVERDUE_GRACE - 1e-9, (policy, res)


def test_the_planning_state_stretches_only_overdue_jobs_and_keeps_the_order():
    p = Platform(nodes=8)
    jobs = [RunningJob(Job("late", 0.0, 50.0, nodes=1), 0.0),
            RunningJob(Job("edge", 0.0, 100.0, nodes=1), 0.0),
            RunningJob(Job("soon", 0.0, 100.5, nodes=1), 0.0),
            RunningJob(Job("later", 0.0, 300.0, nodes=1), 0.0)]
    view = RunningJobs.of(jobs, (4, 0.0))
    out = planning_state(ClusterState(100.0, p, view, ()))
    assert type(out.running) is RunningJobs and out.running.held == (4, 0.0)
    assert [(r.job.id, r.expected_end) for r in out.running] == [
        ("soon", 100.5), ("late", 100.0 + OVERDUE_GRACE), ("edge", 100.0 + OVERDUE_GRACE),
        ("later", 300.0)]
    fresh = ClusterState(49.0, p, view, ())
    assert planning_state(fresh) is fresh  # nothing overdue: the same object


def test_a_job_ending_exactly_now_is_overdue_and_stretched_from_its_own_start():
    """The only running job ends exactly now (started at 30 s for 70 s): it is taken to end
    one grace period from now, its walltime 71 s counted from its start; a plain tuple of
    running jobs stays a tuple."""
    p = Platform(nodes=8)
    edge = RunningJob(Job("edge", 0.0, 70.0, nodes=1), 30.0)
    out = planning_state(ClusterState(100.0, p, (edge,), ()), grace=1.0)
    assert type(out.running) is tuple
    assert [(r.job.id, r.start, r.job.walltime) for r in out.running] == [("edge", 30.0, 71.0)]
    assert planning_state(ClusterState(99.5, p, (edge,), ())).running == (edge,)
    later = planning_state(ClusterState(100.0, p, (edge,), ()), grace=2.5)
    assert later.running[0].expected_end == 102.5


class RunToCompletion(Rigid):
    """Rigid jobs that are not killed at their walltime (as exclusive I/O runs them)."""

    name = "run-to-completion"

    def start(self, k, t, allocation):
        job = self._jobs[k]
        heapq.heappush(self._heap, (t + job.runtime, k, JobState.FINISHED))


@pytest.mark.parametrize("policy", ["conservative-bb", "plan-1", "plan-2", "plan-3", "fcfs-bb",
                                    "filler"])
def test_the_engine_plans_overdue_jobs_as_held(policy):
    """Jobs that run past their walltime: the engine's ledger refuses any start on their
    nodes (conservative-bb and plan-k used to start one there: an InvalidDecision), and kept
    reservations planned before a job overran are planned again."""
    jobs = [Job(str(k), float(k), 10.0, runtime=40.0 if k % 2 else 5.0, nodes=1 + k % 4,
                bb=float(k % 3) * 1e9) for k in range(30)]
    seen = []

    def check(state, decision):
        seen.append(any(r.expected_end <= state.time for r in state.running))

    result = simulate(jobs, Platform(nodes=4, bb=4e9), policy, execution=RunToCompletion(),
                      on_decision=check)
    assert any(seen)  # decisions were taken while a job was overdue
    assert [e - s for s, e in zip(result.start, result.end, strict=True)] == \
        pytest.approx([j.runtime for j in jobs])


class _StalePlan:
    """A policy whose kept memory overbooks the profile (``raises`` when it has memory) and
    which decides fine without memory; it records the memory of each call."""

    def __init__(self, raises: Exception) -> None:
        self.raises = raises
        self.calls: list[dict] = []

    def decide(self, state: ClusterState) -> Decision:
        self.calls.append(dict(state.memory))
        if state.memory:
            raise self.raises
        return Decision(start=(Start("q"),))


def _overdue_with_memory() -> ClusterState:
    r = RunningJob(Job("r", 0.0, 10.0, nodes=2), 0.0, (0, 1))
    return ClusterState(20.0, Platform(nodes=4), (r,), (Job("q", 5.0, 10.0, nodes=2),),
                        memory={"reservations": {"q": 10.0}})


def test_a_stale_plan_that_overbooks_is_planned_again_without_memory():
    policy = _StalePlan(OverbookedError("a reservation on the named BB nodes overbooks"))
    decision = decide_planned(policy, _overdue_with_memory())
    assert [s.job_id for s in decision.start] == ["q"]
    assert policy.calls == [{"reservations": {"q": 10.0}}, {}]


@pytest.mark.parametrize("error", [KeyError("q"), ValueError("bad"), ZeroDivisionError(),
                                   InputError("bad option"), InvalidDecision("bug")])
def test_any_other_failure_of_a_policy_propagates_even_when_a_job_is_overdue(error):
    policy = _StalePlan(error)
    with pytest.raises(type(error)):
        decide_planned(policy, _overdue_with_memory())
    assert len(policy.calls) == 1  # not asked again without memory: the bug is not hidden


def test_without_an_overdue_job_even_an_overbooked_plan_propagates():
    state = _overdue_with_memory()
    fresh = ClusterState(5.0, state.platform, state.running, state.queue, memory=state.memory)
    policy = _StalePlan(OverbookedError("x"))
    with pytest.raises(OverbookedError):
        decide_planned(policy, fresh)
    # the engine says a job overran since the memory was made: planned again
    assert decide_planned(_StalePlan(OverbookedError("x")), fresh, overran=True).start

"""``bbopt.decide``: a wall budget covers the whole call, the state's check included (on a
20,000-job queue the check takes a quarter of a 10 ms budget)."""

from __future__ import annotations

import time

import pytest

import bbopt.api as api
from bbopt.core import ClusterState, Decision, Job, Platform, decide_planned, decision_elapsed


def _state(n: int = 40) -> ClusterState:
    queue = tuple(Job(f"j{k}", 0.0, walltime=600.0 + k, nodes=1 + k % 4) for k in range(n))
    return ClusterState(10.0, Platform(nodes=8, bb=0.0), (), queue)


class Probe:
    """A policy that notes how much of its budget was spent before it was asked."""

    name = "probe"
    io_aware = False

    def __init__(self) -> None:
        self.elapsed: float | None = None

    def decide(self, state: ClusterState) -> Decision:
        self.elapsed = decision_elapsed()
        return Decision()


def _noting_check(monkeypatch, marks: dict) -> None:
    real = api.validate_state

    def check(state, source=None):
        marks["check_start"] = time.perf_counter()
        real(state, source)
        marks["checked"] = time.perf_counter()

    monkeypatch.setattr(api, "validate_state", check)


def test_the_state_check_is_spent_from_the_policy_s_budget(monkeypatch):
    marks: dict = {}
    _noting_check(monkeypatch, marks)
    probe = Probe()
    before = time.perf_counter()
    api.decide(_state(), probe)
    after = time.perf_counter()
    # asked before the check started, and the policy after it ended
    assert marks["checked"] - marks["check_start"] < probe.elapsed <= after - before
    # outside a call nothing is spent before the policy
    assert decision_elapsed() == 0.0


def test_plan_reports_the_check_in_its_wall_time(monkeypatch):
    marks: dict = {}
    _noting_check(monkeypatch, marks)
    before = time.perf_counter()
    d = api.decide(_state(), "plan-2", budget=0.05, budget_mode="wall")
    after = time.perf_counter()
    assert d.stats.backend == "annealing"
    assert marks["checked"] - marks["check_start"] < d.stats.wall_time <= after - before


def test_the_simulator_s_own_decisions_spend_nothing_before_the_policy():
    probe = Probe()
    decide_planned(probe, _state())
    assert probe.elapsed == 0.0


# -- the public face: what each name of ``bbopt.__all__`` returns, on runs computed by hand ------


GB = 1e9
PLATFORM = Platform(nodes=4, bb=10 * GB)
JOBS = [Job("j1", 0.0, walltime=100.0, runtime=50.0, nodes=4),
        Job("j2", 0.0, walltime=100.0, runtime=30.0, nodes=2, bb=4 * GB)]


def test_simulate_returns_the_per_job_record():
    import bbopt

    result = bbopt.simulate(JOBS, PLATFORM, "fcfs-bb")
    assert isinstance(result, bbopt.SimulationResult)
    assert len(result) == 2 and result.policy == "fcfs-bb"
    assert result.start == [0.0, 50.0] and result.end == [50.0, 80.0]
    assert result.state == ["finished", "finished"]
    assert result.allocation[1] == (0, 1)
    arrays = result.arrays()
    assert list(arrays["bb"]) == [0.0, 4 * GB] and list(arrays["nodes"]) == [4.0, 2.0]


def test_run_returns_a_record_with_its_spec_result_and_metrics():
    import bbopt

    record = bbopt.run(bbopt.RunSpec(workload=JOBS, platform=PLATFORM, policy="fcfs-bb"))
    assert isinstance(record, bbopt.RunRecord)
    assert record.spec.name == "workload" and record.spec.policy == "fcfs-bb"
    assert record.result.start == [0.0, 50.0]
    # waits 0 and 50 s: mean 25; turnarounds 50 and 80 s on executions of 50 and 30 s, both
    # under the 600 s bound, so bounded slowdowns 1 and 80 / 600 -> floored at 1
    assert record.metrics["mean_wait"] == 25.0
    assert record.metrics["max_wait"] == 50.0
    assert record.metrics["mean_bounded_slowdown"] == 1.0
    assert record.metrics["finished"] == 2
    assert record.model is not None


def test_every_error_bbopt_raises_on_purpose_is_a_bbopt_error():
    import bbopt

    assert issubclass(bbopt.InputError, bbopt.BboptError)
    assert issubclass(bbopt.InvalidDecision, bbopt.BboptError)
    assert issubclass(bbopt.UnknownNameError, bbopt.BboptError)
    with pytest.raises(bbopt.BboptError, match="nodes must be an integer"):
        Job("x", 0.0, walltime=1.0, nodes=0)
    with pytest.raises(bbopt.BboptError) as caught:
        bbopt.make_policy("no-such-policy")
    assert "fcfs-bb" in str(caught.value)  # the known names are listed


def test_a_policy_is_anything_with_a_name_io_awareness_and_decide():
    import bbopt
    from bbopt.policies import Policy

    probe = Probe()
    assert isinstance(probe, Policy)
    assert isinstance(bbopt.make_policy("fcfs-bb"), Policy)
    assert not isinstance(object(), Policy)
    # an object that has them decides through bbopt.decide as a registered policy does
    assert bbopt.decide(_state(3), probe) == Decision()
    assert probe.elapsed is not None

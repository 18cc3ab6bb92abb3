"""``bbopt.decide``: a wall budget covers the whole call, the state's check included (on a
20,000-job queue the check takes a quarter of a 10 ms budget)."""

from __future__ import annotations

import time

import bbopt.api as api
from bbopt.core import ClusterState, Decision, Job, Platform, decision_started


def _state(n: int = 40) -> ClusterState:
    queue = tuple(Job(f"j{k}", 0.0, walltime=600.0 + k, nodes=1 + k % 4) for k in range(n))
    return ClusterState(10.0, Platform(nodes=8, bb=0.0), (), queue)


class Probe:
    """A policy that notes when its budget runs from."""

    name = "probe"
    io_aware = False

    def __init__(self) -> None:
        self.started: float | None = None

    def decide(self, state: ClusterState) -> Decision:
        self.started = decision_started()
        return Decision()


def _noting_check(monkeypatch, marks: dict) -> None:
    real = api.validate_state

    def check(state, source=None):
        marks["asked"] = decision_started()
        real(state, source)
        marks["checked"] = time.perf_counter()

    monkeypatch.setattr(api, "validate_state", check)


def test_a_policy_budget_runs_from_the_call_not_from_after_the_check(monkeypatch):
    marks: dict = {}
    _noting_check(monkeypatch, marks)
    probe = Probe()
    before = time.perf_counter()
    api.decide(_state(), probe)
    assert before <= probe.started == marks["asked"] < marks["checked"]
    # outside a call the clock is now again
    after = time.perf_counter()
    assert decision_started() >= after


def test_plan_reports_the_check_in_its_wall_time(monkeypatch):
    marks: dict = {}
    _noting_check(monkeypatch, marks)
    d = api.decide(_state(), "plan-2", budget=0.05, budget_mode="wall")
    assert d.stats.backend == "annealing"
    assert d.stats.wall_time >= marks["checked"] - marks["asked"]


def test_the_simulator_s_own_decisions_start_their_clock_at_the_policy():
    probe = Probe()
    before = time.perf_counter()
    from bbopt.core import decide_planned

    decide_planned(probe, _state())
    assert probe.started >= before

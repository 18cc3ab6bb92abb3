"""``bbopt.decide``: a wall budget covers the whole call, the state's check included (on a
20,000-job queue the check takes a quarter of a 10 ms budget)."""

from __future__ import annotations

import time

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

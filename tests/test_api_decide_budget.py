"""The whole ``bbopt.decide`` call belongs to the decision's wall budget: the check of the state
counts against it, and Python's cyclic garbage collector does not run inside it (a full pass
over a 20,000-job state took 140 ms, within a 50 ms budget); it runs again after the call."""

from __future__ import annotations

import gc

import pytest

from bbopt import ClusterState, Decision, Job, Platform, decide


class _Probe:
    name = "probe"
    io_aware = False

    def __init__(self) -> None:
        self.collecting: list[bool] = []

    def decide(self, state: ClusterState) -> Decision:
        self.collecting.append(gc.isenabled())
        return Decision()


def _state() -> ClusterState:
    return ClusterState(10.0, Platform(nodes=4), (), (Job("q", 0.0, 60.0, nodes=1),))


def test_the_collector_waits_for_the_decision_and_runs_again_after():
    assert gc.isenabled()
    probe = _Probe()
    decide(_state(), probe)
    assert probe.collecting == [False]
    assert gc.isenabled()


def test_the_collector_runs_again_after_a_failed_decision():
    with pytest.raises(Exception, match="time"):
        decide(ClusterState(-1.0, Platform(nodes=4), (), ()), _Probe())
    assert gc.isenabled()


def test_a_caller_that_paused_the_collector_keeps_it_paused():
    gc.disable()
    try:
        decide(_state(), _Probe())
        assert not gc.isenabled()
    finally:
        gc.enable()


class _Clock:
    """Stands in for core's ``time``: wall and CPU clocks set by hand."""

    wall, cpu = 100.0, 20.0

    def perf_counter(self) -> float:
        return self.wall

    def thread_time(self) -> float:
        return self.cpu


def test_the_slowdown_is_wall_over_cpu_time_of_the_decision(monkeypatch):
    import bbopt.core as core

    clock = _Clock()
    monkeypatch.setattr(core, "_time", clock)
    assert core.decision_slowdown() == 1.0  # outside a decision
    with core.decision_asked(100.0):
        clock.wall, clock.cpu = 100.012, 20.003  # 12 ms of wall for 3 ms of CPU
        assert core.decision_slowdown() == pytest.approx(4.0)
        clock.cpu = 20.0009  # under a millisecond of CPU: too little to tell
        assert core.decision_slowdown() == 1.0
        clock.wall, clock.cpu = 100.002, 20.004  # (a measuring artefact: no speed-up)
        assert core.decision_slowdown() == 1.0
        clock.wall, clock.cpu = 110.0, 20.002
        assert core.decision_slowdown() == 50.0
    assert core.decision_slowdown() == 1.0

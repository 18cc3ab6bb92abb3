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

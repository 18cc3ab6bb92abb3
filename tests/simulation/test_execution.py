"""Execution models declare their optional hooks on a base class: a model that follows the
protocol without it is adapted once (its own record and metrics kept), one that lacks a method of
the protocol is refused naming it, and only an Evicting model may preempt."""

from __future__ import annotations

import pytest

from bbopt import Job, Platform
from bbopt.errors import InputError
from bbopt.runs import RunSpec, run
from bbopt.simulation.checkpoint import CheckpointRestart
from bbopt.simulation.execution import Evicting, ExecutionModelBase, Rigid, make_execution_model

JOBS = [Job("a", 0, 100, runtime=40, nodes=2), Job("b", 5, 100, runtime=10, nodes=4)]


class Doubled:
    """Every job runs twice its runtime (a duck-typed model with its own metrics)."""

    name = "doubled"

    def reset(self, jobs, platform):
        self.jobs, self.ends, self.recorded = jobs, [], False

    def start(self, k, t, allocation):
        self.ends.append((t + 2 * self.jobs[k].runtime, k))

    def next_time(self):
        return min(self.ends)[0] if self.ends else float("inf")

    def finish(self, t):
        done = sorted(k for e, k in self.ends if e == t)
        self.ends = [(e, k) for e, k in self.ends if e != t]
        return [(k, "finished") for k in done]

    def record(self, result):
        self.recorded = True

    def metrics(self, result):
        return {"doubled_runs": float(len(result.jobs))}


def test_a_protocol_object_is_adapted_with_its_own_hooks():
    model = Doubled()
    record = run(RunSpec(JOBS, Platform(4, 0.0), "fcfs", execution=model))
    assert record.metrics["doubled_runs"] == 2.0 and model.recorded
    assert list(record.result.end) == [80.0, 100.0]  # a: 0 + 80; b waits for a, 80 + 20
    assert isinstance(record.model, ExecutionModelBase) and not isinstance(record.model, Evicting)


def test_an_incomplete_model_is_refused_naming_what_is_missing():
    class Half:
        def reset(self, jobs, platform): ...

        def start(self, k, t, allocation): ...

    with pytest.raises(InputError, match="missing next_time, finish"):
        make_execution_model(Half())


def test_only_the_checkpoint_model_evicts():
    assert isinstance(CheckpointRestart(), Evicting)
    assert not isinstance(Rigid(), Evicting)
    assert Rigid().metrics(None) == {} and Rigid.ends_only_at_next_time

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


# ---------------------------------------------------------------- the rigid model
def test_rigid_kills_only_a_run_longer_than_its_walltime():
    jobs = [Job("at", 0, 100, runtime=100), Job("over", 0, 100, runtime=100.5),
            Job("under", 0, 100, runtime=99.5), Job("unknown", 0, 60)]
    model = Rigid()
    model.reset(jobs, Platform(4, 0.0))
    assert model.next_time() == float("inf") and model.finish(0.0) == []
    for k in (3, 1, 0, 2):
        model.start(k, 10.0, (k,))
    assert model.next_time() == 70.0  # no runtime: its walltime
    assert model.finish(69.0) == []
    assert model.finish(70.0) == [(3, "finished")]
    assert model.next_time() == 109.5 and model.finish(109.5) == [(2, "finished")]
    assert model.finish(110.0) == [(0, "finished"), (1, "killed")]  # in job order at one time
    assert model.next_time() == float("inf")
    model.reset(jobs, Platform(4, 0.0))
    assert model.next_time() == float("inf")


# ---------------------------------------------------------------- choosing a model
def test_a_model_by_name_with_its_options_or_the_object_itself():
    assert isinstance(make_execution_model(None), Rigid)
    assert isinstance(make_execution_model("rigid"), Rigid)
    ckpt = make_execution_model("checkpoint", pfs_bandwidth=5.0, on_kill="requeue")
    assert isinstance(ckpt, CheckpointRestart)
    assert (ckpt.pfs_bandwidth, ckpt.on_kill) == (5.0, "requeue")
    rigid = Rigid()
    assert make_execution_model(rigid) is rigid
    # (options are checked against the model's signature, as everywhere: units read)
    with pytest.raises(InputError, match=r"^field 'execution speed': execution model 'rigid' "
                                         r"has no option 'speed'; its options: none$"):
        make_execution_model("rigid", speed=2)
    with pytest.raises(InputError, match=r"^field 'execution': execution options go with an "
                                         r"execution model's name$"):
        make_execution_model(Rigid(), speed=2)


def test_an_adapted_model_takes_its_name_and_end_rule_and_the_base_defaults():
    class Bare:
        ends_only_at_next_time = 1

        def reset(self, jobs, platform): ...

        def start(self, k, t, allocation): ...

        def next_time(self):
            return 3.0

        def finish(self, t):
            return []

    adapted = make_execution_model(Bare())
    assert adapted.name == "Bare" and adapted.ends_only_at_next_time is True
    assert adapted.metrics(None) == {} and adapted.record(None) is None
    assert adapted.next_time() == 3.0
    doubled = make_execution_model(Doubled())
    assert doubled.name == "doubled" and doubled.ends_only_at_next_time is False


def test_a_refused_model_object_is_named_with_every_missing_method():
    class Half:
        def reset(self, jobs, platform): ...

        next_time = 3.0  # not callable

    with pytest.raises(InputError, match=r"^field 'execution': execution model 'Half' \(<.*Half "
                       r"object at 0x\w+>\) is missing start, next_time, finish \(see "
                       r"bbopt\.simulation\.execution\)$"):
        make_execution_model(Half())
    Half.name = "halfway"
    with pytest.raises(InputError, match=r"execution model 'halfway' \("):
        make_execution_model(Half())


def test_a_model_class_missing_a_method_is_not_registered():
    from bbopt.simulation.execution import EXECUTION_MODELS

    class Half:
        def reset(self, jobs, platform): ...

    with pytest.raises(InputError, match=r"^field 'execution': execution model 'half' \(test_a_"
                       r"model_class_missing_a_method_is_not_registered\.<locals>\.Half\) is "
                       r"missing start, next_time, finish"):
        EXECUTION_MODELS.add("half", Half)
    assert "half" not in EXECUTION_MODELS

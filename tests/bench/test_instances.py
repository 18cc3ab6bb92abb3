"""The instance library: every committed small instance reads back into the model it was
captured from, its recorded optimum is what bbopt's evaluator gives its recorded solution, and
bad documents are refused with the JSON path of the field."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bbopt import Job, Platform, simulate
from bbopt.bench.capture import model_source
from bbopt.bench.instances import (
    LIBRARY,
    Instance,
    iter_instances,
    model_to_json,
    read_instance,
    write_instance,
)
from bbopt.core import GB
from bbopt.errors import InputError
from bbopt.models.plan import Plan, PlanModel
from bbopt.models.preemption import PreemptionModel
from bbopt.models.window import WindowModel

SMALL = list(iter_instances(LIBRARY / "small"))


def test_the_small_tier_covers_every_problem_and_records_its_optima():
    problems = {i.problem for i in SMALL}
    assert problems == {"window", "io-window", "pack", "victims", "plan"}
    named = {i.model.named is not None for i in SMALL if i.problem == "plan"}
    assert named == {True, False}  # the pooled BB and the authors' 12 BB nodes
    assert {i.kind for i in SMALL if i.problem == "window"} == {"weighted", "pareto"}
    assert all(i.tier == "small" for i in SMALL)
    assert all(i.known.get("status") == "optimal" for i in SMALL)
    assert all(i.provenance["policy"] and "time" in i.provenance for i in SMALL)


@pytest.mark.parametrize("inst", [i for i in SMALL if i.kind != "pareto"], ids=lambda i: i.id)
def test_recorded_solution_scores_the_recorded_optimum(inst):
    x = inst.known["x"] if "x" in inst.known else Plan(tuple(inst.known["starts"]))
    assert inst.score(x) == pytest.approx(inst.known["objective"], rel=1e-12)


def test_plan_score_is_the_sum_of_squared_waits_and_refuses_non_plans():
    jobs = [Job("w", 0, walltime=100, nodes=4), Job("a", 0, walltime=150, nodes=1),
            Job("b", 0, walltime=150, nodes=1)]
    inst = Instance("p", "plan", PlanModel(0.0, (4, 0.0), [(100.0, 2, 0.0)], jobs, alpha=2),
                    {"kind": "min-score"})
    assert inst.score([0, 1, 2]) == 100.0 ** 2 + 2 * 200.0 ** 2  # w waits for the running job
    assert inst.score([1, 2, 0]) == 150.0 ** 2
    assert inst.score([0, 1]) is None and inst.score([0, 0, 1]) is None  # not permutations
    assert inst.score(Plan((150.0, 0.0, 0.0))) == 150.0 ** 2
    assert inst.score(Plan((0.0, 0.0, 0.0))) is None  # 6 nodes of 4 at once


def _states(platform: Platform) -> list:
    """Scheduling points of plan-2 on a short queue where a job holds BB pieces."""
    jobs = [Job(str(k), 10.0 * k, walltime=600.0 + 37 * k, runtime=500.0,
                nodes=16 + (k % 4) * 24, bb=(k % 3) * (16 + (k % 4) * 24) * 2 * GB)
            for k in range(24)]
    seen = []
    simulate(jobs, platform, "plan-2", on_decision=lambda s, d: seen.append(s)
             if len(s.queue) >= 3 and s.running else None)
    return seen


@pytest.mark.parametrize("named", [False, True], ids=["pool", "named-bb"])
def test_plan_models_round_trip_exactly(tmp_path, named):
    platform = Platform.kopanski(named_bb=named)
    states = _states(platform)
    assert states
    rng = np.random.default_rng(0)
    for k, state in enumerate(states[:: max(len(states) // 5, 1)]):
        model = PlanModel.from_state(state, 2)
        inst = Instance(f"p{k}", "plan", model, {"kind": "min-score"},
                        source=model_source(model, state))
        back = read_instance(write_instance(inst, tmp_path))
        assert back.to_json() == json.loads(json.dumps(inst.to_json()))
        orders = [rng.permutation(model.n).tolist() for _ in range(6)]
        assert [back.model.evaluate(o) for o in orders] == [model.evaluate(o) for o in orders]
        assert [back.model.plan(o) for o in orders] == [model.plan(o) for o in orders]
        if named:
            assert back.model._SN == model._SN


def test_pareto_fronts_are_mutually_non_dominated():
    for inst in (i for i in SMALL if i.kind == "pareto"):
        F = np.asarray(inst.known["front"])
        for a in F:
            assert not np.any(np.all(a <= F, axis=1) & np.any(a < F, axis=1)), inst.id


def test_models_round_trip_exactly(tmp_path):
    for inst in SMALL[:: max(len(SMALL) // 8, 1)]:
        path = write_instance(inst, tmp_path)
        back = read_instance(path)
        assert back.to_json() == json.loads(json.dumps(inst.to_json()))
        if inst.source is None:  # the model alone writes the same document
            assert model_to_json(back.model) == model_to_json(inst.model)
        assert back.known == json.loads(json.dumps(inst.known))


def test_window_score_is_the_weighted_utilisation():
    m = WindowModel(nodes=[60, 50], bb=[10.0, 80.0], free_nodes=100, free_bb=100.0,
                    total_nodes=200, total_bb=400.0)
    inst = Instance("t", "window", m, {"kind": "weighted", "weights": [0.5, 0.5]})
    # 0.5 * 60/200 + 0.5 * 10/400, not the unweighted sum nor raw units
    assert inst.score([1, 0]) == pytest.approx(0.5 * 0.3 + 0.5 * 0.025)
    assert inst.score([1, 1]) is None  # 110 nodes > 100 free


def test_victim_score_is_cost_and_infeasible_is_none():
    m = PreemptionModel.build(["a", "b"], [2, 3], [0.0, 0.0], [5.0, 7.0], ["e", "e"],
                              {"e": 5}, need_nodes=3, need_bb=0.0)
    inst = Instance("v", "victims", m, {"kind": "min-cost"})
    assert inst.score([0, 1]) == 7.0
    assert inst.score([1, 0]) is None  # 2 nodes < 3 needed


@pytest.mark.parametrize("edit, path", [
    (lambda d: d.update(schema="other"), "$.schema"),
    (lambda d: d.update(version=99), "$.version"),
    (lambda d: d.update(problem="plan9"), "$.problem"),
    (lambda d: d["form"].update(kind="pareto"), "$.form.kind"),
    (lambda d: d["model"].update(colour=1), "$.model.colour"),
    (lambda d: d.pop("model"), "$.model"),
])
def test_bad_documents_name_the_field(tmp_path, edit, path):
    doc = next(i for i in SMALL if i.problem == "pack").to_json()
    edit(doc)
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError) as err:
        read_instance(f)
    assert str(f) in str(err.value) and path in str(err.value)


def test_bad_plan_job_names_its_index(tmp_path):
    doc = next(i for i in SMALL if i.problem == "plan").to_json()
    del doc["model"]["jobs"][2]["walltime"]
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"\$\.model\.jobs\[2\]"):
        read_instance(f)


def test_not_json_names_the_line(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text("{\n  oops\n}")
    with pytest.raises(InputError, match="line 2"):
        read_instance(f)

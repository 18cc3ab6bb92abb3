"""The instance library: every committed small instance reads back into the model it was
captured from, its recorded optimum is what bbopt's evaluator gives its recorded solution, and
bad documents are refused with the JSON path of the field."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bbopt.bench.instances import (
    LIBRARY,
    Instance,
    iter_instances,
    model_to_json,
    read_instance,
    write_instance,
)
from bbopt.errors import InputError
from bbopt.models.preemption import PreemptionModel
from bbopt.models.window import WindowModel

SMALL = list(iter_instances(LIBRARY / "small"))


def test_the_small_tier_covers_every_problem_and_records_its_optima():
    problems = {i.problem for i in SMALL}
    assert problems == {"window", "io-window", "pack", "victims"}
    assert {i.kind for i in SMALL if i.problem == "window"} == {"weighted", "pareto"}
    assert all(i.tier == "small" for i in SMALL)
    assert all(i.known.get("status") == "optimal" for i in SMALL)
    assert all(i.provenance["policy"] and "time" in i.provenance for i in SMALL)


@pytest.mark.parametrize("inst", [i for i in SMALL if i.kind != "pareto"], ids=lambda i: i.id)
def test_recorded_solution_scores_the_recorded_optimum(inst):
    assert inst.score(inst.known["x"]) == pytest.approx(inst.known["objective"], rel=1e-12)


def test_pareto_fronts_are_mutually_non_dominated():
    for inst in (i for i in SMALL if i.kind == "pareto"):
        F = np.asarray(inst.known["front"])
        for a in F:
            assert not np.any(np.all(a <= F, axis=1) & np.any(a < F, axis=1)), inst.id


def test_models_round_trip_exactly(tmp_path):
    for inst in SMALL[:: max(len(SMALL) // 8, 1)]:
        path = write_instance(inst, tmp_path)
        back = read_instance(path)
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


def test_not_json_names_the_line(tmp_path):
    f = tmp_path / "bad.json"
    f.write_text("{\n  oops\n}")
    with pytest.raises(InputError, match="line 2"):
        read_instance(f)

"""MPS / LP export round trip: HiGHS reading the exported MPS files of the small tier finds the
recorded optimum of every instance (every epsilon-constraint step of the Pareto instances), and
its solution file, read back, scores the optimum by bbopt's own evaluator."""

from __future__ import annotations

import pytest

from bbopt.bench.export import (
    export_dir,
    load_manifest,
    read_solution,
    score_file,
    score_values,
)
from bbopt.bench.instances import LIBRARY, iter_instances
from bbopt.errors import InputError

highspy = pytest.importorskip("highspy")

INSTANCES = {i.id: i for i in iter_instances(LIBRARY / "small")}


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("mps")
    export_dir(LIBRARY / "small", out)
    return out, load_manifest(out)


def _highs(path):
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("mip_rel_gap", 0.0)
    h.readModel(str(path))
    h.run()
    return h


def test_every_instance_and_every_front_step_is_exported(exported):
    out, entries = exported
    # every instance with an integer program: plan orders have none
    assert {e["instance"] for e in entries} == {i for i, inst in INSTANCES.items()
                                                if inst.problem != "plan"}
    assert any(inst.problem == "plan" for inst in INSTANCES.values())
    steps = sum(len(i.known["front"]) for i in INSTANCES.values() if i.kind == "pareto")
    assert sum(e["step"] is not None for e in entries) == steps
    for e in entries:
        assert (out / f"{e['file']}.mps").is_file() and (out / f"{e['file']}.lp").is_file()


def test_highs_on_the_mps_finds_the_recorded_optima(exported):
    out, entries = exported
    for e in entries:
        h = _highs(out / f"{e['file']}.mps")
        assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal, e["file"]
        names = h.getLp().col_names_
        values = dict(zip(names, h.getSolution().col_value, strict=True))
        got = score_values(values, e, INSTANCES[e["instance"]])
        assert got == pytest.approx(e["optimum"], rel=1e-9, abs=1e-9), e["file"]


def test_a_highs_solution_file_reads_back_and_scores(exported, tmp_path):
    out, entries = exported
    e = next(e for e in entries if e["instance"].startswith("pack"))
    h = _highs(out / f"{e['file']}.mps")
    sol = tmp_path / "pack.sol"
    h.writeSolution(str(sol), 0)
    assert score_file(sol, e, INSTANCES[e["instance"]]) == pytest.approx(e["optimum"])


def test_plain_name_value_solutions_and_an_infeasible_one(exported, tmp_path):
    _, entries = exported
    e = next(e for e in entries if e["instance"].startswith("victims"))
    inst = INSTANCES[e["instance"]]
    x = inst.known["x"]
    sol = tmp_path / "v.sol"
    sol.write_text("Optimal - objective value 1\n" + "".join(
        f"{k} {name} {v} 0\n" for k, (name, v) in enumerate(zip(e["variables"], x,
                                                                strict=True))))
    assert read_solution(sol)[e["variables"][0]] == x[0]
    assert score_file(sol, e, inst) == inst.known["objective"]
    sol.write_text("".join(f"{name} 0\n" for name in e["variables"]))  # no victim at all
    assert score_file(sol, e, inst) is None


def test_a_bad_number_in_a_highs_solution_names_the_line(tmp_path):
    sol = tmp_path / "bad.sol"
    sol.write_text("Model status\n# Columns 2\nx0 1\nx1 oops\n")
    with pytest.raises(InputError, match="line 4"):
        read_solution(sol)

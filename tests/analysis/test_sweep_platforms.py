"""Sweep specs: a platform whose BB is sized from a workload (Fan et al.'s BB-bound regime), and
budget entries that set other policy options (a base order as a scenario of the report)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bbopt.analysis.sweep import plan
from bbopt.analysis.sweep_inputs import _workload
from bbopt.analysis.sweep_spec import parse_spec
from bbopt.core import GB
from bbopt.errors import InputError
from bbopt.workloads.generators.bbsched import bb_capacity_for_demand
from bbopt.workloads.generators.catalog import apply

SCALE = 64 / 4392  # Theta's requests on 64 nodes
WORKLOAD = {"generator": {"name": "kth-like", "n_jobs": 300, "nodes": 64},
            "transforms": [{"name": "theta-original", "nodes": 64},
                           {"name": "bbsched", "scenario": "S4", "scale": SCALE}]}


def _spec(**over):
    doc = {"name": "p", "workloads": {"w": WORKLOAD},
           "platforms": [{"name": "sized", "nodes": 64, "bb": {"sized_by": "w", "demand": 1.0}}],
           "policies": ["fcfs-bb"], "seeds": [0]}
    doc.update(json.loads(json.dumps(over)))
    return parse_spec(doc, source="<test>", base=Path.cwd())


def _demand(jobs, capacity, attr):
    span = max(j.submit for j in jobs) - min(j.submit for j in jobs)
    return sum(getattr(j, attr) * (j.runtime or j.walltime) for j in jobs) / (capacity * span)


@pytest.mark.parametrize("demand", [0.5, 1.0, 1.5])
def test_sized_bb_makes_the_bb_demand_that_multiple_of_the_node_demand(demand):
    jobs = apply("bbsched", apply("theta-original", apply("kth-like", None, 2, n_jobs=400,
                                                          nodes=64), 3, nodes=64), 4,
                 scenario="S4", scale=SCALE)
    cap = bb_capacity_for_demand(jobs, 64, demand)
    assert cap % GB == 0 and cap > max(j.bb for j in jobs)
    ratio = _demand(jobs, cap, "bb") / _demand(jobs, 64, "nodes")
    assert ratio == pytest.approx(demand, rel=1e-3)  # whole GB: a tiny rounding
    # a capacity below the largest request could never run that job: raised to it
    few = [j if k == 7 else j.__class__(**{**{f: getattr(j, f) for f in j.__dataclass_fields__},
                                           "bb": 0.0}) for k, j in enumerate(jobs)]
    assert bb_capacity_for_demand(few, 64, demand) == few[7].bb > 0


def test_plan_sizes_the_platform_per_seed_from_the_named_workload():
    spec = _spec(seeds=[0, 1])
    tasks = plan(spec)
    assert len(tasks) == 2
    for t in tasks:
        jobs, _ = _workload(t.workload_spec, t.workload_seed)
        bb = json.loads(t.platform_spec)["bb"]
        assert bb == bb_capacity_for_demand(jobs, 64, 1.0)
        assert t.provenance["hash_inputs"]["platform"]["bb"] == bb
    assert len({json.loads(t.platform_spec)["bb"] for t in tasks}) == 2  # two draws, two sizes
    # the same capacity written out is the same run; another demand is another run
    explicit = _spec(platforms=[{"name": "sized", "nodes": 64,
                                 "bb": json.loads(tasks[0].platform_spec)["bb"]}])
    assert plan(explicit)[0].hash == tasks[0].hash
    other = _spec(platforms=[{"name": "sized", "nodes": 64,
                              "bb": {"sized_by": "w", "demand": 1.5}}])
    assert plan(other)[0].hash != tasks[0].hash


def test_a_sized_bb_must_name_a_workload_of_the_spec():
    with pytest.raises(InputError, match="sized_by"):
        _spec(platforms=[{"name": "x", "nodes": 8, "bb": {"sized_by": "nope"}}])
    with pytest.raises(InputError, match="nodes"):
        _spec(platforms=[{"name": "x", "bb": {"sized_by": "w"}}])


def test_budget_entries_set_policy_options_as_scenarios():
    spec = _spec(platforms=[{"name": "m", "nodes": 64, "bb": "100TB"}],
                 policies=["naive", "conservative-bb"],
                 budgets=[{"name": "w5", "window": 5, "order": "wfp", "depth": 3},
                          {"name": "w10", "window": 10}])
    cells = {(c.policy.name, c.budget) for c in spec.cells()}
    # conservative-bb takes 'depth' (w5) but none of w10's options: it would repeat its run
    assert cells == {("naive", "w5"), ("naive", "w10"), ("conservative-bb", "w5")}
    opts = {(t.policy, t.params["budget"]): t.options for t in plan(spec)}
    assert opts[("naive", "w5")]["window"] == 5 and opts[("naive", "w5")]["order"] == "wfp"
    assert opts[("naive", "w10")]["window"] == 10 and "order" not in opts[("naive", "w10")]
    assert opts[("conservative-bb", "w5")] == {"depth": 3}
    with pytest.raises(InputError, match="windw"):
        _spec(policies=["naive"], budgets=[{"name": "x", "windw": 5}])
    with pytest.raises(InputError, match="same name"):
        _spec(policies=["naive"], budgets=[{"name": "x", "window": 5},
                                           {"name": "x", "window": 6}])


def _wrapper():
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bbsched_reproduction.py"
    spec = importlib.util.spec_from_file_location("bbsched_reproduction", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_bbsched_benchmark_runs_the_spec_itself(monkeypatch):
    """The benchmark's options rewrite experiments/bbsched.yaml: with none, its runs are the
    spec's own (same hashes, so one results store serves both)."""
    from bbopt.analysis.sweep_spec import load_spec
    from bbopt.units import read_document
    from tests._workload_data import KTH_SWF, data_file

    monkeypatch.setenv("BBOPT_DATA", str(data_file(KTH_SWF).parent))
    mod = _wrapper()

    def tasks(argv):
        doc = mod.rewrite(read_document(mod.SPEC), mod.parser().parse_args(argv))
        return plan(parse_spec(doc, source=str(mod.SPEC), base=mod.SPEC.parent))

    own = plan(load_spec(mod.SPEC, quick=True))
    assert [t.hash for t in tasks(["--quick"])] == [t.hash for t in own]
    cpu = tasks(["--quick", "--backfill", "cpu", "--policies", "naive,bbsched",
                 "--no-ssd"])
    assert {t.policy for t in cpu} == {"naive", "bbsched"}
    assert {t.params["workload"] for t in cpu} == {"S4"}
    assert all(t.options["reserve_bb"] is False and t.options["order"] == "wfp" for t in cpu)
    halved = tasks(["--quick", "--bb-demand", "0.5", "--no-ssd"])
    bb = {json.loads(t.platform_spec)["bb"] for t in halved}
    assert len(bb) == 1 and bb.pop() > json.loads(own[0].platform_spec)["bb"]

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


@pytest.mark.slow  # (about 5 s of CPU: the 600 tasks' workloads and sized BBs are drawn)
def test_bbsched_on_theta_is_a_spec_of_its_own():
    """experiments/bbsched-theta.yaml holds the Theta-like variants: Theta's 1.26 PB and a BB
    sized from S4's demand, processor-only backfilling on the sized one only."""
    from bbopt.analysis.sweep_spec import load_spec

    path = Path(__file__).resolve().parents[2] / "experiments" / "bbsched-theta.yaml"
    tasks = plan(load_spec(path))
    assert len(tasks) == 5 * 8 * 3 * 5
    assert {t.params["workload"] for t in tasks} == {"Original", "S1", "S2", "S3", "S4"}
    cpu = [t for t in tasks if t.options.get("reserve_bb") is False]
    assert len(cpu) == 5 * 8 * 5 and all(t.options["order"] == "wfp" for t in cpu)
    bb = {json.loads(t.platform_spec)["nodes"]: set() for t in tasks}
    for t in tasks:
        bb[json.loads(t.platform_spec)["nodes"]].add(json.loads(t.platform_spec)["bb"])
    sizes = bb[4392]
    # Theta's 1.26 PB and one BB sized from each of the five seeds' S4 demand, all below it
    assert sorted(sizes) == [300.923e12, 308.084e12, 311.891e12, 312.255e12, 314.617e12,
                             1.26e15]
    quick = plan(load_spec(path, quick=True))
    assert len(quick) == 4 and {t.params["workload"] for t in quick} == {"S4"}

"""Fair-share sweeps: a workload carries its entitlements (``omfs-entities``), the sweep gives
them to the policies that take ``shares`` and measures every run against them (Zvi & Oren)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from bbopt import Platform, simulate
from bbopt.analysis.store import Store, collect
from bbopt.analysis.sweep import plan, run_sweep
from bbopt.analysis.sweep_inputs import _workload
from bbopt.analysis.sweep_spec import parse_spec
from bbopt.analysis.table import fairshare_metrics
from bbopt.errors import InputError
from bbopt.simulation.checkpoint import CheckpointRestart
from bbopt.workloads.generators.catalog import apply
from bbopt.workloads.generators.omfs import assign_entities
from bbopt.workloads.shares import SHARE_KEY, with_shares, workload_shares

DOC = {
    "name": "fs",
    "workloads": {"w": {"generator": {"name": "kth-like", "n_jobs": 160, "nodes": 32,
                                      "load": 1.2},
                        "transforms": [{"name": "omfs-entities", "by": "random",
                                        "n_entities": 3, "shares": "usage"},
                                       {"name": "omfs-preemption", "preemptable": 1.0,
                                        "checkpointable": 1.0}]}},
    "platforms": [{"name": "m", "nodes": 32, "bb": "160GB"}],
    "policies": [{"name": "omfs", "options": {"quantum": 600}}, "partition", "sjf-bb"],
    "executions": [{"name": "checkpoint", "memory_per_node": "8GB", "pfs_bandwidth": "1GB/s"}],
    "seeds": [0],
    "reference": "sjf-bb",
}


def _spec(doc=None):
    return parse_spec(json.loads(json.dumps(doc or DOC)), source="<test>", base=Path.cwd())


def test_the_entities_generator_leaves_its_shares_in_the_workload():
    base = apply("kth-like", None, 3, n_jobs=200)
    jobs = apply("omfs-entities", base, 5, by="random", n_entities=4, shares="usage")
    _, expected = assign_entities(base, by="random", n_entities=4, shares="usage", seed=5)
    assert workload_shares(jobs) == pytest.approx(expected)
    assert len(expected) == 4 and sum(expected.values()) == pytest.approx(1.0)
    assert workload_shares(base) is None  # a workload without entitlements has none


def test_entities_whose_jobs_disagree_on_their_share_are_an_error():
    jobs = with_shares([replace(j, user="a") for j in apply("kth-like", None, 0, n_jobs=20)],
                       {"a": 0.25})
    assert workload_shares(jobs) == {"a": 0.25}
    jobs[3] = replace(jobs[3], extra={SHARE_KEY: 0.5})
    with pytest.raises(InputError, match="different entitlement shares"):
        workload_shares(jobs)


def test_execution_options_read_their_units():
    spec = _spec()
    assert spec.executions["checkpoint"] == {"name": "checkpoint", "memory_per_node": 8e9,
                                             "pfs_bandwidth": 1e9}


def test_policies_get_the_workloads_shares_and_every_run_is_measured_against_them(tmp_path):
    spec = _spec()
    tasks = {t.policy: t for t in plan(spec)}
    jobs, _ = _workload(tasks["omfs"].workload_spec, tasks["omfs"].workload_seed)
    shares = workload_shares(jobs)
    assert tasks["omfs"].options["shares"] == shares
    assert tasks["partition"].options["shares"] == shares
    assert "shares" not in tasks["sjf-bb"].options  # it takes none ...
    assert tasks["sjf-bb"].shares == shares          # ... but is measured against them
    rep = run_sweep(spec, tmp_path / "r", executor="serial", progress=False)
    assert rep.failed == 0, rep.failures
    table = collect(tmp_path / "r").set_index("policy")
    # the stored metrics are those of the same run simulated directly with those shares
    for policy in ("omfs", "sjf-bb"):
        options = {"shares": shares, "quantum": 600} if policy == "omfs" else {}
        res = simulate(list(jobs), Platform(nodes=32, bb=160e9), policy, options=options,
                       execution=CheckpointRestart(memory_per_node=8e9, pfs_bandwidth=1e9))
        want = fairshare_metrics(res, shares, 600.0 if policy == "omfs" else 1800.0)
        for key in ("entitlement_p95", "useful_utilization", "share_shortfall_max",
                    "checkpoints"):
            assert table.loc[policy, key] == pytest.approx(want[key]), (policy, key)
    assert table.loc["omfs", "checkpoints"] > 0  # the shares made OMFS preempt
    summary = next(s for s in Store(tmp_path / "r").summaries() if s["policy"] == "partition")
    assert summary["options"]["shares"] == pytest.approx(shares)


def test_an_explicit_shares_option_wins_over_the_workloads():
    doc = json.loads(json.dumps(DOC))
    doc["policies"] = [{"name": "capping", "options": {"shares": "e0:0.5,e1:0.5"}}]
    doc["reference"] = None
    (task,) = plan(_spec(doc))
    assert task.options["shares"] == "e0:0.5,e1:0.5"
    assert task.shares == {"e0": 0.5, "e1": 0.5}


def test_generated_batsim_workload_keeps_its_entitlements(tmp_path):
    from bbopt.cli import main
    from bbopt.loading import load_workload

    base = tmp_path / "base.swf"
    assert main(["generate", "kth-like", "n_jobs=80", "--out", str(base)]) == 0
    out = tmp_path / "e.json"
    assert main(["generate", "omfs-entities", "by=random", "n_entities=3", "--workload",
                 str(base), "--seed", "4", "--out", str(out)]) == 0
    jobs, _ = load_workload(out, bb="none")
    _, expected = assign_entities(load_workload(base, bb="none")[0], by="random", n_entities=3,
                                  shares="usage", seed=4)
    assert workload_shares(jobs) == pytest.approx(expected)

"""A sweep's run tasks: what the plan puts in each (its hash inputs, provenance, options, cost)
and what a worker makes of one (the run it simulates, the result it returns), and the summary
the driver stores."""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import socket
import sys
import types
from collections import OrderedDict
from dataclasses import replace
from pathlib import Path

import numpy
import pytest

import bbopt
from bbopt.analysis import sweep, sweep_schedule
from bbopt.analysis.store import canonical, run_hash
from bbopt.analysis.sweep import _environment, _keep_widest, _summary, iter_cells, plan, run_task
from bbopt.analysis.sweep_inputs import (
    _part,
    _workload,
    build_platform,
    platform_fingerprint,
    resolve_platform,
    split_parts,
    workload_seed,
)
from bbopt.analysis.sweep_schedule import estimate, write_prepared
from bbopt.analysis.sweep_spec import parse_spec
from bbopt.errors import InputError
from bbopt.policies import policy_options
from bbopt.runs import with_budget_mode

GEN = {"name": "kth-like", "n_jobs": 40, "nodes": 8}
DOC = {"name": "p", "workloads": {"w": {"generator": GEN, "split": {"parts": 2}}},
       "platforms": [{"name": "m", "nodes": 8, "bb": "40GB"}],
       "policies": ["naive", {"name": "naive", "label": "n7", "options": {"seed": 7}},
                    "fcfs-bb"],
       "seeds": [3], "tick": 30, "warmup": 60, "cooldown": 90}


def spec_of(tmp_path: Path, **over):
    doc = json.loads(json.dumps(DOC))
    doc.update(over)
    return parse_spec(doc, source="<t>", base=tmp_path)


# --------------------------------------------------------------------------------------------
# the plan


def test_each_task_holds_its_cells_inputs_and_is_named_by_their_hash(tmp_path):
    spec = spec_of(tmp_path)
    tasks = plan(spec)
    assert len(tasks) == 6  # two parts, three policies (two labels of naive, other seeds)
    wspec = spec.workloads["w"]
    wseed = workload_seed(wspec, 3)
    jobs, sha = _workload(canonical(wspec), wseed)
    pjson, pident = platform_fingerprint(resolve_platform(spec, "m", 3), spec.base)
    cells = {(c.policy.label, c.part): c for c in spec.cells()}
    for t in tasks:
        label, name = t.params["policy"], t.params["policy_name"]
        given = {"seed": 7} if label == "n7" else {}
        options = with_budget_mode(name, given, "deterministic")
        if name == "naive" and label != "n7":
            options["seed"] = 3  # a seeded policy not given one: the cell's seed
        assert t.options == options
        assert ("seed" in t.options) is (name == "naive")
        inputs = {"bbopt": bbopt.__version__,
                  "workload": {"content_sha256": sha, "split": {"parts": 2}, "part": t.part},
                  "platform": pident, "policy": name, "options": options, "seed": 3,
                  "budget": {}, "execution": {"name": "rigid"}, "tick": 30.0,
                  "interval": {"warmup": 60.0, "cooldown": 90.0}}
        assert t.provenance["hash_inputs"] == inputs
        assert t.hash == run_hash(inputs)
        assert t.provenance["workload"] == {
            "generator": GEN, "transforms": [], "first": None, "seed": wseed,
            "content_sha256": sha, "jobs": 40, "split": {"parts": 2}, "part": t.part}
        assert (t.workload_spec, t.workload_seed, t.workload_sha) == (canonical(wspec), wseed,
                                                                       sha)
        assert (t.platform_spec, t.policy, t.execution) == (pjson, name, {"name": "rigid"})
        assert (t.tick, t.warmup, t.cooldown) == (30.0, 60.0, 90.0)
        assert t.params == cells[(label, t.part)].params()
        n = len(_part(t.workload_spec, wseed, t.part))
        assert n == {0: 18, 1: 22}[t.part]
        assert t.cost == estimate(n, name, policy_options(name))
        assert (t.shares, t.prepared, t.plugins) == (None, None, ())
    assert sorted((t.params["policy"], t.part) for t in tasks) == sorted(cells)


def test_a_file_workload_is_traced_to_its_files_content(tmp_path):
    swf = tmp_path / "w.swf"
    swf.write_text("".join(f"{k + 1} {k * 60} 0 100 2 -1 -1 2 400 -1 1 1 1 -1 1 -1 -1 -1\n"
                           for k in range(6)))
    spec = spec_of(tmp_path, workloads={"f": {"file": str(swf), "first": 5}},
                   policies=["fcfs-bb"], warmup=0, cooldown=0)
    (t,) = plan(spec)
    w = t.provenance["workload"]
    assert w["file"] == str(swf)
    assert w["file_sha256"] == hashlib.sha256(swf.read_bytes()).hexdigest()
    assert "generator" not in w
    assert (w["first"], w["jobs"], w["split"], w["part"]) == (5, 5, None, None)
    assert t.provenance["hash_inputs"]["workload"]["split"] is None
    assert t.provenance["hash_inputs"]["interval"] == {"warmup": 0.0, "cooldown": 0.0}


def test_two_cells_that_are_one_run_are_planned_once_under_the_first_label(tmp_path):
    spec = spec_of(tmp_path, policies=["fcfs-bb", {"name": "fcfs-bb", "label": "F"}])
    tasks = plan(spec)
    assert [(t.params["policy"], t.part) for t in tasks] == [("fcfs-bb", 0), ("fcfs-bb", 1)]
    assert len({t.hash for t in tasks}) == 2


@pytest.mark.parametrize("split, where", [({"parts": 2}, "w part 0"), (None, "w")])
def test_a_warmup_leaving_nothing_to_measure_is_refused_naming_the_workload(tmp_path, split,
                                                                          where):
    workloads = {"w": {"generator": GEN, **({"split": split} if split else {})}}
    with pytest.raises(InputError) as err:
        plan(spec_of(tmp_path, workloads=workloads, warmup="1000000h", cooldown=0))
    assert err.value.field == "warmup" and err.value.source == "<t>"
    assert err.value.reason.startswith("a warm-up of 3.6e+09 s and a cool-down of 0 s leave no")
    assert err.value.reason.endswith(f" in workload {where}")


def test_iter_cells_is_the_specs_cells(tmp_path):
    spec = spec_of(tmp_path)
    assert list(iter_cells(spec)) == spec.cells()


# --------------------------------------------------------------------------------------------
# a run in a worker


@pytest.fixture
def fresh(monkeypatch):
    """A worker that has prepared no workload yet."""
    monkeypatch.setattr(sweep_schedule, "_PREPARED", OrderedDict())


def _task(tmp_path, policy="fcfs-bb", part=1, **over):
    doc = {"policies": [policy], "executions": [{"name": "checkpoint",
                                                 "memory_per_node": "8GB"}], **over}
    return next(t for t in plan(spec_of(tmp_path, **doc)) if t.part == part)


def test_a_worker_runs_its_tasks_own_inputs(tmp_path, monkeypatch, fresh):
    import bbopt.runs

    seen = []
    real = bbopt.runs.run

    def run(spec, **kw):
        seen.append((spec, kw))
        return real(spec, **kw)

    monkeypatch.setattr(bbopt.runs, "run", run)
    t = replace(_task(tmp_path, {"name": "conservative-bb", "options": {"depth": 3}}),
                shares={"u1": 1.0})
    out = run_task(t)
    assert "error" not in out, out.get("error")
    ((spec, kw),) = seen
    part = list(_part(t.workload_spec, t.workload_seed, 1))
    assert spec.workload == part and len(part) == 22
    assert spec.platform == build_platform(t.platform_spec)
    assert (spec.policy, spec.options) == ("conservative-bb", t.options)
    assert t.options["depth"] == 3
    assert (spec.execution, spec.execution_options) == ("checkpoint", {"memory_per_node": 8e9})
    assert t.execution == {"name": "checkpoint", "memory_per_node": 8e9}  # (not consumed)
    assert (spec.tick, spec.warmup, spec.cooldown) == (30.0, 60.0, 90.0)
    assert (spec.shares, spec.name) == ({"u1": 1.0}, "w")
    assert callable(kw["on_decision"])
    # what it returns: the run's metrics and jobs, when and where it ran
    assert out["hash"] == t.hash and out["part_jobs"] == 22
    timing = ("decision_time", "simulation_wall_time")
    again = real(spec).metrics
    assert {k: v for k, v in out["metrics"].items() if not k.startswith(timing)} == {
        k: v for k, v in again.items() if not k.startswith(timing)}
    rows = gzip.decompress(out["jobs_csv_gz"]).decode().splitlines()
    assert len(rows) == 23 and rows[0].startswith("job_id,")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", out["started_at"])
    assert out["host"] == socket.gethostname()
    assert 0 < out["wall_time"] < 60 and 0 < out["cpu_time"] < 60
    assert out["pareto"] is None
    assert out["curves"] == {}  # (the model has curves: none for this run)


def test_a_run_without_a_name_is_named_workload(tmp_path, monkeypatch, fresh):
    import bbopt.runs

    names = []
    real = bbopt.runs.run
    monkeypatch.setattr(bbopt.runs, "run", lambda s, **kw: names.append(s.name) or real(s, **kw))
    t = _task(tmp_path)
    run_task(replace(t, params={k: v for k, v in t.params.items() if k != "workload"}))
    assert names == ["workload"]


def test_a_local_worker_reads_the_drivers_prepared_workload(tmp_path, monkeypatch, fresh):
    t = _task(tmp_path, part=0)
    jobs = _workload(t.workload_spec, t.workload_seed)[0]
    write_prepared(tmp_path, t.workload_sha, jobs[:30])  # (its first part tells it apart)
    assert len(split_parts(t.workload_spec, jobs[:30])[0]) == 17 != len(_part(
        t.workload_spec, t.workload_seed, 0))

    def never(*a):
        raise AssertionError("rebuilt")

    monkeypatch.setattr(sweep, "_workload", never)
    out = run_task(replace(t, prepared=str(tmp_path)))
    assert "error" not in out, out.get("error")
    assert out["part_jobs"] == 17


def test_a_worker_without_the_drivers_files_builds_the_workload_and_its_part(tmp_path, fresh):
    t = _task(tmp_path, part=1)
    out = run_task(replace(t, prepared=str(tmp_path / "none")))
    assert out.get("error") is None and out["part_jobs"] == 22


def test_an_empty_part_fails_the_run_naming_the_split(tmp_path, fresh):
    t = _task(tmp_path, part=None, workloads={"w": {"generator": GEN}})
    write_prepared(tmp_path, t.workload_sha, [])
    out = run_task(replace(t, prepared=str(tmp_path)))
    assert out["error"] == "InputError: field 'split': part None of the workload is empty"


def test_a_failed_run_is_a_record_of_what_failed_when_and_where(tmp_path, fresh):
    t = replace(_task(tmp_path), plugins=("no_such_plugin_module",))
    out = run_task(t)
    assert set(out) == {"hash", "error", "traceback", "started_at", "wall_time", "host"}
    assert out["hash"] == t.hash
    assert out["error"] == ("InputError: field 'plugins': cannot import plug-in "
                            "'no_such_plugin_module': No module named 'no_such_plugin_module'")
    assert out["traceback"].startswith("Traceback (most recent call last)")
    assert "no_such_plugin_module" in out["traceback"].splitlines()[-1]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", out["started_at"])
    assert out["host"] == socket.gethostname() and 0 < out["wall_time"] < 10


def test_a_window_policys_widest_pareto_set_is_kept(tmp_path, fresh):
    t = _task(tmp_path, policy="bbsched", part=None, workloads={"w": {
        "generator": {**GEN, "n_jobs": 30}}}, warmup=0, cooldown=0, tick=None, seeds=[0])
    out = run_task(t)
    assert "error" not in out, out.get("error")
    assert out["pareto"]["time"] == 55818.0 and len(out["pareto"]["alternatives"]) == 2


def _decision(n):
    # (numpy integers, which JSON cannot write as they are)
    return types.SimpleNamespace(alternatives=[{"wait": numpy.int64(k)} for k in range(n)])


def test_keep_widest_keeps_the_first_decision_with_the_most_alternatives():
    widest = []
    _keep_widest(widest, types.SimpleNamespace(time=1), _decision(1))
    assert widest == []  # one alternative is no choice
    _keep_widest(widest, types.SimpleNamespace(time=2), _decision(2))
    assert widest == [{"time": 2.0, "alternatives": [{"wait": 0.0}, {"wait": 1.0}]}]
    assert type(widest[0]["time"]) is float and type(widest[0]["alternatives"][1]["wait"]) \
        is float
    _keep_widest(widest, types.SimpleNamespace(time=3), _decision(2))
    assert widest[0]["time"] == 2.0  # as wide: the first stays
    _keep_widest(widest, types.SimpleNamespace(time=4), _decision(3))
    assert len(widest) == 1 and widest[0]["time"] == 4.0
    assert len(widest[0]["alternatives"]) == 3


# --------------------------------------------------------------------------------------------
# what the driver stores


def test_environment_names_the_versions_of_what_ran(monkeypatch):
    import importlib.metadata as md
    import platform

    env = _environment()
    assert env["bbopt_version"] == bbopt.__version__
    assert env["python"] == sys.version.split()[0] == platform.python_version()
    assert env["numpy"] == numpy.__version__
    assert env["system"] == platform.platform()
    for mod in ("ortools", "pymoo", "pulp", "scipy", "pandas"):
        try:
            assert env[mod] == md.version(mod)
        except md.PackageNotFoundError:
            assert mod not in env
    real = md.version

    def version(name):
        if name == "pymoo":
            raise md.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(md, "version", version)
    env = _environment()
    assert "pymoo" not in env and env["scipy"] == real("scipy")


def test_summary_holds_the_run_its_provenance_and_only_the_extras_it_has(tmp_path):
    spec = spec_of(tmp_path, metrics=["mean_wait"], reference="fcfs-bb",
                   policies=["fcfs-bb"])
    t = plan(spec)[0]
    out = {"metrics": {"mean_wait": 1.5}, "part_jobs": 20, "host": "h1",
           "started_at": "2026-01-01T00:00:00+00:00", "wall_time": 2.0, "cpu_time": 1.0,
           "pareto": None, "curves": {}}
    s = _summary(t, out, spec, {"python": "3.x", "host": "env"})
    prov = s.pop("provenance")
    assert s == {"hash": t.hash, "sweep": "p", "params": t.params, "policy": "fcfs-bb",
                 "options": t.options, "metrics": {"mean_wait": 1.5}, "reference": "fcfs-bb",
                 "report_metrics": ["mean_wait"]}
    assert prov["python"] == "3.x" and prov["hash_inputs"] == t.provenance["hash_inputs"]
    assert prov["workload"] == {**t.provenance["workload"], "part_jobs": 20}
    assert (prov["host"], prov["started_at"], prov["wall_time"], prov["cpu_time"]) == (
        "h1", "2026-01-01T00:00:00+00:00", 2.0, 1.0)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", prov["finished_at"])
    assert "part_jobs" not in t.provenance["workload"]  # (the task's own is not changed)
    full = _summary(t, {**out, "pareto": {"time": 1.0}, "curves": {"u": [1.0]}}, spec, {})
    assert (full["pareto"], full["curves"]) == ({"time": 1.0}, {"u": [1.0]})
    bare = _summary(replace(t, provenance={}), {"metrics": {}}, spec, {})
    assert bare["provenance"]["workload"] == {"part_jobs": None}
    assert bare["provenance"]["host"] is None and bare["provenance"]["wall_time"] is None


def test_a_platform_file_beside_the_spec_is_found_from_anywhere(tmp_path, monkeypatch):
    (tmp_path / "m.json").write_text('{"nodes": 6, "bb": "3GB", "name": "m"}')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    (t,) = plan(spec_of(tmp_path, platforms=["m.json"], policies=["fcfs-bb"],
                        workloads={"w": {"generator": GEN}}))
    assert json.loads(t.platform_spec) == {"file": str((tmp_path / "m.json").resolve())}
    assert t.provenance["hash_inputs"]["platform"]["nodes"] == 6


def test_a_policys_shares_are_checked_once_per_workload(tmp_path, monkeypatch):
    calls = []
    real = sweep._check_shares
    monkeypatch.setattr(sweep, "_check_shares",
                        lambda spec, label, shares, jobs: calls.append(label) or real(
                            spec, label, shares, jobs))
    users = sorted({j.user for j in _workload(canonical({"generator": GEN}), 0)[0]})
    spec = spec_of(tmp_path, workloads={"w": {"generator": GEN}}, seeds=[0], warmup=0,
                   cooldown=0, policies=[{"name": "omfs", "options": {"shares": {
                       users[0]: 1.0}}}], budgets=None)
    spec.cells = lambda real_cells=spec.cells: real_cells() * 3  # the same cell thrice
    assert len(plan(spec)) == 1
    assert calls == ["omfs"]


def test_a_worker_times_its_run_in_wall_and_cpu_seconds(tmp_path, monkeypatch, fresh):
    t = _task(tmp_path)
    clock = types.SimpleNamespace(perf_counter=iter([100.0, 102.5]).__next__,
                                  process_time=iter([40.0, 41.25]).__next__)
    monkeypatch.setattr(sweep, "time", clock)
    out = run_task(t)
    assert (out["wall_time"], out["cpu_time"]) == (2.5, 1.25)


def test_a_run_keeps_its_models_usage_curves(tmp_path, fresh):
    from bbopt.runs import RunSpec, run

    doc = {"workloads": {"j": {"generator": {"name": "jeannot", "protocol": "mira",
                                             "io_profile": "normal", "n_apps": 20,
                                             "alpha": 0.5}}},
           "platforms": [{"name": "mira", "nodes": 49152}], "policies": ["io-list"],
           "executions": ["exclusive-io"], "seeds": [0], "warmup": 0, "cooldown": 0,
           "tick": None}
    (t,) = plan(spec_of(tmp_path, **doc))
    out = run_task(t)
    assert "error" not in out, out.get("error")
    jobs = list(_part(t.workload_spec, t.workload_seed, None))
    record = run(RunSpec(workload=jobs, platform=build_platform(t.platform_spec),
                         policy="io-list", execution="exclusive-io"))
    assert out["curves"] == record.model.curves(record.result)
    assert set(out["curves"]) == {"t", "utilisation", "nodes", "running", "io_busy",
                                  "io_planned"}

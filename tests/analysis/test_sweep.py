"""Sweeps: the grid, the hash-named store, resuming, and the same table on every executor."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import bbopt
from bbopt.analysis.store import collect
from bbopt.analysis.sweep import plan, run_sweep
from bbopt.analysis.sweep_spec import parse_spec
from bbopt.errors import InputError

SPEC = {
    "name": "t",
    "workloads": {"syn": {"generator": {"name": "kth-like", "n_jobs": 240},
                          "split": {"parts": 2}}},
    "policies": ["fcfs-bb", "sjf-bb"],
    "seeds": [0, 1],
    "reference": "sjf-bb",
}


def spec_of(doc=None, **over):
    d = json.loads(json.dumps(doc or SPEC))
    d.update(over)
    return parse_spec(d, source="<test>", base=Path.cwd())


def test_grid_is_the_product_less_excluded_and_zipped():
    s = spec_of()
    assert len(s.cells()) == 2 * 2 * 2
    s = spec_of(exclude=[{"policy": "fcfs-bb", "seed": 1}])
    cells = s.cells()
    assert len(cells) == 6
    assert not any(c.policy.name == "fcfs-bb" and c.seed == 1 for c in cells)
    s = spec_of(zip=[["policies", "seeds"]])
    pairs = {(c.policy.name, c.seed) for c in s.cells()}
    assert pairs == {("fcfs-bb", 0), ("sjf-bb", 1)}
    s = spec_of(policies=["fcfs-bb", {"name": "conservative-bb", "sweep": {"depth": [2, 5]}}],
                reference=None)
    labels = sorted({c.policy.label for c in s.cells()})
    assert labels == ["conservative-bb[depth=2]", "conservative-bb[depth=5]", "fcfs-bb"]


def test_spec_errors_name_the_field():
    with pytest.raises(InputError, match="depht"):
        spec_of(policies=[{"name": "conservative-bb", "options": {"depht": 3}}])
    with pytest.raises(InputError, match="reference"):
        spec_of(reference="nope")
    with pytest.raises(InputError, match="n_job"):
        spec_of(workloads={"x": {"generator": {"name": "kth-like", "n_job": 3}}})
    with pytest.raises(InputError, match="equal lengths"):
        spec_of(zip=[["policies", "seeds"]], seeds=[0, 1, 2]).cells()


def _swf(path: Path, runtime: int = 100) -> Path:
    lines = ["; MaxNodes: 8"]
    for k in range(12):
        rt = runtime if k == 5 else 50 + k
        lines.append(f"{k + 1} {k * 30} 0 {rt} {1 + k % 4} -1 -1 {1 + k % 4} 400 -1 1 1 1 -1 1 "
                     "-1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


def _hashes(tmp_path, swf: Path, **over) -> dict[tuple, str]:
    doc = {"name": "h", "workloads": {"w": {"file": str(swf),
                                            "transforms": ["lognormal-bb"]}},
           "platforms": [{"name": "m", "nodes": 8, "bb": "40GB"}],
           "policies": ["fcfs-bb", {"name": "conservative-bb", "options": {"depth": 3}}],
           "seeds": [0]}
    doc.update(over)
    spec = parse_spec(doc, source="<test>", base=tmp_path)
    return {(t.params["policy"], t.params["seed"]): t.hash for t in plan(spec)}


def test_hash_changes_exactly_when_a_determining_input_changes(tmp_path, monkeypatch):
    a = _swf(tmp_path / "a.swf")
    base = _hashes(tmp_path, a)
    # not determining: the file's name and place, policy labels, the sweep's name
    b = tmp_path / "sub" / "b.swf"
    b.parent.mkdir()
    b.write_bytes(a.read_bytes())
    assert _hashes(tmp_path, b) == base
    assert _hashes(tmp_path, a, name="other") == base
    relabelled = _hashes(tmp_path, a, policies=[
        {"name": "fcfs-bb", "label": "F"}, {"name": "conservative-bb", "label": "C",
                                            "options": {"depth": 3}}])
    assert sorted(relabelled.values()) == sorted(base.values())
    # determining: one job's runtime in the file
    changed = _hashes(tmp_path, _swf(tmp_path / "c.swf", runtime=101))
    assert set(changed.values()).isdisjoint(base.values())
    # an option of one policy: only that policy's run
    opt = _hashes(tmp_path, a, policies=["fcfs-bb", {"name": "conservative-bb",
                                                     "options": {"depth": 4}}])
    assert opt[("fcfs-bb", 0)] == base[("fcfs-bb", 0)]
    assert opt[("conservative-bb", 0)] != base[("conservative-bb", 0)]
    # the seed
    seeded = _hashes(tmp_path, a, seeds=[1])
    assert set(seeded.values()).isdisjoint(base.values())
    # the platform
    assert set(_hashes(tmp_path, a, platforms=[{"name": "m", "nodes": 9, "bb": "40GB"}])
               .values()).isdisjoint(base.values())
    # the version of bbopt
    monkeypatch.setattr(bbopt, "__version__", "999")
    assert set(_hashes(tmp_path, a).values()).isdisjoint(base.values())


def test_workload_content_hash_covers_every_job_field():
    """A workload that differs in any field of one job is another workload (another run)."""
    import dataclasses

    from bbopt.analysis.store import jobs_sha256

    jobs = [bbopt.Job(id=str(i), submit=10.0 * i, walltime=600.0, runtime=300.0, nodes=2,
                      bb=1e9, user="u", extra={"io": [1.0, 2.0]}) for i in range(3)]
    base = jobs_sha256(jobs)
    assert jobs_sha256(list(jobs)) == base
    changes = {"id": "x", "submit": 11.0, "walltime": 601.0, "runtime": 301.0, "nodes": 3,
               "bb": 2e9, "ssd": 1.0, "bandwidth": 1.0, "user": "v", "priority": 1.0,
               "preemptable": True, "checkpointable": True, "extra": {"io": [1.0, 3.0]}}
    assert set(changes) == {f.name for f in dataclasses.fields(bbopt.Job)}
    for name, value in changes.items():
        changed = [jobs[0], dataclasses.replace(jobs[1], **{name: value}), jobs[2]]
        assert jobs_sha256(changed) != base, name
    assert jobs_sha256(jobs[::-1]) != base  # the order of the jobs counts too


def test_store_records_provenance_and_skips_done_runs(tmp_path):
    s = spec_of()
    first = run_sweep(s, tmp_path / "r", executor="serial", progress=False)
    assert (first.total, first.ran, first.skipped, first.failed) == (8, 8, 0, 0)
    summary = json.loads(next((tmp_path / "r" / "runs").glob("*/summary.json")).read_text())
    prov = summary["provenance"]
    assert prov["bbopt_version"] == bbopt.__version__
    assert len(prov["workload"]["content_sha256"]) == 64
    assert prov["hash_inputs"]["seed"] == summary["params"]["seed"]
    again = run_sweep(s, tmp_path / "r", executor="serial", progress=False)
    assert (again.ran, again.skipped) == (0, 8)
    # a widened grid runs only its new cells
    wider = run_sweep(spec_of(seeds=[0, 1, 2]), tmp_path / "r", executor="serial",
                      progress=False)
    assert (wider.total, wider.ran, wider.skipped) == (12, 4, 8)
    table = collect(tmp_path / "r")
    assert len(table) == 12
    assert {"policy", "seed", "part", "mean_wait", "node_utilization"} <= set(table.columns)
    # per-job outcomes are there and agree with the run's metrics
    from bbopt.analysis.store import Store

    row = table.iloc[0]
    jobs = Store(tmp_path / "r").jobs_frame(row["run"])
    ran = jobs[jobs["final_state"] != "REJECTED"]
    assert len(jobs) == row["jobs"]
    assert ran["waiting_time"].mean() == pytest.approx(row["mean_wait"])


@pytest.mark.slow
def test_same_table_serial_and_processes(tmp_path):
    s = spec_of()
    run_sweep(s, tmp_path / "serial", executor="serial", progress=False)
    rep = run_sweep(s, tmp_path / "proc", executor="processes", workers=2, progress=False)
    assert rep.ran == 8
    a = collect(tmp_path / "serial", include_timing=False)
    b = collect(tmp_path / "proc", include_timing=False)
    assert len(a) == 8
    assert a.equals(b)


@pytest.mark.slow
def test_same_table_on_dask_local_cluster(tmp_path):
    pytest.importorskip("distributed")
    s = spec_of()
    run_sweep(s, tmp_path / "serial", executor="serial", progress=False)
    rep = run_sweep(s, tmp_path / "dask", dask="local", workers=2, progress=False)
    assert rep.ran == 8
    assert collect(tmp_path / "serial", include_timing=False).equals(
        collect(tmp_path / "dask", include_timing=False))


@pytest.mark.slow
def test_running_scheduler_by_address_and_by_scheduler_file(tmp_path):
    """What a site does: workers started elsewhere (dask-jobqueue, sbatch), the sweep connects
    by address, and a widened grid by the scheduler file; batches of 3 runs per task."""
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    serial = tmp_path / "serial"
    run_sweep(spec_of(seeds=[0, 1, 2]), serial, executor="serial", progress=False)
    out = tmp_path / "remote"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        first = run_sweep(spec_of(), out, dask=cluster.scheduler_address, batch=3,
                          progress=False)
        assert (first.ran, first.failed) == (8, 0)
        sched = tmp_path / "scheduler.json"
        sched.write_text(json.dumps({"address": cluster.scheduler_address}))
        wider = run_sweep(spec_of(seeds=[0, 1, 2]), out, dask=str(sched), progress=False)
        assert (wider.total, wider.skipped, wider.ran) == (12, 8, 4)
        assert len(cluster.workers) == 2  # the site's workers stay up
    assert collect(serial, include_timing=False).equals(collect(out, include_timing=False))
    with pytest.raises(InputError, match="scheduler file"):
        run_sweep(spec_of(seeds=[5]), out, dask=str(tmp_path / "none.json"), progress=False)


def _finished(out: Path) -> int:
    """Run directories with a summary (a temporary one is a run killed while written)."""
    return sum(1 for f in out.glob("runs/*/summary.json") if not f.parent.name.startswith("."))


@pytest.mark.slow
def test_killed_sweep_resumes_with_only_the_missing_cells(tmp_path):
    doc = json.loads(json.dumps(SPEC))
    doc["workloads"]["syn"]["generator"]["n_jobs"] = 1500
    doc["seeds"] = [0, 1, 2, 3]
    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(yaml.safe_dump(doc))
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "bbopt.cli", "sweep", str(spec_file),
                             "--out", str(out), "--serial", "--no-progress"],
                            start_new_session=True, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if _finished(out) >= 3:
                break
            time.sleep(0.02)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    done = _finished(out)
    assert 0 < done < 16, "the sweep was not interrupted midway"
    spec = spec_of(doc)
    rep = run_sweep(spec, out, executor="serial", progress=False)
    assert (rep.total, rep.skipped, rep.ran) == (16, done, 16 - done)
    assert not list((out / "runs").glob(".tmp-*"))
    reference = run_sweep(spec, tmp_path / "ref", executor="serial", progress=False)
    assert reference.ran == 16
    assert collect(out, include_timing=False).equals(
        collect(tmp_path / "ref", include_timing=False))


@pytest.mark.slow
def test_interrupted_process_sweep_stops_without_finishing_the_runs_in_flight(tmp_path):
    doc = {"name": "i", "workloads": {"syn": {"generator": {"name": "kth-like",
                                                            "n_jobs": 5000}}},
           "policies": ["conservative-bb"], "seeds": [0, 1, 2, 3, 4, 5]}
    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(yaml.safe_dump(doc))
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "bbopt.cli", "sweep", str(spec_file),
                             "--out", str(out), "-j", "2", "--no-progress"],
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and _finished(out) < 1:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)  # the other worker is mid-run, this one just began
        t0 = time.monotonic()
        rc = proc.wait(timeout=120)
        stopped_in = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    run_s = min(json.loads(f.read_text())["provenance"]["wall_time"]
                for f in out.glob("runs/*/summary.json"))
    assert rc == 130
    # the run whose end triggered the signal, and at most the other worker's, had it just ended:
    # the run taken next and every later cell were not run
    done = _finished(out)
    assert 1 <= done <= 2, done
    assert len([d for d in (out / "runs").iterdir() if d.is_dir()]) == done  # nothing half-run
    assert stopped_in < run_s / 2, (stopped_in, run_s)  # did not wait for the runs in flight
    assert not list((out / "runs").glob(".tmp-*"))


def test_cli_sweep_and_collect(tmp_path, capsys):
    from bbopt.cli import main

    spec_file = tmp_path / "s.yaml"
    spec_file.write_text(yaml.safe_dump(SPEC))
    assert main(["sweep", str(spec_file), "--out", str(tmp_path / "r"), "--serial",
                 "--no-progress"]) == 0
    assert main(["sweep", "collect", str(tmp_path / "r"), "--out",
                 str(tmp_path / "t.csv")]) == 0
    import pandas as pd

    assert len(pd.read_csv(tmp_path / "t.csv")) == 8
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        assert main(["sweep", "collect", str(tmp_path / "r"), "--out",
                     str(tmp_path / "t.parquet")]) == 2  # says which extra to install
    else:
        assert main(["sweep", "collect", str(tmp_path / "r"), "--out",
                     str(tmp_path / "t.parquet")]) == 0
        back = pd.read_parquet(tmp_path / "t.parquet")
        table = collect(tmp_path / "r")
        assert list(back.columns) == list(table.columns)
        assert back["mean_wait"].tolist() == table["mean_wait"].tolist()
        assert back["run"].tolist() == table["run"].tolist()
    capsys.readouterr()
    assert main(["sweep", str(spec_file), "--out", str(tmp_path / "r"), "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert "8 runs, 8 done, 0 to run" in err
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**SPEC, "policies": ["nope"]}))
    assert main(["sweep", str(bad), "--out", str(tmp_path / "x")]) == 2


def test_a_failing_run_is_recorded_retried_and_reported(tmp_path, monkeypatch):
    import bbopt.runs
    from bbopt.cli import main

    def run(spec, **kw):  # conservative-bb breaks while it runs (a bad option fails earlier)
        if spec.policy == "conservative-bb":
            raise RuntimeError("conservative-bb broke at depth 3")
        return real(spec, **kw)

    real = bbopt.runs.run
    monkeypatch.setattr(bbopt.runs, "run", run)
    doc = {"name": "f", "workloads": {"syn": {"generator": {"name": "kth-like", "n_jobs": 60}}},
           "policies": ["fcfs-bb", {"name": "conservative-bb", "options": {"depth": 3}}],
           "seeds": [0]}
    out = tmp_path / "r"
    first = run_sweep(spec_of(doc), out, executor="serial", progress=False)
    assert (first.total, first.ran, first.failed) == (2, 1, 1)
    assert "depth" in first.failures[0]
    records = list((out / "failed").glob("*.json"))
    assert len(records) == 1
    record = json.loads(records[0].read_text())
    assert record["params"]["policy"] == "conservative-bb"
    assert "Traceback" in record["traceback"]
    assert list(collect(out)["policy"]) == ["fcfs-bb"]
    again = run_sweep(spec_of(doc), out, executor="serial", progress=False)
    assert (again.skipped, again.ran, again.failed) == (1, 0, 1)  # retried, not skipped
    spec_file = tmp_path / "f.yaml"
    spec_file.write_text(yaml.safe_dump(doc))
    assert main(["sweep", str(spec_file), "--out", str(out), "--serial", "--no-progress"]) == 1


def test_progress_lines_for_batch_jobs_count_runs_and_estimate_time_left(tmp_path, capsys):
    out = tmp_path / "r"
    run_sweep(spec_of(seeds=[0]), out, executor="serial", progress=0.0)
    lines = capsys.readouterr().err.strip().splitlines()
    assert [ln.split()[1] for ln in lines] == ["1/4", "2/4", "3/4", "4/4"]
    assert lines[-1].endswith("about 0m00s left") and "0 failed" in lines[-1]
    assert "left" in lines[0] and "?" not in lines[0]
    run_sweep(spec_of(seeds=[0, 1]), out, executor="serial", progress=3600.0)
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [lines[-1]] and "4/4 runs (4 done before)" in lines[0]  # only the end


def test_a_stored_run_is_the_run_its_cell_names(tmp_path):
    """Each stored run simulated its own part of its own workload on its own platform: the
    same metrics and jobs as the run made directly from those inputs."""
    from bbopt.analysis.store import Store
    from bbopt.analysis.sweep_inputs import _part, build_platform
    from bbopt.runs import RunSpec, run

    doc = {"name": "own", "policies": ["fcfs-bb"], "seeds": [3],
           "workloads": {"w": {"generator": {"name": "kth-like", "n_jobs": 60, "nodes": 8},
                               "split": {"parts": 2}}},
           "platforms": [{"name": "m", "nodes": 8, "bb": "40GB"}]}
    spec = parse_spec(doc, source="<test>", base=tmp_path)
    rep = run_sweep(spec, tmp_path / "r", executor="serial", progress=False)
    assert (rep.ran, rep.failed) == (2, 0)
    table = collect(tmp_path / "r").sort_values("part")
    for task, (_, row) in zip(sorted(plan(spec), key=lambda t: t.part), table.iterrows(),
                              strict=True):
        jobs = list(_part(task.workload_spec, task.workload_seed, task.part))
        direct = run(RunSpec(workload=jobs, platform=build_platform(task.platform_spec),
                             policy="fcfs-bb"))
        assert build_platform(task.platform_spec).nodes == 8
        stored = Store(tmp_path / "r").jobs_frame(row["run"])
        assert sorted(stored["job_id"].astype(str)) == sorted(j.id for j in jobs)
        assert row["mean_wait"] == pytest.approx(direct.metrics["mean_wait"])
        assert row["node_utilization"] == pytest.approx(direct.metrics["node_utilization"])

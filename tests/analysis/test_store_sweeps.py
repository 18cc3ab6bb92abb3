"""Sweeps on a results store: a damaged run is left out of ``collect`` and ``report`` and run
again by the next sweep; re-running a finished sweep (serial, on a process pool, through the
command line) does nothing and succeeds; two sweeps on one store both finish and write each run
once."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from bbopt.analysis.store import JOBS, SUMMARY, Store, collect
from bbopt.analysis.sweep import run_sweep
from bbopt.cli import main
from tests._store_data import SPEC, damage, run_dirs, sweep_spec


@pytest.mark.parametrize("file, how", [(SUMMARY, "empty"), (SUMMARY, "half"),
                                       (SUMMARY, "garbage"), (SUMMARY, "list"),
                                       (JOBS, "empty"), (JOBS, "half"), (JOBS, "one-short")])
def test_a_damaged_run_is_reported_left_out_and_run_again(store, file, how, caplog):
    bad = run_dirs(store)[0]
    damage(bad / file, how)
    assert not store.done(bad.name)
    assert bad.name in store.unreadable_runs()
    with caplog.at_level(logging.WARNING, logger="bbopt.store"):
        frame = collect(store.root)
    assert len(frame) == 1 and bad.name not in set(frame["run"])
    assert any(bad.name in r.message and "runs it again" in r.message for r in caplog.records)
    report = run_sweep(sweep_spec(), store.root, executor="serial", progress=False)
    assert (report.skipped, report.ran) == (1, 1)
    assert store.done(bad.name) and store.unreadable_runs() == {}
    assert len(collect(store.root)) == 2


def test_rerunning_a_finished_sweep_on_two_workers_does_nothing(finished, tmp_path):
    root = tmp_path / "res"
    shutil.copytree(finished, root)
    before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
    report = run_sweep(sweep_spec(), root, executor="processes", workers=2, progress=False)
    assert (report.total, report.skipped, report.ran, report.failed) == (2, 2, 0, 0)
    assert {p: p.stat().st_mtime_ns for p in root.rglob("*")} == before


def test_rerunning_a_finished_sweep_through_the_cli_exits_0(finished, tmp_path):
    root = tmp_path / "res"
    shutil.copytree(finished, root)
    spec = tmp_path / "st.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    proc = subprocess.run([sys.executable, "-m", "bbopt", "sweep", str(spec), "--out", str(root),
                           "--workers", "2", "--no-progress"], capture_output=True, text=True,
                          timeout=300, cwd=Path(__file__).resolve().parents[2])
    assert proc.returncode == 0, proc.stderr
    assert "2 runs, 2 already done, 0 run, 0 failed" in proc.stderr


def test_two_sweeps_on_one_store_both_finish_and_write_each_run_once(tmp_path):
    spec = tmp_path / "st.yaml"
    spec.write_text(yaml.safe_dump({**SPEC, "seeds": [0, 1, 2]}))
    root = tmp_path / "res"
    cmd = [sys.executable, "-m", "bbopt", "sweep", str(spec), "--out", str(root), "--serial",
           "--no-progress"]
    cwd = Path(__file__).resolve().parents[2]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              cwd=cwd) for _ in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        assert "Traceback" not in err
    s = Store(root)
    assert s.unreadable_runs() == {}
    assert len(collect(root)) == 6
    assert not [d for d in s.runs.iterdir() if d.name.startswith(".")]


def test_report_leaves_out_a_summary_missing_what_it_reads(finished, tmp_path, capsys):
    root = tmp_path / "res"
    shutil.copytree(finished, root)
    fake = root / "runs" / "abc"
    fake.mkdir()
    (fake / SUMMARY).write_text(json.dumps({"hash": "abc", "params": {}, "metrics": {},
                                            "provenance": {}}))
    assert main(["report", str(root), "--out", str(tmp_path / "rep")]) == 0
    assert (tmp_path / "rep" / "results.csv").read_text().count("\n") == 3  # header + 2 runs

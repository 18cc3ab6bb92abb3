"""The paper studies kept beside their sweep specifications still run against the package on a
tiny input (a few hundred jobs, one seed, one or two policies) and print their tables. Each
replays a trace or a generated batch in a child process (10-60 s under load): ``slow``. The
Slurm comparison, which replays into a real Slurm, tables a saved run instead."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._workload_data import KTH_SWF, data_file

ROOT = Path(__file__).resolve().parents[2]

# script, its tiny arguments (``{tmp}``: a fresh folder), a line its table prints
STUDIES = [
    ("herbein_turnaround.py", ["--levels", "30", "--seeds", "0", "--jobs", "200"],
     "ratio of means"),
    ("herbein_cts1.py", ["--jobs", "100", "--workload", "stand-in", "--levels", "30",
                         "--policies", "fcfs-easy,io-easy"], "efficiency ratio"),
    ("kopanski_parts.py", ["--policies", "fcfs"], "alloc+io"),
    ("kopanski_seeds.py", ["--jobs", "300", "--policies", "fcfs,sjf-bb"], "Whole trace"),
    ("omfs_study.py", ["--jobs", "200", "--workloads", "kth-users", "--out", "{tmp}"],
     "verdict"),
    ("promises.py", ["--jobs", "300", "--policies", "conservative-bb",
                     "--platforms", "kopanski,kopanski:named"], "reservations-never-delayed"),
]


@pytest.mark.slow
@pytest.mark.parametrize(("script", "args", "expected"), STUDIES, ids=[s[0] for s in STUDIES])
def test_study_runs_tiny(script, args, expected, tmp_path):
    env = {**os.environ, "BBOPT_DATA": str(data_file(KTH_SWF).parent)}
    argv = [a.replace("{tmp}", str(tmp_path / "out")) for a in args]
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *argv], cwd=tmp_path,
                          env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert expected in proc.stdout


@pytest.mark.slow
def test_kopanski_authors_draw_runs_on_tiny_parts(tmp_path):
    """The like-for-like study on 16 parts in the authors' Batsim layout holding the first 40
    KTH jobs (their real parts are not in the data folder)."""
    from bbopt.workloads.swf import read_swf

    jobs = read_swf(data_file(KTH_SWF)).jobs[:40]
    folder = tmp_path / "parts" / "alloc-only"
    folder.mkdir(parents=True)
    for k in range(16):
        mine = jobs[k::16]
        doc = {"nb_res": 96, "jobs": [{"id": j.id, "subtime": j.submit, "res": j.nodes,
                                       "profile": f"p{j.id}"} for j in mine],
               "profiles": {f"p{j.id}": {"type": "delay", "delay": j.runtime, "bb": 1e9}
                            for j in mine}}
        (folder / f"part-{k}.json").write_text(json.dumps(doc))
    env = {**os.environ, "BBOPT_DATA": str(data_file(KTH_SWF).parent)}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "kopanski_authors_draw.py"),
                           "--parts", str(tmp_path / "parts"), "--models", "alloc",
                           "--policies", "fcfs,sjf-bb", "--jobs", "40"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "kopanski:proximity" in proc.stdout and "sjf-bb" in proc.stdout
    # the paper's robustness analysis: each part alone, / sjf-bb on the same part, beside the
    # authors' box plot read off their notebook
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "kopanski_authors_draw.py"),
                           "--parts", str(tmp_path / "parts"), "--models", "alloc", "--split",
                           "--policies", "fcfs-bb", "--budget-mode", "deterministic"],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line.split() for line in proc.stdout.splitlines()]
    assert sum(1 for r in rows if r and r[0].isdigit()) == 16  # one row per part
    summary = [r for r in rows if r[:2] == ["fcfs-bb", "mean_wait"]]
    assert summary and summary[0][-3:] == ["1.115", "[1.04,", "1.17]"]


def test_slurm_validation_tables_a_saved_run(tmp_path, capsys, monkeypatch):
    """The Slurm comparison's table from a saved run (the replay itself needs root and a
    Slurm): a real schedule 0.2 s behind the simulation is within one 0.5 s poll for every job."""
    import argparse
    import importlib.util

    monkeypatch.setenv("BBOPT_DATA", str(data_file(KTH_SWF).parent))
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    spec = importlib.util.spec_from_file_location("_slurm_validation",
                                                  ROOT / "benchmarks" / "slurm_validation.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    spec = mod.workload(argparse.Namespace(jobs=30, nodes=16, speedup=300.0, seed=0))
    jobs, platform = spec.workload, spec.platform
    sim = mod.simulated(spec, "fcfs-bb")
    rows = [{"id": j.id, "submit": j.submit, "walltime": j.walltime, "runtime": j.runtime,
             "nodes": j.nodes, "bb": j.bb, "real": sim.start[k] + 0.2, "sim": sim.start[k]}
            for k, j in enumerate(jobs)]
    (tmp_path / "fcfs-bb.json").write_text(json.dumps(
        {"run": "fcfs-bb", "simulated": "fcfs-bb", "interval": 0.5, "nodes": platform.nodes,
         "bb_pool": platform.bb, "speedup": 300.0, "jobs": len(jobs), "wall": 1.0,
         "rows": rows}))
    assert mod.main(["--table", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"| fcfs-bb (fcfs-bb) | {len(jobs)} | 100% | 100% |" in out

"""SIGINT during ``bbopt compare``: the policies that finished keep their results, the summary
says what did not finish, and no file is left half-written."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path


def test_sigint_during_compare_keeps_finished_policies(tmp_path: Path):
    out = tmp_path / "res"
    # 3,000 jobs: fcfs-bb takes a fraction of a second, plan-2 (pure Python) several seconds,
    # so the signal comes while plan-2 runs (with 300 jobs and the compiled plan loop, plan-2
    # could finish within the half second below).
    cmd = [sys.executable, "-m", "bbopt.cli", "compare", "--no-progress", "--jobs", "3000",
           "--policies", "fcfs-bb,plan-2,sjf-bb", "-o", "budget=0.5", "--workers", "1",
           "--out", str(out)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "BBOPT_NO_JIT": "1"})
    first = out / "fcfs-bb_jobs.csv"
    deadline = time.monotonic() + 120
    while not first.exists() and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert first.exists(), proc.communicate()
    time.sleep(0.5)  # plan-2 (0.5 s per decision) is now running
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted: finished fcfs-bb; not finished plan-2, sjf-bb" in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert list(summary["metrics"]) == ["fcfs-bb"]
    assert summary["unfinished"] == ["plan-2", "sjf-bb"]
    assert summary["provenance"]["policies"] == ["fcfs-bb", "plan-2", "sjf-bb"]
    with first.open() as fh:
        rows = list(csv.reader(fh))
    assert len(rows) == 3001 and all(len(r) == len(rows[0]) for r in rows)
    assert sorted(p.name for p in out.iterdir()) == ["fcfs-bb_jobs.csv", "summary.json"]

"""The quality suite's plan benchmark (plan orders are not captured by ``bbopt bench``) still runs
against the package on a tiny input: one KTH state, a short budget."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests._workload_data import KTH_SWF, data_file

ROOT = Path(__file__).resolve().parents[2]


def test_plan_quality_runs_tiny():
    env = {**os.environ, "BBOPT_DATA": str(data_file(KTH_SWF).parent)}
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "quality" / "plan_quality.py"),
                           "--states", "1", "--budget", "0.2", "--min-queue", "6",
                           "--max-queue", "7"], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stderr
    assert "captured 1 of" in proc.stdout
    assert "cpsat" in proc.stdout and "inner loop" in proc.stdout

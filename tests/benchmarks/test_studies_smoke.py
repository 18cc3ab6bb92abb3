"""The paper studies kept beside their sweep specifications still run against the package on a
tiny input (a few hundred jobs, one seed, one or two policies) and print their tables. Each
replays a trace or a generated batch in a child process (10-60 s under load): ``slow``."""

from __future__ import annotations

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
    ("jeannot_reproduction.py", ["--apps", "20", "--seeds", "1", "--alphas", "0.5",
                                 "--families", "M-No", "--strategies", "io-list,pack-max",
                                 "--workers", "1", "--out", "{tmp}"],
     "fig8_usage.png"),
    ("omfs_study.py", ["--jobs", "200", "--workloads", "kth-users", "--out", "{tmp}"],
     "verdict"),
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

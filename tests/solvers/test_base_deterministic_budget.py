"""The default budget mode of ``bbopt compare`` counts work, not wall time: the same command gives
byte-identical jobs.csv while other processes load every core (with a wall-clock budget of 5 ms
per decision the same runs differ from one load to the next)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CMD = [sys.executable, "-m", "bbopt.cli", "compare", "--no-progress", "--jobs", "200",
       "--policies", "plan-2,bbsched", "-o", "budget=0.005"]


def _compare(out: Path) -> dict[str, bytes]:
    subprocess.run([*CMD, "--out", str(out)], check=True, capture_output=True, timeout=600)
    return {p.name: p.read_bytes() for p in sorted(out.glob("*_jobs.csv"))}


@pytest.mark.slow
def test_compare_is_byte_identical_under_load(tmp_path):
    quiet = _compare(tmp_path / "quiet")
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(os.cpu_count() or 2)]
    try:
        loaded = _compare(tmp_path / "loaded")
    finally:
        for b in burners:
            b.kill()
            b.wait()
    assert list(quiet) == ["bbsched_jobs.csv", "plan-2_jobs.csv"]
    assert quiet == loaded

"""Result files survive a reader that goes away (``bbopt ... | head``) and get the permissions an
ordinary file would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bbopt.outputs import write_text


@pytest.mark.parametrize("command", [
    ["simulate", "--policy", "fcfs-bb"],
    ["compare", "--policies", "fcfs-bb,sjf-bb", "--format", "csv"],
])
def test_closed_stdout_does_not_lose_the_results(tmp_path: Path, command):
    out = tmp_path / "res"
    proc = subprocess.Popen([sys.executable, "-m", "bbopt.cli", *command, "--jobs", "40",
                             "--no-progress", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before anything is printed
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert b"Traceback" not in stderr
    assert (out / "summary.json").stat().st_size > 0
    assert (out / "fcfs-bb_jobs.csv").read_text().count("\n") == 41  # header + 40 jobs


def test_policies_into_a_closed_pipe_is_quiet():
    proc = subprocess.Popen([sys.executable, "-m", "bbopt.cli", "policies", "-v"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0 and stderr == b""


def test_written_files_have_ordinary_permissions(tmp_path: Path):
    mask = os.umask(0o027)
    try:
        path = write_text(tmp_path / "a.csv", "x\n")
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o640

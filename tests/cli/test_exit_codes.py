"""The ``bbopt`` command's entry point (:mod:`bbopt.__main__`): the exit status of
:func:`bbopt.cli.main`, and the run's objects frozen before the interpreter's exit collection."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import gc, sys
import bbopt.__main__ as entry
sys.argv = ["bbopt", *sys.argv[1:]]
try:
    entry.run()
except SystemExit as exc:
    print(exc.code, gc.get_freeze_count() > 0, file=sys.stderr)
"""


def _probe(*argv: str) -> tuple[str, str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True,
                          timeout=120)
    *lines, last = done.stderr.strip().splitlines()
    return last, "\n".join(lines)


def test_run_exits_with_mains_status_and_freezes_the_objects(tmp_path):
    swf = tmp_path / "tiny.swf"
    swf.write_text("1 0 0 100 2 -1 -1 2 200 -1 1 1 1 1 1 -1 -1 -1\n"
                   "2 5 0 50 1 -1 -1 1 100 -1 1 1 1 1 1 -1 -1 -1\n")
    last, _ = _probe("simulate", "--workload", str(swf), "--policy", "fcfs", "--no-progress")
    assert last == "0 True"


def test_run_passes_an_input_error_status_through(tmp_path):
    last, messages = _probe("simulate", "--workload", str(tmp_path / "missing.swf"))
    assert last == "2 True"
    assert "bbopt: error" in messages and "missing.swf" in messages


def test_python_dash_m_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "bbopt", "policies"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0
    assert "sjf-bb" in done.stdout and "conservative-bb" in done.stdout

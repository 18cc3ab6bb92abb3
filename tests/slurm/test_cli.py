"""``bbopt slurm``: replay through a real Slurm writes bbopt's jobs.csv; bad input exits 2."""

import contextlib
import csv
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bbopt.cli import main
from bbopt.slurm.cluster import job_processes
from tests.slurm.conftest import require_slurm


def test_unknown_policy_is_one_line_and_status_2(capsys):
    assert main(["slurm", "run", "--policy", "nope", "--state-dir", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err
    assert "unknown policy 'nope'" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slurm
def test_replay_under_slurm_backfill_writes_every_job(tmp_path):
    require_slurm()
    out = tmp_path / "jobs.csv"
    assert main(["slurm", "replay", "--jobs", "10", "--speedup", "20000", "--nodes", "4",
                 "--scheduler", "slurm", "--interval", "0.2", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 10
    for r in rows:
        assert r["final_state"] == "COMPLETED_SUCCESSFULLY"
        assert float(r["starting_time"]) >= float(r["submission_time"])
        assert float(r["finish_time"]) >= float(r["starting_time"])
        assert r["allocated_resources"] != ""


def test_site_config_prints_the_pool_and_writes_the_lua(tmp_path, capsys):
    lua = tmp_path / "job_submit.lua"
    assert main(["slurm", "site-config", "--bb", "480TB", "--bb-unit", "1TB", "--partition",
                 "bbopt", "--lua", str(lua)]) == 0
    assert capsys.readouterr().out.splitlines() == ["Licenses=bb:480",
                                                    "JobSubmitPlugins=lua  # job_submit.lua "
                                                    "beside slurm.conf"]
    assert '["bbopt"] = true' in lua.read_text()


@pytest.mark.slurm
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_terminated_replay_leaves_nothing_running(tmp_path, sig):
    """SIGTERM in the middle of a replay stops the local cluster: daemons, job steps and jobs.
    After a SIGKILL, which allows no clean-up, the daemons still end with their parent; only
    the running job's own processes are left (to their end: the test ends them)."""
    require_slurm()
    short = Path(tempfile.mkdtemp(prefix="bbt-"))  # the cluster's directory goes here (short:
    env = {**os.environ, "TMPDIR": str(short)}  # Slurm's unix socket paths are limited)
    trace = tmp_path / "two.swf"  # two jobs of 10 minutes on one node each
    trace.write_text("".join(f"{k} 0 0 600 1 -1 -1 1 900 -1 1 1 1 -1 1 -1 -1 -1\n"
                             for k in (1, 2)))
    argv = [sys.executable, "-m", "bbopt.cli", "slurm", "replay", str(trace), "--speedup", "1",
            "--nodes", "2", "--bb", "none", "--scheduler", "slurm",
            "--out", str(tmp_path / "j.csv")]
    log = (tmp_path / "replay.log").open("wb")
    proc = subprocess.Popen(argv, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while True:
            confs = list(short.glob("bbopt-slurm-*/slurm.conf"))
            if confs and job_processes(confs[0]):
                break  # a job runs
            assert time.monotonic() < deadline and proc.poll() is None, (
                (tmp_path / "replay.log").read_text())
            time.sleep(0.2)
        daemons = [p for p in _pids_mentioning(str(confs[0].parent))]
        assert len(daemons) >= 1 + 1 + 2  # munged, slurmctld, two slurmd
        proc.send_signal(sig)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    if sig == signal.SIGTERM:
        assert proc.returncode == 128 + signal.SIGTERM
        assert job_processes(confs[0]) == []
    jobs = set(job_processes(confs[0]))

    def daemons_left() -> set[int]:
        # a job step launched just before the daemons went is a job's, not a daemon
        jobs.update(job_processes(confs[0]))
        return set(_pids_mentioning(str(confs[0].parent))) - jobs - _children(jobs)

    deadline = time.monotonic() + 60  # daemons end with their parent; slowly on a busy machine
    while daemons_left() and time.monotonic() < deadline:
        time.sleep(0.2)
    for pid in jobs:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert daemons_left() == set()
    shutil.rmtree(short, ignore_errors=True)


def _children(pids: set[int]) -> set[int]:
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            if ppid in pids:
                out.add(int(entry.name))
    return out


def _pids_mentioning(text: str) -> list[int]:
    """Processes whose command line mentions ``text`` (the cluster's directory)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                pass
    return found

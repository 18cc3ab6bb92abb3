"""``bbopt slurm cluster`` and ``bbopt slurm run`` from the command line without a real Slurm:
the local cluster replaced by a stand-in that records how it was asked for, the bridge's
commands by the recorded fake of tests/slurm/fake.py. (The same commands on a real Slurm are in
tests/slurm/test_cli.py, marked ``slurm``.)"""

from __future__ import annotations

import json
import os
import signal
import time

import pytest

from bbopt.cli import main
from bbopt.slurm import cluster, commands
from tests.slurm.fake import FakeJob, FakeSlurm


@pytest.fixture
def handlers():
    """The commands install SIGINT/SIGTERM handlers: put pytest's back afterwards."""
    saved = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    yield
    for s, h in saved.items():
        signal.signal(s, h)


class StandIn:
    """A local cluster that starts nothing: it notes its arguments, and once entered it
    interrupts the process as Ctrl-C would, so that the command stops it."""

    made: list = []

    def __init__(self, nodes, *, bb_licenses, directory, hold_new_jobs):
        self.args = (nodes, bb_licenses, directory, hold_new_jobs)
        self.conf = "/tmp/standin/slurm.conf"
        self.directory = "/tmp/standin"
        self.stopped = False
        StandIn.made.append(self)

    def __enter__(self):
        os.kill(os.getpid(), signal.SIGINT)
        return self

    def __exit__(self, *exc):
        self.stopped = True


def test_cluster_starts_the_pool_in_licenses_prints_its_conf_and_stops_on_ctrl_c(
        monkeypatch, capsys, handlers):
    monkeypatch.setattr(cluster, "why_unavailable", lambda: None)
    monkeypatch.setattr(cluster, "LocalSlurm", StandIn)
    StandIn.made.clear()
    assert main(["slurm", "cluster", "--nodes", "4", "--bb", "10GB", "--bb-unit", "3GB",
                 "--hold-new-jobs"]) == 0
    (made,) = StandIn.made
    assert made.args == (4, 3, None, True)  # 10 GB in licenses of 3 GB: 3 whole ones
    assert made.stopped
    out, err = capsys.readouterr()
    assert out == "export SLURM_CONF=/tmp/standin/slurm.conf\n"
    assert err.startswith("# 4 nodes, bb pool 3 licenses of 3GB; logs in /tmp/standin")


def test_cluster_without_slurm_says_why_and_starts_nothing(monkeypatch, capsys, handlers):
    monkeypatch.setattr(cluster, "why_unavailable", lambda: "Slurm is not installed (missing x)")
    monkeypatch.setattr(cluster, "LocalSlurm", StandIn)
    StandIn.made.clear()
    assert main(["slurm", "cluster"]) == 2
    assert StandIn.made == []
    assert "Slurm is not installed (missing x)" in capsys.readouterr().err


def test_run_applies_a_policy_s_starts_to_the_held_jobs(monkeypatch, tmp_path, capsys,
                                                        handlers):
    now = float(int(time.time()))  # (the command's bridge reads the wall clock)
    slurm = FakeSlurm(now=now)
    slurm.add(FakeJob("1", nodes=2, licenses=6, submit=now - 30))
    slurm.add(FakeJob("2", nodes=2, licenses=6, submit=now - 20))
    slurm.add(FakeJob("3", nodes=1, licenses=2, submit=now - 10))
    confs = []

    def made(conf=None):
        confs.append(conf)
        return slurm

    monkeypatch.setattr(commands, "SlurmCommands", made)
    state_dir = tmp_path / "bridge"
    assert main(["slurm", "run", "--policy", "fcfs-bb", "--state-dir", str(state_dir),
                 "--max-time", "0s", "--conf", "/etc/site/slurm.conf",
                 "--progress-every", "0"]) == 0
    # 1 starts; 2 needs 6 of the 4 licenses left; fcfs-bb (EASY) backfills 3 (1 node, 2 licenses)
    assert slurm.actions() == [("scontrol", "update", "JobId=1", "NodeList=n1,n2"),
                               ("scontrol", "release", "1"),
                               ("scontrol", "update", "JobId=3", "NodeList=n3"),
                               ("scontrol", "release", "3")]
    assert confs == ["/etc/site/slurm.conf"] and slurm.calls[0] == ("scontrol", "ping")
    (line,) = (state_dir / "decisions.jsonl").read_text().splitlines()
    assert json.loads(line)["started"] == ["1", "3"]
    err = capsys.readouterr().err
    assert err.startswith("bbopt slurm run: fcfs-bb schedules every partition; log in ")
    assert err.splitlines()[-1].endswith("1 decisions, 2 jobs started, 0 failed polls")

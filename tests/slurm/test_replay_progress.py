"""``bbopt slurm replay`` shows the jobs ended so far, read from ``squeue`` every poll: a line
every N seconds in a log (:mod:`bbopt.progress`), no bar in a pipe."""

from __future__ import annotations

import io

from bbopt import progress as progress_module
from bbopt.progress import ProgressLog
from bbopt.slurm.commands import SlurmJob
from bbopt.slurm.replay import ended


def _squeue(states: list[str]) -> list[SlurmJob]:
    return [SlurmJob(id=str(k), name=f"j{k}", state=s, user="u", nodes=1, time_limit=60.0,
                     start=None, submit=None, node_list=(), reason="None", comment="")
            for k, s in enumerate(states)]


def test_ended_jobs_are_the_submitted_less_those_waiting_or_running(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(progress_module, "monotonic", lambda: now[0])
    log = io.StringIO()
    bar = ProgressLog(10, 0, 30.0, log, unit="job", desc="replay", count_failed=False)
    # 4 submitted: one waits, one runs, one completes, one is completing -> 2 ended
    assert ended(bar, _squeue(["PENDING", "RUNNING", "COMPLETED", "COMPLETING"]), 4) == 3
    assert bar.n == 1 and log.getvalue() == ""  # before the interval: no line
    now[0] = 29.9
    assert ended(bar, _squeue(["COMPLETED"] * 5 + ["RUNNING", "CONFIGURING"]), 7) == 2
    assert bar.n == 5 and log.getvalue() == ""
    now[0] = 30.0
    assert ended(bar, _squeue(["COMPLETED"] * 6 + ["FAILED", "TIMEOUT", "RUNNING"]), 10) == 1
    assert log.getvalue() == "replay: 9/10 jobs, 0m30s elapsed, about 0m03s left\n"
    now[0] = 31.0  # a count never goes back (squeue forgets old jobs: never below ended)
    assert ended(bar, _squeue(["PENDING"] * 3), 10) == 3
    assert bar.n == 9
    now[0] = 40.0
    assert ended(bar, _squeue(["COMPLETED"] * 10), 10) == 0
    assert log.getvalue().splitlines()[-1] == "replay: 10/10 jobs, 0m40s elapsed, about 0m00s left"
    assert "\r" not in log.getvalue()

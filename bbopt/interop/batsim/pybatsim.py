"""pybatsim's schedulers on bbopt's simulator, and how their schedules agree with bbopt's
policies (docs/interop.md, "pybatsim on bbopt").

:func:`run_pybatsim` starts a pybatsim scheduler (its own launcher, in a process of its own,
bound to an ``ipc://`` endpoint) and replays the jobs in bbopt's engine with it
(:func:`~bbopt.interop.batsim.server.serve_batsim`); :func:`agreement` compares two runs start
for start. pybatsim 3.2.1 is installed with ``pip install 'bbopt[batsim]'`` then
``pip install --no-deps pybatsim==3.2.1`` (its pinned pyzmq no longer builds).
"""

from __future__ import annotations

import contextlib
import math
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bbopt.core import Job, Platform
from bbopt.interop.batsim.server import serve_batsim
from bbopt.simulation.result import SimulationResult

#: pybatsim's schedulers and the bbopt policy each is compared with.
PAIRS = {"schedFcfs": "fcfs", "fillerSched": "filler", "easyBackfill": "fcfs-easy",
         "schedEasySjfBackfill": "sjf-bb"}


def pybatsim_missing() -> str | None:
    """Why pybatsim cannot run here, or ``None``."""
    try:
        import batsim.tools.launcher  # noqa: F401
        import zmq  # noqa: F401
    except ImportError as exc:
        return (f"pybatsim is not installed ({exc}): pip install 'bbopt[batsim]' && "
                "pip install --no-deps pybatsim==3.2.1")
    return None


def run_pybatsim(scheduler: str, jobs: Sequence[Job], platform: Platform, *,
                 timeout: float = 60.0, log: str | Path | None = None) -> SimulationResult:
    """Replay ``jobs`` in bbopt's engine scheduled by pybatsim's ``scheduler`` (a name of its
    ``schedulers`` package, or a path to a scheduler file). pybatsim's output goes to ``log``
    (default: discarded); every wait is bounded by ``timeout`` seconds. pybatsim runs in a
    temporary folder, where it writes its own event log, removed afterwards."""
    if Path(scheduler).exists():  # a scheduler file, found from the caller's folder
        scheduler = str(Path(scheduler).resolve())
    d = tempfile.mkdtemp(prefix="bbpy")  # (an ipc path is at most ~100 characters)
    endpoint = f"ipc://{d}/s"
    out = open(log, "w") if log is not None else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "batsim.cmds.launcher", scheduler, "-s",
                             endpoint, "-t", str(int(timeout * 1000))],
                            stdout=out, stderr=subprocess.STDOUT, cwd=d)
    try:
        result = serve_batsim(jobs, platform, endpoint, timeout=timeout)
        proc.wait(timeout)
        return result
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if log is not None:
            out.close()
        with contextlib.suppress(OSError):
            shutil.rmtree(d)


@dataclass(frozen=True)
class Agreement:
    """How two schedules of the same jobs agree: jobs with the same start (two rejections agree),
    the first instant they differ (``inf``: never) and the mean absolute start difference."""

    same: int
    jobs: int
    first_difference: float
    mean_abs_difference: float

    @property
    def share(self) -> float:
        return self.same / self.jobs if self.jobs else 1.0


def agreement(a: SimulationResult, b: SimulationResult) -> Agreement:
    same, first, total = 0, math.inf, 0.0
    for sa, sb in zip(a.start, b.start, strict=True):
        if sa == sb or (math.isnan(sa) and math.isnan(sb)):
            same += 1
            continue
        first = min(first, *(s for s in (sa, sb) if not math.isnan(s)))
        if not (math.isnan(sa) or math.isnan(sb)):
            total += abs(sa - sb)
    n = len(a.start)
    return Agreement(same, n, first, total / (n - same) if n > same else 0.0)



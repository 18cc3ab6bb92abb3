"""The outcome of a simulation: per-job start, end, final state and allocation, plus the time
each decision took. It writes Batsim's ``jobs.csv`` (the columns evalys reads) followed by
bbopt's own columns, and gives the same per-job outcomes as a pandas DataFrame
(:meth:`SimulationResult.to_pandas`; pandas is imported when it is called); metrics are computed
from it by :mod:`bbopt.analysis.metrics`, which this module never imports (the record does not
know who reads it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bbopt.core import Job, JobState, Platform, SolveStats

if TYPE_CHECKING:
    import numpy as np

#: Batsim's jobs.csv columns, in Batsim's order.
BATSIM_COLUMNS = (
    "job_id", "workload_name", "profile", "submission_time", "requested_number_of_resources",
    "requested_time", "success", "final_state", "starting_time", "execution_time", "finish_time",
    "waiting_time", "turnaround_time", "stretch", "allocated_resources", "consumed_energy",
    "metadata",
)
#: bbopt's own columns, after Batsim's.
BBOPT_COLUMNS = ("bb", "trace_runtime", "slowdown", "bounded_slowdown", "user", "reason")

#: Bounded slowdown: turnaround over the execution time, but at least this many seconds
#: (Kopanski & Rzadca, Section 4.2: ten minutes), and at least 1.
BSLD_BOUND = 600.0
#: Columns of :meth:`SimulationResult.to_pandas`.
OUTCOME_COLUMNS = ("job_id", "submit", "start", "end", "state", "nodes", "bb", "ssd",
                   "walltime", "runtime", "wait", "turnaround", "bounded_slowdown", "user",
                   "allocation")

#: Columns of the run-segment CSV (:meth:`SimulationResult.segments_to_csv`).
SEGMENT_COLUMNS = ("job_id", "segment", "start", "end", "why", "nodes")
#: Per-job preemption columns, after bbopt's, written only for a run whose execution model
#: preempts (so the jobs.csv of every other run keeps its columns): evictions, checkpoints,
#: restarts, kills, checkpoint and restart time and work done and lost (seconds of the job's run).
PREEMPTION_COLUMNS = ("evictions", "checkpoints", "restarts", "kills", "checkpoint_time",
                      "restart_time", "work_done", "lost_work")
#: Why a run segment ended: the job finished, hit its walltime, was checkpointed and requeued,
#: was killed by a preemption and requeued from scratch, or was killed and dropped.
SEGMENT_ENDS = ("finished", "killed", "checkpointed", "requeued", "dropped")

_FINAL_STATE = {
    JobState.FINISHED: "COMPLETED_SUCCESSFULLY",
    JobState.KILLED: "COMPLETED_WALLTIME_REACHED",
    JobState.REJECTED: "REJECTED",
    JobState.DROPPED: "COMPLETED_KILLED",
}


@dataclass
class SimulationResult:
    """Per-job outcome of :func:`bbopt.simulate`, indexed like ``jobs``."""

    jobs: list[Job]
    platform: Platform
    policy: str
    workload_name: str = "workload"
    start: list[float] = field(default_factory=list)
    end: list[float] = field(default_factory=list)
    state: list[str] = field(default_factory=list)
    allocation: list[tuple[int, ...]] = field(default_factory=list)
    reasons: dict[str, str] = field(default_factory=dict)
    decision_times: list[float] = field(default_factory=list)
    decision_stats: list[SolveStats] = field(default_factory=list)
    wall_time: float = 0.0
    #: Every run segment of a job that ran: ``(job_id, start, end, why it ended)``, ``why`` one of
    #: :data:`SEGMENT_ENDS`. A job that was never preempted has exactly one segment.
    segments: list[tuple[str, float, float, str]] = field(default_factory=list)
    #: Preemption accounting per job id, filled by an execution model that preempts
    #: (:mod:`bbopt.simulation.checkpoint`): evictions, checkpoints, restarts, checkpoint_time,
    #: restart_time, work_done, lost_work (seconds of the job's run; multiply by nodes for
    #: node-seconds).
    preemption: dict[str, dict[str, float]] = field(default_factory=dict)
    #: Starts the engine refused because the job's burst buffer could not be placed on the
    #: platform's named BB nodes (:class:`bbopt.planner.bb.FirstFitBB`); the job kept
    #: waiting.
    refused_starts: int = 0

    def __post_init__(self) -> None:
        n = len(self.jobs)
        if not self.start:
            self.start = [math.nan] * n
            self.end = [math.nan] * n
            self.state = [""] * n
            self.allocation = [()] * n

    def __len__(self) -> int:
        return len(self.jobs)

    def arrays(self) -> dict[str, np.ndarray]:
        """Column arrays: submit, walltime, nodes, bb, start, end, state."""
        import numpy as np  # (imported here: the engine's record needs no numpy)

        jobs = self.jobs
        return {
            "submit": np.fromiter((j.submit for j in jobs), float, len(jobs)),
            "walltime": np.fromiter((j.walltime for j in jobs), float, len(jobs)),
            "nodes": np.fromiter((j.nodes for j in jobs), float, len(jobs)),
            "bb": np.fromiter((j.bb for j in jobs), float, len(jobs)),
            "start": np.asarray(self.start, dtype=float),
            "end": np.asarray(self.end, dtype=float),
            "state": np.fromiter(self.state, object, len(self.state)),  # (no shape discovery)
        }

    def to_pandas(self):
        """Per-job outcomes as a pandas DataFrame (:data:`OUTCOME_COLUMNS`), indexed like
        ``jobs``: times of the jobs that ran (finished or killed; NaN for rejected and dropped
        jobs), wait, turnaround, bounded slowdown and the allocation in Batsim's notation. The
        run's policy, workload and platform size are in ``frame.attrs``."""
        import numpy as np
        import pandas as pd

        a = self.arrays()
        ran = (a["state"] == JobState.FINISHED) | (a["state"] == JobState.KILLED)
        start = np.where(ran, a["start"], np.nan)
        end = np.where(ran, a["end"], np.nan)
        turnaround = end - a["submit"]
        frame = pd.DataFrame({
            "job_id": [j.id for j in self.jobs],
            "submit": a["submit"], "start": start, "end": end,
            "state": a["state"].astype(str),
            "nodes": a["nodes"].astype(int), "bb": a["bb"],
            "ssd": [j.ssd for j in self.jobs], "walltime": a["walltime"],
            "runtime": [np.nan if j.runtime is None else j.runtime for j in self.jobs],
            "wait": start - a["submit"], "turnaround": turnaround,
            "bounded_slowdown": np.maximum(turnaround / np.maximum(end - start, BSLD_BOUND),
                                           1.0),
            "user": [j.user for j in self.jobs],
            "allocation": [procset(n) for n in self.allocation],
        }, columns=list(OUTCOME_COLUMNS))
        frame.attrs.update(policy=self.policy, workload=self.workload_name,
                           platform_nodes=self.platform.nodes, platform_bb=self.platform.bb)
        return frame

    def to_csv(self, path: str | Path) -> Path:
        """Write the per-job records as Batsim's jobs.csv plus bbopt's columns (and, for a run
        with preemption, :data:`PREEMPTION_COLUMNS`; the run segments go to
        :meth:`segments_to_csv`)."""
        path = Path(path)
        with path.open("w", newline="") as fh:
            self._write_csv(fh)
        return path

    def _write_csv(self, fh) -> None:
        import csv  # (imported when results are written: a replay needs none)

        pre = self.preemption
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(BATSIM_COLUMNS + BBOPT_COLUMNS + (PREEMPTION_COLUMNS if pre else ()))
        for job, row in zip(self.jobs, self.rows(), strict=True):
            if pre:
                p = pre.get(job.id, {})
                row += [_num(p.get(c, 0)) for c in PREEMPTION_COLUMNS]
            writer.writerow(row)

    def segments_to_csv(self, path: str | Path) -> Path:
        """Write the run segments, one row per segment: job_id, segment, start, end, why (and
        the job's nodes), the second CSV beside jobs.csv for runs with preemption."""
        path = Path(path)
        nodes = {job.id: job.nodes for job in self.jobs}
        count: dict[str, int] = {}
        import csv

        with path.open("w", newline="") as fh:
            writer = csv.writer(fh, lineterminator="\n")
            writer.writerow(SEGMENT_COLUMNS)
            for job_id, t0, t1, why in self.segments:
                count[job_id] = count.get(job_id, 0) + 1
                writer.writerow([job_id, str(count[job_id]), _num(t0), _num(t1), why,
                                 str(nodes[job_id])])
        return path

    def rows(self):
        """The CSV rows, as lists of strings (deterministic formatting)."""
        return map(self.row, range(len(self.jobs)))

    def row(self, k: int) -> list[str]:
        """The CSV row of job ``k`` (final once the job has its end state)."""
        job = self.jobs[k]
        state = self.state[k]
        if state == JobState.REJECTED:
            start = end = execution = wait = turnaround = stretch = -1.0
            slowdown = bsld = ""
        else:
            start, end = self.start[k], self.end[k]
            execution = end - start
            wait = start - job.submit
            turnaround = end - job.submit
            stretch = turnaround / execution if execution > 0 else ""
            slowdown = _num(turnaround / max(execution, 1.0))
            bsld = _num(max(turnaround / max(execution, BSLD_BOUND), 1.0))
        return [
            job.id, self.workload_name, job.id, _num(job.submit), str(job.nodes),
            _num(job.walltime), "1" if state == JobState.FINISHED else "0", _FINAL_STATE[state],
            _num(start), _num(execution), _num(end), _num(wait), _num(turnaround),
            _num(stretch) if stretch != "" else "", procset(self.allocation[k]), "0", "",
            _num(job.bb), _num(job.runtime) if job.runtime is not None else "",
            slowdown, bsld, job.user or "", self.reasons.get(job.id, ""),
        ]


class JobsCsvStream:
    """``jobs.csv`` written while a simulation runs, with the bytes of
    :meth:`SimulationResult.to_csv`: pass :meth:`ended` as :func:`bbopt.simulate`'s
    ``on_job_end``; the row of job ``k`` is written once jobs ``0..k`` have their final record
    (rows stay in the jobs' order), through the file's buffer, and :meth:`close` writes the
    rest. A run whose execution model adds preemption columns at the end is written whole by
    :meth:`close` instead."""

    def __init__(self, fh) -> None:
        import csv

        self.fh = fh
        self.writer = csv.writer(fh, lineterminator="\n")
        self.next = 0
        self.done = bytearray()

    def ended(self, result: SimulationResult, k: int) -> None:
        """Job ``k``'s record is final."""
        done = self.done
        if not done:
            self.done = done = bytearray(len(result.jobs))
            self.writer.writerow(BATSIM_COLUMNS + BBOPT_COLUMNS)
        done[k] = 1
        n = self.next
        if n != k:
            return
        end, row, write = len(done), result.row, self.writer.writerow
        while n < end and done[n]:
            write(row(n))
            n += 1
        self.next = n

    def close(self, result: SimulationResult) -> None:
        """Write the rows not written yet (every job has ended)."""
        if result.preemption or not self.done:
            self.fh.seek(0)
            self.fh.truncate()
            result._write_csv(self.fh)
            return
        for k in range(self.next, len(result.jobs)):
            self.writer.writerow(result.row(k))
        self.next = len(result.jobs)


def _num(x: float) -> str:
    """Deterministic, compact number formatting: integers without a fraction."""
    if isinstance(x, str):
        return x
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)


def procset(nodes: tuple[int, ...]) -> str:
    """Batsim's interval-set notation of node ids: ``(0, 1, 2, 5)`` -> ``"0-2 5"``."""
    if not nodes:
        return ""
    s = sorted(nodes)
    parts = []
    lo = prev = s[0]
    for x in s[1:]:
        if x == prev + 1:
            prev = x
            continue
        parts.append(f"{lo}-{prev}" if prev > lo else str(lo))
        lo = prev = x
    parts.append(f"{lo}-{prev}" if prev > lo else str(lo))
    return " ".join(parts)

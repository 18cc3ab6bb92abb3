"""A recorded fake of Slurm's client commands, for the bridge's decision logic without a cluster.

:class:`FakeSlurm` is a :class:`~bbopt.slurm.commands.SlurmCommands` whose ``run`` answers
``squeue``, ``sinfo``, ``scontrol show licenses`` and ``scontrol ping`` in the
machine-readable formats the real commands print (so the parsing runs as in production) from an
in-memory cluster, applies ``scontrol update NodeList=``, ``scontrol release``, ``scancel`` and
``sbatch`` to it, and records every command line in :attr:`FakeSlurm.calls`. A released job runs
at once on the nodes it was given (Slurm's own start latency is left to the integration tests on
a real cluster).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bbopt.slurm.cluster import SlurmError
from bbopt.slurm.commands import SEP, SlurmCommands


def slurm_time(t: float | None) -> str:
    return "N/A" if t is None else time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))


@dataclass
class FakeJob:
    id: str
    nodes: int = 1
    time_limit: float = 600.0
    submit: float = 0.0
    licenses: int = 0
    state: str = "PENDING"
    reason: str = "JobHeldUser"
    start: float | None = None
    node_list: tuple[str, ...] = ()
    req_nodes: tuple[str, ...] = ()
    comment: str = "(null)"
    name: str = "job"
    user: str = "alice"

    def line(self) -> str:
        limit = int(self.time_limit)
        return SEP.join((
            self.id, self.name, self.state, self.user, str(self.nodes),
            f"{limit // 3600}:{limit % 3600 // 60:02d}:{limit % 60:02d}",
            slurm_time(self.start), slurm_time(self.submit), ",".join(self.node_list) or "",
            self.reason, self.comment, f"bb:{self.licenses}" if self.licenses else "(null)",
            ",".join(self.req_nodes) or "", "batch"))


@dataclass
class FakeSlurm(SlurmCommands):
    """An in-memory Slurm partition: ``node_names`` (idle unless in ``node_states``), a ``bb``
    license pool of ``bb_licenses`` and ``jobs``; ``now`` is the clock it starts jobs at."""

    node_names: Sequence[str] = ("n1", "n2", "n3", "n4")
    bb_licenses: int = 10
    now: float = 1_800_000_000.0
    jobs_by_id: dict[str, FakeJob] = field(default_factory=dict)
    node_states: dict[str, str] = field(default_factory=dict)
    calls: list[tuple[str, ...]] = field(default_factory=list)
    #: command name -> message: the next call of that command fails with it (once)
    failing: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        SlurmCommands.__init__(self, env={})

    def add(self, job: FakeJob) -> FakeJob:
        self.jobs_by_id[job.id] = job
        return job

    def clock(self) -> float:
        return self.now

    def actions(self) -> list[tuple[str, ...]]:
        """The recorded commands that change the cluster (everything but the polls)."""
        return [c for c in self.calls if c[0] not in ("squeue", "sinfo")
                and c[:3] != ("scontrol", "show", "licenses") and c[:2] != ("scontrol", "ping")]

    # -- the command layer ---------------------------------------------------------------------

    def run(self, argv: Sequence[str], check: bool = True) -> str:
        argv = tuple(argv)
        self.calls.append(argv)
        key = argv[1] if argv[0] == "scontrol" else argv[0]
        if key in self.failing:
            message = self.failing.pop(key)
            if check:
                raise SlurmError(f"{' '.join(argv)} failed (1): {message}")
            return ""
        if argv[0] == "squeue":
            return "".join(j.line() + "\n" for j in self.jobs_by_id.values())
        if argv[0] == "sinfo":
            busy = {n for j in self.jobs_by_id.values() if j.state == "RUNNING"
                    for n in j.node_list}
            return "".join(f"{n} {self.node_states.get(n, 'allocated' if n in busy else 'idle')}\n"
                           for n in self.node_names)
        if argv[:3] == ("scontrol", "show", "licenses"):
            used = sum(j.licenses for j in self.jobs_by_id.values() if j.state == "RUNNING")
            return (f"LicenseName=bb Total={self.bb_licenses} Used={used} "
                    f"Free={self.bb_licenses - used} Reserved=0 Remote=no\n")
        if argv[:2] == ("scontrol", "ping"):
            return "Slurmctld(primary) at localhost is UP\n"
        if argv[:2] == ("scontrol", "update"):
            job = self._job(argv[2].removeprefix("JobId="))
            job.req_nodes = tuple(argv[3].removeprefix("NodeList=").split(","))
            return ""
        if argv[:2] == ("scontrol", "release"):
            job = self._job(argv[2])
            job.state, job.reason, job.start = "RUNNING", "None", self.now
            job.node_list = job.req_nodes
            return ""
        if argv[0] == "scancel":
            self.jobs_by_id.pop(argv[1], None)
            return ""
        raise AssertionError(f"the fake does not know {argv}")

    def _job(self, job_id: str) -> FakeJob:
        if job_id not in self.jobs_by_id:
            raise SlurmError(f"scontrol: error: Invalid job id specified ({job_id})")
        return self.jobs_by_id[job_id]


@dataclass
class LiveSlurm(FakeSlurm):
    """The fake with a controller of its own, on the real clock, for a whole replay: ``sbatch``
    queues a job (held, or waiting for Slurm's own start), jobs not held start first come first
    served on the lowest free nodes while they fit (nodes and ``bb`` licenses), a running job
    ends after its ``sleep`` (``TIMEOUT`` at its time limit) and leaves a ``jobcomp/filetxt``
    record in ``jobcomp``. Thread-safe: the replay submits from a thread of its own."""

    jobcomp: Path | None = None
    sleeps: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        super().__post_init__()
        self._lock = threading.Lock()

    def clock(self) -> float:
        return time.time()

    def run(self, argv: Sequence[str], check: bool = True) -> str:
        with self._lock:
            self.now = time.time()
            self._advance()
            if argv[0] != "sbatch":
                return super().run(argv, check)
            argv = tuple(argv)
            self.calls.append(argv)
            if "sbatch" in self.failing:
                raise SlurmError(f"sbatch failed (1): {self.failing.pop('sbatch')}")
            jid = str(1000 + len(self.jobs_by_id))
            licenses = int(argv[argv.index("-L") + 1].split(":")[1]) if "-L" in argv else 0
            comment = argv[argv.index("--comment") + 1] if "--comment" in argv else "(null)"
            self.add(FakeJob(jid, nodes=int(argv[argv.index("-N") + 1]),
                             time_limit=60.0 * int(argv[argv.index("--time") + 1]),
                             submit=self.now, licenses=licenses, comment=comment,
                             name=argv[argv.index("-J") + 1],
                             reason="JobHeldUser" if "--hold" in argv else "Priority"))
            self.sleeps[jid] = float(argv[-1].removeprefix("sleep "))
            self._advance()
            return f"{jid};fake\n"

    def _advance(self) -> None:
        for job in self.jobs_by_id.values():
            if job.state == "RUNNING":
                limit = min(self.sleeps.get(job.id, 0.0), job.time_limit)
                if self.now >= job.start + limit:
                    job.state = "TIMEOUT" if self.sleeps.get(job.id, 0.0) > job.time_limit \
                        else "COMPLETED"
                    self._record(job, job.start + limit)
        busy = {n for j in self.jobs_by_id.values() if j.state == "RUNNING" for n in j.node_list}
        used = sum(j.licenses for j in self.jobs_by_id.values() if j.state == "RUNNING")
        for job in self.jobs_by_id.values():
            if job.state != "PENDING" or job.reason == "JobHeldUser":
                continue
            free = [n for n in self.node_names if n not in busy]
            if job.nodes > len(free) or used + job.licenses > self.bb_licenses:
                break  # first come, first served
            job.state, job.reason, job.start = "RUNNING", "None", self.now
            job.node_list = tuple(free[:job.nodes])
            busy.update(job.node_list)
            used += job.licenses

    def _record(self, job: FakeJob, end: float) -> None:
        if self.jobcomp is None:
            return
        with self.jobcomp.open("a") as fh:
            fh.write(f"JobId={job.id} UserId={job.user}(0) JobState={job.state} "
                     f"StartTime={slurm_time(job.start)} EndTime={slurm_time(end)} "
                     f"NodeList={','.join(job.node_list)} NodeCnt={job.nodes}\n")


class FakeCluster:
    """What :func:`bbopt.slurm.replay.replay` asks of a :class:`~bbopt.slurm.cluster.LocalSlurm`,
    over a :class:`LiveSlurm`; the last one made is ``FakeCluster.last``, with its settings in
    ``made``."""

    last: FakeCluster | None = None

    def __init__(self, nodes: int = 16, *, bb_licenses: int = 0, directory=None,
                 scheduler_parameters=None) -> None:
        FakeCluster.last = self
        self.made = {"nodes": nodes, "bb_licenses": bb_licenses, "directory": directory,
                     "scheduler_parameters": scheduler_parameters}
        self.directory = Path(directory)
        self.node_names = [f"n{k + 1}" for k in range(nodes)]
        self.jobcomp = self.directory / "jobcomp.txt"
        self.env = {"SLURM_CONF": str(self.directory / "slurm.conf")}
        self.slurm = LiveSlurm(node_names=tuple(self.node_names), bb_licenses=bb_licenses,
                               jobcomp=self.jobcomp)

    def __enter__(self) -> FakeCluster:
        return self

    def __exit__(self, *exc) -> None:
        return None

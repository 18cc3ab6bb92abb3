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

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

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

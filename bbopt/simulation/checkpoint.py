"""Checkpoint/restart execution model: jobs that can be evicted and resumed (Zvi & Oren, OMFS,
Section II and Algorithm 1 lines 35-39).

A job runs as in the rigid model (its trace runtime, cut at its walltime) until a policy evicts
it (``Decision.preempt``). Then:

- a **checkpointable** job writes a checkpoint: it keeps its nodes and burst buffer for the
  checkpoint time ``C`` and then returns to the queue with its remaining work. When it starts
  again it first reads its checkpoint back (restart time ``R``) and then runs what is left.
- a **preemptable, not checkpointable** job is killed at once: with ``on_kill="drop"`` it ends as
  :attr:`~bbopt.core.JobState.DROPPED` (Algorithm 1, line 37: "if it is not checkpointable, drop
  it"; the default), with ``on_kill="requeue"`` it returns to the queue and starts again from
  scratch (what a Slurm site with ``PreemptMode=REQUEUE`` does). Its work since it started is
  lost.

Checkpoint and restart times are ``memory per node / bandwidth per node`` (each node writes or
reads its own memory image, in parallel). The memory per node is the job's
``extra["memory_per_node"]`` in bytes (the SWF used-memory field, when a trace has it) or the
model's ``memory_per_node`` default. The bandwidth is the PFS's (``pfs_bandwidth`` per node) or,
with ``target="bb"`` and a job whose own burst-buffer allocation can hold its image
(``nodes * memory_per_node <= job.bb``), the burst buffer's (``bb_bandwidth`` per node). The
choice for the burst buffer: the image is written into the job's *own* BB allocation, which the
job holds until its checkpoint is complete, and is then drained to the PFS in the background; so a
checkpoint never takes BB space that the ledger has not already given to its job, and a restart
reads the image back from the PFS. (Keeping images in the BB while jobs wait would hold BB
outside any running job, invisible to the policies' ``ClusterState``.)

Walltime across restarts: the walltime bounds a job's *useful* execution. After an eviction the
job's remaining walltime is ``walltime - work done`` (the time it already ran usefully); checkpoint
and restart time are the scheduler's doing and are not charged against it. A requeued job is
offered to the policies as the same job with ``walltime = R + remaining walltime`` (and
``extra["work_done"]``, ``extra["restarts"]``), so that planning with walltimes stays right; the
record keeps the original job.

Accounting per job (seconds of the job's run; times its nodes for node-seconds): every segment's
length is ``work + lost + checkpoint + restart`` time, so over a job's life
``work_done + lost_work + checkpoint_time + restart_time = run time`` (the sum of its segments).
A job that finishes has ``work_done = min(runtime, walltime)``.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import replace
from typing import Annotated

from bbopt.core import GB, Job, JobState, Platform
from bbopt.errors import InputError
from bbopt.simulation.execution import ExecutionModelBase
from bbopt.units import Bandwidth, Bytes


class CheckpointRestart(ExecutionModelBase):
    """Rigid execution plus eviction by checkpoint (or kill) and restart.

    ``memory_per_node`` (bytes) is the default image size per node; ``pfs_bandwidth`` and
    ``bb_bandwidth`` (bytes/s per node) the checkpoint bandwidths; ``target`` ``"pfs"`` or
    ``"bb"`` (see the module docstring); ``on_kill`` ``"drop"`` (Algorithm 1) or ``"requeue"``.
    """

    name = "checkpoint"

    def __init__(self, memory_per_node: Annotated[float, Bytes] = 64 * GB,
                 pfs_bandwidth: Annotated[float, Bandwidth] = 1 * GB,
                 bb_bandwidth: Annotated[float, Bandwidth] = 8 * GB, target: str = "pfs",
                 on_kill: str = "drop") -> None:
        if target not in ("pfs", "bb"):
            raise InputError(f"checkpoint target must be 'pfs' or 'bb', got {target!r}",
                             field="target")
        if on_kill not in ("drop", "requeue"):
            raise InputError(f"on_kill must be 'drop' or 'requeue', got {on_kill!r}",
                             field="on_kill")
        for key, value in (("memory_per_node", memory_per_node),
                           ("pfs_bandwidth", pfs_bandwidth), ("bb_bandwidth", bb_bandwidth)):
            if key == "memory_per_node" and not value >= 0 or key != "memory_per_node" \
                    and not value > 0:
                raise InputError(f"{key} must be positive, got {value!r}", field=key)
        self.memory_per_node = float(memory_per_node)
        self.pfs_bandwidth = float(pfs_bandwidth)
        self.bb_bandwidth = float(bb_bandwidth)
        self.target = target
        self.on_kill = on_kill
        self._jobs: Sequence[Job] = ()

    # -- cost of a checkpoint -------------------------------------------------------------------
    def memory_of(self, job: Job) -> float:
        return float(job.extra.get("memory_per_node", self.memory_per_node))

    def checkpoint_time(self, job: Job) -> float:
        """Seconds to write ``job``'s checkpoint (PFS, or its own BB allocation with
        ``target="bb"`` when the image fits there)."""
        mem = self.memory_of(job)
        if self.target == "bb" and job.nodes * mem <= job.bb:
            return mem / self.bb_bandwidth
        return mem / self.pfs_bandwidth

    def restart_time(self, job: Job) -> float:
        """Seconds to read ``job``'s checkpoint back (from the PFS: see the module docstring)."""
        return self.memory_of(job) / self.pfs_bandwidth

    # -- execution model protocol ---------------------------------------------------------------
    def reset(self, jobs: Sequence[Job], platform: Platform) -> None:
        n = len(jobs)
        self._jobs = jobs
        self._heap: list[tuple[float, int, int, str]] = []
        self._version = [0] * n
        self._seg_start = [0.0] * n
        self._seg_restart = [0.0] * n  # restart time paid at the start of the current segment
        self._image = [False] * n  # a checkpoint waits to be restarted
        self.work_done = [0.0] * n
        self.lost_work = [0.0] * n
        self.ckpt_time = [0.0] * n
        self.rst_time = [0.0] * n
        self.evictions = [0] * n
        self.checkpoints = [0] * n
        self.restarts = [0] * n
        self.kills = [0] * n
        self.started = [False] * n

    def start(self, k: int, t: float, allocation: tuple[int, ...]) -> None:
        job = self._jobs[k]
        self.started[k] = True
        r = 0.0
        if self._image[k]:
            r = self.restart_time(job)
            self._image[k] = False
            self.restarts[k] += 1
            self.rst_time[k] += r
        self._seg_start[k] = t
        self._seg_restart[k] = r
        runtime = job.runtime if job.runtime is not None else job.walltime
        left_wall = job.walltime - self.work_done[k]
        left_run = runtime - self.work_done[k]
        if left_run > left_wall:
            self._push(t + r + left_wall, k, JobState.KILLED)
        else:
            self._push(t + r + max(left_run, 0.0), k, JobState.FINISHED)

    def next_time(self) -> float:
        heap = self._heap
        while heap and heap[0][1] != self._version[heap[0][2]]:
            heapq.heappop(heap)
        return heap[0][0] if heap else float("inf")

    def finish(self, t: float) -> list[tuple[int, str]]:
        heap, done = self._heap, []
        while heap and heap[0][0] == t:
            _, version, k, why = heapq.heappop(heap)
            if version != self._version[k]:
                continue
            self._version[k] += 1
            if why in (JobState.FINISHED, JobState.KILLED):
                self._account_run(k, t)
            done.append((k, str(why)))
        return done

    def evict(self, k: int, t: float) -> float:
        """Evict running job ``k`` at ``t``; return when its resources come back (``t + C`` for
        a checkpoint, ``t`` for a kill). The engine then gets ``(k, "checkpointed")``,
        ``(k, "requeued")`` or ``(k, "dropped")`` from :meth:`finish` at that time."""
        job = self._jobs[k]
        self.evictions[k] += 1
        useful = self._useful(k, t)
        cut = self._seg_restart[k] - (t - self._seg_start[k])
        if cut > 0:  # evicted while still reading its checkpoint: only that much was spent
            self.rst_time[k] -= cut
        if job.checkpointable:
            c = self.checkpoint_time(job)
            self.work_done[k] += useful
            self.ckpt_time[k] += c
            self.checkpoints[k] += 1
            self._image[k] = True
            self._push(t + c, k, "checkpointed")
            return t + c
        self.kills[k] += 1
        self.lost_work[k] += useful + self.work_done[k]
        self.work_done[k] = 0.0
        self._push(t, k, "requeued" if self.on_kill == "requeue" else JobState.DROPPED)
        return t

    def resubmit(self, k: int) -> Job:
        """The job as the queue sees it again: its remaining walltime, plus the restart time."""
        job = self._jobs[k]
        r = self.restart_time(job) if self._image[k] else 0.0
        left_wall = job.walltime - self.work_done[k]
        runtime = job.runtime if job.runtime is not None else job.walltime
        extra = dict(job.extra, work_done=self.work_done[k],
                     restarts=self.restarts[k] + (1 if self._image[k] else 0))
        return replace(job, walltime=r + left_wall,
                       runtime=r + max(runtime - self.work_done[k], 0.0), extra=extra)

    def record(self, result) -> None:
        """Write the per-job accounting into ``result.preemption``."""
        for k, job in enumerate(self._jobs):
            if not self.started[k]:
                continue
            result.preemption[job.id] = {
                "evictions": self.evictions[k], "checkpoints": self.checkpoints[k],
                "restarts": self.restarts[k], "kills": self.kills[k],
                "checkpoint_time": self.ckpt_time[k], "restart_time": self.rst_time[k],
                "work_done": self.work_done[k], "lost_work": self.lost_work[k],
            }

    # -- helpers --------------------------------------------------------------------------------
    def _useful(self, k: int, t: float) -> float:
        """Useful work of the current segment up to ``t`` (after its restart time)."""
        return max(0.0, t - self._seg_start[k] - self._seg_restart[k])

    def _account_run(self, k: int, t: float) -> None:
        self.work_done[k] += self._useful(k, t)

    def _push(self, when: float, k: int, why: str) -> None:
        self._version[k] += 1
        heapq.heappush(self._heap, (when, self._version[k], k, why))

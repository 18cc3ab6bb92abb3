"""The bridge: bbopt as the scheduler in front of a real Slurm (``bbopt slurm run``).

Jobs are submitted held (``sbatch --hold``); Slurm's own scheduler never starts a held job. The
bridge polls Slurm (``squeue``, ``sinfo``, ``scontrol show licenses``, machine-readable formats)
every ``interval`` seconds. When what it sees changes it builds a :class:`~bbopt.ClusterState`
(running jobs with their nodes and start times, held jobs as the queue with walltime, nodes, BB
and user, the ``bb`` license pool as the platform's burst buffer), calls :func:`bbopt.decide`,
checks every start against the state (a job that is not waiting or does not fit is refused and
logged, never started) and applies the rest: the node list with ``scontrol update
NodeList=...``, then ``scontrol release``. This is the engine's loop (DESIGN.md, "The pieces and
how data flows") with Slurm in place of the simulated ledger; Slurm still enforces nodes and
licenses natively, so a race between a poll and a start can delay a job, never overcommit.

Restarts are clean because the truth is read back from Slurm: a held job is waiting, a released
one (pending without hold, or running) has been started and is never released again. What
Slurm does not keep lives in ``state_dir/bridge.json`` (the time origin, the policy's memory,
when each job was released); every decision is appended to ``state_dir/decisions.jsonl``, and
every failed poll (a Slurm command that failed or timed out) to ``state_dir/errors.jsonl``: the
bridge goes on polling.

With ``tick`` the bridge is a periodic scheduler, as in Kopanski & Rzadca's example (Section
3.1: "the scheduler runs periodically at every minute"): it decides only at ``origin + k * tick``
and states the time as that nominal instant, so that its decisions, like the simulator's with the
same tick, do not depend on how long ``squeue`` or Slurm's own start took. Without ``tick`` it
decides whenever what it sees changes, at the clock's time.

A released job is planned from its release time (the instant the bridge decided), not from
Slurm's start time, which comes about a second later (slurmctld's scheduling loop) and is
truncated to whole seconds; a job the bridge did not release is planned from Slurm's start.
Two more readings the simulator does not need: a job released but not yet running holds its
resources from its release time on (on its requested nodes); a job running past its walltime
(Slurm kills at whole minutes) still holds its own, as :func:`bbopt.decide` plans every state.
A policy whose kept memory no longer fits what really happened (``conservative-bb``'s
reservations once a job ran past its walltime) raises; the bridge then decides again with an
empty memory and says so in the log (``memory_reset``).
Nodes that are neither idle nor held by a known job (down, drained, completing) are shown to the
policy as one running pseudo-job, ``slurm:unavailable``, expected to end one interval from now.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import bbopt
from bbopt.core import RunningJob
from bbopt.limits import MAX_TICK, MIN_POLL, check_number, check_tick
from bbopt.schema import decision_to_dict
from bbopt.slurm.cluster import SlurmError
from bbopt.slurm.commands import SlurmCommands, SlurmJob
from bbopt.slurm.pool import DEFAULT_UNIT, job_from_slurm, platform_from_slurm

#: Slurm job states in which a job holds its nodes and licenses.
HOLDING_STATES = ("RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "STAGE_OUT", "SIGNALING")
UNAVAILABLE = "slurm:unavailable"
#: Seconds after a tick before the periodic bridge polls (lets sbatch and job ends land).
TICK_SETTLE = 0.5
_EPS = 1e-6


@dataclass
class Observation:
    """One poll of Slurm, as bbopt sees it."""

    state: bbopt.ClusterState
    node_names: list[str]
    free_nodes: list[int]
    slurm_jobs: dict[str, SlurmJob]
    signature: tuple
    active: int  # jobs waiting, released or running


@dataclass
class StepRecord:
    """What one scheduling step did (the JSON line of the decision log)."""

    time: float
    clock: float
    running: int
    queue: int
    decision_time: float
    started: list[str]
    nodes: dict[str, list[str]] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    backend: str = ""
    status: str = ""
    memory_reset: str = ""  # why the policy's memory was dropped before this decision

    def to_json(self) -> str:
        return json.dumps({
            "time": round(self.time, 6), "clock": round(self.clock, 6),
            "running": self.running, "queue": self.queue,
            "decision_time": self.decision_time, "started": self.started, "nodes": self.nodes,
            "refused": self.refused, "backend": self.backend, "status": self.status,
            "memory_reset": self.memory_reset})


class Bridge:
    """Schedules the held jobs of a Slurm partition with a bbopt policy.

    ``policy``/``options`` as for :func:`bbopt.decide` (a name, or a policy object);
    ``state_dir`` keeps the memory file and the decision log; ``interval`` is the polling period
    in seconds; ``tick``, if given, makes the bridge periodic: it decides only at every ``tick``
    seconds from its origin (and then even if nothing changed); ``bb_unit`` is the bytes of
    burst buffer per ``bb`` license.
    """

    def __init__(self, commands: SlurmCommands, policy: Any = "fcfs-bb",
                 options: Mapping[str, Any] | None = None, *, state_dir: str | os.PathLike,
                 interval: float = 1.0, tick: float | None = None, bb_unit: float = DEFAULT_UNIT,
                 partition: str | None = None, clock: Callable[[], float] = time.time) -> None:
        interval = check_number(interval, "interval", low=MIN_POLL, high=MAX_TICK)
        tick = check_tick(tick)  # (a microsecond tick would poll slurmctld without pause)
        self.commands = commands
        self.policy = policy
        self.policy_name = policy if isinstance(policy, str) else getattr(policy, "name", "?")
        self.options = dict(options or {})
        bbopt.make_policy(policy, **self.options)  # fail now on a bad name or option
        self.interval = float(interval)
        self.tick = tick
        self.bb_unit = bb_unit
        self.partition = partition
        self.clock = clock
        self.state_dir = Path(state_dir)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.state_file = self.state_dir / "bridge.json"
        self.log_file = self.state_dir / "decisions.jsonl"
        self.error_file = self.state_dir / "errors.jsonl"
        self.errors = 0  # failed polls since this object was made
        saved = self._load()
        self.origin: float | None = saved.get("origin")
        self.memory: dict[str, Any] = saved.get("memory") or {}
        self.released: dict[str, float] = saved.get("released") or {}
        self._last_signature: tuple | None = None
        self._last_tick = -1

    # -- persistence ---------------------------------------------------------------------

    def _load(self) -> dict[str, Any]:
        if not self.state_file.exists():
            return {}
        try:
            data = json.loads(self.state_file.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise bbopt.InputError(f"cannot read the bridge state: {exc}",
                                   source=str(self.state_file)) from exc
        if data.get("policy") not in (None, self.policy_name):
            raise bbopt.InputError(f"state was written by policy {data.get('policy')!r}, not "
                                   f"{self.policy_name!r}: use another --state-dir",
                                   source=str(self.state_file), field="policy")
        return data

    def _save(self) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps({"policy": self.policy_name, "origin": self.origin,
                                   "memory": self.memory, "released": self.released}))
        os.replace(tmp, self.state_file)

    # -- observing -----------------------------------------------------------------------

    def observe(self, at: float | None = None) -> Observation:
        """Read Slurm and build the :class:`~bbopt.ClusterState` a decision is taken on.

        ``at`` (Unix seconds) is the time the state is stated at (default: the clock's now).
        """
        sjobs = self.commands.jobs(self.partition)
        nodes = self.commands.nodes(self.partition)
        licenses = self.commands.licenses()
        now_abs = self.clock() if at is None else at
        if self.origin is None:
            submits = [j.submit for j in sjobs if j.submit is not None]
            self.origin = float(math.floor(min([now_abs, *submits])))
            self._save()
        origin = self.origin
        now = now_abs - origin
        platform = platform_from_slurm(nodes, licenses, self.bb_unit)
        index = {n.name: i for i, n in enumerate(nodes)}
        running: list[RunningJob] = []
        queue: list[bbopt.Job] = []
        held_by_jobs: set[int] = set()
        by_id: dict[str, SlurmJob] = {}
        for sj in sjobs:
            if sj.state in HOLDING_STATES:
                if sj.id in self.released:
                    start = self.released[sj.id] - origin
                else:
                    start = (sj.start - origin) if sj.start is not None else now
                alloc = tuple(index[n] for n in sj.node_list if n in index)
            elif sj.state == "PENDING" and sj.held:
                queue.append(job_from_slurm(sj, origin, self.bb_unit))
                by_id[sj.id] = sj
                continue
            elif sj.state == "PENDING" and not sj.reason.startswith("JobHeld"):
                # released (by us, or submitted without hold): Slurm is starting it
                start = self.released.get(sj.id, now_abs) - origin
                alloc = tuple(index[n] for n in sj.req_nodes if n in index)
            else:
                continue  # finished, or held by an administrator
            job = job_from_slurm(sj, origin, self.bb_unit)  # (past its walltime: decide plans
            # it as holding its resources, bbopt.core.planning_state)
            held_by_jobs.update(alloc)
            running.append(RunningJob(job, start, alloc or None))
            by_id[sj.id] = sj
        unavailable = [index[n.name] for n in nodes
                       if not n.usable and index[n.name] not in held_by_jobs]
        if unavailable:
            running.append(RunningJob(bbopt.Job(UNAVAILABLE, 0.0, self.interval,
                                                nodes=len(unavailable)), now,
                                      tuple(unavailable)))
        free_nodes = [i for i, n in enumerate(nodes) if n.usable and i not in held_by_jobs]
        queue.sort(key=lambda j: (j.submit, _id_key(j.id)))
        running.sort(key=lambda r: r.expected_end)
        state = bbopt.ClusterState(now, platform, tuple(running), tuple(queue), self.memory)
        signature = (tuple(sorted((r.job.id, r.job.nodes) for r in running)),
                     tuple(j.id for j in queue), tuple(free_nodes), platform.bb)
        return Observation(state, [n.name for n in nodes], free_nodes, by_id, signature,
                           len(running) - (1 if unavailable else 0) + len(queue))

    # -- deciding and applying -------------------------------------------------------------

    def step(self, force: bool = False) -> StepRecord | None:
        """One poll; decide and apply if the state changed (periodic mode: if a tick has come),
        or if ``force``."""
        at = None
        if self.tick is not None and self.origin is not None:
            k = math.floor((self.clock() - self.origin) / self.tick + 1e-9)
            if k <= self._last_tick and not force:
                return None
            self._last_tick = k
            at = self.origin + k * self.tick
        obs = self.observe(at)
        state = obs.state
        changed = obs.signature != self._last_signature
        self._last_signature = obs.signature
        if not (force or changed or self.tick is not None) or not state.queue:
            return None
        t0 = time.perf_counter()
        reset = ""
        try:
            decision = bbopt.decide(state, self.policy, **self.options)
        except Exception as exc:  # noqa: BLE001 - retried once without memory, else raised
            if not state.memory:
                raise
            # The memory was planned for a past that did not happen (e.g. a job ran past its
            # walltime and a kept reservation no longer fits): plan again from scratch.
            reset = f"{type(exc).__name__}: {exc}"
            state = dataclasses.replace(state, memory={})
            decision = bbopt.decide(state, self.policy, **self.options)
        elapsed = time.perf_counter() - t0
        record = StepRecord(time=state.time, clock=self.clock(), running=len(state.running),
                            queue=len(state.queue), decision_time=elapsed, started=[],
                            backend=decision.stats.backend, status=str(decision.stats.status),
                            memory_reset=reset)
        self._apply(obs, decision, record)
        if decision.memory is not None or reset:
            self.memory = decision_to_dict(decision)["memory"] or {}
        self._save()
        with self.log_file.open("a") as fh:
            fh.write(record.to_json() + "\n")
        return record

    def _apply(self, obs: Observation, decision: bbopt.Decision, record: StepRecord) -> None:
        state = obs.state
        waiting = {j.id: j for j in state.queue}
        free_n, free_bb = state.free()
        free_nodes = list(obs.free_nodes)
        for s in decision.start:
            job = waiting.pop(s.job_id, None)
            if job is None:
                record.refused[s.job_id] = "not waiting"
                continue
            if job.nodes > free_n or job.bb > free_bb + _EPS * max(1.0, job.bb):
                record.refused[s.job_id] = (f"does not fit: needs {job.nodes} nodes and "
                                            f"{job.bb:.6g} B, free {free_n} and {free_bb:.6g} B")
                continue
            chosen = list(s.nodes) if s.nodes else []
            if len(chosen) != job.nodes or not set(chosen) <= set(free_nodes):
                chosen = free_nodes[:job.nodes]
            if len(chosen) < job.nodes:
                record.refused[s.job_id] = f"only {len(free_nodes)} idle nodes"
                continue
            names = [obs.node_names[i] for i in chosen]
            try:
                self.commands.set_nodes(job.id, names)
                self.commands.release(job.id)
            except SlurmError as exc:  # e.g. cancelled between the poll and now
                record.refused[s.job_id] = f"slurm: {exc}"
                continue
            self.released[job.id] = state.time + self.origin
            free_n -= job.nodes
            free_bb -= job.bb
            free_nodes = [i for i in free_nodes if i not in chosen]
            record.started.append(job.id)
            record.nodes[job.id] = names
        # forget release times of jobs Slurm no longer lists
        self.released = {k: v for k, v in self.released.items() if k in obs.slurm_jobs
                         or k in record.started}

    def run(self, *, until_idle: bool = False, max_seconds: float | None = None,
            stop: Callable[[], bool] | None = None,
            on_step: Callable[[StepRecord], None] | None = None) -> None:
        """Poll and decide until ``stop()`` is true, ``max_seconds`` pass, or (``until_idle``)
        no job is waiting, released or running.

        A Slurm command that fails (slurmctld restarting, a timeout) costs one poll, not the
        bridge: the error goes to ``state_dir/errors.jsonl`` and the next poll tries again.
        """
        began = time.monotonic()
        while True:
            t0 = time.monotonic()
            try:
                record = self.step()
            except SlurmError as exc:
                record = None
                self._log_error(exc)
            if record is not None and on_step is not None:
                on_step(record)
            if stop is not None and stop():
                return
            if max_seconds is not None and time.monotonic() - began >= max_seconds:
                return
            if until_idle and self._idle():
                return
            time.sleep(self._pause(time.monotonic() - t0))

    def _log_error(self, exc: Exception) -> None:
        self.errors += 1
        with self.error_file.open("a") as fh:
            fh.write(json.dumps({"clock": round(self.clock(), 6), "error": str(exc)}) + "\n")

    def _pause(self, spent: float) -> float:
        """Seconds to sleep before the next poll: the interval, or up to the next tick (plus a
        settling delay so that what happened at the tick is visible in Slurm)."""
        pause = max(0.0, self.interval - spent)
        if self.tick is not None and self.origin is not None:
            elapsed = self.clock() - self.origin
            nxt = (math.floor(elapsed / self.tick + 1e-9) + 1) * self.tick + TICK_SETTLE
            pause = min(pause, max(0.0, nxt - elapsed))
        return pause

    def _idle(self) -> bool:
        try:
            return self.observe().active == 0
        except SlurmError as exc:
            self._log_error(exc)
            return False


def _id_key(job_id: str) -> tuple:
    return (0, int(job_id), "") if job_id.isdigit() else (1, 0, job_id)

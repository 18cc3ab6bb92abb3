"""``bbopt batsim scheduler``: a bbopt policy as Batsim's scheduler.

Batsim (4.x) connects its REQ socket to ours (a REP socket bound to ``--socket``) and tells us
what happened; we answer each message with the policy's decision. What the scheduler keeps is
what bbopt's engine keeps (:mod:`bbopt.simulation.engine`): the waiting queue in arrival order,
the running jobs with their allocations, a :class:`~bbopt.simulation.ledger.Ledger` that picks
the nodes of a start that names none (the same node choice as the engine's), and the policy's
memory. After each message that leaves jobs waiting it builds a
:class:`~bbopt.core.ClusterState` and asks the policy, exactly as :func:`bbopt.decide` would.

- SIMULATION_BEGINS: the compute resources are the nodes; the storage resources whose
  properties carry a size (``bb_capacity`` or ``size``, bytes) make the BB pool (or a bbopt
  platform given with ``--platform`` replaces both).
- JOB_SUBMITTED: the job, read as bbopt reads a Batsim workload (walltime, ``res``, the
  profile's runtime and per-node ``bb``, bbopt's own fields in ``extra_data``); a job that can
  never fit the platform is answered with REJECT_JOB (as the engine rejects it).
- JOB_COMPLETED, JOB_KILLED: the job's nodes and BB are free again.
- REQUESTED_CALL: a scheduling point (``--tick`` asks for one every TICK seconds while jobs
  wait, as the engine's ``tick``).
- NOTIFY: noted; SIMULATION_ENDS: an empty answer, then exit.

Starts are answered with EXECUTE_JOB (``alloc``: the interval set of nodes; for a job with BB on
a platform whose BB is a storage resource, ``storage_mapping`` ``{"bb": id}``). A message that
breaks the protocol is answered with ``NOTIFY {"type": "protocol_error", "message": ...}`` and
the scheduler exits with the error.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from typing import Any

from bbopt.core import ClusterState, Job, Platform, RunningJob, RunningJobs
from bbopt.errors import BboptError, InputError
from bbopt.interop.batsim.protocol import (
    BB_PROPERTY,
    FROM_BATSIM,
    PROTOCOL_ERROR,
    Link,
    ProtocolError,
    decode,
    event,
    field,
    intervals,
)
from bbopt.loading import batsim_jobs
from bbopt.policies.registry import Policy, make_policy
from bbopt.simulation.ledger import Ledger


class PolicyScheduler:
    """The scheduler's side of the protocol for one simulation: :meth:`answer` takes Batsim's
    message (parsed) and returns the reply; :attr:`ended` once SIMULATION_ENDS was answered."""

    def __init__(self, policy: str | Policy, options: dict[str, Any] | None = None,
                 platform: Platform | None = None, tick: float | None = None) -> None:
        self.policy = make_policy(policy, **(options or {}))
        self.given_platform = platform
        self.platform: Platform | None = None
        self.tick = tick
        self.ledger: Ledger | None = None
        self.storage: int | None = None  # the storage resource holding the BB pool
        self.profiles: dict[str, dict[str, Any]] = {}
        self.queue: dict[str, Job] = {}
        self.running: list[RunningJob] = []
        self.running_keys: list[float] = []
        self.live: dict[str, RunningJob] = {}
        self.memory: Any = {}
        self.now = -math.inf
        self.ended = False
        self.decisions = 0

    def answer(self, msg: dict[str, Any]) -> dict[str, Any]:
        now = msg["now"]
        out: list[dict[str, Any]] = []
        changed = False
        for i, ev in enumerate(msg["events"]):
            kind, data = ev["type"], ev["data"]
            where = f"events[{i}] ({kind})"
            if self.platform is None and kind != "SIMULATION_BEGINS":
                raise ProtocolError(f"{where}: the first event must be SIMULATION_BEGINS")
            if kind == "SIMULATION_BEGINS":
                self._begin(data, where)
            elif kind == "SIMULATION_ENDS":
                self.ended = True
            elif kind == "JOB_SUBMITTED":
                job = self._job(data, where)
                why = self.ledger.why_never_fits(job)
                if why is not None:
                    out.append(event(now, "REJECT_JOB", job_id=job.id))
                else:
                    self.queue[job.id] = job
                    changed = True
            elif kind == "JOB_COMPLETED":
                self._release(field(data, "job_id", where, str), where)
                changed = True
            elif kind == "JOB_KILLED":
                for job_id in field(data, "job_ids", where, list):
                    if job_id in self.live:  # (one that completed before the kill is gone)
                        self._release(job_id, where)
                changed = True
            elif kind == "REQUESTED_CALL":
                changed = True
            elif kind in ("NOTIFY", "RESOURCE_STATE_CHANGED", "ANSWER"):
                pass
            else:  # QUERY: bbopt answers none
                raise ProtocolError(f"{where}: bbopt's scheduler answers no {kind}")
        if self.ended:
            if out or self.queue:
                raise ProtocolError(f"SIMULATION_ENDS with {len(self.queue)} jobs waiting")
            return {"now": now, "events": []}
        if self.queue and changed:
            out.extend(self._decide(now))
            if self.tick is not None and self.queue:
                # (not event(): its own first argument is named timestamp too)
                out.append({"timestamp": now, "type": "CALL_ME_LATER", "data": {
                    "timestamp": (math.floor(now / self.tick) + 1) * self.tick}})
        return {"now": now, "events": out}

    def _begin(self, data: dict[str, Any], where: str) -> None:
        if self.platform is not None:
            raise ProtocolError(f"{where}: a second SIMULATION_BEGINS")
        compute = field(data, "compute_resources", where, list)
        storage = data.get("storage_resources") or []
        ids = sorted(field(r, "id", f"{where}.compute_resources", int) for r in compute)
        if ids != list(range(len(ids))) or not ids:
            raise ProtocolError(f"{where}, field 'compute_resources': ids must be 0..n-1, "
                                f"got {len(ids)} resources")
        bb = 0.0
        for r in storage:
            props = r.get("properties") or {}
            size = props.get(BB_PROPERTY, props.get("size"))
            if size is not None:
                try:
                    size = float(size)
                except (TypeError, ValueError):
                    raise ProtocolError(f"{where}: storage resource {r.get('id')!r} has size "
                                        f"{size!r}, not a number of bytes") from None
                bb += size
                if self.storage is None:
                    self.storage = field(r, "id", f"{where}.storage_resources", int)
        self.platform = self.given_platform or Platform(nodes=len(ids), bb=bb, name="batsim")
        if self.platform.nodes > len(ids):
            raise ProtocolError(f"{where}: the platform has {self.platform.nodes} nodes, "
                                f"Batsim's {len(ids)} compute resources")
        self.ledger = Ledger(self.platform)
        profiles = data.get("profiles") or {}
        if not isinstance(profiles, dict):
            raise ProtocolError(f"{where}, field 'profiles': must be an object")
        self.profiles = {str(k): dict(v) for k, v in profiles.items() if isinstance(v, dict)}

    def _job(self, data: dict[str, Any], where: str) -> Job:
        job_id = field(data, "job_id", where, str)
        raw = field(data, "job", where, dict)
        if job_id in self.queue or job_id in self.live:
            raise ProtocolError(f"{where}: job {job_id!r} submitted twice")
        workload = job_id.split("!", 1)[0] if "!" in job_id else ""
        pname = raw.get("profile")
        profile = data.get("profile") or self.profiles.get(workload, {}).get(pname)
        if profile is None:
            raise ProtocolError(f"{where}: job {job_id!r} has profile {pname!r}, which "
                                f"SIMULATION_BEGINS did not give (nor the event)")
        try:
            return batsim_jobs({"jobs": [{**raw, "id": job_id}], "profiles": {pname: profile}},
                               source=f"JOB_SUBMITTED {job_id}")[0]
        except InputError as exc:
            raise ProtocolError(f"{where}: {exc}") from None

    def _release(self, job_id: str, where: str) -> None:
        rj = self.live.pop(job_id, None)
        if rj is None:
            raise ProtocolError(f"{where}: job {job_id!r} is not running")
        i = bisect_left(self.running_keys, rj.start + rj.job.walltime)
        while self.running[i] is not rj:
            i += 1
        del self.running[i]
        del self.running_keys[i]
        self.ledger.release(rj.job, rj.allocation)

    def _decide(self, now: float) -> list[dict[str, Any]]:
        ledger = self.ledger
        running = RunningJobs.of(self.running, (ledger.used_nodes, ledger.used_bb))
        state = ClusterState(now, self.platform, running, tuple(self.queue.values()),
                             self.memory)
        decision = self.policy.decide(state)
        self.decisions += 1
        if decision.memory is not None:
            self.memory = decision.memory
        if decision.preempt:
            raise ProtocolError("the policy preempts jobs; bbopt's Batsim scheduler does not "
                                "kill jobs")
        out = []
        for s in decision.start:
            job = self.queue.pop(s.job_id)
            nodes = ledger.admit(job, s.nodes, now, s.bb_pieces)
            rj = RunningJob(job, now, nodes)
            key = now + job.walltime
            i = bisect_left(self.running_keys, key)
            self.running.insert(i, rj)
            self.running_keys.insert(i, key)
            self.live[job.id] = rj
            data: dict[str, Any] = {"job_id": job.id, "alloc": intervals(nodes)}
            if job.bb > 0 and self.storage is not None:
                data["storage_mapping"] = {"bb": self.storage}
            out.append(event(now, "EXECUTE_JOB", **data))
        return out


def run_scheduler(endpoint: str, policy: str, options: dict[str, Any] | None = None,
                  platform: Platform | None = None, tick: float | None = None,
                  timeout: float = 600.0) -> PolicyScheduler:
    """Answer Batsim on ``endpoint`` (bound, REP) until SIMULATION_ENDS; every wait for Batsim's
    next message is bounded by ``timeout`` seconds. A protocol error is answered with a
    ``protocol_error`` NOTIFY, then raised."""
    scheduler = PolicyScheduler(policy, options, platform, tick)
    link = Link(endpoint, "rep", timeout)
    try:
        while not scheduler.ended:
            raw = link.receive("Batsim")
            try:
                msg = decode(raw, "Batsim", FROM_BATSIM, scheduler.now)
                scheduler.now = msg["now"]
                reply = scheduler.answer(msg)
            except BboptError as exc:
                # (an InvalidDecision of the ledger, a policy bug, is said the same way)
                now = scheduler.now if math.isfinite(scheduler.now) else 0.0
                link.send({"now": now, "events": [event(now, "NOTIFY", type=PROTOCOL_ERROR,
                                                        message=str(exc))]})
                raise ProtocolError(str(exc)) from None
            link.send(reply)
    finally:
        link.close()
    return scheduler

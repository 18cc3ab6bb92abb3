"""``bbopt batsim server``: bbopt's simulator on Batsim's side of the protocol, so that an
unmodified Batsim scheduler (pybatsim's, or any other speaking Batsim 4.x's JSON protocol)
schedules a workload in bbopt's engine, and bbopt writes its usual outputs.

The scheduler is a policy like any other to the engine (:mod:`bbopt.simulation.engine`): at each
scheduling point the engine asks :class:`RemoteScheduler` for a decision; it tells the scheduler
what happened since its last message (JOB_COMPLETED, JOB_SUBMITTED in the engine's arrival
order, NOTIFY ``no_more_static_job_to_submit`` with the last submission, REQUESTED_CALL) and
turns the answer's EXECUTE_JOBs into starts on the named nodes, which the engine checks and
applies as it checks every decision. Messages come when Batsim sends them: at every submission
and every completion (queue empty or not: :meth:`RemoteScheduler.next_call` asks the engine for
the instant) and at the time a CALL_ME_LATER asked, in a message of its own when nothing else
happens then (a CALL_ME_LATER not after the current time is refused, as Batsim refuses it); the
last completion comes with SIMULATION_ENDS, and calls still pending then are dropped, as Batsim
drops them. What differs from Batsim itself (docs/interop.md):

- decisions apply at the instant of the message they answer (a scheduler that advances its
  clock, as pybatsim's ``consume_time``, does not delay its jobs);
- jobs run as bbopt's rigid model runs them (the profile's runtime, killed at the walltime) and a
  job that can never fit the platform is rejected by the engine at submission, unseen by the
  scheduler (the NOTIFY that every job was submitted still comes at the last submission);
  REJECT_JOB of a job that fits and KILL_JOB are refused.

SIMULATION_BEGINS announces the platform's nodes as compute resources ``0..n-1`` and its BB pool
as one storage resource with the property ``bb_capacity`` (bytes), and every job's profile (a
``delay`` profile with the runtime and Kopanski's per-node ``bb``, bbopt's own fields in
``extra_data``: :func:`bbopt.loading.batsim_document`). Every wait for the scheduler is
bounded; a protocol error ends the run with SIMULATION_ENDS (the scheduler exits) and is raised.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

from bbopt.core import Decision, Job, Platform, SolveStats, Start, Status
from bbopt.errors import BboptError, InvalidDecision
from bbopt.interop.batsim.protocol import (
    BB_PROPERTY,
    FROM_SCHEDULER,
    PROTOCOL_ERROR,
    Link,
    ProtocolError,
    decode,
    event,
    field,
    intervals,
    parse_intervals,
)
from bbopt.loading import batsim_document
from bbopt.simulation.engine import simulate
from bbopt.simulation.result import SimulationResult

#: The workload id of the jobs in the protocol (``w0!12``), as Batsim numbers its workloads.
WORKLOAD = "w0"


class RemoteScheduler:
    """A policy whose decisions come from a Batsim scheduler over ``link`` (REQ)."""

    io_aware = False

    def __init__(self, link: Link, jobs: Sequence[Job], platform: Platform,
                 workload_path: str = "") -> None:
        self.name = "batsim-scheduler"
        self.link = link
        self.jobs = list(jobs)
        self.platform = platform
        self.workload_path = workload_path
        self.pid = {job.id: f"{WORKLOAD}!{job.id}" for job in self.jobs}
        self.bbopt_id = {v: k for k, v in self.pid.items()}
        self.order = sorted(range(len(self.jobs)), key=lambda k: self.jobs[k].submit)
        self.ptr = 0  # the next job (in self.order) to announce
        self.rejected: set[int] = set()
        self.ended: list[dict[str, Any]] = []  # JOB_COMPLETED events not yet sent
        self.calls: list[float] = []  # CALL_ME_LATER times (a heap)
        self.ended_at = math.inf  # the earliest completion not yet told
        self.all_submitted_said = False
        self.can_send = True  # (a REQ socket alternates: send, then receive)
        self.now = 0.0
        self.messages = 0

    # -- the protocol ------------------------------------------------------------------------

    def exchange(self, now: float, events: list[dict[str, Any]]) -> dict[str, Any]:
        """Send Batsim's message, return the scheduler's checked answer."""
        self.link.send({"now": now, "events": events})
        self.can_send = False
        raw = self.link.receive("the scheduler")
        self.can_send = True
        self.messages += 1
        msg = decode(raw, "the scheduler", FROM_SCHEDULER, now)
        for ev in msg["events"]:
            if ev["type"] == "NOTIFY" and ev["data"].get("type") == PROTOCOL_ERROR:
                self.can_send = False  # (it has exited)
                raise ProtocolError("the scheduler refused the message at t="
                                    f"{now:g}: {ev['data'].get('message', '')}")
            if ev["timestamp"] < now - 1e-9 * max(1.0, abs(now)):
                raise ProtocolError(f"message from the scheduler: a {ev['type']} at "
                                    f"{ev['timestamp']}, before now ({now}): it would change "
                                    "the past")
        self.now = now
        return msg

    def begin(self) -> None:
        """SIMULATION_BEGINS: the platform, the workload and every profile."""
        n = self.platform.nodes
        doc = batsim_document(self.jobs, n)
        self.job_records = {self.pid[r["id"]]: {**r, "id": self.pid[r["id"]]}
                            for r in doc["jobs"]}
        storage = []
        if self.platform.bb > 0:
            storage.append({"id": n, "name": "bb", "state": "idle",
                            "properties": {"role": "storage",
                                           BB_PROPERTY: repr(float(self.platform.bb))},
                            "zone_properties": {}})
        data = {
            "nb_resources": n + len(storage), "nb_compute_resources": n,
            "nb_storage_resources": len(storage), "allow_compute_sharing": False,
            "allow_storage_sharing": True,
            "config": {"redis-enabled": False, "redis-hostname": "127.0.0.1",
                       "redis-port": 6379, "redis-prefix": "default",
                       "profiles-forwarded-on-submission": False,
                       "dynamic-jobs-enabled": False, "dynamic-jobs-acknowledged": False,
                       "profile-reuse-enabled": False, "sched-config": "",
                       "forward-unknown-events": False},
            "compute_resources": [{"id": i, "name": f"node{i}", "state": "idle",
                                   "properties": {}, "zone_properties": {}}
                                  for i in range(n)],
            "storage_resources": storage,
            "workloads": {WORKLOAD: self.workload_path},
            "profiles": {WORKLOAD: doc["profiles"]},
        }
        reply = self.exchange(0.0, [event(0.0, "SIMULATION_BEGINS", **data)])
        self._apply(reply, 0.0, {})

    def job_ended(self, result: SimulationResult, k: int) -> None:
        """The engine's ``on_job_end``: a job's record is final."""
        state = result.state[k]
        if state == "rejected":
            self.rejected.add(k)
            return
        job = self.jobs[k]
        batsim_state = {"finished": "COMPLETED_SUCCESSFULLY",
                        "killed": "COMPLETED_WALLTIME_REACHED"}.get(str(state),
                                                                     "COMPLETED_KILLED")
        self.ended_at = min(self.ended_at, float(result.end[k]))
        self.ended.append(event(float(result.end[k]), "JOB_COMPLETED", job_id=self.pid[job.id],
                                job_state=batsim_state,
                                return_code=0 if state == "finished" else 1,
                                alloc=intervals(result.allocation[k] or ())))

    def _news(self, now: float) -> list[dict[str, Any]]:
        """What happened up to ``now`` that the scheduler was not told, in time order."""
        events, self.ended, self.ended_at = self.ended, [], math.inf
        jobs, order = self.jobs, self.order
        while self.ptr < len(order) and jobs[order[self.ptr]].submit <= now:
            k = order[self.ptr]
            self.ptr += 1
            if k in self.rejected:
                continue
            pid = self.pid[jobs[k].id]
            events.append(event(jobs[k].submit, "JOB_SUBMITTED", job_id=pid,
                                job=self.job_records[pid]))
        if self.ptr == len(order) and not self.all_submitted_said:
            self.all_submitted_said = True
            events.append(event(jobs[order[-1]].submit if order else now, "NOTIFY",
                                type="no_more_static_job_to_submit"))
        while self.calls and self.calls[0] <= now:
            events.append(event(heapq.heappop(self.calls), "REQUESTED_CALL"))
        events.sort(key=lambda e: e["timestamp"])  # (stable: completions before submissions)
        return events

    def _apply(self, reply: dict[str, Any], now: float,
               waiting: dict[str, Job]) -> list[Start]:
        starts = []
        for i, ev in enumerate(reply["events"]):
            kind, data = ev["type"], ev["data"]
            where = f"message from the scheduler at t={now:g}, events[{i}] ({kind})"
            if kind == "EXECUTE_JOB":
                pid = field(data, "job_id", where, str)
                job_id = self.bbopt_id.get(pid)
                if job_id is None:
                    raise ProtocolError(f"{where}: unknown job {pid!r}")
                job = waiting.get(job_id)
                if job is None:
                    raise ProtocolError(f"{where}: job {pid!r} is not waiting")
                nodes = parse_intervals(data.get("alloc"), f"{where}, field 'alloc'")
                if nodes[-1] >= self.platform.nodes:
                    raise ProtocolError(f"{where}, field 'alloc': resource {nodes[-1]} is not a "
                                        f"compute resource (0-{self.platform.nodes - 1})")
                if len(nodes) != job.nodes:
                    raise ProtocolError(f"{where}, field 'alloc': {len(nodes)} resources for a "
                                        f"job of {job.nodes}")
                starts.append(Start(job_id, nodes))
            elif kind == "CALL_ME_LATER":
                at = field(data, "timestamp", where, int | float)
                if not math.isfinite(at):
                    raise ProtocolError(f"{where}, field 'timestamp': not a finite time")
                if at <= now:
                    raise ProtocolError(f"{where}, field 'timestamp': a call at {at:g} is not "
                                        f"after now ({now:g})")
                heapq.heappush(self.calls, float(at))
            elif kind in ("SET_JOB_METADATA", "ANSWER") or kind == "NOTIFY" and data.get(
                    "type") in ("registration_finished", "continue_registration"):
                pass  # (nothing to do in a static workload)
            elif kind == "REJECT_JOB":
                raise ProtocolError(f"{where}: bbopt's simulator runs every job that fits the "
                                    "platform (it rejects the others itself, at submission)")
            else:
                raise ProtocolError(f"{where}: bbopt's simulator does not do {kind}")
        return starts

    def next_call(self) -> float:
        """The engine asks again at this instant (inf: only when jobs wait): the earliest
        CALL_ME_LATER, or now when a completion is not yet told."""
        return min(self.calls[0] if self.calls else math.inf, self.ended_at)

    def decide(self, state) -> Decision:
        """A scheduling point of the engine: one message to the scheduler and its answer."""
        t0 = time.perf_counter()
        now = float(state.time)
        reply = self.exchange(now, self._news(now))
        starts = self._apply(reply, now, {job.id: job for job in state.queue})
        stats = SolveStats(backend="batsim", status=Status.FEASIBLE,
                           wall_time=time.perf_counter() - t0)
        return Decision(start=tuple(starts), stats=stats)

    def finish(self, now: float) -> None:
        """The last completions (if any) with SIMULATION_ENDS, in one message as Batsim sends
        them. Every job was submitted by then: submissions still untold are of jobs the engine
        rejected, after the last end; the NOTIFY that all were submitted comes at the last one,
        and the simulation ends there, as Batsim's ends once it rejected them."""
        self.calls.clear()  # (pending calls are dropped)
        order = self.order
        news = self._news(max(now, self.jobs[order[-1]].submit) if order else now)
        now = max([now] + [e["timestamp"] for e in news])
        reply = self.exchange(now, [*news, event(now, "SIMULATION_ENDS")])
        if any(ev["type"] == "EXECUTE_JOB" for ev in reply["events"]):
            raise ProtocolError("the scheduler started a job after the last one ended")

    def abort(self) -> None:
        """After an error: tell the scheduler the simulation is over (if the socket can still
        speak), waiting a bounded time for its answer."""
        if not self.can_send:
            return
        try:
            self.link.send({"now": self.now, "events": [event(self.now, "SIMULATION_ENDS")]})
            self.can_send = False
            self.link.receive("the scheduler")
        except ProtocolError:
            pass


def serve_batsim(jobs: Sequence[Job], platform: Platform, endpoint: str, *,
                 workload_name: str = "workload", workload_path: str = "",
                 timeout: float = 600.0,
                 on_job_end: Callable[[SimulationResult, int], None] | None = None,
                 ) -> SimulationResult:
    """Replay ``jobs`` on ``platform`` in bbopt's engine with the Batsim scheduler listening on
    ``endpoint`` (e.g. ``tcp://127.0.0.1:28000``) taking the decisions; ``on_job_end`` as for
    :func:`bbopt.simulate`. Every wait for the scheduler is bounded by ``timeout`` seconds."""
    link = Link(endpoint, "req", timeout)
    remote = RemoteScheduler(link, jobs, platform, workload_path)

    def ended(result: SimulationResult, k: int) -> None:
        remote.job_ended(result, k)
        if on_job_end is not None:
            on_job_end(result, k)

    try:
        remote.begin()
        result = simulate(jobs, platform, remote, workload_name=workload_name,
                          on_job_end=ended)
        remote.finish(max((e for e in result.end if e == e), default=0.0))
    except BboptError as exc:
        remote.abort()
        if not isinstance(exc, InvalidDecision):  # (a protocol error, a workload refused)
            raise
        raise ProtocolError(f"the scheduler's decision was refused: {exc}") from None
    finally:
        link.close()
    return result

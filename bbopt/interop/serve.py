"""``bbopt serve``: a long-running decision service for tools that are not written in Python.

The third way into bbopt (DESIGN.md, "The pieces": "another tool calling ``bbopt.decide(state)``")
without paying for a new process per decision: imports, compiled kernels and solvers are loaded
once, at start (:meth:`DecisionService.warm` decides a small state with every warmed policy), so
the first request is as fast as any other.

Protocol: JSON lines. A request is one JSON object on one line::

    {"id": 7, "policy": "sjf-bb", "options": {}, "budget": 0.5, "session": "rm-1",
     "state": {...}}                    # the state `bbopt decide` reads (bbopt.schema)

``policy`` and ``state`` are required; ``options`` are the policy's options; ``budget`` (seconds)
goes to the policy's ``budget`` option when it has one and is checked against the decision's wall
time in any case; ``session`` names a session (default: one per connection); ``id`` is echoed.
A session keeps each policy's memory, so a client sends only the state: a state without a
``memory`` key gets the memory the policy returned last in this session. It also keeps the
state itself: instead of ``state``, a request may carry the ``delta`` since the session's last
request (jobs submitted, started, ended; the clock: :mod:`bbopt.interop.delta`), a few hundred
bytes where 5,000 waiting jobs are 1.1 MB. The reply, one line::

    {"id": 7, "ok": true, "decision": {...},  # the JSON `bbopt decide` prints
     "budget": {"seconds": 0.5, "held": true, "cold": false, "overrun": false},
     "timing": {"parse": 0.0041, "decide": 0.0008, "cpu": 0.0049}}

``timing`` gives the wall seconds of reading the request (``parse``) and of the decision, and the
CPU seconds of both (``cpu``: the thread's own, whatever else the machine runs). ``held`` is
false when the decision overran the budget (``overrun``) or was the first of its
policy in this process (``cold``: loading and compiling were part of it), never a silent
FEASIBLE. A bad request gets ``{"id": ..., "ok": false, "error": {"message", "path", "field"}}``
naming the JSON path and field (the checks are those of ``bbopt decide``: :mod:`bbopt.schema`),
and the service stays up. SIGTERM ends the service after the request in progress.

Transports (:mod:`bbopt.interop.transport`): stdin/stdout (one session), a Unix domain socket and
TCP on 127.0.0.1 (one session per connection), served by threads that take decisions one at a
time.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from bbopt.core import ClusterState, decide_planned
from bbopt.errors import BboptError, InputError
from bbopt.gc_pause import gc_paused
from bbopt.interop.delta import Queue, apply_delta
from bbopt.policies.registry import Policy, make_policy, policy_options
from bbopt.schema import _parse, decision_to_dict, job_from_dict, state_from_dict
from bbopt.validation import validate_state

#: Policies decided once at start unless told otherwise: the EASY family, conservative
#: backfilling, the BB-aware multi-objective window and the plan policy (OR-Tools, numba).
WARM_POLICIES = ("fcfs-bb", "sjf-bb", "conservative-bb", "bbsched", "plan-2")
#: The keys a request may have; anything else is a typo and refused.
REQUEST_KEYS = frozenset({"id", "policy", "options", "state", "delta", "budget", "session"})
#: A line longer than this is refused (a state of 100,000 waiting jobs is about 25 MB).
MAX_LINE = 256 * 2**20
#: Socket buffer asked for each connection: a large state crosses in a few pieces.
SOCKET_BUFFER = 8 * 2**20


@dataclass
class Session:
    """What one client's requests share: each policy's memory and built policy objects."""

    name: str
    memory: dict[str, Any] = field(default_factory=dict)
    policies: dict[tuple[str, str], Policy] = field(default_factory=dict)
    #: The waiting jobs of the last request, by id, with the JSON object each was read from.
    jobs: Queue = field(default_factory=dict)
    #: The cluster as the last request left it (its memory aside): what a delta applies to.
    state: ClusterState | None = None


class DecisionService:
    """Decisions for JSON requests, one at a time, with per-session policy memory.

    >>> service = DecisionService(warm=())
    >>> reply = service.handle({"policy": "fcfs-bb", "state": {
    ...     "time": 0, "platform": {"nodes": 4},
    ...     "queue": [{"id": "a", "walltime": 60, "nodes": 2},
    ...               {"id": "w", "walltime": 60, "nodes": 8}]}})
    >>> reply["ok"], reply["decision"]["start"], reply["decision"]["reservations"]
    (True, [{'job_id': 'a', 'nodes': None}], [{'job_id': 'w', 'start': None, 'never_fits': True}])
    >>> reply["budget"]["cold"], service.handle({"policy": "fcfs", "state": {}})["error"]["path"]
    (True, '$.state.platform')
    """

    def __init__(self, warm: Iterable[str] = WARM_POLICIES) -> None:
        self.lock = threading.Lock()  # one decision at a time (policies keep caches)
        self.sessions: dict[str, Session] = {}
        self.decided: set[str] = set()  # policies that have decided once in this process
        self.warm_times = self.warm(warm)
        self.stopping = threading.Event()
        self.reading = False  # (stdio) waiting for the next request line

    def warm(self, policies: Iterable[str]) -> dict[str, float]:
        """Decide a small generated state twice with each policy (its imports, compiled kernels
        and solvers loaded); returns the seconds each took."""
        times = {}
        state = warm_state()
        for name in policies:
            t0 = time.perf_counter()
            policy = make_policy(name)
            memory = policy.decide(state).memory
            policy.decide(replace(state, memory=memory or {}))
            self.decided.add(name)
            times[name] = time.perf_counter() - t0
        return times

    def session(self, name: str) -> Session:
        s = self.sessions.get(name)
        if s is None:
            s = self.sessions[name] = Session(name)
        return s

    def handle_line(self, line: bytes | str, default_session: str,
                    keep: list | None = None) -> str:
        """The reply line (without the newline) to one request line.

        Off the reply's path (the transport calls
        :func:`bbopt.interop.transport.after_reply` once the reply is sent):
        the automatic garbage collection (:mod:`bbopt.gc_pause`: a state's jobs form no
        cycles; a pass in the middle of a decision cost 15 ms against 0.5 ms for sjf-bb at
        5,000 waiting jobs), and freeing the request and its state (given ``keep``, they are
        put there; freeing 5,000 jobs and their JSON took 10 ms)."""
        with gc_paused():
            t0, c0 = time.perf_counter(), time.thread_time()
            try:
                request = _parse(line, "request")
            except InputError as exc:
                return dumps_reply(error_reply(None, exc))
            if keep is not None:
                keep.append(request)
            return dumps_reply(self.handle(request, default_session, t0, keep, c0))

    def handle(self, request: Any, default_session: str = "default",
               t0: float | None = None, keep: list | None = None,
               c0: float | None = None) -> dict[str, Any]:
        """The reply to one parsed request; never raises for a bad request. The service keeps
        the request's objects (its session compares the next queue with them): do not change
        them afterwards."""
        t0 = time.perf_counter() if t0 is None else t0
        c0 = time.thread_time() if c0 is None else c0
        rid = request.get("id") if isinstance(request, dict) else None
        try:
            with self.lock:
                return self._decide(request, default_session, t0, keep, c0)
        except BboptError as exc:
            return error_reply(rid, exc)
        except Exception as exc:  # a bug of a policy: said, and the service stays up
            return error_reply(rid, exc, internal=True)

    def _decide(self, request: Any, default_session: str, t0: float,
                keep: list | None, c0: float) -> dict[str, Any]:
        if not isinstance(request, dict):
            raise InputError(f"a request must be an object, got {type(request).__name__}",
                             line="$")
        unknown = sorted(set(request) - REQUEST_KEYS, key=str)
        if unknown:
            raise InputError(f"unknown key; known: {', '.join(sorted(REQUEST_KEYS))}",
                             line="$", field=str(unknown[0]))
        rid = request.get("id")
        name = request.get("policy")
        if not isinstance(name, str):
            raise InputError(f"must be a policy name, got {name!r}", line="$", field="policy")
        options = request.get("options", {})
        if not isinstance(options, dict):
            raise InputError("must be an object", line="$", field="options")
        budget = request.get("budget")
        if budget is not None and (isinstance(budget, bool) or not isinstance(budget, int | float)
                                   or not budget > 0 or not math.isfinite(budget)):
            raise InputError(f"must be a positive number of seconds, got {budget!r}", line="$",
                             field="budget")
        sname = request.get("session", default_session)
        if not isinstance(sname, str):
            raise InputError(f"must be a string, got {sname!r}", line="$", field="session")
        raw, delta = request.get("state"), request.get("delta")
        if (raw is None) == (delta is None):
            raise InputError("give either the whole 'state' or the 'delta' since this "
                             "session's last request", line="$", field="state")
        if raw is not None and not isinstance(raw, dict):
            raise InputError(f"must be an object, got {type(raw).__name__}", line="$",
                             field="state")
        session = self.session(sname)
        policy = self._policy(session, name, options, budget)
        if raw is not None:
            try:
                state = read_state(raw, session)
            except InputError as exc:
                raise _under_state(exc) from None
            session.state = replace(state, memory={})
        elif session.state is None:
            raise InputError("this session has no state yet to change: send the whole "
                             "'state' first", line="$", field="delta")
        else:
            state = session.state = apply_delta(session.state, session.jobs, delta)
        kept = raw is None or "memory" not in raw
        if kept:
            state = replace(state, memory=session.memory.get(name, {}))
        if keep is not None:
            keep.append(state)
        t1 = time.perf_counter()
        cold = name not in self.decided
        # (a job past its walltime still holds; a memory the session kept was planned for the
        # decisions the policy took, which the resource manager may not have carried out: the
        # policy checks it against this state and plans again what no longer holds)
        decision = decide_planned(policy, state)
        t2 = time.perf_counter()
        self.decided.add(name)
        if decision.memory is not None:
            session.memory[name] = decision.memory
        overrun = budget is not None and t2 - t1 > budget
        return {"id": rid, "ok": True, "decision": decision_to_dict(decision),
                "budget": {"seconds": budget, "held": not (cold or overrun), "cold": cold,
                           "overrun": overrun},
                "timing": {"parse": t1 - t0, "decide": t2 - t1,
                           "cpu": time.thread_time() - c0}}

    def _policy(self, session: Session, name: str, options: dict[str, Any],
                budget: float | None) -> Policy:
        key = (name, json.dumps(options, sort_keys=True, default=str) + f"|{budget!r}")
        policy = session.policies.get(key)
        if policy is None:
            options = dict(options)
            try:
                if budget is not None and "budget" in policy_options(name):
                    if "budget" in options:
                        raise InputError("give the budget once: as the request's budget or as "
                                         "an option", line="$.options", field="budget")
                    options["budget"] = float(budget)
                policy = make_policy(name, **options)
            except InputError as exc:
                raise exc.at(line="$.options") from None
            except KeyError as exc:  # an unknown policy name (UnknownNameError)
                raise InputError(str(exc), line="$", field="policy") from None
            session.policies[key] = policy
        return policy


def read_state(raw: dict[str, Any], session: Session) -> ClusterState:
    """The state of a request, as :func:`bbopt.schema.state_from_dict` reads it, with the
    same checks and errors; a waiting job whose JSON object is equal to the one the session's
    last request had is not read again (a resource manager resends mostly the same queue:
    reading a job costs 26 µs, comparing it 0.3 µs; 5,000 waiting jobs, 131 ms against 2 ms)."""
    queue = raw.get("queue", [])
    if not isinstance(queue, list):
        return state_from_dict(raw, "request")  # (which says what is wrong)
    base = state_from_dict({**raw, "queue": []}, "request", check=False)  # (checked below)
    known, fresh, jobs = session.jobs, {}, []
    for k, item in enumerate(queue):
        hit = known.get(str(item.get("id"))) if isinstance(item, dict) else None
        job = hit[1] if hit is not None and hit[0] == item else \
            job_from_dict(item, f"$.queue[{k}]", "request")
        jobs.append(job)
        fresh[job.id] = (item, job)
    state = replace(base, queue=tuple(jobs))
    validate_state(state, "request")
    session.jobs = fresh
    return state


def warm_state():
    """A small deterministic state (64 waiting and 8 running jobs on 96 nodes with a BB pool)
    on which every warmed policy loads what it needs."""
    from bbopt.core import GB, ClusterState, Job, Platform, RunningJob

    platform = Platform(nodes=96, bb=480 * GB, name="warm-up")
    running = tuple(RunningJob(Job(f"r{k}", 0.0, walltime=600.0 * (k + 1), nodes=4 + k,
                                   bb=10 * GB * k), start=0.0) for k in range(8))
    queue = tuple(Job(f"q{k}", float(k), walltime=300.0 + 97.0 * (k % 13),
                      nodes=1 + (7 * k) % 23, bb=GB * ((11 * k) % 40)) for k in range(64))
    return ClusterState(time=100.0, platform=platform, running=running, queue=queue)


def _under_state(exc: InputError) -> InputError:
    """A state error located in the request: ``$.queue[3]`` becomes ``$.state.queue[3]``."""
    line = exc.line if isinstance(exc.line, str) and exc.line.startswith("$") else "$"
    return InputError(exc.reason, line="$.state" + line[1:], field=exc.field)


def error_reply(rid: Any, exc: BaseException, internal: bool = False) -> dict[str, Any]:
    if isinstance(exc, InputError):
        path = exc.line if isinstance(exc.line, str) else None
        return {"id": rid, "ok": False, "error": {"message": str(exc), "path": path,
                                                   "field": exc.field}}
    message = f"internal error ({type(exc).__name__}): {exc}" if internal else str(exc)
    return {"id": rid, "ok": False, "error": {"message": message, "path": None, "field": None}}


def dumps_reply(reply: dict[str, Any]) -> str:
    if not _plain_id(reply.get("id")):
        reply["id"] = None
    return json.dumps(reply, allow_nan=False, separators=(",", ":"))


def _plain_id(rid: Any) -> bool:
    return rid is None or isinstance(rid, str | int | bool) or (
        isinstance(rid, float) and math.isfinite(rid))

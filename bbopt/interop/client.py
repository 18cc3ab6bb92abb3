"""A small client of ``bbopt serve`` (:mod:`bbopt.interop.serve`): one connection, one session.

>>> # with `bbopt serve --socket /tmp/bbopt.sock` running:
>>> # with ServiceClient.unix("/tmp/bbopt.sock") as client:
>>> #     reply = client.decide(state, "sjf-bb", budget=0.5)
>>> #     reply.decision.start, reply.budget_held

``decide`` sends a :class:`~bbopt.core.ClusterState` (or its JSON form) and returns a
:class:`Reply` with the parsed :class:`~bbopt.core.Decision`; the service keeps the policy's
memory for the connection, so the state's memory is not sent, and the state itself, so
``decide_changes`` sends only what changed since (jobs submitted, started, ended; the
clock). A request the service refuses raises :class:`ServiceError` with the JSON path and
field it names. Every wait is bounded by ``timeout`` seconds.
"""

from __future__ import annotations

import contextlib
import json
import socket
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from bbopt.core import ClusterState, Decision, Job, RunningJob
from bbopt.errors import BboptError
from bbopt.schema import decision_from_dict, job_to_dict, state_to_dict


class ServiceError(BboptError):
    """The service refused a request: ``path`` and ``field`` say where."""

    def __init__(self, message: str, path: str | None = None, field: str | None = None):
        super().__init__(message)
        self.path = path
        self.field = field


@dataclass(frozen=True)
class Reply:
    """A decision from the service and whether its budget held (see :mod:`bbopt.interop.serve`)."""

    decision: Decision
    budget_held: bool
    cold: bool
    overrun: bool
    parse_time: float
    decide_time: float
    raw: dict[str, Any]


class ServiceClient:
    """A connection to ``bbopt serve``; use :meth:`unix` or :meth:`tcp` to open one."""

    def __init__(self, sock: socket.socket, timeout: float = 60.0) -> None:
        sock.settimeout(timeout)
        with contextlib.suppress(OSError):  # (a large state crosses in a few pieces)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 * 2**20)
        self.sock = sock
        self.file = sock.makefile("rwb")
        self.next_id = 0

    @classmethod
    def unix(cls, path: str, timeout: float = 60.0) -> ServiceClient:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        sock.connect(path)
        return cls(sock, timeout)

    @classmethod
    def tcp(cls, port: int, timeout: float = 60.0) -> ServiceClient:
        return cls(socket.create_connection(("127.0.0.1", port), timeout=timeout), timeout)

    def request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send one request object, return the reply object (strict JSON)."""
        self.next_id += 1
        request = {"id": self.next_id, **request}
        self.file.write(json.dumps(request, allow_nan=False).encode() + b"\n")
        self.file.flush()
        line = self.file.readline()
        if not line:
            raise ServiceError("the service closed the connection")
        reply = json.loads(line, parse_constant=_refuse)
        if reply.get("id") != request["id"]:
            raise ServiceError(f"reply to request {reply.get('id')!r}, expected "
                               f"{request['id']!r}")
        return reply

    def decide(self, state: ClusterState | dict[str, Any], policy: str = "fcfs-bb", *,
               options: dict[str, Any] | None = None, budget: float | None = None,
               send_memory: bool = False) -> Reply:
        """One decision. The state's memory is left to the service's session unless
        ``send_memory``."""
        d = state_to_dict(state) if isinstance(state, ClusterState) else dict(state)
        if not send_memory:
            d.pop("memory", None)
        return self._decide({"policy": policy, "state": d}, options, budget)

    def decide_changes(self, policy: str = "fcfs-bb", *, time: float | None = None,
                       submitted: Iterable[Job | dict[str, Any]] = (),
                       started: Iterable[RunningJob | dict[str, Any]] = (),
                       ended: Iterable[str] = (), options: dict[str, Any] | None = None,
                       budget: float | None = None) -> Reply:
        """One decision on the session's state changed by what happened since the last
        request (:mod:`bbopt.interop.delta`): jobs ``submitted``, ``started`` (a
        :class:`~bbopt.core.RunningJob` or ``{"id", "start", "allocation"}``) and ``ended``
        (ids), and the clock ``time``. The session must have had a whole state first."""
        delta: dict[str, Any] = {}
        if time is not None:
            delta["time"] = time
        if subs := [job_to_dict(j) if isinstance(j, Job) else j for j in submitted]:
            delta["submitted"] = subs
        if runs := [_started(r) for r in started]:
            delta["started"] = runs
        if ends := list(ended):
            delta["ended"] = ends
        return self._decide({"policy": policy, "delta": delta}, options, budget)

    def _decide(self, request: dict[str, Any], options: dict[str, Any] | None,
                budget: float | None) -> Reply:
        if options:
            request["options"] = options
        if budget is not None:
            request["budget"] = budget
        reply = self.request(request)
        if not reply.get("ok"):
            err = reply.get("error") or {}
            raise ServiceError(err.get("message", "refused"), err.get("path"), err.get("field"))
        b, timing = reply["budget"], reply["timing"]
        return Reply(decision_from_dict(reply["decision"], "reply"), b["held"], b["cold"],
                     b["overrun"], timing["parse"], timing["decide"], reply)

    def close(self) -> None:
        self.file.close()
        self.sock.close()

    def __enter__(self) -> ServiceClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _started(r: RunningJob | dict[str, Any]) -> dict[str, Any]:
    if not isinstance(r, RunningJob):
        return r
    d: dict[str, Any] = {"id": r.job.id, "start": r.start}
    if r.allocation is not None:
        d["allocation"] = list(r.allocation)
    return d


def _refuse(name: str) -> Any:
    raise ServiceError(f"{name} is not a JSON number")



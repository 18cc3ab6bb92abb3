"""The messages of Batsim's scheduler protocol (Batsim 4.x, JSON over a ZeroMQ REQ/REP pair) and
the checks both sides make on what they receive.

A message is ``{"now": t, "events": [{"timestamp": t_i, "type": T, "data": {...}}, ...]}`` with
every ``t_i <= t`` and the ``t_i`` in non-decreasing order; Batsim speaks first (REQ), the
scheduler answers each message with one message (REP). Resources are numbered: compute resources
``0 .. n-1`` then storage resources; a set of resources is written as an interval set,
``"0-3 7 9-10"`` (the notation of ``allocated_resources`` in jobs.csv,
:func:`bbopt.simulation.result.procset`). Burst buffers are storage resources whose SimGrid
properties carry their size in bytes (``"bb_capacity"``, or ``"size"``).

A message that breaks the protocol raises :class:`ProtocolError`; the side that detects it
tells the other (a ``NOTIFY`` of type ``protocol_error`` from the scheduler, a
``SIMULATION_ENDS`` from the simulator) so that both exit, and every wait is bounded
(:class:`Link`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from bbopt.errors import BboptError
from bbopt.simulation.result import procset

#: Events Batsim sends to the scheduler, and the scheduler's events to Batsim.
FROM_BATSIM = frozenset({"SIMULATION_BEGINS", "SIMULATION_ENDS", "JOB_SUBMITTED",
                         "JOB_COMPLETED", "JOB_KILLED", "REQUESTED_CALL", "NOTIFY",
                         "RESOURCE_STATE_CHANGED", "ANSWER", "QUERY"})
FROM_SCHEDULER = frozenset({"EXECUTE_JOB", "REJECT_JOB", "CALL_ME_LATER", "NOTIFY", "KILL_JOB",
                            "SET_JOB_METADATA", "SET_RESOURCE_STATE", "REGISTER_JOB",
                            "REGISTER_PROFILE", "CHANGE_JOB_STATE", "QUERY", "ANSWER",
                            "TO_JOB_MSG"})
#: The NOTIFY type by which bbopt's scheduler says it refused Batsim's last message.
PROTOCOL_ERROR = "protocol_error"
#: The storage resource property holding a burst buffer's size in bytes.
BB_PROPERTY = "bb_capacity"


class ProtocolError(BboptError):
    """A message that breaks Batsim's protocol (or asks what bbopt's side cannot do)."""


def intervals(nodes: tuple[int, ...] | list[int]) -> str:
    """The interval set of resource ids: ``(0, 1, 2, 5)`` -> ``"0-2 5"``."""
    return procset(tuple(nodes))


def parse_intervals(text: Any, where: str) -> tuple[int, ...]:
    """The sorted resource ids of an interval set ``"0-2 5"``; a bad one raises naming
    ``where``.

    >>> parse_intervals("3 0-1 7-8", "alloc")
    (0, 1, 3, 7, 8)
    """
    if not isinstance(text, str) or not text.strip():
        raise ProtocolError(f"{where}: an interval set must be a non-empty string like "
                            f"'0-3 7', got {text!r}")
    out: set[int] = set()
    for part in text.split():
        lo, sep, hi = part.partition("-")
        try:
            a = int(lo)
            b = int(hi) if sep else a
        except ValueError:
            raise ProtocolError(f"{where}: {part!r} is not an interval of resource ids") \
                from None
        if a < 0 or b < a:
            raise ProtocolError(f"{where}: {part!r} is not an interval of resource ids")
        if out.intersection(range(a, b + 1)):
            raise ProtocolError(f"{where}: {part!r} overlaps another interval")
        out.update(range(a, b + 1))
    return tuple(sorted(out))


def encode(message: dict[str, Any]) -> bytes:
    """A message as bytes on the wire (strict JSON: no NaN, no Infinity)."""
    return json.dumps(message, allow_nan=False, separators=(",", ":")).encode()


def decode(raw: bytes, sender: str, allowed: frozenset[str],
           not_before: float | None = None) -> dict[str, Any]:
    """Parse and check one message from ``sender``: ``now`` a finite number (not before
    ``not_before``), ``events`` a list of ``{timestamp, type, data}`` of ``allowed`` types with
    timestamps in order and none after ``now``."""
    def refuse(name: str) -> Any:
        raise ProtocolError(f"message from {sender}: {name} is not a JSON number")

    try:
        msg = json.loads(raw, parse_constant=refuse)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"message from {sender} is not JSON: {exc}") from None
    if not isinstance(msg, dict):
        raise ProtocolError(f"message from {sender} must be an object with 'now' and 'events'")
    now = msg.get("now")
    if not _number(now):
        raise ProtocolError(f"message from {sender}, field 'now': must be a number, got {now!r}")
    if not_before is not None and now < not_before:
        raise ProtocolError(f"message from {sender}, field 'now': {now} is before {not_before}"
                            " (time cannot go back)")
    events = msg.get("events")
    if not isinstance(events, list):
        raise ProtocolError(f"message from {sender}, field 'events': must be a list")
    last = -math.inf
    for i, ev in enumerate(events):
        where = f"message from {sender}, events[{i}]"
        if not isinstance(ev, dict):
            raise ProtocolError(f"{where}: must be an object")
        ts, kind = ev.get("timestamp"), ev.get("type")
        if not _number(ts):
            raise ProtocolError(f"{where}, field 'timestamp': must be a number, got {ts!r}")
        if ts < last:
            raise ProtocolError(f"{where}, field 'timestamp': {ts} is before the previous "
                                f"event's {last} (events must be in time order)")
        if ts > now + 1e-9 * max(1.0, abs(now)):
            raise ProtocolError(f"{where}, field 'timestamp': {ts} is after the message's now "
                                f"{now}")
        last = ts
        if kind not in allowed:
            raise ProtocolError(f"{where}, field 'type': unknown event type {kind!r} (known: "
                                f"{', '.join(sorted(allowed))})")
        data = ev.get("data", {})
        if data is None:
            ev["data"] = data = {}
        if not isinstance(data, dict):
            raise ProtocolError(f"{where}, field 'data': must be an object")
    return msg


def event(timestamp: float, kind: str, **data: Any) -> dict[str, Any]:
    return {"timestamp": timestamp, "type": kind, "data": data}


def field(data: dict[str, Any], key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    """``data[key]`` of type ``kind``, or a :class:`ProtocolError` naming ``where`` and ``key``."""
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ProtocolError(f"{where}, field {key!r}: missing or of the wrong type "
                            f"({value!r})")
    return value


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


class Link:
    """One side's ZeroMQ socket with every receive bounded by ``timeout`` seconds.

    ``kind`` is ``"rep"`` (the scheduler: binds ``endpoint`` and answers) or ``"req"`` (the
    simulator: connects and asks).
    """

    def __init__(self, endpoint: str, kind: str, timeout: float) -> None:
        import zmq

        self.zmq = zmq
        self.context = zmq.Context()
        self.socket = self.context.socket(zmq.REP if kind == "rep" else zmq.REQ)
        self.socket.setsockopt(zmq.LINGER, 0)
        self.socket.setsockopt(zmq.RCVTIMEO, max(1, int(timeout * 1000)))
        self.socket.setsockopt(zmq.SNDTIMEO, max(1, int(timeout * 1000)))
        self.timeout = timeout
        self.endpoint = endpoint
        try:
            if kind == "rep":
                self.socket.bind(endpoint)
            else:
                self.socket.connect(endpoint)
        except zmq.ZMQError as exc:
            self.close()
            raise ProtocolError(f"cannot {'bind' if kind == 'rep' else 'connect'} "
                                f"{endpoint}: {exc}") from None

    def send(self, message: dict[str, Any]) -> None:
        try:
            self.socket.send(encode(message))
        except self.zmq.ZMQError as exc:
            raise ProtocolError(f"cannot send on {self.endpoint}: {exc}") from None

    def receive(self, peer: str) -> bytes:
        try:
            return self.socket.recv()
        except self.zmq.Again:
            raise ProtocolError(f"no message from {peer} on {self.endpoint} within "
                                f"{self.timeout:g} s") from None
        except self.zmq.ZMQError as exc:
            raise ProtocolError(f"cannot receive on {self.endpoint}: {exc}") from None

    def close(self) -> None:
        self.socket.close(linger=0)
        self.context.term()

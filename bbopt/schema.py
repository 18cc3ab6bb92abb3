"""JSON form of :class:`~bbopt.core.ClusterState` and :class:`~bbopt.core.Decision`.

This is how a tool that is not written in Python (a resource-manager plugin, a digital twin)
calls ``bbopt decide``: it writes a state, reads back a decision. Units are SI throughout
(seconds, bytes, bytes/s). The schema, version 1 (fields with defaults may be omitted)::

    state = {
      "version": 1,
      "time": 1200.0,                              # now, seconds
      "platform": {"nodes": 96, "bb": 4.8e11, "name": "kopanski-kth",
                   "node_ssd": null,               # bytes per node, or null
                   "topology": null},              # the I/O tree as Flux JGF, or null
      "running": [{"job": JOB, "start": 600.0, "allocation": [0, 1]}],
      "queue": [JOB, ...],                         # in arrival order
      "memory": {}                                 # what the policy returned last time
    }
    JOB = {"id": "17", "submit": 0.0, "walltime": 3600.0, "nodes": 4, "bb": 2e10,
           "runtime": null, "ssd": 0, "bandwidth": 0, "user": null, "priority": 0,
           "preemptable": false, "checkpointable": false, "extra": {}}

    decision = {
      "version": 1,
      "start": [{"job_id": "17", "nodes": null}],  # + "bb_pieces": [[0, 5e9], ...] if named
      "reservations": [{"job_id": "18", "start": 4200.0, "never_fits": false},
                       {"job_id": "19", "start": null, "never_fits": true}],
      "preempt": [],
      "alternatives": [...],                       # e.g. a Pareto set, policy-specific
      "stats": {"backend": "greedy", "status": "OPTIMAL", "objective": null, "bound": null,
                "gap": null, "wall_time": 1.2e-05, "budget": null, "audited": false},
      "memory": {...} or null
    }

JSON has no Infinity or NaN, and bbopt never writes them: a job that can never start on the
platform (wider than the machine, more BB than exists) has a reservation with
``"never_fits": true`` and ``"start": null``; a measure without a finite value (an objective,
a bound, a gap) is ``null``; an infinite number inside the policy's ``memory`` (opaque to the
caller, who only sends it back) is written ``{"$float": "Infinity"}`` and read back as one.

Errors name the JSON path and field of the first problem, e.g.
``<json>, $.queue[3], field 'walltime': must be a number``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from bbopt.core import (
    ClusterState,
    Decision,
    Job,
    Platform,
    Reservation,
    RunningJob,
    SolveStats,
    Start,
    Status,
)
from bbopt.errors import InputError, UniqueKeys, check_keys
from bbopt.limits import magnitude
from bbopt.validation import validate_state

VERSION = 1

#: The keys each object of a state may have; anything else is a typo and refused.
STATE_KEYS = frozenset({"version", "time", "platform", "running", "queue", "memory"})
PLATFORM_KEYS = frozenset({"nodes", "bb", "name", "node_ssd", "topology"})
RUNNING_KEYS = frozenset({"job", "start", "allocation"})
JOB_KEYS = frozenset({"id", "submit", "walltime", "runtime", "nodes", "bb", "ssd", "bandwidth",
                      "user", "priority", "preemptable", "checkpointable", "extra"})


def job_to_dict(job: Job) -> dict[str, Any]:
    return {
        "id": job.id, "submit": job.submit, "walltime": job.walltime, "runtime": job.runtime,
        "nodes": job.nodes, "bb": job.bb, "ssd": job.ssd, "bandwidth": job.bandwidth,
        "user": job.user, "priority": job.priority, "preemptable": job.preemptable,
        "checkpointable": job.checkpointable, "extra": dict(job.extra),
    }


def state_to_dict(state: ClusterState) -> dict[str, Any]:
    p = state.platform
    return {
        "version": VERSION,
        "time": state.time,
        "platform": {"nodes": p.nodes, "bb": p.bb, "name": p.name,
                     "node_ssd": list(p.node_ssd) if p.node_ssd is not None else None,
                     "topology": _topology_to_jgf(p.topology)},
        "running": [{"job": job_to_dict(r.job), "start": r.start,
                     "allocation": list(r.allocation) if r.allocation is not None else None}
                    for r in state.running],
        "queue": [job_to_dict(j) for j in state.queue],
        "memory": _memory_to_json(dict(state.memory)),
    }


def decision_to_dict(decision: Decision) -> dict[str, Any]:
    s = decision.stats
    return {
        "version": VERSION,
        "start": [_start_to_dict(x) for x in decision.start],
        "reservations": [_reservation_to_dict(r) for r in decision.reservations],
        "preempt": list(decision.preempt),
        "alternatives": [_jsonable(a) for a in decision.alternatives],
        "stats": {"backend": s.backend, "status": s.status.value,
                  "objective": _jsonable(s.objective),
                  "bound": _jsonable(s.bound), "gap": _jsonable(s.gap),
                  "wall_time": s.wall_time, "budget": _jsonable(s.budget),
                  "audited": s.audited},
        "memory": _memory_to_json(decision.memory) if decision.memory is not None else None,
    }


def _start_to_dict(x: Start) -> dict[str, Any]:
    """A start; its BB pieces (``[[BB node, bytes], ...]``) only when it names them."""
    out: dict[str, Any] = {"job_id": x.job_id,
                           "nodes": list(x.nodes) if x.nodes is not None else None}
    if x.bb_pieces is not None:
        out["bb_pieces"] = [[b, size] for b, size in x.bb_pieces]
    return out


def _reservation_to_dict(r: Reservation) -> dict[str, Any]:
    """A planned start; a job that never fits the platform says so instead of an infinite
    start (which JSON cannot carry)."""
    if math.isfinite(r.start):
        return {"job_id": r.job_id, "start": r.start, "never_fits": False}
    return {"job_id": r.job_id, "start": None, "never_fits": True}


def dumps(obj: ClusterState | Decision, indent: int | None = 2) -> str:
    """JSON text of a state or a decision."""
    d = state_to_dict(obj) if isinstance(obj, ClusterState) else decision_to_dict(obj)
    return json.dumps(d, indent=indent, sort_keys=False, allow_nan=False)


def _jsonable(x: Any, nonfinite: Any = None) -> Any:
    """Plain JSON values of ``x`` (numpy scalars and arrays as numbers and lists); a number
    that is not finite becomes ``nonfinite(x)`` when given, else ``null``."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v, nonfinite) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v, nonfinite) for v in x]
    if hasattr(x, "tolist") and callable(x.tolist):  # numpy scalar or array
        x = x.tolist()
        if isinstance(x, list):
            return _jsonable(x, nonfinite)
    if isinstance(x, float) and not math.isfinite(x):
        return nonfinite(x) if nonfinite is not None else None
    return x


#: The key of the object that stands for a non-finite number inside a policy's memory.
FLOAT_KEY = "$float"


def _memory_to_json(memory: Any) -> Any:
    """The policy's memory as JSON: infinities as ``{"$float": "Infinity"}`` (read back by
    :func:`_memory_from_json`), so that e.g. a reservation "never" survives the round trip."""
    return _jsonable(memory, lambda x: {FLOAT_KEY: "NaN" if x != x else
                                        ("Infinity" if x > 0 else "-Infinity")})


def _memory_from_json(memory: Any) -> Any:
    if isinstance(memory, dict):
        if len(memory) == 1 and FLOAT_KEY in memory:
            return float(memory[FLOAT_KEY].replace("Infinity", "inf"))
        return {k: _memory_from_json(v) for k, v in memory.items()}
    if isinstance(memory, list):
        return [_memory_from_json(v) for v in memory]
    return memory


class _Reader:
    """Field access with JSON-path error messages."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, field: str | None, message: str) -> InputError:
        return InputError(message, source=self.source, line=path, field=field)

    def obj(self, value: Any, path: str, keys: frozenset[str] | None = None) -> dict:
        if not isinstance(value, dict):
            raise self.fail(path, None, f"must be an object, got {type(value).__name__}")
        if keys is not None:
            check_keys(value, keys, source=self.source, line=path)
        return value

    def integers(self, d: dict, key: str, path: str) -> tuple[int, ...] | None:
        value = d.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.fail(path, key, f"must be a list of integers, got {value!r}")
        out = []
        for i, x in enumerate(value):
            if isinstance(x, float) and x.is_integer():
                x = int(x)
            if isinstance(x, bool) or not isinstance(x, int):
                raise self.fail(path, f"{key}[{i}]", f"must be an integer, got {x!r}")
            out.append(x)
        return tuple(out)

    def numbers(self, d: dict, key: str, path: str) -> tuple[float, ...] | None:
        value = d.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.fail(path, key, f"must be a list of numbers, got {value!r}")
        for i, x in enumerate(value):
            if not _finite(x):
                raise self.fail(path, f"{key}[{i}]",
                                f"must be a finite number, got {magnitude(x)}")
        return tuple(float(x) for x in value)

    def pieces(self, d: dict, key: str, path: str) -> tuple[tuple[int, float], ...] | None:
        """``[[BB node, bytes], ...]`` (a start's pieces on named BB nodes), or ``None``."""
        value = d.get(key)
        if value is None:
            return None
        if not isinstance(value, list):
            raise self.fail(path, key, f"must be a list of [BB node, bytes] pairs, got {value!r}")
        out = []
        for i, pair in enumerate(value):
            if not isinstance(pair, list) or len(pair) != 2:
                raise self.fail(path, f"{key}[{i}]",
                                f"must be a [BB node, bytes] pair, got {pair!r}")
            b, size = pair
            if isinstance(b, float) and b.is_integer():
                b = int(b)
            if isinstance(b, bool) or not isinstance(b, int) or b < 0:
                raise self.fail(path, f"{key}[{i}]", f"must name a BB node index, got {b!r}")
            if not _finite(size) or size <= 0:
                raise self.fail(path, f"{key}[{i}]",
                                f"must give a positive number of bytes, got {magnitude(size)}")
            out.append((b, float(size)))
        return tuple(out)

    def list(self, d: dict, key: str, path: str, default: Any = ()) -> list:
        value = d.get(key, default)
        if not isinstance(value, list | tuple):
            raise self.fail(path, key, f"must be a list, got {type(value).__name__}")
        return list(value)

    def number(self, d: dict, key: str, path: str, default: Any = ...,
               nullable: bool = False) -> float | None:
        if key not in d or (d[key] is None and nullable):
            if key in d or default is not ...:
                return None if key in d else default
            raise self.fail(path, key, "is missing")
        value = d[key]
        if not _finite(value):
            raise self.fail(path, key, f"must be a finite number, got {magnitude(value)}")
        return float(value)

    def integer(self, d: dict, key: str, path: str, default: Any = ...) -> int:
        value = d.get(key, default)
        if value is ...:
            raise self.fail(path, key, "is missing")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(path, key, f"must be an integer, got {value!r}")
        return value

    def job(self, value: Any, path: str) -> Job:
        d = self.obj(value, path, JOB_KEYS)
        if "id" not in d:
            raise self.fail(path, "id", "is missing")
        if not isinstance(d["id"], str | int) or isinstance(d["id"], bool):
            raise self.fail(path, "id", f"must be a string or an integer, got {d['id']!r}")
        for flag in ("preemptable", "checkpointable"):
            if not isinstance(d.get(flag, False), bool):
                raise self.fail(path, flag, f"must be true or false, got {d[flag]!r}")
        try:
            return Job(
                id=str(d["id"]),
                submit=self.number(d, "submit", path, 0.0),
                walltime=self.number(d, "walltime", path),
                runtime=self.number(d, "runtime", path, None, nullable=True),
                nodes=self.integer(d, "nodes", path, 1),
                bb=self.number(d, "bb", path, 0.0),
                ssd=self.number(d, "ssd", path, 0.0),
                bandwidth=self.number(d, "bandwidth", path, 0.0),
                user=None if d.get("user") is None else str(d["user"]),
                priority=self.number(d, "priority", path, 0.0),
                preemptable=bool(d.get("preemptable", False)),
                checkpointable=bool(d.get("checkpointable", False)),
                extra=self.obj(d.get("extra", {}), f"{path}.extra"),
            )
        except InputError as exc:
            if exc.source is not None:
                raise
            raise exc.at(source=self.source, line=path) from None


def _finite(x: Any) -> bool:
    """A JSON number that is a finite float (an integer of 400 digits is not: it overflows)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return False
    return math.isfinite(x) if isinstance(x, float) else abs(x) < 1e308


def job_from_dict(d: Any, path: str = "$", source: str = "<json>") -> Job:
    """Parse one job object; errors name ``source``, the JSON ``path`` and the field."""
    return _Reader(source).job(d, path)


def state_from_dict(d: Any, source: str = "<json>", *, check: bool = True) -> ClusterState:
    """Parse a state; errors name the JSON path of the problem. ``check``: also refuse an
    impossible state (:func:`~bbopt.validation.validate_state`); a caller that hands the state
    to :func:`bbopt.decide`, which checks it, passes ``False`` so that it is checked once."""
    r = _Reader(source)
    d = r.obj(d, "$", STATE_KEYS)
    version = d.get("version", VERSION)
    if version != VERSION:
        raise r.fail("$", "version", f"unsupported version {version!r}; this bbopt reads "
                     f"{VERSION}")
    pd = r.obj(d.get("platform"), "$.platform", PLATFORM_KEYS)
    try:
        platform = Platform(
            nodes=r.integer(pd, "nodes", "$.platform"),
            bb=r.number(pd, "bb", "$.platform", 0.0),
            name=str(pd.get("name", "cluster")),
            node_ssd=r.numbers(pd, "node_ssd", "$.platform"),
            topology=_topology_from_jgf(pd.get("topology"), source),
        )
    except InputError as exc:
        if exc.source is not None:
            raise
        raise exc.at(source=source, line="$.platform") from None
    running = []
    for k, item in enumerate(r.list(d, "running", "$")):
        path = f"$.running[{k}]"
        item = r.obj(item, path, RUNNING_KEYS)
        running.append(RunningJob(r.job(item.get("job"), f"{path}.job"),
                                  r.number(item, "start", path),
                                  r.integers(item, "allocation", path)))
    queue = [r.job(item, f"$.queue[{k}]") for k, item in enumerate(r.list(d, "queue", "$"))]
    state = ClusterState(
        time=r.number(d, "time", "$"),
        platform=platform,
        running=tuple(running),
        queue=tuple(queue),
        memory=_memory_from_json(r.obj(d.get("memory", {}), "$.memory")),
    )
    if check:
        validate_state(state, source)
    return state


def decision_from_dict(d: Any, source: str = "<json>") -> Decision:
    r = _Reader(source)
    d = r.obj(d, "$")
    start = []
    for k, item in enumerate(r.list(d, "start", "$")):
        item = r.obj(item, f"$.start[{k}]")
        nodes = item.get("nodes")
        start.append(Start(str(item["job_id"]),
                           tuple(int(x) for x in nodes) if nodes is not None else None,
                           r.pieces(item, "bb_pieces", f"$.start[{k}]")))
    res = []
    for k, x in enumerate(r.list(d, "reservations", "$")):
        path = f"$.reservations[{k}]"
        x = r.obj(x, path)
        never = x.get("never_fits", False)
        if not isinstance(never, bool):
            raise r.fail(path, "never_fits", f"must be true or false, got {never!r}")
        res.append(Reservation(str(x["job_id"]),
                               math.inf if never else r.number(x, "start", path)))
    sd = r.obj(d.get("stats", {}), "$.stats")
    try:
        status = Status(sd.get("status", "OPTIMAL"))
    except ValueError:
        raise r.fail("$.stats", "status", f"unknown status {sd.get('status')!r}") from None
    stats = SolveStats(
        backend=str(sd.get("backend", "greedy")), status=status,
        objective=_tuple_or_scalar(sd.get("objective")), bound=_tuple_or_scalar(sd.get("bound")),
        gap=sd.get("gap"), wall_time=float(sd.get("wall_time", 0.0)), budget=sd.get("budget"),
        audited=bool(sd.get("audited", False)),
    )
    return Decision(
        start=tuple(start), reservations=tuple(res),
        preempt=tuple(str(x) for x in r.list(d, "preempt", "$")),
        alternatives=tuple(r.list(d, "alternatives", "$")),
        stats=stats, memory=_memory_from_json(d.get("memory")),
    )


def _topology_to_jgf(topology: Any) -> dict | None:
    if topology is None:
        return None
    from bbopt.topology import to_jgf

    return to_jgf(topology)


def _topology_from_jgf(data: Any, source: str) -> Any:
    if data is None:
        return None
    from bbopt.topology import from_jgf

    return from_jgf(data, source=f"{source}: $.platform.topology")


def _tuple_or_scalar(x: Any) -> Any:
    return tuple(x) if isinstance(x, list) else x


def _parse(text: str | bytes, source: str) -> Any:
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")  # (a byte-order mark is no part of the document)
        except UnicodeDecodeError as exc:
            raise InputError(f"not UTF-8 text (byte {exc.start})", source=source) from None
    hook = UniqueKeys()
    try:
        data = json.loads(text.removeprefix("\ufeff"), parse_constant=_no_constant,
                          object_pairs_hook=hook)
    except json.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc.msg} (column {exc.colno})", source=source,
                         line=exc.lineno) from None
    except RecursionError:
        raise InputError("not valid JSON: nested too deeply", source=source) from None
    except InputError as exc:
        raise exc.at(source=source) from None
    except ValueError as exc:  # an integer of more than 4,300 digits
        raise InputError(f"not valid JSON: {exc}", source=source) from None
    hook.check(data, source)
    return data


def _no_constant(name: str) -> Any:
    """JSON has no NaN or Infinity; Python's reader would accept them silently."""
    raise InputError(f"{name} is not a JSON number")


def loads_state(text: str | bytes, source: str = "<json>", *, check: bool = True
                ) -> ClusterState:
    """Parse a state from JSON text; errors name ``source``, line or JSON path, and field.
    ``check`` as in :func:`state_from_dict`."""
    return state_from_dict(_parse(text, source), source, check=check)


def loads_decision(text: str, source: str = "<json>") -> Decision:
    """Parse a decision from JSON text."""
    return decision_from_dict(_parse(text, source), source)

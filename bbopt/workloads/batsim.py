"""Batsim JSON workloads: reader and writer.

Batsim (the simulator Kopanski & Rzadca extend, Euro-Par 2021, Section 4.1) reads a JSON
document with ``nb_res`` (machine size), ``jobs`` and ``profiles``::

    {"nb_res": 96,
     "jobs": [{"id": "12", "subtime": 0, "res": 4, "walltime": 3600, "profile": "p12",
               "extra_data": {...}}],
     "profiles": {"p12": {"type": "parallel_homogeneous", "cpu": 1.2e12, "com": 0, "bb": 4e9}}}

What bbopt takes from each job: ``id`` (kept as given, as a string: ``"12"`` or ``"w0!12"``),
``subtime`` -> :attr:`Job.submit`, ``res`` -> :attr:`Job.nodes`, ``walltime`` ->
:attr:`Job.walltime` (missing or ``-1``: the runtime, as for SWF), and from the profile the
runtime on nodes of ``speed`` flop/s (default 1 Gflop/s, Kopanski's convention):

==================================================  ===========================================
profile type (Batsim v4 name / v5 name)             runtime
==================================================  ===========================================
``delay`` / ``delay``                               ``delay`` seconds
``parallel_homogeneous`` / ``ptask_homogeneous``    ``cpu / speed`` (``cpu`` flops per node)
``parallel_homogeneous_total`` / ``ptask_homogeneous``  ``cpu / (res * speed)`` (total flops;
  with ``generation_strategy: defined_amount_spread_uniformly``)
``parallel`` / ``ptask``                            ``max(cpu) / speed`` (per-node vector)
``composed`` / ``sequential_composition``           ``repeat`` x the sum of the ``seq`` members
==================================================  ===========================================

Communication amounts (``com``) are not simulated (bbopt's rigid model has no network), and
profiles that describe I/O, messages or trace replays (``parallel_homogeneous_pfs``,
``data_staging``, ``ptask_on_storage_homogeneous``, ``ptask_data_staging_between_storages``,
``send``, ``recv``, ``smpi``, ``usage_trace``, ``trace_replay``, ...) are rejected with an error
that names the job and the type. A per-node burst-buffer size ``bb`` on a profile (Kopanski's
extension) becomes the job's total request ``bb x res``.

bbopt's own job fields that Batsim has no place for (user, local SSD, PFS bandwidth, priority,
preemption flags, ``Job.extra``, an exact total BB) are written into the job's ``extra_data``
under the key ``"bbopt"`` and read back from there, so that ``jobs -> JSON -> jobs`` preserves
every field. Other ``extra_data`` is kept in ``Job.extra["batsim"]["extra_data"]``.

**Kopanski's I/O-aware parts.** The authors' workloads come in two kinds with the same profile
layout: *allocation-only* ones, whose ``cpu`` is the trace's runtime x 1e9 (whole seconds), and
*I/O-aware* ones, whose ``cpu`` has the job's I/O time (staging, checkpoints) taken out, to be
replayed by a simulator that adds the I/O back (runtimes about 110 s shorter on average, down to
5 % of the trace's). Read as plain runtimes they would make every job shorter. bbopt recognises
them (profiles with a ``bb`` whose ``cpu`` amounts are mostly not whole seconds at ``speed``:
more than :data:`IO_AWARE_SHARE` of at least :data:`IO_AWARE_MIN` such profiles) and
``io_aware`` says what to do: ``"refuse"`` (default) raises an :class:`InputError` that names
the option; ``"phased"`` replays them with the phased I/O model: the ``cpu`` time becomes the
job's computation, split into Kopanski's phases with stage-in, checkpoints and stage-out of the
BB request (``Job.extra["phases"]``, :mod:`bbopt.workloads.generators.kopanski`), to be run with
``execution="phased-io"`` on a platform with an I/O tree (``kopanski-dragonfly``); ``"plain"``
reads them as runtimes anyway. The jobs of a recognised part carry
``Job.extra["batsim"]["io_aware"] = True``.

Every error names the file, the JSON path (``jobs[12].res``) and the field.

Length: the reader, the writer and the recognition of Kopanski's I/O-aware parts share the
profile-type tables and the per-profile checks; split apart they would import each other.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bbopt.core import Job
from bbopt.errors import InputError, UniqueKeys
from bbopt.limits import MAX_NODES, check_count, magnitude
from bbopt.workloads.archive import find_trace

#: Batsim v5 profile type names -> the v4 names bbopt works with.
V5_TO_V4 = {
    "ptask": "parallel",
    "ptask_homogeneous": "parallel_homogeneous",
    "sequential_composition": "composed",
    "ptask_on_storage_homogeneous": "parallel_homogeneous_pfs",
    "ptask_data_staging_between_storages": "data_staging",
    "replay_smpi": "smpi",
    "replay_usage": "usage_trace",
}
#: Profile types bbopt turns into a runtime.
SIMULATED_TYPES = ("delay", "parallel_homogeneous", "parallel_homogeneous_total", "parallel",
                   "composed")
#: Types Batsim knows that need an I/O, network or trace model bbopt does not have.
UNSUPPORTED_TYPES = ("parallel_homogeneous_pfs", "data_staging", "send", "recv", "smpi",
                     "usage_trace", "trace_replay")

#: Flop/s of one node, Kopanski & Rzadca's convention (runtime x 1e9 = cpu).
DEFAULT_SPEED = 1e9
#: An I/O-aware part: more than this share of its BB profiles have fractional compute seconds,
IO_AWARE_SHARE = 0.2
#: ... among at least this many BB profiles.
IO_AWARE_MIN = 10


@dataclass
class BatsimWorkload:
    """A parsed Batsim workload: the jobs and the document's top-level data."""

    jobs: list[Job]
    nb_res: int | None
    profiles: dict[str, dict[str, Any]] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)
    path: str = ""


def read_batsim(path: str | Path, *, speed: float = DEFAULT_SPEED,
                missing_walltime: str | float = "runtime",
                io_aware: str = "refuse", checkpoint_factor: float = 1.0) -> BatsimWorkload:
    """Read a Batsim JSON workload (v4 or v5 profile names).

    - ``speed``: flop/s of one node, to turn ``cpu`` amounts into seconds.
    - ``missing_walltime``: for jobs without a walltime (or ``-1``): ``"runtime"`` uses the
      runtime, a number uses that many seconds, ``"error"`` raises.
    - ``io_aware``: what to do with Kopanski's I/O-aware parts (module docstring):
      ``"refuse"``, ``"phased"`` or ``"plain"``.
    - ``checkpoint_factor``: with ``io_aware="phased"``, each checkpoint writes this many times
      the job's BB request (1.0, the paper's text; 0.5 in the authors' code).
    """
    path = find_trace(path)  # as given, else in $BBOPT_DATA, else the per-user data directory
    src = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read: {exc}", source=src) from None
    hook = UniqueKeys()
    try:
        doc = json.loads(text, object_pairs_hook=hook)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=src,
                         line=exc.lineno) from None
    except (ValueError, RecursionError) as exc:  # 4,300-digit integers, deep nesting
        raise InputError(f"invalid JSON: {exc}", source=src) from None
    hook.check(doc, src)
    return parse_batsim(doc, source=src, speed=speed, missing_walltime=missing_walltime,
                        io_aware=io_aware, checkpoint_factor=checkpoint_factor)


def read_batsim_jobs(path: str | Path, **options: Any) -> list[Job]:
    """The jobs of a Batsim JSON workload (see :func:`read_batsim`)."""
    return read_batsim(path, **options).jobs


def parse_batsim(doc: Any, *, source: str = "<json>", speed: float = DEFAULT_SPEED,
                 missing_walltime: str | float = "runtime",
                 io_aware: str = "refuse",
                 checkpoint_factor: float = 1.0) -> BatsimWorkload:
    """Jobs from an already parsed Batsim document (see :func:`read_batsim`)."""
    if io_aware not in ("refuse", "phased", "plain"):
        raise InputError(f"io_aware must be 'refuse', 'phased' or 'plain', got {io_aware!r}",
                         field="io_aware")
    if not (speed > 0 and math.isfinite(speed)):
        raise InputError(f"speed must be a positive number of flop/s, got {speed!r}")
    if isinstance(missing_walltime, str) and missing_walltime not in ("runtime", "error"):
        raise InputError("missing_walltime must be 'runtime', 'error' or a number of seconds")

    def err(msg: str, where: str, fld: str | None = None) -> InputError:
        return InputError(msg, source=source, line=where, field=fld)

    if not isinstance(doc, dict):
        raise err("the workload must be a JSON object with 'jobs' and 'profiles'", "$")
    nb_res = doc.get("nb_res")
    if nb_res is not None:
        nb_res = check_count(nb_res, "nb_res", high=MAX_NODES, source=source, line="nb_res")
    if "jobs" not in doc:
        raise err("is missing", "$", "jobs")
    raw_jobs = doc["jobs"]
    if not isinstance(raw_jobs, list):
        raise err("must be a list of jobs", "jobs", "jobs")
    if not raw_jobs:
        raise err("empty workload: no jobs", "jobs", "jobs")
    profiles = doc.get("profiles", {})
    if not isinstance(profiles, dict):
        raise err("must be an object mapping profile names to profiles", "profiles",
                  "profiles")
    runtimes = _ProfileRuntimes(profiles, speed, err)

    jobs: list[Job] = []
    ids: set[str] = set()
    for k, raw in enumerate(raw_jobs):
        where = f"jobs[{k}]"
        if not isinstance(raw, dict):
            raise err("a job must be an object", where)
        for key in ("id", "subtime", "res", "profile"):
            if key not in raw:
                raise err("is missing", where, key)
        job_id = raw["id"]
        if isinstance(job_id, bool) or not isinstance(job_id, int | str) or job_id == "":
            raise err(f"must be a string or an integer, got {job_id!r}", f"{where}.id", "id")
        job_id = str(job_id)
        if job_id in ids:
            raise err(f"duplicate job id {job_id!r}", f"{where}.id", "id")
        ids.add(job_id)
        submit = _number(raw["subtime"], f"{where}.subtime", "subtime", err)
        if submit < 0:
            raise err(f"must be >= 0, got {raw['subtime']!r}", f"{where}.subtime", "subtime")
        res = check_count(raw["res"], "res", high=MAX_NODES, source=source,
                          line=f"{where}.res")
        pname = raw["profile"]
        if not isinstance(pname, str):
            raise err(f"must be a profile name (string), got {pname!r}", f"{where}.profile",
                      "profile")
        if pname not in profiles:
            raise err(f"references profile {pname!r}, which is not in 'profiles'",
                      f"{where}.profile", "profile")
        runtime = runtimes.runtime(pname, res)
        bb_per_node = runtimes.bb_per_node(pname)
        extra_data = raw.get("extra_data")
        ours = extra_data.get("bbopt", {}) if isinstance(extra_data, dict) else {}
        if ours is not None and not isinstance(ours, dict):
            raise err("must be an object", f"{where}.extra_data.bbopt", "bbopt")
        ours = ours or {}
        if ours.get("runtime_unknown"):
            runtime_value: float | None = None
        else:
            runtime_value = runtime
        walltime = raw.get("walltime", -1)
        walltime = _number(walltime, f"{where}.walltime", "walltime", err)
        if walltime == -1 or walltime is None:
            if missing_walltime == "error":
                raise err("is missing", where, "walltime")
            walltime = (max(runtime, 1.0) if missing_walltime == "runtime"
                        else float(missing_walltime))
        elif walltime <= 0:
            raise err(f"must be > 0 (or -1 for none), got {raw['walltime']!r}",
                      f"{where}.walltime", "walltime")
        try:
            bb = float(ours["bb"]) if "bb" in ours else bb_per_node * res
            extra: dict[str, Any] = dict(ours.get("extra", {}))
            batsim_extra: dict[str, Any] = {"profile": pname}
            other = {k2: v for k2, v in extra_data.items() if k2 != "bbopt"} \
                if isinstance(extra_data, dict) else extra_data
            if other not in (None, {}):
                batsim_extra["extra_data"] = other
            extra["batsim"] = batsim_extra
            jobs.append(Job(
                id=job_id, submit=submit, walltime=walltime, runtime=runtime_value, nodes=res,
                bb=bb, ssd=float(ours.get("ssd", 0.0)),
                bandwidth=float(ours.get("bandwidth", 0.0)),
                user=None if ours.get("user") is None else str(ours["user"]),
                priority=float(ours.get("priority", 0.0)),
                preemptable=bool(ours.get("preemptable", False)),
                checkpointable=bool(ours.get("checkpointable", False)),
                extra=extra,
            ))
        except (InputError, TypeError, ValueError) as exc:
            fld = getattr(exc, "field", None)
            raise err(exc.reason if isinstance(exc, InputError) else str(exc), where,
                      fld) from None
    frac, n_bb = _fractional_compute(profiles, speed)
    if n_bb >= IO_AWARE_MIN and frac > IO_AWARE_SHARE:
        if io_aware == "refuse":
            raise InputError(
                f"looks like one of Kopanski's I/O-aware workloads: {frac:.0%} of its {n_bb} "
                f"burst-buffer profiles have compute amounts that are not whole seconds at "
                f"{speed:g} flop/s (the I/O time was taken out); read as plain runtimes its jobs "
                f"would be too short. Pass io_aware='phased' (command line: --io-aware phased; "
                f"sweep spec: reader: {{io_aware: phased}}) to replay them with the phased I/O "
                f"model (execution 'phased-io'), or io_aware='plain' to read them as runtimes",
                source=source, field="io_aware")
        jobs = [_io_aware_job(job, io_aware == "phased", checkpoint_factor) for job in jobs]
    meta = {k: v for k, v in doc.items() if k not in ("jobs", "profiles", "nb_res")}
    return BatsimWorkload(jobs, nb_res, profiles, meta, source)


def _fractional_compute(profiles: Mapping[str, Any], speed: float) -> tuple[float, int]:
    """(share of BB profiles whose compute seconds are fractional, number of BB profiles)."""
    n = frac = 0
    for prof in profiles.values():
        if not isinstance(prof, Mapping) or "bb" not in prof:
            continue
        if V5_TO_V4.get(prof.get("type"), prof.get("type")) != "parallel_homogeneous":
            continue
        cpu = prof.get("cpu")
        if isinstance(cpu, bool) or not isinstance(cpu, int | float):
            continue
        n += 1
        seconds = cpu / speed
        if abs(seconds - round(seconds)) > 1e-6 * max(1.0, seconds):
            frac += 1
    return (frac / n if n else 0.0), n


def _io_aware_job(job: Job, phased: bool, checkpoint_factor: float) -> Job:
    """A job of an I/O-aware part: flagged, and with Kopanski's phases when ``phased``."""
    from dataclasses import replace

    batsim = {**job.extra.get("batsim", {}), "io_aware": True}
    out = replace(job, extra={**job.extra, "batsim": batsim})
    if phased:
        from bbopt.workloads.generators.kopanski import with_phases

        out = with_phases([out], checkpoint_factor=checkpoint_factor)[0]
    return out


def _number(value: Any, where: str, fld: str, err) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise err(f"must be a number, got {value!r}", where, fld)
    try:
        x = float(value)
    except OverflowError:  # an integer of 400 digits
        x = math.inf
    if not math.isfinite(x):
        raise err(f"must be finite, got {magnitude(value)}", where, fld)
    return x


class _ProfileRuntimes:
    """Runtime of each profile (memoised; composed profiles resolved recursively)."""

    def __init__(self, profiles: Mapping[str, Any], speed: float, err) -> None:
        self.profiles = profiles
        self.speed = speed
        self.err = err
        self._cache: dict[tuple[str, int], float] = {}

    def _profile(self, name: str) -> tuple[str, dict[str, Any]]:
        where = f"profiles.{name}"
        prof = self.profiles[name]
        if not isinstance(prof, dict):
            raise self.err("a profile must be an object", where)
        ptype = prof.get("type")
        if not isinstance(ptype, str):
            raise self.err("is missing or not a string", where, "type")
        ptype = V5_TO_V4.get(ptype, ptype)
        if ptype == "parallel_homogeneous" and \
                prof.get("generation_strategy") == "defined_amount_spread_uniformly":
            ptype = "parallel_homogeneous_total"
        if ptype in UNSUPPORTED_TYPES:
            raise self.err(f"profile type {prof['type']!r} needs an I/O, network or trace model "
                           f"that bbopt does not simulate; supported: "
                           f"{', '.join(SIMULATED_TYPES)} (and their v5 names)", where, "type")
        if ptype not in SIMULATED_TYPES:
            raise self.err(f"unknown profile type {prof['type']!r}; supported: "
                           f"{', '.join(SIMULATED_TYPES)} (and their v5 names)", where, "type")
        return ptype, prof

    def bb_per_node(self, name: str) -> float:
        prof = self.profiles[name]
        if not isinstance(prof, dict) or "bb" not in prof:
            return 0.0
        value = _number(prof["bb"], f"profiles.{name}.bb", "bb", self.err)
        if value < 0:
            raise self.err(f"must be >= 0 bytes, got {prof['bb']!r}", f"profiles.{name}.bb", "bb")
        return value

    def runtime(self, name: str, res: int, stack: tuple[str, ...] = ()) -> float:
        key = (name, res)
        if key in self._cache:
            return self._cache[key]
        where = f"profiles.{name}"
        ptype, prof = self._profile(name)

        def amount(fld: str) -> float:
            if fld not in prof:
                raise self.err("is missing", where, fld)
            value = _number(prof[fld], f"{where}.{fld}", fld, self.err)
            if value < 0:
                raise self.err(f"must be >= 0, got {prof[fld]!r}", f"{where}.{fld}", fld)
            return value

        if ptype == "delay":
            value = amount("delay")
        elif ptype == "parallel_homogeneous":
            value = amount("cpu") / self.speed
        elif ptype == "parallel_homogeneous_total":
            value = amount("cpu") / (res * self.speed)
        elif ptype == "parallel":
            cpu = prof.get("cpu")
            if not isinstance(cpu, list) or not cpu:
                raise self.err("must be a non-empty list of flop amounts", f"{where}.cpu", "cpu")
            amounts = [_number(c, f"{where}.cpu", "cpu", self.err) for c in cpu]
            if min(amounts) < 0:
                raise self.err("amounts must be >= 0", f"{where}.cpu", "cpu")
            value = max(amounts) / self.speed
        else:  # composed
            seq = prof.get("seq")
            if not isinstance(seq, list) or not seq:
                raise self.err("must be a non-empty list of profile names", f"{where}.seq", "seq")
            repeat = prof.get("repeat", 1)
            if isinstance(repeat, bool) or not isinstance(repeat, int) or repeat < 1:
                raise self.err(f"must be a positive integer, got {repeat!r}", f"{where}.repeat",
                               "repeat")
            total = 0.0
            for i, member in enumerate(seq):
                if not isinstance(member, str) or member not in self.profiles:
                    raise self.err(f"references profile {member!r}, which is not in 'profiles'",
                                   f"{where}.seq[{i}]", "seq")
                if member == name or member in stack:
                    raise self.err(f"profile {member!r} contains itself", f"{where}.seq[{i}]",
                                   "seq")
                total += self.runtime(member, res, (*stack, name))
            value = repeat * total
        self._cache[key] = value
        return value


def to_batsim(jobs: Sequence[Job], *, nb_res: int | None = None,
              profile_type: str = "delay", speed: float = DEFAULT_SPEED,
              version: int = 4, name: str | None = None,
              description: str | None = None) -> dict[str, Any]:
    """The Batsim JSON document (a dict) of ``jobs``.

    - ``profile_type``: ``"delay"`` (exact runtimes) or ``"parallel_homogeneous"`` (``cpu`` =
      runtime x ``speed`` flops per node, plus Kopanski's per-node ``bb`` and ``com: 0``).
    - ``version``: 4 writes v4 type names, 5 the v5 names (``ptask_homogeneous``).
    - ``nb_res``: defaults to the largest job.

    One profile per job, named after the job id. Jobs without a runtime get the walltime as
    their profile's runtime and ``extra_data.bbopt.runtime_unknown = true``.
    """
    if profile_type not in ("delay", "parallel_homogeneous"):
        raise InputError(f"profile_type must be 'delay' or 'parallel_homogeneous', got "
                         f"{profile_type!r}")
    if version not in (4, 5):
        raise InputError(f"version must be 4 or 5, got {version!r}")
    if not jobs:
        raise InputError("empty workload: no jobs to write")
    out_jobs = []
    profiles: dict[str, Any] = {}
    for job in jobs:
        runtime = job.runtime if job.runtime is not None else job.walltime
        pname = job.id
        if profile_type == "delay":
            prof: dict[str, Any] = {"type": "delay", "delay": runtime}
            if job.bb > 0:
                prof["bb"] = job.bb / job.nodes
        else:
            prof = {"type": "parallel_homogeneous" if version == 4 else "ptask_homogeneous",
                    "cpu": runtime * speed, "com": 0, "bb": job.bb / job.nodes}
        profiles[pname] = prof
        ours: dict[str, Any] = {}
        if job.runtime is None:
            ours["runtime_unknown"] = True
        if job.bb > 0 and (job.bb / job.nodes) * job.nodes != job.bb:
            ours["bb"] = job.bb
        for attr, default in (("ssd", 0.0), ("bandwidth", 0.0), ("user", None),
                              ("priority", 0.0), ("preemptable", False),
                              ("checkpointable", False)):
            value = getattr(job, attr)
            if value != default:
                ours[attr] = value
        extra = {k: v for k, v in job.extra.items() if k != "batsim"}
        if extra:
            ours["extra"] = extra
        record: dict[str, Any] = {"id": job.id, "subtime": job.submit, "res": job.nodes,
                                  "walltime": job.walltime, "profile": pname}
        batsim_extra = job.extra.get("batsim", {}).get("extra_data") \
            if isinstance(job.extra.get("batsim"), Mapping) else None
        extra_data: dict[str, Any] = dict(batsim_extra) if isinstance(batsim_extra, Mapping) \
            else {}
        if ours:
            extra_data["bbopt"] = ours
        if extra_data:
            record["extra_data"] = extra_data
        out_jobs.append(record)
    doc: dict[str, Any] = {}
    if name is not None:
        doc["name"] = name
    if description is not None:
        doc["description"] = description
    doc["nb_res"] = nb_res if nb_res is not None else max(j.nodes for j in jobs)
    doc["jobs"] = out_jobs
    doc["profiles"] = profiles
    return doc


def write_batsim(jobs: Sequence[Job], path: str | Path, **options: Any) -> Path:
    """Write ``jobs`` as a Batsim JSON workload (options as :func:`to_batsim`), one job and one
    profile per line."""
    path = Path(path)
    doc = to_batsim(jobs, **options)
    try:
        head = ",\n".join(f" {json.dumps(k)}: {json.dumps(v, allow_nan=False)}"
                          for k, v in doc.items() if k not in ("jobs", "profiles"))
        jobs_text = ",\n".join("  " + json.dumps(j, allow_nan=False) for j in doc["jobs"])
        profiles_text = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v, allow_nan=False)}"
                                   for k, v in doc["profiles"].items())
    except (TypeError, ValueError) as exc:
        raise InputError(f"cannot be written as JSON: {exc}", source=str(path),
                         field="extra") from None
    path.write_text("{\n" + head + ',\n "jobs": [\n' + jobs_text + '\n ],\n "profiles": {\n'
                    + profiles_text + "\n }\n}\n", encoding="utf-8")
    return path

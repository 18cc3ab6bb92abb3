"""Reader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

One job per line, 18 whitespace-separated fields; ``-1`` means missing; header lines start with
``;`` (``; MaxNodes: 100`` and the like are kept in :attr:`SwfTrace.header`). ``.swf.gz`` files are
read transparently. Fields (1-based, as in the archive's definition):

=====  ==================  =====================================================
  1    job number          -> ``Job.id`` (as a string)
  2    submit time         -> ``Job.submit`` (seconds)
  3    wait time           (what the original scheduler did; not used)
  4    run time            -> ``Job.runtime``
  5    allocated procs     -> ``Job.nodes`` when ``processors="allocated"``
  8    requested procs     -> ``Job.nodes`` when ``processors="requested"`` (default)
  9    requested time      -> ``Job.walltime``
 12    user id             -> ``Job.user``
=====  ==================  =====================================================

Choices that every tool makes differently are explicit parameters with documented defaults;
see :func:`read_swf`. One processor is one node unless ``procs_per_node`` says otherwise.
"""

from __future__ import annotations

import gzip
import math
from dataclasses import dataclass, field
from pathlib import Path

from bbopt.core import Job
from bbopt.errors import InputError

FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_processors",
    "average_cpu_time", "used_memory", "requested_processors", "requested_time",
    "requested_memory", "status", "user_id", "group_id", "executable", "queue", "partition",
    "preceding_job", "think_time",
)


@dataclass
class SwfTrace:
    """Jobs read from an SWF file, the header's ``key: value`` lines and what was skipped."""

    jobs: list[Job]
    header: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    path: str = ""

    @property
    def max_nodes(self) -> int | None:
        for key in ("MaxNodes", "MaxProcs"):
            value = self.header.get(key)
            if value is not None and value.strip().lstrip("-").isdigit():
                return int(value)
        return None


def read_swf(
    path: str | Path,
    *,
    processors: str = "requested",
    missing_walltime: str | float = "runtime",
    nonpositive_runtime: str = "drop",
    missing_processors: str = "drop",
    max_nodes: int | None = None,
    oversize: str = "keep",
    procs_per_node: int = 1,
    rebase: bool = False,
) -> SwfTrace:
    """Read an SWF (or ``.swf.gz``) trace.

    - ``processors``: ``"requested"`` (field 8, falling back to field 5 when missing) or
      ``"allocated"`` (field 5, falling back to field 8).
    - ``missing_walltime``: when field 9 is missing, ``"runtime"`` uses the run time, a number
      uses that many seconds, ``"error"`` raises.
    - ``nonpositive_runtime``: records whose run time is <= 0 or missing are ``"drop"``-ped
      (counted in :attr:`SwfTrace.skipped`), ``"keep"``-t with runtime 0, or an ``"error"``.
    - ``missing_processors``: records with neither field 5 nor field 8 (one in the KTH log) are
      ``"drop"``-ped (counted) or an ``"error"``.
    - ``max_nodes`` and ``oversize``: jobs larger than ``max_nodes`` are ``"keep"``-t (the engine
      rejects them at submission, visibly), ``"drop"``-ped, or an ``"error"``.
    - ``procs_per_node``: processors per node; sizes are rounded up to whole nodes.
    - ``rebase``: shift submit times so that the first job is submitted at 0.

    A malformed line raises :class:`~bbopt.errors.InputError` naming file, line and field.
    """
    path = Path(path)
    if processors not in ("requested", "allocated"):
        raise InputError(f"processors must be 'requested' or 'allocated', got {processors!r}")
    for name, value, allowed in (("nonpositive_runtime", nonpositive_runtime,
                                  ("drop", "keep", "error")),
                                 ("oversize", oversize, ("keep", "drop", "error")),
                                 ("missing_processors", missing_processors, ("drop", "error"))):
        if value not in allowed:
            raise InputError(f"{name} must be one of {allowed}, got {value!r}")
    if isinstance(missing_walltime, str) and missing_walltime not in ("runtime", "error"):
        raise InputError("missing_walltime must be 'runtime', 'error' or a number of seconds")
    if procs_per_node < 1:
        raise InputError("procs_per_node must be >= 1")
    if not path.exists():
        raise InputError("no such file", source=str(path))
    opener = gzip.open if path.suffix == ".gz" else open
    primary, secondary = (7, 4) if processors == "requested" else (4, 7)
    jobs: list[Job] = []
    header: dict[str, str] = {}
    skipped: dict[str, int] = {}
    src = str(path)
    ids: set[str] = set()
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                text = line.strip()
                if not text:
                    continue
                if text.startswith(";"):
                    key, sep, value = text[1:].partition(":")
                    if sep and key.strip() and " " not in key.strip():
                        header.setdefault(key.strip(), value.strip())
                    continue
                parts = text.split()
                if len(parts) < 18:
                    raise InputError(f"expected 18 fields, found {len(parts)}", source=src,
                                     line=lineno, field=FIELDS[len(parts)])
                values = []
                for k in (0, 1, 3, 4, 7, 8, 11):
                    try:
                        values.append(float(parts[k]))
                    except ValueError:
                        raise InputError(f"not a number: {parts[k]!r}", source=src,
                                         line=lineno, field=FIELDS[k]) from None
                number, submit, run, alloc, req, req_time, user = values
                if not math.isfinite(submit) or submit < 0:
                    raise InputError(f"submit time must be >= 0, got {parts[1]}", source=src,
                                     line=lineno, field=FIELDS[1])
                procs = values[4] if primary == 7 else values[3]
                if procs <= 0:
                    procs = values[3] if primary == 7 else values[4]
                if procs <= 0 and missing_processors == "drop":
                    skipped["missing_processors"] = skipped.get("missing_processors", 0) + 1
                    continue
                if procs <= 0:
                    raise InputError("no processor count (fields 5 and 8 both missing)",
                                     source=src, line=lineno, field=FIELDS[primary])
                nodes = math.ceil(procs / procs_per_node)
                if run <= 0:
                    if nonpositive_runtime == "drop":
                        skipped["nonpositive_runtime"] = skipped.get("nonpositive_runtime", 0) + 1
                        continue
                    if nonpositive_runtime == "error":
                        raise InputError(f"run time is {parts[3]}", source=src, line=lineno,
                                         field=FIELDS[3])
                    run = 0.0
                if req_time <= 0:
                    if missing_walltime == "error":
                        raise InputError("requested time is missing", source=src, line=lineno,
                                         field=FIELDS[8])
                    req_time = (max(run, 1.0) if missing_walltime == "runtime"
                                else float(missing_walltime))
                if max_nodes is not None and nodes > max_nodes:
                    if oversize == "drop":
                        skipped["oversize"] = skipped.get("oversize", 0) + 1
                        continue
                    if oversize == "error":
                        raise InputError(f"{nodes} nodes exceed the platform's {max_nodes}",
                                         source=src, line=lineno, field=FIELDS[primary])
                job_id = parts[0] if number >= 0 else str(lineno)
                if job_id in ids:
                    raise InputError(f"duplicate job number {job_id}", source=src, line=lineno,
                                     field=FIELDS[0])
                ids.add(job_id)
                jobs.append(Job(
                    id=job_id, submit=submit, walltime=req_time, runtime=run, nodes=nodes,
                    user=parts[11] if user >= 0 else None,
                ))
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise InputError(f"cannot read: {exc}", source=src) from None
    if not jobs:
        raise InputError("no job records", source=src)
    if rebase:
        t0 = min(j.submit for j in jobs)
        jobs = [_shift(j, t0) for j in jobs]
    return SwfTrace(jobs, header, skipped, src)


def _shift(job: Job, t0: float) -> Job:
    from dataclasses import replace

    return replace(job, submit=job.submit - t0)

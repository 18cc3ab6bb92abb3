"""Writing workloads and schedules as SWF (the Standard Workload Format of the Parallel Workloads
Archive), with the burst-buffer columns of CQSim's BBSched branch or of BBSimulator when asked;
:mod:`bbopt.workloads.swf` reads them back.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bbopt.core import GB, Job, JobState
from bbopt.errors import InputError


def write_swf(jobs: Sequence[Job], path: str | Path, *,
              start: Sequence[float] | None = None, end: Sequence[float] | None = None,
              state: Sequence[str] | None = None, max_nodes: int | None = None,
              bb_columns: str = "none", bb_unit: float = GB,
              bb_capacity: float | None = None, comments: tuple[str, ...] = ()) -> Path:
    """Write a workload, or a schedule of it, as SWF.

    With the outcome arrays of a schedule (``start``, ``end``, ``state``, indexed like ``jobs``,
    as :class:`~bbopt.simulation.SimulationResult` holds them), field 3 (wait) is
    ``start - submit``, field 4 (run time) ``end - start`` and field 5 the allocated node count;
    field 11 (status) is 1 for finished jobs, 0 for jobs killed at their walltime and 5
    (cancelled, fields 3-5 = -1) for rejected ones. Without them, fields 3 and 5 are -1 and
    field 4 is the job's runtime. ``max_nodes`` (the machine's size) defaults to the widest job.
    Job ids that are not integers are renumbered 1..n (SWF has no text field). A path ending
    in ``.gz`` is written gzipped.
    ``bb_columns="cqsim"`` appends the total BB request in ``bb_unit`` as field 19 and, with
    ``bb_capacity`` (bytes), a ``; BurstBuffer:`` header; ``"bbsim"`` appends the three staging
    volumes from ``Job.extra["staging"]`` (or ``bb, 0, bb``).

    Example::

        write_swf(result.jobs, "out.swf", start=result.start, end=result.end,
                  state=result.state, max_nodes=result.platform.nodes)
    """
    if bb_columns not in ("none", "cqsim", "bbsim"):
        raise InputError(f"bb_columns must be 'none', 'cqsim' or 'bbsim', got {bb_columns!r}")
    path = Path(path)
    jobs = list(jobs)
    outcome = (start, end, state)
    if any(x is not None for x in outcome) and not all(
            x is not None and len(x) == len(jobs) for x in outcome):
        raise InputError("a schedule needs start, end and state, each one value per job")
    scheduled = state is not None
    if max_nodes is None:
        max_nodes = max((j.nodes for j in jobs), default=0)
    if not jobs:
        raise InputError("empty workload: nothing to write")
    numeric = all(_is_count(j.id) for j in jobs)
    out = ["; Version: 2.2", "; Conversion: bbopt", f"; MaxJobs: {len(jobs)}",
           f"; MaxRecords: {len(jobs)}", f"; MaxNodes: {max_nodes}", f"; MaxProcs: {max_nodes}"]
    if scheduled:
        out.append("; Note: schedule simulated by bbopt")
    if not numeric:
        out.append("; Note: job ids renumbered 1..n in input order")
    if bb_columns == "cqsim" and bb_capacity is not None:
        out.append(f"; BurstBuffer: {_fmt(bb_capacity / bb_unit)}")
    out.extend(f"; {c}" for c in comments)
    users: dict[str, int] = {}
    for k, job in enumerate(jobs):
        number = job.id if numeric else str(k + 1)
        wait = run = alloc = -1.0
        status = 1
        if scheduled:
            final = state[k]
            if final == JobState.REJECTED:
                status = 5
            else:
                wait = start[k] - job.submit
                run = end[k] - start[k]
                alloc = job.nodes
                status = 1 if final == JobState.FINISHED else 0 if final == JobState.KILLED else -1
        elif job.runtime is not None:
            run = job.runtime
        user = -1
        if job.user is not None:
            user = int(job.user) if _is_count(job.user) else users.setdefault(job.user,
                                                                              len(users) + 1)
        group = str(job.extra.get("group", -1))
        group = int(group) if _is_count(group.removeprefix("-")) else -1
        mem = job.extra.get("memory_per_node")  # field 7: KB per processor (= node here)
        mem = _fmt(float(mem) / 1024.0) if mem else "-1"
        fields = [number, _fmt(job.submit), _fmt(wait), _fmt(run), _fmt(alloc), "-1", mem,
                  str(job.nodes), _fmt(job.walltime), "-1", str(status), str(user), str(group),
                  "-1", "-1", "-1", "-1", "-1"]
        if bb_columns == "cqsim":
            fields.append(_fmt(job.bb / bb_unit))
        elif bb_columns == "bbsim":
            st = job.extra.get("staging") or {"in": job.bb, "run": 0.0, "out": job.bb}
            fields.extend(_fmt(float(st.get(key, 0.0)) / bb_unit) for key in ("in", "run", "out"))
        out.append(" ".join(fields))
    text = ("\n".join(out) + "\n").encode("utf-8")
    if path.suffix == ".gz":  # (as the reader opens it; no time stamp: the same bytes each run)
        import gzip

        text = gzip.compress(text, mtime=0)
    path.write_bytes(text)
    return path


def _is_count(text: str) -> bool:
    """Whether ``text`` is a whole number SWF can hold: ASCII digits only (``str.isdigit``
    alone also accepts ``²``, which ``int`` refuses, and ``١``, which SWF tools do not read)."""
    return text.isascii() and text.isdigit()


def _fmt(x: float) -> str:
    x = float(x)
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    return repr(x)

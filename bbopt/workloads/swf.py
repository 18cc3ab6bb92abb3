"""Reader and writer of the Standard Workload Format (SWF) of the Parallel Workloads Archive,
including the two burst-buffer variants found in the wild.

Length: the field table, the strict line checks and the two BB column variants are one reader.

One job per line, 18 whitespace-separated fields; ``-1`` means missing; header lines start with
``;`` (``; MaxNodes: 100`` and the like are kept in :attr:`SwfTrace.header`). ``.swf.gz`` files are
read transparently. Fields (1-based, as in the archive's definition):

=====  ==================  =====================================================
  1    job number          -> ``Job.id`` (as a string)
  2    submit time         -> ``Job.submit`` (seconds)
  3    wait time           (what the original scheduler did; not used)
  4    run time            -> ``Job.runtime``
  5    allocated procs     -> ``Job.nodes`` when ``processors="allocated"``
  7    used memory         -> ``Job.extra["memory_per_node"]`` when present (KB per
                            processor x 1024 x ``procs_per_node``: bytes per node, the
                            checkpoint image size of :mod:`bbopt.simulation.checkpoint`)
  8    requested procs     -> ``Job.nodes`` when ``processors="requested"`` (default)
  9    requested time      -> ``Job.walltime``
 12    user id             -> ``Job.user``
=====  ==================  =====================================================

Burst-buffer columns (``bb_columns``), both in units of ``bb_unit`` bytes (default 1 GB):

``"cqsim"`` -- CQSim's BBSched branch (Fan et al., HPDC 2019): a 19th field per job is the job's
    **total** shared burst-buffer request -> ``Job.bb``; the header line
    ``; BurstBuffer: <capacity>`` gives the platform's BB capacity -> :attr:`SwfTrace.bb_capacity`.
``"bbsim"`` -- BBSimulator's staging volumes: three extra fields 19-21 (or the same three numbers
    per job in a companion file ``<trace>.bb`` whose lines read
    ``<job number> <data_in> <data_run> <data_out>``): the volume staged in from the PFS before
    the run, the volume the job writes to the BB while it runs, and the volume staged out to the
    PFS after it. bbopt stores them in ``Job.extra["staging"] = {"in": bytes, "run": bytes,
    "out": bytes}`` and sets ``Job.bb = max(data_in, data_run, data_out)``: the capacity the BB
    allocation must hold at its fullest (stage-in data is replaced by run data, which becomes
    the stage-out data).
``"bbsimulator"`` -- BBSimulator's own trace ``<trace>.swf.bb`` (its trace reader writes it
    beside ``<trace>.swf``): every SWF row again (numbers written as ``1.00``), plus
    ``data_in data_run data_out`` as fields 19-21, read as BBSimulator reads them: **stage-in is
    stored in 1/1000 of the unit of the other two** (BBSimulator divides field 19 by 1000 when
    it builds a job), and a job asking fewer than 256 processors is raised to 256 as BBSimulator
    does (``bbsimulator_min_processors``). Otherwise as ``bbsim``.
``"auto"`` (default) -- ``bbsimulator`` for a file named ``*.swf.bb``, or when the companion
    ``<trace>.swf.bb`` is such a BBSimulator trace (21 fields or more per record: its BB columns
    and processor raise apply to the matching jobs of ``<trace>.swf``); ``bbsim`` if a 4-column
    companion ``.bb`` file exists; otherwise ``cqsim`` if the header has ``BurstBuffer:`` or the
    records have exactly 19 fields (a ``BurstBuffer:`` header over records of 20 fields or more
    is refused: which layout is meant cannot be told); ``bbsim`` if they have 21 or more;
    otherwise none.
    ``"none"`` ignores extra fields. A companion file whose job numbers match no job of the
    trace (or only some) raises a :class:`UserWarning` naming it: its volumes would otherwise
    silently be 0.

Choices that every tool makes differently are explicit parameters with documented defaults;
see :func:`read_swf`. One processor is one node unless ``procs_per_node`` says otherwise.

:func:`bbopt.workloads.swf_writer.write_swf` writes a workload or a simulated schedule back as
SWF, with fields 3 (wait) and 4 (run time) taken from the simulation, so that SWF-only tools can
read bbopt's results.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import chain
from pathlib import Path

import numpy as np

from bbopt.core import GB, Job
from bbopt.errors import InputError
from bbopt.limits import MAX_NODES, count_from_text
from bbopt.workloads.archive import find_trace
from bbopt.workloads.columns import trusted_job, valid_columns
from bbopt.workloads.swf_files import (
    BBSIM_FIELDS,
    _companion_kind,
    _data_chunks,
    _data_lines,
    _intstr,
    _read_bb_file,
    _scan_header,
)
from bbopt.workloads.swf_ints import int_rows

FIELDS = (
    "job_number", "submit_time", "wait_time", "run_time", "allocated_processors",
    "average_cpu_time", "used_memory", "requested_processors", "requested_time",
    "requested_memory", "status", "user_id", "group_id", "executable", "queue", "partition",
    "preceding_job", "think_time",
)
CQSIM_FIELDS = ("burst_buffer",)
#: How each kind of skipped record is described to the user.
SKIP_REASONS = {"nonpositive_runtime": "runtime <= 0", "missing_processors": "no processors",
                "oversize": "more nodes than the platform"}


@dataclass
class SwfTrace:
    """Jobs read from an SWF file, the header's ``key: value`` lines and what was skipped.

    ``bb_capacity`` is the platform BB capacity in bytes from a ``; BurstBuffer:`` header line
    (CQSim convention), else ``None``; ``bb_columns`` the convention that was applied.
    """

    jobs: list[Job]
    header: dict[str, str] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    path: str = ""
    bb_capacity: float | None = None
    bb_columns: str = "none"
    #: Each skipped record: ``(line number, reason, the line's text)``, in file order.
    skipped_records: list[tuple[int, str, str]] = field(default_factory=list)
    #: Whether ``draw_bb`` gave the jobs their BB.
    bb_drawn: bool = False

    @property
    def max_nodes(self) -> int | None:
        for key in ("MaxNodes", "MaxProcs"):
            value = self.header.get(key)
            if value is not None and value.strip().lstrip("-").isdigit():
                return count_from_text(value, key, high=MAX_NODES, source=self.path or None,
                                       line="header")
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
    bb_columns: str = "auto",
    bb_unit: float = GB,
    bb_file: str | Path | None = None,
    groups: bool = False,
    on_bad: str | None = None,
    bbsimulator_min_processors: int = 256,
    draw_bb: Callable[[np.ndarray, np.ndarray, bool], np.ndarray | None] | None = None,
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
    - ``bb_columns``, ``bb_unit``, ``bb_file``: burst-buffer columns (see the module docstring).
    - ``bbsimulator_min_processors``: BBSimulator's minimum job size in processors (256), applied
      to the jobs of a BBSimulator trace only.
    - ``on_bad``: a shorthand for the records that are well formed but cannot be simulated (run
      time <= 0, no processor count): ``"skip"`` drops them (the default behaviour; each is
      listed in :attr:`SwfTrace.skipped_records` with its line and reason) and ``"raise"``
      makes the first an error. It overrides ``nonpositive_runtime`` and
      ``missing_processors``. Malformed lines (a field missing or extra, a value that is not a
      finite number, a magnitude over :data:`MAX_VALUE`) are always errors, never skipped.
    - ``groups``: also keep field 13 (group id) as ``Job.extra["group"]`` (used to map jobs to
      fair-share entities).
    - ``draw_bb(nodes, walltime, has_bb)``: the kept records' BB requests from their columns,
      or ``None`` to keep the file's (not with staging columns); ``has_bb``: some record has
      one. :func:`bbopt.loading.read_workload` draws Kopanski's model so. See ``bb_drawn``.

    A malformed line raises :class:`~bbopt.errors.InputError` naming file, line and field.
    """
    path = Path(path)
    if on_bad is not None:
        if on_bad not in ("skip", "raise"):
            raise InputError(f"on_bad must be 'skip' or 'raise', got {on_bad!r}")
        nonpositive_runtime = missing_processors = "drop" if on_bad == "skip" else "error"
    if processors not in ("requested", "allocated"):
        raise InputError(f"processors must be 'requested' or 'allocated', got {processors!r}")
    for name, value, allowed in (("nonpositive_runtime", nonpositive_runtime,
                                  ("drop", "keep", "error")),
                                 ("oversize", oversize, ("keep", "drop", "error")),
                                 ("missing_processors", missing_processors, ("drop", "error")),
                                 ("bb_columns", bb_columns,
                                  ("auto", "none", "cqsim", "bbsim", "bbsimulator"))):
        if value not in allowed:
            raise InputError(f"{name} must be one of {allowed}, got {value!r}")
    if isinstance(missing_walltime, str) and missing_walltime not in ("runtime", "error"):
        raise InputError("missing_walltime must be 'runtime', 'error' or a number of seconds")
    if procs_per_node < 1:
        raise InputError("procs_per_node must be >= 1")
    if not (bb_unit > 0 and math.isfinite(bb_unit)):
        raise InputError(f"bb_unit must be a positive number of bytes, got {bb_unit!r}")
    path = find_trace(path)  # as given, else in $BBOPT_DATA, else the per-user data directory
    if path.is_dir():
        raise InputError("is a directory, not an SWF file", source=str(path))
    src = str(path)
    header, first_widths = _scan_header(path)
    own = path.name.endswith((".swf.bb", ".swf.bb.gz"))  # BBSimulator's own trace
    if bb_file is None and bb_columns in ("auto", "bbsim", "bbsimulator") and not own:
        companion = Path(str(path) + ".bb")
        if not companion.exists() and path.suffix == ".gz":
            companion = Path(str(path)[:-3] + ".bb")
        if companion.exists():
            bb_file = companion
    companion_kind = _companion_kind(Path(bb_file)) if bb_file is not None else None
    widths = set(first_widths)
    if bb_columns == "auto":
        if own or companion_kind == "bbsimulator":
            bb_columns = "bbsimulator"
        elif bb_file is not None:
            bb_columns = "bbsim"
        elif "BurstBuffer" in header or widths == {19}:
            if widths and max(widths) > 19:  # (fields 20 on would be read as nothing)
                raise InputError(
                    f"the header's 'BurstBuffer:' line announces CQSim's layout (one BB field, "
                    f"19 in all) but the records have {max(widths)} fields: read it with "
                    f"bb_columns='cqsim' or 'bbsim' (bbopt.workloads.read_swf), or drop the "
                    f"header line for BBSimulator's three staging fields", source=src,
                    field="bb_columns")
            bb_columns = "cqsim"
        elif widths and min(widths) >= 21:
            bb_columns = "bbsim"
        else:
            bb_columns = "none"
    n_extra = {"none": 0, "cqsim": 1, "bbsim": 0 if bb_file is not None else 3,
               "bbsimulator": 0 if bb_file is not None else 3}[bb_columns]
    kept: dict[int, str] = {}  # (the text of the records likely to be skipped)
    table, lineno = _parse_stream(path, src, 18 + n_extra, kept)
    lines = _Lines(path, lineno, kept)  # any other text is read again only when needed
    names = FIELDS + (CQSIM_FIELDS if n_extra == 1 else BBSIM_FIELDS)
    _check_values(table, [0, 1, 3, 4, 6, 7, 8, 11, 12, *range(18, 18 + n_extra)], lines, src,
                  names)
    # BBSimulator stores stage-in in 1/1000 of the unit of the other two volumes.
    in_scale = 1e-3 if bb_columns == "bbsimulator" else 1.0
    staging = (_read_bb_file(Path(bb_file), bb_unit, in_scale) if bb_file is not None
               else None)
    raised: np.ndarray | None = None  # the records BBSimulator's minimum size applies to
    if staging is not None:
        id_text = _int_strings(table[:, 0])
        in_file = np.fromiter((k in staging for k in id_text), bool, len(id_text))
        matched = len({k for k in id_text if k in staging})
        if matched == 0:
            warnings.warn(f"{bb_file}: none of its {len(staging)} job numbers matches a job of "
                          f"{src}; every job gets no burst buffer", UserWarning, stacklevel=2)
        elif matched < len(staging):
            warnings.warn(f"{bb_file}: {len(staging) - matched} of its {len(staging)} job "
                          f"numbers match no job of {src}", UserWarning, stacklevel=2)
        if bb_columns == "bbsimulator":
            raised = in_file
        del id_text
    elif bb_columns == "bbsimulator":
        raised = np.ones(len(table), dtype=bool)

    primary, secondary = (7, 4) if processors == "requested" else (4, 7)
    number, submit, run = table[:, 0], table[:, 1], table[:, 3]
    req_time, user, group = table[:, 8], table[:, 11], table[:, 12]
    used_mem = table[:, 6]
    bad = ~np.isfinite(submit) | (submit < 0)
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"submit time must be >= 0, got {lines[k][1].split()[1]}", source=src,
                         line=int(lineno[k]), field=FIELDS[1])
    procs = np.where(table[:, primary] > 0, table[:, primary], table[:, secondary])
    if raised is not None:  # BBSimulator's minimum allocation, for the jobs it describes
        procs = np.where(raised & (procs > 0),
                         np.maximum(procs, float(bbsimulator_min_processors)), procs)
    keep = np.ones(len(table), dtype=bool)
    skipped: dict[str, int] = {}
    why: dict[int, str] = {}

    def drop(mask: np.ndarray, reason: str) -> None:
        mask = mask & keep
        if mask.any():
            skipped[reason] = skipped.get(reason, 0) + int(mask.sum())
            keep[mask] = False
            for k in np.flatnonzero(mask).tolist():
                why[k] = SKIP_REASONS[reason]

    no_procs = procs <= 0
    if missing_processors == "error" and nonpositive_runtime == "error":
        worst = no_procs | (run <= 0)
        if worst.any():  # the first unusable record in file order, whatever its fault
            k = int(np.argmax(worst))
            if not no_procs[k]:
                raise InputError(f"run time is {lines[k][1].split()[3]}", source=src,
                                 line=int(lineno[k]), field=FIELDS[3])
    if missing_processors == "error" and no_procs.any():
        k = int(np.argmax(no_procs))
        raise InputError("no processor count (fields 5 and 8 both missing)", source=src,
                         line=int(lineno[k]), field=FIELDS[primary])
    drop(no_procs, "missing_processors")
    nonpos = (run <= 0) & keep
    if nonpos.any():
        if nonpositive_runtime == "error":
            k = int(np.argmax(nonpos))
            raise InputError(f"run time is {lines[k][1].split()[3]}", source=src,
                             line=int(lineno[k]), field=FIELDS[3])
        if nonpositive_runtime == "drop":
            drop(nonpos, "nonpositive_runtime")
        else:
            run = np.where(nonpos, 0.0, run)
    nodes = np.ceil(np.maximum(procs, 1) / procs_per_node).astype(np.int64)
    no_wall = (req_time <= 0) & keep
    if no_wall.any():
        if missing_walltime == "error":
            k = int(np.argmax(no_wall))
            raise InputError("requested time is missing", source=src, line=int(lineno[k]),
                             field=FIELDS[8])
        fill = np.maximum(run, 1.0) if missing_walltime == "runtime" else \
            np.full(len(run), float(missing_walltime))
        req_time = np.where(no_wall, fill, req_time)
    if max_nodes is not None:
        over = (nodes > max_nodes) & keep
        if over.any() and oversize == "error":
            k = int(np.argmax(over))
            raise InputError(f"{int(nodes[k])} nodes exceed the platform's {max_nodes}",
                             source=src, line=int(lineno[k]), field=FIELDS[primary])
        if oversize == "drop":
            drop(over, "oversize")

    bb = np.zeros(len(table))
    if bb_columns == "cqsim":
        bb = np.maximum(table[:, 18], 0.0) * bb_unit
    at = np.flatnonzero(keep)  # (BB drawn on the columns: the jobs built once, not copied)
    new = None if draw_bb is None or bb_columns in ("bbsim", "bbsimulator") else \
        draw_bb(nodes[at], req_time[at], bool((bb[at] > 0).any()))
    if new is not None:
        bb = np.zeros(len(table))
        bb[at] = new

    jobs: list[Job] = []
    kept = np.flatnonzero(keep)
    # a job's id is its number, else its line number: the first record whose id an earlier
    # record already has is a duplicate (found without a set of every id)
    key = np.where(number >= 0, number, lineno)[kept]
    dup = -1
    if not (key[1:] > key[:-1]).all():  # (increasing ids, the usual order, are all distinct)
        _, firsts = np.unique(key, return_index=True)
        again = np.ones(len(kept), dtype=bool)
        again[firsts] = False
        dup = int(kept[np.argmax(again)]) if again.any() else -1
    bbsim_rows = (table[:, 18:21] if bb_columns in ("bbsim", "bbsimulator") and staging is None
                  else None)
    # what follows reads only these columns: copies of them, so the whole table can go
    number, submit, run, req_time, user, group, used_mem = (
        np.array(a) for a in (number, submit, run, req_time, user, group, used_mem))
    del table, procs
    for lo in range(0, len(kept), CHUNK):  # Python lists of one chunk of records at a time
        part = kept[lo:lo + CHUNK]
        _jobs_of(jobs, part, dup, src, number, lineno, submit, req_time, run, nodes, bb,
                 user, group, used_mem * (1024.0 * procs_per_node), bbsim_rows, staging,
                 bb_columns, bb_unit, groups, in_scale)
    if not jobs:
        raise InputError("no job records", source=src)
    if rebase:
        t0 = min(j.submit for j in jobs)
        jobs = [replace(j, submit=j.submit - t0) for j in jobs]
    capacity = None
    if "BurstBuffer" in header:
        try:
            capacity = float(header["BurstBuffer"].split()[0]) * bb_unit
        except (ValueError, IndexError):
            raise InputError(f"cannot read the capacity {header['BurstBuffer']!r}", source=src,
                             field="BurstBuffer") from None
    texts = lines.texts(why)
    records = [(int(lineno[k]), why[k], texts[k]) for k in sorted(why)]
    return SwfTrace(jobs, header, skipped, src, capacity, bb_columns, records, new is not None)


#: The ``extra`` of every job that has none: one shared empty mapping instead of a dict per
#: job (64 bytes each; nothing writes into a job's ``extra``).
_NO_EXTRA: dict = {}


def _jobs_of(jobs: list[Job], part: np.ndarray, dup: int, src: str, number, lineno, submit,
             req_time, run, nodes, bb, user, group, memory, bbsim_rows, staging, bb_columns: str,
             bb_unit: float, groups: bool, in_scale: float = 1.0) -> None:
    """Append the jobs of the records ``part`` (indices, in file order) to ``jobs``;
    ``memory`` is field 7 in bytes per node (``<= 0``: none); ``in_scale`` multiplies the
    stage-in column of ``bbsim_rows`` (BBSimulator's unit)."""
    submit_l, wall_l, run_l = submit[part].tolist(), req_time[part].tolist(), run[part].tolist()
    nodes_l, bb_l = nodes[part].tolist(), bb[part].tolist()
    user_l, group_l = user[part].tolist(), group[part].tolist()
    number_l, lineno_l = number[part].tolist(), lineno[part].tolist()
    mem_l = memory[part].tolist()
    id_text = _int_strings(number[part])
    user_text = _int_strings(user[part], shared=True)
    staged = bb_columns in ("bbsim", "bbsimulator")  # (BB and extra from the staging columns)
    if not staged and dup < 0 and valid_columns(submit[part], req_time[part], run[part],
                                                nodes[part], bb[part]):
        # Job's own checks hold for every record of the part: not repeated job by job
        for i in range(len(submit_l)):
            u = user_l[i]
            extra = _NO_EXTRA
            if mem_l[i] > 0 or (groups and group_l[i] >= 0):
                extra = {}
                if mem_l[i] > 0:
                    extra["memory_per_node"] = mem_l[i]
                if groups and group_l[i] >= 0:
                    extra["group"] = _intstr(group_l[i])
            jobs.append(trusted_job(
                id_text[i] if number_l[i] >= 0 else str(lineno_l[i]), submit_l[i], wall_l[i],
                run_l[i], nodes_l[i], bb_l[i], user_text[i] if u >= 0 else None, extra))
        return
    for i, k in enumerate(part.tolist()):
        job_id = id_text[i] if number_l[i] >= 0 else str(lineno_l[i])
        if k == dup:
            raise InputError(f"duplicate job number {job_id}", source=src, line=lineno_l[i],
                             field=FIELDS[0])
        extra: dict = {}
        job_bb = bb_l[i]
        if bb_columns in ("bbsim", "bbsimulator"):
            if staging is not None:
                vin, vrun, vout = staging.get(job_id, (0.0, 0.0, 0.0))
            else:
                vin, vrun, vout = (float(x) for x in np.maximum(bbsim_rows[k], 0.0) * bb_unit)
                vin *= in_scale
            extra["staging"] = {"in": vin, "run": vrun, "out": vout}
            job_bb = max(vin, vrun, vout)
        if mem_l[i] > 0:
            extra["memory_per_node"] = mem_l[i]
        if groups and group_l[i] >= 0:
            extra["group"] = _intstr(group_l[i])
        u = user_l[i]
        try:
            jobs.append(Job(
                id=job_id, submit=submit_l[i], walltime=wall_l[i], runtime=run_l[i],
                nodes=nodes_l[i], bb=job_bb, user=user_text[i] if u >= 0 else None,
                extra=extra or _NO_EXTRA,
            ))
        except InputError as exc:
            raise exc.at(source=src, line=lineno_l[i]) from None


def _int_strings(values: np.ndarray, shared: bool = False) -> list[str]:
    """Each value as text: integers without a fraction (vectorised where possible).
    ``shared``: equal values share one string object (user ids: a few hundred distinct values
    over hundreds of thousands of jobs)."""
    if shared:
        uniq, inverse = np.unique(values, return_inverse=True)
        text = _int_strings(uniq)
        return [text[i] for i in inverse.tolist()]
    whole = np.isfinite(values) & (values == np.round(values))
    if whole.all():
        return values.astype(np.int64).astype(str).tolist()
    return [_intstr(x) for x in values.tolist()]


#: The largest magnitude a field may have: 1e15 s is 30 million years, 1e15 processors absurd.
#: Larger values (1e30, overflowing integers) are typos or corruption, refused by name.
MAX_VALUE = 1e15


#: Records parsed at a time: the text of one chunk is all the reader holds besides the table.
CHUNK = 1 << 15


def _parse_stream(path: Path, src: str, width: int,
                  kept: dict[int, str] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The first ``width`` fields of every record (a float array) and the records' line
    numbers, parsed :data:`CHUNK` records at a time by :func:`_parse_table`, so a big trace is
    never held as text. ``kept`` receives the text of the records a reader with default
    options skips (run time <= 0, or no processor count in field 5 or 8), by line number."""
    tables: list[np.ndarray] = []
    linenos: list[np.ndarray] = []
    first: tuple[int, int] | None = None
    for numbers, texts in _data_chunks(path, CHUNK):
        if first is None:
            first = (numbers[0], len(texts[0].split()))
        table = _parse_table(numbers, texts, src, width, first)
        tables.append(table)
        linenos.append(np.array(numbers, dtype=np.int64))
        if kept is not None:
            odd = (table[:, 3] <= 0) | ((table[:, 4] <= 0) & (table[:, 7] <= 0))
            kept.update((numbers[k], texts[k]) for k in np.flatnonzero(odd).tolist())
    if not tables:
        raise InputError("no job records", source=src)
    if len(tables) == 1:
        return tables[0], linenos[0]
    return np.concatenate(tables), np.concatenate(linenos)


class _Lines:
    """Records by index, their text read again from the file on demand (error messages and the
    list of skipped records need it; the reader keeps no text but that of the few records
    ``kept`` by line number)."""

    def __init__(self, path: Path, lineno: np.ndarray, kept: dict[int, str] | None = None) -> None:
        self.path = path
        self.lineno = lineno
        self.kept = kept or {}

    def __len__(self) -> int:
        return len(self.lineno)

    def __getitem__(self, k: int) -> tuple[int, str]:
        return int(self.lineno[k]), self.texts([k])[k]

    def texts(self, ks) -> dict[int, str]:
        """The text of the records ``ks`` (indices): those kept, and the others read in one pass
        over the file."""
        want = {int(self.lineno[k]): k for k in ks}
        kept = self.kept
        out = {k: kept[ln] for ln, k in want.items() if ln in kept}
        want = {ln: k for ln, k in want.items() if ln not in kept}
        if not want:  # (no pass over the file)
            return out
        last = max(want)
        for ln, text in _data_lines(self.path):
            if ln in want:
                out[want[ln]] = text
            if ln >= last:
                break
        return out


def _parse_table(numbers: list[int], texts: list[str], src: str, width: int,
                 first_record: tuple[int, int] | None = None) -> np.ndarray:
    """The first ``width`` fields of the records ``texts`` (on lines ``numbers``) as a float
    array; errors name the line.

    Every record must have the same number of fields (a short line next to a long one would
    otherwise shift values between jobs). The fast path (numpy parses in C) is taken only when
    every token is an integer and every line's field count has been checked; on any doubt the
    strict path parses each field with ``float`` and names the first bad one.
    """
    if not texts:
        raise InputError("no job records", source=src)
    names = FIELDS + (CQSIM_FIELDS if width == 19 else BBSIM_FIELDS)
    first_line, first = first_record or (numbers[0], len(texts[0].split()))
    if first < width:
        raise InputError(f"expected {width} fields, found {first}", source=src,
                         line=first_line, field=names[first])
    ints = int_rows(texts, first)  # (the usual text, read inside numpy)
    if ints is not None:
        return ints[:, :width].astype(np.float64)
    parts = [text.split() for text in texts]  # (each line split once, for both uses)
    counts = list(map(len, parts))
    if counts.count(first) != len(counts):
        k = next(k for k, c in enumerate(counts) if c != first)
        lineno, found = numbers[k], counts[k]
        raise InputError(f"expected {first} fields (as on line {first_line}), found {found}",
                         source=src, line=lineno,
                         field=names[found] if found < len(names) else f"field {found + 1}")
    table = None
    try:
        # Integer tokens (SWF's usual text): numpy reads each with int(), whose value as a
        # float equals float()'s -- except "-0", which float() reads as -0.0: a token with a
        # minus sign that parses to no negative number sends the chunk to the strict path.
        flat = np.array(list(chain.from_iterable(parts)), dtype=np.int64)
    except (ValueError, OverflowError):
        flat = None
    if flat is not None and flat.size == first * len(texts) and \
            sum(text.count("-") for text in texts) == int(np.count_nonzero(flat < 0)):
        table = flat.reshape(len(texts), first)[:, :width].astype(np.float64)
    del flat
    if table is None:
        table = np.empty((len(texts), width))
        for k, lineno in enumerate(numbers):
            fields = parts[k]
            try:
                table[k] = [float(x) for x in fields[:width]]
            except ValueError:
                c = next(c for c in range(width) if not _is_float(fields[c]))
                raise InputError(f"not a number: {fields[c]!r}", source=src, line=lineno,
                                 field=names[c]) from None
    return table


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _check_values(table: np.ndarray, columns: Sequence[int], lines: list[tuple[int, str]],
                  src: str, names: Sequence[str]) -> None:
    """Refuse NaN, infinities and magnitudes over :data:`MAX_VALUE` in the columns used."""
    sub = table[:, columns]
    bad = ~np.isfinite(sub)
    with np.errstate(invalid="ignore"):
        bad |= np.abs(sub) > MAX_VALUE  # (NaN compares false: it is refused above)
    if bad.any():
        k, c = (int(x) for x in np.argwhere(bad)[0])
        col = columns[c]
        token = lines[k][1].split()[col]
        what = "not a finite number" if not np.isfinite(sub[k, c]) else \
            f"out of range (magnitude over {MAX_VALUE:g})"
        raise InputError(f"{token} is {what}", source=src, line=lines[k][0], field=names[col])

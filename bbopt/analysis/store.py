"""The results store of a sweep: one directory per run, named by what determines the run.

::

    DIR/runs/<hash>/summary.json    grid coordinates, options, metrics, full provenance
    DIR/runs/<hash>/jobs.csv.gz     per-job outcomes (Batsim's jobs.csv columns + bbopt's)
    DIR/failed/<hash>.json          the traceback of a run that raised (retried next time)
    DIR/specs/<name>-<sha>.yaml     every specification that wrote into the store

The hash (:func:`run_hash`, SHA-256 of a canonical JSON) covers everything that determines a
run's outcome: the bbopt version, the content hash of the prepared workload with its split and
part, the platform, the policy with its effective options (budget and seed included), the seed,
the budget, the execution model, the scheduling tick and the measurement interval -- and
nothing else (labels and file names are presentation, not inputs). A run directory appears
atomically (written under a temporary name, then renamed); a run whose ``summary.json`` exists
is done and skipped, so an interrupted sweep resumes where it stopped and a widened grid runs
only its new cells. :func:`collect` reads the store as one tidy pandas DataFrame.

The store does not trust its own files (see docs/threat-model.md): a run is done only when its
summary parses, names its run and holds its metrics, and its jobs file has the size the summary
recorded; any other run directory is reported (:func:`unreadable_runs`), left out of
:func:`collect` and run again by the next sweep. Two sweeps may write into one store at once: a
run directory appears by one rename, a rename that finds a finished run there keeps it, and the
temporaries of a writer still alive are left alone. A sweep's name becomes a file name in the
store, so it must be one plain component (:func:`check_name`).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import logging
import math
import os
import re
import shutil
import socket
import time
import uuid
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.errors import InputError

SUMMARY = "summary.json"
JOBS = "jobs.csv.gz"
#: The folders a results store holds (one of them makes a directory a store).
STORE_FOLDERS = ("runs", "specs", "failed")
#: A sweep name: one plain file-name component (no ``/``, no ``..``, no leading dot).
NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+=-]{0,127}")
#: A temporary run directory older than this is left over whoever wrote it (another host).
STALE_SECONDS = 24 * 3600.0
log = logging.getLogger("bbopt.store")
#: Columns whose values depend on the machine's load, not on the run's inputs.
TIMING_PREFIXES = ("decision_time_", "simulation_wall_time", "wall_time", "cpu_time",
                   "finished_at", "started_at", "host")


def canonical(obj: Any) -> str:
    """Canonical JSON: sorted keys, no spaces, numpy values as plain numbers and lists."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_plain,
                      allow_nan=True)


def _plain(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (set, frozenset)):
        return sorted(x)
    if isinstance(x, Path):
        return str(x)
    if hasattr(x, "__dataclass_fields__"):
        import dataclasses

        return dataclasses.asdict(x)
    return repr(x)


def sha256(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def jobs_sha256(jobs) -> str:
    """The content hash of a job list: every field of every job, in order."""
    h = hashlib.sha256()
    for j in jobs:
        h.update(canonical([j.id, j.submit, j.walltime, j.runtime, j.nodes, j.bb, j.ssd,
                            j.bandwidth, j.user, j.priority, j.preemptable, j.checkpointable,
                            dict(j.extra)]).encode())
        h.update(b"\n")
    return h.hexdigest()


def run_hash(inputs: Mapping[str, Any]) -> str:
    """The run's name: SHA-256 of the canonical JSON of its determining inputs (24 hex)."""
    return sha256(canonical(inputs))[:24]


def check_name(name: str, field: str = "name") -> str:
    """``name`` if it can name a file inside the store, else an :class:`InputError`: a sweep
    named ``../x`` or ``/tmp/x`` would write outside it."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise InputError(f"{name!r} is not a plain name: use letters, digits and _ . + = - "
                         "(at most 128, not starting with a dot or a dash), no '/' or '..'",
                         field=field)
    return name


class Store:
    """A results directory (created on first write)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.runs = self.root / "runs"

    def is_store(self) -> bool:
        """Whether the directory holds a store (a sweep has written into it)."""
        return any((self.root / d).is_dir() for d in STORE_FOLDERS)

    def done(self, h: str) -> bool:
        """Whether run ``h`` is finished and whole (an unreadable run is not done)."""
        return self.problem(self.runs / h) is None

    def problem(self, d: Path) -> str | None:
        """Why run directory ``d`` is not a whole finished run, or ``None`` if it is."""
        summary = self._summary(d)
        return summary if isinstance(summary, str) else None

    def _summary(self, d: Path) -> dict[str, Any] | str:
        """The summary of run directory ``d``, or the reason it cannot be trusted."""
        try:
            text = (d / SUMMARY).read_bytes()
        except FileNotFoundError:
            return "no summary"
        except OSError as exc:
            return f"summary unreadable ({exc.strerror or exc})"
        if not text.strip():
            return "summary empty"
        try:
            s = json.loads(text)
        except (ValueError, RecursionError) as exc:  # truncated, not UTF-8, not JSON
            return f"summary truncated or corrupt ({' '.join(str(exc).split())[:80]})"
        why = _summary_shape(s, d.name)
        if why is not None:
            return why
        jobs = d / JOBS
        size = s.get("jobs_bytes")
        if isinstance(size, int) and not isinstance(size, bool):
            try:
                actual = jobs.stat().st_size
            except OSError:
                return "jobs file missing"
            if actual != size:
                return f"jobs file truncated ({actual} of {size} bytes)"
        elif jobs.exists() and not _whole_gzip(jobs):  # (written before sizes were recorded)
            return "jobs file truncated or corrupt"
        return s

    def write_run(self, h: str, summary: Mapping[str, Any], jobs_csv_gz: bytes | None) -> Path:
        """Write a run atomically: into a temporary directory, renamed to ``runs/<h>``.

        Another writer of the same run (a second sweep on the store) may finish first: its
        whole run is kept; a run directory that is not whole is replaced.
        """
        self.runs.mkdir(parents=True, exist_ok=True)
        final = self.runs / h
        tmp = self.runs / _temporary_name(h)
        tmp.mkdir()
        try:
            summary = dict(summary)
            if jobs_csv_gz is not None:
                (tmp / JOBS).write_bytes(jobs_csv_gz)
                summary["jobs_bytes"] = len(jobs_csv_gz)
            text = json.dumps(summary, indent=1, sort_keys=False, default=_plain,
                              allow_nan=True)
            with open(tmp / SUMMARY, "w") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            self._install(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        failed = self.root / "failed" / f"{h}.json"
        with contextlib.suppress(FileNotFoundError):  # (another writer may remove it too)
            failed.unlink()
        return final

    def _install(self, tmp: Path, final: Path) -> None:
        """Rename ``tmp`` to ``final``; a whole run already there wins, a broken one is moved
        aside first (renamed, so that two writers never remove each other's directory)."""
        for _ in range(3):
            if final.exists():
                if self.done(final.name):  # someone else finished it first
                    shutil.rmtree(tmp, ignore_errors=True)
                    return
                aside = final.with_name(_temporary_name(final.name))
                with contextlib.suppress(FileNotFoundError):
                    os.rename(final, aside)
                shutil.rmtree(aside, ignore_errors=True)
            try:
                os.rename(tmp, final)
                return
            except OSError:  # another writer's rename came first ("already there")
                if not final.exists():
                    raise
        if not self.done(final.name):
            raise InputError("another writer keeps replacing this run", source=str(final))
        shutil.rmtree(tmp, ignore_errors=True)

    def write_failure(self, h: str, record: Mapping[str, Any]) -> Path:
        path = self.root / "failed" / f"{h}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{_temporary_name(h)}.json")
        tmp.write_text(json.dumps(record, indent=1, default=_plain))
        os.replace(tmp, path)
        return path

    def save_spec(self, name: str, text: str) -> Path:
        path = self.root / "specs" / f"{check_name(name)}-{sha256(text)[:8]}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():  # (written whole, then renamed: a reader never sees a part)
            tmp = path.with_name("." + _temporary_name("spec") + ".yaml")
            tmp.write_text(text)
            os.replace(tmp, path)
        return path

    def summaries(self) -> list[dict[str, Any]]:
        """The summaries of the whole finished runs; the others are logged and left out."""
        if not self.runs.is_dir():
            return []
        out = []
        for d in sorted(self.runs.iterdir()):
            if d.name.startswith(".") or not d.is_dir():
                continue
            s = self._summary(d)
            if isinstance(s, str):
                log.warning("%s: %s; left out (the next sweep runs it again)", d, s)
            else:
                out.append(s)
        return out

    def unreadable_runs(self) -> dict[str, str]:
        """The run directories that are not whole finished runs, with the reason of each."""
        if not self.runs.is_dir():
            return {}
        return {d.name: why for d in sorted(self.runs.iterdir())
                if not d.name.startswith(".") and d.is_dir()
                and (why := self.problem(d)) is not None}

    def clean_temporaries(self) -> int:
        """Remove the temporaries left by writers that died (killed while writing); those of
        a writer still running (another sweep on this store) are kept. Returns how many."""
        n = 0
        for folder, pattern in ((self.runs, ".tmp-*"), (self.root / "failed", ".*.json"),
                                (self.root / "specs", ".*.yaml")):
            if not folder.is_dir():
                continue
            for d in folder.glob(pattern):
                if _writer_alive(d):
                    continue
                if d.is_dir():
                    shutil.rmtree(d, ignore_errors=True)
                else:
                    d.unlink(missing_ok=True)
                n += 1
        return n

    def jobs_frame(self, h: str):
        """The per-job outcomes of run ``h`` as a DataFrame (``attrs["source"]``: its file,
        which :func:`bbopt.analysis.frames.from_jobs_csv` names when a column is wrong)."""
        import pandas as pd

        path = self.runs / h / JOBS
        if not path.is_file():
            raise InputError("has no per-job outcomes", source=str(path.parent))
        try:
            frame = pd.read_csv(path, compression="gzip", dtype={"job_id": str, "user": str})
        except (EOFError, OSError, zlib.error, ValueError, UnicodeDecodeError) as exc:
            raise InputError(f"truncated or corrupt ({type(exc).__name__}); run the sweep "
                             "again to re-run it", source=str(path)) from None
        frame.attrs["source"] = str(path)  # (named by the checks of what reads it)
        return frame


def _summary_shape(s: Any, h: str) -> str | None:
    """What a summary lacks of what :func:`collect` and the report read, or ``None``."""
    if not isinstance(s, dict) or s.get("hash") != h:
        return "summary does not name its run"
    params, metrics, prov = s.get("params"), s.get("metrics"), s.get("provenance")
    if s.get("kind") == "solver-run":  # a backend on one instance (bbopt.bench.run)
        ok = isinstance(params, dict) and isinstance(metrics, dict) and "status" in metrics
        return None if ok else "summary holds no solver metrics"
    if not isinstance(params, dict) or not isinstance(params.get("policy"), str):
        return "summary names no policy"
    if not isinstance(metrics, dict) or any(isinstance(v, dict | list)
                                            for v in metrics.values()):
        return "summary holds no metrics"
    platform = prov.get("hash_inputs", {}).get("platform") if isinstance(prov, dict) and \
        isinstance(prov.get("hash_inputs"), dict) else None
    if not isinstance(platform, dict) or not all(
            isinstance(platform.get(k), int | float) and not isinstance(platform.get(k), bool)
            for k in ("nodes", "bb")):
        return "summary lacks the provenance of its platform"
    return None


def _temporary_name(h: str) -> str:
    """``.tmp-<h>-<pid>-<random>-<host>``: whose it is, so that only a dead writer's is removed."""
    return f".tmp-{h}-{os.getpid()}-{uuid.uuid4().hex[:8]}-{socket.gethostname()}"


def _writer_alive(path: Path) -> bool:
    """Whether the writer of temporary ``path`` may still be running: its process lives on
    this host, or it is on another host and the temporary is younger than a day."""
    try:
        age = time.time() - path.lstat().st_mtime
    except OSError:
        return False
    parts = path.name.lstrip(".").split("-", 4)  # tmp, hash, pid, random, host
    if len(parts) < 4 or not parts[2].isdigit():
        return age < STALE_SECONDS
    host = parts[4].removesuffix(".json").removesuffix(".yaml") if len(parts) == 5 else None
    if host is not None and host != socket.gethostname():
        return age < STALE_SECONDS
    pid = int(parts[2])
    if pid == os.getpid():
        return False  # (this process writes nothing while it cleans)
    from bbopt.analysis.workers import process_alive

    return process_alive(pid)


def _whole_gzip(path: Path) -> bool:
    """Whether ``path`` is a complete gzip stream (read through, never kept in memory)."""
    try:
        with gzip.open(path, "rb") as fh:
            while fh.read(1 << 20):
                pass
        return True
    except (EOFError, OSError, zlib.error):
        return False


def gzip_csv(rows, header) -> bytes:
    """Rows of strings as gzipped CSV bytes (deterministic: no timestamp in the gzip header)."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    # level 6: a third of level 9's time (the driver's default), files 1 % larger
    return gzip.compress(buf.getvalue().encode(), compresslevel=6, mtime=0)


def collect(root: str | Path, *, include_timing: bool = True):
    """The store as one tidy DataFrame: one row per run, grid coordinates and options as
    columns, then every metric, then provenance (bbopt version, host, times).

    Rows are sorted by workload, part, platform, policy, seed, budget and execution.
    ``include_timing=False`` leaves out the columns that depend on the machine's load
    (decision times, wall times, host, dates), e.g. to compare two executions of one sweep.
    """
    import pandas as pd

    store = Store(root)
    if not store.root.is_dir():
        raise InputError("no such results directory", source=str(root))
    if not store.is_store():
        raise InputError(f"not a results store (no {'/, '.join(STORE_FOLDERS)}/ folder: "
                         "bbopt sweep SPEC --out DIR writes one)", source=str(root))
    rows = []
    for s in store.summaries():
        row: dict[str, Any] = {"run": s["hash"], "sweep": s.get("sweep", "")}
        row.update(s["params"])
        for k, v in sorted(s.get("options", {}).items()):
            row[f"opt.{k}"] = v if isinstance(v, (int, float, str, bool)) or v is None \
                else json.dumps(v, default=_plain)
        row.update({k: (math.nan if v is None else v) for k, v in s["metrics"].items()})
        prov = s.get("provenance", {})
        row["bbopt_version"] = prov.get("bbopt_version")
        row["workload_sha256"] = prov.get("workload", {}).get("content_sha256")
        row["part_jobs"] = prov.get("workload", {}).get("part_jobs")
        row["host"] = prov.get("host")
        row["started_at"] = prov.get("started_at")
        row["finished_at"] = prov.get("finished_at")
        row["wall_time"] = prov.get("wall_time")
        row["cpu_time"] = prov.get("cpu_time")  # the worker's CPU seconds for the run
        rows.append(row)
    frame = pd.DataFrame(rows)
    if frame.empty:
        return frame
    keys = [k for k in ("workload", "part", "platform", "policy", "seed", "budget",
                        "execution") if k in frame]
    frame = frame.sort_values(keys, kind="stable", na_position="first").reset_index(drop=True)
    if not include_timing:
        frame = frame[[c for c in frame.columns if not c.startswith(TIMING_PREFIXES)]]
    return frame


def write_table(frame, path: str | Path) -> Path:
    """CSV, or Parquet when the name ends in ``.parquet`` (needs the ``parquet`` extra)."""
    path = Path(path)
    if path.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise InputError("Parquet needs pyarrow: pip install 'bbopt[parquet]'",
                             source=str(path)) from None
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, index=False)
    return path

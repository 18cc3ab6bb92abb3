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
"""

from __future__ import annotations

import gzip
import hashlib
import json
import math
import os
import shutil
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.errors import InputError

SUMMARY = "summary.json"
JOBS = "jobs.csv.gz"
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


class Store:
    """A results directory (created on first write)."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.runs = self.root / "runs"

    def done(self, h: str) -> bool:
        return (self.runs / h / SUMMARY).is_file()

    def write_run(self, h: str, summary: Mapping[str, Any], jobs_csv_gz: bytes | None) -> Path:
        """Write a run atomically: into a temporary directory, renamed to ``runs/<h>``."""
        self.runs.mkdir(parents=True, exist_ok=True)
        final = self.runs / h
        tmp = self.runs / f".tmp-{h}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        tmp.mkdir()
        try:
            if jobs_csv_gz is not None:
                (tmp / JOBS).write_bytes(jobs_csv_gz)
            text = json.dumps(summary, indent=1, sort_keys=False, default=_plain,
                              allow_nan=True)
            with open(tmp / SUMMARY, "w") as fh:
                fh.write(text)
                fh.flush()
                os.fsync(fh.fileno())
            if final.exists():
                if (final / SUMMARY).is_file():  # someone else finished it first
                    shutil.rmtree(tmp)
                    return final
                shutil.rmtree(final)
            os.rename(tmp, final)
        except BaseException:
            shutil.rmtree(tmp, ignore_errors=True)
            raise
        failed = self.root / "failed" / f"{h}.json"
        if failed.exists():
            failed.unlink()
        return final

    def write_failure(self, h: str, record: Mapping[str, Any]) -> Path:
        path = self.root / "failed" / f"{h}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(record, indent=1, default=_plain))
        os.replace(tmp, path)
        return path

    def save_spec(self, name: str, text: str) -> Path:
        path = self.root / "specs" / f"{name}-{sha256(text)[:8]}.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(text)
        return path

    def summaries(self) -> list[dict[str, Any]]:
        if not self.runs.is_dir():
            return []
        out = []
        for d in sorted(self.runs.iterdir()):
            f = d / SUMMARY
            if not d.name.startswith(".") and f.is_file():
                out.append(json.loads(f.read_text()))
        return out

    def clean_temporaries(self) -> int:
        """Remove directories left by runs killed while writing; returns how many."""
        if not self.runs.is_dir():
            return 0
        n = 0
        for d in self.runs.glob(".tmp-*"):
            shutil.rmtree(d, ignore_errors=True)
            n += 1
        return n

    def jobs_frame(self, h: str):
        """The per-job outcomes of run ``h`` as a DataFrame."""
        import pandas as pd

        path = self.runs / h / JOBS
        if not path.is_file():
            raise InputError("has no per-job outcomes", source=str(path.parent))
        return pd.read_csv(path, compression="gzip", dtype={"job_id": str, "user": str})


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

"""Result files that are never half-written, never silently overwritten, and say where they
came from.

Every file the CLI writes goes through :func:`atomic_path`: it is written under a temporary name
in the same directory and renamed over the final name only when complete, so an interrupt or a
full disk leaves either the old file or the new one, never a truncated file that still parses.
:func:`check_out_dir` and :func:`check_plot_path` run before any simulation starts, so a bad
``--out`` or ``--plot`` fails at once (exit 2) instead of after hours of work; existing results
are not overwritten without ``--force``. :func:`provenance` is the record every
``summary.json`` carries: bbopt version, command line, workload file digest, seed, platform,
policy options, budgets and start time.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bbopt.errors import InputError

#: Image formats the plot can be written in (matplotlib picks the format from the extension).
IMAGE_SUFFIXES = (".png", ".pdf", ".svg", ".jpg", ".jpeg", ".eps", ".ps", ".tif", ".tiff",
                  ".webp")


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary path next to ``path`` (same suffix) to write to; renamed to ``path`` when the
    block ends without an exception, removed otherwise."""
    path = Path(path)
    import tempfile  # (with shutil and random: only when a file is written)

    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=f".tmp{path.suffix}",
                               dir=path.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        with open(tmp, "rb+") as fh:  # on disk before the rename makes it visible
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())  # as an ordinary open() would (mkstemp gives 0600)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def streamed_csv(path: str | Path, run):
    """``run(on_job_end)`` (a simulation) with its jobs.csv written to ``path`` as jobs end
    (:class:`~bbopt.simulation.result.JobsCsvStream`), under a temporary name renamed when the
    run is over; returns the run's result."""
    from bbopt.simulation.result import JobsCsvStream

    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        stream = JobsCsvStream(fh)
        result = run(stream.ended)
        stream.close(result)
    return result


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def echo(text: str = "", end: str = "\n") -> None:
    """Print to stdout. A reader that went away (``bbopt ... | head``) never stops the work: the
    rest of the output goes to /dev/null and result files are still written."""
    try:
        sys.stdout.write(text + end)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(path)


def write_json(path: str | Path, data: Any) -> Path:
    """Write ``data`` as indented JSON to ``path`` atomically."""
    import json

    return write_text(path, json.dumps(data, indent=2, default=str) + "\n")


def check_out_dir(out: str | Path, names: Iterable[str], force: bool) -> Path:
    """Make sure results can be written to directory ``out`` before any work is done.

    ``out`` may exist (a directory) or be created; a file of that name, an unwritable place, or
    (without ``force``) any of ``names`` already there is an :class:`InputError`.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError("exists and is not a directory", source=str(out), field="--out")
    _check_writable(out, "--out")
    if out.is_dir() and not force:
        existing = sorted(n for n in names if (out / n).exists())
        if existing:
            more = f" and {len(existing) - 1} more" if len(existing) > 1 else ""
            raise InputError(f"would overwrite {existing[0]}{more}; choose another --out or "
                             "add --force", source=str(out), field="--out")
    out.mkdir(parents=True, exist_ok=True)
    return out


def check_plot_path(plot: str | Path, force: bool) -> Path:
    """Make sure the plot can be written: an image extension, a writable place, matplotlib
    installed and (without ``force``) no existing file of that name."""
    plot = Path(plot)
    if plot.suffix.lower() not in IMAGE_SUFFIXES:
        raise InputError(f"needs an image extension ({', '.join(IMAGE_SUFFIXES)})",
                         source=str(plot), field="--plot")
    if plot.is_dir():
        raise InputError("is a directory", source=str(plot), field="--plot")
    if plot.exists() and not force:
        raise InputError("exists; choose another name or add --force", source=str(plot),
                         field="--plot")
    if not plot.parent.is_dir():
        raise InputError("no such directory", source=str(plot.parent), field="--plot")
    _check_writable(plot.parent, "--plot")
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError("needs matplotlib: pip install 'bbopt[plot]'", field="--plot") from None
    return plot


def check_out_file(path: str | Path, force: bool, flag: str = "--out") -> Path:
    """Make sure a result file can be written before any work: not a directory, a writable
    place and (without ``force``) no existing file of that name."""
    path = Path(path)
    if path.is_dir():
        raise InputError("is a directory", source=str(path), field=flag)
    if path.exists() and not force:
        raise InputError("exists; choose another name or add --force", source=str(path),
                         field=flag)
    _check_writable(path.parent, flag)
    return path


def _check_writable(path: Path, flag: str) -> None:
    """The nearest existing ancestor of ``path`` must be a writable directory."""
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise InputError("is not a directory", source=str(probe), field=flag)
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError("is not writable", source=str(probe), field=flag)


def provenance(*, workload: Any, seed: int, platform: Any, policies: Iterable[str],
               options: dict[str, Any], budget_mode: str | None = None,
               started: datetime | None = None, command: list[str] | None = None
               ) -> dict[str, Any]:
    """What produced a result: enough to rerun it and to tell two results apart."""
    import shlex  # (json and shlex only when a file is written)

    from bbopt import __version__
    from bbopt.policies import policy_options

    policies = list(policies)
    budgets = {}
    for name in policies:
        accepted = policy_options(name)
        if "budget" in accepted:
            budgets[name] = options.get("budget", accepted["budget"])
    return {
        "bbopt_version": __version__,
        "command": shlex.join(["bbopt", *(sys.argv[1:] if command is None else command)]),
        "python": sys.version.split()[0],
        "started": (started or datetime.now(UTC)).isoformat(timespec="seconds"),
        "workload": {"name": workload.name, "path": workload.path, "sha256": workload.sha256,
                     "jobs": len(workload.jobs), "jobs_in_file": workload.total,
                     "skipped_records": len(workload.skipped)},
        "seed": seed,
        "platform": {"name": platform.name, "nodes": platform.nodes, "bb": platform.bb,
                     "topology": platform.topology is not None},
        "policies": policies,
        "policy_options": options,
        "budget_mode": budget_mode,
        "budgets": budgets,
    }


def run_file(name: str, kind: str = "jobs") -> str:
    """The file of policy ``name``'s ``kind`` (``jobs``, ``segments``) in an output folder:
    ``NAME_jobs.csv``, a path in the name (``rl:models/a.zip``) flattened (``rl:models_a.zip``)."""
    return f"{name.replace('/', '_').replace(chr(92), '_')}_{kind}.csv"


def write_run(out: Path, name: str, result: Any, jobs_csv: bool = True) -> None:
    """``out/NAME_jobs.csv`` (unless streamed already) and, when jobs were preempted, every run
    segment in ``out/NAME_segments.csv`` (:func:`run_file`)."""
    if jobs_csv:
        with atomic_path(out / run_file(name)) as tmp:
            result.to_csv(tmp)
    if len(result.segments) > len(result.jobs) - result.state.count("rejected"):
        with atomic_path(out / run_file(name, "segments")) as tmp:
            result.segments_to_csv(tmp)


def write_split(out: Path, table: Any, prov: dict[str, Any]) -> None:
    """A split comparison's files: the summary, the per-part values and ``summary.json``."""
    import json

    write_text(out / "split_summary.csv", table.to_csv(index=False))
    write_text(out / "split_parts.csv", table.attrs["raw"].to_csv(index=False))
    write_json(out / "summary.json", {"provenance": prov,
                                      "split": json.loads(table.to_json(orient="records"))})


def write_skipped(path: str | Path, skipped: list[tuple[int, str, str]]) -> Path:
    """The records a reader skipped, as CSV: line, reason, the record's text."""
    import csv
    import io

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["line", "reason", "record"])
    w.writerows(skipped)
    return write_text(path, buf.getvalue())

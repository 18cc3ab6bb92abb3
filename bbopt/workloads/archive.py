"""Where workload traces are found, and where the public ones come from.

One lookup rule for a trace named on the command line, in a sweep specification or passed to a
reader (:func:`bbopt.workloads.swf.read_swf`, :func:`bbopt.workloads.batsim.read_batsim`,
``bbopt slurm replay``): :func:`find_trace` takes the path as given (relative to the current
directory), then the same relative path under ``$BBOPT_DATA``, then under the per-user data
directory (:func:`user_data_dir`, ``$XDG_DATA_HOME/bbopt`` or ``~/.local/share/bbopt``), where
``bbopt data fetch`` puts what it downloads.

:data:`TRACES` lists the public traces the papers bbopt follows use (Kopanski & Rzadca, Section
4.1, and Fan et al., Section 5, run the KTH-SP2 log of the Parallel Workloads Archive) with the
archive's address; :func:`fetch_trace` downloads one, decompresses it and writes it atomically,
or raises :class:`TraceUnavailable` saying where to put a copy fetched by hand;
:func:`found_trace` says where a catalogued trace already is (``bbopt data``, in
:mod:`bbopt.cli`, prints these).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bbopt.errors import BboptError, InputError

PWA = "https://www.cs.huji.ac.il/labs/parallel/workload"


@dataclass(frozen=True)
class Trace:
    """A public trace: the file name bbopt looks for, the archive's address and what it is."""

    name: str
    file: str
    url: str
    what: str


TRACES: dict[str, Trace] = {t.name: t for t in (
    Trace("KTH-SP2", "KTH-SP2-1996-2.1-cln.swf", f"{PWA}/l_kth_sp2/KTH-SP2-1996-2.1-cln.swf.gz",
          "KTH IBM SP2, Sep 1996 - Aug 1997, 100 nodes, 28,476 jobs (cleaned); Kopanski & "
          "Rzadca and Fan et al. run it"),
    Trace("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf",
          f"{PWA}/l_sdsc_sp2/SDSC-SP2-1998-4.2-cln.swf.gz",
          "SDSC IBM SP2, Apr 1998 - Apr 2000, 128 nodes, 59,715 jobs (cleaned)"),
    Trace("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf", f"{PWA}/l_ctc_sp2/CTC-SP2-1996-3.1-cln.swf.gz",
          "Cornell Theory Center IBM SP2, Jun 1996 - May 1997, 338 nodes, 77,222 jobs "
          "(cleaned)"),
)}


class TraceUnavailable(BboptError):
    """A public trace could not be downloaded; the message says where to put a copy."""


def user_data_dir() -> Path:
    """The per-user data directory: ``$XDG_DATA_HOME/bbopt``, else ``~/.local/share/bbopt``."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "bbopt"


def data_dirs() -> list[Path]:
    """The directories a relative trace name is looked up in after the current directory, in
    order: each entry of ``$BBOPT_DATA`` (``os.pathsep``-separated), then :func:`user_data_dir`.
    """
    dirs = [Path(d) for d in os.environ.get("BBOPT_DATA", "").split(os.pathsep) if d]
    return [*dirs, user_data_dir()]


def find_trace(path: str | Path) -> Path:
    """The file ``path`` names, by the one lookup rule (module docstring).

    An existing path is returned as it is; a missing absolute path raises
    :class:`~bbopt.errors.InputError` (``no such file``) without a search; a relative name that
    exists nowhere raises it naming every place looked in, and the ``bbopt data fetch``
    command when the name is a catalogued public trace.
    """
    p = Path(path)
    if p.exists():
        return p
    if p.is_absolute():
        raise InputError("no such file", source=str(path))
    for d in data_dirs():
        if (d / p).exists():
            return d / p
    env = os.environ.get("BBOPT_DATA")
    looked = ["the current directory", f"$BBOPT_DATA ({env})" if env else "$BBOPT_DATA (not set)",
              str(user_data_dir())]
    hint = ""
    known = [t for t in TRACES.values() if t.file == p.name or t.file + ".gz" == p.name]
    if known:
        hint = f"; `bbopt data fetch {known[0].name}` downloads it"
    raise InputError(f"no such file (looked in {', '.join(looked)}){hint}", source=str(path))


def found_trace(trace: Trace, directory: str | Path | None = None) -> Path | None:
    """Where the catalogued ``trace`` already is, plain or gzipped: in ``directory`` when
    given, else by the one lookup rule (module docstring); ``None`` when nowhere."""
    for file in (trace.file, trace.file + ".gz"):
        if directory is not None:
            if (Path(directory) / file).is_file():
                return Path(directory) / file
            continue
        try:
            return find_trace(file)
        except InputError:
            pass
    return None


def lookup(name: str) -> Trace:
    """The catalogued trace ``name`` (its short name, e.g. ``KTH-SP2``, or its file name)."""
    for t in TRACES.values():
        if name.lower() in (t.name.lower(), t.file.lower(), t.file.lower() + ".gz"):
            return t
    raise InputError(f"unknown trace {name!r}; known: {', '.join(TRACES)}", field="name")


def fetch_trace(name: str, directory: str | Path | None = None, *, url: str | None = None,
                timeout: float = 20.0, force: bool = False) -> Path:
    """Download the catalogued trace ``name`` into ``directory`` (default
    :func:`user_data_dir`), decompressed, and return its path.

    ``url`` replaces the archive's address (a mirror, or a ``file://`` copy); ``timeout`` bounds
    each network wait in seconds. The file is written under a temporary name and renamed when
    complete; an existing file is kept unless ``force``. When the archive cannot be reached,
    :class:`TraceUnavailable` says where to download the file by hand and where to put it.
    """
    import gzip  # (the readers import this module: the download's modules only when fetching)
    import shutil
    import tempfile
    import urllib.error
    import urllib.request

    trace = lookup(name)
    target = Path(directory) if directory is not None else user_data_dir()
    dest = target / trace.file
    if dest.exists() and not force:
        return dest
    source = url or trace.url
    target.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{trace.file}.", dir=target)
    try:
        with os.fdopen(fd, "wb") as out:
            try:
                with urllib.request.urlopen(source, timeout=timeout) as response:
                    stream = (gzip.GzipFile(fileobj=response) if source.endswith(".gz")
                              else response)
                    shutil.copyfileobj(stream, out, 1 << 20)
            except (urllib.error.URLError, OSError, EOFError) as exc:
                reason = getattr(exc, "reason", None) or exc
                raise TraceUnavailable(
                    f"could not download {trace.name} from {source} ({reason}); download it by "
                    f"hand, decompress it and put {trace.file} in {target} (or in a directory "
                    "named by $BBOPT_DATA)") from exc
        with open(tmp, "rb") as check:
            if check.read(1) != b";":
                raise TraceUnavailable(f"{source} did not give a Standard Workload Format file "
                                       f"(SWF files start with ';' header lines)")
        os.replace(tmp, dest)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return dest

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
or raises :class:`TraceUnavailable` saying where to put a copy fetched by hand.
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


def add_parser(sub) -> None:
    """``bbopt data list`` and ``bbopt data fetch NAME`` (the CLI's hook)."""
    d = sub.add_parser("data", help="public workload traces: where they come from, fetch them")
    dsub = d.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    ls = dsub.add_parser("list", help="the catalogued traces, their archive and where each is "
                         "found by the lookup rule")
    ls.set_defaults(func=_cmd_list)
    f = dsub.add_parser("fetch", help="download a catalogued trace into the per-user data "
                        "directory (or --dir)")
    f.add_argument("name", help=f"trace name: {', '.join(TRACES)} (or its file name)")
    f.add_argument("--dir", metavar="DIR", default=None,
                   help=f"where to put it (default: {user_data_dir()}, searched by every "
                   "command)")
    f.add_argument("--url", metavar="URL", default=None,
                   help="download from this address instead of the archive (a mirror, file://)")
    f.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS",
                   help="give up a network wait after this many seconds (default: 20)")
    f.add_argument("--force", action="store_true", help="download again over an existing file")
    f.set_defaults(func=_cmd_fetch)


def _cmd_list(args) -> int:
    for t in TRACES.values():
        try:
            where = str(find_trace(t.file))
        except InputError:
            where = f"not found (bbopt data fetch {t.name})"
        print(f"{t.name:10s} {t.file}\n    {t.what}\n    from {t.url}\n    here: {where}")
    print(f"lookup order: current directory, $BBOPT_DATA, {user_data_dir()}")
    return 0


def _cmd_fetch(args) -> int:
    trace = lookup(args.name)
    dest = Path(args.dir or user_data_dir()) / trace.file
    if dest.exists() and not args.force:
        print(f"{dest} exists (--force downloads it again)")
        return 0
    print(f"downloading {trace.url if args.url is None else args.url} ...", flush=True)
    path = fetch_trace(trace.name, args.dir, url=args.url, timeout=args.timeout,
                       force=args.force)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0

"""Loading workloads, platforms and I/O topologies by name or file (YAML/JSON documents read
with errors that name the file).

The edge where user input becomes SI values: ``"480GB"`` -> 4.8e11 bytes, ``"2h"`` -> 7200 s. A
workload is a file (``.swf``, ``.swf.gz``, Batsim ``.json``), the
embedded default (``None``: the seeded KTH-like synthetic trace of
:mod:`bbopt.workloads.synthetic`), or a generated set of periodic I/O applications
``jeannot:FAMILY:ALPHA[:APPS]`` (which brings its machine along). A platform is a name
(``kopanski``, ``kopanski:named`` with 12 named 40 GB BB nodes placed first fit,
``kopanski:proximity`` placed as the authors' Dragonfly scheduler does; with an I/O tree:
``kopanski-dragonfly`` (``:named``, ``:proximity`` as for ``kopanski``), ``cts1`` or
``cts1:0.3`` for 30 % PFS underprovisioning), a JSON/YAML file ``{nodes: 96, bb: "480 GB"}``,
or a topology file (Flux JGF ``{"graph": ...}`` or the nested description of
:mod:`bbopt.topology` with a ``tree``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bbopt.core import Job, Platform
from bbopt.errors import InputError, UnknownNameError, check_keys
from bbopt.limits import MAX_JOBS, MAX_NODES, check_count
from bbopt.registry import Registry
from bbopt.resources import parse_bytes
from bbopt.units import read_document

if TYPE_CHECKING:
    from bbopt.topology.tree import IOTree

# (bbopt.topology is imported where a topology is read or built: a named platform without
# one, and a workload, need none of it)


def load_topology(path: str | Path) -> IOTree:
    """Read a topology file: JGF (``{"graph": ...}``) or the nested YAML/JSON description."""
    from bbopt.topology.formats import topology_from_data

    return topology_from_data(read_document(path), str(path))


def load_platform_with_topology(path: str | Path) -> Platform:
    """A platform from a topology file (JGF or description)."""
    from bbopt.topology.formats import platform_from_topology

    return platform_from_topology(load_topology(path))


def _cts1(arg: str | None) -> Platform:
    from bbopt.topology.machines import cts1

    try:
        return cts1(float(arg) if arg else 0.0)
    except ValueError:
        raise InputError(f"cts1 takes an underprovisioning fraction, e.g. cts1:0.3, got {arg!r}",
                         field="platform") from None


def _dragonfly(arg: str | None) -> Platform:
    """Kopanski's Dragonfly with its I/O tree: BB as one pool (no argument), or on the 12 named
    BB nodes placed first fit (``named``) or near the job's compute nodes (``proximity``, the
    authors' placement)."""
    from dataclasses import replace

    from bbopt.topology.machines import kopanski_dragonfly

    if arg not in (None, "pool", "named", "proximity"):
        raise InputError(f"kopanski-dragonfly takes pool, named or proximity, got {arg!r}",
                         field="platform")
    tree = kopanski_dragonfly()
    if arg in (None, "pool"):
        return tree
    named = _kopanski(arg)
    return replace(tree, name=f"{tree.name}-{arg}", bb_nodes=named.bb_nodes,
                   bb_proximity=named.bb_proximity)


def _kopanski(arg: str | None) -> Platform:
    if arg not in (None, "pool", "named", "proximity"):
        raise InputError(f"kopanski takes pool, named (BB nodes, first fit) or proximity (BB "
                         f"nodes, the authors' Dragonfly placement), e.g. kopanski:named, got "
                         f"{arg!r}", field="platform")
    return Platform.kopanski(named_bb=arg in ("named", "proximity"),
                             bb_placement="proximity" if arg == "proximity" else "first-fit")


#: Named platforms: ``NAME[:ARG]`` -> ``factory(ARG or None)``; plug-ins through the entry
#: points of the group ``bbopt.platforms``.
PLATFORMS = Registry("platform", group="bbopt.platforms")
PLATFORMS.add("kopanski", _kopanski, "Kopanski & Rzadca's machine: 96 nodes, 480 GB of BB "
              "(kopanski:named, kopanski:proximity: 12 named 40 GB BB nodes)")
PLATFORMS.add("kopanski-dragonfly", _dragonfly, "Kopanski's machine with its Dragonfly I/O tree")
PLATFORMS.add("cts1", _cts1, "LLNL's CTS-1 I/O tree (Herbein et al.); cts1:0.3 underprovisions "
              "the PFS by 30 %")


#: The keys of a platform file (any other is refused, naming it).
PLATFORM_FILE_KEYS = frozenset({"nodes", "bb", "name", "node_ssd"})


def load_platform(spec: str | Path | None) -> Platform:
    """A named platform or a JSON/YAML file with ``nodes`` and ``bb`` (bytes or ``"480GB"``),
    optionally ``name`` and ``node_ssd`` (one size for every node, or a list of one per node)."""
    if spec is None:
        return Platform.kopanski()
    name = str(spec)
    base, _, arg = name.partition(":")
    if base in PLATFORMS and not Path(name).exists():
        return PLATFORMS[base](arg or None)
    path = Path(name)
    if not path.exists():
        raise UnknownNameError("platform (name or file)", name, list(PLATFORMS))
    data = read_document(path)
    if not isinstance(data, dict):
        raise InputError("must be a mapping with 'nodes' and 'bb'", source=name)
    if "graph" in data or "tree" in data:  # an I/O topology: JGF or the nested description
        from bbopt.topology.formats import platform_from_topology, topology_from_data

        return platform_from_topology(topology_from_data(data, name))
    check_keys(data, PLATFORM_FILE_KEYS, source=name)
    if "nodes" not in data:
        raise InputError("is missing", source=name, field="nodes")
    nodes = check_count(data["nodes"], "nodes", high=MAX_NODES, source=name)
    try:
        bb = parse_bytes(data.get("bb", 0), "bb")
        ssd = data.get("node_ssd")
        if ssd is not None:  # one size for every node, or a list of one per node
            ssd = tuple(parse_bytes(x, "node_ssd") for x in ssd) if isinstance(ssd, list) \
                else (parse_bytes(ssd, "node_ssd"),) * nodes
        return Platform(nodes=nodes, bb=bb, name=str(data.get("name", path.stem)),
                        node_ssd=ssd)
    except InputError as exc:
        raise InputError(exc.reason, source=name, field=exc.field) from None


def bb_rules_for(platform: Platform | None):
    """The generator rules of Kopanski's BB model for ``platform`` (fit-in-platform cap and
    short jobs, :class:`bbopt.workloads.bb.KopanskiRules`), or ``None`` off Kopanski's
    platforms. With named BB nodes the cap follows them (their count and smallest capacity)."""
    from bbopt.workloads.bb import KOPANSKI_RULES, KopanskiRules

    if platform is None or not platform.name.startswith("kopanski"):
        return None
    if platform.bb_nodes is not None:
        return KopanskiRules(bb_nodes=len(platform.bb_nodes),
                             bb_node_capacity=min(platform.bb_nodes))
    return KOPANSKI_RULES


@dataclass
class LoadedWorkload:
    """A workload as read, with what the reader left out and where it came from.

    ``skipped`` lists the records the reader dropped as ``(line, reason, text)`` (SWF: run
    time <= 0, no processor count); :attr:`sha256` is the file's digest (``None`` for the
    embedded workload); ``nb_res`` the machine size a Batsim file declares; ``total`` the number
    of jobs before ``first`` kept the first ones.
    """

    jobs: list[Job]
    name: str
    path: str | None = None
    digest: str | None = field(default=None, repr=False)  # (see sha256)
    skipped: list[tuple[int, str, str]] = field(default_factory=list)
    nb_res: int | None = None
    total: int = 0
    #: The machine size an SWF header declares (``MaxNodes``, else ``MaxProcs``).
    max_nodes: int | None = None

    @property
    def sha256(self) -> str | None:
        """The SHA-256 of the workload file (``None`` without one), computed when first asked:
        only the provenance of written results needs it, and hashing a trace (with OpenSSL's
        start) cost a run that writes nothing about a hundredth of its time."""
        if self.digest is None and self.path is not None and Path(self.path).is_file():
            self.digest = _sha256(Path(self.path))
        return self.digest

    def skipped_summary(self) -> str | None:
        """``"skipped 9 records: 8 runtime <= 0, 1 no processors"`` or ``None``."""
        if not self.skipped:
            return None
        counts = Counter(reason for _, reason, _ in self.skipped)
        parts = ", ".join(f"{n} {reason}" for reason, n in counts.most_common())
        return f"skipped {len(self.skipped)} records: {parts}"


def find_workload(path: str | Path) -> Path:
    """The file ``path`` names, by the one lookup rule (:func:`bbopt.workloads.archive.find_trace`:
    as given, then under ``$BBOPT_DATA``, then in the per-user data directory)."""
    from bbopt.workloads.archive import find_trace

    return find_trace(path)


def read_workload(path: str | Path | None, *, n_jobs: int | None = None, seed: int = 0,
                  bb: str = "auto", platform: Platform | None = None, bb_rules: bool = True,
                  **reader_options: Any) -> LoadedWorkload:
    """Read a workload (see :func:`load_workload`) and say what was left out.

    ``n_jobs``: the size of the embedded workload (default 3000) or, for a file, keep only its
    first ``n_jobs`` jobs in submission order (``None``: all).
    """
    from bbopt.workloads.bb import with_lognormal_bb

    if bb not in ("auto", "lognormal", "none"):
        raise InputError(f"bb model must be auto, lognormal or none, got {bb!r}", field="bb")
    if n_jobs is not None:  # (before anything is drawn: 10^12 jobs would fill the memory)
        n_jobs = check_count(n_jobs, "jobs", high=MAX_JOBS)
    if path is None:  # drawn for Kopanski's platform (the default one): the generator's rules
        from bbopt.workloads.synthetic import kth_like

        nodes = platform.nodes if platform is not None else 96
        rules = bb_rules_for(platform or Platform.kopanski()) if bb_rules else None
        jobs = kth_like(n_jobs=n_jobs or 3000, seed=seed, nodes=nodes, bb=bb != "none",
                        rules=rules)
        return LoadedWorkload(jobs, "kth-like", total=len(jobs))
    if str(path).startswith("jeannot:"):  # periodic I/O applications (Jeannot et al.)
        from bbopt.workloads.generators.jeannot import from_spec

        jobs = from_spec(str(path), seed).jobs
        return LoadedWorkload(jobs, str(path), total=len(jobs))
    p = find_workload(path)
    if p.is_dir():
        raise InputError("is a directory, not a workload file", source=str(path))
    name = p.name
    for suffix in (".gz", ".bb", ".swf", ".json"):
        name = name.removesuffix(suffix)
    out = LoadedWorkload([], name, str(p))
    drawn = False
    if p.name.endswith((".swf", ".swf.gz", ".swf.bb", ".swf.bb.gz")):
        from bbopt.workloads.bb import lognormal_bb_column
        from bbopt.workloads.swf import read_swf

        def draw(nodes, walltime, has_bb: bool):  # (the draw below, on the reader's columns)
            if n_jobs is not None or bb == "none" or (bb == "auto" and has_bb):
                return None
            return lognormal_bb_column(nodes, walltime, seed,
                                       rules=bb_rules_for(platform) if bb_rules else None)

        trace = read_swf(p, draw_bb=draw, **reader_options)
        out.jobs, out.skipped, drawn = trace.jobs, trace.skipped_records, trace.bb_drawn
        out.max_nodes = trace.max_nodes
    elif p.name.endswith(".json"):
        from bbopt.workloads.batsim import read_batsim

        w = read_batsim(p, **reader_options)
        out.jobs, out.nb_res = w.jobs, w.nb_res
    else:
        readers = READERS.names()
        reader = next((READERS[suf] for suf in readers if p.name.endswith(suf)), None)
        if reader is None:
            known = [".swf", ".swf.gz", ".swf.bb", ".json", *readers]
            raise InputError(f"unknown workload format; known: {', '.join(known)}",
                             source=str(p))
        out.jobs = reader(p)
    out.total = len(out.jobs)
    if n_jobs is not None and n_jobs < len(out.jobs):
        order = sorted(range(len(out.jobs)), key=lambda k: out.jobs[k].submit)[:n_jobs]
        out.jobs = [out.jobs[k] for k in sorted(order)]
    if not drawn and (bb == "lognormal"
                      or (bb == "auto" and not any(j.bb > 0 for j in out.jobs))):
        out.jobs = with_lognormal_bb(out.jobs, seed,
                                     rules=bb_rules_for(platform) if bb_rules else None)
    return out


def load_workload(path: str | Path | None, *, n_jobs: int | None = None, seed: int = 0,
                  bb: str = "auto", platform: Platform | None = None, bb_rules: bool = True,
                  **reader_options: Any) -> tuple[list[Job], str]:
    """Jobs and a workload name.

    ``path=None`` is the embedded default (``n_jobs`` seeded KTH-like jobs, default 3000); for a
    file, ``n_jobs`` keeps its first jobs (default all). A bare file name that does not exist
    here is looked up in ``$BBOPT_DATA``. ``bb``: ``"auto"`` draws Kopanski's log-normal BB
    requests when the workload has none, ``"lognormal"`` always draws them, ``"none"`` keeps
    the file's values. ``bb_rules``: when the requests are drawn for one of Kopanski's
    platforms, apply the two rules of the authors' generator (:func:`bb_rules_for`; default
    on). :func:`read_workload` also says which records were skipped.
    """
    w = read_workload(path, n_jobs=n_jobs, seed=seed, bb=bb, platform=platform,
                      bb_rules=bb_rules, **reader_options)
    return w.jobs, w.name


def _sha256(path: Path) -> str:
    import hashlib

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_workload_and_platform(path: str | Path | None, platform: str | Path | None = None,
                               **options: Any) -> tuple[LoadedWorkload, Platform]:
    """The workload (:func:`read_workload` with ``options``) and the platform it runs on:
    ``platform`` (a name or file) when given, else the one an SWF header declares, else the
    machine size a Batsim file declares (``nb_res``) with Kopanski's BB per node, else
    Kopanski's machine."""
    declared = declared_platform(path) if platform is None else None
    chosen = declared or load_platform(platform)
    w = read_workload(path, platform=chosen, **options)
    if platform is None and declared is None and w.nb_res is not None:
        from bbopt.core import GB

        per_node = Platform.kopanski().bb / Platform.kopanski().nodes
        chosen = Platform(nodes=w.nb_res, bb=w.nb_res * per_node,
                          name=f"{w.name} (nb_res {w.nb_res}, {per_node / GB:g} GB BB/node)")
    return w, chosen


def batsim_jobs(doc: Any, source: str = "<json>") -> list[Job]:
    """The jobs of a Batsim workload document already parsed from JSON (e.g. a job and its
    profile from a message of Batsim's protocol), read as a Batsim workload file is
    (:func:`bbopt.workloads.batsim.parse_batsim`; Kopanski's I/O-aware parts read plainly)."""
    from bbopt.workloads.batsim import parse_batsim

    return parse_batsim(doc, source=source, io_aware="plain").jobs


def batsim_document(jobs: list[Job], nb_res: int) -> dict[str, Any]:
    """The Batsim workload document of ``jobs`` with ``delay`` profiles holding their exact
    runtimes (:func:`bbopt.workloads.batsim.to_batsim`)."""
    from bbopt.workloads.batsim import to_batsim

    return to_batsim(jobs, nb_res=nb_res, profile_type="delay")


def declared_platform(path: str | Path | None, bb_unit: float = 1e9) -> Platform | None:
    """The platform an SWF trace declares in its header, if it declares a burst buffer.

    CQSim's BBSched traces carry ``; BurstBuffer: <capacity>`` (in ``bb_unit``, GB by default,
    as :func:`bbopt.workloads.swf.read_swf` reads their BB column) next to ``; MaxNodes:``;
    such a trace brings its machine along. Only the header is read.
    """
    if path is not None and str(path).startswith("jeannot:"):  # its generator's machine
        from bbopt.workloads.generators.jeannot import MIRA_NODES

        family = str(path).split(":")[1:2]
        mira = bool(family) and family[0].upper().startswith("M")
        return Platform(nodes=MIRA_NODES if mira else 2048,
                        name="mira" if mira else "uniform-2048")
    if path is None or not str(path).endswith((".swf", ".swf.gz")):
        return None
    import zlib

    try:
        p = find_workload(path)
    except InputError:
        return None
    if not p.is_file():
        return None
    header: dict[str, str] = {}
    opener = open
    if p.suffix == ".gz":
        import gzip  # (only for a gzipped trace)

        opener = gzip.open
    try:
        with opener(p, "rt", encoding="utf-8-sig", errors="replace") as fh:
            for line in fh:
                text = line.strip()
                if text and not text.startswith(";"):
                    break
                key, sep, value = text[1:].partition(":")
                if sep:
                    header.setdefault(key.strip(), value.strip())
    except (OSError, EOFError, zlib.error) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot read: {reason or type(exc).__name__}", source=str(p)) from None
    if "BurstBuffer" not in header:
        return None
    nodes = next((header[k] for k in ("MaxNodes", "MaxProcs") if k in header), None)
    try:
        bb = float(header["BurstBuffer"].split()[0]) * bb_unit
        n = int(nodes.split()[0]) if nodes is not None else None
    except (ValueError, IndexError):
        raise InputError(f"cannot read the header value {header['BurstBuffer']!r}",
                         source=str(p), field="BurstBuffer") from None
    if n is None:
        raise InputError("declares a burst buffer but no MaxNodes/MaxProcs", source=str(p),
                         field="MaxNodes")
    name = p.name.removesuffix(".gz").removesuffix(".swf")
    try:  # (the platform checks the magnitudes: bbopt.limits)
        return Platform(nodes=n, bb=bb, name=name)
    except InputError as exc:
        raise InputError(exc.reason, source=str(p), field="MaxNodes" if exc.field == "nodes"
                         else "BurstBuffer") from None


#: Readers of other workload formats by file-name suffix (``reader(path) -> [Job]``), found
#: through the entry points of the group ``bbopt.workload_readers`` or registered with
#: ``READERS.add(".suffix", reader)``.
READERS = Registry("workload reader", group="bbopt.workload_readers")

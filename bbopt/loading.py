"""Loading workloads and platforms by name or file, and parsing quantities with units.

The edge where user input becomes SI values: ``"480GB"`` -> 4.8e11 bytes, ``"2h"`` -> 7200 s. A
workload is a file (``.swf``, ``.swf.gz``, BBSimulator's ``.swf.bb``, Batsim ``.json``) or the
embedded default (``None``: the seeded KTH-like synthetic trace of
:mod:`bbopt.workloads.synthetic`). A platform is a name (``kopanski``, ``kopanski:named`` with
12 named 40 GB BB nodes; with an I/O tree: ``kopanski-dragonfly``, ``cts1`` or ``cts1:0.3`` for
30 % PFS underprovisioning), a JSON/YAML file ``{nodes: 96, bb: "480 GB"}``, or a topology file
(Flux JGF ``{"graph": ...}`` or the nested description of :mod:`bbopt.topology` with a
``tree``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bbopt.core import Job, Platform
from bbopt.errors import InputError, UnknownNameError
from bbopt.topology.formats import platform_from_topology, topology_from_data
from bbopt.topology.machines import cts1, kopanski_dragonfly
from bbopt.units import parse_bytes, read_document


def _cts1(arg: str | None) -> Platform:
    try:
        return cts1(float(arg) if arg else 0.0)
    except ValueError:
        raise InputError(f"cts1 takes an underprovisioning fraction, e.g. cts1:0.3, got {arg!r}",
                         field="platform") from None


def _dragonfly(arg: str | None) -> Platform:
    return kopanski_dragonfly()


def _kopanski(arg: str | None) -> Platform:
    if arg not in (None, "pool", "named"):
        raise InputError(f"kopanski takes pool or named (BB nodes), e.g. kopanski:named, got "
                         f"{arg!r}", field="platform")
    return Platform.kopanski(named_bb=arg == "named")


PLATFORMS: dict[str, Callable[[str | None], Platform]] = {
    "kopanski": _kopanski,
    "kopanski-dragonfly": _dragonfly,
    "cts1": _cts1,
}


def load_platform(spec: str | Path | None) -> Platform:
    """A named platform or a JSON/YAML file with ``nodes`` and ``bb`` (bytes or ``"480GB"``)."""
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
        return platform_from_topology(topology_from_data(data, name))
    if "nodes" not in data:
        raise InputError("is missing", source=name, field="nodes")
    nodes = data["nodes"]
    if isinstance(nodes, bool) or not isinstance(nodes, int):
        raise InputError(f"must be an integer, got {nodes!r}", source=name, field="nodes")
    try:
        bb = parse_bytes(data.get("bb", 0), "bb")
        return Platform(nodes=nodes, bb=bb, name=str(data.get("name", path.stem)))
    except InputError as exc:
        raise InputError(str(exc).split(": ", 1)[-1], source=name, field=exc.field) from None


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


def load_workload(path: str | Path | None, *, n_jobs: int = 3000, seed: int = 0,
                  bb: str = "auto", platform: Platform | None = None,
                  bb_rules: bool = True,
                  **reader_options: Any) -> tuple[list[Job], str]:
    """Jobs and a workload name.

    ``path=None`` is the embedded default (``n_jobs`` seeded KTH-like jobs). ``bb``: ``"auto"``
    draws Kopanski's log-normal BB requests when the workload has none, ``"lognormal"`` always
    draws them, ``"none"`` keeps the file's values. ``bb_rules``: when the requests are drawn
    for one of Kopanski's platforms, apply the two rules of the authors' generator
    (:func:`bb_rules_for`; default on).
    """
    from bbopt.workloads.bb import with_lognormal_bb
    from bbopt.workloads.swf import read_swf
    from bbopt.workloads.synthetic import kth_like

    if bb not in ("auto", "lognormal", "none"):
        raise InputError(f"bb model must be auto, lognormal or none, got {bb!r}", field="bb")
    if path is None:
        nodes = platform.nodes if platform is not None else 96
        return kth_like(n_jobs=n_jobs, seed=seed, nodes=nodes, bb=bb != "none"), "kth-like"
    p = Path(path)
    name = p.name
    for suffix in (".gz", ".bb", ".swf", ".json"):
        name = name.removesuffix(suffix)
    if p.name.endswith((".swf", ".swf.gz", ".swf.bb")):  # .swf.bb: BBSimulator's trace
        jobs = read_swf(p, **reader_options).jobs
    else:
        readers = _extra_readers()
        reader = next((fn for suf, fn in readers.items() if p.name.endswith(suf)), None)
        if reader is None:
            known = [".swf", ".swf.gz", ".swf.bb", *readers]
            raise InputError(f"unknown workload format; known: {', '.join(known)}",
                             source=str(p))
        jobs = reader(p)
    if bb == "lognormal" or (bb == "auto" and not any(j.bb > 0 for j in jobs)):
        jobs = with_lognormal_bb(jobs, seed,
                                 rules=bb_rules_for(platform) if bb_rules else None)
    return jobs, name


def declared_platform(path: str | Path | None, bb_unit: float = 1e9) -> Platform | None:
    """The platform an SWF trace declares in its header, if it declares a burst buffer.

    CQSim's BBSched traces carry ``; BurstBuffer: <capacity>`` (in ``bb_unit``, GB by default,
    as :func:`bbopt.workloads.swf.read_swf` reads their BB column) next to ``; MaxNodes:``;
    such a trace brings its machine along. Only the header is read.
    """
    if path is None or not str(path).endswith((".swf", ".swf.gz")):
        return None
    import gzip

    p = Path(path)
    if not p.exists():
        return None
    header: dict[str, str] = {}
    opener = gzip.open if p.suffix == ".gz" else open
    with opener(p, "rt", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            text = line.strip()
            if text and not text.startswith(";"):
                break
            key, sep, value = text[1:].partition(":")
            if sep:
                header.setdefault(key.strip(), value.strip())
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
    return Platform(nodes=n, bb=bb, name=name)


def _extra_readers() -> dict[str, Callable[[Path], list[Job]]]:
    """Readers of other formats, registered by the workload modules that provide them."""
    import importlib

    readers: dict[str, Callable[[Path], list[Job]]] = {}
    try:
        mod = importlib.import_module("bbopt.workloads.batsim")
    except ImportError:
        return readers
    readers.update(getattr(mod, "READERS", {}))
    return readers

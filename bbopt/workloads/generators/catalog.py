"""The generators of the five papers by name, for sweep specifications and ``bbopt generate``.

A *source* makes a workload from nothing (``kth-like``, ``herbein``, ``jeannot``,
``capability``); a *transform* rewrites the jobs of a workload (``lognormal-bb``, ``kopanski``,
``theta-original``, ``bbsched``, ``ssd``, ``omfs-entities``, ``omfs-preemption``). Every entry
takes the seed explicitly and keyword parameters in SI units (bytes, seconds) or plain numbers;
:func:`apply` checks the parameter names against the entry's signature, so a typo in a spec is
an error naming the generator and its parameters.

Papers: Kopanski & Rzadca (Euro-Par 2021, Section 4.1), Fan et al. (BBSched, HPDC 2019,
Sections 4.1 and 5), Herbein et al. (HPDC 2016, Section 4.2), Jeannot, Pallez & Vidal (IJHPCA
2023, Section 5), Zvi & Oren (OMFS).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any

import numpy as np

from bbopt.core import GB, TB, Job
from bbopt.errors import InputError
from bbopt.limits import (
    MAX_BANDWIDTH,
    MAX_ENTITIES,
    MAX_JOBS,
    MAX_NODES,
    MAX_SECONDS,
    check_count,
    check_number,
)
from bbopt.registry import Registry
from bbopt.units import Bandwidth, Seconds


def _complete(name: str, fn: Any) -> None:
    """A generator is ``fn(jobs, seed, *, param=default, ...)``: refuse anything else at
    registration, naming what is missing."""
    if not callable(fn):
        raise InputError(f"generator {name!r} is not callable: {fn!r}", field=name)
    params = list(inspect.signature(fn).parameters.values())
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                       p.POSITIONAL_OR_KEYWORD)]
    if positional != ["jobs", "seed"]:
        raise InputError(f"generator {name!r} must take (jobs, seed, *, options...), takes "
                         f"({', '.join(positional)})", field=name)


#: The generators by name: built-in ones are registered below, a plug-in's through the entry
#: point group ``bbopt.generators`` or its module (``--plugin``). A *source* annotates ``jobs``
#: as ``None`` (it makes a workload); any other generator is a *transform*.
GENERATORS = Registry("generator", group="bbopt.generators", check=_complete)


@dataclass(frozen=True)
class Generator:
    """One named generator: ``fn(jobs, seed, **params) -> jobs`` (``jobs`` is ``None`` for a
    source), as :func:`generator` reads it from :data:`GENERATORS`."""

    name: str
    kind: str  # "source" or "transform"
    fn: Callable[..., list[Job]]
    about: str

    def parameters(self) -> dict[str, Any]:
        """The keyword parameters with their defaults."""
        sig = inspect.signature(self.fn)
        return {k: p.default for k, p in sig.parameters.items()
                if p.kind is p.KEYWORD_ONLY}


@GENERATORS.register("kth-like",
                     about="KTH-like synthetic jobs at a given offered load (no download)")
def _kth_like(jobs: None, seed: int, *, n_jobs: int = 3000, nodes: int = 96,
              load: float = 0.9, bb: bool = True) -> list[Job]:
    from bbopt.workloads.synthetic import kth_like

    return kth_like(n_jobs=int(n_jobs), seed=seed, nodes=int(nodes), load=float(load),
                    bb=bool(bb))


@GENERATORS.register("herbein",
                     about="Herbein et al.'s user-arrival model, Section 4.2 (CTS-1 sized)")
def _herbein(jobs: None, seed: int, *, n_jobs: int | None = 2000,
             duration: Annotated[float, Seconds] | None = None, max_nodes: int | None = None,
             cores_per_node: int = 36) -> list[Job]:
    from bbopt.workloads.generators.herbein import HerbeinModel

    return HerbeinModel.default().generate(n_jobs=n_jobs, duration=duration,
                                           max_nodes=max_nodes, cores_per_node=cores_per_node,
                                           seed=seed)


@GENERATORS.register("jeannot",
                     about="Jeannot et al.'s periodic applications, Mira/Uniform x BiNormal/Normal")
def _jeannot(jobs: None, seed: int, *, n_apps: int = 1000, alpha: float = 0.5,
             protocol: str = "mira", io_profile: str = "binormal", nodes: int | None = None,
             strict: bool = True) -> list[Job]:
    from bbopt.workloads.generators.jeannot import generate

    return generate(int(n_apps), alpha=float(alpha), protocol=protocol, io_profile=io_profile,
                    nodes=nodes, strict=strict, seed=seed).jobs


@GENERATORS.register("capability",
                     about="Theta-like capability jobs (128+ nodes of 4,392; Fan et al.'s "
                           "Original BB)")
def _capability(jobs: None, seed: int, *, n_jobs: int = 8000, load: float = 0.85,
                min_nodes: int = 128, long_log_scale: float = 0.03) -> list[Job]:
    """``long_log_scale``: the scale of the long branch's Gamma of ``ln(runtime)`` (0.03, about
    3 h; 0.023 gives Theta's ~470 jobs a day at the same load with 20-minute long jobs)."""
    from bbopt.workloads.generators.capability import CapabilityModel

    model = CapabilityModel(load=float(load), min_nodes=int(min_nodes),
                            long_gamma=(CapabilityModel.long_gamma[0], float(long_log_scale)))
    return model.generate(int(n_jobs), seed)


@GENERATORS.register("lognormal-bb",
                     about="Kopanski's log-normal BB request per processor (rules: the authors' "
                           "generator's cap to 12 x 40 GB BB nodes and 10 MB per node for jobs "
                           "of walltime <= 120 s)")
def _lognormal_bb(jobs: list[Job], seed: int, *, rules: bool = False) -> list[Job]:
    from bbopt.workloads.bb import with_lognormal_bb

    return with_lognormal_bb(jobs, seed, rules=bool(rules))


@GENERATORS.register("kopanski",
                     about="Kopanski's workload: log-normal BB (rules as lognormal-bb) and "
                           "(optionally) the phased job model (checkpoint_factor: checkpoint "
                           "size / BB request; io_out: the I/O time taken out of the runtimes "
                           "as in the authors' I/O-aware workloads)")
def _kopanski(jobs: list[Job], seed: int, *, phases: bool = True, rules: bool = False,
              checkpoint_factor: float = 1.0, io_out: bool = False) -> list[Job]:
    from bbopt.workloads.generators.kopanski import kopanski_workload

    return kopanski_workload(jobs, seed, phases=phases, rules=bool(rules), io_out=bool(io_out),
                             checkpoint_factor=float(checkpoint_factor))


#: Theta's share of jobs with more than 1 GB of I/O, and the range of those requests (Fan et
#: al., Section 4.1: the "Original" workload).
THETA_NODES = 4392
THETA_SHARE = 0.1718
THETA_RANGE = (1 * GB, 285 * TB)


@GENERATORS.register("theta-original",
                     about="Fan et al.'s Original BB requests (Theta's share and range, scaled)")
def _theta_original(jobs: list[Job], seed: int, *, nodes: int = 100,
                    share: float = THETA_SHARE) -> list[Job]:
    """Fan et al.'s "Original" requests scaled to ``nodes``: ``share`` of the jobs ask a BB
    drawn log-uniformly over Theta's range, times ``nodes / 4392``; the others none."""
    rng = np.random.default_rng(seed)
    scale = nodes / THETA_NODES
    lo, hi = np.log(THETA_RANGE[0]), np.log(THETA_RANGE[1])
    asks = rng.random(len(jobs)) < share
    size = np.round(np.exp(rng.uniform(lo, hi, len(jobs))) * scale / 1e6) * 1e6
    return [replace(j, bb=float(b)) if a else replace(j, bb=0.0)
            for j, a, b in zip(jobs, asks, size, strict=True)]


@GENERATORS.register("bbsched", about="Fan et al.'s scenario S1-S4 (BB) or S5-S7 (S2 + local SSD)")
def _bbsched(jobs: list[Job], seed: int, *, scenario: str = "S4",
             scale: float = 1.0) -> list[Job]:
    from bbopt.workloads.generators.bbsched import bbsched_scenario

    return bbsched_scenario(jobs, str(scenario), seed, scale=float(scale))


@GENERATORS.register("ssd", about="per-node local SSD requests (Fan et al., Section 5)")
def _ssd(jobs: list[Job], seed: int, *, small_share: float = 0.5) -> list[Job]:
    from bbopt.workloads.generators.bbsched import with_ssd_requests

    return with_ssd_requests(jobs, float(small_share), seed)


@GENERATORS.register("omfs-entities", about="OMFS entities with entitlement shares (Zvi & Oren)")
def _omfs_entities(jobs: list[Job], seed: int, *, by: str = "user",
                   n_entities: int | None = None, shares: str = "usage") -> list[Job]:
    from bbopt.workloads.generators.omfs import assign_entities
    from bbopt.workloads.shares import with_shares

    out, entitled = assign_entities(jobs, by=by, n_entities=n_entities, shares=shares, seed=seed)
    return with_shares(out, entitled)  # the workload carries its entitlements


@GENERATORS.register("omfs-preemption",
                     about="OMFS preemptable / checkpointable flags (Zvi & Oren)")
def _omfs_preemption(jobs: list[Job], seed: int, *, preemptable: float = 0.5,
                     checkpointable: float = 0.5) -> list[Job]:
    from bbopt.workloads.generators.omfs import with_preemption_flags

    return with_preemption_flags(jobs, preemptable=float(preemptable),
                                 checkpointable=float(checkpointable), seed=seed)


@GENERATORS.register("max-nodes", about="leave out jobs wider than the machine")
def _max_nodes(jobs: list[Job], seed: int, *, nodes: int = 100) -> list[Job]:
    """Leave out the jobs wider than ``nodes`` (a trace from a larger machine)."""
    return [j for j in jobs if j.nodes <= int(nodes)]


@GENERATORS.register("scale-nodes", about="multiply every job's node count")
def _scale_nodes(jobs: list[Job], seed: int, *, factor: int = 32) -> list[Job]:
    """Every job's node count times ``factor`` (a small machine's trace on a large one)."""
    return [replace(j, nodes=j.nodes * int(factor)) for j in jobs]


@GENERATORS.register("io-rate", about="set every job's PFS bandwidth per node (bytes/s)")
def _io_rate(jobs: list[Job], seed: int, *,
             per_node: Annotated[float, Bandwidth] = 18e6) -> list[Job]:
    """Every job's PFS bandwidth per node, in bytes/s (Herbein et al., Section 4.2: 18 MB/s)."""
    return [replace(j, bandwidth=float(per_node)) for j in jobs]


@GENERATORS.register("exact-walltime",
                     about="every job's walltime set to its runtime (exact runtime estimates)")
def _exact_walltime(jobs: list[Job], seed: int) -> list[Job]:
    """Every job's walltime is its runtime, so that reservations and backfilling plan with the
    real durations, as a simulator that backfills with the runtimes does (CQSim's BBSched
    branch reserves queued jobs for their runtimes, ``Backfill.py``)."""
    return [replace(j, walltime=float(j.runtime)) if j.runtime is not None and j.runtime > 0
            else j for j in jobs]


@GENERATORS.register("first", about="keep the first n jobs")
def _first(jobs: list[Job], seed: int, *, n: int = 1000) -> list[Job]:
    return list(jobs[:int(n)])




#: The sane range of each numeric parameter (:mod:`bbopt.limits`), checked before a generator
#: runs: integers as ``("count", low, high)``, numbers as ``("number", low, high, low_open)``.
PARAMETER_RANGES: dict[str, tuple] = {
    "n_jobs": ("count", 1, MAX_JOBS), "n_apps": ("count", 1, MAX_JOBS),
    "n": ("count", 1, MAX_JOBS), "n_entities": ("count", 1, MAX_ENTITIES),
    "nodes": ("count", 1, MAX_NODES), "max_nodes": ("count", 1, MAX_NODES),
    "min_nodes": ("count", 1, MAX_NODES), "factor": ("count", 1, MAX_NODES),
    "cores_per_node": ("count", 1, 10**4),
    "duration": ("number", 0.0, MAX_SECONDS, True), "load": ("number", 0.0, 100.0, True),
    "alpha": ("number", 0.0, 1e3, True), "scale": ("number", 0.0, 1e6, True),
    "long_log_scale": ("number", 0.0, 10.0, True),
    "share": ("number", 0.0, 1.0, False), "small_share": ("number", 0.0, 1.0, False),
    "preemptable": ("number", 0.0, 1.0, False), "checkpointable": ("number", 0.0, 1.0, False),
    "per_node": ("number", 0.0, MAX_BANDWIDTH, False),
}


def check_parameters(name: str, params: dict[str, Any],
                     defaults: dict[str, Any] | None = None,
                     nullable: frozenset[str] = frozenset()) -> None:
    """Refuse a numeric parameter outside its range (``first n=-1``, ``kth-like n_jobs=1e12``)
    before anything is drawn or allocated, and one of the wrong kind where the default says
    it (a flag, a name); ``None`` only where the parameter may be ``None`` (``nullable``)."""
    defaults = defaults or {}
    for key, value in params.items():
        default = defaults.get(key)
        if value is None:
            if key in defaults and key not in nullable:
                raise InputError(f"generator {name!r}: {key} cannot be null (default "
                                 f"{default!r})", field=key)
            continue
        for kind, what in ((bool, "true or false"), (str, "a name")):
            if isinstance(default, kind) and not isinstance(value, kind):
                raise InputError(f"generator {name!r}: {key} must be {what}, got {value!r}",
                                 field=key)
        rule = PARAMETER_RANGES.get(key)
        if rule is None:
            continue
        if isinstance(value, str):  # (YAML reads 18e6 as text; the generators convert it)
            try:
                value = int(value) if rule[0] == "count" else float(value)
            except ValueError:
                raise InputError(f"generator {name!r}: {key} must be a number, got {value!r}",
                                 field=key) from None
        try:
            if rule[0] == "count":
                check_count(value, key, low=rule[1], high=rule[2])
            else:
                check_number(value, key, low=rule[1], high=rule[2], low_open=rule[3])
        except InputError as exc:
            raise InputError(f"generator {name!r}: {exc.reason}", field=key) from None


def generator(name: str) -> Generator:
    """The generator registered as ``name`` (an :class:`~bbopt.errors.UnknownNameError`
    listing the others when there is none)."""
    entry = GENERATORS.get(name)
    jobs = inspect.signature(entry.obj).parameters["jobs"].annotation
    kind = "source" if jobs is None or jobs == "None" else "transform"
    return Generator(entry.name, kind, entry.obj, entry.about)


def apply(name: str, jobs: Sequence[Job] | None, seed: int, **params: Any) -> list[Job]:
    """Run generator ``name`` (a source when ``jobs`` is ``None``) with checked ``params``."""
    gen = generator(name)
    known = gen.parameters()
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise InputError(f"generator {name!r} has no parameter {unknown[0]!r}; its "
                         f"parameters: {', '.join(known) or 'none'}", field=unknown[0])
    if gen.kind == "source" and jobs is not None:
        raise InputError(f"{name!r} makes a workload; it cannot transform one", field=name)
    if gen.kind == "transform" and jobs is None:
        raise InputError(f"{name!r} transforms a workload; give it one (a file or a source)",
                         field=name)
    nullable = frozenset(k for k, p in inspect.signature(gen.fn).parameters.items()
                         if "None" in str(p.annotation))
    check_parameters(name, params, known, nullable)
    out = list(gen.fn(None if jobs is None else list(jobs), int(seed), **params))
    if not out:
        raise InputError(f"generator {name!r} left no jobs", field=name)
    return out

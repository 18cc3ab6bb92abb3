"""The inputs of a sweep's runs, as the driver and the workers prepare them: workloads (read or
generated, transformed, split; cached per process, with their content hash), the entitlements a
workload carries (Zvi & Oren, OMFS), and platforms (named, from a file, inline, with local SSDs
as in Fan et al., Section 5, or a BB sized from a workload's demand).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from bbopt.analysis.store import canonical, file_sha256, jobs_sha256
from bbopt.analysis.sweep_spec import SweepSpec
from bbopt.core import Job, Platform
from bbopt.errors import InputError


@lru_cache(maxsize=8)
def _workload(spec_json: str, seed: int) -> tuple[tuple[Job, ...], str]:
    """The prepared whole workload and its content hash (cached per process)."""
    import json

    from bbopt.workloads.generators.catalog import apply

    spec = json.loads(spec_json)
    if "file" in spec:
        from bbopt.loading import load_workload

        jobs, _ = load_workload(spec["file"], bb=spec.get("bb", "none"), seed=seed,
                                **(spec.get("reader") or {}))
        if spec.get("first"):
            jobs = jobs[:int(spec["first"])]
    else:
        g = dict(spec["generator"])
        jobs = apply(g.pop("name"), None, int(g.pop("seed", seed)), **g)
        if spec.get("first"):
            jobs = jobs[:int(spec["first"])]
    for k, t in enumerate(spec.get("transforms") or []):
        t = dict(t)  # the k-th transform draws with seed + k unless it fixes its own
        jobs = apply(t.pop("name"), jobs, int(t.pop("seed", seed + k)), **t)
    if not jobs:
        raise InputError("the workload has no job", field="workloads")
    return tuple(jobs), jobs_sha256(jobs)


@lru_cache(maxsize=4)
def _split(spec_json: str, seed: int) -> tuple[tuple[Job, ...], ...]:
    """Every part of a split workload, split once per process (a sweep runs many of them)."""
    return split_parts(spec_json, _workload(spec_json, seed)[0])


def split_parts(spec_json: str, jobs: tuple[Job, ...]) -> tuple[tuple[Job, ...], ...]:
    """The parts of the prepared workload ``jobs`` as its spec (``split``) cuts them."""
    import json

    from bbopt.analysis.experiments import split_trace

    split = json.loads(spec_json)["split"]
    parts = split_trace(list(jobs), int(split["parts"]), length=split.get("length"))
    return tuple(tuple(p) for p in parts)


def _part(spec_json: str, seed: int, part: int | None) -> tuple[Job, ...]:
    if part is None:
        return _workload(spec_json, seed)[0]
    return _split(spec_json, seed)[part]


def workload_seed(spec: Mapping[str, Any], seed: int) -> int:
    return int(spec["seed"]) if spec.get("seed") is not None else int(seed)


def build_platform(spec_json: str) -> Platform:
    """A platform from its spec value: a name or file, or an inline mapping (``nodes``, ``bb``,
    optionally ``ssd: {small, large}`` for half the nodes each, Fan et al., Section 5)."""
    import json

    from bbopt.loading import load_platform
    from bbopt.resources import parse_bytes

    spec = json.loads(spec_json)
    if isinstance(spec, str):
        return load_platform(spec)
    if "file" in spec:
        return load_platform(spec["file"])
    nodes = int(spec["nodes"])
    bb = parse_bytes(spec.get("bb", 0), "bb")
    name = str(spec.get("name", "platform"))
    if spec.get("ssd"):
        from bbopt.workloads.generators.bbsched import theta_ssd_platform

        ssd = spec["ssd"]
        return theta_ssd_platform(nodes, bb, small=parse_bytes(ssd.get("small", "128GB"), "ssd"),
                                  large=parse_bytes(ssd.get("large", "256GB"), "ssd"),
                                  name=name)
    return Platform(nodes=nodes, bb=bb, name=name)


def platform_fingerprint(spec_value: Any, base: Path) -> tuple[str, dict[str, Any]]:
    """The platform's spec as canonical JSON (files resolved) and what identifies it."""
    value = spec_value
    if isinstance(value, str) and not _is_named_platform(value):
        path = Path(value) if Path(value).exists() else base / value
        if not path.exists():
            raise InputError(f"platform {value!r} is neither a known name nor a file",
                             field="platforms")
        value = {"file": str(path.resolve())}
    elif isinstance(value, Mapping) and "file" in value:
        path = Path(value["file"]) if Path(value["file"]).exists() else base / value["file"]
        value = {**value, "file": str(path.resolve())}
    spec_json = canonical(value)
    p = build_platform(spec_json)
    ident: dict[str, Any] = {"nodes": p.nodes, "bb": p.bb,
                             "node_ssd": None if p.node_ssd is None else list(p.node_ssd),
                             "spec": value if not isinstance(value, Mapping) or "file" not in
                             value else {k: v for k, v in value.items() if k != "file"}}
    if isinstance(value, Mapping) and "file" in value:
        ident["file_sha256"] = file_sha256(value["file"])
    return spec_json, ident


def _sized_bb(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("bb"), Mapping)


def resolve_platform(spec: SweepSpec, label: str, seed: int) -> Any:
    """The platform's spec value with a BB sized from a workload (``bb: {sized_by: W,
    demand: D}``) replaced by the capacity it gives for that workload at ``seed``."""
    value = spec.platforms[label]
    if not _sized_bb(value):
        return value
    from bbopt.workloads.generators.bbsched import bb_capacity_for_demand

    sized = value["bb"]
    wspec = spec.workloads[sized["sized_by"]]
    jobs, _ = _workload(canonical(wspec), workload_seed(wspec, seed))
    capacity = bb_capacity_for_demand(jobs, int(value["nodes"]), float(sized.get("demand", 1)))
    return {**value, "bb": capacity}


def _is_named_platform(name: str) -> bool:
    from bbopt.loading import PLATFORMS

    return name.partition(":")[0] in PLATFORMS and not Path(name).exists()


@lru_cache(maxsize=32)
def _shares(spec_json: str, seed: int) -> dict[str, float] | None:
    from bbopt.workloads.shares import workload_shares

    return workload_shares(_workload(spec_json, seed)[0])


def _measured_shares(options: Mapping[str, Any], shares: dict[str, float] | None
                     ) -> dict[str, float] | None:
    """The entitlements a run is measured against: the policy's ``shares`` option, else the
    workload's (so a policy without entitlements is measured against the same ones)."""
    if options.get("shares") is not None:
        from bbopt.workloads.shares import parse_shares

        return parse_shares(options["shares"])
    return shares


@lru_cache(maxsize=32)
def _file_sha(path: str) -> str:
    return file_sha256(path)

"""Sweep specifications: a YAML document that names a grid of simulation runs.

::

    name: kopanski
    workloads:                       # name -> how to make it
      kth:
        file: KTH-SP2-1996-2.1-cln.swf   # beside the spec, else in $BBOPT_DATA
        first: 5000                      # optional: the first N jobs of the file
        transforms: [{name: max-nodes, nodes: 96}, lognormal-bb]   # bbopt generate --list;
                                         # the k-th draws with the run seed + k, or its 'seed'
        split: {parts: 16, length: 21d}  # each part is a cell of the grid
        parts: [0, 1]                    # optional: only these parts
        seed: 0                          # optional: a fixed workload seed (else the run's)
      synthetic:
        generator: {name: kth-like, n_jobs: 2000}
    platforms: [kopanski, {name: small, nodes: 64, bb: 320GB}]
    policies:
      - fcfs-bb
      - {name: conservative-bb, options: {depth: 10}}
      - {name: bbsched, sweep: {window: [10, 20]}}     # one policy entry per value
    seeds: [0, 1]
    budgets: [null, {name: det, budget: 2, deterministic: 5}]  # overlay of solver options
    executions: [rigid]
    tick: null
    warmup: 0                        # measure from first submission + warmup ...
    cooldown: 0                      # ... to last submission - cooldown
    reference: sjf-bb                # what `bbopt report` normalises by
    metrics: [mean_wait, mean_bounded_slowdown]
    exclude: [{policy: fcfs-bb, seed: 1}]  # drop the cells matching every key of an entry
    zip: [[policies, seeds]]         # these axes vary together instead of as a product
    quick: {workloads: {kth: {first: 2000}}, seeds: [0]}   # merged in by --quick

The grid is the product of workloads (x their parts), platforms, policies, seeds, budgets and
executions, less the excluded cells. A budget entry sets the solver options ``budget`` (wall
seconds) and ``deterministic`` (CP-SAT's deterministic limit) of the policies that take them,
and any other policy option it names (``{name: fcfs, order: fcfs}``: a base order, or
``reserve_bb: false``, as a scenario of the report rather than a policy of its own); it
overrides what a policy's entry sets. Policies that take none of an entry's options run once
for that label only if it is the first one (the others would repeat the same run). The run
seed goes to the workload generators (unless the workload fixes ``seed``) and to the policies
that take a ``seed`` option.

A platform's ``bb`` may be sized from a workload: ``bb: {sized_by: S4, demand: 1.0}`` gives
the capacity at which that workload's BB demand (requested byte-seconds over capacity x
submission span) is ``demand`` times its node demand (Fan et al.'s BB-bound regime), in whole
GB and at least its largest request; it is computed per seed from the whole workload.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bbopt.errors import InputError
from bbopt.units import parse_seconds, read_document

AXES = ("workloads", "platforms", "policies", "seeds", "budgets", "executions")
#: The cell key of each axis (the column name in the collected table).
AXIS_KEY = {"workloads": "workload", "platforms": "platform", "policies": "policy",
            "seeds": "seed", "budgets": "budget", "executions": "execution"}
KNOWN = {"name", "description", *AXES, "tick", "warmup", "cooldown", "reference", "metrics",
         "exclude", "zip", "quick", "report"}


@dataclass(frozen=True)
class PolicyEntry:
    label: str
    name: str
    options: dict[str, Any]


@dataclass(frozen=True)
class Cell:
    """One run of the grid, before its workload is built."""

    workload: str
    part: int | None
    platform: str
    policy: PolicyEntry
    seed: int
    budget: str
    budget_options: dict[str, Any]
    execution: str

    def params(self) -> dict[str, Any]:
        """The cell's grid coordinates as table columns."""
        return {"workload": self.workload, "part": self.part, "platform": self.platform,
                "policy": self.policy.label, "policy_name": self.policy.name,
                "seed": self.seed, "budget": self.budget, "execution": self.execution}


@dataclass
class SweepSpec:
    name: str
    source: str
    base: Path
    workloads: dict[str, dict[str, Any]]
    platforms: dict[str, Any]
    policies: list[PolicyEntry]
    seeds: list[int]
    budgets: dict[str, dict[str, Any]]
    executions: dict[str, dict[str, Any]]
    tick: float | None = None
    warmup: float = 0.0
    cooldown: float = 0.0
    reference: str | None = None
    metrics: list[str] = field(default_factory=lambda: ["mean_wait", "mean_bounded_slowdown"])
    exclude: list[dict[str, Any]] = field(default_factory=list)
    zip: list[list[str]] = field(default_factory=list)
    description: str = ""
    report: dict[str, Any] = field(default_factory=dict)

    def cells(self) -> list[Cell]:
        """Every run of the grid, in a deterministic order."""
        from bbopt.policies import policy_options

        axes: dict[str, list[Any]] = {
            "workloads": [(w, k) for w, spec in self.workloads.items() for k in _parts(spec)],
            "platforms": list(self.platforms),
            "policies": list(self.policies),
            "seeds": list(self.seeds),
            "budgets": list(self.budgets),
            "executions": list(self.executions),
        }
        groups: list[list[str]] = []
        zipped = {a for z in self.zip for a in z}
        for z in self.zip:
            lengths = {a: len(axes[a]) for a in z}
            if len(set(lengths.values())) != 1:
                raise InputError(f"zipped axes must have equal lengths, got {lengths}",
                                 source=self.source, field="zip")
            groups.append(list(z))
        groups += [[a] for a in AXES if a not in zipped]
        out: list[Cell] = []
        first_budget = next(iter(self.budgets))
        for combo in itertools.product(*(list(zip(*(axes[a] for a in g), strict=True))
                                         for g in groups)):
            values = {a: v for g, vs in zip(groups, combo, strict=True)
                      for a, v in zip(g, vs, strict=True)}
            (workload, part), pol = values["workloads"], values["policies"]
            budget = values["budgets"]
            accepted = policy_options(pol.name)
            b_opts = {k: v for k, v in self.budgets[budget].items()
                      if k in accepted or "**" in accepted}
            if self.budgets[budget] and not b_opts and budget != first_budget:
                continue  # the policy has no solver budget: the first label's run is the same
            cell = Cell(workload, part, values["platforms"], pol, int(values["seeds"]), budget,
                        b_opts, values["executions"])
            if not any(_matches(cell, ex) for ex in self.exclude):
                out.append(cell)
        return out


def _parts(spec: Mapping[str, Any]) -> list[int | None]:
    split = spec.get("split")
    if not split:
        return [None]
    n = int(split["parts"])
    return [int(p) for p in spec.get("parts", range(n))]


def _matches(cell: Cell, ex: Mapping[str, Any]) -> bool:
    params = cell.params()
    for key, value in ex.items():
        have = params.get(key)
        if key == "policy" and value in (cell.policy.name, cell.policy.label):
            continue
        if isinstance(value, list):
            if have not in value:
                return False
        elif have != value:
            return False
    return True


def merge(base: Any, over: Any) -> Any:
    """``over`` merged into ``base``: mappings recursively, anything else replaced."""
    if isinstance(base, Mapping) and isinstance(over, Mapping):
        out = dict(base)
        for k, v in over.items():
            out[k] = merge(base.get(k), v) if k in base else copy.deepcopy(v)
        return out
    return copy.deepcopy(over)


def load_spec(path: str | Path, *, quick: bool = False) -> SweepSpec:
    """Read and check a sweep specification (``quick``: merge its ``quick`` section)."""
    path = Path(path)
    doc = read_document(path)
    return parse_spec(doc, source=str(path), base=path.resolve().parent, quick=quick)


def parse_spec(doc: Any, *, source: str = "<spec>", base: Path | None = None,
               quick: bool = False) -> SweepSpec:
    from bbopt.policies import policy_options

    if not isinstance(doc, Mapping):
        raise InputError("a sweep specification must be a mapping", source=source)
    unknown = sorted(set(doc) - KNOWN)
    if unknown:
        raise InputError(f"unknown key; known: {', '.join(sorted(KNOWN))}", source=source,
                         field=unknown[0])
    if quick:
        if "quick" not in doc:
            raise InputError("has no 'quick' section for --quick", source=source, field="quick")
        doc = merge({k: v for k, v in doc.items() if k != "quick"}, doc["quick"])
    for key in ("workloads", "policies"):
        if not doc.get(key):
            raise InputError("is missing or empty", source=source, field=key)

    workloads: dict[str, dict[str, Any]] = {}
    raw_w = doc["workloads"]
    if isinstance(raw_w, list):
        raw_w = {str(w.get("name", f"w{k}")) if isinstance(w, Mapping) else Path(str(w)).stem: w
                 for k, w in enumerate(raw_w)}
    for name, spec in raw_w.items():
        spec = {"file": spec} if isinstance(spec, str) else dict(spec or {})
        spec.pop("name", None)
        where = f"workloads.{name}"
        if ("file" in spec) == ("generator" in spec):
            raise InputError("needs exactly one of 'file' and 'generator'", source=source,
                             field=where)
        if "file" in spec:
            spec["file"] = str(resolve_file(spec["file"], base, source, where))
        else:
            spec["generator"] = _named(spec["generator"], source, f"{where}.generator")
        spec["transforms"] = [_named(t, source, f"{where}.transforms[{k}]")
                              for k, t in enumerate(spec.get("transforms") or [])]
        if spec.get("split"):
            split = spec["split"]
            split = {"parts": split} if isinstance(split, int) else dict(split)
            if "length" in split and split["length"] is not None:
                split["length"] = parse_seconds(split["length"], f"{where}.split.length")
            spec["split"] = split
        extra = sorted(set(spec) - {"file", "generator", "transforms", "split", "parts", "first",
                                    "seed", "bb", "reader"})
        if extra:
            raise InputError("unknown workload key", source=source, field=f"{where}.{extra[0]}")
        workloads[str(name)] = spec

    platforms: dict[str, Any] = {}
    for k, p in enumerate(doc.get("platforms") or ["kopanski"]):
        if isinstance(p, Mapping):
            label = str(p.get("name", f"platform{k}"))
            platforms[label] = dict(p)
            if isinstance(p.get("bb"), Mapping):  # sized from a workload: checked here
                sized = dict(p["bb"])
                where = f"platforms[{k}].bb"
                if set(sized) - {"sized_by", "demand"} or sized.get("sized_by") not in workloads:
                    raise InputError("a sized BB is {sized_by: WORKLOAD, demand: RATIO}, with "
                                     f"WORKLOAD one of {', '.join(workloads)}", source=source,
                                     field=where)
                if "nodes" not in p or not float(sized.get("demand", 1)) > 0:
                    raise InputError("a sized BB needs the platform's 'nodes' and a demand > 0",
                                     source=source, field=where)
        else:
            platforms[str(p)] = str(p)

    policies: list[PolicyEntry] = []
    for k, p in enumerate(doc["policies"]):
        where = f"policies[{k}]"
        entry = {"name": p} if isinstance(p, str) else dict(p)
        name = str(entry.get("name", ""))
        accepted = policy_options(name)  # raises on an unknown name, listing the known ones
        options = dict(entry.get("options") or {})
        sweep = dict(entry.get("sweep") or {})
        for key in [*options, *sweep]:
            if key not in accepted and "**" not in accepted:
                raise InputError(f"policy {name!r} has no option {key!r}; its options: "
                                 f"{', '.join(accepted) or 'none'}", source=source,
                                 field=f"{where}.{key}")
        keys = list(sweep)
        for values in itertools.product(*(sweep[s] for s in keys)) if keys else [()]:
            opts = {**options, **dict(zip(keys, values, strict=True))}
            label = entry.get("label") or name
            if keys:
                label += "[" + ",".join(f"{k}={v}" for k, v in zip(keys, values,
                                                                    strict=True)) + "]"
            policies.append(PolicyEntry(str(label), name, opts))
    labels = [p.label for p in policies]
    if len(set(labels)) != len(labels):
        raise InputError("two policy entries have the same label; give one a 'label'",
                         source=source, field="policies")

    budgets: dict[str, dict[str, Any]] = {}
    for k, b in enumerate(doc.get("budgets") or [None]):
        if b is None:
            budgets["default"] = {}
        elif isinstance(b, (int, float)):
            budgets[f"{b:g}s"] = {"budget": float(b)}
        else:
            b = dict(b)
            label = str(b.pop("name", f"budget{k}"))
            taken = {o for p in policies for o in policy_options(p.name)}
            bad = sorted(o for o in set(b) - {"budget", "deterministic"}
                         if o not in taken and "**" not in taken)
            if bad:
                raise InputError(f"no policy of the spec has an option {bad[0]!r} (a budget "
                                 "entry sets 'budget' (s), 'deterministic' and other policy "
                                 "options)", source=source, field=f"budgets[{k}].{bad[0]}")
            if label in budgets:
                raise InputError("two budget entries have the same name", source=source,
                                 field=f"budgets[{k}].name")
            budgets[label] = b

    seeds = doc.get("seeds", [0])
    seeds = [seeds] if isinstance(seeds, int) else list(seeds)
    if not seeds or any(isinstance(s, bool) or not isinstance(s, int) for s in seeds):
        raise InputError("seeds must be a list of integers", source=source, field="seeds")
    for k, z in enumerate(doc.get("zip") or []):
        for a in z:
            if a not in AXES:
                raise InputError(f"not an axis; axes: {', '.join(AXES)}", source=source,
                                 field=f"zip[{k}].{a}")
    tick = doc.get("tick")
    spec = SweepSpec(
        name=str(doc.get("name", Path(source).stem)), source=source, base=base or Path.cwd(),
        workloads=workloads, platforms=platforms, policies=policies, seeds=seeds,
        budgets=budgets, executions=_executions(doc.get("executions"), source),
        tick=None if tick is None else parse_seconds(tick, "tick"),
        warmup=parse_seconds(doc.get("warmup", 0), "warmup"),
        cooldown=parse_seconds(doc.get("cooldown", 0), "cooldown"),
        reference=doc.get("reference"), metrics=list(doc.get("metrics") or
                                                     ["mean_wait", "mean_bounded_slowdown"]),
        exclude=[dict(e) for e in doc.get("exclude") or []],
        zip=[list(z) for z in doc.get("zip") or []],
        description=str(doc.get("description", "")), report=dict(doc.get("report") or {}))
    if spec.reference is not None and spec.reference not in labels:
        raise InputError(f"reference {spec.reference!r} is not among the policies "
                         f"({', '.join(labels)})", source=source, field="reference")
    return spec


def _executions(items: Any, source: str) -> dict[str, dict[str, Any]]:
    """Execution models by label: ``rigid`` or ``{name: io-contention, kill_at_walltime:
    false, label: ...}`` (options go to the model's constructor)."""
    import inspect

    from bbopt.simulation.execution import EXECUTION_MODELS

    out: dict[str, dict[str, Any]] = {}
    for k, item in enumerate(items or ["rigid"]):
        entry = {"name": item} if isinstance(item, str) else dict(item)
        name = str(entry.get("name", ""))
        if name not in EXECUTION_MODELS:
            raise InputError(f"unknown execution model {name!r}; known: "
                             f"{', '.join(EXECUTION_MODELS)}", source=source,
                             field=f"executions[{k}]")
        label = str(entry.pop("label", name))
        params = inspect.signature(EXECUTION_MODELS[name]).parameters
        for key in entry:
            if key != "name" and key not in params:
                raise InputError(f"execution model {name!r} has no option {key!r}; its "
                                 f"options: {', '.join(params) or 'none'}", source=source,
                                 field=f"executions[{k}].{key}")
        if label in out:
            raise InputError("two execution models with one label; give one a 'label'",
                             source=source, field=f"executions[{k}]")
        out[label] = {key: _quantity(key, v, f"executions[{k}].{key}") for key, v in
                      entry.items()}
    return out


def _quantity(key: str, value: Any, where: str) -> Any:
    """An execution model's option with its unit read (``memory_per_node: 64GB``,
    ``pfs_bandwidth: 1GB/s``); other values as they are."""
    if not isinstance(value, str) or key == "name":
        return value
    from bbopt.resources import parse_bandwidth, parse_bytes

    if "bandwidth" in key:
        return parse_bandwidth(value, where)
    if "memory" in key or key.endswith("bytes"):
        return parse_bytes(value, where)
    return value


def _named(item: Any, source: str, where: str) -> dict[str, Any]:
    """A generator reference: ``"name"`` or ``{name: ..., param: value}``, checked."""
    from bbopt.workloads.generators.catalog import generator

    entry = {"name": item} if isinstance(item, str) else dict(item)
    if "name" not in entry:
        raise InputError("needs a 'name'", source=source, field=where)
    gen = generator(str(entry["name"]))
    params = gen.parameters()
    for key in entry:
        if key not in ("name", "seed") and key not in params:
            raise InputError(f"generator {gen.name!r} has no parameter {key!r}; its parameters:"
                             f" {', '.join(params) or 'none'}", source=source,
                             field=f"{where}.{key}")
    return entry


def resolve_file(name: str, base: Path | None, source: str, where: str) -> Path:
    """A workload file: as given, beside the spec, then by the rest of the one lookup rule
    (``$BBOPT_DATA``, the per-user data directory: :func:`bbopt.workloads.archive.find_trace`).
    """
    from bbopt.workloads.archive import find_trace

    if base is not None and not Path(name).exists() and (base / name).exists():
        return (base / name).resolve()
    try:
        return find_trace(name).resolve()
    except InputError as exc:
        raise InputError(f"workload file {name!r} not found beside the spec; {exc.reason}",
                         source=source, field=where) from None

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

Every field is checked where it is read (:mod:`bbopt.analysis.spec_fields`): its kind, shape and
range, the generators', policies' and execution models' options (each policy is built once with
every combination of its options), and a grid with at least one run; errors name the field's
path (``platforms[0].nodes``).

Length: the grid and the checks of each of its axes read one document; they stay together.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bbopt.analysis.spec_fields import Fields
from bbopt.errors import InputError, UnknownNameError
from bbopt.limits import MAX_CELLS, MAX_PARTS
from bbopt.units import read_document

AXES = ("workloads", "platforms", "policies", "seeds", "budgets", "executions")
#: The cell key of each axis (the column name in the collected table).
AXIS_KEY = {"workloads": "workload", "platforms": "platform", "policies": "policy",
            "seeds": "seed", "budgets": "budget", "executions": "execution"}
KNOWN = {"name", "description", *AXES, "tick", "warmup", "cooldown", "reference", "metrics",
         "exclude", "zip", "quick", "report", "budget_mode", "plugins"}


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
    #: budget mode of the policies with solver budgets unless their options set one
    budget_mode: str = "deterministic"
    #: modules imported before the spec is checked and in every worker (their registrations)
    plugins: list[str] = field(default_factory=list)

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
        size = math.prod(len(axes[g[0]]) for g in groups)
        if size > MAX_CELLS:
            raise InputError(f"the grid has {size:,} runs, more than {MAX_CELLS:,}",
                             source=self.source, field="grid")
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
    """Check a specification document and build its :class:`SweepSpec`: every field's kind,
    shape and range, the names and options of its generators, policies (each combination of
    ``sweep`` values and budget entries built once) and execution models, and a grid that has
    at least one run. Errors name the field's path (``platforms[0].nodes``)."""
    from bbopt.units import check_expansion

    check_expansion(doc, source)
    f = Fields(source)
    doc = f.mapping(doc, "", keys=KNOWN) if isinstance(doc, Mapping) else None
    if doc is None:
        raise InputError("a sweep specification must be a mapping", source=source)
    if quick:
        if "quick" not in doc:
            raise InputError("has no 'quick' section for --quick", source=source, field="quick")
        doc = merge({k: v for k, v in doc.items() if k != "quick"},
                    f.mapping(doc["quick"], "quick", keys=KNOWN - {"quick"}))
    for key in ("workloads", "policies"):
        if not doc.get(key):
            raise InputError("is missing or empty", source=source, field=key)
    plugins = [f.text(m, f"plugins[{k}]") for k, m in enumerate(f.items(doc.get("plugins"),
                                                                         "plugins"))]
    from bbopt.registry import load_plugins

    try:
        load_plugins(plugins, "plugins")
    except InputError as exc:
        raise exc.at(source=source) from None
    workloads = _workloads(f, doc["workloads"], base)
    platforms = _platforms(f, doc.get("platforms"), workloads, base)
    policies = _policies(f, doc["policies"])
    labels = [p.label for p in policies]
    budgets = _budgets(f, doc.get("budgets"), policies)
    seeds = [f.integer(s, f"seeds[{k}]")
             for k, s in enumerate(f.items(doc.get("seeds", [0]), "seeds", empty=False))]
    axes = [f.items(z, f"zip[{k}]") for k, z in enumerate(f.items(doc.get("zip"), "zip"))]
    for k, z in enumerate(axes):
        for a in z:
            if a not in AXES:
                raise InputError(f"not an axis; axes: {', '.join(AXES)}", source=source,
                                 field=f"zip[{k}].{a}")
    tick = doc.get("tick")
    reference = doc.get("reference")
    spec = SweepSpec(
        name=f.text(doc.get("name", Path(source).stem), "name"), source=source,
        base=base or Path.cwd(), workloads=workloads, platforms=platforms, policies=policies,
        seeds=seeds, budgets=budgets, executions=_executions(f, doc.get("executions")),
        tick=None if tick is None else f.seconds(tick, "tick", positive=True),
        warmup=f.seconds(doc.get("warmup", 0), "warmup"),
        cooldown=f.seconds(doc.get("cooldown", 0), "cooldown"),
        reference=None if reference is None else f.text(reference, "reference"),
        metrics=[f.text(m, f"metrics[{k}]") for k, m in enumerate(
            f.items(doc.get("metrics") or ["mean_wait", "mean_bounded_slowdown"], "metrics"))],
        exclude=[f.mapping(e, f"exclude[{k}]")
                 for k, e in enumerate(f.items(doc.get("exclude"), "exclude"))],
        zip=axes, description=f.text(doc.get("description", ""), "description"),
        report=f.mapping(doc.get("report"), "report"),
        budget_mode=_budget_mode(doc.get("budget_mode", "deterministic"), source),
        plugins=plugins)
    if spec.reference is not None and spec.reference not in labels:
        raise InputError(f"reference {spec.reference!r} is not among the policies "
                         f"({', '.join(labels)})", source=source, field="reference")
    if not spec.cells():
        raise InputError("the grid has no run (every cell excluded, or no part chosen)",
                         source=source, field="exclude" if spec.exclude else "workloads")
    return spec


def _workloads(f: Fields, raw: Any, base: Path | None) -> dict[str, dict[str, Any]]:
    if isinstance(raw, list):
        raw = {f.text(w.get("name", f"w{k}"), f"workloads[{k}].name")
               if isinstance(w, Mapping) else Path(f.text(w, f"workloads[{k}]")).stem: w
               for k, w in enumerate(raw)}
    out: dict[str, dict[str, Any]] = {}
    for name, spec in f.mapping(raw, "workloads").items():
        where = f"workloads.{name}"
        spec = {"file": spec} if isinstance(spec, str) else f.mapping(spec, where, keys={
            "name", "file", "generator", "transforms", "split", "parts", "first", "seed", "bb",
            "reader"})
        spec.pop("name", None)
        if ("file" in spec) == ("generator" in spec):
            raise f.error("needs exactly one of 'file' and 'generator'", where)
        if "file" in spec:
            spec["file"] = str(resolve_file(f.text(spec["file"], f"{where}.file"), base,
                                            f.source, f"{where}.file"))
        else:
            spec["generator"] = _named(f, spec["generator"], f"{where}.generator")
        spec["transforms"] = [_named(f, t, f"{where}.transforms[{k}]") for k, t in
                              enumerate(f.items(spec.get("transforms"), f"{where}.transforms"))]
        if spec.get("split") is not None:
            split = spec["split"]
            split = f.mapping({"parts": split} if not isinstance(split, Mapping) else split,
                              f"{where}.split", keys={"parts", "length"})
            split["parts"] = f.integer(split.get("parts"), f"{where}.split.parts", least=1,
                                       most=MAX_PARTS)
            if split.get("length") is not None:
                split["length"] = f.seconds(split["length"], f"{where}.split.length",
                                            positive=True)
            spec["split"] = split
            if "parts" in spec:
                spec["parts"] = [f.integer(p, f"{where}.parts[{k}]") for k, p in
                                 enumerate(f.items(spec["parts"], f"{where}.parts"))]
                bad = [p for p in spec["parts"] if p >= split["parts"]]
                if bad:
                    raise f.error(f"part {bad[0]} of {split['parts']} (parts count from 0)",
                                  f"{where}.parts")
        elif "parts" in spec:
            raise f.error("parts need a split", f"{where}.parts")
        if spec.get("first") is not None:
            spec["first"] = f.integer(spec["first"], f"{where}.first", least=1)
        if spec.get("seed") is not None:
            spec["seed"] = f.integer(spec["seed"], f"{where}.seed")
        if spec.get("bb", "none") not in ("auto", "lognormal", "none"):
            raise f.error(f"must be auto, lognormal or none, got {spec['bb']!r}", f"{where}.bb")
        if "reader" in spec:
            spec["reader"] = f.mapping(spec["reader"], f"{where}.reader")
        out[name] = spec
    return out


def _platforms(f: Fields, raw: Any, workloads: Mapping[str, Any], base: Path | None
               ) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, p in enumerate(f.items(raw, "platforms") or ["kopanski"]):
        where = f"platforms[{k}]"
        if isinstance(p, str):
            from bbopt.loading import PLATFORMS

            if p.partition(":")[0] not in PLATFORMS and not Path(p).exists() \
                    and not (base is not None and (base / p).exists()):
                raise f.error(f"platform {p!r} is neither a known name ({', '.join(PLATFORMS)})"
                              " nor a file", where)
            out[p] = p
            continue
        if not isinstance(p, Mapping):
            raise f.error(f"must be a platform name, a file or a mapping, got {p!r}", where)
        p = f.mapping(p, where, keys={"name", "nodes", "bb", "ssd", "file"})
        label = f.text(p.get("name", f"platform{k}"), f"{where}.name")
        if "file" in p:
            f.text(p["file"], f"{where}.file")
        elif "nodes" not in p:
            raise f.error("needs 'nodes' (or a 'file')", where)
        if "nodes" in p:
            p["nodes"] = f.integer(p["nodes"], f"{where}.nodes", least=1)
        if isinstance(p.get("bb"), Mapping):  # sized from a workload: checked here
            sized = f.mapping(p["bb"], f"{where}.bb", keys={"sized_by", "demand"})
            if sized.get("sized_by") not in workloads:
                raise f.error("a sized BB is {sized_by: WORKLOAD, demand: RATIO}, with "
                              f"WORKLOAD one of {', '.join(workloads)}", f"{where}.bb")
            if "nodes" not in p:
                raise f.error("a sized BB needs the platform's 'nodes'", f"{where}.bb")
            f.number(sized.get("demand", 1), f"{where}.bb.demand", positive=True)
        elif p.get("bb") is not None:
            _bytes(f, p["bb"], f"{where}.bb")
        if p.get("ssd") is not None:
            ssd = f.mapping(p["ssd"], f"{where}.ssd", keys={"small", "large"})
            for key, value in ssd.items():
                _bytes(f, value, f"{where}.ssd.{key}")
        if label in out:
            raise f.error("two platforms with one name; give one a 'name'", f"{where}.name")
        out[label] = p
    return out


def _bytes(f: Fields, value: Any, where: str) -> float:
    from bbopt.resources import parse_bytes

    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise f.error(f"must be a size (bytes, or text like 480GB), got {value!r}", where)
    try:
        out = parse_bytes(value, where)
    except InputError as exc:
        raise f.error(exc.reason, where) from None
    if not 0 <= out < float("inf"):
        raise f.error(f"must be a finite size >= 0, got {value!r}", where)
    return out


def _policies(f: Fields, raw: Any) -> list[PolicyEntry]:
    from bbopt.policies import policy_options

    out: list[PolicyEntry] = []
    for k, p in enumerate(f.items(raw, "policies", empty=False)):
        where = f"policies[{k}]"
        entry = {"name": f.text(p, where)} if not isinstance(p, Mapping) else \
            f.mapping(p, where, keys={"name", "label", "options", "sweep"})
        name = f.text(entry.get("name", ""), f"{where}.name")
        try:
            accepted = policy_options(name)  # raises on an unknown name, listing the known
        except UnknownNameError as exc:
            raise f.error(str(exc), f"{where}.name") from None
        options = f.mapping(entry.get("options"), f"{where}.options")
        sweep = {key: f.items(v, f"{where}.sweep.{key}", empty=False) for key, v in
                 f.mapping(entry.get("sweep"), f"{where}.sweep").items()}
        for key in [*options, *sweep]:
            if key not in accepted and "**" not in accepted:
                raise f.error(f"policy {name!r} has no option {key!r}; its options: "
                              f"{', '.join(accepted) or 'none'}",
                              f"{where}.{'options' if key in options else 'sweep'}.{key}")
        keys = list(sweep)
        for values in itertools.product(*(sweep[s] for s in keys)) if keys else [()]:
            opts = {**options, **dict(zip(keys, values, strict=True))}
            label = f.text(entry.get("label") or name, f"{where}.label")
            if keys:
                label += "[" + ",".join(f"{k}={v}" for k, v in zip(keys, values,
                                                                    strict=True)) + "]"
            _check_policy(f, name, opts, f"{where}.options.")
            out.append(PolicyEntry(label, name, opts))
    labels = [p.label for p in out]
    if len(set(labels)) != len(labels):
        raise f.error("two policy entries have the same label; give one a 'label'", "policies")
    return out


def _check_policy(f: Fields, name: str, options: Mapping[str, Any], prefix: str) -> None:
    """Build the policy once: a value it refuses fails before the sweep starts."""
    from bbopt.policies import make_policy

    try:
        make_policy(name, **options)
    except InputError as exc:
        key = (exc.field or "").removeprefix("-o ")
        raise f.error(exc.reason, f"{prefix}{key}" if key else prefix.rstrip(".")) from None


def _budgets(f: Fields, raw: Any, policies: list[PolicyEntry]) -> dict[str, dict[str, Any]]:
    from bbopt.policies import policy_options

    out: dict[str, dict[str, Any]] = {}
    taken = {o for p in policies for o in policy_options(p.name)}
    for k, b in enumerate(f.items(raw, "budgets") or [None]):
        where = f"budgets[{k}]"
        if b is None:
            label, b = "default", {}
        elif not isinstance(b, Mapping):
            seconds = f.number(b, where, positive=True)
            label, b = f"{seconds:g}s", {"budget": seconds}
        else:
            b = f.mapping(b, where)
            label = f.text(b.pop("name", f"budget{k}"), f"{where}.name")
            bad = sorted(o for o in set(b) - {"budget", "deterministic"}
                         if o not in taken and "**" not in taken)
            if bad:
                raise f.error(f"no policy of the spec has an option {bad[0]!r} (a budget "
                              "entry sets 'budget' (s), 'deterministic' and other policy "
                              "options)", f"{where}.{bad[0]}")
        if label in out:
            raise f.error("two budget entries have the same name", f"{where}.name")
        for p in policies:  # each policy with the options this entry gives it
            accepted = policy_options(p.name)
            given = {o: v for o, v in b.items() if o in accepted or "**" in accepted}
            if given:
                _check_policy(f, p.name, {**p.options, **given}, f"{where}.")
        out[label] = b
    return out


def _budget_mode(value: Any, source: str) -> str:
    from bbopt.solvers.base import BUDGET_MODES

    if value not in BUDGET_MODES:
        raise InputError(f"must be one of {', '.join(BUDGET_MODES)}, got {value!r}",
                         source=source, field="budget_mode")
    return str(value)


def _executions(f: Fields, raw: Any) -> dict[str, dict[str, Any]]:
    """Execution models by label: ``rigid`` or ``{name: io-contention, kill_at_walltime:
    false, label: ...}``; options go to the model's constructor, read and checked by
    :func:`bbopt.units.check_options` (``memory_per_node: 64GB``)."""
    from bbopt.simulation.execution import EXECUTION_MODELS
    from bbopt.units import check_options

    out: dict[str, dict[str, Any]] = {}
    for k, item in enumerate(f.items(raw, "executions") or ["rigid"]):
        where = f"executions[{k}]"
        entry = {"name": f.text(item, where)} if not isinstance(item, Mapping) else \
            f.mapping(item, where)
        name = f.text(entry.pop("name", ""), f"{where}.name")
        if name not in EXECUTION_MODELS:
            raise f.error(f"unknown execution model {name!r}; known: "
                          f"{', '.join(EXECUTION_MODELS)}", f"{where}.name")
        label = f.text(entry.pop("label", name), f"{where}.label")
        try:
            options = check_options(EXECUTION_MODELS[name], entry,
                                    what=f"execution model {name!r}", prefix=f"{where}.")
        except InputError as exc:
            raise exc.at(source=f.source) from None
        if label in out:
            raise f.error("two execution models with one label; give one a 'label'", where)
        out[label] = {"name": name, **options}
    return out


def _named(f: Fields, item: Any, where: str) -> dict[str, Any]:
    """A generator reference: ``"name"`` or ``{name: ..., param: value}``, checked."""
    from bbopt.units import check_options
    from bbopt.workloads.generators.catalog import generator

    entry = {"name": f.text(item, where)} if not isinstance(item, Mapping) else \
        f.mapping(item, where)
    if "name" not in entry:
        raise f.error("needs a 'name'", where)
    try:
        gen = generator(f.text(entry["name"], f"{where}.name"))
    except UnknownNameError as exc:
        raise f.error(str(exc), f"{where}.name") from None
    params = {k: v for k, v in entry.items() if k != "name"}
    if "seed" in params:
        f.integer(params["seed"], f"{where}.seed")
    known = gen.parameters()
    for key in params:
        if key != "seed" and key not in known:
            raise f.error(f"generator {gen.name!r} has no parameter {key!r}; its parameters:"
                          f" {', '.join(known) or 'none'}", f"{where}.{key}")
    try:
        check_options(gen.fn, params, what=f"generator {gen.name!r}", prefix=f"{where}.",
                      fixed={"jobs": None})
    except InputError as exc:
        raise exc.at(source=f.source) from None
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

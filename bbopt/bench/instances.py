"""One benchmark instance: a decision problem a policy faced, as a versioned JSON document.

The instance library follows MIPLIB's practice (tiers, a recorded optimum where one is proven,
provenance for every instance) for bbopt's decision models: window selection (Fan et al.,
BBSched, Section 3.2.1), the select-and-place I/O window (Herbein et al., HPDC 2016), pack
building (Jeannot, Pallez & Vidal, Section 4), victim choice (Zvi & Oren, OMFS, Algorithm 1)
and plan orders (Kopanski & Rzadca, Euro-Par 2021, Section 3.3).
``docs/bench.md`` documents the schema; in short::

    {"schema": "bbopt-bench-instance", "version": 1, "id": "...", "problem": "window",
     "tier": "small", "form": {"kind": "weighted", "weights": [0.5, 0.5]},
     "provenance": {"trace": ..., "policy": ..., "time": ..., "seed": ..., ...},
     "model": {<the model's fields, SI units>},
     "known": {"status": "optimal", "objective": ..., "x": [...], "front": [[...], ...]}}

``model`` holds the constructor fields of the model class (numpy arrays as lists); a plan model
(not a dataclass) holds its scheduling point instead: ``now``, ``capacity``, ``alpha``, the
running jobs' ``[expected end, nodes, bb]`` (with named BB nodes also their ``[BB node, bytes]``
pieces, the nodes' capacities ``bb_nodes`` and their free space now ``bb_free``) and the
waiting jobs (``id``, ``submit``, ``walltime``, ``nodes``, ``bb``). Reading rebuilds the very
model (floats round-trip exactly through JSON). ``known`` is empty when no
optimum is proven. Bad documents raise :class:`~bbopt.errors.InputError` naming the file and
the JSON path of the field.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.errors import InputError
from bbopt.models.io_window import IOWindowModel
from bbopt.models.packs import PackModel
from bbopt.models.plan import Plan, PlanModel
from bbopt.models.preemption import PreemptionModel
from bbopt.models.window import WindowModel

SCHEMA = "bbopt-bench-instance"
VERSION = 1
TIERS = ("small", "medium", "large")

#: problem name -> (model class, objective sense of the scalar forms)
PROBLEMS: dict[str, tuple[type, str]] = {
    "window": (WindowModel, "max"),
    "pack": (PackModel, "max"),
    "victims": (PreemptionModel, "min"),
    "io-window": (IOWindowModel, "max"),
    "plan": (PlanModel, "min"),
}
#: The forms an instance may ask for, per problem.
FORMS = {"window": ("weighted", "lexicographic", "pareto"), "pack": ("stages",),
         "victims": ("min-cost",), "io-window": ("weighted", "lexicographic", "pareto"),
         "plan": ("min-score",)}


@dataclass
class Instance:
    """A decision problem with its form, provenance and what is known of its optimum."""

    id: str
    problem: str
    model: Any
    form: dict[str, Any]
    tier: str = "small"
    provenance: dict[str, Any] = field(default_factory=dict)
    known: dict[str, Any] = field(default_factory=dict)
    #: The model's JSON when the model object does not keep all of it (a plan model on named
    #: BB nodes keeps no pieces of the running jobs): written as is instead of the model's.
    source: dict[str, Any] | None = None

    @property
    def sense(self) -> str:
        return PROBLEMS[self.problem][1]

    @property
    def kind(self) -> str:
        return self.form["kind"]

    @property
    def size(self) -> int:
        """Variables of the decision: window jobs, applications, candidates, queued jobs."""
        return int(self.model.n if self.problem == "plan" else self.model.size)

    def solve_options(self) -> dict[str, Any]:
        """The keyword options :func:`bbopt.solvers.solve` needs for this instance's form."""
        if self.problem not in ("window", "io-window"):
            return {}
        opts: dict[str, Any] = {"form": self.kind}
        if self.form.get("weights") is not None:
            opts["weights"] = tuple(self.form["weights"])
        if self.form.get("priority") is not None:
            opts["priority"] = tuple(self.form["priority"])
        for key in ("method", "two_list"):  # how the front is found
            if key in self.form:
                opts[key] = self.form[key]
        return opts

    def score(self, x: Any) -> float | None:
        """The form's scalar value of solution ``x`` by the model's own evaluator (``None``
        when ``x`` is infeasible or missing; Pareto forms have no scalar)."""
        if x is None:
            return None
        m = self.model
        if self.problem == "window":
            x = np.asarray(x, dtype=bool)
            if not m.feasible(x) or self.kind != "weighted":
                return None
            from bbopt.solvers.scalarize import Form  # the one definition of the weighted value

            spec = Form.of(m.objectives, "weighted", self.solve_options().get("weights"))
            return float(spec.value(m, m.evaluate(x)))
        if self.problem == "io-window":  # a count matrix: nodes of each group per job
            y = np.asarray(x, dtype=np.int64)
            if y.shape != (m.size, m.groups) or not m.feasible(y) or self.kind != "weighted":
                return None
            from bbopt.solvers.scalarize import Form

            spec = Form.of(m.objectives, "weighted", self.solve_options().get("weights"))
            return float(spec.value(m.window, m.evaluate(y)))
        if self.problem == "pack":
            x = np.asarray(x, dtype=bool)
            return float(m.evaluate(x)[0]) if m.feasible(x) else None
        if self.problem == "plan":  # a plan (any starts) or a permutation (its greedy plan)
            if not isinstance(x, Plan):
                order = [int(p) for p in x]
                if sorted(order) != list(range(m.n)):
                    return None
                return float(m.evaluate(order))
            return None if m.check(x) is not None else float(m.evaluate(x))
        value = m.evaluate(np.asarray(x, dtype=bool))
        return float(value) if np.isfinite(value) else None

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "version": VERSION, "id": self.id, "problem": self.problem,
                "tier": self.tier, "form": _plain(self.form), "provenance": _plain(self.provenance),
                "model": self.source or model_to_json(self.model),
                "known": _plain(self.known)}

    @classmethod
    def from_json(cls, doc: Any, source: str = "<instance>") -> Instance:
        if not isinstance(doc, dict):
            raise InputError("an instance is a JSON object", source=source)
        if doc.get("schema") != SCHEMA:
            raise InputError(f"schema must be {SCHEMA!r}, got {doc.get('schema')!r}",
                             source=source, line="$.schema")
        if doc.get("version") != VERSION:
            raise InputError(f"version {doc.get('version')!r} is not supported (this bbopt "
                             f"reads version {VERSION})", source=source, line="$.version")
        for key in ("id", "problem", "form", "model"):
            if key not in doc:
                raise InputError("is missing", source=source, line=f"$.{key}")
        problem = doc["problem"]
        if problem not in PROBLEMS:
            raise InputError(f"unknown problem {problem!r}; known: {', '.join(PROBLEMS)}",
                             source=source, line="$.problem")
        form = doc["form"]
        if not isinstance(form, dict) or form.get("kind") not in FORMS[problem]:
            raise InputError(f"form kind must be one of {', '.join(FORMS[problem])}",
                             source=source, line="$.form.kind")
        tier = doc.get("tier", "small")
        if tier not in TIERS:
            raise InputError(f"tier must be one of {', '.join(TIERS)}, got {tier!r}",
                             source=source, line="$.tier")
        model = model_from_json(PROBLEMS[problem][0], doc["model"], source)
        return cls(str(doc["id"]), problem, model, dict(form), tier,
                   dict(doc.get("provenance") or {}), dict(doc.get("known") or {}),
                   doc["model"] if problem == "plan" else None)


def model_to_json(model: Any) -> dict[str, Any]:
    """The constructor fields of a model dataclass as plain JSON values (a model inside a
    model, as the I/O window's selection part, as a nested object); a plan model's scheduling
    point (:func:`plan_to_json`)."""
    if isinstance(model, PlanModel):
        return plan_to_json(model)
    out = {}
    for f in dataclasses.fields(model):
        if f.init and not f.name.startswith("_"):
            value = getattr(model, f.name)
            out[f.name] = (model_to_json(value) if dataclasses.is_dataclass(value)
                           else _plain(value))
    return out


def model_from_json(cls: type, data: Any, source: str) -> Any:
    """The model of class ``cls`` from :func:`model_to_json`'s output."""
    if not isinstance(data, dict):
        raise InputError("the model is a JSON object", source=source, line="$.model")
    if cls is PlanModel:
        return plan_from_json(data, source)
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and not f.name.startswith("_")}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise InputError(f"unknown field(s) {', '.join(unknown)} of {cls.__name__}",
                         source=source, line=f"$.model.{unknown[0]}")
    kwargs = {}
    for name, value in data.items():
        kind = str(fields[name].type)
        try:
            if value is None:
                kwargs[name] = None
            elif kind == "WindowModel":
                kwargs[name] = model_from_json(WindowModel, value, source)
            elif kind.startswith("tuple[np.ndarray"):
                kwargs[name] = tuple(np.asarray(v) for v in value)
            elif "np.ndarray" in kind:
                kwargs[name] = np.asarray(value)
            elif kind.startswith("tuple"):
                kwargs[name] = tuple(value)
            else:
                kwargs[name] = value
        except (TypeError, ValueError) as exc:
            raise InputError(f"cannot read: {exc}", source=source,
                             line=f"$.model.{name}") from None
    try:
        return cls(**kwargs)
    except InputError as exc:
        raise InputError(exc.reason, source=source,
                         line=f"$.model.{exc.field}" if exc.field else "$.model") from None
    except (TypeError, ValueError) as exc:
        raise InputError(f"not a {cls.__name__}: {exc}", source=source,
                         line="$.model") from None


#: The fields of a waiting job a plan model uses.
PLAN_JOB = ("id", "submit", "walltime", "nodes", "bb")


def plan_to_json(model: PlanModel, running: list | None = None) -> dict[str, Any]:
    """A plan model's scheduling point as JSON. On named BB nodes the model keeps no pieces of
    the running jobs: ``running`` gives them, ``(expected end, nodes, bb, pieces)`` as
    :meth:`PlanModel.from_state` builds them. Proximity placement is not represented."""
    if model.proximity is not None:
        raise InputError("a plan model placing BB by proximity cannot be written as an "
                         "instance", field="bb_proximity")
    out: dict[str, Any] = {"now": model.now, "capacity": list(model.capacity),
                           "alpha": model.alpha, "running": [list(r) for r in model.running],
                           "jobs": [{k: getattr(j, k) for k in PLAN_JOB} for j in model.jobs]}
    if model.named is not None:
        if running is None:
            raise InputError("a plan model on named BB nodes needs its running jobs' pieces",
                             field="running")
        out["running"] = [[float(e), int(n), float(b), [[int(k), float(v)] for k, v in pieces]]
                          for e, n, b, pieces in running]
        out["bb_nodes"] = list(model.named)
        out["bb_free"] = [float(v) for v in model._SN]
    return out


def plan_from_json(data: dict[str, Any], source: str) -> PlanModel:
    """The plan model of :func:`plan_to_json`'s output."""
    from bbopt.core import Job, Platform
    from bbopt.planner.bb import POOLED, bb_placement

    unknown = sorted(set(data) - {"now", "capacity", "alpha", "running", "jobs", "bb_nodes",
                                  "bb_free"})
    if unknown:
        raise InputError(f"unknown field(s) {', '.join(unknown)} of a plan model",
                         source=source, line=f"$.model.{unknown[0]}")
    for key in ("now", "capacity", "alpha", "running", "jobs"):
        if key not in data:
            raise InputError("is missing", source=source, line=f"$.model.{key}")
    jobs = []
    for k, j in enumerate(data["jobs"]):
        try:
            jobs.append(Job(**{f: j[f] for f in PLAN_JOB}))
        except (KeyError, TypeError) as exc:
            raise InputError(f"a job needs {', '.join(PLAN_JOB)}: {exc}", source=source,
                             line=f"$.model.jobs[{k}]") from None
        except InputError as exc:
            raise InputError(exc.reason, source=source,
                             line=f"$.model.jobs[{k}].{exc.field or ''}") from None
    named = data.get("bb_nodes")
    try:
        running = [(r[0], r[1], r[2], [tuple(p) for p in r[3]]) if named is not None
                   else tuple(r) for r in data["running"]]
        placement = POOLED if named is None else bb_placement(Platform(
            int(data["capacity"][0]), float(data["capacity"][1]), bb_nodes=tuple(named)))
        model = PlanModel(data["now"], data["capacity"], running, jobs, data["alpha"],
                          placement=placement)
    except (TypeError, ValueError, IndexError) as exc:
        raise InputError(f"not a plan model: {exc}", source=source, line="$.model") from None
    if named is not None and data.get("bb_free") is not None:
        model._SN = [float(v) for v in data["bb_free"]]  # the engine's sums, as from_state
    return model


def _plain(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    return x


def read_instance(path: str | Path) -> Instance:
    """Read one instance file."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except json.JSONDecodeError as exc:
        raise InputError(f"not JSON: {exc.msg}", source=str(path), line=exc.lineno) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=str(path)) from None
    return Instance.from_json(doc, str(path))


def write_instance(instance: Instance, directory: str | Path) -> Path:
    """Write ``instance`` as ``<directory>/<id>.json`` (atomically)."""
    from bbopt.outputs import write_text

    path = Path(directory) / f"{instance.id}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text(path, json.dumps(instance.to_json(), separators=(",", ":")) + "\n")


#: The committed small tier lives in ``LIBRARY/small``.
LIBRARY = Path(__file__).resolve().parent / "instances"
#: Where the regenerated tiers go by default (relative to the working directory).
REGENERATED = Path("bench-instances")


def tier_dir(tier: str, root: str | Path | None = None) -> Path:
    """Where the instances of ``tier`` live: ``root/<tier>``; by default the committed library
    for ``small`` and ``./bench-instances/<tier>`` for the regenerated tiers."""
    if tier not in TIERS:
        raise InputError(f"tier must be one of {', '.join(TIERS)}, got {tier!r}", field="tier")
    if root is None:
        root = LIBRARY if tier == "small" else REGENERATED
    return Path(root) / tier


def iter_instances(directory: str | Path) -> Iterator[Instance]:
    """The instances of a directory, by file name."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError("no such instance directory", source=str(directory))
    for path in sorted(directory.glob("*.json")):
        yield read_instance(path)

"""MPS and LP files of the instances' integer forms, and solution files scored back by bbopt.

Any MILP solver can then be run on bbopt's decision problems. The programs are the ones the
``milp`` / ``scip`` backends solve, written by PuLP (one translation per model):

- window, weighted form (Fan et al., BBSched, Section 3.2): the first stage of
  :mod:`bbopt.solvers.window.forms` (the weighted sum in integer units) over the tightened
  capacity rows;
- the I/O window on the tree (Herbein et al.), weighted form: the same over the selection and
  the placement counts per job and group of free nodes (the manifest lists the counts);
- window, Pareto form: one program per epsilon-constraint step of the exact front (maximise the
  first objective with the second at least one unit above the previous point's and the first
  below it), file ``<id>-eps<k>``; its optimum is the front's ``k``-th point;
- pack (Jeannot, Pallez & Vidal): the duration-threshold program, objective the first stage;
- victims (Zvi & Oren, OMFS): the covering 0-1 program.

Plan orders (Kopanski & Rzadca) have no integer program: their exact form is a CP-SAT model
with squared waits, so plan instances are not exported.

``manifest.json`` beside the files maps each file to its instance, step, the variables that are
the decision (``x`` names, in the model's index order) and the value bbopt's evaluator gives the
recorded optimum. :func:`read_solution` reads a solution file (HiGHS's, or ``name value``
lines as CBC and SCIP write) and :func:`score_file` scores it with the model's evaluator.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.bench.instances import Instance, iter_instances, read_instance
from bbopt.errors import InputError

MANIFEST = "manifest.json"


def programs(inst: Instance) -> list[tuple[str, Any, list[str | None], float | None]]:
    """The PuLP programs of ``inst``: (file stem, problem, decision variable name per model
    index (``None``: fixed out), value of the recorded optimum); none for a plan order."""
    if inst.problem == "plan":
        return []
    if inst.problem in ("window", "io-window"):
        return _window(inst)
    if inst.problem == "pack":
        return [_pack(inst)]
    from bbopt.solvers.preemption.milp import victims_problem

    prob, x = victims_problem(inst.model)
    return [(inst.id, prob, [v.name for v in x], inst.known.get("objective"))]


def _window(inst: Instance):
    from bbopt.solvers.base import Budget
    from bbopt.solvers.scalarize import Form
    from bbopt.solvers.window.forms import _combine, linear_form
    from bbopt.solvers.window.milp import _Pulp

    m = inst.model
    opts = inst.solve_options()
    spec = Form.of(m.objectives, inst.kind, opts.get("weights"), opts.get("priority"))
    if inst.problem == "io-window":  # selection and placement counts (Herbein's window)
        from bbopt.solvers.io_window.forms import io_linear_form

        lf = io_linear_form(m, spec.names)
        stage = spec.stages(m.window)[0]
    else:
        lf = linear_form(m, spec.names)
        stage = spec.stages(m)[0]
    if inst.kind != "pareto":
        p = _Pulp(lf, Budget(), 0, "cbc")
        p.prob.setObjective(p._expr(*_combine(lf, stage)) + 0)
        names = [v.name for v in p.x]
        if inst.problem == "io-window":  # the counts decide; the selection follows them
            names = [v.name for v in p.a]
        return [(inst.id, p.prob, names, inst.known.get("objective"))]
    f1, f2 = spec.names[:2]
    out = []
    front = sorted(inst.known.get("front", []), key=lambda f: -f[0])
    prev: np.ndarray | None = None
    for k, point in enumerate(front):
        p = _Pulp(lf, Budget(), 0, "cbc")
        if prev is not None:  # the step after point k-1: f2 above it, f1 below it
            o1, o2 = lf.objectives[f1], lf.objectives[f2]
            p.push_ge(*o2, lf.value(f2, prev, np.zeros(0, np.int64)) + 1)
            p.push_ge(-o1[0], -o1[1], -(lf.value(f1, prev, np.zeros(0, np.int64)) - 1))
        p.prob.setObjective(p._expr(*lf.objectives[f1]) + 0)
        out.append((f"{inst.id}-eps{k}", p.prob, [v.name for v in p.x], float(point[0])))
        prev = _point_selection(inst, point)
    return out


def _point_selection(inst: Instance, point: list[float]) -> np.ndarray:
    """A selection with the objective values ``point`` (by the exact backend)."""
    from bbopt.solvers.base import Budget, solve

    res = solve(inst.model, "cpsat", Budget(30.0), 0, **inst.solve_options())
    for s in res.pareto:
        if np.allclose(s.objectives, point, rtol=1e-12):
            return np.asarray(s.x, dtype=bool)
    raise InputError(f"instance {inst.id}: the recorded front point {point} is not found",
                     line="$.known.front")


def _pack(inst: Instance):
    from bbopt.models.packs import integer_form
    from bbopt.solvers.packs._stages import reduced
    from bbopt.solvers.packs.milp import pack_problem, set_stage

    m = inst.model
    keep = reduced(m)
    t_int, u_int, stages, _ = integer_form(m)
    prob, x = pack_problem(t_int[keep], u_int[keep], m.nodes[keep], m.capacity)
    set_stage(prob, x, stages[0][keep], [], 0)
    names: list[str | None] = [None] * m.size
    for j, i in enumerate(keep):
        names[int(i)] = x[j].name
    return inst.id, prob, names, inst.known.get("objective")


def export_instance(inst: Instance, out: str | Path) -> list[dict[str, Any]]:
    """Write the MPS and LP files of ``inst`` into ``out``; returns their manifest entries."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    entries = []
    for stem, prob, names, optimum in programs(inst):
        prob.writeMPS(str(out / f"{stem}.mps"), with_objsense=True)  # MAX stated in the file
        prob.writeLP(str(out / f"{stem}.lp"))
        entries.append({"file": stem, "instance": inst.id, "sense": _sense(prob),
                        "variables": names, "optimum": optimum,
                        "step": int(stem.rpartition("-eps")[2]) if "-eps" in stem else None})
    return entries


def _sense(prob) -> str:
    import pulp

    return "max" if prob.sense == pulp.LpMaximize else "min"


def export_dir(instances: str | Path, out: str | Path) -> list[Path]:
    """Export every instance of a directory; writes the manifest too."""
    from bbopt.outputs import write_text

    entries = []
    for inst in iter_instances(instances):
        entries += export_instance(inst, out)
    write_text(Path(out) / MANIFEST, json.dumps({"source": str(instances),
                                                 "programs": entries}, indent=1) + "\n")
    return sorted(Path(out).glob("*.mps")) + sorted(Path(out).glob("*.lp"))


def read_solution(path: str | Path) -> dict[str, float]:
    """Variable values from a solution file: HiGHS's (``# Columns N`` then ``name value``
    lines) or plain ``name value`` lines (CBC's and SCIP's, with a leading index or trailing
    columns tolerated)."""
    path = Path(path)
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=str(path)) from None
    values: dict[str, float] = {}
    section = None
    for k, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        if parts[0] == "#":  # HiGHS: "# Columns N", "# Rows N", ...
            section = parts[1].lower() if len(parts) > 1 else section
            continue
        if section is not None and section != "columns":
            continue
        if len(parts) >= 3 and parts[0].isdigit():  # CBC: index name value ...
            parts = parts[1:]
        if len(parts) < 2:
            continue
        try:
            values[parts[0]] = float(parts[1])
        except ValueError:
            if section == "columns":
                raise InputError(f"not a number: {parts[1]!r}", source=str(path),
                                 line=k) from None
    return values


def score_file(solution: str | Path, entry: dict[str, Any], instance: Instance
               ) -> float | None:
    """bbopt's value of a solution file for a manifest entry: the form's value (window
    weighted, pack, victims) or the first objective (a Pareto step); ``None`` if infeasible."""
    return score_values(read_solution(solution), entry, instance)


def score_values(values: dict[str, float], entry: dict[str, Any], instance: Instance
                 ) -> float | None:
    if instance.problem == "io-window":  # the placement counts, as the backends read them
        from bbopt.solvers.io_window.forms import counts_of

        a = np.array([round(values.get(name, 0.0)) for name in entry["variables"]],
                     dtype=np.int64)
        return instance.score(counts_of(instance.model, a))
    x = np.array([name is not None and round(values.get(name, 0.0)) == 1
                  for name in entry["variables"]], dtype=bool)
    if entry.get("step") is not None:  # a Pareto step: its first objective
        m = instance.model
        return float(m.evaluate(x)[0]) if m.feasible(x) else None
    return instance.score(x)


def load_manifest(directory: str | Path) -> list[dict[str, Any]]:
    path = Path(directory) / MANIFEST
    try:
        return json.loads(path.read_text())["programs"]
    except (OSError, KeyError, json.JSONDecodeError) as exc:
        raise InputError(f"not an export manifest: {exc}", source=str(path)) from None


__all__ = ["export_dir", "export_instance", "load_manifest", "programs", "read_instance",
           "read_solution", "score_file", "score_values"]

"""``bbopt bench run``: every applicable backend x budget x seed on a tier of instances.

MIPLIB's practice: a time limit per run (the budgets), several seeds for performance
variability (for the backends that take one; enumeration and greedy rules run once), and a
status per run -- OPTIMAL, FEASIBLE, FALLBACK (the contract's greedy answer: no solution of
the backend's own in time), INFEASIBLE, or ``error`` (the backend raised). Each run records its
wall and CPU time, its objective scored by the model's own evaluator, the bound, the primal gap
to the best known value (Berthold: ``|best - v| / max(|best|, |v|)``, 1 without a solution) or,
for a Pareto instance, the hypervolume ratio of its front to the exact one (utilisation
fractions, reference point the origin), and its anytime trace: ``(seconds, value)`` of each
incumbent from the backends that report them (asked with ``trace=True``: CP-SAT's solution
callbacks, SCIP's event handler and the plan annealing's best order so far in
``Result.info["trace"]``, NSGA-II's first front per
generation in ``Result.info["front_trace"]``), for the others their answer at the end (the
report turns values into gaps to the best known value; a front's value is its hypervolume
ratio).

Runs go to the results store of the sweeps (:class:`bbopt.analysis.store.Store`): one
directory per run named by the hash of what determines it (instance content, backend, budget,
seed, bbopt version), written atomically, so an interrupted run resumes where it stopped and a
widened grid runs only its new cells. Runs are farmed out to worker processes
(:func:`bbopt.analysis.workers.run_each`); each worker writes its own runs.
"""

from __future__ import annotations

import contextlib
import os
import time as _time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.analysis.store import Store, file_sha256, run_hash
from bbopt.bench.instances import Instance, read_instance
from bbopt.errors import InputError

#: Budgets (seconds) and seeds per tier.
TIER_BUDGETS = {"small": (0.01, 0.1, 1.0), "medium": (0.1, 1.0, 10.0), "large": (1.0, 10.0, 60.0)}
TIER_SEEDS = {"small": 3, "medium": 2, "large": 1}
#: Backends whose answer does not depend on the seed (run with seed 0 only).
SEEDLESS = ("exhaustive", "greedy", "highs")
#: Options of the exact front that the other backends do not take.
FRONT_OPTIONS = ("method", "two_list")
EXACT = ("cpsat", "milp", "highs", "scip")
#: Backends that report their incumbents over time when asked (``trace=True``).
TRACED = ("cpsat", "scip", "nsga2", "annealing")
#: A value within this relative distance of the best known counts as reaching it.
TOL = 1e-6


def backends(inst: Instance) -> list[str]:
    """The backends applicable to ``inst``: every one registered for its model type, but
    enumeration only up to the size its backend accepts. On a plan over named BB nodes CP-SAT
    solves the BB-pool relaxation and places its order greedily: FEASIBLE with the relaxation's
    bound, never OPTIMAL."""
    from bbopt.solvers.base import backends_for

    limit = _enumeration_limit(inst.problem)
    return [b for b in backends_for(inst.model) if b != "exhaustive" or inst.size <= limit]


def _enumeration_limit(problem: str) -> int:
    """The largest instance the ``exhaustive`` backend of ``problem`` enumerates (its own
    constant or default)."""
    import inspect

    if problem == "window":
        from bbopt.solvers.window.exhaustive import MAX_WINDOW

        return MAX_WINDOW
    if problem == "io-window":
        from bbopt.solvers.io_window.exhaustive import MAX_WINDOW as MAX_IO_WINDOW

        return MAX_IO_WINDOW
    if problem == "victims":
        from bbopt.solvers.preemption.exhaustive import MAX_CANDIDATES

        return MAX_CANDIDATES
    if problem == "plan":
        from bbopt.solvers.plan.exhaustive import MAX_JOBS

        return MAX_JOBS
    from bbopt.solvers.packs.exhaustive import solve_exhaustive

    return int(inspect.signature(solve_exhaustive).parameters["max_items"].default)


def primal_gap(best: float | None, value: float | None) -> float:
    """Berthold's primal gap: 0 at the best value, 1 without a solution or of the other sign,
    else ``|best - value| / max(|best|, |value|)``."""
    if value is None or best is None or not np.isfinite(value):
        return 1.0
    if abs(best - value) <= 1e-12 * max(abs(best), 1.0):
        return 0.0
    if best * value < 0:
        return 1.0
    return min(abs(best - value) / max(abs(best), abs(value)), 1.0)


def hv_ratio(inst: Instance, points: Sequence[Sequence[float]]) -> float:
    """Hypervolume of ``points`` over the exact front's, in utilisation fractions with the
    origin as the reference point (all objectives maximised)."""
    from pymoo.indicators.hv import HV

    exact = np.asarray(inst.known.get("front") or [], dtype=float)
    if not len(points) or not len(exact):
        return 0.0
    scales = inst.model.scales()
    ind = HV(ref_point=np.zeros(exact.shape[1]) + 1e-9)
    ref = ind(-exact / scales)
    got = ind(-np.asarray(points, dtype=float) / scales)
    return float(got / ref) if ref > 0 else 1.0


def _values(inst: Instance, res) -> tuple[float | None, list[list[float]]]:
    """The run's scalar value (best over a returned set) and its front's points."""
    if res.solution is None and not res.pareto:
        return None, []
    if inst.kind == "pareto":
        pts = [list(s.objectives) for s in res.pareto] or [list(inst.model.evaluate(
            res.solution))]
        return None, pts
    xs = [s.x for s in res.pareto] or [res.solution]
    scores = [v for v in (inst.score(x) for x in xs) if v is not None]
    if not scores:
        return None, []
    return (max(scores) if inst.sense == "max" else min(scores)), []


_WARM: set[tuple[str, str]] = set()  # (problem, backend) pairs this worker has imported


def _warm(inst: Instance, backend: str) -> None:
    """Solve once untimed so that importing the backend's solver is not counted."""
    from bbopt.solvers.base import Budget, solve

    if (inst.problem, backend) in _WARM:
        return
    with contextlib.suppress(Exception):  # the timed run reports an error
        solve(inst.model, backend, Budget(0.05), 0, **_options(inst, backend))
    _WARM.add((inst.problem, backend))


def _options(inst: Instance, backend: str) -> dict[str, Any]:
    opts = inst.solve_options()
    if backend not in EXACT:
        opts = {k: v for k, v in opts.items() if k not in FRONT_OPTIONS}
    if backend in TRACED:
        opts["trace"] = True
    return opts


def solve_one(inst: Instance, backend: str, budget: float, seed: int) -> dict[str, Any]:
    """One run's metrics (see the module docstring)."""
    from bbopt.solvers.base import Budget, solve

    _warm(inst, backend)
    c0, t0 = _time.process_time(), _time.perf_counter()
    try:
        res = solve(inst.model, backend, Budget(budget), seed, **_options(inst, backend))
    except Exception as exc:  # noqa: BLE001 - an error is a run's outcome here
        return {"status": "error", "error": f"{type(exc).__name__}: {exc}",
                "wall_time": _time.perf_counter() - t0, "cpu_time": _time.process_time() - c0,
                "gap": 1.0, "trace": []}
    wall, cpu = _time.perf_counter() - t0, _time.process_time() - c0
    value, points = _values(inst, res)
    out: dict[str, Any] = {"status": str(res.status.value if hasattr(res.status, "value")
                                         else res.status),
                           "wall_time": wall, "cpu_time": cpu, "objective": value,
                           "bound": res.bound if isinstance(res.bound, int | float) else None}
    fronts = res.info.get("front_trace", ())  # a population's first front over time
    if inst.kind == "pareto":
        out["front"] = points
        out["hv_ratio"] = hv_ratio(inst, points)
        out["gap"] = 1.0 - out["hv_ratio"]
        trace = [[float(t), hv_ratio(inst, [list(inst.model.evaluate(x)) for x in X])]
                 for t, X in fronts]
        if points and (not trace or trace[-1][1] != out["hv_ratio"]):
            trace.append([wall, out["hv_ratio"]])
        out["trace"] = trace
        return out
    out["best_known"] = inst.known.get("objective")
    out["gap"] = primal_gap(out["best_known"], value)
    trace = []
    incumbents = [(t, [x]) for t, x in res.info.get("trace", ())] + list(fronts)
    for t, xs in incumbents:
        vs = [v for v in (inst.score(x) for x in xs) if v is not None]
        if vs:
            trace.append([float(t), max(vs) if inst.sense == "max" else min(vs)])
    if value is not None and (not trace or trace[-1][1] != value):
        trace.append([wall, value])  # the answer at the end (a backend without a trace)
    out["trace"] = trace
    return out


def _task(root: str, path: str, sha: str, backend: str, budget: float, seed: int,
          tier: str) -> tuple[str, str]:
    """A worker's run: solve and write it into the store (skipped when already there)."""
    store = Store(root)
    h = run_hash(_inputs(sha, backend, budget, seed))
    if store.done(h):
        return h, "skipped"
    inst = read_instance(path)
    try:
        metrics = solve_one(inst, backend, budget, seed)
    except Exception:  # noqa: BLE001 - recorded, retried next time
        store.write_failure(h, {"instance": inst.id, "backend": backend,
                                "traceback": traceback.format_exc()})
        return h, "failed"
    params = {"instance": inst.id, "problem": inst.problem, "form": inst.kind,
              "tier": tier, "size": inst.size, "backend": backend, "budget": budget,
              "seed": seed}
    store.write_run(h, {"hash": h, "kind": "solver-run", "sweep": "bench", "params": params,
                        "metrics": metrics,
                        "provenance": {**_provenance(inst, sha),
                                       "wall_time": metrics["wall_time"],
                                       "cpu_time": metrics["cpu_time"]}}, None)
    return h, metrics["status"]


def _inputs(sha: str, backend: str, budget: float, seed: int) -> dict[str, Any]:
    from bbopt import __version__

    return {"bench": 1, "instance_sha256": sha, "backend": backend, "budget": budget,
            "seed": seed, "bbopt_version": __version__}


def _provenance(inst: Instance, sha: str) -> dict[str, Any]:
    from bbopt import __version__

    return {"bbopt_version": __version__, "instance_sha256": sha, "host": os.uname().nodename,
            "load": list(os.getloadavg()), "finished_at": _time.time(),
            "instance_provenance": inst.provenance}


def tasks(directory: str | Path, *, tier: str = "small",
          budgets: Sequence[float] | None = None, seeds: int | None = None,
          backend_names: Sequence[str] | None = None) -> list[tuple[str, str, str, float, int]]:
    """The grid: (instance path, content hash, backend, budget, seed) per run."""
    directory = Path(directory)
    if not directory.is_dir():
        raise InputError("no such instance directory", source=str(directory))
    budgets = tuple(budgets or TIER_BUDGETS[tier])
    if any(not (b > 0 and np.isfinite(b)) for b in budgets):
        raise InputError(f"budgets must be positive seconds, got {budgets}", field="budgets")
    n_seeds = TIER_SEEDS[tier] if seeds is None else int(seeds)
    if n_seeds < 1:
        raise InputError(f"seeds must be >= 1, got {n_seeds}", field="seeds")
    out = []
    for path in sorted(directory.glob("*.json")):
        inst = read_instance(path)
        sha = file_sha256(path)
        names = backends(inst)
        if backend_names is not None:
            unknown = set(backend_names) - {b for b in _all_backends()}
            if unknown:
                raise InputError(f"unknown backend(s) {', '.join(sorted(unknown))}",
                                 field="backends")
            names = [b for b in names if b in backend_names]
        for backend in names:
            for budget in budgets:
                for seed in range(1 if backend in SEEDLESS else n_seeds):
                    out.append((str(path), sha, backend, float(budget), seed))
    return out


def _all_backends() -> set[str]:
    from bbopt.solvers.base import BUILTIN_BACKENDS

    return {name for table in BUILTIN_BACKENDS.values() for name in table}


def run_tier(directory: str | Path, out: str | Path, *, tier: str = "small",
             budgets: Sequence[float] | None = None, seeds: int | None = None,
             backends: Sequence[str] | None = None, workers: int = 2,
             log: Callable[[str], None] = lambda s: None, progress: bool = False) -> str:
    """Run the grid of a tier into the store ``out``; returns a one-line summary.
    ``progress``: the runs done and failed, as a bar on a terminal or a line every N seconds
    in a log (:mod:`bbopt.progress`)."""
    from bbopt.analysis.workers import run_each
    from bbopt.progress import progress as display

    grid = tasks(directory, tier=tier, budgets=budgets, seeds=seeds, backend_names=backends)
    store = Store(out)
    store.clean_temporaries()
    todo = [(str(out), p, sha, b, budget, seed, tier) for p, sha, b, budget, seed in grid
            if not store.done(run_hash(_inputs(sha, b, budget, seed)))]
    log(f"{len(grid)} runs in the grid, {len(grid) - len(todo)} already in {out}")
    t0 = _time.perf_counter()
    counts: dict[str, int] = {}
    bar = display(len(todo), unit="run", desc="bench", enabled=progress,
                  skipped=len(grid) - len(todo), count_failed=True)
    try:
        for _, status in run_each(_task, todo, workers):
            counts[status] = counts.get(status, 0) + 1
            bar.set_postfix(failed=counts.get("failed", 0))
            bar.update(1)
    finally:
        bar.close()
    took = _time.perf_counter() - t0
    told = ", ".join(f"{v} {k}" for k, v in sorted(counts.items()))
    return f"{len(todo)} runs in {took:.1f} s ({told or 'nothing to do'}); store {out}"

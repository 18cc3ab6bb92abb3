"""Window-selection quality and speed per backend, and BBSched vs its baselines on KTH.

Fan et al., BBSched (HPDC 2019): Section 3.2.3 (generational distance of the GA against the true
front, P and G) and Section 4.4 (wait, slowdown, node and BB usage against the naive method).

Part A, random windows (w = 10, 20, 50) on a 1,024-node machine with 300 TB of BB, half of the
jobs without BB; two mixes: ``plentiful`` (requests log-normal around 4 TB) and ``scarce``
(around 40 TB). A random 30-100 % of the machine is free. Part B, windows taken from real
simulation states: KTH (SWF) with Kopanski's log-normal BB on 96 nodes / 480 GB, states captured
under ``naive`` where at least w jobs wait. For every window and backend: time (median, p95),
front size, hypervolume ratio to the exact front (pymoo's HV indicator on utilisation fractions,
reference point the origin), generational distance (pymoo's GD, same space), the optimality
gap of the weighted 50/50 form, and how many solves (front and weighted) ended in the contract's
greedy FALLBACK because the budget ran out before any answer (``fallb``). The exact front is
``exhaustive`` for w <= 20 and ``cpsat`` beyond (checked against each other for w <= 20).

The exact fronts of nodes and BB are listed by two-list enumeration when it proves them complete
(:mod:`bbopt.solvers.window.subset_sums`), solved by epsilon-constraint otherwise; ``enum`` is the
share of ``cpsat``/``milp`` fronts that needed no solver. BBSched against its baselines in
simulation: ``benchmarks/bbsched_reproduction.py``.

Run: ``python benchmarks/window_quality.py [--instances 20]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _data import find_data  # noqa: E402
from pymoo.indicators.gd import GD  # noqa: E402
from pymoo.indicators.hv import HV  # noqa: E402

from bbopt import simulate  # noqa: E402
from bbopt.core import TB, Platform, Status  # noqa: E402
from bbopt.models.window import WindowModel  # noqa: E402
from bbopt.solvers import Budget, solve  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402


def random_window(rng: np.random.Generator, w: int, mix: str) -> WindowModel:
    nodes = rng.choice([1, 2, 4, 8, 16, 32, 64, 128, 256], w,
                       p=[.2, .15, .15, .15, .1, .1, .07, .05, .03])
    scale = 4 * TB if mix == "plentiful" else 40 * TB
    bb = np.where(rng.random(w) < 0.5, 0.0,
                  np.minimum(np.round(rng.lognormal(np.log(scale), 1.0, w) / 1e9) * 1e9, 300 * TB))
    free = rng.uniform(0.3, 1.0)
    return WindowModel(nodes=nodes, bb=bb, free_nodes=int(1024 * free),
                       free_bb=float(np.floor(300 * free) * TB), total_nodes=1024,
                       total_bb=300 * TB)


def kth_windows(w: int, count: int, seed: int = 0) -> list[WindowModel]:
    path = find_data("KTH-SP2-1996-2.1-cln.swf")
    if path is None:
        return []
    jobs = with_lognormal_bb(read_swf(path).jobs[:4000], seed=seed)
    states = []

    def keep(state, decision):
        if len(state.queue) >= w:
            states.append(state)

    platform = Platform.kopanski()
    simulate([j for j in jobs if platform.why_never_fits(j) is None], platform, "naive",
             on_decision=keep)
    rng = np.random.default_rng(seed)
    picks = rng.choice(len(states), size=min(count, len(states)), replace=False)
    out = []
    for k in sorted(picks):
        s = states[k]
        free_n, free_b = s.free()
        out.append(WindowModel.from_jobs(list(s.queue)[:w], free_n, free_b,
                                         total_nodes=platform.nodes, total_bb=platform.bb))
    return out


def fractions(model: WindowModel, result) -> np.ndarray:
    pts = [s.objectives for s in result.pareto] or [model.evaluate(result.solution)]
    return np.asarray(pts, dtype=float) / model.scales()


def hv_ratio(exact: np.ndarray, approx: np.ndarray) -> float:
    ind = HV(ref_point=np.zeros(exact.shape[1]) + 1e-9)
    ref = ind(-exact)
    return float(ind(-approx) / ref) if ref > 0 else 1.0


def weighted(model: WindowModel, F: np.ndarray) -> float:
    return float(np.max(F[:, :2] @ np.array([0.5, 0.5])))


#: CBC can take minutes to prove some w=50 knapsacks optimal; it is cut at this budget.
MILP_BUDGET = 5.0

BACKENDS = [
    ("cpsat", {}),
    ("milp", {}),
    ("nsga2", {}),
    ("nsga2-pymoo", {"engine": "pymoo"}),
    ("greedy", {"rule": "first-fit"}),
    ("bin-packing", {"rule": "bin-packing"}),
]


def run_windows(models: list[WindowModel], label: str, rows: list, with_pymoo: bool) -> None:
    w = models[0].size
    stats: dict[str, dict[str, list]] = {}
    fallbacks: dict[str, int] = {}
    for m in models:
        ref_backend = "exhaustive" if w <= 20 else "cpsat"
        exact = solve(m, ref_backend, Budget(120.0))
        exact_f = fractions(m, exact)
        opt_w = solve(m, ref_backend, Budget(120.0), form="weighted", weights=(0.5, 0.5))
        for name, opts in BACKENDS:
            if name == "nsga2-pymoo" and not with_pymoo:
                continue
            backend = "greedy" if name in ("greedy", "bin-packing") else name.split("-")[0]
            limit = MILP_BUDGET if backend == "milp" else 30.0
            t0 = time.perf_counter()
            r = solve(m, backend, Budget(limit), seed=0, **opts)
            dt = time.perf_counter() - t0
            F = fractions(m, r)
            if backend in ("cpsat", "milp"):
                t1 = time.perf_counter()
                rw = solve(m, backend, Budget(limit), form="weighted", weights=(0.5, 0.5))
                tw = time.perf_counter() - t1
                # A FALLBACK (no answer within the budget) carries the greedy's objective values.
                val = (weighted(m, fractions(m, rw)) if rw.status is Status.FALLBACK
                       else rw.objective)
                fallbacks[name] = fallbacks.get(name, 0) + (rw.status is Status.FALLBACK)
            else:
                tw = dt
                val = weighted(m, F)
            fallbacks[name] = fallbacks.get(name, 0) + (r.status is Status.FALLBACK)
            s = stats.setdefault(name, {k: [] for k in ("t", "size", "hv", "gd", "gap", "tw",
                                                        "enum")})
            s["enum"].append(r.info.get("front_by") == "enumeration")
            s["t"].append(dt)
            s["tw"].append(tw)
            s["size"].append(len(F))
            s["hv"].append(hv_ratio(exact_f, F))
            s["gd"].append(float(GD(exact_f)(F)))
            s["gap"].append((opt_w.objective - val) / max(opt_w.objective, 1e-12))
    for name, s in stats.items():
        rows.append((label, w, name, np.median(s["t"]), np.percentile(s["t"], 95),
                     np.mean(s["size"]), np.mean(s["hv"]), np.min(s["hv"]), np.mean(s["gd"]),
                     np.median(s["tw"]), np.mean(s["gap"]), np.max(s["gap"]),
                     fallbacks.get(name, 0), np.mean(s["enum"])))


def print_quality(rows: list) -> None:
    head = (f"{'windows':<16}{'w':>4} {'backend':<12}{'t_med':>8}{'t_p95':>8}{'front':>7}"
            f"{'HV':>8}{'HVmin':>8}{'GD':>9} {'t_w50':>7}{'gap':>9}{'gapmax':>9}{'fallb':>6}"
            f"{'enum':>6}")
    print(head)
    print("-" * len(head))
    for r in rows:
        print(f"{r[0]:<16}{r[1]:>4} {r[2]:<12}{r[3]:>8.4f}{r[4]:>8.4f}{r[5]:>7.2f}{r[6]:>8.4f}"
              f"{r[7]:>8.4f}{r[8]:>9.2e} {r[9]:>7.4f}{r[10]:>9.2e}{r[11]:>9.2e}{r[12]:>6d}"
              f"{r[13]:>6.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", type=int, default=20)
    args = ap.parse_args()
    solve(WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=1.0), "greedy")  # imports
    rows: list = []
    for mix in ("plentiful", "scarce"):
        for w in (10, 20, 50):
            rng = np.random.default_rng(1000 * w + (mix == "scarce"))
            models = [random_window(rng, w, mix) for _ in range(args.instances)]
            run_windows(models, f"random-{mix}", rows, with_pymoo=(w == 50))
    for w in (20, 50):
        models = kth_windows(w, args.instances)
        if models:
            run_windows(models, "KTH-states", rows, with_pymoo=False)
    load = ", ".join(f"{v:.2f}" for v in os.getloadavg())
    print("Window selection, per backend (times in s; HV ratio and GD against the exact front "
          f"in utilisation fractions; gap of the weighted 50/50 form); load average {load}, "
          f"{os.cpu_count()} cores")
    print_quality(rows)


if __name__ == "__main__":
    main()

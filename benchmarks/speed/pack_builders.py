"""Per-decision CPU time of the exact pack builders (``cpsat``, ``milp``) against the greedy
one, measured in the same run (Jeannot, Pallez & Vidal, IJHPCA 2023, Section 4: the pack of
applications that share one exclusive I/O node; bbopt's exact form, ``pack-opt``).

    python benchmarks/speed/pack_builders.py [--repeats 20] [--sizes 50,200,1000]

The remaining applications are drawn from a 1,000-application workload of the generator
(M-BN at alpha 0.5 and U-No at alpha 0.4, seed 0), all nodes free; each builder gets the
policy's budget (1 s wall, CP-SAT deterministic limit 2) and the Max order. Printed per family,
size and backend: CPU ms per decision (p50, p95; CBC runs as a child process and counts), the
ratio of the p50 to the greedy builder's, the statuses and the wall p50. ``milp`` runs up to
200 applications. Each builder solves one small pack untimed first (its imports).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt.models.packs import PackModel  # noqa: E402
from bbopt.solvers import Budget, solve  # noqa: E402
from bbopt.workloads.generators.jeannot import generate  # noqa: E402

#: family: (protocol, I/O profile, alpha)
FAMILIES = {"M-BN": ("mira", "binormal", 0.5), "U-No": ("uniform", "normal", 0.4)}


def cpu_time() -> float:
    """CPU seconds of this process and of its finished children (CBC runs as a child)."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def timing(repeats: int, sizes: list[int], apps: int = 1000) -> None:
    print(f"exact pack builder, CPU time per decision (remaining applications drawn from a "
          f"{apps}-application workload, all nodes free; the 1 s budget is wall time)")
    print("| family | apps | backend | p50 ms | p95 ms | x greedy p50 | OPTIMAL | FEASIBLE "
          "| FALLBACK | wall p50 ms |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for family, (protocol, profile, alpha) in FAMILIES.items():
        wl = generate(apps, alpha=alpha, protocol=protocol, io_profile=profile, seed=0)
        rng = np.random.default_rng(0)
        warm = PackModel.from_jobs(wl.jobs[:10], wl.nodes, wl.bandwidth)
        for backend in ("greedy", "cpsat", "milp"):  # untimed: imports OR-Tools and PuLP
            solve(warm, backend, Budget(1.0, 2.0), seed=0, order="max")
        for m in sizes:
            ref = None
            for backend in ("greedy", "cpsat", "milp"):
                if backend == "milp" and m > 200:
                    continue
                times, walls, statuses = [], [], []
                for r in range(repeats if m < 1000 else max(repeats // 2, 1)):
                    pick = rng.choice(len(wl.jobs), size=min(m, len(wl.jobs)), replace=False)
                    model = PackModel.from_jobs([wl.jobs[i] for i in pick], wl.nodes,
                                                wl.bandwidth)
                    c0, w0 = cpu_time(), time.perf_counter()
                    res = solve(model, backend, Budget(1.0, 2.0), seed=r, order="max")
                    times.append(cpu_time() - c0)
                    walls.append(time.perf_counter() - w0)
                    statuses.append(res.status.value)
                p50 = float(np.median(times))
                ref = p50 if ref is None else ref
                print(f"| {family} | {m} | {backend} | {1e3 * p50:.2f} | "
                      f"{1e3 * np.percentile(times, 95):.2f} | {p50 / max(ref, 1e-9):.1f} | "
                      f"{statuses.count('OPTIMAL')} | {statuses.count('FEASIBLE')} | "
                      f"{statuses.count('FALLBACK')} | {1e3 * np.median(walls):.1f} |")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=20, help="decisions per cell")
    ap.add_argument("--sizes", default="50,200,1000", help="remaining applications")
    ap.add_argument("--apps", type=int, default=1000, help="applications of the workload")
    args = ap.parse_args(argv)
    timing(args.repeats, [int(s) for s in args.sizes.split(",")], args.apps)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()

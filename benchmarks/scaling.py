"""How the simulator's cost grows with the machine: the KTH-SP2 trace replicated k times on
k x 96 nodes with k x 480 GB of BB (the same load: k times the queue and the machine).

    python benchmarks/scaling.py [--ks 1,2,4,8,16] [--policies fcfs,fcfs-easy,fcfs-bb,sjf-bb]
                                 [--plot scaling.png]

For each policy and k it prints jobs per second, wall seconds, peak traced memory and the
decision time p50/p95, then the growth of jobs/s against k = 1 (linear growth keeps the ratio
near 1) and, with ``--plot``, time against jobs on log-log axes. Copies of a job share its
submit time and BB request (log-normal, seed 0, Kopanski & Rzadca, Section 4.1); copy ``c`` of
job ``id`` is ``id.c``.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _data import data_path  # noqa: E402

from bbopt import Platform, simulate  # noqa: E402
from bbopt.core import GB  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402

POLICIES = "fcfs,fcfs-easy,fcfs-bb,sjf-bb,conservative-bb"


def replicate(jobs, k: int):
    """``k`` copies of every job, interleaved in submission order."""
    return [replace(j, id=f"{j.id}.{c}") for j in jobs for c in range(k)]


def run(jobs, platform, policy: str) -> dict[str, float]:
    tracemalloc.start()
    t0 = time.perf_counter()
    res = simulate(jobs, platform, policy)
    wall = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 1e6
    tracemalloc.stop()
    times = np.asarray(res.decision_times)
    return {"jobs": len(jobs), "wall": wall, "jobs_per_s": len(jobs) / wall, "peak_mb": peak,
            "p50_ms": 1e3 * float(np.percentile(times, 50)) if times.size else 0.0,
            "p95_ms": 1e3 * float(np.percentile(times, 95)) if times.size else 0.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="1,2,4,8,16")
    ap.add_argument("--policies", default=POLICIES)
    ap.add_argument("--max-seconds", type=float, default=120.0,
                    help="skip the larger k of a policy once one run took longer than this")
    ap.add_argument("--plot", default=None, help="PNG of time against jobs (log-log)")
    args = ap.parse_args()
    ks = [int(k) for k in args.ks.split(",")]
    trace = read_swf(data_path("KTH-SP2-1996-2.1-cln.swf"), max_nodes=96, oversize="drop")
    base = with_lognormal_bb(trace.jobs, seed=0)
    rows: dict[str, list[tuple[int, dict[str, float]]]] = {}
    print(f"{'policy':16s} {'k':>3s} {'jobs':>7s} {'jobs/s':>8s} {'wall s':>7s} "
          f"{'peak MB':>8s} {'p50 ms':>7s} {'p95 ms':>7s} {'vs k=1':>7s}")
    for policy in args.policies.split(","):
        for k in ks:
            platform = Platform(nodes=96 * k, bb=480 * GB * k, name=f"kth-x{k}")
            m = run(replicate(base, k), platform, policy)
            rows.setdefault(policy, []).append((k, m))
            ratio = rows[policy][0][1]["jobs_per_s"] / m["jobs_per_s"]
            print(f"{policy:16s} {k:3d} {m['jobs']:7d} {m['jobs_per_s']:8.0f} {m['wall']:7.2f} "
                  f"{m['peak_mb']:8.1f} {m['p50_ms']:7.3f} {m['p95_ms']:7.3f} {ratio:7.2f}",
                  flush=True)
            if m["wall"] > args.max_seconds:
                break
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 4.5))
        for policy, pts in rows.items():
            ax.loglog([m["jobs"] for _, m in pts], [m["wall"] for _, m in pts], "o-",
                      label=policy)
        xs = np.array([len(base), len(base) * max(ks)])
        first = min(m["wall"] for pts in rows.values() for _, m in pts[:1])
        ax.loglog(xs, first * xs / xs[0], "k:", label="linear")
        ax.set_xlabel("jobs (KTH x k on k x 96 nodes)")
        ax.set_ylabel("simulation wall time [s]")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()

"""Simulator throughput on the full KTH-SP2 trace (28,453 jobs on Kopanski's 96-node platform,
log-normal BB requests): jobs per second, peak memory and the run metrics of each policy.

    python benchmarks/speed/simulate_kth.py [--policies fcfs-bb,sjf-bb] [--repeat 3]

Reading the trace and drawing BB requests are timed apart from the simulation.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt import Platform, simulate  # noqa: E402
from bbopt.analysis.metrics import summarize  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from benchmarks._data import data_path  # noqa: E402

POLICIES = "fcfs,fcfs-easy,filler,fcfs-bb,sjf-bb,conservative-bb"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default=POLICIES)
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs for the timing")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    t0 = time.perf_counter()
    trace = read_swf(data_path("KTH-SP2-1996-2.1-cln.swf"), max_nodes=96, oversize="drop")
    t1 = time.perf_counter()
    jobs = with_lognormal_bb(trace.jobs, seed=args.seed)
    t2 = time.perf_counter()
    platform = Platform.kopanski()
    print(f"KTH-SP2: {len(jobs)} jobs; read {t1 - t0:.3f} s, BB model {t2 - t1:.3f} s")
    header = (f"{'policy':16s} {'jobs/s':>9s} {'best s':>7s} {'peak MB':>8s} {'decide%':>8s} "
              f"{'mean wait s':>12s} {'mean bsld':>10s} {'util %':>7s} {'BB %':>6s} "
              f"{'rejected':>8s}")
    print(header)
    for policy in args.policies.split(","):
        best = float("inf")
        for _ in range(args.repeat):
            t = time.perf_counter()
            res = simulate(jobs, platform, policy)
            best = min(best, time.perf_counter() - t)
        tracemalloc.start()
        simulate(jobs, platform, policy)
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        m = summarize(res)
        share = 100 * sum(res.decision_times) / best
        print(f"{policy:16s} {len(jobs) / best:9.0f} {best:7.2f} {peak:8.1f} {share:8.1f} "
              f"{m['mean_wait']:12.0f} {m['mean_bounded_slowdown']:10.2f} "
              f"{100 * m['node_utilization']:7.1f} {100 * m['bb_utilization']:6.1f} "
              f"{m['rejected']:8.0f}")


if __name__ == "__main__":
    main()

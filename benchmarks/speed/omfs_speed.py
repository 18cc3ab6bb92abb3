"""Speed of memoryless fair share on the full KTH-SP2 trace: ``omfs`` against ``sjf-bb`` (target:
within 3x its time) and the victim choice of ``omfs-opt`` (target: p95 <= 50 ms per decision).

    python benchmarks/speed/omfs_speed.py [--jobs N] [--tick 300]

Same workload for all: KTH-SP2 on Kopanski's 96-node platform with log-normal BB requests, users
folded into 4 entities with usage shares, every job preemptable, half of them checkpointable,
checkpoint/restart execution (64 GB per node at 1 GB/s). ``omfs`` is timed without a tick (it
decides at events, as ``sjf-bb`` does) and with ``--tick`` (the setting of the study). The
victim-choice times are the model solves of the applied evictions (``Decision.alternatives``) and,
as an upper bound, the whole decision time of ``omfs-opt``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt import Platform, simulate  # noqa: E402
from bbopt.core import GB  # noqa: E402
from bbopt.simulation.checkpoint import CheckpointRestart  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.generators.omfs import assign_entities, with_preemption_flags  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from benchmarks._data import data_path  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=None, help="first N jobs (default: all)")
    ap.add_argument("--tick", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    trace = read_swf(data_path("KTH-SP2-1996-2.1-cln.swf"), max_nodes=96, oversize="drop")
    jobs = trace.jobs if args.jobs is None else trace.jobs[:args.jobs]
    jobs = with_lognormal_bb(jobs, seed=args.seed)
    jobs, shares = assign_entities(jobs, by="user", n_entities=4, shares="usage",
                                   seed=args.seed)
    jobs = with_preemption_flags(jobs, preemptable=1.0, checkpointable=0.5, seed=args.seed)
    platform = Platform.kopanski()

    def model():
        return CheckpointRestart(memory_per_node=64 * GB, pfs_bandwidth=1 * GB)

    opts = {"shares": shares, "quantum": 1800.0, "memory_per_node": 64 * GB,
            "checkpoint_bandwidth": 1 * GB}
    print(f"KTH-SP2: {len(jobs)} jobs, 4 entities")
    t = time.perf_counter()
    simulate(jobs, platform, "sjf-bb", execution=model())
    ref = time.perf_counter() - t
    print(f"{'run':28s} {'seconds':>8s} {'x sjf-bb':>9s}")
    print(f"{'sjf-bb':28s} {ref:8.2f} {1.0:9.2f}", flush=True)
    for label, tick in (("omfs (events)", None), (f"omfs (tick {args.tick:g} s)", args.tick)):
        t = time.perf_counter()
        simulate(jobs, platform, "omfs", options=opts, execution=model(), tick=tick)
        s = time.perf_counter() - t
        print(f"{label:28s} {s:8.2f} {s / ref:9.2f}", flush=True)
    # The first CP-SAT call imports OR-Tools (about a second): not part of any decision.
    from bbopt.models.preemption import PreemptionModel
    from bbopt.solvers.base import Budget, solve

    solve(PreemptionModel.build(["a", "b"], [1, 2], [0.0, 0.0], [1.0, 1.0], ["x", "x"],
                                {"x": 3}, need_nodes=2, need_bb=0.0), "cpsat", Budget(1.0))
    solves: list[float] = []

    def watch(state, decision):
        solves.extend(alt["solve_time"] for alt in decision.alternatives)

    t = time.perf_counter()
    res = simulate(jobs, platform, "omfs-opt", options=opts, execution=model(), tick=args.tick,
                   on_decision=watch)
    s = time.perf_counter() - t
    print(f"{f'omfs-opt (tick {args.tick:g} s)':28s} {s:8.2f} {s / ref:9.2f}")
    if solves:
        a = np.array(solves) * 1000
        print(f"omfs-opt victim choice over {len(a)} evictions: p50 {np.percentile(a, 50):.2f} "
              f"ms, p95 {np.percentile(a, 95):.2f} ms, max {a.max():.2f} ms (target p95 <= 50)")
    d = np.array(res.decision_times) * 1000
    print(f"omfs-opt whole decision over {len(d)} decisions: p95 {np.percentile(d, 95):.2f} ms, "
          f"max {d.max():.2f} ms")


if __name__ == "__main__":
    main()

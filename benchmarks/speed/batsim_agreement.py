"""pybatsim's schedulers on bbopt's simulator against bbopt's policies, start for start
(docs/interop.md, "pybatsim on bbopt"), and the protocol's cost: a whole KTH replay through
Batsim's protocol against the in-process replay.

    BBOPT_DATA=/work/shared/data python benchmarks/speed/batsim_agreement.py [--jobs N]
        [--skip-slow] [--only agreement|overhead] [--whole-trace]

Jobs ask no BB (pybatsim's schedulers know none) on the 96 nodes of the KTH part. Each row is
pybatsim's scheduler on bbopt's engine (bbopt batsim server) and the bbopt policy in-process;
the variants in benchmarks/pybatsim_variants/ remove one difference each, to show which
difference explains the disagreement. The overhead rows time (CPU of this process and of the
scheduler's, both measured) the loop-back replay (bbopt batsim server + bbopt batsim scheduler)
against simulate(), on the KTH part (96 nodes, 5 GB of BB per node) or, with --whole-trace,
on the whole KTH-SP2 trace with Kopanski's log-normal BB requests (seed 0) on his platform.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import threading
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bbopt.core import GB, Platform  # noqa: E402
from bbopt.interop.batsim.pybatsim import PAIRS, agreement, run_pybatsim  # noqa: E402
from bbopt.loading import read_workload  # noqa: E402
from bbopt.simulation import simulate  # noqa: E402

VARIANTS = {"schedFcfsAnyNodes": "fcfs", "fillerSchedOrderedPerEvent": "filler",
            "fillerSchedInOrder": "filler", "schedEasySjfAnyNodes": "sjf-bb"}


def kth(n: int | None):
    data = Path(os.environ.get("BBOPT_DATA", "/work/shared/data"))
    return read_workload(data / "KTH-split-alloc-only-part-1.batsim.json", n_jobs=n)


def agreement_table(n: int | None, skip_slow: bool) -> None:
    w = kth(n)
    jobs = [dataclasses.replace(j, bb=0.0) for j in w.jobs]
    platform = Platform(nodes=96, bb=0.0)
    print("| pybatsim scheduler | bbopt policy | same start | first difference (s) | "
          "mean abs. difference (s) | wall (s) |\n|---|---|---|---|---|---|")
    rows = [*PAIRS.items(), *((f"pybatsim_variants/{k}.py", v) for k, v in VARIANTS.items())]
    for sched, policy in rows:
        if skip_slow and "Sjf" in sched:
            continue
        ref = simulate(jobs, platform, policy)
        path = str(ROOT / "benchmarks" / sched) if sched.endswith(".py") else sched
        t0 = time.perf_counter()
        res = run_pybatsim(path, jobs, platform, timeout=120)
        wall = time.perf_counter() - t0
        a = agreement(ref, res)
        print(f"| {sched} | {policy} | {a.same}/{a.jobs} ({a.share:.1%}) | "
              f"{a.first_difference:g} | {a.mean_abs_difference:.0f} | {wall:.1f} |", flush=True)


def whole_kth(n: int | None):
    """The whole KTH-SP2 trace as the reference digests read it, Kopanski's BB drawn (seed 0)."""
    from bbopt.workloads.bb import with_lognormal_bb
    from bbopt.workloads.swf import read_swf

    data = Path(os.environ.get("BBOPT_DATA", "/work/shared/data"))
    trace = read_swf(data / "KTH-SP2-1996-2.1-cln.swf", max_nodes=96, oversize="drop")
    jobs = with_lognormal_bb(trace.jobs, seed=0)
    workload = types.SimpleNamespace(jobs=jobs[:n] if n else jobs, name="KTH-SP2-1996-2.1-cln")
    return workload, Platform.kopanski()


def overhead(n: int | None, repeats: int = 3, whole: bool = False) -> None:
    from bbopt.interop.batsim.scheduler import run_scheduler
    from bbopt.interop.batsim.server import serve_batsim

    if whole:
        w, platform = whole_kth(n)
        repeats, timeout = 1, 3600
    else:
        w, platform, timeout = kth(n), Platform(nodes=96, bb=96 * 5 * GB), 60
    print(f"\n{len(w.jobs)} jobs")
    print("\n| policy | in-process CPU (s) | through the protocol: server CPU + scheduler CPU "
          "(s) | ratio |\n|---|---|---|---|")
    for policy in ("fcfs-bb", "sjf-bb", "conservative-bb"):
        best_in = best_pr = float("inf")
        for r in range(repeats):
            c0 = time.process_time()
            simulate(w.jobs, platform, policy, workload_name=w.name)
            best_in = min(best_in, time.process_time() - c0)
            endpoint = f"ipc:///tmp/bbov-{os.getpid()}-{r}"
            box = {}

            def sched(endpoint=endpoint, box=box, policy=policy):
                t = time.thread_time()
                run_scheduler(endpoint, policy, timeout=timeout)
                box["cpu"] = time.thread_time() - t

            th = threading.Thread(target=sched)
            th.start()
            t0 = time.thread_time()
            serve_batsim(w.jobs, platform, endpoint, workload_name=w.name, timeout=timeout)
            server = time.thread_time() - t0
            th.join()
            best_pr = min(best_pr, server + box["cpu"])
        print(f"| {policy} | {best_in:.3f} | {best_pr:.3f} | {best_pr / best_in:.1f} |",
              flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=None, help="the first N jobs (default: all)")
    p.add_argument("--skip-slow", action="store_true",
                   help="leave out pybatsim's EASY-SJF (its scheduler takes minutes)")
    p.add_argument("--only", choices=("agreement", "overhead"), default=None)
    p.add_argument("--whole-trace", action="store_true",
                   help="the overhead on the whole KTH-SP2 trace with Kopanski's BB (minutes)")
    args = p.parse_args()
    if args.only in (None, "agreement"):
        agreement_table(args.jobs, args.skip_slow)
    if args.only in (None, "overhead"):
        overhead(args.jobs, whole=args.whole_trace)


if __name__ == "__main__":
    main()

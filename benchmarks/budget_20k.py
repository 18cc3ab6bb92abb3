"""Decision wall time against the budget on a 20,000-job waiting queue (budgets are kept).

A state is built from the KTH-SP2 trace (jobs over 96 nodes dropped): its first 20,000 jobs with
Kopanski's log-normal BB requests (seed 0) all waiting at the 20,000th submission, the machine
(``Platform.kopanski()``: 96 nodes, 480 GB of BB) about half busy with later jobs started just
now. Each (policy, budget, mode) decides ``--repeat`` times (the state's time moved by one second
each time, so the decisions' seeds differ); the table gives the wall time of the whole
``bbopt.decide`` call (state validation and model building included) as p50 and p100, and p100
over the budget. OR-Tools is imported by one small decision before timing (a resource manager
plugin is a long-lived process). ``plan-2 q50`` is plan-2 with ``max_queue=50``, a cap that fits
a 10 ms budget. The reference is conservative-bb (no budget: a greedy plan of
its first ``depth`` = 1,000 jobs); the last column is p100 over its p100 in the same run.

In the ``wall`` mode (bbopt.decide's default) the budget is the promise: p100 <= budget + 10 %.
In the ``deterministic`` mode (the default of ``bbopt simulate`` and ``compare``) the work is fixed
(annealing's 180 moves over the first ``max_queue`` = 500 jobs, CP-SAT's deterministic time) and
the wall time is whatever that work takes on this machine.

    python benchmarks/budget_20k.py [--jobs 20000] [--repeat 3] [--cases plan-2:5:wall,...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import data_path  # noqa: E402

from bbopt import decide  # noqa: E402
from bbopt.core import ClusterState, Platform, RunningJob  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402

CASES = ("plan-2:5:wall,plan-2:1:wall,plan-2:0.1:wall,plan-2:0.01:wall,plan-2:0.01:wall:50,"
         "bbsched:2:wall,bbsched:0.1:wall,bbsched:0.01:wall,"
         "plan-2:5:deterministic,bbsched:2:deterministic")


def big_state(n: int) -> ClusterState:
    platform = Platform.kopanski()
    jobs = [j for j in read_swf(data_path("KTH-SP2-1996-2.1-cln.swf")).jobs
            if j.nodes <= platform.nodes]
    jobs = with_lognormal_bb(jobs, 0)
    queue = jobs[:n]
    now = max(j.submit for j in queue)
    running, nodes, bb = [], 0, 0.0
    for j in jobs[n:]:  # about half the machine busy, started just now
        if nodes + j.nodes > platform.nodes // 2 or bb + j.bb > platform.bb / 2:
            continue
        running.append(RunningJob(replace(j, submit=now), now))
        nodes += j.nodes
        bb += j.bb
    return ClusterState(now, platform, tuple(running), tuple(queue))


def timed(state: ClusterState, name: str, repeat: int, **options) -> tuple[list[float], object]:
    times, d = [], None
    for k in range(repeat):
        s = replace(state, time=state.time + k)
        t0 = time.perf_counter()
        d = decide(s, name, **options)
        times.append(time.perf_counter() - t0)
    return times, d


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default=CASES,
                    help="policy:budget:mode[:max_queue],... (max_queue: plan policies only)")
    args = ap.parse_args()
    state = big_state(args.jobs)
    decide(replace(state, queue=state.queue[:20]), "bbsched")  # import OR-Tools once
    print(f"{len(state.queue)} waiting, {len(state.running)} running; {args.repeat} decisions "
          "each; times of the whole bbopt.decide call")
    ref, _ = timed(state, "conservative-bb", args.repeat)
    ref_p100 = max(ref)
    head = (f"{'policy':16s} {'budget [s]':>10s} {'mode':>13s} {'p50 [s]':>8s} {'p100 [s]':>8s} "
            f"{'p100/budget':>11s} {'vs ref':>7s}  backend/status")
    print(head)
    print(f"{'conservative-bb':16s} {'-':>10s} {'-':>13s} {statistics.median(ref):8.3f} "
          f"{ref_p100:8.3f} {'-':>11s} {1.0:7.2f}")
    for case in args.cases.split(","):
        name, budget, mode, *cap = case.split(":")
        b = float(budget)
        extra = {"max_queue": int(cap[0])} if cap else {}
        times, d = timed(state, name, args.repeat, budget=b, budget_mode=mode, **extra)
        p100 = max(times)
        label = f"{name} q{cap[0]}" if cap else name
        print(f"{label:16s} {b:10g} {mode:>13s} {statistics.median(times):8.3f} {p100:8.3f} "
              f"{p100 / b:11.2f} {p100 / ref_p100:7.2f}  {d.stats.backend}/{d.stats.status}")


if __name__ == "__main__":
    main()

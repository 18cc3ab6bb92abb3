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

``omfs-opt`` decides on the same queue with the users folded into 4 entities (usage shares,
``even`` 25 % each, or ``skew``: 85 % to the entity with the least usage), every job
preemptable and half checkpointable, and the running jobs two hours old (past the quantum, so
evictions are looked for); ``pack-opt`` with every job at 18 MB/s per node behind a 1 GB/s I/O
node. The CPU column is the process's CPU time of the slowest decision: on a loaded machine the
wall time also counts the waits for a core, the CPU time only the decision's own work.

In the ``wall`` mode (bbopt.decide's default) the budget is the promise: p100 <= budget + 10 %.
In the ``deterministic`` mode (the default of ``bbopt simulate`` and ``compare``) the work is fixed
(annealing's 180 moves over the first ``max_queue`` = 500 jobs, CP-SAT's deterministic time) and
the wall time is whatever that work takes on this machine.

    python benchmarks/speed/budget_20k.py [--jobs 20000] [--repeat 3] [--cases plan-2:5:wall,...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt import decide  # noqa: E402
from bbopt.core import ClusterState, Platform, RunningJob  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from benchmarks._data import data_path  # noqa: E402

CASES = ("plan-2:5:wall,plan-2:1:wall,plan-2:0.1:wall,plan-2:0.01:wall,plan-2:0.01:wall:50,"
         "bbsched:2:wall,bbsched:0.1:wall,bbsched:0.01:wall,"
         "omfs-opt:0.05:wall:even,omfs-opt:0.05:wall:usage,omfs-opt:0.05:wall:skew,"
         "pack-opt:1:wall,pack-opt:0.1:wall,pack-opt:0.05:wall,"
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


def fair_share_state(state: ClusterState, shares: str) -> tuple[ClusterState, dict]:
    """``state`` for omfs-opt (module docstring) and its ``shares`` option."""
    from bbopt.workloads.generators.omfs import assign_entities, with_preemption_flags

    n = len(state.queue)
    jobs, usage = assign_entities([*state.queue, *(r.job for r in state.running)],
                                  n_entities=4, shares="usage", seed=0)
    jobs = with_preemption_flags(jobs, preemptable=1.0, checkpointable=0.5, seed=0)
    old = 2 * 3600.0
    running = tuple(RunningJob(replace(j, submit=r.start - old), r.start - old, r.allocation)
                    for j, r in zip(jobs[n:], state.running, strict=True))
    least = min(usage, key=usage.get)
    given = {"usage": usage, "even": {e: 1 / len(usage) for e in usage},
             "skew": {e: 0.85 if e == least else 0.05 for e in usage}}[shares]
    return ClusterState(state.time, state.platform, running, tuple(jobs[:n])), {"shares": given}


def pack_state(state: ClusterState) -> tuple[ClusterState, dict]:
    """``state`` for pack-opt: every job at 18 MB/s per node, a 1 GB/s I/O node."""
    queue = tuple(replace(j, bandwidth=18e6) for j in state.queue)
    running = tuple(replace(r, job=replace(r.job, bandwidth=18e6)) for r in state.running)
    return ClusterState(state.time, state.platform, running, queue), {"bandwidth": 1e9}


def timed(state: ClusterState, name: str, repeat: int, **options
          ) -> tuple[list[float], list[float], object]:
    times, cpu, d = [], [], None
    decide(replace(state, queue=state.queue[:30]), name, **options)  # imports its backend
    for k in range(repeat):
        s = replace(state, time=state.time + k)
        c0, t0 = time.process_time(), time.perf_counter()
        d = decide(s, name, **options)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return times, cpu, d


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
    ref, ref_cpu, _ = timed(state, "conservative-bb", args.repeat)
    ref_p100 = max(ref)
    head = (f"{'policy':18s} {'budget [s]':>10s} {'mode':>13s} {'p50 [s]':>8s} {'p100 [s]':>8s} "
            f"{'p100/budget':>11s} {'CPU p100':>8s} {'vs ref':>7s}  backend/status")
    print(head)
    print(f"{'conservative-bb':18s} {'-':>10s} {'-':>13s} {statistics.median(ref):8.3f} "
          f"{ref_p100:8.3f} {'-':>11s} {max(ref_cpu):8.3f} {1.0:7.2f}")
    for case in args.cases.split(","):
        name, budget, mode, *more = case.split(":")
        b = float(budget)
        s, extra = state, {}
        if name == "omfs-opt":  # (its budget is in wall seconds: no budget_mode option)
            s, extra = fair_share_state(state, more[0] if more else "usage")
            label = f"{name} {more[0] if more else 'usage'}"
        elif name == "pack-opt":
            s, extra = pack_state(state)
            extra["budget_mode"] = mode
            label = name
        else:
            extra = {"max_queue": int(more[0])} if more else {}
            extra["budget_mode"] = mode
            label = f"{name} q{more[0]}" if more else name
        times, cpu, d = timed(s, name, args.repeat, budget=b, **extra)
        p100 = max(times)
        print(f"{label:18s} {b:10g} {mode:>13s} {statistics.median(times):8.3f} {p100:8.3f} "
              f"{p100 / b:11.2f} {max(cpu):8.3f} {p100 / ref_p100:7.2f}  "
              f"{d.stats.backend}/{d.stats.status}")


if __name__ == "__main__":
    main()

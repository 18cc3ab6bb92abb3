"""Decision wall time against the budget on a 20,000-job waiting queue (budgets are kept).

A state is built from the KTH-SP2 trace (jobs over 96 nodes dropped): its first 20,000 jobs with
Kopanski's log-normal BB requests (seed 0) all waiting at the 20,000th submission, the machine
(``Platform.kopanski()``: 96 nodes, 480 GB of BB) about half busy with later jobs started just
now. Each (policy, budget, mode) decides ``--repeat`` times (the state's time moved by one second
each time, so the decisions' seeds differ); the table gives, for the whole ``bbopt.decide`` call
(state validation and model building included), the wall time and the process's CPU time as
p50, p99 and p100 (p99 interpolated linearly, numpy's default, between the slowest decisions),
p100 over the budget in both, and the machine's 1-minute load average before and after the case.
OR-Tools is imported by one small decision before timing (a resource manager plugin is a
long-lived process), and one untimed decision on the whole state precedes the timed ones (a
state just parsed is hot in the caches). ``plan-2 q50`` is plan-2 with ``max_queue=50``. The
reference is conservative-bb (no budget: a greedy plan of its first ``depth`` = 1,000 jobs); the
last column is wall p100 over its wall p100 in the same run.

Every optimising policy (one with a solver under a budget) is a case at its default budget, and
the small budgets a resource manager asks for; the greedy policies with a ``budget`` option
(``omfs``, ``pack-max``/``char``/``random``, whose builders have no search) are not.
``omfs-opt`` decides on the same queue with the users folded into 4 entities (usage shares,
``even`` 25 % each, or ``skew``: 85 % to the entity with the least usage), every job
preemptable and half checkpointable, and the running jobs two hours old (past the quantum, so
evictions are looked for); ``pack-opt`` with every job at 18 MB/s per node behind a 1 GB/s I/O
node. On a loaded machine the wall time also counts the waits for a core, the CPU time only the
decision's own work: the load column says how loaded.

In the ``wall`` mode (bbopt.decide's default) the budget is the promise: p100 <= budget + 10 %,
in wall time as in CPU time. In the ``deterministic`` mode (the default of ``bbopt simulate`` and
``compare``) the work is fixed (annealing's 180 moves over the first ``max_queue`` = 500 jobs,
CP-SAT's deterministic time) and the wall time is whatever that work takes on this machine.

    python benchmarks/speed/budget_20k.py [--jobs 20000] [--repeat 10] [--cases plan-2:5:wall,...]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt import decide  # noqa: E402
from bbopt.core import ClusterState, Platform, RunningJob  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from benchmarks._data import data_path  # noqa: E402

CASES = ("plan-1:5:wall,plan-2:5:wall,plan-3:5:wall,plan-2:1:wall,plan-2:0.1:wall,"
         "plan-2:0.05:wall,plan-2:0.01:wall:50,"
         "bbsched:2:wall,bbsched-nsga2:2:wall,bin-packing:2:wall,constrained-bb:2:wall,"
         "constrained-cpu:2:wall,naive:2:wall,weighted:2:wall,weighted-bb:2:wall,"
         "weighted-cpu:2:wall,bbsched:0.1:wall,bbsched-nsga2:0.1:wall,bbsched:0.05:wall,"
         "omfs-opt:0.05:wall:even,omfs-opt:0.05:wall:usage,omfs-opt:0.05:wall:skew,"
         "pack-opt:1:wall,pack-opt-char:1:wall,pack-opt:0.1:wall,pack-opt:0.05:wall,"
         "pack-opt-char:0.05:wall,"
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
    # one untimed decision on the state itself: a resource manager hands over a state it has
    # just parsed, hot in the caches (the first look at 20,000 jobs built long before cost
    # 0.2 s of CPU time, whatever the policy)
    decide(replace(state, time=state.time + repeat), name, **options)
    for k in range(repeat):
        s = replace(state, time=state.time + k)
        c0, t0 = time.process_time(), time.perf_counter()
        d = decide(s, name, **options)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return times, cpu, d


def quantiles(values: list[float]) -> tuple[float, float, float]:
    """p50, p99 (linear, numpy's default) and p100 of ``values``."""
    p50, p99 = np.percentile(values, [50, 99])
    return float(p50), float(p99), max(values)


def load() -> float:
    """The machine's 1-minute load average (nan where the system has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return float("nan")


HEAD = (f"{'policy':18s} {'budget':>6s} {'mode':>5s} | {'wall p50':>8s} {'p99':>6s} {'p100':>6s} "
        f"{'/budget':>7s} | {'CPU p50':>7s} {'p99':>6s} {'p100':>6s} {'/budget':>7s} | "
        f"{'load':>9s} {'vs ref':>6s}  backend/status")


def row(label: str, budget: float | None, mode: str, times: list[float], cpu: list[float],
        loads: tuple[float, float], ref: float, outcome: str) -> str:
    w50, w99, w100 = quantiles(times)
    c50, c99, c100 = quantiles(cpu)
    over_w = f"{w100 / budget:7.2f}" if budget else f"{'-':>7s}"
    over_c = f"{c100 / budget:7.2f}" if budget else f"{'-':>7s}"
    return (f"{label:18s} {budget if budget else '-':>6} {mode[:5]:>5s} | {w50:8.3f} {w99:6.3f} "
            f"{w100:6.3f} {over_w} | {c50:7.3f} {c99:6.3f} {c100:6.3f} {over_c} | "
            f"{loads[0]:4.1f}-{loads[1]:4.1f} {w100 / ref:6.2f}  {outcome}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", type=int, default=20000)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cases", default=CASES,
                    help="policy:budget:mode[:max_queue],... (max_queue: plan policies only)")
    args = ap.parse_args()
    state = big_state(args.jobs)
    decide(replace(state, queue=state.queue[:20]), "bbsched")  # import OR-Tools once
    print(f"{len(state.queue)} waiting, {len(state.running)} running; {args.repeat} decisions "
          "each; times of the whole bbopt.decide call, seconds")
    before = load()
    ref, ref_cpu, _ = timed(state, "conservative-bb", args.repeat)
    ref_p100 = max(ref)
    print(HEAD)
    print(row("conservative-bb", None, "-", ref, ref_cpu, (before, load()), ref_p100, ""))
    worst = 0.0
    for case in args.cases.split(","):
        name, budget, mode, *more = case.split(":")
        b = float(budget)
        s, extra = state, {"budget_mode": mode}
        if name == "omfs-opt":
            s, shares = fair_share_state(state, more[0] if more else "usage")
            extra.update(shares)
            label = f"{name} {more[0] if more else 'usage'}"
        elif name.startswith("pack-"):
            s, bandwidth = pack_state(state)
            extra.update(bandwidth)
            label = name
        else:
            if more:
                extra["max_queue"] = int(more[0])
            label = f"{name} q{more[0]}" if more else name
        before = load()
        times, cpu, d = timed(s, name, args.repeat, budget=b, **extra)
        print(row(label, b, mode, times, cpu, (before, load()), ref_p100,
                  f"{d.stats.backend}/{d.stats.status}"), flush=True)
        if mode == "wall":
            worst = max(worst, max(times) / b, max(cpu) / b)
    print(f"worst p100/budget of the wall-mode cases (wall or CPU): {worst:.2f}")


if __name__ == "__main__":
    main()

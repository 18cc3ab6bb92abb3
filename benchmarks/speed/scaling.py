"""How the simulator's cost grows with the machine: the KTH-SP2 trace replicated k times on
k x 96 nodes with k x 480 GB of BB (the same load: k times the queue and the machine).

    python benchmarks/speed/scaling.py [--ks 1,2,4,8,16] [--policies fcfs,fcfs-easy,fcfs-bb,sjf-bb]
                                 [--plot scaling.png]

Every (policy, k) runs in a fresh process, so runs do not share a heap and memory is not
traced (tracemalloc slowed the replay several-fold, unevenly). For each it prints jobs per
second of CPU time (user + system of the replay: the steady figure on a shared machine) and of
wall time, the peak resident memory of the process (interpreter and trace included), the
decision time p50/p95, and the growth of the CPU time per job against k = 1 (linear growth keeps
the ratio near 1); at the end, the engine's memory per job (the growth of the peak between the
smallest and the largest k over the growth in jobs) and, with ``--plot``, time against jobs on
log-log axes. Copies of a job share its submit time and BB request (log-normal, seed 0,
Kopanski & Rzadca, Section 4.1); copy ``c`` of job ``id`` is ``id.c``.

conservative-bb, ``--one conservative-bb K`` in fresh processes, the code before and after the
last round's changes alternating in one run (medians of 5, CPU seconds of the replay, load
average 4-5; "before" is the tree just before them, with the rest of that round's changes):

    code      k=1 CPU s  k=1 jobs/s  k=2 CPU s  k=2 jobs/s  k=2 / k=1  p95 decision k=2
    before       2.07      13 717       6.21       9 166       2.99x        0.37 ms
    now          1.89      15 041       5.49      10 358       2.90x        0.31 ms

(median ratio of pairs, now over before: 0.89 at k=1, 0.88 at k=2; one pair at k=4, 113 812
jobs: 21.4 s before, 19.1 s now). Freed slots carry their last breakpoint and maxima as fields
and log the free capacities themselves (no running maxima built per slot), a move takes its
new slot without the general reserve's dispatch, the reservations returned are the previous
tuple updated where jobs changed, and the kept reservations are sorted on their start alone.

The round after, three trees alternating (medians of 5, load average 2-3): main at its start,
main just before its conservative-bb changes landed, and after them:

    code              k=1 CPU s  k=1 jobs/s  k=2 CPU s  k=2 jobs/s  k=2 / k=1  p95 decision k=2
    start                1.76      16 157       5.07      11 216       2.88x        0.27 ms
    before changes       1.71      16 608       5.06      11 254       2.95x        0.27 ms
    now                  1.70      16 726       4.55      12 511       2.67x        0.24 ms

(k = 4, one pair: 17.7 s at the start, 14.3 s now.) Compression asks the freed-slot log only
for the end of each window (the log sorted by end, walked latest first), since the window's
start was the bound on the start in 95 % of them: 6.09 M slots walked at k = 2 became 1.92 M.

EASY at k = 16, tried and dropped: numpy columns of every job's nodes, BB and walltime (by job
index, the engine keeping the job indices of its long-queue list beside it), so that the
backfill pass visits only the jobs one vectorised mask admits (fit now and, if still running
at the shadow time, fit what the head leaves there: exactly the jobs the loop would not skip;
schedules unchanged, digests equal). The queue behind a decision holds 467 jobs on average
(89.4 M jobs over 191 k decisions) and the engine rebuilds its list after 131 k of them (a
start not at the head), so the job indices go to numpy at nearly every decision (about 10 us
for 500 Python ints) before three gathers and the mask: as costly as the loop it replaces,
whose candidates fit the free nodes 64 % of the time. ``--one`` pairs alternating with the
code before, CPU seconds, medians of 3 (load 1-3):

    policy    k   before   columns   columns / before
    fcfs-bb   1    0.360     0.375        1.04
    fcfs-bb  16   10.40     11.08         1.07
    sjf-bb    1    0.385     0.397        1.03
    sjf-bb   16   10.15     11.17         1.10

(k = 16 over k = 1, CPU time per job, before: fcfs-bb 1.81, sjf-bb 1.65.)

EASY at k = 16, kept: the long queue in blocks. Counted at k = 16 (fcfs-bb, every 10th backfill
pass): of blocks of 16 consecutive waiting jobs, 72 % hold no job that can pass the pass's test
with its starting resources (by the block's least nodes, least BB and least walltime: its least
job needs more nodes or BB than are free, or all its jobs still run at the shadow time and the
least needs more than the head leaves there), 94 % with the resources left as the pass goes,
so that it visits 3.8 % of the candidates (blocks of 32: 89 % and 7.4 %; of 64, with the
starting resources, 57 %). The engine keeps those blocks between decisions
(``simulation/queue_blocks.py``; views still O(1) and never changing), EASY's pass skips them
(``policies.queue.backfill_blocks``), sjf-bb takes the shortest passing job again and again
instead of sorting (``shortest_first``), the idle gate skips them too. ``--one`` runs, three
codes alternating (the code before, main just before landing, with the blocks), CPU seconds,
medians of 3 (load 3-10; schedules byte-identical, jobs.csv at k = 16 compared too):

    policy    k   before   main   blocks   blocks / main
    fcfs-bb   1    0.400   0.391   0.391       1.00
    fcfs-bb  16   11.49   10.91    7.54        0.69
    sjf-bb    1    0.437   0.403   0.405       1.00
    sjf-bb   16   11.31   10.52    7.14        0.68

(k = 16 over k = 1, CPU time per job, with the blocks: fcfs-bb 1.21, sjf-bb 1.10; before 1.79
and 1.62.) Measured and dropped: leaving a block's summary as it was after a start in the
middle (still a lower bound, no recomputing): 1.06x slower at k = 16 (fewer skips); sorting
sjf-bb's passing candidates (pre-filtered by the whole test over the blocks) instead of taking
the shortest again and again: 0.92x of the code before instead of 0.66x.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt import Platform, simulate  # noqa: E402
from bbopt.core import GB  # noqa: E402
from bbopt.units import parse_options  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from benchmarks._data import data_path  # noqa: E402

POLICIES = "fcfs,fcfs-easy,fcfs-bb,sjf-bb,conservative-bb"


def replicate(jobs, k: int):
    """``k`` copies of every job, interleaved in submission order."""
    return [replace(j, id=f"{j.id}.{c}") for j in jobs for c in range(k)]


def run(jobs, platform, policy: str) -> dict[str, float]:
    """One replay; ``policy`` may carry options after a colon, ``name:key=value,...`` (e.g.
    ``conservative-bb:compiled=false``)."""
    name, _, opts = policy.partition(":")
    options = parse_options(opts.split(",")) if opts else {}
    c0, t0 = time.process_time(), time.perf_counter()
    res = simulate(jobs, platform, name, options=options)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3  # KiB on Linux
    times = np.asarray(res.decision_times)
    return {"jobs": len(jobs), "wall": wall, "cpu": cpu, "jobs_per_s": len(jobs) / cpu,
            "wall_jobs_per_s": len(jobs) / wall, "peak_mb": peak,
            "p50_ms": 1e3 * float(np.percentile(times, 50)) if times.size else 0.0,
            "p95_ms": 1e3 * float(np.percentile(times, 95)) if times.size else 0.0}


def one(policy: str, k: int) -> dict[str, float]:
    """One replay of KTH x ``k`` under ``policy`` in this process."""
    trace = read_swf(data_path("KTH-SP2-1996-2.1-cln.swf"), max_nodes=96, oversize="drop")
    base = with_lognormal_bb(trace.jobs, seed=0)
    platform = Platform(nodes=96 * k, bb=480 * GB * k, name=f"kth-x{k}")
    return run(replicate(base, k), platform, policy)


def in_child(policy: str, k: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--one", policy, str(k)], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="1,2,4,8,16")
    ap.add_argument("--policies", default=POLICIES,
                    help="comma-separated; options after a colon joined by +, e.g. "
                         "conservative-bb:compiled=false")
    ap.add_argument("--max-seconds", type=float, default=120.0,
                    help="skip the larger k of a policy once one run took longer than this")
    ap.add_argument("--plot", default=None, help="PNG of time against jobs (log-log)")
    ap.add_argument("--one", nargs=2, metavar=("POLICY", "K"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(one(args.one[0], int(args.one[1]))))
        return
    ks = [int(k) for k in args.ks.split(",")]
    base_jobs = None
    rows: dict[str, list[tuple[int, dict[str, float]]]] = {}
    print(f"{'policy':16s} {'k':>3s} {'jobs':>7s} {'jobs/s':>8s} {'CPU s':>7s} {'wall s':>7s} "
          f"{'peak MB':>8s} {'p50 ms':>7s} {'p95 ms':>7s} {'vs k=1':>7s}")
    for policy in (p.replace("+", ",") for p in args.policies.split(",")):
        for k in ks:
            m = in_child(policy, k)
            base_jobs = base_jobs or m["jobs"] // k
            rows.setdefault(policy, []).append((k, m))
            ratio = rows[policy][0][1]["jobs_per_s"] / m["jobs_per_s"]
            print(f"{policy:16s} {k:3d} {m['jobs']:7d} {m['jobs_per_s']:8.0f} {m['cpu']:7.2f} "
                  f"{m['wall']:7.2f} {m['peak_mb']:8.1f} {m['p50_ms']:7.3f} {m['p95_ms']:7.3f} "
                  f"{ratio:7.2f}", flush=True)
            if m["cpu"] > args.max_seconds:
                break
    print("jobs/s: per CPU second of the replay; vs k=1: CPU time per job over k = 1's")
    for policy, pts in rows.items():
        if len(pts) > 1:
            (_, a), (_, b) = pts[0], pts[-1]
            per_job = (b["peak_mb"] - a["peak_mb"]) * 1e6 / (b["jobs"] - a["jobs"])
            print(f"{policy}: about {per_job:.0f} bytes of peak memory per job "
                  f"(k = {pts[0][0]} to {pts[-1][0]})")
    if args.plot:
        from bbopt.analysis.plots import log_ticks, pyplot

        plt = pyplot()  # the figures' one style
        fig, ax = plt.subplots(figsize=(6, 4.5))
        for policy, pts in rows.items():
            ax.loglog([m["jobs"] for _, m in pts], [m["cpu"] for _, m in pts], "o-",
                      label=policy)
        xs = np.array([base_jobs, base_jobs * max(ks)])
        first = min(m["cpu"] for pts in rows.values() for _, m in pts[:1])
        ax.loglog(xs, first * xs / xs[0], "k:", label="linear")
        ax.set_xlabel("jobs (KTH x k on k x 96 nodes)")
        ax.set_ylabel("replay CPU time [s]")
        log_ticks(ax.xaxis)  # plain numbers: the default labels of a short log axis overlap
        log_ticks(ax.yaxis)
        ax.legend(fontsize=8, frameon=False)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()

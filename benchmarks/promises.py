"""Each policy's declared promise (:mod:`bbopt.policies.promises`) measured on a whole trace:
how often a reservation moved later, and how often a job started after the reservation it
was first given, on the BB pool, on Kopanski & Rzadca's 12 named BB nodes and with their
proximity placement (Euro-Par 2021, Sections 3.2 and 4.1).

The conformance suite (``tests/conformance``) asserts the promises on small random workloads;
this counts them on the KTH-SP2 trace, where a violation the small workloads do not meet shows.

    python benchmarks/promises.py [--jobs N] [--policies conservative-bb,fcfs-bb,sjf-bb]
                                  [--platforms kopanski,kopanski:named,kopanski:proximity]

Per policy and platform: ``moved later`` (a reservation later than the same job's previous
one, with the largest such move), ``late`` (a job that started after its first
reservation), the mean wait and the mean bounded slowdown (10 s), and the decisions taken.

Whole KTH trace, seed 0 (28,467 jobs), the default policies:

| policy | platform | moved later | largest, s | late | mean wait, s | bounded sld |
|---|---|---:|---:|---:|---:|---:|
| conservative-bb | BB pool (`kopanski`) | 0 | 0 | 0 | 18,424.4 | 186.63 |
| conservative-bb | 12 named BB nodes | 0 | 0 | 0 | 19,630.3 | 194.43 |
| conservative-bb | named, proximity | 0 | 0 | 0 | 19,630.3 | 194.43 |
| fcfs-bb | BB pool | 0 | 0 | 0 | 13,914.1 | 161.96 |
| fcfs-bb | 12 named BB nodes | 0 | 0 | 0 | 15,020.1 | 165.76 |
| fcfs-bb | named, proximity | 0 | 0 | 0 | 15,682.1 | 175.21 |
| sjf-bb | BB pool | 0 | 0 | 0 | 12,750.6 | 128.72 |
| sjf-bb | 12 named BB nodes | 0 | 0 | 0 | 14,788.5 | 148.71 |
| sjf-bb | named, proximity | 0 | 0 | 0 | 15,520.7 | 159.80 |

EASY keeps its head's reservation everywhere (on named BB nodes the head's pieces are chosen
again whenever the profile changes, and a backfilled job must leave them placeable), and so
does conservative-bb. Before its reservations kept their pieces (held again with fresh
first-fit pieces at every decision, a start taking the engine's first fit of the space free
then), conservative-bb moved 2,184 reservations later on the 12 named nodes (the largest by
887,578 s) and 3,932 with proximity placement, and 374 and 525 jobs started after their first
reservation (``docs/named-bb-speed.md``, "the promise on named BB nodes").
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _data import data_path  # noqa: E402

from bbopt import simulate  # noqa: E402
from bbopt.loading import load_platform, load_workload  # noqa: E402
from bbopt.policies import make_policy  # noqa: E402
from bbopt.policies.promises import promise_of  # noqa: E402

TRACE = "KTH-SP2-1996-2.1-cln.swf"
PLATFORMS = ("kopanski", "kopanski:named", "kopanski:proximity")


def measure(policy: str, platform: str, jobs: int | None) -> dict:
    """One replay of ``policy`` on ``platform``: its reservations kept or not, and its waits."""
    plat = load_platform(platform)
    work, _ = load_workload(str(data_path(TRACE)), n_jobs=jobs, seed=0, platform=plat)
    given: dict[str, list[float]] = {}

    def observe(state, decision) -> None:
        for r in decision.reservations:
            given.setdefault(r.job_id, []).append(r.start)

    res = simulate(work, plat, make_policy(policy), on_decision=observe)
    index = {job.id: k for k, job in enumerate(res.jobs)}
    moved = late = 0
    largest = 0.0
    for job_id, starts in given.items():
        for before, after in zip(starts, starts[1:], strict=False):
            if after > before:
                moved += 1
                largest = max(largest, after - before)
        if res.start[index[job_id]] > starts[0]:
            late += 1
    start, end = np.array(res.start), np.array(res.end)
    wait = start - np.array([job.submit for job in res.jobs])
    ran = end - start
    slowdown = np.maximum(1.0, (wait + ran) / np.maximum(ran, 10.0))
    return {"moved": moved, "largest": largest, "late": late,
            "wait": float(np.nanmean(wait)), "slowdown": float(np.nanmean(slowdown)),
            "decisions": len(res.decision_times)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=None, help="the first N jobs (default all)")
    parser.add_argument("--policies", default="conservative-bb,fcfs-bb,sjf-bb")
    parser.add_argument("--platforms", default=",".join(PLATFORMS))
    args = parser.parse_args(argv)
    print("| policy | promise | platform | moved later | largest, s | late | "
          "mean wait, s | bounded sld | decisions |")
    print("|---|---|---|---:|---:|---:|---:|---:|---:|")
    for policy in args.policies.split(","):
        promise = promise_of(make_policy(policy))
        for platform in args.platforms.split(","):
            m = measure(policy, platform, args.jobs)
            print(f"| {policy} | {promise} | {platform} | {m['moved']:,} | {m['largest']:,.0f} "
                  f"| {m['late']:,} | {m['wait']:,.1f} | {m['slowdown']:.2f} "
                  f"| {m['decisions']:,} |", flush=True)


if __name__ == "__main__":
    main()

"""Kopanski & Rzadca's Batsim parts (Euro-Par 2021, Section 4.2, the 16 three-week parts):
allocation-only replay against the I/O replay, per part and policy.

The authors publish each part twice: *allocation-only* (``cpu`` = the trace's runtime x 1e9) and
*I/O-aware* (``cpu`` with the job's I/O time taken out, for a simulator that adds the I/O back).
bbopt recognises the I/O-aware kind (:mod:`bbopt.workloads.batsim`) and replays it with the phased
I/O model (``io_aware="phased"``, ``execution="phased-io"``, Kopanski's dragonfly with its 12 BB
nodes and the 5 GB/s PFS link). For every part given this prints mean wait and bounded slowdown
per policy for

- ``alloc``: the allocation-only part, rigid replay on the 96-node / 480 GB platform (the
  authors' allocation-only runs);
- ``alloc+io``: the same part with Kopanski's phases added (stage-in, checkpoints, stage-out of
  its BB request) and replayed on the dragonfly: the trace's runtimes *plus* the I/O, an upper
  bound of what the I/O costs;
- ``io-aware``: the I/O-aware part (``--io-aware FILE``, when available), replayed phased.

Run: ``python benchmarks/kopanski_parts.py [--alloc FILE ...] [--io-aware FILE ...]
[--policies fcfs-easy,fcfs-bb,sjf-bb]`` (default: the allocation-only part 1 in the data folder).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _data import data_path  # noqa: E402

from bbopt import Platform, runs  # noqa: E402
from bbopt.topology import kopanski_dragonfly  # noqa: E402
from bbopt.workloads.batsim import read_batsim  # noqa: E402
from bbopt.workloads.generators.kopanski import with_phases  # noqa: E402

PART_1 = "KTH-split-alloc-only-part-1.batsim.json"


def row(label: str, part: str, pol: str, jobs, platform, execution: str) -> None:
    t0 = time.perf_counter()
    m = runs.run(runs.RunSpec(workload=jobs, platform=platform, policy=pol,
                              execution=execution, budget_mode="wall")).metrics
    print(f"{part:<28}{label:<10}{pol:<11}{m['mean_wait']:>11,.0f}"
          f"{m['mean_bounded_slowdown']:>10.2f}{m['rejected']:>6.0f}"
          f"{time.perf_counter() - t0:>7.0f}s", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alloc", nargs="*", default=None)
    ap.add_argument("--io-aware", nargs="*", default=[])
    ap.add_argument("--policies", default="fcfs-easy,fcfs-bb,sjf-bb")
    args = ap.parse_args()
    policies = args.policies.split(",")
    alloc = args.alloc if args.alloc is not None else [str(data_path(PART_1))]
    print(f"{'part':<28}{'replay':<10}{'policy':<11}{'mean wait':>11}{'bsld':>10}"
          f"{'rej':>6}{'run':>8}")
    pool, dragonfly = Platform.kopanski(), kopanski_dragonfly()
    for path in alloc:
        jobs = read_batsim(path).jobs
        phased = with_phases(jobs)
        name = Path(path).name.replace(".batsim.json", "")
        for pol in policies:
            row("alloc", name, pol, jobs, pool, "rigid")
            row("alloc+io", name, pol, phased, dragonfly, "phased-io")
    for path in args.io_aware:
        jobs = read_batsim(path, io_aware="phased").jobs
        name = Path(path).name.replace(".batsim.json", "")
        for pol in policies:
            row("io-aware", name, pol, jobs, dragonfly, "phased-io")


if __name__ == "__main__":
    main()

"""Herbein et al., HPDC 2016, Section 5.4 (Figure 8): the turnaround ratio of I/O-aware over
I/O-ignorant EASY under every plausible statistic, with 95 % confidence intervals over seeds.

The paper says "at 30 % underprovisioning, I/O-aware scheduling has, on average, [...] a 1.52
times greater upper-bound turnaround time ratio" without naming the statistic. The runs are
those of ``benchmarks/herbein_cts1.py`` (Herbein's user-arrival model calibrated to CTS-1, load
0.9, 2,500 jobs, contention with fixed elapsed times); per seed, the same jobs run under
fcfs-easy and io-easy, and the ratio is taken as: the ratio of mean turnarounds; the mean, the
median and the geometric mean of the per-job ratios; the ratio of median turnarounds; and the
ratio of means within classes (jobs at most / above the median node count; at most / above the
median runtime). Printed: mean over seeds +- the 95 % t-interval half-width, and each seed's.

Run: ``python benchmarks/herbein_turnaround.py [--levels 10,20,30] [--seeds 0,...,9]
[--jobs 2500]``
(about 12 CPU s per seed and level).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))

from herbein_cts1 import run, workload  # noqa: E402


def statistics_of(aware: np.ndarray, ignorant: np.ndarray, nodes: np.ndarray,
                  runtime: np.ndarray) -> dict[str, float]:
    """Each statistic of the aware / ignorant turnaround ratio for one pair of schedules."""
    r = aware / ignorant
    small, short = nodes <= np.median(nodes), runtime <= np.median(runtime)
    return {
        "ratio of means": aware.mean() / ignorant.mean(),
        "mean of per-job ratios": r.mean(),
        "median of per-job ratios": float(np.median(r)),
        "geometric mean of per-job ratios": float(np.exp(np.log(r).mean())),
        "ratio of medians": float(np.median(aware) / np.median(ignorant)),
        "ratio of means, jobs <= median nodes": aware[small].mean() / ignorant[small].mean(),
        "ratio of means, jobs > median nodes": aware[~small].mean() / ignorant[~small].mean(),
        "ratio of means, runtime <= median": aware[short].mean() / ignorant[short].mean(),
        "ratio of means, runtime > median": aware[~short].mean() / ignorant[~short].mean(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--levels", default="30")
    ap.add_argument("--seeds", default="0,1,2,3,4,5,6,7,8,9")
    ap.add_argument("--load", type=float, default=0.9)
    ap.add_argument("--jobs", type=int, default=2500, help="jobs per workload")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    for level in (int(x) for x in args.levels.split(",")):
        per: dict[str, list[float]] = defaultdict(list)
        for seed in seeds:
            jobs = workload("cts1", args.jobs, seed, args.load)
            aware = run(jobs, level, "io-easy", "fixed", None)["turnarounds"]
            ignorant = run(jobs, level, "fcfs-easy", "fixed", None)["turnarounds"]
            nodes = np.array([j.nodes for j in jobs], dtype=float)
            runtime = np.array([j.runtime for j in jobs], dtype=float)
            for name, value in statistics_of(aware, ignorant, nodes, runtime).items():
                per[name].append(float(value))
        print(f"{level} % underprovisioning, load {args.load}, seeds {args.seeds} "
              f"(paper at 30 %: 1.52)")
        for name, values in per.items():
            x = np.array(values)
            half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)) \
                if len(x) > 1 else 0.0
            print(f"  {name:<38} {x.mean():6.2f} +- {half:4.2f}   "
                  f"{' '.join(f'{v:.2f}' for v in x)}", flush=True)


if __name__ == "__main__":
    main()

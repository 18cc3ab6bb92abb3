"""plan-2's quality and CPU time with a shorter, warm-started annealing, against the paper's
search (Kopanski & Rzadca, Euro-Par 2021, Section 3.3) measured in the same run.

Configurations (``--configs``, comma-separated; the first is the reference of the ratios):

- ``paper``: the paper's annealing (30 temperatures of 6 moves from the best of 9 orders);
- ``warmN``: ``warm_start=True, temperatures=N``: the previous decision's plan order (its jobs
  still waiting, newcomers after them in queue order) is a 10th candidate order and the
  annealing runs N temperatures, cooled so that the last is the paper's;
- ``coldN``: ``temperatures=N`` alone (what the warm start adds);
- ``seedN``: the paper's search with another seed of its random moves (``seed=N``): how far the
  figures move when only the luck of the search changes, the yardstick of the others.

Workload: the KTH-SP2 trace with Kopanski's log-normal BB requests (seed 0) on
``Platform.kopanski()`` (``--named``: its 12 named BB nodes), as
``benchmarks/kopanski_seeds.py`` reads it: the whole trace and (unless ``--no-parts``)
its 16 three-week parts (``experiments/kopanski.yaml``'s split), each simulated alone. Printed
per configuration: CPU seconds (this process, user + system) of the whole trace and of the
16 parts, mean wait and mean bounded slowdown (10-minute bound) of the whole trace, and over
the parts the median [q1, q3] of each part's mean normalised by the reference's on the same
part. Deterministic budget mode: the answer does not depend on the machine's load.

    python benchmarks/speed/plan_warm_start.py [--configs paper,seed1,cold10] [--no-parts]
                                         [--no-whole] [--named] [--jobs N] [--parts 0,5]
"""

from __future__ import annotations

import argparse
import resource
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt import Platform, simulate  # noqa: E402
from bbopt.analysis.experiments import split_trace  # noqa: E402
from bbopt.analysis.metrics import summarize  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from benchmarks._data import data_path  # noqa: E402

KTH = "KTH-SP2-1996-2.1-cln.swf"
DAY = 86400.0


def options(config: str) -> dict:
    """The plan-2 options of a configuration name."""
    base = {"budget_mode": "deterministic"}
    if config == "paper":
        return base
    if config.startswith("seed") and config[4:].isdigit():
        return {**base, "seed": int(config[4:])}
    for prefix, warm in (("warm", True), ("cold", False)):
        if config.startswith(prefix) and config[len(prefix):].isdigit():
            return {**base, "warm_start": warm, "temperatures": int(config[len(prefix):])}
    raise SystemExit(f"unknown configuration {config!r} (paper, warmN, coldN, seedN)")


def cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(jobs, platform, config: str) -> tuple[dict, float]:
    t0 = cpu()
    res = simulate(jobs, platform, "plan-2", options=options(config))
    return summarize(res), cpu() - t0


def quartiles(x: list[float]) -> str:
    a = np.asarray(x, float)
    return (f"{np.median(a):.3f} [{np.percentile(a, 25):.3f}, {np.percentile(a, 75):.3f}]")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="paper,seed1,cold10")
    ap.add_argument("--no-parts", action="store_true")
    ap.add_argument("--no-whole", action="store_true")
    ap.add_argument("--named", action="store_true", help="12 named BB nodes")
    ap.add_argument("--jobs", type=int, default=None, help="only the first N jobs")
    ap.add_argument("--parts", default=None,
                    help="only these parts (comma-separated indices 0-15)")
    args = ap.parse_args()
    configs = [c for c in args.configs.split(",") if c]
    for c in configs:
        options(c)
    jobs = with_lognormal_bb(read_swf(data_path(KTH)).jobs, seed=0)
    if args.jobs:
        jobs = jobs[:args.jobs]
    platform = Platform.kopanski(named_bb=args.named)
    parts = [] if args.no_parts else [p for p in split_trace(jobs, 16, length=21 * DAY) if p]
    if parts and args.parts:
        parts = [parts[int(k)] for k in args.parts.split(",")]
    whole: dict[str, tuple[dict, float]] = {}
    per_part: dict[str, list[tuple[dict, float]]] = {c: [] for c in configs}
    for c in configs:  # whole trace, then the parts, configuration by configuration
        if not args.no_whole:
            whole[c] = run(jobs, platform, c)
            m, t = whole[c]
            print(f"  {c:8s} whole: {t:7.1f} s CPU, mean wait {m['mean_wait']:,.0f} s, "
                  f"bsld {m['mean_bounded_slowdown']:.3f}", file=sys.stderr, flush=True)
        for part in parts:
            per_part[c].append(run(part, platform, c))
        if parts:
            print(f"  {c:8s} parts: {sum(t for _, t in per_part[c]):7.1f} s CPU",
                  file=sys.stderr, flush=True)
    ref = configs[0]
    print(f"plan-2 on KTH-SP2{f' (first {args.jobs} jobs)' if args.jobs else ''}, "
          f"{'named BB nodes' if args.named else 'BB pool'}, log-normal BB seed 0; "
          f"CPU s of this process; ratios against {ref}")
    if whole:
        print(f"{'config':8s} {'whole CPU s':>11s} {'x ' + ref:>9s} {'mean wait s':>12s} "
              f"{'x ' + ref:>9s} {'mean bsld':>10s} {'x ' + ref:>9s}")
        r_m, r_t = whole[ref]
        for c in configs:
            m, t = whole[c]
            print(f"{c:8s} {t:11.1f} {t / r_t:9.3f} {m['mean_wait']:12,.0f} "
                  f"{m['mean_wait'] / r_m['mean_wait']:9.3f} "
                  f"{m['mean_bounded_slowdown']:10.3f} "
                  f"{m['mean_bounded_slowdown'] / r_m['mean_bounded_slowdown']:9.3f}")
    if parts:
        print(f"{len(parts)} three-week parts ({', '.join(str(len(p)) for p in parts)} jobs): each "
              f"part's mean over {ref}'s on that part, median [q1, q3]")
        print(f"{'config':8s} {'parts CPU s':>11s} {'x ' + ref:>9s} {'wait / ' + ref:>26s} "
              f"{'bsld / ' + ref:>26s}")
        ref_t = sum(t for _, t in per_part[ref])
        for c in configs:
            t = sum(t for _, t in per_part[c])
            wait = [m["mean_wait"] / r["mean_wait"] if r["mean_wait"] > 0 else 1.0
                    for (m, _), (r, _) in zip(per_part[c], per_part[ref], strict=True)]
            bsld = [m["mean_bounded_slowdown"] / r["mean_bounded_slowdown"]
                    for (m, _), (r, _) in zip(per_part[c], per_part[ref], strict=True)]
            print(f"{c:8s} {t:11.1f} {t / ref_t:9.3f} {quartiles(wait):>26s} "
                  f"{quartiles(bsld):>26s}")


if __name__ == "__main__":
    main()

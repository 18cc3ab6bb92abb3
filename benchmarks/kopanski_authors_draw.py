"""Kopanski & Rzadca (Euro-Par 2021), Section 4, like for like: bbopt's policies on the authors'
own burst-buffer draw, in both of their simulation models, against the figures of their code.

The authors publish their workloads as 16 Batsim parts per model
(``workloads/KTH-split/{alloc-only,io-aware}/part-N.json`` in jankopanski/Burst-Buffer-Scheduling);
together the parts hold every one of the 28,467 KTH jobs bbopt reads, by SWF job number. This
script takes ``--parts DIR`` (a copy of ``KTH-split``) and builds, per model, the whole trace:

- allocation-only: the SWF jobs (submit, nodes, walltime, runtime) with the authors' BB request
  per node x nodes, run rigid on ``kopanski:named`` (first fit) and ``kopanski:proximity`` (the
  authors' placement: the chassis' BB node, then the group's, then any);
- I/O-aware: the authors' I/O-aware parts (compute with the I/O time taken out) read with
  ``io_aware="phased"`` and the checkpoint size of their scheduler (0.5 x the BB request,
  ``--checkpoint-factor``), submit times from the SWF, run ``phased-io`` on
  ``kopanski-dragonfly`` (pool) and ``kopanski-dragonfly:proximity``.

The authors' figures (mean wait over the 28,453 finished jobs; their notebooks
``analysis/ScheduleComparison-*.ipynb`` and ``BestScheduleComparison-*.ipynb``; their config
names in brackets): allocation-only fcfs 5,764,506 s [fcfs], filler 23,564 s [filler],
fcfs-easy 5,509,821 s [no-future-1], fcfs-bb 14,791 s [backfill-1], sjf-bb 16,030 s
[backfill-sjf-1], plan-2 11,059 s [plan-opt-square-0]; I/O-aware fcfs 5,634,667 s, filler
20,841 s, fcfs-easy 1,552,292 s, fcfs-bb 14,561 s, sjf-bb 13,909 s, plan-2 11,064 s.

Run: ``BBOPT_DATA=... python benchmarks/kopanski_authors_draw.py --parts DIR [--models
alloc,io] [--policies a,b] [--platforms a,b] [--checkpoint-factor 0.5]`` (CPU seconds per run:
2-5 rigid, 9-14 phased for the EASY policies; fcfs-easy 25; plan-2 on named BB nodes 1.5-2
minutes).

``--split`` runs the paper's robustness analysis instead (Section 4.2, Fig. 12): each of the 16
parts alone, as the authors ran them (the part's own jobs and submit times), on the authors'
platform of each model (``kopanski:proximity``, ``kopanski-dragonfly:proximity``), each part's
mean wait and mean bounded slowdown divided by sjf-bb's on the same part; printed per part, then
median [first quartile, third quartile] over the 16 parts beside the authors' (read off the box
plots their notebooks draw from their outputs: ``analysis/SplitPlots.ipynb`` on the I/O-aware
parts, ``analysis/Best-Split.ipynb`` on the allocation-only parts, to about 0.01).
``--budget-mode deterministic`` makes the plan policies' search independent of the machine's
load (the whole-trace rows were measured with ``wall``, as ``bbopt.simulate`` decides).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _data import data_path  # noqa: E402

from bbopt import runs  # noqa: E402
from bbopt.loading import load_platform  # noqa: E402
from bbopt.workloads.batsim import read_batsim  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402

KTH = "KTH-SP2-1996-2.1-cln.swf"
PARTS = 16
THEIRS = {
    "alloc": {"fcfs": 5764506.0, "filler": 23564.0, "fcfs-easy": 5509821.0, "fcfs-bb": 14791.0,
              "sjf-bb": 16030.0, "plan-2": 11059.0},
    "io": {"fcfs": 5634667.0, "filler": 20841.0, "fcfs-easy": 1552292.0, "fcfs-bb": 14561.0,
           "sjf-bb": 13909.0, "plan-2": 11064.0},
}
PLATFORMS = {"alloc": ("kopanski:named", "kopanski:proximity"),
             "io": ("kopanski-dragonfly", "kopanski-dragonfly:proximity")}
#: The authors' platform of each model, where ``--split`` runs.
AUTHORS_PLATFORM = {"alloc": "kopanski:proximity", "io": "kopanski-dragonfly:proximity"}
#: The authors' 16 parts normalised by sjf-bb [backfill-sjf-1]: median, first and third quartile
#: over the parts, read off their box plots (allocation-only: mean wait of fcfs-bb only; I/O-aware:
#: fcfs-bb [backfill-1], plan-2 [plan-opt-square-0], plan-3 [plan-opt-cube-0]).
THEIRS_SPLIT = {
    "alloc": {"mean_wait": {"fcfs-bb": (1.115, 1.045, 1.165)}},
    "io": {"mean_wait": {"fcfs-bb": (0.99, 0.95, 1.08), "plan-2": (0.645, 0.58, 0.715),
                         "plan-3": (0.69, 0.62, 0.775)},
           "mean_bounded_slowdown": {"fcfs-bb": (1.05, 0.97, 1.20), "plan-2": (0.715, 0.535, 0.80),
                                     "plan-3": (0.71, 0.59, 0.85)}},
}


def alloc_only(parts: Path, swf_jobs):
    """The SWF jobs with the authors' allocation-only BB requests (per node x nodes)."""
    bb = {}
    for k in range(PARTS):
        doc = json.loads((parts / "alloc-only" / f"part-{k}.json").read_text())
        for job in doc["jobs"]:
            bb[str(job["id"])] = doc["profiles"][job["profile"]]["bb"] * job["res"]
    return [replace(j, bb=float(bb[str(j.id)])) for j in swf_jobs]


def io_aware(parts: Path, swf_jobs, checkpoint_factor: float):
    """The authors' I/O-aware jobs replayed phased, at the SWF's submit times."""
    submit = {str(j.id): j.submit for j in swf_jobs}
    jobs = {}
    for k in range(PARTS):
        for j in read_batsim(parts / "io-aware" / f"part-{k}.json", io_aware="phased",
                             checkpoint_factor=checkpoint_factor).jobs:
            jobs[str(j.id)] = replace(j, submit=submit[str(j.id)])
    return sorted(jobs.values(), key=lambda j: (j.submit, int(j.id)))


def _ratio(a: float, b: float) -> float:
    """a / b, NaN where the reference is 0 (a part on which sjf-bb makes no job wait)."""
    return a / b if b else float("nan")


def split(parts: Path, model: str, policies: list[str], checkpoint_factor: float,
          budget_mode: str) -> None:
    """Each part alone on the authors' platform, normalised by sjf-bb on the same part."""
    folder = parts / ("alloc-only" if model == "alloc" else "io-aware")
    platform = load_platform(AUTHORS_PLATFORM[model])
    execution = "rigid" if model == "alloc" else "phased-io"
    options = {"io_aware": "phased", "checkpoint_factor": checkpoint_factor} \
        if model == "io" else {}
    if "sjf-bb" not in policies:
        policies = ["sjf-bb", *policies]
    keys = ("mean_wait", "mean_bounded_slowdown")
    got: dict[str, dict[str, list[float]]] = {p: {k: [] for k in keys} for p in policies}
    print(f"{model}: the 16 parts alone on {AUTHORS_PLATFORM[model]}, / sjf-bb on the same part")
    print(f"{'part':>4}{'jobs':>6}{'sjf-bb wait':>12}{'sjf-bb bsld':>12}"
          + "".join(f"{p + ' wait':>15}{'bsld':>7}" for p in policies if p != "sjf-bb")
          + f"{'cpu s':>8}")
    for k in range(PARTS):
        jobs = read_batsim(folder / f"part-{k}.json", **options).jobs
        t0 = time.process_time()
        for pol in policies:
            m = runs.run(runs.RunSpec(workload=jobs, platform=platform, policy=pol,
                                      execution=execution, budget_mode=budget_mode)).metrics
            for key in keys:
                got[pol][key].append(m[key])
        ref = got["sjf-bb"]
        cells = "".join(f"{_ratio(got[p][keys[0]][-1], ref[keys[0]][-1]):>15.3f}"
                        f"{_ratio(got[p][keys[1]][-1], ref[keys[1]][-1]):>7.3f}"
                        for p in policies if p != "sjf-bb")
        print(f"{k:>4}{len(jobs):>6}{ref['mean_wait'][-1]:>12,.0f}"
              f"{ref['mean_bounded_slowdown'][-1]:>12.2f}{cells}"
              f"{time.process_time() - t0:>8.0f}", flush=True)
    print(f"\n{'policy':<10}{'metric':<23}{'median [q1, q3] over the parts':>34}{'theirs':>24}")
    for pol in policies:
        if pol == "sjf-bb":
            continue
        for key in keys:
            r = [_ratio(a, b) for a, b in zip(got[pol][key], got["sjf-bb"][key], strict=True)]
            q1, med, q3 = np.nanpercentile(r, [25, 50, 75]) if not np.isnan(r).all() \
                else (np.nan,) * 3
            theirs = THEIRS_SPLIT[model].get(key, {}).get(pol)
            t = f"{theirs[0]:.3f} [{theirs[1]:.2f}, {theirs[2]:.2f}]" if theirs else "-"
            print(f"{pol:<10}{key:<23}{f'{med:.3f} [{q1:.2f}, {q3:.2f}]':>34}{t:>24}")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", required=True, help="a copy of the authors' KTH-split folder")
    ap.add_argument("--models", default="alloc,io")
    ap.add_argument("--policies", default="fcfs,filler,fcfs-easy,fcfs-bb,sjf-bb")
    ap.add_argument("--checkpoint-factor", type=float, default=0.5)
    ap.add_argument("--jobs", type=int, default=None,
                    help="only the first N jobs of the trace (the parts may hold only those)")
    ap.add_argument("--split", action="store_true",
                    help="the 16 parts alone, normalised by sjf-bb (the paper's Fig. 12)")
    ap.add_argument("--budget-mode", choices=("wall", "deterministic"), default="wall")
    ap.add_argument("--platforms", default=None,
                    help="comma-separated platforms of the whole-trace runs (default: a BB "
                         "pool or first fit and the authors' proximity placement)")
    args = ap.parse_args()
    if args.split:
        for model in args.models.split(","):
            split(Path(args.parts), model, args.policies.split(","), args.checkpoint_factor,
                  args.budget_mode)
        return
    swf_jobs = read_swf(data_path(KTH)).jobs[:args.jobs]
    print(f"{'model':<7}{'platform':<31}{'policy':<11}{'mean wait':>12}{'theirs':>12}"
          f"{'ratio':>7}{'bsld':>8}{'killed':>8}{'cpu s':>7}")
    for model in args.models.split(","):
        jobs = alloc_only(Path(args.parts), swf_jobs) if model == "alloc" else \
            io_aware(Path(args.parts), swf_jobs, args.checkpoint_factor)
        execution = "rigid" if model == "alloc" else "phased-io"
        names = PLATFORMS[model] if args.platforms is None else [
            n for n in args.platforms.split(",") if n in PLATFORMS[model]]
        for name in names:
            platform = load_platform(name)
            for pol in args.policies.split(","):
                t0 = time.process_time()
                m = runs.run(runs.RunSpec(workload=jobs, platform=platform, policy=pol,
                                          execution=execution,
                                          budget_mode=args.budget_mode)).metrics
                theirs = THEIRS[model].get(pol)
                ratio = f"{m['mean_wait'] / theirs:7.3f}" if theirs else f"{'-':>7}"
                print(f"{model:<7}{name:<31}{pol:<11}{m['mean_wait']:>12,.0f}"
                      f"{theirs or 0:>12,.0f}{ratio}{m['mean_bounded_slowdown']:>8.2f}"
                      f"{m['killed']:>8.0f}{time.process_time() - t0:>7.1f}", flush=True)


if __name__ == "__main__":
    main()

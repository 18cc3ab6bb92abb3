"""Reproduction of Kopanski & Rzadca (Euro-Par 2021), Section 4: the KTH trace with log-normal
burst-buffer requests on the 96-node / 480 GB platform, queue-based vs plan-based policies.

Policies: fcfs, fcfs-easy, filler, fcfs-bb, sjf-bb, plan-1, plan-2, plan-3 (annealing). Printed:
mean waiting time and mean bounded slowdown (10-minute bound) on the whole trace, next to the
numbers of the authors' code, then (``--parts``, default on) the paper's robustness analysis: the
trace cut into 16 non-overlapping three-week parts by submission time, each part simulated alone,
each part's mean normalised by sjf-bb's on the same part (median and quartiles over the parts).
The parts are the sweep ``experiments/kopanski.yaml`` (16 windows of 21 days from the first
submission; jobs after the 16th window are not used) with this script's policies and seed, run
on worker processes into a resumable results store (``--store``).

The authors' numbers (their code, Batsim/SimGrid, Dragonfly platform; from the lead's notes):
allocation-only model (BB reserved, no I/O simulated): fcfs-bb 14,791 s, sjf-bb 16,030 s,
plan-2 11,059 s mean wait; with their I/O model: sjf-bb 13,909 s vs plan-2 11,065 s mean wait and
9.69 vs 7.06 mean bounded slowdown.

Run: ``python benchmarks/kopanski_reproduction.py [--policies a,b] [--no-parts] [--csv DIR]
[--store DIR] [-j N]``
(the full run takes tens of minutes on 2 cores; plan-2 alone a few minutes).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _data import data_path  # noqa: E402

from bbopt import Platform, runs  # noqa: E402
from bbopt.analysis.intervals import normalise_runs  # noqa: E402
from bbopt.analysis.store import collect  # noqa: E402
from bbopt.analysis.sweep import run_sweep  # noqa: E402
from bbopt.analysis.sweep_spec import parse_spec  # noqa: E402
from bbopt.units import read_document  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402

KTH = "KTH-SP2-1996-2.1-cln.swf"
SPEC = Path(__file__).resolve().parents[1] / "experiments" / "kopanski.yaml"
POLICIES = ("fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "plan-1", "plan-2", "plan-3")
#: Mean waiting time (s) reported by the authors' code: allocation-only / with I/O.
THEIRS_WAIT_ALLOC = {"fcfs-easy": 5.51e6, "fcfs-bb": 14791.0, "sjf-bb": 16030.0,
                     "plan-2": 11059.0}
THEIRS_WAIT_IO = {"fcfs-bb": 14561.0, "sjf-bb": 13909.0, "plan-2": 11065.0}
THEIRS_BSLD_IO = {"sjf-bb": 9.69, "plan-2": 7.06}


def data_dir() -> Path:
    return data_path(KTH).parent


def fmt(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "-"
    return f"{x:,.{digits}f}"


def whole_trace(jobs, platform, policies: list[str], csv: str | None = None) -> dict:
    """Replay the whole trace under each policy and print the table against the paper's figures;
    returns ``{policy: (metrics, wall seconds)}``."""
    results = {}
    for pol in policies:
        t0 = time.perf_counter()
        record = runs.run(runs.RunSpec(workload=jobs, platform=platform, policy=pol,
                                       budget_mode="wall"))  # (as bbopt.simulate decides)
        wall = time.perf_counter() - t0
        res, m = record.result, record.metrics
        results[pol] = (m, wall)
        if csv:
            Path(csv).mkdir(parents=True, exist_ok=True)
            res.to_csv(Path(csv) / f"kth-{pol}.csv")
        print(f"  {pol:<10} done in {wall:7.1f} s: mean wait {m['mean_wait']:,.0f} s, "
              f"mean bsld {m['mean_bounded_slowdown']:.2f}", flush=True)
    print()
    print("Whole trace (rejected jobs, which can never fit the platform, excluded from means)")
    head = (f"{'policy':<10}{'mean wait':>11}{'p95 wait':>11}{'max wait':>11}{'mean bsld':>10}"
            f"{'node util':>10}{'bb util':>9}{'dec p95':>9}{'dec max':>9}{'wall':>8}"
            f"{'| theirs: wait alloc':>22}{'wait I/O':>10}{'bsld I/O':>9}")
    print(head)
    print("-" * len(head))
    for pol in policies:
        m, wall = results[pol]
        print(f"{pol:<10}{m['mean_wait']:>11,.0f}{m['p95_wait']:>11,.0f}{m['max_wait']:>11,.0f}"
              f"{m['mean_bounded_slowdown']:>10.2f}{m['node_utilization']:>10.3f}"
              f"{m['bb_utilization']:>9.3f}{m['decision_time_p95'] * 1e3:>7.2f}ms"
              f"{m['decision_time_max'] * 1e3:>7.0f}ms{wall:>7.0f}s"
              f"{fmt(THEIRS_WAIT_ALLOC.get(pol)):>22}{fmt(THEIRS_WAIT_IO.get(pol)):>10}"
              f"{fmt(THEIRS_BSLD_IO.get(pol), 2):>9}")
    if "plan-2" in results and "sjf-bb" in results:
        p2, sj = results["plan-2"][0], results["sjf-bb"][0]
        dw = 1 - p2["mean_wait"] / sj["mean_wait"]
        db = 1 - p2["mean_bounded_slowdown"] / sj["mean_bounded_slowdown"]
        print(f"\nplan-2 vs sjf-bb: mean wait {dw:+.1%} lower, mean bounded slowdown {db:+.1%} "
              f"lower (theirs with I/O: {1 - 11065 / 13909:+.1%}, {1 - 7.06 / 9.69:+.1%}; "
              f"allocation-only wait: {1 - 11059 / 16030:+.1%})")
    if "fcfs-easy" in results:
        easy = results["fcfs-easy"][0]["mean_wait"]
        others = [results[p][0]["mean_wait"] for p in ("fcfs-bb", "sjf-bb", "plan-2")
                  if p in results]
        if others:
            print(f"fcfs-easy mean wait / best of fcfs-bb, sjf-bb, plan-2: "
                  f"{easy / min(others):.1f}x (theirs: two orders of magnitude)")
    if "plan-2" in results:
        print(f"plan-2 over the whole trace: {results['plan-2'][1]:.0f} s wall "
              f"(target <= 600 s; the authors' code: up to 4 days)")
    return results


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--no-parts", action="store_true")
    ap.add_argument("--seed", type=int, default=0, help="seed of the BB model")
    ap.add_argument("--csv", default=None, help="write each run's jobs.csv into this folder")
    ap.add_argument("--store", default="results/kopanski",
                    help="results store of the parts (resumable; bbopt report reads it)")
    ap.add_argument("-j", "--workers", type=int, default=None, help="worker processes")
    args = ap.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    trace = read_swf(data_dir() / KTH)
    jobs = with_lognormal_bb(trace.jobs, seed=args.seed)
    platform = Platform.kopanski()
    print(f"KTH-SP2-1996-2.1-cln: {len(jobs)} jobs, log-normal BB (seed {args.seed}), "
          f"{platform.nodes} nodes / {platform.bb / 1e9:.0f} GB")
    whole_trace(jobs, platform, policies, args.csv)
    if args.no_parts or "sjf-bb" not in policies:
        return
    parts_through_the_sweep(policies, args)


def parts_through_the_sweep(policies: list[str], args) -> None:
    """The robustness analysis as the sweep ``experiments/kopanski.yaml`` (these policies, this
    seed) into a resumable store, on worker processes: median [q1, q3] of the ratios."""
    doc = read_document(SPEC)
    doc.update(policies=policies, seeds=[args.seed])
    spec = parse_spec(doc, source=str(SPEC), base=SPEC.parent)
    out = Path(args.store)
    rep = run_sweep(spec, out, workers=args.workers, progress=sys.stderr.isatty(),
                    spec_text=SPEC.read_text())
    table = collect(out)
    table = table[table["run"].isin(rep.hashes)]
    sizes = table.drop_duplicates("part").sort_values("part")["part_jobs"]
    print()
    print(f"16 three-week parts ({', '.join(str(int(n)) for n in sizes)} jobs), each part's "
          "mean normalised by sjf-bb's on that part: median [q1, q3] over the parts")
    long = normalise_runs(table, "sjf-bb", ["mean_wait", "mean_bounded_slowdown"])
    print(f"{'policy':<10}{'wait / sjf-bb':>26}{'bsld / sjf-bb':>26}")
    for pol in policies:
        qs = []
        for metric in ("mean_wait", "mean_bounded_slowdown"):
            x = long.loc[(long["policy"] == pol) & (long["metric"] == metric), "normalised"]
            x = x.dropna().to_numpy(float)
            qs.append(f"{np.median(x):6.2f} [{np.percentile(x, 25):5.2f}, "
                      f"{np.percentile(x, 75):5.2f}]")
        print(f"{pol:<10}{qs[0]:>26}{qs[1]:>26}")
    print(f"(parts: {rep.ran} run, {rep.skipped} already in {out}, in {rep.wall_time:.0f} s; "
          f"bbopt report {out} draws the forest plot)")


if __name__ == "__main__":
    main()

"""Herbein et al., HPDC 2016, Section 5: I/O-ignorant vs I/O-aware EASY on CTS-1 -- a thin
wrapper over the sweep ``experiments/herbein.yaml`` (its comments describe the stand-in
workload, the platform and the execution model) that prints the paper's comparison.

The runs go into a results store (``--out``, default ``results/herbein``): rerunning resumes,
and ``bbopt report DIR`` draws the figures. Printed, per underprovisioning level and policy
(means over the spec's seeds): % of node-time computing (paper: ignorant 79.1 % at 30 %,
aware 100 %), the per-job compute share range (paper: 66.7-100 % ignorant at 30 %), the share
of compute node-time and of wall time with I < 1 (paper: 55-65 % ignorant), turnaround,
decision-time percentiles (paper: p75 0.12 s, p95 2-6.6 s on their emulator; target here:
I/O-aware p95 <= 0.1 s); then the ratios aware / ignorant (paper, Fig. 8 at 30 %: efficiency
1.29, turnaround up to 1.52) and io-window / io-easy (beyond the paper).

Run: ``python benchmarks/herbein_reproduction.py [--quick] [--out DIR] [-j N | --serial |
--dask local]`` (the same as ``bbopt sweep experiments/herbein.yaml`` and reading its table).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bbopt.analysis.store import collect  # noqa: E402
from bbopt.analysis.sweep import run_sweep  # noqa: E402
from bbopt.analysis.sweep_spec import load_spec  # noqa: E402

SPEC = ROOT / "experiments" / "herbein.yaml"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the spec's quick variant")
    ap.add_argument("--out", default=None, help="results store (default results/herbein)")
    ap.add_argument("-j", "--workers", type=int, default=None)
    ap.add_argument("--serial", action="store_true")
    ap.add_argument("--dask", default=None, metavar="local|tcp://HOST:PORT")
    args = ap.parse_args()
    spec = load_spec(SPEC, quick=args.quick)
    out = Path(args.out or f"results/herbein{'-quick' if args.quick else ''}")
    rep = run_sweep(spec, out, executor="serial" if args.serial else "processes",
                    workers=args.workers, dask=args.dask, progress=sys.stderr.isatty(),
                    spec_text=SPEC.read_text())
    print(f"{rep.total} runs ({rep.skipped} already in {out}, {rep.ran} run, {rep.failed} "
          f"failed) in {rep.wall_time:.0f} s")
    table = collect(out)
    table = table[table["run"].isin(rep.hashes)].copy()
    table["level"] = [float(p.partition(":")[2] or 0) * 100 for p in table["platform"]]
    cols = ["system_efficiency", "compute_share_min", "compute_share_max",
            "interfered_node_time_share", "interfered_wall_share", "mean_turnaround",
            "decision_time_p50", "decision_time_p75", "decision_time_p95", "wall_time"]
    mean = table.groupby(["level", "policy"], sort=True)[cols].mean()
    print(f"{'under':>5} {'policy':>9} {'compute%':>8} {'share min-max %':>16} "
          f"{'I<1 node%':>9} {'I<1 wall%':>9} {'turnaround h':>12} {'dec p50 ms':>10} "
          f"{'p75 ms':>7} {'p95 ms':>7} {'run s':>6}")
    for (level, policy), s in mean.iterrows():
        print(f"{level:>4.0f}% {policy:>9} {100 * s['system_efficiency']:>8.1f} "
              f"{100 * s['compute_share_min']:>7.1f}-{100 * s['compute_share_max']:<8.1f} "
              f"{100 * s['interfered_node_time_share']:>9.1f} "
              f"{100 * s['interfered_wall_share']:>9.1f} "
              f"{s['mean_turnaround'] / 3600:>12.2f} {1e3 * s['decision_time_p50']:>10.2f} "
              f"{1e3 * s['decision_time_p75']:>7.2f} {1e3 * s['decision_time_p95']:>7.2f} "
              f"{s['wall_time']:>6.0f}")
    print(f"\n{'under':>5} {'efficiency aware/ignorant':>26} {'turnaround aware/ignorant':>26} "
          f"{'turnaround io-window/io-easy':>29}")
    for level, m in mean.groupby(level="level"):
        m = m.droplevel("level")
        if not {"io-easy", "fcfs-easy"} <= set(m.index):
            continue
        eff = m.loc["io-easy", "system_efficiency"] / m.loc["fcfs-easy", "system_efficiency"]
        tat = m.loc["io-easy", "mean_turnaround"] / m.loc["fcfs-easy", "mean_turnaround"]
        win = (m.loc["io-window", "mean_turnaround"] / m.loc["io-easy", "mean_turnaround"]
               if "io-window" in m.index else float("nan"))
        print(f"{level:>4.0f}% {eff:>26.3f} {tat:>26.3f} {win:>29.3f}")
    print("paper (Fig. 8, 30 %): efficiency ratio 1.29 (lower bound), turnaround ratio 1.52 "
          "(upper bound)")


if __name__ == "__main__":
    main()

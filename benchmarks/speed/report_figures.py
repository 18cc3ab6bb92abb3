"""Figure speed on a whole trace: the full KTH-SP2 run (28 k jobs, log-normal BB, Kopanski's
96-node platform) drawn as a Gantt chart (one patch per started job, a single collection),
node/BB utilisation with the queue over time, and the waiting-time ECDF; the time of each
figure built and written as PNG, against the time of the simulation measured in the same run.
The issue's target: a readable Gantt chart of 28 k jobs in a few seconds at most.

Run: ``python benchmarks/speed/report_figures.py [--policy fcfs-bb] [--first N]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt import Platform, simulate  # noqa: E402
from bbopt.analysis import figures  # noqa: E402
from bbopt.analysis.frames import timeline, to_pandas  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from benchmarks._data import data_path  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policy", default="fcfs-bb")
    ap.add_argument("--first", type=int, default=None, help="only the first N jobs")
    args = ap.parse_args()
    trace = read_swf(data_path("KTH-SP2-1996-2.1-cln.swf"), max_nodes=96, oversize="drop")
    jobs = with_lognormal_bb(trace.jobs, seed=0)[:args.first]
    platform = Platform.kopanski()
    t0 = time.perf_counter()
    result = simulate(jobs, platform, args.policy)
    sim = time.perf_counter() - t0
    rows = []

    def timed(label, fn):
        t = time.perf_counter()
        out = fn()
        rows.append((label, time.perf_counter() - t))
        return out

    frame = timed("to_pandas (per-job frame)", lambda: to_pandas(result))
    timed("timeline (ends before starts)", lambda: timeline(frame))
    started = int(frame["start"].notna().sum())
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        fig = timed("gantt + PNG", lambda: figures.gantt(frame, platform.nodes,
                                                         path=out / "gantt.png"))
        patches = len(fig.axes[0].collections[0].get_paths())
        figures.close(fig)
        fig = timed("utilisation + queue + PNG", lambda: figures.utilisation_plot(
            {args.policy: frame}, platform.nodes, platform.bb, path=out / "util.png"))
        figures.close(fig)
        fig = timed("wait ECDF + PNG", lambda: figures.wait_ecdf({args.policy: frame},
                                                                 path=out / "ecdf.png"))
        figures.close(fig)
        sizes = {p.name: p.stat().st_size for p in out.iterdir()}
    print(f"{len(jobs)} jobs, {started} started, policy {args.policy}: simulation {sim:.1f} s")
    print(f"{'step':<32}{'s':>8}{'x simulation':>14}")
    for label, s in rows:
        print(f"{label:<32}{s:>8.2f}{s / sim:>14.3f}")
    print(f"Gantt patches: {patches} (one per started job: {patches == started}); "
          "PNG bytes: " + ", ".join(f"{k} {v}" for k, v in sorted(sizes.items())))


if __name__ == "__main__":
    main()

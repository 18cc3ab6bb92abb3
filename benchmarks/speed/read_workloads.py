"""How fast bbopt reads, writes and generates workloads.

Run from the repository root: ``python benchmarks/speed/read_workloads.py``. Prints, for each
task, the best and median wall time over ``--repeat`` runs. The full KTH-SP2 SWF (28,476
records) must read in well under a second. Data: ``$BBOPT_DATA``, ``../shared/data`` or
``/work/shared/data``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt.workloads.batsim import read_batsim_jobs, write_batsim  # noqa: E402
from bbopt.workloads.generators import herbein, jeannot, kopanski  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from bbopt.workloads.swf_writer import write_swf  # noqa: E402


def data_dir() -> Path:
    env = os.environ.get("BBOPT_DATA")
    for c in ([Path(env)] if env else []) + [Path(__file__).resolve().parents[2] / ".." /
                                             "shared" / "data", Path("/work/shared/data")]:
        if c.is_dir():
            return c
    sys.exit("shared data not found; set BBOPT_DATA")


def timed(fn, repeat: int) -> tuple[float, float, object]:
    times = []
    out = None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    d = data_dir()
    swf = d / "KTH-SP2-1996-2.1-cln.swf"
    bjs = d / "KTH-split-alloc-only-part-1.batsim.json"
    rows = []
    best, med, trace = timed(lambda: read_swf(swf), args.repeat)
    rows.append(("read KTH SWF (28,476 records)", len(trace.jobs), best, med))
    best, med, jobs = timed(lambda: read_batsim_jobs(bjs), args.repeat)
    rows.append(("read Kopanski Batsim JSON", len(jobs), best, med))
    kth = kopanski.kopanski_workload(trace.jobs, seed=0)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "kth.json"
        best, med, _ = timed(lambda: write_batsim(kth, out, nb_res=100), args.repeat)
        rows.append(("write KTH as Batsim JSON", len(kth), best, med))
        best, med, back = timed(lambda: read_batsim_jobs(out), args.repeat)
        rows.append(("read it back", len(back), best, med))
        out_swf = Path(tmp) / "kth.swf"
        best, med, _ = timed(lambda: write_swf(kth, out_swf, bb_columns="cqsim"), args.repeat)
        rows.append(("write KTH as SWF with BB column", len(kth), best, med))
        best, med, back = timed(lambda: read_swf(out_swf), args.repeat)
        rows.append(("read SWF with BB column", len(back.jobs), best, med))
    best, med, wl = timed(lambda: jeannot.generate(1000, alpha=0.5, protocol="mira",
                                                   io_profile="normal", seed=0), args.repeat)
    rows.append((f"Jeannot M-No 1000 apps (alpha {wl.alpha:.3f})", len(wl.jobs), best, med))
    start = herbein.start_of_swf(trace.header)
    best, med, model = timed(lambda: herbein.HerbeinModel.fit(trace.jobs, start=start),
                             args.repeat)
    rows.append(("Herbein fit on KTH", len(trace.jobs), best, med))
    best, med, gen = timed(lambda: model.generate(n_jobs=28000, start=start, seed=0),
                           args.repeat)
    rows.append(("Herbein generate", len(gen), best, med))
    w = max(len(r[0]) for r in rows)
    print(f"{'task'.ljust(w)}  {'jobs':>7}  {'best [s]':>9}  {'median [s]':>10}")
    for name, n, b, m in rows:
        print(f"{name.ljust(w)}  {n:>7}  {b:>9.3f}  {m:>10.3f}")


if __name__ == "__main__":
    main()

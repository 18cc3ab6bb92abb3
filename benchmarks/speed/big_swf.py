"""Reading a big SWF trace: time and peak memory of :func:`bbopt.workloads.swf.read_swf`.

    python benchmarks/speed/big_swf.py [--copies 18] [--repeat 3]

Writes the KTH-SP2 trace ``--copies`` times one after the other into a temporary SWF (job
numbers renumbered, each copy's submit times shifted past the previous copy's: 18 copies make
about 512 k records, the size of the big archive logs), then reads it in a fresh process per
run and prints the wall and CPU seconds and the process's peak resident memory (interpreter and
numpy included, about 40 MB: the ``empty`` row is a process that imports the reader and reads
nothing). Goal: below 300 MB and 10 s for 500 k records.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks._data import data_path  # noqa: E402


def write_big(src: Path, dst: Path, copies: int) -> int:
    """``copies`` back-to-back copies of the SWF ``src`` in ``dst``; returns the record count."""
    header, records = [], []
    for line in src.read_text().splitlines():
        (header if line.startswith(";") or not line.strip() else records).append(line)
    rows = [line.split() for line in records]
    span = max(int(r[1]) for r in rows) + 1
    n = 0
    with dst.open("w") as out:
        out.write("\n".join(header) + "\n")
        for c in range(copies):
            for r in rows:
                n += 1
                out.write(" ".join([str(n), str(int(r[1]) + c * span), *r[2:]]) + "\n")
    return n


def child(path: str, read: bool) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bbopt.workloads.swf import read_swf

    c0, t0 = time.process_time(), time.perf_counter()
    jobs = len(read_swf(path).jobs) if read else 0
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
    print(json.dumps({"jobs": jobs, "wall": wall, "cpu": cpu, "peak_mb": peak}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--copies", type=int, default=18)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child[0], args.child[1] == "read")
        return
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "kth-big.swf"
        n = write_big(data_path("KTH-SP2-1996-2.1-cln.swf"), big, args.copies)
        size = big.stat().st_size / 1e6
        print(f"{n} records ({size:.0f} MB of SWF), fresh process per run, median of "
              f"{args.repeat}")
        print(f"{'run':8s} {'jobs':>8s} {'wall s':>7s} {'CPU s':>7s} {'peak MB':>8s} "
              f"{'B/job':>7s}")
        empty = None
        for what in ("empty", "read"):
            runs = []
            for _ in range(args.repeat if what == "read" else 1):
                out = subprocess.run([sys.executable, __file__, "--child", str(big), what],
                                     check=True, capture_output=True, text=True).stdout
                runs.append(json.loads(out.strip().splitlines()[-1]))
            m = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            empty = empty or m["peak_mb"]
            per_job = (m["peak_mb"] - empty) * 1e6 / m["jobs"] if m["jobs"] else 0.0
            print(f"{what:8s} {int(m['jobs']):8d} {m['wall']:7.2f} {m['cpu']:7.2f} "
                  f"{m['peak_mb']:8.1f} {per_job:7.0f}", flush=True)


if __name__ == "__main__":
    main()

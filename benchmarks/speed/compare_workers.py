"""``bbopt compare`` on one core against every core: wall time, CPU time and identical results.

    python benchmarks/speed/compare_workers.py [--workload KTH-SP2-1996-2.1-cln.swf | --embedded]
                                         [--policies fcfs,fcfs-easy,...] [--workers 2]
                                         [--split N] [--repeat 3]

Runs ``bbopt compare --workers 1`` (every policy in the calling process) and ``--workers N``
(policies, and ``--split`` parts, in N worker processes) as whole processes, alternating, and
prints the median wall and CPU seconds (user + system, the children's included) of each, with
the wall-time speed-up. Every run writes its per-job CSVs with ``--out``: the benchmark checks
that they are byte-identical between the serial and the parallel runs, and that the printed
comparisons are identical once the rows that measure time (decision times, simulation seconds)
are left out. A 2-core machine can at best halve the wall time; the slowest policy bounds it
(a policy runs in one process).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks._data import data_path  # noqa: E402

#: Rows of the printed table that measure the machine, not the schedule.
TIMING_ROWS = ("decision p50", "decision p95", "simulation [s]")


def run(args: list[str], out: Path) -> tuple[float, float, str]:
    """Run one ``bbopt compare`` process writing to ``out``; return (wall s, CPU s, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    cmd = [sys.executable, "-c", "from bbopt.cli import main; raise SystemExit(main())",
           "compare", *args, "--out", str(out), "--no-progress"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def schedule_lines(stdout: str) -> list[str]:
    """The printed comparison without the rows that measure time and the line naming --out."""
    return [line for line in stdout.splitlines()
            if not line.startswith(TIMING_ROWS) and not line.startswith("wrote ")]


def same_csvs(a: Path, b: Path) -> bool:
    """Whether the per-job CSVs of two --out directories are the same files, byte for byte."""
    names = sorted(p.name for p in a.glob("*.csv"))
    if names != sorted(p.name for p in b.glob("*.csv")) or not names:
        return False
    match, mismatch, errors = filecmp.cmpfiles(a, b, names, shallow=False)
    return not mismatch and not errors


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", default="KTH-SP2-1996-2.1-cln.swf")
    ap.add_argument("--embedded", action="store_true",
                    help="use compare's embedded default workload instead of --workload")
    ap.add_argument("--policies", default=None, help="default: compare's own default list")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--split", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    common: list[str] = []
    if not args.embedded:
        common += ["--workload", str(data_path(args.workload))]
    if args.policies:
        common += ["--policies", args.policies]
    if args.split:
        common += ["--split", str(args.split)]
    times: dict[int, list[tuple[float, float]]] = {1: [], args.workers: []}
    identical = True
    with tempfile.TemporaryDirectory() as tmp:
        for rep in range(args.repeat):
            outs = {}
            for w in (1, args.workers):
                out = Path(tmp) / f"w{w}-{rep}"
                wall, cpu, stdout = run([*common, "--workers", str(w)], out)
                times[w].append((wall, cpu))
                outs[w] = (out, schedule_lines(stdout))
            (a, lines_a), (b, lines_b) = outs[1], outs[args.workers]
            identical &= lines_a == lines_b and (args.split is not None or same_csvs(a, b))
    load = os.getloadavg()[0]
    print(f"bbopt compare on {'the embedded workload' if args.embedded else args.workload}, "
          f"median of {args.repeat} (load average {load:.1f})")
    print("| workers | wall s | CPU s | wall speed-up |")
    print("|---:|---:|---:|---:|")
    serial_wall = statistics.median(t[0] for t in times[1])
    for w in (1, args.workers):
        wall = statistics.median(t[0] for t in times[w])
        cpu = statistics.median(t[1] for t in times[w])
        print(f"| {w} | {wall:.2f} | {cpu:.2f} | {serial_wall / wall:.2f} |")
    print(f"same results (per-job CSVs and the printed comparison): {'yes' if identical else 'NO'}")
    if not identical:
        sys.exit(1)


if __name__ == "__main__":
    main()

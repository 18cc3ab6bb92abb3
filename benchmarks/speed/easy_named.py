"""EASY backfilling on the authors' named BB nodes beside the BB pool: fcfs-bb, sjf-bb and
fcfs-easy on the whole KTH-SP2 trace on ``kopanski`` (the 480 GB pool), ``kopanski:named``
(12 x 40 GB BB nodes, first fit) and ``kopanski:proximity`` (Kopanski & Rzadca, Euro-Par 2021,
Sections 3.2 and 4.1).

    python benchmarks/speed/easy_named.py [--jobs N] [--against DIR] [--policies P,...]
                                          [--platforms P,...]

Jobs per CPU second of the replay alone (a fresh process reads the trace, then times
``simulate``), as ``benchmarks/speed/named_plan.py`` measures conservative-bb.
``--against DIR`` times the ``bbopt`` package of another source tree too (e.g.
``git archive <commit> | tar -x -C DIR``), interleaved, and says whether every job starts at
the same time in both (a hash of the per-job starts is printed as well).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from named_plan import ROOT, in_child  # noqa: E402

POLICIES = ("fcfs-bb", "sjf-bb", "fcfs-easy")
PLATFORMS = ("kopanski", "kopanski:named", "kopanski:proximity")


def starts_hash(starts: list) -> str:
    """A short digest of every job's start time, in the trace's order."""
    return hashlib.sha256(json.dumps(starts).encode()).hexdigest()[:16]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=None, help="only the first N jobs")
    ap.add_argument("--against", type=Path, default=None, help="another source tree")
    ap.add_argument("--policies", default=",".join(POLICIES))
    ap.add_argument("--platforms", default=",".join(PLATFORMS))
    args = ap.parse_args()
    trees = {"this": ROOT}
    if args.against is not None:
        trees["before"] = args.against.resolve()
    head = f"{'policy':10s} {'platform':20s} {'CPU s':>7s} {'jobs/s':>8s} {'starts':>16s}"
    if "before" in trees:
        head += f" {'before CPU s':>12s} {'jobs/s':>8s} {'speed-up':>8s} {'same':>4s}"
    print(f"KTH-SP2{f' (first {args.jobs} jobs)' if args.jobs else ''}, replay CPU s")
    print(head, flush=True)
    for platform in args.platforms.split(","):
        for policy in args.policies.split(","):
            got = {name: in_child(tree, policy, platform, args.jobs)
                   for name, tree in trees.items()}
            g = got["this"]
            line = (f"{policy:10s} {platform:20s} {g['cpu']:7.2f} {g['jobs'] / g['cpu']:8.0f}"
                    f" {starts_hash(g['starts']):>16s}")
            if "before" in got:
                b = got["before"]
                line += (f" {b['cpu']:12.2f} {b['jobs'] / b['cpu']:8.0f}"
                         f" {b['cpu'] / g['cpu']:8.2f}"
                         f" {'yes' if b['starts'] == g['starts'] else 'NO':>4s}")
            print(line, flush=True)


if __name__ == "__main__":
    main()

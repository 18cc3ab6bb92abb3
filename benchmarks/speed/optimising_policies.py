"""Whole-process time of the optimising policies on the full KTH-SP2 trace: plan-2 (Kopanski &
Rzadca, Euro-Par 2021, Section 3.3: simulated annealing over plan orders) and bbsched (Fan et
al., HPDC 2019: the window's exact Pareto front), against the fcfs-bb replay measured in the same
run.

    python benchmarks/speed/optimising_policies.py [--policies fcfs-bb,bbsched,plan-2] [--repeat 1]
                                             [--against DIR] [--jobs N] [--named]

A policy may carry options after colons, passed as ``-o KEY=VALUE``: e.g.
``plan-2:warm_start=true:temperatures=15`` (``benchmarks/speed/plan_warm_start.py`` measures that
configuration's quality); ``--against`` runs the policy without its options in the other
tree. ``--named`` runs on the platform's 12 named BB nodes
(``--platform kopanski:named``).

Each run is ``bbopt simulate --workload KTH-SP2-1996-2.1-cln.swf --platform kopanski --bb auto
--policy P --out TMP`` as a child process (interpreter start, imports, reading the trace, the
replay and writing jobs.csv), in its default deterministic budget mode, so that the schedule
does not depend on the machine's load. The figure is the CPU time (user + system) of the
child, the least of ``--repeat`` runs: on a shared machine wall time mostly measures the other
processes. "x fcfs-bb" is a policy's CPU time over the fcfs-bb replay's in the same run.

``--against DIR`` also runs every command with the ``bbopt`` package of another source tree
(e.g. ``git worktree add /tmp/before <commit>``), interleaved with this tree's runs, and prints
the speed-up and whether the two jobs.csv files are byte-identical: a before/after comparison
measured side by side under the same load.

plan-2 with the paper's search (default options), against the tree before the annealing's walk
asked its early-rejection rule once per move and skipped placing the job swapped to the later
position when every job before it kept its start (``models.plan_walk``, BB pool), and before
the named-BB profile kept the BB nodes' free space as one tuple per segment
(``models.plan_named``), least of 2 runs each, load average 1-3:

| plan-2, whole process | CPU s | before s | speed-up | same jobs.csv |
|---|---:|---:|---:|---|
| BB pool, whole KTH trace | 72.5 | 77.5 | 1.07 | yes |
| 12 named BB nodes, first 2,500 jobs (``--named --jobs 2500``) | 29.8 | 31.4 | 1.05 | yes |

With the pool's placement loop compiled by numba (the extra ``fast``; ``bbopt/planner/jit/
pool.py``, the same schedules), against the tree before, one run, load average 2-4:

| whole process | CPU s | before s | speed-up | same jobs.csv |
|---|---:|---:|---:|---|
| plan-2, BB pool, whole KTH trace | 24.25 | 86.65 | 3.57 | yes |
| the same, later (``--repeat 2``, load 8-10) | 23.40 | 84.51 | 3.61 | yes |
| plan-1, first 3,000 jobs (``--jobs 3000``) | 3.46 | 6.78 | 1.96 | yes |
| plan-3, first 3,000 jobs | 3.09 | 7.15 | 2.32 | yes |

(A planning process pays about 0.7 s for numba's import and its cached kernels;
``BBOPT_NO_JIT=1`` runs the Python loops.)

``benchmarks/speed/plan_decisions.py`` times the search alone on recorded decisions.
"""

from __future__ import annotations

import argparse
import filecmp
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks._data import data_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TRACE = "KTH-SP2-1996-2.1-cln.swf"
POLICIES = "fcfs-bb,bbsched,plan-2"
#: Runs the CLI with the bbopt package of the tree given as the first argument.
RUNNER = ("import sys; sys.path.insert(0, sys.argv[1]); import bbopt.cli as c; "
          "sys.exit(c.main(sys.argv[2:]))")


def run(tree: Path, policy: str, out: Path, jobs: int | None, platform: str = "kopanski"
        ) -> float:
    """CPU seconds (user + system) of one ``bbopt simulate`` process on the KTH trace."""
    name, *options = policy.split(":")
    cmd = [sys.executable, "-c", RUNNER, str(tree), "simulate", "--workload",
           str(data_path(TRACE)), "--platform", platform, "--bb", "auto", "--policy", name,
           "--no-progress", "--out", str(out), "--force"]
    for option in options:
        cmd += ["-o", option]
    if jobs:
        cmd += ["--jobs", str(jobs)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**os.environ, "PYTHONHASHSEED": "0"})
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default=POLICIES,
                    help="comma-separated; the first is the reference of the ratios")
    ap.add_argument("--repeat", type=int, default=1, help="least CPU time of N runs")
    ap.add_argument("--against", type=Path, default=None,
                    help="another source tree to time side by side (before/after)")
    ap.add_argument("--jobs", type=int, default=None, help="only the first N jobs")
    ap.add_argument("--named", action="store_true", help="the 12 named BB nodes")
    args = ap.parse_args()
    platform = "kopanski:named" if args.named else "kopanski"
    policies = [p for p in args.policies.split(",") if p]
    trees = {"this": ROOT}
    if args.against is not None:
        trees["against"] = args.against.resolve()
    best: dict[tuple[str, str], float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.repeat):
            for policy in policies:
                for name, tree in trees.items():
                    out = Path(tmp) / name / policy
                    # The other tree runs the policy without its options (the code before
                    # them knows none): the speed-up is then against the default search.
                    cpu = run(tree, policy if name == "this" else policy.split(":")[0], out,
                              args.jobs, platform)
                    key = (name, policy)
                    best[key] = min(best.get(key, cpu), cpu)
                    print(f"  {name:8s} {policy:10s} {cpu:8.2f} s CPU", file=sys.stderr,
                          flush=True)
        same = {}
        if "against" in trees:
            for policy in policies:
                a, b = (Path(tmp) / n / policy / f"{policy.split(':')[0]}_jobs.csv"
                        for n in trees)
                same[policy] = filecmp.cmp(a, b, shallow=False)
    ref = policies[0]
    print(f"KTH-SP2{f' (first {args.jobs} jobs)' if args.jobs else ''}, whole `bbopt simulate` "
          f"processes, CPU s (least of {args.repeat})")
    wide = max(10, *map(len, policies))
    head = f"{'policy':{wide}s} {'CPU s':>8s} {'x ' + ref:>11s}"
    if "against" in trees:
        head += f" {'before s':>9s} {'x ' + ref:>11s} {'speed-up':>9s} {'same jobs.csv':>14s}"
    print(head)
    for policy in policies:
        now = best[("this", policy)]
        line = f"{policy:{wide}s} {now:8.2f} {now / best[('this', ref)]:11.1f}"
        if "against" in trees:
            then = best[("against", policy)]
            line += (f" {then:9.2f} {then / best[('against', ref)]:11.1f} {then / now:9.2f}"
                     f" {'yes' if same[policy] else 'NO':>14s}")
        print(line)


if __name__ == "__main__":
    main()

"""Whole-process replay time of ``bbopt simulate`` against a bare Python EASY loop.

    python benchmarks/speed/whole_process.py [--policies sjf-bb,fcfs-bb] [--repeat 5]
                                       [--workload KTH-SP2-1996-2.1-cln.swf]

Both sides are timed as whole processes (interpreter start, imports, reading the SWF, the
replay, the printed summary), interleaved, median of ``--repeat`` runs. The reference is the
small CPU-only EASY backfilling loop below (:func:`bare_easy`): it parses the same SWF with
plain string splitting, keeps the running jobs in a heap and backfills against the head job's
shadow time with processors only -- the floor for a Python event loop. ``bbopt simulate`` runs
with its default log-normal burst-buffer draw (Kopanski & Rzadca, Section 4.1), which the bare
loop does not model. The ratio column is bbopt's median over the bare loop's median of the
same run, for the
wall time and for the CPU time (user + system) of the processes.

``python benchmarks/speed/whole_process.py --bare FILE`` runs the bare loop alone;
``--breakdown`` also prints where a ``bbopt simulate`` process spends its CPU time (interpreter
start, imports, loading the workload with its BB draw, the replay, the metrics; one fresh
process per policy, median of ``--repeat``). ``--against DIR`` adds the same runs with the
package of another source tree (e.g. an export of the code before a change), interleaved in the
same run.
Each tree's package is byte-compiled first, as an installed package is (with
``PYTHONDONTWRITEBYTECODE`` set, every run would otherwise compile the modules changed since
their last compilation, and the two trees would not pay alike).

Measured on KTH (the shared 2-core machine, load average about 2; ``--breakdown --repeat 9
--against`` the code before the reader, set-up, engine, import and metrics changes of issue 14's
first goal, third round; CPU seconds, medians):

=====================  =====  =======  =====  =======  ==========  ======  =======
run                    CPU s  x bare   start  imports  read + BB   replay  metrics
=====================  =====  =======  =====  =======  ==========  ======  =======
bare EASY loop         0.21   1.00
sjf-bb, before         0.65   3.18     0.043  0.062    0.102       0.397   0.024
sjf-bb, now            0.62   3.00     0.042  0.061    0.074       0.385   0.020
fcfs-bb, before        0.64   3.14     0.044  0.065    0.107       0.370   0.025
fcfs-bb, now           0.59   2.90     0.046  0.064    0.077       0.356   0.022
=====================  =====  =======  =====  =======  ==========  ======  =======

Two runs under heavier load (7-10) gave sjf-bb 2.91x and 3.13x against 3.05x and 3.55x before,
fcfs-bb 2.79x and 3.11x against 3.10x and 3.46x; the code before measured 3.05x and 2.97x on
the quieter machine of the round before (load about 1). Counted in executed instructions
(``valgrind --tool=callgrind``, whole processes, independent of load): bare loop 1.83e9; sjf-bb
5.17e9 before, 4.82e9 now (2.64x the bare loop); fcfs-bb 5.01e9 before, 4.66e9 now (2.55x).
benchmarks/speed/SPEED.md keeps each change with its share.
"""

from __future__ import annotations

import argparse
import compileall
import heapq
import inspect
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

MAX_NODES = 96
ROOT = Path(__file__).resolve().parents[2]


def bare_easy(path: str, max_nodes: int = MAX_NODES) -> tuple[int, float]:
    """Replay the SWF at ``path`` under EASY backfilling (processors only); return the number
    of jobs and their mean wait."""
    jobs = []  # (submit, runtime, walltime, nodes), in file order
    with open(path) as fh:
        for line in fh:
            f = line.split()
            if not f or f[0][0] == ";":
                continue
            run, procs = float(f[3]), int(f[7]) if int(f[7]) > 0 else int(f[4])
            wall = float(f[8]) if float(f[8]) > 0 else run
            if run > 0 and 0 < procs <= max_nodes:
                jobs.append((float(f[1]), min(run, wall), wall, procs))
    jobs.sort(key=lambda j: j[0])
    free, running, queue, waits = max_nodes, [], [], 0.0  # running: (end, expected end, nodes)
    k, n, t = 0, len(jobs), 0.0
    while k < n or running:
        t = min(running[0][0] if running else float("inf"), jobs[k][0] if k < n else float("inf"))
        while running and running[0][0] == t:
            free += heapq.heappop(running)[2]
        while k < n and jobs[k][0] == t:
            queue.append(jobs[k])
            k += 1
        while queue and queue[0][3] <= free:  # FCFS
            job = queue.pop(0)
            free -= job[3]
            waits += t - job[0]
            heapq.heappush(running, (t + job[1], t + job[2], job[3]))
        if not queue:
            continue
        head, avail, shadow = queue[0], free, t  # the head's reservation
        for _, end, nodes in sorted(running, key=lambda r: r[1]):
            if avail >= head[3]:
                break
            avail, shadow = avail + nodes, end
        extra = avail - head[3]
        for job in list(queue[1:]):  # backfill
            if free <= 0:
                break
            late = t + job[2] > shadow
            if job[3] <= free and (not late or job[3] <= extra):
                queue.remove(job)
                free -= job[3]
                extra -= job[3] if late else 0
                waits += t - job[0]
                heapq.heappush(running, (t + job[1], t + job[2], job[3]))
    return n, waits / max(n, 1)


def _env(tree: str | None) -> dict[str, str] | None:
    """The environment of a run with the package of source tree ``tree`` first on the path."""
    if tree is None:
        return None
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [tree, *filter(None, [os.environ.get("PYTHONPATH")])])}


def _time(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, float]:
    """Wall and CPU (user + system) seconds of one run of ``cmd``."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env=env)
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


PHASES = ("start", "imports", "read + BB", "replay", "metrics")


def breakdown(path: str, policy: str, tree: str) -> dict[str, float]:
    """CPU seconds of each phase of ``bbopt simulate`` on ``path``, in this (fresh) process,
    along the command's own path in source tree ``tree``: its BLAS setting, parser and modules,
    the workload as the command loads it (the SWF reader and the log-normal BB draw with the
    rules of Kopanski's generator, what ``--bb auto`` applies on that platform), the replay and
    the metrics of the printed table."""
    clock = time.process_time
    t = [clock()]
    if "OPENBLAS_NUM_THREADS" in (Path(tree) / "bbopt" / "cli.py").read_text():
        os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # (as that tree's main() does)
    import bbopt.cli
    from bbopt.analysis.metrics import summarize
    from bbopt.core import Platform
    from bbopt.loading import read_workload
    from bbopt.policies import make_policy
    from bbopt.simulation import simulate

    parser = bbopt.cli._parser  # (the parser a core command builds; all of it in older trees)
    parser(full=False) if "full" in inspect.signature(parser).parameters else parser()
    make_policy(policy)
    platform = Platform.kopanski()
    t.append(clock())
    jobs = read_workload(path, seed=0, platform=platform).jobs
    t.append(clock())
    result = simulate(jobs, platform, policy)
    t.append(clock())
    summarize(result)
    t.append(clock())
    return dict(zip(PHASES, [t[0], *(b - a for a, b in zip(t, t[1:], strict=False))],
                    strict=True))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bare", metavar="FILE", help="run the bare loop on FILE and exit")
    ap.add_argument("--policies", default="sjf-bb,fcfs-bb")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--workload", default="KTH-SP2-1996-2.1-cln.swf")
    ap.add_argument("--breakdown", action="store_true",
                    help="also print the CPU time of each phase of bbopt simulate")
    ap.add_argument("--against", metavar="DIR", default=None,
                    help="also run bbopt simulate with the package of the source tree DIR (e.g. "
                         "the code before a change): its rows say 'before'")
    ap.add_argument("--phases", nargs=3, metavar=("FILE", "POLICY", "TREE"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.phases:
        import json

        print(json.dumps(breakdown(*args.phases)))
        return
    if args.bare:
        n, wait = bare_easy(args.bare)
        print(f"{n} jobs, mean wait {wait:.1f} s")
        return
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks._data import data_path

    swf = str(data_path(args.workload))
    bare = [sys.executable, __file__, "--bare", swf]
    cmds = {"bare EASY loop": bare}
    trees = {"": str(ROOT)}  # (this tree's package, whatever the working directory holds)
    if args.against:
        trees[", before"] = str(Path(args.against).resolve())
    for tree in trees.values():  # (as installed: bytecode written once, read by every run)
        compileall.compile_dir(str(Path(tree) / "bbopt"), quiet=1)
    envs: dict[str, dict[str, str] | None] = {}
    for pol in args.policies.split(","):
        for tag, tree in trees.items():
            cmds[f"bbopt simulate {pol}{tag}"] = [
                sys.executable, "-c", f"import sys; sys.path.insert(0, {tree!r}); "
                "import importlib.util as u\n"  # (what the `bbopt` command runs; main in
                "if u.find_spec('bbopt.__main__'):\n"  # trees older than bbopt/__main__.py)
                "    import bbopt.__main__ as m; m.run()\n"
                "from bbopt.cli import main; raise SystemExit(main())",
                "simulate", "-w", swf, "--policy", pol, "--no-progress"]
            envs[f"bbopt simulate {pol}{tag}"] = _env(tree)
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cmds}
    for _ in range(args.repeat):
        for name, cmd in cmds.items():
            times[name].append(_time(cmd, envs.get(name)))
    wall = {name: statistics.median(w for w, _ in ts) for name, ts in times.items()}
    cpu = {name: statistics.median(c for _, c in ts) for name, ts in times.items()}
    ref = "bare EASY loop"
    print(f"{args.workload}: whole processes, median of {args.repeat} (CPU = user + system, "
          "the steadier figure on a shared machine)")
    print(f"{'run':32s} {'wall s':>7s} {'vs bare':>8s} {'CPU s':>7s} {'vs bare':>8s}")
    for name in times:
        print(f"{name:32s} {wall[name]:7.2f} {wall[name] / wall[ref]:8.2f} {cpu[name]:7.2f} "
              f"{cpu[name] / cpu[ref]:8.2f}")
    if args.breakdown:
        import json

        print("\nCPU seconds by phase (in-process; 'start' is the interpreter's start-up)")
        print(f"{'policy':20s} " + " ".join(f"{p:>8s}" for p in PHASES))
        for pol in args.policies.split(","):
            runs: dict[str, list[dict[str, float]]] = {tag: [] for tag in trees}
            for _ in range(args.repeat):  # interleaved, as the whole processes
                for tag, tree in trees.items():
                    runs[tag].append(json.loads(subprocess.run(
                        [sys.executable, __file__, "--phases", swf, pol, tree], check=True,
                        capture_output=True, text=True, env=_env(tree)).stdout))
            for tag in trees:
                med = {p: statistics.median(r[p] for r in runs[tag]) for p in PHASES}
                print(f"{pol + tag:20s} " + " ".join(f"{med[p]:8.3f}" for p in PHASES))


if __name__ == "__main__":
    main()

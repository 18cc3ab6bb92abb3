"""The authors' platform against the BB pool: plan-2 and conservative-bb on Kopanski's 12 named
40 GB BB nodes (``kopanski:named``, and ``kopanski:proximity`` with ``--proximity``) beside
the 480 GB pool, on the whole KTH-SP2 trace, measured in one invocation (Kopanski & Rzadca,
Euro-Par 2021, Sections 3.2, 3.3 and 4.1).

    python benchmarks/speed/named_plan.py [--jobs N] [--proximity] [--against DIR]
                                    [--only plan|conservative]

- plan-2 (the paper's search, seed 0): CPU seconds (user + system) of a whole ``bbopt
  simulate`` process, as ``benchmarks/speed/optimising_policies.py`` measures it (its ``run``);
- conservative-bb: jobs per CPU second of the replay alone (a fresh process reads the trace,
  then times ``simulate``; loading the compiled kernels counts), as ``benchmarks/speed/scaling.py``;
  then "warm": the same in a fresh process that first replays the first 300 jobs (numba imported
  and the kernels loaded before the clock), which tells the kernels' load from the replay.

``--against DIR`` runs every measurement with the ``bbopt`` package of another source tree too
(e.g. ``git archive <commit> | tar -x -C DIR``), interleaved, and says whether the two
schedules (jobs.csv, or the replay's starts) are identical.

Whole trace, one invocation (``python benchmarks/speed/named_plan.py``, load average 6-9 on 2
shared cores); "before" is the code before the compiled named-BB kernels
(``bbopt/planner/jit/named.py``), measured in the same hour with the same commands (plan-2's
pool run side by side by ``optimising_policies.py --policies plan-2 --against``):

| whole KTH trace | before | now | speed-up | same schedule |
|---|---:|---:|---:|---|
| plan-2, BB pool, process CPU s | 26.58 | 25.87 | 1.03 | yes |
| plan-2, 12 named BB nodes, process CPU s | 706.6 | 63.6 | 11.1 | yes |
| conservative-bb, named BB nodes, process CPU s | 110.4 | 10.0 | 11.0 | yes |
| conservative-bb, named BB nodes, replay jobs/s | about 260 | 2,855 | 11 | yes |
| conservative-bb, BB pool, replay jobs/s (reference) | | 2,215 | | |

Then the plan models on the planner (compiled exhaustive search of queues of up to 5 jobs on
named BB nodes, the model built once per decision, the BB placement asked once per request):
``python benchmarks/speed/named_plan.py --only plan --proximity --against DIR`` with DIR the
code before them, load average 5-19 on 2 shared cores, whole trace, identical jobs.csv:

| whole KTH trace, plan-2, process CPU s | before | now | speed-up | same schedule |
|---|---:|---:|---:|---|
| BB pool | 27.65 | 25.81 | 1.07 | yes |
| 12 named BB nodes | 64.09 | 60.58 | 1.06 | yes |
| named, proximity placement | 87.23 | 76.07 | 1.15 | yes |

(named alone again after the last change, same hour: 60.4 now against 71.9 before.)

The named replay now runs faster than the pool's in the same invocation (1.29x); the pool's
figure is 10-16 k jobs/s on a quiet machine (``benchmarks/speed/SPEED.md``), so the named one's
would be above 10 k there. plan-2 on the named nodes was 66.4 s in that invocation; 63.6 s is
the same ``bbopt simulate`` process after the walk stopped copying its buffers whole (measured
alone, same load). The first 4,000 jobs: plan-2 named 57.5 -> 7.8 CPU s, proximity 65.1 -> 8.2
CPU s, identical jobs.csv.

conservative-bb on the named nodes, after its compression tests a candidate start's pool
segment by segment before the BB nodes' least free space over the window
(``bbopt/planner/jit/named.py``, ``_pieces_at``): ``python benchmarks/speed/named_plan.py --only
conservative --against DIR`` with DIR the code before, two invocations, load average 10 on 2
shared cores, identical starts (and the whole-trace jobs.csv, sha256 ad6cd3e1...):

| whole KTH trace, replay jobs/s | before | now | speed-up | same schedule |
|---|---:|---:|---:|---|
| conservative-bb, 12 named BB nodes | 5,456 / 5,290 | 5,903 / 5,831 | 1.08 / 1.10 | yes |
| conservative-bb, BB pool (same code) | 9,764 / 10,119 | 9,797 / 9,987 | 1.00 / 0.99 | yes |

Where a named replay's time goes (CPU seconds of the whole trace at that load, the policy's
``decide`` and the compiled call timed from inside the process): about 4.7 s in all, 0.9 s in the
engine (the pool's engine: 0.5 s), 2.0 s in Python around the kernel (the queue's table,
the starts, the reservations: about 40 us per decision over 55,163 decisions, queues of 27
jobs on average) and 1.8 s in the kernel. Replaying the kernel alone on the recorded inputs
of every decision: building the profile from the running jobs and the call itself (about 6 us
for a one-job queue) a fifth, holding the kept reservations again a tenth, planning the new
jobs a tenth, the compression's release and hold again of each kept reservation a fifth, and
its earliest-start searches (1.45 million, 98,000 of which move a job; a start now, the pool's
earliest fit, then 2.7 million candidate starts scanned by 312,000 of them) over a third. A
replay at 10,000 jobs/s (2.85 s) leaves the policy about as much as the pool's whole
``decide`` (2.4 s): that needs the reservations and their pieces kept between decisions, not
planned again, which changes some pieces and so possibly some starts.

Then the named decisions compressed only when a job had ended early (the schedules change:
docs/named-bb-speed.md): ``--only conservative --against DIR``, three invocations, load below
1: named 8,217-8,507 jobs/s against 7,415-7,505 (1.11-1.14), the pool 10,128-10,456 against
10,309-10,407 with the same starts.

Cold and warm, ``--only conservative``, three invocations, load below 1: named 8,056-8,282
jobs/s cold and 10,069-10,238 warm (the kernels' load, about 0.66 CPU s, is what separates
them); the pool, which loads no kernel on KTH, 10,369-10,450 cold and 10,071-10,628 warm.

Then the named reservations keeping their pieces, a start naming its pieces placed over its
window (the schedules change: no reservation moved later, docs/named-bb-speed.md):
``--only conservative --against DIR``, load about 1: named 8,335 jobs/s cold and 10,057 warm
against 8,425 and 10,263 (0.99, 0.98); the pool 10,621 and 10,648 against 10,199 and 10,531
with the same starts.

Then the named profile kept between decisions while every amount is whole, and the compression
leaving untouched a reservation that cannot move (the same schedules: docs/named-bb-speed.md):
``--only conservative --proximity --against DIR``, two invocations, load 1.4-1.6: named
10,569-10,752 jobs/s cold and 13,478-13,659 warm against 8,323-8,447 and 9,918-10,203 (1.27);
proximity 9,844-10,030 cold against 7,835-7,884; the pool 10,223-10,811 against 10,579-10,596.
With the guards against writes past the profile's arrays, two more (``--only conservative``,
load 1.1): named 10,400 and 10,519 cold against 8,311 and 8,056; ``--only plan``: plan-2 52.35
CPU s on the named nodes, 22.84 on the pool.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from optimising_policies import ROOT, run  # noqa: E402

from benchmarks._data import data_path  # noqa: E402

TRACE = "KTH-SP2-1996-2.1-cln.swf"
#: Jobs replayed before the clock starts in a warm replay (numba imported, the kernels loaded).
WARM_JOBS = 300


def replay(tree: str, policy: str, platform: str, jobs: int | None, warm: bool = False) -> dict:
    """One replay in this process with the ``bbopt`` of ``tree``: CPU seconds of ``simulate``
    and each job's start (to compare schedules); ``warm``: the first :data:`WARM_JOBS` jobs
    replayed before the clock starts, so that loading the compiled kernels is not counted."""
    sys.path.insert(0, tree)
    from bbopt import simulate
    from bbopt.loading import load_platform, load_workload

    plat = load_platform(platform)
    work, _ = load_workload(str(data_path(TRACE)), n_jobs=jobs, seed=0, platform=plat)
    if warm:
        simulate(work[:WARM_JOBS], plat, policy)
    c0 = time.process_time()
    res = simulate(work, plat, policy)
    cpu = time.process_time() - c0
    return {"cpu": cpu, "jobs": len(work), "starts": list(res.start)}


def in_child(tree: Path, policy: str, platform: str, jobs: int | None,
             warm: bool = False) -> dict:
    cmd = [sys.executable, __file__, "--replay", str(tree), policy, platform,
           str(jobs or 0), "warm" if warm else "cold"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONHASHSEED": "0"}).stdout
    return json.loads(out.strip().splitlines()[-1])


def _replay_rows(trees: dict[str, Path], platform: str, jobs: int | None) -> list[tuple]:
    """conservative-bb's replay jobs/s on ``platform`` with each tree, cold (the kernels
    loaded inside the timed ``simulate``) then warm, and whether the starts are the same."""
    rows = []
    for figure, warm in (("replay jobs/s", False), ("warm jobs/s", True)):
        got = {name: in_child(tree, "conservative-bb", platform, jobs, warm)
               for name, tree in trees.items()}
        rate = {name: g["jobs"] / g["cpu"] for name, g in got.items()}
        same = got["this"]["starts"] == got["before"]["starts"] if "before" in got else None
        rows.append(("conservative-bb", platform, figure, rate, same))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=None, help="only the first N jobs")
    ap.add_argument("--proximity", action="store_true", help="kopanski:proximity too")
    ap.add_argument("--against", type=Path, default=None, help="another source tree")
    ap.add_argument("--only", choices=("plan", "conservative"), default=None)
    ap.add_argument("--replay", nargs=5, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.replay:
        tree, policy, platform, jobs, warm = args.replay
        print(json.dumps(replay(tree, policy, platform, int(jobs) or None, warm == "warm")))
        return
    platforms = ["kopanski", "kopanski:named"] + (["kopanski:proximity"] * args.proximity)
    trees = {"this": ROOT}
    if args.against is not None:
        trees["before"] = args.against.resolve()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for platform in platforms:
            if args.only != "conservative":
                cpu, outs = {}, {}
                for name, tree in trees.items():
                    outs[name] = Path(tmp) / name / platform.replace(":", "-")
                    cpu[name] = run(tree, "plan-2", outs[name], args.jobs, platform)
                    print(f"  {name:6s} plan-2 {platform:20s} {cpu[name]:8.2f} CPU s",
                          file=sys.stderr, flush=True)
                same = None
                if "before" in trees:
                    a, b = (outs[n] / "plan-2_jobs.csv" for n in trees)
                    same = a.read_bytes() == b.read_bytes()
                rows.append(("plan-2", platform, "process CPU s", cpu, same))
            if args.only != "plan" and platform != "kopanski":
                rows.extend(_replay_rows(trees, platform, args.jobs))
        if args.only != "plan":  # the pool's replay, for reference
            rows.extend(_replay_rows(trees, "kopanski", args.jobs))
    print(f"KTH-SP2{f' (first {args.jobs} jobs)' if args.jobs else ''}")
    head = f"{'policy':16s} {'platform':20s} {'figure':14s} {'now':>10s}"
    if "before" in trees:
        head += f" {'before':>10s} {'speed-up':>9s} {'same':>5s}"
    print(head)
    for policy, platform, figure, value, same in rows:
        line = f"{policy:16s} {platform:20s} {figure:14s} {value['this']:10.2f}"
        if "before" in trees:
            ratio = (value["before"] / value["this"] if figure.endswith("CPU s")
                     else value["this"] / value["before"])
            line += f" {value['before']:10.2f} {ratio:9.2f} {'yes' if same else 'NO':>5s}"
        print(line)


if __name__ == "__main__":
    main()

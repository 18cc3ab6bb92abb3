"""plan-2's searches replayed on recorded decisions, this tree against another one: the CPU time
of the annealing backend alone (Kopanski & Rzadca, Euro-Par 2021, Section 3.3, Algorithm 2)
and whether every decision's answer is the same.

    python benchmarks/speed/plan_decisions.py --against DIR [--jobs 3000] [--named] [--repeat 3]

First ``bbopt simulate --workload KTH-SP2-1996-2.1-cln.swf --platform kopanski --bb auto
--policy plan-2 --jobs N`` runs with this tree and records every model its annealing backend
solves (the plan model's constructor arguments, the BB nodes' free space now, the seed and the
options). Then each tree solves all of them again in a child process (``--repeat`` times,
alternating the trees), timed with ``time.process_time`` around the solver calls only, and the
answers (best order and score of every decision) are compared. The ratio is the search's
speed-up without the engine, the model building and the interpreter's start; "same answers" is
the criterion of an exact speed-up (the same best order at every decision).
``benchmarks/speed/optimising_policies.py`` times the whole process.

Against the tree before the changes measured there (the walk's single early-rejection test and
the kept start of the job swapped later, on the BB pool; the BB nodes' free space as one tuple
per segment, on named BB nodes), load average 3:

| plan-2 decisions replayed | calls | CPU s | before s | speed-up | same answers |
|---|---:|---:|---:|---:|---|
| BB pool, first 3,000 jobs | 3,638 | 4.69 | 5.12 | 1.09 | all |
| 12 named BB nodes, first 1,000 jobs (``--named``) | 1,211 | 6.67 | 7.06 | 1.06 | all |

On the whole trace (BB pool), the 34,817 calls recorded with the tree before, solved again by
this one, gave the same best order and score in every one.

With the pool's placement loop compiled by numba (``bbopt/planner/jit/pool.py``; the first call
of each replay pays numba's import and loading the cached kernels, about 0.7 s), against the
tree before it, load average 5-7:

| plan-2 decisions replayed (BB pool) | calls | CPU s | before s | speed-up | same answers |
|---|---:|---:|---:|---:|---|
| first 3,000 jobs (median of 3) | 3,638 | 2.01 | 4.91 | 2.44 | all |
| whole trace (``--jobs 30000 --repeat 1``) | 34,817 | 18.61 | 78.59 | 4.22 | all |
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from benchmarks._data import data_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TRACE = "KTH-SP2-1996-2.1-cln.swf"


def record(out: str, jobs: int, platform: str) -> None:
    """Run plan-2 on the first ``jobs`` KTH jobs with this tree and pickle to ``out`` what
    every call of the annealing backend was given."""
    import bbopt.solvers.plan.annealing as annealing
    from bbopt.cli import main as cli
    from bbopt.models.plan import PlanModel

    calls = []
    init = PlanModel.__init__

    def keep_arguments(self, now, capacity, running, jobs, *args, **kwargs) -> None:
        running, jobs = list(running), tuple(jobs)  # the engine's views, as plain values
        init(self, now, capacity, running, jobs, *args, **kwargs)
        self._recorded = ((now, capacity, running, jobs, *args), kwargs)

    solve = annealing.solve_annealing

    def spy(model, budget, seed=0, **options):
        named = model.named is not None
        calls.append((model._recorded, list(model._SN) if named else None, seed, options))
        return solve(model, budget, seed, **options)

    PlanModel.__init__ = keep_arguments
    annealing.solve_annealing = spy
    with tempfile.TemporaryDirectory() as tmp:
        cli(["simulate", "--workload", str(data_path(TRACE)), "--platform", platform, "--bb",
             "auto", "--policy", "plan-2", "--jobs", str(jobs), "--no-progress", "--out", tmp,
             "--force"])
    with open(out, "wb") as f:
        pickle.dump(calls, f)


def replay(tree: str, calls_file: str) -> None:
    """Solve the recorded models with the annealing backend of ``tree``; print the CPU
    seconds of the solver calls and every answer (best order, score) as JSON."""
    sys.path.insert(0, tree)
    from bbopt.models.plan import PlanModel
    from bbopt.solvers.base import Budget
    from bbopt.solvers.plan.annealing import solve_annealing

    with open(calls_file, "rb") as f:
        calls = pickle.load(f)
    budget = Budget(3600.0)  # the deterministic mode: the fixed number of moves decides
    cpu, answers = 0.0, []
    for (args, kwargs), space, seed, options in calls:
        model = PlanModel(*args, **kwargs)
        if space is not None:
            model._SN = space
        t = time.process_time()
        result = solve_annealing(model, budget, seed, **options)
        cpu += time.process_time() - t
        answers.append([list(result.solution.order), result.objective])
    print(json.dumps({"cpu": cpu, "answers": answers}))


def run(tree: Path, calls_file: str) -> dict:
    """One replay in a child process with the package of ``tree``."""
    out = subprocess.run([sys.executable, __file__, "--replay", str(tree), calls_file],
                         check=True, capture_output=True, text=True,
                         env={**os.environ, "PYTHONHASHSEED": "0"})
    return json.loads(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", type=Path, required=False,
                    help="another source tree to time side by side")
    ap.add_argument("--jobs", type=int, default=3000, help="the first N KTH jobs")
    ap.add_argument("--named", action="store_true", help="the 12 named BB nodes")
    ap.add_argument("--repeat", type=int, default=3, help="median of N replays per tree")
    ap.add_argument("--replay", nargs=2, metavar=("TREE", "FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.replay:
        replay(*args.replay)
        return
    trees = {"this": ROOT}
    if args.against is not None:
        trees["against"] = args.against.resolve()
    platform = "kopanski:named" if args.named else "kopanski"
    with tempfile.TemporaryDirectory() as tmp:
        calls_file = str(Path(tmp) / "calls.pkl")
        subprocess.run([sys.executable, "-c",
                        "import sys; sys.path.insert(0, sys.argv[1]); sys.path.insert(0, "
                        "sys.argv[2]); import plan_decisions as p; "
                        "p.record(sys.argv[3], int(sys.argv[4]), sys.argv[5])",
                        str(ROOT), str(Path(__file__).parent), calls_file, str(args.jobs),
                        platform], check=True, stdout=subprocess.DEVNULL,
                       env={**os.environ, "PYTHONHASHSEED": "0"})
        with open(calls_file, "rb") as f:
            count = len(pickle.load(f))
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        answers: dict[str, list] = {}
        for _ in range(args.repeat):
            for name, tree in trees.items():
                got = run(tree, calls_file)
                cpu[name].append(got["cpu"])
                answers[name] = got["answers"]
                print(f"  {name:8s} {got['cpu']:8.2f} s CPU", file=sys.stderr, flush=True)
    print(f"plan-2, KTH-SP2 first {args.jobs} jobs{' on named BB nodes' if args.named else ''}:"
          f" {count} annealing-backend calls replayed, CPU s of the solver (median of "
          f"{args.repeat})")
    now = statistics.median(cpu["this"])
    line = f"this {now:.2f}"
    if "against" in trees:
        then = statistics.median(cpu["against"])
        same = sum(a == b for a, b in zip(answers["this"], answers["against"], strict=True))
        line += (f"  against {then:.2f}  speed-up {then / now:.3f}  same answers {same} of "
                 f"{count}")
    print(line)


if __name__ == "__main__":
    main()

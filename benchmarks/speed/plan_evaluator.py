"""The inner loop of every plan search: one permutation's plan and score with the plan model's
list-based evaluator against the general numpy availability profile of :mod:`bbopt.planner`
(Kopanski & Rzadca, Euro-Par 2021, Section 3.3: each job placed at the earliest time its nodes
and BB are free for its whole walltime), measured in the same run.

    python benchmarks/speed/plan_evaluator.py [--queues 1,5,10,20,50,100,200] [--reps 2000]

The scheduling points are the committed plan instances of the solver benchmark
(``bbopt/bench/instances/small/plan-kth-*``, real KTH-SP2 states under plan-2 on 96 nodes /
480 GB): the state with the most running jobs is the base profile, and queues of each length
are drawn from the waiting jobs of all of them, in a random order (seed 0). Times are CPU
seconds (``time.process_time``) per evaluation, the first (which loads the compiled kernels
when numba is installed) untimed; the ratio is the profile's over the model's.
The quality of the plan backends on the same states is ``bbopt bench run`` / ``report``
(model ``plan-min-score``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt.bench.instances import LIBRARY, iter_instances  # noqa: E402
from bbopt.models.plan import PlanModel  # noqa: E402
from bbopt.planner import Profile  # noqa: E402


def models() -> list[PlanModel]:
    """The pooled-BB plan models of the committed small tier."""
    return [i.model for i in iter_instances(LIBRARY / "small")
            if i.problem == "plan" and i.model.named is None]


def measure(queues: list[int], reps: int) -> list[tuple[int, int, float, float]]:
    """Per queue length: (jobs, running jobs, model seconds, profile seconds) per evaluation."""
    found = models()
    base = max(found, key=lambda m: len(m.running))
    pool = [j for m in found for j in m.jobs]
    rng = np.random.default_rng(0)
    rows = []
    for q in queues:
        queue = tuple(pool[i % len(pool)] for i in range(q))
        m = PlanModel(base.now, base.capacity, base.running, queue, alpha=base.alpha)
        order = rng.permutation(m.n).tolist()
        m.score(order)  # untimed: the first score loads the compiled kernels (numba)
        n_fast = max(1, reps // q)
        t0 = time.process_time()
        for _ in range(n_fast):
            m.score(order)
        fast = (time.process_time() - t0) / n_fast
        n_slow = max(1, n_fast // 10)
        t0 = time.process_time()
        for _ in range(n_slow):
            prof = Profile(m.now, m.capacity, [(e, (n, b)) for e, n, b in m.running])
            for p in order:
                job = m.jobs[p]
                t = prof.earliest_fit(m.now, job.walltime, job.demand)
                prof.reserve(t, t + job.walltime, job.demand)
        slow = (time.process_time() - t0) / n_slow
        rows.append((m.n, len(m.running), fast, slow))
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queues", default="1,5,10,20,50,100,200",
                    help="queue lengths, comma-separated")
    ap.add_argument("--reps", type=int, default=2000,
                    help="evaluations of the model per queue, times the queue length")
    args = ap.parse_args(argv)
    queues = [int(q) for q in args.queues.split(",")]
    print("one permutation's plan (random order), CPU time per evaluation")
    print("| queue | running | model.score | numpy Profile | ratio |")
    print("|---:|---:|---:|---:|---:|")
    for q, running, fast, slow in measure(queues, args.reps):
        print(f"| {q} | {running} | {fast * 1e6:.1f} us | {slow * 1e6:.1f} us | "
              f"{slow / fast if fast > 0 else float('nan'):.1f}x |")


if __name__ == "__main__":
    main()

"""How far is annealing from the optimum? Plan backends on real KTH scheduling points.

Kopanski & Rzadca (Euro-Par 2021, Section 3.3) search plans by simulated annealing; no published
plan-based scheduler reports its distance to the optimum. This benchmark captures real states of
the KTH trace (log-normal BB model, 96 nodes / 480 GB) with 6-14 waiting jobs of which at least
one fits now, and solves each state's plan model with

- ``annealing`` (the paper's search, seeded),
- ``exhaustive`` (branch and bound over permutations: the permutation optimum),
- ``cpsat`` (the optimum over all plans, with a proven bound),
- ``greedy`` (submission order),

printing the score gap to the best proven optimum (median, p95, share of states where annealing
is optimal) and the time per decision. A second table measures the inner loop: one permutation
evaluation with the model's list-based evaluator vs the general numpy availability profile of
:mod:`bbopt.resources`, for queues of 1-200 jobs.

Run: ``python benchmarks/quality/plan_quality.py [--states 30] [--alpha 2] [--budget 10]
[--speed-only]``
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt import Platform, simulate  # noqa: E402
from bbopt.core import Status  # noqa: E402
from bbopt.models.plan import PlanModel  # noqa: E402
from bbopt.planner import Profile  # noqa: E402
from bbopt.solvers import Budget, solve  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from benchmarks._data import data_path  # noqa: E402

KTH = "KTH-SP2-1996-2.1-cln.swf"
BACKENDS = ("greedy", "annealing", "exhaustive", "cpsat")


def data_dir() -> Path:
    return data_path(KTH).parent


def capture_states(n_states: int, lo: int, hi: int, seed: int = 0):
    """Real KTH scheduling points (under sjf-bb) with lo..hi waiting jobs, some fitting now."""
    jobs = with_lognormal_bb(read_swf(data_dir() / KTH).jobs, seed=0)
    pool = []

    def keep(state, decision):
        if lo <= len(state.queue) <= hi:
            free_n, free_b = state.free()
            if any(j.nodes <= free_n and j.bb <= free_b for j in state.queue):
                pool.append(state)

    simulate(jobs, Platform.kopanski(), "sjf-bb", on_decision=keep)
    rng = np.random.default_rng(seed)
    pick = sorted(rng.choice(len(pool), size=min(n_states, len(pool)), replace=False))
    return [pool[i] for i in pick], len(pool)


def pct(xs, q):
    return float(np.percentile(xs, q)) if xs else math.nan


def quality(states, alpha: int, budget: float) -> None:
    # Warm up: the first solve imports every backend (OR-Tools among them).
    warm = PlanModel.from_state(states[0], alpha)
    for backend in BACKENDS:
        solve(warm, backend, Budget(budget))
    rows = []
    for k, state in enumerate(states):
        m = PlanModel.from_state(state, alpha)
        row = {"n": m.n}
        for backend in BACKENDS:
            options = {}
            if backend == "exhaustive":  # annealing's answer is a first incumbent only
                options["initial"] = row["annealing"][4]
            if backend == "cpsat":
                options["workers"] = 2
            t0 = time.perf_counter()
            res = solve(m, backend, Budget(budget), seed=k, **options)
            row[backend] = (res.objective, res.status, time.perf_counter() - t0, res.bound,
                            res.solution.order)
        ex, cp = row["exhaustive"], row["cpsat"]
        proven = [r[0] for r in (ex, cp) if r[1] is Status.OPTIMAL]
        row["opt"] = min(proven) if proven else None
        rows.append(row)
        print(f"  state {k:2d}: n={m.n:2d}  greedy={row['greedy'][0]:.4g} "
              f"anneal={row['annealing'][0]:.4g} exh={ex[0]:.4g}({ex[1].value[:3]}, {ex[2]:.2f}s) "
              f"cpsat={cp[0]:.4g}({cp[1].value[:3]}, {cp[2]:.2f}s)", flush=True)
    print()
    print(f"alpha={alpha}: {len(rows)} KTH states, queue {min(r['n'] for r in rows)}-"
          f"{max(r['n'] for r in rows)} jobs, budget {budget:g} s per backend")
    solved = [r for r in rows if r["opt"] is not None]
    both = [r for r in rows if r["exhaustive"][1] is Status.OPTIMAL
            and r["cpsat"][1] is Status.OPTIMAL]
    equal = sum(1 for r in both if math.isclose(r["exhaustive"][0], r["cpsat"][0], rel_tol=1e-9))
    print(f"states with a proven optimum: {len(solved)}/{len(rows)}; "
          f"exhaustive proven: {sum(r['exhaustive'][1] is Status.OPTIMAL for r in rows)}, "
          f"cpsat proven: {sum(r['cpsat'][1] is Status.OPTIMAL for r in rows)}; "
          f"both proven: {len(both)}, of which equal optimum: {equal}")
    print(f"{'backend':<11}{'gap median':>12}{'gap p95':>10}{'gap max':>10}{'optimal':>9}"
          f"{'time p50':>10}{'time p95':>10}{'time max':>10}")
    for backend in BACKENDS:
        gaps = [(r[backend][0] - r["opt"]) / r["opt"] * 100 if r["opt"] > 0 else 0.0
                for r in solved]
        times = [r[backend][2] for r in rows]
        hits = sum(1 for g in gaps if g <= 1e-9)
        print(f"{backend:<11}{pct(gaps, 50):>11.3f}%{pct(gaps, 95):>9.2f}%"
              f"{max(gaps or [0]):>9.2f}%{hits:>5}/{len(gaps):<3}"
              f"{pct(times, 50) * 1e3:>8.1f}ms{pct(times, 95) * 1e3:>8.1f}ms"
              f"{max(times) * 1e3:>8.0f}ms")
    unsolved = [r for r in rows if r["opt"] is None]
    if unsolved:
        lb = [(r["annealing"][0] - r["cpsat"][3]) / r["annealing"][0] * 100
              for r in unsolved if r["cpsat"][3] is not None]
        print(f"{len(unsolved)} unproven states: annealing within {pct(lb, 50):.2f}% (median), "
              f"{max(lb or [math.nan]):.2f}% (max) of CP-SAT's lower bound")


def evaluator_speed(states) -> None:
    """One permutation evaluation: list-based evaluator vs the numpy Profile."""
    print()
    print("inner loop: one permutation's plan (random order), per evaluation")
    print(f"{'queue':>6}{'running':>9}{'model.score':>14}{'numpy Profile':>15}{'ratio':>8}")
    rng = np.random.default_rng(0)
    base = max(states, key=lambda s: len(s.running))
    jobs_pool = [j for s in states for j in s.queue]
    for q in (1, 5, 10, 20, 50, 100, 200):
        queue = tuple(jobs_pool[i % len(jobs_pool)] for i in range(q))
        m = PlanModel(base.time, base.platform.capacity,
                      [(r.start + r.job.walltime, r.job.nodes, r.job.bb) for r in base.running],
                      queue, alpha=2)
        order = rng.permutation(q).tolist()
        reps = max(3, 2000 // q)
        t0 = time.perf_counter()
        for _ in range(reps):
            m.score(order)
        fast = (time.perf_counter() - t0) / reps
        reps2 = max(2, reps // 10)
        t0 = time.perf_counter()
        for _ in range(reps2):
            prof = Profile(m.now, m.capacity, [(e, (n, b)) for e, n, b in m.running])
            for p in order:
                job = m.jobs[p]
                t = prof.earliest_fit(m.now, job.walltime, job.demand)
                prof.reserve(t, t + job.walltime, job.demand)
        slow = (time.perf_counter() - t0) / reps2
        print(f"{q:>6}{len(m.running):>9}{fast * 1e6:>12.1f}us{slow * 1e6:>13.1f}us"
              f"{slow / fast:>7.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=30)
    ap.add_argument("--alpha", type=int, default=2)
    ap.add_argument("--budget", type=float, default=10.0)
    ap.add_argument("--min-queue", type=int, default=6)
    ap.add_argument("--max-queue", type=int, default=14)
    ap.add_argument("--speed-only", action="store_true", help="only the inner-loop table")
    args = ap.parse_args()
    t0 = time.perf_counter()
    states, pool = capture_states(args.states, args.min_queue, args.max_queue)
    print(f"captured {len(states)} of {pool} KTH states with {args.min_queue}-{args.max_queue} "
          f"waiting jobs and a job that fits now ({time.perf_counter() - t0:.1f}s)")
    if not args.speed_only:
        quality(states, args.alpha, args.budget)
    evaluator_speed(states)


if __name__ == "__main__":
    main()

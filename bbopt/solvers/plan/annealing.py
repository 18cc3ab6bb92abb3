"""The ``annealing`` backend of the plan model: simulated annealing over permutations.

Kopanski & Rzadca, Euro-Par 2021, Section 3.3 and Algorithm 2, as in the authors' code
(jankopanski/Burst-Buffer-Scheduling, ``burstbuffer/alloc_only.py``):

1. queues of up to ``exhaustive_up_to`` (5) jobs are searched exhaustively (optimal over
   permutations, status OPTIMAL);
2. otherwise the 9 candidate orders of :data:`~bbopt.models.plan.CANDIDATE_ORDERS` are scored;
   if the best and worst scores are equal the search is skipped (it is unlikely to improve);
3. else, from the best candidate, ``cooling_steps`` (30) x ``steps_per_temperature`` (6) moves,
   each a swap of two uniformly drawn positions, accepted by the Metropolis rule; the initial
   temperature is ``worst - best`` (Ben-Ameur's method as the paper applies it), multiplied by
   ``cooling`` (0.9) after each block, never below ``min_temperature`` (1). The best plan seen
   is returned (status FEASIBLE).

Deterministic for a given seed: the moves and the uniform draws are taken from a numpy Generator
before the search. A move is rejected when its plan's score exceeds the Metropolis threshold
``current - T ln u`` by the early-rejection rule of :meth:`PlanModel.score` (partial score plus
bounds of the rest; the incremental walk asks it once its plan is placed, see
:func:`~bbopt.models.plan_walk.rejected_early`). A move is
scored incrementally (:class:`~bbopt.models.plan_walk.SwapWalk`): the plan of the current order
is kept position by position, a swap is placed from its first swapped position on, and the rest of
the plan is reused when the swapped jobs keep their starts; the scores are those of a fresh
evaluation (``incremental=False`` scores every move from scratch, the tests' reference), about
a third fewer placements on KTH's queues. A swap of a
position with itself is the identity and is accepted without evaluation, as in the authors' code.
An ``initial`` order (the plan policies' ``warm_start``: the previous decision's plan order) is
scored as a 10th candidate; fewer ``cooling_steps`` with a faster ``cooling`` shorten the search
(the policies' ``temperatures``). Both are off by default: the paper's search. ``trace=True``
records the best order so far over time, ``(seconds, order)`` at the best candidate and at each
improvement, in ``Result.info["trace"]`` (for the solver benchmark; the search is unchanged).
The wall-clock cap of the :class:`~bbopt.solvers.base.Budget` stops the search early with the best
plan so far (FEASIBLE): a move is not started when it and the final plan (three evaluations, timed
as the slowest candidate's) would end past the cap. Only when not even one candidate was scored
does the budget run out (:class:`BudgetExceeded`, i.e. the contract's FALLBACK). The number of
moves is fixed, so in the deterministic budget mode (where the wall cap is only a distant safety
net) the answer does not depend on the machine's load.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Sequence

import numpy as np

from bbopt.core import Status
from bbopt.models.plan import PlanModel
from bbopt.models.plan_walk import swap_walk
from bbopt.solvers.base import Budget, BudgetExceeded, Result
from bbopt.solvers.plan.exhaustive import solve_exhaustive


def solve_annealing(model: PlanModel, budget: Budget, seed: int = 0, *,
                    exhaustive_up_to: int = 5, cooling_steps: int = 30,
                    steps_per_temperature: int = 6, cooling: float = 0.9,
                    min_temperature: float = 1.0, incremental: bool = True,
                    initial: Sequence[int] | None = None, trace: bool = False,
                    **options) -> Result:
    """Kopanski's simulated annealing over permutations (see the module docstring).

    ``initial``: one more candidate order, scored after the nine of the paper (e.g. the
    previous decision's plan order, see the ``warm_start`` option of the plan policies); the
    annealing starts from the best candidate as usual."""
    t0 = _time.perf_counter()
    deadline = t0 + budget.seconds
    n = model.n
    if n <= exhaustive_up_to:
        res = solve_exhaustive(model, budget, seed)
        info = dict(res.info, method="exhaustive")
        if trace:
            info["trace"] = [(_time.perf_counter() - t0, res.solution.order)]
        return Result(res.status, res.solution, res.objective, bound=res.bound,
                      backend="annealing", info=info)
    # Candidate initial orders. ``cost``: the longest evaluation so far. The search stops when the
    # next evaluation and the final plan (which builds the schedule: about two evaluations) would
    # end past the deadline.
    # Orders that coincide (short queues often sort alike) are scored once.
    scored: list[tuple[float, int, tuple[int, ...]]] = []
    known: dict[tuple[int, ...], float] = {}
    cost = 0.0
    candidates = model.candidates()
    if initial is not None:
        initial = tuple(initial)
        if sorted(initial) != list(range(n)):
            raise ValueError("initial must be a permutation of the model's jobs")
        candidates.append(("previous", initial))
    for k, (_, order) in enumerate(candidates):
        now = _time.perf_counter()
        if now + 3 * cost > deadline:
            if not scored:
                raise BudgetExceeded("no candidate order could be scored within the budget")
            break
        score = known.get(order)
        if score is None:
            score = known[order] = model.score(order)
            cost = max(cost, _time.perf_counter() - now)
        scored.append((score, k, order))
    best, _, best_order = min(scored)
    worst = max(s for s, _, _ in scored)
    evaluations = len(scored)
    info = {"best_candidate": candidates[min(scored)[1]][0],
            "candidate_best": best, "candidate_worst": worst}
    incumbents = [(_time.perf_counter() - t0, best_order)] if trace else None
    if trace:
        info["trace"] = incumbents
    if best == worst or len(scored) < len(candidates):
        plan = model.plan(best_order)
        info.update(method="candidates", evaluations=evaluations,
                    skipped="best == worst candidate" if best == worst else "budget")
        return Result(Status.FEASIBLE, plan, best, backend="annealing", info=info)

    temperature = worst - best
    steps = cooling_steps * steps_per_temperature
    rng = np.random.default_rng(seed)
    draws = (rng.integers(0, n, size=steps), rng.integers(0, n, size=steps),
             # -ln(u) for u uniform on (0, 1]: the Metropolis slack in units of the temperature.
             -np.log1p(-rng.random(steps)))
    first, second, slack = (d.tolist() for d in draws)
    current = best
    # The current order and its plan, position by position: a swap is scored from its first
    # swapped position on (same scores as model.score; see SwapWalk). ``incremental=False``
    # scores every move from scratch instead (the reference the tests compare against).
    walk = swap_walk(model, best_order) if incremental else None
    perm = list(best_order)
    accepted = improved = aborted = 0
    step = 0
    out_of_time = False
    # A walk that runs a temperature's moves in one compiled call (named BB nodes): the same
    # moves, scores and decisions; the wall clock is then asked once per temperature.
    batch = getattr(walk, "moves", None)
    counts = [accepted, improved, aborted, evaluations]
    best_array = np.array(best_order, dtype=np.int64)
    for _ in range(cooling_steps):
        if batch is not None:
            if _time.perf_counter() + 3 * cost > deadline:
                out_of_time = True
                break
            before = counts[1]
            step, current, best = batch(*draws, step, steps_per_temperature, current,
                                        temperature, best, counts, best_array)
            if counts[1] != before:
                best_order = tuple(best_array.tolist())
                if incumbents is not None:
                    incumbents.append((_time.perf_counter() - t0, best_order))
            temperature = max(temperature * cooling, min_temperature)
            continue
        for _ in range(steps_per_temperature):
            a, b = first[step], second[step]
            u = slack[step]
            step += 1
            if a == b:
                accepted += 1
                continue
            if _time.perf_counter() + 3 * cost > deadline:
                out_of_time = True
                break
            threshold = current + temperature * u
            if walk is not None:
                score = walk.try_swap(a, b, threshold)
            else:
                perm[a], perm[b] = perm[b], perm[a]
                score = model.score(perm, threshold)
            evaluations += 1
            if score == math.inf:
                aborted += 1
            if score <= threshold:
                if walk is not None:
                    walk.accept()
                current = score
                accepted += 1
                if score < best:
                    best = score
                    best_order = tuple(walk.order if walk is not None else perm)
                    improved += 1
                    if incumbents is not None:
                        incumbents.append((_time.perf_counter() - t0, best_order))
            elif walk is None:
                perm[a], perm[b] = perm[b], perm[a]
        if out_of_time:
            break
        temperature = max(temperature * cooling, min_temperature)
    if batch is not None:
        accepted, improved, aborted, evaluations = counts
    plan = model.plan(best_order)
    info.update(method="annealing", evaluations=evaluations, steps=step, accepted=accepted,
                improved=improved, aborted=aborted, out_of_time=out_of_time)
    return Result(Status.FEASIBLE, plan, best, backend="annealing", info=info)

"""The ``exhaustive`` backend of the plan model: the optimum over all permutations.

The reference of the plan-based searches (Kopanski & Rzadca, Section 3.3, search queues of up
to 5 jobs exhaustively). Rather than evaluating the ``n!`` permutations one by one, it walks the
tree of their prefixes depth first, placing each job once per prefix, and prunes a prefix when
its score plus a lower bound of the rest is no better than the best plan found. The bound is
exact: adding reservations only delays a job, so every job still to place starts no earlier than
its earliest fit in the prefix's profile. Prefixes that placed the same set of jobs and left the
same profile (different orders of jobs that do not interact) have the same completions, so only
the cheapest of them is expanded. The permutation optimum is therefore proven (status OPTIMAL)
unless the budget runs out first (FEASIBLE with the best plan so far).

On named BB nodes (:attr:`PlanModel.named`) a job's start is not monotone in the reservations
before it (see :mod:`bbopt.models.plan`), so the bound of a job still to place is its earliest
start on the pool dimensions (nodes and pool BB), which only grows as reservations are added;
each child is placed by :meth:`PlanModel.place`, the evaluator's own rule, and the memo key holds
the BB-node columns and the BB nodes' free space now. Queues of up to 5 jobs on named BB nodes
(those the annealing hands over) are searched by the compiled twin of that search.
"""

from __future__ import annotations

import math
import time as _time

from bbopt.core import Status
from bbopt.models.plan import PlanModel
from bbopt.solvers.base import Budget, BudgetExceeded, Result

#: Queues longer than this are refused (``n!`` grows too fast for any pruning).
MAX_JOBS = 16
#: On named BB nodes, queues up to this long are searched by the compiled twin of
#: ``visit_named`` (:meth:`bbopt.planner.named.NamedArrays.exhaustive`) when numba is there: at
#: most 206 prefixes, fewer than the 256 between two looks at the clock, so it runs to the end
#: as the Python search does and finds the same plan. Its memo is left out: it only skips
#: prefixes that cannot beat the best plan.
COMPILED_UP_TO = 5


class _OutOfTime(Exception):
    pass


def solve_exhaustive(model: PlanModel, budget: Budget, seed: int = 0,
                     max_jobs: int = MAX_JOBS, memo_limit: int = 2_000_000,
                     initial: tuple[int, ...] | None = None, **options) -> Result:
    """Depth-first branch and bound over permutation prefixes (deterministic; ``seed`` unused).

    ``initial``: an order whose plan is a first incumbent (besides the 9 candidate orders).
    """
    t0 = _time.perf_counter()
    n = model.n
    if n > max_jobs:
        raise BudgetExceeded(f"{n} jobs exceed the exhaustive limit of {max_jobs}")
    deadline = t0 + budget.seconds
    # Start from the best of the candidate orders: a good incumbent prunes early.
    best_order, best = None, math.inf
    starts = [order for _, order in model.candidates()]
    if initial is not None:  # e.g. annealing's answer: only a tighter start, never a bias
        starts.append(tuple(initial))
    for order in starts:
        s = model.score(order)
        if s < best:
            best, best_order = s, order
    if n <= 1:
        plan = model.plan(best_order)
        return Result(Status.OPTIMAL, plan, best, bound=best, backend="exhaustive",
                      info={"nodes": 1})
    state = {"best": best, "order": list(best_order), "nodes": 0}
    prefix: list[int] = []

    seen: dict = {}

    def visit(profile, remaining: list[int], partial: float) -> None:
        state["nodes"] += 1
        if state["nodes"] & 255 == 0 and _time.perf_counter() > deadline:
            raise _OutOfTime
        # Prefixes that placed the same jobs and left the same profile have the same futures:
        # keep only the cheapest (many orders of non-interacting jobs give one profile).
        if len(seen) < memo_limit:
            key = (frozenset(remaining), tuple(profile[0]), tuple(profile[1]),
                   tuple(profile[2]))
            old = seen.get(key)
            if old is not None and old <= partial:
                return
            seen[key] = partial
        fits = [(model.earliest(profile, p), p) for p in remaining]
        terms = [model.term(p, f[0]) for f, p in fits]
        bound = partial + sum(terms)
        if bound >= state["best"]:
            return
        if len(remaining) == 1:
            # The bound is the exact score of the only completion.
            state["best"] = bound
            state["order"] = prefix + remaining
            return
        # Children with the smallest own term first: good plans are found early.
        for k in sorted(range(len(fits)), key=lambda k: (terms[k], fits[k][1])):
            (start, i, j), p = fits[k]
            child = (profile[0][:], profile[1][:], profile[2][:])
            model.reserve(child, p, start, i, j)
            prefix.append(p)
            visit(child, [q for q in remaining if q != p], partial + terms[k])
            prefix.pop()

    def visit_named(prof, remaining: list[int], partial: float) -> None:
        state["nodes"] += 1
        if state["nodes"] & 255 == 0 and _time.perf_counter() > deadline:
            raise _OutOfTime
        if len(seen) < memo_limit:
            T, FN, FB, FK, SN, NOW = prof
            key = (frozenset(remaining), tuple(T), tuple(FN), tuple(FB),
                   tuple(FK), tuple(SN), None if NOW is None else tuple(NOW))
            old = seen.get(key)
            if old is not None and old <= partial:
                return
            seen[key] = partial
        pool = (prof[0], prof[1], prof[2])
        lbs = {p: model.term(p, model.earliest(pool, p)[0]) for p in remaining}
        total_lb = sum(lbs.values())
        if partial + total_lb >= state["best"]:
            return
        children = []
        for p in remaining:
            child = model.copy_profile(prof)
            start, _ = model.place(child, p)
            term = model.term(p, start) if start != math.inf else model.lower_bound(p)
            children.append((term, p, child))
        if len(remaining) == 1:
            score = partial + children[0][0]
            if score < state["best"]:
                state["best"] = score
                state["order"] = prefix + remaining
            return
        children.sort(key=lambda c: (c[0], c[1]))
        for term, p, child in children:
            if partial + term + total_lb - lbs[p] >= state["best"]:
                continue
            prefix.append(p)
            visit_named(child, [q for q in remaining if q != p], partial + term)
            prefix.pop()

    status = Status.OPTIMAL
    arrays = model.named_arrays() if model.named is not None and n <= COMPILED_UP_TO else None
    try:
        if arrays is not None:  # the same search compiled: the same plan
            state["best"], state["order"], state["nodes"] = arrays.exhaustive(
                state["best"], state["order"])
        elif model.named is not None:
            visit_named(model.named_profile(), list(range(n)), 0.0)
        else:
            visit(model.base_profile(), list(range(n)), 0.0)
    except _OutOfTime:
        status = Status.FEASIBLE
    plan = model.plan(state["order"])
    return Result(status, plan, model.evaluate(plan),
                  bound=state["best"] if status is Status.OPTIMAL else None,
                  backend="exhaustive", info={"nodes": state["nodes"], "memo": len(seen)})

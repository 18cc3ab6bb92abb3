"""The ``cpsat`` backend of the plan model: the exact optimum over **all** plans.

A scheduling model in OR-Tools CP-SAT for small queues (up to ~12-15 jobs): one start variable
and one interval of length walltime per waiting job, one cumulative constraint on nodes and one
on burst-buffer bytes over time, the running jobs as fixed intervals ``[now, expected end)``;
minimise ``sum((start_i - submit_i) ** alpha)``. alpha = 1 is linear; alpha = 2 and 3 use exact
squared and cubed terms (``AddMultiplicationEquality`` on integer waits), no piecewise-linear
approximation.

A CP-SAT plan need not be any permutation's greedy plan (it may leave gaps a greedy placement
would not), so its optimum is a priori a lower bound of the optimum over permutations
(``exhaustive``). In fact the two are equal in value: the objective is regular (non-decreasing
in every start time), so some optimal plan is *active* (no job can start earlier without moving
another), and every active plan is the greedy, "serial schedule generation" plan of some
permutation (Kolisch, EJOR 1996, for the resource-constrained project scheduling problem). The
tests check this equality on random queues. What CP-SAT adds is an independent certificate and,
when it stops early, a proven lower bound (``Result.bound``) that bounds every permutation search
too: the distance of annealing to the optimum for queues too long for ``exhaustive``.

On named BB nodes (Kopanski Section 4.1) the program holds the BB as one pool, a relaxation: its
bound holds, but its plan may not fit the nodes. The plan handed out is then the greedy placement
of the relaxed plan's order (or of the best candidate order), with status FEASIBLE.

Exactness: times are whole seconds relative to now and BB whole bytes. When the data is not
integral (fractional times or bytes) durations and demands are rounded up and capacities down,
the plan stays feasible and the status is at most FEASIBLE. The BB capacity is that of the
model's fit rule (:func:`bbopt.core.fits`): the whole bytes up to the capacity plus its slack,
so the program's plans are exactly those the model runs. Each job's start is bounded by the
best candidate order's score ``U``: no term of a better plan exceeds ``U``, so
``wait_i <= U ** (1/alpha)``; that plan is also the solver's hint.
"""

from __future__ import annotations

import math
import time as _time

from ortools.sat.python import cp_model

from bbopt.core import Status
from bbopt.models.plan import Plan, PlanModel
from bbopt.solvers.base import Budget, Result

#: Largest objective magnitude kept in int64 with room to spare.
_INT_LIMIT = 2**61


def _as_int(x: float, up: bool) -> tuple[int, bool]:
    r = math.ceil(x) if up else math.floor(x)
    return int(r), float(r) == x


def solve_cpsat(model: PlanModel, budget: Budget, seed: int = 0, *, workers: int = 1,
                tangents: int = 8, **options) -> Result:
    """Solve the plan exactly with CP-SAT within ``budget`` (wall seconds, deterministic time)."""
    t0 = _time.perf_counter()
    n = model.n
    alpha = model.alpha
    if alpha not in (1, 2, 3):
        raise ValueError(f"cpsat supports alpha 1, 2 and 3, not {alpha!r}")
    exact = True
    # Incumbent from the candidate orders: hint and horizon.
    best_order, upper = None, math.inf
    for _, order in model.candidates():
        s = model.score(order)
        if s < upper:
            upper, best_order = s, order
    hint = model.plan(best_order)
    if n == 0:
        return Result(Status.OPTIMAL, hint, 0.0, bound=0.0, backend="cpsat")
    now = model.now
    cap_n, cap_b = model.capacity
    _, e = _as_int(cap_b, up=False)
    exact &= e
    # The model's fit rule (bbopt.core.fits) lets the BB in use exceed the capacity by its
    # slack: the program holds the whole bytes up to that, not the capacity itself, or it would
    # refuse plans the model runs (and prove a "bound" above them).
    bb_cap = math.floor(cap_b + model.tol)
    waited = []
    for job in model.jobs:
        a, e = _as_int(now - job.submit, up=False)  # already waited (rounded down: optimistic)
        exact &= e
        waited.append(max(a, 0))
    m = cp_model.CpModel()
    node_iv, node_d, bb_iv, bb_d = [], [], [], []
    for end, nodes, bb in model.running:
        if end <= now:
            continue
        d, e = _as_int(end - now, up=True)
        exact &= e
        iv = m.NewFixedSizeIntervalVar(0, d, "running")
        node_iv.append(iv)
        node_d.append(nodes)
        b, e = _as_int(bb, up=True)
        exact &= e
        if b > 0:
            bb_iv.append(iv)
            bb_d.append(b)
    starts, terms = [], []
    term_cap = upper if math.isfinite(upper) else None
    for p, job in enumerate(model.jobs):
        w, e = _as_int(job.walltime, up=True)
        exact &= e
        # No term of an improving plan exceeds the incumbent: wait <= U ** (1 / alpha).
        hi_wait = int(math.floor(term_cap ** (1.0 / alpha))) + 1 if term_cap is not None else None
        hi = (hi_wait - waited[p]) if hi_wait is not None else None
        if hi is None or hi < 0:
            hi = int(math.ceil(max(hint.starts) - now)) + w + 1
        hi = max(hi, int(math.ceil(hint.starts[p] - now)))
        s = m.NewIntVar(0, hi, f"s{p}")
        iv = m.NewFixedSizeIntervalVar(s, w, f"job{p}")
        node_iv.append(iv)
        node_d.append(job.nodes)
        b, e = _as_int(job.bb, up=True)
        exact &= e
        if b > 0:
            bb_iv.append(iv)
            bb_d.append(b)
        starts.append(s)
        wmax = waited[p] + hi
        if alpha == 1:
            terms.append(s)
        else:
            y = m.NewIntVar(waited[p], wmax, f"wait{p}")
            m.Add(y == s + waited[p])
            sq = m.NewIntVar(waited[p] ** 2, wmax ** 2, f"sq{p}")
            m.AddMultiplicationEquality(sq, [y, y])
            # Tangents of the convex square (redundant, they tighten the LP relaxation).
            for k in range(1, tangents + 1):
                y0 = waited[p] + (wmax - waited[p]) * k // (tangents + 1)
                m.Add(sq >= 2 * y0 * y - y0 * y0)
            if alpha == 2:
                terms.append(sq)
            else:
                cube_hi = wmax ** 3
                if cube_hi > _INT_LIMIT:
                    raise ValueError("wait cubes exceed int64; use annealing for this state")
                cube = m.NewIntVar(waited[p] ** 3, cube_hi, f"cube{p}")
                m.AddMultiplicationEquality(cube, [sq, y])
                terms.append(cube)
        m.AddHint(s, int(round(hint.starts[p] - now)))
    m.AddCumulative(node_iv, node_d, cap_n)
    # Redundant: waiting jobs that need more than half the nodes (or of the BB) pairwise exclude
    # each other; a no-overlap constraint propagates that far better than the cumulative.
    job_iv = node_iv[len(node_iv) - n:]
    for big in ([k for k, job in enumerate(model.jobs) if 2 * job.nodes > cap_n],
                [k for k, job in enumerate(model.jobs) if 2 * math.ceil(job.bb) > bb_cap]):
        if len(big) > 1:
            m.AddNoOverlap([job_iv[k] for k in big])
    if bb_iv:
        m.AddCumulative(bb_iv, bb_d, bb_cap)
    const = sum(waited) if alpha == 1 else 0
    m.Minimize(sum(terms) + const)
    solver = cp_model.CpSolver()
    remaining = budget.seconds - (_time.perf_counter() - t0)
    solver.parameters.max_time_in_seconds = max(remaining, 0.01)
    if budget.deterministic is not None:
        solver.parameters.max_deterministic_time = budget.deterministic
    solver.parameters.num_workers = workers
    solver.parameters.random_seed = int(seed) % (2**31)
    code = solver.Solve(m)
    info = {"cp_status": solver.StatusName(code), "exact": exact,
            "incumbent": upper, "conflicts": solver.NumConflicts()}
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return Result(Status.FALLBACK, None, backend="cpsat", info=info)
    if model.named is not None:
        return _on_named_nodes(model, solver, starts, best_order, upper, exact, info)
    plan = Plan(tuple(now + solver.Value(s) for s in starts), None)
    why = model.check(plan)
    if why is not None:  # only possible if rounding went wrong: never hand out such a plan
        info["invalid"] = why
        return Result(Status.FALLBACK, None, backend="cpsat", info=info)
    objective = model.evaluate(plan)
    bound = solver.BestObjectiveBound() if exact else None
    status = Status.OPTIMAL if code == cp_model.OPTIMAL and exact else Status.FEASIBLE
    return Result(status, plan, objective, bound=bound, backend="cpsat", info=info)


def _on_named_nodes(model: PlanModel, solver: cp_model.CpSolver, starts: list,
                    best_order: tuple[int, ...], upper: float, exact: bool,
                    info: dict) -> Result:
    """The answer on named BB nodes, where the program above holds the BB as one pool: a
    relaxation (every plan that fits the nodes fits the pool), so its plan may not fit the
    nodes while its bound holds. The plan handed out is the greedy placement of the order of
    the relaxed starts, or of the best candidate order if that scores as well: FEASIBLE, never
    OPTIMAL, with the relaxation's bound."""
    order = tuple(sorted(range(model.n), key=lambda i: (solver.Value(starts[i]), i)))
    score = model.score(order)
    if not score < upper:
        order, score = best_order, upper
    info["relaxed"] = "burst buffer as one pool"
    bound = solver.BestObjectiveBound() if exact else None
    return Result(Status.FEASIBLE, model.plan(order), score, bound=bound, backend="cpsat",
                  info=info)

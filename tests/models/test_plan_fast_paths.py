"""The plan model's fast paths against plain from-scratch references (Kopanski & Rzadca,
Euro-Par 2021, Section 3.3): the inlined first fit of :meth:`PlanModel.place` on named BB nodes
against the general :func:`~bbopt.planner.pieces.first_fit_runs` on each BB node's least free
space, the early rejection of :meth:`PlanModel.score` against the full score, and the
annealing's scoring of coinciding candidate orders against fresh scores."""

from __future__ import annotations

import math
import random
from bisect import bisect_left

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob
from bbopt.models.plan import PlanModel
from bbopt.planner.pieces import first_fit_runs
from bbopt.solvers import Budget
from bbopt.solvers.plan.annealing import solve_annealing


def _reference_place(model: PlanModel, prof: list, p: int):
    """Job ``p`` placed in the named profile ``prof`` the plain way: at each candidate start,
    the general first-fit function on the least free space of every BB node over the window,
    the amounts summed piece by piece, the reservation segment by segment."""
    T, FN, FB, FK, SN = prof[:5]
    n, b, w = model._n[p], model._b[p], model._w[p]
    tol, ftol = model.tol, model._ftol
    piece = b / n

    def amounts(runs):
        out = []
        for node, count in runs:
            a = 0.0
            for _ in range(count):
                a += piece
            out.append((node, a))
        return out

    def reserve(i, j, end, need):
        if T[j] != end:
            T.insert(j, end)
            FN.insert(j, FN[j - 1])
            FB.insert(j, FB[j - 1])
            FK.insert(j, FK[j - 1])
        for q in range(i, j):
            FN[q] -= n
            FB[q] -= b
        for node, size in need:
            for q in range(i, j):
                row = list(FK[q])
                row[node] -= size
                FK[q] = tuple(row)

    def least(node, i, j):
        return min(FK[q][node] for q in range(i, j))

    i = bisect_left(T, model._t0[p])
    while i < len(T) - 1:
        ok = all(FN[q] >= n and FB[q] + tol >= b for q in range(i, len(T) - 1)
                 if q == i or T[q] < T[i] + w)
        if not ok:
            i += 1
            continue
        start, end = T[i], T[i] + w
        j = bisect_left(T, end, i + 1)
        if i == 0:
            runs = first_fit_runs(SN, n, b, ftol)
            if runs is not None and all(least(node, 0, j) + model._ktol[node] >= size
                                        for node, size in amounts(runs)):
                reserve(0, j, end, amounts(runs))
                for node, count in runs:
                    for _ in range(count):
                        SN[node] -= piece
                return start, runs
            i += 1
            continue
        runs = first_fit_runs([least(node, i, j) for node in range(len(FK[0]))], n, b, ftol)
        if runs is None:
            i += 1
            continue
        reserve(i, j, end, amounts(runs))
        return start, runs
    return math.inf, None


_sizes = st.one_of(st.integers(0, 12).map(float), st.floats(0.001, 12.0))


@settings(max_examples=80, deadline=None)
@given(caps=st.lists(st.sampled_from([6.0, 7.0, 10.0, 7.5]), min_size=2, max_size=12),
       running=st.lists(st.tuples(st.integers(1, 3), _sizes, st.integers(51, 400)), max_size=4),
       queue=st.lists(st.tuples(st.integers(0, 50), st.integers(1, 6), _sizes,
                                st.integers(1, 300)), min_size=1, max_size=9),
       seed=st.integers(0, 2**32))
def test_named_placement_is_the_general_first_fit_on_the_window(caps, running, queue, seed):
    """Every placement of random orders gives the reference's start and runs, and leaves the
    same profile (the same floats, breakpoint by breakpoint)."""
    platform = Platform(nodes=8, bb=sum(caps) * GB, bb_nodes=tuple(c * GB for c in caps))
    held = tuple(RunningJob(Job(f"r{k}", 0, walltime=w, runtime=w, nodes=n, bb=b * GB), 0.0)
                 for k, (n, b, w) in enumerate(running))
    if sum(r.job.nodes for r in held) > platform.nodes:
        return
    jobs = tuple(Job(f"q{k}", float(s), walltime=float(w), nodes=n, bb=b * GB)
                 for k, (s, n, b, w) in enumerate(queue))
    model = PlanModel.from_state(ClusterState(50.0, platform, held, jobs), 2)
    if model.n == 0 or min(model._SN) < 0:
        return
    rnd = random.Random(seed)
    for _ in range(3):
        order = list(range(model.n))
        rnd.shuffle(order)
        fast, ref = model.named_profile(), model.named_profile()
        for p in order:
            assert model.place(fast, p) == _reference_place(model, ref, p)
            assert fast == ref


def _pool_model(rnd: random.Random, n: int) -> PlanModel:
    cap_n, cap_b = rnd.choice([4, 8, 16]), 20 * GB
    jobs = [Job(str(i), submit=rnd.randint(0, 100), walltime=rnd.choice([5, 10, 30, 60, 200]),
                nodes=rnd.randint(1, cap_n), bb=rnd.uniform(0, 12) * GB) for i in range(n)]
    running = [(100 + rnd.randint(1, 300), rnd.randint(1, cap_n // 2), rnd.uniform(0, 8) * GB)
               for _ in range(rnd.randint(0, 2))]
    return PlanModel(100.0, (cap_n, cap_b), running, jobs, rnd.choice([1, 2, 3]))


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32), n=st.integers(1, 12))
def test_a_score_is_rejected_early_exactly_when_it_exceeds_the_threshold(seed, n):
    """The early rejection's bound (each job's earliest start in the base profile) never
    rejects an order whose full score is within the threshold."""
    rnd = random.Random(seed)
    m = _pool_model(rnd, n)
    for _ in range(5):
        order = list(range(m.n))
        rnd.shuffle(order)
        full = m.score(order)
        for threshold in (full, full * (1 + 1e-9), full * rnd.uniform(0.2, 1.0), full - 1.0,
                          full * rnd.uniform(1.0, 3.0)):
            got = m.score(order, threshold)
            assert got == (full if full <= threshold else math.inf), threshold


def test_coinciding_candidate_orders_are_scored_as_fresh_ones():
    """The annealing scores each distinct candidate order once: its best and worst candidate
    scores are those of fresh evaluations of the nine orders, on queues short enough that
    several orders coincide."""
    rnd = random.Random(7)
    seen_duplicates = 0
    for _ in range(40):
        m = _pool_model(rnd, rnd.randint(6, 9))
        orders = [o for _, o in m.candidates()]
        seen_duplicates += len(orders) - len(set(orders))
        scores = [m.score(o) for o in orders]
        res = solve_annealing(m, Budget(60.0), rnd.randrange(2**32))
        assert res.info["candidate_best"] == min(scores)
        assert res.info["candidate_worst"] == max(scores)
        assert res.objective <= min(scores)
        assert res.objective == m.score(res.solution.order)
    assert seen_duplicates > 0

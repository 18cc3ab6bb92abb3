"""The pack-building model and its backends: the average-bandwidth row, the paper's greedy
orders, exact backends equal to exhaustive enumeration, greedy never better than exact, and the
FALLBACK of the solver contract."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import Job, Status
from bbopt.errors import InputError
from bbopt.models.packs import ORDERS, PackModel, order_keys
from bbopt.solvers import Budget, solve
from bbopt.solvers.base import backends_for


def model_of(q, t, u, cap, char=None, objective_stages=None, tolerance=0.0, **kw):
    q = np.asarray(q, dtype=np.int64)
    t = np.asarray(t, dtype=float)
    u = np.asarray(u, dtype=float)
    char = np.asarray(char if char is not None else t, dtype=float)
    stages = objective_stages or (q * t,)
    return PackModel(tuple(f"a{i}" for i in range(len(q))), q, t, u, char, cap,
                     tuple(np.asarray(s, dtype=float) for s in stages), tolerance, **kw)


def periodic(id_, n, w, io_seconds, nodes, b=1e9, submit=0.0):
    t = n * (w + io_seconds)
    return Job(id_, submit, walltime=t, runtime=t, nodes=nodes,
               extra={"io": {"iterations": n, "compute_seconds": w, "io_bytes": io_seconds * b,
                             "io_bandwidth": b}})


def test_average_constraint_is_volume_over_the_longest_member():
    # u: seconds of I/O at full bandwidth. {0, 1}: 6 + 5 = 11 > 10 (longest) -> infeasible;
    # {0, 2}: 6 + 1 = 7 <= 10 -> feasible; {1, 2}: 5 + 1 = 6 > 5 -> infeasible.
    m = model_of([1, 1, 1], [10, 5, 2], [6, 5, 1], cap=3)
    assert not m.feasible(np.array([1, 1, 0], bool))
    assert m.feasible(np.array([1, 0, 1], bool))
    assert not m.feasible(np.array([0, 1, 1], bool))
    assert m.pack_duration(np.array([0, 1, 1], bool)) == 5
    # with application 1 the longest member, only 1 and 2 may join, within 5 s of I/O
    allowed, rhs = m.threshold_rows(1)
    assert allowed.tolist() == [False, True, True] and rhs == 5
    # node row
    assert not model_of([2, 2], [10, 10], [0, 0], cap=3).feasible(np.array([1, 1], bool))


def test_model_from_periodic_jobs_uses_equation_1():
    jobs = [periodic("A", 3, 2.0, 1.0, nodes=2), periodic("B", 2, 5.0, 4.0, nodes=1)]
    m = PackModel.from_jobs(jobs, capacity=4, bandwidth=1e9)
    assert m.duration.tolist() == pytest.approx([9.0, 18.0])
    assert m.io_time.tolist() == pytest.approx([3.0, 8.0])
    assert m.char.tolist() == pytest.approx([3.0, 9.0])
    assert m.evaluate(np.array([1, 1], bool)) == pytest.approx((2 * 9.0 + 18.0,))
    # a twice slower I/O node doubles the I/O time of the same volumes
    m2 = PackModel.from_jobs(jobs, capacity=4, bandwidth=0.5e9)
    assert m2.io_time.tolist() == pytest.approx([6.0, 16.0])
    # stretch-work weighs by (wait + T) / T at the decision time
    m3 = PackModel.from_jobs(jobs, capacity=4, bandwidth=1e9, now=9.0, objective="stretch-work")
    assert m3.stages[0].tolist() == pytest.approx([2 * 18.0, 27.0])
    with pytest.raises(InputError, match="objective"):
        PackModel.from_jobs(jobs, capacity=4, bandwidth=1e9, objective="speed")


def test_paper_orders():
    t = np.array([5.0, 9.0, 1.0, 9.0])
    char = np.array([3.0, 1.0, 4.0, 2.0])
    ids = ("a", "b", "c", "d")
    assert order_keys("max", ids, t, char).tolist() == [1, 3, 0, 2]  # ties keep input order
    # Char: a plain sort of the characteristic time (non-decreasing); char-desc the reverse
    assert order_keys("char", ids, t, char).tolist() == [1, 3, 0, 2]
    assert order_keys("char-desc", ids, t, char).tolist() == [2, 0, 3, 1]
    assert order_keys("char", ids, t, np.array([2.0, 1.0, 2.0, 1.0])).tolist() == [1, 3, 0, 2]
    r0 = order_keys("random", ids, t, char, seed=0)
    assert sorted(r0.tolist()) == [0, 1, 2, 3]
    assert order_keys("random", ids, t, char, seed=0).tolist() == r0.tolist()  # seeded
    assert any(order_keys("random", ids, t, char, seed=s).tolist() != r0.tolist()
               for s in range(1, 6))
    # the relative order of the remaining applications does not change from pack to pack
    rest = order_keys("random", ("a", "c", "d"), t[[0, 2, 3]], char[[0, 2, 3]], seed=0)
    assert [("a", "c", "d")[i] for i in rest] == [ids[i] for i in r0 if ids[i] != "b"]


def test_greedy_is_first_fit_in_order():
    # Max order: 1 (T=9, u=4) in; 3 (T=9, u=6): 10 > 9 out; 0 (T=5, u=4): 8 <= 9 in;
    # 2 (q=3): nodes 1 + 1 + 3 > 4 out.
    m = model_of([1, 2, 3, 1], [5, 9, 1, 9], [4, 4, 0, 6], cap=4)
    assert np.flatnonzero(m.greedy("max")).tolist() == [0, 1]
    assert m.feasible(m.greedy("max"))


@st.composite
def instances(draw, max_m=9):
    m = draw(st.integers(1, max_m))
    q = draw(st.lists(st.integers(1, 6), min_size=m, max_size=m))
    t = draw(st.lists(st.integers(1, 40), min_size=m, max_size=m))
    frac = draw(st.lists(st.integers(0, 10), min_size=m, max_size=m))
    u = [ti * f // 10 for ti, f in zip(t, frac, strict=True)]
    cap = draw(st.integers(0, 14))
    weights = draw(st.lists(st.integers(1, 20), min_size=m, max_size=m))
    lex = draw(st.booleans())
    stages = ([np.multiply(q, t), weights] if lex else [np.multiply(q, t)])
    tol = draw(st.sampled_from([0.0, 0.1])) if lex else 0.0
    return model_of(q, t, u, cap, objective_stages=stages, tolerance=tol)


@settings(max_examples=40, deadline=None)
@given(model=instances())
def test_exact_backends_equal_exhaustive_and_greedy_is_never_better(model):
    ref = solve(model, "exhaustive", Budget(10.0))
    assert ref.status is Status.OPTIMAL
    assert model.feasible(ref.solution)
    best = model.evaluate(ref.solution)
    # brute force by hand on the first stage: no feasible pack does better
    m = model.size
    top = max(model.evaluate(x)[0] for x in
              (np.array([(mask >> i) & 1 for i in range(m)], bool) for mask in range(1 << m))
              if model.feasible(x))
    for backend in ("cpsat", "milp", "scip"):
        r = solve(model, backend, Budget(10.0))
        assert r.status is Status.OPTIMAL, backend
        assert model.feasible(r.solution), backend
        got = model.evaluate(r.solution)
        # The last stage is maximised exactly; an earlier one only stays within the tolerance
        # (packs tied on the last stage may differ there).
        assert got[-1] == pytest.approx(best[-1], rel=1e-7, abs=1e-7), backend
        assert got[0] >= (1 - model.tolerance) * top - 1e-9, backend
        if model.tolerance == 0:
            assert got == pytest.approx(best, rel=1e-7, abs=1e-7), backend
    if model.tolerance == 0:
        assert best[0] == pytest.approx(top)
    else:
        assert best[0] >= (1 - model.tolerance) * top - 1e-9
    for order in ORDERS:
        g = solve(model, "greedy", Budget(1.0), order=order)
        assert model.feasible(g.solution)
        assert g.objective <= top + 1e-9


def test_backends_are_registered():
    m = model_of([1], [1], [0], cap=1)
    assert backends_for(m) == ["cpsat", "exhaustive", "greedy", "milp", "scip"]


def test_fallback_on_a_tiny_budget_and_on_a_large_enumeration():
    rng = np.random.default_rng(0)
    m = 60
    t = rng.integers(10, 100, m).astype(float)
    model = model_of(rng.integers(1, 20, m), t, t * rng.uniform(0, 1, m), cap=100)
    for backend in ("cpsat", "milp"):
        r = solve(model, backend, Budget(1e-9))
        assert r.status is Status.FALLBACK
        assert model.feasible(r.solution)
        assert r.solution.tolist() == model.fallback().tolist()
    r = solve(model, "exhaustive", Budget(10.0))
    assert r.status is Status.FALLBACK
    assert model.feasible(r.solution)


def test_exact_builder_beats_the_paper_orders_on_a_known_case():
    """Max order takes the long I/O-heavy job first and then has no room for I/O; the optimum
    packs the two long compute jobs. T = 10, 10, 10; u = 9, 2, 2; q = 2, 2, 2 on 4 nodes."""
    model = model_of([2, 2, 2], [10, 10, 10], [9, 2, 2], cap=4)
    assert np.flatnonzero(model.greedy("max")).tolist() == [0]
    r = solve(model, "cpsat", Budget(5.0))
    assert np.flatnonzero(r.solution).tolist() == [1, 2]
    assert r.objective == 40.0


def _first_fit(model: PackModel, perm) -> list[int]:
    """First fit in ``perm`` read literally: every application in turn, kept if it fits."""
    picked, used, io, longest = [], 0, 0.0, 0.0
    for i in perm:
        d = max(longest, float(model.duration[i]))
        if used + model.nodes[i] <= model.capacity and \
                io + model.io_time[i] <= d * (1 + 1e-9):
            picked.append(int(i))
            used, io, longest = used + int(model.nodes[i]), io + float(model.io_time[i]), d
    return sorted(picked)


@settings(max_examples=60, deadline=None)
@given(model=instances(), order=st.sampled_from(ORDERS))
def test_greedy_stops_when_no_application_fits_the_nodes_left_and_loses_nothing(model, order):
    perm = order_keys(order, model.ids, model.duration, model.char, model.seed)
    assert np.flatnonzero(model.greedy(order)).tolist() == _first_fit(model, perm)


def test_greedy_stops_at_a_full_pack_and_at_one_node_short_of_the_narrowest():
    # cap 4: 1 (q=2) and 0 (q=2) fill it; nothing is looked at after (the 1-node 3 does not fit)
    m = model_of([2, 2, 3, 1], [5, 9, 7, 1], [0, 0, 0, 0], cap=4)
    assert np.flatnonzero(m.greedy("max")).tolist() == [0, 1]
    # narrowest 2 nodes: at 3 of 4 used (one node left) the pack is complete; at 2 of 4 it is not
    m = model_of([3, 2, 2], [9, 5, 4], [0, 0, 0], cap=4)
    assert np.flatnonzero(m.greedy("max")).tolist() == [0]
    m = model_of([2, 3, 2], [9, 5, 4], [0, 0, 0], cap=4)
    assert np.flatnonzero(m.greedy("max")).tolist() == [0, 2]


def test_a_model_read_past_its_deadline_holds_the_head_of_the_queue():
    from bbopt.models.packs import BLOCK

    jobs = [Job(f"j{k}", float(k), 100.0 + k, nodes=1 + k % 3) for k in range(3 * BLOCK + 5)]
    whole = PackModel.from_jobs(jobs, 8, 1e9)
    assert whole.size == len(jobs)
    assert PackModel.from_jobs(jobs, 8, 1e9, deadline=float("inf")).size == len(jobs)
    cut = PackModel.from_jobs(jobs, 8, 1e9, deadline=0.0)  # (long past)
    assert cut.size == BLOCK and cut.ids == whole.ids[:BLOCK]
    assert cut.duration.tolist() == whole.duration[:BLOCK].tolist()
    assert cut.nodes.tolist() == whole.nodes[:BLOCK].tolist()
    short = jobs[:BLOCK]  # no look at the clock before a whole block is read
    assert PackModel.from_jobs(short, 8, 1e9, deadline=0.0).size == BLOCK

"""Window model and its backends (Fan et al., BBSched, Table 1 and Section 3.2)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from bbopt.core import GB, TB, Status
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget, solve


def table1(**kw) -> WindowModel:
    return WindowModel(nodes=[80, 10, 40, 10, 20], bb=np.array([20, 85, 5, 0, 0]) * TB,
                       free_nodes=100, free_bb=100 * TB, **kw)


def front(result) -> list[tuple[float, ...]]:
    return sorted(s.objectives for s in result.pareto)


def selections(result) -> set[tuple[int, ...]]:
    return {tuple(np.flatnonzero(s.x)) for s in result.pareto}


@pytest.mark.parametrize("backend", ["cpsat", "milp", "highs", "exhaustive", "nsga2"])
def test_table1_front_is_exactly_two_solutions(backend):
    r = solve(table1(), backend, Budget(20.0), seed=1)
    assert front(r) == [(80.0, 90 * TB), (100.0, 20 * TB)]
    assert selections(r) == {(0, 4), (1, 2, 3, 4)}  # {J1,J5} and {J2,J3,J4,J5}
    if backend != "nsga2":
        assert r.status is Status.OPTIMAL


def random_model(rng: np.random.Generator, w: int, objectives=("nodes", "bb"),
                 scarce: bool = True) -> WindowModel:
    nodes = rng.choice([1, 2, 4, 8, 16, 32, 64], w)
    bb = np.where(rng.random(w) < 0.5, 0, rng.integers(1, 60, w)) * GB
    free_n = int(rng.integers(16, 160))
    free_b = (int(rng.integers(20, 200)) if scarce else 2000) * GB
    return WindowModel(nodes=nodes, bb=bb, free_nodes=free_n, free_bb=free_b,
                       objectives=objectives, total_nodes=200, total_bb=400 * GB)


def ssd_model(rng: np.random.Generator, w: int) -> WindowModel:
    m = random_model(rng, w)
    node_ssd = np.where(rng.random(m.free_nodes) < 0.5, 128, 256) * GB
    ssd = np.where(rng.random(w) < 0.5, rng.integers(0, 129, w), rng.integers(129, 257, w)) * GB
    return WindowModel(nodes=m.nodes, bb=m.bb, free_nodes=m.free_nodes, free_bb=m.free_bb,
                       ssd=ssd, free_node_ssd=node_ssd,
                       objectives=("nodes", "bb", "ssd", "ssd_waste"))


@pytest.mark.parametrize("case", range(8))
def test_exact_backends_agree_with_enumeration(case):
    rng = np.random.default_rng(100 + case)
    w = int(rng.integers(6, 17))
    objectives = [("nodes", "bb"), ("nodes", "bb", "order")][case % 2]
    m = random_model(rng, w, objectives, scarce=case % 4 < 2)
    ref = solve(m, "exhaustive", Budget(30.0))
    assert ref.status is Status.OPTIMAL
    for backend in ("cpsat", "milp", "highs", "scip"):
        r = solve(m, backend, Budget(30.0), seed=0)
        assert r.status is Status.OPTIMAL, backend
        assert front(r) == front(ref), backend
    ga = solve(m, "nsga2", Budget(30.0), seed=case, generations=100)
    exact = np.array(front(ref))
    for s in ga.pareto:
        assert m.feasible(s.x)
        # dominated by or equal to a point of the exact front
        assert np.any(np.all(exact >= np.array(s.objectives) - 1e-6, axis=1))


@pytest.mark.parametrize("case", range(3))
def test_ssd_extension_fronts_agree(case):
    rng = np.random.default_rng(7 + case)
    m = ssd_model(rng, 10)
    ref = solve(m, "exhaustive", Budget(30.0))
    r = solve(m, "cpsat", Budget(30.0))
    assert r.status is Status.OPTIMAL
    assert front(r) == front(ref)
    for s in r.pareto:  # every selection has a real placement on nodes with enough SSD
        ids = list(range(m.free_nodes))
        placed = m.placement(s.x, ids, list(m.free_node_ssd))
        for i, got in placed.items():
            assert len(got) == m.nodes[i]
            assert all(m.free_node_ssd[k] >= m.ssd[i] for k in got)


def test_single_objective_forms_match_enumeration():
    rng = np.random.default_rng(5)
    for _ in range(4):
        m = random_model(rng, 14)
        for form, kw in (("weighted", {"weights": (0.5, 0.5)}),
                         ("weighted", {"weights": (0.2, 0.8)}),
                         ("lexicographic", {"priority": ("bb", "nodes")})):
            ref = solve(m, "exhaustive", Budget(30.0), form=form, **kw)
            for backend in ("cpsat", "milp", "highs", "scip"):
                r = solve(m, backend, Budget(30.0), form=form, **kw)
                assert r.status is Status.OPTIMAL
                assert r.objective == pytest.approx(ref.objective, rel=1e-9), (backend, form)


def test_tiny_budget_falls_back_in_time():
    rng = np.random.default_rng(3)
    nodes = rng.choice([1, 2, 4, 8, 16, 32, 64, 128], 50)
    bb = rng.integers(0, 40, 50) * TB
    m = WindowModel(nodes=nodes, bb=bb, free_nodes=1024, free_bb=300 * TB,
                    objectives=("nodes", "bb", "order"))
    for backend in ("cpsat", "milp", "nsga2"):  # a backend's first call imports its solver
        solve(table1(), backend, Budget(5.0), seed=0)
    for backend in ("cpsat", "milp", "nsga2"):
        # CPU time of this process, not wall time: the bound must hold on a loaded machine too.
        t0 = time.process_time()
        r = solve(m, backend, Budget(0.001), seed=0)
        used = time.process_time() - t0
        assert r.status is Status.FALLBACK, backend
        assert m.feasible(r.solution)
        assert used < 0.05, (backend, used)


def test_same_seed_same_answer():
    rng = np.random.default_rng(11)
    m = random_model(rng, 20, ("nodes", "bb", "order"))
    for backend, kw in (("nsga2", {"generations": 60}), ("cpsat", {})):
        a = solve(m, backend, Budget(30.0, deterministic=10.0), seed=4, **kw)
        b = solve(m, backend, Budget(30.0, deterministic=10.0), seed=4, **kw)
        assert selections(a) == selections(b)


def test_forced_jobs_are_selected_by_every_backend():
    m = table1(forced=[False, True, False, False, False])  # J2 must run
    for backend in ("cpsat", "milp", "exhaustive", "nsga2"):
        r = solve(m, backend, Budget(20.0))
        assert all(s.x[1] for s in r.pareto), backend
    assert m.fallback()[1]


@pytest.mark.parametrize("rule", ["in-order", "first-fit", "bin-packing"])
def test_greedy_rules_take_every_forced_job_first(rule):
    # Jobs 5 and 6 have starved; in window order job 5 would not fit after jobs 0-4.
    m = WindowModel(nodes=[1, 1, 1, 1, 1, 4, 1], bb=[0.0] * 7, free_nodes=8, free_bb=10 * GB,
                    forced=[False] * 5 + [True, True])
    x = m.greedy(rule)
    assert x[5] and x[6]
    assert m.feasible(x)


@pytest.mark.parametrize("backend", ["cpsat", "milp", "exhaustive", "nsga2", "greedy"])
def test_ssd_window_with_no_free_node_selects_nothing(backend):
    # A machine with local SSDs and every node busy: nothing can be selected, and the
    # four-objective model must still be well defined.
    m = WindowModel(nodes=[2, 1], bb=[GB, 0.0], free_nodes=0, free_bb=10 * GB,
                    objectives=("nodes", "bb", "ssd", "ssd_waste"), total_nodes=4,
                    total_bb=10 * GB, ssd=[100 * GB, 0.0], free_node_ssd=[],
                    total_ssd=512 * GB)
    r = solve(m, backend, Budget(5.0))
    assert r.solution is not None and not r.solution.any()


@pytest.mark.parametrize("backend", ["exhaustive", "cpsat"])
def test_a_selection_one_node_over_the_free_nodes_is_refused(backend):
    """4 free nodes: jobs of 2 + 2 fit, 2 + 2 + 1 is one node too many (model and backends)."""
    m = WindowModel(nodes=[2, 2, 1], bb=[0.0, 0.0, 0.0], free_nodes=4, free_bb=0.0)
    assert m.feasible([1, 1, 0]) and m.feasible([1, 0, 1])
    assert not m.feasible([1, 1, 1])
    assert list(m.feasible_many(np.array([[1, 1, 1], [1, 1, 0]]))) == [False, True]
    r = solve(m, backend, Budget(10.0), form="weighted", weights=(1.0, 0.0))
    assert int(np.asarray(r.solution) @ m.nodes) == 4 and m.feasible(r.solution)

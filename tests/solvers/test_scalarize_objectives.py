"""The window objectives table and the one objective form (Fan et al., BBSched, Sections 3.2
and 5): every objective is read from one table, an unknown one is an error, and every backend
parses Pareto / weighted / lexicographic and the queue-order tie-break the same way."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import GB, ClusterState, Job, Platform, Status
from bbopt.errors import InputError
from bbopt.models.window import OBJECTIVES, WindowModel, objective
from bbopt.policies.window_common import blocked, eligible, force_starving, rounds
from bbopt.solvers import Budget, solve
from bbopt.solvers.scalarize import Candidates, Form, best_result
from bbopt.solvers.window.forms import linear_form


def ssd_model(rng: np.random.Generator, w: int, objectives=tuple(OBJECTIVES)) -> WindowModel:
    nodes = rng.choice([1, 2, 4, 8], w)
    free = int(rng.integers(8, 40))
    return WindowModel(nodes=nodes, bb=rng.integers(0, 50, w) * GB + rng.random(w) * 1e6,
                       free_nodes=free, free_bb=float(rng.integers(20, 200)) * GB,
                       ssd=rng.choice([0, 64, 128, 200], w) * GB,
                       free_node_ssd=rng.choice([128, 256], free) * GB,
                       objectives=objectives, total_nodes=64, total_bb=400 * GB,
                       bandwidth=rng.integers(0, 200, w) * 1e6)


def test_unknown_objective_is_an_error_everywhere():
    with pytest.raises(InputError, match="unknown objective 'energy'"):
        objective("energy")
    with pytest.raises(InputError, match="unknown objective"):
        WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0, objectives=("energy",))
    m = WindowModel(nodes=[1, 2], bb=[0.0, 1.0], free_nodes=3, free_bb=1.0)
    with pytest.raises(InputError, match="unknown objective"):
        m.values("energy", np.ones((1, 2), bool))
    with pytest.raises(InputError, match="unknown objective"):
        linear_form(m, ["nodes", "energy"])
    with pytest.raises(InputError, match="unknown objective"):
        solve(m, "exhaustive", form="lexicographic", priority=("energy",))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), w=st.integers(1, 8))
def test_table_entries_agree_with_the_integer_form(seed, w):
    """Each linear objective's integer coefficients times its integer unit are its exact
    coefficients to within one unit, and the model evaluates every objective as the table
    says (a dot product for the linear ones)."""
    rng = np.random.default_rng(seed)
    m = ssd_model(rng, w)
    X = rng.random((5, w)) < 0.5
    F = m.evaluate_many(X)
    for k, name in enumerate(m.objectives):
        obj = OBJECTIVES[name]
        assert m.scales()[k] == pytest.approx(obj.scale(m))
        if not obj.linear:
            continue
        exact = obj.coefficients(m)
        assert np.allclose(F[:, k], X.astype(float) @ exact)
        unit = obj.integer_unit(m)
        ints = obj.integer(m).astype(float) * unit
        slack = np.where(exact > 0, unit * m.nodes, 0) if name == "ssd" else unit
        assert np.all(np.abs(ints - exact) <= slack + 1e-6), name


def test_non_monotone_objective_turns_off_the_genetic_fill():
    """ssd_waste can fall when a job is added: the NSGA-II repair must not fill freely, which
    the table says through ``monotone``; the result stays feasible either way."""
    assert not OBJECTIVES["ssd_waste"].monotone
    assert all(OBJECTIVES[n].monotone for n in ("nodes", "bb", "order", "ssd"))
    m = ssd_model(np.random.default_rng(3), 10)
    r = solve(m, "nsga2", Budget(5.0), seed=0, generations=20)
    assert all(m.feasible(s.x) for s in r.pareto)


def test_form_parses_once_with_default_weights_and_tiebreak():
    f = Form.of(("nodes", "bb"), "weighted")
    assert f.names == ("nodes", "bb") and list(f.weights) == [1.0, 1.0]
    lex = Form.of(("nodes", "bb"), "lexicographic", priority=("bb",))
    assert lex.names == ("bb",)
    m = WindowModel(nodes=[2, 2, 1], bb=[0.0, 0.0, 5.0], free_nodes=2, free_bb=5.0)
    assert lex.stages(m) == [{"bb": 1}, {"order": 1}]
    assert Form.of(m.objectives, "lexicographic", priority=("order",)).stages(m) == [{"order": 1}]
    with pytest.raises(InputError, match="unknown form"):
        Form.of(("nodes",), "best")


def test_tie_break_prefers_the_window_front_in_every_form():
    """Jobs 0 and 1 are interchangeable; every backend and form must start job 0."""
    m = WindowModel(nodes=[2, 2, 1], bb=[0.0, 0.0, 5 * GB], free_nodes=2, free_bb=5 * GB)
    budget = Budget.of(10.0, mode="deterministic")  # work limits: the same answer under any load
    for backend in ("exhaustive", "cpsat", "milp", "scip"):
        for form in ("weighted", "lexicographic"):
            r = solve(m, backend, budget, form=form, priority=("nodes",), weights=(1.0, 0.0))
            assert list(np.flatnonzero(r.solution)) == [0], (backend, form)
            assert r.status is Status.OPTIMAL
        r = solve(m, backend, budget)
        assert sorted(tuple(np.flatnonzero(s.x)) for s in r.pareto) == [(0,), (2,)], backend


def test_candidate_sets_give_the_exhaustive_answer():
    rng = np.random.default_rng(7)
    m = ssd_model(rng, 9, objectives=("nodes", "bb", "ssd"))
    X = np.array([x for x in (rng.random((300, 9)) < 0.4) if m.feasible(x)])
    for form in ("pareto", "weighted", "lexicographic"):
        spec = Form.of(m.objectives, form, priority=("ssd", "nodes"))
        got = best_result(Candidates(m), list(X), spec, "test", {})
        F = m.evaluate_many(X)
        if form == "pareto":
            assert {s.objectives for s in got.pareto} == {
                tuple(F[i]) for i in range(len(F))
                if not np.any(np.all(F[i] <= F, axis=1) & np.any(F[i] < F, axis=1))}
        elif form == "weighted":
            assert got.objective == pytest.approx((F / m.scales()).sum(axis=1).max())
        else:
            ssd, nodes = F[:, 2], F[:, 0]
            best = max(zip(ssd, nodes, strict=True))
            assert got.objective == pytest.approx(best)
    assert best_result(Candidates(m), [], Form.of(m.objectives), "test", {}).status \
        is Status.INFEASIBLE


def test_exact_solver_speaks_the_core_status():
    from bbopt.solvers.window.cpsat import _CpSat

    m = WindowModel(nodes=[2, 3], bb=[0.0, 0.0], free_nodes=4, free_bb=0.0)
    lf = linear_form(m)
    s = _CpSat(lf, Budget(5.0), 0)
    status, x, _, _ = s.maximize(*lf.objectives["nodes"], 5.0)
    assert status is Status.OPTIMAL and list(x) == [False, True]
    s.push_ge(*lf.objectives["nodes"], 5)
    assert s.maximize(*lf.objectives["nodes"], 5.0)[0] is Status.INFEASIBLE


def _job(i: str, **kw) -> Job:
    return Job(id=i, submit=0.0, walltime=100.0, runtime=50.0, nodes=kw.pop("nodes", 1), **kw)


def test_window_helpers_order_dependencies_and_starvation():
    a, b, c = _job("a"), _job("b", extra={"dependencies": "a"}), _job("c", priority=5)
    state = ClusterState(time=0.0, platform=Platform(nodes=4, bb=0.0), queue=(a, b, c))
    assert [j.id for j in eligible(state)] == ["a", "c"]
    assert [j.id for j in eligible(state, "priority")] == ["c", "a"]
    assert blocked(b, {"a"}, set()) and not blocked(b, set(), set())
    prev = {"a": 3, "c": 3}
    # both starving; only one can start at a time: a is forced, c blocks
    forced, blocker = force_starving([a, c], prev, 3, lambda ids: len(ids) <= 1)
    assert forced == {"a"} and blocker is c
    assert force_starving([a, c], prev, None, lambda ids: False) == (set(), None)
    assert rounds([a, c], prev, {"a"}) == {"c": 4}

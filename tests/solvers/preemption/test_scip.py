"""The ``scip`` victim choice (Zvi & Oren, OMFS, Algorithm 1 as a 0-1 program, solved by SCIP):
its name, the time limit it hands SCIP, and its trace of incumbents."""

from __future__ import annotations

import types

import pytest

from bbopt.core import Status
from bbopt.solvers import Budget
from bbopt.solvers.preemption import milp, scip
from bbopt.solvers.preemption.scip import solve_scip
from tests.solvers.test_preemption import victims_model


@pytest.fixture
def still(monkeypatch):
    """A clock that stands still at 100 s, for the backend and the driver it calls."""
    clock = types.SimpleNamespace(perf_counter=lambda: 100.0)
    monkeypatch.setattr(scip, "_time", clock)
    monkeypatch.setattr(milp, "_time", clock)


def test_scip_names_itself_and_traces_its_incumbents_as_victim_sets(still):
    # three candidates of one node; v1 alone is the optimum (cost 1)
    m = victims_model([1, 1, 1], [2.0, 1.0, 3.0], need_nodes=1)
    r = solve_scip(m, Budget(10.0), 0, trace=True)
    assert (r.status, r.objective, r.backend) == (Status.OPTIMAL, 1.0, "scip")
    trace = r.info["trace"]
    assert trace and all(t == 0.0 for t, _ in trace)  # seconds since the start, clock still
    assert trace[-1][1] == [0, 1, 0]
    assert all(type(v) is int for _, x in trace for v in x)


def test_scip_traces_nothing_for_an_infeasible_choice():
    m = victims_model([1, 1], [1.0, 1.0], need_nodes=3)
    r = solve_scip(m, Budget(10.0), 0, trace=True)
    assert (r.status, r.backend, r.info) == (Status.INFEASIBLE, "scip", {"trace": []})
    assert solve_scip(m, Budget(10.0), 0).info == {}  # (no trace asked: none kept)


@pytest.mark.parametrize(("seconds", "limit"), [(0.005, 0.01), (0.01, 0.01), (0.02, 0.02),
                                                (5.0, 5.0)])
def test_scip_is_handed_what_is_left_of_the_budget_and_at_least_a_hundredth(
        still, monkeypatch, seconds, limit):
    handed = []

    class Command(scip.ScipCommand):
        def __init__(self, seconds, seed, watch=(), on_solution=None):
            handed.append((seconds, seed))
            super().__init__(10.0, seed, watch, on_solution)  # (time to answer, under load)

    monkeypatch.setattr(scip, "ScipCommand", Command)
    m = victims_model([1, 1], [2.0, 1.0], need_nodes=1)
    assert m.victims(solve_scip(m, Budget(seconds), 7).solution) == ["v1"]
    assert handed == [(limit, 7)]

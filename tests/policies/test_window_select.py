"""What BBSched's window policies ask of their backend and what they make of its answer (Fan
et al., BBSched, Sections 3.2 and 3.2.4; ``WindowPolicy._select``): the form, weights or
priority, the seed, the options and the budget less its tail and the time spent; the Pareto
set handed to the decision maker; a scalar form answered with a set (as NSGA-II answers) read
as the best of the set by that form; no answer giving a feasible FALLBACK decision.

On Fan et al.'s Table 1 window (100 nodes, 100 TB): J1 80 nodes 20 TB, J2 10 nodes 85 TB, J3
40 nodes 5 TB, J4 10 nodes, J5 20 nodes.
"""

from __future__ import annotations

import numpy as np
import pytest

import bbopt
from bbopt.core import TB, Status
from bbopt.models.window import WindowModel
from bbopt.policies.window import WindowPolicy
from bbopt.solvers import Solution
from bbopt.solvers.base import Result
from tests.policies.test_window import table1_state

J1, J15, J2345 = [1, 0, 0, 0, 0], [1, 0, 0, 0, 1], [0, 1, 1, 1, 1]  # selections


@pytest.fixture
def recorder(recording_backend):
    """The recording backend ``records`` of the window model (``tests/policies/conftest.py``)."""
    return lambda reply: recording_backend(WindowModel, reply)


def _sol(model: WindowModel, x) -> Solution:
    x = np.array(x, dtype=bool)
    return Solution(x, tuple(model.evaluate(x)))


def test_pareto_asks_for_the_set_and_the_decision_maker_chooses(recorder):
    seen = recorder(lambda m: Result(Status.OPTIMAL, np.array(J15, bool), pareto=(
        _sol(m, J15), _sol(m, J2345)), backend="records"))
    d = bbopt.decide(table1_state(), WindowPolicy(backend="records", seed=5, budget=1.0,
                                                  backend_options={"depth": 2}))
    assert seen["options"] == {"form": "pareto", "depth": 2} and seen["seed"] == 5
    assert seen["size"] == 5 and 0.5 < seen["budget"].seconds <= 0.9
    assert sorted(d.started_ids) == ["J2", "J3", "J4", "J5"]  # (BBSched's rule: 2nd of 2)
    assert [a["chosen"] for a in d.alternatives] == [False, True]
    assert d.stats.backend == "records" and d.stats.status is Status.OPTIMAL


@pytest.mark.parametrize("method, extra", [
    ("weighted", {"form": "weighted", "weights": (1.0, 3.0)}),
    ("lexicographic", {"form": "lexicographic", "priority": ("bb", "nodes")}),
])
def test_a_scalar_form_is_asked_with_its_weights_or_priority(recorder, method, extra):
    seen = recorder(lambda m: Result(Status.FEASIBLE, np.array(J2345, bool), 1.0,
                                     backend="records"))
    d = bbopt.decide(table1_state(), WindowPolicy(method=method, backend="records",
                                                  weights=[1.0, 3.0], seed=5, budget=1.0,
                                                  priority=["bb", "nodes"],
                                                  backend_options={"depth": 2}))
    assert seen["options"] == {**extra, "depth": 2} and seen["seed"] == 5
    assert 0.5 < seen["budget"].seconds <= 0.9
    assert sorted(d.started_ids) == ["J2", "J3", "J4", "J5"]
    assert d.alternatives == () and d.stats.status is Status.FEASIBLE


@pytest.mark.parametrize("method, weights, started", [
    ("weighted", [1.0, 0.0], ["J1", "J5"]),              # nodes only: J1 + J5 fill 100 nodes
    ("weighted", [0.0, 1.0], ["J2", "J3", "J4", "J5"]),  # BB only: 90 TB against 20
    ("lexicographic", None, ["J1", "J5"]),               # nodes first (the model's order)
    ("lexicographic", "bb", ["J2", "J3", "J4", "J5"]),   # BB first
])
def test_a_scalar_form_answered_with_a_set_takes_the_best_of_it(recorder, method, weights,
                                                                 started):
    """NSGA-II answers a weighted or lexicographic form with its set: the policy takes the
    set's best by that form, not the backend's first solution."""
    recorder(lambda m: Result(Status.FEASIBLE, np.array(J1, bool), pareto=(
        _sol(m, J1), _sol(m, J15), _sol(m, J2345)), backend="records"))
    options = ({"priority": ["bb", "nodes"]} if weights == "bb" else {"weights": weights})
    d = bbopt.decide(table1_state(), WindowPolicy(method=method, backend="records", **options))
    assert d.started_ids == started and d.stats.status is Status.FEASIBLE
    assert d.alternatives == ()  # (the set is not the decision's Pareto set)


def test_a_set_with_a_fallback_status_is_read_as_its_solution(recorder):
    recorder(lambda m: Result(Status.FALLBACK, np.array(J1, bool), pareto=(
        _sol(m, J1), _sol(m, J2345)), backend="records"))
    d = bbopt.decide(table1_state(), WindowPolicy(method="weighted", backend="records",
                                                  weights=[0.0, 1.0]))
    assert d.started_ids == ["J1", "J4"]  # (J1 selected, J4 backfilled beside it)
    assert d.stats.status is Status.FALLBACK


def test_no_answer_gives_the_models_fallback(recorder):
    recorder(lambda m: Result(Status.INFEASIBLE, None, backend="records"))
    d = bbopt.decide(table1_state(), WindowPolicy(backend="records"))
    assert d.stats.status is Status.FALLBACK and d.stats.backend == "records"
    assert d.stats.objective == (90.0, 20 * TB)  # (the greedy's J1, with J4 backfilled)
    assert d.started_ids == ["J1", "J4"] and d.alternatives == ()


@pytest.mark.parametrize("method", ["in-order", "bin-packing"])
def test_the_rule_methods_use_the_greedy_backend(method):
    d = bbopt.decide(table1_state(), WindowPolicy(method=method))
    assert d.stats.backend == "greedy"
    assert d.started_ids == {"in-order": ["J1", "J4"], "bin-packing": ["J1", "J5"]}[method]


def test_an_empty_window_names_no_backend():
    empty = table1_state()
    d = bbopt.decide(bbopt.ClusterState(0.0, empty.platform, (), ()), WindowPolicy())
    assert d.stats.backend == "none" and d.started_ids == []
    assert d.stats.status is Status.OPTIMAL and d.stats.objective == ()
    assert d.alternatives == () and d.reservations == ()


def test_the_budget_counts_the_time_spent_before_the_policy_was_asked(recorder, monkeypatch):
    """Asked 0.5 s into a 2 s decision, on a clock that stands still from then on: the backend
    gets 2 s less the tail's 10 % (0.2 s) and less the 0.5 s spent: 1.3 s, not 1.8 or 1.9."""
    import time

    from bbopt.core import decide_planned, decision_asked

    seen = recorder(lambda m: Result(Status.FEASIBLE, np.array(J2345, bool), 1.0,
                                     backend="records"))
    policy = WindowPolicy(method="weighted", backend="records", budget=2.0)
    now = time.perf_counter()
    monkeypatch.setattr(time, "perf_counter", lambda: now)
    with decision_asked(now - 0.5):
        d = decide_planned(policy, table1_state())
    monkeypatch.undo()
    assert seen["budget"].seconds == pytest.approx(1.3, abs=1e-9)
    assert d.stats.budget == 2.0  # (the decision's own budget, in its report)


@pytest.mark.parametrize("method", ["in-order", "bin-packing"])
def test_the_rule_methods_give_the_greedy_backend_the_budget_and_seed(monkeypatch, method):
    import bbopt.policies.window as window

    asked = []

    def solve(model, backend, budget, seed, **options):
        asked.append((backend, budget.seconds, seed, options))
        return window_solve(model, backend, budget, seed, **options)

    window_solve = window.solve
    monkeypatch.setattr(window, "solve", solve)
    bbopt.decide(table1_state(), WindowPolicy(method=method, seed=7, budget=1.0))
    [(backend, seconds, seed, options)] = asked
    assert (backend, seed, options) == ("greedy", 7, {"rule": method})
    assert 0.5 < seconds <= 0.9

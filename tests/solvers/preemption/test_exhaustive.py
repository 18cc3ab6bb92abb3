"""The exhaustive victim choice (the reference of the exact backends): every subset of at most
20 candidates enumerated in chunks, the optimum reported as its own bound."""

from __future__ import annotations

import pytest

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.solvers import Budget, solve
from bbopt.solvers.base import BudgetExceeded
from bbopt.solvers.preemption import exhaustive
from bbopt.solvers.preemption.exhaustive import MAX_CANDIDATES, solve_exhaustive
from tests._slow_clock import SlowClock
from tests.solvers.test_preemption import victims_model as _model


def test_exhaustive_reports_the_optimum_as_its_bound():
    m = _model([1, 1, 2], [2.0, 2.0, 5.0], need_nodes=2, penalty=0.5)
    r = solve(m, "exhaustive", Budget(10.0))
    assert (r.status, r.objective, r.bound, r.backend) == (Status.OPTIMAL, 5.0, 5.0,
                                                           "exhaustive")


def test_exhaustive_enumerates_up_to_its_limit_of_candidates_and_refuses_more():
    assert MAX_CANDIDATES == 20
    cost = [float(20 - i) for i in range(20)]
    m = _model([1] * 20, cost, need_nodes=2)
    r = solve_exhaustive(m, Budget(600.0), 0)  # (a million sets: seconds on a loaded machine)
    assert r.status is Status.OPTIMAL and m.victims(r.solution) == ["v18", "v19"]
    big = _model([1] * 21, [1.0] * 21, need_nodes=2)
    with pytest.raises(InputError, match="limited to 20 candidates, got 21") as err:
        solve_exhaustive(big, Budget(10.0), 0)
    assert err.value.field == "candidates"


def test_exhaustive_keeps_the_first_of_equal_sets_across_its_chunks():
    # 17 candidates: the subsets holding v16 are enumerated in a second chunk of 2**16; {v0}
    # and {v16} cost the same, and the first found, {v0}, is kept
    cost = [1.0] + [9.0] * 15 + [1.0]
    m = _model([1] * 17, cost, need_nodes=1)
    r = solve_exhaustive(m, Budget(10.0), 0)
    assert m.victims(r.solution) == ["v0"]
    # and a cheaper set in the second chunk replaces the first chunk's best
    m = _model([1] * 17, [1.0] + [9.0] * 15 + [0.5], need_nodes=1)
    assert m.victims(solve_exhaustive(m, Budget(10.0), 0).solution) == ["v16"]


def test_exhaustive_answers_no_victim_for_no_deficit():
    # nothing to free: the empty set (code 0, the first enumerated) is the optimum, cost 0,
    # not the cheapest single victim
    m = _model([1, 1], [2.0, 1.0], need_nodes=0)
    r = solve_exhaustive(m, Budget(10.0), 0)
    assert (r.status, r.objective, r.bound) == (Status.OPTIMAL, 0.0, 0.0)
    assert r.solution.dtype == bool and not r.solution.any()


def test_exhaustive_goes_on_past_a_chunk_without_a_covering_set():
    # 17 candidates: only v16 brings BB, and it is enumerated in the second chunk alone
    m = _model([1] * 17, [1.0] * 17, need_nodes=1, bb=[0.0] * 16 + [10.0], need_bb=10.0)
    r = solve_exhaustive(m, Budget(10.0), 0)
    assert r.status is Status.OPTIMAL and m.victims(r.solution) == ["v16"]
    assert r.solution.dtype == bool


@pytest.mark.parametrize(("seconds", "runs_out"), [(1.5, True), (2.0, False), (2.5, False)])
def test_exhaustive_checks_its_budget_before_each_chunk(monkeypatch, seconds, runs_out):
    # the deadline is read at 0 s; the two chunks of 17 candidates are entered at 1 s and 2 s:
    # a deadline before 2 s stops the enumeration, one at 2 s or later does not
    monkeypatch.setattr(exhaustive, "_time", SlowClock(1.0))
    m = _model([1] * 17, [1.0] * 17, need_nodes=1, bb=[0.0] * 16 + [10.0], need_bb=10.0)
    if runs_out:
        with pytest.raises(BudgetExceeded):
            solve_exhaustive(m, Budget(seconds), 0)
    else:
        assert m.victims(solve_exhaustive(m, Budget(seconds), 0).solution) == ["v16"]


def test_exhaustive_names_itself_in_each_answer():
    covered = solve_exhaustive(_model([1, 1], [1.0, 2.0], need_nodes=1), Budget(10.0), 0)
    short = solve_exhaustive(_model([1, 1], [1.0, 1.0], need_nodes=3), Budget(10.0), 0)
    assert (covered.status, covered.backend) == (Status.OPTIMAL, "exhaustive")
    assert (short.status, short.solution, short.backend) == (Status.INFEASIBLE, None,
                                                             "exhaustive")

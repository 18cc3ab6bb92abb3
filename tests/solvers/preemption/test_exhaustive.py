"""The exhaustive victim choice (the reference of the exact backends): every subset of at most
20 candidates enumerated in chunks, the optimum reported as its own bound."""

from __future__ import annotations

import pytest

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.solvers import Budget, solve
from bbopt.solvers.preemption.exhaustive import MAX_CANDIDATES, solve_exhaustive
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
    r = solve_exhaustive(m, Budget(10.0), 0)
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

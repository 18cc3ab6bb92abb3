"""The two-list enumeration of the nodes/BB front (Fan et al., BBSched, Section 3.2, solved
exactly): when it answers, its front is the exhaustive one, its selections are feasible and
keep the forced jobs; when it gives up, the solvers still produce the same exact front."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import GB, Status
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget, solve
from bbopt.solvers.window.forms import linear_form
from bbopt.solvers.window.subset_sums import two_capacity_front
from tests.solvers.window.test_forms_fronts import front, hard_window


@st.composite
def windows(draw) -> WindowModel:
    w = draw(st.integers(1, 12))
    nodes = draw(st.lists(st.sampled_from([1, 2, 3, 4, 8, 16]), min_size=w, max_size=w))
    bb = draw(st.lists(st.one_of(st.just(0), st.integers(1, 40)), min_size=w, max_size=w))
    forced = draw(st.lists(st.booleans(), min_size=w, max_size=w))
    free_nodes = draw(st.integers(1, 40))
    free_bb = draw(st.integers(0, 120))
    nodes_a, bb_a = np.array(nodes), np.array(bb)
    forced_a = np.array(forced) & (np.cumsum(nodes_a * forced) <= free_nodes) & \
        (np.cumsum(bb_a * forced) <= free_bb)
    return WindowModel(nodes=nodes_a, bb=bb_a * GB, free_nodes=free_nodes,
                       free_bb=free_bb * GB, forced=forced_a, total_nodes=64,
                       total_bb=200 * GB)


def listed_front(m: WindowModel, pair_limit: int = 10**6) -> list[np.ndarray] | None:
    lf = linear_form(m, ["nodes", "bb"])
    (cn, _, un), (cb, _, ub) = lf.rows[0], lf.rows[1]
    return two_capacity_front(cn, cb, un, ub, ~lf.fix0 & ~lf.fix1, lf.fix1.copy(), pair_limit)


@settings(max_examples=120, deadline=None)
@given(windows())
def test_two_list_front_is_the_exhaustive_front(m):
    xs = listed_front(m)
    ref = solve(m, "exhaustive", Budget(30.0))
    if ref.status is Status.INFEASIBLE:
        assert xs == []
        return
    assert xs is not None
    X = np.array(xs, dtype=bool)
    assert np.all(m.feasible_many(X))
    assert np.all(X[:, m.forced]) if m.forced is not None else True
    assert sorted(tuple(m.evaluate(x)) for x in X) == front(ref)


def test_two_list_gives_up_past_its_pair_limit_and_the_solver_takes_over():
    m = hard_window(8)
    assert listed_front(m, pair_limit=10) is None
    listed = solve(m, "cpsat", Budget(30.0))
    solved = solve(m, "cpsat", Budget(30.0), two_list=False)
    assert listed.info["front_by"] == "enumeration"
    assert solved.info["front_by"] == "solver"
    assert front(listed) == front(solved)
    assert len(listed.pareto) == 13


@pytest.mark.parametrize("index", [7, 10, 14, 17, 18])
def test_enumerated_front_equals_cpsat_epsilon_constraint_at_w50(index):
    m = hard_window(index)
    a = solve(m, "cpsat", Budget(60.0))
    b = solve(m, "cpsat", Budget(60.0), two_list=False)
    assert a.status is b.status is Status.OPTIMAL
    assert front(a) == front(b)
    assert all(m.feasible(s.x) for s in a.pareto)

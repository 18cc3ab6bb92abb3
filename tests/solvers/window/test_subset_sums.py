"""The two-list enumeration of the nodes/BB front (Fan et al., BBSched, Section 3.2, solved
exactly): when it answers, its front is the exhaustive one, its selections are feasible and
keep the forced jobs; when it gives up, the solvers still produce the same exact front."""

from __future__ import annotations

import types

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import GB, Status
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget, solve
from bbopt.solvers.scalarize import TIEBREAK
from bbopt.solvers.window.forms import linear_form
from bbopt.solvers.window.subset_sums import (
    MAX_SUBSET_SUM_BITS,
    capacity_rows,
    corner_witness,
    reachable_max,
    subset_with_sum,
    tighten_rows,
    two_capacity_front,
)
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


@pytest.mark.parametrize("cap, base, best", [
    (11, 0, 10),   # 3 + 7 (the 11 is not reachable)
    (10, 0, 10),   # exactly reachable
    (9, 0, 8),     # 3 + 5
    (11, 2, 10),   # 2 fixed, 9 of room: 3 + 5
    (2, 2, 2),     # no room: the fixed sum alone
    (1, 2, None),  # the fixed jobs already over the capacity
])
def test_reachable_max_by_hand(cap, base, best):
    assert reachable_max(np.array([3, 5, 7]), cap, np.ones(3, bool), base) == best


def test_reachable_max_counts_only_the_free_jobs_and_no_larger_capacity_than_its_bitset():
    coeffs = np.array([3, 5, 7, 0, 4])
    assert reachable_max(coeffs, 4, np.array([1, 1, 1, 1, 0], bool)) == 3  # the 4 not free
    assert reachable_max(coeffs, 4, np.ones(5, bool)) == 4  # a job of exactly the room
    big = MAX_SUBSET_SUM_BITS
    assert reachable_max(np.array([big, 1]), big, np.ones(2, bool)) == big
    assert reachable_max(np.array([big, 1]), big + 1, np.ones(2, bool)) is None
    assert reachable_max(np.array([big, 1]), big + 1, np.ones(2, bool), base=1) == big + 1


@pytest.mark.parametrize("target, chosen", [
    (12, [1, 2]), (10, [0, 2]), (3, [0]), (0, []), (15, [0, 1, 2]), (11, None), (-1, None),
])
def test_subset_with_sum_by_hand(target, chosen):
    got = subset_with_sum(np.array([3, 5, 7]), target)
    assert (None if got is None else list(got)) == chosen


def test_subset_with_sum_up_to_its_bitset():
    big = MAX_SUBSET_SUM_BITS
    assert list(subset_with_sum(np.array([1, big - 1]), big)) == [0, 1]
    assert subset_with_sum(np.array([1, big]), big + 1) is None


def test_tighten_rows_lowers_each_capacity_row_to_its_largest_sum():
    """10 free nodes for jobs of 4, 4 and 4 nodes: at most 8; 10 GB of BB for 3 + 3 GB (with
    the first job forced): 6. A row with a negative coefficient (an auxiliary one) is kept."""
    m = WindowModel(nodes=[4, 4, 4], bb=[3 * GB, 3 * GB, 0.0], free_nodes=10, free_bb=10 * GB,
                    forced=[True, False, False])
    lf = linear_form(m, ["nodes", "bb"])
    unit = m.integer_form().bb_unit
    assert [int(r[2]) for r in lf.rows] == [8, round(6 * GB / unit)]
    rows = [(np.array([4, -4, 4]), np.zeros(0, np.int64), 10)]
    form = types.SimpleNamespace(k=0, fix0=np.zeros(3, bool), fix1=np.zeros(3, bool),
                                 rows=list(rows), objectives={})
    tighten_rows(form)
    assert form.rows[0][2] == 10


def test_capacity_rows_only_for_the_two_capacity_objectives():
    m = WindowModel(nodes=[4, 2], bb=[3 * GB, 5 * GB], free_nodes=5, free_bb=6 * GB)
    lf = linear_form(m, ["nodes", "bb"])
    c1, c2, cap1, cap2 = capacity_rows(lf, "nodes", "bb")
    # (the node row tightened to 4: 4 + 2 is over 5)
    assert list(c1) == [4, 2] and cap1 == 4 and list(c2) == list(lf.rows[1][0])
    assert capacity_rows(lf, "bb", "nodes")[2:] == (cap2, cap1)
    assert capacity_rows(lf, "nodes", "nodes") is None  # the same row twice
    assert capacity_rows(lf, "nodes", TIEBREAK) is None  # not a capacity row
    ssd = WindowModel(nodes=[1], bb=[0.0], free_nodes=2, free_bb=0.0, ssd=[GB],
                      free_node_ssd=[GB, 2 * GB], objectives=("nodes", "bb", "ssd", "ssd_waste"))
    assert capacity_rows(linear_form(ssd, ["nodes", "bb", "ssd_waste"]), "nodes", "bb") is None
    assert corner_witness(linear_form(ssd, ["nodes", "bb", "ssd_waste"]), "nodes", "bb") is None


def test_corner_witness_fills_the_bb_then_the_nodes():
    """5 nodes, 6 GB free: the BB bound 6 GB is reached by J1 + J2 (3 + 3 GB, 2 nodes); the
    nodes left (3) are filled by the BB-free J3 (3 nodes): 5 nodes, both at their bounds. The
    other 6 GB selection, J0 (6 GB, 4 nodes), leaves 1 node, which J3 does not fit."""
    m = WindowModel(nodes=[4, 1, 1, 3], bb=[6 * GB, 3 * GB, 3 * GB, 0.0], free_nodes=5,
                    free_bb=6 * GB)
    lf = linear_form(m, ["nodes", "bb"])
    x = corner_witness(lf, "nodes", "bb")
    assert list(x) == [False, True, True, True]
    # no BB job fits 2 GB: the BB row is tightened to 0, reached by selecting nothing
    none = WindowModel(nodes=[4, 1], bb=[6 * GB, 3 * GB], free_nodes=5, free_bb=2 * GB)
    assert list(corner_witness(linear_form(none, ["nodes", "bb"]), "nodes", "bb")) == [
        False, False]


def test_a_form_with_ssd_level_rows_has_no_two_capacity_front():
    """Nodes and BB objectives on SSDs of two sizes: the level rows are constraints too, so
    the two capacity rows are not the whole form."""
    m = WindowModel(nodes=[1, 1], bb=[0.0, GB], free_nodes=2, free_bb=GB,
                    ssd=[100 * GB, 100 * GB], free_node_ssd=[50 * GB, 100 * GB])
    lf = linear_form(m, ["nodes", "bb"])
    assert lf.k == 0 and len(lf.rows) == 3
    assert capacity_rows(lf, "nodes", "bb") is None


def test_the_band_goes_on_the_row_of_larger_capacity():
    """6 free nodes, 3 MB of BB (3 units): the nodes are the smaller capacity here; the front
    is the same, {J0, J1} (6 nodes, 2 MB) and {J0, J2} (5 nodes, 3 MB)."""
    from bbopt.solvers.window.subset_sums import capacity_front

    m = WindowModel(nodes=[4, 2, 1], bb=[1e6, 1e6, 2e6], free_nodes=6, free_bb=3e6)
    lf = linear_form(m, ["nodes", "bb"])
    assert lf.rows[0][2] > lf.rows[1][2]
    xs = capacity_front(lf, "nodes", "bb")
    assert sorted(tuple(m.evaluate(x)) for x in xs) == [(5.0, 3e6), (6.0, 2e6)]


@pytest.mark.parametrize("fixed_nodes, front_", [
    (2, [[True, False]]),  # the forced job takes the 2 free nodes: it alone, nothing beside
    (3, []),  # the forced job is over the node capacity (its BB fits): no selection at all
])
def test_forced_jobs_over_either_capacity_leave_no_front(fixed_nodes, front_):
    got = two_capacity_front(np.array([fixed_nodes, 1]), np.array([1, 1]), 2, 5,
                             np.array([False, True]), np.array([True, False]))
    assert [list(x) for x in got] == front_


@pytest.mark.parametrize("bb", [10, 9, 8, 7, 6, 5, 4, 2, 1])
def test_a_lone_job_is_found_in_whichever_band_holds_its_bb(bb):
    """10 units of BB: the bands go down from the capacity, [9, 10], [8, 8], [6, 7], [2, 5],
    [0, 1]; a lone job of 1 node is the whole front whatever band its BB falls in (one BB unit
    below a band's edge included)."""
    got = two_capacity_front(np.array([1]), np.array([bb]), 1, 10, np.ones(1, bool),
                             np.zeros(1, bool))
    assert [list(x) for x in got] == [[True]]


def test_a_job_whose_ssd_no_node_holds_is_neither_in_the_front_nor_the_witness():
    """One SSD size (no level row: the form is the two capacity rows): J0 asks 100 GB of SSD on
    nodes of 50 GB, so it is never selected, though its 2 nodes and 2 GB would beat both J1
    (2 nodes, no BB) and J2 (1 node, 2 GB) on 2 free nodes and 2 GB. The front is {J1}, {J2};
    the corner (2 GB) is J2, with no node left for J1."""
    from bbopt.solvers.window.subset_sums import capacity_front

    m = WindowModel(nodes=[2, 2, 1], bb=[2 * GB, 0.0, 2 * GB], free_nodes=2, free_bb=2 * GB,
                    ssd=[100 * GB, 0.0, 0.0], free_node_ssd=[50 * GB, 50 * GB])
    lf = linear_form(m, ["nodes", "bb"])
    assert len(lf.rows) == 2 and list(lf.fix0) == [True, False, False]
    xs = capacity_front(lf, "nodes", "bb")
    assert sorted(tuple(m.evaluate(x)) for x in xs) == [(1.0, 2 * GB), (2.0, 0.0)]
    assert not any(x[0] for x in xs)
    assert list(corner_witness(lf, "nodes", "bb")) == [False, False, True]


def test_the_corner_witness_counts_the_forced_jobs_in_both_capacities():
    """J0 forced (1 node, 1 GB) on 3 nodes and 3 GB: 2 GB are left for the free jobs, reached by
    J2 (1 node) alone, not J1 + J2 (3 GB); 1 node is then left, which the BB-free J3 (2 nodes)
    does not fit. The witness is J0 + J2: 2 nodes, 3 GB."""
    m = WindowModel(nodes=[1, 1, 1, 2], bb=[GB, GB, 2 * GB, 0.0], free_nodes=3, free_bb=3 * GB,
                    forced=[True, False, False, False])
    lf = linear_form(m, ["nodes", "bb"])
    assert int(lf.rows[0][2]) == 3
    x = corner_witness(lf, "nodes", "bb")
    assert list(x) == [True, False, True, False]
    assert tuple(m.evaluate(x)) == (2.0, 3 * GB)

"""The exhaustive select-and-place window (the reference of the exact backends; Herbein et al.,
HPDC 2016, Section 3.4, and Fan et al., BBSched, Section 3.2.2): the count vectors it
enumerates, the placement search's capacity rows and budget checks, its limits and forms."""

from __future__ import annotations

import types

import numpy as np
import pytest

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.models.io_window import IOWindowModel
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget
from bbopt.solvers.base import BudgetExceeded
from bbopt.solvers.io_window import exhaustive
from bbopt.solvers.io_window.exhaustive import _rows, find_placement, solve_exhaustive
from tests._slow_clock import SlowClock
from tests.models.test_io_window_evaluation import herbein_case, one_vertex

INF = float("inf")


def _rows_of(n, hi):
    out = list(_rows(n, np.array(hi, dtype=np.int64)))
    assert all(r.dtype == np.int64 for r in out)
    return [r.tolist() for r in out]


def test_rows_are_every_count_vector_within_the_bounds_largest_first():
    assert _rows_of(2, [2, 1]) == [[2, 0], [1, 1]]
    assert _rows_of(2, [1, 1, 1]) == [[1, 1, 0], [1, 0, 1], [0, 1, 1]]
    assert _rows_of(3, [1, 1]) == []
    # the first group's least count comes from what all the others can take
    assert _rows_of(8, [1, 1, 1, 5]) == [[1, 1, 1, 5]]
    # no group: one empty vector for no node, none for a node
    assert _rows_of(0, []) == [[]] and _rows_of(1, []) == []


def _singles(jobs, groups, bandwidth=0.0, vertex=None) -> IOWindowModel:
    """``jobs`` (node counts) on ``groups`` free nodes, each its own group with an unlimited
    link; one vertex of ``vertex`` B/s above all of them when given."""
    window = WindowModel(nodes=jobs, bb=[0.0] * len(jobs), free_nodes=groups, free_bb=0.0)
    members = [[True] * groups] if vertex is not None else np.zeros((0, groups), bool)
    return IOWindowModel(window=window, bandwidth=[bandwidth] * len(jobs),
                         group_nodes=tuple([g] for g in range(groups)),
                         group_link=[INF] * groups, vertices=[0] if vertex else [],
                         vertex_avail=[vertex] if vertex else [], membership=members)


def test_a_vertex_may_be_loaded_to_its_capacity_and_not_beyond():
    # three nodes at 100 B/s under a vertex of 300 B/s: exactly full; at 100.2 B/s 0.6 B/s over
    exact = find_placement(one_vertex(100.0), np.array([True]))
    assert exact.dtype == np.int64 and exact.tolist() == [[3]]
    assert find_placement(one_vertex(100.2), np.array([True])) is None
    # the search's absolute slack: 1e-6 B/s above a vertex with nothing left is still room
    window = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0)
    for bandwidth, fits in ((1e-6, True), (2e-6, False)):
        m = IOWindowModel(window=window, bandwidth=[bandwidth], group_nodes=([0],),
                          group_link=[INF], vertices=[0], vertex_avail=[0.0],
                          membership=[[True]])
        assert (find_placement(m, np.array([True])) is not None) is fits, bandwidth


def test_two_jobs_share_a_group_only_within_its_free_nodes():
    window = WindowModel(nodes=[2, 2], bb=[0.0, 0.0], free_nodes=4, free_bb=0.0)
    m = IOWindowModel(window=window, bandwidth=[0.0, 0.0], group_nodes=([0, 1, 2], [3]),
                      group_link=[INF, INF], vertices=[], vertex_avail=[],
                      membership=np.zeros((0, 2), bool))
    y = find_placement(m, np.array([True, True]))
    assert y.tolist() == [[2, 0], [1, 1]]  # the first job fills the first group first
    # (a 2-node job first when a 1-node one is selected before it: big jobs placed first)
    window = WindowModel(nodes=[1, 2], bb=[0.0, 0.0], free_nodes=3, free_bb=0.0)
    m = IOWindowModel(window=window, bandwidth=[0.0, 0.0], group_nodes=([0, 1], [2]),
                      group_link=[INF, INF], vertices=[], vertex_avail=[],
                      membership=np.zeros((0, 2), bool))
    assert find_placement(m, np.array([True, True])).tolist() == [[0, 1], [2, 0]]


def test_the_search_reads_the_clock_at_every_256th_step():
    past = -1.0  # a deadline already passed
    # jobs of 2, 2, 2 and 1 nodes on 6 single nodes: 196 steps before it fails, no clock read
    assert find_placement(_singles([2, 2, 2, 1], 6), np.ones(4, bool), past) is None
    # four jobs of 2 nodes on 7: 862 steps, the clock read at the 256th
    with pytest.raises(BudgetExceeded):
        find_placement(_singles([2, 2, 2, 2], 7), np.ones(4, bool), past)
    assert find_placement(_singles([2, 2, 2, 2], 7), np.ones(4, bool)) is None
    # jobs of 2, 1, 1 and 1 nodes at 100 B/s under 400 B/s: it fails at its 256th step, where
    # the clock is read
    with pytest.raises(BudgetExceeded):
        find_placement(_singles([2, 1, 1, 1], 6, bandwidth=100.0, vertex=400.0),
                       np.ones(4, bool), past)


def test_a_search_of_255_steps_never_reads_the_clock():
    # n jobs of one node on n single nodes: one step a job, each on the next node; with the
    # deadline passed, 255 steps end before the first reading, the 256th reads it
    past = -1.0
    y = find_placement(_singles([1] * 255, 255), np.ones(255, bool), past)
    assert y.tolist() == np.eye(255, dtype=np.int64).tolist()
    with pytest.raises(BudgetExceeded):
        find_placement(_singles([1] * 256, 256), np.ones(256, bool), past)


def test_the_search_goes_on_at_exactly_its_deadline(monkeypatch):
    monkeypatch.setattr(exhaustive, "_time", types.SimpleNamespace(perf_counter=lambda: 5.0))
    assert find_placement(_singles([2, 2, 2, 2], 7), np.ones(4, bool), 5.0) is None
    with pytest.raises(BudgetExceeded):
        find_placement(_singles([2, 2, 2, 2], 7), np.ones(4, bool), 4.9)


@pytest.mark.parametrize(("seconds", "runs_out"), [(5.0, True), (1000.0, False)])
def test_the_budget_stops_a_long_placement_search(monkeypatch, seconds, runs_out):
    # four jobs of 2 nodes at 100 B/s on 8 nodes under 700 B/s: all four fit by count but not
    # by bandwidth, which the search finds after thousands of steps
    monkeypatch.setattr(exhaustive, "_time", SlowClock(1.0))
    m = _singles([2, 2, 2, 2], 8, bandwidth=100.0, vertex=700.0)
    if runs_out:
        with pytest.raises(BudgetExceeded):
            solve_exhaustive(m, Budget(seconds), 0, form="weighted")
    else:
        r = solve_exhaustive(m, Budget(seconds), 0, form="weighted")
        assert m.selection(r.solution).sum() == 3 and r.info["placeable"] == 15


def test_windows_up_to_twelve_jobs_and_no_more():
    # twelve 1-node jobs on one free node: the empty selection and each job alone fit
    m = _singles([1] * 12, 1)
    r = solve_exhaustive(m, Budget(600.0), 0, form="weighted")
    assert (r.status, r.backend, r.info["placeable"]) == (Status.OPTIMAL, "exhaustive", 13)
    assert m.selection(r.solution).tolist() == [True] + [False] * 11
    with pytest.raises(InputError) as err:
        solve_exhaustive(_singles([1] * 13, 13), Budget(10.0), 0)
    assert (err.value.reason, err.value.field) == (
        "exhaustive select-and-place is limited to w <= 12, got 13", "w")


def test_lexicographic_priority_and_the_queue_order_tie_break():
    # herbein_case: {0, 2} and {1, 2} both start 3 nodes and 1 GB; the queue-order tie-break
    # takes the front job, without it the last selection enumerated stays
    m = herbein_case()
    r = solve_exhaustive(m, Budget(10.0), 0, form="lexicographic")
    assert m.selection(r.solution).tolist() == [True, False, True]
    assert r.objective == (3.0, 1e9) and r.info["placeable"] == 6
    r = solve_exhaustive(m, Budget(10.0), 0, form="lexicographic", tiebreak=False)
    assert m.selection(r.solution).tolist() == [False, True, True]
    r = solve_exhaustive(m, Budget(10.0), 0, form="lexicographic", priority=("bb", "nodes"))
    assert r.objective == (1e9, 3.0)

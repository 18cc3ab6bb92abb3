"""The ``exhaustive`` backend of the window model: every one of the ``2^w`` selections (Fan et
al., BBSched, Section 3.2.2), the reference the other backends are checked against; windows of
up to 22 jobs, capacity rows met in the middle chunk by chunk, the budget checked between
chunks."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from bbopt.core import GB, TB, Status
from bbopt.errors import InputError
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget, solve
from bbopt.solvers.base import BudgetExceeded
from bbopt.solvers.window.exhaustive import MAX_WINDOW, feasible_selections


def _all(model: WindowModel, deadline: float | None = None) -> set[tuple[int, ...]]:
    return {tuple(np.flatnonzero(x)) for X in feasible_selections(model, deadline) for x in X}


def test_a_window_of_22_jobs_is_enumerated_and_23_refused():
    assert MAX_WINDOW == 22
    ones = WindowModel(nodes=[1] * 22, bb=[0.0] * 22, free_nodes=1, free_bb=0.0)
    assert len(next(feasible_selections(ones))) >= 1
    more = WindowModel(nodes=[1] * 23, bb=[0.0] * 23, free_nodes=1, free_bb=0.0)
    with pytest.raises(InputError, match=r"^field 'w': exhaustive enumeration is limited to "
                                         r"w <= 22, got 23$"):
        next(feasible_selections(more))


@pytest.mark.parametrize("w", [5, 21, 22])
def test_every_feasible_selection_once_over_every_chunk(w):
    """One-node jobs on 2 free nodes: the empty selection, the w singles and the w(w-1)/2
    pairs. At 21 and 22 jobs the high half's 2^11 rows come in chunks (of 2^20 / 2^10 and
    2^20 / 2^11 rows): each selection once, none lost at a chunk's edge."""
    m = WindowModel(nodes=[1] * w, bb=[0.0] * w, free_nodes=2, free_bb=0.0)
    rows = [x for X in feasible_selections(m) for x in X]
    got = {tuple(np.flatnonzero(x)) for x in rows}
    assert len(rows) == len(got) == 1 + w + math.comb(w, 2)
    assert (w - 2, w - 1) in got and (0, w - 1) in got


def test_capacities_at_one_over_and_within_the_bb_slack():
    """3 free nodes and 10 GB: 2 + 1 nodes fit, 2 + 2 do not; 6 + 4 GB fit exactly, 10 GB and
    the fit slack (1e-9 of the platform's 20 GB: 20 B) too, 21 B over does not."""
    m = WindowModel(nodes=[2, 1, 2], bb=[6 * GB, 4 * GB, 0.0], free_nodes=3, free_bb=10 * GB,
                    total_bb=20 * GB)
    assert _all(m) == {(), (0,), (1,), (2,), (0, 1), (1, 2)}
    for extra, fits in ((20.0, True), (21.0, False)):
        m = WindowModel(nodes=[1, 1], bb=[6 * GB, 4 * GB + extra], free_nodes=3,
                        free_bb=10 * GB, total_bb=20 * GB)
        assert ((0, 1) in _all(m)) is fits, extra


def test_the_budget_is_checked_between_chunks():
    m = WindowModel(nodes=[1] * 8, bb=[0.0] * 8, free_nodes=2, free_bb=0.0)
    with pytest.raises(BudgetExceeded):
        next(feasible_selections(m, time.perf_counter() - 1.0))
    assert len(_all(m, time.perf_counter() + 60.0)) == 1 + 8 + 28


def test_table1_front_weighted_and_lexicographic():
    """Fan et al.'s Table 1 (100 nodes, 100 TB): the front {J1, J5} (100 nodes, 20 TB) and
    {J2, J3, J4, J5} (80 nodes, 90 TB); weighted 0.8/0.2 of the utilisations picks the first
    (0.84 against 0.82), BB first the second."""
    m = WindowModel(nodes=[80, 10, 40, 10, 20], bb=np.array([20, 85, 5, 0, 0]) * TB,
                    free_nodes=100, free_bb=100 * TB, total_nodes=100, total_bb=100 * TB)
    r = solve(m, "exhaustive", Budget(10.0))
    assert r.status is Status.OPTIMAL and r.backend == "exhaustive"
    assert [(m.selected(s.x), s.objectives) for s in r.pareto] == [
        ([0, 4], (100.0, 20 * TB)), ([1, 2, 3, 4], (80.0, 90 * TB))]
    assert r.info["enumerated"] == 32
    w = solve(m, "exhaustive", Budget(10.0), form="weighted", weights=(0.8, 0.2))
    assert m.selected(w.solution) == [0, 4] and w.objective == pytest.approx(0.84)
    lex = solve(m, "exhaustive", Budget(10.0), form="lexicographic", priority=("bb", "nodes"))
    assert m.selected(lex.solution) == [1, 2, 3, 4]
    assert w.info["objectives"] == (100.0, 20 * TB)


def test_equal_selections_go_to_the_window_front_over_chunks():
    """22 one-node jobs on one free node: every single is the same point (1 node, 0 B); the
    front keeps the first job's, and weighted and lexicographic forms too."""
    m = WindowModel(nodes=[1] * 22, bb=[0.0] * 22, free_nodes=1, free_bb=0.0)
    r = solve(m, "exhaustive", Budget(30.0))
    assert [m.selected(s.x) for s in r.pareto] == [[0]]
    for form in ("weighted", "lexicographic"):
        assert m.selected(solve(m, "exhaustive", Budget(30.0), form=form).solution) == [0]


def test_a_chunk_with_no_fitting_selection_does_not_end_the_enumeration():
    """22 jobs of one node on 2 free nodes, but job 20 asks 3: the high half's chunk of the
    selections holding job 20 and not 21 has no fitting one; job 21's chunk after it still
    counts."""
    m = WindowModel(nodes=[1] * 20 + [3, 1], bb=[0.0] * 22, free_nodes=2, free_bb=0.0)
    got = _all(m)
    assert (21,) in got and (0, 21) in got and not any(20 in s for s in got)
    assert len(got) == 1 + 21 + math.comb(21, 2)


def test_out_of_budget_on_a_large_window_falls_back():
    m = WindowModel(nodes=[1] * 22, bb=[0.0] * 22, free_nodes=11, free_bb=0.0)
    r = solve(m, "exhaustive", Budget(1e-6))
    assert r.status is Status.FALLBACK and m.feasible(r.solution)


def test_without_the_tie_break_the_first_enumerated_of_equals():
    """22 one-node jobs on one free node, weighted form: with the queue-order tie-break the
    first job; without it, the first single the enumeration meets (job 11: the empty low half
    with the high half's first job)."""
    from bbopt.solvers.window.exhaustive import solve_exhaustive

    m = WindowModel(nodes=[1] * 22, bb=[0.0] * 22, free_nodes=1, free_bb=0.0)
    r = solve_exhaustive(m, Budget(30.0), 0, form="weighted")
    assert m.selected(r.solution) == [0] and r.backend == "exhaustive"
    r = solve_exhaustive(m, Budget(30.0), 0, form="weighted", tiebreak=False)
    assert m.selected(r.solution) == [11]

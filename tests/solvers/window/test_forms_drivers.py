"""The drivers the exact window backends share (:mod:`bbopt.solvers.window.forms`; Fan et al.,
BBSched, Section 3.2, solved exactly): lexicographic stages, the disjunctive and sequential
epsilon-constraint fronts and the queue-order tie-break, run on an enumerating stand-in for a
solver whose answers (a proven optimum, an unproven one, none) and whose clock are scripted.
What they ask of the solver (rows pushed and popped, time, hints, work limits) and what they
make of each answer (status, selections, solves counted) are checked by hand."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from bbopt.core import GB, Status
from bbopt.errors import InputError
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget
from bbopt.solvers.base import BudgetExceeded
from bbopt.solvers.scalarize import TIEBREAK
from bbopt.solvers.window.forms import (
    TIEBREAK_WORK,
    Clock,
    LinearForm,
    linear_form,
    run_lexicographic,
    run_pareto,
    run_pareto_disjunctive,
    run_pareto_sequential,
    solve_exact,
)


class Enumerating:
    """An :class:`~bbopt.solvers.window.forms.IntSolver` that enumerates every ``(x, A)`` of a
    small form (the first best in enumeration order, proven OPTIMAL, bound = its value) and
    records each call. ``script[k]``: what the ``k``-th ``maximize`` answers instead,
    ``"feasible"`` (the same selection, not proven, its bound one unit above) or ``"none"``
    (no answer in time)."""

    def __init__(self, form: LinearForm, script: dict[int, str] | None = None) -> None:
        self.form = form
        self.script = script or {}
        self.pushed: dict[int, tuple[np.ndarray, np.ndarray, int]] = {}
        self.anys: list[list[tuple[np.ndarray, np.ndarray, int]]] = []
        self.calls: list[dict] = []
        self._next = 0

    def _points(self):
        f = self.form
        boxes = [range(int(h) + 1) for h in f.a_hi]
        for bits in itertools.product((0, 1), repeat=f.w):
            x = np.array(bits, dtype=np.int64)
            if np.any(x[f.fix0]) or not np.all(x[f.fix1]):
                continue
            for a in itertools.product(*boxes):
                a = np.array(a, dtype=np.int64)
                if all(cx @ x + ca @ a <= ub for cx, ca, ub in f.rows) and \
                        all(cx @ x + ca @ a >= r for cx, ca, r in self.pushed.values()) and \
                        all(any(cx @ x + ca @ a >= r for cx, ca, r in t) for t in self.anys):
                    yield x, a

    def maximize(self, cx, ca, seconds, hint=None, work=None):
        self.calls.append({"cx": np.array(cx), "seconds": seconds,
                           "hint": None if hint is None else np.array(hint, dtype=bool),
                           "work": work, "rows": len(self.pushed)})
        best = None
        for x, a in self._points():
            v = int(cx @ x + (ca @ a if self.form.k else 0))
            if best is None or v > best[0]:
                best = (v, x, a)
        reply = self.script.get(len(self.calls) - 1)
        if reply == "none":
            return Status.FALLBACK, None, None, None
        if best is None:
            return Status.INFEASIBLE, None, None, None
        if reply == "feasible":  # (the bound one unit above)
            return Status.FEASIBLE, best[1].astype(bool), best[2], float(best[0] + 1)
        return Status.OPTIMAL, best[1].astype(bool), best[2], float(best[0])

    def push_ge(self, cx, ca, rhs):
        self._next += 1
        self.pushed[self._next] = (np.array(cx), np.array(ca), int(rhs))
        return self._next

    def pop(self, handle) -> None:
        del self.pushed[handle]

    def add_any_ge(self, terms) -> None:
        self.anys.append([(np.array(cx), np.array(ca), int(r)) for cx, ca, r in terms])


class Scripted(Clock):
    """A clock whose ``left()`` answers ``lefts`` one after another (the last one again)."""

    def __init__(self, *lefts: float, mode: str = "wall") -> None:
        super().__init__(Budget(10.0, mode=mode) if mode == "wall" else Budget.of(10.0, 5.0, mode))
        self.lefts = list(lefts)

    def left(self) -> float:
        return self.lefts.pop(0) if len(self.lefts) > 1 else self.lefts[0]


#: 6 free nodes, 10 GB: J0 (4 nodes, 2 GB), J1 and J2 (2 nodes, 5 GB each: interchangeable,
#: J1 nearer the window front). Front: {J0, J1} (6 nodes, 7 GB), {J1, J2} (4 nodes, 10 GB).
MODEL = WindowModel(nodes=[4, 2, 2], bb=[2 * GB, 5 * GB, 5 * GB], free_nodes=6,
                    free_bb=10 * GB, total_nodes=8, total_bb=20 * GB)
NAMES = ("nodes", "bb")


def form() -> LinearForm:
    return linear_form(MODEL, NAMES)


def test_lexicographic_stages_then_a_work_limited_tie_break():
    lf = form()
    s = Enumerating(lf)
    stages = [{"nodes": 1}, {"bb": 1}, {TIEBREAK: 1}]
    outcome, x, a, bounds = run_lexicographic(s, lf, stages, Scripted(9.0))
    assert outcome is Status.OPTIMAL and list(x) == [True, True, False]
    nodes, bb = (int(v) for v in (lf.objectives["nodes"][0] @ x, lf.objectives["bb"][0] @ x))
    assert nodes == 6 and [b[0] for b in bounds] == [6, bb]
    # Each stage given what is left, the next one under the last optimum; the tie-break
    # hinted with the selection, capped at 4 x its work of 0.01 (wall mode) and the work limit.
    assert [(c["seconds"], c["work"], c["rows"]) for c in s.calls] == [
        (9.0, None, 0), (9.0, None, 1), (4 * TIEBREAK_WORK, TIEBREAK_WORK, 2)]
    # (the enumeration's first 6-node selection is {J0, J2}: the tie-break moves it to J1)
    assert s.calls[0]["hint"] is None and list(s.calls[2]["hint"]) == [True, False, True]
    assert not s.pushed  # every stage row popped
    # In the deterministic mode the tie-break's wall cap is what is left, its work the limit.
    s = Enumerating(lf)
    run_lexicographic(s, lf, stages, Scripted(9.0, mode="deterministic"))
    assert (s.calls[2]["seconds"], s.calls[2]["work"]) == (9.0, TIEBREAK_WORK)


def test_a_tie_break_stage_first_is_solved_as_a_stage():
    lf = form()
    s = Enumerating(lf)
    outcome, x, _, bounds = run_lexicographic(s, lf, [{TIEBREAK: 1}], Scripted(9.0))
    assert outcome is Status.OPTIMAL and bounds and s.calls[0]["work"] is None


@pytest.mark.parametrize("lefts, outcome, solved", [
    ((0.0,), Status.FALLBACK, 0),            # nothing left before the first stage
    ((-1.0,), Status.FALLBACK, 0),
    ((0.5, 0.0), Status.FEASIBLE, 1),        # the first stage's answer, unproven as a whole
    ((0.5, 0.5, 0.5), Status.OPTIMAL, 2),    # half a second is still time
])
def test_lexicographic_out_of_time(lefts, outcome, solved):
    lf = form()
    s = Enumerating(lf)
    got, x, _, bounds = run_lexicographic(s, lf, [{"nodes": 1}, {"bb": 1}], Scripted(*lefts))
    assert got is outcome and len(s.calls) == solved == len(bounds)
    assert (x is None) is (solved == 0)


@pytest.mark.parametrize("script, outcome, stages_done", [
    ({0: "none"}, Status.FALLBACK, 0),
    ({1: "none"}, Status.FEASIBLE, 1),
    ({0: "feasible"}, Status.FEASIBLE, 1),   # an unproven stage ends the stages
])
def test_lexicographic_answers_without_proof(script, outcome, stages_done):
    lf = form()
    s = Enumerating(lf, script)
    got, x, _, bounds = run_lexicographic(s, lf, [{"nodes": 1}, {"bb": 1}], Scripted(9.0))
    assert got is outcome and len(bounds) == stages_done
    assert (x is None) is (stages_done == 0)
    if stages_done:  # the first stage's selection (6 nodes, the enumeration's first)
        assert list(x) == [True, False, True]
    assert not s.pushed


def test_lexicographic_values_count_the_assigned_ssd_levels():
    """Wasted SSD on two 50 GB and two 100 GB free nodes: a forced 1-node job asking 40 GB goes
    on a 50 GB node (10 GB wasted), not a 100 GB one. The stage's value (its bound) counts the
    levels' assigned nodes (the A variables) with the selection, in the form's integer units:
    minus 10 GB."""
    m = WindowModel(nodes=[1], bb=[0.0], free_nodes=4, free_bb=0.0, ssd=[40 * GB],
                    free_node_ssd=[50 * GB, 50 * GB, 100 * GB, 100 * GB],
                    objectives=("nodes", "bb", "ssd", "ssd_waste"), forced=[True])
    lf = linear_form(m, ["ssd_waste"])
    assert lf.k == 2
    outcome, x, a, bounds = run_lexicographic(Enumerating(lf), lf, [{"ssd_waste": 1}],
                                              Scripted(9.0))
    cx, ca = lf.objectives["ssd_waste"]
    assert list(x) == [True] and int(ca @ a) != 0
    value = int(cx @ x.astype(np.int64) + ca @ a)
    assert bounds[0][0] == value == round(-10 * GB / m.integer_form().ssd_unit)


def test_disjunctive_front_its_solves_and_the_canonical_selection():
    lf = form()
    s = Enumerating(lf)
    complete, xs, solves = run_pareto_disjunctive(s, lf, NAMES, Scripted(9.0))
    assert complete and solves == 3 == len(s.calls)  # two points and the infeasible third
    # the largest sum first ({J1, J2}: 4 + 10 GB); J1, not J2, beside J0 (the nearer the
    # window front of two equal jobs), though the enumeration found {J0, J2} first
    assert [list(x) for x in xs] == [[False, True, True], [True, True, False]]
    assert all(x.dtype == bool for x in xs)
    # The plain sum of the objectives, each with weight one.
    cn, cb = lf.objectives["nodes"][0], lf.objectives["bb"][0]
    assert np.array_equal(s.calls[0]["cx"], cn + cb)
    _, raw, _ = run_pareto_disjunctive(Enumerating(lf), lf, NAMES, Scripted(9.0),
                                       tiebreak=False)
    assert [list(x) for x in raw] == [[False, True, True], [True, False, True]]


def test_disjunctive_tie_break_by_the_solver_counts_its_solves():
    lf = form()
    s = Enumerating(lf)
    complete, xs, solves = run_pareto_disjunctive(s, lf, NAMES, Scripted(9.0),
                                                  tiebreak="solver")
    assert complete and solves == 5 == len(s.calls)  # 3 front solves, 2 tie-breaks
    ties = [c for c in s.calls if c["work"] is not None]
    assert [(c["seconds"], c["work"], c["rows"]) for c in ties] == [
        (4 * TIEBREAK_WORK, TIEBREAK_WORK, 2)] * 2
    assert np.array_equal(ties[0]["cx"], lf.objectives[TIEBREAK][0])
    assert ties[0]["hint"] is not None and not s.pushed


@pytest.mark.parametrize("lefts, script, complete, points, solves", [
    ((0.0,), {}, False, 0, 0),
    ((0.5,), {}, True, 2, 3),
    ((9.0,), {1: "feasible"}, False, 2, 2),  # an unproven point ends the front, incomplete
    ((9.0,), {1: "none"}, False, 1, 2),
    ((9.0, 9.0, 0.0), {}, False, 2, 2),
])
def test_disjunctive_front_cut_short(lefts, script, complete, points, solves):
    lf = form()
    s = Enumerating(lf, script)
    got = run_pareto_disjunctive(s, lf, NAMES, Scripted(*lefts))
    assert (got[0], len(got[1]), got[2]) == (complete, points, solves)


@pytest.mark.parametrize("method", ["disjunctive", "sequential"])
def test_at_most_max_points(method):
    lf = form()
    complete, xs, _ = run_pareto(Enumerating(lf), lf, NAMES, Scripted(9.0), max_points=1,
                                 method=method, two_list=False)
    assert not complete and len(xs) == 1


def test_sequential_front_by_the_solver_and_its_defaults():
    """Without the two-list enumeration the sequential front asks the solver point by point;
    by default (two_list) the capacity rows' front is listed without a solve, and the
    tie-break picks J1 over J2."""
    lf = form()
    s = Enumerating(lf)
    complete, xs, solves = run_pareto_sequential(s, lf, NAMES, Scripted(9.0), two_list=False)
    assert complete and solves == len(s.calls) == 3  # f1, then f2 at it; twice; infeasible
    assert [list(x) for x in xs] == [[True, True, False], [False, True, True]]
    s = Enumerating(lf)
    complete, listed, solves = run_pareto_sequential(s, lf, NAMES, Scripted(9.0))
    assert complete and solves == 0 == len(s.calls)
    assert [list(x) for x in listed] == [list(x) for x in xs]


def test_sequential_front_ends_at_a_corner_without_a_solve():
    """4 free nodes, 5 GB: J0 (2 nodes, 5 GB) and J1 (2 nodes): {J0, J1} has both objectives
    at their bounds, the whole front, found without asking the solver."""
    m = WindowModel(nodes=[2, 2], bb=[5 * GB, 0.0], free_nodes=4, free_bb=5 * GB)
    lf = linear_form(m, NAMES)
    s = Enumerating(lf)
    complete, xs, solves = run_pareto_sequential(s, lf, NAMES, Scripted(9.0), two_list=False)
    assert complete and solves == 0 == len(s.calls) and [list(x) for x in xs] == [[True, True]]


@pytest.mark.parametrize("lefts, script, complete, points, solves", [
    ((0.0,), {}, False, 0, 0),
    ((0.5,), {}, True, 2, 3),  # f1, f2 at it; f1 under f2 >= eps, f2 at its bound (corner)
    ((9.0,), {0: "feasible"}, False, 1, 1),  # an unproven first stage: its point, incomplete
    ((9.0,), {2: "none"}, False, 1, 3),
    ((9.0, 9.0, 0.0), {}, False, 1, 1),      # no time left for f2 at f1's optimum
    ((9.0, 9.0, 9.0, 0.0), {}, False, 1, 2),  # none for the next point
])
def test_sequential_front_cut_short(lefts, script, complete, points, solves):
    lf = form()
    s = Enumerating(lf, script)
    got = run_pareto_sequential(s, lf, NAMES, Scripted(*lefts), two_list=False)
    assert (got[0], len(got[1]), got[2]) == (complete, points, solves)
    assert not s.pushed


def test_sequential_solves_are_hinted_with_the_last_point():
    lf = form()
    s = Enumerating(lf)
    run_pareto_sequential(s, lf, NAMES, Scripted(9.0), two_list=False)
    # f1 from scratch, f2 hinted with f1's answer; the next point's f1 with the last point
    assert s.calls[0]["hint"] is None
    assert list(s.calls[1]["hint"]) == [True, False, True]
    assert list(s.calls[2]["hint"]) == [True, True, False]


@pytest.mark.parametrize("max_points, complete, points", [(1, False, 1), (2, True, 2),
                                                           (None, True, 2)])
def test_a_listed_front_cut_at_max_points(max_points, complete, points):
    lf = form()
    got = run_pareto_sequential(Enumerating(lf), lf, NAMES, Scripted(9.0),
                                max_points=max_points)
    assert (got[0], len(got[1]), got[2]) == (complete, points, 0)
    assert [list(x) for x in got[1]] == [[True, True, False], [False, True, True]][:points]
    assert all(x.dtype == bool for x in got[1])


def test_a_listed_front_tie_broken_by_the_solver():
    lf = form()
    s = Enumerating(lf)
    complete, xs, solves = run_pareto_sequential(s, lf, NAMES, Scripted(9.0),
                                                 tiebreak="solver")
    assert complete and solves == 2 == len(s.calls)  # one tie-break solve per listed point
    assert [(c["work"], c["rows"]) for c in s.calls] == [(TIEBREAK_WORK, 2)] * 2
    assert [list(x) for x in xs] == [[True, True, False], [False, True, True]]


def test_front_methods_and_their_refusals():
    lf = form()
    with pytest.raises(InputError, match="^field 'method': unknown front method 'grid'; known: "
                                         "auto, sequential, disjunctive$"):
        run_pareto(Enumerating(lf), lf, NAMES, Scripted(9.0), method="grid")
    three = ("nodes", "bb", TIEBREAK)
    with pytest.raises(InputError, match="^field 'method': the sequential front needs exactly "
                                         "two objectives$"):
        run_pareto(Enumerating(lf), lf, three, Scripted(9.0), method="sequential")
    # auto: two objectives sequentially (listed, no solve), three disjunctively
    assert run_pareto(Enumerating(lf), lf, NAMES, Scripted(9.0))[2] == 0
    assert run_pareto(Enumerating(lf), lf, NAMES, Scripted(9.0), method="disjunctive")[2] == 3
    s = Enumerating(lf)
    complete, xs, solves = run_pareto(s, lf, three, Scripted(9.0))
    assert complete and solves == len(s.calls) and s.anys  # (the disjunctions of the points)
    # with tie-break and max_points passed on
    s = Enumerating(lf)
    assert len(run_pareto(s, lf, NAMES, Scripted(9.0), tiebreak="solver", max_points=1,
                          two_list=False)[1]) == 1
    assert [c["work"] for c in s.calls][-1] == TIEBREAK_WORK


def test_bounds_of_a_row_over_the_boxes():
    lf = form()
    lf.k, lf.a_hi = 2, np.array([3, 5])
    assert lf.bounds(np.array([2, -1, 4]), np.array([-2, 1])) == (-1 - 6, 6 + 5)
    assert lf.bounds(np.zeros(3, np.int64), np.zeros(2, np.int64)) == (0, 0)
    # an objective that is a capacity row is bounded by the row's capacity (6 of 8 nodes)
    lf = form()
    cn, ca, cap = lf.rows[0]
    assert lf.bounds(cn, ca) == (0, 6) and cap == 6 and cn.sum() == 8
    assert lf.bounds(cn + 1, ca) == (0, 11)


def test_interchangeable_jobs_are_moved_to_the_window_front():
    """J1 and J2 are equal (2 nodes, 5 GB), J0 is not: a selection of J2 becomes one of J1;
    of both, both; the class ordered by queue-order weight, then index."""
    lf = form()
    assert [list(g) for g in lf._classes()] == [[1, 2]]
    assert list(lf.canonical(np.array([True, False, True]))) == [True, True, False]
    assert list(lf.canonical(np.array([False, True, True]))) == [False, True, True]
    assert list(lf.canonical(np.array([True, False, False]))) == [True, False, False]
    # a forced job is not interchangeable with an unforced one of the same size
    m = WindowModel(nodes=[2, 2, 2], bb=[0.0] * 3, free_nodes=6, free_bb=0.0,
                    forced=[False, True, False])
    f = linear_form(m, NAMES)
    assert [list(g) for g in f._classes()] == [[0, 2]]
    assert list(f.canonical(np.array([False, True, True]))) == [True, True, False]
    # without the order objective the class keeps index order
    bare = linear_form(MODEL, NAMES)
    del bare.objectives[TIEBREAK]
    bare._class_cache = None
    assert [list(g) for g in bare._classes()] == [[1, 2]]


def test_the_value_of_a_selection_with_and_without_levels():
    lf = form()
    x = np.array([True, True, False])
    assert lf.value("nodes", x, np.zeros(0, np.int64)) == 6
    assert lf.value("nodes", x, None) == 6  # (no auxiliary variable read)


def test_solve_exact_reports_the_front_and_how_it_was_found():
    from bbopt.solvers.scalarize import Candidates, Form

    lf = form()
    cands = Candidates(MODEL)
    spec = Form.of(MODEL.objectives)
    r = solve_exact(cands, lf, Enumerating(lf), "fake", spec, Scripted(9.0))
    assert r.status is Status.OPTIMAL and r.backend == "fake"
    assert r.info == {"solves": 0, "front_complete": True, "front_by": "enumeration"}
    assert [MODEL.selected(s.x) for s in r.pareto] == [[0, 1], [1, 2]]
    r = solve_exact(cands, lf, Enumerating(lf), "fake", spec, Scripted(9.0), two_list=False)
    assert r.info == {"solves": 3, "front_complete": True, "front_by": "solver"}
    r = solve_exact(cands, lf, Enumerating(lf, {2: "none"}), "fake", spec, Scripted(9.0),
                    two_list=False)
    assert r.status is Status.FEASIBLE and r.info["front_complete"] is False
    assert len(r.pareto) == 1
    with pytest.raises(BudgetExceeded):  # nothing left before the first solve
        solve_exact(cands, lf, Enumerating(lf), "fake", spec, Scripted(0.0))
    with pytest.raises(BudgetExceeded):  # no point at all, the front not proven empty
        solve_exact(cands, lf, Enumerating(lf, {0: "none"}), "fake", spec, Scripted(9.0),
                    two_list=False)
    assert solve_exact(cands, lf, Enumerating(lf), "fake", spec, Scripted(0.5)).status is \
        Status.OPTIMAL


def test_solve_exact_on_a_model_with_no_feasible_selection():
    """J0 is forced but needs 3 nodes of 2: no selection at all."""
    from bbopt.solvers.scalarize import Candidates, Form

    m = WindowModel(nodes=[3, 1], bb=[0.0, 0.0], free_nodes=2, free_bb=GB,
                    forced=[True, False])
    lf = linear_form(m, NAMES)
    for form_ in (Form.of(m.objectives), Form.of(m.objectives, "weighted")):
        s = Enumerating(lf)
        r = solve_exact(Candidates(m), lf, s, "fake", form_, Scripted(9.0), two_list=False)
        assert r.status is Status.INFEASIBLE and r.solution is None and r.backend == "fake"
        if form_.kind == "pareto":
            assert r.info == {"solves": 1}


@pytest.mark.parametrize("script, status", [({}, Status.OPTIMAL), ({1: "none"}, Status.FEASIBLE),
                                            ({0: "feasible"}, Status.FEASIBLE)])
def test_solve_exact_scalar_forms(script, status):
    from bbopt.solvers.scalarize import Candidates, Form

    lf = form()
    spec = Form.of(MODEL.objectives, "lexicographic", priority=("bb", "nodes"))
    r = solve_exact(Candidates(MODEL), lf, Enumerating(lf, script), "fake", spec,
                    Scripted(9.0))
    assert r.status is status and r.backend == "fake"
    assert MODEL.selected(r.solution) == [1, 2] and r.objective == (10 * GB, 4.0)
    with pytest.raises(BudgetExceeded):
        solve_exact(Candidates(MODEL), lf, Enumerating(lf, {0: "none"}), "fake", spec,
                    Scripted(9.0))


def test_solve_window_passes_the_form_and_front_options():
    from bbopt.solvers.window.forms import solve_window

    made = []

    def make(lf):
        made.append(Enumerating(lf))
        return made[-1]

    r = solve_window(MODEL, Budget(9.0), make, "fake", two_list=False, max_points=1)
    assert r.status is Status.FEASIBLE and len(r.pareto) == 1 and made[0].calls
    assert r.backend == "fake"
    r = solve_window(MODEL, Budget(9.0), make, "fake", form="weighted", weights=(0.0, 1.0))
    assert MODEL.selected(r.solution) == [1, 2] and r.status is Status.OPTIMAL
    r = solve_window(MODEL, Budget(9.0), make, "fake", form="lexicographic",
                     priority=("nodes", "bb"), tiebreak=False)
    assert MODEL.selected(r.solution) == [0, 2]  # (no tie-break: the enumeration's first)
    assert [c["work"] for c in made[-1].calls] == [None, None]


MB = 1e6  # (the smallest BB unit of the integer form)


@pytest.mark.parametrize("bb, free_bb, front", [
    # (6 nodes, 7 MB), then (3, 10): the next point must beat 7 by one unit; at 7 - 1 the
    # dominated {J0, J2} (5 nodes, 7 MB) would come next
    ((2, 5, 5), 10, [[True, True, False], [False, True, True]]),
    # (6, 7) then (5, 8): exactly one unit more BB; 7 + 2 would miss it
    ((2, 5, 6), 8, [[True, True, False], [True, False, True]]),
    # (6, 2) then (5, 5): fewer nodes than the last point (6), not than its BB (2)
    ((1, 1, 4), 5, [[True, True, False], [True, False, True]]),
])
def test_sequential_epsilon_steps(bb, free_bb, front):
    m = WindowModel(nodes=[4, 2, 1], bb=[b * MB for b in bb], free_nodes=6,
                    free_bb=free_bb * MB)
    lf = linear_form(m, NAMES)
    s = Enumerating(lf)
    complete, xs, solves = run_pareto_sequential(s, lf, NAMES, Scripted(9.0), two_list=False)
    assert complete and [list(x) for x in xs] == front
    assert all(x.dtype == bool for x in xs)


def test_sequential_point_unproven_for_lack_of_time_ends_the_front():
    """f1 solved, no time for f2 at it (left 0): the point is kept, unproven, and the front
    ends there although time comes back."""
    lf = form()
    got = run_pareto_sequential(Enumerating(lf), lf, NAMES, Scripted(9.0, 9.0, 0.0, 9.0),
                                two_list=False)
    assert (got[0], len(got[1]), got[2]) == (False, 1, 1)


def test_sequential_front_by_the_solver_tie_broken_by_the_solver():
    lf = form()
    s = Enumerating(lf)
    complete, xs, solves = run_pareto_sequential(s, lf, NAMES, Scripted(9.0), two_list=False,
                                                 tiebreak="solver")
    assert complete and solves == 5 == len(s.calls)  # 3 front solves, a tie-break per point


#: J0 and J1 take 1 node each, J2 2 nodes, 2 free: {J0, J1} and {J2} are the same point
#: (2 nodes, no BB); the enumeration finds {J2} first, the queue order prefers {J0, J1}.
PAIR = WindowModel(nodes=[1, 1, 2], bb=[0.0] * 3, free_nodes=2, free_bb=MB)


@pytest.mark.parametrize("lefts, tied", [((9.0,), True), ((9.0, 0.5), True),
                                         ((9.0, 0.0), False)])
def test_the_solver_tie_break_moves_to_the_front_and_needs_time(lefts, tied):
    lf = linear_form(PAIR, NAMES)
    s = Enumerating(lf)
    complete, xs, solves = run_pareto_disjunctive(s, lf, NAMES, Scripted(*lefts),
                                                  tiebreak="solver")
    assert [list(x) for x in xs][0] == ([True, True, False] if tied else [False, False, True])
    assert any(c["work"] for c in s.calls) is tied


def test_a_tie_break_without_an_answer_keeps_the_point():
    lf = linear_form(PAIR, NAMES)
    s = Enumerating(lf, {1: "none"})  # the first point's tie-break finds nothing in time
    complete, xs, solves = run_pareto_disjunctive(s, lf, NAMES, Scripted(9.0),
                                                  tiebreak="solver")
    assert [list(x) for x in xs] == [[False, False, True]] and solves == 3


def test_equal_jobs_are_ordered_by_their_queue_order_weight():
    """J1 and J2 equal, J2 with the larger queue-order weight (an explicit order): a selection
    of one of them becomes J2."""
    m = WindowModel(nodes=[4, 2, 2], bb=[2 * GB, 5 * GB, 5 * GB], free_nodes=6,
                    free_bb=10 * GB, order=[3, 1, 2])
    lf = linear_form(m, NAMES)
    assert [list(g) for g in lf._classes()] == [[2, 1]]
    assert list(lf.canonical(np.array([True, True, False]))) == [True, False, True]


def test_disjunctive_front_of_the_wasted_ssd_counts_the_levels():
    """Two 1-node jobs (40 GB and 80 GB of SSD) on a 50 GB and a 100 GB node, nodes and wasted
    SSD maximised: both jobs (2 nodes, 30 GB wasted) or the first alone on the 50 GB node
    (1 node, 10 GB wasted) or nothing (0 wasted)."""
    m = WindowModel(nodes=[1, 1], bb=[0.0, 0.0], free_nodes=2, free_bb=0.0,
                    ssd=[40 * GB, 80 * GB], free_node_ssd=[50 * GB, 100 * GB],
                    objectives=("nodes", "ssd_waste"))
    lf = linear_form(m, ["nodes", "ssd_waste"])
    for run in (run_pareto_disjunctive, run_pareto_sequential):
        complete, xs, _ = run(Enumerating(lf), lf, ("nodes", "ssd_waste"), Scripted(9.0))
        assert complete
        assert sorted(tuple(m.evaluate(x)) for x in xs) == [
            (0.0, 0.0), (1.0, -10 * GB), (2.0, -30 * GB)], run.__name__


def test_run_pareto_breaks_ties_by_default():
    lf = form()
    for method in ("disjunctive", "sequential"):
        _, xs, _ = run_pareto(Enumerating(lf), lf, NAMES, Scripted(9.0), method=method,
                              two_list=False)
        assert sorted(map(list, xs)) == [[False, True, True], [True, True, False]], method


def test_combined_objectives_add_their_level_coefficients():
    m = WindowModel(nodes=[1], bb=[0.0], free_nodes=2, free_bb=0.0, ssd=[40 * GB],
                    free_node_ssd=[50 * GB, 100 * GB], objectives=("ssd_waste", "nodes"))
    lf = linear_form(m, ["ssd_waste", "nodes"])
    from bbopt.solvers.window.forms import _combine

    cx, ca = _combine(lf, {"ssd_waste": 2, "nodes": 1})
    assert list(ca) == list(2 * lf.objectives["ssd_waste"][1]) and any(ca)
    assert list(cx) == list(2 * lf.objectives["ssd_waste"][0] + lf.objectives["nodes"][0])


def test_a_level_objective_without_ssds_is_zero():
    lf = linear_form(PAIR, ["nodes", "ssd_waste"])
    assert lf.k == 0
    cx, ca = lf.objectives["ssd_waste"]
    assert list(cx) == [0, 0, 0] and cx.dtype == np.int64 and len(ca) == 0


def test_solve_exact_weighted_bound_of_an_unproven_answer():
    """Weights 0/1 (BB only): {J1, J2}, 10 of the 20 GB platform, 0.5. Proven, the bound is the
    objective; unproven, the first stage's bound over its value scales it (here one unit
    above the value)."""
    from bbopt.solvers.scalarize import Candidates, Form

    lf = form()
    spec = Form.of(MODEL.objectives, "weighted", weights=(0.0, 1.0))
    r = solve_exact(Candidates(MODEL), lf, Enumerating(lf), "fake", spec, Scripted(9.0))
    assert r.status is Status.OPTIMAL and r.objective == r.bound == 0.5
    s = Enumerating(lf, {0: "feasible"})
    r = solve_exact(Candidates(MODEL), lf, s, "fake", spec, Scripted(9.0))
    value = int(s.calls[0]["cx"] @ np.array([0, 1, 1]))  # (the stage's integer weights)
    assert r.status is Status.FEASIBLE and r.objective == 0.5
    assert r.bound == pytest.approx(0.5 * (value + 1) / value)


def test_solve_exact_front_selections_are_tie_broken():
    from bbopt.solvers.scalarize import Candidates, Form

    lf = form()
    r = solve_exact(Candidates(MODEL), lf, Enumerating(lf), "fake", Form.of(MODEL.objectives),
                    Scripted(9.0), two_list=False)
    assert [MODEL.selected(s.x) for s in r.pareto] == [[0, 1], [1, 2]]
    r = solve_exact(Candidates(MODEL), lf, Enumerating(lf), "fake",
                    Form.of(MODEL.objectives, tiebreak=False), Scripted(9.0), two_list=False)
    assert [MODEL.selected(s.x) for s in r.pareto] == [[0, 2], [1, 2]]


def test_solve_window_priority_and_tie_break():
    from bbopt.solvers.window.forms import solve_window

    def make(lf):
        return Enumerating(lf)

    r = solve_window(MODEL, Budget(9.0), make, "fake", form="lexicographic",
                     priority=("bb", "nodes"))
    assert MODEL.selected(r.solution) == [1, 2]
    r = solve_window(MODEL, Budget(9.0), make, "fake", form="lexicographic",
                     priority=("nodes", "bb"))
    assert MODEL.selected(r.solution) == [0, 1]  # (tie-broken by default: J1, not J2)
    # an objective of the priority the model does not list is expressed too
    r = solve_window(MODEL, Budget(9.0), make, "fake", form="lexicographic",
                     priority=("ssd", "nodes"))
    assert MODEL.selected(r.solution) == [0, 1]


@pytest.mark.parametrize("asks, sizes, nodes", [
    # two 1-node jobs asking 100 GB of SSD, one free node has it: one job at a time
    ((100, 100), (50, 100), [1]),
    # three levels: two jobs ask 100 GB, one 150 GB; two nodes have 100 GB or more (one 200):
    # two of the three (the 200 GB level alone would also hold the 150 GB job)
    ((100, 100, 150), (50, 100, 200), [2]),
])
def test_the_ssd_levels_rows_without_a_level_objective(asks, sizes, nodes):
    """Nodes and BB only (no wasted-SSD objective, no auxiliary counts): the SSD levels'
    rows alone keep the selection placeable."""
    w = len(asks)
    m = WindowModel(nodes=[1] * w, bb=[0.0] * w, free_nodes=len(sizes), free_bb=GB,
                    ssd=[a * GB for a in asks], free_node_ssd=[s * GB for s in sizes])
    lf = linear_form(m, NAMES)
    assert lf.k == 0
    complete, xs, _ = run_pareto_disjunctive(Enumerating(lf), lf, NAMES, Scripted(9.0))
    assert complete and [int(x.sum()) for x in xs] == nodes  # one point: the most nodes
    assert all(m.feasible(x) for x in xs)


#: A window where no job asks for BB: every selection scores 0 B.
NO_BB = WindowModel(nodes=[1, 2, 2], bb=[0.0, 0.0, 0.0], free_nodes=3, free_bb=0.0)


def test_a_stage_every_selection_scores_0_in_is_not_solved():
    # (solved, its optimum would be any selection -- CBC's is the empty one -- and the
    # work-limited tie-break after it may not move it: nothing would start on free nodes)
    lf = linear_form(NO_BB, NAMES)
    s = Enumerating(lf)
    outcome, x, _, bounds = run_lexicographic(s, lf, [{"bb": 1}, {TIEBREAK: 1}], Scripted(9.0))
    assert outcome is Status.OPTIMAL and list(x) == [True, True, False]
    assert bounds[0] == (0, 0.0) and len(s.calls) == 1 and s.calls[0]["work"] is None
    s = Enumerating(lf)  # the last stage is solved all the same: some selection is the answer
    outcome, x, _, bounds = run_lexicographic(s, lf, [{"bb": 1}], Scripted(9.0))
    assert outcome is Status.OPTIMAL and x is not None and len(s.calls) == 1


@pytest.mark.parametrize("backend", ["cpsat", "milp", "highs", "scip"])
@pytest.mark.parametrize("form, options", [("lexicographic", {"priority": ["bb"]}),
                                           ("weighted", {"weights": [0.0, 1.0]})])
def test_exact_backends_break_the_tie_of_a_stage_scoring_0_in_queue_order(backend, form,
                                                                           options):
    from bbopt.solvers import solve

    r = solve(NO_BB, backend, Budget(10.0), form=form, **options)
    ref = solve(NO_BB, "exhaustive", Budget(10.0), form=form, **options)
    assert r.status is Status.OPTIMAL and list(r.solution) == list(ref.solution) == [
        True, True, False]

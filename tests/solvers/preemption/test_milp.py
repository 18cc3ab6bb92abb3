"""The victim choice's 0-1 program (Zvi & Oren, OMFS, Algorithm 1 lines 34-39) and the driver the
``milp`` and ``scip`` backends share: the program's coefficients by hand, what CBC is handed,
and how each solver answer is read (a scripted solver stands in where CBC cannot be made to
answer so deterministically: out of time, a fractional point, a set short of BB in exact
floats)."""

from __future__ import annotations

import types

import numpy as np
import pulp
import pytest

from bbopt.core import Status
from bbopt.solvers import Budget, solve
from bbopt.solvers.preemption import milp
from bbopt.solvers.preemption.milp import solve_milp, solve_with_cover_cuts, victims_problem
from tests._slow_clock import SlowClock
from tests.solvers.test_preemption import victims_model

OPTIMAL, NOT_SOLVED, INFEASIBLE, UNDEFINED = 1, 0, -1, -3  # PuLP's solve statuses


def _rows(prob) -> list[tuple[dict[str, float], float, int]]:
    """Each row of ``prob`` as (coefficient per variable name, constant, sense)."""
    return [({v.name: a for v, a in c.items()}, c.constant, c.sense)
            for c in prob.constraints.values()]


def test_the_objective_is_cost_and_penalty_plus_a_tie_of_a_millionth_of_the_dearest():
    # dearest 4: 1e-6 * 4 per victim on top of cost + penalty
    prob, x = victims_problem(victims_model([1, 2], [2.0, 4.0], need_nodes=2, penalty=0.5))
    assert [v.name for v in x] == ["x0", "x1"] and prob.sense == pulp.LpMinimize
    assert dict(prob.objective.items()) == {x[0]: 2.5 + 4e-6, x[1]: 4.5 + 4e-6}
    # costs below 1: a millionth of 1
    prob, x = victims_problem(victims_model([1, 2], [0.5, 0.25], need_nodes=2))
    assert dict(prob.objective.items()) == {x[0]: 0.5 + 1e-6, x[1]: 0.25 + 1e-6}


def test_the_rows_are_nodes_bb_in_thousandths_of_the_largest_amount_and_each_entitys_slack():
    # BB 0.5 and 0.25 B against a 0.4 B deficit: unit 0.5 / 1000 B, so 1000 and 500 units
    # against 800; the capacity 100 B puts the tolerance at 1e-7 B, taken off the deficit
    m = victims_model([1, 2, 3], [1.0, 1.0, 1.0], need_nodes=2, bb=[0.5, 0.25, 0.0],
                      need_bb=0.4, slack={"A": 3, "B": 9}, entities=["A", "A", "B"],
                      bb_capacity=100.0)
    prob, _ = victims_problem(m)
    (nodes, c0, s0), (bb, c1, s1), (a, c2, s2), (b, c3, s3) = _rows(prob)
    assert (nodes, c0, s0) == ({"x0": 1, "x1": 2, "x2": 3}, -2, pulp.LpConstraintGE)
    assert bb == {"x0": 1000.0, "x1": 500.0} and s1 == pulp.LpConstraintGE
    assert c1 == pytest.approx(-(0.4 - 1e-7) / 0.0005, rel=1e-12)
    # every entity with a candidate has its slack row, even one its candidates cannot exceed
    assert (a, c2, s2) == ({"x0": 1, "x1": 2}, -3, pulp.LpConstraintLE)
    assert (b, c3, s3) == ({"x2": 3}, -9, pulp.LpConstraintLE)


@pytest.mark.parametrize(("need_bb", "bb_row"), [(1e-7, False), (1.01e-7, True)])
def test_a_bb_row_only_for_a_deficit_beyond_the_tolerance(need_bb, bb_row):
    # the tolerance is 1e-9 of the 100 B capacity: 1e-7 B
    m = victims_model([1, 1], [1.0, 1.0], need_nodes=1, bb=[1.0, 0.0], need_bb=need_bb,
                      bb_capacity=100.0)
    prob, _ = victims_problem(m)
    assert len(prob.constraints) == (3 if bb_row else 2)


@pytest.mark.parametrize("backend", ["exhaustive", "milp", "cpsat", "scip"])
def test_without_candidates_no_deficit_needs_no_victim_and_a_deficit_none_covers(backend):
    empty = victims_model([], [], need_nodes=0)
    r = solve(empty, backend, Budget(10.0))
    assert (r.status, r.objective, len(r.solution)) == (Status.OPTIMAL, 0.0, 0)
    short = victims_model([], [], need_nodes=1, need_bb=5.0)
    assert solve(short, backend, Budget(10.0)).status is Status.INFEASIBLE


def test_cbc_runs_without_preprocessing_which_answers_a_dearer_set():
    # with preprocessing CBC answers {v0, v2, v3} (cost 7) as optimal; {v0, v1, v3} frees the
    # 8 nodes of the slack at no cost
    m = victims_model([2, 2, 1, 4], [0.0, 0.0, 7.0, 0.0], need_nodes=7, slack={"x": 8})
    r = solve_milp(m, Budget(10.0), 0)
    assert (r.status, r.objective, r.bound, r.backend) == (Status.OPTIMAL, 0.0, 0.0, "milp")
    assert m.victims(r.solution) == ["v0", "v1", "v3"]
    assert solve(m, "exhaustive", Budget(10.0)).objective == 0.0


@pytest.mark.parametrize(("seconds", "limit"), [(0.005, 0.01), (0.01, 0.01), (0.02, 0.02),
                                                (5.0, 5.0)])
def test_cbc_is_handed_what_is_left_of_the_budget_and_at_least_a_hundredth(monkeypatch, seconds,
                                                                          limit):
    handed = []

    class Cbc(pulp.PULP_CBC_CMD):
        def __init__(self, **kwargs):
            handed.append(kwargs)
            super().__init__(**{**kwargs, "timeLimit": 10.0})  # (time to answer, under load)

    monkeypatch.setattr(pulp, "PULP_CBC_CMD", Cbc)
    monkeypatch.setattr(milp, "_time", types.SimpleNamespace(perf_counter=lambda: 0.0))
    m = victims_model([1, 1], [2.0, 1.0], need_nodes=1)
    r = solve_milp(m, Budget(seconds), 0)
    assert m.victims(r.solution) == ["v1"]
    assert [(k["timeLimit"], k["options"]) for k in handed] == [(limit, ["preprocess off"])]


def test_cbc_prints_nothing(capfd):
    solve_milp(victims_model([1, 1], [2.0, 1.0], need_nodes=1), Budget(10.0), 0)
    out, err = capfd.readouterr()
    assert (out, err) == ("", "")


class _Scripted:
    """Stands in for a MILP solver (``solve(prob, x, seconds)``): each solve sets the next
    scripted (PuLP status, solution status, values) and records the seconds it was given and
    the rows of the program it was handed."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.seconds: list[float] = []
        self.rows: list = []

    def __call__(self, prob, x, seconds: float) -> int:
        self.seconds.append(seconds)
        self.rows.append(_rows(prob))
        status, sol_status, values = self.answers.pop(0)
        for v, a in zip(x, values, strict=True):
            v.varValue = a
        prob.sol_status = sol_status
        return status


#: v0 free but 0.5e-6 B short of the 1 B deficit (five times the 1e-7 B tolerance), v1 covering
#: it at cost 5, v2 free without BB.
SHORT = victims_model([1, 1, 1], [0.0, 5.0, 0.0], need_nodes=1, bb=[1.0 - 5e-7, 1.0, 0.0],
                      need_bb=1.0, bb_capacity=100.0)


@pytest.fixture
def ticks(monkeypatch):
    monkeypatch.setattr(milp, "_time", SlowClock(1.0))


def test_a_proven_optimum_is_optimal_with_its_cost_as_bound(ticks):
    scripted = _Scripted((OPTIMAL, 1, [0.0, 1.0, 1e-6]))
    r = solve_with_cover_cuts(SHORT, Budget(10.0), "stand-in", scripted)
    assert (r.status, r.objective, r.bound, r.backend) == (Status.OPTIMAL, 5.0, 5.0, "stand-in")
    assert r.solution.tolist() == [False, True, False]
    assert scripted.seconds == [9.0]  # the budget less the second read at the start


def test_a_solution_stopped_by_the_time_limit_is_feasible_without_a_bound(ticks):
    scripted = _Scripted((OPTIMAL, 2, [0.0, 1.0, 1.0]))
    r = solve_with_cover_cuts(SHORT, Budget(10.0), "stand-in", scripted)
    assert (r.status, r.objective, r.bound, r.backend) == (Status.FEASIBLE, 5.0, None,
                                                           "stand-in")
    assert r.solution.tolist() == [False, True, True]


def test_a_program_the_solver_proves_infeasible_is_infeasible(ticks):
    r = solve_with_cover_cuts(SHORT, Budget(10.0), "stand-in",
                              _Scripted((INFEASIBLE, 0, [None] * 3)))
    assert (r.status, r.solution, r.backend) == (Status.INFEASIBLE, None, "stand-in")


@pytest.mark.parametrize(("status", "sol_status", "values"),
                         [(NOT_SOLVED, 0, [None] * 3), (UNDEFINED, 2, [0.0, 1.0, 0.0]),
                          (NOT_SOLVED, 1, [0.0, 1.0, 0.0]), (OPTIMAL, 1, [0.0, 0.5, 0.5])])
def test_no_proven_or_integral_answer_is_a_fallback_without_a_second_solve(ticks, status,
                                                                           sol_status, values):
    # not solved; a solution under an undefined status; a fractional point called optimal
    scripted = _Scripted((status, sol_status, values))
    r = solve_with_cover_cuts(SHORT, Budget(10.0), "stand-in", scripted)
    assert (r.status, r.solution, r.backend) == (Status.FALLBACK, None, "stand-in")
    assert len(scripted.seconds) == 1


def test_a_set_short_of_bb_is_cut_off_with_its_bb_victims_and_solved_again(ticks):
    # v0 passes the solver's tolerance but not the model's: the cut asks for a BB victim
    # outside {v0} (v1; v2 brings no BB), with what is left of the budget
    scripted = _Scripted((OPTIMAL, 1, [1.0, 0.0, 0.0]), (OPTIMAL, 1, [0.0, 1.0, 0.0]))
    r = solve_with_cover_cuts(SHORT, Budget(10.0), "stand-in", scripted)
    assert (r.status, r.objective, r.backend) == (Status.OPTIMAL, 5.0, "stand-in")
    assert scripted.seconds == [9.0, 7.0]
    first, second = scripted.rows
    assert second[:len(first)] == first
    assert second[len(first):] == [({"x1": 1}, -1, pulp.LpConstraintGE)]


def test_a_set_short_of_bb_with_no_bb_victim_outside_it_is_infeasible(ticks):
    m = victims_model([1, 1], [0.0, 3.0], need_nodes=1, bb=[1.0 - 5e-7, 0.0], need_bb=1.0,
                      bb_capacity=100.0)
    scripted = _Scripted((OPTIMAL, 1, [1.0, 0.0]))
    r = solve_with_cover_cuts(m, Budget(10.0), "stand-in", scripted)
    assert (r.status, r.solution, r.backend) == (Status.INFEASIBLE, None, "stand-in")
    assert len(scripted.seconds) == 1


@pytest.mark.parametrize(("seconds", "solves"), [(2.0, 1), (2.5, 2)])
def test_a_set_short_of_bb_at_the_end_of_the_budget_is_a_fallback(ticks, seconds, solves):
    # the start is read at 0 s, the budget left at 1 s, the clock after the solve at 2 s: a
    # budget of 2 s is spent (fallback), one of 2.5 s is not (cut and solved again)
    scripted = _Scripted((OPTIMAL, 1, [1.0, 0.0, 0.0]), (OPTIMAL, 1, [0.0, 1.0, 0.0]))
    r = solve_with_cover_cuts(SHORT, Budget(seconds), "stand-in", scripted)
    assert len(scripted.seconds) == solves
    if solves == 1:
        assert (r.status, r.solution) == (Status.FALLBACK, None)
    else:
        assert (r.status, r.objective) == (Status.OPTIMAL, 5.0)
        assert np.array_equal(r.solution, [False, True, False])

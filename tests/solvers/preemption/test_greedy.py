"""The greedy victim choice (Zvi & Oren, OMFS, Algorithm 1 lines 35-39) as a backend: what it
answers and how it names itself, called directly (the contract fills in a missing name)."""

from __future__ import annotations

import numpy as np

from bbopt.core import Status
from bbopt.solvers import Budget
from bbopt.solvers.preemption.greedy import solve_greedy
from tests.solvers.test_preemption import victims_model


def test_greedy_takes_the_least_prioritised_victims_and_names_itself():
    # least prioritised first: v0 (cost 5) and v1 (cost 1) cover 2 nodes; v2 (cost 0) is not
    # reached
    m = victims_model([1, 1, 1], [5.0, 1.0, 0.0], need_nodes=2, penalty=0.5)
    r = solve_greedy(m, Budget(10.0), 0)
    assert (r.status, r.backend, r.objective) == (Status.FEASIBLE, "greedy", 7.0)
    assert np.array_equal(r.solution, [True, True, False]) and r.bound is None


def test_greedy_without_a_covering_set_answers_infeasible_and_names_itself():
    m = victims_model([1, 1], [1.0, 1.0], need_nodes=3)
    r = solve_greedy(m, Budget(10.0), 0)
    assert (r.status, r.solution, r.backend) == (Status.INFEASIBLE, None, "greedy")

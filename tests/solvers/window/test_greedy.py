"""The ``greedy`` backend of the window models: BBSched's one-by-one baselines (Fan et al.,
Section 4.3: Slurm's window order, bin packing) and the contract's first-fit fallback, as a
backend answer (status, solution, objective values, a one-point set for the Pareto form)."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import GB, Status
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget, solve
from bbopt.solvers.window.greedy import solve_greedy

#: 4 free nodes, no BB asked: window order takes 1 + 2 nodes and stops at the 3-node job
#: (first fit too: the 3 fits nowhere after them); bin packing takes the 3 first, then the 1.
ORDERED = WindowModel(nodes=[1, 2, 3], bb=[0.0] * 3, free_nodes=4, free_bb=10 * GB,
                      total_nodes=8, total_bb=10 * GB)
#: 4 free nodes: window order stops at the 2-node job after the 3; first fit goes on to the 1.
GAP = WindowModel(nodes=[3, 2, 1], bb=[0.0] * 3, free_nodes=4, free_bb=10 * GB,
                  total_nodes=8, total_bb=10 * GB)


@pytest.mark.parametrize("model, rule, picked", [
    (ORDERED, "in-order", [0, 1]), (ORDERED, "first-fit", [0, 1]),
    (ORDERED, "bin-packing", [0, 2]),
    (GAP, "in-order", [0]), (GAP, "first-fit", [0, 2]), (GAP, "bin-packing", [0, 2]),
])
def test_each_rule_selects_by_its_order(model, rule, picked):
    r = solve(model, "greedy", Budget(1.0), rule=rule)
    assert model.selected(r.solution) == picked
    assert r.status is Status.FEASIBLE and r.backend == "greedy"
    nodes = float(sum(model.nodes[picked]))
    assert r.objective == (nodes, 0.0)
    assert r.info == {"rule": rule, "objectives": (nodes, 0.0)}


def test_first_fit_is_the_default_and_the_pareto_form_a_one_point_set():
    r = solve_greedy(GAP, Budget(1.0), 0)
    assert GAP.selected(r.solution) == [0, 2] and r.info["rule"] == "first-fit"
    [point] = r.pareto
    assert np.array_equal(point.x, r.solution) and point.objectives == (4.0, 0.0)
    assert r.status is Status.FEASIBLE and r.backend == "greedy"


@pytest.mark.parametrize("form", ["weighted", "lexicographic"])
def test_a_scalar_form_gets_no_set(form):
    r = solve(GAP, "greedy", Budget(1.0), form=form)
    assert GAP.selected(r.solution) == [0, 2] and r.pareto == ()
    assert r.objective == (4.0, 0.0)

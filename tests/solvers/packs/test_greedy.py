"""The ``greedy`` pack backend: the paper's builders (first fit in an order), their Result, and
the random order seeded by the solve's seed."""

from __future__ import annotations

import pytest

from bbopt.core import Job, Status
from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, solve
from bbopt.solvers.packs.greedy import solve_greedy

#: Four alike one-node applications on one free node: the pack is the first of the order.
WXYZ = [Job(i, 0.0, 10.0, nodes=1) for i in "WXYZ"]


def test_the_answer_is_first_fit_in_max_order_by_default_and_claims_no_optimality():
    """A (2 nodes, 8 s), B (1 node, 4 s), C (2 nodes, 12 s) on 4 nodes: Max takes C and A (40
    node-seconds, Char scores 2 + 1); Char (the time alone for a job without periodic I/O) B
    and A (20, scores 3 + 2)."""
    jobs = [Job("A", 0.0, 8.0, nodes=2), Job("B", 0.0, 4.0, nodes=1),
            Job("C", 0.0, 12.0, nodes=2)]
    model = PackModel.from_jobs(jobs, 4, 1e9, tiebreak="char")
    r = solve_greedy(model, Budget(1.0), seed=0)
    assert r.solution.tolist() == [True, False, True]
    assert (r.status, r.objective, r.bound, r.backend) == (Status.FEASIBLE, 40.0, None,
                                                           "greedy")
    assert r.info == {"order": "max", "stages": (40.0, 3.0)}
    r = solve(model, "greedy", Budget(1.0), order="char")
    assert r.solution.tolist() == [True, True, False]
    assert (r.status, r.objective, r.info) == (Status.FEASIBLE, 20.0,
                                               {"order": "char", "stages": (20.0, 5.0)})


@pytest.mark.parametrize(("model_seed", "seed", "first"), [
    (0, 0, "X"), (0, 3, "Y"), (3, 3, "Y"), (3, 7, "Z"), (7, 0, "X")])
def test_the_random_order_is_the_solve_s_seed_s(model_seed, seed, first):
    """The random order depends on the seed the backend is given, whatever the model's own
    (seed 0 puts X first, 3 Y, 7 Z)."""
    model = PackModel.from_jobs(WXYZ, 1, 1e9, seed=model_seed)
    r = solve(model, "greedy", Budget(1.0), seed=seed, order="random")
    assert [model.ids[i] for i in r.solution.nonzero()[0]] == [first]
    assert r.info["order"] == "random"

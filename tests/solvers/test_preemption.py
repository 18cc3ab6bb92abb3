"""The victim-choice backends (Zvi & Oren, OMFS, Algorithm 1 lines 34-39 as a 0-1 program) on
hand-computed victim sets: the thresholds of the covering and slack rows, ties (fewer victims,
then Algorithm 1's order), what each backend reports. The exhaustive enumeration's own rules are
in ``tests/solvers/preemption/test_exhaustive.py``."""

from __future__ import annotations

import pytest

from bbopt.core import Status
from bbopt.models.preemption import PreemptionModel
from bbopt.solvers import Budget, solve

EXACT = ["exhaustive", "cpsat", "milp", "scip"]


def victims_model(nodes, cost, need_nodes, slack=None, bb=None, need_bb=0.0, penalty=0.0,
                  entities=None, bb_capacity=0.0) -> PreemptionModel:
    """Candidates ``v0, v1, ...`` of one entity ``x`` (or ``entities``) whose slack is every
    candidate node (or ``slack``), no BB unless given."""
    m = len(nodes)
    entities = entities or ["x"] * m
    return PreemptionModel.build([f"v{i}" for i in range(m)], nodes, bb or [0.0] * m, cost,
                                 entities, slack or {e: sum(nodes) for e in entities},
                                 need_nodes=need_nodes, need_bb=need_bb, penalty=penalty,
                                 bb_capacity=bb_capacity)


@pytest.mark.parametrize("backend", EXACT)
def test_the_penalty_per_victim_makes_one_dear_victim_beat_two_cheap_ones(backend):
    # v0 + v1 cost 2 + 2 = 4, v2 alone 5: without a penalty the pair; with 1.5 per victim the
    # pair costs 7 and v2 6.5
    m = victims_model([1, 1, 2], [2.0, 2.0, 5.0], need_nodes=2)
    r = solve(m, backend, Budget(10.0))
    assert m.victims(r.solution) == ["v0", "v1"] and r.objective == 4.0
    m = victims_model([1, 1, 2], [2.0, 2.0, 5.0], need_nodes=2, penalty=1.5)
    r = solve(m, backend, Budget(10.0))
    assert r.status is Status.OPTIMAL
    assert m.victims(r.solution) == ["v2"] and r.objective == 6.5


@pytest.mark.parametrize("backend", EXACT)
def test_of_two_sets_of_one_cost_the_one_with_fewer_victims_is_taken(backend):
    # {v0, v1} and {v2} both cost 4 and free 2 nodes
    m = victims_model([1, 1, 2], [2.0, 2.0, 4.0], need_nodes=2)
    r = solve(m, backend, Budget(10.0))
    assert m.victims(r.solution) == ["v2"] and r.objective == 4.0


@pytest.mark.parametrize("backend", EXACT)
@pytest.mark.parametrize(("slack", "victims"), [(2, ["v0", "v1"]), (1, ["v2"])])
def test_an_entity_gives_up_to_its_slack_and_no_node_more(backend, slack, victims):
    # A's two cheap 1-node jobs fit its slack of 2, not of 1 (then B's dearer job is taken)
    m = victims_model([1, 1, 2], [1.0, 1.0, 5.0], need_nodes=2, slack={"A": slack, "B": 2},
               entities=["A", "A", "B"])
    r = solve(m, backend, Budget(10.0))
    assert r.status is Status.OPTIMAL and m.victims(r.solution) == victims


@pytest.mark.parametrize("backend", EXACT)
@pytest.mark.parametrize(("short", "victims"),
                         [(0.0, ["v0"]), (9e-8, ["v0"]), (1e-7, ["v0"]), (2e-7, ["v1"]),
                          (5e-7, ["v1"]), (1e-6, ["v1"])])
def test_a_victims_bb_covers_the_deficit_within_the_tolerance(backend, short, victims):
    # the tolerance is 1e-9 of the 100 B capacity, 1e-7 B: v0 (free) short of the 1 B deficit
    # by at most that covers it, by more not (then v1, cost 3)
    m = victims_model([1, 1], [0.0, 3.0], need_nodes=1, bb=[1.0 - short, 1.0], need_bb=1.0,
               bb_capacity=100.0)
    r = solve(m, backend, Budget(10.0))
    assert r.status is Status.OPTIMAL and m.victims(r.solution) == victims


@pytest.mark.parametrize("backend", EXACT)
def test_a_set_short_of_bb_by_more_than_the_tolerance_and_nothing_to_add_is_infeasible(backend):
    # the solvers' own tolerance may admit v0 (2e-7 B short); no other victim has BB
    m = victims_model([1, 1], [0.0, 3.0], need_nodes=1, bb=[1.0 - 2e-7, 0.0], need_bb=1.0,
                      bb_capacity=100.0)
    r = solve(m, backend, Budget(10.0))
    assert r.status is Status.INFEASIBLE and r.solution is None


@pytest.mark.parametrize("backend", EXACT + ["greedy"])
def test_no_victim_set_that_covers_the_deficit_is_infeasible(backend):
    m = victims_model([1, 1], [1.0, 1.0], need_nodes=3)
    r = solve(m, backend, Budget(10.0))
    assert r.status is Status.INFEASIBLE and r.solution is None


def test_greedy_answers_algorithm_1s_victims_without_claiming_optimality():
    # least prioritised first: v0 (dear) is taken although v1 alone is cheaper
    m = victims_model([1, 1], [5.0, 1.0], need_nodes=1)
    r = solve(m, "greedy", Budget(10.0))
    assert r.status is Status.FEASIBLE and r.backend == "greedy"
    assert m.victims(r.solution) == ["v0"] and r.objective == 5.0

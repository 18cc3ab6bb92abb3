"""The victim-choice model of memoryless fair share by hand (Zvi & Oren, OMFS, Algorithm 1 lines
34-39; :mod:`bbopt.models.preemption`): which victim sets cover a deficit without bringing an
entity below its entitlement (strictly, or by the looser reading), their cost, the quick
infeasibility test and Algorithm 1's greedy walk, each at, below and above its threshold.

The candidates (unless a test says otherwise): ``a`` (2 nodes, 10 B, cost 5) and ``b`` (1 node,
20 B, cost 7) of entity X, ``c`` (3 nodes, 0 B, cost 4) of entity Y; X holds 2 nodes beyond
its entitlement, Y 3.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from bbopt.models.preemption import PreemptionModel


def model(need_nodes: int = 3, need_bb: float = 0.0, *, slack: dict | None = None,
          order=None, penalty: float = 0.0, bb_capacity: float = 0.0,
          over_only: bool = False, nodes=(2, 1, 3), bb=(10.0, 20.0, 0.0)) -> PreemptionModel:
    m = PreemptionModel.build(["a", "b", "c"], list(nodes), list(bb), [5.0, 7.0, 4.0],
                              ["X", "X", "Y"], {"X": 2, "Y": 3} if slack is None else slack,
                              need_nodes, need_bb, order=order, penalty=penalty,
                              bb_capacity=bb_capacity)
    return replace(m, over_only=True) if over_only else m


def test_build_keeps_what_it_is_given():
    m = model(order=[2, 0, 1], penalty=1.5, bb_capacity=100.0)
    assert m.order == (2, 0, 1) and m.penalty == 1.5 and m.bb_capacity == 100.0
    assert m.bb_tol == 100.0 * 1e-9
    assert list(m.entity) == [0, 0, 1] and list(m.slack) == [2, 3]
    plain = model()
    assert plain.order == (0, 1, 2) and plain.bb_capacity == 0.0 and plain.bb_tol == 0.0
    direct = PreemptionModel.build(["a"], [2], [0.0], [1.0], ["X"], {"X": 2}, 2, 0.0)
    assert direct.bb_capacity == 0.0 and direct.bb_tol == 0.0
    assert model(need_nodes=-3, need_bb=-1.0).need_nodes == 0
    assert model(need_nodes=0).need_nodes == 0 and model(need_bb=-1.0).need_bb == 0.0
    alone = model(slack={"Y": 3})  # (X holds nothing beyond its entitlement)
    assert list(alone.slack) == [0, 3]
    assert not alone.feasible([True, False, True])


@pytest.mark.parametrize("x, ok", [
    ((0, 0, 1), True),    # c: 3 nodes, Y's slack exactly
    ((1, 0, 1), True),    # a and c: X's slack 2 and Y's 3 exactly
    ((1, 1, 0), False),   # a and b: X gives 3 nodes, beyond its slack of 2
    ((1, 0, 0), False),   # 2 nodes: short of 3
])
def test_feasible_covers_the_deficit_within_each_entitys_slack(x, ok):
    """As 0/1 numbers (what an integer solver hands back) and as booleans."""
    m = model()
    assert m.feasible(list(x)) is ok
    assert m.feasible(np.array(x, dtype=bool)) is ok


def test_feasible_by_the_looser_reading():
    """Over-only: each victim entity must stay over its entitlement until its last victim, so
    without its largest victim it is still below its slack."""
    m = model(need_nodes=3, over_only=True)
    assert m.feasible([1, 1, 0])        # X: 3 nodes, less its largest (2) is 1 < 2
    assert m.feasible([0, 0, 1])        # Y: 3 less 3 is 0 < 3
    assert m.feasible([1, 1, 1])
    tight = model(need_nodes=3, over_only=True, nodes=(2, 2, 3))
    assert not tight.feasible([1, 1, 0])  # X: 4 less 2 is 2, not below 2
    assert not model(need_nodes=3, over_only=True).feasible([1, 0, 0])  # (2 nodes: short)
    assert model(need_nodes=0, over_only=True).feasible([0, 0, 0])


def test_feasible_counts_the_bb_within_its_tolerance():
    """a and b give 30 B (X may give 3 nodes here); 1 B of tolerance on a 1 GB BB."""
    room = {"X": 3, "Y": 3}
    assert model(need_nodes=0, need_bb=30.0, slack=room).feasible([1, 1, 0])
    assert not model(need_nodes=0, need_bb=30.5, slack=room).feasible([1, 1, 0])
    assert model(need_nodes=0, need_bb=31.0, slack=room, bb_capacity=1e9).feasible([1, 1, 0])
    assert not model(need_nodes=0, need_bb=31.5, slack=room,
                     bb_capacity=1e9).feasible([1, 1, 0])


def test_evaluate_is_the_cost_plus_the_penalty_per_victim():
    m = model(penalty=10.0)
    assert m.evaluate([1, 0, 1]) == 5.0 + 4.0 + 2 * 10.0
    assert m.evaluate(np.array([True, False, True])) == 29.0
    assert m.evaluate([0, 0, 1]) == 4.0 + 10.0
    assert m.evaluate([1, 0, 0]) == math.inf and m.evaluate(None) == math.inf
    assert m.victims([1, 0, 1]) == ["a", "c"] and m.victims(None) == []
    assert model(order=[2, 1, 0]).victims([1, 0, 1]) == ["c", "a"]


def test_surely_infeasible_at_its_thresholds():
    assert not model(need_nodes=5).surely_infeasible()  # X's 2 + Y's 3 exactly
    assert model(need_nodes=6).surely_infeasible()
    assert not model(need_nodes=6, over_only=True).surely_infeasible()  # (nodes not bounded)
    assert not model(need_nodes=0, need_bb=30.0).surely_infeasible()
    assert model(need_nodes=0, need_bb=30.5).surely_infeasible()
    assert not model(need_nodes=0, need_bb=30.5, bb_capacity=1e9).surely_infeasible()
    assert model(need_nodes=0, need_bb=31.5, bb_capacity=1e9).surely_infeasible()
    one = PreemptionModel.build(["a"], [2], [0.0], [1.0], ["X"], {"X": 2, "Y": 3}, 2, 0.0)
    assert not one.surely_infeasible()  # (Y has no candidate: its count is 0)


def test_greedy_by_hand():
    # a (2, X) taken; b (1, X) would bring X to 3 > 2: passed; c (3, Y) taken: 5 nodes.
    got = model(need_nodes=3).greedy()
    assert got.dtype == bool and got.tolist() == [True, False, True]  # (a mask of victims)
    assert model(need_nodes=3).evaluate(got) == 9.0
    # Exactly covered by a: the walk stops there.
    assert model(need_nodes=2).greedy().tolist() == [True, False, False]
    assert model(need_nodes=1).greedy().tolist() == [True, False, False]
    # Nothing needed: no victim.
    assert model(need_nodes=0).greedy().tolist() == [False, False, False]
    # BB: a gives 10 B, c 0 B; 10 B exactly is covered, 10.5 is not (b is passed).
    assert model(need_nodes=0, need_bb=10.0).greedy().tolist() == [True, False, False]
    assert model(need_nodes=0, need_bb=10.5).greedy() is None
    assert model(need_nodes=0, need_bb=10.5, bb_capacity=1e9).greedy().tolist() == [
        True, False, False]  # (within the 1 B tolerance)
    assert model(need_nodes=0, need_bb=11.5, bb_capacity=1e9).greedy() is None
    # X with room for b too: a's 10 B and b's 20 B add up (25 B needs both).
    both = model(need_nodes=0, need_bb=25.0, slack={"X": 3, "Y": 3})
    assert both.greedy().tolist() == [True, True, False]
    # Order: c first covers 3 nodes alone.
    assert model(need_nodes=3, order=[2, 0, 1]).greedy().tolist() == [False, False, True]


def test_greedy_by_the_looser_reading():
    """Over-only: a victim's entity must hold more than its entitlement before each eviction:
    X (slack 2) gives a (2 nodes), then has 0 left and b is passed."""
    m = model(need_nodes=4, over_only=True, order=[0, 1, 2])
    assert m.greedy().tolist() == [True, False, True]
    one = model(need_nodes=4, over_only=True, slack={"X": 1, "Y": 3})
    assert one.greedy().tolist() == [True, False, True]  # X 1 left: a taken (ends at -1)
    none = model(need_nodes=3, over_only=True, slack={"X": 0, "Y": 3})
    assert none.greedy().tolist() == [False, False, True]
    assert model(need_nodes=6, over_only=True, slack={"X": 1, "Y": 3}).greedy() is None

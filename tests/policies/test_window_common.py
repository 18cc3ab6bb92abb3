"""BBSched's decision maker and starvation bound (Fan et al., Sections 3.1 and 3.2.4) at their
thresholds: a Pareto solution replaces the max-node one only for a gain strictly above twice its
node loss (four times with SSD objectives), and a job is forced once it has spent exactly
``starvation`` rounds in the window."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import Job
from bbopt.models.window import WindowModel
from bbopt.policies.window_common import bbsched_rule, force_starving
from bbopt.solvers import Solution

# 10 free nodes and 1 B of BB: objective values are the utilisation fractions x 10 and x 1
TWO = WindowModel(nodes=[1, 1], bb=[0, 0], free_nodes=10, free_bb=1.0,
                  objectives=("nodes", "bb"))
BASE = Solution(np.array([1, 1], bool), (10.0, 0.0))


@pytest.mark.parametrize("gain,chosen", [(0.15, 0), (0.2 - 1e-6, 0), (0.2, 0), (0.2 + 1e-6, 1),
                                         (0.25, 1)])
def test_bb_gain_must_exceed_twice_the_node_loss(gain, chosen):
    other = Solution(np.array([1, 0], bool), (9.0, gain))  # node loss 0.1
    assert bbsched_rule([BASE, other], TWO) == chosen
    assert bbsched_rule([other, BASE], TWO) == 1 - chosen


def test_a_factor_given_replaces_twice():
    other = Solution(np.array([1, 0], bool), (9.0, 0.15))
    assert bbsched_rule([BASE, other], TWO, factor=1.0) == 1
    assert bbsched_rule([BASE, other], TWO, factor=1.5) == 0  # 0.15 is not above 0.15


def test_of_several_gains_above_the_bar_the_largest_wins():
    a = Solution(np.array([1, 0], bool), (9.0, 0.3))
    b = Solution(np.array([0, 1], bool), (8.0, 0.5))  # loss 0.2, gain 0.5 > 0.4
    c = Solution(np.array([0, 1], bool), (9.0, 0.45))
    assert bbsched_rule([BASE, a, b, c], TWO) == 2
    assert bbsched_rule([BASE, a, c], TWO) == 2


@pytest.mark.parametrize("gains,chosen", [((0.2, 0.2), 0), ((0.2, 0.2 + 1e-6), 1),
                                          ((0.3, 0.0), 0), ((0.2, 0.1), 0)])
def test_with_ssd_objectives_the_gains_sum_and_the_factor_is_four(gains, chosen):
    m = WindowModel(nodes=[1, 1], bb=[0, 0], free_nodes=10, free_bb=1.0, ssd=[0, 0],
                    free_node_ssd=[0.1] * 10, objectives=("nodes", "bb", "ssd", "ssd_waste"))
    base = Solution(np.array([1, 1], bool), (10.0, 0.0, 0.0, 0.0))
    bb_gain, ssd_gain = gains
    scale_ssd = m.scales()[m.objectives.index("ssd")]
    other = Solution(np.array([1, 0], bool), (9.0, bb_gain, ssd_gain * scale_ssd, 0.0))
    assert bbsched_rule([base, other], m) == chosen


def _job(jid: str) -> Job:
    return Job(jid, 0.0, 100.0)


@pytest.mark.parametrize("spent,forced", [(2, False), (3, True), (4, True)])
def test_a_job_is_forced_from_exactly_the_starvation_bound(spent, forced):
    a = _job("a")
    got, blocker = force_starving([a], {"a": spent}, 3, lambda ids: True)
    assert got == ({"a"} if forced else set()) and blocker is None


def test_the_first_starving_job_that_cannot_start_blocks_and_later_ones_wait():
    a, b, c = _job("a"), _job("b"), _job("c")
    got, blocker = force_starving([a, b, c], {"a": 5, "b": 5, "c": 5}, 5,
                                  lambda ids: ids <= {"a", "c"})
    assert got == {"a"} and blocker is b


def test_no_bound_forces_nothing():
    assert force_starving([_job("a")], {"a": 10**9}, None, lambda ids: True) == (set(), None)

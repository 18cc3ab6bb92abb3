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


def test_a_job_not_yet_in_the_window_has_spent_no_round_and_waiting_jobs_are_passed():
    a, b = _job("a"), _job("b")
    # a bound of 1: a job never seen has spent 0 rounds, not 1
    assert force_starving([a], {}, 1, lambda ids: True) == (set(), None)
    # a job that has not starved does not stop the look at the ones behind it
    assert force_starving([a, b], {"b": 3}, 3, lambda ids: True) == ({"b"}, None)


# -- the window: base orders, dependencies, memory -------------------------------------------------

@pytest.mark.parametrize("nodes,submit,walltime,now,score", [
    (2, 100.0, 50.0, 200.0, 16.0),     # 2 x (100 / 50)^3, not ^4, not (300 / 50)^3
    (2, 200.0, 50.0, 200.0, 0.0),      # just submitted: no utility yet
    (3, 0.0, 1.0, 2.0, 24.0),          # 3 x (2 / 1)^3: a walltime of 1 s is not raised
    (3, 0.0, 0.5, 2.0, 24.0),          # below 1 s the walltime counts as 1 s
])
def test_wfp_score_is_nodes_times_the_cube_of_wait_over_walltime(nodes, submit, walltime, now,
                                                                  score):
    from bbopt.policies.window_common import wfp_score

    job = Job("j", submit, walltime, nodes=nodes)
    assert wfp_score(job, now) == pytest.approx(score)


def test_a_job_with_extra_fields_and_no_dependencies_is_eligible():
    from bbopt.core import ClusterState, Platform, RunningJob
    from bbopt.policies.window_common import eligible, previous_rounds

    tagged = Job("t", 0.0, 100.0, extra={"memory_per_node": 1e9})
    dep = Job("d", 0.0, 100.0, extra={"dependencies": "r"})
    state = ClusterState(0.0, Platform(4), (RunningJob(Job("r", 0.0, 100.0), 0.0),),
                         (tagged, dep, _job("p")), {"other": 1})
    assert [j.id for j in eligible(state)] == ["t", "p"]
    assert previous_rounds(state) == {}


def test_unknown_order_and_rule_names_are_refused_naming_the_known_ones():
    from bbopt.core import ClusterState, Platform
    from bbopt.errors import UnknownNameError
    from bbopt.policies.window_common import eligible, rule_of

    with pytest.raises(UnknownNameError,
                       match=r"^unknown order 'lifo'; known: fcfs, priority, wfp$"):
        eligible(ClusterState(0.0, Platform(4), (), ()), "lifo")
    with pytest.raises(UnknownNameError,
                       match=r"^unknown decision rule 'best'; known: bbsched, cqsim, max-bb, "
                             r"max-nodes$"):
        rule_of("best")


def test_an_io_aware_window_needs_a_tree_of_the_platforms_size():
    from dataclasses import replace

    from bbopt.core import ClusterState, Platform
    from bbopt.errors import InputError
    from bbopt.policies.window_common import tree_of, without_tree
    from bbopt.topology.formats import platform_from_topology
    from bbopt.topology.machines import herbein_example_topology

    tree = herbein_example_topology()
    plat = platform_from_topology(tree)
    assert without_tree(plat) is None and tree_of(ClusterState(0.0, plat, (), ()), "p") is tree
    why = "needs a platform with an I/O topology (e.g. bbopt.topology.cts1())"
    assert without_tree(Platform(4)) == why
    with pytest.raises(InputError, match=r"policy 'io-window' needs a platform with an I/O "
                                         r"topology \(e\.g\. bbopt\.topology\.cts1\(\)\)") as e:
        tree_of(ClusterState(0.0, Platform(4), (), ()), "io-window")
    assert e.value.field == "topology"
    wrong = replace(plat, nodes=plat.nodes + 1)
    with pytest.raises(InputError, match=f"the I/O topology has {tree.nodes} compute nodes, "
                                         f"the platform {tree.nodes + 1}") as e:
        tree_of(ClusterState(0.0, wrong, (), ()), "io-window")
    assert e.value.field == "topology"


# -- the decision rules on hand-made fronts --------------------------------------------------------

def test_the_base_is_the_max_node_solution_even_when_another_is_nearer_the_front():
    # {J2} (10 nodes) against {J1} (9 nodes, 0.1 more BB: below twice the loss): the max-node
    # solution is kept although J1 is nearer the window front
    base = Solution(np.array([0, 1], bool), (10.0, 0.0))
    near = Solution(np.array([1, 0], bool), (9.0, 0.1))
    assert bbsched_rule([near, base], TWO) == 1
    from bbopt.errors import InputError

    with pytest.raises(InputError, match="^empty Pareto set$"):
        bbsched_rule([], TWO)


def test_of_equal_gains_above_the_bar_the_first_listed_wins():
    a = Solution(np.array([1, 0], bool), (9.0, 0.3))
    b = Solution(np.array([0, 1], bool), (9.0, 0.3))
    assert bbsched_rule([BASE, a, b], TWO) == 1


def test_the_decision_rules_without_a_node_objective():
    # a window scored on BB and SSD only: no node loss, the larger gain wins
    m = WindowModel(nodes=[1, 1], bb=[0, 0], free_nodes=10, free_bb=1.0, ssd=[0, 0],
                    free_node_ssd=[1.0] * 10, objectives=("bb", "ssd"))
    low = Solution(np.array([1, 0], bool), (0.2, 0.0))
    high = Solution(np.array([0, 1], bool), (0.6, 0.0))
    assert bbsched_rule([low, high], m, factor=2.0) == 1


@pytest.mark.parametrize("other_nodes,chosen", [(0.0, 0), (0.1, 1)])
def test_cqsim_accepts_a_node_loss_strictly_below_a_tenth(other_nodes, chosen):
    # the base uses 1 of 10 nodes (0.1); the other 0 (a loss of exactly 0.1: refused) or 0.1
    # (0.01: a loss of 0.09, accepted), with a large BB gain
    from bbopt.policies.window_common import cqsim_rule

    base = Solution(np.array([1, 1], bool), (1.0, 0.0))
    other = Solution(np.array([1, 0], bool), (other_nodes, 0.5))
    assert cqsim_rule([base, other], TWO) == chosen


def test_cqsim_counts_no_bb_in_use_when_the_bb_is_all_free():
    # 1 B free of 1 B: nothing in use (not 1 B), so a gain from 0 to 0.2 is above 30 % of 0
    from bbopt.policies.window_common import cqsim_rule

    assert (TWO.total_bb, TWO.free_bb) == (1.0, 1.0)
    base = Solution(np.array([1, 1], bool), (10.0, 0.0))
    other = Solution(np.array([1, 0], bool), (9.5, 0.2))
    assert cqsim_rule([base, other], TWO) == 1


def test_cqsim_takes_the_first_of_equal_sums_and_breaks_node_ties_by_bb():
    from bbopt.policies.window_common import cqsim_rule

    a = Solution(np.array([1, 0], bool), (9.5, 0.5))
    b = Solution(np.array([0, 1], bool), (9.5, 0.5))
    assert cqsim_rule([BASE, a, b], TWO) == 1
    # equal nodes and order: the base is the one with more BB (1.2 against 1.0 of 4 B); the
    # other is within 30 % of it, so the base stays
    m2 = WindowModel(nodes=[5, 5], bb=[1, 1.2], free_nodes=10, free_bb=4.0,
                     objectives=("nodes", "bb"), order=[1, 1])
    lo = Solution(np.array([1, 0], bool), (5.0, 1.0))
    hi = Solution(np.array([0, 1], bool), (5.0, 1.2))
    assert cqsim_rule([lo, hi], m2) == 1 and cqsim_rule([hi, lo], m2) == 0


def test_a_fresh_max_objective_rule_takes_the_largest_value_then_the_window_front():
    from bbopt.policies.window_common import max_objective_rule

    m = WindowModel(nodes=[5, 5, 5], bb=[0, 0, 0], free_nodes=10, free_bb=1.0,
                    objectives=("nodes", "bb"))
    front = [Solution(np.array([0, 1, 1], bool), (10.0, 0.1)),
             Solution(np.array([1, 1, 0], bool), (10.0, 0.0)),
             Solution(np.array([1, 0, 0], bool), (5.0, 0.5))]
    assert max_objective_rule("nodes")(front, m) == 1  # ties: nearer the window front
    assert max_objective_rule("bb")(front, m) == 2


# -- the report ------------------------------------------------------------------------------------

def test_the_report_of_a_round_without_a_model_and_of_a_pareto_set():
    import time

    from bbopt.core import Status
    from bbopt.policies.window_common import report
    from bbopt.solvers.base import Result
    from bbopt.solvers.scalarize import Candidates

    t0 = time.perf_counter()
    stats, alts = report(None, None, 0, t0, 2.0)
    spent = time.perf_counter() - t0
    assert alts == () and (stats.backend, stats.status, stats.budget) == (
        "starvation", Status.FEASIBLE, 2.0)
    assert 0.0 < stats.wall_time <= spent
    sols = (Solution(np.array([1, 1], bool), (10.0, 0.0)),
            Solution(np.array([1, 0], bool), (9.0, 0.5)))
    res = Result(Status.OPTIMAL, sols[1].x, sols[1].objectives, pareto=sols, bound=(10.0, 0.5),
                 backend="cpsat")
    named = WindowModel(nodes=[1, 1], bb=[0, 0], free_nodes=10, free_bb=1.0,
                        objectives=("nodes", "bb"), job_ids=("a", "b"))
    stats, alts = report(res, Candidates(named), 1, time.perf_counter(), 2.0)
    assert (stats.backend, stats.status, stats.objective, stats.bound, stats.gap,
            stats.budget) == ("cpsat", Status.OPTIMAL, (9.0, 0.5), (10.0, 0.5), None, 2.0)
    assert [(a["jobs"], a["chosen"]) for a in alts] == [(["a", "b"], False), (["a"], True)]
    assert alts[1]["objectives"] == {"nodes": 9.0, "bb": 0.5}
    assert alts[1]["utilization"] == {"nodes": 0.9, "bb": 0.5}
    # a scalar form reports no set, and the backend's own objective, bound, gap and status
    scalar = Result(Status.FEASIBLE, sols[1].x, 9.0, pareto=sols, bound=10.0, backend="milp")
    t1 = time.perf_counter()
    stats, alts = report(scalar, Candidates(named), 1, t1, 2.0, pareto=False)
    spent = time.perf_counter() - t1
    assert alts == () and (stats.backend, stats.status, stats.objective, stats.bound) == (
        "milp", Status.FEASIBLE, 9.0, 10.0)
    assert stats.gap == pytest.approx(0.1) and 0.0 < stats.wall_time <= spent


def test_cqsim_without_a_bb_or_a_node_objective():
    from bbopt.policies.window_common import cqsim_rule

    # SSD use is the only gain: no BB in use is counted
    m = WindowModel(nodes=[1, 1], bb=[0, 0], free_nodes=10, free_bb=1.0, ssd=[0, 0],
                    free_node_ssd=[1.0] * 10, objectives=("nodes", "ssd"))
    base = Solution(np.array([1, 1], bool), (10.0, 0.0))
    other = Solution(np.array([1, 0], bool), (9.5, 5.0))
    assert cqsim_rule([base, other], m) == 1
    # no node objective: no node loss; the larger BB use wins
    nb = WindowModel(nodes=[1, 1], bb=[0, 0], free_nodes=10, free_bb=1.0, objectives=("bb",))
    assert cqsim_rule([Solution(np.array([1, 0], bool), (0.2,)),
                       Solution(np.array([0, 1], bool), (0.6,))], nb) == 1


@pytest.mark.parametrize("other_bb,chosen", [(0.15, 0), (0.25, 0), (0.4, 1)])
def test_cqsim_adds_the_bb_in_use_to_both_sums(other_bb, chosen):
    # half of the BB is in use: 0.1 -> 0.25 is 0.6 -> 0.75 in the system, below 30 % more;
    # 0.6 -> 0.9 is above (as if the BB in use were subtracted, 0.25 would switch)
    from bbopt.policies.window_common import cqsim_rule

    m = WindowModel(nodes=[1, 1], bb=[0, 0], free_nodes=10, free_bb=0.5, total_bb=1.0,
                    objectives=("nodes", "bb"))
    scale = m.scales()[1]
    base = Solution(np.array([1, 1], bool), (10.0, 0.1 * scale))
    other = Solution(np.array([1, 0], bool), (9.5, other_bb * scale))
    assert cqsim_rule([base, other], m) == chosen


def test_cqsim_counts_ssd_gains_with_no_use_added():
    # gains BB, SSD and wasted-SSD reduction; only the BB has a use now (none): 0 -> 0.5 of
    # SSD switches (as if each other gain started at 1, 2 -> 2.5 would stay below 30 %)
    from bbopt.policies.window_common import cqsim_rule

    m = WindowModel(nodes=[1, 1], bb=[0, 0], free_nodes=10, free_bb=1.0, ssd=[0, 0],
                    free_node_ssd=[1.0] * 10, objectives=("nodes", "bb", "ssd", "ssd_waste"))
    scale_ssd = m.scales()[2]
    base = Solution(np.array([1, 1], bool), (10.0, 0.0, 0.0, 0.0))
    other = Solution(np.array([1, 0], bool), (9.5, 0.0, 0.5 * scale_ssd, 0.0))
    assert cqsim_rule([base, other], m) == 1

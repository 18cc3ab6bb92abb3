"""The plan model's ``cpsat`` backend: the optimum over all plans (Kopanski & Rzadca, Section
3.3, as a cumulative scheduling program), on hand-made points whose optimum is known: the
exponents it accepts, the half-capacity pairs its redundant no-overlap must not separate, the
waits already spent in its bound, and its status when times or bytes are not whole."""

import pytest

from bbopt.core import GB, Job, Status
from bbopt.models.plan import Plan, PlanModel
from bbopt.solvers import Budget
from bbopt.solvers.plan.cpsat import solve_cpsat


def test_only_the_exponents_1_2_and_3_are_programmed():
    model = PlanModel(0.0, (4, 0.0), [], [Job("a", 0, walltime=10, nodes=1)], alpha=1.5)
    with pytest.raises(ValueError, match=r"^cpsat supports alpha 1, 2 and 3, not 1\.5$"):
        solve_cpsat(model, Budget(5))


def test_an_empty_queue_is_optimal_at_zero():
    model = PlanModel(0.0, (4, 0.0), [(50.0, 2, 0.0)], [], alpha=2)
    res = solve_cpsat(model, Budget(5))
    assert res.status is Status.OPTIMAL and res.backend == "cpsat"
    assert res.objective == 0.0 and res.bound == 0.0
    assert res.solution == Plan((), ())


@pytest.mark.parametrize(("nodes", "bb", "starts"), [
    (2, (0.0, 0.0), (0.0, 0.0)),  # half the nodes each: together now
    (3, (0.0, 0.0), (0.0, 10.0)),  # more than half: one after the other
    (1, (5 * GB, 5 * GB), (0.0, 0.0)),  # half the BB each: together now
    # the fit rule's slack (bbopt.core.fits): 10 GB * 1e-9 = 10 B above the capacity fit, 11
    # do not; two jobs above half the BB may still run together
    (1, (5 * GB + 1, 5 * GB + 1), (0.0, 0.0)),
    (1, (5 * GB + 5, 5 * GB + 5), (0.0, 0.0)),
    (1, (5 * GB + 5, 5 * GB + 6), (0.0, 10.0)),
])
def test_two_jobs_run_together_when_the_fit_rule_lets_them(nodes, bb, starts):
    """4 nodes and 10 GB of BB, two jobs of 10 s submitted at 0, now = 0, alpha 2: the
    program's optimum is the plan the model would run (its greedy plan of either order)."""
    jobs = [Job("a", 0, walltime=10, nodes=nodes, bb=bb[0]),
            Job("b", 0, walltime=10, nodes=nodes, bb=bb[1])]
    model = PlanModel(0.0, (4, 10 * GB), [], jobs, alpha=2)
    assert model.plan([0, 1]).starts == starts
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.OPTIMAL
    assert res.solution.starts == starts
    assert res.objective == res.bound == starts[1] ** 2


def test_the_optimum_over_all_plans_is_that_of_the_permutations_within_the_fit_slack():
    """Two jobs of 2 nodes and just over half the BB (5 GB + 2 B and 5 GB + 1 B, together 3 B
    over the 10 GB, within the 10 B slack) run together in the model's plans: the best
    permutation scores 1,800. The program must not hold the BB to exactly 10 GB (it found
    2,100 there and called it optimal, with a bound above a plan the model runs)."""
    jobs = [Job("0", 0, walltime=20, nodes=2), Job("1", 0, walltime=20, nodes=4),
            Job("2", 0, walltime=10, nodes=2, bb=5 * GB + 2),
            Job("3", 0, walltime=10, nodes=2, bb=5 * GB + 1),
            Job("4", 0, walltime=30, nodes=2, bb=5 * GB + 2)]
    model = PlanModel(0.0, (4, 10 * GB), [], jobs, alpha=2)
    assert model.plan([2, 3, 0, 4, 1]).starts == (10.0, 40.0, 0.0, 0.0, 10.0)
    assert model.score([2, 3, 0, 4, 1]) == 10**2 + 40**2 + 10**2 == 1800
    res = solve_cpsat(model, Budget(30))
    assert res.status is Status.OPTIMAL
    assert res.objective == res.bound == 1800
    assert model.check(res.solution) is None


def test_a_job_just_over_the_bb_capacity_within_the_slack_is_planned():
    model = PlanModel(0.0, (4, 10 * GB), [], [Job("a", 5, walltime=10, nodes=1,
                                                 bb=10 * GB + 10)], alpha=2)
    assert model.n == 1
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.OPTIMAL and res.solution.starts == (0.0,)
    assert res.objective == res.bound == 0.0


@pytest.mark.parametrize("alpha", [1, 2, 3])
def test_the_waits_already_spent_are_in_the_objective_and_its_bound(alpha):
    """now = 100, 2 nodes; a (2 nodes, 40 s) and b (1 node, 10 s) submitted at 0. a first
    makes b wait until 140; b first makes a wait until 110: the optimum 100**a + 110**a
    counts the 100 s both have already waited, and so does its proven bound."""
    jobs = [Job("a", 0, walltime=40, nodes=2), Job("b", 0, walltime=10, nodes=1)]
    model = PlanModel(100.0, (2, 0.0), [], jobs, alpha=alpha)
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.OPTIMAL and res.info["exact"]
    assert res.solution.starts == (110.0, 100.0)
    assert res.objective == res.bound == 100**alpha + 110**alpha
    assert model.score([1, 0]) == res.objective < model.score([0, 1])


@pytest.mark.parametrize(("running", "jobs", "starts"), [
    # a running job ending at 10.5 on both nodes: its 11 whole seconds (rounded up)
    ([(10.5, 2, 0.0)], [Job("a", 0, walltime=10, nodes=1)], (11.0,)),
    # 5.5 B of a 10 B buffer held until 10 (rounded up to 6): 5 B more must wait
    ([(10.0, 1, 5.5)], [Job("a", 0, walltime=10, nodes=1, bb=5.0)], (10.0,)),
    # a first job of 9.5 s on both nodes (rounded up to 10): the longer second starts at 10
    ([], [Job("a", 0, walltime=9.5, nodes=2), Job("b", 0, walltime=20, nodes=2)], (0.0, 10.0)),
    # a job of 5.5 B on a 10 B buffer (rounded up): 5 B more wait for it
    ([], [Job("a", 0, walltime=10, nodes=1, bb=5.5), Job("b", 0, walltime=10, nodes=1,
                                                         bb=5.0)], (0.0, 10.0)),
])
def test_times_and_bytes_not_whole_are_rounded_to_a_plan_that_holds_not_called_optimal(
        running, jobs, starts):
    """2 nodes and 10 B of BB, now = 0, alpha 1: durations and demands rounded up keep the plan
    feasible (rounded down it would overlap and be refused); the status is then FEASIBLE."""
    model = PlanModel(0.0, (2, 10.0), running, jobs, alpha=1)
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.FEASIBLE and res.info["exact"] is False
    assert res.solution.starts == starts
    assert model.check(res.solution) is None


def test_a_wait_already_spent_not_whole_makes_the_answer_feasible_only():
    model = PlanModel(10.0, (2, 0.0), [], [Job("a", 0.5, walltime=10, nodes=1)], alpha=2)
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.FEASIBLE and res.info["exact"] is False
    assert res.solution.starts == (10.0,) and res.objective == 9.5**2 and res.bound is None


def test_a_running_job_ended_now_is_skipped_and_those_after_it_still_count():
    model = PlanModel(0.0, (2, 0.0), [(0.0, 2, 0.0), (10.0, 2, 0.0)],
                      [Job("a", 0, walltime=5, nodes=1)], alpha=1)
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.OPTIMAL and res.info["exact"] is True
    assert res.solution.starts == (10.0,) and res.objective == res.bound == 10.0
    assert res.info["cp_status"] == "OPTIMAL"


def test_the_answer_names_the_backend_and_reports_the_incumbent_it_started_from():
    """One job of 5 s on both nodes, another of 1 s: the best candidate order (short first)
    scores 1, the program proves it."""
    jobs = [Job("a", 0, walltime=5, nodes=2), Job("b", 0, walltime=1, nodes=2)]
    res = solve_cpsat(PlanModel(0.0, (2, 0.0), [], jobs, alpha=1), Budget(10))
    assert res.backend == "cpsat" and res.solution.starts == (1.0, 0.0)
    assert set(res.info) == {"cp_status", "exact", "incumbent", "conflicts"}
    assert res.info["incumbent"] == 1.0 and res.info["cp_status"] == "OPTIMAL"
    assert isinstance(res.info["conflicts"], int)


def test_wait_cubes_beyond_int64_are_refused():
    """alpha 3 with 1.4e6 s already waited: 1.4e6 ** 3 = 2.7e18 is above the 2 ** 61 kept."""
    model = PlanModel(1.4e6, (2, 0.0), [], [Job("a", 0, walltime=10, nodes=1)], alpha=3)
    with pytest.raises(ValueError, match=r"^wait cubes exceed int64; use annealing for this "
                                         r"state$"):
        solve_cpsat(model, Budget(10))

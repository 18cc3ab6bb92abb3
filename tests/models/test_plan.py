"""Kopanski & Rzadca's plan score (Section 3.3, Eq. 1): the sum over the waiting jobs of
``wait ** alpha``, each wait counted from the job's submission (not from the decision), on
values that separate it from the square of the sum, a wait counted from now, or another
exponent.

The plan model: greedy placement over nodes and BB, exact boundaries, scores, capacities."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob
from bbopt.models.plan import CANDIDATE_ORDERS, Plan, PlanModel
from bbopt.planner import Profile


def _model(alpha: float) -> PlanModel:
    # now = 100; one node, busy until 110; a (submitted at 90) and b (at 60), 10 s each
    jobs = [Job("a", 90.0, 10.0, nodes=1), Job("b", 60.0, 10.0, nodes=1)]
    return PlanModel(100.0, (1, 0.0), [(110.0, 1, 0.0)], jobs, alpha=alpha)


@pytest.mark.parametrize("alpha,a_first,b_first", [
    # a first: a starts at 110 (waits 20), b at 120 (waits 60); b first: b waits 50, a 30
    (1, 20 + 60, 50 + 30),
    (2, 20**2 + 60**2, 50**2 + 30**2),
    (3, 20**3 + 60**3, 50**3 + 30**3),
    (1.5, 20**1.5 + 60**1.5, 50**1.5 + 30**1.5),
])
def test_score_is_the_sum_of_waits_since_submission_to_the_power_alpha(alpha, a_first, b_first):
    model = _model(alpha)
    assert model.evaluate([0, 1]) == pytest.approx(a_first, rel=1e-12)
    assert model.evaluate([1, 0]) == pytest.approx(b_first, rel=1e-12)


def test_the_order_that_minimises_the_score_depends_on_alpha():
    # alpha = 1: both orders wait 80 s in total; a higher alpha serves the older b first
    assert _model(1).evaluate([0, 1]) == _model(1).evaluate([1, 0]) == 80.0
    assert _model(2).evaluate([1, 0]) < _model(2).evaluate([0, 1])


def test_a_job_that_starts_at_its_submission_adds_nothing():
    jobs = [Job("a", 100.0, 10.0, nodes=1)]
    assert PlanModel(100.0, (1, 0.0), [], jobs, alpha=2).evaluate([0]) == 0.0


def _job(i, submit=0.0, walltime=10.0, nodes=1, bb=0.0):
    return Job(str(i), submit=submit, walltime=walltime, nodes=nodes, bb=bb)


def test_job_ending_at_t_frees_resources_for_a_job_starting_at_t():
    # 4 nodes, 10 GB; a running job holds 4 nodes until t=10.
    m = PlanModel(0.0, (4, 10 * GB), [(10.0, 4, 0.0)], [_job(0, nodes=4, walltime=5)], alpha=1)
    assert m.plan([0]).starts == (10.0,)


def test_bb_alone_can_delay_a_job_and_order_matters():
    # Nodes are plentiful; the BB is the bottleneck (the paper's Section 3.1 point).
    jobs = [_job(0, walltime=100, nodes=1, bb=8 * GB), _job(1, walltime=10, nodes=1, bb=5 * GB)]
    m = PlanModel(0.0, (10, 10 * GB), [], jobs, alpha=1)
    assert m.plan([0, 1]).starts == (0.0, 100.0)
    assert m.plan([1, 0]).starts == (10.0, 0.0)
    assert m.score([0, 1]) == 100.0 and m.score([1, 0]) == 10.0


def test_a_later_job_backfills_into_a_hole_before_earlier_reservations():
    # 2 nodes: job 0 (2 nodes) must wait for the running job; job 1 (1 node, short) fits now.
    m = PlanModel(0.0, (2, 0.0), [(50.0, 1, 0.0)],
                  [_job(0, nodes=2, walltime=30), _job(1, nodes=1, walltime=20)], alpha=2)
    plan = m.plan([0, 1])
    assert plan.starts == (50.0, 0.0)
    assert plan.started_now(0.0) == [1]
    assert m.score([0, 1]) == 50.0**2


def test_score_counts_the_time_already_waited():
    m = PlanModel(100.0, (4, 0.0), [], [_job(0, submit=40.0)], alpha=2)
    assert m.score([0]) == 60.0**2
    assert m.evaluate(m.plan([0])) == 60.0**2


def test_threshold_aborts_only_above_it():
    jobs = [_job(i, nodes=2, walltime=10 + i) for i in range(5)]
    m = PlanModel(0.0, (2, 0.0), [], jobs, alpha=2)
    full = m.score(range(5))
    assert m.score(range(5), threshold=full) == full
    assert m.score(range(5), threshold=full - 1) == math.inf


def test_candidates_are_the_nine_orders_of_the_paper():
    jobs = [_job(i, nodes=1 + i % 3, walltime=10 * (5 - i), bb=(i + 1) * GB) for i in range(5)]
    m = PlanModel(0.0, (4, 100 * GB), [], jobs)
    cands = m.candidates()
    assert [name for name, _ in cands] == list(CANDIDATE_ORDERS)
    assert all(sorted(order) == list(range(5)) for _, order in cands)
    by = dict(cands)
    assert by["submission"] == (0, 1, 2, 3, 4)
    assert by["walltime-asc"] == (4, 3, 2, 1, 0)
    assert [jobs[p].nodes for p in by["nodes-desc"]] == sorted((j.nodes for j in jobs),
                                                                reverse=True)


def test_from_state_uses_expected_ends_and_excludes_jobs_that_never_fit():
    plat = Platform(nodes=4, bb=10 * GB)
    run = RunningJob(_job("r", walltime=30.0, nodes=3), start=-10.0)
    q = (_job(0, nodes=2), _job(1, nodes=5))
    m = PlanModel.from_state(ClusterState(0.0, plat, (run,), q), alpha=1)
    assert [j.id for j in m.jobs] == ["0"] and [j.id for j in m.excluded] == ["1"]
    assert m.plan([0]).starts == (20.0,)
    assert m.startable_now() == []


def test_check_rejects_an_overbooked_plan():
    m = PlanModel(0.0, (2, 0.0), [], [_job(0, nodes=2), _job(1, nodes=1)])
    assert m.check(Plan((0.0, 10.0))) is None
    assert m.check(Plan((0.0, 5.0))) == "at t=5.0: 3 nodes / 0 B in use"
    assert "before now" in m.check(Plan((-1.0, 10.0)))


# --------------------------------------------------------------------------- property tests
_state = st.fixed_dictionaries({
    "cap_n": st.integers(1, 12),
    "cap_b": st.integers(0, 20),
    "running": st.lists(st.tuples(st.integers(1, 60), st.integers(1, 4), st.integers(0, 6)),
                        max_size=6),
    "jobs": st.lists(st.tuples(st.integers(0, 50), st.integers(1, 40), st.integers(1, 12),
                               st.integers(0, 20)), min_size=1, max_size=8),
    "perm_seed": st.randoms(use_true_random=False),
})


def _build(d, alpha=2):
    cap_n, cap_b = d["cap_n"], d["cap_b"] * GB
    running, used_n, used_b = [], 0, 0.0
    for end, n, b in d["running"]:
        if used_n + n <= cap_n and used_b + b * GB <= cap_b:
            running.append((50.0 + end, n, b * GB))
            used_n += n
            used_b += b * GB
    jobs = [Job(str(i), submit=float(s), walltime=float(w), nodes=min(n, cap_n),
                bb=float(min(b, d["cap_b"]) * GB)) for i, (s, w, n, b) in enumerate(d["jobs"])]
    return PlanModel(50.0, (cap_n, cap_b), running, jobs, alpha)


@settings(max_examples=150, deadline=None)
@given(_state)
def test_every_plan_respects_capacities_and_matches_the_reference_profile(d):
    m = _build(d)
    order = list(range(m.n))
    d["perm_seed"].shuffle(order)
    plan = m.plan(order)
    assert m.check(plan) is None
    # Independent oracle: the general numpy availability profile of bbopt.resources.
    prof = Profile(m.now, m.capacity, [(e, (n, b)) for e, n, b in m.running])
    for p in order:
        job = m.jobs[p]
        t = prof.earliest_fit(m.now, job.walltime, job.demand)
        prof.reserve(t, t + job.walltime, job.demand)
        assert plan.starts[p] == t
    assert m.score(order) == m.evaluate(plan)
    # Jobs started now all fit in what is free now.
    now_set = plan.started_now(m.now)
    assert set(now_set) <= set(m.startable_now())


@settings(max_examples=60, deadline=None)
@given(_state)
def test_earliest_and_reserve_agree_with_the_inner_loop(d):
    m = _build(d, alpha=1)
    prof = m.base_profile()
    order = list(range(m.n))
    d["perm_seed"].shuffle(order)
    starts = {}
    for p in order:
        s, i, j = m.earliest(prof, p)
        m.reserve(prof, p, s, i, j)
        starts[p] = s
    assert tuple(starts[p] for p in range(m.n)) == m.plan(order).starts


def test_all_permutations_of_a_small_queue_are_feasible():
    jobs = [_job(i, submit=i, walltime=5 + 7 * i, nodes=1 + i % 3, bb=(3 - i % 3) * GB)
            for i in range(5)]
    m = PlanModel(10.0, (4, 6 * GB), [(20.0, 2, 2 * GB), (33.0, 1, 1 * GB)], jobs)
    for order in itertools.permutations(range(5)):
        assert m.check(m.plan(order)) is None


# --------------------------------------------------------------------------- pinned rules
def test_the_default_exponent_is_two_directly_and_from_a_state():
    # now = 10, one node busy until 40; a job submitted at 0 starts at 40: 40 s, squared
    m = PlanModel(10.0, (1, 0.0), [(40.0, 1, 0.0)], [_job(0)])
    assert m.score([0]) == 40.0**2 and m.evaluate(m.plan([0])) == 40.0**2
    plat = Platform(nodes=1, bb=10 * GB)
    state = ClusterState(10.0, plat, (RunningJob(_job("r", walltime=30.0), start=10.0),),
                         (_job(0),))
    assert PlanModel.from_state(state).score([0]) == 40.0**2
    # the exponent given to from_state is the model's: 40 s, not 40 s squared
    assert PlanModel.from_state(state, alpha=1).score([0]) == 40.0


def test_from_state_on_named_bb_nodes_keeps_the_exponent():
    plat = Platform(nodes=2, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))
    state = ClusterState(10.0, plat, (RunningJob(_job("r", walltime=30.0, nodes=2),
                                                 start=10.0),), (_job(0, bb=5 * GB),))
    for alpha, expected in ((1, 40.0), (3, 40.0**3)):
        m = PlanModel.from_state(state, alpha=alpha)
        assert m.named is not None
        assert m.plan([0]).starts == (40.0,) and m.score([0]) == expected


def test_the_lower_bound_is_the_wait_already_spent_to_the_power_alpha():
    # now = 100, submitted at 40: 60 s waited already (not now + submit = 140)
    m = PlanModel(100.0, (4, 0.0), [], [_job(0, submit=40.0), _job(1, submit=100.0)], alpha=2)
    assert [m.lower_bound(0), m.lower_bound(1)] == [3600.0, 0.0]
    assert m.term(0, 110.0) == 4900.0


def test_a_wait_below_one_second_counts_and_no_wait_is_negative():
    # a node busy until 0.5: a job submitted at 0 waits 0.5 s (alpha 1: 0.5, not 0 or 1)
    m = PlanModel(0.0, (1, 0.0), [(0.5, 1, 0.0)], [_job(0)], alpha=1)
    assert m.plan([0]).starts == (0.5,) and m.score([0]) == 0.5
    # a job not yet submitted (submit 0.5) planned now counts 0, not -0.5 or 1
    m = PlanModel(0.0, (1, 0.0), [], [_job(0, submit=0.5)], alpha=1)
    assert m.score([0]) == 0.0 and m.lower_bound(0) == 0.0
    assert m.evaluate(Plan((0.0,))) == 0.0
    for alpha in (2, 3, 1.5):
        m = PlanModel(0.0, (1, 0.0), [], [_job(0, submit=0.5)], alpha=alpha)
        assert m.score([0]) == 0.0 and m.evaluate(Plan((0.0,))) == 0.0


@pytest.mark.parametrize("alpha", [1, 2, 3, 1.5])
def test_a_plan_scores_bit_for_bit_as_its_order(alpha):
    # a wait of 7.7 s: 7.7 * 7.7 * 7.7 (the compiled loop's product) is 456.5330000000001,
    # 7.7 ** 3 is 456.533; the score of an order and of its plan are the same float
    m = PlanModel(0.0, (1, 0.0), [(7.7, 1, 0.0)], [_job(0)], alpha=alpha)
    expected = {1: 7.7, 2: 7.7 * 7.7, 3: 7.7 * 7.7 * 7.7, 1.5: 7.7**1.5}[alpha]
    assert m.score([0]) == expected
    assert m.evaluate(m.plan([0])) == expected
    assert m.evaluate(Plan((7.7,))) == expected
    assert m.term(0, 7.7) == expected


def test_a_plan_of_the_wrong_length_is_not_scored():
    m = PlanModel(0.0, (2, 0.0), [], [_job(0), _job(1)])
    with pytest.raises(ValueError):
        m.evaluate(Plan((0.0,)))
    assert m.check(Plan((0.0,))) == "plan has 1 starts for 2 jobs"


def test_running_jobs_ending_at_the_same_instant_free_their_bb_together():
    # BB frees 1 GB at 10 and 2 + 3 GB at 20 (two ends at one instant): 4, 5 then 10 GB free;
    # an 8 GB job fits from 20 on, a 5 GB one from 10 on, a 10 GB one once both have ended
    run = [(10.0, 1, 1 * GB), (20.0, 1, 2 * GB), (20.0, 1, 3 * GB)]
    m = PlanModel(0.0, (4, 10 * GB), run, [_job(0, bb=8 * GB), _job(1, bb=5 * GB),
                                           _job(2, bb=10 * GB)], alpha=1)
    assert m.plan([0, 1, 2]).starts == (20.0, 10.0, 30.0)
    assert m.plan([2, 1, 0]).starts == (30.0, 10.0, 20.0)
    assert m.base_profile() == ([0.0, 10.0, 20.0], [1, 2, 4], [4 * GB, 5 * GB, 10 * GB])


def test_started_now_of_a_plan_without_order_is_by_start_then_index():
    # a plan handed in (CP-SAT's): no order, jobs started now by (start, index)
    plan = Plan((3.0, 0.0, 0.0, 5.0))
    assert plan.started_now(3.0) == [1, 2, 0]
    assert plan.started_now(0.0) == [1, 2]
    assert Plan((3.0, 0.0, 0.0), order=(2, 0, 1)).started_now(3.0) == [2, 0, 1]


def test_candidate_orders_by_bb_per_node_and_per_node_squared():
    # (nodes, BB): bb/node = 8, 4, 3 GB; bb/node/node = 8, 1, 1 GB (a tie, kept in submission
    # order); bb * nodes would give 8, 64, 27 and bb * nodes**2 8, 256, 243
    jobs = [_job(0, nodes=1, walltime=30, bb=8 * GB), _job(1, nodes=4, walltime=10, bb=16 * GB),
            _job(2, nodes=3, walltime=20, bb=9 * GB)]
    by = dict(PlanModel(0.0, (4, 100 * GB), [], jobs).candidates())
    assert by == {
        "submission": (0, 1, 2),
        "nodes-asc": (0, 2, 1), "nodes-desc": (1, 2, 0),
        "bb-per-node-asc": (2, 1, 0), "bb-per-node-desc": (0, 1, 2),
        "bb-per-node-per-node-asc": (1, 2, 0), "bb-per-node-per-node-desc": (0, 1, 2),
        "walltime-asc": (1, 2, 0), "walltime-desc": (0, 2, 1),
    }


def test_candidate_orders_tell_bb_per_node_from_bb_per_node_squared():
    # bb/node = 8, 6 GB; bb/node/node = 8, 1.5 GB; bb*nodes = 8, 96: all three differ in order
    # of the second pair only through the node count
    jobs = [_job(0, nodes=1, bb=8 * GB), _job(1, nodes=4, bb=24 * GB), _job(2, nodes=2, bb=14 * GB)]
    by = dict(PlanModel(0.0, (4, 100 * GB), [], jobs).candidates())
    # bb/node 8, 6, 7; bb/node/node 8, 1.5, 3.5
    assert by["bb-per-node-asc"] == (1, 2, 0)
    assert by["bb-per-node-per-node-asc"] == (1, 2, 0)
    jobs[2] = _job(2, nodes=2, bb=10 * GB)  # bb/node 5 (below 6), bb/node/node 2.5 (above 1.5)
    by = dict(PlanModel(0.0, (4, 100 * GB), [], jobs).candidates())
    assert by["bb-per-node-asc"] == (2, 1, 0)
    assert by["bb-per-node-per-node-asc"] == (1, 2, 0)


def test_check_takes_a_plain_sequence_of_starts():
    m = PlanModel(0.0, (2, 0.0), [], [_job(0, nodes=2), _job(1, nodes=1)])
    assert m.check((0.0, 10.0)) is None
    assert m.check([0.0, 5.0]) == "at t=5.0: 3 nodes / 0 B in use"


def test_check_a_running_job_ending_now_holds_nothing():
    # the running job's expected end is now: its nodes are free now, and only once
    m = PlanModel(10.0, (2, 10 * GB), [(10.0, 2, 10 * GB)],
                  [_job(0, nodes=2, bb=10 * GB), _job(1, nodes=1)])
    assert m.check((10.0, 20.0)) is None
    assert m.check((10.0, 10.0)) == "at t=10.0: 3 nodes / 1e+10 B in use"


def test_check_counts_the_bb_of_every_overlapping_job():
    m = PlanModel(0.0, (4, 10 * GB), [(5.0, 1, 3 * GB)],
                  [_job(0, bb=6 * GB), _job(1, bb=6 * GB), _job(2, bb=4 * GB)])
    assert m.check((5.0, 15.0, 0.0)) is None  # 3 + 4 GB, then 6 + 4 and 6
    assert m.check((5.0, 5.0, 20.0)) == "at t=5.0: 2 nodes / 1.2e+10 B in use"
    assert m.check((0.0, 20.0, 0.0)) == "at t=0.0: 3 nodes / 1.3e+10 B in use"


def test_check_allows_one_rounding_slack_per_job_and_one_more():
    # 10 GB of BB, slack 10 B (REL_TOL 1e-9); two jobs overlap: their BB may exceed the capacity
    # by 3 slacks (30 B) and no more
    cap = 10 * GB
    tol = cap * 1e-9
    for excess, ok in ((29.0, True), (30.0, True), (31.0, False), (39.0, False)):
        half = cap / 2 + excess / 2
        m = PlanModel(0.0, (4, cap), [], [_job(0, bb=half), _job(1, bb=half)])
        assert m.tol == tol
        assert (m.check((0.0, 0.0)) is None) is ok, excess


def test_earliest_on_a_named_profile_is_the_pools():
    plat = Platform(nodes=2, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))
    state = ClusterState(0.0, plat, (RunningJob(_job("r", walltime=30.0, nodes=2), start=0.0),),
                         (_job(0, bb=5 * GB),))
    m = PlanModel.from_state(state)
    assert m.earliest(m.named_profile(), 0) == (30.0, 1, 2)

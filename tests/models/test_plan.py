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

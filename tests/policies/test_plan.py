"""plan-1 / plan-2 / plan-3 policies through decide and the simulator."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bbopt
from bbopt.analysis.metrics import summarize
from bbopt.core import GB, ClusterState, Job, Platform, RunningJob, Status
from bbopt.errors import InputError
from bbopt.models.plan import PlanModel
from bbopt.policies import make_policy
from bbopt.workloads.synthetic import kth_like


def _state(n=8, seed=0):
    import random

    rnd = random.Random(seed)
    plat = Platform(nodes=16, bb=40 * GB)
    running = (RunningJob(Job("r0", submit=0, walltime=500, nodes=6, bb=10 * GB), start=0),
               RunningJob(Job("r1", submit=0, walltime=900, nodes=4, bb=12 * GB), start=50))
    queue = tuple(Job(f"q{i}", submit=10 + i, walltime=rnd.randint(60, 1200),
                      nodes=rnd.randint(1, 8), bb=rnd.randint(1, 15) * GB) for i in range(n))
    return ClusterState(100.0, plat, running, queue)


def test_names_fix_alpha():
    for k in (1, 2, 3):
        assert make_policy(f"plan-{k}").alpha == k
    with pytest.raises(InputError):
        make_policy("plan-2", alpha=3)
    with pytest.raises(InputError):
        make_policy("plan-2", backend="nope")


def test_former_option_name_solver_still_chooses_the_backend():
    with pytest.warns(FutureWarning, match="'solver' is now 'backend'"):
        policy = make_policy("plan-2", solver="cpsat")
    assert policy.backend == "cpsat"


@pytest.mark.parametrize("policy", ["plan-1", "plan-2", "plan-3"])
def test_decision_starts_what_the_plan_starts_now_and_reserves_the_rest(policy):
    state = _state()
    d = bbopt.decide(state, policy=policy)
    free_n, free_b = state.free()
    jobs = {j.id: j for j in state.queue}
    started = [jobs[s.job_id] for s in d.start]
    assert sum(j.nodes for j in started) <= free_n
    assert sum(j.bb for j in started) <= free_b + 1e-6
    assert started  # in this state the best plan starts jobs now
    reserved = {r.job_id for r in d.reservations}
    assert reserved | set(d.started_ids) == set(jobs)
    assert all(r.start > state.time for r in d.reservations)
    assert d.stats.backend == "annealing"
    # The objective reported is the score (sum of wait ** alpha) of the plan decided, and that
    # plan is no worse than the submission-order plan the search starts from.
    planned = {i: state.time for i in d.started_ids}
    planned.update({r.job_id: r.start for r in d.reservations})
    model = PlanModel.from_state(state, int(policy[-1]))
    score = model.score_of_starts([planned[j.id] for j in model.jobs])
    assert d.stats.objective == pytest.approx(score)
    assert score <= model.score(range(model.n)) + 1e-9


def test_exact_solver_used_up_to_its_size_then_annealing():
    small, big = _state(n=6), _state(n=15)
    d = bbopt.decide(small, policy="plan-2", backend="cpsat")
    assert d.stats.backend == "cpsat" and d.stats.status is Status.OPTIMAL
    d = bbopt.decide(big, policy="plan-2", backend="cpsat", max_exact_jobs=12)
    assert d.stats.backend == "annealing"
    d = bbopt.decide(small, policy="plan-2", backend="exhaustive")
    assert d.stats.backend == "exhaustive" and d.stats.status is Status.OPTIMAL


def test_exact_and_annealing_policies_agree_on_the_score_for_five_jobs():
    state = _state(n=5, seed=3)
    a = bbopt.decide(state, policy="plan-2")
    e = bbopt.decide(state, policy="plan-2", backend="exhaustive")
    c = bbopt.decide(state, policy="plan-2", backend="cpsat")
    assert a.stats.objective == pytest.approx(e.stats.objective)
    assert c.stats.objective == pytest.approx(e.stats.objective)


def test_nothing_fits_now_skips_the_search():
    plat = Platform(nodes=4, bb=10 * GB)
    running = (RunningJob(Job("r", submit=0, walltime=100, nodes=4), start=0),)
    queue = tuple(Job(str(i), submit=0, walltime=10, nodes=1) for i in range(9))
    d = bbopt.decide(ClusterState(10.0, plat, running, queue), policy="plan-2")
    assert d.start == () and d.stats.backend == "skip"
    assert len(d.reservations) == 9 and min(r.start for r in d.reservations) == 100.0


def test_decisions_are_deterministic_for_a_seed():
    state = _state(n=14, seed=1)
    a = bbopt.decide(state, policy="plan-2", seed=3)
    b = bbopt.decide(state, policy="plan-2", seed=3)
    assert a.start == b.start and a.reservations == b.reservations


def test_plan_policies_run_a_workload_in_the_engine():
    jobs = kth_like(300, seed=2)
    platform = Platform.kopanski()
    seen = []

    def check(state, decision):
        model = PlanModel.from_state(state, 2)
        if decision.stats.backend != "skip":
            seen.append(decision.stats.status)
        assert model.n == len(state.queue)

    res = bbopt.simulate(jobs, platform, "plan-2", on_decision=check)
    again = bbopt.simulate(jobs, platform, "plan-2")
    m = summarize(res)
    assert m["finished"] + m["killed"] + m["rejected"] == 300
    assert res.start == again.start  # reproducible run
    assert Status.FALLBACK not in seen


# --------------------------------------------------------------------------- property test


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 16), st.integers(0, 40), st.integers(60, 3600)),
                min_size=1, max_size=12),
       st.lists(st.tuples(st.integers(1, 6), st.integers(0, 10), st.integers(10, 2000)),
                max_size=4),
       st.sampled_from(["plan-1", "plan-2", "plan-3"]),
       st.sampled_from(["annealing", "exhaustive", "cpsat"]))
def test_any_state_gives_a_valid_decision_and_a_feasible_plan(queue, running, policy, solver):
    plat = Platform(nodes=16, bb=40 * GB)
    run, used_n, used_b = [], 0, 0
    for k, (n, b, left) in enumerate(running):
        if used_n + n <= 16 and used_b + b <= 40:
            run.append(RunningJob(Job(f"r{k}", submit=0, walltime=left + 100, nodes=n,
                                      bb=b * GB), start=0.0))
            used_n, used_b = used_n + n, used_b + b
    q = tuple(Job(f"q{k}", submit=float(k), walltime=w, nodes=n, bb=b * GB)
              for k, (n, b, w) in enumerate(queue))
    state = ClusterState(100.0, plat, tuple(run), q)
    d = bbopt.decide(state, policy=policy, backend=solver, max_exact_jobs=7)
    free_n, free_b = state.free()
    jobs = {j.id: j for j in q}
    assert sum(jobs[i].nodes for i in d.started_ids) <= free_n
    assert sum(jobs[i].bb for i in d.started_ids) <= free_b + 1e-3
    planned = {i: state.time for i in d.started_ids}
    planned.update({r.job_id: r.start for r in d.reservations})
    assert set(planned) == set(jobs)
    model = PlanModel.from_state(state, 2)
    assert model.check([planned[j.id] for j in model.jobs]) is None

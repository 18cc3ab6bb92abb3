"""plan-2's warm start and shorter annealing (options ``warm_start`` and ``temperatures``): the
previous decision's plan order is one more candidate of the search (Kopanski & Rzadca,
Section 3.3, start of the annealing), carried in the decision's memory; runs stay
deterministic; without the options nothing changes."""

from __future__ import annotations

import random

import pytest

import bbopt
from bbopt.core import GB, ClusterState, Job, Platform, RunningJob
from bbopt.errors import InputError
from bbopt.models.plan import PlanModel
from bbopt.policies import make_policy
from bbopt.policies.plan import MEMORY_KEY
from bbopt.solvers import Budget, solve
from bbopt.solvers.plan.annealing import solve_annealing
from bbopt.workloads.synthetic import kth_like


def _model(rnd: random.Random, n: int) -> PlanModel:
    jobs = [Job(str(i), submit=rnd.randint(0, 100), walltime=rnd.choice([5, 10, 30, 60, 200]),
                nodes=rnd.randint(1, 8), bb=rnd.uniform(0, 12) * GB) for i in range(n)]
    return PlanModel(100.0, (8, 20 * GB), [(150.0, 3, 4 * GB)], jobs, 2)


def test_the_initial_order_is_a_candidate_of_the_search():
    """With one annealing move, a given initial order that beats the nine orders of the paper
    is the answer: it was scored as a candidate and the search started from it."""
    rnd = random.Random(3)
    found = 0
    for _ in range(60):
        m = _model(rnd, 7)
        optimum = solve(m, "exhaustive", Budget(60.0))
        best_candidate = min(m.score(o) for _, o in m.candidates())
        if not optimum.objective < best_candidate:
            continue
        found += 1
        res = solve_annealing(m, Budget(60.0), 0, cooling_steps=1, steps_per_temperature=1,
                              initial=optimum.solution.order)
        assert res.objective == optimum.objective
        assert res.info["best_candidate"] == "previous"
        cold = solve_annealing(m, Budget(60.0), 0, cooling_steps=1, steps_per_temperature=1)
        assert cold.objective >= res.objective
    assert found >= 3


def test_an_initial_order_must_be_a_permutation():
    m = _model(random.Random(0), 7)
    with pytest.raises(ValueError):
        solve_annealing(m, Budget(60.0), 0, initial=(0, 1, 2))


def _state(memory=None) -> ClusterState:
    plat = Platform(nodes=16, bb=40 * GB)
    running = (RunningJob(Job("r0", submit=0, walltime=500, nodes=10, bb=10 * GB), start=0),)
    rnd = random.Random(1)
    queue = tuple(Job(f"q{i}", submit=10 + i, walltime=rnd.randint(60, 1200),
                      nodes=rnd.randint(1, 8), bb=rnd.randint(1, 15) * GB) for i in range(8))
    return ClusterState(100.0, plat, running, queue, memory or {})


def test_the_previous_order_keeps_its_jobs_in_order_and_puts_newcomers_after_them():
    policy = make_policy("plan-2", warm_start=True)
    state = _state({MEMORY_KEY: ("q5", "gone", "q2", "q7")})
    model = PlanModel.from_state(state, 2)
    order = policy._annealing_options(model, state)["initial"]
    assert [model.jobs[p].id for p in order] == ["q5", "q2", "q7", "q0", "q1", "q3", "q4", "q6"]
    assert "initial" not in make_policy("plan-2")._annealing_options(model, state)


def test_a_decision_leaves_its_plan_order_in_its_memory_only_when_warm():
    warm = bbopt.decide(_state(), "plan-2", warm_start=True)
    order = warm.memory[MEMORY_KEY]
    assert sorted(order) == sorted(j.id for j in _state().queue)
    # It is the order of the plan that was applied: the jobs it starts now, in that order.
    started = {s.job_id for s in warm.start}
    assert [i for i in order if i in started] == [s.job_id for s in warm.start]
    assert bbopt.decide(_state(), "plan-2").memory is None


def test_temperatures_must_be_a_positive_integer():
    for bad in (0, -3, 2.5, True):
        with pytest.raises(InputError):
            make_policy("plan-2", temperatures=bad)


def test_warm_runs_are_deterministic_and_the_default_is_the_papers_search():
    jobs = kth_like(300, seed=4, nodes=32, load=0.95)
    plat = Platform(nodes=32, bb=32 * 10 * GB)
    warm = [bbopt.simulate(jobs, plat, "plan-2", options={"warm_start": True, "temperatures": 10,
                                                          "budget_mode": "deterministic"})
            for _ in range(2)]
    assert warm[0].start == warm[1].start
    assert warm[0].allocation == warm[1].allocation
    paper = bbopt.simulate(jobs, plat, "plan-2", options={"budget_mode": "deterministic"})
    explicit = bbopt.simulate(jobs, plat, "plan-2", options={
        "budget_mode": "deterministic", "warm_start": False, "temperatures": 30})
    assert paper.start == explicit.start
    assert paper.start != warm[0].start  # (the options do change the search)

"""plan-1 / plan-2 / plan-3 (bbopt.policies.plan; Kopanski & Rzadca, Euro-Par 2021, Section 3.3):
the options and their refusals, each decision's seed, what reaches the backend, the audit's gap
formula, the decision's statistics, and a plan no permutation produced built again on named
BB nodes, each on hand-computed values."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

import bbopt
import bbopt.policies.plan as plan_module
from bbopt.core import GB, ClusterState, Job, Platform, RunningJob, SolveStats, Status
from bbopt.errors import InputError
from bbopt.models.plan import Plan, PlanModel
from bbopt.policies import make_policy
from bbopt.policies.plan import PlanBased
from bbopt.solvers.base import MIN_SECONDS, TAIL_SHARE, Budget, Result


def _fits_now(n: int, now: float = 0.0) -> ClusterState:
    """``n`` one-node jobs of 10 s without BB on 2 nodes: two start now, the rest wait."""
    queue = tuple(Job(f"j{k}", 0, walltime=10, nodes=1) for k in range(n))
    return ClusterState(now, Platform(nodes=2, bb=10 * GB), (), queue)


# ----------------------------------------------------------------- options and their refusals

def test_the_constructors_defaults_are_plan_2s():
    policy = PlanBased()
    assert (policy.name, policy.alpha, policy.backend) == ("plan-2", 2, "annealing")
    assert (policy.budget_seconds, policy.seed, policy.max_queue) == (5.0, 0, 500)
    assert policy.budget == Budget.of(5.0)
    assert policy.audit_budget == Budget.of(2.0) and policy.audit_max_jobs == 10
    assert policy.max_exact_jobs is None and policy.audit is None
    assert policy.temperatures is None and policy.warm_start is False


@pytest.mark.parametrize(("backend", "given", "exact"), [
    ("exhaustive", None, 8), ("cpsat", None, 12), ("annealing", None, None), ("greedy", None, None),
    ("cpsat", 3, 3), ("annealing", 4, 4)])
def test_the_exact_backends_queue_limit(backend, given, exact):
    assert make_policy("plan-2", backend=backend, max_exact_jobs=given).max_exact_jobs == exact


def test_an_unknown_backend_is_refused_naming_the_known_ones():
    with pytest.raises(InputError) as err:
        PlanBased(backend="nope")
    assert err.value.field == "backend"
    assert err.value.reason == ("unknown plan backend 'nope'; known: annealing, cpsat, "
                                "exhaustive, greedy")


@pytest.mark.parametrize(("value", "refused"), [(-1, True), (0, True), (1, False), (2, False),
                                                (None, False)])
def test_max_queue_is_at_least_one_or_none(value, refused):
    _refused_or_kept("max_queue", value, refused, "max_queue must be >= 1 or None")


def _refused_or_kept(option: str, value, refused: bool, rule: str) -> None:
    """``PlanBased(option=value)`` is refused naming the option, with ``rule`` and the value,
    or the policy keeps the value."""
    if refused:
        with pytest.raises(InputError) as err:
            PlanBased(**{option: value})
        assert err.value.field == option
        assert err.value.reason == f"{rule}, got {value!r}"
    else:
        assert getattr(make_policy("plan-2", **{option: value}), option) == value


@pytest.mark.parametrize("audit", ["exhaustive", "cpsat"])
def test_an_exact_backend_audits(audit):
    policy = make_policy("plan-2", audit=audit, audit_budget=3.0, audit_max_jobs=4,
                         budget_mode="deterministic", deterministic=7.0)
    assert policy.audit == audit and policy.audit_max_jobs == 4
    assert policy.audit_budget == Budget.of(3.0, 7.0, "deterministic")
    assert policy.budget == Budget.of(5.0, 7.0, "deterministic")


def test_an_audit_by_a_heuristic_is_refused():
    with pytest.raises(InputError) as err:
        PlanBased(audit="greedy")
    assert err.value.field == "audit"
    assert err.value.reason == ("audit takes an exact plan backend (exhaustive or cpsat), got "
                                "'greedy'")


@pytest.mark.parametrize(("value", "refused"), [(0, True), (1, False), (2, False), (True, True),
                                                (2.0, True), (None, False)])
def test_temperatures_are_a_positive_integer_or_none(value, refused):
    _refused_or_kept("temperatures", value, refused,
                     "temperatures must be a positive integer or None")


def test_the_former_option_name_warns_and_chooses_the_backend():
    with pytest.warns(FutureWarning) as caught:
        policy = PlanBased(solver="exhaustive")
    assert policy.backend == "exhaustive"
    assert str(caught[0].message) == ("plan policies: option 'solver' is now 'backend', as in "
                                      "every other policy")


def test_node_local_ssds_are_not_planned():
    assert PlanBased.unsuited(Platform(nodes=2, bb=GB)) is None
    assert PlanBased.unsuited(Platform(nodes=2, bb=GB, node_ssd=(GB, GB))) == (
        "plans nodes and BB, not local SSDs")


# ----------------------------------------------------------------- the seed of a decision

@pytest.mark.parametrize(("now", "millis"), [
    (1.2355, 1235),  # odd, truncated: not rounded, not 1001 per second
    (1e16, int(1e19) - 2**63),  # beyond 2**63 ms: the top bit dropped
])
def test_each_decision_draws_from_seed_time_in_ms_and_queue_length(now, millis):
    state = _fits_now(5, now)
    expected = np.random.SeedSequence([3, millis, 5]).generate_state(1)[0]
    assert make_policy("plan-2", seed=3)._seed(state) == int(expected)


# ----------------------------------------------------------------- what reaches the backend

@pytest.fixture
def calls(monkeypatch):
    """The calls of the plan policies' ``solve``, each answered by the real one."""
    seen = []
    real = plan_module.solve

    def recording(model, backend, budget, **options):
        seen.append((model, backend, budget, options))
        return real(model, backend, budget, **options)

    monkeypatch.setattr(plan_module, "solve", recording)
    return seen


def test_the_backend_gets_the_decisions_seed_and_the_cooling_of_fewer_temperatures(calls):
    state = _fits_now(7)
    policy = make_policy("plan-2", seed=4, temperatures=10, budget_mode="deterministic")
    policy.decide(state)
    [(model, backend, budget, options)] = calls
    assert backend == "annealing" and model.n == 7 and budget == policy.budget
    assert options["seed"] == policy._seed(state)
    # 10 temperatures cooled so that the last is the paper's 30th at 0.9: 0.9 ** 3 each
    assert options["cooling_steps"] == 10
    assert options["cooling"] == pytest.approx(0.729, rel=1e-12)


def test_an_exact_backend_gets_no_annealing_options(calls):
    make_policy("plan-2", backend="exhaustive", temperatures=10).decide(_fits_now(4))
    [(_, backend, _, options)] = calls
    assert backend == "exhaustive" and set(options) == {"seed"}


def test_the_backends_wall_budget_keeps_the_decisions_tail(calls):
    """In wall mode the backend gets the budget less the model's building time and less the
    tail share kept for building the decision."""
    before = time.perf_counter()
    make_policy("plan-2", budget=4.0).decide(_fits_now(7))
    took = time.perf_counter() - before
    [(_, _, budget, _)] = calls
    assert 4.0 * (1 - TAIL_SHARE) - took <= budget.seconds < 4.0 * (1 - TAIL_SHARE)


def test_the_time_spent_before_the_policy_counts(calls, monkeypatch):
    """bbopt.decide's checks before the policy (here 100 s) count in the decision's wall time
    and leave the backend its minimum."""
    monkeypatch.setattr(plan_module, "decision_elapsed", lambda: 100.0)
    before = time.perf_counter()
    decision = make_policy("plan-2").decide(_fits_now(7))
    took = time.perf_counter() - before
    assert 100.0 < decision.stats.wall_time <= 100.0 + took
    [(_, _, budget, _)] = calls
    assert budget.seconds == MIN_SECONDS


def test_a_warm_decision_starts_the_search_from_the_previous_order(calls):
    state = _fits_now(7)
    state = ClusterState(0.0, state.platform, (), state.queue,
                         {"plan_order": ("j6", "gone", "j3")})
    make_policy("plan-2", warm_start=True).decide(state)
    [(_, _, _, options)] = calls
    assert options["initial"] == (6, 3, 0, 1, 2, 4, 5)


def test_an_annealed_decision_reports_the_searchs_status():
    """Seven jobs: annealing searches (not exhaustively) and its answer is FEASIBLE."""
    stats = make_policy("plan-2").decide(_fits_now(7)).stats
    assert (stats.backend, stats.status) == ("annealing", Status.FEASIBLE)


@pytest.mark.parametrize(("n", "backend"), [(4, "exhaustive"), (5, "exhaustive"),
                                            (6, "annealing")])
def test_the_exact_backend_up_to_its_limit_then_annealing(n, backend):
    decision = make_policy("plan-2", backend="exhaustive", max_exact_jobs=5).decide(_fits_now(n))
    assert decision.stats.backend == backend


@pytest.mark.parametrize(("max_queue", "planned"), [(2, 2), (3, 3), (4, 4), (None, 4)])
def test_only_the_first_max_queue_jobs_are_planned(calls, max_queue, planned):
    """Four jobs on two nodes: the first ``max_queue`` are planned (two start, the others are
    reserved at 10); the jobs beyond are neither started nor reserved."""
    decision = make_policy("plan-2", max_queue=max_queue).decide(_fits_now(4))
    assert [m.n for m, *_ in calls] == [planned]
    assert decision.started_ids == ["j0", "j1"]
    assert [(r.job_id, r.start) for r in decision.reservations] == [
        (f"j{k}", 10.0) for k in range(2, planned)]


# ----------------------------------------------------------------- the audit and the statistics

def _answer(status, objective=None, bound=None):
    return Result(status, None, objective, bound=bound)


@pytest.mark.parametrize(("exact", "bound", "gap"), [
    (_answer(Status.OPTIMAL, 4.0), 4.0, 1.5),  # (10 - 4) / 4
    (_answer(Status.OPTIMAL, 0.5), 0.5, 9.5),  # (10 - 0.5) / 1: the divisor at least 1
    (_answer(Status.OPTIMAL, -2.0), -2.0, 6.0),  # (10 + 2) / |-2|
    (_answer(Status.OPTIMAL, 12.0), 10.0, 0.0),  # never above the applied answer's score
    (_answer(Status.FEASIBLE, 11.0, 3.0), 3.0, 7 / 3),  # a proven bound, not its answer
    (_answer(Status.FEASIBLE, 11.0, None), None, None),  # nothing proven
])
def test_the_audit_gap_is_relative_to_the_exact_bound(monkeypatch, exact, bound, gap):
    seen = []

    def exact_solve(model, backend, budget, seed):
        seen.append((model, backend, budget, seed))
        return exact

    monkeypatch.setattr(plan_module, "solve", exact_solve)
    policy = make_policy("plan-2", audit="cpsat", audit_budget=1.5)
    state = _fits_now(3)
    model = PlanModel.from_state(state, 2)
    got = policy._audit(model, 10.0, state)
    assert got[0] == bound and (got[1] == pytest.approx(gap, rel=1e-12) if gap is not None
                                else got[1] is None)
    assert seen == [(model, "cpsat", Budget.of(1.5), policy._seed(state))]


@pytest.mark.parametrize(("n", "audited"), [(3, True), (4, True), (5, False)])
def test_decisions_are_audited_up_to_audit_max_jobs(n, audited):
    decision = make_policy("plan-2", audit="exhaustive", audit_max_jobs=4).decide(_fits_now(n))
    stats = decision.stats
    assert stats.audited is audited
    if audited:  # annealing solves these small queues exactly: no gap to the optimum
        assert stats.gap == 0.0 and stats.bound == stats.objective


def test_a_decisions_statistics():
    state = _fits_now(4)
    before = time.perf_counter()
    decision = make_policy("plan-2", budget=3.0).decide(state)
    took = time.perf_counter() - before
    stats = decision.stats
    assert (stats.backend, stats.status, stats.budget, stats.audited) == (
        "annealing", Status.OPTIMAL, 3.0, False)
    # j0, j1 now, j2, j3 at 10: waits 10 and 10, squared
    assert stats.objective == 200.0 and stats.gap == 0.0 and stats.bound == 200.0
    assert 0.0 < stats.wall_time <= took


def test_an_empty_queue_is_decided_without_a_search():
    before = time.perf_counter()
    decision = make_policy("plan-2", budget=4.0).decide(
        ClusterState(0.0, Platform(nodes=2, bb=GB), (), ()))
    took = time.perf_counter() - before
    assert decision.start == () and decision.reservations == ()
    stats = decision.stats
    assert (stats.backend, stats.status, stats.budget) == ("skip", Status.OPTIMAL, 4.0)
    assert 0.0 < stats.wall_time <= took


def test_when_nothing_fits_now_the_submission_order_plan_is_scored():
    """Both nodes busy until 100; a (2 nodes, 10 s) and b (1 node, 20 s) are planned in
    submission order: a at 100, b at 110; with alpha 2 the score is 100**2 + 110**2."""
    running = (RunningJob(Job("r", 0, walltime=100, nodes=2), 0.0),)
    queue = (Job("a", 0, walltime=10, nodes=2), Job("b", 0, walltime=20, nodes=1))
    before = time.perf_counter()
    decision = make_policy("plan-2").decide(
        ClusterState(0.0, Platform(nodes=2, bb=GB), running, queue))
    took = time.perf_counter() - before
    assert decision.start == ()
    assert [(r.job_id, r.start) for r in decision.reservations] == [("a", 100.0), ("b", 110.0)]
    stats = decision.stats
    assert (stats.backend, stats.status, stats.budget) == ("skip", Status.OPTIMAL, 5.0)
    assert stats.objective == 100.0**2 + 110.0**2
    assert 0.0 < stats.wall_time <= took


def test_a_plan_without_an_order_carries_no_warm_start():
    decision = bbopt.decide(_fits_now(3), "plan-2", backend="cpsat", warm_start=True)
    assert decision.memory is None
    warm = bbopt.decide(_fits_now(3), "plan-2", backend="exhaustive", warm_start=True)
    assert warm.memory == {"plan_order": ("j0", "j1", "j2")}


# ----------------------------------------------------------------- named BB nodes

#: 4 compute nodes, two 10 GB BB nodes; r holds 2 compute nodes until t=50.
_NAMED = Platform(nodes=4, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))


def _named_state() -> ClusterState:
    """a (2 nodes, 16 GB: a piece of 8 GB on each BB node, 100 s), p (1 node, 4 GB, 10 s),
    q (2 nodes, no BB, 10 s)."""
    running = (RunningJob(Job("r", 0, walltime=50, nodes=2), 0.0, None, ()),)
    queue = (Job("a", 0, walltime=100, nodes=2, bb=16 * GB),
             Job("p", 0, walltime=10, nodes=1, bb=4 * GB),
             Job("q", 0, walltime=10, nodes=2))
    return ClusterState(0.0, _NAMED, running, queue)


@pytest.mark.parametrize(("starts", "started", "reserved"), [
    # order a, p, q: a now; p's 4 GB piece has room on no BB node until a ends (100); q waits
    # for r's nodes (50): the reservations by start, q before p
    ((0.0, 1.0, 2.0), ["a"], [("q", 50.0), ("p", 100.0)]),
    # order p, q, a (starts 0, 0, 50; the tie by queue position): p now on BB node 0 (6 GB
    # left) and the last free compute node, q on the two free from p's end at 10, a after q
    # at 20 (r's two nodes are busy until 50; its 8 GB pieces had no room while p ran)
    ((50.0, 0.0, 0.0), ["p"], [("q", 10.0), ("a", 20.0)]),
])
def test_a_plan_without_an_order_is_built_again_on_the_bb_nodes(starts, started, reserved):
    """A plan given as starts only (a backend that models the pooled BB) is placed again on the
    named BB nodes, first fit, in the order of its starts (ties by queue position): the jobs
    starting now are those, the others reserved at their placed starts, by start."""
    state = _named_state()
    model = PlanModel.from_state(state, 2)
    assert [j.id for j in model.jobs] == ["a", "p", "q"]
    stats = SolveStats(backend="x", objective=1.0)
    decision = PlanBased._decision(state, model, Plan(starts, None), stats)
    assert decision.started_ids == started
    assert [(r.job_id, r.start) for r in decision.reservations] == reserved
    assert decision.stats is stats


def test_on_proximity_bb_nodes_each_start_names_the_nodes_the_plan_placed():
    """Nodes 0-5 run r; the filter gives the two jobs planned now nodes 6 and 7, in plan
    order (b first: its 10 GB piece needs a BB node the other's would not leave)."""
    from tests.models.test_plan_proximity import _state_at_1

    decision = bbopt.decide(_state_at_1(), "plan-2", budget_mode="deterministic")
    assert [(s.job_id, s.nodes) for s in decision.start] == [("b", (6,)), ("a", (7,))]
    assert math.isfinite(decision.stats.objective)


def test_a_job_no_plan_can_place_is_neither_started_nor_reserved():
    """At t=10 r's expected end (5) has passed but it still holds 8 GB of BB node 0: a's two
    10 GB pieces need both BB nodes empty, which no plan reaches (the profile has no later
    instant); b starts now, a gets no reservation (not one at infinity)."""
    r = Job("r", 0, walltime=5, nodes=1, bb=8 * GB)
    state = ClusterState(10.0, _NAMED, (RunningJob(r, 0.0, None, ((0, 8 * GB),)),),
                         (Job("a", 0, walltime=10, nodes=2, bb=20 * GB),
                          Job("b", 4, walltime=10, nodes=1, bb=1 * GB)))
    decision = make_policy("plan-2").decide(state)
    assert decision.started_ids == ["b"] and decision.reservations == ()

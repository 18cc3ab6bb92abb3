"""The plan model's ``cpsat`` backend: the optimum over all plans (Kopanski & Rzadca, Section
3.3, as a cumulative scheduling program), on hand-made points whose optimum is known: the
exponents it accepts, the half-capacity pairs its redundant no-overlap must not separate, the
waits already spent in its bound, and its status when times or bytes are not whole. The program
CP-SAT is handed is read back from a recording CP-SAT: each wait's bound from the incumbent, the
square's tangents and the cube, the cumulatives and no-overlaps, the hint, the parameters
(workers, seed, time left), and the answers when CP-SAT has no plan, when the model refuses
its plan, and on named BB nodes (the relaxed order or the best candidate)."""

import math

import pytest
from ortools.sat.python import cp_model

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob, Status
from bbopt.models.plan import Plan, PlanModel
from bbopt.solvers import Budget
from bbopt.solvers.plan import cpsat
from bbopt.solvers.plan.cpsat import solve_cpsat
from tests._slow_clock import SlowClock
from tests.solvers._recording_cpsat import RecordingCpSolver


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


# ---------------------------------------------------------------- the program CP-SAT is handed
class _Recording(RecordingCpSolver):
    """CP-SAT that records the model and the parameters of each solve; ``answers`` (CP-SAT
    statuses) override what a solve reports, after a real solve."""

    answers: list = []
    made: list = []

    def __init__(self) -> None:
        super().__init__()
        _Recording.made.append(self)

    def Solve(self, model, callback=None):  # noqa: N802 (CP-SAT's name)
        self.record(model)
        status = super().Solve(model, callback)
        return _Recording.answers.pop(0) if _Recording.answers else status


@pytest.fixture
def recording(monkeypatch):
    monkeypatch.setattr(_Recording, "answers", [])
    monkeypatch.setattr(_Recording, "made", [])
    monkeypatch.setattr(cp_model, "CpSolver", _Recording)
    return _Recording


def _program(proto) -> dict:
    """A CP-SAT model by names: variable domains, linear rows ``({name: coeff}, domain)``,
    products ``(target, factors)``, cumulatives ``(capacity, [(interval, size, demand)])``,
    no-overlaps (interval names), hints and the objective ``({name: coeff}, offset)``."""
    names = [v.name for v in proto.variables]
    cons = list(proto.constraints)

    def interval(k):
        return cons[k].name, cons[k].interval.size.offset

    out = {"domains": {v.name: list(v.domain) for v in proto.variables}, "linear": [],
           "products": [], "cumulative": [], "no_overlap": []}
    for c in cons:
        if c.has_linear():
            out["linear"].append(({names[v]: k for v, k in zip(c.linear.vars, c.linear.coeffs,
                                                                strict=True)},
                                  list(c.linear.domain)))
        elif c.has_int_prod():
            out["products"].append((names[c.int_prod.target.vars[0]],
                                    [names[e.vars[0]] for e in c.int_prod.exprs]))
        elif c.has_cumulative():
            out["cumulative"].append((c.cumulative.capacity.offset, [
                (*interval(k), d.offset)
                for k, d in zip(c.cumulative.intervals, c.cumulative.demands, strict=True)]))
        elif c.has_no_overlap():
            out["no_overlap"].append([interval(k)[0] for k in c.no_overlap.intervals])
    out["hint"] = {names[v]: x for v, x in zip(proto.solution_hint.vars,
                                               proto.solution_hint.values, strict=True)}
    out["objective"] = ({names[v]: k for v, k in zip(proto.objective.vars,
                                                     proto.objective.coeffs, strict=True)},
                        proto.objective.offset)
    return out


INF = cp_model.INT_MAX


def _tangent(sq: str, y: str, y0: int) -> tuple[dict[str, int], list[int]]:
    """The tangent of ``y ** 2`` at ``y0`` as CP-SAT holds it: sq - 2 y0 y >= -y0 ** 2."""
    return {y: -2 * y0, sq: 1}, [-y0 * y0, INF]


def test_the_square_program_bounds_each_wait_by_the_incumbent_and_cuts_it_by_tangents(
        recording):
    """now = 10, 2 nodes, alpha 2: a (2 nodes, 5 s, submitted at 0, waited 10) and b (2 nodes,
    3 s, at 4, waited 6). The best candidate is b first (walltime-asc): 6**2 + 13**2 = 205
    (a first: 10**2 + 11**2 = 221). No term of a better plan exceeds 205, so every wait is at
    most floor(sqrt(205)) + 1 = 15: a's start at most 15 - 10 = 5 s from now, b's 15 - 6 = 9.
    Each square has 8 tangents at waited + span * k // 9 (k = 1..8), the hint is b first."""
    jobs = [Job("a", 0, walltime=5, nodes=2), Job("b", 4, walltime=3, nodes=2)]
    res = solve_cpsat(PlanModel(10.0, (2, 0.0), [], jobs, alpha=2), Budget(10))
    assert res.status is Status.OPTIMAL and res.objective == res.bound == 205
    assert res.info["incumbent"] == 205.0 and res.solution.starts == (13.0, 10.0)
    prog = _program(recording.made[0].models[0])
    assert prog["domains"] == {"s0": [0, 5], "wait0": [10, 15], "sq0": [100, 225],
                               "s1": [0, 9], "wait1": [6, 15], "sq1": [36, 225]}
    assert prog["products"] == [("sq0", ["wait0", "wait0"]), ("sq1", ["wait1", "wait1"])]
    assert prog["linear"] == [
        ({"s0": -1, "wait0": 1}, [10, 10]),
        *(_tangent("sq0", "wait0", y0) for y0 in (10, 11, 11, 12, 12, 13, 13, 14)),
        ({"s1": -1, "wait1": 1}, [6, 6]),
        *(_tangent("sq1", "wait1", y0) for y0 in (7, 8, 9, 10, 11, 12, 13, 14))]
    assert prog["hint"] == {"s0": 3, "s1": 0}
    assert prog["objective"] == ({"sq0": 1, "sq1": 1}, 0.0)
    # one cumulative (no BB anywhere), and the pair above half the nodes kept apart
    assert prog["cumulative"] == [(2, [("job0", 5, 2), ("job1", 3, 2)])]
    assert prog["no_overlap"] == [["job0", "job1"]]


def test_the_tangents_are_as_many_as_asked(recording):
    jobs = [Job("a", 0, walltime=5, nodes=2), Job("b", 4, walltime=3, nodes=2)]
    solve_cpsat(PlanModel(10.0, (2, 0.0), [], jobs, alpha=2), Budget(10), tangents=2)
    rows = _program(recording.made[0].models[0])["linear"]
    # spans of 5 and 9 s cut at k = 1, 2 of 3: 10 + 5 // 3, 10 + 10 // 3 and 6 + 3, 6 + 6
    assert rows == [({"s0": -1, "wait0": 1}, [10, 10]), _tangent("sq0", "wait0", 11),
                    _tangent("sq0", "wait0", 13), ({"s1": -1, "wait1": 1}, [6, 6]),
                    _tangent("sq1", "wait1", 9), _tangent("sq1", "wait1", 12)]


def test_the_cube_program_of_a_job_that_starts_now_pins_its_start(recording):
    """now = 10, 5 nodes and 8 B; running jobs on 1 node until 15 (no BB: not on the BB's
    cumulative) and on 1 node and 2 B until 20, another ended now (left out); a (3 nodes,
    5 B, 4 s, waited 10) starts now: the incumbent 10**3 = 1000,
    whose cube root floats to 9.999...: the wait bound floor + 1 = 10 leaves a's start at 0 s
    from now. A lone job above half the nodes (or of the BB) needs no no-overlap."""
    running = [(10.0, 4, 0.0), (20.0, 1, 2.0), (15.0, 1, 0.0)]
    model = PlanModel(10.0, (5, 8.0), running, [Job("a", 0, walltime=4, nodes=3, bb=5.0)],
                      alpha=3)
    assert math.floor(1000 ** (1 / 3)) == 9
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.OPTIMAL and res.objective == res.bound == 1000
    prog = _program(recording.made[0].models[0])
    assert prog["domains"] == {"s0": [0, 0], "wait0": [10, 10], "sq0": [100, 100],
                               "cube0": [1000, 1000]}
    assert prog["products"] == [("sq0", ["wait0", "wait0"]), ("cube0", ["sq0", "wait0"])]
    assert prog["linear"] == [({"s0": -1, "wait0": 1}, [10, 10])] + [
        _tangent("sq0", "wait0", 10)] * 8
    assert prog["objective"] == ({"cube0": 1}, 0.0)
    assert prog["cumulative"] == [(5, [("running", 5, 1), ("running", 10, 1), ("job0", 4, 3)]),
                                  (8, [("running", 10, 2), ("job0", 4, 5)])]
    assert prog["no_overlap"] == []


def test_the_linear_program_adds_the_waits_spent_rounded_down_as_a_constant(recording):
    """alpha 1, now = 10: a submitted at 0.5 has waited 9.5 s, counted as 9 (rounded down, an
    optimistic constant); the objective is its start plus 9."""
    model = PlanModel(10.0, (2, 0.0), [], [Job("a", 0.5, walltime=10, nodes=1)], alpha=1)
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.FEASIBLE and res.objective == 9.5
    prog = _program(recording.made[0].models[0])
    assert prog["domains"] == {"s0": [0, 1]}  # floor(9.5) + 1 - 9
    assert prog["objective"] == ({"s0": 1}, 9.0)
    assert prog["linear"] == [] and prog["products"] == []


def test_a_bb_capacity_not_whole_makes_the_answer_inexact_whatever_follows():
    """10.5 B of BB: held as 10 B, the answer is FEASIBLE without a bound, even though the
    running job's end, the job's wait and every demand are whole."""
    model = PlanModel(0.0, (2, 10.5), [(20.0, 1, 0.0)], [Job("a", 0, walltime=5, nodes=2)],
                      alpha=2)
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.FEASIBLE and res.info["exact"] is False
    assert res.solution.starts == (20.0,) and res.objective == 400.0 and res.bound is None


def test_a_single_byte_held_or_asked_counts_on_the_bb():
    """2 B of BB, 1 B held until 10 by a running job; a and b ask 1 B each (not above half
    the BB: no no-overlap): only one of them fits beside the running job, b waits for a."""
    jobs = [Job("a", 0, walltime=5, nodes=1, bb=1.0), Job("b", 0, walltime=5, nodes=1, bb=1.0)]
    model = PlanModel(0.0, (4, 2.0), [(10.0, 1, 1.0)], jobs, alpha=1)
    res = solve_cpsat(model, Budget(10))
    assert res.status is Status.OPTIMAL and res.solution.starts == (0.0, 5.0)
    assert res.objective == res.bound == 5.0


def test_the_hint_is_the_first_of_the_best_candidates(recording):
    """Both jobs on both nodes, alpha 2, now = 3: a (2 s, submitted at 3) first scores
    (3 + 2) ** 2 = 25, b (4 s, submitted at 0) first 3 ** 2 + 4 ** 2 = 25. The tie keeps the
    first candidate (submission order), not the last (walltime-desc, b first)."""
    jobs = [Job("a", 3, walltime=2, nodes=2), Job("b", 0, walltime=4, nodes=2)]
    model = PlanModel(3.0, (2, 0.0), [], jobs, alpha=2)
    assert model.score([0, 1]) == model.score([1, 0]) == 25
    assert model.candidates()[-1] == ("walltime-desc", (1, 0))
    res = solve_cpsat(model, Budget(10))
    assert res.objective == res.bound == 25 and res.info["incumbent"] == 25
    assert _program(recording.made[0].models[0])["hint"] == {"s0": 0, "s1": 2}


def test_cpsat_is_handed_one_worker_the_seed_and_the_time_left(recording, monkeypatch):
    jobs = [Job("a", 0, walltime=5, nodes=2), Job("b", 4, walltime=3, nodes=2)]
    model = PlanModel(10.0, (2, 0.0), [], jobs, alpha=2)
    monkeypatch.setattr(cpsat, "_time", SlowClock(0.5))  # 0.5 s gone by the solve
    solve_cpsat(model, Budget(7.5))
    solve_cpsat(model, Budget(7.5, deterministic=0.75), 2**31 + 5, workers=2)
    solve_cpsat(model, Budget(0.2), 100)  # no time left: CP-SAT still gets 10 ms
    first, second, third = (s.params[0] for s in recording.made)
    assert (first.num_workers, first.random_seed, first.max_time_in_seconds) == (1, 0, 7.0)
    assert first.max_deterministic_time == float("inf")  # (CP-SAT's default: no limit)
    assert (second.num_workers, second.random_seed, second.max_time_in_seconds,
            second.max_deterministic_time) == (2, 5, 7.0, 0.75)
    assert (third.random_seed, third.max_time_in_seconds) == (100, 0.01)


@pytest.mark.parametrize("status", [cp_model.UNKNOWN, cp_model.INFEASIBLE])
def test_no_plan_from_cpsat_is_a_fallback_with_its_status(recording, status):
    jobs = [Job("a", 0, walltime=5, nodes=2), Job("b", 4, walltime=3, nodes=2)]
    recording.answers = [status]
    res = solve_cpsat(PlanModel(10.0, (2, 0.0), [], jobs, alpha=2), Budget(10))
    assert (res.status, res.solution, res.objective, res.bound, res.backend) == (
        Status.FALLBACK, None, None, None, "cpsat")
    assert res.info == {"cp_status": cp_model.CpSolver().StatusName(status), "exact": True,
                        "incumbent": 205.0, "conflicts": res.info["conflicts"]}
    assert res.info["cp_status"] in ("UNKNOWN", "INFEASIBLE")


class _Refusing(PlanModel):
    """A plan model that refuses every plan (as rounding gone wrong would make it)."""

    def check(self, plan):
        return "at t=0: 3 nodes / 0 B in use"


def test_a_plan_the_model_refuses_is_never_handed_out():
    res = solve_cpsat(_Refusing(0.0, (2, 0.0), [], [Job("a", 0, walltime=5, nodes=2)],
                                alpha=2), Budget(10))
    assert (res.status, res.solution, res.objective, res.backend) == (
        Status.FALLBACK, None, None, "cpsat")
    assert res.info["invalid"] == "at t=0: 3 nodes / 0 B in use"
    assert res.info["cp_status"] == "OPTIMAL"


# ---------------------------------------------------------------- named BB nodes
def _on_two_bb_nodes() -> PlanModel:
    """Two BB nodes of 10 GB, r holding 4 GB of node 0 until 100 (6 and 10 GB free now);
    a (100 s, 8 GB), b (100 s, 4 GB), c (50 s, 8 GB), one node each, submitted at 0, alpha 2.
    On the 16 GB pool a and c start now and b waits 50 s (2,500); on the nodes a and c take
    the 10 GB node in turn: the best plans start b and c now and a at 50 (2,500), a first
    (the pool's order a, c, b) makes c wait for r (100 ** 2)."""
    platform = Platform(nodes=4, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))
    r = Job("r", 0, walltime=100, runtime=100, nodes=1, bb=4 * GB)
    queue = (Job("a", 0, walltime=100, nodes=1, bb=8 * GB),
             Job("b", 0, walltime=100, nodes=1, bb=4 * GB),
             Job("c", 0, walltime=50, nodes=1, bb=8 * GB))
    return PlanModel.from_state(ClusterState(0.0, platform, (RunningJob(r, 0.0),), queue), 2)


def test_on_named_nodes_the_best_candidate_is_handed_out_when_the_relaxed_order_is_worse():
    model = _on_two_bb_nodes()
    assert model.score([0, 2, 1]) == 100**2 and model.plan([1, 2, 0]).starts == (50, 0, 0)
    score, order = min((model.score(o), o) for _, o in model.candidates())
    res = solve_cpsat(model, Budget(10))
    assert (res.status, res.objective, res.bound, res.backend) == (
        Status.FEASIBLE, 2500.0, 2500.0, "cpsat")
    assert score == 2500 and res.solution == model.plan(order)
    assert res.info["relaxed"] == "burst buffer as one pool" and res.info["exact"] is True


class _Values:
    """CP-SAT's answer as ``_on_named_nodes`` reads it: each start variable its own value."""

    def Value(self, x):  # noqa: N802 (CP-SAT's name)
        return x

    def BestObjectiveBound(self):  # noqa: N802
        return 1234.0


@pytest.mark.parametrize(("upper", "order"), [(2500.0, (1, 2, 0)), (2501.0, (2, 1, 0))])
def test_on_named_nodes_the_relaxed_order_is_handed_out_only_if_it_scores_better(upper, order):
    """Relaxed starts c at 0, b at 1, a at 50 (the order c, b, a) score 2,500 on the nodes: the
    best candidate (b, c, a) is handed out if it scores as well (2,500), the relaxed order if
    the candidate scores worse (2,501); inexact data: no bound."""
    model = _on_two_bb_nodes()
    assert model.score([2, 1, 0]) == 2500
    info = {}
    res = cpsat._on_named_nodes(model, _Values(), [50, 1, 0], (1, 2, 0), upper, False, info)
    assert (res.status, res.bound, res.backend) == (Status.FEASIBLE, None, "cpsat")
    assert res.solution == model.plan(order) and res.solution.order == order
    assert res.objective == 2500.0
    assert info == {"relaxed": "burst buffer as one pool"}

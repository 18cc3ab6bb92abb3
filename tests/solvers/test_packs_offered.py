"""An exact pack backend is offered at most ``APPS_PER_SECOND`` applications per second of
budget (building its model costs ~30 us each, outside the solver's limit): the fallback's pack
and the most valuable others, so its answer is never worse than the fallback."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import Job
from bbopt.core import Status
from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, solve
from bbopt.solvers.packs._stages import APPS_PER_SECOND, MIN_OFFERED, offered, reduced


def _model(n: int, seed: int = 0, capacity: int = 40) -> PackModel:
    rng = np.random.default_rng(seed)
    jobs = [Job(str(k), 0.0, float(rng.integers(60, 10_000)), nodes=int(rng.integers(1, 9)),
                bandwidth=float(rng.choice([0.0, 18e6]))) for k in range(n)]
    return PackModel.from_jobs(jobs, capacity, 1e9)


@pytest.mark.parametrize("seconds, cap", [(0.001, MIN_OFFERED), (0.05, 400), (0.1, 800),
                                          (1.0, 8000)])
def test_the_offer_is_capped_by_the_budget(seconds, cap):
    assert APPS_PER_SECOND == 8000
    model = _model(3000)
    keep = reduced(model)
    hint = model.fallback()
    got = offered(model, keep, hint, Budget(seconds))
    assert len(got) == min(cap, len(keep))
    assert set(np.flatnonzero(hint)) <= set(got)  # the fallback's pack is always offered
    assert list(got) == sorted(got)
    rest = np.setdiff1d(keep, np.flatnonzero(hint))
    dropped = np.setdiff1d(rest, got)
    if len(dropped):  # every application left out is worth no more than any one offered
        kept_rest = np.setdiff1d(got, np.flatnonzero(hint))
        assert model.stages[0][dropped].max() <= model.stages[0][kept_rest].min()


def test_deterministic_budgets_cap_by_their_nominal_seconds():
    model = _model(3000)
    det = Budget.of(0.05, None, "deterministic")
    got = offered(model, reduced(model), model.fallback(), det)
    assert len(got) == 400


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([0.001, 0.01]))
def test_a_capped_answer_is_feasible_and_no_worse_than_the_fallback(seed, seconds):
    model = _model(600, seed)
    res = solve(model, "cpsat", Budget(seconds, deterministic=5.0), seed=0)
    x = np.asarray(res.solution, dtype=bool)
    assert model.feasible(x)
    assert model.evaluate(x)[0] >= model.evaluate(model.fallback())[0] - 1e-6


@pytest.mark.parametrize(("slowdown", "cap"), [(0.5, 800), (1.0, 800), (4.0, 200),
                                               (100.0, MIN_OFFERED)])
def test_a_loaded_machine_offers_fewer_in_proportion(slowdown, cap):
    """0.1 s of wall budget offers 800 applications on an idle core, a quarter of them when
    each CPU second takes four wall seconds (the model's building costs wall time in that
    proportion), never fewer than MIN_OFFERED; a slowdown under 1 offers no more."""
    model = _model(3000)
    keep = reduced(model)
    got = offered(model, keep, model.fallback(), Budget(0.1), slowdown)
    assert len(got) == min(cap, len(keep))



@pytest.mark.parametrize(("first", "second_runs"), [(0.4, True), (0.5, True), (0.6, False)])
def test_a_later_stage_given_less_than_the_last_one_took_is_not_started(monkeypatch, first,
                                                                        second_runs):
    """Two stages under a 1 s wall budget: the first takes ``first`` s; the second starts only
    if what is left (1 - first) is at least that (0.5 left after 0.5: it runs)."""
    import bbopt.solvers.packs._stages as stages
    from bbopt.core import Status

    class Clock:
        now = 0.0

        def perf_counter(self):
            return self.now

    clock = Clock()
    monkeypatch.setattr(stages, "_time", clock)
    model = PackModel.from_jobs([Job(str(k), 0.0, 100.0 + k, nodes=1) for k in range(6)], 4,
                                1e9, objective="lexicographic", tolerance=0.1)
    calls = []

    def make(keep, t_int, u_int, q, capacity):
        def solve(c, fixed, seconds, hint):
            calls.append(seconds)
            clock.now += first
            x = np.zeros(len(keep), dtype=bool)
            x[:4] = True
            return "optimal", x, None
        return solve

    result = stages.solve_stages(model, Budget(1.0), "fake", make)
    assert len(calls) == (2 if second_runs else 1)
    assert result.status is (Status.OPTIMAL if second_runs else Status.FEASIBLE)
    assert result.solution.sum() == 4


# --- the stage driver, on stage solvers that answer as scripted ---------------------------------


class _Clock:
    """Stands in for the ``time`` module: the time moves only when told to."""

    def __init__(self, now: float) -> None:
        self.now = now

    def perf_counter(self) -> float:
        return self.now


def _scripted(answers, calls, clock=None, step=0.0, building=0.0):
    """A backend's ``make`` whose stage solves return ``answers`` in turn (outcome, selection
    over the kept applications, bound), record what they are given in ``calls``, and move
    ``clock`` by ``step`` each (by ``building`` while the model is built)."""
    def make(keep, t_int, u_int, q, capacity):
        calls.append({"keep": len(keep)})
        if clock is not None:
            clock.now += building

        def solve(c, fixed, seconds, hint):
            calls.append({"c": c.tolist(), "fixed": [(f.tolist(), rhs) for f, rhs in fixed],
                          "seconds": seconds, "hint": None if hint is None else hint.tolist()})
            if clock is not None:
                clock.now += step
            outcome, x, bound = answers[len(calls) - 2]
            return outcome, None if x is None else np.array(x, dtype=bool), bound
        return solve
    return make


def _two_apps(capacity: int = 1) -> PackModel:
    """A (1 node, 100 s) and B (1 node, 50 s): work 100 and 50, then the Char order as a
    tie-break (B first: scores 1 and 2), within 10 %. Integer form: work 1e9 and 5e8, the
    tie-break 5e8 and 1e9. First fit in Max order on one node takes A."""
    jobs = [Job("A", 0.0, 100.0, nodes=1), Job("B", 0.0, 50.0, nodes=1)]
    return PackModel.from_jobs(jobs, capacity, 1e9, tiebreak="char", tolerance=0.1)


def test_each_stage_keeps_the_earlier_within_the_tolerance_and_hints_the_last_answer(
        monkeypatch):
    """Stage 1 (work) is solved with the fallback's pack as its hint and all of the 1 s left;
    stage 2 (the tie-break) is given, as a lower bound on stage 1, its value less
    floor(10 % of it) (1e9 - 1e8), stage 1's answer as its hint and what is left after the
    0.4 s stage 1 took. Both optimal: OPTIMAL, the stage values (work 100, score 1), the bound
    is the objective (not the solver's 1.2e9), the backend's name and its information."""
    import bbopt.solvers.packs._stages as stages

    clock = _Clock(100.0)
    monkeypatch.setattr(stages, "_time", clock)
    calls = []
    answers = [("optimal", [True, False], 1.2e9), ("optimal", [True, False], 7e8)]
    res = stages.solve_stages(_two_apps(), Budget(1.0), "fake",
                              _scripted(answers, calls, clock, step=0.4), tag=1)
    assert calls[0] == {"keep": 2}
    assert calls[1] == {"c": [1e9, 5e8], "fixed": [], "seconds": 1.0, "hint": [True, False]}
    assert calls[2]["c"] == [5e8, 1e9] and calls[2]["fixed"] == [([1e9, 5e8], 900_000_000)]
    assert calls[2]["hint"] == [True, False]
    assert calls[2]["seconds"] == pytest.approx(0.6, abs=1e-9)
    assert res.solution.dtype == bool and res.solution.tolist() == [True, False]
    assert (res.status, res.objective, res.bound, res.backend) == (
        Status.OPTIMAL, 100.0, 100.0, "fake")
    assert res.info == {"stages": (100.0, 1.0), "tag": 1}


def test_a_stage_stopped_by_its_limit_gives_feasible_with_the_first_stage_s_bound():
    """Stage 2 stopped with an answer: FEASIBLE, that answer, and the first stage's bound
    (1.2e9 on the integer scale) on the model's scale, x 100 / 1e9 = 120 work."""
    from bbopt.solvers.packs._stages import solve_stages

    calls = []
    answers = [("optimal", [True, False], 1.2e9), ("feasible", [False, True], 7e8)]
    res = solve_stages(_two_apps(), Budget(10.0), "fake", _scripted(answers, calls), tag=1)
    assert len(calls) == 3
    assert res.solution.tolist() == [False, True]
    assert (res.status, res.objective, res.backend) == (Status.FEASIBLE, 50.0, "fake")
    assert res.bound == pytest.approx(120.0, rel=1e-12)
    assert res.info == {"stages": (50.0, 2.0), "tag": 1}


@pytest.mark.parametrize("answers", [
    [("none", None, None)],  # no answer in time
    [("optimal", [True, True], 2e9), ("optimal", [True, True], 2e9)],  # 2 nodes of 1
])
def test_no_answer_or_an_infeasible_one_gives_the_fallback_s_pack(answers):
    """A first stage without an answer, or an answer over the free nodes (a solver tolerance
    letting a row slip): the contract's FALLBACK with the fallback's pack (A, first fit in Max
    order), its stage values, the backend's name and information, ``fallback: greedy``."""
    from bbopt.solvers.packs._stages import solve_stages

    res = solve_stages(_two_apps(), Budget(10.0), "fake", _scripted(answers, []), tag=1)
    assert res.solution.tolist() == [True, False]
    assert (res.status, res.objective, res.backend) == (Status.FALLBACK, (100.0, 1.0), "fake")
    assert res.info == {"tag": 1, "fallback": "greedy"}


def test_no_stage_starts_with_no_time_left(monkeypatch):
    """Building the model took the whole 1 s budget (left exactly 0): no stage is solved, the
    answer is the fallback's."""
    import bbopt.solvers.packs._stages as stages

    clock = _Clock(100.0)
    monkeypatch.setattr(stages, "_time", clock)
    calls = []
    res = stages.solve_stages(_two_apps(), Budget(1.0), "fake",
                              _scripted([("optimal", [False, True], 5e8)], calls, clock,
                                        building=1.0))
    assert calls == [{"keep": 2}]
    assert res.status is Status.FALLBACK and res.solution.tolist() == [True, False]


@pytest.mark.parametrize("capacity", [0, 1])
def test_with_no_application_on_the_free_nodes_or_one_the_pack_is_decided(capacity):
    """No free node: no stage is solved, the empty pack is OPTIMAL (objective and bound 0, the
    stage values, the backend's name and information); one free node and B, of 2 nodes, left
    out: the one application that fits (A) is offered to the backend."""
    from bbopt.solvers.packs._stages import solve_stages

    jobs = [Job("A", 0.0, 100.0, nodes=1), Job("B", 0.0, 50.0, nodes=2)]
    model = PackModel.from_jobs(jobs, capacity, 1e9)
    calls = []
    res = solve_stages(model, Budget(10.0), "fake",
                       _scripted([("optimal", [True], 1e9)], calls), tag=1)
    if capacity == 0:
        assert calls == []
        assert res.solution.dtype == bool and res.solution.tolist() == [False, False]
        assert (res.status, res.objective, res.bound, res.backend) == (
            Status.OPTIMAL, 0.0, 0.0, "fake")
        assert res.info == {"stages": (0.0,), "tag": 1}
    else:
        assert calls[0] == {"keep": 1}
        assert res.solution.tolist() == [True, False] and res.objective == 100.0


def test_an_application_as_wide_as_the_free_nodes_can_be_packed():
    model = PackModel.from_jobs([Job(k, 0.0, 10.0, nodes=n) for k, n in
                                 (("a", 2), ("b", 3), ("c", 4))], 3, 1e9)
    assert reduced(model).tolist() == [0, 1]


@pytest.mark.parametrize(("budget", "offered_apps"), [
    (Budget(0.1), 200),  # 0.1 s x 8000 / 4
    (Budget.of(0.1, None, "deterministic"), 800),  # work limits: the load does not count
])
def test_only_a_wall_budget_offers_fewer_on_a_loaded_machine(monkeypatch, budget,
                                                             offered_apps):
    """1000 applications on a machine where each CPU second takes 4 wall seconds: a wall
    budget of 0.1 s offers a quarter of its 800; a deterministic one all 800."""
    import bbopt.solvers.packs._stages as stages

    monkeypatch.setattr(stages, "decision_slowdown", lambda: 4.0)
    calls = []
    res = stages.solve_stages(_model(1000, capacity=8), budget, "fake",
                              _scripted([("none", None, None)], calls))
    assert calls[0] == {"keep": offered_apps} and res.status is Status.FALLBACK


def test_a_wall_budget_offers_by_its_seconds_even_with_a_work_limit():
    """A wall budget of 0.1 s with a CP-SAT work limit of 5 (10 s at DET_PER_SECOND) offers
    800 applications, not 80,000."""
    model = _model(3000)
    got = offered(model, reduced(model), model.fallback(), Budget(0.1, deterministic=5.0))
    assert len(got) == 800


def test_the_fallback_s_pack_is_offered_whole_even_beyond_the_cap():
    """70 one-node applications fill 70 free nodes in the fallback's pack: all 70 are offered
    under a cap of 64, and none of the 30 others."""
    model = PackModel.from_jobs([Job(str(k), 0.0, 1000.0 - k, nodes=1) for k in range(100)],
                                70, 1e9)
    got = offered(model, reduced(model), model.fallback(), Budget(0.001))
    assert got.tolist() == list(range(70))


def test_ties_in_value_are_offered_in_queue_order():
    """j0 (1000 s) is the fallback's pack on one node; then 63 of the 133 applications of 100
    s (every k not a multiple of 3) are offered, the first in the queue, before any of 50 s."""
    jobs = [Job("j0", 0.0, 1000.0, nodes=1)] + [
        Job(f"j{k}", 0.0, 100.0 if k % 3 else 50.0, nodes=1) for k in range(1, 200)]
    model = PackModel.from_jobs(jobs, 1, 1e9)
    got = offered(model, reduced(model), model.fallback(), Budget(0.001))
    assert got.tolist() == [0] + [k for k in range(1, 200) if k % 3][:63]

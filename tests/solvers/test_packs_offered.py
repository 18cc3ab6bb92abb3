"""An exact pack backend is offered at most ``APPS_PER_SECOND`` applications per second of
budget (building its model costs ~30 us each, outside the solver's limit): the fallback's pack
and the most valuable others, so its answer is never worse than the fallback."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import Job
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

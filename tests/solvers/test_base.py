"""The solver contract at its edges (bbopt.solvers.base): a backend that runs out of budget, or
ends without an answer, still yields the model's fallback with status FALLBACK, while an
infeasible model stays INFEASIBLE; the deterministic mode's wall-clock safety net at its floor;
what is left of a wall budget after model building; the relative gap on values that separate its
denominator (the bound) from the objective."""

from __future__ import annotations

import math

import pytest

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.solvers.base import (
    DET_PER_SECOND,
    MIN_SECONDS,
    SAFETY,
    SAFETY_FLOOR,
    Budget,
    BudgetExceeded,
    Result,
    register_backend,
    solve,
    unregister_backend,
)


class Toy:
    """A model whose fallback is [0] with objective 7."""

    def fallback(self) -> list[int]:
        return [0]

    def evaluate(self, x) -> float:
        return 7.0


@pytest.fixture
def toy_backends():
    @register_backend(Toy, "overrun")
    def overrun(model, budget, seed, **options):
        raise BudgetExceeded

    @register_backend(Toy, "empty")
    def empty(model, budget, seed, **options):
        return Result(Status.FEASIBLE, None)

    @register_backend(Toy, "infeasible")
    def infeasible(model, budget, seed, **options):
        return Result(Status.INFEASIBLE, None)

    @register_backend(Toy, "exact")
    def exact(model, budget, seed, **options):
        return Result(Status.OPTIMAL, [1], 3.0, bound=3.0, info={"budget": budget.seconds})

    yield
    for name in ("overrun", "empty", "infeasible", "exact"):
        unregister_backend(Toy, name)


@pytest.mark.parametrize("backend", ["overrun", "empty"])
def test_a_backend_without_an_answer_yields_the_fallback(toy_backends, backend):
    r = solve(Toy(), backend, Budget(0.5))
    assert r.status is Status.FALLBACK and r.solution == [0] and r.objective == 7.0
    assert r.backend == backend and r.info == {"fallback": "greedy"}


def test_an_infeasible_model_is_not_given_a_fallback(toy_backends):
    r = solve(Toy(), "infeasible")
    assert r.status is Status.INFEASIBLE and r.solution is None


def test_an_answer_comes_back_with_its_backend_and_budget(toy_backends):
    r = solve(Toy(), "exact", Budget(0.25))
    assert (r.status, r.solution, r.backend, r.info) == (Status.OPTIMAL, [1], "exact",
                                                         {"budget": 0.25})
    assert r.gap == 0.0 and r.wall_time >= 0.0


@pytest.mark.parametrize("seconds,cap", [(2.9, SAFETY_FLOOR), (3.0, SAFETY_FLOOR), (3.1, 31.0)])
def test_the_deterministic_safety_cap_is_ten_times_the_budget_at_least_thirty_seconds(seconds,
                                                                                     cap):
    assert (SAFETY, SAFETY_FLOOR, DET_PER_SECOND) == (10.0, 30.0, 0.5)
    b = Budget.of(seconds, mode="deterministic")
    assert b.seconds == pytest.approx(cap, rel=1e-12) and b.mode == "deterministic"
    assert b.deterministic == pytest.approx(0.5 * seconds, rel=1e-12)
    assert Budget.of(seconds, deterministic=2.0, mode="deterministic").deterministic == 2.0


def test_a_wall_budget_is_the_budget_itself():
    assert Budget.of(3.0) == Budget(3.0, None, "wall")


@pytest.mark.parametrize("elapsed,left", [(0.0, 1.0), (0.5, 0.5), (1.0 - 1e-3, 1e-3),
                                          (1.0, MIN_SECONDS), (5.0, MIN_SECONDS)])
def test_what_is_left_of_a_wall_budget_after_building_the_model(elapsed, left):
    assert MIN_SECONDS == 1e-3
    assert Budget(1.0).less(elapsed).seconds == pytest.approx(left, rel=1e-9)


def test_a_deterministic_budget_is_not_shortened_by_model_building():
    b = Budget.of(1.0, mode="deterministic")
    assert b.less(100.0) == b


@pytest.mark.parametrize("seconds", [0.0, -1.0, math.inf, math.nan, "1"])
def test_a_budget_is_a_positive_finite_number_of_seconds(seconds):
    with pytest.raises(InputError, match="budget seconds must be positive"):
        Budget(seconds)


def test_a_budget_named_as_the_policies_option():
    with pytest.raises(InputError) as err:
        Budget.of(0.0)
    assert err.value.field == "budget"
    with pytest.raises(InputError, match="budget mode must be one of wall, deterministic"):
        Budget.of(1.0, mode="cpu")


@pytest.mark.parametrize("objective,bound,gap", [(10.0, 8.0, 0.25), (8.0, 10.0, 0.2),
                                                 (5.0, -5.0, 2.0), (1e-12, 0.0, 1.0)])
def test_the_gap_is_relative_to_the_bound(objective, bound, gap):
    assert Result(Status.FEASIBLE, [0], objective, bound=bound).gap == pytest.approx(gap)


def test_no_gap_without_scalar_objective_and_bound():
    assert Result(Status.FEASIBLE, [0], (1.0, 2.0), bound=(1.0, 2.0)).gap is None
    assert Result(Status.FEASIBLE, [0], 1.0).gap is None


def test_the_backends_of_a_model_type_serve_its_subclasses_and_say_their_names(toy_backends):
    from bbopt.errors import UnknownNameError
    from bbopt.solvers.base import backends_for

    class SubToy(Toy):
        pass

    assert backends_for(SubToy()) == ["empty", "exact", "infeasible", "overrun"]
    assert solve(SubToy(), "exact").solution == [1]
    with pytest.raises(UnknownNameError) as info:
        solve(Toy(), "nope")
    assert str(info.value) == ("unknown backend for Toy 'nope'; known: empty, exact, "
                               "infeasible, overrun")
    with pytest.raises(InputError, match=r"^no backend is registered for object$"):
        solve(object(), "exact")
    assert backends_for(object()) == []


def test_a_backend_must_be_a_function():
    with pytest.raises(InputError, match=r"backend 'x' must be a function fn\(model, budget, "
                                         r"seed, \*\*options\) -> Result, got int"):
        register_backend(Toy, "x")(3)
    unregister_backend(Toy, "x")
    unregister_backend(type("Never", (), {}), "x")  # nothing registered: nothing to remove


def test_the_wall_time_is_the_contracts_own_and_a_backends_name_is_kept():
    @register_backend(Toy, "named")
    def named(model, budget, seed, **options):
        return Result(Status.FEASIBLE, [seed, options["k"]], 1.0, wall_time=-5.0,
                      backend="named-inner")

    try:
        r = solve(Toy(), "named", seed=4, k=9)
    finally:
        unregister_backend(Toy, "named")
    assert r.solution == [4, 9] and r.backend == "named-inner"
    assert 0.0 <= r.wall_time < 5.0


def _overrunning_model():
    """A model with a fallback and no evaluation, whose one backend ("overrun") runs out of
    time at once."""

    class Bare:
        def fallback(self):
            return "greedy answer"

    @register_backend(Bare, "overrun")
    def overrun(model, budget, seed, **options):
        raise BudgetExceeded

    return Bare()


def test_a_fallback_without_an_evaluation_has_no_objective():
    r = solve(_overrunning_model(), "overrun")
    assert (r.status, r.solution, r.objective, r.backend) == (
        Status.FALLBACK, "greedy answer", None, "overrun")
    assert r.wall_time >= 0.0 and r.info == {"fallback": "greedy"}


def test_a_default_budget_is_one_wall_second(toy_backends):
    assert Budget() == Budget(1.0, None, "wall")
    assert solve(Toy(), "exact").info == {"budget": 1.0}


def test_a_wall_budget_keeps_its_work_limit_and_a_bad_mode_is_named_as_its_option():
    assert Budget.of(2.0, 0.3) == Budget(2.0, 0.3, "wall")
    with pytest.raises(InputError) as err:
        Budget.of(1.0, mode="cpu")
    assert err.value.field == "budget_mode"


def test_a_backend_that_is_not_a_function_is_refused_as_the_backend_field():
    with pytest.raises(InputError) as err:
        register_backend(Toy, "x")("not a function")
    assert err.value.field == "backend" and "got str" in str(err.value)


def test_an_unregistered_backend_is_gone_and_the_default_seed_is_0(toy_backends):
    from bbopt.solvers.base import backends_for

    @register_backend(Toy, "seeded")
    def seeded(model, budget, seed, **options):
        return Result(Status.FEASIBLE, [seed], 1.0)

    assert solve(Toy(), "seeded").solution == [0]
    unregister_backend(Toy, "seeded")
    assert "seeded" not in backends_for(Toy())


class _EntryPoint:
    def __init__(self, name, value, load):
        self.name, self.value, self.load = name, value, load


def _plugins(monkeypatch, *eps):
    import importlib.metadata

    from bbopt.solvers import base

    monkeypatch.setattr(base, "_PLUGINS_LOADED", False)
    monkeypatch.setattr(importlib.metadata, "entry_points",
                        lambda group: list(eps) if group == "bbopt.backends" else [])


def test_a_backend_plugin_is_loaded_when_a_name_is_not_known(toy_backends, monkeypatch):
    def load():
        @register_backend(Toy, "plugged")
        def plugged(model, budget, seed, **options):
            return Result(Status.OPTIMAL, ["plugged"], 0.0)

    _plugins(monkeypatch, _EntryPoint("plug", "plugmod", load))
    try:
        assert solve(Toy(), "plugged").solution == ["plugged"]
    finally:
        unregister_backend(Toy, "plugged")


def test_a_broken_backend_plugin_is_named_with_its_error(monkeypatch):
    from bbopt.solvers.base import backends_for

    def load():
        raise ImportError("no module named plugmod")

    _plugins(monkeypatch, _EntryPoint("plug", "plugmod:fn", load))
    with pytest.raises(InputError) as err:
        backends_for(Toy())
    assert err.value.field == "bbopt.backends"
    assert str(err.value) == ("field 'bbopt.backends': the backend plug-in 'plug' (plugmod:fn) "
                              "does not load: ImportError: no module named plugmod")


def test_a_fallbacks_time_is_the_backends_plus_its_own(monkeypatch):
    from bbopt.solvers import base

    model = _overrunning_model()
    clock = [10.0, 13.0, 20.0, 21.5]  # the backend 3 s, the fallback 1.5 s

    def perf_counter():
        return clock.pop(0) if len(clock) > 1 else clock[0]

    monkeypatch.setattr(base._time, "perf_counter", perf_counter)
    try:
        wall = solve(model, "overrun").wall_time
    finally:
        monkeypatch.undo()
        unregister_backend(type(model), "overrun")
    assert wall == 4.5


def test_a_new_model_types_registry_checks_its_backends_and_builtins_declare_theirs(
        monkeypatch):
    from bbopt.errors import UnknownNameError
    from bbopt.models.window import WindowModel
    from bbopt.solvers import base

    monkeypatch.setattr(base, "_BACKENDS", {})  # every registry made afresh
    assert "cpsat" in base.backends_for(WindowModel.__new__(WindowModel))

    class Fresh:
        pass

    with pytest.raises(InputError, match="got int"):
        register_backend(Fresh, "x")(3)
    with pytest.raises(UnknownNameError, match="^unknown backend for Fresh 'x'; known: $"):
        solve(Fresh(), "x")
    with pytest.raises(InputError, match="^a backend for Fresh name must be non-empty text"):
        register_backend(Fresh, "")(solve)

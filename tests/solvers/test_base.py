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


def test_a_fallback_without_an_evaluation_has_no_objective():
    class Bare:
        def fallback(self):
            return "greedy answer"

    @register_backend(Bare, "overrun")
    def overrun(model, budget, seed, **options):
        raise BudgetExceeded

    r = solve(Bare(), "overrun")
    assert (r.status, r.solution, r.objective, r.backend) == (
        Status.FALLBACK, "greedy answer", None, "overrun")
    assert r.wall_time >= 0.0 and r.info == {"fallback": "greedy"}


def test_a_default_budget_is_one_wall_second(toy_backends):
    assert Budget() == Budget(1.0, None, "wall")
    assert solve(Toy(), "exact").info == {"budget": 1.0}

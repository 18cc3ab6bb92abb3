"""The benchmark measures by their published definitions, on values that tell them apart from
plausible variants (differences instead of ratios, plain geometric means, trapezoids)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.bench.measures import (
    gap_at,
    performance_profile,
    primal_integral,
    runtime_ecdf,
    shifted_geometric_mean,
)
from bbopt.bench.run import primal_gap


def test_performance_profile_counts_time_ratios_to_the_best_solver():
    # problem 1: a 1 s, b 3 s; problem 2: a 10 s, b 5 s; problem 3: a unsolved, b 2 s;
    # problem 4: nobody solves it.
    times = {"a": [1.0, 10.0, math.inf, math.inf], "b": [3.0, 5.0, 2.0, math.inf]}
    rho = performance_profile(times, [1.0, 1.99, 2.0, 2.99, 3.0, 1e9])
    # a: ratios 1, 2, inf, inf; b: ratios 3, 1, 1, inf
    assert rho["a"].tolist() == [0.25, 0.25, 0.5, 0.5, 0.5, 0.5]
    assert rho["b"].tolist() == [0.5, 0.5, 0.5, 0.5, 0.75, 0.75]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.one_of(st.floats(0.001, 100.0), st.just(math.inf)),
                         min_size=3, max_size=3), min_size=1, max_size=8))
def test_profiles_rise_with_tau_and_the_winners_cover_every_solved_problem(rows):
    times = {s: [r[k] for r in rows] for k, s in enumerate("abc")}
    taus = np.logspace(0, 6, 30)
    rho = performance_profile(times, taus)
    for r in rho.values():
        assert np.all(np.diff(r) >= 0)
    solved = np.mean([any(math.isfinite(v) for v in r) for r in rows])
    assert sum(r[0] for r in rho.values()) >= solved - 1e-12  # each solved problem has a best
    assert max(r[-1] for r in rho.values()) <= solved + 1e-12


def test_shifted_geometric_mean_is_not_the_plain_one():
    v = [1.0, 100.0]
    assert shifted_geometric_mean(v, 0.0) == pytest.approx(10.0)
    assert shifted_geometric_mean(v, 10.0) == pytest.approx(math.sqrt(11 * 110) - 10)
    assert math.isnan(shifted_geometric_mean([], 1.0))


def test_primal_integral_is_the_step_function_with_one_before_the_first_incumbent():
    trace = [(2.0, 0.5), (4.0, 0.1), (9.0, 0.0)]
    # [0,2): 1, [2,4): 0.5, [4,9): 0.1, [9,10]: 0
    assert primal_integral(trace, 10.0) == pytest.approx(2 + 1 + 0.5)
    assert primal_integral(trace, 3.0) == pytest.approx(2 + 0.5)  # horizon cuts the steps
    assert primal_integral([], 5.0) == 5.0
    assert primal_integral([(0.0, 0.0)], 5.0) == 0.0
    assert gap_at(trace, [0.0, 1.99, 2.0, 8.99, 9.0]).tolist() == [1.0, 1.0, 0.5, 0.1, 0.0]


def test_primal_gap_by_berthold():
    assert primal_gap(10.0, 8.0) == pytest.approx(0.2)  # / max(|10|, |8|), not / 8
    assert primal_gap(8.0, 10.0) == pytest.approx(0.2)  # minimisation: the same formula
    assert primal_gap(5.0, -1.0) == 1.0
    assert primal_gap(0.0, 0.0) == 0.0
    assert primal_gap(3.0, None) == 1.0


def test_runtime_ecdf_counts_pairs_reached_by_each_time():
    firsts = [0.1, 0.5, math.inf, 2.0]
    assert runtime_ecdf(firsts, [0.05, 0.1, 1.0, 10.0]).tolist() == [0.0, 0.25, 0.5, 0.75]


def test_performance_profile_of_one_problem_and_of_none():
    rho = performance_profile({"a": [2.0]}, [0.5, 1.0])
    assert rho["a"].tolist() == [0.0, 1.0]  # one solver, one problem: its own best
    empty = performance_profile({"a": [], "b": []}, [1.0, 2.0, 4.0])
    assert {s: r.tolist() for s, r in empty.items()} == {"a": [0.0] * 3, "b": [0.0] * 3}


def test_performance_profile_ratios_below_one_second_and_at_zero():
    # a best time of 0.25 s: b's 0.5 s is a ratio of 2, not 0.5 / max(0.25, 1) = 0.5
    rho = performance_profile({"a": [0.25], "b": [0.5]}, [1.0, 1.5, 2.0])
    assert rho["b"].tolist() == [0.0, 0.0, 1.0]
    # two solvers at 0 s both reach the best (0 / 1e-300 = 0 <= tau)
    zero = performance_profile({"a": [0.0], "b": [0.0]}, [1.0])
    assert zero["a"].tolist() == [1.0] and zero["b"].tolist() == [1.0]


def test_performance_profile_of_a_problem_nobody_solves_does_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rho = performance_profile({"a": [math.inf, 1.0], "b": [math.inf, 2.0]}, [1.0, 2.0])
    assert rho["a"].tolist() == [0.5, 0.5] and rho["b"].tolist() == [0.0, 0.5]


def test_shifted_geometric_mean_of_one_value_is_that_value():
    assert shifted_geometric_mean([5.0], 10.0) == pytest.approx(5.0)
    assert shifted_geometric_mean([5.0], 0.0) == pytest.approx(5.0)


def test_gap_at_before_any_incumbent_is_a_float_one():
    g = gap_at([], [0, 3])
    assert g.dtype == np.float64 and g.tolist() == [1.0, 1.0]
    assert gap_at([], 7.0).tolist() == [1.0]


def test_primal_integral_of_an_incumbent_found_before_one_second():
    # [0, 0.5): 1, [0.5, 2]: 0.2 -> 0.5 + 1.5 * 0.2 (the step starts at 0.5 s, not 1 s)
    assert primal_integral([(0.5, 0.2)], 2.0) == pytest.approx(0.8)
    # an incumbent at the horizon itself adds a step of no width
    assert primal_integral([(5.0, 0.0)], 5.0) == 5.0


def test_runtime_ecdf_of_one_pair_and_of_none():
    assert runtime_ecdf([1.0], [0.5, 1.0, 2.0]).tolist() == [0.0, 1.0, 1.0]
    assert runtime_ecdf([], [1.0, 2.0]).tolist() == [0.0, 0.0]

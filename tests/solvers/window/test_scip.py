"""The ``scip`` window backend (Fan et al., BBSched, Section 3.2, solved exactly by SCIP on the
``milp`` backend's PuLP program): its solver answers what the drivers ask (checked against
enumeration), with SCIP's settings, and traces the incumbents of its first solve only (of the
selection, or of the level counts on demand)."""

from __future__ import annotations

import time

import pytest

from bbopt.core import GB, Status
from bbopt.solvers import Budget
from bbopt.solvers.scip import ScipCommand
from bbopt.solvers.window import scip
from bbopt.solvers.window.forms import linear_form
from bbopt.solvers.window.scip import _ScipPulp, solve_scip
from tests.solvers.window import _int_solvers
from tests.solvers.window._int_solvers import FORCED, LEVELS

pytest.importorskip("pyscipopt")


def test_the_solver_answers_what_the_drivers_ask():
    _int_solvers.check_all(lambda lf: _ScipPulp(lf, Budget(30.0), 0, time.perf_counter()))


def test_every_solve_runs_scip_with_the_seed_and_only_the_first_is_traced():
    lf = linear_form(FORCED, ["nodes", "bb"])
    s = _ScipPulp(lf, Budget(30.0), 5, time.perf_counter())
    assert s.solver == "scip" and s.trace == [] and s.solves == 0
    first, second = s._cmd(2.0), s._cmd(3.0)
    assert isinstance(first, ScipCommand) and isinstance(second, ScipCommand)
    assert first.timeLimit == 2.0 and second.timeLimit == 3.0
    assert first.options == second.options == ["randomization/randomseedshift=5"]
    assert first.on_solution is not None and first.watch == s.x
    assert second.on_solution is None and second.watch == []


def test_the_trace_is_the_first_solves_incumbents_of_the_selection_or_the_counts():
    t0 = time.perf_counter()
    lf = linear_form(FORCED, ["nodes", "bb"])
    s = _ScipPulp(lf, Budget(30.0), 0, t0)
    status, x, _, _ = s.maximize(*lf.objectives["nodes"], 10.0)
    after = time.perf_counter() - t0
    assert status is Status.OPTIMAL and s.trace
    assert all(0 <= t <= after for t, _ in s.trace)
    assert s.trace[-1][1] == [int(v) for v in x]
    assert all(type(v) is int for _, values in s.trace for v in values)
    assert all(len(v) == 5 and v[3] == 1 and v[4] == 0 for _, v in s.trace)
    first = list(s.trace)
    s.maximize(*lf.objectives["bb"], 10.0)
    assert s.trace == first and s.solves == 2
    lv = linear_form(LEVELS, ["nodes", "ssd_waste"])
    c = _ScipPulp(lv, Budget(30.0), 0, time.perf_counter(), counts=True)
    status, _, a, _ = c.maximize(*lv.objectives["nodes"], 10.0)
    assert status is Status.OPTIMAL and c.trace[-1][1] == list(a)
    assert all(len(v) == lv.k for _, v in c.trace)


def test_the_backend_and_its_trace(monkeypatch):
    t0 = time.perf_counter()
    r = solve_scip(FORCED, Budget(30.0), 0, form="weighted", trace=True)
    elapsed = time.perf_counter() - t0
    assert r.backend == "scip" and r.status is Status.OPTIMAL
    assert tuple(FORCED.evaluate(r.solution)) == (7.0, 8 * GB)
    trace = r.info["trace"]
    assert trace and all(0 <= t <= elapsed for t, _ in trace)
    assert trace[-1][1] == [int(v) for v in r.solution]
    watched = []
    monkeypatch.setattr(scip, "ScipCommand", lambda *args: watched.append(len(args))
                        or ScipCommand(*args))
    plain = solve_scip(FORCED, Budget(30.0), 0, form="weighted")  # (no trace asked: none kept)
    assert watched and set(watched) == {2}  # (no solve watched: SCIP without a callback)
    assert plain.solution.tolist() == r.solution.tolist() and "trace" not in plain.info
    untraced = _ScipPulp(linear_form(FORCED, ["nodes"]), Budget(30.0), 0, 0.0, trace=False)
    assert untraced.maximize(*untraced.form.objectives["nodes"], 10.0)[0] is Status.OPTIMAL
    assert untraced.trace == [] and untraced.solves == 1

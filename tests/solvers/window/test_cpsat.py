"""The ``cpsat`` window backend (Fan et al., BBSched, Section 3.2, solved exactly with CP-SAT):
its solver answers what the drivers ask (checked against enumeration), with the parameters the
module promises (one worker, the seed, the wall and deterministic limits, linearisation and
presolve), hints, unproven answers, and the anytime trace of its first solve."""

from __future__ import annotations

import time
import types

import numpy as np
import pytest
from ortools.sat.python import cp_model

from bbopt.core import GB, Status
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget, solve
from bbopt.solvers.window import cpsat
from bbopt.solvers.window.cpsat import _CpSat, solve_cpsat, traced
from bbopt.solvers.window.forms import linear_form
from tests.solvers.window import _int_solvers
from tests.solvers.window._int_solvers import FORCED, LEVELS


def test_the_solver_answers_what_the_drivers_ask():
    _int_solvers.check_all(lambda lf: _CpSat(lf, Budget(30.0), 0))


FIELDS = ("num_workers", "random_seed", "linearization_level", "cp_model_presolve",
          "max_time_in_seconds", "max_deterministic_time")


class Recording(cp_model.CpSolver):
    """CP-SAT's solver, recording the parameters and the deterministic time of each solve."""

    seen: list[tuple[object, float]] = []

    def solve(self, model, callback=None):
        status = super().solve(model, callback) if callback else super().solve(model)
        p = self.parameters
        Recording.seen.append((types.SimpleNamespace(**{k: getattr(p, k) for k in FIELDS}),
                               self.deterministic_time))
        return status


@pytest.fixture
def recording(monkeypatch):
    Recording.seen = []
    monkeypatch.setattr(cpsat.cp_model, "CpSolver", Recording)
    return Recording.seen


def test_each_solve_is_one_seeded_worker_within_the_time_left(recording):
    lf = linear_form(FORCED, ["nodes", "bb"])
    s = _CpSat(lf, Budget(30.0), 7)
    cn, an = lf.objectives["nodes"]
    s.maximize(cn, an, 2.5)
    s.maximize(cn, an, 0.0)  # no time left: the least CP-SAT is given, 0.1 ms
    (p, _), (q, _) = recording
    assert (p.num_workers, p.random_seed, p.linearization_level) == (1, 7, cpsat.LINEARIZATION)
    assert p.cp_model_presolve is cpsat.PRESOLVE is False
    assert p.max_time_in_seconds == 2.5 and q.max_time_in_seconds == 1e-4
    # no work limit asked and none in the budget: CP-SAT's own default (none)
    assert p.max_deterministic_time == cp_model.CpSolver().parameters.max_deterministic_time


@pytest.mark.parametrize("det, work, limits", [
    (None, 0.25, lambda used: [0.25, 0.25, 0.25]),  # the work asked, each time
    (5.0, None, lambda used: [5.0, 5.0 - used[0], 5.0 - used[0] - used[1]]),  # what is left
    (5.0, 0.25, lambda used: [0.25, 0.25, 0.25]),  # the smaller of the two
    (0.5, None, lambda used: [0.5, 0.5 - used[0], 0.5 - used[0] - used[1]]),  # under a unit
    (1e-9, None, lambda used: [1e-4, 1e-4, 1e-4]),  # spent: the least, 0.1 ms of work
])
def test_deterministic_limits_count_the_work_already_done(recording, det, work, limits):
    """A deterministic budget is shared by the solves of one decision: each is given what the
    previous ones left (never less than 1e-4), or the work asked of it if that is smaller."""
    lf = linear_form(FORCED, ["nodes", "bb"])
    s = _CpSat(lf, Budget(30.0, deterministic=det), 0)
    for name in ("nodes", "bb", "nodes"):
        s.maximize(*lf.objectives[name], 10.0, work=work)
    used = [u for _, u in recording]
    assert all(u > 0 for u in used)
    assert s.det_used == pytest.approx(sum(used))
    want = limits(used)
    assert [p.max_deterministic_time for p, _ in recording] == pytest.approx(
        [max(v, 1e-4) for v in want])


def test_a_hint_is_the_answer_among_equal_selections():
    """Nothing to maximise (every selection of at most 2 of 3 one-node jobs is optimal): the
    hinted selection comes back, and the next solve's hint replaces it."""
    m = WindowModel(nodes=[1, 1, 1], bb=[0.0] * 3, free_nodes=2, free_bb=0.0)
    lf = linear_form(m, ["nodes", "bb"])
    s = _CpSat(lf, Budget(30.0), 0)
    zero = np.zeros(3, np.int64), np.zeros(0, np.int64)
    for hint in ([True, False, True], [False, True, True], [True, True, False]):
        status, x, _, _ = s.maximize(*zero, 10.0, hint=np.array(hint))
        assert status is Status.OPTIMAL and list(x) == hint


def test_an_answer_cut_short_by_the_work_limit_is_feasible_not_optimal():
    """40 jobs of up to 1,000 nodes and GB on 9,973 nodes and 9,967 GB: 0.1 ms of work finds
    a selection but does not prove it; the bound is above its value."""
    rng = np.random.default_rng(3)
    m = WindowModel(nodes=rng.integers(1, 1000, 40), bb=rng.integers(1, 1000, 40) * 1e6,
                    free_nodes=9973, free_bb=9967e6)
    lf = linear_form(m, ["nodes", "bb"])
    cx = lf.objectives["nodes"][0] + 3 * lf.objectives["bb"][0]
    status, x, a, bound = _CpSat(lf, Budget(30.0), 0).maximize(cx, np.zeros(0, np.int64), 5.0,
                                                               work=1e-4)
    assert status is Status.FEASIBLE and x.dtype == bool and a.dtype == np.int64
    assert bound > int(cx @ x)
    assert all(int(r[0] @ x) <= r[2] for r in lf.rows)


def test_an_optimum_comes_with_its_value_as_bound():
    lf = linear_form(FORCED, ["nodes", "bb"])
    status, x, _, bound = _CpSat(lf, Budget(30.0), 0).maximize(*lf.objectives["bb"], 10.0)
    assert status is Status.OPTIMAL and bound == float(lf.objectives["bb"][0] @ x)


def test_the_backend_untraced_by_default():
    r = solve_cpsat(FORCED, Budget(30.0), 0, form="weighted")
    assert r.backend == "cpsat" and "trace" not in r.info
    assert r.status is Status.OPTIMAL
    assert tuple(FORCED.evaluate(r.solution)) == (7.0, 8 * GB)


def test_the_trace_holds_the_first_solves_incumbents():
    """Weighted nodes + BB: the first (and only) solve's incumbents, seconds counted from the
    backend's start, the last one the answer; the same run with the trace as without."""
    t0 = time.perf_counter()
    r = solve_cpsat(FORCED, Budget(30.0), 0, trace=True, form="weighted")
    elapsed = time.perf_counter() - t0
    plain = solve_cpsat(FORCED, Budget(30.0), 0, form="weighted")
    assert r.backend == "cpsat" and r.status is Status.OPTIMAL
    trace = r.info["trace"]
    assert trace and all(0 <= t <= elapsed for t, _ in trace)
    assert [t for t, _ in trace] == sorted(t for t, _ in trace)
    assert all(len(x) == 5 and set(x) <= {0, 1} and x[3] == 1 and x[4] == 0 for _, x in trace)
    assert trace[-1][1] == [int(v) for v in r.solution] == [int(v) for v in plain.solution]


def test_only_the_first_solve_is_traced_and_counts_on_demand():
    made: list[_CpSat] = []
    make = traced(Budget(30.0), 0, made)
    lf = linear_form(FORCED, ["nodes", "bb"])
    s = make(lf)
    assert made == [s] and s.trace == [] and s.seed == 0
    s.maximize(*lf.objectives["nodes"], 10.0)
    first = list(s.trace)
    assert first and all(len(x) == 5 for _, x in first)
    s.maximize(*lf.objectives["bb"], 10.0)
    assert s.trace == first
    # the counts per SSD level traced instead of the selection
    counts: list[_CpSat] = []
    lv = linear_form(LEVELS, ["nodes", "ssd_waste"])
    c = traced(Budget(30.0), 3, counts, counts=True)(lv)
    status, _, a, _ = c.maximize(*lv.objectives["nodes"], 10.0)
    assert counts == [c] and c.seed == 3 and c.budget == Budget(30.0)
    assert c.trace and all(len(v) == lv.k for _, v in c.trace)
    assert c.trace[-1][1] == list(a)


def test_the_registered_backend_is_this_one():
    r = solve(FORCED, "cpsat", Budget(30.0))
    assert r.backend == "cpsat" and r.status is Status.OPTIMAL

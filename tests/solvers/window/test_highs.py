"""The ``highs`` window backend (Fan et al., BBSched, Section 3.2, solved exactly by HiGHS
through ``scipy.optimize.milp``): its solver answers what the drivers ask (checked against
enumeration), the program it hands HiGHS (boxes of the forced and refused jobs and of the level
counts, the disjunctions' binaries, the time limit, no gap), and what it makes of HiGHS's
answers (infeasible, none in time, unproven, a rounding that breaks a row)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from scipy.optimize import milp as scipy_milp

from bbopt.core import GB, Status
from bbopt.solvers import Budget
from bbopt.solvers.window import highs
from bbopt.solvers.window.forms import linear_form
from bbopt.solvers.window.highs import _Highs, solve_highs
from tests.solvers.window import _int_solvers
from tests.solvers.window._int_solvers import FORCED, LEVELS


def test_the_solver_answers_what_the_drivers_ask():
    _int_solvers.check_all(_Highs)


@pytest.fixture
def calls(monkeypatch):
    seen = []

    def recording(c, **kw):
        seen.append({"c": c, **kw, "options": dict(kw["options"])})  # (milp pops "disp")
        return scipy_milp(c, **kw)

    monkeypatch.setattr(highs, "milp", recording)
    return seen


def test_the_program_handed_to_highs(calls):
    """FORCED (J3 forced, J4 refused) with one disjunction of two terms: 5 binaries, then
    the two disjunction binaries; the capacity rows as upper bounds, the disjunction's rows as
    lower ones with their big-M."""
    lf = linear_form(FORCED, ["nodes", "bb"])
    s = _Highs(lf)
    (cn, an), (cb, ab) = lf.objectives["nodes"], lf.objectives["bb"]
    s.maximize(cn, an, 2.5)
    s.maximize(cn, an, 0.0)
    first, second = calls
    assert list(first["c"]) == list(-cn.astype(float))
    assert list(first["integrality"]) == [1] * 5
    assert list(first["bounds"].lb) == [0, 0, 0, 1, 0]
    assert list(first["bounds"].ub) == [1, 1, 1, 1, 0]
    assert first["options"] == {"time_limit": 2.5, "disp": False, "mip_rel_gap": 0.0}
    assert second["options"]["time_limit"] == 1e-3  # the least HiGHS is given
    cons = first["constraints"]
    assert cons.A.tolist() == [list(r[0]) for r in lf.rows]
    assert list(cons.lb) == [-np.inf] * 2 and list(cons.ub) == [r[2] for r in lf.rows]
    gb = int(cb[3])
    s.add_any_ge([(cn, an, 7), (cb, ab, 11 * gb)])
    h = s.push_ge(cb, ab, 3 * gb)
    s.maximize(cb, ab, 1.0)
    third = calls[-1]
    assert list(third["integrality"]) == [1] * 7
    assert list(third["bounds"].lb) == [0, 0, 0, 1, 0, 0, 0]
    assert list(third["bounds"].ub) == [1, 1, 1, 1, 0, 1, 1]
    A, lo = third["constraints"].A, third["constraints"].lb
    # nodes >= 7 - 7 (1 - b0): M = 7 (the row's least value is 0); BB >= 11 GB - M (1 - b1)
    assert list(A[2]) == list(cn) + [-7, 0] and lo[2] == 0
    assert list(A[3]) == list(cb) + [0, -11 * gb] and lo[3] == 0
    assert list(A[4]) == [0] * 5 + [1, 1] and lo[4] == 1  # one of them at least
    assert list(A[5]) == list(cb) + [0, 0] and lo[5] == 3 * gb  # the pushed row, last
    s.pop(h)
    s.maximize(cb, ab, 1.0)
    assert calls[-1]["constraints"].A.shape == (5, 7)


def test_the_level_counts_are_integers_in_their_boxes(calls):
    lf = linear_form(LEVELS, ["nodes", "ssd_waste"])
    _Highs(lf).maximize(*lf.objectives["ssd_waste"], 1.0)
    (call,) = calls
    n = lf.w + lf.k
    assert list(call["integrality"]) == [1] * n
    assert list(call["bounds"].ub) == [1.0] * lf.w + list(lf.a_hi.astype(float))
    assert list(call["c"]) == list(-np.concatenate(lf.objectives["ssd_waste"]).astype(float))


def scripted(monkeypatch, **answer):
    monkeypatch.setattr(highs, "milp", lambda c, **kw: types.SimpleNamespace(**answer))


@pytest.mark.parametrize("answer, want", [
    ({"status": 2, "x": None}, (Status.INFEASIBLE, None, None, None)),
    ({"status": 1, "x": None}, (Status.FALLBACK, None, None, None)),  # time out, no answer
    # a rounding that puts 8 nodes on 7: not an answer
    ({"status": 0, "x": np.array([1.0, 1, 1, 1, 0]), "mip_dual_bound": -7.0},
     (Status.FALLBACK, None, None, None)),
])
def test_answers_that_are_not_selections(monkeypatch, answer, want):
    lf = linear_form(FORCED, ["nodes", "bb"])
    scripted(monkeypatch, **answer)
    assert _Highs(lf).maximize(*lf.objectives["nodes"], 1.0) == want


@pytest.mark.parametrize("status, outcome", [(0, Status.OPTIMAL), (1, Status.FEASIBLE)])
def test_a_selection_its_status_and_bound(monkeypatch, status, outcome):
    """HiGHS minimises the negated objective: its dual bound -9 is a bound of 9 nodes; a
    value just off an integer is rounded."""
    lf = linear_form(FORCED, ["nodes", "bb"])
    scripted(monkeypatch, status=status, x=np.array([0.9999999, 1, 0, 1, 0]),
             mip_dual_bound=-9.0)
    got, x, a, bound = _Highs(lf).maximize(*lf.objectives["nodes"], 1.0)
    assert got is outcome and list(x) == [True, True, False, True, False] and bound == 9.0
    assert x.dtype == bool and a.dtype == np.int64 and len(a) == 0
    scripted(monkeypatch, status=status, x=np.array([1.0, 1, 0, 1, 0]))
    assert _Highs(lf).maximize(*lf.objectives["nodes"], 1.0)[3] is None  # no bound given


def test_the_backend():
    r = solve_highs(FORCED, Budget(30.0), 0, form="weighted")
    assert r.backend == "highs" and r.status is Status.OPTIMAL
    assert tuple(FORCED.evaluate(r.solution)) == (7.0, 8 * GB)
    # BB first, then nodes, then the queue order: two stage rows held at once under the third
    r = solve_highs(FORCED, Budget(30.0), 0, form="lexicographic", priority=("bb", "nodes"))
    assert r.status is Status.OPTIMAL and tuple(FORCED.evaluate(r.solution)) == (5.0, 11 * GB)

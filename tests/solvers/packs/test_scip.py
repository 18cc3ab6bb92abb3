"""The ``scip`` pack backend: what each stage's SCIP run is given (the time left, the seed, the
incumbent callback on the first stage only), the shortest stage it still starts, a stage
stopped by its limit, and the first stage's incumbents over all applications."""

from __future__ import annotations

import pulp
import pytest

from bbopt.core import Status
from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, solve
from tests._slow_clock import SlowClock
from tests.solvers.packs._cases import B, periodic
from tests.solvers.packs._cases import three_stages as _three_stages

pytest.importorskip("pyscipopt")


@pytest.fixture
def runs(monkeypatch):
    """SCIP as it is, each run recorded as (seconds, seed, with a callback); ``status`` in the
    list's first place, when set, is reported instead of SCIP's own."""
    import bbopt.solvers.packs._stages as stages
    import bbopt.solvers.packs.scip as scip

    seen: list = [None]
    real = scip.ScipCommand

    class Recording(real):
        def __init__(self, seconds, seed, watch=(), on_solution=None):
            super().__init__(seconds, seed, watch, on_solution)
            seen.append((seconds, seed, on_solution is not None))

        def actualSolve(self, lp, **kwargs):
            out = super().actualSolve(lp, **kwargs)
            if seen[0] is not None:
                lp.sol_status = seen[0]
            return out

    monkeypatch.setattr(stages, "_time", SlowClock(0.0))
    monkeypatch.setattr(scip, "ScipCommand", Recording)
    return seen


def test_each_stage_runs_scip_in_the_time_left_watching_the_first_only(runs):
    """Work ties, stretch-work takes A (20 against 15), and the Char stage cannot take B."""
    r = solve(_three_stages(), "scip", Budget(0.5), seed=7, trace=True)
    assert (r.status, r.backend, r.solution.tolist()) == (Status.OPTIMAL, "scip",
                                                          [True, False])
    assert runs[1:] == [(0.5, 7, True), (0.5, 7, False), (0.5, 7, False)]
    del runs[1:]
    plain = solve(_three_stages(), "scip", Budget(0.5), seed=7)  # (no trace asked: none kept)
    assert plain.solution.tolist() == [True, False] and "trace" not in plain.info
    assert runs[1:] == [(0.5, 7, False)] * 3


@pytest.mark.parametrize(("seconds", "starts"), [(0.05, True), (0.02, False)])
def test_a_stage_starts_with_at_least_the_minimum_left(runs, seconds, starts):
    r = solve(PackModel.from_jobs([periodic("A", 1, 9.0, 1.0)], 1, B), "scip", Budget(seconds))
    assert (len(runs) - 1, r.status) == ((1, Status.OPTIMAL) if starts else
                                         (0, Status.FALLBACK))


def test_a_stage_stopped_by_its_limit_with_an_answer_is_feasible(runs):
    runs[0] = pulp.LpSolutionIntegerFeasible
    r = solve(_three_stages(), "scip", Budget(5.0))
    assert r.status is Status.FEASIBLE and r.solution.tolist() == [True, False]
    assert len(runs) == 2


def test_the_trace_holds_the_first_stage_s_incumbents_over_all_applications():
    """W (3 nodes) does not fit the 2 free nodes: every incumbent selects over the three
    applications, 0 for W, as integers."""
    jobs = [periodic("A", 1, 9.0, 1.0), periodic("W", 1, 9.0, 1.0, nodes=3),
            periodic("C", 1, 4.0, 1.0)]
    r = solve(PackModel.from_jobs(jobs, 2, B), "scip", Budget(5.0), trace=True)
    assert (r.status, r.solution.tolist()) == (Status.OPTIMAL, [True, False, True])
    assert r.info["trace"] and r.info["trace"][-1][1] == [1, 0, 1]
    for seconds, selection in r.info["trace"]:
        assert seconds >= 0.0 and len(selection) == 3 and selection[1] == 0
        assert all(type(v) is int for v in selection)

"""The ``milp`` pack backend (CBC through PuLP): what each stage's CBC run is given (quiet, the
time left less its start-up, the seed, no preprocessing, then with it when CBC fails), the
shortest stage it still starts, a stage stopped by its limit, the earlier stages kept to the
integer unit."""

from __future__ import annotations

import numpy as np
import pulp
import pytest

from bbopt.core import Status
from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, solve
from tests._slow_clock import SlowClock
from tests.solvers.packs._cases import B, periodic
from tests.solvers.packs._cases import three_stages as _three_stages


class _RecordingCbc(pulp.PULP_CBC_CMD):
    """CBC as it is, recording how it is called; ``fail`` runs refused with PuLP's error, and
    ``status`` reported instead of CBC's own."""

    seen: list[dict] = []
    fail = 0
    status: int | None = None

    def __init__(self, **kw):
        super().__init__(**kw)
        self.kw = kw

    def actualSolve(self, lp, **kwargs):
        self.seen.append(self.kw)
        if _RecordingCbc.fail:
            _RecordingCbc.fail -= 1
            raise pulp.PulpSolverError("refused")
        out = super().actualSolve(lp, **kwargs)
        if self.status is not None:
            lp.sol_status = self.status
        return out


@pytest.fixture
def cbc(monkeypatch):
    import bbopt.solvers.packs._stages as stages

    monkeypatch.setattr(stages, "_time", SlowClock(0.0))  # (every stage has the whole budget)
    monkeypatch.setattr(pulp, "PULP_CBC_CMD", _RecordingCbc)
    monkeypatch.setattr(_RecordingCbc, "seen", [])
    return _RecordingCbc


def test_each_stage_runs_cbc_quiet_seeded_without_preprocessing_in_the_time_left(cbc):
    """Work ties, stretch-work takes A, and the Char stage, kept from giving up stretch-work,
    cannot take B. Each of the three CBC runs: no output, the 0.5 s budget less 0.02 s, seed
    7 + 1, CBC's cutoff increment at 1e-12, preprocessing off."""
    r = solve(_three_stages(), "milp", Budget(0.5), seed=7)
    assert (r.status, r.backend, r.solution.tolist()) == (Status.OPTIMAL, "milp",
                                                          [True, False])
    assert cbc.seen == [{"msg": False, "timeLimit": 0.48,
                         "options": ["randomSeed 8", "randomCbcSeed 8", "increment 1e-12",
                                     "preprocess off"]}] * 3


@pytest.mark.parametrize(("seconds", "limit"), [(0.05, 0.03), (0.02, None), (1.5, 1.48)])
def test_a_stage_starts_with_at_least_the_minimum_left(cbc, seconds, limit):
    """0.05 s left is enough to start CBC (with 0.03 s), 0.02 s is not (the fallback answers)."""
    r = solve(PackModel.from_jobs([periodic("A", 1, 9.0, 1.0)], 1, B), "milp", Budget(seconds))
    if limit is None:
        assert cbc.seen == [] and r.status is Status.FALLBACK
    else:
        assert [s["timeLimit"] for s in cbc.seen] == [pytest.approx(limit, abs=1e-12)]
        assert r.status is Status.OPTIMAL


def test_a_program_cbc_fails_on_is_solved_again_with_preprocessing(cbc, monkeypatch):
    monkeypatch.setattr(_RecordingCbc, "fail", 1)
    r = solve(PackModel.from_jobs([periodic("A", 1, 9.0, 1.0)], 1, B), "milp", Budget(5.0))
    assert [s["options"][-1] for s in cbc.seen] == ["preprocess off", "increment 1e-12"]
    assert r.status is Status.OPTIMAL and r.solution.tolist() == [True]


def test_a_stage_stopped_by_its_limit_with_an_answer_is_feasible(cbc, monkeypatch):
    monkeypatch.setattr(_RecordingCbc, "status", pulp.LpSolutionIntegerFeasible)
    r = solve(_three_stages(), "milp", Budget(5.0))
    assert r.status is Status.FEASIBLE and r.solution.tolist() == [True, False]
    assert len(cbc.seen) == 1


def test_an_earlier_stage_is_kept_to_the_integer_unit():
    """Two packs of one node whose first stage differs by one unit of its integer form (1e9
    against 1e9 - 1), the second preferring the lesser: within no tolerance the first is kept,
    as CP-SAT keeps it. (CBC calls the second stage infeasible here although the first pack
    meets its row by half a unit: the answer is the first stage's, FEASIBLE, not proven.)"""
    model = PackModel(("a", "b"), np.array([1, 1]), np.array([10.0, 10.0]), np.zeros(2),
                      np.array([10.0, 10.0]), 1, (np.array([1e9, 1e9 - 1]),
                                                  np.array([1.0, 2.0])))
    r = solve(model, "cpsat", Budget(5.0))
    assert (r.status, r.solution.tolist()) == (Status.OPTIMAL, [True, False])
    assert solve(model, "milp", Budget(5.0)).solution.tolist() == [True, False]


def test_a_pack_without_the_longest_application_bounds_its_i_o_by_its_own_longest():
    """A (1 node, 10 s, 1 s of I/O) or B (3 nodes, 5 s, 1 s of I/O) on 3 nodes: B alone, work
    15 against 10, is the pack; its I/O is bounded by its own 5 s, B being the longest member
    although A is the longest application."""
    jobs = [periodic("A", 1, 9.0, 1.0), periodic("B", 1, 4.0, 1.0, nodes=3)]
    model = PackModel.from_jobs(jobs, 3, B)
    r = solve(model, "milp", Budget(5.0))
    assert (r.status, r.solution.tolist(), r.objective) == (Status.OPTIMAL, [False, True], 15.0)

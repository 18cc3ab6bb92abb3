"""The ``cpsat`` pack backend: the average-bandwidth row at equality, what each stage's CP-SAT
solve is given (one worker, the seed, the time left, the deterministic work left, the hint), a
stage stopped by its limit, and the first stage's incumbents as a trace."""

from __future__ import annotations

import time

import pytest
from ortools.sat.python import cp_model

from bbopt.core import Status
from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, solve
from tests._slow_clock import SlowClock
from tests.solvers.packs._cases import B, periodic
from tests.solvers.packs._cases import three_stages as _three_stages


class _Recording(cp_model.CpSolver):
    """CP-SAT as it is, recording what each solve is given and what it used."""

    seen: list[dict] = []
    status: int | None = None  # (a status to report instead of the solver's own)

    def solve(self, model, callback=None):
        status = super().solve(model, callback) if callback is not None else \
            super().solve(model)
        p = self.parameters
        hint = model.proto.solution_hint
        self.seen.append({"workers": p.num_workers, "seed": p.random_seed,
                          "seconds": p.max_time_in_seconds, "det": p.max_deterministic_time,
                          "used": self.deterministic_time,
                          "hint": dict(zip(hint.vars, hint.values, strict=True)),
                          "answer": list(self.response_proto.solution)[:2]})
        return self.status if self.status is not None else status


@pytest.fixture
def recording(monkeypatch):
    import bbopt.solvers.packs._stages as stages

    monkeypatch.setattr(stages, "_time", SlowClock(0.0))  # (every stage has the whole budget)
    monkeypatch.setattr(cp_model, "CpSolver", _Recording)
    monkeypatch.setattr(_Recording, "seen", [])
    return _Recording


def test_each_stage_keeps_the_earlier_ones_and_is_given_what_is_left(recording):
    """Work ties, stretch-work takes A, and the Char stage, kept from giving up stretch-work,
    cannot take B. Each solve: one worker, the seed, the 0.5 s budget (nothing spent on a clock
    that stands still), the 0.5 of deterministic work less what the earlier stages used, the
    fallback's pack (A, first in Max order) then the last answer as its hint."""
    r = solve(_three_stages(), "cpsat", Budget(0.5, deterministic=0.5), seed=7)
    assert r.solution.tolist() == [True, False]
    assert (r.status, r.backend, r.info["stages"]) == (Status.OPTIMAL, "cpsat",
                                                       (10.0, 20.0, 1.0))
    s = recording.seen
    assert len(s) == 3
    assert [(x["workers"], x["seed"], x["seconds"]) for x in s] == [(1, 7, 0.5)] * 3
    assert s[0]["det"] == 0.5
    assert s[1]["det"] == 0.5 - s[0]["used"] and s[0]["used"] > 0
    assert s[2]["det"] == 0.5 - (s[0]["used"] + s[1]["used"]) and s[1]["used"] > 0
    assert s[0]["hint"] == {0: 1, 1: 0}
    assert [x["hint"] for x in s[1:]] == [dict(enumerate(x["answer"])) for x in s[:2]]


def test_the_limits_are_floored_at_a_tenth_of_a_millisecond(recording):
    """A wall budget of 0.01 s and 0.002 of deterministic work are given as they are; 1e-5 of
    work is raised to the floor of 1e-4."""
    solve(_three_stages(), "cpsat", Budget(0.01, deterministic=1e-5))
    assert (recording.seen[0]["seconds"], recording.seen[0]["det"]) == (0.01, 1e-4)
    n = len(recording.seen)
    solve(_three_stages(), "cpsat", Budget(0.01, deterministic=0.002))
    assert (recording.seen[n]["seconds"], recording.seen[n]["det"]) == (0.01, 0.002)


def test_a_stage_stopped_by_its_limit_with_an_answer_is_feasible(recording, monkeypatch):
    monkeypatch.setattr(_Recording, "status", cp_model.FEASIBLE)
    r = solve(_three_stages(), "cpsat", Budget(5.0))
    assert r.status is Status.FEASIBLE and len(recording.seen) == 1


def test_a_pack_whose_i_o_fills_its_longest_member_exactly_is_a_pack():
    """A pure I/O application (10 s, all of it transferring) alone fills the average row to
    equality: it is a pack, OPTIMAL."""
    model = PackModel.from_jobs([periodic("A", 1, 0.0, 10.0)], 1, B)
    r = solve(model, "cpsat", Budget(5.0))
    assert (r.status, r.solution.tolist(), r.objective) == (Status.OPTIMAL, [True], 10.0)


def test_the_trace_holds_the_first_stage_s_incumbents_over_all_applications():
    """W (3 nodes) does not fit the 2 free nodes and is never offered; the incumbents of the
    first stage are selections over the three applications (0 for W), in seconds from the
    backend's start."""
    jobs = [periodic("A", 1, 9.0, 1.0), periodic("W", 1, 9.0, 1.0, nodes=3),
            periodic("C", 1, 4.0, 1.0)]
    model = PackModel.from_jobs(jobs, 2, B)
    before = time.perf_counter()
    r = solve(model, "cpsat", Budget(5.0), trace=True)
    took = time.perf_counter() - before
    assert (r.status, r.backend, r.solution.tolist()) == (Status.OPTIMAL, "cpsat",
                                                          [True, False, True])
    trace = r.info["trace"]
    assert trace and trace[-1][1] == [1, 0, 1]
    for seconds, selection in trace:
        assert 0.0 <= seconds <= took
        assert len(selection) == 3 and selection[1] == 0
        assert all(type(v) is int for v in selection)

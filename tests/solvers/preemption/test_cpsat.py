"""The ``cpsat`` victim choice (Zvi & Oren, OMFS, Algorithm 1 lines 34-39 as a 0-1 program for
CP-SAT): its rows and objective in integer units by hand, the bound it reports, what CP-SAT is
handed (workers, seed, wall and deterministic time, also after a cut), the cover cuts, and how
each CP-SAT status is read. A recording CP-SAT stands in where the real one cannot be made to
answer so deterministically (out of time, a feasible answer, the work each solve spends)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from ortools.sat.python import cp_model

from bbopt.core import Status
from bbopt.solvers import Budget
from bbopt.solvers.preemption import cpsat
from bbopt.solvers.preemption.cpsat import BB_UNITS, solve_cpsat
from tests._slow_clock import SlowClock
from tests.solvers._recording_cpsat import RecordingCpSolver
from tests.solvers.test_preemption import victims_model


class _Recording(RecordingCpSolver):
    """CP-SAT that records the model and the parameters of each solve; ``answers`` (CP-SAT
    statuses, or ``None`` for the real one's) overrides what a solve reports, ``work`` the
    deterministic time each solve spends."""

    answers: list = []
    work: float | None = None
    made: list = []

    def __init__(self) -> None:
        super().__init__()
        _Recording.made.append(self)

    def Solve(self, model, callback=None):  # noqa: N802 (CP-SAT's name)
        self.record(model)
        scripted = _Recording.answers.pop(0) if _Recording.answers else None
        if scripted == cp_model.UNKNOWN:
            return scripted
        status = super().Solve(model, callback)
        return status if scripted is None else scripted

    @property
    def deterministic_time(self) -> float:
        return super().deterministic_time if _Recording.work is None else _Recording.work


@pytest.fixture
def recording(monkeypatch):
    monkeypatch.setattr(_Recording, "answers", [])
    monkeypatch.setattr(_Recording, "work", None)
    monkeypatch.setattr(_Recording, "made", [])
    monkeypatch.setattr(cp_model, "CpSolver", _Recording)
    return _Recording


def _linear(proto) -> list[tuple[dict[int, int], list[int]]]:
    """The linear rows of a CP-SAT model: (coefficient per variable, domain)."""
    return [(dict(zip(c.linear.vars, c.linear.coeffs, strict=True)), list(c.linear.domain))
            for c in proto.constraints if c.has_linear()]


INF = cp_model.INT_MAX


def test_the_bb_row_counts_units_of_the_largest_amount_each_victim_rounded_up(recording):
    # BB 0.5 and 0.2 B and none against a 0.3 B deficit, tolerance 1e-6 B (capacity 1000 B,
    # two units): the unit is 0.5 B / 2^20; a victim's units floor(bb / unit) + 1 (none for
    # no BB), the deficit's floor((0.3 - 1e-6) / unit), 629143 (not 629147 with it added)
    m = victims_model([1, 1, 1], [1.0, 2.0, 3.0], need_nodes=1, bb=[0.5, 0.2, 0.0],
                      need_bb=0.3, bb_capacity=1000.0)
    r = solve_cpsat(m, Budget(10.0), 0)
    assert m.victims(r.solution) == ["v0"]
    unit = 0.5 / BB_UNITS
    nodes, bb = _linear(recording.made[0].models[0])
    assert nodes == ({0: 1, 1: 1, 2: 1}, [1, INF])
    assert bb == ({0: BB_UNITS + 1, 1: int(np.floor(0.2 / unit)) + 1},
                  [629143, INF])
    assert int(np.floor((0.3 - 1e-6) / unit)) == 629143
    assert BB_UNITS == 1 << 20


def test_the_bb_unit_follows_the_deficit_when_it_is_the_largest_amount(recording):
    m = victims_model([1, 1], [1.0, 2.0], need_nodes=1, bb=[0.25, 0.25], need_bb=0.4)
    r = solve_cpsat(m, Budget(10.0), 0)
    assert m.victims(r.solution) == ["v0", "v1"]
    _, bb = _linear(recording.made[0].models[0])
    unit = 0.4 / BB_UNITS
    assert bb == ({0: int(np.floor(0.25 / unit)) + 1, 1: int(np.floor(0.25 / unit)) + 1},
                  [BB_UNITS, INF])


def test_the_objective_is_the_cost_in_milliseconds_times_m_plus_one_plus_one_per_victim(
        recording):
    # costs 2.0004 and 3 node-seconds (2000 and 3000 ms after rounding), a penalty of 0.5: with
    # two candidates (m + 1 = 3) the coefficients are 2500 * 3 + 1 and 3500 * 3 + 1, and the
    # bound is the optimum's in those units, back in node-seconds
    m = victims_model([1, 1], [2.0004, 3.0], need_nodes=1, penalty=0.5)
    r = solve_cpsat(m, Budget(10.0), 0)
    assert (r.status, r.objective, r.backend) == (Status.OPTIMAL, 2.5004, "cpsat")
    obj = recording.made[0].models[0].objective
    assert dict(zip(obj.vars, obj.coeffs, strict=True)) == {0: 7501, 1: 10501}
    assert r.bound == 7501 / 1000 / 3
    assert r.solution.dtype == bool and r.solution.tolist() == [True, False]
    assert r.info == {}


def test_cpsat_is_handed_one_worker_the_seed_and_the_budget(recording, monkeypatch):
    monkeypatch.setattr(cpsat, "_time", types.SimpleNamespace(perf_counter=lambda: 0.0))
    m = victims_model([1, 1], [2.0, 1.0], need_nodes=1)
    solve_cpsat(m, Budget(7.5), 11)
    solve_cpsat(m, Budget(7.5, deterministic=0.75), 12, workers=2)
    (first,), (second,) = (s.params for s in recording.made)
    assert (first.num_workers, first.random_seed, first.max_time_in_seconds) == (1, 11, 7.5)
    assert first.max_deterministic_time == float("inf")  # (CP-SAT's default: no limit)
    assert (second.num_workers, second.random_seed, second.max_time_in_seconds,
            second.max_deterministic_time) == (2, 12, 7.5, 0.75)


def test_a_feasible_answer_is_feasible_and_no_answer_is_a_fallback(recording):
    m = victims_model([1, 1], [2.0, 1.0], need_nodes=1)
    recording.answers = [cp_model.FEASIBLE]
    r = solve_cpsat(m, Budget(10.0), 0)
    assert (r.status, r.objective, r.backend) == (Status.FEASIBLE, 1.0, "cpsat")
    for status in (cp_model.UNKNOWN, cp_model.MODEL_INVALID):
        recording.answers = [status]
        r = solve_cpsat(m, Budget(10.0), 0)
        assert (r.status, r.solution, r.backend) == (Status.FALLBACK, None, "cpsat")


def test_an_infeasible_choice_names_its_backend():
    r = solve_cpsat(victims_model([1, 1], [1.0, 1.0], need_nodes=3), Budget(10.0), 0)
    assert (r.status, r.solution, r.backend) == (Status.INFEASIBLE, None, "cpsat")


def test_the_trace_lists_each_incumbent_with_the_seconds_since_the_start(monkeypatch):
    monkeypatch.setattr(cpsat, "_time", types.SimpleNamespace(perf_counter=lambda: 100.0))
    m = victims_model([1, 1, 1], [2.0, 1.0, 3.0], need_nodes=1)
    r = solve_cpsat(m, Budget(10.0), 0, trace=True)
    trace = r.info["trace"]
    assert list(r.info) == ["trace"] and trace
    assert all(t == 0.0 for t, _ in trace) and trace[-1][1] == [0, 1, 0]
    assert all(type(v) is int for _, x in trace for v in x)


#: v0 and v1 free but each 0.5e-6 B short of the 1 B deficit (five times the 1e-7 B tolerance,
#: and within the relaxed row's rounding), together enough; v2 covering it at cost 5; v3 free
#: without BB.
TWO_SHORT = victims_model([1, 1, 1, 1], [0.0, 0.0, 5.0, 0.0], need_nodes=1,
                          bb=[1.0 - 5e-7, 1.0 - 5e-7, 1.0, 0.0], need_bb=1.0, bb_capacity=100.0)


def _bool_ors(proto) -> list[list[int]]:
    return [list(c.bool_or.literals) for c in proto.constraints if c.has_bool_or()]


def test_each_set_short_of_bb_is_cut_off_with_the_bb_victims_outside_it(recording):
    r = solve_cpsat(TWO_SHORT, Budget(10.0), 0)
    assert (r.status, r.objective) == (Status.OPTIMAL, 0.0)
    assert TWO_SHORT.victims(r.solution) == ["v0", "v1"]
    models = recording.made[0].models
    assert len(models) == 3
    # {v0} and {v1} (either first) are each cut off with the other BB victims outside them,
    # never with v3, which has no BB
    assert _bool_ors(models[0]) == []
    assert len(_bool_ors(models[1])) == 1
    assert sorted(map(sorted, _bool_ors(models[2]))) == [[0, 2], [1, 2]]


@pytest.mark.parametrize(("seconds", "solves"), [(1.0, 1), (1.5, 2), (2.0, 2)])
def test_a_cut_is_solved_with_what_is_left_of_the_wall_budget(recording, monkeypatch, seconds,
                                                             solves):
    # the start is read at 0 s, the clock after the first solve at 1 s: nothing left of 1 s
    # (fallback); 0.5 s left of 1.5 s, handed to the next solve
    monkeypatch.setattr(cpsat, "_time", SlowClock(1.0))
    recording.answers = [None, cp_model.UNKNOWN]
    r = solve_cpsat(TWO_SHORT, Budget(seconds), 0)
    params = recording.made[0].params
    assert len(params) == solves
    assert (r.status, r.solution, r.backend) == (Status.FALLBACK, None, "cpsat")
    if solves == 2:
        assert params[1].max_time_in_seconds == seconds - 1.0


@pytest.mark.parametrize(("deterministic", "limits"),
                         [(0.25, [0.25]), (0.5, [0.5, 0.25]), (0.6, [0.6, 0.35, 0.1])])
def test_cuts_are_solved_with_what_is_left_of_the_deterministic_budget(recording, deterministic,
                                                                      limits):
    # each solve spends 0.25 of deterministic time; two short sets before the answer
    recording.work = 0.25
    r = solve_cpsat(TWO_SHORT, Budget(10.0, deterministic=deterministic), 0)
    got = [p.max_deterministic_time for p in recording.made[0].params]
    assert got == pytest.approx(limits, abs=1e-12)
    if len(limits) < 3:
        assert (r.status, r.solution, r.backend) == (Status.FALLBACK, None, "cpsat")
    else:
        assert (r.status, TWO_SHORT.victims(r.solution)) == (Status.OPTIMAL, ["v0", "v1"])

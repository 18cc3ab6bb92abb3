"""Audited decisions: every decision of a heuristic policy is solved again exactly, and the run
reports how far the applied answers were from the optimum."""

import pytest

from bbopt import InputError, Platform, Status, make_policy, simulate
from bbopt.analysis.metrics import summarize
from bbopt.workloads.synthetic import kth_like

JOBS = kth_like(80, seed=3)


def test_proven_optimal_decisions_have_zero_gap():
    """CP-SAT's optimum over all plans equals exhaustive's over permutations (active schedules
    suffice for a regular objective): a decision proven optimal has no gap to the audit."""
    # (queues of up to 7 jobs: 66 proven decisions; 8 took four times as long for 4 more)
    res = simulate(JOBS, Platform.kopanski(), "plan-2",
                   options={"backend": "cpsat", "max_exact_jobs": 7, "audit": "exhaustive",
                            "audit_max_jobs": 7})
    audited = [s for s in res.decision_stats if s.gap is not None and s.backend == "cpsat"]
    proven = [s for s in audited if s.status is Status.OPTIMAL]
    assert len(proven) > 10
    assert all(s.gap == pytest.approx(0.0, abs=1e-9) for s in proven)
    assert all(s.bound == pytest.approx(s.objective, rel=1e-9) for s in proven)


def test_annealing_gaps_are_nonnegative_and_reported():
    res = simulate(JOBS, Platform.kopanski(), "plan-2", options={"audit": "exhaustive"})
    m = summarize(res)
    gaps = [s.gap for s in res.decision_stats if s.gap is not None]
    assert len(gaps) == m["decisions_audited"] > 10
    assert min(gaps) >= 0.0
    assert 0.0 <= m["decisions_optimal_share"] <= 1.0
    # Annealing searches small queues exhaustively (<= 5 jobs): those decisions are optimal.
    assert m["decisions_optimal_share"] > 0.5


def test_audit_needs_an_exact_backend():
    with pytest.raises(InputError, match="audit"):
        make_policy("plan-2", audit="annealing")


def test_unaudited_runs_have_no_gap_rows():
    m = summarize(simulate(JOBS, Platform.kopanski(), "sjf-bb"))
    assert m["decisions_audited"] == 0 and "decision_gap_mean" not in m


def test_a_backends_own_gap_is_not_an_audit():
    """Annealing solves queues of <= 5 jobs exhaustively and reports a zero gap for them; without
    ``audit`` those are not audited decisions: no "decisions audited" or "optimal [%]" rows."""
    res = simulate(JOBS, Platform.kopanski(), "plan-2")
    assert any(s.gap is not None for s in res.decision_stats)  # the backend's own gaps exist
    assert not any(s.audited for s in res.decision_stats)
    m = summarize(res)
    assert m["decisions_audited"] == 0
    assert "decisions_optimal_share" not in m and "decision_gap_mean" not in m


def test_cli_table_shows_audit_rows_only_for_a_real_audit(capsys):
    from bbopt.cli import main

    assert main(["simulate", "--policy", "plan-2", "--jobs", "80", "--no-progress"]) == 0
    plain = capsys.readouterr().out
    assert "audited" not in plain
    assert main(["simulate", "--policy", "plan-2", "--jobs", "80", "--no-progress",
                 "-o", "audit=exhaustive"]) == 0
    audited = capsys.readouterr().out
    assert "decisions audited" in audited and "audited: optimal [%]" in audited


def test_audit_flag_survives_json():
    from bbopt.core import Decision, SolveStats
    from bbopt.schema import dumps, loads_decision

    d = Decision(stats=SolveStats(backend="annealing", gap=0.1, bound=1.0, audited=True))
    assert loads_decision(dumps(d)).stats.audited is True
    d = Decision(stats=SolveStats(backend="annealing", gap=0.0, bound=1.0))
    assert loads_decision(dumps(d)).stats.audited is False

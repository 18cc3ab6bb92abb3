"""Decision times describe the decisions, not the exact re-solves an audit adds to them: the
audit's time is reported apart (``audit_time_total``)."""

from __future__ import annotations

import numpy as np
import pytest

import bbopt
from bbopt.analysis.metrics import audit_times, summarize
from bbopt.analysis.table import metrics_table
from bbopt.workloads.synthetic import kth_like


@pytest.fixture(scope="module")
def audited():
    jobs = kth_like(80, seed=0)
    return bbopt.simulate(jobs, bbopt.Platform.kopanski(), "plan-2",
                          options={"audit": "exhaustive", "audit_max_jobs": 6})


def test_audit_time_is_the_rest_of_each_audited_decide_call(audited):
    stats, whole = audited.decision_stats, np.asarray(audited.decision_times)
    audit = audit_times(audited)
    flags = np.array([s.audited for s in stats])
    assert flags.any() and not flags.all()
    own = np.array([s.wall_time for s in stats])
    np.testing.assert_allclose(audit[flags], np.clip(whole[flags] - own[flags], 0, None))
    assert (audit[~flags] == 0).all()


def test_decision_times_leave_the_audit_out_and_report_it_apart(audited):
    m = summarize(audited)
    audit = audit_times(audited)
    times = np.asarray(audited.decision_times) - audit
    assert m["audit_time_total"] == pytest.approx(audit.sum())
    assert m["decision_time_max"] == pytest.approx(times.max())
    assert m["decision_time_mean"] == pytest.approx(times.mean())
    assert m["decision_time_max"] < max(audited.decision_times)  # the audit cost something
    assert "audit time, apart [s]" in metrics_table({"plan-2": m}, "t")


def test_runs_without_an_audit_have_no_audit_time():
    res = bbopt.simulate(kth_like(80, seed=0), bbopt.Platform.kopanski(), "plan-2")
    assert audit_times(res) is None
    m = summarize(res)
    assert "audit_time_total" not in m
    assert m["decision_time_max"] == pytest.approx(max(res.decision_times))
    assert "audit time" not in metrics_table({"plan-2": m}, "t")

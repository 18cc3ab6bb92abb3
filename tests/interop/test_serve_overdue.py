"""The decision service plans a running job past its walltime as still holding its nodes,
as bbopt.decide does (one rule: bbopt.core.decide_planned)."""

from __future__ import annotations

import pytest

from bbopt.interop.serve import DecisionService


@pytest.mark.parametrize("policy", ["conservative-bb", "plan-2"])
def test_the_service_never_starts_a_job_on_an_overdue_jobs_nodes(policy):
    state = {"time": 20.0, "platform": {"nodes": 4, "bb": 100e9},
             "running": [{"job": {"id": "r", "walltime": 10.0, "nodes": 4, "bb": 5e10},
                          "start": 0.0, "allocation": [0, 1, 2, 3]}],
             "queue": [{"id": "q", "submit": 5.0, "walltime": 10.0, "nodes": 2}]}
    reply = DecisionService(warm=()).handle({"id": 1, "policy": policy, "state": state})
    assert reply["ok"], reply
    assert reply["decision"]["start"] == []
    assert [r["job_id"] for r in reply["decision"]["reservations"]] == ["q"]

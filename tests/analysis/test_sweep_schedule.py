"""How a sweep hands its runs to workers: longest first by estimated cost, short runs batched,
the driver's prepared workloads read by the workers (kept per process by content hash), and each
run's own CPU time in the store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bbopt.analysis import sweep_schedule
from bbopt.analysis.store import collect
from bbopt.analysis.sweep import plan, run_sweep
from bbopt.analysis.sweep_inputs import _workload, split_parts
from bbopt.analysis.sweep_schedule import (
    cost_batches,
    estimate,
    longest_first,
    worker_part,
    write_prepared,
)
from bbopt.analysis.sweep_spec import parse_spec
from bbopt.errors import InputError

DOC = {"name": "order",
       "workloads": {"small": {"generator": {"name": "kth-like", "n_jobs": 150}},
                     "big": {"generator": {"name": "kth-like", "n_jobs": 600},
                             "split": {"parts": 2}}},
       "policies": ["fcfs-bb", "conservative-bb"], "seeds": [0]}


def _spec(doc=None):
    return parse_spec(json.loads(json.dumps(doc or DOC)), source="<test>", base=Path.cwd())


def _makespan(batches, cost, workers: int) -> float:
    """List scheduling of the batches, in order, on ``workers`` (a pool's FIFO queue)."""
    free = [0.0] * workers
    for b in batches:
        k = free.index(min(free))
        free[k] += sum(cost(t) for t in b)
    return max(free)


def test_estimates_grow_with_jobs_and_with_the_policys_work():
    assert estimate(28_000, "naive", {}) > estimate(5_000, "naive", {})
    assert estimate(1_000, "weighted", {}) > estimate(1_000, "naive", {}) \
        > estimate(1_000, "fcfs-bb", {})
    # a policy the table does not know: by whether it has a solver budget
    assert estimate(1_000, "x", {"budget": 1}) > estimate(1_000, "x", {})


def test_plan_orders_the_runs_longest_first_so_no_worker_idles_at_the_end():
    tasks = plan(_spec())
    costs = {(t.params["workload"], t.part, t.policy): t.cost for t in tasks}
    assert costs[("big", 0, "conservative-bb")] > costs[("small", None, "conservative-bb")]
    assert costs[("small", None, "conservative-bb")] > costs[("small", None, "fcfs-bb")]
    ordered = longest_first(tasks, lambda t: t.cost)
    assert [t.cost for t in ordered] == sorted((t.cost for t in tasks), reverse=True)
    # the classic case: the long run last in plan order keeps one worker busy alone at the end
    cost = {"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 4.0}.__getitem__
    assert _makespan([[t] for t in "abcde"], cost, 2) == 6.0
    assert _makespan([[t] for t in longest_first(list("abcde"), cost)], cost, 2) == 4.0


def test_short_runs_are_batched_long_runs_go_alone():
    cost = {f"s{i}": 0.125 for i in range(32)} | {"L1": 5.0, "L2": 3.0}
    out = cost_batches(list(cost), cost.__getitem__, n_workers=2, target=1.0)
    assert sorted(t for b in out for t in b) == sorted(cost)  # every run exactly once
    assert out[0] == ["L1"] and out[1] == ["L2"]                # longest first, alone
    small = out[2:]
    assert [sum(cost[t] for t in b) for b in small] == [1.0] * 4
    # a short sweep is not put into fewer batches than four per worker
    short = {f"t{i}": 0.0625 for i in range(32)}  # 2 s in all
    assert len(cost_batches(list(short), short.__getitem__, n_workers=2, target=1.0)) == 8


def test_a_worker_reads_the_drivers_prepared_workload_and_keeps_it(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_schedule, "_PREPARED", type(sweep_schedule._PREPARED)())
    spec = _spec()
    (task,) = [t for t in plan(spec) if t.part == 1 and t.policy == "fcfs-bb"]
    jobs, sha = _workload(task.workload_spec, task.workload_seed)
    write_prepared(tmp_path, sha, jobs)
    calls = []

    def prepare():
        calls.append(1)
        return jobs, sha

    def split(whole):
        return split_parts(task.workload_spec, whole)

    got = worker_part(sha, str(tmp_path), 1, prepare, split)
    assert got == split(jobs)[1] and calls == []  # read from the pickle, not prepared again
    (tmp_path / f"{sha}.pickle").unlink()
    assert worker_part(sha, str(tmp_path), 0, prepare, split) == split(jobs)[0]
    assert calls == []  # kept by this process, keyed by the content hash
    other = "0" * 64
    with pytest.raises(InputError, match="differs from the driver's"):
        worker_part(other, None, None, prepare, split)  # prepared here: the hash is checked
    assert calls == [1]


@pytest.mark.slow
def test_process_sweep_runs_longest_first_and_records_each_runs_cpu(tmp_path):
    seen = []
    rep = run_sweep(_spec(), tmp_path / "r", executor="processes", workers=1, progress=False,
                    on_result=lambda task, out: seen.append(task.cost))
    assert rep.ran == 6 and rep.failed == 0
    assert seen == sorted(seen, reverse=True)
    table = collect(tmp_path / "r")
    assert (table["cpu_time"] > 0).all()
    assert "cpu_time" not in collect(tmp_path / "r", include_timing=False)
    serial = run_sweep(_spec(), tmp_path / "s", executor="serial", progress=False)
    assert serial.ran == 6
    assert collect(tmp_path / "s", include_timing=False).equals(
        collect(tmp_path / "r", include_timing=False))

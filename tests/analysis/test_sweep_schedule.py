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
    with pytest.raises(InputError, match="differs from the driver's") as err:
        worker_part(other, None, None, prepare, split)  # prepared here: the hash is checked
    assert err.value.field == "workloads"
    assert err.value.reason == ("this worker's workload differs from the driver's (content "
                                f"{sha[:12]} != 000000000000): is the file the same?")
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


# --- the rules on hand-computed values ----------------------------------------------------

@pytest.mark.parametrize("n, policy, accepted, seconds", [
    (2_000, "fcfs-bb", {}, 0.16),            # the table: 0.08 s per 1,000 jobs
    (2_000, "plan-2", {"budget": 5.0}, 6.0),  # the table wins over the default
    (2_000, "x", {"budget": 1.0}, 1.2),       # not in the table, with a solver budget: 0.6
    (2_000, "x", {"order": "fcfs"}, 0.2),     # not in the table, a queue rule: 0.1
    (1, "naive", {}, 0.00013),
    (0, "naive", {}, 0.00013),               # an empty part costs like one job
])
def test_estimate_is_jobs_times_the_policys_cost_per_thousand(n, policy, accepted, seconds):
    assert estimate(n, policy, accepted) == pytest.approx(seconds, rel=1e-12)


def test_longest_first_keeps_the_order_of_equal_costs():
    cost = {"a": 1.0, "b": 2.0, "c": 1.0, "d": 2.0, "e": 0.5}.__getitem__
    assert longest_first(list("abcde"), cost) == ["b", "d", "a", "c", "e"]


def test_a_batch_closes_at_the_cap_and_a_run_of_the_cap_goes_alone():
    # total 4 s on one worker: cap = min(1, 4 / 4) = 1 s
    cost = {"a": 1.0, "b": 0.5, "c": 0.5, "d": 0.75, "e": 0.25, "f": 0.5, "g": 0.5}.__getitem__
    out = cost_batches(list("abcdefg"), cost, n_workers=1, target=1.0)
    assert out == [["a"], ["d", "b"], ["c", "f"], ["g", "e"]]
    # a larger target is capped at a quarter of the total per worker (1 s still)
    out = cost_batches(list("abcdefg"), cost, n_workers=1, target=2.0)
    assert out == [["a"], ["d", "b"], ["c", "f"], ["g", "e"]]
    # a smaller target wins: 0.75 s, so "a" and "d" go alone
    out = cost_batches(list("abcdefg"), cost, n_workers=1, target=0.75)
    assert out == [["a"], ["d"], ["b", "c"], ["f", "g"], ["e"]]
    # two workers: cap = min(1, 4 / 8) = 0.5 s: every run of 0.5 s or more alone
    out = cost_batches(list("abcdefg"), cost, n_workers=2, target=1.0)
    assert out == [["a"], ["d"], ["b"], ["c"], ["f"], ["g"], ["e"]]
    # no worker counts as one
    assert cost_batches(list("abcdefg"), cost, n_workers=0, target=1.0) == \
        [["a"], ["d", "b"], ["c", "f"], ["g", "e"]]
    # a run of at least a quarter of the total is alone however small
    tiny = {"p": 0.1, "q": 0.1, "r": 0.1}.__getitem__
    assert cost_batches(list("pqr"), tiny, n_workers=1, target=1.0) == [["p"], ["q"], ["r"]]
    assert cost_batches([], cost, n_workers=2) == []


def test_batches_are_of_about_a_second_by_default():
    # 24 runs of 0.5 s on one worker: a quarter of the total is 3 s, so the target decides
    cost = {f"r{k:02}": 0.5 for k in range(24)}
    out = cost_batches(sorted(cost), cost.__getitem__, n_workers=1)
    assert out == [[f"r{k:02}", f"r{k + 1:02}"] for k in range(0, 24, 2)]


def test_a_batch_just_below_the_cap_takes_the_next_run():
    cost = {"a": 0.4, "b": 0.5, "c": 0.1, "d": 0.2, "e": 2.8}.__getitem__  # 4 s: cap 1 s
    out = cost_batches(list("abcde"), cost, n_workers=1, target=1.0)
    assert out == [["e"], ["b", "a", "d"], ["c"]]  # 0.5 + 0.4 < 1: d joins (1.1 >= 1)
    cost = {"a": 0.5, "b": 0.5, "e": 3.0}.__getitem__
    assert cost_batches(list("abe"), cost, n_workers=1, target=1.0) == [["e"], ["a", "b"]]


def test_a_prepared_workload_is_written_once_atomically(tmp_path):
    jobs = [bbopt_job(i) for i in range(3)]
    path = write_prepared(tmp_path, "abc", jobs)
    assert path == tmp_path / "abc.pickle"
    import pickle

    assert pickle.loads(path.read_bytes()) == tuple(jobs)
    assert [p.name for p in tmp_path.iterdir()] == ["abc.pickle"]  # no temporary left
    write_prepared(tmp_path, "abc", jobs[:1])  # the same hash: the same content, kept
    assert pickle.loads(path.read_bytes()) == tuple(jobs)


def bbopt_job(i):
    from bbopt.core import Job

    return Job(id=str(i), submit=float(i), walltime=10.0, runtime=5.0, nodes=1)


def test_a_worker_keeps_the_last_twelve_workloads_and_splits_each_once(tmp_path, monkeypatch):
    monkeypatch.setattr(sweep_schedule, "_PREPARED", type(sweep_schedule._PREPARED)())
    prepared, splits = [], []

    def prepare_for(sha):
        def prepare():
            prepared.append(sha)
            return (bbopt_job(int(sha)), bbopt_job(int(sha) + 100)), sha
        return prepare

    def split(whole):
        splits.append(whole[0].id)
        return ((whole[0],), (whole[1],))

    assert sweep_schedule._KEEP == 12
    for k in range(12):
        assert worker_part(str(k), None, None, prepare_for(str(k)), split)[0].id == str(k)
    assert worker_part("0", None, 1, prepare_for("0"), split) == (bbopt_job(100),)
    assert worker_part("0", None, 0, prepare_for("0"), split) == (bbopt_job(0),)
    assert splits == ["0"]  # split once, kept
    assert prepared == [str(k) for k in range(12)]
    worker_part("12", None, None, prepare_for("12"), split)  # a 13th: "1" (least recent) goes
    worker_part("0", None, None, prepare_for("0"), split)
    assert prepared == [str(k) for k in range(13)]
    worker_part("1", None, None, prepare_for("1"), split)
    assert prepared == [*(str(k) for k in range(13)), "1"]
    # a directory without the driver's pickle: prepared here
    worker_part("13", str(tmp_path), None, prepare_for("13"), split)
    assert prepared[-1] == "13"

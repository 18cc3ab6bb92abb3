"""How a sweep hands its runs out: batches of one workload, chunks by estimated cost, the
driver's prepared workloads, the progress display, and the process and Dask executors driven
through stand-in pools (in this process, in milliseconds)."""

from __future__ import annotations

import json
import os
import types
from concurrent.futures import Future
from pathlib import Path

import pytest

from bbopt.analysis import sweep
from bbopt.analysis.sweep import RunTask, _chunks, _prepared_for, batches, plan, run_sweep
from bbopt.analysis.sweep_schedule import cost_batches
from bbopt.analysis.sweep_spec import parse_spec
from bbopt.errors import InputError


def task(name: str, workload: str = "A", seed: int = 0, cost: float = 0.0,
         sha: str | None = None) -> RunTask:
    return RunTask(name, workload, seed, sha or f"{workload}{seed}", None, "{}", "fcfs-bb", {},
                   {"name": "plain"}, None, 0.0, 0.0, {"run": name}, cost=cost)


def names(groups) -> list[list[str]]:
    return [[t.hash for t in g] for g in groups]


# --------------------------------------------------------------------------------------------
# batches and chunks


def test_batches_group_by_workload_and_seed_in_order_then_cut_at_the_size():
    ts = [task("a1", "A", 0), task("b1", "B", 0), task("c1", "A", 1), task("a2", "A", 0),
          task("a3", "A", 0), task("b2", "B", 0)]
    assert names(batches(ts, 2)) == [["a1", "a2"], ["a3"], ["b1", "b2"], ["c1"]]
    assert names(batches(ts, 1)) == [["a1"], ["a2"], ["a3"], ["b1"], ["b2"], ["c1"]]
    assert names(batches(ts, 3)) == [["a1", "a2", "a3"], ["b1", "b2"], ["c1"]]
    # the same seed of another workload, the same workload of another seed: other groups
    assert names(batches([task("x", "A", 1), task("y", "B", 1)], 5)) == [["x"], ["y"]]
    assert batches([], 2) == []


def test_chunks_of_a_given_size_come_by_their_total_cost_longest_first():
    ts = [task("a1", "A", cost=3.0), task("a2", "A", cost=0.5), task("b1", "B", cost=2.0),
          task("b2", "B", cost=2.0), task("c1", "C", cost=1.0)]
    # totals: [a1, a2] 3.5, [b1, b2] 4.0, [c1] 1.0 (the largest run alone would put A first)
    assert names(_chunks(ts, 2, 7)) == [["b1", "b2"], ["a1", "a2"], ["c1"]]
    assert names(_chunks(ts, 1, 7)) == [["a1"], ["b1"], ["b2"], ["c1"], ["a2"]]


def test_chunks_by_default_are_the_cost_batches_for_the_workers_count():
    ts = [task(f"t{i}", "A", cost=0.0625) for i in range(32)]  # 2 s in all
    # at most a quarter of a worker's share a batch: two workers 8 batches of 0.25 s, three
    # workers 10 of 0.1875 s (the first three runs past the cap of 1/6 s) and one of 2 runs
    assert [len(c) for c in _chunks(ts, None, 2)] == [4] * 8
    assert [len(c) for c in _chunks(ts, None, 3)] == [3] * 10 + [2]
    assert names(_chunks(ts, None, 3)) == names(cost_batches(ts, lambda t: t.cost, 3))


# --------------------------------------------------------------------------------------------
# the driver's prepared workloads

DOC = {"name": "ex",
       "workloads": {"w": {"generator": {"name": "kth-like", "n_jobs": 40}},
                     "v": {"generator": {"name": "kth-like", "n_jobs": 80}}},
       "policies": ["fcfs-bb", "sjf-bb"], "seeds": [0]}


def spec_of(tmp_path: Path, **over):
    doc = json.loads(json.dumps(DOC))
    doc.update(over)
    return parse_spec(doc, source="<test>", base=tmp_path)


def test_prepared_for_local_workers_writes_each_workload_once_and_removes_them(
        tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    removed = []
    monkeypatch.setattr(sweep, "remove_orphan_worker_inputs", lambda: removed.append(1))
    todo = plan(spec_of(tmp_path))
    assert len(todo) == 4
    with _prepared_for(todo, True) as shipped:
        assert removed == [1]
        folder = Path(shipped[0].prepared)
        assert folder.parent == tmp_path
        assert folder.name.startswith(sweep.worker_inputs_prefix())
        assert {t.prepared for t in shipped} == {str(folder)}
        assert sorted(p.name for p in folder.iterdir()) == sorted(
            f"{sha}.pickle" for sha in {t.workload_sha for t in todo})
        assert [t.cost for t in shipped] == sorted((t.cost for t in todo), reverse=True)
        assert [t.hash for t in shipped] == [t.hash for t in sorted(todo, key=lambda t: -t.cost)]
    assert not folder.exists()


def test_prepared_for_remote_workers_or_nothing_writes_nothing(tmp_path, monkeypatch):
    removed = []
    monkeypatch.setattr(sweep, "remove_orphan_worker_inputs", lambda: removed.append(1))
    ts = [task("a", cost=1.0), task("b", cost=3.0), task("c", cost=2.0)]
    with _prepared_for(ts, False) as shipped:
        assert names([shipped]) == [["b", "c", "a"]]
        assert {t.prepared for t in shipped} == {None}
    with _prepared_for([], True) as shipped:
        assert shipped == []
    assert removed == []


# --------------------------------------------------------------------------------------------
# the progress display


def test_bar_is_nothing_a_log_every_so_many_seconds_or_a_bar(monkeypatch):
    import bbopt.progress

    assert sweep._bar(3, 1, False) is None
    assert sweep._bar(3, 1, None) is None
    assert sweep._bar(0, 1, True) is None
    assert sweep._bar(0, 1, 2.5) is None
    log = sweep._bar(3, 1, 2.5)
    assert isinstance(log, bbopt.progress.ProgressLog)
    assert (log.total, log.skipped, log.every) == (3, 1, 2.5)
    assert isinstance(sweep._bar(3, 1, 0).every, float)
    calls = []
    monkeypatch.setattr(bbopt.progress, "progress", lambda n, **kw: calls.append((n, kw)) or "B")
    assert sweep._bar(3, 1, True) == "B"
    assert calls == [(3, {"unit": "run", "desc": "sweep", "skipped": 1, "count_failed": True})]


# --------------------------------------------------------------------------------------------
# the driver's choice of executor, what it hands out and what it records


class FakeBar:
    def __init__(self):
        self.updates, self.postfix, self.closed = [], [], False

    def update(self, n):
        self.updates.append(n)

    def set_postfix(self, **kw):
        self.postfix.append(kw)

    def close(self):
        self.closed = True


def _executors(monkeypatch):
    calls = {}

    def processes(todo, workers, batch, receive):
        calls["processes"] = (todo, workers, batch)
        for t in todo:
            receive(sweep.run_task(t))

    def dask(todo, address, workers, batch, receive):
        calls["dask"] = (todo, address, workers, batch)
        for t in todo:
            receive(sweep.run_task(t))

    monkeypatch.setattr(sweep, "_run_processes", processes)
    monkeypatch.setattr(sweep, "_run_dask", dask)
    return calls


def test_processes_get_the_prepared_tasks_with_workers_and_batch(tmp_path, monkeypatch):
    calls = _executors(monkeypatch)
    rep = run_sweep(spec_of(tmp_path), tmp_path / "r", workers=3, batch=2, progress=False)
    todo, workers, batch = calls["processes"]
    assert (workers, batch) == (3, 2)
    assert len(todo) == 4 and None not in {t.prepared for t in todo}
    assert "dask" not in calls
    assert (rep.total, rep.ran, rep.skipped, rep.failed) == (4, 4, 0, 0)
    assert rep.hashes == [t.hash for t in plan(spec_of(tmp_path))]
    assert rep.wall_time > 0
    # all done: no pool is started
    calls.clear()
    again = run_sweep(spec_of(tmp_path), tmp_path / "r", progress=False)
    assert calls == {} and (again.total, again.skipped, again.ran) == (4, 4, 0)


@pytest.mark.parametrize("address, prepared", [("local", True), ("tcp://h:8786", False)])
def test_dask_gets_the_address_and_prepared_tasks_only_when_local(tmp_path, monkeypatch,
                                                                  address, prepared):
    calls = _executors(monkeypatch)
    rep = run_sweep(spec_of(tmp_path), tmp_path / "r", executor="serial", dask=address,
                    workers=2, batch=5, progress=False)
    todo, addr, workers, batch = calls["dask"]
    assert (addr, workers, batch) == (address, 2, 5)
    assert (None not in {t.prepared for t in todo}) is prepared
    assert "processes" not in calls and rep.ran == 4


def test_serial_runs_here_without_prepared_workloads(tmp_path, monkeypatch):
    calls = _executors(monkeypatch)
    monkeypatch.setattr(sweep, "write_prepared", lambda *a: pytest.fail("prepared"))
    seen = []
    rep = run_sweep(spec_of(tmp_path), tmp_path / "r", executor="serial", progress=False,
                    on_result=lambda t, r: seen.append((t.prepared, t.hash, r["hash"])))
    assert calls == {} and rep.ran == 4
    assert [s[0] for s in seen] == [None] * 4
    assert sorted(h for _, h, rh in seen if h == rh) == sorted(rep.hashes)


def test_an_unknown_executor_is_refused_naming_the_field(tmp_path):
    with pytest.raises(InputError) as err:
        run_sweep(spec_of(tmp_path), tmp_path / "r", executor="threads", progress=False)
    assert err.value.field == "executor"
    assert err.value.reason == "unknown executor 'threads'; known: serial, processes"


def test_a_bad_name_is_refused_before_anything_is_written(tmp_path):
    with pytest.raises(InputError, match="plain name"):
        run_sweep(spec_of(tmp_path, name="../x"), tmp_path / "r", progress=False)
    assert not (tmp_path / "r").exists()


def test_the_spec_text_is_kept_and_dead_writers_temporaries_removed(tmp_path, monkeypatch):
    _executors(monkeypatch)
    out = tmp_path / "r"
    dead = out / "runs" / ".tmp-x-999999999-nohost"
    dead.mkdir(parents=True)
    run_sweep(spec_of(tmp_path), out, spec_text="name: ex\n", progress=False)
    assert [p.read_text() for p in (out / "specs").glob("ex-*.yaml")] == ["name: ex\n"]
    run_sweep(spec_of(tmp_path), tmp_path / "q", progress=False)
    assert not (tmp_path / "q" / "specs").exists()


def test_each_result_is_recorded_reported_and_counted_on_the_bar(tmp_path, monkeypatch):
    bars = []

    def bar(n, skipped, show):
        bars.append((n, skipped, show, FakeBar()))
        return bars[-1][3]

    monkeypatch.setattr(sweep, "_bar", bar)
    real = sweep.run_task

    def run_task(t):  # sjf-bb fails as a run (recorded, not raised)
        if t.policy == "sjf-bb":
            return {"hash": t.hash, "error": "RuntimeError: broke", "host": "h"}
        return real(t)

    monkeypatch.setattr(sweep, "run_task", run_task)
    got = []
    rep = run_sweep(spec_of(tmp_path), tmp_path / "r", executor="serial", progress=7.0,
                    on_result=lambda t, r: got.append((t.policy, "error" in r)))
    n, skipped, show, fake = bars[0]
    assert (n, skipped, show) == (4, 0, 7.0)
    assert fake.updates == [1, 1, 1, 1] and fake.closed
    failed_so_far = [sum(e for _, e in got[:k + 1]) for k in range(len(got))]
    assert fake.postfix == [{"failed": f} for f in failed_so_far if f]
    assert sorted(got) == [("fcfs-bb", False)] * 2 + [("sjf-bb", True)] * 2
    assert (rep.ran, rep.failed) == (2, 2)
    failed = {t.hash: t for t in plan(spec_of(tmp_path)) if t.policy == "sjf-bb"}
    assert sorted(rep.failures) == sorted(f"{t.params}: RuntimeError: broke"
                                          for t in failed.values())
    for h, t in failed.items():
        record = json.loads((tmp_path / "r" / "failed" / f"{h}.json").read_text())
        assert record == {"params": t.params, "options": t.options, "hash": h,
                          "error": "RuntimeError: broke", "host": "h"}


# --------------------------------------------------------------------------------------------
# the process pool, stood in for by one that runs each batch here


class FakePool:
    made: list[FakePool] = []

    def __init__(self, max_workers, mp_context):
        self.max_workers, self.context = max_workers, mp_context
        self.submitted, self.shutdowns, self.terminated = [], [], False
        FakePool.made.append(self)

    def submit(self, fn, chunk):
        self.submitted.append([t.hash for t in chunk])
        fut = Future()
        fut.set_result(fn(chunk))
        return fut

    def shutdown(self, wait, cancel_futures):
        self.shutdowns.append((wait, cancel_futures))

    def terminate_workers(self):
        self.terminated = True


@pytest.fixture
def pool(monkeypatch):
    import concurrent.futures

    FakePool.made = []
    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", FakePool)
    monkeypatch.setattr(sweep, "run_task", lambda t: {"hash": t.hash, "ran": t.hash})
    return FakePool.made


def test_a_pool_of_spawned_workers_runs_one_task_per_run_by_default(pool, monkeypatch):
    ts = [task(f"t{i}", "AB"[i % 2], cost=5.0 - i) for i in range(5)]
    got = []
    sweep._run_processes(ts, 2, None, got.append)
    (p,) = pool
    assert p.max_workers == 2 and p.context.get_start_method() == "spawn"
    assert p.submitted == [["t0"], ["t1"], ["t2"], ["t3"], ["t4"]]
    assert [r["hash"] for r in got] == ["t0", "t1", "t2", "t3", "t4"]
    assert p.shutdowns == [(True, True)] and not p.terminated


def test_a_pool_is_no_larger_than_its_batches_and_by_default_the_cpu_count(pool, monkeypatch):
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    ts = [task(f"t{i}", "A", cost=1.0) for i in range(5)]
    sweep._run_processes(ts, None, 2, lambda r: None)
    assert pool[0].max_workers == 3 and pool[0].submitted == [["t0", "t1"], ["t2", "t3"],
                                                             ["t4"]]
    sweep._run_processes(ts[:4], None, None, lambda r: None)
    assert pool[1].max_workers == 4
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    sweep._run_processes(ts, None, None, lambda r: None)
    assert pool[2].max_workers == 1


def test_an_interrupted_pool_stops_its_workers_without_waiting(pool):
    def receive(r):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep._run_processes([task("a"), task("b")], 2, None, receive)
    assert pool[0].terminated and pool[0].shutdowns == [(False, True)]


def test_terminate_workers_stops_each_process_of_an_older_pool():
    class Proc:
        def __init__(self, fail):
            self.fail, self.stopped = fail, False

        def terminate(self):
            self.stopped = True
            if self.fail:
                raise OSError("gone")

    procs = {1: Proc(True), 2: Proc(False)}
    sweep._terminate_workers(types.SimpleNamespace(_processes=procs))
    assert [p.stopped for p in procs.values()] == [True, True]
    sweep._terminate_workers(types.SimpleNamespace(_processes=None))
    sweep._terminate_workers(types.SimpleNamespace())
    new = FakePool(1, None)
    new._processes = {1: Proc(False)}
    sweep._terminate_workers(new)
    assert new.terminated and not new._processes[1].stopped


# --------------------------------------------------------------------------------------------
# Dask, stood in for by a client that runs each batch here


class FakeClient:
    made: list[FakeClient] = []

    def __init__(self, target=None, scheduler_file=None, workers=3):
        self.target, self.scheduler_file = target, scheduler_file
        self.submitted, self.closed, self.mapped = [], False, []
        self.workers = workers
        FakeClient.made.append(self)

    def scheduler_info(self):
        return {"workers": {f"w{i}": {} for i in range(self.workers)}}

    def submit(self, fn, chunk, pure):
        self.submitted.append(([t.hash for t in chunk], pure))
        fut = Future()
        fut.set_result(fn(chunk))
        fut.release = lambda: self.mapped.append("released")
        return fut

    def map(self, fn, items, pure):
        self.mapped.append((fn, list(items), pure))
        return [fn(x) for x in items]

    def gather(self, xs):
        return xs

    def close(self):
        self.closed = True


class FakeCluster:
    made: list[FakeCluster] = []

    def __init__(self, **kw):
        self.kw, self.closed = kw, False
        FakeCluster.made.append(self)

    def close(self):
        self.closed = True


@pytest.fixture
def dask(monkeypatch):
    distributed = pytest.importorskip("distributed")
    FakeClient.made, FakeCluster.made = [], []
    monkeypatch.setattr(distributed, "Client", FakeClient)
    monkeypatch.setattr(distributed, "LocalCluster", FakeCluster)
    monkeypatch.setattr(distributed, "as_completed", lambda futures: iter(futures))
    monkeypatch.setattr(sweep, "run_task", lambda t: {"hash": t.hash})
    return FakeClient.made, FakeCluster.made


def test_dask_local_starts_single_threaded_process_workers_and_closes_them(dask, monkeypatch):
    clients, clusters = dask
    monkeypatch.setattr(os, "cpu_count", lambda: 5)
    got = []
    ts = [task(f"t{i}", "A", cost=2.0) for i in range(3)]
    sweep._run_dask(ts, "local", None, 2, got.append)
    (cluster,) = clusters
    assert cluster.kw == {"n_workers": 5, "threads_per_worker": 1, "processes": True,
                          "dashboard_address": None}
    (client,) = clients
    assert client.target is cluster and client.closed and cluster.closed
    assert client.submitted == [(["t0", "t1"], False), (["t2"], False)]
    assert [r["hash"] for r in got] == ["t0", "t1", "t2"]
    assert client.mapped == ["released", "released"]
    sweep._run_dask(ts, "local", 2, None, got.append)
    assert clusters[1].kw["n_workers"] == 2
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    sweep._run_dask(ts, "local", None, None, got.append)
    assert clusters[2].kw["n_workers"] == 1


def test_dask_batches_by_cost_for_the_schedulers_workers(dask):
    clients, _ = dask
    ts = [task(f"t{i}", "A", cost=0.0625) for i in range(32)]
    sweep._run_dask(ts, "tcp://h:8786", 7, None, lambda r: None)
    assert clients[0].target == "tcp://h:8786" and clients[0].closed
    # three workers at the scheduler (not the 7 asked): eleven batches (28 for 7)
    assert len(clients[0].submitted) == 11


def test_dask_with_no_workers_yet_batches_for_those_asked(dask, monkeypatch):
    clients, _ = dask
    monkeypatch.setattr(FakeClient, "scheduler_info", lambda self: {})
    ts = [task(f"t{i}", "A", cost=0.0625) for i in range(32)]
    sweep._run_dask(ts, "tcp://h:8786", 3, None, lambda r: None)
    assert len(clients[0].submitted) == 11
    sweep._run_dask(ts, "tcp://h:8786", None, None, lambda r: None)
    assert len(clients[1].submitted) == 4  # one worker: four batches


def test_dask_by_scheduler_file(dask, tmp_path):
    clients, clusters = dask
    f = tmp_path / "scheduler.json"
    f.write_text("{}")
    sweep._run_dask([task("a")], str(f), None, None, lambda r: None)
    assert (clients[0].target, clients[0].scheduler_file) == (None, str(f))
    assert clusters == []
    with pytest.raises(InputError) as err:
        sweep._run_dask([task("a")], str(tmp_path / "none.json"), None, None, lambda r: None)
    assert err.value.field == "--dask"
    assert err.value.reason == f"no scheduler file {tmp_path / 'none.json'}"


def test_dask_closes_the_client_and_cluster_when_a_result_breaks(dask):
    clients, clusters = dask

    def receive(r):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        sweep._run_dask([task("a")], "local", 1, None, receive)
    assert clients[0].closed and clusters[0].closed


def test_dask_overhead_is_the_time_per_trivial_task(dask, monkeypatch):
    clients, clusters = dask
    ticks = iter([10.0, 14.0])
    monkeypatch.setattr(sweep.time, "perf_counter", lambda: next(ticks))
    assert sweep.dask_overhead("local", n=8) == 0.5
    assert clusters[0].kw == {"n_workers": 2, "threads_per_worker": 1, "processes": True,
                              "dashboard_address": None}
    assert clients[0].target is clusters[0] and clients[0].closed and clusters[0].closed
    assert clients[0].mapped == [(sweep._noop, list(range(10)), False),
                                 (sweep._noop, list(range(8)), False)]
    ticks = iter([0.0, 1.0])
    assert sweep.dask_overhead("tcp://h:1", n=4, workers=3) == 0.25
    assert clients[1].target == "tcp://h:1" and len(clusters) == 1
    ticks = iter([0.0, 2.0])
    sweep.dask_overhead(workers=3)  # (200 tasks by default)
    assert clusters[1].kw["n_workers"] == 3 and clients[2].mapped[1][1] == list(range(200))


def test_the_store_may_be_a_new_folder_in_a_new_folder(tmp_path, monkeypatch):
    _executors(monkeypatch)
    rep = run_sweep(spec_of(tmp_path), tmp_path / "a" / "b" / "r", progress=False)
    assert rep.ran == 4 and len(list((tmp_path / "a" / "b" / "r" / "runs").iterdir())) == 4


def test_a_sweep_shows_a_bar_by_default_and_times_itself(tmp_path, monkeypatch):
    _executors(monkeypatch)
    shown = []
    monkeypatch.setattr(sweep, "_bar", lambda n, skipped, show: shown.append(show))
    run_sweep(spec_of(tmp_path), tmp_path / "r")
    assert shown == [True]
    clock = iter([10.0, 13.5])
    monkeypatch.setattr(sweep, "time", types.SimpleNamespace(perf_counter=lambda: next(clock)))
    assert run_sweep(spec_of(tmp_path), tmp_path / "r").wall_time == 3.5  # (all done before)


def test_a_pool_hands_each_batchs_results_over_as_soon_as_it_ends(pool, monkeypatch):
    """The first batch's runs are stored while the second still runs (an interrupted sweep
    keeps them), not when every batch has ended."""
    import threading

    late, lock, timers = Future(), threading.Lock(), []

    def finish(results):
        with lock:
            if not late.done():
                late.set_result(results)

    def submit(self, fn, chunk):
        self.submitted.append([t.hash for t in chunk])
        if len(self.submitted) == 1:
            fut = Future()
            fut.set_result(fn(chunk))
            return fut
        results = fn(chunk)  # the second batch ends after the first's results are taken
        timers.append(threading.Timer(2.0, finish, (results,)))  # (or, waiting for all, later)
        timers[-1].start()
        return late

    monkeypatch.setattr(FakePool, "submit", submit)
    got = []

    def receive(r):
        got.append((r["hash"], late.done()))
        finish([{"hash": "b"}])

    try:
        sweep._run_processes([task("a", cost=2.0), task("b", cost=1.0)], 2, None, receive)
    finally:
        for t in timers:
            t.cancel()
    assert got == [("a", False), ("b", True)]


def test_dask_without_the_cluster_extra_says_which_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # (import fails)
    with pytest.raises(InputError) as err:
        sweep._run_dask([task("a")], "local", 1, None, lambda r: None)
    assert err.value.field == "--dask"
    assert err.value.reason == ("Dask execution needs the cluster extra: pip install "
                                "'bbopt[cluster]'")

"""How many worker processes ``bbopt compare`` takes by default (bbopt.analysis.workers)."""

from __future__ import annotations

import pytest

from bbopt.analysis import workers
from bbopt.analysis.sweep_schedule import estimate


def _pow(x: int, y: int) -> int:
    return x ** y


@pytest.fixture
def four_cores(monkeypatch):
    monkeypatch.setattr(workers, "default_workers", lambda: 4)


def test_small_runs_stay_in_this_process_and_large_ones_take_every_core(four_cores):
    queue_rules = ["fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "conservative-bb"]
    # compare's embedded workload (3,000 jobs) under its six default policies: serial.
    assert workers.workers_for(3_000, queue_rules) == 1
    # The whole KTH trace under the same policies: every core.
    assert workers.workers_for(28_467, queue_rules) == 4
    # One cheap policy on a large trace is still small; a policy with a solver budget is not.
    assert workers.workers_for(28_467, ["fcfs"]) == 1
    assert workers.workers_for(28_467, ["fcfs", "bbsched"]) == 4


def test_the_threshold_is_the_estimated_cpu_of_all_runs(four_cores):
    per_job = estimate(1000, "conservative-bb", {}) / 1000
    below = int(workers.MIN_PARALLEL_CPU / per_job) - 1
    assert workers.workers_for(below, ["conservative-bb"]) == 1
    assert workers.workers_for(below + 2, ["conservative-bb"]) == 4
    # Two policies each under the threshold add up to more than it.
    assert workers.workers_for(below // 2 + 2, ["conservative-bb", "conservative-bb"]) == 4


def test_runs_give_results_in_task_order_on_workers():
    got = list(workers.run_each(_pow, [(2, k) for k in range(6)], workers=2))
    assert got == [2 ** k for k in range(6)]
    with pytest.raises(ValueError, match="workers must be >= 1"):
        list(workers.run_each(_pow, [(2, 1)], workers=0))


def test_plan_policies_are_costed_as_measured_not_as_a_window_policy(four_cores):
    # plan-2 costs about 3 CPU s per 1,000 KTH jobs: 2,000 jobs of it and a queue rule are
    # worth two workers, where a window policy's default cost would have kept them serial.
    assert estimate(1000, "plan-2", {"budget": 5.0}) > 5 * estimate(1000, "bbsched", {})
    assert workers.workers_for(2_000, ["plan-2", "sjf-bb"]) == 4


# --- the rules on hand-computed values ----------------------------------------------------

def test_the_threshold_is_exactly_min_parallel_cpu(four_cores):
    # fcfs: 0.05 CPU s per 1,000 jobs, so 60,000 jobs cost exactly 3.0 s
    assert workers.MIN_PARALLEL_CPU == 3.0
    assert estimate(60_000, "fcfs", {}) == 3.0
    assert workers.workers_for(59_999, ["fcfs"]) == 1
    assert workers.workers_for(60_000, ["fcfs"]) == 4
    assert workers.workers_for(30_000, ["fcfs", "fcfs"]) == 4  # the sum over the policies


def test_requested_workers_win_and_fewer_than_one_is_refused(four_cores):
    assert workers.workers(2, 10, ["fcfs"]) == 2
    assert workers.workers(1, 10**6, ["bbsched"]) == 1
    assert workers.workers(None, 10, ["fcfs"]) == 1
    assert workers.workers(None, 10**6, ["fcfs"]) == 4
    for bad in (0, -1):
        with pytest.raises(workers.InputError) as err:
            workers.workers(bad, 10, ["fcfs"])
        assert err.value.field == "--workers"
        assert err.value.reason == f"must be >= 1, got {bad}"


def test_default_workers_are_the_cores_this_process_may_use(monkeypatch):
    monkeypatch.setattr(workers.os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert workers.default_workers() == 3
    monkeypatch.delattr(workers.os, "sched_getaffinity")
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 6)
    assert workers.default_workers() == 6
    monkeypatch.setattr(workers.os, "cpu_count", lambda: None)
    assert workers.default_workers() == 1


def _record(x, report=None):
    if report is not None:
        report(("seen", x))
    return x * 10


def test_one_worker_or_one_task_runs_here_in_task_order_with_its_reports(monkeypatch):
    seen = []
    assert list(workers.run_each(_record, [(1,), (2,), (3,)], 1)) == [10, 20, 30]
    got = list(workers.run_each(_record, [(1,), (2,)], 1, on_report=seen.append))
    assert got == [10, 20] and seen == [("seen", 1), ("seen", 2)]
    # one task on many workers: no pool either (a pool would not see this process's list)
    here = []
    assert list(workers.run_each(lambda x: here.append(x) or x, [(5,)], 4)) == [5]
    assert here == [5]
    # by default every core (here one: in this process)
    monkeypatch.setattr(workers, "default_workers", lambda: 1)
    assert list(workers.run_each(lambda x: here.append(x) or x, [(6,), (7,)])) == [6, 7]
    assert here == [5, 6, 7]
    done = []
    assert workers.run_all(_record, [(1,), (2,)], 1,
                           progress=lambda d, n: done.append((d, n))) == [10, 20]
    assert done == [(1, 2), (2, 2)]
    assert workers.run_all(_record, [(4,)], 1) == [40]


def test_worker_inputs_are_named_by_the_drivers_pid():
    import os

    assert workers.worker_inputs_prefix() == f"bbopt-sweep-{os.getpid()}-"


def test_process_alive(monkeypatch):
    import os

    assert workers.process_alive(os.getpid())
    assert not workers.process_alive(2**22 + 12345)  # above the kernel's pid range
    assert workers.process_alive(2**80)  # not a pid this host can have: counted as running

    def denied(pid, sig):
        raise PermissionError

    monkeypatch.setattr(workers.os, "kill", denied)
    assert workers.process_alive(12345)


def test_orphan_worker_inputs_are_removed_those_of_running_drivers_kept(tmp_path, monkeypatch):
    import os

    dead = 2**22 + 4321
    for name in (f"bbopt-sweep-{dead}-a", f"bbopt-sweep-{dead}-b", f"bbopt-sweep-{os.getpid()}-c",
                 f"bbopt-sweep-{os.getppid()}-d", "bbopt-sweep-x-e", f"other-{dead}-f",
                 f"bbopt-sweep-{dead}-h-i"):  # (the pid is what comes before the first dash)
        (tmp_path / name).mkdir()
    (tmp_path / f"bbopt-sweep-{dead}-file").write_text("")
    assert workers.remove_orphan_worker_inputs(str(tmp_path)) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([
        f"bbopt-sweep-{os.getpid()}-c", f"bbopt-sweep-{os.getppid()}-d", "bbopt-sweep-x-e",
        f"other-{dead}-f", f"bbopt-sweep-{dead}-file"])
    # another user's folders are left alone
    (tmp_path / f"bbopt-sweep-{dead}-g").mkdir()
    uid = os.getuid()
    monkeypatch.setattr(workers.os, "getuid", lambda: uid + 1)
    assert workers.remove_orphan_worker_inputs(str(tmp_path)) == 0
    assert (tmp_path / f"bbopt-sweep-{dead}-g").is_dir()
    monkeypatch.undo()
    # the default place is the temporary directory
    import tempfile

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    assert workers.remove_orphan_worker_inputs() == 1


def test_a_worker_calls_its_task_and_ends_its_reports_with_the_tasks_marker(monkeypatch):
    """What runs inside a worker process, called here: the task, its reports, the marker."""
    sent = []

    class Queue:
        put = sent.append

    assert workers._call((_record, (3,))) == 30
    monkeypatch.setattr(workers, "_REPORTS", None)
    workers._set_reports(Queue)
    assert workers._REPORTS is Queue
    assert workers._call_reporting((_record, (4,), 7)) == 40
    assert sent == [("seen", 4), 7] and type(sent[1]) is workers._Ended
    with pytest.raises(TypeError):  # a failing task still ends its reports
        workers._call_reporting((_pow, (0, -1), 8))
    assert sent[-1] == 8 and type(sent[-1]) is workers._Ended


def test_the_parent_hands_on_every_waiting_report_and_notes_the_ended_tasks(monkeypatch):
    import queue

    monkeypatch.setattr(workers, "REPORT_POLL", 0.01)
    q = queue.Queue()
    for message in ("a", workers._Ended(0), "b", workers._Ended(2)):
        q.put(message)
    seen, ended = [], set()
    workers._drain(q, seen.append, ended)
    assert seen == ["a", "b"] and ended == {0, 2}
    workers._drain(q, seen.append, ended)  # nothing waiting: returns at once
    assert seen == ["a", "b"]
    workers._drain(q, seen.append, ended, block=True)  # waits REPORT_POLL for one, none came
    q.put("c")
    q.put(workers._Ended(3))
    workers._drain(q, seen.append, ended, block=True)
    assert seen == ["a", "b", "c"] and ended == {0, 2, 3}
    assert workers.REPORT_POLL == 0.01


class _Reports:
    """A report queue that records how it is read."""

    def __init__(self, items):
        self.items, self.calls = list(items), []

    def _next(self):
        import queue

        if not self.items:
            raise queue.Empty
        return self.items.pop(0)

    def get(self, timeout):
        self.calls.append(("wait", timeout))
        return self._next()

    def get_nowait(self):
        self.calls.append("now")
        return self._next()


def test_only_the_first_read_of_a_blocking_drain_waits():
    seen, ended = [], set()
    q = _Reports(["a", workers._Ended(1)])
    workers._drain(q, seen.append, ended)
    assert q.calls == ["now", "now", "now"] and seen == ["a"] and ended == {1}
    q = _Reports(["a", "b"])
    workers._drain(q, seen.append, ended, block=True)
    assert q.calls == [("wait", workers.REPORT_POLL), "now", "now"]
    assert seen == ["a", "a", "b"]


def test_a_policy_outside_the_cost_table_is_costed_by_its_options(four_cores):
    # omfs takes a solver budget: 0.6 CPU s per 1,000 jobs, 3.0 s at 5,000 jobs
    assert estimate(5_000, "omfs", {"budget": 0.05}) == pytest.approx(3.0, rel=1e-12)
    assert workers.workers_for(4_990, ["omfs"]) == 1
    assert workers.workers_for(5_010, ["omfs"]) == 4


class _Late:
    """A report queue whose messages arrive late: a task's reports only once its result has
    been taken (a worker's result overtaking its last reports)."""

    def __init__(self):
        import queue

        self.held, self.arrived = [], queue.Queue()

    def put(self, message):
        self.held.append(message)

    def arrive(self):
        for message in self.held:
            self.arrived.put(message)
        self.held.clear()

    def get(self, timeout):
        return self.arrived.get(timeout=timeout)

    def get_nowait(self):
        return self.arrived.get_nowait()


class _Pool:
    """A process pool run in this process: records its size and runs its tasks at once; with
    reports, the first wait for a result times out and each task's reports arrive after it."""

    sizes: list[int] = []
    waits: list[float] = []

    def __init__(self, n, initializer=None, initargs=()):
        self.sizes.append(n)
        self.reports = None
        if initializer is not None:
            initializer(*initargs)
            self.reports = initargs[0]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def imap(self, func, items):
        results = []
        for item in items:
            results.append(func(item))
            if self.reports is not None:
                results[-1] = (results[-1], list(self.reports.held))
                self.reports.held.clear()
        return _Results(results, self)


class _Results(list):
    def __init__(self, results, pool):
        super().__init__(results)
        self.pool, self.timed_out = pool, False

    def next(self, timeout):
        import multiprocessing

        self.pool.waits.append(timeout)
        if not self.timed_out:
            self.timed_out = True
            raise multiprocessing.TimeoutError
        result, reports = self.pop(0)
        self.pool.reports.held.extend(reports)
        self.pool.reports.arrive()
        return result


@pytest.fixture
def pool(monkeypatch):
    """``multiprocessing`` contexts replaced by one whose pools run here: the methods asked
    for and the pools' sizes are recorded."""

    methods: list[str] = []

    class Context:
        Pool = _Pool
        Queue = _Late

    def get_context(method):
        methods.append(method)
        return Context

    _Pool.sizes, _Pool.waits = [], []
    monkeypatch.setattr(workers.multiprocessing, "get_context", get_context)
    monkeypatch.setattr(workers, "_REPORTS", None)
    monkeypatch.setattr(workers, "default_workers", lambda: 7)
    return methods, _Pool.sizes


def test_several_tasks_go_to_a_spawned_pool_of_at_most_one_worker_per_task(pool):
    methods, sizes = pool
    assert list(workers.run_each(_record, [(1,), (2,), (3,)], 2)) == [10, 20, 30]
    assert methods == ["spawn"] and sizes == [2]
    assert list(workers.run_each(_record, [(1,), (2,)], 5)) == [10, 20]
    assert sizes == [2, 2]
    assert list(workers.run_each(_record, [(1,), (2,), (3,)])) == [10, 20, 30]  # every core
    assert sizes == [2, 2, 3]
    assert workers.run_all(_record, [(1,), (2,), (3,)], 2) == [10, 20, 30]
    assert sizes == [2, 2, 3, 2]


def test_a_pools_reports_reach_the_parent_before_each_result(pool):
    methods, sizes = pool
    seen = []
    got = []
    for result in workers.run_each(_record, [(1,), (2,), (3,)], 2, on_report=seen.append):
        got.append((result, list(seen)))
    assert got[-1] == (30, [("seen", 1), ("seen", 2), ("seen", 3)])
    assert [r for r, _ in got] == [10, 20, 30]
    assert all(("seen", r // 10) in s for r, s in got)  # each task's reports before its result
    assert methods == ["spawn"] and sizes == [2]
    assert _Pool.waits == [workers.REPORT_POLL] * 4  # (the first wait timed out)
    seen.clear()
    assert list(workers.run_each(_record, [(4,), (5,)], 9, on_report=seen.append)) == [40, 50]
    assert seen == [("seen", 4), ("seen", 5)] and sizes == [2, 2]


def test_compare_runs_each_policy_on_the_workers_it_is_given(monkeypatch, four_cores):
    from bbopt.runs import RunSpec, load

    calls = []

    def run_each(fn, tasks, n, *, on_report=None):
        calls.append((n, on_report))
        for (spec,) in tasks:
            yield "result-" + spec.policy, {"m": 1}

    class Result(str):
        pass

    monkeypatch.setattr(workers, "run_each", lambda *a, **k: (
        (Result(r), m) for r, m in run_each(*a, **k)))
    spec = load(RunSpec(first=20, policy="fcfs"))[0]
    runs = list(workers.compare_policies(spec, ["fcfs", "sjf-bb"], workers_=3))
    assert [(p, str(r), m) for p, r, m in runs] == [("fcfs", "result-fcfs", {"m": 1}),
                                                  ("sjf-bb", "result-sjf-bb", {"m": 1})]
    assert all(r.jobs is spec.workload for _, r, _ in runs)  # the results hold spec's jobs
    assert calls == [(3, None)]
    seen = []
    list(workers.compare_policies(spec, ["fcfs"], on_jobs=lambda *m: seen.append(m)))
    n, on_report = calls[-1]
    assert n == 1  # 20 jobs: too small for workers
    on_report(("fcfs", 5, 20))
    assert seen == [("fcfs", 5, 20)]

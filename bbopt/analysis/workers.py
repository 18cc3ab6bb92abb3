"""Independent replays in worker processes: ``bbopt compare`` runs its policies (and, with
``--split``, every part of every policy) on all cores.

A replay is deterministic and shares nothing with the others, so the runs are farmed out whole
and collected **in submission order**: the output is the serial run's (only the measured wall
and decision times differ, as they do between two serial runs). With one worker, or one task,
everything runs in this process. Workers are spawned fresh interpreters (a forked copy of a
process with solver threads can deadlock). Stopping early (an interrupt, an error) terminates
the workers at once. A sweep's local workers read their prepared workloads from a temporary
folder named by the driver's pid, so a later sweep removes the folders of a killed driver.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from bbopt.errors import InputError

#: The name of a temporary folder of prepared workloads for a sweep's local workers is this,
#: the driver's pid and a random part (:func:`worker_inputs_prefix`).
WORKER_INPUTS = "bbopt-sweep-"


def worker_inputs_prefix() -> str:
    return f"{WORKER_INPUTS}{os.getpid()}-"


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs on this host (one we may not signal counts as running)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def remove_orphan_worker_inputs(directory: str | None = None) -> int:
    """Remove this user's worker-input folders whose sweep driver no longer runs (killed by
    SIGKILL, which allows no clean-up); returns how many. Those of running sweeps are kept."""
    import shutil
    import tempfile
    from pathlib import Path

    n = 0
    for d in Path(directory or tempfile.gettempdir()).glob(WORKER_INPUTS + "*"):
        pid = d.name[len(WORKER_INPUTS):].split("-", 1)[0]
        try:
            mine = d.is_dir() and d.stat().st_uid == os.getuid()
        except OSError:
            continue
        if mine and pid.isdigit() and int(pid) != os.getpid() and not process_alive(int(pid)):
            shutil.rmtree(d, ignore_errors=True)
            n += 1
    return n


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


#: Estimated CPU seconds of all the runs below which they run in the calling process: a worker
#: is a fresh interpreter importing bbopt (about 0.4 s of CPU), the jobs are sent to it and the
#: results back, which costs more than the runs save on small workloads (``bbopt compare`` on
#: its embedded 3,000 jobs, six queue policies: 1.2 CPU s serial, 2.0 on two workers).
MIN_PARALLEL_CPU = 3.0


def workers_for(n_jobs: int, policies: Sequence[str]) -> int:
    """The default number of worker processes for one run of each of ``policies`` on
    ``n_jobs`` jobs: every core, or 1 when the runs' estimated CPU time (the sweep's per-policy
    cost per job) is below :data:`MIN_PARALLEL_CPU`."""
    from bbopt.analysis.sweep_schedule import estimate
    from bbopt.policies import policy_options

    cost = sum(estimate(n_jobs, p, policy_options(p)) for p in policies)
    return 1 if cost < MIN_PARALLEL_CPU else default_workers()


def run_each(fn: Callable[..., Any], tasks: Sequence[tuple], workers: int | None = None, *,
             on_report: Callable[[Any], None] | None = None) -> Iterator[Any]:
    """``fn(*task)`` for every task, yielded in task order as soon as each is done (so a
    caller can write each result while later ones still run), on up to ``workers`` processes
    (default: every core). ``fn`` must be a module-level function and its arguments and result
    picklable. Closing the iterator early terminates the workers.

    ``on_report``: ``fn`` is called as ``fn(*task, report=send)``; whatever it ``send``s (a
    picklable message, e.g. how many jobs of its run have finished) reaches ``on_report`` in
    this process -- directly when the task runs here, through a queue from a worker, read at
    least every :data:`REPORT_POLL` seconds while the results are awaited."""
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if workers == 1 or len(tasks) <= 1:
        for task in tasks:
            yield fn(*task) if on_report is None else fn(*task, report=on_report)
        return
    # Spawned, not forked: a fork copies whatever lock a solver or BLAS thread of this process
    # holds at that instant, and the child can wait on it forever.
    ctx = multiprocessing.get_context("spawn")
    from bbopt.signals import deferred

    if on_report is None:
        with deferred():  # (the workers start whole, so that terminate() stops them all)
            pool = ctx.Pool(min(workers, len(tasks)))
        with pool:  # exit: terminate()
            yield from pool.imap(_call, [(fn, task) for task in tasks])
        return
    reports = ctx.Queue()
    with deferred():
        pool = ctx.Pool(min(workers, len(tasks)), initializer=_set_reports, initargs=(reports,))
    with pool:
        results = pool.imap(_call_reporting, [(fn, task, i) for i, task in enumerate(tasks)])
        ended: set[int] = set()
        for i in range(len(tasks)):
            while True:
                _drain(reports, on_report, ended)
                try:
                    result = results.next(timeout=REPORT_POLL)
                    break
                except multiprocessing.TimeoutError:
                    continue
            # A worker's reports travel through a queue, its result through the pool: the
            # result can overtake the last reports. Each task's reports end with its marker.
            while i not in ended:
                _drain(reports, on_report, ended, block=True)
            yield result


#: Seconds between two reads of the workers' reports while their results are awaited.
REPORT_POLL = 0.2

_REPORTS: Any = None  # a worker's queue to the parent (set by the pool's initializer)


class _Ended(int):
    """The marker a worker sends after the last report of task number ``self``."""


def _set_reports(reports: Any) -> None:
    global _REPORTS
    _REPORTS = reports


def _call_reporting(item: tuple[Callable[..., Any], tuple, int]) -> Any:
    fn, task, i = item
    try:
        return fn(*task, report=_REPORTS.put)
    finally:
        _REPORTS.put(_Ended(i))


def _drain(reports: Any, on_report: Callable[[Any], None], ended: set[int], *,
           block: bool = False) -> None:
    """Hand every report waiting in ``reports`` to ``on_report`` and note the ended tasks;
    ``block``: wait for at least one message."""
    import queue

    while True:
        try:
            message = reports.get(timeout=REPORT_POLL) if block else reports.get_nowait()
        except queue.Empty:
            return
        block = False
        if isinstance(message, _Ended):
            ended.add(int(message))
        else:
            on_report(message)


def run_all(fn: Callable[..., Any], tasks: Sequence[tuple], workers: int | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[Any]:
    """``[fn(*task) for task in tasks]`` through :func:`run_each`; ``progress(done, total)``
    after each result."""
    out = []
    for done, result in enumerate(run_each(fn, tasks, workers), 1):
        out.append(result)
        if progress is not None:
            progress(done, len(tasks))
    return out


def _call(item: tuple[Callable[..., Any], tuple]) -> Any:
    fn, task = item
    return fn(*task)


def workers(requested: int | None, n_jobs: int, policies: Sequence[str]) -> int:
    """``requested`` processes (>= 1), or every core unless the runs (``n_jobs`` jobs per
    policy) are too small to gain (:func:`~bbopt.analysis.workers.workers_for`)."""
    if requested is not None and requested < 1:
        raise InputError(f"must be >= 1, got {requested}", field="--workers")
    return requested or workers_for(n_jobs, policies)


def compare_policies(spec: Any, policies: Sequence[str], *, workers_: int | None = None,
                     on_jobs: Callable[[str, int, int], None] | None = None
                     ) -> Iterator[tuple[str, Any, dict[str, float]]]:
    """``spec`` run under each policy (its options those ``spec`` has that the policy takes),
    on ``workers_`` processes (:func:`workers`): ``(policy, result, metrics)`` in the order of
    ``policies``, each as soon as it is done; the results hold ``spec``'s jobs.
    ``on_jobs(policy, finished, total)``: how far each run is, in jobs whose record is final
    (:func:`bbopt.runs.run_detached`'s reports), from whichever process runs it."""
    from bbopt.runs import for_policy, run_detached

    n = workers(workers_, len(spec.workload), policies)
    on_report = None if on_jobs is None else (lambda message: on_jobs(*message))
    runs = run_each(run_detached, [(for_policy(spec, p),) for p in policies], n,
                    on_report=on_report)
    for policy, (result, metrics) in zip(policies, runs, strict=True):
        result.jobs = spec.workload
        yield policy, result, metrics

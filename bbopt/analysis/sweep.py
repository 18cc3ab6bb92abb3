"""Running a sweep: every cell of a :class:`~bbopt.analysis.sweep_spec.SweepSpec` once, into a
:class:`~bbopt.analysis.store.Store`, serially, on local worker processes or on Dask.

Length: planning, running, resuming and storing a sweep is one protocol (tasks, batches, run
hashes, progress) shared by the three executors.

The driver prepares each workload once per seed (reading the file, applying the generators) to
compute its content hash, names every run by :func:`~bbopt.analysis.store.run_hash`, leaves out
the runs already in the store and hands the others to the executor as *tasks*: small picklable
descriptions of a batch of runs, longest first by an estimate of their cost
(:mod:`bbopt.analysis.sweep_schedule`). A local worker reads the workload the driver prepared
(a pickle named by its content hash), a remote one rebuilds it from the same description and
checks its content hash against the driver's (a worker that sees a different file refuses to
run); each keeps it for its later runs, simulates, measures and returns the metrics and the
per-job outcomes; the driver writes each run atomically as it arrives, with a progress bar and
an estimate of the time left.

Executors: ``"serial"`` (this process), ``"processes"`` (``concurrent.futures`` with
``workers`` spawned processes; the default, no extra dependency), and Dask distributed
(``dask="local"`` starts a ``LocalCluster`` of ``workers`` single-threaded processes;
``dask="tcp://host:8786"`` connects to a running scheduler, whose workers must see the same
workload files, e.g. on a shared file system; ``dask="path/scheduler.json"`` to the one that
``dask scheduler --scheduler-file`` announced there). On Dask, short runs are batched per task
(``batch`` runs of one workload, or by default about a second of estimated work, and at most a
quarter of a worker's share) so the scheduling overhead stays small.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform as _platform
import socket
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bbopt.analysis.store import Store, canonical, check_name, gzip_csv, run_hash
from bbopt.analysis.sweep_inputs import (
    _file_sha,
    _measured_shares,
    _part,
    _shares,
    _sized_bb,
    _workload,
    build_platform,
    platform_fingerprint,
    resolve_platform,
    split_parts,
    workload_seed,
)
from bbopt.analysis.sweep_schedule import (
    cost_batches,
    estimate,
    longest_first,
    worker_part,
    write_prepared,
)
from bbopt.analysis.sweep_spec import Cell, SweepSpec
from bbopt.analysis.workers import remove_orphan_worker_inputs, worker_inputs_prefix
from bbopt.core import Job
from bbopt.errors import InputError
from bbopt.runs import measurement_interval, with_budget_mode


@dataclass(frozen=True)
class RunTask:
    """Everything a worker needs for one run (picklable, small)."""

    hash: str
    workload_spec: str  # canonical JSON of the workload's spec
    workload_seed: int
    workload_sha: str
    part: int | None
    platform_spec: str  # canonical JSON
    policy: str
    options: dict[str, Any]
    execution: dict[str, Any]
    tick: float | None
    warmup: float
    cooldown: float
    params: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)
    #: the workload's entitlements (``omfs-entities``): fair-share metrics are measured
    shares: dict[str, float] | None = None
    #: estimated CPU seconds (:func:`~bbopt.analysis.sweep_schedule.estimate`): runs are
    #: handed out longest first
    cost: float = 0.0
    #: a directory where the driver left the prepared workload (``<workload_sha>.pickle``)
    prepared: str | None = None
    #: plug-in modules the worker imports first (the spec's ``plugins``)
    plugins: tuple[str, ...] = ()


@dataclass
class SweepReport:
    """What a sweep did: cells in the grid, already done, run now, failed."""

    total: int = 0
    skipped: int = 0
    ran: int = 0
    failed: int = 0
    wall_time: float = 0.0
    hashes: list[str] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


# --------------------------------------------------------------------------------------------
# planning


def plan(spec: SweepSpec) -> list[RunTask]:
    """The run tasks of every cell of ``spec`` (workloads prepared once per seed, to hash)."""
    import bbopt
    from bbopt.policies import policy_options

    platforms: dict[tuple[str, int | None], tuple[str, dict[str, Any]]] = {}
    tasks = []
    checked: set[tuple[str, str]] = set()  # (policy label, workload hash) whose shares passed
    for cell in spec.cells():
        wspec = spec.workloads[cell.workload]
        wjson = canonical(wspec)
        wseed = workload_seed(wspec, cell.seed)
        jobs, wsha = _workload(wjson, wseed)
        pkey = (cell.platform, cell.seed if _sized_bb(spec.platforms[cell.platform]) else None)
        if pkey not in platforms:
            platforms[pkey] = platform_fingerprint(
                resolve_platform(spec, cell.platform, cell.seed), spec.base)
        accepted = policy_options(cell.policy.name)
        options = with_budget_mode(cell.policy.name,
                                   {**cell.policy.options, **cell.budget_options},
                                   spec.budget_mode)
        if "seed" in accepted and "seed" not in options:
            options["seed"] = cell.seed
        if "shares" in options and (cell.policy.label, wsha) not in checked:
            _check_shares(spec, cell.policy.label, options["shares"], jobs)
            checked.add((cell.policy.label, wsha))
        shares = _shares(wjson, wseed)
        if shares is not None and "shares" in accepted and "shares" not in options:
            options["shares"] = shares  # the workload's entitlements (Zvi & Oren)
        pjson, pident = platforms[pkey]
        inputs = {
            "bbopt": bbopt.__version__,
            "workload": {"content_sha256": wsha, "split": wspec.get("split"),
                         "part": cell.part},
            "platform": pident,
            "policy": cell.policy.name,
            "options": options,
            "seed": cell.seed,
            "budget": cell.budget_options,
            "execution": spec.executions[cell.execution],
            "tick": spec.tick,
            "interval": {"warmup": spec.warmup, "cooldown": spec.cooldown},
        }
        h = run_hash(inputs)
        source = ({"file": wspec["file"], "file_sha256": _file_sha(wspec["file"])}
                  if "file" in wspec else {"generator": wspec["generator"]})
        prov = {"hash_inputs": inputs,
                "workload": {**source, "transforms": wspec.get("transforms"),
                             "first": wspec.get("first"), "seed": wseed,
                             "content_sha256": wsha, "jobs": len(jobs),
                             "split": wspec.get("split"), "part": cell.part}}
        part = _part(wjson, wseed, cell.part)
        try:  # an empty measurement interval is refused before the sweep starts
            measurement_interval(part, spec.warmup, spec.cooldown)
        except InputError as exc:
            where = cell.workload if cell.part is None else f"{cell.workload} part {cell.part}"
            raise InputError(f"{exc.reason} in workload {where}", source=spec.source,
                             field="warmup") from None
        tasks.append(RunTask(h, wjson, wseed, wsha, cell.part, pjson, cell.policy.name,
                             options, spec.executions[cell.execution], spec.tick,
                             spec.warmup, spec.cooldown, cell.params(), prov,
                             shares=_measured_shares(options, shares),
                             cost=estimate(len(part), cell.policy.name, accepted),
                             plugins=tuple(spec.plugins)))
    seen: set[str] = set()
    unique = []
    for t in tasks:  # two cells that are the same run (e.g. equal labels of one policy)
        if t.hash not in seen:
            seen.add(t.hash)
            unique.append(t)
    return unique


def _check_shares(spec: SweepSpec, label: str, shares: Any, jobs: Sequence[Job]) -> None:
    """Refuse a policy's ``shares`` that entitle no entity of the workload, as ``simulate`` and
    ``compare`` refuse such a ``--shares`` file (:func:`bbopt.workloads.shares.check_entities`),
    naming the policy's field in the spec."""
    from bbopt.workloads.shares import check_entities, parse_shares

    where = f"policies[label={label}].options.shares"
    try:
        check_entities(parse_shares(shares), jobs, where)
    except InputError as exc:
        raise InputError(exc.reason, source=spec.source, field=where) from None


# --------------------------------------------------------------------------------------------
# running one task (in a worker)


def run_task(task: RunTask) -> dict[str, Any]:
    """Simulate one run; a dict with ``metrics`` and ``jobs_csv_gz``, or with ``error``."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0, c0 = time.perf_counter(), time.process_time()
    try:
        from bbopt.registry import load_plugins
        from bbopt.runs import RunSpec, run
        from bbopt.simulation.result import BATSIM_COLUMNS, BBOPT_COLUMNS

        load_plugins(task.plugins, "plugins")
        jobs = list(worker_part(task.workload_sha, task.prepared, task.part,
                                lambda: _workload(task.workload_spec, task.workload_seed),
                                lambda whole: split_parts(task.workload_spec, whole)))
        if not jobs:
            raise InputError(f"part {task.part} of the workload is empty", field="split")
        ex = dict(task.execution)
        widest: list[dict[str, Any]] = []  # the run's largest Pareto set, for the report
        record = run(RunSpec(workload=jobs, platform=build_platform(task.platform_spec),
                             policy=task.policy, options=task.options, execution=ex.pop("name"),
                             execution_options=ex, tick=task.tick, warmup=task.warmup,
                             cooldown=task.cooldown, shares=task.shares,
                             name=str(task.params.get("workload", "workload"))),
                     on_decision=lambda s, d: _keep_widest(widest, s, d))
        result, metrics = record.result, record.metrics
        csv = gzip_csv(result.rows(), BATSIM_COLUMNS + BBOPT_COLUMNS)
        return {"hash": task.hash, "metrics": metrics, "jobs_csv_gz": csv,
                "pareto": widest[0] if widest else None,
                "curves": record.model.curves(result) if hasattr(record.model, "curves")
                else None,
                "started_at": started, "wall_time": time.perf_counter() - t0,
                "cpu_time": time.process_time() - c0,
                "host": socket.gethostname(), "part_jobs": len(jobs)}
    except Exception as exc:  # a failed run is recorded, not fatal to the sweep
        return {"hash": task.hash, "error": f"{type(exc).__name__}: {exc}",
                "traceback": traceback.format_exc(), "started_at": started,
                "wall_time": time.perf_counter() - t0, "host": socket.gethostname()}


def _keep_widest(widest: list[dict[str, Any]], state: Any, decision: Any) -> None:
    """Keep the decision with the most alternatives (a window policy's Pareto set), as JSON
    values, with its time: ``bbopt report`` draws it."""
    alts = decision.alternatives
    if len(alts) > 1 and (not widest or len(alts) > len(widest[0]["alternatives"])):
        widest[:] = [{"time": float(state.time),
                      "alternatives": json.loads(json.dumps(list(alts), default=float))}]


def run_batch(tasks: list[RunTask]) -> list[dict[str, Any]]:
    return [run_task(t) for t in tasks]


# --------------------------------------------------------------------------------------------
# the driver


def _environment() -> dict[str, Any]:
    import numpy

    import bbopt

    env = {"bbopt_version": bbopt.__version__, "python": sys.version.split()[0],
           "numpy": numpy.__version__, "system": _platform.platform()}
    from importlib.metadata import PackageNotFoundError, version

    for mod in ("ortools", "pymoo", "pulp", "scipy", "pandas"):
        with contextlib.suppress(PackageNotFoundError):  # not installed: left out
            env[mod] = version(mod)
    return env


def _summary(task: RunTask, out: Mapping[str, Any], spec: SweepSpec,
             env: Mapping[str, Any]) -> dict[str, Any]:
    prov = {**env, **task.provenance}
    prov["workload"] = {**prov.get("workload", {}), "part_jobs": out.get("part_jobs")}
    prov.update(host=out.get("host"), started_at=out.get("started_at"),
                finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
                wall_time=out.get("wall_time"), cpu_time=out.get("cpu_time"))
    return {"hash": task.hash, "sweep": spec.name, "params": task.params,
            "policy": task.policy, "options": task.options, "metrics": out["metrics"],
            "reference": spec.reference, "report_metrics": list(spec.metrics),
            "provenance": prov, **({"pareto": out["pareto"]} if out.get("pareto") else {}),
            **({"curves": out["curves"]} if out.get("curves") else {})}


def batches(tasks: list[RunTask], size: int) -> list[list[RunTask]]:
    """Tasks grouped by workload (a worker builds each once), in chunks of ``size``."""
    groups: dict[tuple[str, int], list[RunTask]] = {}
    for t in tasks:
        groups.setdefault((t.workload_spec, t.workload_seed), []).append(t)
    out = []
    for group in groups.values():
        out.extend(group[i:i + size] for i in range(0, len(group), size))
    return out


def run_sweep(spec: SweepSpec, out: str | Path, *, executor: str = "processes",
              workers: int | None = None, dask: str | None = None, batch: int | None = None,
              progress: bool | float = True, spec_text: str | None = None,
              on_result: Callable[[RunTask, dict[str, Any]], None] | None = None
              ) -> SweepReport:
    """Run every missing cell of ``spec`` into the store at ``out``.

    ``executor``: ``"serial"`` or ``"processes"`` (``workers`` processes, default: the CPU
    count); ``dask``: ``"local"``, a scheduler address or a scheduler file ``*.json``
    (overrides ``executor``). ``batch``:
    runs per task (default 1 for processes; for Dask, about a second of estimated work).
    ``progress``: a bar with the time left (``True``), nothing (``False``), or a number:
    plain lines every that many seconds (:class:`bbopt.progress.ProgressLog`, for batch jobs'
    logs).
    """
    t_start = time.perf_counter()
    check_name(spec.name)  # (before anything is written: the name names files in the store)
    store = Store(out)
    store.root.mkdir(parents=True, exist_ok=True)
    store.clean_temporaries()
    if spec_text is not None:
        store.save_spec(spec.name, spec_text)
    tasks = plan(spec)
    report = SweepReport(total=len(tasks), hashes=[t.hash for t in tasks])
    todo = [t for t in tasks if not store.done(t.hash)]
    report.skipped = len(tasks) - len(todo)
    env = _environment()
    by_hash = {t.hash: t for t in todo}
    bar = _bar(len(todo), report.skipped, progress)

    def receive(result: dict[str, Any]) -> None:
        task = by_hash[result["hash"]]
        if "error" in result:
            report.failed += 1
            report.failures.append(f"{task.params}: {result['error']}")
            store.write_failure(task.hash, {"params": task.params, "options": task.options,
                                            **result})
        else:
            store.write_run(task.hash, _summary(task, result, spec, env),
                            result["jobs_csv_gz"])
            report.ran += 1
        if on_result is not None:
            on_result(task, result)
        if bar is not None:
            bar.update(1)
            if report.failed:
                bar.set_postfix(failed=report.failed)

    if dask is None and executor not in ("serial", "processes"):
        raise InputError(f"unknown executor {executor!r}; known: serial, processes",
                         field="executor")
    try:
        with _prepared_for(todo, dask is None and executor == "processes"
                           or dask == "local") as shipped:
            if dask is not None:
                _run_dask(shipped, dask, workers, batch, receive)
            elif executor == "serial" or not shipped:  # (nothing to hand out: no pool)
                for t in todo:
                    receive(run_task(t))
            else:
                _run_processes(shipped, workers, batch, receive)
    finally:
        if bar is not None:
            bar.close()
    report.wall_time = time.perf_counter() - t_start
    return report


@contextlib.contextmanager
def _prepared_for(todo: list[RunTask], local: bool):
    """``todo`` longest first; for local workers, each task names a private temporary
    directory where the driver left its prepared workload (removed at the end)."""
    todo = longest_first(todo, lambda t: t.cost)
    if not local or not todo:
        yield todo
        return
    import tempfile
    from dataclasses import replace

    from bbopt.signals import deferred

    remove_orphan_worker_inputs()  # (left by a driver killed with SIGKILL)
    # An interrupt between the folder's creation and its clean-up's registration (inside
    # ``mkdtemp``) would leave it behind: it is held until the folder has its clean-up.
    with deferred():
        folder = tempfile.TemporaryDirectory(prefix=worker_inputs_prefix())
    with folder as tmp:
        first = {t.workload_sha: t for t in reversed(todo)}  # one task per workload
        for sha, t in first.items():
            write_prepared(Path(tmp), sha, _workload(t.workload_spec, t.workload_seed)[0])
        yield [replace(t, prepared=tmp) for t in todo]


def _bar(n: int, skipped: int, show: bool | float):
    """The sweep's progress (:mod:`bbopt.progress`): ``True`` a bar on a terminal (else log
    lines), a number: log lines that many seconds apart, ``False``: nothing."""
    from bbopt.progress import ProgressLog, progress

    if show is False or show is None or n == 0:
        return None
    if show is not True:  # seconds between plain log lines (batch jobs: no terminal)
        return ProgressLog(n, skipped, float(show))
    return progress(n, unit="run", desc="sweep", skipped=skipped, count_failed=True)


def _chunks(todo: list[RunTask], batch: int | None, n_workers: int) -> list[list[RunTask]]:
    """Tasks of ``batch`` runs of one workload, or (by default) batches of about a second by
    estimated cost (:func:`~bbopt.analysis.sweep_schedule.cost_batches`); longest first."""
    if batch is not None:
        return longest_first(batches(todo, batch), lambda c: sum(t.cost for t in c))
    return cost_batches(todo, lambda t: t.cost, n_workers)


def _run_processes(todo: list[RunTask], workers: int | None, batch: int | None,
                   receive: Callable[[dict[str, Any]], None]) -> None:
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    from bbopt.signals import deferred

    workers = workers or os.cpu_count() or 1
    chunks = _chunks(todo, batch or 1, workers)  # a pool's task costs well under 1 ms
    ctx = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=ctx)
    finished = False
    try:
        with deferred():  # (each submit may start a worker: never cut one short)
            order = {pool.submit(run_batch, c): k for k, c in enumerate(chunks)}
        pending = set(order)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for fut in sorted(done, key=order.__getitem__):  # in the order handed out
                for result in fut.result():
                    receive(result)
        finished = True
    finally:  # interrupted: do not wait for the runs in flight (they are redone next time)
        if not finished:
            _terminate_workers(pool)
        pool.shutdown(wait=finished, cancel_futures=True)


def _terminate_workers(pool) -> None:
    """Stop a process pool's workers now (else the interpreter's exit waits for their runs)."""
    if hasattr(pool, "terminate_workers"):  # Python >= 3.14
        pool.terminate_workers()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        with contextlib.suppress(Exception):
            proc.terminate()


def _run_dask(todo: list[RunTask], address: str, workers: int | None, batch: int | None,
              receive: Callable[[dict[str, Any]], None]) -> None:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise InputError("Dask execution needs the cluster extra: pip install "
                         "'bbopt[cluster]'", field="--dask") from None
    cluster = None
    if address == "local":
        cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                               processes=True, dashboard_address=None)
        client = Client(cluster)
    elif address.endswith(".json"):  # dask scheduler --scheduler-file F (batch-job setups)
        if not Path(address).is_file():
            raise InputError(f"no scheduler file {address}", field="--dask")
        client = Client(scheduler_file=address)
    else:
        client = Client(address)
    try:
        n_workers = max(1, len(client.scheduler_info().get("workers", {})) or (workers or 1))
        futures = [client.submit(run_batch, c, pure=False)
                   for c in _chunks(todo, batch, n_workers)]
        for fut in as_completed(futures):
            for result in fut.result():
                receive(result)
            fut.release()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def dask_overhead(address: str = "local", n: int = 200, workers: int | None = None
                  ) -> float:
    """Seconds of Dask scheduling per task: ``n`` trivial tasks through the scheduler."""
    from distributed import Client, LocalCluster

    cluster = (LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                            dashboard_address=None) if address == "local" else None)
    client = Client(cluster if cluster is not None else address)
    try:
        client.gather(client.map(_noop, range(10), pure=False))
        t0 = time.perf_counter()
        client.gather(client.map(_noop, range(n), pure=False))
        return (time.perf_counter() - t0) / n
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _noop(x: int) -> int:
    return x


def iter_cells(spec: SweepSpec) -> Iterable[Cell]:
    return iter(spec.cells())

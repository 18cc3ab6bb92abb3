"""Replay a trace through a real Slurm (``bbopt slurm replay``).

Each job of the trace becomes a ``sleep`` of its scaled runtime, submitted at its scaled submit
time with its walltime as ``--time`` (whole minutes, rounded up; the exact scaled walltime rides
in the comment) and its BB as ``bb`` licenses (:mod:`bbopt.slurm.pool`). Either Slurm's own
scheduler starts the jobs (``sched/backfill`` with the license pool), or they are submitted held
and the bridge (:mod:`bbopt.slurm.bridge`) starts them with a bbopt policy. The real schedule,
read back from Slurm's job completion records, comes out as a
:class:`~bbopt.SimulationResult` (so as bbopt's ``jobs.csv`` and its metrics), with times in
scaled seconds from the replay's origin and the trace's job ids. A replay is described by a
:class:`~bbopt.runs.RunSpec` like any run (:func:`replay_spec`, :func:`run_replay`): the same
workload, option, unit and budget-mode vocabulary, and the same metric names.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bbopt.core import Job, JobState, Platform
from bbopt.errors import InputError
from bbopt.runs import RunRecord, RunSpec
from bbopt.simulation.result import SimulationResult
from bbopt.slurm.bridge import Bridge
from bbopt.slurm.cluster import LocalSlurm, SlurmError
from bbopt.slurm.commands import SlurmCommands, SlurmJob, parse_time
from bbopt.slurm.pool import BB_LICENSE, DEFAULT_UNIT, comment_for, licenses_for, quantize

SCHEDULERS = ("slurm", "bridge")


def scale_workload(jobs: Sequence[Job], speedup: float, *, nodes: int | None = None,
                   trace_nodes: int | None = None) -> list[Job]:
    """The jobs with time divided by ``speedup`` (submits from 0) and, if ``nodes`` and
    ``trace_nodes`` are given, node counts scaled by ``nodes / trace_nodes`` (rounded, >= 1)."""
    if not speedup > 0:
        raise InputError(f"speed-up must be > 0, got {speedup!r}", field="speedup")
    if not jobs:
        return []
    t0 = min(j.submit for j in jobs)
    out = []
    for j in jobs:
        n = j.nodes
        if nodes is not None and trace_nodes:
            n = min(nodes, max(1, round(j.nodes * nodes / trace_nodes)))
        out.append(dataclasses.replace(
            j, submit=(j.submit - t0) / speedup, walltime=j.walltime / speedup,
            runtime=None if j.runtime is None else j.runtime / speedup, nodes=n))
    return out


def read_jobcomp(path: str | Path) -> dict[str, dict[str, str]]:
    """``jobcomp/filetxt`` records by Slurm job id (``key=value`` fields)."""
    out: dict[str, dict[str, str]] = {}
    p = Path(path)
    if not p.exists():
        return out
    for line in p.read_text().splitlines():
        rec = dict(item.split("=", 1) for item in line.split() if "=" in item)
        if "JobId" in rec:
            out[rec["JobId"]] = rec
    return out


def submit_workload(commands: SlurmCommands, jobs: Sequence[Job], *, origin: float,
                    hold: bool, bb_unit: float = DEFAULT_UNIT,
                    stop: threading.Event | None = None,
                    submitted: dict[str, str] | None = None) -> dict[str, str]:
    """Submit ``jobs`` at ``origin + job.submit`` (Unix seconds), in submit order.

    Returns trace id -> Slurm job id (also filled into ``submitted`` as it goes).
    """
    submitted = {} if submitted is None else submitted
    for job in sorted(jobs, key=lambda j: j.submit):
        delay = origin + job.submit - time.time()
        if delay > 0 and stop is not None and stop.wait(delay):
            break
        if delay > 0 and stop is None:
            time.sleep(delay)
        runtime = job.walltime if job.runtime is None else min(job.runtime, job.walltime)
        submitted[job.id] = commands.submit(
            name=f"bbopt-{job.id}", seconds=runtime, walltime=job.walltime, nodes=job.nodes,
            licenses={BB_LICENSE: licenses_for(job.bb, bb_unit)}, hold=hold,
            comment=comment_for(job))
    return submitted


def collect(jobs: Sequence[Job], ids: dict[str, str], jobcomp: dict[str, dict[str, str]], *,
            origin: float, platform: Platform, policy: str, node_names: Sequence[str],
            workload_name: str = "slurm") -> SimulationResult:
    """The real schedule as a :class:`~bbopt.SimulationResult` (times from ``origin``).

    Slurm records whole seconds, so starts and ends are known to within a second (a start is
    never put before the job's submission).
    """
    index = {n: i for i, n in enumerate(node_names)}
    result = SimulationResult(list(jobs), platform, policy, workload_name)
    from bbopt.slurm.commands import expand_hostlist

    for k, job in enumerate(jobs):
        rec = jobcomp.get(ids.get(job.id, ""))
        if rec is None:
            continue
        start, end = parse_time(rec.get("StartTime", "")), parse_time(rec.get("EndTime", ""))
        if start is None or end is None:
            continue
        # Slurm keeps whole seconds: a start truncated to before the submission is the submission
        result.start[k] = max(start - origin, job.submit)
        result.end[k] = max(end - origin, result.start[k])
        result.state[k] = (JobState.KILLED if rec.get("JobState") == "TIMEOUT"
                           else JobState.FINISHED)
        result.allocation[k] = tuple(sorted(index[n] for n in
                                            expand_hostlist(rec.get("NodeList", ""))
                                            if n in index))
        if rec.get("JobState") not in ("COMPLETED", "TIMEOUT"):
            result.reasons[job.id] = rec.get("JobState", "")
    return result


def replay(jobs: Sequence[Job], platform: Platform, *, scheduler: str = "slurm",
           policy: str = "fcfs-bb", options: dict[str, Any] | None = None,
           bb_unit: float = DEFAULT_UNIT, interval: float = 1.0, tick: float | None = None,
           directory: str | Path | None = None, scheduler_parameters: dict | None = None,
           timeout: float | None = None, workload_name: str = "slurm",
           progress: bool = False) -> SimulationResult:
    """Run the (already scaled) ``jobs`` on a fresh local Slurm shaped like ``platform``.

    ``scheduler="slurm"``: Slurm's own backfill; ``"bridge"``: the bridge with ``policy``
    (polling every ``interval`` seconds; with ``tick``, deciding every ``tick`` seconds).
    Jobs that can never fit ``platform`` are left out (Slurm would refuse them). BB requests
    are rounded up to whole licenses of ``bb_unit`` bytes; the returned result holds the jobs
    as Slurm saw them (see :func:`bbopt.slurm.pool.quantize`). ``progress``: the jobs ended
    so far, read every poll (:func:`ended`), as a bar on a terminal or a line every N seconds
    in a log (:mod:`bbopt.progress`).
    """
    from bbopt.progress import progress as display

    if scheduler not in SCHEDULERS:
        raise InputError(f"scheduler must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}",
                         field="scheduler")
    jobs = [quantize(j, bb_unit) for j in jobs if platform.why_never_fits(j) is None]
    licenses = int(math.floor(platform.bb / bb_unit + 1e-9))
    cluster = LocalSlurm(platform.nodes, bb_licenses=licenses, directory=directory,
                         scheduler_parameters=scheduler_parameters)
    horizon = max((j.submit for j in jobs), default=0.0) + sum(
        (j.runtime if j.runtime is not None else j.walltime) for j in jobs) + 60
    timeout = timeout if timeout is not None else horizon * 2 + 120
    with cluster:
        commands = SlurmCommands(env=cluster.env)
        node_names = cluster.node_names
        origin = math.ceil(time.time()) + 1.0  # Slurm's clock has whole seconds
        ids: dict[str, str] = {}
        stop = threading.Event()
        errors: list[BaseException] = []

        def submitter() -> None:
            try:
                submit_workload(commands, jobs, origin=origin, hold=scheduler == "bridge",
                                bb_unit=bb_unit, stop=stop, submitted=ids)
            except BaseException as exc:  # reported by the main thread
                errors.append(exc)

        thread = threading.Thread(target=submitter, daemon=True)
        thread.start()
        began = time.monotonic()
        bar = display(len(jobs), unit="job", desc="replay", enabled=progress)
        try:
            if scheduler == "bridge":
                bridge = Bridge(commands, policy, options, state_dir=cluster.directory / "bridge",
                                interval=interval, tick=tick, bb_unit=bb_unit)
                bridge.origin = origin

                def finished() -> bool:
                    if progress:
                        ended(bar, commands.jobs(), len(ids))
                    return bool(errors) or time.monotonic() - began > timeout or (
                        not thread.is_alive() and bridge.observe().active == 0)

                bridge.run(stop=finished)
            else:
                while True:
                    time.sleep(interval)
                    if progress or not thread.is_alive():
                        active = ended(bar, commands.jobs(), len(ids))
                        if not thread.is_alive() and not errors and not active:
                            break
                    if errors or time.monotonic() - began > timeout:
                        break
        finally:
            bar.close()
            stop.set()
            thread.join(timeout=30)
        if errors:
            raise SlurmError(f"submitting the workload failed: {errors[0]}")
        time.sleep(0.5)  # the last completion records
        jobcomp = read_jobcomp(cluster.jobcomp)
        name = policy if scheduler == "bridge" else "slurm-backfill"
        return collect(jobs, ids, jobcomp, origin=origin, platform=platform, policy=name,
                       node_names=node_names, workload_name=workload_name)


#: The ``squeue`` states of a job that has not ended.
ACTIVE = ("PENDING", "RUNNING", "COMPLETING", "CONFIGURING")


def ended(bar: Any, squeue: Sequence[SlurmJob], submitted: int) -> int:
    """Advance ``bar`` to the jobs ended so far (those ``submitted`` less those ``squeue``
    shows waiting, held or running) and return how many have not ended."""
    active = sum(j.state in ACTIVE for j in squeue)
    done = max(0, submitted - active)
    if done > bar.n:
        bar.update(done - bar.n)
    return active


def replay_spec(spec: RunSpec, *, nodes: int = 16, speedup: float = 1.0,
                bb_pool: float | None = None, trace_nodes: int | None = None) -> RunSpec:
    """``spec`` as a replay runs it: its first jobs (``spec.first``, in submission order) read
    with :func:`bbopt.runs.load`, node counts scaled to ``nodes`` and times sped up
    ``speedup`` times (:func:`scale_workload`), on a ``nodes``-node platform.

    Node counts scale by ``nodes / trace_nodes`` (the SWF header's MaxNodes/MaxProcs unless
    given, else the widest job). BB: ``spec.bb="auto"`` gives a trace without BB requests
    Kopanski & Rzadca's log-normal per-processor model (Section 4.1), drawn with ``spec.seed``
    on the scaled node counts; the pool (``bb_pool`` bytes) defaults to theirs per node, 480
    GB / 96 nodes = 5 GB per node. The policy and its options are checked here (units,
    budget mode), and the measurement window (``spec.warmup``, ``spec.cooldown``, in scaled
    time) holds a submission, before any cluster starts.
    """
    from bbopt.runs import check_policies, load, measurement_interval, with_budget_mode
    from bbopt.workloads.bb import with_lognormal_bb

    check_policies(spec, [spec.policy])
    loaded, w = load(replace(spec, bb="none", platform=None))
    raw = sorted(loaded.workload, key=lambda j: j.submit)
    trace_nodes = trace_nodes or (w.max_nodes if w is not None else None) or \
        max((j.nodes for j in raw), default=1)
    jobs = scale_workload(raw, speedup, nodes=nodes, trace_nodes=trace_nodes)
    # the window measured, in scaled time: one holding no submission is refused here
    measurement_interval(jobs, spec.warmup, spec.cooldown)
    if spec.bb == "lognormal" or (spec.bb == "auto" and not any(j.bb > 0 for j in jobs)):
        jobs = with_lognormal_bb(jobs, spec.seed)
    pool = bb_pool if bb_pool is not None else 5e9 * nodes
    return replace(loaded, workload=jobs, platform=Platform(nodes=nodes, bb=pool,
                                                            name=f"slurm-{nodes}"),
                   options=with_budget_mode(spec.policy, spec.options, spec.budget_mode),
                   execution=None, execution_options={})


def run_replay(spec: RunSpec, *, scheduler: str = "slurm", bb_unit: float = DEFAULT_UNIT,
               interval: float = 1.0, directory: str | Path | None = None,
               scheduler_parameters: dict | None = None, timeout: float | None = None,
               progress: bool = False) -> RunRecord:
    """:func:`replay` of ``spec`` (:func:`replay_spec`: its jobs already scaled, its options
    checked) and the run's metrics as :func:`bbopt.run` names them (:func:`bbopt.runs.measure`:
    the job metrics, over ``spec``'s measurement interval when it has one)."""
    from bbopt.runs import execution_model, measure

    result = replay(spec.workload, spec.platform, scheduler=scheduler, policy=spec.policy,
                    options=dict(spec.options), bb_unit=bb_unit, interval=interval,
                    tick=spec.tick, directory=directory,
                    scheduler_parameters=scheduler_parameters, timeout=timeout,
                    workload_name=spec.name or "slurm", progress=progress)
    model = execution_model(spec)  # (Slurm runs each job for its runtime: the rigid model)
    return RunRecord(spec, result, model, measure(result, model, spec))

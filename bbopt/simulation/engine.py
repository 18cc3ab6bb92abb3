"""The event-driven simulation engine: timed events, a checked resource ledger, and nothing
else.

At every batch of simultaneous events (finishes first, then submissions) and, optionally, every
``tick`` seconds while jobs wait, the engine builds a :class:`~bbopt.core.ClusterState`, asks the
policy for a :class:`~bbopt.core.Decision` exactly as :func:`bbopt.decide` would, **validates** it
(only waiting jobs, none twice, never more nodes or burst buffer than exist, node sets free and in
range; a job asking local SSD only on nodes with that much SSD -- without a node set it gets the
free nodes with the smallest admissible SSDs; under an I/O-aware policy, never more bandwidth
than a link of the platform's I/O tree has) and applies it. An invalid decision is a bug of the
policy and raises :class:`~bbopt.errors.InvalidDecision` naming the job. On a platform with
named BB nodes (:attr:`~bbopt.core.Platform.bb_nodes`) a start whose per-node BB pieces cannot
be placed is not an error: it is refused and the job keeps waiting
(:mod:`bbopt.simulation.bb_nodes`).

When started jobs end is the business of the execution model (:mod:`bbopt.simulation.execution`):
under the default rigid model jobs run for ``min(runtime, walltime)`` and a job whose runtime
exceeds its walltime is killed at the walltime. A job that can never fit the platform is
rejected at submission with the reason (under an I/O-aware policy, also a job that could not
get its bandwidth on an empty machine: Herbein et al., end of Section 3.4). Every submitted job
ends as finished, killed or rejected. (Kopanski & Rzadca, Section 4.1, without the I/O side
effects.)
"""

from __future__ import annotations

import heapq
import math
import time as _time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bbopt.core import ClusterState, Decision, Job, Platform, RunningJob
from bbopt.errors import InputError, InvalidDecision
from bbopt.policies.registry import Policy, make_policy
from bbopt.simulation.bb_nodes import BBNodeLedger
from bbopt.simulation.execution import ExecutionModel, make_execution_model
from bbopt.simulation.result import REJECTED, SimulationResult


def simulate(
    jobs: Iterable[Job],
    platform: Platform | None = None,
    policy: str | Policy = "fcfs-bb",
    *,
    options: dict[str, Any] | None = None,
    tick: float | None = None,
    progress: bool = False,
    on_decision: Callable[[ClusterState, Decision], None] | None = None,
    workload_name: str = "workload",
    execution: str | ExecutionModel | None = None,
) -> SimulationResult:
    """Replay ``jobs`` on ``platform`` under ``policy`` and return the per-job outcome.

    ``policy`` is a registered name (with ``options`` for its constructor) or a policy object.
    ``tick``: also schedule every ``tick`` seconds while jobs wait (the paper's example uses a
    one-minute period); scheduling always runs after each batch of simultaneous events.
    ``progress``: show a progress bar once the run has taken more than a second.
    ``on_decision(state, decision)`` observes every decision (for tests and tracing).
    ``execution``: the execution model (default ``"rigid"``), by name or as an object.
    """
    platform = platform or Platform.kopanski()
    pol = make_policy(policy, **(options or {}))
    jobs = list(jobs)
    ids = set()
    for job in jobs:
        if job.id in ids:
            raise InputError(f"duplicate job id {job.id!r}", field="id")
        ids.add(job.id)
    if tick is not None and not (tick > 0 and math.isfinite(tick)):
        raise InputError(f"tick must be a positive number of seconds, got {tick!r}", field="tick")
    order = sorted(range(len(jobs)), key=lambda k: (jobs[k].submit, k))
    model = make_execution_model(execution)
    return _Engine(jobs, order, platform, pol, tick, progress, on_decision, workload_name,
                   model).run()


class _Engine:
    def __init__(self, jobs: list[Job], order: Sequence[int], platform: Platform, policy: Policy,
                 tick: float | None, progress: bool,
                 on_decision: Callable[[ClusterState, Decision], None] | None,
                 workload_name: str, model: ExecutionModel) -> None:
        self.jobs = jobs
        self.order = order
        self.platform = platform
        self.policy = policy
        self.tick = tick
        self.progress = progress
        self.on_decision = on_decision
        self.result = SimulationResult(jobs, platform, getattr(policy, "name", str(policy)),
                                       workload_name)
        self.index = {job.id: k for k, job in enumerate(jobs)}
        self.model = model

    def run(self) -> SimulationResult:
        jobs, platform, res = self.jobs, self.platform, self.result
        order, n = self.order, len(self.order)
        index = self.index
        model = self.model
        model.reset(jobs, platform)
        next_end = model.next_time
        queue: dict[str, Job] = {}
        running: list[RunningJob] = []  # sorted by expected end
        running_keys: list[float] = []
        free_nodes = list(range(platform.nodes))  # a heap of free node ids
        used_n = 0
        used_b = 0.0
        memory: Any = {}
        tol = platform.bb * 1e-9
        cap_n, cap_b = platform.nodes, platform.bb
        tick = self.tick
        next_tick = math.inf
        decide = self.policy.decide
        on_decision = self.on_decision
        decision_times = res.decision_times
        decision_stats = res.decision_stats
        start_a, end_a, state_a, alloc_a = res.start, res.end, res.state, res.allocation
        bar = _progress(n, self.progress)
        # Under an I/O-aware policy, the bandwidth it allocates on every link is checked too.
        topo = platform.topology
        ledger = (topo.ledger() if getattr(self.policy, "io_aware", False)
                  and hasattr(topo, "ledger") else None)
        # Named BB nodes: a start whose per-node pieces cannot be placed is refused (the job
        # keeps waiting); see bbopt.simulation.bb_nodes.
        bbn = BBNodeLedger(platform) if platform.bb_nodes is not None else None
        done = 0
        ptr = 0
        wall0 = _time.perf_counter()
        while True:
            t = next_end()
            if ptr < n:
                t = min(t, jobs[order[ptr]].submit)
            if tick is not None and queue and next_tick < t:
                t = next_tick
            if t == math.inf:
                break
            ticked = tick is not None and t == next_tick
            before = done + ptr
            # Finishes first: a job ending at t frees its resources for jobs starting at t.
            for k, final in model.finish(t):
                state_a[k] = final
                end_a[k] = t
                job = jobs[k]
                key = start_a[k] + job.walltime
                i = bisect_left(running_keys, key)
                while running[i].job is not job:
                    i += 1
                del running[i]
                del running_keys[i]
                used_n -= job.nodes
                used_b -= job.bb
                for node in alloc_a[k]:
                    heapq.heappush(free_nodes, node)
                if ledger is not None:
                    ledger.release(job, alloc_a[k])
                if bbn is not None:
                    bbn.release(job)
                done += 1
            while ptr < n and jobs[order[ptr]].submit == t:
                k = order[ptr]
                ptr += 1
                job = jobs[k]
                why = platform.why_never_fits(job)
                if why is None and ledger is not None:  # bandwidth on the I/O tree
                    why = ledger.why_never_fits(job)
                if why is None:
                    queue[job.id] = job
                else:
                    state_a[k] = REJECTED
                    res.reasons[job.id] = why
                    done += 1
            if bar is not None and done - bar.n >= 256:
                bar.update(done - bar.n)
            if tick is not None:
                next_tick = (math.floor(t / tick) + 1) * tick if queue else math.inf
            if not queue or (done + ptr == before and not ticked):
                continue  # nothing the policy could see has changed (e.g. an I/O phase change)
            state = ClusterState(t, platform, tuple(running), tuple(queue.values()), memory)
            c0 = _time.perf_counter()
            decision = decide(state)
            decision_times.append(_time.perf_counter() - c0)
            decision_stats.append(decision.stats)
            if on_decision is not None:
                on_decision(state, decision)
            if decision.memory is not None:
                memory = decision.memory
            if decision.preempt:
                raise InvalidDecision("the rigid execution model cannot preempt jobs",
                                      job_id=decision.preempt[0], time=t)
            free_n = cap_n - used_n
            free_b = cap_b - used_b
            refused: dict[str, Job] = {}
            for s in decision.start:
                job = queue.pop(s.job_id, None)
                if job is None:
                    why = ("started twice" if s.job_id in index
                           and start_a[index[s.job_id]] == t else "is not waiting")
                    raise InvalidDecision(why, job_id=s.job_id, time=t)
                free_n -= job.nodes
                free_b -= job.bb
                if free_n < 0:
                    raise InvalidDecision(f"needs {job.nodes} nodes, {free_n + job.nodes} free",
                                          job_id=job.id, time=t)
                if free_b < -tol:
                    raise InvalidDecision(f"needs {job.bb:.6g} B of burst buffer, "
                                          f"{free_b + job.bb:.6g} B free", job_id=job.id, time=t)
                k = index[job.id]
                alloc_a[k] = _allocate(free_nodes, job, s.nodes, t, platform.node_ssd)
                if bbn is not None and bbn.charge(job, alloc_a[k]) is not None:
                    refused[job.id] = job
                    for node in alloc_a[k]:
                        heapq.heappush(free_nodes, node)
                    alloc_a[k] = ()
                    free_n += job.nodes
                    free_b += job.bb
                    continue
                if ledger is not None:
                    why = ledger.charge(job, alloc_a[k])
                    if why is not None:
                        raise InvalidDecision(why, job_id=job.id, time=t)
                used_n += job.nodes
                used_b += job.bb
                start_a[k] = t
                model.start(k, t, alloc_a[k])
                key = t + job.walltime
                i = bisect_left(running_keys, key)
                running.insert(i, RunningJob(job, t, alloc_a[k]))
                running_keys.insert(i, key)
            if refused:  # back in the queue, in arrival order
                res.refused_starts += len(refused)
                queue.update(refused)
                queue = dict(sorted(queue.items(),
                                    key=lambda kv: (kv[1].submit, index[kv[0]])))
        if bar is not None:
            bar.update(done - bar.n)
            bar.close()
        if queue:
            raise InvalidDecision(f"the policy left {len(queue)} jobs waiting on an idle machine",
                                  job_id=next(iter(queue)), time=t)
        res.wall_time = _time.perf_counter() - wall0
        return res


def _allocate(free_nodes: list[int], job: Job, asked: tuple[int, ...] | None,
              t: float, node_ssd: tuple[float, ...] | None = None) -> tuple[int, ...]:
    """The nodes of ``job``: those asked (checked: distinct, free and, for a job with a local-SSD
    request, each with enough SSD), else the lowest-numbered free ones, or for an SSD request
    the free nodes with the smallest admissible SSDs (least waste)."""
    if asked is None:
        if job.ssd <= 0 or node_ssd is None:
            return tuple(heapq.heappop(free_nodes) for _ in range(job.nodes))
        fit = sorted((node_ssd[x], x) for x in free_nodes if node_ssd[x] >= job.ssd)
        if len(fit) < job.nodes:
            raise InvalidDecision(f"needs {job.nodes} nodes with {job.ssd:.4g} B of local SSD, "
                                  f"{len(fit)} free", job_id=job.id, time=t)
        asked = tuple(x for _, x in fit[:job.nodes])
    if len(asked) != job.nodes or len(set(asked)) != len(asked):
        raise InvalidDecision(f"node set {asked} is not {job.nodes} distinct nodes",
                              job_id=job.id, time=t)
    free = set(free_nodes)
    busy = [x for x in asked if x not in free]
    if busy:
        raise InvalidDecision(f"nodes {busy} are busy or do not exist", job_id=job.id, time=t)
    if job.ssd > 0 and node_ssd is not None:
        small = [x for x in asked if node_ssd[x] < job.ssd]
        if small:
            raise InvalidDecision(f"nodes {small} have less than the {job.ssd:.4g} B of local "
                                  "SSD it asks per node", job_id=job.id, time=t)
    keep = [x for x in free_nodes if x not in set(asked)]
    heapq.heapify(keep)
    free_nodes[:] = keep
    return tuple(asked)


def _progress(total: int, enabled: bool):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="job", delay=1.0, mininterval=0.25, leave=False)

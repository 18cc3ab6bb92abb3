"""The event-driven simulation engine: timed events, a checked resource ledger, and nothing
else.

Length: one replay loop and the checked application of its decisions (finishes, submissions,
the queue's views, evictions, starts), each a short method on the hot path.

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
(:class:`~bbopt.planner.bb.FirstFitBB`).

A policy that declares ``idle_unless_fits`` (the queue rules of :mod:`bbopt.policies.queue`:
their decision starts nothing, preempts nothing and remembers nothing when no waiting job fits
the free nodes and BB) is not asked at an event where no waiting job fits: the schedule is the
same, a third fewer decisions on KTH (``on_decision`` sees only the decisions taken).

A policy with a ``next_call()`` method (the scheduler of Batsim's protocol behind
:mod:`bbopt.interop.batsim.server`, whose CALL_ME_LATER names a time) is also asked at the
instant it returns, and at every instant where it returns a time not after it, whether jobs
wait or not, until the last job ends (Batsim drops the calls still pending then).

When started jobs end is the business of the execution model (:mod:`bbopt.simulation.execution`):
under the default rigid model jobs run for ``min(runtime, walltime)`` and a job whose runtime
exceeds its walltime is killed at the walltime. A job that can never fit the platform is
rejected at submission with the reason (under an I/O-aware policy, also a job that could not
get its bandwidth on an empty machine: Herbein et al., end of Section 3.4). Every submitted job
ends as finished, killed or rejected. (Kopanski & Rzadca, Section 4.1, without the I/O side
effects.)

An environment that takes the decisions itself (:mod:`bbopt.gym`) drives the same loop through
:func:`stepwise`: the engine yields each decision instant, and the environment reads the state
and applies checked decisions before the loop goes on.

Preemption (Zvi & Oren, OMFS): ``Decision.preempt`` is applied before the starts of the same
decision (:meth:`_Engine._evict`); an execution model with an ``evict`` hook
(:mod:`bbopt.simulation.checkpoint`) says when the evicted job's resources come back, the job
keeps them until then (its checkpoint), and its segment ends as checkpointed or requeued (back to
the queue) or dropped. The record keeps the first start and the final end of each job and every
run segment (``SimulationResult.segments``); a job may then also end as dropped.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from itertools import islice, pairwise
from time import perf_counter
from typing import Any

from bbopt.core import (
    ClusterState,
    Decision,
    Job,
    JobState,
    Platform,
    RunningJob,
    RunningJobs,
    decide_planned,
)
from bbopt.errors import InputError, InvalidDecision
from bbopt.limits import check_tick
from bbopt.policies.registry import Policy, make_policy
from bbopt.simulation.execution import (
    REQUEUE_ENDS,
    Evicting,
    ExecutionModel,
    make_execution_model,
)
from bbopt.simulation.ledger import Ledger, StartRefused
from bbopt.simulation.queue_blocks import BlockQueue
from bbopt.simulation.result import SimulationResult

#: Queues up to this long are handed to the policies as a tuple (a copy of a few pointers that
#: every policy then reads at C speed), longer ones as a :class:`~bbopt.queue_view.QueueView`.
SHORT_QUEUE = 64
#: The blocks behind long queues' views are dropped once the queue is this short.
DROP_BLOCKS = 32


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
    enforce_bandwidth: bool | None = None,
    on_job_end: Callable[[SimulationResult, int], None] | None = None,
) -> SimulationResult:
    """Replay ``jobs`` on ``platform`` under ``policy`` and return the per-job outcome.

    ``policy`` is a registered name (with ``options`` for its constructor) or a policy object.
    ``tick``: also schedule every ``tick`` seconds while jobs wait (the paper's example uses a
    one-minute period); scheduling always runs after each batch of simultaneous events.
    ``progress``: show a progress bar once the run has taken more than a second.
    ``on_decision(state, decision)`` observes every decision (for tests and tracing).
    ``execution``: the execution model (default ``"rigid"``), by name or as an object.
    ``enforce_bandwidth``: refuse starts that over-allocate a link of the platform's I/O tree;
    by default what the policy declares (``Policy.io_aware``).
    ``on_job_end(result, k)`` is called once job ``k``'s record is final (it ended for good or
    was rejected), e.g. to write results while the run goes
    (:class:`~bbopt.simulation.result.JobsCsvStream`).

    Example: on 4 nodes, ``big`` waits for ``long`` to end; ``short`` is backfilled at once
    because it ends before that reservation.

    >>> from bbopt import Job, Platform
    >>> jobs = [Job("long", 0, walltime=100, runtime=100, nodes=2),
    ...         Job("big", 1, walltime=50, runtime=50, nodes=4),
    ...         Job("short", 2, walltime=90, runtime=90, nodes=2)]
    >>> result = simulate(jobs, Platform(nodes=4), "fcfs-bb")
    >>> list(zip([j.id for j in result.jobs], result.start, result.end))
    [('long', 0, 100), ('big', 100, 150), ('short', 2, 92)]
    """
    engine = _build(jobs, platform, policy, options, tick, progress, on_decision, workload_name,
                    execution, enforce_bandwidth)
    engine.on_job_end = on_job_end
    return engine.run()


def stepwise(
    jobs: Iterable[Job],
    platform: Platform | None = None,
    policy: str | Policy = "fcfs-bb",
    *,
    options: dict[str, Any] | None = None,
    tick: float | None = None,
    workload_name: str = "workload",
    execution: str | ExecutionModel | None = None,
    enforce_bandwidth: bool | None = None,
) -> _Engine:
    """The run :func:`simulate` would make, handed over one decision point at a time (for an
    environment that takes the decisions itself, :mod:`bbopt.gym`).

    Iterate :meth:`_Engine.instants`: at each instant ``t`` where :func:`simulate` would ask
    ``policy``, the caller may read :meth:`_Engine.state` and :meth:`_Engine.apply` any number
    of checked decisions (``policy.decide`` is not called) before asking for the next instant;
    ``policy`` only declares what the engine needs of it (``io_aware``, ``idle_unless_fits``).
    When the iteration ends, ``result`` holds the record.
    """
    return _build(jobs, platform, policy, options, tick, False, None, workload_name, execution,
                  enforce_bandwidth)


def _build(jobs, platform, policy, options, tick, progress, on_decision, workload_name,
           execution, enforce_bandwidth) -> _Engine:
    """The engine of one run, its arguments checked (:func:`simulate`'s)."""
    platform = platform or Platform.kopanski()
    pol = make_policy(policy, **(options or {}))
    jobs = list(jobs)
    index = {job.id: k for k, job in enumerate(jobs)}
    if len(index) != len(jobs):
        _refuse_duplicates(jobs)
    tick = check_tick(tick)  # a microsecond tick would never finish: bbopt.limits
    # by submission, ties in job order (a stable sort: the order of the keys (submit, k))
    submits = [job.submit for job in jobs]
    order = sorted(range(len(jobs)), key=submits.__getitem__)
    model = make_execution_model(execution)
    if enforce_bandwidth is None:
        enforce_bandwidth = pol.io_aware
    return _Engine(jobs, order, platform, pol, tick, progress, on_decision, workload_name,
                   model, enforce_bandwidth, index)


def _refuse_duplicates(jobs: list[Job]) -> None:
    """Raise naming the first job whose id an earlier job already has."""
    ids = set()
    for job in jobs:
        if job.id in ids:
            raise InputError(f"duplicate job id {job.id!r}", field="id")
        ids.add(job.id)


class _Engine:
    """One run: the event loop over finishes, submissions and ticks, a :class:`Ledger` of what
    running jobs hold, and the checked application of each decision (evictions, then starts)."""

    def __init__(self, jobs: list[Job], order: Sequence[int], platform: Platform, policy: Policy,
                 tick: float | None, progress: bool,
                 on_decision: Callable[[ClusterState, Decision], None] | None,
                 workload_name: str, model: ExecutionModel, enforce_bandwidth: bool,
                 index: dict[str, int]) -> None:
        self.jobs = jobs
        self.order = order
        self.platform = platform
        self.policy = policy
        self.tick = tick
        self.progress = progress
        self.on_decision = on_decision
        self.result = SimulationResult(jobs, platform, getattr(policy, "name", str(policy)),
                                       workload_name)
        self.index = index  # job id -> k
        self.model = model
        self.ledger = Ledger(platform, enforce_bandwidth)
        # The room a job must fit for Ledger.why_never_fits to hold nothing against it, where
        # nothing but nodes and pooled BB is checked (None: ask the ledger every time).
        self.plain_room = (platform.nodes, platform.bb) \
            if platform.bb_nodes is None and self.ledger.bandwidth is None else None
        self.queue: dict[str, Job] = {}  # waiting jobs in arrival order
        self.waiting_sizes = [0] * (platform.nodes + 1)  # waiting jobs by node count
        # The blocks behind a long queue's view (self.queue's jobs by submission rank); None
        # after a change out of rank order or once the queue is short, until a view needs them.
        self.blocks: BlockQueue | None = None
        self.rank: list[int] | None = None  # each job's submission rank (when blocks exist)
        self.running: list[RunningJob] = []  # sorted by expected end
        self.running_keys: list[float] = []
        self.overran = False  # a job past its walltime since the last decision (_decide)
        self.running_view: RunningJobs | None = None  # the policies' view of self.running
        self.live: dict[int, RunningJob] = {}  # the running entry of each running job
        self.changed = False  # a segment ended since the last decision
        self.memory: Any = {}
        self.on_job_end: Callable[[SimulationResult, int], None] | None = None

    def run(self) -> SimulationResult:
        """Replay every job, asking the policy at each decision instant."""
        apply, decide = self._apply, self._decide
        for t in self.instants():
            apply(decide(t), t)
        return self.result

    def instants(self) -> Iterator[float]:
        """The replay's event loop: each turn handles the events of one instant and yields it
        when a decision is due there (the consumer decides and applies before resuming); when
        it ends every job has ended and ``result`` is complete."""
        jobs, res, model, queue = self.jobs, self.result, self.model, self.queue
        order, n = self.order, len(self.order)
        model.reset(jobs, self.platform)
        tick, next_tick = self.tick, math.inf
        bar = _progress(n, self.progress, res.policy)
        done = ptr = 0
        t = 0.0
        gated = bool(getattr(self.policy, "idle_unless_fits", False))
        wake = getattr(self.policy, "next_call", None)  # (None for every policy of bbopt's)
        # A model that ends jobs only at its next_time() is not asked at other instants.
        lazy = model.ends_only_at_next_time
        inf = math.inf
        submits = [jobs[k].submit for k in order]
        submits.append(inf)  # (after the last submission: no test of ptr < n)
        wall0 = perf_counter()
        while True:
            t = t_end = model.next_time()
            if submits[ptr] < t:
                t = submits[ptr]
            if next_tick < t and queue:  # (next_tick stays inf without ticks)
                t = next_tick
            if wake is not None and done < n and wake() < t:
                t = wake()
            if t == inf:
                break
            ticked = t == next_tick
            before = done + ptr
            self.changed = False
            # Finishes first: a job ending at t frees its resources for jobs starting at t.
            if t_end == t or not lazy:
                done += self._finish(t)
            while submits[ptr] == t:
                done += self._submit(order[ptr])
                ptr += 1
            if bar is not None and done - bar.n >= 256:
                bar.update(done - bar.n)
            if tick is not None:
                next_tick = (math.floor(t / tick) + 1) * tick if queue else inf
            if queue and (done + ptr != before or ticked or self.changed) \
                    and not (gated and self._nothing_fits()):
                # (otherwise nothing the policy could see has changed, e.g. an I/O phase change,
                # or the policy declares that it starts nothing when no waiting job fits)
                yield t
            elif wake is not None and done < n and wake() <= t:
                yield t
        if bar is not None:
            bar.update(done - bar.n)
            bar.close()
        if queue:
            raise InvalidDecision(f"the policy left {len(queue)} jobs waiting on an idle machine",
                                  job_id=next(iter(queue)), time=t)
        res.wall_time = perf_counter() - wall0
        model.record(res)

    def _finish(self, t: float) -> int:
        """Record the jobs the execution model ends at ``t`` and free what they held; a job
        whose segment ended by an eviction (checkpointed, or killed and requeued) goes back to
        the queue. Returns how many jobs ended for good."""
        res, jobs = self.result, self.jobs
        ended = self.model.finish(t)
        if not ended:
            return 0
        self.changed = True
        remove, release, segments = self._remove_running, self.ledger.release, res.segments
        final = 0
        for k, why in ended:
            rj = remove(k)
            job = jobs[k]
            if t > rj.start + job.walltime:  # it ended later than any plan could know
                self.overran = True
            release(job, res.allocation[k])
            segments.append((job.id, rj.start, t, str(why)))
            if why in REQUEUE_ENDS:
                self._requeue(k, self.model.resubmit(k))
                continue
            res.state[k] = why
            res.end[k] = t
            final += 1
            if self.on_job_end is not None:
                self.on_job_end(res, k)
        return final

    def _submit(self, k: int) -> int:
        """Queue job ``k``, or reject it with the reason when it can never run; 1 if it ended."""
        job = self.jobs[k]
        room = self.plain_room
        if room is not None and job.nodes <= room[0] and job.bb <= room[1] and job.ssd <= 0:
            why = None  # (Ledger.why_never_fits in its trivial case, without the calls)
        else:
            why = self.ledger.why_never_fits(job)
        if why is None:
            self.queue[job.id] = job
            self.waiting_sizes[job.nodes] += 1
            if self.blocks is not None:
                self.blocks.append(job, self.rank[k])
            return 0
        self.result.state[k] = JobState.REJECTED
        self.result.reasons[job.id] = why
        if self.on_job_end is not None:
            self.on_job_end(self.result, k)
        return 1

    def _decide(self, t: float) -> Decision:
        """Ask the policy, exactly as :func:`bbopt.decide` would, and record how long it took."""
        state = self.state(t)
        res = self.result
        c0 = perf_counter()
        # a job at or past its walltime (an execution model that does not kill at walltime):
        # planned as still holding its resources, as bbopt.decide plans it
        overran, self.overran = self.overran, bool(self.running_keys) and self.running_keys[0] <= t
        # (overran: the memory was planned while a job ran past its walltime, or one has ended
        # past it since: kept plans may no longer fit)
        decision = decide_planned(self.policy, state, overran) if overran or self.overran else \
            self.policy.decide(state)
        res.decision_times.append(perf_counter() - c0)
        res.decision_stats.append(decision.stats)
        if self.on_decision is not None:
            self.on_decision(state, decision)
        if decision.memory is not None:
            self.memory = decision.memory
        return decision

    def apply(self, decision: Decision, t: float, wall: float = 0.0) -> None:
        """Record a decision taken outside the engine at instant ``t`` (``wall`` seconds to
        take it) and apply it, checked as the policy's are (:func:`stepwise`)."""
        self.result.decision_times.append(wall)
        self.result.decision_stats.append(decision.stats)
        if decision.memory is not None:
            self.memory = decision.memory
        self._apply(decision, t)

    def state(self, t: float) -> ClusterState:
        """What a policy sees at instant ``t``: the running jobs, the waiting queue in arrival
        order and the policy's memory."""
        ledger = self.ledger
        running = self.running_view
        if running is None:  # (rebuilt only after a job started or ended)
            running = self.running_view = RunningJobs.of(self.running,
                                                         (ledger.used_nodes, ledger.used_bb))
        # (a short queue as a tuple, which policies read in C; a long one as a view, O(1))
        if len(self.queue) <= SHORT_QUEUE:
            queue = tuple(self.queue.values())
            if self.blocks is not None and len(self.queue) <= DROP_BLOCKS:
                self.blocks = None
        else:
            if self.blocks is None:
                self.blocks = self._block_queue()
            queue = self.blocks.view() if self.blocks is not None else tuple(self.queue.values())
        return ClusterState.of_fields(t, self.platform, running, queue, self.memory)

    def _apply(self, decision: Decision, t: float) -> None:
        """Evictions first (they free resources for the starts of the same decision), then
        starts, each checked by the ledger."""
        for job_id in decision.preempt:
            self._evict(job_id, t)
        starts = decision.start
        if not starts:
            return
        res, queue, index, ledger = self.result, self.queue, self.index, self.ledger
        admit, model_start, insert = ledger.admit, self.model.start, self._insert_running
        named = ledger.bb_nodes is not None
        sizes = self.waiting_sizes
        blocks, rank = self.blocks, self.rank
        refused: dict[str, Job] | None = None  # (made at the first refusal: they are rare)
        for s in starts:
            job = queue.pop(s.job_id, None)
            if job is None:
                why = ("started twice" if s.job_id in index
                       and res.start[index[s.job_id]] == t else "is not waiting")
                raise InvalidDecision(why, job_id=s.job_id, time=t)
            k = index[job.id]
            try:
                nodes = admit(job, s.nodes, t, s.bb_pieces)
            except StartRefused:  # named BB nodes: the job keeps waiting
                refused = refused if refused is not None else {}
                refused[job.id] = job
                continue
            sizes[job.nodes] -= 1
            if blocks is not None:
                blocks.remove(job, rank[k])
            res.allocation[k] = nodes
            if math.isnan(res.start[k]):  # the record keeps the first start
                res.start[k] = t
            model_start(k, t, nodes)
            insert(k, RunningJob.of_fields(job, t, nodes,
                                           ledger.pieces_of(job) if named else None))
        if refused:  # back in the queue, in arrival order (by original submission)
            res.refused_starts += len(refused)
            self._reorder([*queue.items(), *refused.items()])

    def _evict(self, job_id: str, t: float) -> None:
        """Preempt a running job: it must be running (and not already being evicted), be
        preemptable and, when the policy declares a ``quantum``, have run at least that long
        in its current segment. The execution model decides what happens (its ``evict(k, t)``
        returns when the job's resources come back: after its checkpoint, or at once for a
        kill); until then the job keeps its nodes and BB, and the policies see it running with
        that end and ``extra["evicting"] = True``. The ledger releases them when the model
        ends the segment. Models without ``evict`` (rigid, contention, phased) refuse."""
        k = self.index.get(job_id)
        rj = self.live.get(k) if k is not None else None
        if rj is None:
            raise InvalidDecision("is not running, so it cannot be preempted", job_id=job_id,
                                  time=t)
        if rj.job.extra.get("evicting"):
            raise InvalidDecision("is already being evicted", job_id=job_id, time=t)
        if not rj.job.preemptable and not rj.job.checkpointable:
            raise InvalidDecision("is not preemptable", job_id=job_id, time=t)
        quantum = getattr(self.policy, "quantum", None) or 0.0
        if t - rj.start < quantum:
            raise InvalidDecision(f"has run {t - rj.start:g} s, less than the policy's quantum "
                                  f"of {quantum:g} s", job_id=job_id, time=t)
        if not isinstance(self.model, Evicting):
            raise InvalidDecision("the execution model cannot preempt jobs", job_id=job_id,
                                  time=t)
        back = self.model.evict(k, t)
        self._remove_running(k)
        job = rj.job
        view = replace(job, walltime=max(back - rj.start, 1e-9),
                       extra={**job.extra, "evicting": True})
        self._insert_running(k, RunningJob(view, rj.start, rj.allocation, rj.bb_pieces))

    def _requeue(self, k: int, job: Job) -> None:
        """Put ``job`` (the requeued view of ``jobs[k]``) back in the waiting queue, in arrival
        order (by original submission)."""
        queue = self.queue
        self.waiting_sizes[job.nodes] += 1
        if not queue or self._arrival(next(reversed(queue))) < self._arrival(job.id):
            queue[job.id] = job  # after every waiting job
            self._restack()  # (the blocks, by submission rank, are built again)
            return
        self._reorder([*queue.items(), (job.id, job)])

    def _arrival(self, job_id: str) -> tuple[float, int]:
        """Where a job stands in arrival order: its original submission, then its index (the
        order of ``self.order``)."""
        k = self.index[job_id]
        return self.jobs[k].submit, k

    def _reorder(self, items: list[tuple[str, Job]]) -> None:
        """Make ``items`` (job id, job) the waiting queue, in arrival order."""
        items.sort(key=lambda kv: self._arrival(kv[0]))
        self.queue.clear()
        self.queue.update(items)
        self._restack()

    def _restack(self) -> None:
        """Drop the blocks of the queue's views: the next long queue's view gets new ones
        (views already given keep the old ones)."""
        self.blocks = None

    def _block_queue(self) -> BlockQueue | None:
        """The blocks of the waiting queue now (and the submission ranks they need); None when
        the queue is not in submission rank (a requeue above), which blocks need."""
        if self.rank is None:  # (the inverse of the order of submission)
            self.rank = sorted(range(len(self.order)), key=self.order.__getitem__)
        rank, index = self.rank, self.index
        pairs = [(rank[index[job_id]], job) for job_id, job in self.queue.items()]
        if any(a[0] >= b[0] for a, b in pairwise(pairs)):
            return None
        return BlockQueue(pairs)

    def _insert_running(self, k: int, rj: RunningJob) -> None:
        key = rj.start + rj.job.walltime  # (RunningJob.expected_end, without the property)
        i = bisect_left(self.running_keys, key)
        self.running.insert(i, rj)
        self.running_keys.insert(i, key)
        self.live[k] = rj
        self.running_view = None

    def _remove_running(self, k: int) -> RunningJob:
        rj = self.live.pop(k)
        i = bisect_left(self.running_keys, rj.start + rj.job.walltime)  # (its expected end)
        while self.running[i] is not rj:
            i += 1
        del self.running[i]
        del self.running_keys[i]
        self.running_view = None
        return rj

    def _nothing_fits(self) -> bool:
        """Whether no waiting job fits the free nodes and burst buffer now (with the ledger's
        tolerance, at least as lenient as the policies'): a policy that declares
        ``idle_unless_fits`` would then start nothing, so it is not asked. (With blocks, those
        whose least job needs more than is free are skipped.)"""
        ledger = self.ledger
        free_n = self.platform.nodes - ledger.used_nodes
        if free_n <= 0:
            return True
        if free_n <= 64 and not any(self.waiting_sizes[1:free_n + 1]):
            return True  # every waiting job needs more nodes than are free
        free_b = self.platform.bb - ledger.used_bb + ledger.bb_tol
        blocks, waiting = self.blocks, self.queue.values()  # (with blocks: the first few jobs,
        for job in (waiting if blocks is None else islice(waiting, 16)):  # then the blocks)
            if job.nodes <= free_n and job.bb <= free_b:
                return False
        if blocks is None:
            return True
        for jobs, (n, b, _) in blocks.live():
            if n <= free_n and b <= free_b:
                for job in jobs:
                    if job.nodes <= free_n and job.bb <= free_b:
                        return False
        return True


def _progress(total: int, enabled: bool, policy: str):
    """A bar after a second on a terminal; in a log, a line a minute once the run has lasted
    one (:mod:`bbopt.progress`)."""
    if not enabled:
        return None
    from bbopt.progress import progress

    return progress(total, unit="job", desc=policy, leave=False, quiet=True)

"""I/O-aware list scheduling and pack scheduling (Jeannot, Pallez & Vidal, IJHPCA 2023,
"I/O-awareness of Mapping strategies" and "Backfilling"), for periodic applications that share
one I/O node (run them under the ``exclusive-io`` execution model).

Both plan with each application's *average* I/O bandwidth, ``n_i v_i / T_i`` (equation (1) for
``T_i``; a job without ``extra["io"]`` uses ``Job.bandwidth x nodes``), against the I/O node's
bandwidth ``b`` (option ``bandwidth``, default the ``io_bandwidth`` the jobs were generated for).

- ``io-list``: list scheduling under the **strict constraint**: in FCFS order, a job starts when
  its nodes are free and the running jobs' average bandwidths plus its own fit ``b``. The paper
  backfills list schedules without saying how; ``backfill`` chooses: ``"easy"`` (default; also
  ``True``), EASY backfilling over both resources: the first job that cannot start gets a
  reservation at the earliest time its nodes and bandwidth are free (running jobs end at
  ``start + walltime``, the time alone; an overdue job is taken to end now), and a later job may
  start now if it fits now and either ends before that time or leaves the reservation its nodes
  and bandwidth; ``"greedy"``, list scheduling as Garey & Graham define it (and Sun et al., 2018,
  whom the paper follows for list vs pack scheduling): every waiting job that fits the free
  nodes and bandwidth now starts, in FCFS order, with no reservation (a large job can wait while
  smaller ones pass it; in a static batch it still starts once the batch drains); ``"none"``
  (also ``False``): strict FCFS.
- ``pack-random``, ``pack-max``, ``pack-char``: pack scheduling under the **average constraint**
  with the paper's greedy builders (:mod:`bbopt.models.packs`): a pack starts on the free nodes
  when the last member of the previous pack has ended; all its members start together.
- ``pack-opt``: the next pack is the optimum of the pack model (``objective``: ``work``, i.e.
  node-time packed, by default; ``stretch-work``, ``lexicographic``) solved by ``backend``
  (``cpsat`` by default, ``milp``, ``exhaustive``) within ``budget`` seconds per decision, model
  building included (CP-SAT's deterministic limit ``deterministic`` too). ``budget_mode``:
  ``"wall"`` (default) caps the decision's wall time; ``"deterministic"`` caps the solver's work
  (CP-SAT deterministic time; the exhaustive backend runs to its end; CBC has no work limit)
  with the wall clock as a distant safety net (:meth:`bbopt.solvers.Budget.of`), so a run gives
  the same packs on a loaded machine. A backend out of time without an answer gives the
  contract's FALLBACK: first fit in the policy's ``order`` (Max by default), the greedy builder.
- ``pack-opt-char``: as ``pack-opt`` with the Char order as a tie-break: among packs within
  ``tolerance`` (default 5 %) of the best work, the one that packs the applications first in Char
  order.

**Backfilling into a pack** (``backfill``, default on): while a pack runs, a waiting job starts
on idle nodes (candidates in the builder's order, Max for the exact builders) if, by its time
alone, it ends before the pack's planned end (start + longest
member's time alone) and the pack's average constraint still holds with it (members' and
backfilled jobs' I/O volumes over the pack's planned span). A backfilled job never delays the
next pack: the next pack starts when the last *member* ends, on the nodes then free.

**Static and dynamic workloads.** The paper releases all applications at 0 (a static batch):
the first decision builds the first pack from all of them. With a dynamic trace, packs are
formed from the jobs waiting at each pack boundary; a job submitted while a pack runs is a
backfill candidate and otherwise waits for the next boundary; when no pack runs, arriving jobs
start a new pack at once.

**Several racks** (option ``racks``: a number of equal racks or their sizes, as given to the
``exclusive-io`` execution model; nodes ``0 .. P-1`` cut into consecutive racks, one I/O node
each): the paper's model holds rack by rack ("extending it to several racks ... is
straightforward"), so the policy runs on each rack as on a machine of its own, in rack order, on
the shared queue: every job runs inside one rack (the starts name its nodes, the lowest free ones
of the rack), the strict or average constraint is on that rack's I/O node, each rack has its own
EASY reservation or its own sequence of packs, and a job started on one rack leaves the queue
before the next rack decides. A job wider than every rack is an input error.

The policy's memory (JSON-able) holds the current pack: its members, start, planned end, the I/O
volume (in seconds at ``b``) admitted into it, its number, and the backfilled jobs.
"""

from __future__ import annotations

import time as _time
from collections.abc import Iterable
from dataclasses import replace
from typing import Annotated, Any

import numpy as np

from bbopt.core import (
    ClusterState,
    Decision,
    Job,
    Platform,
    Reservation,
    RunningJob,
    SolveStats,
    Start,
    Status,
    decision_elapsed,
    periodic_spec,
    rack_sizes,
)
from bbopt.errors import InputError
from bbopt.models.packs import OBJECTIVES, ORDERS, PackModel, order_keys
from bbopt.policies.registry import register
from bbopt.solvers.base import TAIL_SHARE, Budget, solve
from bbopt.units import Bandwidth, Seconds

_EPS = 1e-9


def io_bandwidth(jobs: Iterable[Job], given: float | None) -> float:
    """The I/O node's bandwidth: ``given``, else the ``io_bandwidth`` of the first periodic job."""
    if given is not None:
        return float(given)
    for job in jobs:
        io = job.extra.get("io") if job.extra else None
        if io and io.get("io_bandwidth"):
            return float(io["io_bandwidth"])
    raise InputError("an I/O-aware list or pack policy needs the I/O node's bandwidth: pass "
                     "the 'bandwidth' option or give the jobs extra['io']['io_bandwidth']",
                     field="bandwidth")


def without_bb(platform: Platform) -> str | None:
    """Why a list or pack policy does not apply to ``platform``, or ``None``: it plans nodes
    and the I/O node's bandwidth only (Jeannot et al.'s model has no burst buffer and no
    node-local storage)."""
    if platform.bb > 0 or platform.node_ssd is not None:
        return "plans nodes and the I/O node's bandwidth; it knows no burst buffer or local SSD"
    return None


def time_and_io(job: Job, b: float) -> tuple[float, float]:
    """``(T_i, u_i)``: time alone (equation (1)) and total I/O time at full bandwidth."""
    spec = periodic_spec(job)
    if spec is None:
        return job.walltime, job.bandwidth * job.nodes * job.walltime / b
    n, w, v = spec
    return n * (w + v / b), n * v / b


def average_bandwidth(job: Job, b: float) -> float:
    """The job's average I/O bandwidth in bytes/s (what the strict constraint adds up)."""
    t, u = time_and_io(job, b)
    return u * b / t if t > 0 else 0.0


def _rack_decision(policy: Any, state: ClusterState, racks: int | list[int]) -> Decision:
    """``policy._decide_one`` on every rack in turn (see the module docstring); the racks'
    decisions share one wall budget, counted from :func:`bbopt.decide`'s call."""
    t0 = _time.perf_counter() - decision_elapsed()
    sizes = rack_sizes(racks, state.platform.nodes)
    first = np.concatenate([[0], np.cumsum(sizes)]).astype(int)
    widest = max(sizes)
    for job in state.queue:
        if job.nodes > widest:
            raise InputError(f"job {job.id} needs {job.nodes} nodes, more than the largest rack "
                             f"({widest}): with racks every job runs inside one rack",
                             field="racks")
    rack_of = np.repeat(np.arange(len(sizes)), sizes)
    busy = np.zeros(state.platform.nodes, dtype=bool)
    running: list[list[RunningJob]] = [[] for _ in sizes]
    for r in state.running:
        alloc = np.asarray(r.allocation or (), dtype=np.int64)
        busy[alloc] = True
        rack = int(np.argmax(np.bincount(rack_of[alloc], minlength=len(sizes)))) \
            if len(alloc) else 0
        running[rack].append(RunningJob(r.job, r.start, tuple(int(i) - first[rack]
                                                              for i in alloc)))
    memory = list((state.memory or {}).get("racks") or [{} for _ in sizes])
    queue = list(state.queue)
    starts: list[Start] = []
    reservations: list[Reservation] = []
    statuses: list[Status] = []
    for k, size in enumerate(sizes):
        if not queue and not running[k]:  # nothing to decide on this rack (and no job to
            continue                      # read the I/O node's bandwidth from): memory kept
        ssd = state.platform.node_ssd
        platform = replace(state.platform, nodes=size, topology=None,
                           node_ssd=None if ssd is None else ssd[first[k]:first[k + 1]])
        sub = ClusterState(state.time, platform,
                           tuple(running[k]), tuple(queue), memory[k])
        d = policy._decide_one(sub)
        memory[k] = dict(d.memory) if d.memory is not None else memory[k]
        free = [int(i) for i in np.flatnonzero(~busy[first[k]:first[k + 1]]) + first[k]]
        ids = {s.job_id for s in d.start}
        for job in (j for j in queue if j.id in ids):
            nodes, free = tuple(free[:job.nodes]), free[job.nodes:]
            starts.append(Start(job.id, nodes))
        queue = [j for j in queue if j.id not in ids]
        reservations.extend(d.reservations)
        if d.stats is not None:
            statuses.append(d.stats.status)
    earliest: dict[str, Reservation] = {}  # a job reserved on several racks: the earliest;
    started = {s.job_id for s in starts}  # none for a job a later rack started
    for r in reservations:
        if r.job_id in started:
            continue
        if r.job_id not in earliest or r.start < earliest[r.job_id].start:
            earliest[r.job_id] = r
    reservations = list(earliest.values())
    status = (Status.FALLBACK if Status.FALLBACK in statuses else
              Status.FEASIBLE if Status.FEASIBLE in statuses else Status.OPTIMAL)
    return Decision(start=tuple(starts), reservations=tuple(reservations),
                    memory={"racks": memory},
                    stats=SolveStats(backend=f"{len(sizes)}-racks", status=status,
                                     wall_time=_time.perf_counter() - t0))


@register("io-list", about="I/O-aware list scheduling: FCFS under the strict bandwidth "
          "constraint, EASY backfilling (Jeannot et al.)")
class IOList:
    """I/O-aware list scheduling (see the module docstring)."""

    #: Its bandwidth is the exclusive I/O node's (strict constraint), not the links of the
    #: platform's I/O tree: starts name no nodes and the engine checks nodes only.
    io_aware = False
    unsuited = staticmethod(without_bb)

    def __init__(self, name: str = "io-list",
                 bandwidth: Annotated[float, Bandwidth] | None = None,
                 backfill: bool | str = "easy", racks: int | list[int] = 1) -> None:
        self.name = name
        self.bandwidth = bandwidth
        self.racks = racks
        modes = {True: "easy", False: "none", "easy": "easy", "greedy": "greedy",
                 "none": "none"}
        if not isinstance(backfill, bool | str) or backfill not in modes:
            raise InputError(f"backfill must be 'easy', 'greedy' or 'none', got {backfill!r}",
                             field="backfill")
        self.backfill = modes[backfill]

    def decide(self, state: ClusterState) -> Decision:
        if self.racks != 1:
            return _rack_decision(self, state, self.racks)
        return self._decide_one(state)

    def _decide_one(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        now = state.time
        b = io_bandwidth((*state.queue, *(r.job for r in state.running)), self.bandwidth)
        cap_bw = b * (1 + _EPS)
        free_n = state.free()[0]
        used_bw = sum(average_bandwidth(r.job, b) for r in state.running)
        ends = [(max(r.expected_end, now), r.job.nodes, average_bandwidth(r.job, b))
                for r in state.running]
        started: list[Job] = []
        queue = list(state.queue)
        i = 0
        while i < len(queue):
            job = queue[i]
            bw = average_bandwidth(job, b)
            if job.nodes <= free_n and used_bw + bw <= cap_bw:
                started.append(job)
                free_n -= job.nodes
                used_bw += bw
                ends.append((now + job.walltime, job.nodes, bw))
                i += 1
            else:
                break
        reservations = []
        if i < len(queue) and self.backfill == "greedy":
            for job in queue[i + 1:]:
                bw = average_bandwidth(job, b)
                if job.nodes > free_n or used_bw + bw > cap_bw:
                    continue
                started.append(job)
                free_n -= job.nodes
                used_bw += bw
        elif i < len(queue) and self.backfill == "easy":
            head = queue[i]
            head_bw = average_bandwidth(head, b)
            shadow, extra_n, extra_bw = now, free_n, cap_bw - used_bw
            for end, n, bw in sorted(ends):
                if head.nodes <= extra_n and head_bw <= extra_bw:
                    break
                shadow = end
                extra_n += n
                extra_bw += bw
            extra_n -= head.nodes
            extra_bw -= head_bw
            reservations.append(Reservation(head.id, shadow))
            for job in queue[i + 1:]:
                bw = average_bandwidth(job, b)
                if job.nodes > free_n or used_bw + bw > cap_bw:
                    continue
                if now + job.walltime <= shadow:
                    pass
                elif job.nodes <= extra_n and bw <= extra_bw:
                    extra_n -= job.nodes
                    extra_bw -= bw
                else:
                    continue
                started.append(job)
                free_n -= job.nodes
                used_bw += bw
        return Decision(start=tuple(Start(j.id) for j in started),
                        reservations=tuple(reservations),
                        stats=SolveStats(backend="list", status=Status.FEASIBLE,
                                         wall_time=_time.perf_counter() - t0))


@register("pack-random", about="Pack scheduling, packs built in a seeded random order "
          "(Jeannot et al.)", builder="greedy", order="random")
@register("pack-max", about="Pack scheduling, packs built by non-increasing time alone "
          "(Jeannot et al.)", builder="greedy", order="max")
@register("pack-char", about="Pack scheduling, packs built by non-decreasing characteristic "
          "time (Jeannot et al.)", builder="greedy", order="char")
@register("pack-opt", about="Pack scheduling, each pack optimal for the pack model "
          "(most node-time packed by default)", builder="exact")
@register("pack-opt-char", about="Pack scheduling, optimal packs with the Char order as a "
          "tie-break within a tolerance", builder="exact", tiebreak="char")
class PackScheduling:
    """Pack scheduling with backfilling (see the module docstring)."""

    #: The average constraint is on the exclusive I/O node, not on the I/O tree's links.
    io_aware = False
    unsuited = staticmethod(without_bb)

    def __init__(self, name: str = "pack-max", builder: str = "greedy", order: str = "max",
                 backend: str = "cpsat", objective: str = "work", tiebreak: str | None = None,
                 tolerance: float | None = None, budget: Annotated[float, Seconds] = 1.0,
                 deterministic: float | None = 2.0,
                 bandwidth: Annotated[float, Bandwidth] | None = None,
                 backfill: bool = True, seed: int = 0, budget_mode: str = "wall",
                 racks: int | list[int] = 1) -> None:
        if builder not in ("greedy", "exact"):
            raise InputError(f"builder must be 'greedy' or 'exact', got {builder!r}",
                             field="builder")
        if order not in ORDERS:
            raise InputError(f"order must be one of {', '.join(ORDERS)}, got {order!r}",
                             field="order")
        if objective not in OBJECTIVES:
            raise InputError(f"objective must be one of {', '.join(OBJECTIVES)}, got "
                             f"{objective!r}", field="objective")
        if tiebreak is not None and tiebreak not in ORDERS:
            raise InputError(f"tiebreak must be one of {', '.join(ORDERS)}, got {tiebreak!r}",
                             field="tiebreak")
        self.name = name
        self.builder = builder
        self.order = order
        self.backend = backend
        self.objective = objective
        self.tiebreak = tiebreak
        self.tolerance = (0.05 if tiebreak else 0.0) if tolerance is None else float(tolerance)
        self.budget = Budget.of(budget, deterministic, budget_mode)
        self.budget_seconds = float(budget)
        self.bandwidth = bandwidth
        self.backfill = backfill
        self.seed = seed
        self.racks = racks

    def decide(self, state: ClusterState) -> Decision:
        if self.racks != 1:
            return _rack_decision(self, state, self.racks)
        return self._decide_one(state)

    def _decide_one(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter() - decision_elapsed()  # (bbopt.decide's check counts)
        now = state.time
        mem = dict(state.memory) if state.memory else {}
        b = io_bandwidth((*state.queue, *(r.job for r in state.running)), self.bandwidth)
        running = {r.job.id for r in state.running}
        members = [j for j in mem.get("pack", ()) if j in running]
        free_n = state.free()[0]
        if members:  # the pack runs: backfill its idle nodes
            started = self._backfill(state, mem, b, free_n) if self.backfill else []
            return Decision(start=tuple(Start(j.id) for j in started), memory=mem,
                            stats=SolveStats(backend="backfill", status=Status.FEASIBLE,
                                             wall_time=_time.perf_counter() - t0))
        queue = list(state.queue)
        if not queue:
            return Decision(memory=mem)
        # a wall budget bounds the exact builder's whole decision, from bbopt.decide's call
        # (its check of the state counts): the model is read until the budget less two tails,
        # the fallback's (first fit over what was read) and the decision's
        wall = self.builder == "exact" and self.budget.mode == "wall"
        deadline = t0 + (1 - 2 * TAIL_SHARE) * self.budget_seconds if wall else None
        model = PackModel.from_jobs(queue, free_n, b, now=now, objective=self.objective,
                                    tiebreak=self.tiebreak, tolerance=self.tolerance,
                                    seed=self.seed, fallback_order=self.order,
                                    deadline=deadline)
        if self.builder == "greedy":
            x = model.greedy(self.order)
            stats = SolveStats(backend=f"greedy-{self.order}", status=Status.FEASIBLE,
                               objective=model.evaluate(x)[0])
        elif model.size < len(queue) or (wall and _time.perf_counter() >= deadline):
            # out of time before the solver: the contract's fallback on the jobs read (the
            # head of the queue), first fit in the policy's order
            queue = queue[:model.size]
            x = model.fallback()
            stats = SolveStats(backend=self.backend, status=Status.FALLBACK,
                               objective=model.evaluate(x), budget=self.budget_seconds)
        else:
            budget = self.budget.less(_time.perf_counter() - t0, TAIL_SHARE)  # (building counts)
            res = solve(model, self.backend, budget, seed=self.seed)
            x = np.asarray(res.solution, dtype=bool)
            stats = SolveStats(backend=self.backend, status=res.status,
                               objective=res.objective, bound=res.bound, gap=res.gap,
                               budget=self.budget_seconds)
        picked = [queue[i] for i in np.flatnonzero(x)]
        if picked:
            t_max = max(model.duration[i] for i in np.flatnonzero(x))
            mem = {"pack": [j.id for j in picked], "pack_start": now,
                   "pack_end": now + float(t_max),
                   "pack_io": float(model.io_time[x].sum()),
                   "pack_no": int(mem.get("pack_no", 0)) + 1, "backfilled": []}
        stats = SolveStats(stats.backend, stats.status, stats.objective, stats.bound, stats.gap,
                           _time.perf_counter() - t0, stats.budget)
        return Decision(start=tuple(Start(j.id) for j in picked), memory=mem, stats=stats)

    def _backfill(self, state: ClusterState, mem: dict[str, Any], b: float,
                  free_n: int) -> list[Job]:
        now = state.time
        end = float(mem["pack_end"])
        span = end - float(mem["pack_start"])
        io = float(mem["pack_io"])
        queue = list(state.queue)
        if not queue or now >= end or free_n <= 0:
            return []
        t = np.empty(len(queue))
        u = np.empty(len(queue))
        char = np.empty(len(queue))
        for i, job in enumerate(queue):
            t[i], u[i] = time_and_io(job, b)
            spec = periodic_spec(job)
            char[i] = t[i] if spec is None else spec[1] + spec[2] / b
        order = order_keys(self.order, [j.id for j in queue], t, char, self.seed)
        started = []
        for i in order:
            job = queue[i]
            if job.nodes > free_n or now + t[i] > end * (1 + _EPS):
                continue
            if io + u[i] > span * (1 + _EPS):
                continue
            started.append(job)
            free_n -= job.nodes
            io += float(u[i])
        if started:
            mem["pack_io"] = io
            mem["backfilled"] = [*mem.get("backfilled", ()), *(j.id for j in started)]
        return started

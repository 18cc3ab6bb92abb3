"""Fair-share policies: memoryless fair share with preemption (Zvi & Oren, OMFS, Algorithm 1)
and the schemes it argues against (hard partitions, capping, Slurm's classic fair share).

Length: Algorithm 1 and the three schemes it is measured against share the entity bookkeeping
and the EASY pass below, and are read side by side.

Every policy takes ``shares``: each entity's entitlement, a mapping, an ``"e:share,..."`` string
or a YAML/JSON file (:func:`bbopt.workloads.shares.parse_shares`). A job's entity is ``Job.user``
(``assign_entities`` maps users or groups to entities). An entity's entitlement in nodes is
``floor(share * N)`` (Algorithm 1, line 25).

``omfs`` -- Algorithm 1 read literally, one pass over the submitted queue per decision (priority
``Job.priority``, then arrival) with, for each job J of entity u:

- line 26: a non-preemptable J waits when u's running non-preemptable nodes plus J's would exceed
  u's entitlement (the paper writes ``>=``; its comment says "exceed", which is what is done:
  an entity can fill its entitlement with non-preemptable jobs). A non-preemptable J wider than
  u's whole entitlement would never start under line 26; it runs on an otherwise idle machine
  (nothing running, claimed or started), the drain the baselines below use too, so every run
  ends;
- line 29: J starts when the idle nodes (and idle BB: a job needs its BB too) suffice (the paper
  writes ``>``, its comment says "enough"); such a start goes through EASY backfilling: it must
  not delay the reservation of the first waiting job -- unless J is within u's entitlement, which
  always runs when it fits;
- line 31: otherwise, if J fits within u's entitlement (``J.nodes <= entitled - held``), the
  running jobs of over-entitled entities are evicted to make room (lines 35-39), least
  prioritised first -- lowest ``Job.priority``, then the youngest segment -- among jobs that are
  preemptable, past their ``quantum`` (default 30 min, the paper's example; the paper's running
  queue demotes jobs that have run a quantum) and whose eviction keeps their entity at or above
  its own entitlement. The victims checkpoint (or are killed) and J starts as soon as their
  resources come back: the policy remembers the claim (``memory["claims"]``) and serves claimed
  jobs first at the next decisions, keeping the claimed resources for them. If the candidates
  cannot cover J's deficit, nothing is evicted and J waits. A job started earlier in the same
  pass is running for the runner: past its quantum (a quantum of 0) it is a candidate like the
  others, the youngest, and is taken back before it runs (no checkpoint, it waits again;
  :mod:`bbopt.policies.fairshare_pass`). With ``protect="over"`` it is a candidate whatever the
  quantum: it has not run, and the quantum protects running jobs from thrashing, so an
  over-entitled job first in priority order cannot keep an entitled one waiting a new quantum.

``omfs-opt`` -- the same with the victims chosen by the victim-choice model
(:mod:`bbopt.models.preemption`) and an exact backend (``backend="auto"``: exhaustive up to 12
candidates, CP-SAT above; or name one): minimal node-time
wasted by checkpoint + restart (estimated with ``memory_per_node / checkpoint_bandwidth``) or by
lost work. Each decision's ``alternatives`` carry, per eviction, the cost of the chosen victims
and of Algorithm 1's greedy victims on the same state (``greedy_cost``): the cost saved.

Baselines: ``partition`` (each entity runs on its entitled nodes only, EASY inside each
partition, bounded by what the whole machine has free), ``capping`` (an entity may never hold
more than its entitlement, EASY over the jobs within their cap, no preemption), ``fair-share``
(Slurm's classic fair share: usage decayed with a half-life, factor ``2^(-U/S)`` with ``U`` the
entity's share of the decayed usage and ``S`` its normalised share, EASY in that priority
order). A job larger than its entity's entitlement could never run under ``partition`` and
``capping``; it runs when the machine is otherwise idle (a site's drain for a big job), so every
run ends.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Annotated, Any

from bbopt.core import (
    GB,
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
    slack,
)
from bbopt.models.preemption import PreemptionModel
from bbopt.planner import Planner
from bbopt.policies.eviction_candidates import EvictionCandidates
from bbopt.policies.fairshare_pass import Easy as _Easy
from bbopt.policies.fairshare_pass import Free as _Free
from bbopt.policies.registry import register
from bbopt.units import Bandwidth, Bytes, Seconds
from bbopt.workloads.shares import entitled_nodes, parse_shares

MINUTES = 60.0
#: ``omfs-opt`` with ``backend="auto"``: exhaustive up to this many candidates, CP-SAT above.
AUTO_EXHAUSTIVE = 12
#: The share of omfs-opt's budget kept after its last victim choice (with less left, the jobs
#: needing evictions wait for the next decision); also the least a victim choice is given.
MIN_SOLVE_SHARE = 0.2
LOOK_EVERY = 256  #: omfs-opt's clock is read once per this many waiting jobs (a power of 2)


def entity_of(job: Job) -> str:
    """The entity a job belongs to (``Job.user``; ``"unknown"`` without one)."""
    return job.user if job.user is not None else "unknown"


def _preemptable(job: Job) -> bool:
    return job.preemptable or job.checkpointable


def _shares_of(shares: Any) -> dict[str, float]:
    if shares is None:
        return {}
    return parse_shares(shares)


def _stats(t0: float, backend: str = "rule", status: Status = Status.FEASIBLE,
           objective: float | None = None) -> SolveStats:
    return SolveStats(backend=backend, status=status, objective=objective,
                      wall_time=_time.perf_counter() - t0)


def _victim_order(r: RunningJob) -> tuple:
    """Algorithm 1's eviction order: lowest priority, then youngest segment, then id."""
    return (r.job.priority, -r.start, r.job.id)


def _priority_order(queue: Iterable[Job]) -> list[Job]:
    """Algorithm 1's submitted queue: higher ``Job.priority`` first, then arrival order."""
    return sorted(queue, key=lambda j: -j.priority)  # stable: arrival order among equals


@register("omfs", backend="greedy")
@register("omfs-opt", backend="auto",
          about="OMFS with the victims chosen by an exact solver (minimal C/R or lost node-time)")
class MemorylessFairShare:
    """Memoryless fair share with checkpoint/restart preemption (Zvi & Oren, Algorithm 1) and
    EASY backfilling for the jobs that need no eviction.

    Options: ``shares`` (entitlements); ``quantum`` (seconds a job runs before it may be
    evicted, default 1800); ``memory_per_node`` and ``checkpoint_bandwidth`` (bytes, bytes/s per
    node) to estimate a checkpoint's cost for the victim choice; ``penalty`` (node-seconds per
    eviction); ``budget`` (seconds per decision of ``omfs-opt``, its victim choices share it)
    counted as ``budget_mode`` says (``"wall"``, or ``"deterministic"``: CP-SAT's deterministic
    time, the same victims on any load, the wall clock only a safety net); ``audit``
    (``omfs-opt``: also compute Algorithm 1's greedy victims, default on); ``protect``:
    ``"strict"`` (default: no victim entity drops below its entitlement) or ``"over"`` (``omfs``
    only: a victim's entity need only hold more than its entitlement before each eviction -- the
    paper's "evicting jobs of entities utilizing more than their allotment" -- so it may end
    below it by less than one job; the quantum then limits the ping-pong).
    """

    io_aware = False

    def __init__(self, name: str = "omfs", shares: Any = None,
                 quantum: Annotated[float, Seconds] = 30 * MINUTES, backend: str = "greedy",
                 memory_per_node: Annotated[float, Bytes] = 64 * GB,
                 checkpoint_bandwidth: Annotated[float, Bandwidth] = 1 * GB,
                 penalty: float = 0.0, budget: Annotated[float, Seconds] = 0.05,
                 audit: bool = True, protect: str = "strict",
                 budget_mode: str = "wall") -> None:
        if not (quantum >= 0 and math.isfinite(quantum)):
            raise ValueError(f"quantum must be >= 0 seconds, got {quantum!r}")
        if protect not in ("strict", "over"):
            raise ValueError(f"protect must be 'strict' or 'over', got {protect!r}")
        if protect == "over" and backend != "greedy":
            raise ValueError("protect='over' is Algorithm 1's greedy reading; the exact victim "
                             "choice keeps every victim entity at its entitlement")
        self.protect = protect
        self.name = name
        self.shares = _shares_of(shares)
        self.quantum = float(quantum)
        self.backend = backend
        self.memory_per_node = float(memory_per_node)
        self.checkpoint_bandwidth = float(checkpoint_bandwidth)
        self.penalty = float(penalty)
        self.budget = float(budget)
        self.budget_mode = budget_mode
        self.audit = bool(audit) and backend != "greedy"

    # -- the eviction cost the victim choice minimises ------------------------------------------
    def eviction_cost(self, r: RunningJob, now: float) -> float:
        """Node-seconds an eviction of ``r`` wastes: checkpoint + restart time for a
        checkpointable job, the work since its segment started for one that is killed."""
        job = r.job
        if job.checkpointable:
            mem = float(job.extra.get("memory_per_node", self.memory_per_node))
            return job.nodes * 2.0 * mem / self.checkpoint_bandwidth
        return job.nodes * (now - r.start + float(job.extra.get("work_done", 0.0)))

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter() - decision_elapsed()  # (bbopt.decide's check counts)
        # omfs-opt's victim choices share the decision's budget (deterministic mode: the work
        # limits decide, the wall clock is a safety net): past it, the jobs that would need
        # evictions wait (FALLBACK); past ``stop`` (less the decision's tail) all the others do
        from bbopt.solvers.base import TAIL_SHARE, Budget
        deadline = (t0 + Budget.of(self.budget, mode=self.budget_mode).seconds
                    if self.backend != "greedy" else math.inf)
        stop = deadline - TAIL_SHARE * self.budget
        platform = state.platform
        entitled = entitled_nodes(self.shares, platform.nodes)
        held: dict[str, int] = {}  # nodes held per entity (running, claimed, started now)
        held_np: dict[str, int] = {}  # of which by non-preemptable jobs
        evicting_n, evicting_b = 0, 0.0
        for r in state.running:
            if r.job.extra.get("evicting"):
                evicting_n += r.job.nodes
                evicting_b += r.job.bb
                continue
            self._hold(r.job, held, held_np)
        free_n, free_b = state.free()
        free = _Free(free_n, free_b, slack(platform.bb), Planner.of(state))
        waiting = {j.id: j for j in state.queue}
        claims: dict[str, list[str]] = {
            jid: list(v) for jid, v in dict(state.memory.get("claims", {})).items()
            if jid in waiting}
        easy = _Easy(state, free)
        started: list[Job] = []
        # Claimed jobs first: their victims' resources are theirs.
        evicting_ids = {r.job.id for r in state.running if r.job.extra.get("evicting")}
        for job in _priority_order(waiting[j] for j in claims):
            if free.fits(job):
                free.take(job)
                started.append(job)
                del claims[job.id]
                self._hold(job, held, held_np)
            elif not any(v in evicting_ids for v in claims[job.id]):
                del claims[job.id]  # its victims are back and it still does not fit: requeue
        # Resources still owed to claims are kept from the others.
        owed_n = sum(waiting[j].nodes for j in claims) - evicting_n
        owed_b = sum(waiting[j].bb for j in claims) - evicting_b
        free.nodes -= max(owed_n, 0)
        free.bb -= max(owed_b, 0.0)
        for jid in claims:
            self._hold(waiting[jid], held, held_np)
        preempt: list[str] = []
        alternatives: list[dict[str, Any]] = []
        victims_taken: set[str] = set()
        last_stats: SolveStats | None = None
        done = {j.id for j in started}
        over = EvictionCandidates(self.pool(state), entitled, held, victims_taken, entity_of)
        fresh: set[str] = set()  # line 29's starts of this pass that may be taken back
        out_of_time = False
        for k, job in enumerate(_priority_order(state.queue)):
            if not k & (LOOK_EVERY - 1) and _time.perf_counter() > stop:
                out_of_time = True  # (the budget is spent: the jobs not yet offered wait)
                break
            if job.id in claims or job.id in done:
                continue
            u = entity_of(job)
            ent = entitled.get(u, 0)
            if not _preemptable(job) and held_np.get(u, 0) + job.nodes > ent:
                # line 26: non-preemptable beyond the entitlement waits -- but one wider than
                # the whole entitlement would wait forever: it drains the machine, as below
                if not (job.nodes > ent and not claims and _oversize_ok(state, job, started)
                        and free.fits(job)):
                    continue
                free.take(job)
                started.append(job)
                self._hold(job, held, held_np)
                continue
            within = job.nodes <= ent - held.get(u, 0)
            if not within or free.fits(job):
                # line 29 (through EASY, unless within the entitlement); line 31: beyond the
                # entitlement, J waits for idle resources (and may hold EASY's reservation)
                if easy.offer(job, force=within):
                    started.append(job)
                    self._hold(job, held, held_np)
                    now_running = RunningJob(job, state.time)
                    if self._evictable(now_running, state.time, fresh=True):
                        over.add(now_running, _victim_order)
                        fresh.add(job.id)
                continue
            # lines 34-39: evict over-entitled entities' jobs to make room for J
            if out_of_time or _time.perf_counter() > deadline - MIN_SOLVE_SHARE * self.budget:
                out_of_time = True  # no time left to look for victims: J waits
                easy.offer(job)
                if easy.head is not None and free.nodes < 1:
                    break  # nothing fits and nobody may be evicted: the rest all wait
                continue
            cands = over.candidates(u, (len(started), len(victims_taken)))
            if not cands:  # no cover: J waits
                easy.offer(job)
                continue
            chosen, info, stats = self._victims(state, job, free, entitled, held,
                                                victims_taken, cands, deadline, fresh)
            if stats is not None:
                last_stats = stats
            if chosen is None:
                easy.offer(job)  # no cover: J waits, possibly holding the reservation
                continue
            if info is not None:
                alternatives.append(info)
            for r in chosen:
                victims_taken.add(r.job.id)
                self._hold(r.job, held, held_np, sign=-1)
                if r.job.id in fresh:  # started earlier in this pass: it waits again
                    started.remove(r.job)
                    easy.take_back(r.job)
            evicted = [r for r in chosen if r.job.id not in fresh]
            if not evicted and free.fits(job) and easy.offer(job, force=True):
                started.append(job)  # (the jobs taken back made room now)
                self._hold(job, held, held_np)
                continue
            freed_n = freed_b = 0.0
            for r in evicted:
                preempt.append(r.job.id)
                freed_n += r.job.nodes
                freed_b += r.job.bb
            claims[job.id] = [r.job.id for r in evicted]
            self._hold(job, held, held_np)
            free.nodes -= max(job.nodes - freed_n, 0)
            free.bb -= max(job.bb - freed_b, 0.0)
        stats = last_stats if last_stats is not None else _stats(t0)
        stats = SolveStats(backend=stats.backend,
                           status=Status.FALLBACK if out_of_time else stats.status,
                           objective=stats.objective, bound=stats.bound, gap=stats.gap,
                           wall_time=_time.perf_counter() - t0, budget=stats.budget)
        return Decision(start=tuple(Start(j.id) for j in started),
                        reservations=tuple(easy.reservations()), preempt=tuple(preempt),
                        alternatives=tuple(alternatives), stats=stats,
                        memory={"claims": claims})

    @staticmethod
    def _hold(job: Job, held: dict[str, int], held_np: dict[str, int], sign: int = 1) -> None:
        u = entity_of(job)
        held[u] = held.get(u, 0) + sign * job.nodes
        if not _preemptable(job):
            held_np[u] = held_np.get(u, 0) + sign * job.nodes

    def pool(self, state: ClusterState) -> list[RunningJob]:
        """Running jobs that may ever be evicted in this decision: preemptable, past the
        quantum, not being evicted; least prioritised first (lowest priority, then youngest
        segment, then id)."""
        now = state.time
        out = [r for r in state.running if self._evictable(r, now)]
        out.sort(key=_victim_order)
        return out

    def _evictable(self, r: RunningJob, now: float, fresh: bool = False) -> bool:
        """``fresh``: started in this pass (with ``protect="over"`` such a job has not run, so
        its quantum, which protects running jobs from thrashing, does not hold it)."""
        return (_preemptable(r.job) and not r.job.extra.get("evicting")
                and (now - r.start >= self.quantum or (fresh and self.protect == "over")))

    def candidates(self, state: ClusterState, job: Job, entitled: Mapping[str, int],
                   held: Mapping[str, int], taken: set[str] = frozenset()) -> list[RunningJob]:
        """Running jobs that may be evicted for ``job``: those of :meth:`pool` not taken, of
        another entity that holds more than its entitlement, in the pool's order."""
        return EvictionCandidates(self.pool(state), entitled, held, taken,
                                  entity_of).candidates(entity_of(job))

    def model_for(self, state: ClusterState, job: Job, free: _Free,
                  entitled: Mapping[str, int], held: Mapping[str, int],
                  taken: set[str] = frozenset(), cands: list[RunningJob] | None = None,
                  started_now: Collection[str] = frozenset()
                  ) -> tuple[PreemptionModel, list[RunningJob]]:
        """The victim-choice model of ``job``'s deficit (candidates in Algorithm 1's order; a
        candidate of ``started_now``, started earlier in this pass, costs nothing to evict)."""
        if cands is None:
            cands = self.candidates(state, job, entitled, held, taken)
        ents = [entity_of(r.job) for r in cands]
        slack_of = {e: held.get(e, 0) - entitled.get(e, 0) for e in set(ents)}
        model = PreemptionModel.build(
            [r.job.id for r in cands], [r.job.nodes for r in cands], [r.job.bb for r in cands],
            [0.0 if r.job.id in started_now else self.eviction_cost(r, state.time)
             for r in cands], ents, slack_of,
            need_nodes=int(job.nodes - max(free.nodes, 0)),
            need_bb=job.bb - max(free.bb, 0.0), penalty=self.penalty,
            bb_capacity=state.platform.bb)
        if self.protect == "over":
            model = replace(model, over_only=True)
        return model, cands

    def _victims(self, state, job, free, entitled, held, taken, cands, deadline,
                 started_now=frozenset()):
        model, cands = self.model_for(state, job, free, entitled, held, taken, cands,
                                      started_now)
        if model.size == 0 or model.surely_infeasible():
            return None, None, None
        if self.backend == "greedy":
            x = model.greedy()
            if x is None:
                return None, None, None
            return [cands[i] for i in model.order if x[i]], None, None
        from bbopt.solvers.base import Budget, solve

        backend = self.backend
        if backend == "auto":  # enumeration is faster than a solver's set-up on small states
            backend = "exhaustive" if model.size <= AUTO_EXHAUSTIVE else "cpsat"
        budget = Budget.of(self.budget, mode=self.budget_mode)
        if budget.mode == "wall":  # the decision's victim choices share its budget
            left = deadline - MIN_SOLVE_SHARE * self.budget - _time.perf_counter()
            budget = Budget(max(min(left, self.budget), 0.1 * MIN_SOLVE_SHARE * self.budget))
        result = solve(model, backend, budget, seed=0)
        stats = SolveStats(backend=result.backend, status=result.status,
                           objective=result.objective, bound=result.bound,
                           wall_time=result.wall_time, budget=self.budget)
        if result.solution is None:
            return None, None, stats
        x = result.solution
        info: dict[str, Any] = {"job": job.id, "victims": model.victims(x),
                                "cost": model.evaluate(x), "solve_time": result.wall_time,
                                "status": str(result.status), "candidates": model.size}
        if self.audit:
            g = model.greedy()
            info["greedy_cost"] = model.evaluate(g)
            info["greedy_victims"] = model.victims(g)
        return [cands[i] for i in model.order if x[i]], info, stats


def _oversize_ok(state: ClusterState, job: Job, started: Sequence[Job]) -> bool:
    """A job larger than its entity's entitlement runs only on an otherwise idle machine."""
    return not state.running and not started


@register("capping")
class Capping:
    """Capping: an entity never holds more than its entitlement (no preemption); EASY
    backfilling over the jobs within their entity's cap, in arrival order."""

    io_aware = False

    def __init__(self, name: str = "capping", shares: Any = None) -> None:
        self.name = name
        self.shares = _shares_of(shares)

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        entitled = entitled_nodes(self.shares, state.platform.nodes)
        held: dict[str, int] = {}
        for r in state.running:
            held[entity_of(r.job)] = held.get(entity_of(r.job), 0) + r.job.nodes
        free_n, free_b = state.free()
        easy = _Easy(state, _Free(free_n, free_b, slack(state.platform.bb),
                                         Planner.of(state)))
        for job in state.queue:
            u = entity_of(job)
            ent = entitled.get(u, 0)
            if job.nodes > ent:
                if not _oversize_ok(state, job, easy.started):
                    continue
            elif held.get(u, 0) + job.nodes > ent:
                continue
            if easy.offer(job):
                held[u] = held.get(u, 0) + job.nodes
        return Decision(start=tuple(Start(j.id) for j in easy.started),
                        reservations=tuple(easy.reservations()), stats=_stats(t0))


@register("partition")
class Partition:
    """Hard division: each entity runs on its entitled nodes (and its share of the BB) only,
    EASY backfilling inside each partition."""

    io_aware = False

    def __init__(self, name: str = "partition", shares: Any = None) -> None:
        self.name = name
        self.shares = _shares_of(shares)

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        platform = state.platform
        entitled = entitled_nodes(self.shares, platform.nodes)
        by_entity: dict[str, list[Job]] = {}
        for job in state.queue:
            by_entity.setdefault(entity_of(job), []).append(job)
        running: dict[str, list[RunningJob]] = {}
        for r in state.running:
            running.setdefault(entity_of(r.job), []).append(r)
        started: list[Job] = []
        reservations: list[Reservation] = []
        # The machine's own free resources bound every partition's starts: a job larger than
        # its partition (run on an idle machine, below) spills into the others' nodes.
        free_n, free_b = state.free()
        machine = _Free(free_n, free_b, slack(platform.bb))
        placement = Planner.of(state)  # (the BB nodes are the machine's, shared by partitions)
        for u in sorted(by_entity):
            ent = entitled.get(u, 0)
            if ent < 1:
                continue
            part = Platform(nodes=ent, bb=platform.bb * self.shares.get(u, 0.0),
                            name=f"{platform.name}/{u}")
            sub = ClusterState(state.time, part, tuple(running.get(u, ())),
                               tuple(by_entity[u]))
            free_n, free_b = sub.free()
            easy = _Easy(sub, _Free(min(free_n, machine.nodes), min(free_b, machine.bb),
                                    slack(platform.bb), placement))
            for job in by_entity[u]:
                if job.nodes <= part.nodes and job.bb <= part.bb:
                    easy.offer(job)
            for job in easy.started:
                machine.take(job)
            started += easy.started
            reservations += easy.reservations()
        if not started and not state.running:  # oversize jobs: on an idle machine only
            for job in state.queue:
                if job.nodes <= platform.nodes and job.bb <= platform.bb:
                    started.append(job)
                    break
        return Decision(start=tuple(Start(j.id) for j in started),
                        reservations=tuple(reservations), stats=_stats(t0))


@register("fair-share")
class ClassicFairShare:
    """Slurm's classic fair share: decayed usage, priority factor ``2^(-U/S)``, EASY backfilling
    in priority order (ties: arrival).

    ``half_life``: usage decay half-life in seconds (Slurm's ``PriorityDecayHalfLife``, default
    7 days). Usage is node-seconds of running jobs, accrued at each decision (the policy sees
    only running jobs: a job that ended between two decisions is counted up to its expected end
    or the decision, whichever is first) and stored in ``memory["usage"]``. ``U`` is the entity's
    share of all decayed usage and ``S`` its normalised share (Slurm's ``classic_fair_share``);
    an entity with no share gets factor 0.
    """

    io_aware = False

    def __init__(self, name: str = "fair-share", shares: Any = None,
                 half_life: Annotated[float, Seconds] = 7 * 86400.0) -> None:
        if not half_life > 0:
            raise ValueError(f"half_life must be positive, got {half_life!r}")
        self.name = name
        self.shares = _shares_of(shares)
        self.half_life = float(half_life)

    def usage(self, state: ClusterState) -> tuple[dict[str, float], dict[str, list]]:
        """Decayed usage per entity after accruing the running jobs up to now."""
        mem = state.memory
        last = float(mem.get("time", state.time))
        usage = {e: float(v) for e, v in dict(mem.get("usage", {})).items()}
        seen = {jid: tuple(v) for jid, v in dict(mem.get("running", {})).items()}
        now = state.time
        decay = 2.0 ** (-(now - last) / self.half_life) if now > last else 1.0
        for e in usage:
            usage[e] *= decay
        current = {r.job.id: (entity_of(r.job), r.job.nodes, r.start, r.expected_end)
                   for r in state.running}
        for jid, (e, nodes, start, end) in {**seen, **current}.items():
            stop = now if jid in current else min(now, end)
            begin = max(start, last)
            if stop > begin:
                usage[e] = usage.get(e, 0.0) + nodes * (stop - begin)
        return usage, {jid: list(v) for jid, v in current.items()}

    def factor(self, usage: Mapping[str, float]) -> Callable[[str], float]:
        total_u = sum(usage.values())
        total_s = sum(self.shares.values()) or 1.0

        def f(entity: str) -> float:
            s = self.shares.get(entity, 0.0) / total_s
            if s <= 0:
                return 0.0
            u = usage.get(entity, 0.0) / total_u if total_u > 0 else 0.0
            return 2.0 ** (-u / s)

        return f

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        usage, current = self.usage(state)
        f = self.factor(usage)
        order = sorted(state.queue, key=lambda j: -f(entity_of(j)))
        free_n, free_b = state.free()
        easy = _Easy(state, _Free(free_n, free_b, slack(state.platform.bb),
                                         Planner.of(state)))
        for job in order:
            easy.offer(job)
        memory = {"time": state.time, "usage": usage, "running": current}
        return Decision(start=tuple(Start(j.id) for j in easy.started),
                        reservations=tuple(easy.reservations()), stats=_stats(t0),
                        memory=memory)

"""Conservative backfilling with burst-buffer reservations (``conservative-bb``).

Kopanski & Rzadca, Euro-Par 2021, Section 3.2 (the reservation of processors *and* burst buffer
of Algorithm 1) applied to every waiting job, as in Mu'alem & Feitelson's conservative
backfilling: every queued job (up to ``depth`` of them) holds a reservation of processors and
BB; a job may start only where it delays no reservation. Reservations are kept between
decisions and only ever moved earlier (compression in reservation order), so no reservation is
ever delayed. This is Slurm's default backfilling, absent from the paper's code. It plans with
walltimes, never with the (unknown) runtimes.

On named BB nodes (first fit, :mod:`bbopt.planner.bb`) the profile keeps one dimension per
BB node and each job is reserved with its pieces placed first fit on each BB node's least free
space over its reserved interval (:meth:`bbopt.planner.Planner.reserve`), a start now's too
(``Planner(window_now=True)``), which the start names to the engine (``Start.bb_pieces``). A
reservation keeps its pieces (the memory holds them, job id -> bytes on each BB node, so a
fresh policy decides the same): each decision holds the kept reservations again with their own
pieces, earliest first, compresses them if something came free since the previous decision
(a job it left holding resources ended before its walltime; the memory names those jobs), a
reservation moving only to an earlier start with pieces placed again, and plans the new jobs.
So no reservation is ever delayed there either. Held again with fresh pieces at every decision,
with starts taking the engine's first fit of the space free then, reservations were delayed
2,184 times on the whole KTH trace on the 12 named nodes (``benchmarks/promises.py``); kept,
none is, and the mean wait is 4.1 % lower. With proximity placement the pieces are placed
the same way (the engine chooses a start's compute nodes). Compiled, the profile is kept
between decisions while every amount is a whole number of bytes (then the one built again is
the same, every sum being exact: :mod:`bbopt.policies.conservative_named`). On pooled BB the
profile is kept between decisions and compression looks for an earlier start only where a
slot freed since can hold the job (:mod:`bbopt.policies.freed_slots`).

Cost, and what comes from Fluxion's planner (flux-sched ``resource/planner``). Adopted: the plan
kept across scheduling loops (spans added and removed as jobs start, end and move, never rebuilt
per cycle), and earliest-fit searches pruned by a bound on the free capacity of what they would
visit (the running maxima of each freed slot). Not adopted: its balanced trees (scheduled points
in a red-black tree, a min-time resource tree answering earliest-fit in O(log n)). On KTH x k
(k x 96 nodes) the profile held 194 breakpoints on average at k = 1 and 570 at k = 2 (34 and
58 since breakpoints between equal rows are dropped: :meth:`Profile._merge`), a
reservation or a release rewrites 6 to 9 segments at k = 1 and 13 to 16 at k = 2, and an
earlier-start scan visits 47 and 120 segments over 1.2 and 1.5 candidate starts; at those sizes
the two interpreted tree descents of a query (about 20 nodes, lazy tags on each) cost as much as
the scan they replace, and every breakpoint inserted would rebalance the tree.
A column layout (free nodes and BB as two lists, runs of segments tested by ``min``/``max`` over
slices in C) answered the same scans in 14.9 us against 15.4 us per call and slowed reserving,
so it was dropped too; the scans kept are :mod:`bbopt.planner.scans`. What grows faster than
the machine is the work an exact compression must do: 56 k moves at k = 1 and 202 k at k = 2
(3.6x), 356 k and 1.38 M reservations looked at (3.9x). Slurm's ``bf_window``,
``bf_resolution`` and ``bf_max_job_test`` bound that work by changing the schedule (a horizon,
coarser times, fewer jobs); only ``depth`` (``bf_max_job_test``) is kept here. Instead, with
numba installed, the profile and the compression run compiled, with the same decisions
(:mod:`bbopt.planner.jit.compression`), once the run has compressed enough in Python to pay for
loading them (:data:`SWITCH_AFTER`): KTH x 2 then takes 0.82x the CPU time of the Python replay
and 2.26x KTH x 1's instead of 2.77x (benchmarks/speed/SPEED.md, section 3).

Length: one decision loop, one memory check and one reservation table serve the kept pooled
profile, the named replan and their compiled twins; split, each half would repeat them.
"""

from __future__ import annotations

import math
import sys
import time as _time
from bisect import bisect_right, insort
from operator import attrgetter, itemgetter
from typing import NamedTuple

from bbopt.core import ClusterState, Decision, Job, Reservation, RunningJobs
from bbopt.jit import KERNELS
from bbopt.jit import kernels as load_kernels
from bbopt.planner import Planner, Profile, bb_placement, earlier_fit2, profile_of
from bbopt.planner.pieces import pieces_of_bytes
from bbopt.planner.profile import OverbookedError
from bbopt.policies.booked import sorted_reservations, updated_reservations
from bbopt.policies.conservative_named import NamedArrays
from bbopt.policies.conservative_replan import came_free, holding_after, replan
from bbopt.policies.freed_slots import Freed, give_back, log_slot, move, reach
from bbopt.policies.queue import _decision
from bbopt.policies.registry import register

_job_id = attrgetter("job.id")
_first = itemgetter(0)

_NOTHING: dict = {}  # (no job known: every job is taken as the one its reservation was made for)
#: Reservations made by conservative-bb at one decision unless ``depth`` says otherwise.
DEFAULT_DEPTH = 1000
#: How many reservations compressed conservative-bb remembers within one compression (the ones
#: with the latest starts) to bound the start of the next.
_STUCK = 8
#: How many reservations the compressions of a run look at in Python before they run compiled,
#: unless the kernels are loaded already: loading them (numba's import and first call) costs
#: 0.5-0.6 s of CPU, what Python spends compressing about 350,000 (1.65 us each on KTH x 1 and
#: x 2). KTH x 1 looks at 356,000 in all (it stays in Python), KTH x 2 at 1.38 million.
SWITCH_AFTER = 400_000


#: The profile in arrays and the compiled compression: :mod:`bbopt.planner.jit.arrays`
#: (whose kernels are :mod:`bbopt.planner.jit.compression`); importing it imports numba.
KERNELS.declare({"compression": "bbopt.planner.jit:arrays"})


def _loaded() -> bool:
    """Whether the compiled compression was loaded in this process already."""
    return "bbopt.planner.jit.arrays" in sys.modules


@register("conservative-bb")
class ConservativeBackfilling:
    """Conservative backfilling: every queued job holds a processor + BB reservation.

    ``depth``: how many waiting jobs (in queue order) get a reservation (default
    :data:`DEFAULT_DEPTH`, 1000; ``None`` is all of them). Jobs beyond the depth start only where
    they fit without delaying any reservation. Each reservation costs a scan of the profile, so
    without a depth a 20,000-job queue takes half a minute per decision; production backfillers
    cap the same way (Slurm's ``bf_max_job_test``).

    Between decisions the policy keeps its availability profile (a cache keyed by the memory it
    returned, checked against the state, so ``decide`` stays a function of the state): jobs
    that ended before their walltime free the rest of their slot, new reservations are added,
    and the slots freed since each reservation was last checked are logged. Compression runs
    only when something came free, and looks for an earlier start of a reservation only where
    a start could overlap a freed slot (elsewhere nothing has more room than at its last
    check). The decisions are those of the from-scratch form: rebuild the profile, hold every
    reservation, compress them all. A caller need not have carried out the previous decision
    (a resource manager started other jobs, or later): a kept reservation the state leaves no
    room for is planned again with the jobs that have none, the others are kept. A waiting job
    the resource manager resized under the same id (other nodes, BB or walltime than its
    reservation was made for) makes the kept profile stale: it is built again from the state,
    the job held with its new request (planned again with the jobs that have none where that
    no longer fits), as a fresh policy given the same memory decides.

    ``compiled``: whether the profile and the compression run compiled on the BB pool
    (:mod:`bbopt.planner.jit.compression`; numba, the extra ``fast``, must be installed, else
    this is ignored). Unset (the default): once the kernels are loaded in the process, or once
    the compressions of this policy looked at :data:`SWITCH_AFTER` reservations in Python.
    Either way the decisions are the same.
    """

    io_aware = False
    promise = "reservations-never-delayed"  # (bbopt.policies.promises.Promise)

    def __init__(self, name: str = "conservative-bb",
                 depth: int | None = DEFAULT_DEPTH, compiled: bool | None = None) -> None:
        if depth is not None and depth < 1:
            raise ValueError("depth must be >= 1 or None")
        if compiled not in (None, True, False):
            raise ValueError("compiled must be true, false or unset (automatic)")
        self.name = name
        self.depth = depth
        self.compiled = compiled
        self._cache: _Kept | None = None
        self._named = NamedArrays()  # (on named BB nodes: the compiled decision's arrays)
        self._named_booked: dict[str, Reservation] = {}  # (reused while their start stays)
        # (the last memory and reservations on named BB nodes)
        self._named_last: tuple[dict, tuple[Reservation, ...]] | None = None
        self._interpreted = 0  # reservations looked at by compressions run in Python
        self._kind: tuple | None = None  # (the platform last seen, whether BB nodes are named)

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        kind = self._kind
        if kind is None or kind[0] is not state.platform:
            kind = self._kind = (state.platform, bb_placement(state.platform).named)
        if kind[1]:  # (BB pieces to place on named BB nodes)
            return self._decide_named(state, t0)
        now = state.time
        queue = state.queue
        previous: dict[str, float] = state.memory.get("reservations", {})
        # One pass over the queue: the kept reservations, by (start, queue position), and the
        # jobs that have none yet, in queue order.
        kept: list[tuple[float, int, Job]] = []
        new: list[tuple[int, Job]] = []
        get = previous.get
        cache, self._cache = self._cache, None  # (dropped if this decision fails half-way)
        # The job each kept reservation was made for, when this policy made them: a job the
        # resource manager resized since (same id, other nodes, BB or walltime) makes the kept
        # profile stale, so it is built again (below) with the job as it is now.
        made = cache.made if cache is not None and state.memory is cache.memory else None
        was = made.get if made is not None else _NOTHING.get  # (the engine's jobs: themselves)
        for pos, job in enumerate(queue):
            jid = job.id
            s = get(jid)
            if s is None:
                new.append((pos, job))
            else:
                kept.append((s if s > now else now, pos, job))
                if was(jid, job) is not job:
                    if _resized(made[jid], job):
                        cache = made = None
                        was = _NOTHING.get
                    else:
                        made[jid] = job
        # By start, ties in queue order: a stable sort on the start alone (it compares floats,
        # not tuples: a third of the time for the 38 reservations of KTH x 2)
        kept.sort(key=_first)
        horizon = kept[-1][0] if kept else now  # no reservation moves from a later start
        fast = self._kernels()
        reused = self._reuse(cache, state, previous, len(kept), horizon, fast)
        if reused is None:
            profile = profile_of(state)
            # Hold every kept reservation, then compress them one at a time, earliest first:
            # each job's old slot stays free while the others move, so no job ever moves later.
            # A reservation this state no longer leaves room for (the resource manager started
            # other jobs than those advised, or on another platform) is planned again with the
            # jobs that have none.
            displaced: list[tuple[int, Job]] = []
            for start, pos, job in kept:
                try:
                    profile.reserve(start, start + job.walltime, job.demand)
                except OverbookedError:
                    displaced.append((pos, job))
            if displaced:
                kept, new, horizon = _displace(kept, new, displaced, now)
            if fast is not None:
                profile = fast.ArrayProfile(profile)
            holders = None
            log: list[Freed] | None = None  # no reservation checked yet: scan all of [now, old)
            future: dict[str, float] = {}
        else:
            # The profile kept from the previous decision, updated: the same holdings, and the
            # slots that came free since in the log. Every reservation was checked against the
            # profile at the previous decision after every slot freed before it in its order,
            # and a slot freed after it in that order starts no earlier than it, so only the
            # slots in this log can let a reservation move up (none: compression moves none).
            profile, holders, log = reused
            future = dict(previous)
        # The jobs whose entry in ``future`` may differ from ``previous`` (None: every one)
        touched: list[str] | None = None if reused is None else []
        moved: list[tuple[int, Job]] = []  # (queue position, job) of the kept jobs starting now
        started: list[tuple[int, Job]] = []
        if fast is not None and (log is None or log):
            # The same loop compiled (bbopt.planner.jit.compression), the slots that came
            # free given back first: the same starts
            for r, start in profile.compress(now, horizon, log or [], kept, log is not None):
                _, pos, job = kept[r]
                future[job.id] = start
                if touched is not None:
                    touched.append(job.id)
                if start == now:
                    moved.append((pos, job))
            if log is None:  # (a rebuilt profile: every kept reservation is in ``future``)
                for old, _, job in kept:
                    future.setdefault(job.id, old)
        elif log is None or log:
            self._interpreted += len(kept)
            tol = profile._tol
            tol0, tol1 = tol
            times, rows = profile.times, profile.free  # (changed in place, never replaced)
            max0 = max1 = -math.inf  # the maxima of every slot in the log
            for slot in log or ():
                max0 = max(max0, slot.top_nodes)
                max1 = max(max1, slot.top_bb)
            # Reservations already compressed here, as (start, nodes, BB, walltime): no start
            # before theirs fitted them, so none fits a later one that needs at least as much of
            # everything (the room a move gives back lies after the mover's old start, hence
            # after theirs, and the profile has only lost room before it). Every one of them
            # bounds the start, so which are kept changes no decision, only the work: the
            # _STUCK latest starts after now, sorted, so the first one that bounds a job is
            # the bound (a start at now bounds nothing). Only while no row went below minus
            # half the slack (``profile._low``): a segment where an earlier one did not fit
            # then may lie in the later one's own hold, overbooked by it, which it gives back.
            stuck: list[tuple[float, float, float, float]] = []
            for old, pos, job in kept:
                need0, need1 = job.nodes - tol0, job.bb - tol1
                if log is not None and (need0 > max0 or need1 > max1):
                    continue
                walltime = job.walltime
                # The latest start of a reservation compressed here that needs no more than
                # this one: no start before it fits. Found before the log is looked at: when
                # it reaches ``old`` (an eighth of the reservations on KTH x 2) the log is not,
                # and otherwise the walk over the log stops at the slots ending by it.
                floor = now
                if not profile._low:
                    for sold, s0, s1, sw in reversed(stuck):
                        if need0 >= s0 and need1 >= s1 and walltime >= sw:
                            floor = sold
                            break
                hi = old if log is None or floor >= old else reach(log, floor, old, need0, need1)
                if floor < hi:
                    # (Profile.earlier_fit(now, walltime, demand, old, floor, hi), inline)
                    demand = (job.nodes, job.bb)
                    start = earlier_fit2(times, rows, tol, floor, walltime, demand, old, hi,
                                         bisect_right(times, floor) - 1, not profile._low)
                    if start < old:  # moved up: its old slot is given back
                        slot = move(profile, old, start, walltime, demand, horizon)
                        if start > now:
                            insort(stuck, (start, need0, need1, walltime))
                            if len(stuck) > _STUCK:
                                del stuck[0]
                        if log is not None:
                            log_slot(log, slot)
                            if slot.top_nodes > max0:
                                max0 = slot.top_nodes
                            if slot.top_bb > max1:
                                max1 = slot.top_bb
                        future[job.id] = start
                        if touched is not None:
                            touched.append(job.id)
                        if start == now:
                            moved.append((pos, job))
                        continue
                    insort(stuck, (old, need0, need1, walltime))  # (old > floor >= now)
                    if len(stuck) > _STUCK:
                        del stuck[0]
                if log is None:
                    future[job.id] = old
        if kept and kept[0][0] == now:  # reservations due now start now
            for old, pos, job in kept:
                if old > now:
                    break
                started.append((pos, job))
        started.extend(moved)
        if started:
            for _, job in started:
                future.pop(job.id, None)
            if touched is not None:
                touched.extend(job.id for _, job in started)
        # New jobs in queue order: a reservation while within depth, else start now or nothing.
        depth = math.inf if self.depth is None else self.depth
        n_planned = len(kept)
        for pos, job in new:
            if n_planned < depth:
                start = profile.earliest_fit(now, job.walltime, job.demand)
                profile.reserve(start, start + job.walltime, job.demand)
                n_planned += 1
                if start > now:
                    future[job.id] = start
                    if touched is not None:
                        touched.append(job.id)
                    continue
            elif profile.fits(now, job.walltime, job.demand):
                profile.reserve(now, now + job.walltime, job.demand)
            else:
                continue
            started.append((pos, job))
        if len(started) > 1:
            started.sort(key=itemgetter(0))
        jobs = [job for _, job in started]
        # The reservations by (start, id); one Reservation per job and start, kept while the
        # start stays (building them was a tenth of a replay), and the whole tuple kept while
        # no reservation changed (half the decisions on KTH: a submission that starts at once
        # or waits beyond the depth, an end that lets nothing move), else updated where it
        # changed.
        if touched is None:
            booked = cache.booked if cache is not None else {}
            reservations = sorted_reservations(future, booked)
        elif touched:  # (reused: the previous decision returned these for ``previous``)
            booked = cache.booked
            reservations = updated_reservations(cache.reservations, future, booked, touched)
        else:
            booked, reservations = cache.booked, cache.reservations
        if len(booked) > 2 * len(reservations) + 64:
            booked = {r.job_id: r for r in reservations}
        memory = {"reservations": future}
        if holders is None:
            holders = _holders(state)
        for job in jobs:
            holders[job.id] = (now + job.walltime, job.nodes, job.bb)
        if made is None or reused is None:
            made = {job.id: job for _, _, job in kept}
        for _, job in new:
            made[job.id] = job
        if len(made) > 2 * len(future) + 64:
            made = {jid: made[jid] for jid in future}
        self._cache = _Kept(memory, profile, holders, booked, reservations, state.running,
                            state.platform.capacity, self.depth, made)
        return _decision(jobs, reservations, t0=t0, memory=memory)

    def _kernels(self):
        """The compiled compression's module when this decision runs compiled, else ``None``.
        ``compiled`` true or false decides (true: if numba is installed, see
        :func:`bbopt.jit.kernels`); unset, the compressions run compiled once the kernels are
        loaded in this process, or once those run in Python looked at :data:`SWITCH_AFTER`
        reservations (loading then has paid for itself)."""
        if self.compiled is False or (
                self.compiled is None and self._interpreted < SWITCH_AFTER and not _loaded()):
            return None
        return load_kernels("compression")

    def _reuse(self, cache: _Kept | None, state: ClusterState, previous: dict[str, float],
               n_kept: int, horizon: float, fast) -> tuple[Profile, dict, list] | None:
        """The previous decision's profile brought to this state, the jobs holding resources
        in it, and the log of the slots that came free since (with ``fast``, the compiled
        kernels: the profile in arrays, and the slots as (start, end, nodes, BB), given back
        by the compiled compression); ``None`` when it does not
        describe this state (then the profile is built again). It does when ``state.memory``
        is the memory that decision returned, the platform and depth are the same, every job it
        reserved still waits with its reservation not yet due, and every running job is one it
        knew (running, or started by it) with the same expected end. Jobs it knew that are no
        longer running free the rest of their slot: a job that ended before its walltime, or a
        start the engine refused."""
        now = state.time
        if (cache is None or state.memory is not cache.memory or cache.depth != self.depth
                or cache.capacity != state.platform.capacity or now < cache.profile.origin
                or n_kept != len(previous)
                or (previous and min(previous.values()) < now)):
            return None
        holders = cache.holders
        running = state.running
        if running is cache.running and isinstance(running, RunningJobs):
            # The very running jobs the previous decision checked (the engine's tuple, built
            # again whenever a job starts or ends): only count those still due to run, the
            # ones whose expected end has passed leading it (sorted by expected end).
            alive = len(running)
            for r in running:
                if r.start + r.job.walltime > now:
                    break
                alive -= 1
        else:
            alive = 0
            for r in running:
                job = r.job
                end = r.start + job.walltime
                if end <= now:
                    continue
                held = holders.get(job.id)
                if held is None or held[0] != end or held[1] != job.nodes or held[2] != job.bb:
                    return None
                alive += 1
        profile = cache.profile
        if type(profile) is Profile:
            if fast is not None:  # compressions run compiled from now on
                profile = fast.ArrayProfile(profile)
        elif fast is None:  # (compiled kernels turned off since: BBOPT_NO_JIT)
            return None
        profile.advance(now)
        log: list = []
        if alive != len(holders):
            ids = set(map(_job_id, running))
            for jid, (end, n, b) in list(holders.items()):
                if end <= now or jid not in ids:
                    del holders[jid]
                    if end <= now:
                        continue
                    if fast is None:
                        log_slot(log, give_back(profile, now, end, (n, b), horizon))
                    else:
                        log.append((now, end, n, b))
        return profile, holders, log

    def _decide_named(self, state: ClusterState, t0: float) -> Decision:
        """:meth:`decide` on named BB nodes: the profile has one more dimension per BB node,
        and every reservation holds the job's pieces, placed first fit on each BB node's least
        free space over its window, a start now's too (:class:`~bbopt.planner.Planner` with
        ``first_fit`` and ``window_now``), which its start names to the engine. Planned from
        the running jobs and the kept reservations, each held with its own pieces (the memory
        keeps them) -- compiled when the kernels load, on the profile of the previous decision
        where it is the same (:class:`~bbopt.policies.conservative_named.NamedArrays`), else in
        Python (:func:`~bbopt.policies.conservative_replan.replan`) -- and compressed only when
        something came free since the previous decision
        (:func:`~bbopt.policies.conservative_replan.came_free`, from the jobs holding resources
        after it, which the memory keeps). The reservations returned are those of the previous
        decision updated where a start changed (given its memory back)."""
        now = state.time
        queue = tuple(state.queue)
        previous: dict[str, float] = state.memory.get("reservations", {})
        pieces: dict[str, list[float]] = state.memory.get("pieces", {})
        depth = math.inf if self.depth is None else self.depth
        plan = self._named.plan(state, queue, previous, pieces, depth) \
            if self.compiled is not False else None
        if plan is None:
            position = {job.id: k for k, job in enumerate(queue)}
            order = sorted((j for j in queue if j.id in previous),
                           key=lambda j: (max(previous[j.id], now), position[j.id]))
            planned, bytes_on = replan(
                Planner.of(state, first_fit=True, window_now=True), order, previous, pieces,
                depth, queue, came_free(state, len(order)))
            get = planned.get
            starts = [get(job.id, math.nan) for job in queue]
            started = [job for job, t in zip(queue, starts, strict=True) if t == now]
            future = {job.id: t for job, t in zip(queue, starts, strict=True) if t > now}
            held = {jid: list(bytes_on[jid]) for jid in future}
            placed = {job.id: pieces_of_bytes(bytes_on[job.id], job.nodes, job.bb)
                      for job in started}
            touched = None
        else:
            started, future, touched = plan.started, plan.later, plan.moved
            held, placed = plan.held, plan.placed
        booked = self._named_booked
        last = self._named_last
        if last is not None and state.memory is last[0]:
            # (the previous decision's reservations, sorted, where a few starts changed)
            if touched is None:
                pget, fget = previous.get, future.get
                touched = [jid for jid, t in future.items() if pget(jid) != t]
                touched.extend(jid for jid in previous if fget(jid) is None)
            reservations = (updated_reservations(last[1], future, booked, touched) if touched
                            else last[1])
        else:
            reservations = sorted_reservations(future, booked)
        if len(booked) > 2 * len(reservations) + 64:
            self._named_booked = {r.job_id: r for r in reservations}
        holding = plan.holding if plan is not None else holding_after(state, started)
        memory = {"reservations": future, "pieces": held, "holding": holding}
        self._named_last = (memory, reservations)
        return _decision(started, reservations, t0=t0, memory=memory, pieces=placed)


def _displace(kept: list[tuple[float, int, Job]], new: list[tuple[int, Job]],
              displaced: list[tuple[int, Job]], now: float
              ) -> tuple[list[tuple[float, int, Job]], list[tuple[int, Job]], float]:
    """The kept reservations less ``displaced`` (queue position, job: those the state has no
    room for), the jobs to plan afresh with them in queue order, and the latest kept start
    (the compression's horizon)."""
    gone = {pos for pos, _ in displaced}
    kept = [k for k in kept if k[1] not in gone]
    new = sorted(new + displaced, key=_first)
    return kept, new, kept[-1][0] if kept else now


class _Kept(NamedTuple):
    """What :class:`ConservativeBackfilling` keeps from one decision to the next: the memory it
    returned (the key to the rest), the profile as that decision left it (running jobs, the
    jobs it started and its reservations), the jobs holding resources in it (id -> expected
    end, nodes, BB), the reservations it returned (by job id, and as it returned them), the
    running jobs it was given, the platform and depth, and the job each reservation was made
    for."""

    memory: dict
    profile: Profile
    holders: dict[str, tuple[float, int, float]]
    booked: dict[str, Reservation]
    reservations: tuple[Reservation, ...]
    running: tuple  # the running jobs it was given
    capacity: tuple[float, float]
    depth: int | None
    made: dict[str, Job]  # the job each reservation was made for, by id (and some started)


def _resized(before: Job, now: Job) -> bool:
    """Whether a waiting job's request changed since its reservation was made (the nodes, BB
    or walltime it holds)."""
    return (before.nodes != now.nodes or before.bb != now.bb
            or before.walltime != now.walltime)


def _holders(state: ClusterState) -> dict[str, tuple[float, int, float]]:
    """The running jobs still running after now, each with its expected end, nodes and BB."""
    now = state.time
    out = {}
    for r in state.running:
        job = r.job
        end = r.start + job.walltime
        if end > now:
            out[job.id] = (end, job.nodes, job.bb)
    return out

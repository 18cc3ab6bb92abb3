"""Queue-based policies: FCFS, filler, EASY backfilling with and without burst-buffer
reservations, and conservative backfilling.

Kopanski & Rzadca, Euro-Par 2021, Section 3.2, Algorithm 1 and the policy list of Section 4.2:

- ``fcfs``: start jobs in queue order; stop at the first that does not fit (nodes or BB).
- ``filler``: the backfill procedure without reservations: every job that fits now starts, in
  queue order.
- ``fcfs-easy``: EASY backfilling whose head-of-queue reservation holds processors only (the
  standard algorithm, "without line 14"); backfilled jobs still need free nodes and BB now.
  The head job can then act as a barrier (the paper's Section 3.1 example, job 3).
- ``fcfs-bb``: EASY with the head job's processors *and* burst buffer reserved together.
- ``sjf-bb``: as ``fcfs-bb``, backfill candidates taken by walltime, shortest first (the head
  stays the oldest job, as in the authors' code).
- ``conservative-bb``: conservative backfilling: every queued job (up to ``depth`` of them) holds
  a reservation of processors and BB; a job may start only where it delays no reservation.
  Reservations are kept between decisions and only ever moved earlier (compression in
  reservation order), so no reservation is ever delayed. This is Slurm's default backfilling,
  absent from the paper's code.

All of them plan with walltimes, never with the (unknown) runtimes.

Named BB nodes (:attr:`bbopt.core.Platform.bb_nodes`, the authors' 12 x 40 GB): every policy
here starts a job only when its per-node pieces can be placed now by the engine's own rule
(:func:`bbopt.models.bb_nodes.first_fit_pieces`, in the order of the decision's starts), so no start
is refused. The BB-aware reservations are made on the named nodes too: EASY's shadow time is
the first expected end at which the head's pieces can be placed on the BB nodes as they will be
then (running jobs' pieces given back at their expected ends), and a backfilled job still
running then must leave the head placeable there; conservative backfilling keeps one profile
dimension per BB node and reserves each job with its first-fit pieces on the least free space
over its reserved interval.

Length: the EASY variants share their reservation and backfill passes, and conservative
backfilling's profile kept between decisions belongs with it.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable
from itertools import islice
from operator import attrgetter, itemgetter
from typing import NamedTuple

from bbopt.core import (
    ClusterState,
    Decision,
    Job,
    Reservation,
    RunningJobs,
    SolveStats,
    Start,
    Status,
    slack,
)
from bbopt.models.bb_nodes import BBNodeSpace, Pieces, bb_node_space, running_pieces
from bbopt.policies.freed_slots import Freed, give_back, window
from bbopt.policies.named_bb import NamedProfile, named_head_reservation
from bbopt.policies.registry import register
from bbopt.resources import Profile, Release, first_fit_time, profile_of

#: Relative slack when comparing byte sums.


def _fcfs_pass(state: ClusterState, queue: tuple[Job, ...], space: BBNodeSpace | None = None,
               pieces: dict[str, Pieces] | None = None):
    """Start jobs in order while they fit now. Returns (started jobs, index of the first that
    does not fit, free nodes, free bb). With named BB nodes (``space``) a job fits only if its
    pieces can be placed; they are taken from ``space`` and recorded in ``pieces``."""
    free_n, free_b = state.free()
    tol = slack(state.platform.bb)
    started: list[Job] = []
    i = 0
    for job in queue:
        if job.nodes <= free_n and job.bb <= free_b + tol and _place(space, job, pieces):
            started.append(job)
            free_n -= job.nodes
            free_b -= job.bb
            i += 1
        else:
            break
    return started, i, free_n, free_b


def _place(space: BBNodeSpace | None, job: Job, pieces: dict[str, Pieces] | None) -> bool:
    """Take ``job``'s first-fit pieces from ``space`` (always true without named BB nodes)."""
    if space is None:
        return True
    got = space.take(job)
    if got is None:
        return False
    if pieces is not None:
        pieces[job.id] = got
    return True


_FEASIBLE = Status.FEASIBLE  # (an enum member looked up once: this runs at every decision)


def _decision(started: list[Job], reservations=(), t0: float = 0.0, memory=None) -> Decision:
    # A queue rule solves no optimisation model: its answer is feasible, with no optimality claim.
    # (Positional arguments, in field order: the cheapest construction on this hot path.)
    return Decision(
        tuple([Start(j.id) for j in started]) if started else (),
        tuple(reservations), (), (),
        SolveStats("rule", _FEASIBLE, None, None, None, _time.perf_counter() - t0),
        memory,
    )


@register("fcfs")
class FCFS:
    """First come, first served without backfilling: stop at the first job that does not fit."""

    io_aware = False
    idle_unless_fits = True  # (the engine skips decisions where no waiting job fits)

    def __init__(self, name: str = "fcfs") -> None:
        self.name = name

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        started, _, _, _ = _fcfs_pass(state, state.queue, bb_node_space(state))
        return _decision(started, t0=t0)


@register("filler")
class Filler:
    """Backfilling without reservations: every job that fits now starts, in queue order."""

    io_aware = False
    idle_unless_fits = True  # (the engine skips decisions where no waiting job fits)

    def __init__(self, name: str = "filler") -> None:
        self.name = name

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        free_n, free_b = state.free()
        tol = slack(state.platform.bb)
        space = bb_node_space(state)
        started = []
        for job in state.queue:
            if job.nodes <= free_n and job.bb <= free_b + tol and _place(space, job, None):
                started.append(job)
                free_n -= job.nodes
                free_b -= job.bb
                if free_n == 0:
                    break
        return _decision(started, t0=t0)


@register("fcfs-easy",
          about="EASY backfilling, head reservation of processors only (BB can block)",
          reserve_bb=False, order="fcfs")
@register("fcfs-bb",
          about="EASY backfilling with the head job's processors and BB reserved together",
          reserve_bb=True, order="fcfs")
@register("sjf-bb",
          about="as fcfs-bb, backfill candidates by walltime, shortest first",
          reserve_bb=True, order="sjf")
class EasyBackfilling:
    """EASY backfilling: the head job gets a reservation; others may start if they do not delay it.

    ``reserve_bb``: reserve the head's burst buffer together with its processors (``fcfs-bb``,
    ``sjf-bb``) or processors only (``fcfs-easy``). ``order``: backfill candidates in queue order
    (``fcfs``) or by walltime, shortest first (``sjf``).
    """

    io_aware = False
    idle_unless_fits = True  # (the engine skips decisions where no waiting job fits)

    def __init__(self, name: str = "fcfs-bb", reserve_bb: bool = True, order: str = "fcfs"):
        if order not in ("fcfs", "sjf"):
            raise ValueError(f"order must be 'fcfs' or 'sjf', got {order!r}")
        self.name = name
        self.reserve_bb = reserve_bb
        self.order = order

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        if state.platform.bb_nodes is not None:
            return self._decide_named(state, t0)
        queue = state.queue
        started, i, free_n, free_b = _fcfs_pass(state, queue)
        if i == len(queue):
            return _decision(started, t0=t0)
        head = queue[i]
        shadow, extra_n, extra_b = head_reservation(state, started, head, free_n, free_b,
                                                    reserve_bb=self.reserve_bb)
        rest = islice(queue, i + 1, None)  # (no copy of the queue per decision)
        if self.order == "sjf":
            # Only jobs that fit now can be backfilled (what is free only shrinks during the
            # pass): sorting just those gives them in the order the sorted queue would.
            fit_b = free_b + slack(state.platform.bb)
            rest = sorted([j for j in rest if j.nodes <= free_n and j.bb <= fit_b],
                          key=_walltime) if free_n > 0 else ()
        started += backfill(state, rest, shadow, (free_n, free_b), (extra_n, extra_b),
                            reserve_bb=self.reserve_bb)
        return _decision(started, (Reservation(head.id, shadow),), t0=t0)

    def _decide_named(self, state: ClusterState, t0: float) -> Decision:
        """:meth:`decide` on named BB nodes: starts placed now, the head's reservation (with
        ``reserve_bb``) placed on the BB nodes at the shadow time."""
        queue = state.queue
        held = running_pieces(state)
        space = bb_node_space(state, held)
        pieces: dict[str, Pieces] = {}
        started, i, free_n, free_b = _fcfs_pass(state, queue, space, pieces)
        if i == len(queue):
            return _decision(started, t0=t0)
        head = queue[i]
        shadow, extra_n, extra_b, at_shadow = named_head_reservation(
            state, started, head, free_n, free_b, space, {**held, **pieces},
            reserve_bb=self.reserve_bb)
        rest = islice(queue, i + 1, None)
        if self.order == "sjf":
            rest = sorted(rest, key=_walltime)
        started += backfill(state, rest, shadow, (free_n, free_b), (extra_n, extra_b),
                            reserve_bb=self.reserve_bb,
                            named=(space, at_shadow, head))
        return _decision(started, [Reservation(head.id, shadow)], t0=t0)


def head_reservation(state: ClusterState, started: list[Job], head: Job, free_n: float,
                     free_b: float, *, reserve_bb: bool = True) -> tuple[float, float, float]:
    """EASY's reservation for ``head``: the shadow time and the nodes and BB left over there.

    Running jobs and the ``started`` ones release their resources at their expected ends;
    ``free_n``, ``free_b`` are what is free now once ``started`` run. With ``reserve_bb`` false
    only processors are reserved (the standard algorithm; Kopanski & Rzadca, Algorithm 1 without
    line 14).
    """
    now = state.time
    running = state.running
    need_n, need_b = head.nodes, (head.bb if reserve_bb else 0.0)
    tol = slack(state.platform.bb)
    if type(running) is RunningJobs:
        return _pooled_shadow(now, running, started, free_n, free_b, need_n, need_b, tol)
    ends = [Release(r.start + r.job.walltime, r.job.nodes, r.job.bb) for r in running]
    ends.extend(Release(now + j.walltime, j.nodes, j.bb) for j in started)
    ends.sort(key=_release_time)
    free = [free_n, free_b]

    def fits() -> bool:
        return free[0] >= need_n and free[1] + tol >= need_b

    def give(r: Release) -> None:
        free[0] += r.nodes
        free[1] += r.bb

    shadow = first_fit_time(now, ends, fits, give)
    if shadow == math.inf:  # cannot happen for jobs that fit the platform
        return math.inf, 0, 0.0
    return shadow, free[0] - need_n, free[1] - need_b


def _pooled_shadow(now: float, running: RunningJobs, started: list[Job], free_n: float,
                   free_b: float, need_n: float, need_b: float,
                   tol: float) -> tuple[float, float, float]:
    """:func:`~bbopt.resources.first_fit_time` written out for pooled nodes and BB over the
    engine's running jobs, which come sorted by expected end: they are merged on the fly with
    the (few) jobs started now, those of one instant given together (running ones first, as a
    stable sort of both would), and the scan stops at the shadow time -- no record per running
    job, no sort, no closure calls. Returns what :func:`head_reservation` returns."""
    if free_n >= need_n and free_b + tol >= need_b:
        return now, free_n - need_n, free_b - need_b
    inf = math.inf
    mine = sorted([(now + j.walltime, j.nodes, j.bb) for j in started], key=_first) \
        if started else []
    m, i = len(mine), 0
    mt = mine[0][0] if m else inf
    it = iter(running)
    r = next(it, None)
    rt = r.start + r.job.walltime if r is not None else inf
    while True:
        t = rt if rt <= mt else mt
        if t == inf:  # cannot happen for jobs that fit the platform
            return inf, 0, 0.0
        while rt == t:
            job = r.job
            free_n += job.nodes
            free_b += job.bb
            r = next(it, None)
            rt = r.start + r.job.walltime if r is not None else inf
        while mt == t:
            _, n, b = mine[i]
            free_n += n
            free_b += b
            i += 1
            mt = mine[i][0] if i < m else inf
        if free_n >= need_n and free_b + tol >= need_b:
            return (t if t > now else now), free_n - need_n, free_b - need_b


_first = itemgetter(0)
_release_time = attrgetter("time")
_walltime = attrgetter("walltime")


def backfill(state: ClusterState, candidates, shadow: float, free: tuple[float, float],
             extra: tuple[float, float], *, reserve_bb: bool = True,
             accept: Callable[[Job], bool] | None = None,
             named: tuple[BBNodeSpace, BBNodeSpace | None, Job] | None = None) -> list[Job]:
    """EASY's backfill pass: the ``candidates`` (in the order given) that start now.

    A candidate needs the nodes and BB free now; if it would still run at the ``shadow`` time
    it may only use the ``extra`` resources the head's reservation leaves there (BB counted only
    with ``reserve_bb``). ``accept(job)`` can veto a candidate that passes these checks (e.g. no
    nodes with enough local SSD); a vetoed job takes nothing.

    ``named``: on named BB nodes, ``(space now, space at the shadow time or None, head)``: a
    candidate's pieces must be placeable now, and one still running at the shadow time must
    leave the head's pieces placeable on the space there (both spaces are updated).
    """
    now = state.time
    tol = slack(state.platform.bb)
    free_n, free_b = free
    extra_n, extra_b = extra
    out: list[Job] = []
    for job in candidates:
        if free_n <= 0:
            break
        n, b = job.nodes, job.bb
        if n > free_n or b > free_b + tol:
            continue
        late = now + job.walltime > shadow
        # A job still running at the shadow time may only use what the head leaves over there.
        if late and (n > extra_n or (reserve_bb and b > extra_b + tol)):
            continue
        if accept is not None and not accept(job):
            continue
        if named is not None:
            space, at_shadow, head = named
            got = space.place(n, b) if b > 0 else ()
            if got is None:
                continue
            if late and at_shadow is not None and got:
                trial = at_shadow.copy()
                trial.take_pieces(got)
                if not trial.fits(head):
                    continue
                named = (space, trial, head)
            space.take_pieces(got)
        if late:
            extra_n -= n
            if reserve_bb:
                extra_b -= b
        out.append(job)
        free_n -= n
        free_b -= b
    return out


#: Reservations made by conservative-bb at one decision unless ``depth`` says otherwise.
DEFAULT_DEPTH = 1000
#: How many reservations that could not move conservative-bb remembers within one compression.
_STUCK = 8


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
    reservation, compress them all.
    """

    io_aware = False

    def __init__(self, name: str = "conservative-bb",
                 depth: int | None = DEFAULT_DEPTH) -> None:
        if depth is not None and depth < 1:
            raise ValueError("depth must be >= 1 or None")
        self.name = name
        self.depth = depth
        self._cache: _Kept | None = None

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        if state.platform.bb_nodes is not None:
            return self._decide_named(state, t0)
        now = state.time
        queue = state.queue
        previous: dict[str, float] = state.memory.get("reservations", {})
        # One pass over the queue: the kept reservations, by (start, queue position), and the
        # jobs that have none yet, in queue order.
        kept: list[tuple[float, int, Job]] = []
        new: list[tuple[int, Job]] = []
        get = previous.get
        for pos, job in enumerate(queue):
            s = get(job.id)
            if s is None:
                new.append((pos, job))
            else:
                kept.append((s if s > now else now, pos, job))
        kept.sort()
        cache, self._cache = self._cache, None  # (dropped if this decision fails half-way)
        horizon = kept[-1][0] if kept else now  # no reservation moves from a later start
        reused = self._reuse(cache, state, previous, len(kept), horizon)
        if reused is None:
            profile = profile_of(state)
            # Hold every kept reservation, then compress them one at a time, earliest first:
            # each job's old slot stays free while the others move, so no job ever moves later.
            for start, _, job in kept:
                profile.reserve(start, start + job.walltime, job.demand)
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
        moved: list[tuple[int, Job]] = []  # (queue position, job) of the kept jobs starting now
        started: list[tuple[int, Job]] = []
        if log is None or log:
            tol0, tol1 = profile._tol
            max0 = max1 = -math.inf  # the maxima of every slot in the log
            for slot in log or ():
                max0 = max(max0, slot.max_nodes[-1])
                max1 = max(max1, slot.max_bb[-1])
            # Reservations already compressed here, as (nodes, BB, walltime, start): no start
            # before theirs fitted them, so none fits a later one that needs at least as much of
            # everything (the room a move gives back lies after the mover's old start, hence
            # after theirs, and the profile has only lost room before it).
            stuck: list[tuple[float, float, float, float]] = []
            for old, pos, job in kept:
                need0, need1 = job.nodes - tol0, job.bb - tol1
                walltime = job.walltime
                if log is None:
                    lo, hi = now, old
                elif need0 > max0 or need1 > max1:
                    continue
                else:
                    lo, hi = window(log, now, old, walltime, need0, need1)
                for s0, s1, sw, sold in stuck:
                    if sold > lo and need0 >= s0 and need1 >= s1 and walltime >= sw:
                        lo = sold
                if lo < hi:
                    start = profile.earlier_fit(now, walltime, job.demand, old, lo, hi)
                    if start < old:  # moved up: its old slot is given back
                        end = old + walltime
                        if log is None:
                            profile.release(old, end, job.demand)
                        else:
                            slot = give_back(profile, old, end, job.demand, horizon)
                        profile.reserve(start, start + walltime, job.demand)
                        if len(stuck) == _STUCK:
                            del stuck[0]
                        stuck.append((need0, need1, walltime, start))
                        if log is not None:
                            log.append(slot)
                            max0 = max(max0, slot.max_nodes[-1])
                            max1 = max(max1, slot.max_bb[-1])
                        future[job.id] = start
                        if start == now:
                            moved.append((pos, job))
                        continue
                    if len(stuck) == _STUCK:
                        del stuck[0]
                    stuck.append((need0, need1, walltime, old))
                if log is None:
                    future[job.id] = old
        if kept and kept[0][0] == now:  # reservations due now start now
            for old, pos, job in kept:
                if old > now:
                    break
                started.append((pos, job))
        started.extend(moved)
        for _, job in started:
            future.pop(job.id, None)
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
        # start stays (building them was a tenth of a replay).
        booked = cache.booked if cache is not None else {}
        reservations = []
        for jid, t in sorted(future.items(), key=itemgetter(1, 0)):
            r = booked.get(jid)
            if r is None or r.start != t:
                r = booked[jid] = Reservation(jid, t)
            reservations.append(r)
        if len(booked) > 2 * len(reservations) + 64:
            booked = {r.job_id: r for r in reservations}
        memory = {"reservations": future}
        if holders is None:
            holders = _holders(state)
        for job in jobs:
            holders[job.id] = (now + job.walltime, job.nodes, job.bb)
        self._cache = _Kept(memory, profile, holders, booked, state.platform.capacity,
                            self.depth)
        return _decision(jobs, reservations, t0=t0, memory=memory)

    def _reuse(self, cache: _Kept | None, state: ClusterState, previous: dict[str, float],
               n_kept: int, horizon: float) -> tuple[Profile, dict, list[Freed]] | None:
        """The previous decision's profile brought to this state, the jobs holding resources
        in it, and the log of the slots that came free since; ``None`` when it does not
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
        alive = 0
        for r in state.running:
            job = r.job
            end = r.start + job.walltime
            if end <= now:
                continue
            held = holders.get(job.id)
            if held is None or held[0] != end or held[1] != job.nodes or held[2] != job.bb:
                return None
            alive += 1
        profile = cache.profile
        profile.advance(now)
        log: list[Freed] = []
        if alive != len(holders):
            running = {r.job.id for r in state.running}
            for jid, (end, n, b) in list(holders.items()):
                if end <= now or jid not in running:
                    del holders[jid]
                    if end > now:
                        log.append(give_back(profile, now, end, (n, b), horizon))
        return profile, holders, log

    def _decide_named(self, state: ClusterState, t0: float) -> Decision:
        """:meth:`decide` on named BB nodes: the profile has one more dimension per BB node,
        and every reservation holds the job's first-fit pieces (see
        :class:`~bbopt.policies.named_bb.NamedProfile`)."""
        now = state.time
        queue = state.queue
        previous: dict[str, float] = dict(state.memory.get("reservations", {}))
        plan = NamedProfile(state)
        position = {job.id: k for k, job in enumerate(queue)}
        kept = []
        for job in queue:  # hold every kept reservation that can still be placed there
            if job.id in previous and plan.hold(job, max(previous[job.id], now)):
                kept.append(job)
        kept.sort(key=lambda j: (max(previous[j.id], now), position[j.id]))
        planned: dict[str, float] = {}
        for job in kept:  # compression, earliest first: never later than before
            old = max(previous[job.id], now)
            plan.drop(job)
            start = plan.earliest(job, limit=old)
            if start == math.inf or not plan.hold(job, start):
                start = old
                plan.hold(job, old)  # the slot it held a moment ago
            planned[job.id] = start
        depth = math.inf if self.depth is None else self.depth
        for job in queue:
            if job.id in planned:
                continue
            if len(planned) < depth:
                start = plan.earliest(job)
                if start < math.inf and plan.hold(job, start):
                    planned[job.id] = start
            elif plan.hold(job, now):
                planned[job.id] = now
        started = [job for job in queue if planned.get(job.id) == now]
        future = {jid: t for jid, t in planned.items() if t > now}
        reservations = [Reservation(jid, t) for jid, t in sorted(future.items(),
                                                                 key=lambda x: (x[1], x[0]))]
        return _decision(started, reservations, t0=t0, memory={"reservations": future})


class _Kept(NamedTuple):
    """What :class:`ConservativeBackfilling` keeps from one decision to the next: the memory it
    returned (the key to the rest), the profile as that decision left it (running jobs, the
    jobs it started and its reservations), the jobs holding resources in it (id -> expected
    end, nodes, BB), the reservations it returned (by job id), and the platform and depth."""

    memory: dict
    profile: Profile
    holders: dict[str, tuple[float, int, float]]
    booked: dict[str, Reservation]
    capacity: tuple[float, float]
    depth: int | None


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

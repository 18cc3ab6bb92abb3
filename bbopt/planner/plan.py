"""The planner: a platform's nodes, burst buffer, node-local SSD and node ids from now on, as a
policy plans on them -- when is there room for a job, and take it.

Kopanski & Rzadca, Euro-Par 2021, Section 3.2: a job is placed at the earliest time at which its
processors *and* its burst buffer are free for its whole walltime; on named BB nodes its
per-node pieces must be placeable there too (Section 4.1). The planner keeps an availability
profile (:class:`~bbopt.planner.profile.Profile`) whose dimensions are the nodes, the pooled BB
bytes and, on named BB nodes, the bytes of each BB node; running jobs free what they hold at
their expected ends. Starts now are taken exactly as the engine's ledger admits them (the same
placement object and node choice, :func:`~bbopt.planner.bb.bb_placement` and
:func:`~bbopt.planner.bb.choose_nodes`), so a start the planner grants is never refused;
reservations later hold the job's pieces placed by the same placement on the least free space of
each BB node over its interval (the fast path on named BB nodes: :mod:`bbopt.planner.fast_path`).

Node ids over time: when the placement chooses a job's compute nodes (the authors' proximity
placement, Section 4.1, whose pieces follow the nodes), a later start takes its nodes from the
ids free then -- free now, plus those of the running and started jobs whose expected end is that
time or earlier -- less the nodes every overlapping reservation names, and its reservation names
the nodes it holds. A job started now avoids the nodes of the reservations it would still run
over (EASY's head holds named compute nodes from its shadow time on, as in the authors'
scheduler), and a re-placeable reservation must stay placeable on its own nodes.

Length: one class, the planner's whole public surface (starts now, earliest starts, holds,
releases, node ids over time, snapshots); its scans and placements live in their own modules.

Example: two nodes busy until 10, a job of three nodes fits at 10.

>>> from bbopt.core import ClusterState, Job, Platform, RunningJob
>>> state = ClusterState(0.0, Platform(4, 10.0), (RunningJob(Job("r", 0, 10.0, nodes=2), 0.0),))
>>> p = Planner.of(state)
>>> big = Job("big", 0, 5.0, nodes=3)
>>> p.start(big), p.earliest(big)
(None, 10.0)
>>> p.reserve(big, 10.0)
>>> p.earliest(Job("next", 0, 20.0, nodes=2))
15.0
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter

from bbopt.core import ClusterState, Job, Platform, RunningJob, RunningJobs, Start
from bbopt.planner.bb import FirstFitBB, bb_placement, profile_slacks
from bbopt.planner.fast_path import TwoDimensions
from bbopt.planner.links import LinkState, OnTheTree
from bbopt.planner.node_ids import NodeIds
from bbopt.planner.pieces import pieces_of_bytes, running_pieces
from bbopt.planner.profile import OverbookedError, Profile
from bbopt.planner.snapshots import Snapshots

_first = itemgetter(0)


class Planner(TwoDimensions, OnTheTree, NodeIds, Snapshots):
    """Free nodes, BB and BB-node space over time from ``now`` on (module docstring)."""

    #: Whether the fast path on named BB nodes may be taken (``False``: the reference profile).
    fast_path: bool = True

    __slots__ = ("platform", "now", "bb", "k", "running", "pieces", "_free_nodes", "_profile",
                 "holds", "chosen", "floating", "started", "named", "_two", "_later", "_ends",
                 "_bb_rows", "_log", "_run_pieces", "_run_ends", "_run_rel", "_ids", "_ids_n",
                 "_lazy", "_lazy_n", "_run_ids", "links", "window_now")

    def __init__(self, platform: Platform, now: float, running: Iterable[RunningJob] = (),
                 pieces: dict[str, tuple[tuple[int, float], ...]] | None = None, *,
                 first_fit: bool = False, links: LinkState | None = None,
                 window_now: bool = False) -> None:
        """``running``: the jobs holding resources now, freed at their expected ends;
        ``pieces``: the ``(BB node, bytes)`` pieces each holds on named BB nodes. The free node
        ids and the profile are built when first needed (a decision that only starts jobs now
        on a BB pool needs neither). ``first_fit``: named BB placed first fit whatever the
        platform's placement, for a policy whose starts leave the compute nodes to the
        engine. ``links``: the I/O tree's link bandwidth (:mod:`bbopt.planner.links`).
        ``window_now``: a start now places its pieces as a reservation does, on each BB
        node's least free space over its window, not on the BB nodes as they are now (a policy
        whose starts name their pieces, so that they fit between the reservations' own)."""
        self.platform = platform
        self.window_now = window_now
        self.links = links
        self.now = now
        self.bb = bb = (FirstFitBB(platform) if first_fit and platform.bb_nodes is not None
                        else bb_placement(platform))
        self.running = running if isinstance(running, tuple) else tuple(running)
        self.pieces = pieces or {}
        if bb.named:
            self.k = len(platform.bb_nodes)
            bb.take_each(self.running, self.pieces)
        else:
            self.k = 0
        self._free_nodes: list[int] | None = None
        # (first fit without local SSDs: a start's nodes are the lowest free ones, which the
        # engine takes itself and the placement ignores; until the node ids are asked for,
        # the starts are only counted: (id, nodes) in order, and how many nodes are left)
        self._lazy: list[tuple[str, int]] | None = None
        self._lazy_n = 0
        if not bb.chooses_nodes and platform.node_ssd is None and \
                type(self.running) is RunningJobs:
            self._lazy = []
            self._lazy_n = platform.nodes - self.running.held[0]
        self._profile: Profile | None = None
        # The fast path on named BB nodes (bbopt.planner.fast_path): a profile of nodes and
        # pooled BB, the first hold after now, ends of jobs started now, BB-node bytes by time.
        self._two: Profile | None = None
        self._later = math.inf  # (the earliest start of a hold after now)
        self._ends: dict[str, float] = {}
        self._bb_rows: dict[float, list[float]] = {}
        self._log: list[tuple[float, float, tuple[float, ...]]] = []  # (its holds, in order)
        # (the running jobs' expected ends and pieces, by expected end, and the bytes the first
        # k of them give back, by k asked for)
        self._run_pieces: list[tuple[float, Sequence[tuple[int, float]]]] = []
        self._run_ends: list[float] = []
        self._run_rel: dict[int, list[float]] = {}
        self.holds: dict[str, tuple[float, float, tuple[float, ...]]] = {}
        #: The re-placeable reservations on named BB nodes, by id: ``(job, start)``
        #: (:meth:`reserve` with ``replace``).
        self.floating: dict[str, tuple[Job, float]] = {}
        #: The compute nodes of the jobs :meth:`start` started now, by id.
        self.started: dict[str, tuple[int, ...]] = {}
        #: The compute nodes the BB placement chose for the jobs :meth:`take_bb` took or
        #: :meth:`start` started, by id (when the placement chooses them; the engine must then
        #: be told).
        self.chosen: dict[str, tuple[int, ...]] = {}
        #: The compute nodes each reservation holds, ``(start, end, nodes)`` by id (when the
        #: placement chooses them: module docstring).
        self.named: dict[str, tuple[float, float, tuple[int, ...]]] = {}
        # (free_ids and the nodes chosen from them, kept until the node ids change)
        self._ids: dict[tuple, list[int]] = {}
        self._ids_n: dict[tuple, tuple[int, ...] | None] = {}
        # (the expected ends of the running jobs whose nodes are known, in order, and their
        # nodes: those free again by a time are a prefix)
        self._run_ids: tuple[list[float], list[tuple[int, ...]]] | None = None

    @property
    def profile(self) -> Profile:
        """Free nodes, pooled BB and bytes on each named BB node over time."""
        if self._profile is None:
            platform, pieces = self.platform, self.pieces
            releases = [(r.expected_end, self._demand(r.job, pieces.get(r.job.id, ())))
                        for r in self.running]
            profile = Profile(self.now, (platform.nodes, platform.bb,
                                         *(platform.bb_nodes or ())), releases,
                              slacks=profile_slacks(platform))
            for start, end, demand in self._log:  # (the fast path's holds, in order)
                profile.reserve(start, end, demand)
            self._profile, self._two, self._log = profile, None, []
        return self._profile

    @profile.setter
    def profile(self, profile: Profile) -> None:
        self._profile = profile

    @classmethod
    def of(cls, state: ClusterState, *, first_fit: bool = False, links: bool = False,
           window_now: bool = False) -> Planner:
        """The planner of a :class:`~bbopt.core.ClusterState` at its time (``first_fit``,
        ``window_now``: see the constructor; ``links``: plan the link bandwidth of the
        platform's I/O tree too)."""
        if links:  # (link bandwidth on the I/O tree: bbopt.planner.links)
            return cls(state.platform, state.time, state.running, links=LinkState.of(state))
        pieces = None
        if state.platform.bb_nodes is not None:
            # (the engine's states name every running job's pieces: read them as they are;
            # running_pieces places again those a state built by hand lacks)
            pieces = {r.job.id: r.bb_pieces for r in state.running if r.bb_pieces is not None}
            if len(pieces) < len(state.running) and any(
                    r.bb_pieces is None and r.job.bb > 0 for r in state.running):
                pieces = running_pieces(state)
        return cls(state.platform, state.time, state.running, pieces, first_fit=first_fit,
                   window_now=window_now)

    @classmethod
    def placing(cls, state: ClusterState) -> Planner | None:
        """The planner of ``state`` when its starts have burst buffer to place (named BB
        nodes, by first fit or proximity); ``None`` when the BB is one pool, where a policy's
        own count of free nodes and pooled bytes is the whole rule. For the queue rules, which
        decide tens of thousands of times per trace and start jobs now only."""
        return None if state.platform.bb_nodes is None else cls.of(state)

    def _demand(self, job: Job, pieces: Sequence[tuple[int, float]]) -> tuple[float, ...]:
        if not self.k:
            return (job.nodes, job.bb)
        vec = [0.0] * self.k
        for b, size in pieces:
            vec[b] += size
        return (job.nodes, job.bb, *vec)

    def _place_over(self, job: Job, start: float, free: Sequence[float], pieces: bool = True
                    ) -> tuple[tuple[int, ...], list | None] | None:
        """The compute nodes (when the placement chooses them) and BB pieces of ``job`` started
        at ``start`` on BB nodes with ``free`` bytes free, or ``None``. Without ``pieces`` only
        whether they can be placed (the pieces ``None``): a question of earliest start."""
        nodes: tuple[int, ...] | None = ()
        if self.bb.chooses_nodes or not pieces:
            if not self.bb.placeable(job, free):  # (the cheap test first)
                return None
            if self.bb.chooses_nodes:
                if not pieces and self._counted(job):  # (the caller tested the profile)
                    return (), None
                nodes = self._choose(job, start)
                if nodes is None:
                    return None
            if not pieces:
                return nodes, None
        got = self.bb.place_on(free, job, nodes)
        return None if got is None else (nodes, got)

    # ------------------------------------------------------------------ now
    def placement_now(self, job: Job) -> tuple[tuple[int, ...], list] | None:
        """The compute nodes and BB pieces ``job`` would get if it started now, or ``None``
        when it cannot start now (nothing changes)."""
        if self.window_now and self.k:  # (placed as a reservation is, over the window)
            placed = self._pieces_over(job, self.now)
            if placed is None:
                return None
            nodes = placed[0] if self.bb.chooses_nodes else self._choose(job, self.now)
            if nodes is None:
                return None
            return nodes, list(pieces_of_bytes(placed[1][2:], job.nodes, job.bb))
        two = self._two if self._two is not None else self._split()
        if two is not None:
            return self._placement_now_split(two, job)
        profile = self.profile
        row, tol = profile.free[0], profile._tol  # (now: the profile's first segment)
        if job.nodes > row[0] + tol[0] or job.bb > row[1] + tol[1] or (
                self.k and not profile.fits(self.now, job.walltime, (job.nodes, job.bb))):
            return None  # (the cheap tests first: most jobs of a long queue fail them)
        if self.bb.chooses_nodes and not self.bb.placeable(job):
            return None
        nodes = self._choose(job, self.now)
        if nodes is None:
            return None
        got = self.bb.placement(job, nodes)
        if got is None:
            return None
        demand = self._demand(job, got)
        if not self.profile.fits(self.now, job.walltime, demand) or (
                self.floating and not self._leaves_floating(self.now, job.walltime, demand)):
            return None
        return nodes, got

    def fits_now(self, job: Job) -> bool:
        """Whether ``job`` can start now without delaying any reservation."""
        if self.links is not None:
            return self._nodes_linked(job) is not None
        return self.placement_now(job) is not None

    def start(self, job: Job) -> Start | None:
        """Start ``job`` now if it fits (taking its resources until its walltime ends) and
        return its :class:`~bbopt.core.Start` (naming its compute nodes when the BB placement
        chooses them, as the engine would); ``None`` if it does not fit now."""
        if self.links is not None:  # (the nodes Herbein's greedy selects on the I/O tree)
            return self._start_linked(job)
        placed = self.placement_now(job)
        if placed is None:
            return None
        return self._start_with(job, *placed)

    def _start_with(self, job: Job, nodes: tuple[int, ...], got: Sequence[tuple[int, float]]
                    ) -> Start:
        """Start ``job`` now on ``nodes`` with the BB pieces ``got`` (they fit)."""
        self.bb.take(job, got)
        if self._lazy is not None:
            self._lazy.append((job.id, job.nodes))
            self._lazy_n -= job.nodes
        else:
            taken = set(nodes)
            self.free_nodes = [x for x in self.free_nodes if x not in taken]
            self.started[job.id] = nodes
        self._hold(job, self.now, self._demand(job, got))
        if not self.bb.chooses_nodes:
            return Start(job.id, None)
        self.chosen[job.id] = nodes
        return Start(job.id, nodes)

    def start_each(self, jobs: Iterable[Job]) -> list[Job]:
        """:meth:`start` every job of ``jobs`` that fits now, in this order (a backfill pass
        over a long queue: the free nodes and BB now are compared before anything is placed);
        the jobs started."""
        return self.start_each_block(((jobs, None),))

    def start_each_block(self, blocks: Iterable[tuple[Iterable[Job], Sequence[float] | None]]
                         ) -> list[Job]:
        """:meth:`start_each` over the jobs of ``blocks``, ``(jobs, least)`` in order, where
        ``least`` (or ``None``) bounds every job's nodes and BB from below (a long queue's
        :meth:`~bbopt.queue_view.QueueView.blocks_from`): a block whose least nodes or BB are
        not free now holds no job that starts, and is skipped whole."""
        out: list[Job] = []
        two = self._split()
        profile = two or self.profile
        tol0, tol1 = profile._tol[0], profile._tol[1]
        row = profile.free[0]  # (the first row, changed in place by each start now)
        # (on the fast path, a job still running at the first hold after now must fit the row
        # there, the first one placement_now tests for it: tested here first, and a block
        # whose least job is such a job and does not fit it is skipped whole)
        now, later = self.now, self._later
        late = self._later_row(two) if two is not None else None
        for jobs, least in blocks:
            if row[0] + tol0 < 1:
                break  # (no node left now)
            if least is not None and (least[0] > row[0] + tol0 or least[1] > row[1] + tol1 or (
                    late is not None and len(least) > 2 and now + least[2] > later and (
                        least[0] > late[0] + tol0 or least[1] > late[1] + tol1))):
                continue
            for job in jobs:
                if row[0] + tol0 < 1:
                    break
                n, b = job.nodes, job.bb
                if n > row[0] + tol0 or b > row[1] + tol1 or (
                        late is not None and now + job.walltime > later and (
                            n > late[0] + tol0 or b > late[1] + tol1)):
                    continue
                if self.start(job) is not None:
                    out.append(job)
                    if self._profile is not None:  # (the fast path may have ended)
                        row = self._profile.free[0]
                        late = None
                    elif late is not None:
                        late = self._later_row(two)
        return out

    def may_start_now(self, jobs: Iterable[Job]) -> list[Job]:
        """The jobs of ``jobs`` whose nodes and pooled BB are free now, in order: those of
        them a pass of :meth:`start_each` could start (what is free only shrinks during it),
        e.g. to sort just those."""
        profile = self._split() or self.profile
        row, tol = profile.free[0], profile._tol
        n, b = row[0] + tol[0], row[1] + tol[1]
        return [job for job in jobs if job.nodes <= n and job.bb <= b] if n >= 1 else []

    def _bb_now(self, job: Job, nodes: Sequence[int] | None = None
                ) -> tuple[tuple[int, ...], list] | None:
        if not self.bb.chooses_nodes:
            nodes = ()
        elif nodes is None:
            nodes = self.bb.choose_nodes(self.free_nodes, job.nodes)
            if nodes is None:
                return None
        else:
            nodes = tuple(nodes)
        got = self.bb.placement(job, nodes)
        return None if got is None else (nodes, got)

    def bb_fits(self, job: Job) -> bool:
        """Whether ``job``'s burst buffer can be placed now where the engine will place it
        (always on a pool; nodes and pooled bytes are the caller's to count)."""
        return self._bb_now(job) is not None

    def take_bb(self, job: Job, nodes: Sequence[int] | None = None) -> bool:
        """Place ``job``'s burst buffer now (with the compute nodes, when the placement chooses
        them: ``nodes`` if given, free ones, else its own choice) and take it; ``False``,
        nothing taken, when it cannot be placed. For a policy that counts nodes and pooled
        bytes itself and starts jobs in this order."""
        if not self.bb.named:  # (one pool: the caller's count of pooled bytes is all, but for
            return self.links is None or self.start(job) is not None  # the I/O tree's nodes)
        placed = self._bb_now(job, nodes)
        if placed is None:
            return False
        nodes, got = placed
        self.bb.take(job, got)
        self._bb_rows.clear()
        if nodes:
            taken = set(nodes)
            self.free_nodes = [x for x in self.free_nodes if x not in taken]
            self.chosen[job.id] = nodes
        return True

    def give_back_bb(self, job: Job) -> None:
        """Undo :meth:`take_bb` of ``job`` (a start of this decision taken back): its BB
        pieces and its compute nodes are free again."""
        if not self.bb.named:
            if self.links is not None:
                self.release(job)
            return
        self.bb.release(job)
        self._bb_rows.clear()
        nodes = self.chosen.pop(job.id, ())
        if nodes:
            self.free_nodes = sorted((*self.free_nodes, *nodes))

    # ------------------------------------------------------------------ later
    def _pieces_over(self, job: Job, start: float, pieces: bool = True
                     ) -> tuple[tuple[int, ...], tuple[float, ...] | None] | None:
        """The compute nodes (when the placement chooses them) and the demand of ``job`` held
        on ``[start, start + walltime)`` if it fits there: on named BB nodes, its pieces placed
        on the least free space of each BB node over the interval. Without ``pieces``, the
        demand is ``None`` when no re-placeable reservation needs it (whether it fits only)."""
        two = self._split()
        if two is not None:
            return self._pieces_over_split(two, job, start, pieces)
        p = self.profile
        if not self.k:
            demand = (job.nodes, job.bb)
            return ((), demand) if p.fits(start, job.walltime, demand) else None
        times, rows = p.times, p.free
        i = max(bisect_right(times, start) - 1, 0)
        end = start + job.walltime
        low = list(rows[i])
        i += 1
        while i < len(times) and times[i] < end:
            low = [a if a < c else c for a, c in zip(low, rows[i], strict=True)]
            i += 1
        if not p.fits(start, job.walltime, (job.nodes, job.bb) + (0.0,) * self.k):
            return None
        return self._placed_over(job, start, low[2:], pieces, self._leaves_floating)

    def _placed_over(self, job: Job, start: float, bb_free: Sequence[float], pieces: bool,
                     leaves: Callable[[float, float, Sequence[float]], bool]
                     ) -> tuple[tuple[int, ...], tuple[float, ...] | None] | None:
        """The nodes and demand of ``job`` placed at ``start`` on the BB nodes' free space
        ``bb_free``, once its nodes and pooled BB fit: ``None`` where its pieces cannot be
        placed or a re-placeable reservation would no longer be (``leaves``: the check of
        either path, :meth:`_leaves_floating` or the fast path's)."""
        placed = self._place_over(job, start, bb_free, pieces or bool(self.floating))
        if placed is None:
            return None
        nodes, got = placed
        if got is None:
            return nodes, None
        demand = self._demand(job, got)
        if self.floating and not leaves(start, job.walltime, demand):
            return None
        return nodes, demand

    def _leaves_floating(self, start: float, walltime: float,
                         demand: Sequence[float]) -> bool:
        """Whether every re-placeable reservation still has its pieces placeable (on the least
        free space of each BB node over its interval; with proximity placement on the nodes it
        names, which is the same answer: :meth:`~bbopt.planner.bb.PooledBB.placeable`) once
        ``demand`` is held on ``[start, start + walltime)`` too."""
        times, rows = self.profile.times, self.profile.free
        end = start + walltime
        last = len(times) - 1
        for job, at in self.floating.values():
            until = at + job.walltime
            if job.bb <= 0 or until <= start or end <= at:
                continue  # (no overlap: its pieces are as placeable as before)
            i = max(bisect_right(times, at) - 1, 0)
            low: list[float] | None = None
            while i <= last and times[i] < until:
                row = rows[i][2:]
                if (times[i] if times[i] > at else at) < end and start < (
                        times[i + 1] if i < last else math.inf):
                    row = [f - d for f, d in zip(row, demand[2:], strict=True)]
                low = row if low is None else [a if a < c else c
                                               for a, c in zip(low, row, strict=True)]
                i += 1
            if low is not None and not self.bb.placeable(job, low):
                return False
        return True

    def fits(self, job: Job, start: float) -> bool:
        """Whether ``job`` fits on ``[start, start + walltime)`` (``start`` >= now)."""
        if start <= self.now:
            return self.fits_now(job)
        return self._pieces_over(job, start, pieces=False) is not None and (
            self.links is None or self.links.fits_at(job, start))

    def earliest(self, job: Job, limit: float = math.inf, *, not_now: bool = False) -> float:
        """The earliest start (now, or a later breakpoint of the profile) where ``job`` fits for
        its whole walltime, not searched beyond ``limit``; ``inf`` if none. ``not_now``: the
        caller knows ``job`` does not fit now (its :meth:`start` was just refused, nothing
        changed since), so now is not asked again."""
        if self.links is not None:  # (the instants where the I/O tree has room)
            return self._earliest_linked(job, limit)
        if not not_now and self.fits_now(job):
            return self.now
        two = None if self._later < math.inf else self._split()
        if two is not None:  # (no hold after now: the two profiles have the same breakpoints)
            p, first = two, two.earliest_fit(self.now, job.walltime, (job.nodes, job.bb))
        else:
            p = self.profile
            first = p.earliest_fit(self.now, job.walltime,
                                   (job.nodes, job.bb) + (0.0,) * self.k)
        times = p.times
        for t in times[bisect_left(times, first):]:  # (a copy: a hold may split the profile)
            if t <= self.now:
                continue
            if t > limit:
                break
            if self._pieces_over(job, t, pieces=False) is not None:
                return t
        return math.inf

    def reserve(self, job: Job, start: float, *, replace: bool = False) -> None:
        """Hold ``job``'s resources on ``[start, start + walltime)`` for a later start (raise
        :class:`~bbopt.planner.profile.OverbookedError` if they are not free there).

        ``replace``: a re-placeable reservation on named BB nodes (Kopanski & Rzadca's EASY,
        Section 3.2, as the authors' code keeps its head reservation): its nodes and pooled BB
        are held, its pieces are not fixed but chosen again whenever the profile changes;
        later holds and starts are admitted only while its pieces stay placeable on the least
        free space of the BB nodes over its interval. When the placement chooses compute nodes,
        the reservation names those it holds (the module docstring)."""
        start = max(float(start), self.now)
        if replace and self.k:
            nodes: tuple[int, ...] | None = ()
            if self.bb.chooses_nodes:
                nodes = self._choose(job, start)
                if nodes is None:
                    raise OverbookedError(f"{job.nodes} compute nodes are not free at {start}")
            self._hold(job, start, (job.nodes, job.bb) + (0.0,) * self.k, nodes)
            self.floating[job.id] = (job, start)
            return
        if self.k:
            self.profile  # noqa: B018 (pieces held from now on that no start took: the full profile)
        placed = self._pieces_over(job, start)
        # (when it fits nowhere, _hold raises: the nodes or the pool lack room)
        nodes, demand = placed if placed is not None else ((), self._demand(job, ()))
        self._hold(job, start, demand, nodes)

    def _hold(self, job: Job, start: float, demand: tuple[float, ...],
              nodes: Sequence[int] = ()) -> None:
        """Hold ``demand`` for ``job`` on ``[start, start + walltime)``; ``nodes``: the compute
        nodes a reservation names."""
        end = start + job.walltime
        if nodes:
            self.named[job.id] = (start, end, tuple(nodes))
            self._ids.clear()
            self._ids_n.clear()
        later = start > self.now
        two = self._split()
        if two is not None and not (later and any(demand[2:])):
            two.reserve(start, end, demand[:2])
            self._log.append((start, end, demand))
            if not later:
                self._ends[job.id] = end
                pieces = self.bb.held.get(job.id, ())
                for t, row in self._bb_rows.items():  # (its pieces taken now, back at its end)
                    if end > t:
                        for b, size in pieces:
                            row[b] -= size
        else:
            self.profile.reserve(start, end, demand)
        if later and start < self._later:
            self._later = start
        self.holds[job.id] = (start, end, demand)
        if self.links is not None and job.id not in self.links.started:  # (a reservation)
            self.links.holds[job.id] = (job, start)

    def release(self, job: Job) -> None:
        """Drop the reservation of ``job``, or undo its :meth:`start` now (its compute nodes
        and BB pieces given back)."""
        profile = self.profile  # (the fast path ends: holds are no longer only added)
        self.free_nodes  # noqa: B018 (the started jobs' nodes named)
        start, end, demand = self.holds.pop(job.id)
        self.floating.pop(job.id, None)
        if self.named.pop(job.id, None) is not None:
            self._ids.clear()
            self._ids_n.clear()
        profile.release(start, end, demand)
        if self.links is not None:
            self.links.release(job)
        nodes = self.started.pop(job.id, None)
        if nodes is not None:
            self.bb.release(job)
            self.free_nodes = sorted((*self.free_nodes, *nodes))

    def hold(self, job: Job, start: float) -> bool:
        """Start ``job`` now (``start`` <= now) or reserve it from ``start`` if it fits there;
        whether it did (nothing changes when not)."""
        if start <= self.now:
            return self.start(job) is not None
        placed = self._pieces_over(job, start)
        if placed is None or (self.links is not None and not self.links.fits_at(job, start)):
            return False
        self._hold(job, start, placed[1], placed[0])
        return True

    def hold_with(self, job: Job, start: float, held: Sequence[float]) -> bool:
        """Hold ``job`` from ``start`` (now or before: start it now) with ``held[b]`` bytes on
        each named BB node (pieces it keeps) if they fit there; whether it did (nothing changes
        when not)."""
        start = max(start, self.now)
        demand = (job.nodes, job.bb, *held)
        if not self.profile.fits(start, job.walltime, demand):
            return False
        if start > self.now:
            self._hold(job, start, demand)
            return True
        nodes = self._choose(job, start)
        if nodes is None:
            return False
        self._start_with(job, nodes, pieces_of_bytes(held, job.nodes, job.bb))
        return True

    def list_schedule(self, jobs: Iterable[Job]) -> list[tuple[Job, float]]:
        """List scheduling of ``jobs`` in this order: each held at its :meth:`earliest` start.
        Returns ``(job, start)`` in that order (a job that cannot be placed is left out); the
        jobs starting now are started in this order, the order the engine must place them."""
        out = []
        for job in jobs:
            start = self.earliest(job)
            if start < math.inf and self.hold(job, start):
                out.append((job, start))
        return out

"""Link bandwidth as a dimension of the planner: the platform's I/O tree now and at the
instants where jobs end, for the policies that plan bandwidth (Herbein et al., HPDC 2016,
Section 3.4).

A job starts only on nodes where its per-node bandwidth (``Job.bandwidth``) is left on every
vertex from each node up to the PFS, counting what its other nodes take: Herbein's greedy
selection, :meth:`bbopt.topology.IOTree.select`, the one selection rule (the nodes taken in index
order). Bandwidth on a tree is not one number per time: what a job can get at an instant depends
on which nodes are free under which switch. So this dimension keeps the tree's state **now**
(free nodes, bandwidth left per vertex, pooled BB bytes: an
:class:`~bbopt.topology.AllocState`) and what running and started jobs give back at their
expected ends, and builds the state at a later instant (now, plus every release up to it) when
asked. A reservation (EASY's head) holds its nodes, bandwidth and BB *at its start instant*: a
job running over that instant must leave every reservation there placeable by the greedy (in
the order they were made); after that instant only releases follow, so the instant is the
binding one.

:class:`LinkState` is that data; :class:`OnTheTree` the planner's methods that use it
(:class:`bbopt.planner.Planner` built with ``links=True`` answers "can this job start now, on
which nodes", "the earliest time it fits", takes starts and holds reservations through them).
The fit rule on a vertex is the tree's (:meth:`bbopt.topology.IOTree.room`, the core
tolerance); the engine's ledger checks with the same rule at twice the tolerance, as for every
other resource (:data:`bbopt.core.ENGINE_REL_TOL`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

from bbopt.core import ClusterState, Job, Platform, RunningJob, Start, slack
from bbopt.errors import InputError
from bbopt.planner.profile import Release, first_fit_time
from bbopt.topology import AllocState, IOTree


class Instant:
    """The tree and the pooled BB at one instant: free nodes, bandwidth left per vertex, BB
    bytes free."""

    __slots__ = ("alloc", "bb")

    def __init__(self, alloc: AllocState, bb: float) -> None:
        self.alloc = alloc
        self.bb = bb

    def copy(self) -> Instant:
        return Instant(self.alloc.copy(), self.bb)

    def fits(self, job: Job, bb_tol: float) -> bool:
        """Whether ``job``'s BB, nodes and bandwidth fit here (Herbein's greedy could place
        it)."""
        return job.bb <= self.bb + bb_tol and self.alloc.fits(job.nodes, job.bandwidth)

    def take(self, job: Job, nodes: Sequence[int] | np.ndarray) -> None:
        self.alloc.take(nodes, job.bandwidth)
        self.bb -= job.bb

    def give(self, r: Release) -> None:
        self.alloc.give(r.allocation, r.bandwidth)
        self.bb += r.bb


class LinkState:
    """The link dimension's data (module docstring): the tree now, the releases to come, the
    reservations and the instants built from them."""

    __slots__ = ("tree", "now", "bb_tol", "state", "_running", "_ends", "started", "holds",
                 "_at")

    def __init__(self, tree: IOTree, now: float, running: Iterable[RunningJob],
                 free_bb: float, bb_tol: float) -> None:
        running = tuple(running)
        self.tree = tree
        self.now = now
        self.bb_tol = bb_tol
        #: Free nodes, bandwidth and pooled BB now (the running jobs and the starts hold).
        self.state = Instant(AllocState.of_running(tree, running), free_bb)
        self._running = running
        self._ends: list[Release] | None = None
        #: What the jobs started now give back at their walltime's end, by id, in order.
        self.started: dict[str, Release] = {}
        #: The reservations in the order they were made: ``(job, start)`` by id.
        self.holds: dict[str, tuple[Job, float]] = {}
        self._at: dict[float, Instant] = {}  # (the instants asked, kept up to date)

    @classmethod
    def of(cls, state: ClusterState) -> LinkState:
        """The link dimension of ``state`` (:func:`linked_tree`: an
        :class:`~bbopt.errors.InputError` when its platform cannot have one)."""
        return cls(linked_tree(state.platform), state.time, state.running, state.free()[1],
                   slack(state.platform.bb))

    def at(self, t: float) -> Instant:
        """The tree at ``t`` (>= now): now, plus what every job ending at ``t`` or earlier gives
        back (reservations not taken; the caller must not change it)."""
        got = self._at.get(t)
        if got is None:
            got = self.state.copy()
            for r in self.releases():  # (those of one instant in start order)
                if r.time > t:
                    break
                got.give(r)
            self._at[t] = got
        return got

    def take(self, job: Job, nodes: np.ndarray, end: float) -> None:
        """``job`` started now on ``nodes`` until ``end``: taken now and at the instants kept
        that it still runs over."""
        self.state.take(job, nodes)
        for t, inst in self._at.items():
            if end > t:
                inst.take(job, nodes)
        self.started[job.id] = Release(end, job.nodes, job.bb, nodes, job.bandwidth)

    @property
    def ends(self) -> list[Release]:
        """What running jobs give back at their expected ends (built when first asked: a
        decision that only starts jobs now needs none)."""
        if self._ends is None:
            now = self.now
            self._ends = [Release(max(r.start + r.job.walltime, now), r.job.nodes, r.job.bb,
                                  r.allocation, r.job.bandwidth) for r in self._running]
        return self._ends

    def releases(self) -> list[Release]:
        """What running and started jobs give back, in time order (those of one instant:
        running jobs first, then the starts in order)."""
        return sorted([*self.ends, *self.started.values()], key=_time)

    def leaves_holds(self, job: Job, nodes: np.ndarray, start: float, end: float) -> bool:
        """Whether every reservation starting in ``[start, end)`` stays placeable at its
        start instant with ``job`` on ``nodes`` over ``[start, end)``."""
        for jid, (_, s) in self.holds.items():
            if start <= s < end and not self._held_fit(s, job, nodes, upto=jid):
                return False
        return True

    def _held_fit(self, s: float, job: Job, nodes: np.ndarray,
                  upto: str | None = None) -> bool:
        """At instant ``s``, with ``job`` on ``nodes`` taken first: :meth:`_holds_fit`."""
        inst = self.at(s).copy()
        inst.take(job, nodes)
        return self._holds_fit(inst, s, upto)

    def _holds_fit(self, inst: Instant, s: float, upto: str | None = None,
                   take: bool = False) -> bool:
        """Whether the reservations running over instant ``s`` -- all of them, or those made
        up to and including ``upto`` -- can be placed on ``inst`` by the greedy, in the order
        they were made (each taken there but the last, which is only counted, unless
        ``take``)."""
        over = []
        for jid, (held, hs) in self.holds.items():
            if hs <= s < hs + held.walltime:
                over.append(held)
            if jid == upto:
                break
        if take:
            over.append(None)
        for held in over[:-1]:
            got = inst.alloc.select(held.nodes, held.bandwidth)
            if got is None or held.bb > inst.bb + self.bb_tol:
                return False
            inst.take(held, got)
        last = over[-1] if over else None
        return last is None or inst.fits(last, self.bb_tol)

    def fits_at(self, job: Job, t: float) -> bool:
        """Whether ``job`` fits the tree from ``t`` (> now) for its walltime: at ``t`` beside
        the reservations running then, and at the start of every later reservation it runs
        over (the greedy placing it first there)."""
        inst = self.at(t)
        if self.holds:
            inst = inst.copy()
            if not self._holds_fit(inst, t, take=True):
                return False
        if not inst.fits(job, self.bb_tol):
            return False
        end = t + job.walltime
        for _held, hs in self.holds.values():
            if t < hs < end:
                got = self.at(hs).alloc.select(job.nodes, job.bandwidth)
                if got is None or not self._held_fit(hs, job, got):
                    return False
        return True

    def release(self, job: Job) -> None:
        """Drop the reservation of ``job``, or undo its start now (its nodes, bandwidth and BB
        given back now)."""
        if self.holds.pop(job.id, None) is None:
            r = self.started.pop(job.id)
            self.state.give(r)
        self._at = {}

    def release_times(self) -> list[float]:
        """The distinct instants where jobs and reservations end, in order."""
        return sorted({*(r.time for r in self.releases()),
                       *(s + held.walltime for held, s in self.holds.values())})

    def snapshot(self) -> tuple:
        return (self.state.copy(), dict(self.started), dict(self.holds))

    def rollback(self, snap: tuple) -> None:
        state, started, holds = snap
        self.state, self.started, self.holds = state.copy(), dict(started), dict(holds)
        self._at = {}


def _time(r: Release) -> float:
    return r.time


def linked_tree(platform: Platform) -> IOTree:
    """The I/O tree whose link bandwidth a planner plans on ``platform``; an
    :class:`~bbopt.errors.InputError` naming what is missing when it cannot."""
    tree = platform.topology
    if not isinstance(tree, IOTree):
        raise InputError("planning link bandwidth needs a platform with an I/O topology (e.g. "
                         "bbopt.topology.cts1())", field="topology")
    if tree.nodes != platform.nodes:
        raise InputError(f"the I/O topology has {tree.nodes} compute nodes, the platform "
                         f"{platform.nodes}", field="topology")
    if platform.bb_nodes is not None:
        raise InputError("link bandwidth is planned with the burst buffer in one pool, not on "
                         "named BB nodes", field="bb_nodes")
    return tree


class OnTheTree:
    """The link dimension's methods of :class:`~bbopt.planner.plan.Planner` (module
    docstring): used when the planner was built with ``links=True``."""

    __slots__ = ()

    def start_on(self, job: Job, nodes: Sequence[int]) -> Start:
        """Start ``job`` now on ``nodes``, a placement chosen elsewhere that keeps every link
        within its bandwidth (a window model's, which checked nodes, bandwidth and BB): taken
        until its walltime ends. Planned link bandwidth only (``links=True``)."""
        return self._take_linked(job, np.asarray(nodes, dtype=np.int64))

    def _nodes_linked(self, job: Job) -> np.ndarray | None:
        """The nodes ``job`` gets if it starts now: those Herbein's greedy selects, when its
        BB, nodes and bandwidth fit now and every reservation it runs over stays placeable;
        else ``None``."""
        links: LinkState = self.links
        now = links.state
        if job.bb > now.bb + links.bb_tol:
            return None
        got = now.alloc.select(job.nodes, job.bandwidth)
        if got is None or (links.holds and not links.leaves_holds(
                job, got, self.now, self.now + job.walltime)):
            return None
        return got

    def _start_linked(self, job: Job) -> Start | None:
        """Start ``job`` now (:meth:`_nodes_linked`), taking its nodes, bandwidth and BB until
        its walltime ends; ``None``, nothing taken, when it does not fit."""
        got = self._nodes_linked(job)
        return None if got is None else self._take_linked(job, got)

    def _take_linked(self, job: Job, got: np.ndarray) -> Start:
        self.links.take(job, got, self.now + job.walltime)
        ids = tuple(int(x) for x in got)
        self._hold(job, self.now, self._demand(job, ()))
        self.started[job.id] = ids
        self.chosen[job.id] = ids
        return Start(job.id, ids)

    def _earliest_linked(self, job: Job, limit: float) -> float:
        """The earliest instant (now, or the end of a running or started job or of a
        reservation) where ``job``
        fits with its bandwidth, not searched beyond ``limit``; ``inf`` if none. Without
        reservations, the releases are given in time order to one state (EASY's shadow scan,
        :func:`~bbopt.planner.profile.first_fit_time`); with some, each instant is checked by
        :meth:`LinkState.fits_at`."""
        links: LinkState = self.links
        if self._nodes_linked(job) is not None:
            return self.now
        if links.holds:
            for t in links.release_times():
                if t > limit:
                    break
                if t > self.now and links.fits_at(job, t):
                    return t
            return math.inf
        inst = links.state.copy()
        tol = links.bb_tol
        t = first_fit_time(self.now, links.releases(),
                           lambda: inst.fits(job, tol), inst.give)
        if t > limit:
            return math.inf
        if t < math.inf:
            links._at.setdefault(t, inst)  # (the instant as the scan left it)
        return t

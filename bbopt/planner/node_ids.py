"""The planner's compute node ids over time (Kopanski & Rzadca, Euro-Par 2021, Section 4.1: the
authors' proximity placement chooses a job's compute nodes, and its BB pieces follow them).

When the placement chooses nodes, a later start takes its nodes from the ids free then -- free
now, plus those of the running and started jobs whose expected end is that time or earlier --
less the nodes every overlapping reservation names (:class:`bbopt.planner.plan.Planner`, whose
state these methods read: its running jobs, holds, named reservations and BB placement).
"""

from __future__ import annotations

from bisect import bisect_right
from operator import itemgetter

from bbopt.core import Job, RunningJobs
from bbopt.planner.bb import choose_nodes

_first = itemgetter(0)


class NodeIds:
    """The node-id part of :class:`~bbopt.planner.plan.Planner` (its state, its slots)."""

    __slots__ = ()

    @property
    def free_nodes(self) -> list[int]:
        """The free compute node ids now, sorted (running jobs without a known allocation are
        given the lowest free ones; with planned link bandwidth, those of the I/O tree now)."""
        if self.links is not None:
            return self.links.state.alloc.free.nonzero()[0].tolist()
        if self._free_nodes is None:
            busy: set[int] = set()
            unknown = 0
            for r in self.running:
                if r.allocation is None:
                    unknown += r.job.nodes
                else:
                    busy.update(r.allocation)
            free = [x for x in range(self.platform.nodes) if x not in busy][unknown:]
            for jid, n in self._lazy or ():  # (the starts counted so far, in order)
                self.started[jid] = tuple(free[:n])
                free = free[n:]
            self._lazy = None
            self._free_nodes = free
        return self._free_nodes

    @free_nodes.setter
    def free_nodes(self, nodes: list[int]) -> None:
        self._free_nodes = nodes
        self._lazy = None
        self._ids.clear()
        self._ids_n.clear()


    def free_ids(self, start: float, end: float) -> list[int]:
        """The compute node ids a job held on ``[start, end)`` may take, sorted: those free at
        ``start`` (free now, plus those of the running and started jobs whose expected end is
        ``start`` or earlier) less those named by a reservation overlapping the interval. (The
        caller must not change the list.)"""
        return self._free_ids(start, end)[1]

    def _free_ids(self, start: float, end: float) -> tuple[tuple, list[int]]:
        """:meth:`free_ids` and the key it is kept under until the node ids change (a
        decision asks again for every candidate)."""
        named = self.named
        over = tuple([jid for jid, (s, e, _) in named.items() if s < end and start < e]
                     ) if named else ()
        later = start > self.now
        key = (start if later else None, over)
        ids = self._ids.get(key)
        if ids is None:
            ids = self.free_nodes
            if later:
                ends, allocs = self._known_ids()
                back = [x for nodes in allocs[:bisect_right(ends, start)] for x in nodes]
                holds = self.holds
                back += [x for jid, nodes in self.started.items() if holds[jid][1] <= start
                         for x in nodes]
                if back:
                    ids = sorted(ids + back)
            if over:
                busy = {x for jid in over for x in named[jid][2]}
                ids = [x for x in ids if x not in busy]
            self._ids[key] = ids
        return key, ids

    def _known_ids(self) -> tuple[list[float], list[tuple[int, ...]]]:
        """The expected ends of the running jobs whose nodes are known, in order, and their
        nodes (those free again by a time are a prefix); built once."""
        if self._run_ids is None:
            known = [(r.expected_end, r.allocation) for r in self.running
                     if r.allocation is not None]
            if type(self.running) is not RunningJobs:  # (else by expected end already)
                known.sort(key=_first)
            self._run_ids = ([e for e, _ in known], [a for _, a in known])
        return self._run_ids

    def _counted(self, job: Job) -> bool:
        """Whether the node ids a start of ``job`` may take number what the profile's node
        dimension counts, at any time: no reservation names nodes, every running job's nodes
        are known and ``job`` asks for no local SSD. Then a job whose nodes fit the profile
        over its interval has enough free ids there, and the placement's choice among them is
        needed only to place pieces."""
        return not self.named and (job.ssd <= 0 or self.platform.node_ssd is None) and \
            len(self._known_ids()[0]) == len(self.running)

    def _choose(self, job: Job, start: float) -> tuple[int, ...] | None:
        """The compute nodes ``job`` gets if it starts at ``start`` (the engine's rule,
        :func:`~bbopt.planner.bb.choose_nodes`, on :meth:`free_ids`); ``None`` if too few.
        Kept per node count until the node ids change (a local-SSD request is not kept: its
        choice depends on the request)."""
        if not self.bb.chooses_nodes:  # (no reservation names nodes: those free now)
            if self._lazy is not None:  # (the lowest free ones: counted, named if asked)
                return () if job.nodes <= self._lazy_n else None
            nodes = choose_nodes(self.free_nodes, job, self.platform, self.bb)
            return None if isinstance(nodes, str) else nodes
        key, ids = self._free_ids(start, start + job.walltime)
        if job.ssd > 0:
            nodes = choose_nodes(ids, job, self.platform, self.bb)
            return None if isinstance(nodes, str) else nodes
        key = (key, job.nodes)
        got = self._ids_n.get(key, False)
        if got is False:
            nodes = choose_nodes(ids, job, self.platform, self.bb)
            got = self._ids_n[key] = None if isinstance(nodes, str) else nodes
        return got

"""The engine's resource ledger: what running jobs hold, checked at every start.

One object owns the nodes (the free node ids, sorted), the shared burst buffer, the local SSD of
each node and, when bandwidth is enforced, the bandwidth charged on every vertex of the
platform's I/O tree (:class:`~bbopt.topology.alloc.BandwidthLedger`). :meth:`Ledger.admit`
checks one start and takes its resources, raising :class:`~bbopt.errors.InvalidDecision` with the
reason when it does not fit; :meth:`Ledger.release` gives them back when a job ends or is evicted.

Burst buffer is placed by the platform's strategy (:func:`bbopt.planner.bb_placement`: one
pool, named BB nodes first fit, or the authors' proximity placement), the same object a policy's
planner takes its starts from: after the pool check, a start whose per-node pieces cannot be
placed raises :class:`StartRefused`, which is not an error of the policy: the engine puts the job
back in the queue and counts the refusal.


The ledger is at least as lenient as every policy: policies and models test fits with
:func:`bbopt.core.fits` (``REL_TOL`` of the capacity), the ledger with twice that
(:data:`bbopt.core.ENGINE_REL_TOL`), so a decision built within capacity is never refused for
rounding. Link bandwidth likewise: the planner places jobs on the I/O tree with
:meth:`bbopt.topology.IOTree.room` at ``REL_TOL`` (:mod:`bbopt.planner.links`), the ledger
checks a start's node set with the same rule at ``ENGINE_REL_TOL``.
"""

from __future__ import annotations

from bisect import insort

from bbopt.core import ENGINE_REL_TOL, Job, Platform
from bbopt.errors import InvalidDecision
from bbopt.planner.bb import PooledBB, bb_placement, choose_nodes

#: Up to this many nodes go back into the free list one insertion at a time; more are merged.
_FEW_NODES = 16


class StartRefused(Exception):
    """A start the pool admits but the named BB nodes cannot place; the job keeps waiting."""


class Ledger:
    """Nodes, BB, local SSD and (optionally) link bandwidth held by running jobs."""

    __slots__ = ("platform", "free_nodes", "used_nodes", "used_bb", "bb_tol", "bandwidth",
                 "bb", "plain")

    def __init__(self, platform: Platform, enforce_bandwidth: bool = False) -> None:
        self.platform = platform
        self.free_nodes = list(range(platform.nodes))  # the free node ids, sorted
        self.used_nodes = 0
        self.used_bb = 0.0
        self.bb_tol = platform.bb * ENGINE_REL_TOL
        topology = platform.topology
        self.bandwidth = None
        if enforce_bandwidth and topology is not None:  # (the tree's module only then)
            from bbopt.topology.alloc import BandwidthLedger

            self.bandwidth = BandwidthLedger(topology)
        self.bb: PooledBB = bb_placement(platform)
        # (no piece to place, no bandwidth to charge: a start without SSD or named nodes takes
        # the lowest-numbered free nodes)
        self.plain = not self.bb.named and self.bandwidth is None

    @property
    def bb_nodes(self) -> PooledBB | None:
        """The named BB nodes as they are now (``None`` when the BB is one pool)."""
        return self.bb if self.bb.named else None

    @property
    def free_nodes_count(self) -> int:
        return self.platform.nodes - self.used_nodes

    @property
    def free_bb(self) -> float:
        return self.platform.bb - self.used_bb

    def why_never_fits(self, job: Job) -> str | None:
        """Why ``job`` could not run even on the empty platform (with its bandwidth, when
        enforced), or ``None``."""
        why = self.platform.why_never_fits(job)
        if why is None and self.bandwidth is not None:
            why = self.bandwidth.why_never_fits(job)
        return why

    def admit(self, job: Job, asked: tuple[int, ...] | None, t: float,
              pieces: tuple[tuple[int, float], ...] | None = None) -> tuple[int, ...]:
        """Check that ``job`` fits now (on the ``asked`` nodes and with the ``pieces`` on named
        BB nodes, if given), take its resources and return its node set; raise
        :class:`InvalidDecision` with the reason otherwise (:class:`StartRefused` when the
        platform's rule cannot place its pieces)."""
        platform = self.platform
        free_n = platform.nodes - self.used_nodes
        if job.nodes > free_n:
            raise InvalidDecision(f"needs {job.nodes} nodes, {free_n} free", job_id=job.id, time=t)
        free_b = platform.bb - self.used_bb
        if job.bb - free_b > self.bb_tol:
            raise InvalidDecision(f"needs {job.bb:.6g} B of burst buffer, {free_b:.6g} B free",
                                  job_id=job.id, time=t)
        if asked is None and self.plain and job.ssd <= 0 and pieces is None:
            free_nodes = self.free_nodes  # (the plain case: the lowest-numbered free nodes)
            nodes = tuple(free_nodes[:job.nodes])
            del free_nodes[:job.nodes]
            self.used_nodes += job.nodes
            self.used_bb += job.bb
            return nodes
        bb = self.bb
        # The pieces are placed once, then taken as placed once the nodes are known.
        placed = pieces is not None
        if placed:  # (named by the start: checked, not placed)
            why = bb.why_not_pieces(job, pieces)
            if why is not None:
                raise InvalidDecision(why, job_id=job.id, time=t)
        elif not bb.chooses_nodes:  # (pieces that do not depend on the compute nodes)
            pieces = bb.placement(job)
            if pieces is None:
                raise StartRefused(bb.why_not_now(job))
        nodes = self._nodes(job, asked, t)
        if bb.chooses_nodes and not placed:  # the pieces depend on the compute nodes
            pieces = bb.placement(job, nodes)
            if pieces is None:
                self._give_back(nodes)
                raise StartRefused(bb.why_not_now(job, nodes))
        if self.bandwidth is not None:
            why = self.bandwidth.charge(job, nodes)
            if why is not None:
                self._give_back(nodes)
                raise InvalidDecision(why, job_id=job.id, time=t)
        bb.take(job, pieces)
        self.used_nodes += job.nodes
        self.used_bb += job.bb
        return nodes

    def pieces_of(self, job: Job) -> tuple[tuple[int, float], ...] | None:
        """The ``(BB node, bytes)`` pieces ``job`` holds on the named BB nodes (``None`` on a
        platform without them)."""
        return self.bb.pieces_of(job)

    def release(self, job: Job, nodes: tuple[int, ...]) -> None:
        """Give back what ``job`` held on ``nodes`` (it ended or was evicted)."""
        self.used_nodes -= job.nodes
        self.used_bb -= job.bb
        self._give_back(nodes)
        if self.bandwidth is not None:
            self.bandwidth.release(job, nodes)
        self.bb.release(job)

    def _give_back(self, nodes: tuple[int, ...]) -> None:
        """Put ``nodes`` back into the sorted free list: one insertion each for a few nodes, a
        merge (Timsort finds the two sorted runs) for many, where an insertion per node would
        move the whole list once per node (quadratic on wide jobs)."""
        free = self.free_nodes
        if len(nodes) <= _FEW_NODES:
            for x in nodes:
                insort(free, x)
        else:
            free.extend(nodes)
            free.sort()

    def _nodes(self, job: Job, asked: tuple[int, ...] | None, t: float) -> tuple[int, ...]:
        """The nodes of ``job``: those asked (checked: distinct, free and, for a job with a
        local-SSD request, each with enough SSD), else the lowest-numbered free ones, or for an
        SSD request the free nodes with the smallest admissible SSDs (least waste), or those the
        BB placement chooses (:func:`~bbopt.planner.bb.choose_nodes`: free nodes by its rule,
        so not checked again)."""
        free_nodes = self.free_nodes
        node_ssd = self.platform.node_ssd
        if asked is None:
            if job.ssd <= 0 and not self.bb.chooses_nodes:  # the lowest-numbered free nodes
                taken = tuple(free_nodes[:job.nodes])
                del free_nodes[:job.nodes]
                return taken
            chosen = choose_nodes(free_nodes, job, self.platform, self.bb)
            if isinstance(chosen, str):
                raise InvalidDecision(chosen, job_id=job.id, time=t)
            return self._take_nodes(tuple(chosen))
        if len(asked) != job.nodes or len(set(asked)) != len(asked):
            raise InvalidDecision(f"node set {asked} is not {job.nodes} distinct nodes",
                                  job_id=job.id, time=t)
        free = set(free_nodes)
        busy = [x for x in asked if x not in free]
        if busy:
            raise InvalidDecision(f"nodes {busy} are busy or do not exist", job_id=job.id,
                                  time=t)
        if job.ssd > 0 and node_ssd is not None:
            small = [x for x in asked if node_ssd[x] < job.ssd]
            if small:
                raise InvalidDecision(f"nodes {small} have less than the {job.ssd:.4g} B of "
                                      "local SSD it asks per node", job_id=job.id, time=t)
        return self._take_nodes(tuple(asked))

    def _take_nodes(self, nodes: tuple[int, ...]) -> tuple[int, ...]:
        """``nodes`` (free) taken out of the free list, which stays sorted."""
        taken = set(nodes)
        self.free_nodes[:] = [x for x in self.free_nodes if x not in taken]
        return nodes

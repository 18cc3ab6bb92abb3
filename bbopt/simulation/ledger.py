"""The engine's resource ledger: what running jobs hold, checked at every start.

One object owns the nodes (the free node ids, sorted), the shared burst buffer, the local SSD of
each node and, when bandwidth is enforced, the bandwidth charged on every vertex of the
platform's I/O tree (:class:`~bbopt.topology.alloc.BandwidthLedger`). :meth:`Ledger.admit`
checks one start and takes its resources, raising :class:`~bbopt.errors.InvalidDecision` with the
reason when it does not fit; :meth:`Ledger.release` gives them back when a job ends or is evicted.

Named burst-buffer nodes (:class:`BBNodeLedger`), when the platform has them
(:attr:`bbopt.core.Platform.bb_nodes`): after the pool check, a start whose per-node pieces
cannot be placed raises :class:`StartRefused`, which is not an error of the policy: the engine
puts the job back in the queue and counts the refusal.


The ledger is at least as lenient as every policy: policies and models test fits with
:func:`bbopt.core.fits` (``REL_TOL`` of the capacity), the ledger with twice that
(:data:`bbopt.core.ENGINE_REL_TOL`), so a decision built within capacity is never refused for
rounding.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Sequence

from bbopt.core import ENGINE_REL_TOL, Job, Platform
from bbopt.errors import InvalidDecision
from bbopt.models.bb_nodes import bb_node_tolerance, contiguous_nodes, place_pieces

#: Up to this many nodes go back into the free list one insertion at a time; more are merged.
_FEW_NODES = 16


class StartRefused(Exception):
    """A start the pool admits but the named BB nodes cannot place; the job keeps waiting."""


class Ledger:
    """Nodes, BB, local SSD and (optionally) link bandwidth held by running jobs."""

    __slots__ = ("platform", "free_nodes", "used_nodes", "used_bb", "bb_tol", "bandwidth",
                 "bb_nodes")

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
        self.bb_nodes = BBNodeLedger(platform) if platform.bb_nodes is not None else None

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

    def admit(self, job: Job, asked: tuple[int, ...] | None, t: float) -> tuple[int, ...]:
        """Check that ``job`` fits now (on the ``asked`` nodes, if given), take its resources and
        return its node set; raise :class:`InvalidDecision` with the reason otherwise."""
        platform = self.platform
        free_n = platform.nodes - self.used_nodes
        if job.nodes > free_n:
            raise InvalidDecision(f"needs {job.nodes} nodes, {free_n} free", job_id=job.id, time=t)
        free_b = platform.bb - self.used_bb
        if job.bb - free_b > self.bb_tol:
            raise InvalidDecision(f"needs {job.bb:.6g} B of burst buffer, {free_b:.6g} B free",
                                  job_id=job.id, time=t)
        if asked is None and self.bb_nodes is None and self.bandwidth is None and job.ssd <= 0:
            free_nodes = self.free_nodes  # (the plain case: the lowest-numbered free nodes)
            nodes = tuple(free_nodes[:job.nodes])
            del free_nodes[:job.nodes]
            self.used_nodes += job.nodes
            self.used_bb += job.bb
            return nodes
        proximity = self.bb_nodes is not None and self.bb_nodes.proximity is not None
        if self.bb_nodes is not None and not proximity:
            why = self.bb_nodes.why_not_now(job)
            if why is not None:
                raise StartRefused(why)
        nodes = self._nodes(job, asked, t)
        if proximity:  # the pieces depend on the compute nodes
            why = self.bb_nodes.why_not_now(job, nodes)
            if why is not None:
                self._give_back(nodes)
                raise StartRefused(why)
        if self.bandwidth is not None:
            why = self.bandwidth.charge(job, nodes)
            if why is not None:
                self._give_back(nodes)
                raise InvalidDecision(why, job_id=job.id, time=t)
        if self.bb_nodes is not None:
            self.bb_nodes.charge(job, nodes)
        self.used_nodes += job.nodes
        self.used_bb += job.bb
        return nodes

    def pieces_of(self, job: Job) -> tuple[tuple[int, float], ...] | None:
        """The ``(BB node, bytes)`` pieces ``job`` holds on the named BB nodes (``None`` on a
        platform without them)."""
        if self.bb_nodes is None:
            return None
        return tuple(self.bb_nodes.held.get(job.id, ()))

    def release(self, job: Job, nodes: tuple[int, ...]) -> None:
        """Give back what ``job`` held on ``nodes`` (it ended or was evicted)."""
        self.used_nodes -= job.nodes
        self.used_bb -= job.bb
        self._give_back(nodes)
        if self.bandwidth is not None:
            self.bandwidth.release(job, nodes)
        if self.bb_nodes is not None:
            self.bb_nodes.release(job)

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
        SSD request the free nodes with the smallest admissible SSDs (least waste)."""
        free_nodes = self.free_nodes
        node_ssd = self.platform.node_ssd
        if asked is None:
            if self.bb_nodes is not None and self.bb_nodes.proximity is not None \
                    and job.ssd <= 0:  # the authors' Dragonfly filter: consecutive runs
                asked = contiguous_nodes(free_nodes, job.nodes)
                if asked is None:
                    raise InvalidDecision(f"needs {job.nodes} nodes, {len(free_nodes)} free",
                                          job_id=job.id, time=t)
            elif job.ssd <= 0 or node_ssd is None:  # the lowest-numbered free nodes
                taken = tuple(free_nodes[:job.nodes])
                del free_nodes[:job.nodes]
                return taken
            else:
                fit = sorted((node_ssd[x], x) for x in free_nodes if node_ssd[x] >= job.ssd)
                if len(fit) < job.nodes:
                    raise InvalidDecision(f"needs {job.nodes} nodes with {job.ssd:.4g} B of "
                                          f"local SSD, {len(fit)} free", job_id=job.id, time=t)
                asked = tuple(x for _, x in fit[:job.nodes])
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
        taken = set(asked)
        free_nodes[:] = [x for x in free_nodes if x not in taken]
        return tuple(asked)


class BBNodeLedger:
    """Named burst-buffer nodes: free space on each, and the pieces every running job holds.

    Kopanski & Rzadca's platform (Section 4.1) has 12 BB nodes of 40 GB, one per chassis, not
    one 480 GB pool: in the authors' scheduler every compute node of a job gets its own piece of
    the job's burst buffer (the request divided by its node count) on a single BB node. A start
    the pool would accept can therefore be impossible: the free space may be scattered over BB
    nodes in fragments smaller than one piece.

    bbopt's default placement is **first fit**: each piece goes on the lowest-numbered BB node
    with room for it (first fit in one global order packs small pieces on the first BB nodes and
    keeps the last ones free for large pieces, which refused fewer starts in bbopt's runs). With
    the platform's ``bb_proximity`` it is the authors' **proximity** placement instead (the
    chassis' BB node, then the group's, then any: :func:`bbopt.models.bb_nodes.place_pieces`),
    which depends on the job's compute nodes: they are taken first (when the policy does not
    name them, as the authors' filter takes them,
    :func:`bbopt.models.bb_nodes.contiguous_nodes`), and a start whose pieces cannot be placed
    gives them back. When some piece has no room the
    start is refused: the engine leaves the job waiting and counts the refusal
    (:attr:`bbopt.simulation.result.SimulationResult.refused_starts`). This is the engine's only
    check of the named nodes; the policies check the same rule
    (:func:`bbopt.models.bb_nodes.first_fit_pieces`) before they start or reserve a job, so a
    refusal means a policy that does not know the named nodes: the job waits until the next
    event.

    On an empty machine first fit places ``sum(floor(C_b / piece))`` pieces, the most any
    placement can, so :meth:`bbopt.core.Platform.why_never_fits` rejects exactly the jobs that
    can never be placed, and with the fit-in-platform rule of :mod:`bbopt.workloads.bb` every
    job fits.
    """

    def __init__(self, platform: Platform) -> None:
        if platform.bb_nodes is None:
            raise ValueError("platform has no named BB nodes")
        self.capacity = tuple(float(c) for c in platform.bb_nodes)
        self.free = list(self.capacity)
        self.held: dict[str, list[tuple[int, float]]] = {}
        self.tol = bb_node_tolerance(self.capacity)
        self.proximity = platform.bb_proximity
        self.refused = 0

    def placement(self, job: Job, nodes: Sequence[int] = ()) -> list[tuple[int, float]] | None:
        """The (BB node, bytes) pieces of ``job`` now, one per compute node, or ``None`` if some
        piece has no room. Nothing is changed. (``nodes``, the compute nodes, do not change the
        first-fit placement; the proximity placement needs them.)"""
        if job.bb <= 0:
            return []
        pieces = place_pieces(self.free, job.nodes, job.bb, self.tol, self.proximity, nodes)
        return None if pieces is None else list(pieces)

    def why_not_now(self, job: Job, nodes: Sequence[int] = ()) -> str | None:
        """Why ``job``'s pieces cannot be placed now, or ``None`` (nothing changes)."""
        if self.placement(job, nodes) is not None:
            return None
        return (f"its {job.nodes} pieces of {job.bb / job.nodes:.4g} B do not fit on the BB "
                f"nodes (free: {', '.join(f'{f:.3g}' for f in self.free)} B)")

    def charge(self, job: Job, nodes: Sequence[int] = ()) -> str | None:
        """Place ``job``'s pieces; the reason when they cannot be placed (nothing changes)."""
        pieces = self.placement(job, nodes)
        if pieces is None:
            self.refused += 1
            return (f"its {job.nodes} pieces of {job.bb / job.nodes:.4g} B do not fit on the BB "
                    f"nodes (free: {', '.join(f'{f:.3g}' for f in self.free)} B)")
        for b, size in pieces:
            self.free[b] -= size
        self.held[job.id] = pieces
        return None

    def release(self, job: Job) -> None:
        for b, size in self.held.pop(job.id, ()):
            self.free[b] = min(self.capacity[b], self.free[b] + size)

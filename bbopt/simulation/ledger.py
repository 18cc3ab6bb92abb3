"""The engine's resource ledger: what running jobs hold, checked at every start.

One object owns the nodes (a heap of free node ids), the shared burst buffer, the local SSD of
each node and, when bandwidth is enforced, the bandwidth charged on every vertex of the
platform's I/O tree (:class:`~bbopt.topology.alloc.BandwidthLedger`). :meth:`Ledger.admit`
checks one start and takes its resources, raising :class:`~bbopt.errors.InvalidDecision` with the
reason when it does not fit; :meth:`Ledger.release` gives them back when a job ends or is evicted.

The ledger is at least as lenient as every policy: policies and models test fits with
:func:`bbopt.core.fits` (``REL_TOL`` of the capacity), the ledger with twice that
(:data:`bbopt.core.ENGINE_REL_TOL`), so a decision built within capacity is never refused for
rounding.
"""

from __future__ import annotations

import heapq

from bbopt.core import ENGINE_REL_TOL, Job, Platform
from bbopt.errors import InvalidDecision
from bbopt.topology.alloc import BandwidthLedger


class Ledger:
    """Nodes, BB, local SSD and (optionally) link bandwidth held by running jobs."""

    __slots__ = ("platform", "free_nodes", "used_nodes", "used_bb", "bb_tol", "bandwidth")

    def __init__(self, platform: Platform, enforce_bandwidth: bool = False) -> None:
        self.platform = platform
        self.free_nodes = list(range(platform.nodes))  # a heap of free node ids
        self.used_nodes = 0
        self.used_bb = 0.0
        self.bb_tol = platform.bb * ENGINE_REL_TOL
        topology = platform.topology
        self.bandwidth = (BandwidthLedger(topology)
                          if enforce_bandwidth and topology is not None else None)

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
        free_n = self.free_nodes_count
        if job.nodes > free_n:
            raise InvalidDecision(f"needs {job.nodes} nodes, {free_n} free", job_id=job.id, time=t)
        free_b = self.free_bb
        if job.bb - free_b > self.bb_tol:
            raise InvalidDecision(f"needs {job.bb:.6g} B of burst buffer, {free_b:.6g} B free",
                                  job_id=job.id, time=t)
        nodes = self._nodes(job, asked, t)
        if self.bandwidth is not None:
            why = self.bandwidth.charge(job, nodes)
            if why is not None:
                for x in nodes:
                    heapq.heappush(self.free_nodes, x)
                raise InvalidDecision(why, job_id=job.id, time=t)
        self.used_nodes += job.nodes
        self.used_bb += job.bb
        return nodes

    def release(self, job: Job, nodes: tuple[int, ...]) -> None:
        """Give back what ``job`` held on ``nodes`` (it ended or was evicted)."""
        self.used_nodes -= job.nodes
        self.used_bb -= job.bb
        for x in nodes:
            heapq.heappush(self.free_nodes, x)
        if self.bandwidth is not None:
            self.bandwidth.release(job, nodes)

    def _nodes(self, job: Job, asked: tuple[int, ...] | None, t: float) -> tuple[int, ...]:
        """The nodes of ``job``: those asked (checked: distinct, free and, for a job with a
        local-SSD request, each with enough SSD), else the lowest-numbered free ones, or for an
        SSD request the free nodes with the smallest admissible SSDs (least waste)."""
        free_nodes = self.free_nodes
        node_ssd = self.platform.node_ssd
        if asked is None:
            if job.ssd <= 0 or node_ssd is None:
                return tuple(heapq.heappop(free_nodes) for _ in range(job.nodes))
            fit = sorted((node_ssd[x], x) for x in free_nodes if node_ssd[x] >= job.ssd)
            if len(fit) < job.nodes:
                raise InvalidDecision(f"needs {job.nodes} nodes with {job.ssd:.4g} B of local "
                                      f"SSD, {len(fit)} free", job_id=job.id, time=t)
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
        keep = [x for x in free_nodes if x not in taken]
        heapq.heapify(keep)
        free_nodes[:] = keep
        return tuple(asked)

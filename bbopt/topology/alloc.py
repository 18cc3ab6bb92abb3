"""Allocation state over an I/O tree (Herbein et al., HPDC 2016, Section 3.4).

:class:`BandwidthLedger` is the engine's check that bandwidth charged on a vertex never exceeds it
(the planner's rule, :meth:`~bbopt.topology.IOTree.room`, at the engine's tolerance);
:class:`AllocState` holds free nodes and free bandwidth at one instant so that the planner's link
dimension (:mod:`bbopt.planner.links`) can place jobs one by one (an EASY pass over a long queue)
with cached per-vertex free-node counts.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from bbopt.core import ENGINE_REL_TOL, Job
from bbopt.resources import format_bandwidth
from bbopt.topology.tree import IOTree


class BandwidthLedger:
    """The engine's check of I/O-aware decisions: bandwidth charged per vertex never exceeds it,
    by the planner's rule (:meth:`~bbopt.topology.IOTree.room`) at the engine's tolerance
    (:data:`bbopt.core.ENGINE_REL_TOL`, twice the planner's), so a start the planner grants is
    never refused."""

    def __init__(self, tree: IOTree) -> None:
        self.tree = tree
        self.avail = tree.fresh_avail()

    def charge(self, job: Job, nodes: Sequence[int]) -> str | None:
        """Charge ``job`` on ``nodes``; the reason it over-allocates a vertex, or ``None``."""
        per_node = job.bandwidth
        if per_node <= 0 or len(nodes) == 0:
            return None
        tree = self.tree
        # (how many of its nodes lie under each vertex, against the room the rule gives there)
        on = np.bincount(tree.ancestors[np.asarray(nodes, dtype=np.int64)].ravel(),
                         minlength=tree.n_vertices + 1)
        bad = np.flatnonzero(on > tree.room(self.avail, per_node, ENGINE_REL_TOL))
        if bad.size:
            v = int(bad[0])
            used = tree.capacity[v] - self.avail[v] + on[v] * per_node
            return (f"over-allocates {tree.kind[v]} {tree.labels[v]!r}: "
                    f"{format_bandwidth(used)} would be charged on "
                    f"{format_bandwidth(tree.capacity[v])}")
        tree.charge(self.avail, nodes, per_node)
        return None

    def why_never_fits(self, job: Job) -> str | None:
        return self.tree.why_never_fits(job.nodes, job.bandwidth)

    def release(self, job: Job, nodes: Sequence[int]) -> None:
        self.tree.charge(self.avail, nodes, job.bandwidth, sign=-1.0)


class AllocState:
    """Free nodes and free bandwidth per vertex at one instant, for placing jobs one by one.

    ``take``/``give`` keep the cached per-vertex free-node counts up to date, so successive
    checks (an EASY pass over a long queue) cost only the bandwidth clamp of each check.
    """

    __slots__ = ("tree", "avail", "free", "n_free", "base")

    def __init__(self, tree: IOTree, avail: np.ndarray, free: np.ndarray,
                 base: np.ndarray | None = None) -> None:
        self.tree = tree
        self.avail = avail
        self.free = free
        self.n_free = int(free.sum())
        self.base = tree.base_counts(free) if base is None else base

    @classmethod
    def of_running(cls, tree: IOTree, running: Iterable[Any]) -> AllocState:
        avail, free = tree.state_of(running)
        return cls(tree, avail, free)

    def copy(self) -> AllocState:
        return AllocState(self.tree, self.avail.copy(), self.free.copy(), self.base.copy())

    def _mark(self, nodes: np.ndarray, value: float) -> None:
        tree = self.tree
        self.free[nodes] = value > 0
        self.n_free += int(value) * len(nodes)
        v = tree.node_vertex[nodes]
        self.base[v] += value
        if not tree._level_finite[-1]:
            deep = tree.depth[v] == tree.max_depth
            np.add.at(self.base, tree.parent[v[deep]], value)

    def take(self, nodes: Sequence[int] | np.ndarray, per_node: float) -> None:
        nodes = np.asarray(nodes, dtype=np.int64)
        self._mark(nodes, -1.0)
        self.tree.charge(self.avail, nodes, per_node)

    def give(self, nodes: Sequence[int] | np.ndarray, per_node: float) -> None:
        nodes = np.asarray(nodes, dtype=np.int64)
        self._mark(nodes, 1.0)
        self.tree.charge(self.avail, nodes, per_node, sign=-1.0)

    def count(self, per_node: float) -> int:
        """How many nodes of ``per_node`` bytes/s could be placed now."""
        if per_node <= 0:
            return self.n_free
        return int(self.tree._counts(self.avail, self.base, per_node)[0])

    def fits(self, nodes: int, per_node: float) -> bool:
        if nodes > self.n_free:
            return False
        if per_node <= 0:
            return True
        tree = self.tree
        if not tree.root_admits(self.avail, nodes, per_node):
            return False
        return self.count(per_node) >= nodes

    def select(self, nodes: int, per_node: float) -> np.ndarray | None:
        if nodes > self.n_free:
            return None
        return self.tree.select(self.avail, self.free, nodes, per_node, self.base)


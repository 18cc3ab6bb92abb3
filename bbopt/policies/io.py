"""I/O-aware FCFS and EASY backfilling over the platform's bandwidth tree.

Herbein et al., HPDC 2016, Section 3.4: I/O is one more constraint when deciding whether a job can
start. A job starts only on nodes where its per-node bandwidth (``Job.bandwidth``) is available on
every vertex from each node up to the PFS, counting what its other nodes take (Herbein's greedy
placement, :meth:`bbopt.topology.IOTree.select`); if it cannot get enough such nodes nothing is
allocated. The policies never start a job that would over-allocate any link.

- ``io-fcfs``: jobs in queue order; stop at the first that does not fit (nodes, bandwidth, BB).
- ``io-easy``: EASY backfilling whose head-of-queue reservation holds nodes, bandwidth on every
  vertex and burst buffer: the shadow time is the first expected end (start + walltime) after
  which the head fits the tree; a later job may start now if it fits now and either ends before
  the shadow time or leaves the head able to fit at the shadow time.

Both are the queue rules of :mod:`bbopt.policies.queue` (``fcfs`` and ``fcfs-bb``, the same
code) asking a planner that plans link bandwidth as one more dimension
(:class:`bbopt.planner.Planner` with ``links=True``, :mod:`bbopt.planner.links`): starts name
the nodes the greedy selects, the head's reservation holds its nodes, bandwidth and BB at its
shadow time. The I/O-ignorant baselines are ``fcfs`` and ``fcfs-easy``. Every start names its
nodes, so the engine (and :class:`bbopt.topology.BandwidthLedger`) checks the bandwidth charged
on each vertex. The platform needs an :class:`~bbopt.topology.IOTree` as ``Platform.topology``.
"""

from __future__ import annotations

import time as _time

from bbopt.core import ClusterState, Decision
from bbopt.planner import Planner
from bbopt.policies.queue import FCFS, EasyBackfilling, _decision, _fcfs_pass
from bbopt.policies.registry import register
from bbopt.policies.window_common import tree_of, without_tree


@register("io-fcfs",
          about="FCFS with link bandwidth as a resource: no link over-allocated (Herbein)")
class IOAwareFCFS(FCFS):
    """``fcfs`` whose starts also take link bandwidth on the I/O tree (Herbein)."""

    #: The engine checks the bandwidth this policy allocates on every link.
    io_aware = True
    unsuited = staticmethod(without_tree)

    def __init__(self, name: str = "io-fcfs") -> None:
        super().__init__(name)

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        tree_of(state, self.name)
        planner = Planner.of(state, links=True)
        started, _, _, _ = _fcfs_pass(state, state.queue, planner.take_bb)
        return _decision(started, t0=t0, nodes=planner.chosen)


@register("io-easy",
          about="EASY with nodes, BB and link bandwidth reserved for the head (Herbein)")
class IOAwareEasy(EasyBackfilling):
    """``fcfs-bb`` (EASY, the head's nodes and BB reserved) whose starts and reservation also
    hold link bandwidth on the I/O tree (Herbein)."""

    #: The engine checks the bandwidth this policy allocates on every link.
    io_aware = True
    unsuited = staticmethod(without_tree)

    def __init__(self, name: str = "io-easy") -> None:
        super().__init__(name, reserve_bb=True, order="fcfs")

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter()
        tree_of(state, self.name)
        return self._decide_named(state, Planner.of(state, links=True), t0)

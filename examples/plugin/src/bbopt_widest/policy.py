"""``widest-first``: start the widest waiting jobs that fit now, widest first, without
reservations (a capability-first order, in the spirit of the "largest job first" baselines of
batch scheduling studies)."""

from __future__ import annotations

from bbopt import ClusterState, Decision
from bbopt.core import Start


class WidestFirst:
    """Start every waiting job that fits, widest first (ties by arrival); no reservation."""

    io_aware = False  # its starts do not consider the I/O tree's bandwidth

    def __init__(self, name: str = "widest-first", min_nodes: int = 1) -> None:
        if min_nodes < 1:
            raise ValueError(f"min_nodes must be >= 1, got {min_nodes}")
        self.name = name
        self.min_nodes = min_nodes

    def decide(self, state: ClusterState) -> Decision:
        free_nodes, free_bb = state.free()
        starts = []
        for job in sorted(state.queue, key=lambda j: -j.nodes):  # (stable: arrival order)
            if job.nodes <= free_nodes and job.bb <= free_bb:
                starts.append(Start(job.id))
                free_nodes -= job.nodes
                free_bb -= job.bb
        return Decision(start=tuple(starts))

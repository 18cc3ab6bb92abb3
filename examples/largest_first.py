"""Largest-first EASY backfilling, written against bbopt's public planner API only.

The waiting jobs are taken largest first (most nodes, then most burst buffer; arrival order
among equals). They start in that order while they fit; the first that does not gets a
reservation at its earliest start, and every later job starts now if it fits without delaying
that reservation. The planner (:class:`bbopt.planner.Planner`) knows how the platform places
burst buffer (one pool, named BB nodes, proximity) and node-local SSDs, so this policy has no
code for any of them. Run ``python examples/largest_first.py`` for a small replay.
"""

from __future__ import annotations

import math

from bbopt import ClusterState, Decision, Job, Platform, Reservation, register, simulate
from bbopt.planner import Planner


@register("largest-first")
class LargestFirst:
    """EASY backfilling over the queue sorted largest first (nodes, then BB)."""

    io_aware = False  # (link bandwidth is not planned; the engine then does not enforce it)

    def __init__(self, name: str = "largest-first") -> None:
        self.name = name

    def decide(self, state: ClusterState) -> Decision:
        planner = Planner.of(state)
        starts, reservations = [], []
        for job in sorted(state.queue, key=lambda j: (-j.nodes, -j.bb)):
            start = planner.start(job)  # fits now without delaying the reservation
            if start is not None:
                starts.append(start)
            elif not reservations:  # the head: reserved at its earliest start
                at = planner.earliest(job)
                if at < math.inf:
                    planner.reserve(job, at)
                    reservations.append(Reservation(job.id, at))
        return Decision(start=tuple(starts), reservations=tuple(reservations))


if __name__ == "__main__":
    jobs = [Job("small", 0, walltime=10, runtime=10, nodes=1, bb=1e9),
            Job("long", 0, walltime=100, runtime=100, nodes=2),
            Job("wide", 1, walltime=50, runtime=50, nodes=4, bb=4e9),
            Job("short", 2, walltime=5, runtime=5, nodes=1)]
    platform = Platform(nodes=4, bb=8e9, bb_nodes=(2e9,) * 4)  # BB on four named nodes
    result = simulate(jobs, platform, "largest-first")
    for job, start, end in zip(result.jobs, result.start, result.end, strict=True):
        print(f"{job.id:6s} {job.nodes} nodes  start {start:5.0f}  end {end:5.0f}")

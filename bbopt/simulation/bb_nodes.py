"""Named burst-buffer nodes: placing a job's per-node pieces on BB nodes, first fit.

Kopanski & Rzadca's platform (Section 4.1) has 12 BB nodes of 40 GB, one per chassis, not one
480 GB pool: in the authors' scheduler every compute node of a job gets its own piece of the
job's burst buffer (the job's request divided by its node count) on a single BB node. A start
the pool would accept can therefore be impossible: the free space may be scattered over BB nodes
in fragments smaller than one piece.

bbopt's placement (when :attr:`bbopt.core.Platform.bb_nodes` is set) is **first fit**: each
piece goes on the lowest-numbered BB node with room for it (the authors look up the chassis' BB
node first, then the group's, then any; first fit in one global order packs small pieces on the
first BB nodes and keeps the last ones free for large pieces, which refused fewer starts in
bbopt's runs). When some piece has no room the start is refused: the engine leaves the job
waiting and counts the refusal (:attr:`bbopt.simulation.result.SimulationResult.
refused_starts`). This module is the engine's only check of the named nodes: the policies plan
with the pool, so a refused job waits until the next event, and its pool share may meanwhile be
taken by others (the authors' policies reserve space on the named nodes instead).

On an empty machine first fit places ``sum(floor(C_b / piece))`` pieces, the most any placement
can, so :meth:`bbopt.core.Platform.why_never_fits` rejects exactly the jobs that can never be
placed, and with the fit-in-platform rule of :mod:`bbopt.workloads.bb` every job fits.
"""

from __future__ import annotations

from collections.abc import Sequence

from bbopt.core import Job, Platform


class BBNodeLedger:
    """Free space on each BB node, and which pieces every running job holds."""

    def __init__(self, platform: Platform) -> None:
        if platform.bb_nodes is None:
            raise ValueError("platform has no named BB nodes")
        self.capacity = tuple(float(c) for c in platform.bb_nodes)
        self.free = list(self.capacity)
        self.held: dict[str, list[tuple[int, float]]] = {}
        self.tol = max(self.capacity) * 1e-12
        self.refused = 0

    def placement(self, job: Job, nodes: Sequence[int] = ()) -> list[tuple[int, float]] | None:
        """The (BB node, bytes) pieces of ``job`` now, one per compute node, or ``None`` if some
        piece has no room. Nothing is changed. (``nodes``, the compute nodes, do not change the
        first-fit placement; they are taken for a placement that would depend on them.)"""
        if job.bb <= 0:
            return []
        piece = job.bb / job.nodes
        free = list(self.free)
        out = []
        b = 0
        for _ in range(job.nodes):
            while b < len(free) and free[b] < piece - self.tol:
                b += 1
            if b == len(free):
                return None
            free[b] -= piece
            out.append((b, piece))
        return out

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

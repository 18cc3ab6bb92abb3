"""Named burst-buffer nodes: placing a job's per-node pieces on BB nodes, first fit.

Kopanski & Rzadca's platform (Section 4.1) has 12 BB nodes of 40 GB, one per chassis, not one
480 GB pool: in the authors' scheduler every compute node of a job gets its own piece of the
job's burst buffer (the job's request divided by its node count) on a single BB node, looked up
nearest first (the chassis' BB node, then the group's, then any). A start the pool would accept
can therefore be impossible: the free space may be scattered over BB nodes in fragments smaller
than one piece.

bbopt's placement (when :attr:`bbopt.core.Platform.bb_nodes` is set) is **first fit in a fixed
order per compute node**: compute node ``x`` of ``N`` starts at its own BB node
``h = floor(x * B / N)`` of ``B`` (on the paper's platform: the BB node of its chassis, 8
compute nodes per chassis) and tries ``h, h+1, ..., B-1, 0, ..., h-1``; the job's compute
nodes are placed in increasing order. A piece goes on the first BB node with room for it. When
some piece has no room the start is refused: the engine leaves the job waiting (see
:func:`bbopt.simulation.engine.simulate`) and counts the refusal. The policies plan with the
pool; this module is the engine's only check of the named nodes.

On an empty machine first fit places as many pieces as ``sum(floor(C_b / piece))``, whatever
the order, so :meth:`bbopt.core.Platform.why_never_fits` rejects exactly the jobs that can never
be placed, and with the fit-in-platform rule of :mod:`bbopt.workloads.bb` every job fits.
"""

from __future__ import annotations

from collections.abc import Sequence

from bbopt.core import Job, Platform


class BBNodeLedger:
    """Free space on each BB node, and which pieces every running job holds."""

    def __init__(self, platform: Platform, home_first: bool = False,
                 protect: bool = True) -> None:
        if platform.bb_nodes is None:
            raise ValueError("platform has no named BB nodes")
        self.capacity = tuple(float(c) for c in platform.bb_nodes)
        self.free = list(self.capacity)
        self.compute_nodes = platform.nodes
        self.held: dict[str, list[tuple[int, float]]] = {}
        self.tol = max(self.capacity) * 1e-12
        self.refused = 0
        self.home_first = home_first
        self.protect = protect
        self.blocked: tuple[tuple[float, int], Job] | None = None

    def order(self, node: int) -> list[int]:
        """The BB nodes compute node ``node`` tries, first to last."""
        b = len(self.capacity)
        if not self.home_first:
            return list(range(b))
        home = node * b // self.compute_nodes
        return [(home + i) % b for i in range(b)]

    def placement(self, job: Job, nodes: Sequence[int]) -> list[tuple[int, float]] | None:
        """The (BB node, bytes) pieces of ``job`` on ``nodes`` now, or ``None`` if some piece
        has no room. Nothing is changed."""
        if job.bb <= 0:
            return []
        piece = job.bb / job.nodes
        free = list(self.free)
        out = []
        for x in sorted(nodes):
            for b in self.order(x):
                if free[b] >= piece - self.tol:
                    free[b] -= piece
                    out.append((b, piece))
                    break
            else:
                return None
        return out

    def room(self, job: Job, free: Sequence[float] | None = None) -> int:
        """How many of ``job``'s pieces the BB nodes can take now (or with ``free``)."""
        if job.bb <= 0:
            return job.nodes
        piece = job.bb / job.nodes
        return sum(int((f + self.tol) // piece) for f in (self.free if free is None else free))

    def charge(self, job: Job, nodes: Sequence[int], rank: tuple[float, int] = (0.0, 0)
               ) -> str | None:
        """Place ``job``'s pieces; the reason when they cannot be placed (nothing changes).

        ``rank`` orders jobs by arrival (submit time, then index). While an earlier job stays
        refused, a later job's pieces are also refused if they would lower the number of the
        refused job's pieces the BB nodes can take, unless no job holds BB space (then nothing
        would ever end to free it; see the module docstring)."""
        pieces = self.placement(job, nodes)
        if pieces is None:
            self.refused += 1
            if self.blocked is None or rank < self.blocked[0]:
                self.blocked = (rank, job)
            return (f"its {job.nodes} pieces of {job.bb / job.nodes:.4g} B do not fit on the BB "
                    f"nodes (free: {', '.join(f'{f:.3g}' for f in self.free)} B)")
        if (self.protect and self.blocked is not None and rank > self.blocked[0]
                and self.held):
            head = self.blocked[1]
            after = list(self.free)
            for b, size in pieces:
                after[b] -= size
            if self.room(head, after) < min(self.room(head), head.nodes):
                self.refused += 1
                return f"its pieces would take the BB space job {head.id} waits for"
        for b, size in pieces:
            self.free[b] -= size
        self.held[job.id] = pieces
        if self.blocked is not None and self.blocked[1].id == job.id:
            self.blocked = None
        return None

    def release(self, job: Job) -> None:
        for b, size in self.held.pop(job.id, ()):
            self.free[b] = min(self.capacity[b], self.free[b] + size)

"""How burst buffer is placed: the BB dimension of the planner, one strategy per platform kind.

Kopanski & Rzadca, Euro-Par 2021, Section 4.1: the KTH machine has 12 BB nodes of 40 GB, one
per chassis, not one 480 GB pool; in the authors' scheduler every compute node of a job gets its
own piece of the job's burst buffer (the request divided by its node count) on a single BB node.
A start the pool would accept can then be impossible: the free space may be scattered over BB
nodes in fragments smaller than one piece. Three strategies, chosen once from the platform by
:func:`bb_placement`:

- :class:`PooledBB`: one pool; the pooled bytes (a dimension of the profile) are all there is.
- :class:`FirstFitBB` (``Platform.bb_nodes``): each piece on the lowest-numbered BB node with
  room for it (first fit in one global order packs small pieces on the first BB nodes and keeps
  the last ones free for large pieces, which refused fewer starts in bbopt's runs).
- :class:`ProximityBB` (``Platform.bb_proximity``): the authors' placement, the chassis' BB node,
  then the group's, then any (:func:`bbopt.planner.pieces.place_pieces`); it depends on the
  job's compute nodes, which it chooses as the authors' filter does
  (:func:`bbopt.planner.pieces.contiguous_nodes`: consecutive runs).

Each strategy object holds the BB nodes as they are now (free bytes per BB node and the pieces
every running job holds): the engine's ledger places, takes and releases starts through it, and
a policy's planner takes its starts from it, so both apply the same rule with the same tolerance.
On an empty machine first fit places ``sum(floor(C_b / piece))`` pieces, the most any placement
can, so :meth:`bbopt.core.Platform.why_never_fits` rejects exactly the jobs that can never be
placed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from bbopt.core import Job, Platform, RunningJob, slack
from bbopt.planner.pieces import (
    bb_node_tolerance,
    contiguous_nodes,
    first_fit_runs,
    never_placed,
    place_pieces,
)


class PooledBB:
    """One BB pool: no piece to place, every start the pooled bytes admit is placed. It holds
    no state, so every pooled platform shares one (:data:`POOLED`)."""

    kind = "pool"
    #: Whether the BB is split over named BB nodes (pieces to place and to record).
    named = False
    #: Whether the placement chooses a start's compute nodes (else: the lowest-numbered free).
    chooses_nodes = False

    def placement(self, job: Job, nodes: Sequence[int] = ()) -> list[tuple[int, float]] | None:
        """The ``(BB node, bytes)`` pieces of ``job`` now, or ``None`` if some piece has no
        room (nothing changes)."""
        return []

    def why_not_pieces(self, job: Job, pieces: Sequence[tuple[int, float]]) -> str | None:
        """Why ``job`` cannot take the ``pieces`` a start names now (``None``: it can)."""
        return "names BB pieces, but the platform's burst buffer is one pool"

    def place_on(self, free: Sequence[float], job: Job, nodes: Sequence[int] = ()
                 ) -> list[tuple[int, float]] | None:
        """The ``(BB node, bytes)`` pieces of ``job`` on its compute nodes ``nodes`` if the BB
        nodes had ``free`` bytes free (e.g. the least free space over a later interval), or
        ``None`` if some piece has no room."""
        return []

    def placeable(self, job: Job, free: Sequence[float] | None = None) -> bool:
        """Whether ``job``'s pieces can be placed on some compute nodes, on BB nodes with
        ``free`` bytes free (by default: now). Pieces of one job are equal, so whether they fit
        does not depend on the order they are placed in (:mod:`bbopt.planner.pieces`): the
        cheap test before the compute nodes are chosen."""
        return True

    def why_not_now(self, job: Job, nodes: Sequence[int] = ()) -> str | None:
        """Why ``job``'s BB cannot be placed now, or ``None`` (nothing changes)."""
        return None

    def release(self, job: Job) -> None:
        """Give back what ``job`` holds."""

    def pieces_of(self, job: Job) -> tuple[tuple[int, float], ...] | None:
        """The pieces ``job`` holds (``None`` on a pool, where there are none to name)."""
        return None

    def take(self, job: Job, pieces: Sequence[tuple[int, float]]) -> None:
        """Hold ``pieces`` for ``job`` (placed already, e.g. a running job's)."""

    def snapshot(self) -> tuple:
        """The state :meth:`restore` brings back."""
        return ()

    def restore(self, snap: tuple) -> None:
        """Back to :meth:`snapshot`'s state."""

    def choose_nodes(self, free_nodes: Sequence[int], n: int) -> tuple[int, ...] | None:
        """The compute nodes this placement wants for a job of ``n`` nodes (``None``: any,
        the lowest-numbered free ones)."""
        return None

    #: The BB node capacities (empty on a pool) and a piece's rounding tolerance.
    capacity: tuple[float, ...] = ()
    tol = 0.0
    #: The BB nodes each compute node prefers, in order (proximity placement only).
    proximity = None

    def never_placed(self, nodes: int, bb: float) -> bool:
        """Whether a job of ``nodes`` nodes and ``bb`` bytes can never be placed, not even on
        empty BB nodes (a pool places any request its bytes hold)."""
        return False


class FirstFitBB(PooledBB):
    """Named BB nodes, each piece on the lowest-numbered BB node with room (see the module
    docstring). A start whose pieces cannot be placed is refused."""

    kind = "first-fit"
    named = True
    proximity = None

    def __init__(self, platform: Platform) -> None:
        if platform.bb_nodes is None:
            raise ValueError("platform has no named BB nodes")
        self.held: dict[str, Sequence[tuple[int, float]]] = {}
        self.capacity, self.tol, self.margin = _bb_nodes_of(tuple(platform.bb_nodes))
        self.free = list(self.capacity)

    def placement(self, job: Job, nodes: Sequence[int] = ()) -> list[tuple[int, float]] | None:
        return self.place_on(self.free, job, nodes)

    def place_on(self, free: Sequence[float], job: Job, nodes: Sequence[int] = ()
                 ) -> list[tuple[int, float]] | None:
        if job.bb <= 0:
            return []
        pieces = place_pieces(free, job.nodes, job.bb, self.tol, self.proximity, nodes)
        return None if pieces is None else list(pieces)

    def placeable(self, job: Job, free: Sequence[float] | None = None) -> bool:
        if job.bb <= 0:
            return True
        if free is None:
            free = self.free
        # A BB node with f bytes free takes at least floor(f / piece) pieces (first fit
        # rounds in the piece's favour by the tolerance), so the pieces fit wherever the free
        # bytes add up to the request plus one piece per BB node (the sum's rounding is far
        # inside the margin): the cheap test first.
        if sum(free) >= job.bb + len(free) * (job.bb / job.nodes) + self.margin:
            return True
        return first_fit_runs(free, job.nodes, job.bb, self.tol) is not None

    def why_not_pieces(self, job: Job, pieces: Sequence[tuple[int, float]]) -> str | None:
        """Why ``job`` cannot take the ``pieces`` a start names now (``None``: it can): one
        piece of ``bb / nodes`` bytes per compute node, each on a BB node of the platform, the
        pieces on one BB node within its free space (with the placement's tolerance, as first
        fit places them)."""
        if job.bb <= 0:
            return None if not pieces else "names BB pieces, but requests no burst buffer"
        if len(pieces) != job.nodes:
            return f"names {len(pieces)} BB pieces for its {job.nodes} nodes"
        piece = job.bb / job.nodes
        free = self.free
        k = len(free)
        load = [0.0] * k
        for b, size in pieces:
            if type(b) is not int or not 0 <= b < k:
                return f"names BB node {b!r}; the platform has BB nodes 0-{k - 1}"
            if size != piece and not abs(size - piece) <= piece * 1e-9:
                return f"names a piece of {size:.6g} B; its pieces are {piece:.6g} B"
            load[b] += size
        tol = self.tol
        for b in range(k):
            if load[b] > free[b] + tol:
                return (f"its pieces on BB node {b} take {load[b]:.6g} B, {free[b]:.6g} B "
                        "are free")
        return None

    def _why(self, job: Job) -> str:
        return (f"its {job.nodes} pieces of {job.bb / job.nodes:.4g} B do not fit on the BB "
                f"nodes (free: {', '.join(f'{f:.3g}' for f in self.free)} B)")

    def why_not_now(self, job: Job, nodes: Sequence[int] = ()) -> str | None:
        return None if self.placement(job, nodes) is not None else self._why(job)

    def release(self, job: Job) -> None:
        free, cap = self.free, self.capacity
        for b, size in self.held.pop(job.id, ()):  # (each piece back, capped at capacity)
            f = free[b] + size
            free[b] = f if f < cap[b] else cap[b]

    def pieces_of(self, job: Job) -> tuple[tuple[int, float], ...] | None:
        return tuple(self.held.get(job.id, ()))

    def take(self, job: Job, pieces: Sequence[tuple[int, float]]) -> None:
        free = self.free
        for b, size in pieces:
            free[b] -= size
        self.held[job.id] = tuple(pieces)  # (what pieces_of returns, without a copy)

    def take_each(self, running: Iterable[RunningJob],
                  pieces: dict[str, Sequence[tuple[int, float]]]) -> None:
        """:meth:`take` the ``pieces`` of each running job, in this order (a planner's BB
        nodes now, built at every decision: one loop, the pieces held as given)."""
        free, held = self.free, self.held
        for r in running:
            jid = r.job.id
            got = pieces.get(jid, ())
            for b, size in got:
                free[b] -= size
            held[jid] = got

    def snapshot(self) -> tuple:
        return list(self.free), dict(self.held)

    def restore(self, snap: tuple) -> None:
        free, held = snap
        self.free, self.held = list(free), dict(held)

    def never_placed(self, nodes: int, bb: float) -> bool:
        # First fit on empty BB nodes places the most pieces any placement can (module
        # docstring).
        return never_placed(self.capacity, nodes, bb, self.tol)


class ProximityBB(FirstFitBB):
    """Named BB nodes with the authors' proximity placement: pieces follow the job's compute
    nodes, chosen as consecutive runs. A later start's pieces then depend on the compute nodes
    free at that time, which the planner knows (:meth:`bbopt.planner.Planner.earliest` and its
    reservations name the nodes they hold)."""

    kind = "proximity"
    chooses_nodes = True

    def __init__(self, platform: Platform) -> None:
        super().__init__(platform)
        self.proximity = platform.bb_proximity

    def choose_nodes(self, free_nodes: Sequence[int], n: int) -> tuple[int, ...] | None:
        return contiguous_nodes(free_nodes, n)


@lru_cache(maxsize=64)
def _bb_nodes_of(bb_nodes: tuple[float, ...]) -> tuple[tuple[float, ...], float, float]:
    """The BB node capacities as floats, a piece's rounding tolerance and the margin of
    :meth:`FirstFitBB.placeable`'s cheap test (a billionth of the BB nodes' bytes), once per
    platform (a placement is built at every decision)."""
    capacity = tuple(float(c) for c in bb_nodes)
    return capacity, bb_node_tolerance(capacity), 1e-9 * sum(capacity)


def profile_slacks(platform: Platform) -> tuple[float, ...]:
    """How far above its free amount each dimension of a profile of ``platform`` admits a
    demand: the nodes and the pooled BB by :func:`bbopt.core.slack`, then each named BB node by
    the tolerance first fit places a piece with (:func:`bbopt.planner.pieces.bb_node_tolerance`).
    With a wider slack on a BB node, a hold admitted within it could leave a later job's piece,
    released and placed again, short of what first fit accepts: its reservation would be planned
    and held by none."""
    pooled = (slack(platform.nodes), slack(platform.bb))
    if platform.bb_nodes is None:
        return pooled
    _, tol, _ = _bb_nodes_of(tuple(platform.bb_nodes))
    return pooled + (tol,) * len(platform.bb_nodes)


#: What every placement strategy is (the pool's interface).
BBPlacement = PooledBB
#: The placement of every platform whose BB is one pool.
POOLED = PooledBB()


def bb_placement(platform: Platform) -> PooledBB:
    """The BB placement of ``platform``, chosen once: proximity, first fit or one pool (a
    fresh object holding the BB nodes empty, or the shared stateless pool)."""
    if platform.bb_nodes is None:
        return POOLED
    if platform.bb_proximity is not None:
        return ProximityBB(platform)
    return FirstFitBB(platform)


def choose_nodes(free_nodes: Sequence[int], job: Job, platform: Platform,
                 bb: PooledBB) -> tuple[int, ...] | str:
    """The compute nodes ``job`` gets from the sorted free node ids when the policy names none
    (the engine's rule): for a local-SSD request the free nodes with the smallest admissible
    SSDs (least waste), else those the BB placement chooses (the authors' consecutive runs),
    else the lowest-numbered free ones. The reason as text when too few are free."""
    node_ssd = platform.node_ssd
    if job.ssd > 0 and node_ssd is not None:
        fit = sorted((node_ssd[x], x) for x in free_nodes if node_ssd[x] >= job.ssd)
        if len(fit) < job.nodes:
            return f"needs {job.nodes} nodes with {job.ssd:.4g} B of local SSD, {len(fit)} free"
        return tuple(x for _, x in fit[:job.nodes])
    if len(free_nodes) < job.nodes:
        return f"needs {job.nodes} nodes, {len(free_nodes)} free"
    if bb.chooses_nodes:
        nodes = bb.choose_nodes(free_nodes, job.nodes)
        if nodes is not None:
            return nodes
    return tuple(free_nodes[:job.nodes])

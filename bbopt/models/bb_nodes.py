"""Named burst-buffer nodes: where a job's burst buffer goes when the BB is not one pool.

Kopanski & Rzadca, Euro-Par 2021, Section 4.1: 12 BB nodes of 40 GB (one per chassis), not one
480 GB pool; each compute node of a job gets its own piece of the job's burst buffer (the request
divided by the node count) on one BB node. One placement rule, **first fit**
(:func:`first_fit_pieces`), serves the engine's ledger (:mod:`bbopt.simulation.ledger`, which
refuses a start it cannot place) and the policies (:mod:`bbopt.policies.queue`,
:mod:`bbopt.policies.plan`, which check it before they start or reserve a job), so that a
policy's start is never refused. Pure data and evaluation; no solver.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Pieces = tuple[tuple[int, float], ...]


def bb_node_tolerance(capacities: Sequence[float]) -> float:
    """Bytes a piece may exceed a BB node's free space by (rounding only)."""
    return max(capacities) * 1e-12


def first_fit_runs(free: Sequence[float], nodes: int, bb: float, tol: float
                   ) -> tuple[tuple[int, int], ...] | None:
    """The first-fit rule itself (:func:`first_fit_pieces`), as runs ``(BB node, pieces)``: how
    many of the job's ``nodes`` equal pieces of ``bb / nodes`` bytes go on each BB node, in BB
    node order; ``None`` if some piece has no room, ``()`` for a job without BB. ``free`` is only
    indexed (``free[b]``, ``len(free)``), so it may compute its values lazily.

    >>> first_fit_runs([5.0, 10.0], 3, 12.0, 0.0)
    ((0, 1), (1, 2))
    """
    if bb <= 0:
        return ()
    piece = bb / nodes
    short = piece - tol  # a BB node with less than this left takes no more piece
    out = []
    n_bins = len(free)
    todo = nodes
    # Margins this close to a boundary are decided piece by piece (the rounding of k <= 1000
    # subtractions stays far below 1e-9 piece): the answer is the loop's, bit for bit.
    guard = 1e-9 * piece
    floor = math.floor
    for b in range(n_bins):
        f = free[b]
        if f < short:
            continue
        # Pieces the BB node takes: k with f - (k - 1) * piece >= short > f - k * piece. The
        # loop subtracts piece by piece; closed form when no boundary is within rounding.
        x = (f - short) / piece
        k = floor(x) + 1
        m = (f - short) - (k - 1) * piece
        if not (guard < m < piece - guard and k <= 1000):
            k = 0
            left = f
            while left >= short and k < todo:
                left -= piece
                k += 1
        if k >= todo:
            out.append((b, todo))
            return tuple(out)
        out.append((b, k))
        todo -= k
    return None
def first_fit_pieces(free: Sequence[float], nodes: int, bb: float, tol: float) -> Pieces | None:
    """The ``(BB node, bytes)`` pieces of a job of ``nodes`` nodes and ``bb`` bytes placed on BB
    nodes with ``free`` bytes free: one piece of ``bb / nodes`` per compute node, each on the
    lowest-numbered BB node with room for it; ``None`` if some piece has no room. ``free`` is
    not changed. A job without BB has no pieces.

    Pieces of one job are equal, so first fit places one exactly when
    ``sum(floor(free_b / piece)) >= nodes``: placeability only grows with free space.

    >>> first_fit_pieces([5.0, 10.0], 3, 12.0, 0.0)
    ((0, 4.0), (1, 4.0), (1, 4.0))
    >>> first_fit_pieces([5.0, 5.0], 3, 12.0, 0.0) is None
    True
    """
    runs = first_fit_runs(free, nodes, bb, tol)
    if runs is None:
        return None
    piece = bb / nodes
    return tuple((b, piece) for b, count in runs for _ in range(count))


class BBNodeSpace:
    """Free bytes on each named BB node, as a policy tracks them while it decides: ``take`` a
    job's first-fit pieces (``None``, nothing taken, when they do not fit), ``give`` pieces
    back."""

    __slots__ = ("free", "tol")

    def __init__(self, free: Sequence[float], tol: float) -> None:
        self.free = list(free)
        self.tol = tol

    def copy(self) -> BBNodeSpace:
        return BBNodeSpace(self.free, self.tol)

    def place(self, nodes: int, bb: float) -> Pieces | None:
        return first_fit_pieces(self.free, nodes, bb, self.tol)

    def fits(self, job) -> bool:
        return job.bb <= 0 or first_fit_pieces(self.free, job.nodes, job.bb, self.tol) is not None

    def take(self, job) -> Pieces | None:
        pieces = first_fit_pieces(self.free, job.nodes, job.bb, self.tol)
        if pieces is not None:
            self.take_pieces(pieces)
        return pieces

    def take_pieces(self, pieces: Pieces) -> None:
        free = self.free
        for b, size in pieces:
            free[b] -= size

    def give(self, pieces: Pieces) -> None:
        free = self.free
        for b, size in pieces:
            free[b] += size


def running_pieces(state) -> dict[str, Pieces]:
    """The ``(BB node, bytes)`` pieces each running job of a :class:`~bbopt.core.ClusterState`
    holds (empty on a platform without named BB nodes). A running job whose pieces are not
    given (a state built by hand or read from JSON) is placed again by first fit, in start
    order, after those whose pieces are known."""
    caps = state.platform.bb_nodes
    out: dict[str, Pieces] = {}
    if caps is None:
        return out
    replay = BBNodeSpace(caps, bb_node_tolerance(caps))
    for r in state.running:
        if r.bb_pieces is not None:
            replay.take_pieces(r.bb_pieces)
            out[r.job.id] = r.bb_pieces
    for r in sorted((r for r in state.running if r.bb_pieces is None and r.job.bb > 0),
                    key=lambda r: r.start):
        pieces = replay.place(r.job.nodes, r.job.bb) or _spread(replay.free, r.job.bb)
        replay.take_pieces(pieces)
        out[r.job.id] = pieces
    return out


def bb_node_space(state, held: dict[str, Pieces] | None = None) -> BBNodeSpace | None:
    """The named BB nodes of a :class:`~bbopt.core.ClusterState` as they are now (``None`` on a
    platform without them): capacities less the pieces the running jobs hold (``held``, by
    default :func:`running_pieces`)."""
    caps = state.platform.bb_nodes
    if caps is None:
        return None
    space = BBNodeSpace(caps, bb_node_tolerance(caps))
    for pieces in (running_pieces(state) if held is None else held).values():
        space.take_pieces(pieces)
    return space


def _spread(free: Sequence[float], bb: float) -> Pieces:
    """Pieces of ``bb`` bytes over the BB nodes in proportion to their free space (for a
    running job whose first-fit placement is unknown and no longer fits)."""
    total = sum(max(f, 0.0) for f in free)
    if total <= 0:
        return ()
    return tuple((b, bb * max(f, 0.0) / total) for b, f in enumerate(free) if f > 0)

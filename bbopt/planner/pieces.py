"""Named burst-buffer nodes: where a job's burst buffer goes when the BB is not one pool.

Kopanski & Rzadca, Euro-Par 2021, Section 4.1: 12 BB nodes of 40 GB (one per chassis), not one
480 GB pool; each compute node of a job gets its own piece of the job's burst buffer (the request
divided by the node count) on one BB node. One placement rule (:func:`place_pieces`) serves the
engine's ledger (:mod:`bbopt.simulation.ledger`, which refuses a start it cannot place), the
planner's placement strategies (:mod:`bbopt.planner.bb`) and through them the policies and the
plan models, so that a policy's start is never refused. The rule: each compute node's
piece goes on the first BB node, in that compute node's order of preference, with room for it.
Two orders:

- **first fit** (the default, :func:`first_fit_pieces`): every compute node prefers the BB nodes
  in the same order, 0, 1, 2, ...; the compute nodes then do not matter.
- **proximity** (``Platform.bb_proximity``, :func:`bbopt.core.dragonfly_proximity`): the authors'
  Dragonfly order (their scheduler's ``_find_sufficient_burst_buffers`` and
  ``_create_burst_buffer_proximity``): the BB node of the compute node's chassis, then the
  other BB nodes of its group, then any other BB node; the pieces are placed in the order of
  the job's compute nodes (ascending). The compute nodes are then chosen as the authors'
  resource filter chooses them (:func:`contiguous_nodes`: the shortest run of consecutive
  free nodes that holds the job, else the longest runs first).

Pieces of one job are equal, so either order places a job on the BB nodes as they are exactly
when ``sum(floor(free_b / piece)) >= nodes``: the two differ in where pieces go (and so in what
later jobs find), never in whether one job can start on the space it sees.

Pure data and evaluation, part of the planner; no solver.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from bbopt.core import Proximity

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
@lru_cache(maxsize=1 << 16)
def never_placed(capacity: tuple[float, ...], nodes: int, bb: float, tol: float) -> bool:
    """Whether a job of ``nodes`` nodes and ``bb`` bytes can never be placed on BB nodes of
    ``capacity``, not even empty ones (first fit there places the most pieces any placement
    can). Kept per request: a waiting job is asked about at every decision.

    >>> never_placed((5.0, 10.0), 3, 12.0, 0.0), never_placed((5.0, 5.0), 3, 12.0, 0.0)
    (False, True)
    """
    return first_fit_runs(capacity, nodes, bb, tol) is None


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
    return None if runs is None else _listed(runs, bb / nodes)


def _listed(runs, piece: float) -> Pieces:
    """The pieces of ``runs`` (``(BB node, how many)``, in BB node order), ``piece`` bytes
    each, one entry per piece."""
    out: list[tuple[int, float]] = []
    for b, count in runs:
        out += [(b, piece)] * count
    return tuple(out)


def proximity_pieces(free: Sequence[float], compute: Sequence[int], bb: float, tol: float,
                     proximity: Proximity) -> Pieces | None:
    """The ``(BB node, bytes)`` pieces of a job on the compute nodes ``compute`` (one piece of
    ``bb / len(compute)`` each, in ascending compute-node order), each on the first BB node in
    its compute node's row of ``proximity`` with room for it; ``None`` if some piece has no
    room. ``free`` is not changed.

    >>> from bbopt.core import dragonfly_proximity
    >>> prox = dragonfly_proximity(8, 2, 2)
    >>> proximity_pieces([10.0, 10.0, 4.0, 10.0], (4, 5, 6), 12.0, 0.0, prox)
    ((2, 4.0), (3, 4.0), (3, 4.0))
    """
    if bb <= 0:
        return ()
    left = list(free)
    piece = bb / len(compute)
    short = piece - tol
    out = []
    for x in sorted(compute):
        for b in proximity[x]:
            if left[b] >= short:
                left[b] -= piece
                out.append((b, piece))
                break
        else:
            return None
    return tuple(out)


def pieces_of_bytes(held: Sequence[float], nodes: int, bb: float) -> Pieces:
    """The ``(BB node, bytes)`` pieces of a job of ``nodes`` nodes and ``bb`` bytes holding
    ``held[b]`` bytes on BB node ``b`` (a whole number of its pieces of ``bb / nodes``), in BB
    node order as :func:`first_fit_pieces` lists them.

    >>> pieces_of_bytes([0.0, 8.0, 4.0], 3, 12.0)
    ((1, 4.0), (1, 4.0), (2, 4.0))
    """
    if bb <= 0:
        return ()
    piece = bb / nodes
    return _listed([(b, round(size / piece)) for b, size in enumerate(held) if size], piece)


def place_pieces(free: Sequence[float], nodes: int, bb: float, tol: float,
                 proximity: Proximity | None = None, compute: Sequence[int] = ()
                 ) -> Pieces | None:
    """The placement rule (module docstring): first fit without ``proximity``, else by
    proximity on the job's compute nodes ``compute`` (``nodes`` of them)."""
    if proximity is None:
        return first_fit_pieces(free, nodes, bb, tol)
    if len(compute) != nodes:
        raise ValueError(f"proximity placement needs the job's {nodes} compute nodes, "
                         f"got {len(compute)}")
    return proximity_pieces(free, compute, bb, tol, proximity)


def contiguous_nodes(free: Sequence[int], n: int) -> tuple[int, ...] | None:
    """The ``n`` compute nodes the authors' resource filter takes from the sorted free node
    ids ``free`` (``None`` if fewer are free): the shortest run of consecutive ids that holds
    ``n`` (the lowest of equal runs), its first ``n``; else the longest runs (the highest of
    equal ones first), the last one cut to what is still needed.

    >>> contiguous_nodes([0, 1, 2, 5, 6, 9], 2)
    (5, 6)
    >>> contiguous_nodes([0, 1, 2, 5, 6, 9], 4)
    (0, 1, 2, 5)
    """
    if n > len(free):
        return None
    if n <= 0:
        return ()
    runs = []  # (length, first id)
    start = prev = None
    for x in free:
        if prev is None or x != prev + 1:
            if prev is not None:
                runs.append((prev - start + 1, start))
            start = x
        prev = x
    runs.append((prev - start + 1, start))
    fitting = [r for r in runs if r[0] >= n]
    if fitting:
        length, first = min(fitting)
        return tuple(range(first, first + n))
    out: list[int] = []
    for length, first in sorted(runs, reverse=True):
        take = min(length, n - len(out))
        out.extend(range(first, first + take))
        if len(out) == n:
            break
    return tuple(sorted(out))


class BBNodeSpace:
    """Free bytes on each named BB node while pieces are replayed: ``place`` a job's pieces
    first fit (``None`` when they do not fit; nothing taken), ``take_pieces``."""

    __slots__ = ("free", "tol")

    def __init__(self, free: Sequence[float], tol: float) -> None:
        self.free = list(free)
        self.tol = tol

    def place(self, nodes: int, bb: float) -> Pieces | None:
        return first_fit_pieces(self.free, nodes, bb, self.tol)

    def take_pieces(self, pieces: Pieces) -> None:
        free = self.free
        for b, size in pieces:
            free[b] -= size


def running_pieces(state) -> dict[str, Pieces]:
    """The ``(BB node, bytes)`` pieces each running job of a :class:`~bbopt.core.ClusterState`
    holds (empty on a platform without named BB nodes). A running job whose pieces are not
    given (a state built by hand or read from JSON) is placed again (by proximity on its
    compute nodes when the platform has ``bb_proximity`` and they are known, else first fit),
    in start order, after those whose pieces are known."""
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
        pieces = None
        if state.platform.bb_proximity is not None and r.allocation is not None:
            pieces = proximity_pieces(replay.free, r.allocation, r.job.bb, replay.tol,
                                      state.platform.bb_proximity)
        pieces = pieces or replay.place(r.job.nodes, r.job.bb) or _spread(replay.free, r.job.bb)
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

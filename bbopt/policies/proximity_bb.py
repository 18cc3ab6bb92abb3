"""The queue policies on named BB nodes placed by proximity: the authors' own placement.

Kopanski & Rzadca, Euro-Par 2021, Sections 3.2 and 4.1, as their scheduler does it (the public
code of the paper: ``AllocOnlyScheduler`` with its resource filter,
``_find_sufficient_burst_buffers`` and the ``backfill`` algorithm; ``fcfs-easy`` is
``backfill`` without future BB reservations).
Used by :mod:`bbopt.policies.queue` when the platform has ``bb_proximity``
(``Platform.kopanski(named_bb=True, bb_placement="proximity")``):

- a job's compute nodes are named: the shortest run of consecutive free nodes that holds it,
  else the longest runs (:func:`bbopt.planner.pieces.contiguous_nodes`), and its per-node BB
  pieces go on the chassis' BB node, then the group's, then any
  (:func:`bbopt.planner.pieces.place_pieces`). Every start names its nodes, so the engine
  places the same pieces.
- EASY's head reservation holds **named compute nodes**: at the shadow time (the first
  expected end, or now, at which enough nodes are free -- and with ``reserve_bb`` the head's
  pieces can be placed on them by proximity on the BB nodes as they will be then), the head
  gets the nodes the filter takes from those free then. A backfill candidate still running at
  the shadow time must avoid those nodes (not merely leave enough of them, as the count-based
  EASY does), and with ``reserve_bb`` must leave the head placeable on them.
- ``fcfs-easy`` reserves processors only: a candidate needs its nodes and pieces now.

One difference from the authors' code, kept so that the engine never refuses a start: with
``reserve_bb`` a late candidate's pieces are placed on the BB nodes as they are now (where the
engine puts them) and the head must then still be placeable on its nodes, where the authors
place the candidate on what the head's already placed pieces leave.
"""

from __future__ import annotations

import math
from bisect import insort
from itertools import islice
from operator import attrgetter

from bbopt.core import ClusterState, Job, Reservation, Start, slack
from bbopt.planner.pieces import (
    BBNodeSpace,
    Pieces,
    bb_node_space,
    contiguous_nodes,
    first_fit_runs,
    free_compute_nodes,
    running_pieces,
)

_walltime = attrgetter("walltime")


class _Now:
    """The compute nodes and BB nodes free now, as the decision takes them."""

    def __init__(self, state: ClusterState, held: dict[str, Pieces]) -> None:
        self.nodes = free_compute_nodes(state)
        self.space: BBNodeSpace = bb_node_space(state, held, by_proximity=True)
        self.free_b = state.platform.bb - state.used()[1]
        self.tol = slack(state.platform.bb)

    def place(self, job: Job, avoid: frozenset[int] = frozenset()
              ) -> tuple[tuple[int, ...], Pieces] | None:
        """The nodes and pieces ``job`` would get now (nothing taken), avoiding ``avoid``."""
        if job.bb > self.free_b + self.tol:
            return None
        pool = [x for x in self.nodes if x not in avoid] if avoid else self.nodes
        nodes = contiguous_nodes(pool, job.nodes)
        if nodes is None:
            return None
        pieces = self.space.place(job.nodes, job.bb, nodes) if job.bb > 0 else ()
        return None if pieces is None else (nodes, pieces)

    def take(self, job: Job, nodes: tuple[int, ...], pieces: Pieces) -> None:
        taken = set(nodes)
        self.nodes = [x for x in self.nodes if x not in taken]
        self.space.take_pieces(pieces)
        self.free_b -= job.bb


def fcfs_pass(now: _Now, queue) -> tuple[list[tuple[Job, tuple[int, ...], Pieces]], int]:
    """Start jobs in queue order while they can be placed now; (starts, index of the first
    that cannot)."""
    out = []
    i = 0
    for job in queue:
        got = now.place(job)
        if got is None:
            break
        now.take(job, *got)
        out.append((job, *got))
        i += 1
    return out, i


def decide_fcfs(state: ClusterState, backfill_all: bool = False) -> list[Start]:
    """``fcfs`` (stop at the first job that cannot start) or ``filler`` (``backfill_all``:
    every job that can start now, in queue order)."""
    now = _Now(state, running_pieces(state))
    if not backfill_all:
        started, _ = fcfs_pass(now, state.queue)
    else:
        started = []
        for job in state.queue:
            if not now.nodes:
                break
            got = now.place(job)
            if got is not None:
                now.take(job, *got)
                started.append((job, *got))
    return [Start(j.id, nodes) for j, nodes, _ in started]


def decide_easy(state: ClusterState, *, reserve_bb: bool, order: str
                ) -> tuple[list[Start], list[Reservation]]:
    """EASY backfilling by proximity (module docstring): the starts (with their nodes) and the
    head's reservation."""
    held = running_pieces(state)
    now = _Now(state, held)
    queue = state.queue
    started, i = fcfs_pass(now, queue)
    if i == len(queue):
        return [Start(j.id, nodes) for j, nodes, _ in started], []
    head = queue[i]
    t_now = state.time
    shadow, reserved, at_shadow = _head_reservation(state, now, held, started, head,
                                                    reserve_bb)
    avoid = frozenset(reserved)
    rest = islice(queue, i + 1, None)
    if order == "sjf":
        rest = sorted(rest, key=_walltime)
    # The nodes a candidate may use: all free ones if it ends by the shadow time, else those
    # outside the head's; the filter's choice per size is kept until a start changes them.
    pools = {False: now.nodes, True: [x for x in now.nodes if x not in avoid]}
    chosen: dict[tuple[bool, int], tuple[int, ...] | None] = {}
    space = now.space
    for job in rest:
        if not now.nodes:
            break
        late = t_now + job.walltime > shadow
        n, b = job.nodes, job.bb
        if n > len(pools[late]) or b > now.free_b + now.tol:
            continue
        # One job on the space as it is: placeable by proximity exactly when by first fit
        # (module docstring of bbopt.planner.pieces), whose closed form is the cheap test.
        if b > 0 and first_fit_runs(space.free, n, b, space.tol) is None:
            continue
        key = (late, n)
        if key not in chosen:
            chosen[key] = contiguous_nodes(pools[late], n)
        nodes = chosen[key]
        pieces = space.place(n, b, nodes) if b > 0 else ()
        if pieces is None:
            continue
        if late and reserve_bb and at_shadow is not None and pieces:
            trial = at_shadow.copy()
            trial.take_pieces(pieces)
            if not trial.fits(head, reserved):
                continue
            at_shadow = trial
        now.take(job, nodes, pieces)
        started.append((job, nodes, pieces))
        taken = set(nodes)
        pools = {k: [x for x in v if x not in taken] for k, v in pools.items()}
        chosen.clear()
    starts = [Start(j.id, nodes) for j, nodes, _ in started]
    return starts, ([Reservation(head.id, shadow)] if shadow < math.inf else [])


def _head_reservation(state: ClusterState, now: _Now, held: dict[str, Pieces],
                      started: list[tuple[Job, tuple[int, ...], Pieces]], head: Job,
                      reserve_bb: bool
                      ) -> tuple[float, tuple[int, ...], BBNodeSpace | None]:
    """The head's shadow time, the compute nodes reserved for it there and (with
    ``reserve_bb``) the BB nodes as they will be then, before the head's pieces: the first
    instant (now, or an expected end) at which the filter finds its nodes among those free then
    and, with ``reserve_bb``, its pieces can be placed by proximity on them."""
    t_now = state.time
    ends: list[tuple[float, tuple[int, ...], Pieces]] = []
    for r in state.running:
        nodes = r.allocation if r.allocation is not None else ()
        ends.append((r.start + r.job.walltime, tuple(nodes), held.get(r.job.id, ())))
    ends.extend((t_now + j.walltime, nodes, pieces) for j, nodes, pieces in started)
    ends.sort(key=lambda e: e[0])
    free = list(now.nodes)
    space = now.space.copy()
    k = 0
    t = t_now
    while True:
        while k < len(ends) and ends[k][0] <= t:
            _, nodes, pieces = ends[k]
            for x in nodes:
                insort(free, x)
            space.give(pieces)
            k += 1
        if len(free) >= head.nodes:
            reserved = contiguous_nodes(free, head.nodes)
            if not reserve_bb or head.bb <= 0:
                return t, reserved, (space if reserve_bb else None)
            if space.fits(head, reserved):
                return t, reserved, space
        if k == len(ends):  # cannot happen for jobs that fit the platform
            return math.inf, (), None
        t = max(ends[k][0], t_now)

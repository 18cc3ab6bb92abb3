"""The slots freed in a conservative-backfilling profile, and where a reservation can use them.

Conservative backfilling (Kopanski & Rzadca, Section 3.2; Mu'alem & Feitelson's compression)
moves a reservation earlier only when something came free before it: a job that ended before its
walltime, a start that did not happen, or another reservation that moved up. At a reservation's
last check no earlier start fitted, so a start that fits now must cover a point where the
profile has gained room since, and there the free capacity must cover the whole demand. The
profile only gains room by such frees, and each is logged here with the free capacity of its
segments as it left them (later reservations only take room away, and a later free is logged
with its own), so their maxima bound the free capacity of every point of the slot from then on.

:func:`reach` turns that into where the scan for one reservation's earlier start can stop:
only the slots it has not seen, only their part before its current start (a start before it
covers no point after it but its own slot), and only slots whose maxima admit its demand in
every dimension; the latest end of those. Most reservations get nothing to scan and cost no
profile scan at all. This is the part of Fluxion's planner idea (flux-sched
``resource/planner``: earliest-fit queries pruned by the maximum free capacity of a subtree of
spans) that keeps schedules identical; the bound is per freed slot instead of per tree node,
since what changed is what can help. The log is kept sorted by the slots' ends
(:func:`log_slot`), so the walk stops at the first slot that answers.
"""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from collections.abc import Sequence
from operator import itemgetter
from typing import NamedTuple

from bbopt.planner import Profile


class Freed(NamedTuple):
    """A slot ``[start, end)`` that came free, with the segment starts inside it (``times[0]``
    is ``start``) and the free nodes and BB on each segment as the slot was given back.
    ``last``, ``top_nodes`` and ``top_bb`` are the last segment start and the maxima over the
    whole slot (:func:`freed`): the first tests :func:`reach` makes on a slot for every
    reservation (a quarter of its time when they were read from the lists)."""

    start: float
    end: float
    last: float
    top_nodes: float
    top_bb: float
    times: list[float]
    nodes: Sequence[float]
    bb: Sequence[float]


_tuple_new = tuple.__new__


def freed(start: float, end: float, times: list[float], nodes: Sequence[float],
          bb: Sequence[float]) -> Freed:
    """The :class:`Freed` entry of a slot, given its segment starts and free capacities.
    (Built by ``tuple.__new__``: the named tuple's own ``__new__`` is a Python function, one
    call more per move.)"""
    return _tuple_new(Freed, (start, end, times[-1], max(nodes), max(bb), times, nodes, bb))


def give_back(profile: Profile, start: float, end: float, amount: tuple[float, float],
              horizon: float = math.inf) -> Freed:
    """``profile.release(start, end, amount)`` on a profile of nodes and BB (``start`` at or
    after its origin, ``end`` finite), and the log entry of the slot. Only its part before
    ``horizon`` (the latest start a reservation may move from) is logged with its free
    capacity: no reservation can use the rest. (The free capacities are kept as they are, and
    maxima taken by ``max`` over them when needed: the running maxima built here with
    ``accumulate(..., max)`` took 2-4 us per slot, a fifth of a move on KTH x 2.)"""
    i = profile._split(start)
    j = profile._split(end)
    times = profile.times
    a0, a1 = amount
    rows = profile.free[i:j]
    for row in rows:  # the same additions as Profile.release
        row[0] += a0
        row[1] += a1
    s = bisect_left(times, end if end < horizon else horizon, i, j) - i
    if s <= 0:  # nothing before the horizon: no room for anyone
        profile._merge(i, j)  # (as Profile.release leaves it)
        return freed(start, end, [start], (-math.inf,), (-math.inf,))
    del rows[s:]
    nodes, bb = zip(*rows, strict=True)  # (the rows' two columns, copied)
    slot = freed(start, end, times[i:i + s], nodes, bb)
    profile._merge(i, j)
    return slot


def move(profile: Profile, old: float, start: float, duration: float,
         demand: tuple[float, float], horizon: float = math.inf) -> Freed:
    """Move a reservation of ``demand`` for ``duration`` from ``old`` to ``start`` (earlier):
    the profile loses room on ``[start, old)`` and gains it on ``[max(old, start + duration),
    old + duration)``, the part of the old slot the new one does not cover, which is the slot
    logged. Where the two slots overlap nothing changes, so nothing is touched there (giving
    back and taking again touched every segment of both). ``start`` must be one the profile
    has room for (a scan found it): the room is taken by :func:`_take`."""
    cut = start + duration
    if cut <= old:  # disjoint slots
        slot = give_back(profile, old, old + duration, demand, horizon)
        _take(profile, start, cut, demand)
        return slot
    _take(profile, start, old, demand)
    return give_back(profile, cut, old + duration, demand, horizon)


def _take(profile: Profile, start: float, end: float, demand: tuple[float, float]) -> None:
    """``profile.reserve(start, end, demand)`` on a profile of nodes and BB where the demand
    is known to fit (the earliest start a scan found): the same subtractions, breakpoints and
    record of a row left below minus half the fit tolerance, without the overbooking check
    and the general method's dispatch. A move takes 2 to 3 segments on KTH x 2, so the calls
    around the work were most of its cost; with :func:`freed`'s construction, a move costs
    about 15 % less (tests/policies/test_freed_slots.py checks it against ``Profile.reserve``)."""
    if end <= start:
        return
    i = profile._split(start)
    j = profile._split(end)
    d0, d1 = demand
    t0, t1 = profile._tol
    h0, h1 = -t0 / 2, -t1 / 2
    for row in profile.free[i:j]:
        row[0] -= d0
        row[1] -= d1
        if row[0] < h0 or row[1] < h1:
            profile._low = True
    profile._merge(i, j)


def log_slot(log: list[Freed], slot: Freed) -> None:
    """Add ``slot`` to ``log``, a list kept sorted by the slots' ends (for :func:`reach`); a
    slot with no room logged (nothing before the horizon) is left out: nobody can use it."""
    if slot.top_nodes != -math.inf:
        insort(log, slot, key=_end)


_end = itemgetter(1)


def reach(log: list[Freed], floor: float, old: float, need_nodes: float,
          need_bb: float) -> float:
    """Where the scan for an earlier start of a reservation at ``old`` (needing ``need_nodes``
    and ``need_bb`` less the fit tolerance, and known to start no earlier than ``floor``) can
    stop, given the slots freed since its last check (``log``, sorted by end: see
    :func:`log_slot`): the latest end, cut at ``old``, of a slot starting before ``old`` whose
    free capacity before ``old`` admits the demand somewhere in each dimension. A start that
    fits must cover a point of such a slot, so it lies before that end; nothing is worth
    scanning unless the answer is after ``floor``.

    Only the end of the window is asked for: from KTH x 1 to x 2 the windows grew 4.3x and the
    slots each walked 1.9x (to 7.5), while the window's start was the floor in 95 % of them
    (the early end that opens a compression frees room from now on). The scan starts at the
    floor instead (its answer is the same: no start before the window fits), and the walk over
    the slots, latest end first, stops at the first that admits the demand or at the first
    that ends by the floor."""
    for a, b, last, top0, top1, ts, mn, mb in reversed(log):  # (unpacked: by name is a call)
        if b <= floor:  # this slot and all before it end by the floor
            return floor
        if a >= old or top0 < need_nodes or top1 < need_bb:
            continue
        if last >= old:  # only its part before old counts (a few in a hundred slots)
            j = bisect_left(ts, old)
            if max(mn[:j]) < need_nodes or max(mb[:j]) < need_bb:
                continue
        return b if b < old else old
    return floor

"""Availability profiles: free capacity over time for several resources at once.

A profile is the step function ``free(t)`` of every resource dimension (nodes, burst-buffer
bytes, and whatever a later layer adds) from a given time on. It is what EASY reservations,
conservative backfilling and execution plans are made of (Kopanski & Rzadca, Section 3.2 and
3.3: a job is placed at the earliest time at which its processors *and* its burst buffer are free
for its whole walltime).

Boundaries are exact: a job that ends at ``t`` frees its resources for a job starting at ``t``
(segments are half-open, ``[t_i, t_{i+1})``).

Representation: sorted breakpoints ``times`` (``times[0]`` is the profile's origin) and rows
``free[i]`` holding the free capacity of each dimension on ``[times[i], times[i+1])``; the last
row extends to infinity. Plain Python lists with bisection: for the few hundred breakpoints a
scheduling point has, they beat numpy, whose per-call overhead dominates at that size (measured
in ``benchmarks/speed/simulate_kth.py``: conservative backfilling ran 4x slower on numpy arrays).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Sequence
from operator import itemgetter
from typing import NamedTuple

from bbopt.core import slack
from bbopt.errors import OverbookedError
from bbopt.planner.scans import earlier_fit2, earliest_fit2

_time = itemgetter(0)


class Release(NamedTuple):
    """Resources that come free at ``time``: what a running (or just started) job holds until
    its expected end -- nodes, BB bytes and, on an I/O tree, its node set and per-node
    bandwidth. (A named tuple: one is built per running job at every EASY decision, and a
    frozen dataclass costs three times as much to build.)"""

    time: float
    nodes: int
    bb: float
    allocation: Sequence[int] | None = None
    bandwidth: float = 0.0


def first_fit_time(now: float, releases: Iterable[Release], fits: Callable[[], bool],
                   give: Callable[[Release], None]) -> float:
    """The shadow-time scan of EASY: the earliest time, from ``now`` on, at which ``fits()``
    holds while the ``releases`` (sorted by time) are handed to ``give`` in time order, all
    those of one instant together; ``inf`` if it never does.

    The caller keeps the free state that ``give`` grows and ``fits`` reads, so the same scan
    serves pooled nodes and BB (:mod:`bbopt.policies.queue`) and placements on an I/O tree
    (:mod:`bbopt.policies.io`). Resources only come free over time here (no other reservation
    exists), so the first time the job fits is its start and its reservation lasts as long as
    it needs. ``releases`` may be a lazy iterator: the scan takes only what it needs, so a
    shadow time that comes early costs little on a machine with many running jobs.

    >>> free = [1]
    >>> first_fit_time(0.0, [Release(5.0, 1, 0.0), Release(9.0, 2, 0.0)],
    ...                lambda: free[0] >= 3, lambda r: free.__setitem__(0, free[0] + r.nodes))
    9.0
    """
    if fits():
        return now
    it = iter(releases)
    r = next(it, None)
    while r is not None:
        t = r.time
        while r is not None and r.time == t:
            give(r)
            r = next(it, None)
        if fits():
            return max(t, now)
    return math.inf


class Profile:
    """Free capacity over time, from ``origin`` on.

    >>> p = Profile(0.0, capacity=(4, 10.0), releases=[(10.0, (1, 4.0))], used=(1, 4.0))
    >>> p.earliest_fit(0.0, 1.0, (4, 0.0))
    10.0
    """

    __slots__ = ("times", "free", "_tol", "_low")

    def __init__(
        self,
        origin: float,
        capacity: Sequence[float],
        releases: Iterable[tuple[float, Sequence[float]]] = (),
        used: Sequence[float] | None = None,
        slacks: Sequence[float] | None = None,
    ) -> None:
        """Build the profile of a machine with ``capacity`` at time ``origin``.

        ``releases`` are ``(time, amount)`` pairs: resources held now that come free at ``time``
        (running jobs and their expected ends). ``used`` is what is held now; by default the sum
        of the releases. ``slacks``: how far above the free amount each dimension admits a
        demand (by default :func:`bbopt.core.slack` of its capacity; a planner on named BB nodes
        gives theirs, :func:`bbopt.planner.bb.profile_slacks`).
        """
        origin = float(origin)
        cap = [float(c) for c in capacity]
        dims = range(len(cap))
        rel = [(max(float(t), origin), a) for t, a in releases]
        rel.sort(key=_time)  # (stable: releases of one time stay in the order given)
        if len(cap) == 2:  # nodes and BB: the same additions, unrolled (built per decision)
            times, rows = self._build2(origin, cap, rel, used)
        else:
            if used is None:
                held = [0.0] * len(cap)
                for _, amount in rel:
                    for d in dims:
                        held[d] += amount[d]
            else:
                held = [float(u) for u in used]
            current = [cap[d] - held[d] for d in dims]
            times = [origin]
            rows = [current]
            for t, amount in rel:
                current = [current[d] + amount[d] for d in dims]
                if t == times[-1]:
                    rows[-1] = current
                else:
                    times.append(t)
                    rows.append(current)
        self.times = times
        self.free = rows
        # (the one fit rule of bbopt.core.fits)
        self._tol = [slack(c) for c in cap] if slacks is None else [float(s) for s in slacks]
        # False while no row has ever held less than minus half the fit tolerance of its
        # dimension (an overbooked start, or a reservation that fitted by most of the
        # tolerance): then a job's own hold never stops it from fitting (see earlier_fit).
        # Tracked by the 2-D reserve; any other reserve sets it.
        if len(cap) == 2:
            h0, h1 = -self._tol[0] / 2, -self._tol[1] / 2
            self._low = any(row[0] < h0 or row[1] < h1 for row in rows)
        else:
            self._low = True

    @staticmethod
    def _build2(origin: float, cap: list[float], rel: list,
                used: Sequence[float] | None) -> tuple[list[float], list[list[float]]]:
        """The breakpoints and rows of a two-dimension profile (``__init__``'s loops)."""
        if used is None:
            h0 = h1 = 0.0
            for _, a in rel:
                h0 += a[0]
                h1 += a[1]
        else:
            h0, h1 = float(used[0]), float(used[1])
        c0, c1 = cap[0] - h0, cap[1] - h1
        times = [origin]
        rows = [[c0, c1]]
        last = origin
        for t, a in rel:
            c0 += a[0]
            c1 += a[1]
            if t == last:
                rows[-1] = [c0, c1]
            else:
                times.append(t)
                rows.append([c0, c1])
                last = t
        return times, rows

    @property
    def origin(self) -> float:
        return self.times[0]

    def copy(self) -> Profile:
        new = Profile.__new__(Profile)
        new.times = self.times.copy()
        new.free = [row.copy() for row in self.free]
        new._tol = self._tol
        new._low = self._low
        return new

    def free_at(self, t: float) -> list[float]:
        """Free capacity at time ``t`` (``t`` >= origin)."""
        return self.free[max(bisect_right(self.times, t) - 1, 0)].copy()

    def _ok(self, row: list[float], demand: Sequence[float]) -> bool:
        # An explicit loop: faster than all() over a generator on this hot path.
        for f, tol, q in zip(row, self._tol, demand, strict=False):  # noqa: SIM110
            if f + tol < q:
                return False
        return True

    def fits(self, start: float, duration: float, demand: Sequence[float]) -> bool:
        """Whether ``demand`` is free on the whole of ``[start, start + duration)``."""
        times, free = self.times, self.free
        i = max(bisect_right(times, start) - 1, 0)
        end = start + duration
        k = len(times)
        while True:
            if not self._ok(free[i], demand):
                return False
            i += 1
            if i == k or times[i] >= end:
                return True

    def earliest_fit(self, now: float, duration: float, demand: Sequence[float]) -> float:
        """The earliest ``t >= now`` with ``demand`` free on ``[t, t + duration)``.

        Returns ``math.inf`` when no such time exists (the demand exceeds what ever comes free).
        Candidate times are ``now`` and the breakpoints after it.
        """
        times, free = self.times, self.free
        k = len(times)
        i = max(bisect_right(times, now) - 1, 0)
        if len(demand) == 2 and len(self._tol) == 2:
            return earliest_fit2(times, free, now, duration, demand[0] - self._tol[0],
                                 demand[1] - self._tol[1], i)
        ok = self._ok
        while i < k:
            if not ok(free[i], demand):
                i += 1
                continue
            start = times[i] if times[i] > now else now
            end = start + duration
            j = i + 1
            while j < k and times[j] < end:
                if not ok(free[j], demand):
                    break
                j += 1
            else:
                return start
            i = j + 1  # segment j is too full: the next candidate lies after it
        return math.inf

    def earlier_fit(self, now: float, duration: float, demand: Sequence[float],
                    held_from: float, lo: float | None = None,
                    hi: float | None = None) -> float:
        """Where a job that holds ``demand`` on ``[held_from, held_from + duration)`` could
        start instead: the earliest ``t`` in ``[now, held_from)`` with ``demand`` free on
        ``[t, t + duration)`` once its own hold is given back, else ``held_from``.

        The same answer as releasing the hold, calling :meth:`earliest_fit` and taking the
        minimum with ``held_from``, without changing the profile: the hold is added back only
        in the test of the segments it covers (on two dimensions, not even tested unless the
        profile was ever overbooked: see ``own_fits`` of
        :func:`bbopt.planner.scans.earlier_fit2`), and the scan stops at ``held_from``. A caller
        that knows no start before ``lo`` or from ``hi`` on fits narrows the scan to
        ``[lo, hi)``: the earliest start from ``lo`` on (``lo`` itself, or a breakpoint after
        it), whatever breakpoints lie before it.
        """
        times, free, tol = self.times, self.free, self._tol
        k = len(times)
        if lo is not None and lo > now:
            now = lo  # (no start before it: the scan's starts are now and breakpoints after)
        i = max(bisect_right(times, now) - 1, 0)
        own_end = held_from + duration
        limit = held_from if hi is None or hi > held_from else hi
        if now >= limit:  # no start left in [now, limit)
            return held_from
        if len(tol) == 2 and len(demand) == 2:
            return earlier_fit2(times, free, tol, now, duration, demand, held_from, limit, i,
                                not self._low)
        ok = self._ok
        dims = range(len(tol))
        while i < k and times[i] < limit:
            if not ok(free[i], demand):
                i += 1
                continue
            start = times[i] if times[i] > now else now
            end = start + duration
            j = i + 1
            while j < k and times[j] < end:
                row = free[j]
                if held_from <= times[j] < own_end:
                    row = [row[d] + demand[d] for d in dims]
                if not ok(row, demand):
                    break
                j += 1
            else:
                return start
            i = j + 1
        return held_from

    def advance(self, t: float) -> None:
        """Move the origin to ``t`` (>= the origin): what lies before ``t`` is forgotten, the
        free amounts from ``t`` on are unchanged."""
        times = self.times
        if t <= times[0]:
            return
        i = bisect_right(times, t) - 1
        if i > 0:
            del times[:i]
            del self.free[:i]
        times[0] = t

    def _split(self, t: float) -> int:
        """Make ``t`` a breakpoint; return its index."""
        times = self.times
        i = bisect_left(times, t)
        if i < len(times) and times[i] == t:
            return i
        if i == 0:
            raise ValueError(f"time {t} is before the profile's origin {times[0]}")
        times.insert(i, t)
        self.free.insert(i, self.free[i - 1].copy())
        return i

    def _span(self, start: float, end: float) -> tuple[int, int]:
        """Indices ``[i, j)`` of the segments covering ``[start, end)``, splitting as needed."""
        i = self._split(max(start, self.times[0]))
        j = self._split(end) if math.isfinite(end) else len(self.times)
        return i, j

    def _merge(self, i: int, j: int) -> None:
        """After the rows ``[i, j)`` changed (by the same amount): drop the breakpoints at
        their two edges where the free capacity no longer steps (equal rows on both sides).

        Left in, such breakpoints piled up as reservations moved and jobs ended early (on KTH
        x 2, nine in ten breakpoints of conservative-bb's profile), and every scan, reserve and
        release walked them. Dropping them changes no answer: the free function is the same,
        an earliest start never lies on a breakpoint where nothing steps (a start there could
        move earlier over equal rows), :meth:`_split` makes a breakpoint again where one is
        needed, with the same row, so every point of the profile still goes through the same
        additions and subtractions, and a job's own hold tested over a merged segment fails
        only where the stretch before the hold, with the same row, fails. Only the
        two-dimensional operations merge (the others keep every breakpoint)."""
        free = self.free
        if j < len(free) and free[j] == free[j - 1]:
            del free[j]
            del self.times[j]
        if i > 0 and free[i] == free[i - 1]:
            del free[i]
            del self.times[i]

    def reserve(self, start: float, end: float, demand: Sequence[float]) -> None:
        """Take ``demand`` on ``[start, end)``; raise :class:`OverbookedError` if it is not free."""
        if end <= start:
            return
        i, j = self._span(start, end)
        free, tol = self.free, self._tol
        if len(tol) == 2 and len(demand) == 2:  # nodes and BB: the hot path, unrolled
            d0, d1 = demand
            t0, t1 = tol
            h0, h1 = -t0 / 2, -t1 / 2
            rows = free[i:j]
            for row in rows:  # (row - d is the value it will hold)
                if row[0] - d0 < h0 or row[1] - d1 < h1:
                    for r in rows:
                        if r[0] + t0 < d0 or r[1] + t1 < d1:
                            raise OverbookedError(
                                f"reserving {tuple(demand)} on [{start}, {end}) overbooks")
                    self._low = True
                    break
            for row in rows:
                row[0] -= d0
                row[1] -= d1
            self._merge(i, j)
            return
        dims = range(len(tol))
        for r in range(i, j):
            row = free[r]
            for d in dims:
                if row[d] + tol[d] < demand[d]:
                    raise OverbookedError(
                        f"reserving {tuple(demand)} on [{start}, {end}) overbooks")
        for r in range(i, j):
            row = free[r]
            for d in dims:
                row[d] -= demand[d]
        self._low = True  # (not tracked off the 2-D path, which alone reads it)

    def release(self, start: float, end: float, amount: Sequence[float]) -> None:
        """Give back ``amount`` on ``[start, end)`` (the inverse of :meth:`reserve`)."""
        if end <= start:
            return
        i, j = self._span(start, end)
        if len(self._tol) == 2 and len(amount) == 2:
            a0, a1 = amount
            for row in self.free[i:j]:
                row[0] += a0
                row[1] += a1
            self._merge(i, j)
            return
        dims = range(len(self._tol))
        for r in range(i, j):
            row = self.free[r]
            for d in dims:
                row[d] += amount[d]

    def __repr__(self) -> str:
        rows = ", ".join(f"{t:g}:{tuple(f)}" for t, f in zip(self.times, self.free, strict=True))
        return f"Profile({rows})"


def profile_of(state, extra_running: Iterable[tuple[float, Sequence[float]]] = ()) -> Profile:
    """The profile of a :class:`~bbopt.core.ClusterState`: running jobs free their resources at
    their expected ends (start + walltime). ``extra_running`` adds ``(end, demand)`` pairs, e.g.
    jobs a policy has just decided to start."""
    releases = [(r.start + r.job.walltime, (r.job.nodes, r.job.bb)) for r in state.running]
    releases.extend(extra_running)
    return Profile(state.time, state.platform.capacity, releases)

"""Availability profiles: free capacity over time for several resources at once.

A profile is the step function ``free(t)`` of every resource dimension (nodes, burst-buffer
bytes, and whatever a later layer adds) from a given time on. It is what EASY reservations,
conservative backfilling and execution plans are made of (Kopanski & Rzadca, Section 3.2 and
3.3: a job is placed at the earliest time at which its processors *and* its burst buffer are free
for its whole walltime).

Boundaries are exact: a job that ends at ``t`` frees its resources for a job starting at ``t``
(segments are half-open, ``[t_i, t_{i+1})``).

Representation: sorted breakpoints ``times`` (numpy, ``times[0]`` is the profile's origin) and
a matrix ``free`` whose row ``i`` holds the free capacity on ``[times[i], times[i+1])``; the last
row extends to infinity. Queries are vectorised over segments.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

#: Relative slack in capacity comparisons, against rounding in byte sums.
_REL_TOL = 1e-12


class OverbookedError(RuntimeError):
    """A reservation that would push some resource below zero."""


class Profile:
    """Free capacity over time, from ``origin`` on.

    >>> p = Profile(0.0, capacity=(4, 10.0), releases=[(10.0, (1, 4.0))], used=(1, 4.0))
    >>> p.earliest_fit(0.0, 1.0, (4, 0.0))
    10.0
    """

    __slots__ = ("times", "free", "_tol")

    def __init__(
        self,
        origin: float,
        capacity: Sequence[float],
        releases: Iterable[tuple[float, Sequence[float]]] = (),
        used: Sequence[float] | None = None,
    ) -> None:
        """Build the profile of a machine with ``capacity`` at time ``origin``.

        ``releases`` are ``(time, amount)`` pairs: resources held now that come free at ``time``
        (running jobs and their expected ends). ``used`` is what is held now; by default the sum
        of the releases.
        """
        cap = np.asarray(capacity, dtype=float)
        rel = sorted(((max(float(t), origin), tuple(a)) for t, a in releases), key=lambda x: x[0])
        if used is None:
            held = np.zeros_like(cap)
            for _, amount in rel:
                held += amount
        else:
            held = np.asarray(used, dtype=float)
        times = [float(origin)]
        rows = [cap - held]
        current = rows[0].copy()
        for t, amount in rel:
            current = current + amount
            if t == times[-1]:
                rows[-1] = current
            else:
                times.append(t)
                rows.append(current)
        self.times = np.asarray(times, dtype=float)
        self.free = np.vstack(rows)
        self._tol = cap * _REL_TOL + 1e-9

    @property
    def origin(self) -> float:
        return float(self.times[0])

    def copy(self) -> Profile:
        new = Profile.__new__(Profile)
        new.times = self.times.copy()
        new.free = self.free.copy()
        new._tol = self._tol
        return new

    def free_at(self, t: float) -> np.ndarray:
        """Free capacity at time ``t`` (``t`` >= origin)."""
        i = max(int(np.searchsorted(self.times, t, side="right")) - 1, 0)
        return self.free[i].copy()

    def _ok(self, demand: Sequence[float]) -> np.ndarray:
        return np.all(self.free + self._tol >= np.asarray(demand, dtype=float), axis=1)

    def fits(self, start: float, duration: float, demand: Sequence[float]) -> bool:
        """Whether ``demand`` is free on the whole of ``[start, start + duration)``."""
        times = self.times
        i = max(int(np.searchsorted(times, start, side="right")) - 1, 0)
        j = int(np.searchsorted(times, start + duration, side="left"))
        window = self.free[i:max(j, i + 1)]
        return bool(np.all(window + self._tol >= np.asarray(demand, dtype=float)))

    def earliest_fit(self, now: float, duration: float, demand: Sequence[float]) -> float:
        """The earliest ``t >= now`` with ``demand`` free on ``[t, t + duration)``.

        Returns ``math.inf`` when no such time exists (the demand exceeds what ever comes free).
        Candidate times are ``now`` and the breakpoints after it.
        """
        times = self.times
        ok = self._ok(demand)
        k = len(times)
        i0 = max(int(np.searchsorted(times, now, side="right")) - 1, 0)
        bad = np.flatnonzero(~ok)
        # next_bad[i]: first not-ok segment at or after i (k when none).
        idx = np.searchsorted(bad, np.arange(i0, k))
        bad_ext = np.append(bad, k)
        next_bad = bad_ext[idx]
        times_ext = np.append(times, math.inf)
        starts = np.maximum(times[i0:], now)
        room = times_ext[next_bad] - starts
        good = ok[i0:] & (room >= duration)
        hit = np.flatnonzero(good)
        if hit.size == 0:
            return math.inf
        return float(starts[hit[0]])

    def _split(self, t: float) -> int:
        """Make ``t`` a breakpoint; return its index."""
        times = self.times
        i = int(np.searchsorted(times, t, side="left"))
        if i < len(times) and times[i] == t:
            return i
        if i == 0:
            raise ValueError(f"time {t} is before the profile's origin {times[0]}")
        self.times = np.insert(times, i, t)
        self.free = np.insert(self.free, i, self.free[i - 1], axis=0)
        return i

    def reserve(self, start: float, end: float, demand: Sequence[float]) -> None:
        """Take ``demand`` on ``[start, end)``; raise :class:`OverbookedError` if it is not free."""
        if end <= start:
            return
        start = max(start, float(self.times[0]))
        i = self._split(start)
        j = self._split(end) if math.isfinite(end) else len(self.times)
        d = np.asarray(demand, dtype=float)
        block = self.free[i:j] - d
        if np.any(block + self._tol < 0):
            raise OverbookedError(f"reserving {tuple(demand)} on [{start}, {end}) overbooks")
        self.free[i:j] = block

    def release(self, start: float, end: float, amount: Sequence[float]) -> None:
        """Give back ``amount`` on ``[start, end)`` (the inverse of :meth:`reserve`)."""
        if end <= start:
            return
        start = max(start, float(self.times[0]))
        i = self._split(start)
        j = self._split(end) if math.isfinite(end) else len(self.times)
        self.free[i:j] += np.asarray(amount, dtype=float)

    def __repr__(self) -> str:
        rows = ", ".join(f"{t:g}:{tuple(float(x) for x in f)}"
                         for t, f in zip(self.times, self.free, strict=True))
        return f"Profile({rows})"


def profile_of(state, extra_running: Iterable[tuple[float, Sequence[float]]] = ()) -> Profile:
    """The profile of a :class:`~bbopt.core.ClusterState`: running jobs free their resources at
    their expected ends (start + walltime). ``extra_running`` adds ``(end, demand)`` pairs, e.g.
    jobs a policy has just decided to start."""
    releases = [(r.start + r.job.walltime, (r.job.nodes, r.job.bb)) for r in state.running]
    releases.extend(extra_running)
    return Profile(state.time, state.platform.capacity, releases)

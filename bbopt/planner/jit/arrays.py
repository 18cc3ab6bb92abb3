"""The availability profile conservative-bb keeps between decisions once its compression runs
compiled (Kopanski & Rzadca, Section 3.2: free processors and burst buffer over time): the same
methods the policy calls on a :class:`bbopt.planner.Profile` (``advance``, ``earliest_fit``,
``fits``, ``reserve``), with the same answers, and :meth:`ArrayProfile.compress`, all run by the
kernels of :mod:`bbopt.planner.jit.compression` on arrays. Importing this module imports numba
(the extra ``fast``); :func:`bbopt.jit.kernels` does it when the policy switches.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from bbopt.core import Job
from bbopt.planner import OverbookedError, Profile
from bbopt.planner.jit.compression import advance, compress, earliest_fit, fits, reserve


class ArrayProfile:
    """A two-dimensional :class:`~bbopt.planner.Profile` (free nodes and BB over time) kept in
    arrays for the kernels of :mod:`bbopt.planner.jit.compression`: the profile conservative-bb
    keeps between decisions once its compression runs compiled. The same methods as the list
    profile that the policy calls (``advance``, ``earliest_fit``, ``fits``, ``reserve``), with
    the same answers, and :meth:`compress`. ``T[:n]`` holds the breakpoints and ``F[:n]`` the
    free nodes and BB."""

    __slots__ = ("T", "F", "n", "_low", "_tol")

    def __init__(self, profile: Profile) -> None:
        n = len(profile.times)
        self.T = np.empty(2 * n + 64)
        self.F = np.empty((2 * n + 64, 2))
        self.T[:n] = profile.times
        self.F[:n] = profile.free
        self.n = n
        self._low = profile._low
        self._tol = tuple(profile._tol)

    @property
    def origin(self) -> float:
        return float(self.T[0])

    @property
    def times(self) -> list[float]:
        return self.T[:self.n].tolist()

    @property
    def free(self) -> list[list[float]]:
        return self.F[:self.n].tolist()

    def _room(self, more: int) -> None:
        """Room for ``more`` breakpoints."""
        if self.n + more > self.T.shape[0]:
            size = 2 * (self.n + more)
            T, F = np.empty(size), np.empty((size, 2))
            T[:self.n] = self.T[:self.n]
            F[:self.n] = self.F[:self.n]
            self.T, self.F = T, F

    def advance(self, t: float) -> None:
        self.n = advance(self.T, self.F, self.n, t)

    def earliest_fit(self, now: float, duration: float, demand: Sequence[float]) -> float:
        return earliest_fit(self.T, self.F, self.n, now, duration, demand[0], demand[1],
                            *self._tol)

    def fits(self, start: float, duration: float, demand: Sequence[float]) -> bool:
        return fits(self.T, self.F, self.n, start, duration, demand[0], demand[1], *self._tol)

    def reserve(self, start: float, end: float, demand: Sequence[float]) -> None:
        self._room(2)
        self.n, status = reserve(self.T, self.F, self.n, start, end, demand[0], demand[1],
                                 *self._tol)
        if status < 0:
            raise OverbookedError(f"reserving {tuple(demand)} on [{start}, {end}) overbooks")
        if status:
            self._low = True

    def compress(self, now: float, horizon: float, frees: list[tuple[float, float, int, float]],
                 kept: list[tuple[float, int, Job]], use_log: bool) -> list[tuple[int, float]]:
        """:func:`compress` on this profile: give back ``frees`` (start, end, nodes, BB) and
        compress the ``kept`` reservations ((start, queue position, job), by start); the
        reservations that moved, as (index in ``kept``, new start)."""
        m = len(kept)
        self._room(2 * len(frees) + 4 * m + 2)
        table = np.fromiter(chain([(old, job.nodes, job.bb, job.walltime)
                                   for old, _, job in kept]), np.float64, 4 * m)
        starts = np.empty(m)
        moved = np.empty(m, dtype=np.int64)
        frees_table = np.array(frees, dtype=np.float64).reshape(-1, 4)
        self.n, low, count = compress(self.T, self.F, self.n, self._low, *self._tol, now,
                                      horizon, frees_table, table.reshape(m, 4), use_log,
                                      starts, moved)
        self._low = bool(low)
        if not count:
            return []
        out = starts.tolist()
        return [(r, out[r]) for r in moved[:count].tolist()]


chain = itertools.chain.from_iterable

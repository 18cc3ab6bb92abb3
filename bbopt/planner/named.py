"""Plans on named burst-buffer nodes as arrays, for the compiled placement of
:mod:`bbopt.planner.jit.named`.

Kopanski & Rzadca, Euro-Par 2021, Sections 3.3 and 4.1: the plan model on the authors' 12 BB
nodes places each job's per-node pieces while it builds a plan (first fit on the BB nodes'
least free space over the job's window; a start now as the engine places it). The model's
pure-Python loops (:func:`bbopt.models.plan_named.place`, ``PlanModel._run_named``,
``SwapWalk._walk_named``) are the reference; :class:`NamedArrays` holds one model's profile,
state now and per-job table as numpy arrays and scores permutations with the compiled twins
of those loops (the same floats, so the same plans). :func:`kernels` loads them (``None``
without numba or with ``BBOPT_NO_JIT=1``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from types import ModuleType

import numpy as np

from bbopt.core import Proximity
from bbopt.jit import KERNELS
from bbopt.jit import kernels as compiled

KERNELS.declare({"named-bb": "bbopt.planner.jit:named",
                 "named-conservative": "bbopt.planner.jit:named_conservative"})


def kernels() -> ModuleType | None:
    """The compiled named-BB kernels (:mod:`bbopt.planner.jit.named`), or ``None``
    (:func:`bbopt.jit.kernels`)."""
    return compiled("named-bb")


def conservative_kernels() -> ModuleType | None:
    """conservative-bb's compiled decision on named BB nodes
    (:mod:`bbopt.planner.jit.named_conservative`), or ``None`` (:func:`bbopt.jit.kernels`)."""
    return compiled("named-conservative")


class NamedArrays:
    """One plan model on named BB nodes as the compiled loops read it.

    ``jobs``: per job (in the model's order) nodes, BB bytes, walltime, earliest start on the
    pool dimensions, submit time, least score term. The profile: breakpoints ``T`` (with the
    sentinel at infinity), free nodes ``FN``, free pool BB ``FB``, the BB nodes' free space
    per segment ``FK`` (one sequence per segment), their free space now ``SN`` and, on a
    proximity platform, the compute node ids free now ``free_ids`` with the platform's
    ``proximity`` rows. ``ktol``: each BB node's fit slack, ``ftol``: a piece's rounding
    tolerance, ``tol``: the pool's fit slack."""

    __slots__ = ("kernels", "k", "alpha", "jobs", "base", "base_now", "prox", "consts",
                 "width", "_orders", "_vals", "_sigs", "_pool", "_pool_now", "_side",
                 "_dirty", "_scratch")

    def __init__(self, jobs: Sequence[Sequence[float]], T: Sequence[float],
                 FN: Sequence[float], FB: Sequence[float], FK: Sequence[Sequence[float]],
                 SN: Sequence[float], free_ids: Sequence[int] | None,
                 proximity: Proximity | None, ktol: Sequence[float], ftol: float, tol: float,
                 alpha: int) -> None:
        #: The compiled module (kept: a model that chose the compiled loops keeps them).
        self.kernels = kernels()
        self.k = k = len(SN)
        self.alpha = int(alpha)
        self.jobs = np.array(jobs, dtype=np.float64).reshape(6, -1)
        count = self.jobs.shape[1]
        length = len(T)
        self.base = np.zeros((3 + k, length + count))
        self.base[0, :length] = T
        self.base[1, :length] = FN
        self.base[2, :length] = FB
        self.base[3:, :length] = np.array(FK, dtype=np.float64).reshape(length, k).T
        nn = len(proximity) if proximity is not None else 0
        self.base_now = np.zeros(k + nn)
        self.base_now[:k] = SN
        if proximity is not None:
            self.base_now[k + np.asarray(list(free_ids or ()), dtype=np.int64)] = 1.0
            wide = max(map(len, proximity))
            self.prox = np.full((nn, wide), -1, dtype=np.int64)
            for x, row in enumerate(proximity):
                self.prox[x, :len(row)] = row
        else:
            self.prox = np.zeros((0, 0), dtype=np.int64)
        self.consts = np.array([tol, ftol, *ktol], dtype=np.float64)
        #: Entries of a placement's signature (see :mod:`~bbopt.planner.jit.named`).
        self.width = 1 + k + (nn + 63) // 64
        # A walk's buffers for fresh scores (no snapshot: the stride passes the last job).
        self._orders = np.zeros((2, count), dtype=np.int64)
        self._vals = np.zeros((2, 3, count + 1))
        self._vals[0, 0] = math.nan  # every job placed again
        self._sigs = np.zeros((2, count, self.width), dtype=np.int64)
        self._pool = np.empty((2, 2) + self.base.shape)
        self._pool[0, 0] = self.base
        self._pool_now = np.empty((2, 2) + self.base_now.shape)
        self._pool_now[0, 0] = self.base_now
        self._side = np.zeros((2, 2), dtype=np.int64)
        self._dirty = np.full(count + 4, -1, dtype=np.int64)  # (walk_named: copy everything)
        self._scratch = self.scratch()

    def scratch(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Work space of one placement: a signature, float and integer rows."""
        nn = max(self.base_now.shape[0] - self.k, 1)
        return (np.zeros(self.width, dtype=np.int64), np.empty((3, 2 + self.k)),
                np.empty((3, nn), dtype=np.int64))

    def score(self, order: Sequence[int], threshold: float = math.inf,
              starts: list[float] | None = None) -> float:
        """The score of the greedy plan of ``order`` (``inf`` when rejected early for
        ``threshold``), each job's start written to ``starts`` if given."""
        count = self._orders.shape[1]
        if count == 0:
            return 0.0
        self._orders[0] = order
        self._dirty[0] = -1  # a new order: the walk copies all of it
        score = self.kernels.walk_named(
            self.jobs, self._orders, self._vals, self._sigs, self._pool, self._pool_now,
            self._side, self._dirty, 0, 0, 0, True, self.alpha, count + 1, threshold, self.prox,
            self.consts, *self._scratch)
        if starts is not None:
            starts[:] = self._vals[1, 0, :count].tolist()
        return score

    def exhaustive(self, best: float, order: Sequence[int]) -> tuple[float, list[int], int]:
        """The exhaustive search over the orders of this model's jobs, compiled
        (:func:`~bbopt.planner.jit.named.exhaustive_named`): from the incumbent ``order`` of
        score ``best``, the best score, its order and the number of prefixes visited. For
        short queues (the annealing's ``exhaustive_up_to``, 5 jobs: at most 206 prefixes), run
        to the end."""
        count = self.jobs.shape[1]
        shape = self.base.shape
        length = int(np.argmax(self.base[0] == math.inf)) + 1  # up to the sentinel (the zeros
        # after it are not sorted: a binary search would run past it)
        out = np.array(order, dtype=np.int64)
        visits = np.zeros(1, dtype=np.int64)
        best = self.kernels.exhaustive_named(
            self.jobs, self.base, length, self.base_now.copy(), np.arange(count),
            0, 0.0, float(best), np.zeros(count, dtype=np.int64), out, self.alpha, self.prox,
            self.consts, *self._scratch, np.empty((count, count) + shape),
            np.empty((count, count) + self.base_now.shape), np.empty((count, 3, count)),
            np.empty((count, 2, count), dtype=np.int64), visits)
        return best, out.tolist(), int(visits[0])


class NamedWalk:
    """The annealing's incremental walk on named BB nodes with its loop compiled
    (:func:`bbopt.planner.jit.named.walk_named`): the methods and answers of
    :class:`bbopt.models.plan_walk.SwapWalk` on a model whose :class:`NamedArrays` are
    ``arrays``. State in two buffers, the current plan and the last move's; :meth:`accept`
    makes the last move's the current one."""

    __slots__ = ("arrays", "stride", "score", "_orders", "_vals", "_sigs", "_pool",
                 "_pool_now", "_side", "_dirty", "_scratch", "_state", "_fstate", "_cur",
                 "_pending")

    def __init__(self, arrays: NamedArrays, order: Sequence[int], stride: int) -> None:
        self.arrays = a = arrays
        n = a.jobs.shape[1]
        if sorted(order) != list(range(n)):
            raise ValueError("order must be a permutation of the model's jobs")
        self.stride = stride
        self._orders = np.empty((2, n), dtype=np.int64)
        self._orders[0] = order
        self._vals = np.zeros((2, 3, n + 1))
        self._vals[0, 0] = math.nan  # no planned start yet: the first walk places every job
        self._sigs = np.zeros((2, n, a.width), dtype=np.int64)
        snaps = n // stride + 2  # the last one's first slot: the walk's work space
        self._pool = np.empty((snaps, 2) + a.base.shape)
        self._pool[0, 0] = a.base
        self._pool_now = np.empty((snaps, 2) + a.base_now.shape)
        self._pool_now[0, 0] = a.base_now
        self._side = np.zeros((2, snaps), dtype=np.int64)
        self._dirty = np.full(n + 4, -1, dtype=np.int64)  # (walk_named: copy everything)
        self._scratch = a.scratch()
        self._state = np.zeros(7, dtype=np.int64)  # moves' counters and scores
        self._fstate = np.zeros(3)
        self._cur = 0
        self.score = self._move(0, 0, True, math.inf)
        self._cur = 1
        self._pending = None

    def _move(self, lo: int, hi: int, diverged: bool, threshold: float) -> float:
        a = self.arrays
        return a.kernels.walk_named(a.jobs, self._orders, self._vals, self._sigs, self._pool,
                                    self._pool_now, self._side, self._dirty, self._cur, lo,
                                    hi, diverged, a.alpha, self.stride, threshold, a.prox, a.consts,
                                    *self._scratch)

    @property
    def order(self) -> list[int]:
        """The current permutation."""
        return self._orders[self._cur].tolist()

    @property
    def start(self) -> list[float]:
        """The current plan's start of each job."""
        return self._vals[self._cur, 0, :-1].tolist()

    def try_swap(self, a: int, b: int, threshold: float = math.inf) -> float:
        """Score of the current order with positions ``a`` and ``b`` swapped (``inf`` when
        rejected early for ``threshold``); :meth:`accept` adopts it."""
        lo, hi = (a, b) if a < b else (b, a)
        score = self._move(lo, hi, False, threshold)
        self._pending = None if score == math.inf else score
        return score

    def moves(self, first: np.ndarray, second: np.ndarray, slack: np.ndarray, step: int,
              count: int, current: float, temperature: float, best: float,
              counts: list[int], best_order: np.ndarray) -> tuple[int, float, float]:
        """``count`` moves of the annealing from ``step`` in one compiled call
        (:func:`~bbopt.planner.jit.named.anneal_named`): positions ``first[s]``, ``second[s]``
        swapped, accepted at a score of at most ``current + temperature * slack[s]``.
        ``counts`` (accepted, improved, aborted, evaluations) is updated in place and
        ``best_order`` takes each improvement's order; returns ``(step, current, best)``."""
        a = self.arrays
        state, fstate = self._state, self._fstate  # (kept: a search calls this 30 times)
        state[0], state[1], state[2] = self._cur, step, count
        state[3:] = counts
        fstate[0], fstate[1], fstate[2] = current, temperature, best
        a.kernels.anneal_named(a.jobs, self._orders, self._vals, self._sigs, self._pool,
                               self._pool_now, self._side, self._dirty, a.alpha, self.stride,
                               a.prox, a.consts, *self._scratch, first, second, slack, state,
                               fstate, best_order)
        got = state.tolist()
        self._cur = got[0]
        self._pending = None
        counts[:] = got[3:]
        current, _, best = fstate.tolist()
        self.score = current
        return got[1], current, best

    def accept(self) -> None:
        """Make the order of the last :meth:`try_swap` (not rejected) the current one."""
        if self._pending is None:
            raise ValueError("nothing to accept: the last move was rejected or none was tried")
        self._cur = 1 - self._cur
        self.score = self._pending
        self._pending = None


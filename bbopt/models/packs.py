"""Pack building as a formal model: which of the waiting applications start together as the next
pack (Jeannot, Pallez & Vidal, IJHPCA 2023, "I/O-aware Pack-Scheduling").

A pack ``S`` of applications must fit the free nodes and obey the paper's **average
constraint**: the pack's total I/O volume over the pack's duration is at most the I/O node's
bandwidth ``b``. The pack lasts as long as its longest member (time alone, equation (1)), so in
seconds of I/O, with ``u_i = n_i v_i / b`` and ``T_i`` the time alone::

    sum_{i in S} q_i <= P_free          (node row)
    sum_{i in S} u_i <= max_{i in S} T_i (average-bandwidth row)

The ``max`` makes it a family of 0/1 knapsacks over a duration threshold: fixing the longest
member ``k`` gives ``T_i <= T_k`` for every member and the linear row ``sum u_i <= T_k``
(:meth:`PackModel.threshold_rows`); the backends linearise it either that way (MILP: one binary
``y_k`` for "``k`` is the longest") or with the max as a variable (CP-SAT). A single application
always satisfies the row (``u_i <= T_i``), so any application that fits the nodes is a pack.

Objectives (maximised; :data:`OBJECTIVES`):

- ``"work"``: node-time packed, ``sum q_i T_i`` (utilisation);
- ``"stretch-work"``: the work weighted by the stretch each application would have if it started
  now, ``q_i T_i (now - submit_i + T_i) / T_i`` (applications that waited long relative to their
  length come first; equal to ``"work"`` for a static batch at its first pack);
- ``"lexicographic"``: ``"work"`` first, then ``"stretch-work"`` among packs within
  ``tolerance`` (relative) of the best work.

A ``tiebreak`` score per application (e.g. the paper's Char order, see :func:`order_keys`) adds a
second stage the same way: among packs within ``tolerance`` of the best primary value, maximise the
summed score. :meth:`PackModel.evaluate` returns the tuple of stage values; the first is the
model's objective.

Greedy rules (:meth:`PackModel.greedy`) are the paper's builders: scan the applications in an
order -- ``"random"`` (seeded), ``"max"`` (non-increasing time alone) or ``"char"``
(non-decreasing characteristic time ``w_i + v_i / b``; ``"char-desc"`` the other way round) --
and add each one that still fits (first
fit). Built pack by pack from the remaining applications, this gives the same packs as the paper's
first-fit over a list of packs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from hashlib import blake2b
from time import perf_counter as _clock

import numpy as np

from bbopt.core import Job, periodic_spec
from bbopt.errors import InputError

OBJECTIVES = ("work", "stretch-work", "lexicographic")
#: Applications :meth:`PackModel.from_jobs` reads between two looks at its ``deadline``.
BLOCK = 256
ORDERS = ("random", "max", "char", "char-desc")
#: Relative slack of the average-bandwidth row in float checks.
REL = 1e-9


@dataclass(frozen=True)
class PackModel:
    """Choose the next pack among ``m`` applications (see the module docstring).

    Arrays are indexed like ``ids``: ``nodes`` (``q_i``), ``duration`` (time alone ``T_i``,
    seconds), ``io_time`` (``u_i``: total I/O volume over the bandwidth, seconds), ``char``
    (characteristic time, seconds), ``stages`` (one coefficient vector per objective stage, the
    first is the objective). ``capacity`` is the number of free nodes.
    """

    ids: tuple[str, ...]
    nodes: np.ndarray
    duration: np.ndarray
    io_time: np.ndarray
    char: np.ndarray
    capacity: int
    stages: tuple[np.ndarray, ...]
    tolerance: float = 0.0
    seed: int = 0
    fallback_order: str = "max"
    names: tuple[str, ...] = field(default=("work",))

    def __post_init__(self) -> None:
        m = len(self.ids)
        for name in ("nodes", "duration", "io_time", "char"):
            if len(getattr(self, name)) != m:
                raise InputError(f"pack model: {name} has {len(getattr(self, name))} entries "
                                 f"for {m} applications", field=name)
        if not self.stages or any(len(c) != m for c in self.stages):
            raise InputError("pack model: every objective stage needs one coefficient per "
                             "application", field="stages")
        if self.capacity < 0:
            raise InputError(f"pack model: capacity must be >= 0, got {self.capacity}",
                             field="capacity")
        if np.any(self.duration <= 0) or np.any(self.io_time < 0):
            raise InputError("pack model: durations must be > 0 and I/O times >= 0",
                             field="duration")
        if np.any(self.io_time > self.duration * (1 + REL)):
            raise InputError("pack model: an application's I/O time exceeds its duration",
                             field="io_time")
        if not 0 <= self.tolerance < 1:
            raise InputError(f"pack model: tolerance must be in [0, 1), got {self.tolerance}",
                             field="tolerance")

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_jobs(cls, jobs: Sequence[Job], capacity: int, bandwidth: float, *,
                  now: float = 0.0, objective: str = "work", tiebreak: str | None = None,
                  tolerance: float = 0.0, seed: int = 0,
                  fallback_order: str = "max", deadline: float | None = None) -> PackModel:
        """The model of packing ``jobs`` (periodic applications, ``Job.extra["io"]``; a job
        without it is pure compute for its walltime) on ``capacity`` free nodes behind an I/O node
        of ``bandwidth`` bytes/s. ``tiebreak``: ``None`` or an order of :data:`ORDERS` whose
        rank becomes a last objective stage.

        ``deadline`` (a ``time.perf_counter`` moment): the applications are read in blocks of
        :data:`BLOCK`, and once the clock passes it the model holds those read so far -- the
        head of ``jobs``, in order (``model.size < len(jobs)`` tells a cut model): a decision
        out of time still packs from the head of its queue instead of running late."""
        if objective not in OBJECTIVES:
            raise InputError(f"pack objective must be one of {', '.join(OBJECTIVES)}, got "
                             f"{objective!r}", field="objective")
        if not bandwidth > 0:
            raise InputError(f"bandwidth must be > 0 bytes/s, got {bandwidth!r}",
                             field="bandwidth")
        m = len(jobs)
        t = np.empty(m)
        u = np.empty(m)
        char = np.empty(m)
        for i, job in enumerate(jobs):
            if deadline is not None and not i % BLOCK and i and _clock() > deadline:
                m, jobs = i, jobs[:i]
                t, u, char = t[:i], u[:i], char[:i]
                break
            spec = periodic_spec(job)
            if spec is None:
                t[i] = job.walltime
                u[i] = 0.0
                char[i] = job.walltime
            else:
                n, w, v = spec
                t[i] = n * (w + v / bandwidth)
                u[i] = n * v / bandwidth
                char[i] = w + v / bandwidth
        q = np.fromiter((j.nodes for j in jobs), dtype=np.int64, count=m)
        t = np.maximum(t, 1e-9)
        work = q * t
        submit = np.fromiter((j.submit for j in jobs), dtype=float, count=m)
        stretch_work = q * (np.maximum(now - submit, 0.0) + t)
        names: list[str]
        if objective == "work":
            stages, names = [work], ["work"]
        elif objective == "stretch-work":
            stages, names = [stretch_work], ["stretch-work"]
        else:
            stages, names = [work, stretch_work], ["work", "stretch-work"]
        ids = tuple(j.id for j in jobs)
        if tiebreak is not None:
            rank = order_keys(tiebreak, ids, t, char, seed)
            score = np.empty(m)
            score[rank] = np.arange(m, 0, -1, dtype=float)  # first in the order scores most
            stages.append(score)
            names.append(f"{tiebreak}-order")
        return cls(ids, q, t, u, char, int(capacity), tuple(stages), tolerance, seed,
                   fallback_order, tuple(names))

    # ------------------------------------------------------------------ evaluation
    @property
    def size(self) -> int:
        return len(self.ids)

    def feasible(self, x: np.ndarray) -> bool:
        """Whether the 0/1 selection ``x`` fits the nodes and the average-bandwidth row."""
        x = np.asarray(x, dtype=bool)
        if int(self.nodes[x].sum()) > self.capacity:
            return False
        if not x.any():
            return True
        longest = float(self.duration[x].max())
        return float(self.io_time[x].sum()) <= longest * (1 + REL)

    def evaluate(self, x: np.ndarray) -> tuple[float, ...]:
        """The value of every objective stage for ``x`` (the first is the objective)."""
        x = np.asarray(x, dtype=bool)
        return tuple(float(c[x].sum()) for c in self.stages)

    def pack_duration(self, x: np.ndarray) -> float:
        x = np.asarray(x, dtype=bool)
        return float(self.duration[x].max()) if x.any() else 0.0

    def threshold_rows(self, k: int) -> tuple[np.ndarray, float]:
        """For ``k`` the longest member: the applications allowed (``T_i <= T_k``) and the
        right-hand side ``T_k`` of the linear average-bandwidth row."""
        return self.duration <= self.duration[k], float(self.duration[k])

    # ------------------------------------------------------------------ heuristics
    def greedy(self, order: str | Sequence[int] = "max") -> np.ndarray:
        """First fit in ``order`` (a name of :data:`ORDERS` or a permutation of indices)."""
        perm = (order_keys(order, self.ids, self.duration, self.char, self.seed)
                if isinstance(order, str) else np.asarray(order, dtype=np.int64))
        x = np.zeros(self.size, dtype=bool)
        used = 0
        io = 0.0
        longest = 0.0
        cap = self.capacity
        q, t, u = self.nodes, self.duration, self.io_time
        least = int(q.min()) if self.size else 0
        for i in perm:
            if cap - used < least:
                break  # (no application fits the nodes left: the pack is complete)
            qi = int(q[i])
            if used + qi > cap:
                continue
            d = max(longest, float(t[i]))
            if io + u[i] > d * (1 + REL):
                continue
            x[i] = True
            used += qi
            io += float(u[i])
            longest = d
        return x

    def fallback(self) -> np.ndarray:
        """The contract's fast feasible answer: first fit in the model's fallback order."""
        return self.greedy(self.fallback_order)


def order_keys(order: str, ids: Sequence[str], duration: np.ndarray, char: np.ndarray,
               seed: int = 0) -> np.ndarray:
    """The paper's pack-building orders as a permutation of indices.

    ``"max"``: non-increasing time alone, as the paper says; ``"char"``: characteristic time,
    non-decreasing (the paper says "sorting applications by" it, no direction, where it says
    "non-increasing" for Max: bbopt reads a plain sort; this reading is also the one that shows
    the paper's Char results, lower stretch for more idle time, see
    ``experiments/jeannot.yaml``); ``"char-desc"``: non-increasing characteristic time;
    ``"random"``: a seeded pseudo-random order that depends only on ``seed`` and each job's id
    (so the remaining applications keep their relative order from one pack to the next). Ties
    keep the input order.
    """
    m = len(ids)
    if order == "max":
        return np.lexsort((np.arange(m), -np.asarray(duration)))
    if order == "char":
        return np.lexsort((np.arange(m), np.asarray(char)))
    if order == "char-desc":
        return np.lexsort((np.arange(m), -np.asarray(char)))
    if order == "random":
        keys = np.fromiter((int.from_bytes(blake2b(f"{seed}:{i}".encode(), digest_size=7)
                                           .digest(), "big") for i in ids),
                           dtype=np.int64, count=m)
        return np.lexsort((np.arange(m), keys))
    raise InputError(f"pack order must be one of {', '.join(ORDERS)}, got {order!r}",
                     field="order")


def integer_form(model: PackModel, resolution: float = 1e9) -> tuple[np.ndarray, np.ndarray,
                                                                        list[np.ndarray], float]:
    """Integer coefficients for exact solvers: durations rounded down and I/O times up on a
    common power-of-two scale (every integer solution is feasible in floats), and each objective
    stage scaled so its largest coefficient is about ``resolution``. Returns ``(T, u, stages,
    time scale)``."""
    tmax = float(model.duration.max()) if model.size else 1.0
    scale = 2.0 ** math.floor(math.log2(resolution / tmax))
    t_int = np.floor(model.duration * scale * (1 + REL)).astype(np.int64)
    u_int = np.ceil(model.io_time * scale).astype(np.int64)
    u_int = np.minimum(u_int, t_int)  # a single application always fits its own row
    stages = []
    for c in model.stages:
        cmax = float(np.abs(c).max()) if model.size else 1.0
        f = resolution / cmax if cmax > 0 else 1.0
        stages.append(np.round(c * f).astype(np.int64))
    return t_int, u_int, stages, scale

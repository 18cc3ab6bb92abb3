"""Plan-based scheduling as a formal model: a permutation of the waiting queue -> an execution
plan over nodes and burst buffer -> its score ``sum(wait_i ** alpha)``.

Kopanski & Rzadca, Euro-Par 2021, Section 3.3 (after Zheng et al., CLUSTER 2016): the jobs of a
permutation are taken in order and each is placed at the earliest time at which its nodes *and*
its burst buffer are free for its whole walltime, reserving them. The candidate start times are
``now`` and the expected ends of running and already planned jobs (resources only ever come free
at those instants). The plan's score is ``sum((start_i - submit_i) ** alpha)``, lower is better;
``alpha`` = 1, 2, 3 gives the policies plan-1, plan-2, plan-3 (Eq. 1). Only jobs planned to start
now are started; the plan is rebuilt at every scheduling point.

The model also accepts plans that no permutation produces (e.g. CP-SAT's, which may leave gaps a
greedy placement would not): :meth:`PlanModel.evaluate` scores any :class:`Plan` and
:meth:`PlanModel.check` verifies that it respects the capacities at every instant.

Speed. Evaluating a permutation is the inner loop of every search (9 candidate orders plus 180
annealing steps per decision, tens of thousands of decisions on KTH), so the evaluator keeps
its profile as three plain lists (breakpoints, free nodes, free BB) and places jobs with the
planner's list primitives (:mod:`bbopt.planner.lists`) rather than the general numpy
:class:`~bbopt.planner.Profile`, whose per-call overhead dominates for the profiles of 10-300
breakpoints met here (see ``benchmarks/speed/plan_evaluator.py``).
Boundaries are exact:
a job that ends at ``t`` frees its resources for one that starts at ``t`` (segments are half-open).
An evaluation can stop as soon as its partial score exceeds a threshold, which lets the annealing
reject a move without finishing its plan (the Metropolis decision is unchanged). Each job's
earliest start in the base profile bounds its start in every plan, so the earliest-fit scan
begins there, and on the pool the early rejection bounds the rest of a plan by those starts'
terms (the same decisions as the plain bound ``now``, sooner); :class:`~bbopt.models.plan_walk.
SwapWalk` scores a swap of two positions from the
first one on (``benchmarks/speed/optimising_policies.py`` times plan-2 on the whole KTH trace). With
numba installed (the extra ``fast``), the pool loops run compiled (:mod:`bbopt.planner.jit.pool`,
chosen at a model's first score by :func:`kernels`): the same operations in the same order, so
the same scores and plans, about 3x faster on KTH.

Named BB nodes (the authors' 12 x 40 GB, Section 4.1). The burst buffer is then not one pool:
each compute node of a job takes a piece ``bb / nodes`` on one BB node, placed by the one
first-fit rule of :func:`bbopt.planner.pieces.first_fit_pieces`. The model does not look at the
platform: it is given the planner's BB placement strategy (:func:`bbopt.planner.bb_placement`,
chosen once from the platform) and asks it for the BB node capacities, the tolerance of a
piece, the free space now, whether a request can ever be placed and, with proximity, the
compute nodes' preferences. The evaluator keeps one
profile column per BB node besides the pool, and places each job as conservative backfilling does
on named nodes (:class:`bbopt.policies.named_bb.NamedProfile`, which
:func:`~bbopt.policies.named_bb.plan_on_named_nodes` uses): a job started now takes the pieces the
engine will give it (first fit on what is free on the BB nodes now, in plan order) and starts
now only if those pieces stay free for its whole walltime; a job started later takes its first-fit
pieces on the least free space of each BB node over its interval. So the search scores the plan
that will run, pieces included, not the pool's. Two facts of the pool evaluator no longer hold
there and are not used: a job's start is not monotone in the reservations made before it (a job
held now can push a later one's pieces onto a BB node that stays free, letting it start now), so
its earliest start in the base profile bounds it only through the pool (nodes and pool BB, which
every placement needs); and two orders that give the same starts may give different pieces (the
incremental walk compares both). On a platform that places pieces by proximity
(:class:`~bbopt.planner.bb.ProximityBB`, the authors' Dragonfly rule) a job started now is
placed as the engine will place it: compute nodes by the placement's choice (the authors'
resource filter) on the compute node ids free now, in plan order, and pieces by proximity on
them; jobs started later keep the first-fit columns (their compute nodes are counted, not named,
so their proximity placement is not known). On a pool placement nothing of this runs: the pool
evaluator and its schedules are unchanged. The placement on the BB nodes lives in
:mod:`bbopt.models.plan_named` (a job's per-node amounts summed once per job); every earliest
start and reservation on the model's lists is the planner's (:mod:`bbopt.planner.lists`).

Length: the pool and named-BB evaluators share the model's lists, bounds and score terms, and
both are the inner loop of every plan search (the incremental walk lives in
:mod:`bbopt.models.plan_walk`, the named placement in :mod:`bbopt.models.plan_named`).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from bbopt.core import ClusterState, Job, slack
from bbopt.jit import KERNELS
from bbopt.jit import kernels as compiled
from bbopt.models.plan_named import place as place_named
from bbopt.planner import Planner, Profile
from bbopt.planner.bb import POOLED, BBPlacement
from bbopt.planner.lists import earliest, reserve
from bbopt.planner.named import NamedArrays
from bbopt.planner.named import kernels as named_kernels
from bbopt.planner.pieces import first_fit_runs

KERNELS.declare({"plan-pool": "bbopt.planner.jit:pool"})


def kernels():
    """The compiled pool kernels (the module :mod:`bbopt.planner.jit.pool`, imported on the first
    call, which imports numba), or ``None`` when numba is not installed or the environment
    variable ``BBOPT_NO_JIT`` is set to anything but ``0`` (the pure-Python loops then run,
    with the same answers): :func:`bbopt.jit.kernels`."""
    return compiled("plan-pool")


#: Names of the 9 candidate initial orders of Section 3.3, in the order they are tried.
CANDIDATE_ORDERS: tuple[str, ...] = (
    "submission",
    "nodes-asc", "nodes-desc",
    "bb-per-node-asc", "bb-per-node-desc",
    "bb-per-node-per-node-asc", "bb-per-node-per-node-desc",
    "walltime-asc", "walltime-desc",
)


@dataclass(frozen=True, slots=True)
class Plan:
    """An execution plan: a planned start time per job (indexed like :attr:`PlanModel.jobs`).

    ``order`` is the permutation whose greedy placement produced the plan, or ``None`` for a plan
    that does not come from a permutation (CP-SAT).
    """

    starts: tuple[float, ...]
    order: tuple[int, ...] | None = None

    def started_now(self, now: float) -> list[int]:
        """Indices of the jobs planned to start at ``now``, in plan order."""
        idx = self.order if self.order is not None else sorted(
            range(len(self.starts)), key=lambda i: (self.starts[i], i))
        return [i for i in idx if self.starts[i] <= now]


class PlanModel:
    """The plan-ordering problem of one scheduling point.

    ``running`` holds ``(expected_end, nodes, bb)`` of the jobs that hold resources now (on a
    ``placement`` with named BB nodes, :class:`~bbopt.planner.bb.FirstFitBB` or
    :class:`~bbopt.planner.bb.ProximityBB`, ``(expected_end, nodes, bb, pieces)``: the ``(BB
    node, bytes)`` pieces each holds; see the module docstring); ``jobs`` the waiting jobs (their
    order is the submission order and index every answer). A solution is a permutation of
    ``range(len(jobs))`` (or a :class:`Plan`); :meth:`evaluate` gives its score.
    Jobs that can never fit the platform are not part of the model (see :attr:`excluded`).

    Example: 4 nodes, one job running on 2 of them until t=100. Placing the 4-node job ``w``
    first holds back the two 1-node jobs of 150 s, which cannot end before it (sum of squared
    waits ``100**2 + 2 * 200**2``); placing it last costs it 50 s more but lets the others start
    at once (``150**2``).

    >>> from bbopt import Job
    >>> jobs = [Job("w", 0, walltime=100, nodes=4), Job("a", 0, walltime=150, nodes=1),
    ...         Job("b", 0, walltime=150, nodes=1)]
    >>> model = PlanModel(0.0, (4, 0.0), [(100.0, 2, 0.0)], jobs, alpha=2)
    >>> model.evaluate([0, 1, 2]), model.evaluate([1, 2, 0])
    (90000.0, 22500.0)
    """

    def __init__(self, now: float, capacity: Sequence[float],
                 running: Iterable[tuple[float, float, float]], jobs: Sequence[Job],
                 alpha: float = 2, placement: BBPlacement = POOLED,
                 free_ids: Sequence[int] | None = None) -> None:
        self.now = float(now)
        #: How the BB is placed (the planner's strategy): its capacities, tolerance, rule.
        self.placement = placement
        proximity = placement.proximity
        if proximity is not None and free_ids is None:
            raise ValueError("proximity placement needs the free compute node ids now")
        #: The BB nodes each compute node prefers (proximity placement) and the compute node
        #: ids free now, when the engine places by proximity.
        self.proximity = proximity
        self._NOW = sorted(int(x) for x in free_ids) if proximity is not None else None
        running = list(running)
        #: The BB node capacities, ``None`` on a pool.
        self.named: tuple[float, ...] | None = placement.capacity if placement.named else None
        self.capacity = (int(capacity[0]), float(capacity[1]))
        self.alpha = alpha
        cap_n, cap_b = self.capacity
        self.tol = slack(cap_b)  # the one fit rule of bbopt.core.fits
        never = placement.never_placed
        fits = [j.nodes <= cap_n and j.bb <= cap_b + self.tol and not never(j.nodes, j.bb)
                for j in jobs]
        self._ftol = placement.tol
        self.excluded: tuple[Job, ...] = tuple(j for j, f in zip(jobs, fits, strict=True) if not f)
        self.jobs: tuple[Job, ...] = tuple(j for j, f in zip(jobs, fits, strict=True) if f)
        self.running = tuple(sorted((float(r[0]), int(r[1]), float(r[2])) for r in running))
        self._w = [float(j.walltime) for j in self.jobs]
        self._n = [j.nodes for j in self.jobs]
        self._b = [float(j.bb) for j in self.jobs]
        self._sub = [float(j.submit) for j in self.jobs]
        self._bneed = [b - self.tol for b in self._b]  # BB a segment must have free (fit rule)
        # Lower bound of each job's score term: it cannot start before now.
        self._lb = [self._term(self.now - s) for s in self._sub]
        #: The compiled pool loop's arrays (:meth:`compiled_arrays`) once made; ``False``:
        #: this model is scored by the Python loops.
        self._jit: tuple | bool | None = None
        #: On named BB nodes, the compiled loops' arrays (:meth:`named_arrays`) once made;
        #: ``False``: the Python loops.
        self._njit: NamedArrays | bool | None = None
        if self.named is not None:
            # The profile has a column per BB node; a job that fits nowhere scores ``_lb``,
            # which is then also the bound of the early rejection.
            self._lbr = self._lb
            self._init_named(running)
            return
        # Base profile: free capacity on [T[i], T[i+1]) from now on, the last segment unbounded.
        used_n = sum(n for _, n, _ in self.running)
        used_b = sum(b for _, _, b in self.running)
        T, FN, FB = [self.now], [cap_n - used_n], [cap_b - used_b]
        for end, n, b in self.running:
            end = max(end, self.now)
            if end == T[-1]:
                FN[-1] += n
                FB[-1] += b
            else:
                T.append(end)
                FN.append(FN[-1] + n)
                FB.append(FB[-1] + b)
        self._T, self._FN, self._FB = T, FN, FB
        # Each job's earliest start in the base profile: a lower bound of its start in every
        # plan (reservations only take capacity away), where the earliest-fit scan may begin.
        self._t0 = [self._earliest_pool((T, FN, FB), p)[0] for p in range(len(self.jobs))]
        # The lists the inner loops copy: the base profile and a sentinel breakpoint at
        # infinity (no window reaches it, no job fits it), so that they never test the length.
        self._Tz, self._FNz, self._FBz = T + [math.inf], FN + [-1], FB + [-math.inf]
        # The bound of the early rejection on the pool: a job cannot start before its earliest
        # start in the base profile either, so its term is at least that start's (tighter than
        # ``_lb``; the decisions are the same, only sooner).
        self._lbr = [self._term(t - s) for t, s in zip(self._t0, self._sub, strict=True)]

    def _init_named(self, running: list) -> None:
        """The named-BB profile: the pool dimensions and one column per BB node, built as
        :class:`~bbopt.policies.named_bb.NamedProfile` builds its profile (same sums, so the
        same floats), and the BB nodes' free space now (the engine's, for starts now)."""
        caps = self.named
        k = len(caps)
        cap_n, cap_b = self.capacity
        releases = []
        space = [float(c) for c in caps]
        for end, n, b, pieces in running:
            vec = [0.0] * k
            for node, size in pieces:
                vec[node] += size
                space[node] -= size  # BBNodeSpace.take_pieces' sums
            releases.append((end, (n, b, *vec)))
        prof = Profile(self.now, (cap_n, cap_b, *caps), releases)
        # (each BB node admits what first fit places on it: bbopt.planner.bb.profile_slacks)
        self._ktol = [self._ftol] * k
        T = prof.times
        rows = prof.free
        self._T = list(T)
        self._FN = [r[0] for r in rows]
        self._FB = [r[1] for r in rows]
        # The BB nodes' free space, one tuple per segment (a new breakpoint shares its
        # neighbour's tuple; a reservation replaces the tuples of its segments).
        self._FK = [tuple(r[2:]) for r in rows]
        self._SN = space
        # Each job's cumulative piece sums (plan_named.cumulative_pieces), made when needed.
        self._acc: list[list[float] | None] = [None] * len(self.jobs)
        # Sentinel breakpoint at infinity (see the pool lists).
        self._Tz = self._T + [math.inf]
        self._FNz = self._FN + [-1]
        self._FBz = self._FB + [-math.inf]
        self._FKz = self._FK + [(-math.inf,) * k]
        # Lower bound of each job's start in every plan: its earliest fit on the pool dims
        # (reservations only take pool capacity away; the BB nodes are not monotone).
        self._t0 = [self._earliest_pool((self._T, self._FN, self._FB), p)[0]
                    for p in range(len(self.jobs))]

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_state(cls, state: ClusterState, alpha: float = 2) -> PlanModel:
        """The model of a :class:`~bbopt.core.ClusterState`: running jobs hold their resources
        until their expected ends (start + walltime), the queue is taken in arrival order. The
        BB placement is the one the planner chose for the platform, holding the running jobs'
        pieces as the engine does."""
        planner = Planner.of(state)
        bb = planner.bb
        if not bb.named:
            running = [(r.start + r.job.walltime, r.job.nodes, r.job.bb) for r in state.running]
            return cls(state.time, state.platform.capacity, running, state.queue, alpha)
        held = planner.pieces
        running = [(r.start + r.job.walltime, r.job.nodes, r.job.bb, held.get(r.job.id, ()))
                   for r in state.running]
        model = cls(state.time, state.platform.capacity, running, state.queue, alpha,
                    placement=bb,
                    free_ids=planner.free_nodes if bb.proximity is not None else None)
        # The engine's free space on the BB nodes now (the placement's, holding the pieces).
        model._SN = list(bb.free)
        return model

    @property
    def n(self) -> int:
        return len(self.jobs)

    def _term(self, wait: float) -> float:
        wait = wait if wait > 0.0 else 0.0
        a = self.alpha
        if a == 1:
            return wait
        if a == 2:
            return wait * wait
        if a == 3:
            return wait * wait * wait
        return wait ** a

    # ------------------------------------------------------------------ the contract
    def fallback(self) -> Plan:
        """The submission-order plan (greedy, fast, always feasible)."""
        return self.plan(range(self.n))

    def evaluate(self, x: Sequence[int] | Plan) -> float:
        """Score of a permutation (its greedy plan) or of a :class:`Plan`: sum of wait**alpha."""
        if isinstance(x, Plan):
            return self.score_of_starts(x.starts)
        return self.score(x)

    def score_of_starts(self, starts: Sequence[float]) -> float:
        return sum(self._term(s - a) for s, a in zip(starts, self._sub, strict=True))

    # ------------------------------------------------------------------ the inner loop
    def score(self, order: Sequence[int], threshold: float = math.inf) -> float:
        """Score of the greedy plan of ``order``; ``math.inf`` as soon as the partial score plus
        a lower bound of the rest exceeds ``threshold`` (an early, exact rejection)."""
        return self._run(order, threshold, None)

    def plan(self, order: Iterable[int]) -> Plan:
        """The execution plan of a permutation."""
        order = tuple(order)
        starts = [0.0] * self.n
        self._run(order, math.inf, starts)
        return Plan(tuple(starts), order)

    def _run(self, order: Sequence[int], threshold: float, starts: list[float] | None) -> float:
        if self.named is not None:
            return self._run_named(order, threshold, starts)
        if self._jit is None:  # decided at the first score: compiled arrays or False
            self._jit = self.alpha in (1, 2, 3) and kernels() is not None and (
                self._compiled_arrays())
        if self._jit and len(order) == self.n:  # (a part of a queue: the reference below)
            return self._run_compiled(order, threshold, starts)
        # The Python reference of the compiled loop: each job at its earliest start from its
        # start in the base profile on (a breakpoint of every profile), reserved there.
        T, FN, FB = self._Tz[:], self._FNz[:], self._FBz[:]
        W, N, B, BN, T0 = self._w, self._n, self._b, self._bneed, self._t0
        first = bisect_left
        S, LB, alpha = self._sub, self._lbr, self.alpha
        check = threshold != math.inf
        rest = sum(map(LB.__getitem__, order)) if check else 0.0
        score = 0.0
        for p in order:
            start, i, j = earliest(T, FN, FB, first(T, T0[p]), N[p], BN[p], W[p])
            reserve(T, FN, FB, i, j, start + W[p], N[p], B[p])
            wait = start - S[p]
            if wait < 0.0:
                wait = 0.0
            if alpha == 2:
                score += wait * wait
            elif alpha == 1:
                score += wait
            elif alpha == 3:
                score += wait * wait * wait
            else:
                score += wait ** alpha
            if starts is not None:
                starts[p] = start
            if check:
                rest -= LB[p]
                if score + rest > threshold:
                    return math.inf
        return score

    def compiled_arrays(self) -> tuple:
        """The pool model as the compiled loops read it (:mod:`bbopt.planner.jit.pool`): the
        per-job table ``jobs[JOB_ROWS, n]`` (nodes, BB a segment must have free, walltime,
        earliest start in the base profile, BB request, submit time, bound of the early
        rejection) and the base profile ``[3, cap]`` with its sentinel, with room for one new
        breakpoint per job. Made once per model (a model whose score runs the Python loop
        keeps it)."""
        if isinstance(self._jit, tuple):
            return self._jit[:2]
        arrays = self._compiled_arrays()
        if self._jit is None:
            self._jit = arrays
        return arrays[:2]

    def _compiled_arrays(self) -> tuple:
        """:meth:`compiled_arrays` and the scratch arrays of :meth:`_run_compiled` (a profile,
        the starts, the order)."""
        import numpy as np

        jobs = np.array([self._n, self._bneed, self._w, self._t0, self._b, self._sub,
                         self._lbr], dtype=np.float64).reshape(7, self.n)
        base = np.zeros((3, len(self._Tz) + self.n))
        base[:, :len(self._Tz)] = (self._Tz, self._FNz, self._FBz)
        return (jobs, base, np.empty_like(base), np.empty(self.n),
                np.empty(self.n, dtype=np.int64))

    def _run_compiled(self, order: Sequence[int], threshold: float,
                      starts: list[float] | None) -> float:
        """:meth:`_run` on the pool by the compiled loop (:func:`bbopt.planner.jit.pool.
        score_pool`): the same floating-point operations, so the same score and starts. (A
        model that chose the compiled loop keeps it: :func:`kernels` imported it.)"""
        from bbopt.planner.jit import pool  # (imported when the model chose this loop)

        jobs, base, work, out, perm = self._jit
        perm[:] = order
        rest = sum(map(self._lbr.__getitem__, order)) if threshold != math.inf else 0.0
        score = pool.score_pool(jobs, base, work, perm, int(self.alpha), threshold, rest, out)
        if starts is not None:
            starts[:] = out.tolist()
        return score

    # ------------------------------------------------------------------ named BB nodes
    def named_profile(self) -> list:
        """A fresh copy of the named-BB profile ``[T, FN, FB, FK, SN, NOW]`` (breakpoints with
        the sentinel, free nodes, free pool BB, the BB nodes' free space per segment, the BB
        nodes' free space now, and on a proximity platform the free compute node ids now, else
        ``None``) for :meth:`place`."""
        return self.copy_profile([self._Tz, self._FNz, self._FBz, self._FKz, self._SN,
                                  self._NOW])

    @staticmethod
    def copy_profile(prof: list) -> list:
        T, FN, FB, FK, SN, NOW = prof
        return [T[:], FN[:], FB[:], FK[:], SN[:],
                None if NOW is None else NOW[:]]

    #: Place job ``p`` in a named-BB profile at its earliest start (:func:`~bbopt.models.
    #: plan_named.place`): ``(start, first-fit runs)``, or ``(inf, None)`` if it fits nowhere;
    #: a start now on a proximity platform: ``(now, (compute nodes, runs))``.
    place = place_named

    def named_arrays(self) -> NamedArrays | None:
        """This model on named BB nodes as the compiled loops read it (made at the first
        score), or ``None`` when its plans are scored by the Python loops (no numba, or
        ``BBOPT_NO_JIT=1``, or an alpha other than 1, 2, 3)."""
        if self._njit is None:
            self._njit = (self.alpha in (1, 2, 3) and named_kernels() is not None
                          and NamedArrays(
                              (self._n, self._b, self._w, self._t0, self._sub, self._lb),
                              self._Tz, self._FNz, self._FBz, self._FKz, self._SN, self._NOW,
                              self.proximity, self._ktol, self._ftol, self.tol,
                              int(self.alpha)))
        return self._njit or None

    def _run_named(self, order: Sequence[int], threshold: float,
                   starts: list[float] | None) -> float:
        arrays = self.named_arrays()
        if arrays is not None:  # the compiled twin of the loop below: the same floats
            return arrays.score(order, threshold, starts)
        prof = self.named_profile()
        place = self.place
        S, LB = self._sub, self._lb
        check = threshold != math.inf
        rest = sum(map(LB.__getitem__, order)) if check else 0.0
        score = 0.0
        for p in order:
            start, _ = place(prof, p)
            score += self._term(start - S[p]) if start != math.inf else LB[p]
            if starts is not None:
                starts[p] = start
            if check:
                rest -= LB[p]
                if score + rest > threshold:
                    return math.inf
        return score

    # ------------------------------------------------------------------ helpers for searches
    def base_profile(self) -> tuple[list[float], list[int], list[float]]:
        """Copies of the base profile lists (breakpoints, free nodes, free BB)."""
        return self._T[:], self._FN[:], self._FB[:]

    def earliest(self, profile: tuple[list[float], list[int], list[float]], p: int
                 ) -> tuple[float, int, int]:
        """Earliest start of job ``p`` in ``profile``: (start, i, j), segments i..j-1 used
        (pool model; on named BB nodes, the earliest start on the pool dimensions only, a lower
        bound of its start: see :meth:`place`)."""
        return self._earliest_pool(profile[:3], p)

    def _earliest_pool(self, profile: tuple[list[float], list[int], list[float]], p: int
                       ) -> tuple[float, int, int]:
        T, FN, FB = profile
        return earliest(T, FN, FB, 0, self._n[p], self._bneed[p], self._w[p])

    def reserve(self, profile: tuple[list[float], list[int], list[float]], p: int,
                start: float, i: int, j: int) -> None:
        """Reserve job ``p`` at ``start`` over segments i..j-1 (as found by :meth:`earliest`)."""
        T, FN, FB = profile
        reserve(T, FN, FB, i, j, start + self._w[p], self._n[p], self._b[p])

    def term(self, p: int, start: float) -> float:
        """Score term of job ``p`` started at ``start``."""
        return self._term(start - self._sub[p])

    def lower_bound(self, p: int) -> float:
        """The least score term job ``p`` can have (it cannot start before now)."""
        return self._lb[p]

    def startable_now(self) -> list[int]:
        """Jobs that fit in what is free now; no plan starts any other job now."""
        free_n, free_b = self._FN[0], self._FB[0] + self.tol
        out = [p for p in range(self.n) if self._n[p] <= free_n and self._b[p] <= free_b]
        if self.named is not None:  # and whose pieces the BB nodes take now
            out = [p for p in out
                   if first_fit_runs(self._SN, self._n[p], self._b[p], self._ftol) is not None]
        return out

    def candidates(self) -> list[tuple[str, tuple[int, ...]]]:
        """The 9 initial orders of Section 3.3 (ties kept in submission order)."""
        idx = range(self.n)
        N, B, W = self._n, self._b, self._w
        bpn = [B[p] / N[p] for p in idx]
        ratio = [bpn[p] / N[p] for p in idx]
        keys = {"nodes": N, "bb-per-node": bpn, "bb-per-node-per-node": ratio, "walltime": W}
        out = [("submission", tuple(idx))]
        for name, key in keys.items():
            out.append((f"{name}-asc", tuple(sorted(idx, key=key.__getitem__))))
            out.append((f"{name}-desc", tuple(sorted(idx, key=lambda p, k=key: -k[p]))))
        order = {name: k for k, name in enumerate(CANDIDATE_ORDERS)}
        return sorted(out, key=lambda c: order[c[0]])

    # ------------------------------------------------------------------ validation
    def check(self, plan: Plan | Sequence[float]) -> str | None:
        """Why ``plan`` violates a capacity at some instant (or starts before now), else None."""
        starts = plan.starts if isinstance(plan, Plan) else tuple(plan)
        if len(starts) != self.n:
            return f"plan has {len(starts)} starts for {self.n} jobs"
        events: list[tuple[float, int, float]] = []
        for e, n, b in self.running:
            if e > self.now:
                events.append((e, -n, -b))
        for p, s in enumerate(starts):
            if not s >= self.now:
                return f"job {self.jobs[p].id} starts at {s} before now ({self.now})"
            events.append((s, self._n[p], self._b[p]))
            events.append((s + self._w[p], -self._n[p], -self._b[p]))
        used_n = sum(n for e, n, _ in self.running if e > self.now)
        used_b = sum(b for e, _, b in self.running if e > self.now)
        events.sort(key=lambda e: (e[0], e[1] > 0))  # releases first at equal times
        cap_n, cap_b = self.capacity
        for t, n, b in events:
            used_n += n
            used_b += b
            if used_n > cap_n or used_b > cap_b + self.tol * (1 + len(starts)):
                return f"at t={t}: {used_n} nodes / {used_b:.6g} B in use"
        return None

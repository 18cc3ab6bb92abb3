"""Incremental evaluation of the plan model for searches over permutations by swaps.

Kopanski & Rzadca, Euro-Par 2021, Section 3.3 and Algorithm 2: the simulated annealing moves
from a permutation of the waiting queue to the same permutation with two positions swapped, and
scores each by the greedy plan of :class:`~bbopt.models.plan.PlanModel`. :class:`SwapWalk`
keeps the plan of the current permutation position by position, so that a swap costs only the
placements from its first swapped position on, and often fewer; its scores are those of
:meth:`PlanModel.score <bbopt.models.plan.PlanModel.score>`. It places jobs as the model does (the
planner's earliest start and reservation on lists, :mod:`bbopt.planner.lists`) and reads the
model's private lists. :class:`CompiledWalk` is the same walk on the BB pool with its loop
compiled by numba (:mod:`bbopt.planner.jit.pool`), used when numba is installed
(:func:`swap_walk` chooses).
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Sequence

from bbopt.models.plan import PlanModel, kernels
from bbopt.planner.lists import earliest, reserve
from bbopt.planner.named import NamedWalk

#: Default positions between two profile snapshots of a :class:`SwapWalk` (1 to 4 measure
#: within 2 % of each other on KTH's queues; 3 is the least work).
STRIDE = 3


class SwapWalk:
    """A permutation of a :class:`PlanModel`'s jobs with its greedy plan kept position by
    position, so that the score of the permutation with two positions swapped costs only the
    plan from the first swapped position on (the annealing's move, Kopanski & Rzadca, Algorithm
    2), and often less.

    Three facts make a swap of positions ``lo < hi`` cheap to score exactly:

    - the first ``lo`` jobs are the same, so their placements are too: the walk keeps snapshots
      of the profile (every ``stride`` positions) and of the partial score (every position) and
      resumes from the last snapshot at or before ``lo``;
    - if the jobs of positions ``lo`` .. ``hi`` all get their current starts again, the
      profile after ``hi`` holds the same reservations as the current one and every later job
      keeps its current start: the rest of the plan is not placed again, only its score terms
      are added (in order: the sum is the one :meth:`PlanModel.score` computes);
    - the jobs of positions ``lo`` .. ``hi - 1`` keeping their starts is enough (on the
      pool): the job swapped from ``lo`` to ``hi`` then meets the current plan's profile after
      ``hi`` with its own reservation given back, so it fits at its current start, and no
      earlier, since that profile holds every reservation of the one it was placed on before
      (reservations only delay a job). It is not placed again either.

    :meth:`try_swap` returns what ``model.score(swapped, threshold)`` returns (the same early
    rejection, the same floating-point sums); :meth:`accept` makes the swapped permutation the
    current one. One caveat, at the last bit: after a converged swap the walk keeps the current
    profile, whose free-BB values were summed in the current order; a fresh plan sums them in
    the swapped order, which can differ in the last bit of a float. A job's fit could then differ
    only if a segment's free BB were within that bit of its request less the fit rule's slack
    (:func:`bbopt.core.slack`); the plans are compared with fresh evaluations in
    ``tests/models/test_plan.py``.

    >>> from bbopt import Job
    >>> jobs = [Job(str(i), 0, walltime=10 * (i + 1), nodes=1 + i % 2) for i in range(4)]
    >>> model = PlanModel(0.0, (2, 0.0), [], jobs, alpha=2)
    >>> walk = SwapWalk(model, [0, 1, 2, 3])
    >>> walk.score == model.score([0, 1, 2, 3])
    True
    >>> walk.try_swap(1, 3) == model.score([0, 3, 2, 1])
    True
    >>> walk.accept(); walk.order
    [0, 3, 2, 1]
    """

    __slots__ = ("model", "order", "stride", "start", "term", "partial", "snaps", "score",
                 "pieces", "_pending", "_jobs")

    def __init__(self, model: PlanModel, order: Sequence[int], stride: int | None = None
                 ) -> None:
        self.model = model
        n = model.n
        #: Per job, what a placement reads: nodes, the BB a segment must have free (fit rule),
        #: walltime, earliest start in the base profile, BB request, submit time.
        self._jobs = list(zip(model._n, model._bneed, model._w, model._t0, model._b,
                              model._sub, strict=True))
        self.order = list(order)
        if sorted(self.order) != list(range(n)):
            raise ValueError("order must be a permutation of the model's jobs")
        #: Profile snapshots every ``stride`` positions: copying the profile at every position
        #: costs more than the placements a resume from an earlier snapshot repeats.
        self.stride = stride if stride is not None else STRIDE
        self.start = [math.nan] * n  # current planned start of each job (none yet)
        self.term = [0.0] * n  # its score term
        self.partial = [0.0] * (n + 1)  # score of the first k positions
        self.snaps: list = [None] * (n // self.stride + 1)  # profile before position k*stride
        self.pieces: list = [None] * n  # on named BB nodes: each job's current pieces
        if model.named is None:
            self.snaps[0] = (model._Tz, model._FNz, model._FBz)
        else:
            self.snaps[0] = model.named_profile()
        self.score = 0.0
        self._pending = None
        self.score = self._walk(self.order, 0, n, math.inf, diverged=True)
        self.accept()

    def try_swap(self, a: int, b: int, threshold: float = math.inf) -> float:
        """Score of the current order with positions ``a`` and ``b`` swapped (``math.inf`` when
        it exceeds ``threshold``, as :meth:`PlanModel.score`); :meth:`accept` adopts it."""
        self._pending = None
        new = self.order[:]
        new[a], new[b] = new[b], new[a]
        lo, hi = (a, b) if a < b else (b, a)
        return self._walk(new, lo, hi, threshold, diverged=False)

    def accept(self) -> None:
        """Make the order of the last :meth:`try_swap` (which must not have been rejected by
        its threshold) the current one."""
        if self._pending is None:
            raise ValueError("nothing to accept: the last move was rejected or none was tried")
        if len(self._pending) == 6:
            (self.order, self.start, self.term, self.partial, self.snaps,
             self.pieces) = self._pending
        else:
            self.order, self.start, self.term, self.partial, self.snaps = self._pending
        self._pending = None
        self.score = self.partial[-1]

    def _walk(self, new: list[int], lo: int, hi: int, threshold: float, diverged: bool) -> float:
        m = self.model
        if m.named is not None:
            return self._walk_named(new, lo, hi, threshold, diverged)
        stride = self.stride
        base = lo - lo % stride
        snaps = self.snaps[:]
        T0, FN0, FB0 = snaps[base // stride]
        T, FN, FB = T0[:], FN0[:], FB0[:]
        JOBS, alpha = self._jobs, m.alpha
        first = bisect_left
        cur_start = self.start
        start_of, term_of, parts = cur_start[:], self.term[:], self.partial[:]
        score = parts[base]
        count = len(new)
        # Where the rest of the plan is known if nothing diverged by then: the job swapped to
        # ``hi`` keeps its start if every job before it did (see the class docstring).
        stop = count if diverged else hi
        snap_at = base + stride  # the next position whose profile is kept
        k = base
        while k < stop:
            p = new[k]
            if k == snap_at:
                snaps[k // stride] = (T[:], FN[:], FB[:])
                snap_at += stride
            n, bneed, w, early, breq, submit = JOBS[p]
            start, i, j = earliest(T, FN, FB, first(T, early), n, bneed, w)
            reserve(T, FN, FB, i, j, start + w, n, breq)
            wait = start - submit
            if wait < 0.0:
                wait = 0.0
            if alpha == 2:
                term = wait * wait
            elif alpha == 1:
                term = wait
            elif alpha == 3:
                term = wait * wait * wait
            else:
                term = wait ** alpha
            if start != cur_start[p]:
                stop = count  # diverged: every later job is placed again
                start_of[p] = start
                term_of[p] = term
            score += term
            k += 1
            parts[k] = score
        if k == snap_at:  # stopped at hi: the profile before it holds the new order's jobs
            snaps[k // stride] = (T[:], FN[:], FB[:])
        # Positions lo..hi-1 kept their starts: so does every later job (its term is known).
        while k < count:
            score += term_of[new[k]]
            k += 1
            parts[k] = score
        if threshold != math.inf and rejected_early(new, parts, m._lbr, threshold):
            return math.inf
        self._pending = (new, start_of, term_of, parts, snaps)
        return score

    def _walk_named(self, new: list[int], lo: int, hi: int, threshold: float,
                    diverged: bool) -> float:
        """:meth:`_walk` on named BB nodes: placements by :meth:`PlanModel.place`; a job has
        kept its placement only if it kept its start *and* its pieces (two jobs swapped at the
        same start take each other's BB nodes)."""
        m = self.model
        stride = self.stride
        base = lo - lo % stride
        snaps = self.snaps[:]
        prof = m.copy_profile(snaps[base // stride])
        place, copy = m.place, m.copy_profile
        S, LB = m._sub, m._lb
        cur_start, cur_pieces = self.start, self.pieces
        start_of, term_of, parts = cur_start[:], self.term[:], self.partial[:]
        pieces_of = cur_pieces[:]
        check = threshold != math.inf
        score = parts[base]
        rest = _prefix_rest(new, base, parts, LB, threshold) if check else 0.0
        if rest == math.inf:
            return math.inf
        count = len(new)
        tail = hi + 1
        converged = count
        snap_at = base + stride
        for k in range(base, count):
            if k == tail and not diverged:
                converged = k
                break
            p = new[k]
            if k == snap_at:
                snaps[k // stride] = copy(prof)
                snap_at += stride
            start, pieces = place(prof, p)
            term = m._term(start - S[p]) if start != math.inf else LB[p]
            if start != cur_start[p] or pieces != cur_pieces[p]:
                diverged = True
                start_of[p] = start
                term_of[p] = term
                pieces_of[p] = pieces
            score += term
            parts[k + 1] = score
            if check:
                rest -= LB[p]
                if score + rest > threshold:
                    return math.inf
        score = _known_tail(new, converged, score, parts, term_of, LB, rest, threshold, check)
        if score == math.inf:
            return math.inf
        self._pending = (new, start_of, term_of, parts, snaps, pieces_of)
        return score


class CompiledWalk:
    """:class:`SwapWalk` on the BB pool with its walk compiled
    (:func:`bbopt.planner.jit.pool.walk_pool`): the same methods, the same scores and early
    rejections, the same orders. Its state lives in numpy arrays of two buffers, the current
    plan and the last move's (see :func:`~bbopt.planner.jit.pool.walk_pool`); :meth:`accept`
    makes the last move's the current one. ``tests/planner/jit/test_pool.py`` checks it against
    :class:`SwapWalk` and :meth:`PlanModel.score`.
    """

    __slots__ = ("model", "stride", "score", "_walk", "_alpha", "_jobs", "_orders", "_vals",
                 "_pool", "_side", "_work", "_cur", "_pending")

    def __init__(self, model: PlanModel, order: Sequence[int], stride: int | None = None
                 ) -> None:
        n = model.n
        order = list(order)
        if sorted(order) != list(range(n)):
            raise ValueError("order must be a permutation of the model's jobs")
        if model.named is not None or model.alpha not in (1, 2, 3):
            raise ValueError("the compiled walk scores pool models with alpha 1, 2 or 3")
        import numpy as np

        self.model = model
        self._walk = kernels().walk_pool
        self.stride = stride = stride if stride is not None else STRIDE
        self._alpha = int(model.alpha)
        self._jobs, base = model.compiled_arrays()
        cap = base.shape[1]
        self._orders = np.empty((2, n), dtype=np.int64)
        self._orders[0] = order
        self._vals = np.zeros((2, 3, n + 1))
        self._vals[0, 0] = math.nan  # no planned start yet: the first walk places every job
        snaps = n // stride + 1
        self._pool = np.empty((snaps, 2, 3, cap))
        self._pool[0, 0] = base
        self._side = np.zeros((2, snaps), dtype=np.int64)
        self._work = np.empty((3, cap))
        self._pending = None  # the first plan is already the current one: nothing to accept
        self._cur = 0
        self.score = self._walk(self._jobs, self._orders, self._vals, self._pool, self._side,
                               self._work, 0, 0, 0, True, self._alpha, stride)
        self._cur = 1

    @property
    def order(self) -> list[int]:
        """The current permutation."""
        return self._orders[self._cur].tolist()

    @property
    def start(self) -> list[float]:
        """The current plan's start of each job."""
        return self._vals[self._cur, 0, :-1].tolist()

    def try_swap(self, a: int, b: int, threshold: float = math.inf) -> float:
        """Score of the current order with positions ``a`` and ``b`` swapped (``math.inf`` when
        :meth:`PlanModel.score` would reject it for ``threshold``); :meth:`accept` adopts it."""
        self._pending = None
        lo, hi = (a, b) if a < b else (b, a)
        score = self._walk(self._jobs, self._orders, self._vals, self._pool, self._side,
                          self._work, self._cur, lo, hi, False, self._alpha, self.stride)
        if threshold != math.inf:
            verdict = clear_verdict(score, threshold)
            if verdict is None:  # within rounding of the threshold: the rule position by position
                new = 1 - self._cur
                verdict = rejected_early(self._orders[new].tolist(),
                                         self._vals[new, 2].tolist(), self.model._lbr,
                                         threshold)
            if verdict:
                return math.inf
        self._pending = score
        return score

    def accept(self) -> None:
        """Make the order of the last :meth:`try_swap` (which must not have been rejected by
        its threshold) the current one."""
        if self._pending is None:
            raise ValueError("nothing to accept: the last move was rejected or none was tried")
        self._cur = 1 - self._cur
        self.score = self._pending
        self._pending = None


def swap_walk(model: PlanModel, order: Sequence[int], stride: int | None = None
              ) -> SwapWalk | CompiledWalk | NamedWalk:
    """The incremental walk of ``model`` from ``order``: on the BB pool with alpha 1, 2 or 3
    and numba installed, its compiled twin (:class:`CompiledWalk`, the same answers), else a
    :class:`SwapWalk`."""
    if model.named is None and model.alpha in (1, 2, 3) and kernels() is not None:
        return CompiledWalk(model, order, stride)
    if model.named is not None:
        arrays = model.named_arrays()
        if arrays is not None:
            return NamedWalk(arrays, order, stride if stride is not None else STRIDE)
    return SwapWalk(model, order, stride)


def rejected_early(order: Sequence[int], parts: Sequence[float], bounds: Sequence[float],
                   threshold: float) -> bool:
    """Whether :meth:`PlanModel.score <bbopt.models.plan.PlanModel.score>` rejects ``order``
    early for ``threshold``, told from the plan's partial scores ``parts`` (``parts[k]``: the
    score of the first ``k`` positions) and the bounds of the score terms (the model's
    ``_lbr``): the score's rule, "the partial score plus the bounds of the jobs still to place
    exceeds ``threshold`` after some position", with the same floating-point sums.

    The pool walk places every position and asks this once at the end instead of testing the
    bound at every position: on KTH's queues a rejected move is told apart only at its last
    positions (8.6 of its 9.9 placements were made before), so the per-position test cost more
    than the placements it saved (``benchmarks/speed/optimising_policies.py``). A plan whose score
    is clearly below (above) ``threshold`` is accepted (rejected) at once: every term is at
    least its bound, so each partial score plus bounds is at most the score, up to rounding
    errors of a few units in the last place of the sums, far below ``slack``; only a score
    within ``slack`` of ``threshold`` replays the rule position by position, for the exact
    answer.
    """
    verdict = clear_verdict(parts[-1], threshold)
    if verdict is not None:
        return verdict
    rest = sum(map(bounds.__getitem__, order))
    for k, p in enumerate(order):
        rest -= bounds[p]
        if parts[k + 1] + rest > threshold:
            return True
    return False


def clear_verdict(score: float, threshold: float) -> bool | None:
    """:func:`rejected_early`'s answer for a plan of score ``score`` when it is clear at once
    (a score clearly below or above ``threshold``), else ``None`` (the rule must be replayed
    position by position)."""
    slack = 1e-9 * (abs(threshold) + abs(score))
    if score < threshold - slack:
        return False
    if score > threshold + slack:
        return True
    return None


def _prefix_rest(new: list[int], base: int, parts: list[float], LB: list[float],
                 threshold: float) -> float:
    """The lower bound of the jobs after the shared prefix ``new[:base]``, with the checks the
    full evaluation makes on that prefix (``inf`` when one of them already exceeds
    ``threshold``)."""
    rest = sum(map(LB.__getitem__, new))
    for k in range(base):
        rest -= LB[new[k]]
        if parts[k + 1] + rest > threshold:
            return math.inf
    return rest


def _known_tail(new: list[int], converged: int, score: float, parts: list[float],
                term_of: list[float], LB: list[float], rest: float, threshold: float,
                check: bool) -> float:
    """Add the known terms of ``new[converged:]`` (jobs whose placement did not change) to
    ``score``, filling ``parts``; ``inf`` when the bound exceeds ``threshold`` on the way."""
    for k in range(converged, len(new)):
        p = new[k]
        score += term_of[p]
        parts[k + 1] = score
        if check:
            rest -= LB[p]
            if score + rest > threshold:
                return math.inf
    return score

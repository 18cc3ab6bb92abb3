"""``nsga2`` backend of the window model: the multi-objective genetic algorithm of BBSched with
pymoo's NSGA-II (Fan et al., HPDC 2019, Sections 3.2.2-3.2.3).

Encoding: one bit per window job (Figure 3). Operators: single-point crossover ("swapping genes
of parents at a random position"), bit-flip mutation with a per-gene probability (the paper's
0.05 %), binary tournament, rank-and-crowding survival, duplicates eliminated. Defaults are the
paper's: population P = 20, G = 500 generations, mutation 0.0005; all configurable
(``pop_size``, ``generations``, ``mutation``).

Where the paper is silent or where we depart from it:

- *Repair to feasibility*, vectorised over the population: each infeasible row keeps its
  selected jobs in a random order while they fit (a prefix of cumulative sums), then every row is
  filled with unselected jobs, again in a random order, while they fit (``fill``, on unless an
  objective is not ``monotone``, e.g. ``ssd_waste``: adding a job is never free). Random
  orders are drawn from the ``random_state`` pymoo passes (the ``fast`` engine:
  ``default_rng(seed)``), so a seed fixes the run.
- *Initial population*: random bit strings with about as many jobs as fit, repaired, plus the
  greedy answers (in-order, first-fit, bin-packing, first fit by decreasing BB and by decreasing
  node request) when ``seed_greedy`` (default true) -- the paper starts randomly.
- *Evaluation* is one matrix product per generation (the model's ``evaluate_many``); objectives
  are handed to pymoo as negated utilisation fractions.
- *Termination*: the run stops at ``generations`` (the paper's G), or earlier when the objective
  values of the population's first front have not changed for ``stall`` generations in a row
  (default 150; ``stall=None`` runs all G generations), or when the wall-clock budget is
  spent, whichever comes first; only the first two are reproducible (``info["stopped_by"]``:
  "generations", "stall" or "time"; the pymoo engines also stop, as pymoo does, when a mating
  round finds no offspring that are not duplicates: "no new offspring"). With the paper's tiny
  mutation rate the population settles within a few dozen generations; on random scarce windows
  (w = 50) ``stall=150`` gives the same hypervolume as all 500 generations in about half the
  time (``stall=100``: a third of the time, worst-case HV ratio 0.9985 instead of 0.9997).
  If not one generation fits in the budget the contract's greedy FALLBACK answers.
- *Engines* (``engine``): ``"fast"`` (default) runs the same NSGA-II loop on numpy arrays with
  pymoo's own non-dominated sorting and crowding distance; ``"pymoo"`` runs pymoo's ``NSGA2``
  through ``minimize`` with the operators above, a hashing duplicate check and at most
  ``mating_retries`` mating rounds per generation; ``"pymoo-plain"`` is the same with pymoo's
  default duplicate elimination and mating loop.

Where the time goes in plain pymoo (P = 20, G = 500, w = 50; profiled): not in the evaluation
(one matrix product per generation) but in per-individual bookkeeping -- ``Individual``/
``Population`` get/set on object arrays, the binary tournament written as a Python loop, and
above all the mating loop that repeats selection, crossover, mutation and repair until it has P
offspring that are not duplicates: once the population has converged on a small front most
offspring are duplicates and pymoo repeats mating several times per generation (up to 100).
The ``fast`` engine removes those costs (about 5x faster at w = 50 on
random scarce windows); the remaining time is the repair and the survival sort
(about 1 ms a generation at w = 50). Duplicates are found with a set of packed bit strings.
The ``pymoo`` engines ignore ``stall``.
- *Anytime trace* (``trace=True``, ``fast`` engine): the population's first front at the start
  and at every generation that changes its objective values, as ``(seconds since the backend
  started, selections)`` pairs in ``Result.info["front_trace"]`` (for the solver benchmark).

Status is FEASIBLE (an approximation of the front; no optimality is claimed).
"""

from __future__ import annotations

import time as _time
from typing import Any

import numpy as np
from pymoo.algorithms.moo.nsga2 import NSGA2
from pymoo.core.duplicate import (
    DefaultDuplicateElimination,
    ElementwiseDuplicateElimination,
    NoDuplicateElimination,
)
from pymoo.core.mating import Mating
from pymoo.core.problem import Problem
from pymoo.core.repair import Repair
from pymoo.core.sampling import Sampling
from pymoo.core.termination import Termination
from pymoo.operators.crossover.pntx import SinglePointCrossover
from pymoo.operators.mutation.bitflip import BitflipMutation
from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function
from pymoo.optimize import minimize
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting
from pymoo.util.randomized_argsort import randomized_argsort

from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.models.window import OBJECTIVES, WindowModel
from bbopt.solvers.base import Budget, BudgetExceeded, Result
from bbopt.solvers.scalarize import Candidates, pareto_result

DEFAULT_POP_SIZE = 20
DEFAULT_GENERATIONS = 500
DEFAULT_MUTATION = 0.0005
DEFAULT_STALL: int | None = 150
FILL_PASSES = 3


class _WindowProblem(Problem):
    def __init__(self, model: WindowModel) -> None:
        super().__init__(n_var=model.size, n_obj=len(model.objectives), xl=0, xu=1, vtype=bool)
        self.model = model
        self.scales = model.scales()

    def _evaluate(self, X, out, *args, **kwargs):
        out["F"] = -self.model.evaluate_many(X) / self.scales


def repair_rows(model: WindowModel, X: np.ndarray, rng: np.random.Generator,
                fill: bool = True) -> np.ndarray:
    """Make every row of ``X`` feasible (see the module docstring), vectorised."""
    X = np.asarray(X, dtype=bool).copy()
    if model.has_ssd:  # placement rows are not prefix-monotone per resource: row by row
        return np.array([_repair_one(model, x, rng, fill) for x in X])
    n, b = model.nodes, model.bb
    cap_n = model.free_nodes
    cap_b = model.bb_room
    allowed = (n <= cap_n) & (b <= cap_b)
    X[:, model.forced] = True
    X &= allowed[None, :]
    Y = X
    bad = np.flatnonzero((X @ n > cap_n) | (X @ b > cap_b))
    if bad.size:
        # Forced jobs first, then a random order; keep the prefix that fits.
        Xs = X[bad]
        perm = np.argsort(rng.random(Xs.shape) - model.forced[None, :] * 2.0, axis=1)
        r = np.arange(len(bad))[:, None]
        Xp = Xs[r, perm]
        keep = Xp & (np.cumsum(Xp * n[perm], axis=1) <= cap_n) & (
            np.cumsum(Xp * b[perm], axis=1) <= cap_b)
        Ys = np.zeros_like(Xs)
        Ys[r, perm] = keep
        Y[bad] = Ys
    if fill:
        # Fill in a random order, vectorised over the rows that still have room: each pass adds
        # the longest prefix of the fitting candidates (cumulative sums); a few passes come close
        # to first fit.
        for _ in range(FILL_PASSES):
            free_n = cap_n - Y @ n
            free_b = cap_b - Y @ b
            cand = ~Y & allowed[None, :] & (n[None, :] <= free_n[:, None]) & (
                b[None, :] <= free_b[:, None])
            rows = np.flatnonzero(cand.any(axis=1))
            if rows.size == 0:
                break
            cs = cand[rows]
            perm = np.argsort(rng.random(cs.shape), axis=1)
            r = np.arange(len(rows))[:, None]
            cp = cs[r, perm]
            np_ = np.where(cp, n[perm], 0)
            bp = np.where(cp, b[perm], 0.0)
            take = cp & (np.cumsum(np_, axis=1) <= free_n[rows, None]) & (
                np.cumsum(bp, axis=1) <= free_b[rows, None])
            add = np.zeros_like(cs)
            add[r, perm] = take
            Y[rows] |= add
    return Y


def _repair_one(model: WindowModel, x: np.ndarray, rng: np.random.Generator,
                fill: bool) -> np.ndarray:
    order = np.argsort(rng.random(model.size) - model.forced * 2.0)
    y = np.zeros(model.size, dtype=bool)
    for i in order:
        if x[i] or model.forced[i]:
            y[i] = True
            if not model.feasible_many(y[None, :], check_forced=False)[0]:
                y[i] = False
    if fill:
        for i in rng.permutation(model.size):
            if not y[i]:
                y[i] = True
                if not model.feasible_many(y[None, :], check_forced=False)[0]:
                    y[i] = False
    return y


class _Repair(Repair):
    def __init__(self, model: WindowModel, fill: bool) -> None:
        super().__init__()
        self.model = model
        self.fill = fill

    def _do(self, problem, X, random_state=None, **kwargs):
        return repair_rows(self.model, X, random_state, self.fill)


class _Sampling(Sampling):
    def __init__(self, model: WindowModel, seeds: np.ndarray, fill: bool) -> None:
        super().__init__()
        self.model = model
        self.seeds = seeds
        self.fill = fill

    def _do(self, problem, n_samples, random_state=None, **kwargs):
        m = self.model
        density = min(1.0, m.free_nodes / max(float(m.nodes.sum()), 1.0))
        X = random_state.random((n_samples, m.size)) < density
        X = repair_rows(m, X, random_state, self.fill)
        k = min(len(self.seeds), n_samples)
        if k:
            X[:k] = self.seeds[:k]
        return X


class _HashDuplicates(ElementwiseDuplicateElimination):
    """Duplicates by the bytes of the bit string: O(n) hashing instead of pairwise distances."""

    def _do(self, pop, other, is_duplicate):
        X = pop.get("X")
        seen = set()
        if other is not None:
            seen.update(np.packbits(np.asarray(o, dtype=bool)).tobytes()
                        for o in other.get("X"))
        for i, x in enumerate(X):
            key = np.packbits(np.asarray(x, dtype=bool)).tobytes()
            if key in seen:
                is_duplicate[i] = True
            else:
                seen.add(key)
        return is_duplicate


class _Stop(Termination):
    def __init__(self, generations: int, deadline: float) -> None:
        super().__init__()
        self.generations = generations
        self.deadline = deadline
        self.by_time = False

    def _update(self, algorithm):
        if _time.perf_counter() >= self.deadline:
            self.by_time = True
            return 1.0
        return algorithm.n_gen / self.generations


def _survive(F: np.ndarray, n: int, rng: np.random.Generator, nds, crowding
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """NSGA-II survival of ``n`` rows of ``F`` (minimised): whole fronts, the last one cut by
    crowding distance. Returns (indices, rank, crowding) of the survivors."""
    fronts = nds.do(F, n_stop_if_ranked=n)
    keep, ranks, crowd = [], [], []
    for k, front in enumerate(fronts):
        cd = crowding.do(F[front], n_remove=0) if len(front) > 1 else np.full(len(front), np.inf)
        if len(keep) + len(front) > n:
            take = randomized_argsort(cd, order="descending", method="numpy",
                                      random_state=rng)[:n - len(keep)]
            front, cd = np.asarray(front)[take], cd[take]
        keep.extend(front)
        ranks.extend([k] * len(front))
        crowd.extend(cd)
        if len(keep) >= n:
            break
    return np.asarray(keep), np.asarray(ranks), np.asarray(crowd, dtype=float)


def _keys(X: np.ndarray) -> np.ndarray:
    return np.packbits(X, axis=1).view(np.void(-(-X.shape[1] // 8))).ravel() if X.size else \
        np.zeros(len(X), dtype=np.void(1))


def _tournament(rank: np.ndarray, crowd: np.ndarray, n: int, rng: np.random.Generator
                ) -> np.ndarray:
    """``n`` binary tournaments among the population: two rows drawn with replacement, the lower
    rank wins, then the larger crowding distance, then a coin (below 0.5: the first). Returns
    the winners as two rows of parents, the first ``n // 2`` winners against the rest."""
    ab = rng.integers(0, len(rank), (2, n))
    a, b = ab[0], ab[1]
    coin = rng.random(n) < 0.5
    a_wins = (rank[a] < rank[b]) | ((rank[a] == rank[b]) & (
        (crowd[a] > crowd[b]) | ((crowd[a] == crowd[b]) & coin)))
    return np.where(a_wins, a, b).reshape(2, -1)


def _crossover(p1: np.ndarray, p2: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Single-point crossover of each pair of rows: a cut drawn in ``[1, w)`` (genes before it
    from one parent, from it on from the other); the first children then the second."""
    w = p1.shape[1]
    cut = rng.integers(1, max(w, 2), len(p1))[:, None]
    left = np.arange(w)[None, :] < cut
    return np.concatenate([np.where(left, p1, p2), np.where(left, p2, p1)])


def _offspring(model: WindowModel, X: np.ndarray, rank: np.ndarray, crowd: np.ndarray,
               n: int, mutation: float, fill: bool, rng: np.random.Generator) -> np.ndarray:
    """One generation's ``n`` children (``n`` even): tournament, crossover, bit flips (each gene
    flipped when its draw is below ``mutation``), repair; the draws in that order."""
    parents = _tournament(rank, crowd, n, rng)
    off = _crossover(X[parents[0]], X[parents[1]], rng)
    off ^= rng.random(off.shape) < mutation
    return repair_rows(model, off, rng, fill)


def _fast_nsga2(model: WindowModel, rng: np.random.Generator, seeds: np.ndarray, fill: bool,
                pop_size: int, generations: int, mutation: float, deadline: float,
                stall: int | None = None, on_front=None) -> tuple[np.ndarray, int, str]:
    """NSGA-II on numpy arrays with pymoo's non-dominated sorting and crowding distance.

    The same algorithm as pymoo's ``NSGA2`` with the operators above (binary tournament on rank
    then crowding, single-point crossover, bit-flip mutation, repair, duplicate elimination,
    (P + P) elitist survival), without pymoo's per-individual objects. Returns the final
    population, the generations run and what stopped it ("generations", "time", "stall":
    ``stall`` generations in a row in which the objective values of the population's first
    front did not change).
    """
    scales = model.scales()
    nds = NonDominatedSorting()
    crowding = get_crowding_function("cd")
    sampling = _Sampling(model, seeds, fill)
    X = np.asarray(sampling._do(None, pop_size, random_state=rng), dtype=bool)
    X = X[np.unique(_keys(X), return_index=True)[1]]
    F = -model.evaluate_many(X) / scales
    idx, rank, crowd = _survive(F, min(pop_size, len(X)), rng, nds, crowding)
    X, F = X[idx], F[idx]
    gen = 1
    n_off = pop_size + (pop_size % 2)
    seen = {x.tobytes() for x in np.packbits(X, axis=1)}
    quiet = 0
    front_values = {f.tobytes() for f in F[rank == 0]}
    if on_front is not None:  # the first front, at the start and whenever its values change
        on_front(X[rank == 0])
    while gen < generations:
        if _time.perf_counter() >= deadline:
            return X, gen, "time"
        if stall is not None and quiet >= stall:
            return X, gen, "stall"
        gen += 1
        quiet += 1
        off = _offspring(model, X, rank, crowd, n_off, mutation, fill, rng)
        # Duplicates among the offspring and with the population are dropped.
        fresh = np.zeros(len(off), dtype=bool)
        new_keys = []
        for i, key in enumerate(np.packbits(off, axis=1)):
            k = key.tobytes()
            if k not in seen:
                seen.add(k)
                fresh[i] = True
                new_keys.append(k)
        if not new_keys:
            continue
        off = off[fresh]
        Xa = np.concatenate([X, off])
        Fa = np.concatenate([F, -model.evaluate_many(off) / scales])
        idx, rank, crowd = _survive(Fa, pop_size, rng, nds, crowding)
        X, F = Xa[idx], Fa[idx]
        values = {f.tobytes() for f in F[rank == 0]}
        if values != front_values:
            front_values, quiet = values, 0
            if on_front is not None:
                on_front(X[rank == 0])
        seen = {x.tobytes() for x in np.packbits(X, axis=1)}
    return X, gen, "generations"


def _greedy_seeds(model: WindowModel) -> np.ndarray:
    seeds = [model.greedy("in-order"), model.greedy("first-fit"), model.greedy("bin-packing")]
    for request in (model.bb, model.nodes):  # first fit by decreasing BB, then nodes
        seeds.append(model.greedy("first-fit", order=np.argsort(-request, kind="stable")))
    X = np.unique(np.array(seeds, dtype=bool), axis=0)
    return X[model.feasible_many(X)]


def solve_nsga2(model: WindowModel, budget: Budget, seed: int, *,
                pop_size: int = DEFAULT_POP_SIZE, generations: int = DEFAULT_GENERATIONS,
                mutation: float = DEFAULT_MUTATION, seed_greedy: bool = True,
                fill: bool | None = None, engine: str = "fast", mating_retries: int = 3,
                form: str = "pareto", stall: int | None = DEFAULT_STALL, trace: bool = False,
                **_: Any) -> Result:
    """Approximate the Pareto front with NSGA-II (see the module docstring)."""
    t0 = _time.perf_counter()
    fronts: list = []

    def on_front(X: np.ndarray) -> None:
        fronts.append((_time.perf_counter() - t0, X.astype(int).tolist()))
    deadline = t0 + budget.seconds
    if model.size == 0:
        x = np.zeros(0, dtype=bool)
        return pareto_result(Candidates(model), [x], Status.OPTIMAL, "nsga2", {})
    if fill is None:
        fill = all(OBJECTIVES[n].monotone for n in model.objectives)
    if _time.perf_counter() >= deadline:
        raise BudgetExceeded
    seeds = _greedy_seeds(model) if seed_greedy else np.zeros((0, model.size), dtype=bool)
    if engine == "fast":
        rng = np.random.default_rng(seed)
        X, gens, stopped = _fast_nsga2(model, rng, seeds, fill, pop_size, generations, mutation,
                                       deadline, stall, on_front if trace else None)
        if stopped == "time" and gens <= 1:  # not one generation in the budget: the fallback
            raise BudgetExceeded
        X = X[model.feasible_many(X)]
        if len(X) == 0:
            raise BudgetExceeded
        info = {"generations": gens, "stopped_by": stopped, "engine": engine}
        if trace:
            info["front_trace"] = fronts
        return pareto_result(Candidates(model), list(X), Status.FEASIBLE, "nsga2", info)
    if engine not in ("pymoo", "pymoo-plain"):
        raise InputError(f"unknown engine {engine!r}; known: fast, pymoo, pymoo-plain",
                         field="engine")
    crossover = SinglePointCrossover()
    mutate = BitflipMutation(prob=1.0, prob_var=mutation)
    repair = _Repair(model, fill)
    if engine == "pymoo-plain":  # pymoo's own duplicate check and mating loop
        algorithm = NSGA2(pop_size=pop_size, sampling=_Sampling(model, seeds, fill),
                          crossover=crossover, mutation=mutate, repair=repair,
                          eliminate_duplicates=DefaultDuplicateElimination())
    else:
        dedup = _HashDuplicates() if pop_size > 1 else NoDuplicateElimination()
        algorithm = NSGA2(pop_size=pop_size, sampling=_Sampling(model, seeds, fill),
                          crossover=crossover, mutation=mutate, repair=repair,
                          eliminate_duplicates=dedup)
        algorithm.mating = Mating(algorithm.mating.selection, crossover, mutate, repair=repair,
                                  eliminate_duplicates=dedup, n_max_iterations=mating_retries)
    stop = _Stop(generations, deadline)
    if _time.perf_counter() >= deadline:
        raise BudgetExceeded
    res = minimize(_WindowProblem(model), algorithm, stop, seed=seed, verbose=False,
                   save_history=False, copy_algorithm=False, copy_termination=False)
    pop = res.pop if res.pop is not None else algorithm.pop
    X = np.asarray(pop.get("X"), dtype=bool)
    X = X[model.feasible_many(X)]
    if len(X) == 0:
        raise BudgetExceeded
    # (pymoo's ``n_gen`` is one past the generations run when ``minimize`` returns: it counts
    # the next one; and pymoo stops by itself when a mating finds no new offspring)
    ran = max(int(algorithm.n_gen or 0) - 1, 0)
    stopped = ("time" if stop.by_time else "generations" if ran >= generations
               else "no new offspring")
    info = {"generations": ran, "stopped_by": stopped, "engine": engine}
    return pareto_result(Candidates(model), list(X), Status.FEASIBLE, "nsga2", info)

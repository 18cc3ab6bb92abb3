"""The mating step of the ``nsga2`` backend's fast engine (Fan et al., HPDC 2019, Section
3.2.3: binary tournament, single-point crossover, bit-flip mutation) worked by hand on scripted
draws; the front bookkeeping that drives the stall rule; and what the ``pymoo`` engines hand
pymoo (operators, sizes, duplicate checks)."""

from __future__ import annotations

import time

import numpy as np
import pytest
from pymoo.core.duplicate import DefaultDuplicateElimination, NoDuplicateElimination
from pymoo.operators.crossover.pntx import SinglePointCrossover
from pymoo.operators.mutation.bitflip import BitflipMutation

from bbopt.core import GB
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget
from bbopt.solvers.window import nsga2
from bbopt.solvers.window.nsga2 import (
    _crossover,
    _fast_nsga2,
    _greedy_seeds,
    _HashDuplicates,
    _offspring,
    _Repair,
    _Sampling,
    _tournament,
    solve_nsga2,
)


class Scripted:
    """A generator that hands out the given draws in order, each asked with its own shape
    (integers within ``[low, high)``); the calls are recorded."""

    def __init__(self, *draws) -> None:
        self.draws = [np.asarray(d) for d in draws]
        self.calls: list[tuple] = []

    def _next(self, size) -> np.ndarray:
        d = self.draws.pop(0)
        assert d.shape == (size if isinstance(size, tuple) else (size,))
        return d

    def integers(self, low, high, size):
        self.calls.append(("integers", low, high, size))
        d = self._next(size)
        assert ((low <= d) & (d < high)).all()
        return d

    def random(self, size):
        self.calls.append(("random", size))
        return self._next(size)


def bits(*rows: str) -> np.ndarray:
    return np.array([[c == "1" for c in r] for r in rows], dtype=bool)


# --- tournament ---------------------------------------------------------------------------

def test_tournament_lower_rank_then_larger_crowding_then_a_coin_below_one_half():
    rank = np.array([0, 0, 1, 0])
    crowd = np.array([2.0, np.inf, 5.0, 2.0])
    a = [0, 2, 0, 1, 0, 0, 3, 2]
    b = [2, 0, 1, 0, 3, 3, 0, 0]
    coin = [0.9, 0.1, 0.1, 0.9, 0.2, 0.5, 0.7, 0.1]
    rng = Scripted([a, b], coin)
    parents = _tournament(rank, crowd, 8, rng)
    # rank 0 beats 1 either side (even with less crowding and the coin for a); equal ranks: the
    # larger distance whatever the coin; equal distances: a below 0.5, b at 0.5 and above
    assert parents.tolist() == [[0, 0, 1, 1], [0, 3, 0, 0]]
    assert rng.calls == [("integers", 0, 4, (2, 8)), ("random", 8)]


def test_tournament_draws_every_row_of_the_population():
    """Equal ranks and distances: the coin decides, and both rows of two win somewhere."""
    parents = _tournament(np.zeros(2, int), np.ones(2), 40, np.random.default_rng(0))
    assert parents.shape == (2, 20)
    assert set(parents.ravel().tolist()) == {0, 1}


# --- crossover ----------------------------------------------------------------------------

def test_crossover_keeps_the_genes_before_the_cut_and_swaps_from_it_on():
    p1, p2 = bits("1111", "1010"), bits("0000", "0101")
    rng = Scripted([1, 3])
    assert _crossover(p1, p2, rng).astype(int).tolist() == [
        [1, 0, 0, 0], [1, 0, 1, 1], [0, 1, 1, 1], [0, 1, 0, 0]]
    assert rng.calls == [("integers", 1, 4, 2)]


def test_crossover_of_two_genes_always_cuts_between_them():
    p1, p2 = bits(*["11"] * 30), bits(*["00"] * 30)
    children = _crossover(p1, p2, np.random.default_rng(3)).astype(int).tolist()
    assert children == [[1, 0]] * 30 + [[0, 1]] * 30


# --- one generation's children --------------------------------------------------------------

def roomy(w: int) -> WindowModel:
    """Every selection fits: the repair neither drops nor draws without the fill."""
    return WindowModel(nodes=[1] * w, bb=[0.0] * w, free_nodes=w, free_bb=0.0)


def test_offspring_flip_the_genes_drawn_below_the_mutation_rate_and_keep_unfilled_rows():
    X = bits("1100", "0011")
    rank, crowd = np.array([0, 0]), np.array([1.0, 1.0])
    rng = Scripted([[0, 1], [1, 0]], [0.9, 0.9],  # tournaments: 0 against 1, 1 against 0
                   [2],  # the cut
                   [[0.3, 0.25, 0.1, 0.9], [0.5, 0.5, 0.5, 0.0]])  # mutation draws
    off = _offspring(roomy(4), X, rank, crowd, 2, 0.25, False, rng)
    # b wins both at 0.9: parents 1 then 0; children 0000 and 1111 before the flips, then a
    # flip where a draw is below 0.25 (not at it)
    assert off.astype(int).tolist() == [[0, 0, 1, 0], [1, 1, 1, 0]]
    assert rng.draws == []  # nothing drawn for a fill that is off


def test_offspring_repair_with_the_fill_when_asked():
    X = bits("10", "01")
    m = roomy(2)
    off = _offspring(m, X, np.array([0, 0]), np.array([1.0, 1.0]), 2, 0.0, True,
                     np.random.default_rng(0))
    assert off.astype(int).tolist() == [[1, 1], [1, 1]]


# --- the run: offspring count and the front's bookkeeping -----------------------------------

def run(model, monkeypatch, pop_size=20, generations=200, stall=5, fill=True):
    """The fast engine, recording the size of each generation's mating and, at each front
    change, how many generations had mated."""
    sizes, changes = [], []
    real = nsga2._offspring

    def counting(model, X, rank, crowd, n, *args):
        sizes.append(n)
        return real(model, X, rank, crowd, n, *args)
    monkeypatch.setattr(nsga2, "_offspring", counting)
    X, gens, stopped = _fast_nsga2(
        model, np.random.default_rng(0), np.zeros((0, model.size), bool), fill, pop_size,
        generations, 0.0005, time.perf_counter() + 60, stall,
        lambda front: changes.append(len(sizes)))
    return X, gens, stopped, sizes, changes


def test_an_odd_population_mates_one_more_child_to_make_pairs(monkeypatch):
    _, gens, _, sizes, _ = run(roomy(6), monkeypatch, pop_size=5, generations=3, stall=None)
    assert gens == 3 and sizes == [6, 6]


def test_new_rows_of_the_same_front_values_are_no_change_and_the_stall_counts_from_the_start(
        monkeypatch):
    """Ten like jobs, two fit: every maximal row has the same values; crossover finds new
    such rows (45 of them, a population of 20), none changes the front."""
    m = WindowModel(nodes=[1] * 10, bb=[0.0] * 10, free_nodes=2, free_bb=0.0)
    X, gens, stopped, sizes, changes = run(m, monkeypatch, stall=5)
    assert (gens, stopped, changes) == (6, "stall", [0])
    assert X.sum(axis=1).tolist() == [2] * len(X)


def test_the_stall_counts_from_the_last_change_of_the_front(monkeypatch):
    rng = np.random.default_rng(7)  # a random scarce window of 14 jobs
    m = WindowModel(nodes=rng.choice([1, 2, 4, 8, 16], 14),
                    bb=np.where(rng.random(14) < 0.5, 0, rng.integers(1, 60, 14)) * GB,
                    free_nodes=int(rng.integers(8, 30)), free_bb=int(rng.integers(20, 90)) * GB,
                    total_nodes=40, total_bb=100 * GB)
    _, gens, stopped, sizes, changes = run(m, monkeypatch, pop_size=6, stall=3)
    assert len(changes) == 4 and stopped == "stall"
    assert gens == 1 + changes[-1] + 3


# --- what the pymoo engines hand pymoo ------------------------------------------------------

class Handed(Exception):
    pass


def handed(monkeypatch, **kw):
    """The problem, algorithm and options ``solve_nsga2`` hands ``minimize``."""
    got = {}

    def minimize(problem, algorithm, termination, **options):
        got.update(algorithm=algorithm, options=options)
        raise Handed
    monkeypatch.setattr(nsga2, "minimize", minimize)
    m = WindowModel(nodes=[80, 10, 40], bb=[0.0, 0.0, 0.0], free_nodes=100, free_bb=0.0)
    with pytest.raises(Handed):
        solve_nsga2(m, Budget(10.0), 3, **kw)
    return got["algorithm"], got["options"]


@pytest.mark.parametrize("engine, check", [("pymoo", _HashDuplicates),
                                           ("pymoo-plain", DefaultDuplicateElimination)])
def test_the_pymoo_engines_run_the_papers_operators(monkeypatch, engine, check):
    alg, options = handed(monkeypatch, engine=engine, pop_size=7, mutation=0.25)
    assert alg.pop_size == 7
    assert isinstance(alg.initialization.sampling, _Sampling)
    assert alg.initialization.sampling.fill is True
    mating = alg.mating
    assert isinstance(mating.crossover, SinglePointCrossover)
    assert isinstance(mating.mutation, BitflipMutation)
    assert mating.mutation.prob_var.value == 0.25
    assert isinstance(mating.repair, _Repair) and mating.repair.fill is True
    assert isinstance(alg.repair, _Repair)
    assert type(alg.eliminate_duplicates) is check
    assert type(mating.eliminate_duplicates) is check
    assert options == dict(seed=3, verbose=False, save_history=False, copy_algorithm=False,
                           copy_termination=False)


@pytest.mark.parametrize("pop_size, check", [(1, NoDuplicateElimination),
                                             (2, _HashDuplicates)])
def test_a_population_of_one_has_no_duplicates_to_check(monkeypatch, pop_size, check):
    alg, _ = handed(monkeypatch, engine="pymoo", pop_size=pop_size, mating_retries=4)
    assert type(alg.eliminate_duplicates) is check
    assert alg.mating.n_max_iterations == 4


# --- the greedy seeds ---------------------------------------------------------------------

def test_greedy_seeds_take_jobs_of_equal_requests_in_queue_order():
    """First fit by decreasing nodes: 1 (2 nodes, 6 B), 3 (6 B more: over the 10 B) skipped,
    then 5 before 7 (equal requests, queue order): {1, 5}. By increasing nodes it would be
    {0, 2, 4, 6}; 7 before 5, {1, 7}."""
    m = WindowModel(nodes=[1, 2, 1, 2, 1, 2, 1, 2], bb=[0.0, 6.0, 0.0, 6.0, 0, 0, 0, 0],
                    free_nodes=4, free_bb=10.0)
    got = [tuple(np.flatnonzero(r).tolist()) for r in _greedy_seeds(m)]
    assert (1, 5) in got
    assert (1, 7) not in got and (0, 2, 4, 6) not in got

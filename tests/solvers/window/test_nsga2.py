"""The ``nsga2`` backend of the window model: BBSched's multi-objective genetic algorithm (Fan
et al., HPDC 2019, Sections 3.2.2-3.2.3) with pymoo's NSGA-II. The repair to feasibility, the
seeded initial population, the survival by rank and crowding, the stopping rules (generations,
stall, wall clock: FALLBACK when not one generation fits), the choice from the front, the
determinism by seed and the agreement with enumeration where the front is small."""

from __future__ import annotations

import types

import numpy as np
import pytest
from pymoo.core.population import Population
from pymoo.operators.survival.rank_and_crowding.metrics import get_crowding_function
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

from bbopt.core import GB, TB, Status
from bbopt.errors import InputError
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget, solve
from bbopt.solvers.base import BudgetExceeded
from bbopt.solvers.window import nsga2
from bbopt.solvers.window.nsga2 import (
    _greedy_seeds,
    _HashDuplicates,
    _keys,
    _Sampling,
    _Stop,
    _survive,
    _WindowProblem,
    repair_rows,
    solve_nsga2,
)


def table1(**kw) -> WindowModel:
    """Fan et al.'s Table 1: 100 nodes and 100 TB free, five jobs (nodes, TB)."""
    return WindowModel(nodes=[80, 10, 40, 10, 20], bb=np.array([20, 85, 5, 0, 0]) * TB,
                       free_nodes=100, free_bb=100 * TB, **kw)


def picks(result) -> list[list[int]]:
    return [np.flatnonzero(s.x).tolist() for s in result.pareto]


def rows(Y) -> list[tuple[int, ...]]:
    return [tuple(np.flatnonzero(y).tolist()) for y in Y]


class Clock:
    """A fake ``perf_counter`` that advances one second at every reading."""

    def __init__(self) -> None:
        self.now = -1.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


# --- repair ---------------------------------------------------------------------------------


def test_repair_keeps_a_random_prefix_that_fits_and_nothing_more_without_fill():
    """4 free nodes, jobs of 2, 2 and 1: the row of all three (5 nodes) keeps the two first of
    a random order (cumulative 2 + 2 = 4 or 2 + 1 or 1 + 2: at the capacity fits), never one
    alone; over 40 rows every pair turns up."""
    m = WindowModel(nodes=[2, 2, 1], bb=[0.0] * 3, free_nodes=4, free_bb=0.0)
    Y = repair_rows(m, np.ones((40, 3), dtype=bool), np.random.default_rng(0), fill=False)
    assert set(rows(Y)) == {(0, 1), (0, 2), (1, 2)}
    feasible_row = np.array([[True, False, True]])
    assert rows(repair_rows(m, feasible_row, np.random.default_rng(0), fill=False)) == [(0, 2)]
    assert rows(repair_rows(m, [[True, False, False]], np.random.default_rng(0),
                            fill=False)) == [(0,)]


def test_repair_fill_adds_jobs_up_to_exactly_the_free_capacity():
    """Job 0 alone leaves 2 of 4 nodes: the fill takes job 1 (2 nodes, exactly the room) or job
    2 (1 node), whichever its random order puts first, and then nothing fits any more."""
    m = WindowModel(nodes=[2, 2, 1], bb=[0.0] * 3, free_nodes=4, free_bb=0.0)
    Y = repair_rows(m, np.tile([True, False, False], (30, 1)), np.random.default_rng(1))
    assert set(rows(Y)) == {(0, 1), (0, 2)}
    two = WindowModel(nodes=[2, 2], bb=[0.0, 0.0], free_nodes=4, free_bb=0.0)
    assert rows(repair_rows(two, [[True, False]], np.random.default_rng(0))) == [(0, 1)]
    assert rows(repair_rows(two, [[False, False]], np.random.default_rng(0))) == [(0, 1)]


def test_repair_fill_needs_several_passes_to_reach_a_maximal_selection():
    """Jobs of 3, 2 and 1 nodes on 4: a pass adds the longest fitting prefix of a random order
    (2 then 3 stops at 2); the next passes add what still fits (the 1): every row ends
    maximal, {0, 2} or {1, 2}."""
    m = WindowModel(nodes=[3, 2, 1], bb=[0.0] * 3, free_nodes=4, free_bb=0.0)
    Y = repair_rows(m, np.zeros((40, 3), dtype=bool), np.random.default_rng(2))
    assert set(rows(Y)) == {(0, 2), (1, 2)}


def test_repair_bb_room_includes_the_fit_slack():
    """10 GB free of a 20 GB platform: 6 + 4 GB + 20 B (the 1e-9 slack) fits, 21 B over does
    not, and a fill adds a job of exactly the BB left."""
    for extra, kept in ((20.0, {(0, 1)}), (21.0, {(0,), (1,)})):
        m = WindowModel(nodes=[1, 1], bb=[6 * GB, 4 * GB + extra], free_nodes=3,
                        free_bb=10 * GB, total_bb=20 * GB)
        Y = repair_rows(m, np.ones((20, 2), dtype=bool), np.random.default_rng(0), fill=False)
        assert set(rows(Y)) == kept, extra
    m = WindowModel(nodes=[1, 1], bb=[6 * GB, 4 * GB], free_nodes=3, free_bb=10 * GB,
                    total_bb=20 * GB)
    assert rows(repair_rows(m, [[True, False]], np.random.default_rng(0))) == [(0, 1)]
    over = WindowModel(nodes=[1, 1], bb=[6 * GB, 4 * GB + 21.0], free_nodes=3,
                       free_bb=10 * GB, total_bb=20 * GB)
    assert rows(repair_rows(over, [[True, False]], np.random.default_rng(0))) == [(0,)]


def test_repair_drops_jobs_larger_than_the_machine_and_keeps_forced_jobs_first():
    """A 5-node job on 4 free nodes is never selected, not even by the fill; a forced 3-node
    job beats the other 3-node job in every row, and is added to a row that lacks it."""
    big = WindowModel(nodes=[5, 1], bb=[0.0, 0.0], free_nodes=4, free_bb=0.0)
    assert set(rows(repair_rows(big, np.ones((10, 2), dtype=bool),
                                np.random.default_rng(0)))) == {(1,)}
    bigbb = WindowModel(nodes=[1, 1], bb=[11 * GB, 0.0], free_nodes=4, free_bb=10 * GB)
    assert set(rows(repair_rows(bigbb, np.ones((10, 2), dtype=bool),
                                np.random.default_rng(0)))) == {(1,)}
    m = WindowModel(nodes=[3, 3], bb=[0.0, 0.0], free_nodes=4, free_bb=0.0,
                    forced=[False, True])
    X = np.array([[True, True]] * 20 + [[True, False]] * 20)
    assert set(rows(repair_rows(m, X, np.random.default_rng(3), fill=False))) == {(1,)}


def test_repair_with_node_ssd_places_row_by_row():
    """Free nodes of 100 and 200 GB of SSD: only one of the two 150 GB jobs can be placed; the
    forced one wins; the fill adds the 50 GB job on the smaller node."""
    kw = dict(nodes=[1, 1, 1], bb=[0.0] * 3, free_nodes=2, free_bb=0.0,
              ssd=[150 * GB, 150 * GB, 50 * GB], free_node_ssd=[100 * GB, 200 * GB])
    m = WindowModel(**kw)
    X = np.tile([True, True, False], (30, 1))
    assert set(rows(repair_rows(m, X, np.random.default_rng(0), fill=False))) == {(0,), (1,)}
    assert set(rows(repair_rows(m, X, np.random.default_rng(0)))) == {(0, 2), (1, 2)}
    forced = WindowModel(**kw, forced=[False, True, False])
    assert set(rows(repair_rows(forced, X, np.random.default_rng(0), fill=False))) == {(1,)}
    assert rows(repair_rows(forced, [[False, False, False]], np.random.default_rng(0))) == [
        (1, 2)]


# --- initial population, keys, duplicates, survival -------------------------------------------


def test_greedy_seeds_of_table1_are_the_distinct_feasible_greedy_answers():
    """In order: J1 then J2 overflows the BB; first fit: J1 and J4; by decreasing BB: J2-J5 (a
    Pareto point); by decreasing nodes: J1 and J5 (the other one); bin packing repeats one."""
    assert rows(_greedy_seeds(table1())) == [(1, 2, 3, 4), (0,), (0, 4), (0, 3)]
    # Two forced 3-node jobs on 4 nodes: no greedy answer is feasible.
    m = WindowModel(nodes=[3, 3, 1], bb=[0.0] * 3, free_nodes=4, free_bb=0.0,
                    forced=[True, True, False])
    assert _greedy_seeds(m).shape == (0, 3)


def test_sampling_puts_the_seeds_first_and_draws_about_as_many_jobs_as_fit():
    """One free node, ten one-node jobs: each random row selects a job with probability 1/10
    (the free nodes over the nodes asked), so about 0.9^10 = 35 % of 200 rows are empty
    without fill, none with; the seeds are the first rows, as many as asked for."""
    m = WindowModel(nodes=[1] * 10, bb=[0.0] * 10, free_nodes=1, free_bb=0.0)
    seeds = np.eye(10, dtype=bool)[[7, 3, 5]]
    X = _Sampling(m, seeds, fill=False)._do(None, 200, random_state=np.random.default_rng(0))
    assert X.shape == (200, 10) and X.sum(axis=1).max() == 1
    assert rows(X[:3]) == [(7,), (3,), (5,)]
    assert 50 <= int((X.sum(axis=1) == 0).sum()) <= 90
    filled = _Sampling(m, seeds, fill=True)._do(None, 50, random_state=np.random.default_rng(0))
    assert (filled.sum(axis=1) == 1).all()
    two = _Sampling(m, seeds, fill=False)._do(None, 2, random_state=np.random.default_rng(0))
    assert rows(two) == [(7,), (3,)]
    # Jobs asking fewer nodes than are free: every bit drawn, every job kept.
    roomy = WindowModel(nodes=[1, 2], bb=[0.0, 0.0], free_nodes=6, free_bb=0.0)
    none = np.zeros((0, 2), dtype=bool)
    got = _Sampling(roomy, none, fill=False)._do(None, 5, random_state=np.random.default_rng(0))
    assert got.all()


def test_keys_are_one_packed_bit_string_per_row():
    X = np.array([[1, 0, 1, 0, 0, 0, 0, 0, 1], [1, 0, 1, 0, 0, 0, 0, 0, 0],
                  [1, 0, 1, 0, 0, 0, 0, 0, 1]], dtype=bool)
    k = _keys(X)
    assert k.shape == (3,) and k.dtype.itemsize == 2
    assert k[0] == k[2] and k[0] != k[1]
    assert _keys(X[:, :8]).dtype.itemsize == 1
    assert len(_keys(np.zeros((0, 4), dtype=bool))) == 0
    assert len(_keys(np.zeros((3, 0), dtype=bool))) == 3


def test_hash_duplicates_against_the_others_and_within_the_population():
    a, b, c = [1, 0, 1], [0, 1, 1], [1, 1, 0]
    pop = Population.new(X=np.array([a, b, a, c], dtype=bool))
    other = Population.new(X=np.array([c], dtype=bool))
    dup = _HashDuplicates()._do(pop, None, np.zeros(4, dtype=bool))
    assert dup.tolist() == [False, False, True, False]
    dup = _HashDuplicates()._do(pop, other, np.zeros(4, dtype=bool))
    assert dup.tolist() == [False, False, True, True]


def test_survival_takes_whole_fronts_then_the_least_crowded():
    """Minimised points: (0, 0) alone on the first front; (0, 4), (1, 3), (2, 1), (4, 0) on the
    second, whose crowding distances are inf, 0.625, 0.75 and inf (the neighbours' gaps over
    the ranges, averaged over both objectives); (5, 5) last. Four survivors: the first front and
    the three least crowded of the second."""
    F = np.array([[5, 5], [1, 3], [0, 4], [0, 0], [2, 1], [4, 0]], dtype=float)
    nds, cd = NonDominatedSorting(), get_crowding_function("cd")
    idx, rank, crowd = _survive(F, 4, np.random.default_rng(0), nds, cd)
    assert idx.tolist()[0] == 3 and sorted(idx.tolist()[1:]) == [2, 4, 5]
    assert rank.tolist() == [0, 1, 1, 1]
    got = dict(zip(idx.tolist(), crowd.tolist(), strict=True))
    assert got[3] == np.inf and got[2] == np.inf and got[5] == np.inf
    assert got[4] == pytest.approx(0.75)
    idx, rank, crowd = _survive(F, 6, np.random.default_rng(0), nds, cd)
    assert sorted(idx.tolist()) == list(range(6)) and rank.tolist() == [0, 1, 1, 1, 1, 2]
    assert crowd.tolist()[-1] == np.inf
    back = dict(zip(idx.tolist(), crowd.tolist(), strict=True))
    assert back[1] == pytest.approx(0.625) and back[4] == pytest.approx(0.75)
    idx, rank, _ = _survive(F, 1, np.random.default_rng(0), nds, cd)
    assert idx.tolist() == [3] and rank.tolist() == [0]


def test_problem_objectives_are_negated_utilisation_fractions():
    m = table1(total_nodes=200, total_bb=100 * TB)
    p = _WindowProblem(m)
    assert (p.n_var, p.n_obj) == (5, 2)
    out: dict = {}
    p._evaluate(np.array([[1, 0, 0, 0, 1], [0, 1, 1, 1, 1]], dtype=bool), out)
    assert out["F"].ravel().tolist() == pytest.approx([-0.5, -0.2, -0.4, -0.9])


def test_stop_reports_progress_then_the_deadline():
    algorithm = types.SimpleNamespace(n_gen=3)
    stop = _Stop(6, deadline=float("inf"))
    assert stop._update(algorithm) == pytest.approx(0.5) and not stop.by_time
    late = _Stop(6, deadline=-float("inf"))
    assert late._update(algorithm) == 1.0 and late.by_time


# --- runs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["fast", "pymoo", "pymoo-plain"])
def test_table1_front_and_the_choice_from_it(engine):
    """Both Pareto points of Table 1 (the greedy seeds hold them); the answer is the point with
    the largest first objective: nodes first {J1, J5}, BB first {J2..J5}."""
    r = solve(table1(), "nsga2", Budget(10.0), 0, engine=engine, pop_size=6, generations=4)
    assert r.status is Status.FEASIBLE and r.backend == "nsga2"
    assert picks(r) == [[0, 4], [1, 2, 3, 4]]
    assert [s.objectives for s in r.pareto] == [(100.0, 20 * TB), (80.0, 90 * TB)]
    assert r.solution.tolist() == [True, False, False, False, True]
    # (pymoo stops by itself once its matings find no row of Table 1's 32 not seen before)
    assert r.info["engine"] == engine and r.info["stopped_by"] == (
        "generations" if engine == "fast" else "no new offspring")
    bb_first = solve(table1(objectives=("bb", "nodes")), "nsga2", Budget(10.0), 0,
                     engine=engine, pop_size=6, generations=4)
    assert np.flatnonzero(bb_first.solution).tolist() == [1, 2, 3, 4]


def test_generations_and_stall_stop_the_run():
    """Table 1's seeds hold the whole front from the start, so its values never change: with
    ``stall=3`` the run stops after 3 quiet generations (4 in all); without, at G."""
    r = solve(table1(), "nsga2", Budget(10.0), 0, pop_size=6, generations=50, stall=3)
    assert (r.info["generations"], r.info["stopped_by"]) == (4, "stall")
    r = solve(table1(), "nsga2", Budget(10.0), 0, pop_size=6, generations=7, stall=None)
    assert (r.info["generations"], r.info["stopped_by"]) == (7, "generations")
    r = solve(table1(), "nsga2", Budget(10.0), 0, pop_size=6, generations=1)
    assert r.status is Status.FEASIBLE
    assert (r.info["generations"], r.info["stopped_by"]) == (1, "generations")


def test_without_seeds_the_run_finds_the_front_from_random_rows():
    r = solve(table1(), "nsga2", Budget(10.0), 3, pop_size=8, generations=30,
              seed_greedy=False)
    assert picks(r) == [[0, 4], [1, 2, 3, 4]]
    pymoo = solve(table1(), "nsga2", Budget(10.0), 3, pop_size=8, generations=30,
                  seed_greedy=False, engine="pymoo")
    assert picks(pymoo) == [[0, 4], [1, 2, 3, 4]]


@pytest.mark.parametrize("seconds, status, generations, readings", [
    (1.0, Status.FALLBACK, None, 2),      # spent before the run: not started
    (2.0, Status.FALLBACK, None, 3),      # spent at the first generation: the fallback
    (3.0, Status.FEASIBLE, 2, 4),         # one generation run: its front
])
def test_the_wall_clock_budget_at_and_past_the_deadline(monkeypatch, seconds, status,
                                                        generations, readings):
    """A clock one second further at every reading: the start, the check before the run, then
    one reading per generation. A deadline reached counts as spent."""
    clock = Clock()
    monkeypatch.setattr(nsga2, "_time", clock)
    r = solve(table1(), "nsga2", Budget(seconds), 0, pop_size=6, generations=50, stall=None)
    assert r.status is status
    assert clock.now + 1 == readings
    if status is Status.FALLBACK:
        assert r.solution.tolist() == table1().fallback().tolist()
    else:
        assert (r.info["generations"], r.info["stopped_by"]) == (generations, "time")


@pytest.mark.parametrize("seconds, status", [(2.0, Status.FALLBACK), (3.0, Status.FEASIBLE)])
def test_the_pymoo_engine_checks_the_clock_before_minimize(monkeypatch, seconds, status):
    clock = Clock()
    monkeypatch.setattr(nsga2, "_time", clock)
    r = solve(table1(), "nsga2", Budget(seconds), 0, engine="pymoo", pop_size=6, generations=50)
    assert r.status is status
    if status is Status.FEASIBLE:
        assert r.info["stopped_by"] == "time" and picks(r) == [[0, 4], [1, 2, 3, 4]]


def test_a_budget_already_spent_raises_in_the_backend():
    with pytest.raises(BudgetExceeded):
        solve_nsga2(table1(), Budget(1e-12), 0)


def test_forced_jobs_that_cannot_all_fit_leave_the_fallback():
    m = WindowModel(nodes=[3, 3, 1], bb=[0.0] * 3, free_nodes=4, free_bb=0.0,
                    forced=[True, True, False])
    for engine in ("fast", "pymoo"):
        r = solve(m, "nsga2", Budget(10.0), 0, engine=engine, pop_size=4, generations=3)
        assert r.status is Status.FALLBACK and r.info == {"fallback": "greedy"}, engine
        assert r.solution.tolist() == m.fallback().tolist()


def test_an_empty_window_is_solved_exactly():
    m = WindowModel(nodes=[], bb=[], free_nodes=4, free_bb=GB)
    r = solve(m, "nsga2", Budget(1.0), 0)
    assert r.status is Status.OPTIMAL and r.info == {}
    assert r.solution.shape == (0,) and [s.objectives for s in r.pareto] == [(0.0, 0.0)]


def test_an_unknown_engine_is_refused():
    with pytest.raises(InputError, match=r"unknown engine 'ga'; known: fast, pymoo, "
                                         r"pymoo-plain") as e:
        solve(table1(), "nsga2", Budget(5.0), 0, engine="ga")
    assert e.value.field == "engine"


def random_model(seed: int, w: int) -> WindowModel:
    rng = np.random.default_rng(seed)
    return WindowModel(nodes=rng.choice([1, 2, 4, 8, 16], w),
                       bb=np.where(rng.random(w) < 0.5, 0, rng.integers(1, 60, w)) * GB,
                       free_nodes=int(rng.integers(8, 30)), free_bb=int(rng.integers(20, 90)) * GB,
                       total_nodes=40, total_bb=100 * GB)


@pytest.mark.parametrize("case", range(4))
def test_small_windows_agree_with_enumeration(case):
    """Windows of 8 jobs: after 30 generations of 12 the front is the exact one."""
    m = random_model(case, 8)
    exact = solve(m, "exhaustive", Budget(10.0))
    r = solve(m, "nsga2", Budget(10.0), case, pop_size=12, generations=30)
    assert [s.objectives for s in r.pareto] == [s.objectives for s in exact.pareto]
    assert all(m.feasible(s.x) for s in r.pareto)


def test_the_same_seed_gives_the_same_run():
    m = random_model(7, 14)
    a, b = (solve(m, "nsga2", Budget(10.0), 5, pop_size=8, generations=15) for _ in range(2))
    assert picks(a) == picks(b) and a.info == b.info
    assert all(m.feasible(s.x) for s in a.pareto)


def test_front_trace_starts_with_the_seeded_front():
    r = solve(table1(), "nsga2", Budget(10.0), 0, pop_size=6, generations=5, trace=True)
    (t, X), = r.info["front_trace"]  # the front never changes after the start
    assert t >= 0.0 and sorted(rows(X)) == [(0, 4), (1, 2, 3, 4)]
    assert "front_trace" not in solve(table1(), "nsga2", Budget(10.0), 0, pop_size=6,
                                      generations=5).info


def test_a_non_monotone_objective_turns_the_fill_off():
    """With ``ssd_waste`` adding a job may waste SSD, so a repair does not fill: one 50 GB job
    on the one 100 GB node wastes 50 GB, nothing selected wastes nothing and stays on the front
    (half the random rows draw no job on one node for two); with the fill forced on, an empty
    selection is always filled."""
    kw = dict(nodes=[1, 1], bb=[0.0, 0.0], free_nodes=1, free_bb=0.0, ssd=[50 * GB, 50 * GB],
              free_node_ssd=[100 * GB], objectives=("nodes", "ssd_waste"))
    m = WindowModel(**kw)
    r = solve(m, "nsga2", Budget(10.0), 0, pop_size=6, generations=3, seed_greedy=False)
    assert [s.objectives for s in r.pareto] == [(1.0, -50 * GB), (0.0, 0.0)]
    filled = solve(m, "nsga2", Budget(10.0), 0, pop_size=6, generations=3, seed_greedy=False,
                   fill=True)
    assert [s.objectives for s in filled.pareto] == [(1.0, -50 * GB)]


# --- what the runs hand back ----------------------------------------------------------------


def test_repair_takes_rows_of_integers_and_an_oversized_job_drops_nothing_else():
    m = WindowModel(nodes=[2, 2, 1], bb=[0.0] * 3, free_nodes=4, free_bb=0.0)
    Y = repair_rows(m, np.array([[1, 0, 0]] * 10), np.random.default_rng(1))
    assert Y.dtype == bool and set(rows(Y)) == {(0, 1), (0, 2)}
    # Without fill, the 5-node job is taken out before the prefix: the 1-node job stays.
    big = WindowModel(nodes=[5, 1], bb=[0.0, 0.0], free_nodes=4, free_bb=0.0)
    assert set(rows(repair_rows(big, np.ones((10, 2), dtype=bool), np.random.default_rng(0),
                                fill=False))) == {(1,)}


def test_repair_on_ssd_nodes_keeps_every_forced_job_that_fits():
    """Two forced 50 GB jobs and a free one on nodes of 100, 200 and 200 GB: both forced jobs are
    kept (each checked without the other forced one yet in); a forced job of 250 GB that no node
    holds does not stop the other forced job nor the fill of the 10 GB job."""
    kw = dict(nodes=[1, 1, 1], bb=[0.0] * 3, free_nodes=3, free_bb=0.0,
              free_node_ssd=[100 * GB, 200 * GB, 200 * GB], forced=[True, True, False])
    m = WindowModel(ssd=[50 * GB, 50 * GB, 10 * GB], **kw)
    assert set(rows(repair_rows(m, np.zeros((10, 3), dtype=bool), np.random.default_rng(0),
                                fill=False))) == {(0, 1)}
    m = WindowModel(ssd=[250 * GB, 50 * GB, 10 * GB], **kw)
    assert set(rows(repair_rows(m, np.zeros((10, 3), dtype=bool),
                                np.random.default_rng(0)))) == {(1, 2)}


def test_sampling_density_of_one_job_of_one_node():
    m = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0)
    X = _Sampling(m, np.zeros((0, 1), dtype=bool), fill=False)._do(
        None, 20, random_state=np.random.default_rng(0))
    assert X.all()


def test_survival_ties_are_broken_by_the_seeded_generator():
    """Two points of one front, both infinitely far from crowding, one survivor: which one is
    the generator's draw, the same for the same seed, not the same for all seeds."""
    F = np.array([[0.0, 1.0], [1.0, 0.0]])
    nds, cd = NonDominatedSorting(), get_crowding_function("cd")
    first = [int(_survive(F, 1, np.random.default_rng(s), nds, cd)[0][0]) for s in range(20)]
    again = [int(_survive(F, 1, np.random.default_rng(s), nds, cd)[0][0]) for s in range(20)]
    assert first == again and set(first) == {0, 1}


def test_the_backend_names_itself_and_an_empty_window_has_a_boolean_selection():
    empty = solve_nsga2(WindowModel(nodes=[], bb=[], free_nodes=4, free_bb=GB), Budget(1.0), 0)
    assert empty.backend == "nsga2" and empty.solution.dtype == bool
    for engine in ("fast", "pymoo"):
        r = solve_nsga2(table1(), Budget(10.0), 0, engine=engine, pop_size=6, generations=3)
        assert r.backend == "nsga2", engine


def test_the_trace_holds_seconds_since_the_start_and_0_1_selections():
    r = solve(table1(), "nsga2", Budget(10.0), 0, pop_size=6, generations=5, trace=True)
    (t, X), = r.info["front_trace"]
    assert 0.0 <= t <= r.wall_time
    assert all(type(v) is int for row in X for v in row)


def test_the_pymoo_engine_reports_its_generations_quietly(capsys):
    r = solve(table1(), "nsga2", Budget(10.0), 0, engine="pymoo", pop_size=6, generations=2,
              seed_greedy=False)
    assert r.info == {"generations": 2, "stopped_by": "generations", "engine": "pymoo"}
    assert capsys.readouterr().out == ""


def _scarce_window() -> WindowModel:
    rng = np.random.default_rng(1)
    return WindowModel(nodes=list(rng.integers(1, 20, 30)), bb=list(rng.uniform(0, 1e12, 30)),
                       free_nodes=100, free_bb=5e12)


@pytest.mark.parametrize("engine", ["fast", "pymoo", "pymoo-plain"])
@pytest.mark.parametrize("generations", [1, 2, 5])
def test_every_engine_reports_the_generations_it_evaluated(monkeypatch, engine, generations):
    """G generations are the first population and G - 1 offspring rounds, in every engine:
    each evaluates G batches of rows, then the answer's rows once more (pymoo's own ``n_gen``
    is one past the G on return)."""
    batches = []
    model = _scarce_window()
    many = WindowModel.evaluate_many
    monkeypatch.setattr(WindowModel, "evaluate_many",
                        lambda self, X: batches.append(len(X)) or many(self, X))
    r = solve(model, "nsga2", Budget(10.0), 0, engine=engine, pop_size=10,
              generations=generations, seed_greedy=False, stall=None)
    assert (r.info["generations"], r.info["stopped_by"]) == (generations, "generations")
    assert len(batches) == generations + 1


def test_the_pymoo_engine_says_when_no_mating_finds_new_offspring():
    """Table 1 has 32 rows: with 6 of them kept, pymoo's matings soon find none not seen
    before, and pymoo stops before G."""
    r = solve(table1(), "nsga2", Budget(10.0), 0, engine="pymoo", pop_size=6, generations=5,
              seed_greedy=False)
    assert (r.info["generations"], r.info["stopped_by"]) == (2, "no new offspring")


def test_the_pymoo_engine_fills_only_monotone_objectives():
    kw = dict(nodes=[1, 1], bb=[0.0, 0.0], free_nodes=1, free_bb=0.0, ssd=[50 * GB, 50 * GB],
              free_node_ssd=[100 * GB], objectives=("nodes", "ssd_waste"))
    m = WindowModel(**kw)
    r = solve(m, "nsga2", Budget(10.0), 0, engine="pymoo", pop_size=6, generations=3,
              seed_greedy=False, mutation=0.3)
    assert [s.objectives for s in r.pareto] == [(1.0, -50 * GB), (0.0, 0.0)]
    filled = solve(m, "nsga2", Budget(10.0), 0, engine="pymoo", pop_size=6, generations=3,
                   seed_greedy=False, fill=True, mutation=0.3)
    assert [s.objectives for s in filled.pareto] == [(1.0, -50 * GB)]


@pytest.mark.parametrize("engine", ["fast", "pymoo"])
def test_from_random_rows_the_run_improves_to_the_exact_front_the_same_for_a_seed(engine):
    """A 14-job window without greedy seeds: the first front is not the exact one, the last
    is; the same seed gives the same run, another seed another start."""
    m = random_model(11, 14)
    exact = [s.objectives for s in solve(m, "exhaustive", Budget(10.0)).pareto]
    kw = dict(engine=engine, pop_size=10, generations=60, seed_greedy=False, stall=None)
    a = solve(m, "nsga2", Budget(10.0), 1, **kw)
    b = solve(m, "nsga2", Budget(10.0), 1, **kw)
    assert [s.objectives for s in a.pareto] == exact
    assert picks(a) == picks(b) and a.info == b.info
    short = dict(kw, generations=2)
    starts = {tuple(map(tuple, picks(solve(m, "nsga2", Budget(10.0), s, **short))))
              for s in range(4)}
    assert len(starts) > 1
    assert [s.objectives for s in solve(m, "nsga2", Budget(10.0), 1, **short).pareto] != exact


def test_the_greedy_answers_seed_the_first_population_by_default():
    """A population of as many rows as greedy answers, one generation: the front is theirs."""
    m = random_model(11, 14)
    greedy = set(rows(_greedy_seeds(m)))
    kw = dict(pop_size=len(greedy), generations=1)
    assert {tuple(p) for p in picks(solve(m, "nsga2", Budget(10.0), 1, **kw))} <= greedy
    bare = solve(m, "nsga2", Budget(10.0), 1, seed_greedy=False, **kw)
    assert not {tuple(p) for p in picks(bare)} <= greedy


def test_the_trace_records_each_change_of_the_first_front_up_to_the_last():
    m = random_model(11, 14)
    r = solve(m, "nsga2", Budget(10.0), 1, pop_size=10, generations=60, seed_greedy=False,
              stall=None, trace=True)
    values = [sorted(map(tuple, m.evaluate_many(np.array(X, dtype=bool)).tolist()))
              for _, X in r.info["front_trace"]]
    assert len(values) == 4
    assert all(a != b for a, b in zip(values, values[1:], strict=False))
    assert values[-1] == sorted(s.objectives for s in r.pareto)

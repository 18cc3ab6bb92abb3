"""The plan model's ``annealing`` backend (Kopanski & Rzadca, Section 3.3 and Algorithm 2): the
exhaustive hand-over up to five jobs, the candidate orders, the temperature schedule, the
Metropolis rule at its threshold, the best plan kept, and the wall budget.

Most tests drive the search on a scripted model (the scores of chosen orders are given, every
other order scores 1000) with scripted draws (the positions of each swap and the uniform ``r``
whose ``-ln(1 - r)`` is the Metropolis slack), so each move's threshold and verdict are
computed by hand."""

import math
from types import SimpleNamespace

import numpy as np
import pytest

from bbopt.core import Job, Status
from bbopt.models.plan import PlanModel
from bbopt.solvers import Budget, BudgetExceeded
from bbopt.solvers.plan import annealing
from bbopt.solvers.plan.annealing import solve_annealing

N = 6
#: The nine candidate orders of the scripted model and their scores: best 50 (the
#: submission order, position 0), worst 60; the temperature starts at 60 - 50 = 10.
CANDIDATES = [
    ("submission", (0, 1, 2, 3, 4, 5)),
    ("nodes-asc", (5, 4, 3, 2, 1, 0)),
    ("nodes-desc", (1, 0, 3, 2, 5, 4)),
    ("bb-per-node-asc", (2, 3, 0, 1, 4, 5)),
    ("bb-per-node-desc", (4, 5, 2, 3, 0, 1)),
    ("bb-per-node-per-node-asc", (3, 2, 1, 0, 5, 4)),
    ("bb-per-node-per-node-desc", (0, 2, 4, 1, 3, 5)),
    ("walltime-asc", (5, 3, 1, 4, 2, 0)),
    ("walltime-desc", (1, 3, 5, 0, 2, 4)),
]
CANDIDATE_SCORES = [50.0, 55.0, 60.0, 52.0, 58.0, 51.0, 57.0, 54.0, 53.0]


class Scripted:
    """A plan model whose scores are scripted; it records every score asked, with its
    threshold, and advances ``clock`` by ``cost`` seconds per score."""

    def __init__(self, scores=None, candidates=CANDIDATES, clock=None, cost=0.0):
        self.n = N
        self._candidates = candidates
        self.scores = dict(zip((o for _, o in candidates), CANDIDATE_SCORES, strict=True))
        self.scores.update(scores or {})
        self.calls: list[tuple[tuple[int, ...], float]] = []
        self.clock, self.cost = clock, cost

    def candidates(self):
        return list(self._candidates)

    def score(self, order, threshold=math.inf):
        self.calls.append((tuple(order), threshold))
        if self.clock is not None:
            self.clock.now += self.cost
        return self.scores.get(tuple(order), 1000.0)

    def plan(self, order):
        return ("plan", tuple(order))


class Clock:
    """A clock that moves only when told (``now``), or by ``step`` at each look."""

    def __init__(self, step=0.0):
        self.now, self.step = 0.0, step

    def perf_counter(self):
        self.now += self.step
        return self.now


def swapped(order, a, b):
    order = list(order)
    order[a], order[b] = order[b], order[a]
    return tuple(order)


def r_for(u):
    """The uniform draw whose Metropolis slack ``-ln(1 - r)`` is ``u``."""
    return -math.expm1(-u)


@pytest.fixture
def draws(monkeypatch):
    """Script the search's draws: ``draws(first, second, r)``; records the seed asked for."""
    asked = {}

    def script(first, second, r):
        class Generator:
            def __init__(self):
                self.positions = [np.array(first), np.array(second)]

            def integers(self, low, high, size):
                assert (low, high, size) == (0, N, len(first))
                return self.positions.pop(0)

            def random(self, size):
                assert size == len(r)
                return np.array(r, dtype=float)

        def default_rng(seed):
            asked["seed"] = seed
            return Generator()

        monkeypatch.setattr(annealing, "np", SimpleNamespace(
            random=SimpleNamespace(default_rng=default_rng), log1p=np.log1p, array=np.array,
            int64=np.int64))
        return asked
    return script


def test_the_temperature_starts_at_worst_minus_best_and_cools_to_its_floor(draws):
    """Four blocks of one move each, every move rejected (its order scores 1000): the
    thresholds are ``best + T * u`` with T = 10 (worst 60 - best 50), then 10 * 0.5 = 5,
    2.5, then 1.25 raised to the floor 2; u = 1, 2, 0.5, 3 as drawn."""
    asked = draws([0, 1, 2, 0], [1, 2, 3, 5], [r_for(1.0), r_for(2.0), r_for(0.5), r_for(3.0)])
    model = Scripted()
    res = solve_annealing(model, Budget(30), 17, cooling_steps=4, steps_per_temperature=1,
                          cooling=0.5, min_temperature=2.0, incremental=False)
    assert asked["seed"] == 17
    moves = model.calls[9:]
    best = CANDIDATES[0][1]
    assert [o for o, _ in moves] == [swapped(best, 0, 1), swapped(best, 1, 2),
                                     swapped(best, 2, 3), swapped(best, 0, 5)]
    assert [t for _, t in moves] == pytest.approx([60.0, 60.0, 51.25, 56.0])
    assert res.status is Status.FEASIBLE and res.backend == "annealing"
    assert res.objective == 50.0 and res.solution == ("plan", best)
    assert res.info == {
        "best_candidate": "submission", "candidate_best": 50.0, "candidate_worst": 60.0,
        "method": "annealing", "evaluations": 13, "steps": 4, "accepted": 0, "improved": 0,
        "aborted": 0, "out_of_time": False}


def test_the_metropolis_rule_accepts_at_its_threshold_and_keeps_the_best_plan(draws):
    """One block at T = 10. Moves: positions 2 and 2 (the identity: accepted, not scored);
    a swap scoring the current 50 with slack 0 (at the threshold: accepted, not an
    improvement); one scoring 50.5 with slack 0 (above: rejected, the order restored); one
    scoring 50.9 with slack 0.1 (threshold 51: a worse move accepted); one scoring 49 with
    slack 0 (threshold 50.9: accepted, the new best); one whose evaluation gave up (infinite:
    aborted, rejected); the identity again; the same give-up again; one scoring 48 (the best
    again). Each count is a sum: 6 accepted, 2 improvements, 2 aborted."""
    best = CANDIDATES[0][1]
    p1 = swapped(best, 0, 1)
    p2 = swapped(p1, 2, 3)  # rejected: p1 stays the current order
    p3 = swapped(p1, 4, 5)
    p4 = swapped(p3, 0, 2)
    p5 = swapped(p4, 1, 3)
    p6 = swapped(p4, 4, 5)
    model = Scripted({p1: 50.0, p2: 50.5, p3: 50.9, p4: 49.0, p5: math.inf, p6: 48.0})
    draws([2, 0, 2, 4, 0, 1, 3, 1, 4], [2, 1, 3, 5, 2, 3, 3, 3, 5],
          [0.9, 0.0, 0.0, r_for(0.1), 0.0, 0.0, 0.5, 0.0, 0.0])
    res = solve_annealing(model, Budget(30), 0, cooling_steps=1, steps_per_temperature=9,
                          incremental=False)
    moves = model.calls[9:]
    assert [o for o, _ in moves] == [p1, p2, p3, p4, p5, p5, p6]
    assert [t for _, t in moves] == pytest.approx([50.0, 50.0, 51.0, 50.9, 49.0, 49.0, 49.0])
    assert res.objective == 48.0 and res.solution == ("plan", p6)
    info = res.info
    assert (info["accepted"], info["improved"], info["aborted"]) == (6, 2, 2)
    assert (info["evaluations"], info["steps"]) == (16, 9)


def test_a_move_just_above_its_threshold_is_rejected(draws):
    """From the current 50 at T = 10 with slack 0.1 (threshold 51, as the search computes it):
    a swap scoring 1e-9 above the threshold is rejected, one 1e-9 below it accepted (a worse
    move, not an improvement)."""
    best = CANDIDATES[0][1]
    p1 = swapped(best, 0, 1)
    p2 = swapped(p1, 2, 3)
    p3 = swapped(p1, 4, 5)
    u = 0.1
    threshold = 50.0 + 10.0 * float(-np.log1p(-np.array([r_for(u)]))[0])
    model = Scripted({p1: 50.0, p2: threshold + 1e-9, p3: threshold - 1e-9})
    draws([0, 2, 4], [1, 3, 5], [0.0, r_for(u), r_for(u)])
    res = solve_annealing(model, Budget(30), 0, cooling_steps=1, steps_per_temperature=3,
                          incremental=False)
    assert [o for o, _ in model.calls[9:]] == [p1, p2, p3]
    assert res.info["accepted"] == 2 and res.info["improved"] == 0
    assert res.objective == 50.0 and res.solution == ("plan", best)


def test_the_defaults_are_the_papers_search():
    """Kopanski & Rzadca, Section 3.3: exhaustive up to 5 jobs, 30 temperatures of 6 moves,
    cooling by 0.9 down to a temperature of 1, moves scored by the incremental walk."""
    import inspect

    defaults = {k: v.default for k, v in inspect.signature(solve_annealing).parameters.items()
                if v.default is not inspect.Parameter.empty}
    assert defaults == {"seed": 0, "exhaustive_up_to": 5, "cooling_steps": 30,
                        "steps_per_temperature": 6, "cooling": 0.9, "min_temperature": 1.0,
                        "incremental": True, "initial": None, "trace": False}


def test_the_papers_search_makes_30_temperatures_of_6_moves():
    # (the defaults run, not read: a default changed in the function shows in its moves)
    jobs = [Job(str(i), submit=10 * i, walltime=20 + 7 * i, nodes=1 + i % 3) for i in range(7)]
    model = PlanModel(100.0, (4, 0.0), [(150.0, 2, 0.0)], jobs, alpha=2)
    res = solve_annealing(model, Budget(30), 0)
    assert res.info["steps"] == 180 and not res.info["out_of_time"]
    assert res.objective <= res.info["candidate_best"]


def test_when_every_candidate_scores_the_same_the_search_is_skipped():
    model = Scripted({o: 50.0 for _, o in CANDIDATES})
    res = solve_annealing(model, Budget(30), 0, incremental=False)
    assert res.status is Status.FEASIBLE and res.objective == 50.0
    assert res.backend == "annealing"
    assert res.solution == ("plan", CANDIDATES[0][1])
    assert res.info["method"] == "candidates" and res.info["evaluations"] == 9
    assert res.info["skipped"] == "best == worst candidate"
    assert len(model.calls) == 9


def test_coinciding_candidate_orders_are_scored_once_and_the_first_best_is_named():
    """Three candidates give the submission order again: 7 scores for 9 candidates; the
    best (50) is then also scored by "nodes-desc", yet the first one is named."""
    same = [(name, CANDIDATES[0][1]) if k in (2, 5) else (name, o)
            for k, (name, o) in enumerate(CANDIDATES)]
    model = Scripted(candidates=same)
    model.scores = {o: s for (_, o), s in zip(same, CANDIDATE_SCORES, strict=True)
                    if o != CANDIDATES[0][1]} | {CANDIDATES[0][1]: 50.0}
    res = solve_annealing(model, Budget(30), 0, cooling_steps=0, incremental=False)
    assert len(model.calls) == 7
    assert res.info["evaluations"] == 9
    assert res.info["best_candidate"] == "submission"
    assert res.info["candidate_worst"] == 58.0


def test_the_initial_order_is_a_tenth_candidate():
    initial = (3, 4, 5, 0, 1, 2)
    model = Scripted({initial: 40.0})
    res = solve_annealing(model, Budget(30), 0, cooling_steps=0, incremental=False,
                          initial=list(initial))
    assert model.calls[9] == (initial, math.inf)
    assert res.info["best_candidate"] == "previous" and res.objective == 40.0
    assert res.info["evaluations"] == 10
    with pytest.raises(ValueError, match="^initial must be a permutation of the model's jobs$"):
        solve_annealing(model, Budget(30), 0, initial=[0, 1, 2, 3, 4, 4])


@pytest.mark.parametrize(("seconds", "scored"), [(9.999, 7), (10.0, 8), (10.001, 8),
                                                 (11.0, 9)])
def test_a_candidate_is_scored_only_if_it_and_the_final_plan_fit_the_budget(seconds, scored,
                                                                            monkeypatch):
    """Each score takes 1 s (the clock moves only then): before candidate k (k s spent, the
    longest score 1 s) the search goes on only if k + 3 * 1 <= the budget: with 10 s, 8
    candidates (k = 7 ends at 10), the 9th not; the plan is then the best of those scored."""
    clock = Clock()
    monkeypatch.setattr(annealing, "_time", clock)
    model = Scripted(clock=clock, cost=1.0)
    res = solve_annealing(model, Budget(seconds), 0, incremental=False)
    assert len(model.calls) == scored
    if scored < 9:
        assert res.info["method"] == "candidates" and res.info["skipped"] == "budget"
        assert res.info["evaluations"] == scored
        assert res.objective == 50.0


@pytest.mark.parametrize(("seconds", "moves"), [(11.0, 0), (11.999, 0), (12.0, 1),
                                                (13.0, 2)])
def test_a_move_is_started_only_if_it_and_the_final_plan_fit_the_budget(seconds, moves, draws,
                                                                       monkeypatch):
    """Nine candidates take 9 s; a move at k s is made only if k + 3 <= the budget."""
    clock = Clock()
    monkeypatch.setattr(annealing, "_time", clock)
    model = Scripted(clock=clock, cost=1.0)
    draws([0, 1, 2, 3], [1, 2, 3, 4], [0.5] * 4)
    res = solve_annealing(model, Budget(seconds), 0, cooling_steps=2, steps_per_temperature=2,
                          incremental=False)
    assert len(model.calls) == 9 + moves
    assert res.info["method"] == "annealing" and res.info["out_of_time"] is True
    assert res.info["evaluations"] == 9 + moves and res.info["steps"] == moves + 1
    assert res.objective == 50.0 and res.status is Status.FEASIBLE


def test_no_candidate_within_the_budget_raises_budget_exceeded(monkeypatch):
    monkeypatch.setattr(annealing, "_time", Clock(step=1.0))
    message = "^no candidate order could be scored within the budget$"
    with pytest.raises(BudgetExceeded, match=message):
        solve_annealing(Scripted(), Budget(0.5), 0, incremental=False)


def test_the_trace_records_the_best_candidate_and_each_improvement(draws, monkeypatch):
    """Seconds since the search began (the clock reads 100 then): the best candidate after
    the nine scores of 1 s, the improving move one second later."""
    clock = Clock()
    clock.now = 100.0
    monkeypatch.setattr(annealing, "_time", clock)
    best = CANDIDATES[0][1]
    p1 = swapped(best, 0, 1)
    model = Scripted({p1: 45.0}, clock=clock, cost=1.0)
    draws([0, 3], [1, 3], [0.0, 0.0])
    res = solve_annealing(model, Budget(100), 0, cooling_steps=1, steps_per_temperature=2,
                          incremental=False, trace=True)
    assert res.info["trace"] == [(9.0, best), (10.0, p1)]
    assert res.objective == 45.0


def test_the_first_candidate_is_scored_before_any_cost_is_known(draws, monkeypatch):
    """On a clock that stands still (free evaluations) a 2 s budget holds every candidate
    and every move: no cost is assumed before the first score."""
    clock = Clock()
    monkeypatch.setattr(annealing, "_time", clock)
    draws([0, 1], [1, 2], [0.5, 0.5])
    res = solve_annealing(Scripted(clock=clock), Budget(2.0), 0, cooling_steps=1,
                          steps_per_temperature=2, incremental=False)
    assert res.info["out_of_time"] is False and res.info["evaluations"] == 11


def _model(n, seed=1):
    jobs = [Job(str(i), submit=3 * i, walltime=10 + 7 * ((i * seed) % 5), nodes=1 + (i + seed) % 3)
            for i in range(n)]
    return PlanModel(20.0, (4, 0.0), [(40.0, 2, 0.0), (70.0, 1, 0.0)], jobs, alpha=2)


@pytest.mark.parametrize(("n", "method"), [(4, "exhaustive"), (5, "exhaustive"),
                                           (6, "annealing")])
def test_queues_of_up_to_five_jobs_are_searched_exhaustively(n, method):
    model = _model(n)
    res = solve_annealing(model, Budget(30), 0, trace=True)
    assert res.info["method"] == method and res.backend == "annealing"
    if method == "exhaustive":
        assert res.status is Status.OPTIMAL and res.bound == res.objective
        assert res.info["nodes"] > 0
        [(seconds, order)] = res.info["trace"]
        assert 0.0 <= seconds < 60.0 and order == res.solution.order
    else:
        assert res.status is Status.FEASIBLE and res.bound is None
    assert res.objective == model.evaluate(res.solution)


def test_exhaustive_up_to_is_the_hand_over_threshold():
    model = _model(6)
    assert solve_annealing(model, Budget(30), 0, exhaustive_up_to=6).info["method"] == (
        "exhaustive")


class Batches:
    """A walk whose moves run a temperature at a time (the compiled walk on named BB nodes,
    ``SwapWalk.moves``), scripted: each batch takes ``cost`` seconds of ``clock`` and, at the
    temperatures in ``better`` (0-based), finds that order with that score. It records the
    step and temperature each batch was given."""

    def __init__(self, clock, cost=1.0, better=None):
        self.clock, self.cost, self.better = clock, cost, dict(better or {})
        self.given: list[tuple[int, float]] = []

    def moves(self, first, second, slack, step, per_temperature, current, temperature, best,
              counts, best_array):
        k = len(self.given)
        self.given.append((step, temperature))
        self.clock.now += self.cost
        counts[0] += per_temperature  # accepted
        counts[2] += 1  # aborted
        counts[3] += per_temperature  # evaluations
        if k in self.better:
            order, score = self.better[k]
            best_array[:] = order
            counts[1] += 1
            return step + per_temperature, score, score
        return step + per_temperature, current, best


@pytest.fixture
def batches(monkeypatch):
    """The search on the scripted model and a scripted batch walk, on a clock that moves
    only when a score or a batch is made (1 s each), reading 100 s when a search begins."""
    clock = Clock()
    monkeypatch.setattr(annealing, "_time", clock)

    def run(seconds=100.0, better=None, **kw):
        clock.now = 100.0
        walk = Batches(clock, better=better)
        monkeypatch.setattr(annealing, "swap_walk", lambda model, order: walk)
        res = solve_annealing(Scripted(clock=clock, cost=1.0), Budget(seconds), 0, **kw)
        return res, walk
    return run


@pytest.mark.parametrize(("seconds", "made"), [(11.999, 0), (12.0, 1), (12.5, 1), (13.0, 2)])
def test_a_batch_of_moves_is_started_only_if_it_and_the_final_plan_fit_the_budget(
        seconds, made, batches):
    """Nine candidates take 9 s; a temperature's batch at k s is run only if k + 3 * 1 s (the
    longest evaluation) is within the budget."""
    res, walk = batches(seconds, cooling_steps=3, steps_per_temperature=4)
    assert len(walk.given) == made
    assert res.info["out_of_time"] is True and res.info["steps"] == 4 * made
    assert (res.info["accepted"], res.info["aborted"], res.info["evaluations"]) == (
        4 * made, made, 9 + 4 * made)
    assert res.objective == 50.0 and res.solution == ("plan", CANDIDATES[0][1])


def test_batches_go_on_from_the_step_reached_and_cool_to_the_floor(batches):
    """The defaults' 30 temperatures of 6 moves: each batch starts where the last one
    stopped; the temperature starts at 60 - 50 and is multiplied by 0.9 down to 1."""
    res, walk = batches()
    assert [s for s, _ in walk.given] == list(range(0, 180, 6))
    expected, t = [], 10.0
    for _ in range(30):
        expected.append(t)
        t = max(t * 0.9, 1.0)
    assert [t for _, t in walk.given] == expected and expected[-1] == 1.0
    assert res.info["out_of_time"] is False and res.info["steps"] == 180


def test_an_improvement_found_in_a_batch_is_the_plan_and_enters_the_trace(batches):
    """The second batch (at 10 s: 9 candidates and one batch) finds a better order; the
    trace has the best candidate at 9 s and that order when its batch returns, at 11 s."""
    order = (5, 4, 3, 2, 1, 0)
    res, walk = batches(better={1: (order, 44.0)}, cooling_steps=3, trace=True)
    assert res.info["trace"] == [(9.0, CANDIDATES[0][1]), (11.0, order)]
    assert res.objective == 44.0 and res.solution == ("plan", order)
    assert res.info["improved"] == 1
    plain, _ = batches(better={1: (order, 44.0)}, cooling_steps=3)
    assert "trace" not in plain.info and plain.solution == ("plan", order)

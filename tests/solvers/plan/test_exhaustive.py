"""The plan model's ``exhaustive`` backend (Kopanski & Rzadca, Section 3.3: queues searched
exhaustively over permutations): its job limit, its clock (looked at every 256 prefixes), its
memo of prefixes and the optimum it proves."""

import itertools
import random

import pytest

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob, Status
from bbopt.models.plan import PlanModel
from bbopt.solvers import Budget, BudgetExceeded
from bbopt.solvers.plan import exhaustive
from bbopt.solvers.plan.exhaustive import MAX_JOBS, solve_exhaustive


def _model(n: int, seed: int = 0, alpha: float = 2) -> PlanModel:
    """A random scheduling point of 10 nodes and 20 GB of BB at now = 100."""
    rnd = random.Random(seed)
    jobs = [Job(str(i), submit=rnd.randint(0, 100), walltime=rnd.randint(1, 50),
                nodes=rnd.randint(1, 8), bb=rnd.randint(0, 10) * GB) for i in range(n)]
    running, used_n, used_b = [], 0, 0
    for _ in range(5):
        r = (100 + rnd.randint(1, 600), rnd.randint(1, 2), rnd.randint(0, 4) * GB)
        if used_n + r[1] <= 10 and used_b + r[2] <= 20 * GB:
            running.append(r)
            used_n, used_b = used_n + r[1], used_b + r[2]
    return PlanModel(100, (10, 20 * GB), running, jobs, alpha)


def _named(n: int, seed: int = 0) -> PlanModel:
    """A random scheduling point at now = 100 on 10 nodes and three named BB nodes of 8, 6 and
    6 GB, two jobs running (their pieces placed first fit)."""
    rnd = random.Random(seed)
    platform = Platform(nodes=10, bb=20 * GB, bb_nodes=(8 * GB, 6 * GB, 6 * GB))
    jobs = tuple(Job(str(i), submit=rnd.randint(0, 100), walltime=rnd.randint(1, 50),
                     nodes=rnd.randint(1, 8), bb=rnd.randint(0, 6) * GB) for i in range(n))
    running = (RunningJob(Job("r0", 0, walltime=300, nodes=2, bb=4 * GB), 50.0),
               RunningJob(Job("r1", 0, walltime=150, nodes=3, bb=3 * GB), 20.0))
    return PlanModel.from_state(ClusterState(100.0, platform, running, jobs), 2)


def _optimum(model: PlanModel) -> float:
    return min(model.score(p) for p in itertools.permutations(range(model.n)))


class _Clock:
    """A clock that advances one second at each look."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("n", [3, 4])
def test_a_queue_longer_than_the_limit_is_refused(n):
    model = _model(n)
    if n > 3:
        with pytest.raises(BudgetExceeded, match="^4 jobs exceed the exhaustive limit of 3$"):
            solve_exhaustive(model, Budget(5), max_jobs=3)
    else:
        assert solve_exhaustive(model, Budget(5), max_jobs=3).status is Status.OPTIMAL


def test_the_default_limit_is_sixteen_jobs():
    assert MAX_JOBS == 16
    with pytest.raises(BudgetExceeded, match="^17 jobs exceed the exhaustive limit of 16$"):
        solve_exhaustive(_model(17), Budget(5))


@pytest.mark.parametrize("n", [0, 1])
def test_no_search_below_two_jobs(n):
    model = _model(n)
    res = solve_exhaustive(model, Budget(5))
    assert res.status is Status.OPTIMAL and res.backend == "exhaustive"
    assert res.solution == model.plan(range(n))
    assert res.objective == res.bound == model.score(range(n))
    assert res.info == {"nodes": 1}


@pytest.mark.parametrize("seed", range(3))
def test_the_proven_optimum_is_the_best_permutation(seed):
    model = _model(6, seed, alpha=1 + seed)
    res = solve_exhaustive(model, Budget(30))
    best = _optimum(model)
    assert res.status is Status.OPTIMAL and res.backend == "exhaustive"
    assert res.objective == res.bound == best
    assert model.evaluate(res.solution) == best and model.score(res.solution.order) == best
    assert res.info["nodes"] > 1 and res.info["memo"] > 0


@pytest.mark.parametrize(("seconds", "nodes"), [(0.999, 256), (1.0, 512), (1.001, 512)])
def test_the_clock_is_read_every_256_prefixes(seconds, nodes, monkeypatch):
    """The clock reads 1 at the start and one second more at each look (every 256 prefixes):
    with a budget below one second the search stops at the 256th prefix, with one second at
    the 512th (2 is not past the deadline 1 + 1). It answers its best plan so far: FEASIBLE,
    no bound, never worse than the candidate orders."""
    monkeypatch.setattr(exhaustive, "_time", _Clock())
    model = _model(8)
    res = solve_exhaustive(model, Budget(seconds), memo_limit=0)
    assert res.status is Status.FEASIBLE and res.bound is None
    assert res.info["nodes"] == nodes
    assert res.objective == model.evaluate(res.solution)
    assert res.objective <= min(model.score(o) for _, o in model.candidates())


@pytest.mark.parametrize("limit", [0, 1, 10])
def test_the_memo_holds_at_most_its_limit_of_prefixes(limit):
    """The search's memo (prefixes that placed the same jobs and left the same profile) stops
    growing at its limit; the optimum does not depend on it."""
    model = _model(6, 1)
    res = solve_exhaustive(model, Budget(30), memo_limit=limit)
    assert res.info["memo"] == limit
    assert res.status is Status.OPTIMAL and res.objective == _optimum(model)


def test_an_initial_order_only_tightens_the_first_incumbent():
    """Here the best candidate order scores 639,255 and the optimum 631,956: given the
    optimal order as a first incumbent, the search proves the same optimum from fewer
    prefixes (319, not 443)."""
    model = _model(7, 3)
    best = solve_exhaustive(model, Budget(30))
    warm = solve_exhaustive(model, Budget(30), initial=best.solution.order)
    assert warm.objective == best.objective and warm.status is Status.OPTIMAL
    assert best.objective < min(model.score(o) for _, o in model.candidates())
    assert warm.info["nodes"] < best.info["nodes"]


def test_when_every_order_scores_the_same_the_first_candidate_is_answered_unsearched():
    """10 nodes, now = 100: three jobs that all start now in every order (waits 10, 50 and
    30: 100 + 2,500 + 900). The first candidate (the submission order) is already at the
    bound of the root, so the search stops there: one prefix, the submission order."""
    jobs = [Job("a", 90, walltime=30, nodes=1), Job("b", 50, walltime=10, nodes=2),
            Job("c", 70, walltime=20, nodes=3)]
    model = PlanModel(100.0, (10, 0.0), [], jobs, alpha=2)
    assert len({o for _, o in model.candidates()}) > 1
    res = solve_exhaustive(model, Budget(5))
    assert res.status is Status.OPTIMAL and res.objective == res.bound == 3500.0
    assert res.solution.order == (0, 1, 2) and res.solution.starts == (100.0, 100.0, 100.0)
    assert res.info == {"nodes": 1, "memo": 1}


def test_an_order_no_candidate_gives_is_found_by_the_search():
    """One node at now = 100; a (submitted at 50) and b (at 0), 10 s each, alike in every key
    of the candidate orders, which all keep a first: 50**2 + 110**2 = 14,600. The search:
    the root (bound 2,500 + 10,000 below it), a first (b's term at 110 reaches 14,600: cut),
    b first (a at 110: 10,000 + 60**2 = 13,600, the optimum): three prefixes."""
    jobs = [Job("a", 50, walltime=10, nodes=1), Job("b", 0, walltime=10, nodes=1)]
    model = PlanModel(100.0, (1, 0.0), [], jobs, alpha=2)
    assert {o for _, o in model.candidates()} == {(0, 1)}
    res = solve_exhaustive(model, Budget(5))
    assert res.status is Status.OPTIMAL and res.objective == res.bound == 13_600.0
    assert res.solution.order == (1, 0) and res.solution.starts == (110.0, 100.0)
    assert res.info == {"nodes": 3, "memo": 3}


@pytest.mark.parametrize(("make", "memo", "nodes"), [
    (lambda: _model(6, 1), 110, 156), (lambda: _named(6, 1), 149, 225)])
def test_the_memo_spares_the_prefixes_that_left_a_profile_already_seen(make, memo, nodes):
    """Six jobs on the pool and on named BB nodes (searched in Python: more jobs than the
    compiled search takes): the memo keeps one entry per placed set and profile, and spares
    every later prefix that reaches one at no lower cost; without it the search visits more
    than twice the prefixes, for the same optimum."""
    model = make()
    res = solve_exhaustive(model, Budget(30))
    plain = solve_exhaustive(model, Budget(30), memo_limit=0)
    assert (res.info["memo"], res.info["nodes"]) == (memo, nodes)
    assert plain.info["memo"] == 0 and plain.info["nodes"] > 2 * nodes
    assert res.objective == plain.objective == res.bound == _optimum(model)


@pytest.mark.parametrize(("seconds", "nodes"), [(0.999, 256), (1.0, 512), (1.001, 512)])
def test_the_named_search_reads_the_clock_every_256_prefixes(seconds, nodes, monkeypatch):
    monkeypatch.setattr(exhaustive, "_time", _Clock())
    model = _named(6, 1)
    res = solve_exhaustive(model, Budget(seconds), memo_limit=0)
    assert res.status is Status.FEASIBLE and res.bound is None
    assert res.info["nodes"] == nodes
    assert res.objective == model.evaluate(res.solution)


@pytest.mark.parametrize("seed", [0, 7, 28])
def test_the_named_search_proves_the_best_permutation(seed):
    # (five jobs: the compiled search when the kernels load, the Python one otherwise; with
    # seeds 7 and 28 no candidate order is optimal, 78,730 against 78,247 and 73,299 against
    # 61,878: the bound is the search's, not the first incumbent's)
    model = _named(5, seed)
    res = solve_exhaustive(model, Budget(30))
    assert res.status is Status.OPTIMAL
    if seed:
        assert min(model.score(o) for _, o in model.candidates()) > res.objective
    assert res.objective == res.bound == model.score(res.solution.order) == _optimum(model)


def _four_nodes(*jobs: tuple[int, int, int, int]) -> PlanModel:
    """4 nodes and 20 GB of BB free at now = 100; jobs as (submit, walltime, nodes, GB)."""
    return PlanModel(100, (4, 20 * GB), [],
                     [Job(str(i), submit=s, walltime=w, nodes=n, bb=b * GB)
                      for i, (s, w, n, b) in enumerate(jobs)], 2)


def test_the_memo_tells_prefixes_apart_by_every_column_of_their_profile():
    """Three jobs of 2-3 nodes and 7-10 GB: the ten prefixes searched leave ten different
    profiles (times, free nodes, free BB); a key that read one column twice would take two of
    them for one and keep nine."""
    model = _four_nodes((57, 38, 2, 7), (5, 47, 3, 10), (85, 31, 3, 10))
    res = solve_exhaustive(model, Budget(30))
    assert res.status is Status.OPTIMAL and res.objective == _optimum(model) == 27_125.0
    assert res.solution.order == (1, 0, 2)
    assert res.info == {"nodes": 10, "memo": 10}


def test_children_are_searched_smallest_own_term_first():
    """Three 2-3-node jobs on 4 nodes: taking each prefix's children by their own term (the
    job that would wait least first) finds the optimum 15,669 early and proves it from 8
    prefixes; taking them in queue order costs 10."""
    model = _four_nodes((95, 39, 3, 4), (1, 49, 3, 1), (94, 9, 2, 7))
    res = solve_exhaustive(model, Budget(30))
    assert res.status is Status.OPTIMAL and res.objective == _optimum(model) == 15_669.0
    assert res.solution.order == (2, 1, 0)
    assert res.info == {"nodes": 8, "memo": 8}


def test_of_two_optimal_orders_the_one_found_first_by_own_term_is_answered():
    """Three 2-node jobs on 4 nodes: orders (2, 1, 0) and (1, 2, 0) both score the optimum
    13,934; children taken by own term reach (2, 1, 0) first, and a later plan replaces the
    best only if strictly better, so (2, 1, 0) is answered (queue order would answer
    (1, 2, 0))."""
    model = _four_nodes((100, 36, 2, 6), (15, 38, 2, 10), (22, 25, 2, 5))
    res = solve_exhaustive(model, Budget(30))
    assert res.status is Status.OPTIMAL and res.objective == _optimum(model) == 13_934.0
    assert res.solution.order == (2, 1, 0)
    assert model.score((1, 2, 0)) == 13_934.0


def test_the_memo_tells_apart_prefixes_that_differ_only_in_their_free_nodes():
    """Five jobs without BB on 10 nodes, one running (3 nodes to 110): two prefixes of the same
    jobs leave the same breakpoints and BB column but not the same free nodes; a key without
    the nodes column takes them for one, spares the second, and misses the optimum 1,150 (it
    answers 1,175)."""
    jobs = [(90, 10, 3), (90, 10, 5), (95, 15, 2), (95, 10, 1), (95, 15, 6)]
    model = PlanModel(100, (10, 20 * GB), [(110, 3, 0)],
                      [Job(str(i), submit=s, walltime=w, nodes=n, bb=0)
                       for i, (s, w, n) in enumerate(jobs)], 2)
    res = solve_exhaustive(model, Budget(30))
    assert res.status is Status.OPTIMAL and res.objective == _optimum(model) == 1_150.0


def test_the_named_memo_tells_apart_prefixes_that_differ_only_in_the_compute_nodes_free_now(
        monkeypatch):
    """The authors' proximity placement (8 compute nodes, BB nodes of 10, 8, 8 and 4 GB in two
    Dragonfly groups), nodes 3, 6 and 7 busy: two prefixes of the same jobs leave the same
    profile and BB nodes but other compute nodes free now (the resource filter takes the
    shortest run that holds a job, so the order decides which), and a 10 GB job's pieces then
    go on other BB nodes. A key without the free compute nodes takes the two for one and misses
    the optimum 18,053 (it answers 18,621). The Python search (the compiled one keeps no
    memo)."""
    from bbopt.core import dragonfly_proximity

    monkeypatch.setenv("BBOPT_NO_JIT", "1")
    caps = (10 * GB, 8 * GB, 8 * GB, 4 * GB)
    platform = Platform(nodes=8, bb=sum(caps), bb_nodes=caps,
                        bb_proximity=dragonfly_proximity(8, 2, 2))
    jobs = tuple(Job(i, submit=s, walltime=w, nodes=n, bb=b * GB) for i, s, w, n, b in (
        ("0", 48, 26, 1, 0), ("2", 54, 4, 2, 0), ("3", 73, 39, 1, 10), ("4", 20, 41, 2, 10),
        ("5", 36, 16, 2, 0)))
    running = tuple(RunningJob(Job(f"r{k}", 0, walltime=300, nodes=1, bb=0), 50.0,
                               allocation=(node,), bb_pieces=())
                    for k, node in enumerate((3, 6, 7)))
    model = PlanModel.from_state(ClusterState(100.0, platform, running, jobs), 2)
    res = solve_exhaustive(model, Budget(30))
    assert res.status is Status.OPTIMAL and res.objective == _optimum(model) == 18_053.0

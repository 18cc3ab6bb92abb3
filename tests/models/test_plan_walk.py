"""Incremental plan evaluation (SwapWalk) against fresh evaluations of the plan model, and the
annealing that uses it against the same annealing scoring every move from scratch."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import GB, Job, Platform
from bbopt.models.plan import PlanModel
from bbopt.models.plan_walk import STRIDE, SwapWalk, clear_verdict, rejected_early
from bbopt.planner import bb_placement
from bbopt.solvers import Budget
from bbopt.solvers.plan.annealing import solve_annealing


def _model(rnd: random.Random, n: int, alpha: float = 2, cap_n: int = 10) -> PlanModel:
    """A random scheduling point: BB requests with fractional gigabytes (float sums), a few
    running jobs, submits before now."""
    cap_b = 20 * GB
    jobs = [Job(str(i), submit=rnd.randint(0, 100), walltime=rnd.choice([5, 10, 30, 60, 200]),
                nodes=rnd.randint(1, cap_n), bb=rnd.uniform(0, 12) * GB) for i in range(n)]
    running, used_n, used_b = [], 0, 0.0
    for _ in range(rnd.randint(0, 6)):
        r = (100 + rnd.randint(1, 300), rnd.randint(1, 3), rnd.uniform(0, 5) * GB)
        if used_n + r[1] <= cap_n and used_b + r[2] <= cap_b:
            running.append(r)
            used_n, used_b = used_n + r[1], used_b + r[2]
    return PlanModel(100.0, (cap_n, cap_b), running, jobs, alpha)


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 10**9), n=st.integers(2, 14), stride=st.integers(1, 5),
       alpha=st.sampled_from([1, 2, 3]), moves=st.integers(1, 40))
def test_swap_scores_and_plans_equal_fresh_evaluations(seed, n, stride, alpha, moves):
    """Every try_swap returns exactly what model.score returns for the swapped order and the
    same threshold (a score, or inf when rejected early), and after every accepted swap the
    walk's order, starts and score are those of a fresh plan of that order."""
    rnd = random.Random(seed)
    m = _model(rnd, n, alpha)
    order = list(range(m.n))
    rnd.shuffle(order)
    walk = SwapWalk(m, order, stride=stride)
    assert walk.score == m.score(order)
    for _ in range(moves):
        a, b = rnd.randrange(m.n), rnd.randrange(m.n)
        if a == b:
            continue
        swapped = walk.order[:]
        swapped[a], swapped[b] = swapped[b], swapped[a]
        fresh = m.score(swapped)
        # Thresholds around the swapped order's score: rejections at every depth, and none.
        threshold = rnd.choice([math.inf, fresh, fresh * rnd.uniform(0.3, 1.2),
                                walk.score * rnd.uniform(0.5, 1.5),
                                math.nextafter(fresh, math.inf), math.nextafter(fresh, -math.inf)])
        got = walk.try_swap(a, b, threshold)
        assert got == m.score(swapped, threshold)
        if got <= threshold:
            walk.accept()
            assert walk.order == swapped
            assert walk.score == fresh
            plan = m.plan(swapped)
            assert tuple(walk.start) == plan.starts
        else:
            with pytest.raises(ValueError, match="nothing to accept"):
                walk.accept()
            assert walk.order != swapped


#: Three nodes and two BB nodes of 1 GB, for the walk on named BB nodes.
NAMED3 = Platform(nodes=3, bb=2 * GB, bb_nodes=(GB, GB))


def _mixed_magnitudes(rnd: random.Random, running: bool = False, named: bool = False
                      ) -> tuple[PlanModel, list[int]]:
    """A scheduling point where one job has waited since t=0 (a term of about 1e16) beside
    jobs submitted seconds ago (terms of a few units): sums of such terms round, so the
    early rejection's partial sums decide thresholds at the score either way. ``running``:
    a job holds one or two of the 3 nodes for a few seconds (the bounds of the terms are then
    each job's earliest start in that profile, not now). ``named``: on :data:`NAMED3`, the
    jobs without BB (the walk on named BB nodes, whose rejection is told position by
    position)."""
    jobs = [Job(str(i), submit=rnd.choice([0, 1e8 - rnd.randint(0, 50), 1e8 - 3, 1e8 - 1.5]),
                walltime=rnd.choice([1, 2, 3, 7]), nodes=rnd.randint(1, 3))
            for i in range(rnd.randint(2, 6))]
    order = list(range(len(jobs)))
    rnd.shuffle(order)
    held = [(1e8 + rnd.choice([1, 2, 5]), rnd.randint(1, 2), 0.0)] if running else []
    if named:
        return PlanModel(1e8, NAMED3.capacity, [(*h, ()) for h in held], jobs, alpha=2,
                         placement=bb_placement(NAMED3)), order
    return PlanModel(1e8, (3, 0.0), held, jobs, alpha=2), order


def _partial_scores(model: PlanModel, order: list[int]) -> list[float]:
    """The scores of the first k positions of ``order``'s plan, summed as the evaluator does."""
    starts = model.plan(order).starts
    parts = [0.0]
    for p in order:
        parts.append(parts[-1] + model.term(p, starts[p]))
    return parts


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 10**9))
def test_rejection_told_at_the_end_is_the_early_rejection_of_the_score(seed):
    """rejected_early, asked once from a plan's partial scores, answers what the score's
    per-position rule answers (PlanModel.score returns inf), for thresholds at the score and
    one unit in the last place around it, where the rounding of the rule's sums decides."""
    rnd = random.Random(seed)
    model, order = _mixed_magnitudes(rnd, running=rnd.random() < 0.5)
    parts = _partial_scores(model, order)
    score = parts[-1]
    assert score == model.score(order)
    for threshold in (score, math.nextafter(score, math.inf), math.nextafter(score, -math.inf),
                      score * (1 + 1e-12), score * (1 - 1e-12), 2 * score, score / 2):
        assert rejected_early(order, parts, model._lbr, threshold) == (
            model.score(order, threshold) == math.inf), threshold
    # The walk's swaps, asked at their fresh scores: the same answers as the score's.
    walk = SwapWalk(model, order, stride=rnd.randint(1, 3))
    for a in range(model.n):
        for b in range(a + 1, model.n):
            swapped = walk.order[:]
            swapped[a], swapped[b] = swapped[b], swapped[a]
            fresh = model.score(swapped)
            for threshold in (fresh, math.nextafter(fresh, -math.inf)):
                assert walk.try_swap(a, b, threshold) == model.score(swapped, threshold)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**9), stride=st.integers(1, 3))
def test_the_named_walk_rejects_as_the_score_position_by_position(seed, stride):
    """On named BB nodes the walk asks the rule at every position it places, and at the
    positions of the shared prefix before it resumes: every swap, at its fresh score and one
    unit in the last place below, is rejected exactly when the score rejects it, where the
    rounding of the rule's sums decides."""
    rnd = random.Random(seed)
    model, order = _mixed_magnitudes(rnd, running=rnd.random() < 0.5, named=True)
    walk = SwapWalk(model, order, stride=stride)
    assert walk.score == model.score(order)
    for a in range(model.n):
        for b in range(a + 1, model.n):
            swapped = walk.order[:]
            swapped[a], swapped[b] = swapped[b], swapped[a]
            fresh = model.score(swapped)
            for threshold in (fresh, math.nextafter(fresh, -math.inf), fresh * (1 - 1e-12)):
                assert walk.try_swap(a, b, threshold) == model.score(swapped, threshold)


def test_a_named_swap_whose_every_term_is_its_bound_is_kept_at_its_score():
    """Three 1-node jobs on 3 free nodes all start now, so every term is its bound (waits of
    10, 20 and 30 s: 100, 400, 900) and the rule's sum is the score, 1400, at every position:
    a swap after a shared prefix (stride 1) is kept at a threshold equal to its score, the
    prefix's position included, and rejected just below it."""
    jobs = [Job(str(i), submit=90 - 10 * i, walltime=10, nodes=1) for i in range(3)]
    model = PlanModel(100.0, NAMED3.capacity, [], jobs, alpha=2,
                      placement=bb_placement(NAMED3))
    walk = SwapWalk(model, [0, 1, 2], stride=1)
    assert walk.score == 1400.0
    assert walk.try_swap(1, 2, 1400.0) == 1400.0
    assert walk.try_swap(1, 2, math.nextafter(1400.0, 0.0)) == math.inf
    assert walk.try_swap(2, 1, 1399.0) == math.inf
    assert walk.try_swap(2, 1, 1401.0) == 1400.0
    walk.accept()
    assert walk.order == [0, 2, 1]


def test_a_named_swap_is_rejected_by_the_rule_at_its_shared_prefix():
    """Found by a search: job 1 waited since 0 (a term of 1e16), jobs 0 and 2 seconds (terms
    9 and 2.25); all start now, every term its bound. After the prefix ``[1]`` the rule's sum
    is 1e16 + the rest's bounds (8 + 2.25, summed: 1e16 + 10), above a threshold of 1e16 + 8:
    the score rejects the swap there. Placed on, the sums round down (1e16 + 9 is 1e16 + 8)
    and never exceed it again, so only the prefix's check tells."""
    jobs = [Job("0", 1e8 - 3, walltime=7, nodes=1), Job("1", 0, walltime=2, nodes=1),
            Job("2", 1e8 - 1.5, walltime=2, nodes=1)]
    model = PlanModel(1e8, NAMED3.capacity, [], jobs, alpha=2, placement=bb_placement(NAMED3))
    walk = SwapWalk(model, [1, 2, 0], stride=1)
    threshold = 1e16 + 8
    assert model.score([1, 0, 2]) == 1e16 + 10
    assert model.score([1, 0, 2], threshold) == math.inf
    assert walk.try_swap(1, 2, threshold) == math.inf
    assert walk.try_swap(1, 2, 1e16 + 10) == 1e16 + 10


@pytest.mark.parametrize("seed, rejected", [(6, False), (7, True)])
def test_the_early_rejection_at_the_score_is_the_rule_not_the_comparison(seed, rejected):
    """Two points where the rule and ``score > threshold`` disagree: a threshold one unit in
    the last place below the score that the rule does not reject (seed 6), and a threshold
    equal to the score that it does (seed 7)."""
    model, order = _mixed_magnitudes(random.Random(seed))
    parts = _partial_scores(model, order)
    score = parts[-1]
    threshold = math.nextafter(score, -math.inf) if seed == 6 else score
    assert (model.score(order, threshold) == math.inf) is rejected
    assert rejected_early(order, parts, model._lbr, threshold) is rejected
    assert (score > threshold) is not rejected


def test_a_swap_of_jobs_that_keep_their_starts_reuses_the_rest_of_the_plan():
    """Two identical 1-node jobs swapped keep each other's starts: the plan after them is the
    current one (the walk adds the known terms), and its score is the fresh score."""
    jobs = [Job("a", 0, walltime=50, nodes=1), Job("b", 0, walltime=50, nodes=1),
            Job("big", 0, walltime=100, nodes=4), Job("c", 0, walltime=20, nodes=2)]
    m = PlanModel(10.0, (4, 0.0), [(60.0, 2, 0.0)], jobs, alpha=2)
    walk = SwapWalk(m, [0, 1, 2, 3], stride=1)
    assert walk.try_swap(0, 1) == m.score([1, 0, 2, 3])
    walk.accept()
    assert tuple(walk.start) == m.plan([1, 0, 2, 3]).starts
    # A swap that moves the big job first changes every later start.
    assert walk.try_swap(0, 2) == m.score([2, 0, 1, 3])


def test_walk_rejects_an_order_that_is_not_a_permutation():
    m = _model(random.Random(0), 4)
    with pytest.raises(ValueError, match="^order must be a permutation of the model's jobs$"):
        SwapWalk(m, [0, 1, 1, 3])


def test_only_a_swap_not_rejected_can_be_accepted_and_only_once():
    m = _model(random.Random(0), 4)
    walk = SwapWalk(m, [0, 1, 2, 3])
    message = "^nothing to accept: the last move was rejected or none was tried$"
    with pytest.raises(ValueError, match=message):  # the first plan is already the current one
        walk.accept()
    walk.try_swap(0, 3)
    walk.accept()
    assert walk.order == [3, 1, 2, 0]
    with pytest.raises(ValueError, match=message):
        walk.accept()
    assert walk.try_swap(1, 2, threshold=-1.0) == math.inf
    with pytest.raises(ValueError, match=message):
        walk.accept()


@pytest.mark.parametrize(("n", "stride", "snapshots"), [(7, None, 3), (6, 3, 3), (5, 2, 3),
                                                        (4, 2, 3), (3, 5, 1)])
def test_a_walk_keeps_a_profile_snapshot_every_stride_positions(n, stride, snapshots):
    """Snapshots before positions 0, stride, 2 * stride, ... up to n (the default stride 3)."""
    m = _model(random.Random(n), n)
    walk = SwapWalk(m, list(range(n)), stride=stride)
    assert walk.stride == (STRIDE if stride is None else stride) and STRIDE == 3
    assert len(walk.snaps) == snapshots
    assert walk.snaps[0] == (m._Tz, m._FNz, m._FBz)


@pytest.mark.parametrize(("alpha", "abc", "cab"), [
    (1, 0.3 + 8.3, 1.0 + 1.3),
    (2, 0.3 ** 2 + 8.3 ** 2, 1.0 + 1.3 ** 2),
    (3, 0.3 * 0.3 * 0.3 + 8.3 * 8.3 * 8.3, 1.0 + 1.3 * 1.3 * 1.3),
    (1.5, 0.3 ** 1.5 + 8.3 ** 1.5, 1.0 + 1.3 ** 1.5),
])
def test_a_swap_scores_waits_below_a_second_and_before_the_submit_as_the_model(alpha, abc,
                                                                                cab):
    """One node from now = 0; a (0.3 s) and b (10 s) submitted at 0, c (1 s) at 2. From
    b, a, c, the swap to a, b, c starts b after 0.3 s (a wait below one second: 0.3 ** alpha,
    not 0) and c at 10.3 (wait 8.3); the swap to c, a, b starts c at 0, 2 s before it was
    submitted (a wait of 0, not negative nor 1), a at 1 and b at 1.3. The terms are the
    model's: w * w * w for alpha 3 (0.3 ** 3 differs in the last bit), w ** alpha for others."""
    jobs = [Job("a", 0, walltime=0.3, nodes=1), Job("b", 0, walltime=10, nodes=1),
            Job("c", 2, walltime=1, nodes=1)]
    m = PlanModel(0.0, (1, 0.0), [], jobs, alpha=alpha)
    walk = SwapWalk(m, [1, 0, 2], stride=1)
    assert walk.score == m.score([1, 0, 2])
    assert walk.try_swap(0, 1) == m.score([0, 1, 2]) == pytest.approx(abc, rel=1e-15)
    assert m.plan([0, 1, 2]).starts == (0.0, 0.3, 10.3)
    assert walk.try_swap(2, 0) == m.score([2, 0, 1]) == pytest.approx(cab, rel=1e-15)
    assert m.plan([2, 0, 1]).starts == (1.0, 1.3, 0.0)


@pytest.mark.parametrize("alpha", [1, 2, 3])
def test_incremental_annealing_is_the_annealing_scoring_every_move_afresh(alpha):
    """Same plan, score and search statistics (moves accepted, improved, rejected early) with
    and without incremental evaluation, on queues of 6 to 40 jobs."""
    rnd = random.Random(alpha)
    for trial in range(30):
        m = _model(rnd, rnd.randint(6, 40), alpha, cap_n=rnd.choice([8, 16, 32]))
        seed = rnd.randrange(2**32)
        inc = solve_annealing(m, Budget(60.0), seed)
        ref = solve_annealing(m, Budget(60.0), seed, incremental=False)
        assert inc.solution == ref.solution, trial
        assert inc.objective == ref.objective
        assert inc.info == ref.info


@pytest.mark.parametrize(("score", "verdict"), [
    (1.0, False), (3.0, True),  # clearly below, clearly above a threshold of 2
    (999999997.9, False), (999999998.0, None), (999999998.1, None),  # at 1e9 - slack
    (1000000001.9, None), (1000000002.0, None), (1000000002.1, True),  # at 1e9 + slack
])
def test_a_plans_verdict_is_clear_only_beyond_a_slack_of_a_billionth(score, verdict):
    """The slack is 1e-9 of |threshold| + |score|: about 2 around 1e9 (1e9 - 2 and 1e9 + 2
    are exactly at it, in floats), 3e-9 around 2; within it the rule is replayed (None)."""
    threshold = 2.0 if score < 10 else 1e9
    assert clear_verdict(score, threshold) is verdict

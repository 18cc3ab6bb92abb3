"""The compiled pool loops (bbopt.planner.jit.pool) against the pure-Python ones: one contract.

The compiled walk and score must return, bit for bit, what the Python walk (SwapWalk) and the
Python score (PlanModel._run) return, move after move (swaps, thresholds that reject or not,
accepted and forgotten moves), and the annealing must find the same plans either way."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from bbopt.core import GB, Job  # noqa: E402
from bbopt.models.plan import PlanModel, kernels  # noqa: E402
from bbopt.models.plan_walk import CompiledWalk, SwapWalk, swap_walk  # noqa: E402
from bbopt.solvers import Budget  # noqa: E402
from bbopt.solvers.plan.annealing import solve_annealing  # noqa: E402


def _models(rnd: random.Random, n: int, alpha: int, cap_n: int) -> tuple[PlanModel, PlanModel]:
    """Two copies of a random scheduling point on the BB pool, the first scored by the Python
    loop, the second by the compiled one. BB requests in fractional gigabytes (float sums),
    walltimes that often end where another job ends (no new breakpoint), submits before and
    after a few running jobs' ends."""
    cap_b = 20 * GB
    jobs = [Job(str(i), submit=rnd.randint(0, 100), walltime=rnd.choice([5, 10, 30, 60, 200]),
                nodes=rnd.randint(1, cap_n), bb=rnd.choice([0.0, 5 * GB, rnd.uniform(0, 12) * GB]))
            for i in range(n)]
    running, used_n, used_b = [], 0, 0.0
    for _ in range(rnd.randint(0, 6)):
        r = (100 + rnd.choice([5, 10, rnd.randint(1, 300)]), rnd.randint(1, 3),
             rnd.uniform(0, 5) * GB)
        if used_n + r[1] <= cap_n and used_b + r[2] <= cap_b:
            running.append(r)
            used_n, used_b = used_n + r[1], used_b + r[2]
    python = PlanModel(100.0, (cap_n, cap_b), running, jobs, alpha)
    python._jit = False  # this model's score runs the Python loop
    compiled = PlanModel(100.0, (cap_n, cap_b), running, jobs, alpha)
    assert kernels() is not None
    return python, compiled


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 10**9), n=st.integers(1, 16), stride=st.integers(1, 5),
       alpha=st.sampled_from([1, 2, 3]), moves=st.integers(1, 50),
       cap_n=st.sampled_from([4, 10, 32]))
def test_the_compiled_walk_and_score_are_the_python_ones(seed, n, stride, alpha, moves, cap_n):
    """Move by move: the compiled walk's try_swap equals the Python walk's and both scores'
    (compiled and Python) for the same threshold; accepted moves (some acceptable ones are
    forgotten instead) leave the same order, score and starts in both walks, and the plans of
    both scores are the same."""
    rnd = random.Random(seed)
    py, jit = _models(rnd, n, alpha, cap_n)
    order = list(range(py.n))
    rnd.shuffle(order)
    assert jit.score(order) == py.score(order)
    assert jit.plan(order) == py.plan(order)
    slow, fast = SwapWalk(py, order, stride=stride), CompiledWalk(jit, order, stride=stride)
    assert fast.score == slow.score and fast.order == slow.order and fast.start == slow.start
    for _ in range(moves):
        a, b = rnd.randrange(py.n), rnd.randrange(py.n)
        if a == b:
            continue
        swapped = slow.order[:]
        swapped[a], swapped[b] = swapped[b], swapped[a]
        fresh = py.score(swapped)
        threshold = rnd.choice([math.inf, fresh, fresh * rnd.uniform(0.3, 1.2),
                                slow.score * rnd.uniform(0.5, 1.5),
                                math.nextafter(fresh, math.inf), math.nextafter(fresh, -math.inf)])
        got = fast.try_swap(a, b, threshold)
        assert got == slow.try_swap(a, b, threshold)
        assert got == py.score(swapped, threshold) == jit.score(swapped, threshold)
        if got <= threshold and rnd.random() < 0.8:
            fast.accept()
            slow.accept()
            assert fast.order == slow.order == swapped
            assert fast.score == slow.score == fresh
            assert fast.start == slow.start == list(py.plan(swapped).starts)
            assert jit.plan(swapped) == py.plan(swapped)
        elif got > threshold:
            with pytest.raises(ValueError):
                fast.accept()


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**9))
def test_the_compiled_rejection_at_the_score_is_the_rule(seed):
    """Scores mixing terms of about 1e16 and of a few units (their sums round): at thresholds
    at the fresh score and one unit in the last place below it, where only the rule position
    by position decides, the compiled walk answers what the Python walk and score answer."""
    rnd = random.Random(seed)
    jobs = [Job(str(i), submit=rnd.choice([0, 1e8 - rnd.randint(0, 50), 1e8 - 3, 1e8 - 1.5]),
                walltime=rnd.choice([1, 2, 3, 7]), nodes=rnd.randint(1, 3))
            for i in range(rnd.randint(2, 7))]
    held = [(1e8 + rnd.choice([1, 2, 5]), rnd.randint(1, 2), 0.0)] if rnd.random() < 0.5 else []
    py = PlanModel(1e8, (3, 0.0), held, jobs, alpha=2)
    py._jit = False
    jit = PlanModel(1e8, (3, 0.0), held, jobs, alpha=2)
    order = list(range(py.n))
    rnd.shuffle(order)
    stride = rnd.randint(1, 3)
    slow, fast = SwapWalk(py, order, stride=stride), CompiledWalk(jit, order, stride=stride)
    for a in range(py.n):
        for b in range(a + 1, py.n):
            swapped = slow.order[:]
            swapped[a], swapped[b] = swapped[b], swapped[a]
            fresh = py.score(swapped)
            for threshold in (fresh, math.nextafter(fresh, -math.inf)):
                got = fast.try_swap(a, b, threshold)
                assert got == slow.try_swap(a, b, threshold) == py.score(swapped, threshold)
                assert got == jit.score(swapped, threshold)


@pytest.mark.parametrize("alpha", [1, 2, 3])
def test_the_annealing_finds_the_same_plans_compiled_and_in_python(alpha, monkeypatch):
    """solve_annealing with the compiled loops and with BBOPT_NO_JIT=1 (the Python loops):
    the same plan, score and search statistics, on queues of 6 to 40 jobs."""
    rnd = random.Random(alpha)
    for trial in range(20):
        py, jit = _models(rnd, rnd.randint(6, 40), alpha, rnd.choice([8, 16, 32]))
        seed = rnd.randrange(2**32)
        with monkeypatch.context() as env:
            env.setenv("BBOPT_NO_JIT", "1")
            ref = solve_annealing(py, Budget(60.0), seed)
        got = solve_annealing(jit, Budget(60.0), seed)
        assert got.solution == ref.solution, trial
        assert got.objective == ref.objective
        assert got.info == ref.info


def test_the_switch_between_compiled_and_python(monkeypatch):
    """Pool models with alpha 1-3 get the compiled walk; other alphas and BBOPT_NO_JIT=1 the
    Python one (named BB nodes have their own compiled walk: tests/planner/jit/test_named.py)."""
    jobs = [Job(str(i), 0, walltime=10 * (i + 1), nodes=1 + i % 2, bb=GB) for i in range(4)]
    pool = PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=2)
    assert isinstance(swap_walk(pool, [0, 1, 2, 3]), CompiledWalk)
    odd = PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=1.5)
    assert type(swap_walk(odd, [0, 1, 2, 3])) is SwapWalk
    monkeypatch.setenv("BBOPT_NO_JIT", "1")
    assert kernels() is None
    assert type(swap_walk(pool, [0, 1, 2, 3])) is SwapWalk
    fresh = PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=2)
    assert fresh.score([3, 2, 1, 0]) == pool.score([3, 2, 1, 0])
    assert fresh._jit is False and pool._jit


def test_numba_is_imported_when_a_plan_model_is_scored_not_before():
    """Importing bbopt, the plan model and the annealing imports no numba (runs that never plan
    do not pay its import); scoring a pool model does."""
    import subprocess
    import sys

    code = ("import sys, bbopt; from bbopt.models.plan import PlanModel; "
            "from bbopt.solvers.plan.annealing import solve_annealing; "
            "print('numba' in sys.modules); "
            "m = PlanModel(0.0, (2, 0.0), [], [bbopt.Job('a', 0, walltime=5, nodes=1)]); "
            "m.score([0]); print('numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True)
    assert out.stdout.split() == ["False", "True"]


def test_the_walk_chosen_keeps_the_stride_asked():
    """swap_walk hands the stride to whichever walk it chooses (the compiled pool walk for
    alpha 1, 2 and 3, the compiled named walk on named BB nodes, the Python walk for other
    alphas); without one, every walk snapshots every STRIDE = 3 positions."""
    from bbopt.core import Platform
    from bbopt.models.plan_walk import STRIDE
    from bbopt.planner import bb_placement
    from bbopt.planner.named import NamedWalk

    jobs = [Job(str(i), 0, walltime=10 * (i + 1), nodes=1 + i % 2, bb=GB) for i in range(5)]
    order = [4, 0, 3, 1, 2]
    named = Platform(nodes=4, bb=4 * GB, bb_nodes=(2 * GB, 2 * GB))
    models = [(PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=alpha), CompiledWalk)
              for alpha in (1, 2, 3)]
    models += [(PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=1.5), SwapWalk),
               (PlanModel(0.0, named.capacity, [], jobs, alpha=2,
                          placement=bb_placement(named)), NamedWalk)]
    assert STRIDE == 3
    for model, kind in models:
        for stride, kept in ((None, STRIDE), (2, 2), (4, 4)):
            walk = swap_walk(model, order, stride)
            assert type(walk) is kind and walk.stride == kept
            assert walk.order == order and walk.score == model.score(order)


def test_the_compiled_walk_refuses_what_it_cannot_score():
    from bbopt.core import Platform
    from bbopt.planner import bb_placement

    jobs = [Job(str(i), 0, walltime=10, nodes=1) for i in range(3)]
    pool = PlanModel(0.0, (2, 0.0), [], jobs, alpha=2)
    with pytest.raises(ValueError, match="^order must be a permutation of the model's jobs$"):
        CompiledWalk(pool, [0, 1, 1])
    message = "^the compiled walk scores pool models with alpha 1, 2 or 3$"
    with pytest.raises(ValueError, match=message):
        CompiledWalk(PlanModel(0.0, (2, 0.0), [], jobs, alpha=1.5), [0, 1, 2])
    named = Platform(nodes=2, bb=2 * GB, bb_nodes=(GB, GB))
    with pytest.raises(ValueError, match=message):
        CompiledWalk(PlanModel(0.0, named.capacity, [], jobs, alpha=2,
                               placement=bb_placement(named)), [0, 1, 2])
    walk = CompiledWalk(pool, [2, 0, 1])
    nothing = "^nothing to accept: the last move was rejected or none was tried$"
    with pytest.raises(ValueError, match=nothing):
        walk.accept()
    assert walk.try_swap(0, 2) == pool.score([1, 0, 2])
    walk.accept()
    assert walk.order == [1, 0, 2] and walk.start == list(pool.plan([1, 0, 2]).starts)
    with pytest.raises(ValueError, match=nothing):
        walk.accept()


def _pool_arrays(FN, FB, T, job):
    """A hand-made profile (breakpoints ``T`` ending at infinity, free nodes ``FN`` and free BB
    ``FB``) with room for one breakpoint per job, and the table of one job ``job`` = (nodes, BB
    needed now, walltime, earliest start, BB, submit, bound)."""
    import numpy as np

    from bbopt.planner.jit.pool import JOB_ROWS

    base = np.zeros((3, len(T) + 1))
    base[:, :len(T)] = (T, FN, FB)
    jobs = np.array(job, dtype=np.float64).reshape(JOB_ROWS, 1)
    return jobs, base, np.empty_like(base), np.zeros(1), np.zeros(1, dtype=np.int64)


@pytest.mark.parametrize(("free_n", "free_b", "start"), [
    (2.0, 5 * GB, 0.0),                               # exactly the need in both rows: now
    (2.0, 5 * GB - 1.0, 50.0),                        # one byte short: when the BB is freed
    (2.0, math.nextafter(5 * GB, 0.0), 50.0),         # one ulp short
    (1.0, 5 * GB, 50.0),                              # one node short
])
def test_score_pool_places_a_job_only_where_both_rows_have_its_need(free_n, free_b, start):
    """score_pool on a hand-made profile (a running job ends at 50, freeing 2 nodes and 5 GB):
    a job of 2 nodes and 5 GB starts now when the free space is its need exactly, at 50 when
    either row is one byte, one ulp or one node short (no slack added); its term is start^2."""
    from bbopt.planner.jit.pool import score_pool

    jobs, base, work, starts, order = _pool_arrays(
        (free_n, free_n + 2, free_n + 2), (free_b, free_b + 5 * GB, free_b + 5 * GB),
        (0.0, 50.0, math.inf), (2.0, 5 * GB, 10.0, 0.0, 5 * GB, 0.0, 0.0))
    assert score_pool(jobs, base, work, order, 2, math.inf, 0.0, starts) == start * start
    assert starts[0] == start
    # the reservation: [start, start + 10) holds the job's 2 nodes and 5 GB
    k = int(start > 0)
    assert work[0, k:k + 2].tolist() == [start, start + 10.0]
    assert work[1, k] == base[1, k] - 2.0 and work[2, k] == base[2, k] - 5 * GB

"""The compiled plan loops on named BB nodes (bbopt.planner.jit.named) against the pure-Python
ones (bbopt.models.plan_named.place, PlanModel._run_named, SwapWalk._walk_named): one contract.

Kopanski & Rzadca, Sections 3.3 and 4.1: the compiled score and walk must return, bit for bit,
what the Python ones return (scores, starts, early rejections, move after move), on first-fit
and proximity platforms, with BB requests that fill a BB node exactly (pieces at the boundary
of the first-fit rule) and fractional ones (float sums), and the annealing must find the same
plans either way."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob, dragonfly_proximity  # noqa: E402,E501
from bbopt.models.plan import PlanModel  # noqa: E402
from bbopt.models.plan_walk import SwapWalk, swap_walk  # noqa: E402
from bbopt.planner.bb import FirstFitBB  # noqa: E402
from bbopt.planner.named import NamedWalk, kernels  # noqa: E402
from bbopt.planner.pieces import contiguous_nodes, first_fit_pieces, proximity_pieces  # noqa: E402,E501
from bbopt.solvers import Budget  # noqa: E402
from bbopt.solvers.plan.annealing import solve_annealing  # noqa: E402
from bbopt.solvers.plan.exhaustive import solve_exhaustive  # noqa: E402

PROXIMITY = dragonfly_proximity(8, 2, 2)  # 8 compute nodes, 4 BB nodes in 2 groups


def _state(rnd: random.Random, proximity: bool, n: int) -> ClusterState | None:
    """A random scheduling point at t=50 on 4 BB nodes: running jobs placed as the engine
    places them (first fit, or the resource filter and proximity), ``n`` waiting jobs whose BB
    is whole GB (pieces that fill a node exactly), fractional GB, or none."""
    caps = ((10 * GB,) * 4 if proximity else
            tuple(rnd.choice([6, 7, 10, 12.5]) * GB for _ in range(4)))
    extra = {"bb_proximity": PROXIMITY} if proximity else {}
    platform = Platform(nodes=8, bb=sum(caps), bb_nodes=caps, **extra)
    free, space, tol = list(range(8)), list(caps), 1e-12 * max(caps)
    held = []
    for k in range(rnd.randint(0, 4)):
        nodes_n, bb, w = rnd.randint(1, 3), rnd.choice([0, 4, 8, 6.3]) * GB, rnd.randint(51, 200)
        nodes = contiguous_nodes(free, nodes_n)
        if nodes is None:
            return None
        pieces = (proximity_pieces(space, nodes, bb, tol, PROXIMITY) if proximity
                  else first_fit_pieces(space, nodes_n, bb, tol)) if bb else ()
        if pieces is None:
            return None
        for node, size in pieces:
            space[node] -= size
        free = [x for x in free if x not in nodes]
        held.append(RunningJob(Job(f"r{k}", 0, walltime=w, runtime=w, nodes=nodes_n, bb=bb),
                               0.0, nodes, pieces))
    queue = tuple(Job(f"q{k}", float(rnd.randint(0, 50)),
                      walltime=float(rnd.choice([10, 50, 100, rnd.randint(1, 150)])),
                      nodes=rnd.randint(1, 4),
                      bb=rnd.choice([0.0, 4 * GB, 8 * GB, 12 * GB, rnd.uniform(0, 20) * GB]))
                  for k in range(n))
    return ClusterState(50.0, platform, tuple(held), queue)


def _models(state: ClusterState, alpha: int = 2) -> tuple[PlanModel, PlanModel]:
    """The same scheduling point twice: scored by the Python loops, and compiled."""
    python = PlanModel.from_state(state, alpha)
    python._njit = False
    compiled = PlanModel.from_state(state, alpha)
    assert compiled.named_arrays() is not None
    return python, compiled


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 10**9), proximity=st.booleans(), n=st.integers(1, 12),
       alpha=st.sampled_from([1, 2, 3]))
def test_the_compiled_score_is_the_python_one(seed, proximity, n, alpha):
    """Scores and plans of random orders, and the early rejection at the score itself (kept)
    and one float below it (rejected), as the Python loop gives them."""
    rnd = random.Random(seed)
    state = _state(rnd, proximity, n)
    if state is None:
        return
    py, jit = _models(state, alpha)
    for _ in range(4):
        order = list(range(py.n))
        rnd.shuffle(order)
        score = py.score(order)
        assert jit.score(order) == score
        assert jit.plan(order) == py.plan(order)
        for threshold in (score, math.nextafter(score, -math.inf), score / 2):
            assert jit.score(order, threshold) == py.score(order, threshold)


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 10**9), proximity=st.booleans(), n=st.integers(2, 14),
       stride=st.integers(1, 4), moves=st.integers(1, 40))
def test_the_compiled_walk_is_the_python_walk(seed, proximity, n, stride, moves):
    """Move by move, the compiled walk's try_swap equals the Python walk's and a fresh score
    for the same threshold (none, the fresh score, one float below); accepted moves (some
    acceptable ones are forgotten instead) leave both walks on the same order and starts."""
    rnd = random.Random(seed)
    state = _state(rnd, proximity, n)
    if state is None:
        return
    py, jit = _models(state)
    if py.n < 2:
        return
    order = list(range(py.n))
    rnd.shuffle(order)
    slow, fast = SwapWalk(py, order, stride), swap_walk(jit, order, stride)
    assert isinstance(fast, NamedWalk)
    assert fast.score == slow.score == py.score(order)
    for _ in range(moves):
        a, b = rnd.randrange(py.n), rnd.randrange(py.n)
        if a == b:
            continue
        swapped = slow.order[:]
        swapped[a], swapped[b] = swapped[b], swapped[a]
        fresh = py.score(swapped)
        threshold = rnd.choice([math.inf, fresh, math.nextafter(fresh, -math.inf)])
        got = fast.try_swap(a, b, threshold)
        assert got == slow.try_swap(a, b, threshold) == py.score(swapped, threshold)
        if got != math.inf and rnd.random() < 0.7:
            fast.accept()
            slow.accept()
            assert fast.order == slow.order == swapped
            assert fast.start == slow.start == list(py.plan(swapped).starts)
            assert fast.score == slow.score


@pytest.mark.parametrize("proximity", [False, True])
def test_the_annealing_finds_the_same_plans_compiled_and_in_python(proximity, monkeypatch):
    """solve_annealing with the compiled loops and with BBOPT_NO_JIT=1 (the Python loops):
    the same plan, score and search statistics, on queues of 6 to 30 jobs (some shorter once
    the jobs that never fit are left out: searched exhaustively, where the compiled search
    visits at least as many prefixes, having no memo)."""
    rnd = random.Random(7 + proximity)
    tried = 0
    while tried < 12:
        state = _state(rnd, proximity, rnd.randint(6, 30))
        if state is None:
            continue
        tried += 1
        seed = rnd.randrange(2**32)
        with monkeypatch.context() as env:
            env.setenv("BBOPT_NO_JIT", "1")
            python = PlanModel.from_state(state, 2)
            ref = solve_annealing(python, Budget(60.0), seed)
            assert python.named_arrays() is None
        compiled = PlanModel.from_state(state, 2)
        got = solve_annealing(compiled, Budget(60.0), seed)
        assert compiled.named_arrays() is not None
        assert got.solution == ref.solution
        assert got.objective == ref.objective
        if got.info["method"] == "exhaustive":  # (short queues: the compiled search keeps no
            for key in ("nodes", "memo"):       # memo, so it visits more prefixes)
                assert got.info.pop(key) >= ref.info.pop(key) * (key == "nodes")
        assert got.info == ref.info


def test_a_start_now_takes_the_engines_pieces_and_nodes():
    """A worked case: a running job holds 8 GB of BB node 0 until t=100 (2 GB left, the
    other BB nodes 10 GB). Job a (2 nodes, 8 GB: pieces of 4 GB) starts now on BB node 1
    either way (first fit; proximity gives it compute nodes 2, 3 of chassis 1). Job b (2 GB)
    then fills BB node 0 exactly by first fit, and jobs c and d (10 GB each) take BB nodes 2
    and 3: all start now. By proximity b goes on compute node 4, whose BB node is 2 (8 GB
    left), c (compute node 5) on BB node 3, and d (compute node 6) finds no BB node with
    10 GB until the running job ends."""
    running = RunningJob(Job("r", 0, walltime=100, runtime=100, nodes=2, bb=8 * GB), 0.0,
                         (0, 1), ((0, 4 * GB), (0, 4 * GB)))
    queue = (Job("a", 0, walltime=200, nodes=2, bb=8 * GB),
             Job("b", 0, walltime=200, nodes=1, bb=2 * GB),
             Job("c", 0, walltime=200, nodes=1, bb=10 * GB),
             Job("d", 0, walltime=200, nodes=1, bb=10 * GB))
    caps = (10 * GB,) * 4
    first_fit = Platform(nodes=8, bb=40 * GB, bb_nodes=caps)
    near = Platform(nodes=8, bb=40 * GB, bb_nodes=caps, bb_proximity=PROXIMITY)
    for platform, d_start in ((first_fit, 0.0), (near, 100.0)):
        state = ClusterState(0.0, platform, (running,), queue)
        py, jit = _models(state)
        assert jit.plan([0, 1, 2, 3]) == py.plan([0, 1, 2, 3])
        assert jit.plan([0, 1, 2, 3]).starts == (0.0, 0.0, 0.0, d_start)


def test_the_switch_between_compiled_and_python(monkeypatch):
    """Named models with alpha 1-3 get the compiled loops, other alphas and BBOPT_NO_JIT=1
    the Python ones, with the same scores."""
    jobs = [Job(str(i), 0, walltime=10 * (i + 1), nodes=1 + i % 2, bb=GB) for i in range(4)]
    TWO_NODES = FirstFitBB(Platform(2, 4 * GB, bb_nodes=(2 * GB, 2 * GB)))  # noqa: N806
    named = PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=2, placement=TWO_NODES)
    assert isinstance(swap_walk(named, [0, 1, 2, 3]), NamedWalk)
    odd = PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=1.5, placement=TWO_NODES)
    assert type(swap_walk(odd, [0, 1, 2, 3])) is SwapWalk
    monkeypatch.setenv("BBOPT_NO_JIT", "1")
    assert kernels() is None
    fresh = PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=2, placement=TWO_NODES)
    assert type(swap_walk(fresh, [0, 1, 2, 3])) is SwapWalk
    assert fresh.score([3, 2, 1, 0]) == named.score([3, 2, 1, 0])
    assert fresh.named_arrays() is None and named.named_arrays() is not None


# Conservative backfilling on named BB nodes: the compiled decision against the Python one.
_NAMED = Platform(nodes=8, bb=100.0, bb_nodes=(25.0, 25.0, 30.0, 20.0))
_NEAR = Platform(nodes=8, bb=40 * GB, bb_nodes=(10 * GB,) * 4, bb_proximity=PROXIMITY)


@st.composite
def _crowded(draw, bb_unit: float):
    """Up to 30 jobs arriving together (long queues, many kept reservations), BB in whole
    and fractional units (pieces that fill a BB node exactly, and float sums), runtimes that
    end early (reservations compressed) or at their walltime."""
    jobs = []
    for k in range(draw(st.integers(1, 30))):
        walltime = draw(st.integers(1, 20))
        bb = draw(st.one_of(st.integers(0, 40).map(float), st.floats(0.25, 40)))
        jobs.append(Job(str(k), float(draw(st.integers(0, 15))), walltime=float(walltime),
                        runtime=float(draw(st.integers(0, walltime))),
                        nodes=draw(st.integers(1, 8)), bb=bb * bb_unit))
    return jobs


@settings(max_examples=60, deadline=None)
@given(jobs=_crowded(1.0), depth=st.sampled_from([None, 1, 3]))
def test_the_compiled_conservative_decision_is_the_python_one(jobs, depth):
    """Whole replays on four named BB nodes of unequal sizes: every start the same, as
    conservative-bb plans them in Python (``compiled=false``)."""
    from bbopt.simulation import simulate

    options = {} if depth is None else {"depth": depth}
    ref = simulate(jobs, _NAMED, "conservative-bb", options={**options, "compiled": False})
    got = simulate(jobs, _NAMED, "conservative-bb", options=options)
    assert got.start == ref.start
    assert got.refused_starts == ref.refused_starts


@settings(max_examples=30, deadline=None)
@given(jobs=_crowded(GB / 4))
def test_the_compiled_conservative_decision_is_the_python_one_by_proximity(jobs):
    """The same on a proximity platform (the policy plans first-fit pieces; the engine
    places them by proximity)."""
    from bbopt.simulation import simulate

    ref = simulate(jobs, _NEAR, "conservative-bb", options={"compiled": False})
    got = simulate(jobs, _NEAR, "conservative-bb")
    assert got.start == ref.start


def test_a_kept_reservation_is_compressed_before_new_jobs_are_planned():
    """A worked decision: BB node 0 (10 GB) is held until t=100 by a running job, node 1
    (10 GB) is free. Job b (1 node, 10 GB, 50 s) kept a reservation at t=300: it is compressed
    first, to now on node 1; the new job a (10 GB) then finds node 1 held until t=50 and node
    0 until t=100, and is reserved at t=50."""
    from bbopt.policies.conservative import ConservativeBackfilling

    platform = Platform(nodes=4, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))
    running = RunningJob(Job("r", 0, walltime=100, runtime=100, nodes=1, bb=10 * GB), 0.0,
                         None, ((0, 10 * GB),))
    queue = (Job("a", 0, walltime=200, nodes=1, bb=10 * GB),
             Job("b", 0, walltime=50, nodes=1, bb=10 * GB))
    state = ClusterState(0.0, platform, (running,), queue, memory={"reservations": {"b": 300.0}})
    for compiled in (False, None):
        decision = ConservativeBackfilling(compiled=compiled).decide(state)
        assert [s.job_id for s in decision.start] == ["b"]
        assert [(r.job_id, r.start) for r in decision.reservations] == [("a", 50.0)]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 10**9), proximity=st.booleans(), n=st.integers(2, 5),
       alpha=st.sampled_from([1, 2, 3]))
def test_the_compiled_exhaustive_search_is_the_python_one(seed, proximity, n, alpha):
    """Queues of 2 to 5 jobs: the compiled exhaustive search (no memo) returns the plan, the
    score and the status of the Python one (with its memo), and its plan is the best order's
    fresh plan; the number of prefixes visited is at most the 206 of a 5-job tree."""
    rnd = random.Random(seed)
    state = _state(rnd, proximity, n)
    if state is None:
        return
    py, jit = _models(state, alpha)
    if py.n < 2:
        return
    slow = solve_exhaustive(py, Budget(60.0))
    fast = solve_exhaustive(jit, Budget(60.0))
    assert fast.solution == slow.solution
    assert fast.objective == slow.objective and fast.status is slow.status
    assert fast.objective == py.score(fast.solution.order)
    # (at most every prefix short of a whole order: 3, 10, 41, 206 for 2 to 5 jobs)
    tree = sum(math.perm(py.n, k) for k in range(py.n))
    assert 1 <= fast.info["nodes"] <= tree
    assert fast.info["memo"] == 0 < slow.info["memo"]


def _walk_case(n: int = 5) -> PlanModel:
    """Jobs of 1-2 nodes and 1 GB on two BB nodes of 2 GB (at most four pieces at once)."""
    jobs = [Job(str(i), 0, walltime=10 * (i + 1), nodes=1 + i % 2, bb=GB) for i in range(n)]
    two = FirstFitBB(Platform(2, 4 * GB, bb_nodes=(2 * GB, 2 * GB)))
    return PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=2, placement=two)


def test_the_compiled_walk_accepts_only_a_move_it_kept():
    """A walk takes a permutation of the model's jobs; ``accept`` adopts the last swap tried
    once, and never a rejected one (score ``inf`` for its threshold) or none at all."""
    model = _walk_case()
    arrays = model.named_arrays()
    with pytest.raises(ValueError, match=r"^order must be a permutation of the model's jobs$"):
        NamedWalk(arrays, [0, 1, 2, 3, 3], 2)
    walk = NamedWalk(arrays, [0, 1, 2, 3, 4], 2)
    assert walk.score == model.score([0, 1, 2, 3, 4]) and walk.order == [0, 1, 2, 3, 4]
    nothing = r"^nothing to accept: the last move was rejected or none was tried$"
    with pytest.raises(ValueError, match=nothing):
        walk.accept()
    swapped = model.score([4, 1, 2, 3, 0])
    assert walk.try_swap(4, 0) == swapped
    walk.accept()
    assert walk.order == [4, 1, 2, 3, 0] and walk.score == swapped
    with pytest.raises(ValueError, match=nothing):
        walk.accept()
    assert walk.try_swap(0, 4, threshold=0.0) == math.inf  # every plan scores above 0
    with pytest.raises(ValueError, match=nothing):
        walk.accept()
    assert walk.order == [4, 1, 2, 3, 0] and walk.score == swapped


def _swaps_by_hand(by_hand, first, second, slack, steps, temperature, want):
    """The annealing's moves ``first[s]``, ``second[s]`` for ``s`` in ``steps`` tried and kept
    one by one on ``by_hand`` (kept at most ``current + temperature * slack[s]``), counting
    into ``want`` as ``moves`` counts (kept, improvements, aborted, tried); the current and
    best scores, the best order (``None``: no improvement) and how many swaps scored exactly
    the threshold and the best."""
    current = best = by_hand.score
    want_order = None
    ties = 0
    for s in steps:
        a, b = int(first[s]), int(second[s])
        if a == b:
            want[0] += 1
            continue
        threshold = current + temperature * slack[s]
        score = by_hand.try_swap(a, b, threshold)
        ties += score == threshold == best
        want[3] += 1
        want[2] += score == math.inf
        if score <= threshold:
            by_hand.accept()
            current = score
            want[0] += 1
            if score < best:
                best, want_order = score, by_hand.order
                want[1] += 1
    return current, best, want_order, ties


def test_the_compiled_annealing_moves_are_swaps_kept_at_the_threshold():
    """``moves`` from step 2: the moves of positions ``first[s]``, ``second[s]`` for s = 2..5,
    each kept when its score is at most ``current + temperature * slack[s]``, as the same
    swaps tried and accepted one by one; the counters, the best order and the walk's score
    follow, and nothing is left to accept."""
    import numpy as np

    model = _walk_case()
    first = np.array([3, 3, 0, 1, 2, 2], dtype=np.int64)
    second = np.array([0, 0, 4, 3, 2, 0], dtype=np.int64)
    slack = np.array([0.0, 0.0, 0.5, 100.0, 1.0, 2.0])  # (the second move kept though worse)
    temperature = 40.0
    walk = NamedWalk(model.named_arrays(), [0, 1, 2, 3, 4], 2)
    by_hand = NamedWalk(model.named_arrays(), [0, 1, 2, 3, 4], 2)
    assert walk.order == by_hand.order == [0, 1, 2, 3, 4]  # (the walks' current buffers)
    counts = [0, 0, 0, 0]
    want = [0, 0, 0, 0]
    best_order = np.zeros(5, dtype=np.int64)
    current, best, want_order, _ = _swaps_by_hand(by_hand, first, second, slack, range(2, 6),
                                                  temperature, want)
    got = walk.moves(first, second, slack, 2, 4, walk.score, temperature, walk.score, counts,
                     best_order)
    assert got == (6, current, best)
    assert counts == want and walk.order == by_hand.order and walk.score == current
    assert best_order.tolist() == want_order
    assert want == [3, 1, 1, 3] and best_order.tolist() == [4, 1, 2, 3, 0] != walk.order
    with pytest.raises(ValueError, match=r"^nothing to accept"):
        walk.accept()


def test_the_compiled_exhaustive_search_finds_a_plan_better_by_half_a_second():
    """Two jobs of 1 GB on one compute node and two BB nodes of 1 GB, alpha 1: a first (10 s)
    waits nothing and b waits 10 s (score 10), the other order 10.5. From the incumbent
    [b, a] the search visits the root and both children and returns the better plan; from
    [a, b] it keeps it."""
    platform = Platform(1, 2 * GB, bb_nodes=(GB, GB))
    queue = (Job("a", 0.0, 10.0, nodes=1, bb=GB), Job("b", 0.0, 10.5, nodes=1, bb=GB))
    model = PlanModel.from_state(ClusterState(0.0, platform, (), queue), 1)
    assert (model.score([0, 1]), model.score([1, 0])) == (10.0, 10.5)
    arrays = model.named_arrays()
    assert arrays.exhaustive(10.5, [1, 0]) == (10.0, [0, 1], 3)
    assert arrays.exhaustive(10.0, [0, 1]) == (10.0, [0, 1], 3)


@pytest.mark.parametrize(("nodes", "words"), [(64, 1), (65, 2), (128, 2), (129, 3)])
def test_a_placements_signature_holds_one_bit_per_compute_node(nodes, words):
    """A placement's signature: its kind, its pieces on each of the 2 BB nodes, then its
    compute nodes on a proximity platform, one bit each in 64-bit words (at 64 and 128 nodes,
    and one node past): the signature has room for them all."""
    platform = Platform(nodes=nodes, bb=2 * GB, bb_nodes=(GB, GB),
                        bb_proximity=((0, 1),) * nodes)
    queue = (Job("q", 0.0, 10.0, nodes=1, bb=GB),)
    model = PlanModel.from_state(ClusterState(0.0, platform, (), queue), 2)
    arrays = model.named_arrays()
    assert arrays.width >= 1 + 2 + words
    assert arrays.scratch()[0].shape[0] >= 1 + 2 + words
    _check_first_snapshot(model, arrays, [GB, GB], [1.0] * nodes)
    walk = NamedWalk(arrays, [0], 1)
    assert walk.order == [0] and walk.start == [0.0] and walk.score == 0.0


def _near_model() -> PlanModel:
    """5 jobs of 1-2 nodes and 1 GB on 4 BB nodes by proximity (8 compute nodes), 3 of them
    busy until 20 with 5 GB on BB node 0."""
    running = (RunningJob(Job("r", 0, 20.0, nodes=3, bb=5 * GB), 0.0, (0, 1, 2),
                          ((0, 5 * GB),)),)
    state = ClusterState(0.0, _NEAR, running, tuple(
        Job(f"q{i}", 0.0, 10.0 * (i + 1), nodes=1 + i % 2, bb=GB) for i in range(5)))
    return PlanModel.from_state(state, 2)


def test_the_arrays_start_from_the_models_profile_and_state_now():
    """Before any compiled loop runs: the profile's breakpoints, free nodes, pool BB and each
    BB node's space in its rows, the BB nodes now and a 1.0 per free compute node in the state
    now, and both copied into the first snapshot that every score starts from."""
    model = _near_model()
    _check_first_snapshot(model, model.named_arrays(), [5 * GB, 10 * GB, 10 * GB, 10 * GB],
                          [0.0] * 3 + [1.0] * 5)


def _check_first_snapshot(model: PlanModel, a, bb_now: list[float], ids_now: list[float]):
    """``a`` holds ``model``'s profile rows, the BB nodes' space ``bb_now`` and the free
    compute nodes ``ids_now`` now, both copied into the first snapshot (no compiled loop has
    run: the fastest tests call this first, before a loop could crash on wrong arrays)."""
    length, k = len(model._Tz), len(bb_now)
    assert a.base[0, :length].tolist() == list(model._Tz)
    assert a.base[1, :length].tolist() == list(model._FNz)
    assert a.base[2, :length].tolist() == list(model._FBz)
    assert a.base[3:3 + k, :length].T.tolist() == [list(row) for row in model._FKz]
    assert a.base_now[:k].tolist() == bb_now
    assert a.base_now[k:k + len(ids_now)].tolist() == ids_now
    assert (a._pool[0, 0] == a.base).all() and (a._pool_now[0, 0] == a.base_now).all()


@pytest.mark.parametrize("stride", [1, 2, 3, 5])
def test_the_buffers_hold_what_the_unchecked_compiled_loops_index(stride):
    """numba does not check bounds: each buffer the compiled score and walk write must hold
    what they index (their layout in bbopt.planner.jit.named) for 5 jobs on 4 BB nodes and 8
    compute nodes by proximity: the profile with room for one breakpoint per job, a
    signature, every job's start, term and the score after each, the changed jobs after four
    counters, a snapshot every ``stride`` positions and the work space."""
    model = _near_model()
    a = model.named_arrays()
    n, k, nn, width = 5, 4, 8, 1 + 4 + 1
    length = len(model._Tz)
    assert a.jobs.shape == (6, n)
    assert a.base.shape[0] >= 3 + k and a.base.shape[1] >= length + n
    assert a.base_now.shape[0] >= k + nn and a.prox.shape[0] >= nn and a.prox.shape[1] >= k
    assert a.consts.shape[0] >= 2 + k and a.width >= width
    sig, fwork, iwork = a.scratch()
    assert sig.shape[0] >= width and fwork.shape[0] >= 3 and fwork.shape[1] >= 2 + k
    assert iwork.shape[0] >= 3 and iwork.shape[1] >= nn
    walk = NamedWalk(a, list(range(n)), stride)
    for owner, snaps in ((a, 1), (walk, (n - 1) // stride + 1)):
        assert owner._orders.shape[0] >= 2 and owner._orders.shape[1] == n
        assert owner._vals.shape[1] >= 3 and owner._vals.shape[2] >= n + 1
        assert owner._sigs.shape[1] == n and owner._sigs.shape[2] >= width
        assert owner._pool.shape[0] >= snaps + 1 and owner._pool.shape[1] >= 2
        assert owner._pool.shape[2:] == a.base.shape
        assert owner._pool_now.shape[0] >= snaps + 1 and owner._pool_now.shape[1] >= 2
        assert owner._pool_now.shape[2:] == a.base_now.shape
        assert owner._side.shape[0] >= 2 and owner._side.shape[1] >= snaps + 1
        assert owner._dirty.shape[0] >= n + 4
    assert walk._state.shape[0] >= 7 and walk._fstate.shape[0] >= 3
    assert walk.score == model.score(list(range(n)))


def test_scores_walks_and_searches_from_fixed_seeds_are_the_pythons():
    """The compiled placement, walk and exhaustive search against the Python loops on a few
    fixed states (first fit and proximity, 2 to 6 jobs): the fast twin of the properties
    above, each kernel's first divergence found in a fraction of a second."""
    rnd = random.Random(29)
    done = 0
    while done < 16:
        state = _state(rnd, done % 2 == 1, rnd.randint(2, 6))
        if state is None:
            continue
        done += 1
        py, jit = _models(state, 1 + done % 3)
        order = list(range(py.n))
        rnd.shuffle(order)
        score = py.score(order)
        assert jit.plan(order) == py.plan(order)
        for threshold in (score, math.nextafter(score, -math.inf)):
            assert jit.score(order, threshold) == py.score(order, threshold)
        slow, fast = SwapWalk(py, order, 2), swap_walk(jit, order, 2)
        for a, b in ((0, py.n - 1), (0, 1), (py.n - 2, py.n - 1)):
            assert fast.try_swap(a, b) == slow.try_swap(a, b)
            fast.accept()
            slow.accept()
            assert fast.start == slow.start
        if py.n <= 4:
            assert solve_exhaustive(jit, Budget(60.0)).solution == solve_exhaustive(
                py, Budget(60.0)).solution


def test_the_compiled_compute_node_choice_is_the_resource_filters():
    """``_contiguous`` (the ids of ``now[k:]`` at 1.0) against ``contiguous_nodes`` on every
    free set of 7 compute nodes and every count: runs at both ends, equal runs, too few."""
    import numpy as np

    from bbopt.planner.jit import named as N

    k = 2
    out, runs = np.zeros(7, dtype=np.int64), np.zeros((2, 7), dtype=np.int64)
    for mask in range(1 << 7):
        free = [x for x in range(7) if mask >> x & 1]
        now = np.array([5.0, 5.0] + [float(mask >> x & 1) for x in range(7)])
        for n in range(1, 8):
            got = N._contiguous(now, k, n, out, runs)
            want = contiguous_nodes(free, n)
            assert (got, tuple(out[:max(got, 0)])) == (
                (-1, ()) if want is None else (n, want)), (free, n)


def test_the_compiled_annealing_continues_its_counts_buffers_and_ties_across_calls():
    """Two calls of ``moves`` (steps 0-3, then 4-8) from counts that are not zero: each call
    adds to them and the second starts from the buffer the first left current. Jobs 0 and 1
    are alike, so swapping them scores exactly the current score and the best: kept at a
    threshold of that score (slack 0), not an improvement."""
    import numpy as np

    jobs = [Job(str(i), 0, walltime=w, nodes=n, bb=GB)
            for i, (w, n) in enumerate([(30, 1), (30, 1), (10, 2), (50, 1), (20, 2)])]
    two = FirstFitBB(Platform(2, 4 * GB, bb_nodes=(2 * GB, 2 * GB)))
    model = PlanModel(0.0, (2, 4 * GB), [], jobs, alpha=2, placement=two)
    first = np.array([0, 2, 1, 4, 1, 3, 3, 0, 4], dtype=np.int64)
    second = np.array([1, 0, 2, 0, 0, 2, 3, 3, 1], dtype=np.int64)
    slack = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 50.0, 0.0, 0.0, 0.0])
    temperature = 100.0
    walk = NamedWalk(model.named_arrays(), [0, 1, 2, 3, 4], 1)
    by_hand = NamedWalk(model.named_arrays(), [0, 1, 2, 3, 4], 1)
    counts, want = [5, 6, 7, 8], [5, 6, 7, 8]
    best_order = np.zeros(5, dtype=np.int64)
    current, best, want_order, ties = _swaps_by_hand(by_hand, first, second, slack, range(9),
                                                     temperature, want)
    step, cur, top = walk.moves(first, second, slack, 0, 4, walk.score, temperature,
                                walk.score, counts, best_order)
    got = walk.moves(first, second, slack, step, 5, cur, temperature, top, counts, best_order)
    assert got == (9, current, best)
    assert counts == want and walk.order == by_hand.order and walk.score == current
    assert best_order.tolist() == want_order
    assert want[1] > 6 and want[2] > 7 and ties >= 1  # (improvements, aborted moves, a tie)


def test_a_request_of_one_byte_is_placed_in_pieces():
    """Jobs a and b of one byte each take BB node 0 (1.5 B: a, then 0.5 left) and node 1 (b,
    2 of 3 B left): job c's 2.5 B fits on neither until they end at t=10, compiled as in
    Python (one byte is a burst buffer, not none)."""
    jobs = [Job("a", 0, walltime=10, nodes=1, bb=1.0), Job("b", 0, walltime=10, nodes=1, bb=1.0),
            Job("c", 0, walltime=20, nodes=1, bb=2.5)]
    two = FirstFitBB(Platform(4, 4.5, bb_nodes=(1.5, 3.0)))
    py, jit = (PlanModel(0.0, (4, 4.5), [], jobs, alpha=2, placement=two) for _ in range(2))
    py._njit = False
    assert jit.plan([0, 1, 2]) == py.plan([0, 1, 2])
    assert jit.plan([0, 1, 2]).starts == (0.0, 0.0, 10.0)

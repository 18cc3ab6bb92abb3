"""The plan model on named BB nodes (Kopanski & Rzadca, Sections 3.3 and 4.1): every plan the
search scores places each job's per-node pieces on the BB nodes by the engine's first-fit rule,
so the plan that is chosen is the plan that runs. The reference is conservative backfilling's
named profile (:meth:`bbopt.planner.Planner.list_schedule`); the exact backend is
checked against all permutations and annealing against the exact backend."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import decide
from bbopt.core import GB, ClusterState, Job, Platform, RunningJob, Status
from bbopt.models.plan import PlanModel
from bbopt.models.plan_named import cumulative_pieces
from bbopt.models.plan_walk import SwapWalk
from bbopt.planner import Planner, bb_placement
from bbopt.simulation import simulate
from bbopt.solvers.base import Budget, solve
from bbopt.solvers.plan.annealing import solve_annealing
from tests._plan_checks import check_swaps_score_as_fresh_plans


def _two_bb_nodes_state(platform: Platform) -> ClusterState:
    # r holds 4 GB of BB node 0 until 100: the nodes have 6 and 10 GB free, the pool 16 GB.
    r = Job("r", 0, walltime=100, runtime=100, nodes=1, bb=4 * GB)
    queue = (Job("a", 0, walltime=100, nodes=1, bb=8 * GB),
             Job("b", 0, walltime=100, nodes=1, bb=4 * GB),
             Job("c", 0, walltime=50, nodes=1, bb=8 * GB))
    return ClusterState(0.0, platform, (RunningJob(r, 0.0),), queue)


NAMED = Platform(nodes=4, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))


@pytest.mark.parametrize("backend", ["annealing", "exhaustive"])
def test_the_plan_is_scored_on_the_named_nodes(backend):
    # On the 16 GB pool a and c (8 GB each) start now and b waits for c (score 50**2). On the
    # nodes, a's 8 GB piece leaves node 1 with 2 GB and c waits for r (a, c, b: score
    # 100**2); b on node 0 and c on node 1 start now and a waits for c (b, c, a: 50**2). A
    # search scoring on the pool picks a, c first and, rebuilt on the nodes, starts a and b.
    named = decide(_two_bb_nodes_state(NAMED), "plan-2", backend=backend)
    assert sorted(s.job_id for s in named.start) == ["b", "c"]
    assert [(r.job_id, r.start) for r in named.reservations] == [("a", 50.0)]
    assert named.stats.objective == pytest.approx(50.0 ** 2)
    pool = decide(_two_bb_nodes_state(Platform(nodes=4, bb=20 * GB)), "plan-2", backend=backend)
    assert sorted(s.job_id for s in pool.start) == ["a", "c"]
    assert [(r.job_id, r.start) for r in pool.reservations] == [("b", 50.0)]


def test_the_named_plan_runs_as_planned():
    jobs = [Job("r", 0, walltime=100, runtime=100, nodes=1, bb=4 * GB),
            Job("a", 1, walltime=100, runtime=100, nodes=1, bb=8 * GB),
            Job("b", 1, walltime=100, runtime=100, nodes=1, bb=4 * GB),
            Job("c", 1, walltime=50, runtime=50, nodes=1, bb=8 * GB)]
    res = simulate(jobs, NAMED, "plan-2")
    assert res.refused_starts == 0
    assert dict(zip((j.id for j in res.jobs), res.start, strict=True)) == pytest.approx(
        {"r": 0.0, "a": 51.0, "b": 1.0, "c": 1.0})


# Random small named states: running jobs placed by first fit as the engine would.
_running = st.lists(st.tuples(st.integers(1, 2), st.integers(0, 8), st.integers(51, 200)),
                    max_size=3)
_queue = st.lists(st.tuples(st.integers(0, 50), st.integers(1, 4), st.integers(0, 12),
                            st.integers(1, 100)), min_size=1, max_size=7)


def _state(caps, running, queue) -> ClusterState | None:
    platform = Platform(nodes=6, bb=sum(caps) * GB, bb_nodes=tuple(c * GB for c in caps))
    held = tuple(RunningJob(Job(f"r{k}", 0, walltime=w, runtime=w, nodes=n, bb=b * GB), 0.0)
                 for k, (n, b, w) in enumerate(running))
    q = tuple(Job(f"q{k}", float(s), walltime=float(w), nodes=n, bb=b * GB)
              for k, (s, n, b, w) in enumerate(queue))
    state = ClusterState(50.0, platform, held, q)
    model = PlanModel.from_state(state, 2)
    if sum(r.job.nodes for r in held) > platform.nodes or min(model._SN) < 0:
        return None  # not a state the engine reaches
    return state


_caps = st.lists(st.sampled_from([6, 7, 10]), min_size=2, max_size=4)


@settings(max_examples=60, deadline=None)
@given(_caps, _running, _queue, st.randoms(use_true_random=False))
def test_the_model_places_jobs_as_the_named_profile_does(caps, running, queue, rnd):
    state = _state(caps, running, queue)
    if state is None:
        return
    model = PlanModel.from_state(state, 2)
    for _ in range(3):
        order = list(range(model.n))
        rnd.shuffle(order)
        starts = model.plan(order).starts
        planner = Planner.of(state, first_fit=True)
        ref = {j.id: s for j, s in planner.list_schedule([model.jobs[p] for p in order])}
        assert starts == tuple(ref[j.id] for j in model.jobs)
        assert model.score(order) == model.evaluate(model.plan(order))


@settings(max_examples=40, deadline=None)
@given(_caps, _running, _queue, st.randoms(use_true_random=False), st.integers(1, 3))
def test_swaps_on_named_nodes_score_as_fresh_plans(caps, running, queue, rnd, stride):
    state = _state(caps, running, queue)
    if state is None or len(state.queue) < 2:
        return
    model = PlanModel.from_state(state, 2)
    if model.n < 2:
        return
    check_swaps_score_as_fresh_plans(model, rnd, stride)


@settings(max_examples=40, deadline=None)
@given(_caps, _running, _queue.filter(lambda q: len(q) <= 6))
def test_exhaustive_is_the_permutation_optimum_on_named_nodes(caps, running, queue):
    # A job's start on the nodes is not monotone in the reservations before it: the exact
    # backend's bound must not assume it is.
    state = _state(caps, running, queue)
    if state is None:
        return
    model = PlanModel.from_state(state, 2)
    res = solve(model, "exhaustive", Budget(30))
    assert res.status is Status.OPTIMAL
    best = min(model.score(o) for o in itertools.permutations(range(model.n)))
    assert res.objective == best
    assert model.evaluate(res.solution) == best


@settings(max_examples=30, deadline=None)
@given(_caps, _running, _queue, st.integers(0, 10))
def test_annealing_agrees_with_the_exact_backend_on_named_nodes(caps, running, queue, seed):
    state = _state(caps, running, queue)
    if state is None:
        return
    model = PlanModel.from_state(state, 2)
    exact = solve(model, "exhaustive", Budget(30))
    # forced to anneal (no exhaustive search of small queues): never better than the optimum,
    # its objective the score of its plan
    annealed = solve_annealing(model, Budget(30), seed, exhaustive_up_to=0)
    assert annealed.objective >= exact.objective
    assert model.evaluate(annealed.solution) == annealed.objective
    # as the policy runs it: exact up to 5 jobs
    default = solve(model, "annealing", Budget(30), seed=seed)
    if model.n <= 5:
        assert default.objective == exact.objective


def test_a_reservation_can_make_a_later_job_start_earlier_on_named_nodes():
    # r holds 4 of 6 nodes until 10; f (4 nodes, four 2 GB pieces on BB node 0) is planned at
    # 10. x's 6 GB piece goes now to node 0 by first fit, where f's pieces leave 2 GB from 10:
    # x cannot start now, only at 10 (on node 1). Once y (6 GB, 5 s) holds node 0 now, x's
    # piece goes to node 1 and x starts now: the exact backend's bound must allow for this.
    platform = Platform(nodes=6, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))
    r = RunningJob(Job("r", 0, walltime=10, runtime=10, nodes=4), 0.0)
    queue = (Job("f", 0, walltime=50, nodes=4, bb=8 * GB),
             Job("y", 0, walltime=5, nodes=1, bb=6 * GB),
             Job("x", 0, walltime=100, nodes=1, bb=6 * GB))
    model = PlanModel.from_state(ClusterState(0.0, platform, (r,), queue), 2)
    assert model.plan([0, 2, 1]).starts == (10.0, 0.0, 10.0)  # f, x, y: x waits
    assert model.plan([0, 1, 2]).starts == (10.0, 0.0, 0.0)  # f, y, x: x starts now
    # the bound the exact backend gives x once f is placed: its pool start, not its start now
    prof = model.named_profile()
    model.place(prof, 0)
    assert model.place(model.copy_profile(prof), 2)[0] == 10.0
    assert model.earliest(prof[:3], 2)[0] == 0.0
    best = min(model.score(o) for o in itertools.permutations(range(3)))
    assert solve(model, "exhaustive", Budget(30)).objective == best


def test_a_swap_that_keeps_the_starts_but_moves_the_pieces_is_placed_again():
    # Found by a random search: swapping the first two jobs keeps their starts but not their BB
    # nodes, so the rest of the plan must be placed again.
    state = _state([7, 6, 6], [], [(16, 3, 7, 27), (34, 1, 6, 26), (31, 3, 10, 31),
                                   (4, 1, 8, 57)])
    model = PlanModel.from_state(state, 2)
    walk = SwapWalk(model, range(model.n), stride=1)
    for a, b in itertools.combinations(range(model.n), 2):
        swapped = walk.order[:]
        swapped[a], swapped[b] = swapped[b], swapped[a]
        assert walk.try_swap(a, b) == model.score(swapped)


def test_a_job_started_now_takes_the_engines_pieces():
    # Found by a random search. Started now, q3's 2 GB piece goes where the engine's first fit
    # on what is free now puts it: BB node 0 (4 GB free), which q1's pieces fill from 133, while
    # q3 would run until 140; so q3 cannot start now. Planned at 57 (the next breakpoint), it
    # takes first fit on the least free space over its walltime: node 1. A plan starting it at
    # 50 on that least free space (node 1) would not be what runs: the engine would put its
    # piece on node 0, and q1 would not fit there at 133.
    platform = Platform(nodes=6, bb=22 * GB, bb_nodes=(10 * GB, 6 * GB, 6 * GB))
    running = (RunningJob(Job("r0", 0, walltime=112, runtime=10, nodes=2, bb=3 * GB), 33.0),
               RunningJob(Job("r1", 0, walltime=92, runtime=10, nodes=2, bb=2 * GB), 29.0))
    queue = (Job("q0", 41.0, walltime=12.0, nodes=3, bb=3 * GB),
             Job("q1", 34.0, walltime=96.0, nodes=2, bb=7 * GB),
             Job("q2", 24.0, walltime=7.0, nodes=1, bb=1 * GB),
             Job("q3", 15.0, walltime=90.0, nodes=1, bb=2 * GB))
    state = ClusterState(50.0, platform, running, queue)
    model = PlanModel.from_state(state, 2)
    assert model.plan([0, 1, 2, 3]).starts == (121.0, 133.0, 50.0, 57.0)
    planned = Planner.of(state, first_fit=True).list_schedule(list(queue))
    assert [s for _, s in planned] == [121.0, 133.0, 50.0, 57.0]


def _direct(now, running, queue, alpha=2):
    """A model built from its parts (not from a state) on NAMED: the running jobs' pieces give
    the BB nodes' free space now."""
    return PlanModel(now, NAMED.capacity, running, queue, alpha,
                     placement=bb_placement(NAMED))


def test_the_free_space_now_is_the_capacity_less_the_running_pieces():
    # r holds 8 GB of BB node 0 until 100: 2 and 10 GB free now. a's two 6 GB pieces fit now
    # only if node 0 had 6 GB (not 2 + 8 = 10 or 8 GB); b's 10 GB piece fits node 1.
    r = (100.0, 1, 8 * GB, ((0, 8 * GB),))
    queue = [Job("a", 0, walltime=10, nodes=2, bb=12 * GB),
             Job("b", 0, walltime=10, nodes=1, bb=10 * GB)]
    m = _direct(0.0, [r], queue)
    assert m.startable_now() == [1]
    assert m.named_profile()[4] == [2 * GB, 10 * GB]
    assert m.plan([0, 1]).starts == (100.0, 0.0)


def test_a_start_after_now_is_found_below_one_second():
    # the nodes come free at 0.5 s (the earliest start, not the segment index 1 taken as a time)
    m = _direct(0.0, [(0.5, 4, 0.0, ())], [Job("a", 0, walltime=10, nodes=1, bb=1 * GB)])
    assert m.plan([0]).starts == (0.5,)
    assert m.score([0]) == 0.25


def test_a_job_no_plan_can_place_scores_its_lower_bound():
    # r's expected end (5) has passed at now = 10 but it still holds 8 GB of BB node 0: the
    # profile frees it at now, the engine's free space does not. a's two 10 GB pieces fit
    # only on empty nodes: not now, and the profile has no later instant; a scores the wait
    # it has already spent (10 s, squared), not an infinite one.
    r = (5.0, 1, 8 * GB, ((0, 8 * GB),))
    m = _direct(10.0, [r], [Job("a", 0, walltime=10, nodes=2, bb=20 * GB),
                            Job("b", 4, walltime=10, nodes=1, bb=1 * GB)])
    assert m.plan([0, 1]).starts == (math.inf, 10.0)
    assert m.score([0, 1]) == 100.0 + 36.0


def test_a_named_score_is_rejected_exactly_above_its_threshold():
    # now = 10, every job submitted at 0 (each bound 100): the bound of the jobs still to place
    # only ever lowers to 0, so at the full score nothing is rejected, just below it is
    queue = [Job("a", 0, walltime=50, nodes=1, bb=8 * GB),
             Job("b", 0, walltime=50, nodes=1, bb=8 * GB),
             Job("c", 0, walltime=20, nodes=2, bb=8 * GB)]
    m = _direct(10.0, [(30.0, 2, 4 * GB, ((0, 4 * GB),))], queue)
    for order in itertools.permutations(range(3)):
        full = m.score(order)
        assert full == m.evaluate(m.plan(order)) and full > 300.0
        assert m.score(order, threshold=full) == full
        assert m.score(order, threshold=math.nextafter(full, 0.0)) == math.inf
        assert m.score(order, threshold=300.0) == math.inf
        assert m.score(order, threshold=math.inf) == full


def test_a_jobs_pieces_are_summed_piece_by_piece_from_zero():
    # entry c: the bytes c pieces take on one BB node (0 for none), summed as the engine sums
    assert cumulative_pieces(2.5, 3) == [0.0, 2.5, 5.0, 7.5]
    assert cumulative_pieces(0.1, 3) == [0.0, 0.1, 0.1 + 0.1, 0.1 + 0.1 + 0.1]
    assert cumulative_pieces(4.0, 0) == [0.0]


def _one_node_left_now(queue) -> PlanModel:
    # r holds 9 of 10 nodes until 50; two 10 GB BB nodes, a 20 GB pool
    platform = Platform(nodes=10, bb=20 * GB, bb_nodes=(10 * GB, 10 * GB))
    r = RunningJob(Job("r", 0, walltime=50, runtime=50, nodes=9), 0.0)
    return PlanModel.from_state(ClusterState(0.0, platform, (r,), tuple(queue)), 2)


@pytest.mark.parametrize(("extra", "start", "runs"),
                         [(0.005, 0.0, ((0, 1),)), (0.01, 0.0, ((0, 1),)),
                          (0.02, 50.0, ((1, 1),))])
def test_a_start_now_keeps_its_pieces_room_over_its_window_within_the_nodes_slack(
        extra, start, runs):
    # x (two 3 GB pieces) is planned on BB node 0 from 50: 4 GB left there. y's one piece of
    # 4 GB + extra bytes goes now on node 0 by first fit on the free space now (10 GB); it
    # keeps that room over its 100 s only within node 0's slack, the tolerance first fit
    # places a piece with (1e-12 of the largest BB node: 0.01 bytes; bbopt.planner.bb's
    # profile_slacks), else y waits for r and takes node 1 by first fit on the least free
    # space from 50.
    model = _one_node_left_now([Job("x", 0, walltime=100, nodes=2, bb=6 * GB),
                                Job("y", 0, walltime=100, nodes=1, bb=4 * GB + extra)])
    prof = model.named_profile()
    assert model.place(prof, 0) == (50.0, ((0, 2),))
    assert model.place(prof, 1) == (start, runs)
    if start == 0.0:  # the engine's free space now loses the piece
        assert prof[4] == [6 * GB - extra, 10 * GB]
    else:
        assert prof[4] == [10 * GB, 10 * GB]


@pytest.mark.parametrize(("bb", "runs"), [(0.0, ()), (1.0, ((0, 2),)), (2.0, ((0, 2),))])
def test_a_job_with_any_bb_at_all_gets_pieces(bb, runs):
    # a job without BB takes no piece; one byte (two half-byte pieces) is a BB request
    model = _one_node_left_now([Job("y", 0, walltime=10, nodes=2, bb=bb)])
    assert model.place(model.named_profile(), 0) == (50.0, runs)

"""The plan model on a platform whose BB nodes are placed by proximity (Kopanski & Rzadca,
Euro-Par 2021, Sections 3.3 and 4.1): a job the plan starts now gets the compute nodes the
authors' resource filter gives it and its pieces by proximity on them, exactly as the engine
places them, so no plan start is refused; exact and heuristic searches agree on this model."""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import replace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.core import GB, ClusterState, RunningJob, dragonfly_proximity
from bbopt.models.plan import PlanModel
from bbopt.planner.pieces import contiguous_nodes, proximity_pieces
from bbopt.solvers import Budget
from bbopt.solvers.base import solve
from bbopt.solvers.plan.annealing import solve_annealing
from tests._plan_checks import check_swaps_score_as_fresh_plans
from tests._random_workloads import workloads

#: 8 compute nodes, 4 chassis of 2 (one 10 GB BB node each), 2 groups of 2 chassis.
PROX = Platform(nodes=8, bb=40 * GB, bb_nodes=(10 * GB,) * 4,
                bb_proximity=dragonfly_proximity(8, 2, 2))
#: The same BB nodes placed first fit.
FIRST_FIT = Platform(nodes=8, bb=40 * GB, bb_nodes=(10 * GB,) * 4)


def _jobs() -> list[Job]:
    # r holds nodes 0-5 and 2 GB on BB nodes 0, 1 and 2 twice each: 6, 6, 6 and 10 GB free.
    # a (6 GB, 1 node) goes on node 6, chassis 3: by proximity on BB node 3 (4 GB left), where
    # first fit puts it on BB node 0; b's 10 GB piece then fits no BB node. b first: b on node
    # 6 takes BB node 3, a on node 7 then takes BB node 2 (its group's): both start at once.
    return [Job("r", 0.0, walltime=1000, runtime=1000, nodes=6, bb=12 * GB),
            Job("a", 1.0, walltime=100, runtime=100, nodes=1, bb=6 * GB),
            Job("b", 1.0, walltime=100, runtime=100, nodes=1, bb=10 * GB)]


@pytest.mark.parametrize("policy", ["plan-1", "plan-2"])
def test_the_plan_starts_both_jobs_in_the_order_proximity_can_place(policy):
    res = simulate(_jobs(), PROX, policy, options={"budget_mode": "deterministic"})
    assert res.refused_starts == 0
    assert list(res.start) == [0.0, 1.0, 1.0]
    alloc = dict(zip([j.id for j in res.jobs], res.allocation, strict=True))
    assert alloc["r"] == (0, 1, 2, 3, 4, 5) and {alloc["a"], alloc["b"]} == {(6,), (7,)}
    # and on first-fit nodes both start as planned in submission order
    ff = simulate(_jobs(), FIRST_FIT, policy, options={"budget_mode": "deterministic"})
    assert ff.refused_starts == 0 and list(ff.start) == [0.0, 1.0, 1.0]


def _state_at_1() -> ClusterState:
    r, a, b = _jobs()
    pieces = ((0, 2 * GB), (0, 2 * GB), (1, 2 * GB), (1, 2 * GB), (2, 2 * GB), (2, 2 * GB))
    running = (RunningJob(r, 0.0, (0, 1, 2, 3, 4, 5), pieces),)
    return ClusterState(1.0, PROX, running, (a, b))


def test_the_model_places_a_start_now_by_proximity_on_the_filters_nodes():
    model = PlanModel.from_state(_state_at_1(), 2)
    assert model._NOW == [6, 7]
    # a then b: a takes BB node 3 by proximity, b cannot start before a ends (t = 101)
    assert model.plan([0, 1]).starts == (1.0, 101.0)
    # b then a: both now (first fit in the model would have started both in either order)
    assert model.plan([1, 0]).starts == (1.0, 1.0)
    prof = model.named_profile()
    assert model.place(prof, 1) == (1.0, ((6,), ((3, 1),)))
    assert model.place(prof, 0) == (1.0, ((7,), ((2, 1),)))
    assert prof[5] == [] and prof[4] == [6 * GB, 6 * GB, 0.0, 0.0]


def test_the_engine_would_have_refused_the_first_fit_plan():
    # The same two starts without named compute nodes, a first: the engine refuses b.
    from bbopt.planner import bb_placement

    ledger = bb_placement(PROX)
    for job, nodes in zip(_jobs()[:2], ((0, 1, 2, 3, 4, 5), (6,)), strict=True):
        ledger.take(job, ledger.placement(job, nodes))
    assert ledger.placement(_jobs()[2], (7,)) is None
    assert "do not fit on the BB nodes" in ledger.why_not_now(_jobs()[2], (7,))
    assert _jobs()[2].id not in ledger.held


# Random states on the proximity platform: running jobs on consecutive nodes, pieces placed
# by proximity as the engine places them.
_running = st.lists(st.tuples(st.integers(1, 3), st.integers(0, 16), st.integers(51, 200)),
                    max_size=3)
_queue = st.lists(st.tuples(st.integers(0, 50), st.integers(1, 4), st.integers(0, 20),
                            st.integers(1, 100)), min_size=1, max_size=6)


def _state(running, queue) -> ClusterState | None:
    free = list(range(PROX.nodes))
    space = [10 * GB] * 4
    tol = 1e-12 * 10 * GB
    held = []
    for k, (n, b, w) in enumerate(running):
        nodes = contiguous_nodes(free, n)
        if nodes is None:
            return None
        pieces = proximity_pieces(space, nodes, b * GB, tol, PROX.bb_proximity) if b else ()
        if pieces is None:
            return None
        for node, size in pieces:
            space[node] -= size
        free = [x for x in free if x not in nodes]
        held.append(RunningJob(Job(f"r{k}", 0, walltime=w, runtime=w, nodes=n, bb=b * GB),
                               0.0, nodes, pieces))
    q = tuple(Job(f"q{k}", float(s), walltime=float(w), nodes=n, bb=b * GB)
              for k, (s, n, b, w) in enumerate(queue))
    return ClusterState(50.0, PROX, tuple(held), q)


def _engine_starts(state: ClusterState, model: PlanModel, order) -> list[str]:
    """The jobs the plan of ``order`` starts now that the engine's placement admits, started
    in plan order on the compute nodes the engine picks."""
    from bbopt.planner import bb_placement

    ledger = bb_placement(PROX)
    for r in state.running:  # (the engine placed them: they fit)
        ledger.take(r.job, ledger.placement(r.job, r.allocation))
    free = [x for x in range(PROX.nodes) if all(x not in r.allocation for r in state.running)]
    out = []
    for p in model.plan(order).started_now(model.now):
        job = model.jobs[p]
        nodes = contiguous_nodes(free, job.nodes)
        pieces = None if nodes is None else ledger.placement(job, nodes)
        if pieces is None:
            continue
        ledger.take(job, pieces)
        free = [x for x in free if x not in nodes]
        out.append(job.id)
    return out


@settings(max_examples=60, deadline=None)
@given(_running, _queue, st.permutations(range(6)))
def test_every_start_the_model_plans_now_is_admitted_by_the_engine(running, queue, perm):
    state = _state(running, queue)
    if state is None:
        return
    model = PlanModel.from_state(state, 2)
    order = [p for p in perm if p < model.n]
    planned = [model.jobs[p].id for p in model.plan(order).started_now(model.now)]
    assert _engine_starts(state, model, order) == planned


@settings(max_examples=40, deadline=None)
@given(_running, _queue, st.randoms(use_true_random=False), st.integers(1, 3))
# two queued jobs whose 20 GB on one node no 10 GB BB node can hold: the model has no job
@example([], [(0, 1, 20, 100), (0, 1, 20, 100)], random.Random(0), 1)
def test_swaps_on_proximity_nodes_score_as_fresh_plans(running, queue, rnd, stride):
    state = _state(running, queue)
    if state is None or len(state.queue) < 2:
        return
    model = PlanModel.from_state(state, 2)
    check_swaps_score_as_fresh_plans(model, rnd, stride)


@settings(max_examples=40, deadline=None)
@given(_running, _queue.filter(lambda q: len(q) <= 5))
def test_exhaustive_is_the_permutation_optimum_and_annealing_no_better(running, queue):
    state = _state(running, queue)
    if state is None:
        return
    model = PlanModel.from_state(state, 2)
    best = min(model.score(list(o)) for o in itertools.permutations(range(model.n)))
    exact = solve(model, "exhaustive", Budget(30.0))
    assert exact.objective == best
    heur = solve_annealing(model, Budget(30.0, mode="deterministic"), 1, exhaustive_up_to=0)
    assert heur.objective >= best and math.isfinite(heur.objective)
    assert heur.objective == model.score(heur.solution.order)


@settings(max_examples=25, deadline=None)
@given(workloads(max_nodes=8, max_bb=40))
@pytest.mark.parametrize("policy", ["plan-1", "plan-2"])
def test_no_plan_start_is_refused_on_random_workloads(policy, jobs):
    jobs = [replace(j, bb=j.bb * GB) for j in jobs]  # up to 40 GB on four 10 GB BB nodes
    res = simulate(jobs, PROX, policy, options={"budget_mode": "deterministic"})
    assert res.refused_starts == 0


def test_a_proximity_model_needs_the_free_compute_node_ids():
    from bbopt.planner import bb_placement

    with pytest.raises(ValueError, match="^proximity placement needs the free compute node ids "
                                         "now$"):
        PlanModel(0.0, PROX.capacity, [], _jobs()[1:], placement=bb_placement(PROX))
    model = PlanModel(0.0, PROX.capacity, [], _jobs()[1:], placement=bb_placement(PROX),
                      free_ids=[7, 6, 0])
    assert model.named_profile()[5] == [0, 6, 7]


def _at_1_with(queue) -> PlanModel:
    """The running job of :func:`_state_at_1` (nodes 6 and 7 free, BB nodes 6, 6, 6, 10 GB)
    with ``queue``."""
    return PlanModel.from_state(replace(_state_at_1(), queue=tuple(queue)), 2)


def test_a_job_without_bb_started_now_takes_the_filters_nodes():
    model = _at_1_with([Job("z", 1.0, walltime=10, nodes=1)])
    prof = model.named_profile()
    assert model.place(prof, 0) == (1.0, ((6,), ()))
    assert prof[5] == [7] and prof[4] == [6 * GB, 6 * GB, 6 * GB, 10 * GB]


def test_two_pieces_by_proximity_on_one_bb_node_count_as_two():
    # nodes 6 and 7 are chassis 3: both 2 GB pieces go on BB node 3
    model = _at_1_with([Job("c", 1.0, walltime=10, nodes=2, bb=4 * GB)])
    prof = model.named_profile()
    assert model.place(prof, 0) == (1.0, ((6, 7), ((3, 2),)))
    assert prof[4] == [6 * GB, 6 * GB, 6 * GB, 6 * GB] and prof[5] == []
    # the profile holds both pieces on BB node 3 until c ends
    assert prof[3][0] == (6 * GB, 6 * GB, 6 * GB, 6 * GB)

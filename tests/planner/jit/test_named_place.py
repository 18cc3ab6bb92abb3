"""The compiled placement of one job on named BB nodes (bbopt.planner.jit.named.place and
its start-now test ``_fits_now``) against the Python one (bbopt.models.plan_named.place), at
its tolerances (Kopanski & Rzadca, Sections 3.3 and 4.1): the pool's fit slack (1e-9 of its
capacity) and a piece's rounding tolerance (1e-12 of the largest BB node), which is also each
BB node's slack over a window (:func:`bbopt.planner.bb.profile_slacks`), each tested at
equality and beyond."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("numba")

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob  # noqa: E402
from bbopt.models.plan import PlanModel  # noqa: E402
from bbopt.planner.bb import profile_slacks  # noqa: E402
from bbopt.planner.named import NamedArrays  # noqa: E402


def _starts(state: ClusterState, order: list[int]) -> tuple[float, ...]:
    """The plan's starts for ``order``, compiled, checked against the Python loops."""
    python, compiled = PlanModel.from_state(state, 1), PlanModel.from_state(state, 1)
    python._njit = False
    assert isinstance(compiled.named_arrays(), NamedArrays)  # (the compiled loops run)
    starts = compiled.plan(order).starts
    assert starts == python.plan(order).starts
    return starts


def test_pieces_within_their_tolerance_need_not_fit_the_pool_by_it():
    """Two BB nodes of 1 GB (a piece's tolerance 1e-3 B, the pool's slack 2 B): 2 GB and
    1.8e-3 B in two pieces, each 0.9e-3 B over its BB node, start now: the pool is over by
    more than one piece's tolerance but within its own slack."""
    platform = Platform(nodes=2, bb=2 * GB, bb_nodes=(GB, GB))
    job = Job("a", 0, 10.0, nodes=2, bb=2 * GB + 1.8e-3)
    assert _starts(ClusterState(0.0, platform, (), (job,)), [0]) == (0.0,)


@pytest.mark.parametrize("proximity", [False, True])
@pytest.mark.parametrize(("busy", "later"), [(False, 0.0), (True, 10.0)])
@pytest.mark.parametrize(("over", "on_node_0"), [(1e-3, True), (3e-3, False)])
def test_a_piece_over_a_bb_node_by_more_than_its_tolerance_waits(proximity, busy, later, over,
                                                                  on_node_0):
    """BB node 0 has 1 GB free, BB node 1 (2 GB) is held until t=100 (a piece's tolerance
    2e-3 B, also each BB node's slack over a window). A job of 1 GB and 1e-3 B goes on BB
    node 0 at its first start (now, by first fit or by proximity, or at t=10 when the compute
    nodes are busy until then); 1 GB and 3e-3 B, over by more than a piece's tolerance, waits
    for BB node 1 at t=100."""
    near = {"bb_proximity": ((0, 1),) * 3} if proximity else {}
    platform = Platform(nodes=3, bb=3 * GB, bb_nodes=(GB, 2 * GB), **near)
    running = [RunningJob(Job("r", 0, 100, runtime=100, nodes=1, bb=2 * GB), 0.0, (0,),
                          ((1, 2 * GB),))]
    if busy:
        running.append(RunningJob(Job("s", 0, 10, runtime=10, nodes=2, bb=0.0), 0.0, (1, 2),
                                  ()))
    job = Job("c", 0, 10.0, nodes=1, bb=GB + over)
    state = ClusterState(0.0, platform, tuple(running), (job,))
    assert _starts(state, [0]) == ((later,) if on_node_0 else (100.0,))


def test_a_piece_exactly_its_tolerance_over_the_nearest_bb_node_starts_now():
    """By proximity, BB node 0 (1 GB free) first: a piece of 1 GB and exactly the piece
    tolerance (2e-3 B: the free space is the piece less the tolerance, to the bit) takes it
    now; one ulp more waits for BB node 1, held until t=100."""
    platform = Platform(nodes=3, bb=3 * GB, bb_nodes=(GB, 2 * GB),
                        bb_proximity=((0, 1),) * 3)
    running = (RunningJob(Job("r", 0, 100, runtime=100, nodes=1, bb=2 * GB), 0.0, (0,),
                          ((1, 2 * GB),)),)
    tol = 2e-3
    exact = GB + tol
    assert exact - tol == GB
    for bb, start in ((exact, 0.0), (math.nextafter(exact, math.inf), 100.0)):
        state = ClusterState(0.0, platform, running, (Job("c", 0, 10.0, nodes=1, bb=bb),))
        assert _starts(state, [0]) == (start,)


@pytest.mark.parametrize("node", [0, 1])
def test_a_start_now_keeps_its_pieces_within_the_bb_nodes_slack_over_its_window(node):
    """Four compute nodes, two BB nodes of 1 GB; a running job holds two compute nodes until
    t=5, another one more until t=100 (with all of BB node 0 when ``node`` is 1). Job x
    (2 nodes, 0.5 GB) is planned at t=5 on BB node ``node``, leaving it 0.5 GB from then.
    Job c (1 node, 10 s) is then placed now on that BB node, which has 1 GB free now: its
    window keeps it only if 0.5 GB plus the BB node's slack (the pieces' tolerance, 1e-3 B:
    :func:`bbopt.planner.bb.profile_slacks`) covers the piece. At
    exactly that it starts now; one ulp more, it waits: until t=5 for BB node 1, or, BB node
    0 being held, until x ends (t=15)."""
    platform = Platform(nodes=4, bb=2 * GB, bb_nodes=(GB, GB))
    running = (RunningJob(Job("r", 0, 5, runtime=5, nodes=2, bb=0.0), 0.0, (0, 1), ()),
               RunningJob(Job("s", 0, 100, runtime=100, nodes=1, bb=GB if node else 0.0),
                          0.0, (3,), ((0, GB),) if node else ()))
    exact = 0.5 * GB + profile_slacks(platform)[2]
    assert profile_slacks(platform)[2] == 1e-3
    for bb, start in ((exact, 0.0), (math.nextafter(exact, math.inf), 15.0 if node else 5.0)):
        queue = (Job("x", 0, 10.0, nodes=2, bb=0.5 * GB), Job("c", 0, 10.0, nodes=1, bb=bb))
        state = ClusterState(0.0, platform, running, queue)
        assert _starts(state, [0, 1]) == (5.0, start)


@pytest.mark.parametrize(("bb", "a_first", "a_after"), [(0.0, 50.0, 50.0), (GB, math.inf, 60.0)])
def test_a_running_job_past_its_walltime_leaves_too_few_compute_node_ids_now(bb, a_first,
                                                                          a_after):
    """At t=50 a running job expected to end at t=40 still holds compute nodes 1 and 2 (of
    three, BB nodes by proximity): the profile counts three nodes free now, the ids only
    node 0. Job a (2 nodes) gets no ids now: without BB it starts now all the same, taking
    none; with 1 GB, first, it has no pieces now and no later segment: it fits nowhere (its
    term is its lower bound, 0), and after b it starts when b ends (t=60). Job b (1 node,
    0.5 GB) takes node 0 now in either order, also after an order where it took node 0 first
    (the ids of that placement are not taken again). The score, the walk and the exhaustive
    search agree with Python."""
    from bbopt.models.plan_walk import SwapWalk
    from bbopt.planner.named import NamedWalk
    from bbopt.solvers import Budget
    from bbopt.solvers.plan.exhaustive import solve_exhaustive

    platform = Platform(nodes=3, bb=2 * GB, bb_nodes=(GB, GB), bb_proximity=((0, 1),) * 3)
    running = (RunningJob(Job("r", 0, 40, runtime=60, nodes=2, bb=0.0), 0.0, (1, 2), ()),)
    queue = (Job("a", 50, 10.0, nodes=2, bb=bb), Job("b", 50, 10.0, nodes=1, bb=GB / 2))
    state = ClusterState(50.0, platform, running, queue)
    python, compiled = PlanModel.from_state(state, 1), PlanModel.from_state(state, 1)
    python._njit = False
    assert compiled.plan([1, 0]).starts == python.plan([1, 0]).starts == (a_after, 50.0)
    assert compiled.plan([0, 1]).starts == python.plan([0, 1]).starts == (a_first, 50.0)
    assert compiled.score([0, 1]) == python.score([0, 1]) == 0.0
    walk, slow = NamedWalk(compiled.named_arrays(), [1, 0], 1), SwapWalk(python, [1, 0], 1)
    assert walk.score == slow.score == a_after - 50.0
    assert walk.try_swap(0, 1) == slow.try_swap(0, 1) == 0.0
    # (from the incumbent b, a: 2 nodes of the search tree, the better plan a, b)
    assert compiled.named_arrays().exhaustive(a_after - 49.0, [1, 0]) == (0.0, [0, 1], 2)
    fast, ref = solve_exhaustive(compiled, Budget(60.0)), solve_exhaustive(python, Budget(60.0))
    assert fast.solution == ref.solution and fast.solution.order == (0, 1)


def test_a_job_on_the_one_compute_node_of_a_proximity_platform_held_past_its_walltime():
    """One compute node (its BB nodes by proximity: 1, then 0), held at t=50 by a job
    expected to end at t=40: the profile has it free now, the ids do not. A job of 0.5 GB
    cannot take its pieces by proximity without a compute node: it fits nowhere (not by
    first fit now either)."""
    platform = Platform(nodes=1, bb=2 * GB, bb_nodes=(GB, GB), bb_proximity=((1, 0),))
    running = (RunningJob(Job("r", 0, 40, runtime=60, nodes=1, bb=0.0), 0.0, (0,), ()),)
    state = ClusterState(50.0, platform, running,
                         (Job("a", 50, 10.0, nodes=1, bb=GB / 2),))
    assert _starts(state, [0]) == (math.inf,)


def _placed_first(state: ClusterState) -> tuple[float, list[int], list[float]]:
    """The compiled ``place`` of the queue's first job on the model's base profile: its start,
    its placement's signature and the BB nodes' space now after it."""
    import numpy as np

    from bbopt.planner.named import kernels

    arrays = PlanModel.from_state(state, 1).named_arrays()
    prof, now = arrays.base.copy(), arrays.base_now.copy()
    length = int(np.argmax(prof[0] == math.inf)) + 1
    sig, fwork, iwork = arrays.scratch()
    start, _ = kernels().place(prof, length, now, arrays.jobs, 0, arrays.prox, arrays.consts,
                               sig, fwork, iwork)
    return start, sig.tolist(), now.tolist()


@pytest.mark.parametrize(("bb", "pieces"), [(0.0, [0, 0]), (0.6 * GB, [6, 0])])
def test_a_placements_signature_has_one_bit_per_compute_node_across_its_words(bb, pieces):
    """``place``'s signature of a start now by proximity on 130 compute nodes, of which 0,
    63, 64, 127, 128 and 129 are free: a job of 6 nodes takes them all; its signature is
    its kind (compute nodes and runs, 2), its pieces per BB node (none, or six of 0.1 GB on
    BB node 0, the nearest) and one bit per compute node in 64-bit words: node 63 the top
    bit of word 0, 64 bit 0 of word 1, 127 its top bit, 128 and 129 bits 0 and 1 of word 2
    (what the walk compares to tell a changed placement)."""
    free = (0, 63, 64, 127, 128, 129)
    busy = tuple(x for x in range(130) if x not in free)
    platform = Platform(nodes=130, bb=2 * GB, bb_nodes=(GB, GB), bb_proximity=((0, 1),) * 130)
    running = (RunningJob(Job("r", 0, 100, runtime=100, nodes=len(busy)), 0.0, busy, ()),)
    state = ClusterState(0.0, platform, running, (Job("a", 0, 10.0, nodes=6, bb=bb),))
    start, sig, now = _placed_first(state)
    top = -(1 << 63)  # (bit 63 of a signed 64-bit word)
    assert start == 0.0
    assert sig == [2, *pieces, 1 | top, 1 | top, 1 | 2]
    assert now[2:] == [0.0] * 130


@pytest.mark.parametrize(("busy", "start"), [(False, 0.0), (True, 10.0)])
def test_a_first_fit_placements_signature_is_its_kind_and_pieces(busy, start):
    """``place``'s signature by first fit (two BB nodes of 1 GB, no proximity: no compute
    node words): a job of 2 nodes and 1.2 GB has pieces of 0.6 GB, one on each BB node, now
    on the BB nodes' space now or, its compute nodes busy until t=10, then on their least
    space over its window; either way the signature is its kind (runs, 1) and those counts."""
    platform = Platform(nodes=2, bb=2 * GB, bb_nodes=(GB, GB))
    running = ((RunningJob(Job("r", 0, 10, runtime=10, nodes=2), 0.0, (0, 1), ()),)
               if busy else ())
    state = ClusterState(0.0, platform, running, (Job("a", 0, 10.0, nodes=2, bb=1.2 * GB),))
    got, sig, _ = _placed_first(state)
    assert got == start
    assert sig == [1, 1, 1]

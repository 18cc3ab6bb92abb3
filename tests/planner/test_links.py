"""Link bandwidth as a dimension of the planner, on Herbein's Figure 2-3 tree (PFS 1 GB/s,
network switch 384 MB/s, two 256 MB/s switches of nodes 0-1 and 2-3): starts name the nodes
Herbein's greedy selects, the earliest start is the first instant the tree has room, a
reservation holds bandwidth at its start instant, and every start the planner grants is one the
engine's bandwidth check admits (the same rule, twice the tolerance)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import ENGINE_REL_TOL, REL_TOL, ClusterState, Job, Platform, RunningJob
from bbopt.errors import InputError, OverbookedError
from bbopt.planner import Planner
from bbopt.topology import BandwidthLedger, herbein_example_topology
from bbopt.topology import tree as tree_module
from tests._platforms import IO_TREE, NAMED, POOL

MB = 1e6


def _state(now: float = 0.0) -> ClusterState:
    """Nodes 0-1 run a job of 20 MB/s a node until 10: lls0 has 216 MB/s left, lls1 256, the
    network switch 344."""
    running = (RunningJob(Job("r", 0.0, 10.0, nodes=2, bandwidth=20 * MB), 0.0, (0, 1)),)
    return ClusterState(now, IO_TREE, running)


def test_a_start_names_the_nodes_the_greedy_selects_and_takes_their_bandwidth():
    p = Planner.of(_state(), links=True)
    start = p.start(Job("a", 0.0, 5.0, nodes=1, bandwidth=200 * MB))
    assert start.job_id == "a" and start.nodes == (2,)
    # lls1 has 56 MB/s left: node 3 takes 56 MB/s a node, not 57
    assert p.start(Job("b", 0.0, 5.0, nodes=1, bandwidth=57 * MB)) is None
    assert p.start(Job("c", 0.0, 5.0, nodes=1, bandwidth=56 * MB)).nodes == (3,)
    assert p.chosen == {"a": (2,), "c": (3,)} and p.free_nodes == []


def test_the_head_is_held_at_the_first_instant_the_tree_has_room_and_backfill_keeps_it():
    p = Planner.of(_state(), links=True)
    head = Job("h", 0.0, 10.0, nodes=3, bandwidth=90 * MB)  # two nodes free now
    assert p.earliest(head) == 10.0
    p.reserve(head, 10.0)
    # 150 MB/s on node 2 until 20 fits now, but at 10 leaves the network switch 234 MB/s for
    # the head's 270: refused; 100 MB/s leaves it 284: started
    assert p.start(Job("l150", 0.0, 20.0, nodes=1, bandwidth=150 * MB)) is None
    assert p.start(Job("l100", 0.0, 20.0, nodes=1, bandwidth=100 * MB)).nodes == (2,)
    # ending at the head's start, 150 MB/s may take node 3
    assert p.start(Job("s150", 0.0, 10.0, nodes=1, bandwidth=150 * MB)).nodes == (3,)
    # without the link dimension the long 150 MB/s job would have started
    assert Planner.of(_state()).start(Job("l150", 0.0, 20.0, nodes=1, bandwidth=150 * MB))


def test_earliest_counts_what_every_job_gives_back_at_its_end():
    p = Planner.of(_state(), links=True)
    p.start(Job("a", 0.0, 30.0, nodes=1, bandwidth=200 * MB))  # node 2 until 30
    # four nodes of 90 MB/s: after 10 node 2 is still busy, after 30 all four are free
    assert p.earliest(Job("w", 0.0, 5.0, nodes=4, bandwidth=90 * MB)) == 30.0
    assert p.earliest(Job("w", 0.0, 5.0, nodes=4, bandwidth=90 * MB), limit=29.0) == math.inf
    # three nodes at 10 (0, 1 and 3): beside node 2's 200 MB/s, lls1 leaves node 3 56 MB/s
    assert p.earliest(Job("x", 0.0, 5.0, nodes=3, bandwidth=57 * MB)) == 30.0
    assert p.earliest(Job("y", 0.0, 5.0, nodes=3, bandwidth=56 * MB)) == 10.0
    assert p.fits(Job("y", 0.0, 5.0, nodes=3, bandwidth=56 * MB), 10.0)
    assert not p.fits(Job("x", 0.0, 5.0, nodes=3, bandwidth=57 * MB), 10.0)


def test_a_later_job_must_leave_an_earlier_reservation_placeable():
    p = Planner.of(_state(), links=True)
    first = Job("h1", 0.0, 20.0, nodes=2, bandwidth=150 * MB)
    assert p.earliest(first) == 10.0  # (not on nodes 2 and 3 now: 300 MB/s under lls1)
    p.reserve(first, 10.0)
    # at 10 h1 takes nodes 0 and 2; two more nodes of 40 MB/s fit the network switch beside
    # its 300 MB/s (380), of 43 MB/s not (386)
    assert p.fits(Job("ok", 0.0, 5.0, nodes=2, bandwidth=40 * MB), 10.0)
    assert not p.fits(Job("no", 0.0, 5.0, nodes=2, bandwidth=43 * MB), 10.0)
    # 43 MB/s on nodes 2 and 3 now: done by 10 if it lasts 5 s; lasting 15 s it would leave
    # h1 only lls0 at 10, so it waits for h1's end
    assert p.earliest(Job("no", 0.0, 5.0, nodes=2, bandwidth=43 * MB)) == 0.0
    assert p.earliest(Job("no", 0.0, 15.0, nodes=2, bandwidth=43 * MB)) == 30.0
    assert p.start(Job("no", 0.0, 15.0, nodes=2, bandwidth=43 * MB)) is None


def test_release_and_rollback_give_back_nodes_and_bandwidth():
    p = Planner.of(_state(), links=True)
    snap = p.snapshot()
    a = Job("a", 0.0, 5.0, nodes=1, bandwidth=200 * MB)
    p.start(a)
    assert p.start(Job("b", 0.0, 5.0, nodes=1, bandwidth=200 * MB)) is None
    p.release(a)
    assert p.start(Job("b", 0.0, 5.0, nodes=1, bandwidth=200 * MB)).nodes == (2,)
    p.rollback(snap)
    assert p.start(Job("c", 0.0, 5.0, nodes=2, bandwidth=128 * MB)).nodes == (2, 3)


def test_a_placement_chosen_elsewhere_is_taken_as_given():
    p = Planner.of(_state(), links=True)
    assert p.start_on(Job("w", 0.0, 5.0, nodes=1, bandwidth=100 * MB), (3,)).nodes == (3,)
    assert p.start(Job("a", 0.0, 5.0, nodes=1, bandwidth=100 * MB)).nodes == (2,)


def test_link_bandwidth_needs_an_io_tree_and_a_pooled_burst_buffer():
    with pytest.raises(InputError, match="I/O topology"):
        Planner.of(ClusterState(0.0, Platform(4, 0.0), ()), links=True)
    both = Platform(4, NAMED.bb, bb_nodes=NAMED.bb_nodes, topology=herbein_example_topology())
    with pytest.raises(InputError, match="named BB nodes") as info:
        Planner.of(ClusterState(0.0, both, ()), links=True)
    assert info.value.field == "bb_nodes"


@pytest.mark.parametrize("extra, planner_room, engine_room", [
    (0.0, 2, 2),     # two nodes of 128 MB/s fill lls0's 256 MB/s exactly
    (0.1, 2, 2),     # 0.2 B/s over: within the planner's tolerance (0.256 B/s)
    (0.2, 1, 2),     # 0.4 B/s over: beyond the planner's, within the engine's (0.512 B/s)
    (0.3, 1, 1),     # 0.6 B/s over: beyond both
])
def test_the_engine_checks_with_the_planners_rule_at_twice_the_tolerance(
        extra, planner_room, engine_room):
    assert tree_module.REL_TOL == REL_TOL and ENGINE_REL_TOL == 2 * REL_TOL
    tree = herbein_example_topology()
    lls0 = tree.vertex_of["lls0"]
    per_node = 128 * MB + extra
    avail = tree.fresh_avail()
    assert tree.room(avail, per_node)[lls0] == planner_room
    assert tree.room(avail, per_node, ENGINE_REL_TOL)[lls0] == engine_room
    why = BandwidthLedger(tree).charge(Job("a", 0.0, 1.0, nodes=2, bandwidth=per_node), [0, 1])
    assert (why is None) == (engine_room == 2)


_job = st.tuples(st.integers(1, 4), st.sampled_from([0, 30, 60, 90, 128, 200]),
                 st.integers(1, 20))


@settings(max_examples=60, deadline=None)
@given(st.lists(_job, max_size=4), st.lists(_job, min_size=1, max_size=8))
def test_every_start_the_planner_grants_the_engine_admits(running, queue):
    """Running jobs placed by the engine's check, then a queue started through the planner
    with the first job that does not fit reserved: every start is admitted by the ledger."""
    tree = IO_TREE.topology
    ledger = BandwidthLedger(tree)
    free = np.ones(tree.nodes, dtype=bool)
    held = []
    for k, (n, bw, w) in enumerate(running):
        idx = np.flatnonzero(free)[:n]
        job = Job(f"r{k}", 0.0, float(w), nodes=n, bandwidth=bw * MB)
        if len(idx) == n and ledger.charge(job, idx) is None:
            free[idx] = False
            held.append(RunningJob(job, 0.0, tuple(int(x) for x in idx)))
    p = Planner.of(ClusterState(0.0, IO_TREE, tuple(held)), links=True)
    reserved = False
    for k, (n, bw, w) in enumerate(queue):
        job = Job(f"q{k}", 0.0, float(w), nodes=n, bandwidth=bw * MB)
        start = p.start(job)
        if start is not None:
            assert free[list(start.nodes)].all()
            assert ledger.charge(job, start.nodes) is None
            free[list(start.nodes)] = False
        elif not reserved and (t := p.earliest(job)) < math.inf:
            assert t > 0.0
            p.reserve(job, t)
            reserved = True


#: Herbein's Figure 2-3 tree with 100 GB of burst buffer in one pool.
BB_TREE = Platform(4, 100e9, topology=herbein_example_topology())


@pytest.mark.parametrize("over, fits", [(0.0, True), (0.5, True), (1.5, False)])
def test_the_pooled_bb_fits_up_to_the_core_tolerance(over, fits):
    # 40 GB free now: at, within the tolerance (REL_TOL * 100 GB = 100 B) and beyond it
    tol = REL_TOL * 100e9
    running = (RunningJob(Job("r", 0.0, 10.0, nodes=1, bb=60e9), 0.0, (0,)),)
    p = Planner.of(ClusterState(0.0, BB_TREE, running), links=True)
    job = Job("a", 0.0, 5.0, nodes=1, bb=40e9 + over * tol)
    assert p.fits_now(job) is fits
    assert p.earliest(job) == (0.0 if fits else 10.0)  # (the pool given back at 10)
    assert (p.start(job) is not None) is fits


def test_the_earliest_instant_is_searched_up_to_its_limit_inclusive():
    running = (RunningJob(Job("r", 0.0, 10.0, nodes=1, bb=60e9), 0.0, (0,)),)
    p = Planner.of(ClusterState(0.0, BB_TREE, running), links=True)
    big = Job("b", 0.0, 5.0, nodes=1, bb=50e9)
    assert p.earliest(big, limit=10.0) == 10.0
    assert p.earliest(big, limit=9.9) == math.inf
    # with a reservation (each instant checked by fits_at)
    p.reserve(Job("h", 0.0, 20.0, nodes=4), 10.0)
    assert p.links.release_times() == [10.0, 30.0]  # (a running job's end, the hold's end)
    assert p.earliest(big, limit=30.0) == 30.0
    assert p.earliest(big, limit=29.9) == math.inf


def test_a_running_job_past_its_expected_end_gives_back_now():
    state = ClusterState(20.0, IO_TREE, (RunningJob(Job("r", 0.0, 10.0, nodes=4), 0.0,
                                                    (0, 1, 2, 3)),))
    p = Planner.of(state, links=True)
    assert [r.time for r in p.links.ends] == [20.0]
    assert p.earliest(Job("x", 0.0, 5.0, nodes=1)) == 20.0


def test_a_reservation_now_holds_its_nodes_against_starts_now():
    p = Planner.of(_state(), links=True)  # (nodes 2 and 3 free)
    p.reserve(Job("h", 0.0, 5.0, nodes=2), 0.0)
    assert p.start(Job("a", 0.0, 5.0, nodes=1)) is None
    assert p.start(Job("b", 0.0, 1.0, nodes=1)) is None


def test_a_start_ending_at_an_instant_kept_gives_its_nodes_back_there():
    p = Planner.of(_state(), links=True)
    four = Job("f", 0.0, 5.0, nodes=4)
    assert p.fits(four, 10.0)  # (the instant 10 built and kept)
    assert p.start(Job("a", 0.0, 10.0, nodes=1)).nodes == (2,)
    assert p.fits(four, 10.0)  # (node 2 back at 10 exactly)
    assert p.start(Job("b", 0.0, 10.5, nodes=1)).nodes == (3,)
    assert not p.fits(four, 10.0) and p.fits(four, 10.5)


def test_reservations_at_one_instant_are_placed_in_the_order_they_were_made():
    p = Planner.of(_state(), links=True)
    p.reserve(Job("h1", 0.0, 20.0, nodes=2), 10.0)
    p.reserve(Job("h2", 0.0, 20.0, nodes=2), 10.0)
    assert not p.fits(Job("x", 0.0, 5.0, nodes=1), 10.0)  # (the four nodes held at 10)
    assert p.fits(Job("x", 0.0, 5.0, nodes=1), 30.0)
    assert p.start(Job("y", 0.0, 10.0, nodes=2)).nodes == (2, 3)  # (done by 10)
    assert p.start(Job("z", 0.0, 10.5, nodes=1)) is None


def test_the_platform_and_its_io_tree_must_have_the_same_nodes():
    with pytest.raises(InputError, match="4 compute nodes, the platform 5") as info:
        Planner.of(ClusterState(0.0, Platform(5, 0.0, topology=herbein_example_topology()),
                                ()), links=True)
    assert info.value.field == "topology"


def test_the_refusals_name_what_is_missing_in_full():
    with pytest.raises(InputError) as info:
        Planner.of(ClusterState(0.0, Platform(4, 0.0), ()), links=True)
    assert (info.value.reason, info.value.field) == (
        "planning link bandwidth needs a platform with an I/O topology (e.g. "
        "bbopt.topology.cts1())", "topology")
    both = Platform(4, NAMED.bb, bb_nodes=NAMED.bb_nodes, topology=herbein_example_topology())
    with pytest.raises(InputError) as info:
        Planner.of(ClusterState(0.0, both, ()), links=True)
    assert (info.value.reason, info.value.field) == (
        "link bandwidth is planned with the burst buffer in one pool, not on named BB nodes",
        "bb_nodes")


@pytest.mark.parametrize("walltime, bandwidth, fits", [
    (40.0, 100 * MB, True),    # over the head's start at 30, beside it there
    (40.0, 120 * MB, False),   # over it, leaving the head's three 90 MB/s nodes no room
    (5.0, 120 * MB, True),     # done by 15
    (19.5, 120 * MB, True),    # done before 30
    (20.0, 120 * MB, True),    # done exactly at 30: gives its node and bandwidth back there
    (20.5, 120 * MB, False),   # half a second over the head's start
])
def test_a_later_start_must_leave_a_later_reservation_placeable_at_its_start(
        walltime, bandwidth, fits):
    # node 2 busy with 200 MB/s until 30, the head (three nodes of 90 MB/s) held at 30; a job
    # asked at 10 (nodes 0, 1 and 3 free) is checked at 10 and at every reservation start it
    # runs over, the greedy placing it first there
    p = Planner.of(_state(), links=True)
    p.start(Job("a", 0.0, 30.0, nodes=1, bandwidth=200 * MB))
    head = Job("h", 0.0, 20.0, nodes=3, bandwidth=90 * MB)
    assert p.earliest(head) == 30.0
    p.reserve(head, 30.0)
    job = Job("x", 0.0, walltime, nodes=1, bandwidth=bandwidth)
    assert p.fits(job, 10.0) is fits
    assert p.earliest(job) == (10.0 if fits else 50.0)


@pytest.mark.parametrize("over, fits", [(0.0, True), (0.5, True), (1.5, False)])
def test_the_pooled_bb_fits_at_a_later_instant_up_to_the_core_tolerance(over, fits):
    # 70 GB free from 10 (r gives back 60 GB there, r2 keeps 30 GB until 20): a job at 10
    # asking exactly that, within the tolerance (100 B) and beyond it
    tol = REL_TOL * 100e9
    running = (RunningJob(Job("r", 0.0, 10.0, nodes=1, bb=60e9), 0.0, (0,)),
               RunningJob(Job("r2", 0.0, 20.0, nodes=1, bb=30e9), 0.0, (1,)))
    p = Planner.of(ClusterState(0.0, BB_TREE, running), links=True)
    assert p.fits(Job("a", 0.0, 5.0, nodes=1, bb=70e9 + over * tol), 10.0) is fits
    # a reservation at 10 asking that much is held there (beyond the tolerance the profile
    # refuses it), and a small job beside it still fits at 10: the reservation stays placeable
    held = Job("h", 0.0, 5.0, nodes=1, bb=70e9 + over * tol)
    if not fits:
        with pytest.raises(OverbookedError):
            p.reserve(held, 10.0)
        return
    p.reserve(held, 10.0)
    assert p.fits(Job("s", 0.0, 5.0, nodes=1), 10.0)


def test_a_released_reservation_gives_back_its_instant():
    p = Planner.of(_state(), links=True)
    p.reserve(Job("h1", 0.0, 20.0, nodes=2), 10.0)
    p.reserve(Job("h2", 0.0, 20.0, nodes=2), 10.0)
    late = Job("z", 0.0, 10.5, nodes=1)  # (runs over 10, where the four nodes are held)
    assert p.start(late) is None
    p.release(Job("h2", 0.0, 20.0, nodes=2))
    assert list(p.links.holds) == ["h1"]
    assert p.start(late).nodes == (2,)


def test_a_later_hold_on_the_tree_is_refused_where_a_reservation_would_lose_its_bandwidth():
    p = Planner.of(_state(), links=True)
    p.reserve(Job("h1", 0.0, 20.0, nodes=2, bandwidth=150 * MB), 10.0)
    # at 10 h1 takes nodes 0 and 2 (300 MB/s of the network switch's 384)
    assert not p.hold(Job("no", 0.0, 5.0, nodes=2, bandwidth=43 * MB), 10.0)
    assert "no" not in p.holds and "no" not in p.links.holds
    assert p.hold(Job("ok", 0.0, 5.0, nodes=2, bandwidth=40 * MB), 10.0)
    assert p.holds["ok"] == (10.0, 15.0, (2, 0.0)) and list(p.links.holds) == ["h1", "ok"]


def test_two_reservations_at_one_instant_are_both_counted_against_a_later_start():
    p = Planner.of(_state(), links=True)
    # at 10: h1 on node 0 (lls0 106 MB/s left), h2 on node 2 (lls1 106): 84 MB/s left of the
    # network switch's 384
    p.reserve(Job("h1", 0.0, 20.0, nodes=1, bandwidth=150 * MB), 10.0)
    p.reserve(Job("h2", 0.0, 20.0, nodes=1, bandwidth=150 * MB), 10.0)
    assert p.fits(Job("x", 0.0, 5.0, nodes=1, bandwidth=84 * MB), 10.0)
    assert not p.fits(Job("y", 0.0, 5.0, nodes=1, bandwidth=85 * MB), 10.0)
    assert p.fits(Job("y", 0.0, 5.0, nodes=1, bandwidth=85 * MB), 30.0)


def test_a_reservation_on_the_tree_is_held_on_the_nodes_running_jobs_leave():
    p = Planner.of(_state(), links=True)
    with pytest.raises(OverbookedError):
        p.reserve(Job("four", 0.0, 5.0, nodes=4), 5.0)  # (r holds nodes 0 and 1 until 10)
    p.reserve(Job("four", 0.0, 5.0, nodes=4), 10.0)
    assert p.holds["four"] == (10.0, 15.0, (4, 0.0))


def test_bb_taken_on_a_pool_with_the_tree_starts_the_job_on_the_nodes_the_greedy_selects():
    p = Planner.of(_state(), links=True)
    assert p.take_bb(Job("a", 0.0, 5.0, nodes=1, bandwidth=200 * MB))
    assert p.started == {"a": (2,)} and p.chosen == {"a": (2,)}
    # lls1 has 56 MB/s left: refused, nothing taken
    assert not p.take_bb(Job("b", 0.0, 5.0, nodes=1, bandwidth=57 * MB))
    assert "b" not in p.started
    # without the tree the caller's count of pooled bytes is the whole rule
    assert Planner.of(ClusterState(0.0, POOL, ())).take_bb(Job("c", 0.0, 5.0, nodes=9))


def test_a_later_start_is_refused_where_an_earlier_made_reservation_has_no_nodes_left():
    p = Planner.of(_state(), links=True)
    p.start(Job("a", 0.0, 5.0, nodes=1))  # (node 2 until 5: nodes 2 and 3 free from 5)
    # the four nodes held from 10, by three reservations made in this order
    p.reserve(Job("h1", 0.0, 20.0, nodes=2), 10.0)
    p.reserve(Job("h2", 0.0, 20.0, nodes=1), 10.0)
    p.reserve(Job("h3", 0.0, 20.0, nodes=1), 10.0)
    # two nodes from 5 for 10 s would run over 10: placed first there, they leave h1 its two
    # nodes but h2 none (nor h3)
    x = Job("x", 0.0, 10.0, nodes=2)
    assert p.earliest(x) == 30.0
    assert p.earliest(Job("y", 0.0, 5.0, nodes=2)) == 5.0  # (done by 10)

"""The planner's rules at their edges, hand-computed: starts now counted on the engine's running
jobs (the node count left after each start), a block's pass over a later hold's row (a job
ending exactly at the hold's start, BB exactly at what is free there), the BB-node bytes of a
start now ending at an instant kept, BB taken on the compute nodes a caller names, the platform's
own placement when the planner is built directly (Kopanski & Rzadca, Section 3.2)."""

from __future__ import annotations

import pytest

from bbopt.core import GB, ClusterState, Job, RunningJob, RunningJobs
from bbopt.planner import Planner
from tests._platforms import NAMED, POOL, PROXIMITY


# ---------------------------------------------------------------- starts now, counted
def _engine_state() -> ClusterState:
    """POOL (8 nodes, 100 GB) as the engine hands it: running jobs as RunningJobs; r holds 2
    nodes and 50 GB until 10."""
    running = RunningJobs((RunningJob(Job("r", 0.0, 10.0, nodes=2, bb=50 * GB), 0.0, (0, 1)),))
    return ClusterState(0.0, POOL, running)


def test_starts_now_on_the_engines_running_jobs_count_the_nodes_left_after_each():
    p = Planner.of(_engine_state())
    # six nodes free (8 less the 2 r holds, not less its 50 GB)
    assert p.start(Job("a", 0.0, 5.0, nodes=1)) is not None
    # five left: two nodes start, then three, then none
    assert p.start(Job("b", 0.0, 5.0, nodes=2)) is not None
    assert p.start(Job("c", 0.0, 5.0, nodes=4)) is None
    assert p.start(Job("d", 0.0, 5.0, nodes=3)) is not None
    assert p.start(Job("e", 0.0, 5.0, nodes=1)) is None
    assert p.free_nodes == []


def test_a_start_now_on_the_engines_running_jobs_takes_up_to_the_last_free_node():
    p = Planner.of(_engine_state())
    assert p.start(Job("six", 0.0, 5.0, nodes=6)) is not None
    assert p.free_nodes == []


# ---------------------------------------------------------------- the planner built directly
def test_the_constructor_places_named_bb_by_the_platforms_own_placement():
    p = Planner(PROXIMITY, 0.0)
    assert p.bb.chooses_nodes
    start = p.start(Job("a", 0.0, 5.0, nodes=2, bb=10 * GB))
    assert start is not None and start.nodes is not None and len(start.nodes) == 2
    assert not Planner(PROXIMITY, 0.0, first_fit=True).bb.chooses_nodes


def test_running_jobs_given_once_as_an_iterator_are_read_for_every_dimension():
    running = [RunningJob(Job("r", 0.0, 10.0, nodes=2, bb=30 * GB), 0.0, (0, 1))]
    p = Planner(POOL, 0.0, iter(running))
    assert p.earliest(Job("all", 0.0, 5.0, nodes=8)) == 10.0
    assert p.free_nodes == [2, 3, 4, 5, 6, 7]
    q = Planner(POOL, 0.0, (r for r in running))
    assert q.free_nodes == [2, 3, 4, 5, 6, 7]
    assert q.earliest(Job("bb", 0.0, 5.0, nodes=1, bb=80 * GB)) == 10.0


# ---------------------------------------------------------------- BB on named compute nodes
def test_take_bb_places_the_bb_on_the_compute_nodes_the_caller_names():
    p = Planner.of(ClusterState(0.0, PROXIMITY, ()))
    assert p.take_bb(Job("a", 0.0, 5.0, nodes=2, bb=10 * GB), nodes=(6, 7))
    assert p.chosen == {"a": (6, 7)}
    assert p.free_nodes == [0, 1, 2, 3, 4, 5]
    # its own choice when none are named: the lowest free ones
    assert p.take_bb(Job("b", 0.0, 5.0, nodes=2, bb=10 * GB))
    assert p.chosen["b"] == (0, 1)


# ---------------------------------------------------------------- a block's pass over a later hold
def _held_at_10(nodes: int = 6) -> Planner:
    """NAMED (8 nodes, four BB nodes of 25 GB), nothing running; a job without BB holds
    ``nodes`` from 10 (the first hold after now: starts now running past 10 must fit the nodes
    left there)."""
    p = Planner.of(ClusterState(0.0, NAMED, ()))
    assert p.hold(Job("h", 0.0, 20.0, nodes=nodes), 10.0)
    return p


@pytest.mark.parametrize("walltime, starts", [(10.0, True), (9.5, True), (10.5, False)])
def test_a_block_whose_least_job_ends_at_the_later_holds_start_is_not_skipped(walltime, starts):
    # three nodes: free now (8), but only 2 are left at 10
    job = Job("j", 0.0, walltime, nodes=3)
    p = _held_at_10()
    assert p.start_each_block((([job], (3, 0.0, walltime)),)) == ([job] if starts else [])
    p = _held_at_10()
    assert p.start_each([job]) == ([job] if starts else [])


def test_a_block_whose_least_bounds_only_nodes_and_bb_is_passed_over_the_later_hold():
    # (the least job's walltime not given: the later row tested job by job)
    p = _held_at_10()
    ok, wide = Job("ok", 0.0, 15.0, nodes=2), Job("wide", 0.0, 15.0, nodes=3)
    assert p.start_each_block((([wide, ok], (2, 0.0)),)) == [ok]


def test_a_job_without_bb_running_past_the_later_hold_is_not_compared_with_its_bb():
    # every byte of the pool held from now until 100 by one node: 0 B free now and at 10; a
    # job of one node without BB running 200 s over 10 starts (1 node <= 2 left at 10)
    running = (RunningJob(Job("r", 0.0, 100.0, nodes=1, bb=100 * GB), 0.0, (0,),
                          ((0, 25 * GB), (1, 25 * GB), (2, 25 * GB), (3, 25 * GB))),)
    p = Planner.of(ClusterState(0.0, NAMED, running))
    assert p.hold(Job("h", 0.0, 20.0, nodes=5), 10.0)
    job = Job("j", 0.0, 200.0, nodes=1)
    assert p.start_each_block((([job], (1, 0.0, 200.0)),)) == [job]
    p = Planner.of(ClusterState(0.0, NAMED, running))
    assert p.hold(Job("h", 0.0, 20.0, nodes=5), 10.0)
    assert p.start_each([job]) == [job]


@pytest.mark.parametrize("over, starts", [(0.0, True), (1.0, False)])
def test_a_job_running_past_the_later_hold_takes_every_byte_free_there_and_no_more(
        over, starts):
    # 100 GB free now and at 10 (the hold of 4 nodes has no BB); a job of 4 nodes (25 GB on
    # each BB node) asking exactly 100 GB, or one byte more, running past 10
    job = Job("j", 0.0, 20.0, nodes=4, bb=100 * GB + over)
    p = _held_at_10(4)
    assert p.start_each_block((([job], (4, job.bb, 20.0)),)) == ([job] if starts else [])
    p = _held_at_10(4)
    assert p.start_each([job]) == ([job] if starts else [])


# ---------------------------------------------------------------- BB-node bytes at an instant kept
def test_a_start_now_ending_at_an_instant_kept_gives_its_bb_node_bytes_back_there():
    p = Planner.of(ClusterState(0.0, NAMED, ()))
    whole = Job("whole", 0.0, 5.0, nodes=4, bb=100 * GB)  # (every byte of the four BB nodes)
    assert p.fits(whole, 10.0)  # (the BB nodes' bytes at 10 built and kept)
    assert p.start(Job("a", 0.0, 10.0, nodes=1, bb=25 * GB)) is not None
    assert p.fits(whole, 10.0)  # (a's 25 GB back at 10 exactly)
    assert p.start(Job("b", 0.0, 10.5, nodes=1, bb=25 * GB)) is not None
    assert not p.fits(whole, 10.0) and p.fits(whole, 10.5)


def test_a_later_hold_with_every_piece_on_the_first_bb_node_holds_those_bytes():
    # r holds 20 GB on BB nodes 1-3 until 100 (25, 5, 5, 5 GB free); a hold from 10 of one
    # node and 25 GB takes BB node 0 whole there: one node's 10 GB, a piece no BB node has,
    # no longer fits at 10; 5 GB does
    r = RunningJob(Job("r", 0.0, 100.0, nodes=1, bb=60 * GB), 0.0, (7,),
                   ((1, 20 * GB), (2, 20 * GB), (3, 20 * GB)))
    p = Planner.of(ClusterState(0.0, NAMED, (r,)))
    assert p.fits(Job("b", 0.0, 5.0, nodes=1, bb=10 * GB), 10.0)
    assert p.hold(Job("a", 0.0, 20.0, nodes=1, bb=25 * GB), 10.0)
    assert p.holds["a"] == (10.0, 30.0, (1, 25 * GB, 25 * GB, 0.0, 0.0, 0.0))
    assert not p.fits(Job("b", 0.0, 5.0, nodes=1, bb=10 * GB), 10.0)
    assert p.fits(Job("b", 0.0, 5.0, nodes=1, bb=5 * GB), 10.0)
    assert p.fits(Job("b", 0.0, 5.0, nodes=1, bb=10 * GB), 30.0)


def test_fits_now_is_whether_the_engines_placement_now_leaves_a_later_hold_its_bytes():
    # a hold from 10 takes BB node 0 whole; a job of one node and 10 GB now is placed where
    # the engine places it, first fit on what is free now (BB node 0): over 10 it would take
    # the hold's bytes, so it neither fits nor starts now (though BB nodes 1-3 are free
    # throughout); done by 10 it does both
    p = Planner.of(ClusterState(0.0, NAMED, ()))
    p.reserve(Job("a", 0.0, 20.0, nodes=1, bb=25 * GB), 10.0)
    over = Job("b", 0.0, 20.0, nodes=1, bb=10 * GB)
    assert not p.fits(over, 0.0) and p.start(over) is None
    done = Job("c", 0.0, 10.0, nodes=1, bb=10 * GB)
    assert p.fits(done, 0.0) and p.start(done) is not None


# ---------------------------------------------------------------- held with the pieces given
def _named_state(platform=NAMED) -> ClusterState:
    """r holds 2 nodes and all 25 GB of BB node 0 until 10."""
    r = RunningJob(Job("r", 0.0, 10.0, nodes=2, bb=25 * GB), 0.0, (0, 1),
                   ((0, 12.5 * GB), (0, 12.5 * GB)))
    return ClusterState(0.0, platform, RunningJobs((r,)))


def test_hold_with_takes_the_pieces_given_now_or_later_and_nothing_when_they_do_not_fit():
    p = Planner.of(_named_state(), window_now=True)
    a = Job("a", 0.0, 5.0, nodes=2, bb=20 * GB)
    assert p.hold_with(a, 0.0, [0.0, 0.0, 20 * GB, 0.0])  # now: started, its pieces taken now
    assert p.bb.held["a"] == ((2, 10 * GB), (2, 10 * GB))
    assert p.holds["a"] == (0.0, 5.0, (2, 20 * GB, 0.0, 0.0, 20 * GB, 0.0))
    free = list(p.bb.free)
    b = Job("b", 0.0, 5.0, nodes=1, bb=10 * GB)
    assert not p.hold_with(b, 0.0, [10 * GB, 0.0, 0.0, 0.0])  # node 0 is full until 10
    assert "b" not in p.holds and "b" not in p.bb.held and p.bb.free == free
    assert p.hold_with(b, 10.0, [10 * GB, 0.0, 0.0, 0.0])  # later: reserved, nothing taken now
    assert p.holds["b"][0] == 10.0 and "b" not in p.bb.held and p.bb.free == free


def test_hold_with_now_needs_the_node_ids_free_now_too():
    """A running job past its walltime frees its nodes in the profile at its expected end, not
    its node ids: 4 nodes with every byte given fit the profile, not the 2 ids left."""
    r = RunningJob(Job("r", 0.0, 5.0, nodes=6), 0.0, (0, 1, 2, 3, 4, 5))
    p = Planner.of(ClusterState(8.0, NAMED, RunningJobs((r,))), window_now=True)
    assert not p.hold_with(Job("d", 0.0, 5.0, nodes=4), 8.0, [0.0] * 4)
    assert p.hold_with(Job("e", 0.0, 5.0, nodes=2), 8.0, [0.0] * 4)


def test_a_start_now_over_its_window_names_the_nodes_proximity_chooses():
    """On proximity placement a start now placed over its window takes the compute nodes the
    placement chooses (a run of free ones) and its pieces there; held with given pieces, it
    takes them on nodes chosen now."""
    p = Planner.of(_named_state(PROXIMITY), window_now=True)
    start = p.start(Job("a", 0.0, 5.0, nodes=2, bb=20 * GB))
    assert start is not None and start.nodes == p.chosen["a"] and len(start.nodes) == 2
    assert set(start.nodes).isdisjoint({0, 1})
    q = Planner.of(_named_state(PROXIMITY), window_now=True)
    assert q.hold_with(Job("b", 0.0, 5.0, nodes=2, bb=20 * GB), 0.0, [0.0, 20 * GB, 0.0, 0.0])
    assert len(q.chosen["b"]) == 2 and set(q.chosen["b"]).isdisjoint({0, 1})
    assert q.bb.held["b"] == ((1, 10 * GB), (1, 10 * GB))

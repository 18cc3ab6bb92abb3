"""The planner's compute node ids (Kopanski & Rzadca, Euro-Par 2021, Section 4.1): the ids free
now (running jobs without a known allocation given the lowest free ones, the starts a pass only
counted named in order), the ids free at a later time (what ended by then, at the end exactly
included; the nodes of reservations overlapping the interval, at its bounds exactly excluded),
when a count of nodes is enough, and the nodes a start gets (the engine's rule, per node count
and per local-SSD request)."""

from __future__ import annotations

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob, RunningJobs, dragonfly_proximity
from bbopt.planner import Planner
from tests._platforms import IO_TREE, POOL, SSD

# Eight nodes in four chassis of two (one 10 GB BB node each), two chassis per group.
PROX = Platform(8, 40 * GB, bb_nodes=(10 * GB,) * 4, bb_proximity=dragonfly_proximity(8, 2, 2))
#: The same with local SSD on nodes 4-7 only.
PROX_SSD = Platform(8, 40 * GB, bb_nodes=(10 * GB,) * 4,
                    bb_proximity=dragonfly_proximity(8, 2, 2),
                    node_ssd=(0.0,) * 4 + (10 * GB,) * 4)


def _running(*jobs: tuple[tuple[int, ...], float], now: float = 0.0,
             platform: Platform = PROX) -> ClusterState:
    """Running jobs ``(nodes, expected end)`` started at 0, no BB, in this order."""
    return ClusterState(now, platform, tuple(
        RunningJob(Job(f"r{k}", 0.0, end, nodes=len(nodes)), 0.0, nodes, ())
        for k, (nodes, end) in enumerate(jobs)))


def test_running_jobs_without_a_known_allocation_hold_the_lowest_free_nodes():
    # nodes 5-6 known; 2 + 1 nodes unknown: the three lowest of 0-4 and 7
    running = (RunningJob(Job("a", 0.0, 10.0, nodes=2), 0.0, (5, 6)),
               RunningJob(Job("b", 0.0, 20.0, nodes=2), 0.0),
               RunningJob(Job("c", 0.0, 20.0, nodes=1), 0.0))
    assert Planner(POOL, 0.0, running).free_nodes == [3, 4, 7]


def test_starts_counted_on_first_fit_are_named_in_order_when_the_ids_are_asked():
    def planner() -> Planner:
        return Planner(POOL, 0.0, RunningJobs((RunningJob(Job("r", 0.0, 10.0, nodes=2), 0.0,
                                                          (0, 1)),)))
    p = planner()
    assert p.start(Job("x", 0.0, 5.0, nodes=3)) is not None
    assert p.start(Job("y", 0.0, 5.0, nodes=2)) is not None
    assert p.started == {}  # (only counted so far)
    assert p.free_nodes == [7]
    assert p.started == {"x": (2, 3, 4), "y": (5, 6)}
    assert p.start(Job("z", 0.0, 5.0, nodes=1)) is not None  # (now from the named ids)
    assert p.started["z"] == (7,) and p.free_nodes == []
    assert p.start(Job("w", 0.0, 5.0, nodes=1)) is None
    # a start of exactly the nodes left, counted
    p = planner()
    assert p.start(Job("all", 0.0, 5.0, nodes=6)) is not None
    assert p.start(Job("one", 0.0, 5.0, nodes=1)) is None
    assert p.free_nodes == [] and p.started == {"all": (2, 3, 4, 5, 6, 7)}


def test_ids_free_now_exclude_a_job_whose_expected_end_is_now():
    p = Planner.of(_running(((0, 1), 10.0), now=10.0))
    assert p.free_ids(10.0, 20.0) == [2, 3, 4, 5, 6, 7]
    assert p.free_ids(10.5, 20.0) == list(range(8))


def test_ids_free_later_follow_expected_ends_in_any_order_of_the_running_jobs():
    # a plain tuple, the later end first: the known ends are sorted before a prefix is read
    p = Planner.of(_running(((0, 1), 20.0), ((2, 3), 10.0)))
    assert p.free_ids(9.0, 12.0) == [4, 5, 6, 7]
    assert p.free_ids(10.0, 12.0) == [2, 3, 4, 5, 6, 7]
    assert p.free_ids(19.0, 25.0) == [2, 3, 4, 5, 6, 7]
    assert p.free_ids(20.0, 25.0) == list(range(8))


def test_a_reservation_s_nodes_are_excluded_exactly_over_its_interval():
    p = Planner.of(_running(((0, 1, 2, 3), 10.0)))
    p.reserve(Job("head", 0.0, 50.0, nodes=6), 10.0, replace=True)  # nodes 0-5 on [10, 60)
    assert p.free_ids(0.0, 10.0) == [4, 5, 6, 7]  # (ends at its start: no overlap)
    assert p.free_ids(0.0, 10.5) == [6, 7]
    assert p.free_ids(59.5, 70.0) == [6, 7]
    assert p.free_ids(60.0, 70.0) == list(range(8))  # (starts at its end: no overlap)


def test_a_count_of_nodes_suffices_only_without_named_nodes_ssd_or_unknown_allocations():
    late = Job("late", 0.0, 100.0, nodes=2)
    p = Planner.of(_running(((0, 1, 2, 3), 10.0), ((6, 7), 10.0)))
    assert p._counted(late) and p.fits(late, 5.0)
    # the head holds 0-5 from 10: two nodes are counted free at 5 and from 10 on, but the
    # ids free at 5 (4 and 5) are the head's, so the late job does not fit at 5 (at 10 it
    # gets 6-7); a job done by 10 does
    p.reserve(Job("head", 0.0, 50.0, nodes=6), 10.0, replace=True)
    assert not p._counted(late)
    assert not p.fits(late, 5.0)
    assert p.fits(late, 10.0) and p.earliest(late) == 10.0
    assert p.fits(Job("early", 0.0, 5.0, nodes=2), 5.0)
    unknown = ClusterState(0.0, PROX, (RunningJob(Job("u", 0.0, 10.0, nodes=2), 0.0),))
    assert not Planner.of(unknown)._counted(late)
    ssd = Planner.of(ClusterState(0.0, PROX_SSD, ()))
    assert not ssd._counted(Job("s", 0.0, 5.0, nodes=2, ssd=1.0))
    assert ssd._counted(late)
    assert Planner.of(_running())._counted(Job("s", 0.0, 5.0, nodes=2, ssd=1.0))


def test_a_local_ssd_request_gets_its_own_nodes_not_those_chosen_for_the_count():
    p = Planner.of(ClusterState(0.0, PROX_SSD, ()))
    assert p.fits_now(Job("n", 0.0, 5.0, nodes=2))  # (two nodes chosen: 0-1)
    assert p.start(Job("s", 0.0, 5.0, nodes=2, ssd=1.0)).nodes == (4, 5)
    assert p.start(Job("t", 0.0, 5.0, nodes=2, ssd=1.0)).nodes == (6, 7)
    assert p.start(Job("u", 0.0, 5.0, nodes=1, ssd=1.0)) is None
    assert p.start(Job("n", 0.0, 5.0, nodes=4)).nodes == (0, 1, 2, 3)


def test_the_nodes_chosen_are_kept_per_node_count():
    p = Planner.of(ClusterState(0.0, PROX_SSD, ()))
    assert p._choose(Job("a", 0.0, 5.0, nodes=2), 0.0) == (0, 1)
    assert p._choose(Job("b", 0.0, 5.0, nodes=6), 0.0) == (0, 1, 2, 3, 4, 5)
    assert p._choose(Job("c", 0.0, 5.0, nodes=9), 0.0) is None
    assert p._choose(Job("d", 0.0, 5.0, nodes=2), 0.0) == (0, 1)


def test_a_placement_that_does_not_choose_nodes_takes_the_lowest_fitting_ssd():
    p = Planner.of(ClusterState(0.0, SSD, ()))
    assert p.start(Job("s", 0.0, 5.0, nodes=4, ssd=100 * GB)) is not None
    assert p.started == {"s": (4, 5, 6, 7)}
    assert p.start(Job("t", 0.0, 5.0, nodes=1, ssd=100 * GB)) is None
    assert p.start(Job("u", 0.0, 5.0, nodes=1, ssd=50 * GB)) is not None
    assert p.started["u"] == (0,)


def test_with_link_bandwidth_the_free_nodes_are_the_trees():
    running = (RunningJob(Job("r", 0.0, 10.0, nodes=2, bandwidth=20e6), 0.0, (0, 1)),)
    p = Planner.of(ClusterState(0.0, IO_TREE, running), links=True)
    assert p.free_nodes == [2, 3]
    p.start(Job("a", 0.0, 5.0, nodes=1))
    assert p.free_nodes == [3]


def test_a_local_ssd_request_on_a_platform_without_ssd_gets_the_placements_choice():
    # no node has local SSD to choose by: the proximity placement's run of free nodes
    p = Planner.of(_running(((0, 1, 2, 3), 10.0)))
    assert p.start(Job("s", 0.0, 5.0, nodes=2, ssd=1.0)).nodes == (4, 5)

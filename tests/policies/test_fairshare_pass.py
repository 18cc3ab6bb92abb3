"""One pass of a fair-share decision (Zvi & Oren, Algorithm 1 lines 16-31): EASY over jobs
offered one at a time, and a start of the pass taken back."""

from __future__ import annotations

from bbopt.core import GB, ClusterState, Job, Platform, RunningJob
from bbopt.planner import Planner
from bbopt.policies.fairshare_pass import Easy, Free


def _easy(platform=None):
    """4 nodes and 100 GB of BB; r holds 2 nodes and 60 GB until 100: 2 nodes and 40 GB free."""
    platform = platform or Platform(nodes=4, bb=100 * GB)
    state = ClusterState(0.0, platform, (RunningJob(Job("r", 0, 100.0, nodes=2, bb=60 * GB),
                                                    0.0),))
    return Easy(state, Free(2, 40 * GB, 0.0, Planner.of(state)))


def test_a_late_start_taken_back_gives_the_spare_nodes_at_the_reservation_back():
    easy = _easy()
    assert not easy.offer(Job("h", 0, 50.0, nodes=3))  # the head: at 100, 1 node spare
    assert (easy.shadow, easy.extra_n) == (100.0, 1)
    late = Job("l", 0, 500.0, nodes=1, bb=5 * GB)
    assert easy.offer(late) and easy.late == {"l"}
    assert (easy.extra_n, easy.extra_b, easy.free.nodes) == (0, 95 * GB, 1)
    assert not easy.offer(Job("m", 0, 500.0, nodes=1))  # no spare node left at 100
    easy.take_back(late)
    assert easy.started == [] and easy.late == set()
    assert (easy.extra_n, easy.extra_b, easy.free.nodes, easy.free.bb) == (1, 100 * GB, 2,
                                                                          40 * GB)
    assert easy.offer(Job("m", 0, 500.0, nodes=1))  # the spare node is spare again
    assert easy.reservations()[0].start == 100.0


def test_a_start_on_time_taken_back_leaves_the_spare_resources_alone():
    easy = _easy()
    assert not easy.offer(Job("h", 0, 50.0, nodes=3))
    short = Job("s", 0, 100.0, nodes=1, bb=30 * GB)  # ends exactly at the reservation
    assert easy.offer(short) and easy.late == set()
    easy.take_back(short)
    assert (easy.extra_n, easy.extra_b, easy.free.nodes, easy.free.bb) == (1, 100 * GB, 2,
                                                                          40 * GB)


def test_a_start_taken_back_frees_its_pieces_on_named_bb_nodes():
    # two BB nodes of 50 GB; r's 60 GB sits as two pieces of 30 GB: 20 GB free on each
    easy = _easy(Platform(nodes=4, bb=100 * GB, bb_nodes=(50 * GB, 50 * GB)))
    one, two = Job("one", 0, 10.0, nodes=1, bb=20 * GB), Job("two", 0, 10.0, nodes=2, bb=40 * GB)
    assert easy.offer(one)  # a piece of 20 GB on the first BB node: 0 and 20 GB free
    assert easy.free.planner.bb.free == [0.0, 20 * GB]
    assert not easy.free.fits(two)  # its pieces of 20 GB need both BB nodes
    easy.take_back(one)
    assert easy.free.planner.bb.free == [20 * GB, 20 * GB]
    assert easy.offer(two)


def test_spare_nodes_given_back_are_added_to_what_is_still_spare():
    # 6 nodes, r holds 4 until 100: the head (3 nodes) waits, 3 nodes spare at 100; two late
    # starts of one node each leave 1; the first taken back makes 2 spare (not its 1 node)
    state = ClusterState(0.0, Platform(nodes=6), (RunningJob(Job("r", 0, 100.0, nodes=4), 0.0),))
    easy = Easy(state, Free(2, 0.0, 0.0))
    assert not easy.offer(Job("h", 0, 50.0, nodes=3))
    assert easy.extra_n == 3
    first, second = Job("l1", 0, 500.0, nodes=1), Job("l2", 0, 500.0, nodes=1)
    assert easy.offer(first) and easy.offer(second) and easy.extra_n == 1
    easy.take_back(first)
    assert easy.extra_n == 2 and easy.late == {"l2"} and easy.started == [second]

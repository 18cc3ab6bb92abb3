"""The BB placement the planner exports: one strategy per platform kind, chosen once from the
platform (:func:`bbopt.planner.bb_placement`), all with the pool's interface
(:data:`bbopt.planner.BBPlacement`)."""

from __future__ import annotations

from bbopt.core import Job
from bbopt.planner import BBPlacement, bb_placement
from tests._platforms import NAMED, POOL

GB = 1e9


def test_a_pool_places_no_piece_and_is_shared():
    pool = bb_placement(POOL)
    assert isinstance(pool, BBPlacement) and pool.kind == "pool" and not pool.named
    assert pool is bb_placement(POOL)  # stateless: one object for every pooled platform
    job = Job("a", 0.0, walltime=10.0, nodes=2, bb=20 * GB)
    assert pool.placement(job) == [] and pool.why_not_now(job) is None


def test_named_bb_nodes_take_one_piece_per_compute_node_first_fit():
    """Four BB nodes of 25 GB: a 2-node job of 20 GB puts both 10 GB pieces on BB node 0; then
    a 3-node job of 60 GB (pieces of 20 GB) no longer fits there (5 GB left) and goes to 1-3."""
    placement = bb_placement(NAMED)
    assert isinstance(placement, BBPlacement) and placement.kind == "first-fit"
    assert placement.named and placement is not bb_placement(NAMED)  # a fresh one each time
    a = Job("a", 0.0, walltime=10.0, nodes=2, bb=20 * GB)
    assert placement.placement(a) == [(0, 10 * GB), (0, 10 * GB)]
    placement.take(a, placement.placement(a))
    assert placement.pieces_of(a) == ((0, 10 * GB), (0, 10 * GB))
    b = Job("b", 0.0, walltime=10.0, nodes=3, bb=60 * GB)
    assert placement.placement(b) == [(1, 20 * GB), (2, 20 * GB), (3, 20 * GB)]
    assert placement.why_not_now(Job("c", 0.0, walltime=10.0, bb=26 * GB)) == (
        "its 1 pieces of 2.6e+10 B do not fit on the BB nodes (free: 5e+09, 2.5e+10, 2.5e+10, "
        "2.5e+10 B)")
    assert placement.why_not_now(Job("d", 0.0, walltime=10.0, bb=25 * GB)) is None


# The strategies' edges, one by one.


def _two_nodes(c0: float = 10.0, c1: float = 10.0):
    from bbopt.core import Platform

    return Platform(nodes=4, bb=c0 + c1, bb_nodes=(c0, c1))


def test_first_fit_needs_named_bb_nodes():
    import pytest

    from bbopt.planner.bb import FirstFitBB

    with pytest.raises(ValueError, match="^platform has no named BB nodes$"):
        FirstFitBB(POOL)


def test_a_start_without_room_says_its_pieces_and_changes_nothing():
    placement = bb_placement(_two_nodes(3.0, 3.0))
    job = Job("a", 0.0, walltime=10.0, nodes=2, bb=8.0)  # two 4 B pieces, 3 B per BB node
    assert placement.placement(job) is None
    assert placement.why_not_now(job) == (
        "its 2 pieces of 4 B do not fit on the BB nodes (free: 3, 3 B)")
    assert placement.free == [3.0, 3.0] and placement.pieces_of(job) == ()


def test_no_bb_and_one_byte_at_the_placement():
    placement = bb_placement(_two_nodes(0.5, 0.5))
    none = Job("n", 0.0, walltime=10.0, nodes=2, bb=0.0)
    byte = Job("b", 0.0, walltime=10.0, nodes=1, bb=1.0)
    assert placement.place_on([0.0, 0.0], none) == [] and placement.placeable(none, [0.0, 0.0])
    assert placement.place_on([0.5, 0.5], byte) is None  # one byte is BB: half a byte won't do
    assert not placement.placeable(byte, [0.5, 0.5])
    assert placement.place_on([0.5, 1.0], byte) == [(1, 1.0)] and placement.placeable(byte,
                                                                                       [0.5, 1.0])


def test_the_quick_placeability_test_never_accepts_what_first_fit_refuses():
    # pieces smaller than the test's margin (a billionth of the BB nodes' 20 B): the free
    # bytes add up to more than the request, but no BB node holds a whole piece
    placement = bb_placement(_two_nodes())
    tiny = Job("t", 0.0, walltime=10.0, nodes=1, bb=1e-8)
    assert not placement.placeable(tiny, [0.6e-8, 0.6e-8])
    assert placement.placeable(tiny, [0.6e-8, 1e-8])
    assert placement.placeable(tiny)  # on the BB nodes as they are now: empty


def test_never_placed_asks_the_empty_bb_nodes():
    placement = bb_placement(_two_nodes(5.0, 10.0))
    assert not placement.never_placed(3, 12.0)  # 1 + 2 pieces of 4 B
    assert placement.never_placed(4, 16.0)  # 1 + 2 of 4 pieces
    assert not bb_placement(POOL).never_placed(4, 1e21)  # a pool: the ledger's byte count
    assert bb_placement(POOL).placeable(Job("x", 0.0, walltime=1.0, nodes=4, bb=1e21))


def test_releasing_a_job_that_holds_nothing_changes_nothing():
    from bbopt.core import RunningJob

    placement = bb_placement(_two_nodes())
    a = Job("a", 0.0, walltime=10.0, nodes=1, bb=4.0)
    placement.release(a)
    assert placement.free == [10.0, 10.0]
    b = Job("b", 0.0, walltime=10.0, nodes=1, bb=0.0)
    placement.take_each([RunningJob(a, 0.0), RunningJob(b, 0.0)], {"a": ((1, 4.0),)})
    assert placement.free == [10.0, 6.0]
    assert placement.pieces_of(a) == ((1, 4.0),) and placement.pieces_of(b) == ()
    placement.release(b)
    placement.release(a)
    assert placement.free == [10.0, 10.0]


def test_the_engine_gives_ssd_jobs_the_smallest_admissible_ssds():
    from bbopt.core import Platform
    from bbopt.planner.bb import choose_nodes

    plat = Platform(nodes=4, bb=0.0, node_ssd=(4.0, 1.0, 2.0, 8.0))
    free = [0, 1, 2, 3]

    def nodes_of(n: int, ssd: float):
        return choose_nodes(free, Job("j", 0.0, walltime=1.0, nodes=n, ssd=ssd), plat,
                            bb_placement(plat))

    assert nodes_of(2, 0.0) == (0, 1)  # no SSD asked: the lowest-numbered free nodes
    assert nodes_of(1, 2.0) == (2,)  # an SSD of exactly the request is admissible
    assert nodes_of(2, 4.0) == (0, 3)  # exactly as many admissible as asked
    assert nodes_of(3, 4.0) == "needs 3 nodes with 4 B of local SSD, 2 free"
    assert nodes_of(5, 0.0) == "needs 5 nodes, 4 free"


def test_bytes_given_back_are_capped_at_the_bb_nodes_capacity():
    """0.2 B then 0.1 B taken on a 1 B node and given back in that order add up to one ulp
    over 1 B (1 - 0.2 - 0.1 + 0.2 + 0.1): the node is back at its capacity, no more."""
    placement = bb_placement(_two_nodes(1.0, 1.0))
    a = Job("a", 0.0, walltime=1.0, nodes=1, bb=0.2)
    b = Job("b", 0.0, walltime=1.0, nodes=1, bb=0.1)
    placement.take(a, [(0, 0.2)])
    placement.take(b, [(0, 0.1)])
    assert placement.free == [1.0 - 0.2 - 0.1, 1.0]
    placement.release(a)
    placement.release(b)
    assert placement.free == [1.0, 1.0]

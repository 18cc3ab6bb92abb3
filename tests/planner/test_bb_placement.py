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
    assert pool.charge(job) is None


def test_named_bb_nodes_take_one_piece_per_compute_node_first_fit():
    """Four BB nodes of 25 GB: a 2-node job of 20 GB puts both 10 GB pieces on BB node 0; then
    a 3-node job of 60 GB (pieces of 20 GB) no longer fits there (5 GB left) and goes to 1-3."""
    placement = bb_placement(NAMED)
    assert isinstance(placement, BBPlacement) and placement.kind == "first-fit"
    assert placement.named and placement is not bb_placement(NAMED)  # a fresh one each time
    a = Job("a", 0.0, walltime=10.0, nodes=2, bb=20 * GB)
    assert placement.placement(a) == [(0, 10 * GB), (0, 10 * GB)]
    assert placement.charge(a) is None
    b = Job("b", 0.0, walltime=10.0, nodes=3, bb=60 * GB)
    assert placement.placement(b) == [(1, 20 * GB), (2, 20 * GB), (3, 20 * GB)]
    assert placement.why_not_now(Job("c", 0.0, walltime=10.0, bb=26 * GB)) == (
        "its 1 pieces of 2.6e+10 B do not fit on the BB nodes (free: 5e+09, 2.5e+10, 2.5e+10, "
        "2.5e+10 B)")
    assert placement.why_not_now(Job("d", 0.0, walltime=10.0, bb=25 * GB)) is None

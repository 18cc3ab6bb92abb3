"""Named burst-buffer nodes: a job's per-node pieces are placed first fit on the BB nodes; a
start that fits the pool but not the nodes is refused and the job waits."""

from __future__ import annotations

import pytest

from bbopt import Job, Platform, simulate
from bbopt.errors import InputError
from bbopt.loading import load_platform
from bbopt.planner import bb_placement
from tests._policies import PoolOnly

POOL = Platform(nodes=4, bb=20.0)
NAMED = Platform(nodes=4, bb=20.0, bb_nodes=(10.0, 10.0))


def test_fits_the_pool_but_not_the_nodes_is_refused_then_starts():
    # a holds 6 on BB node 0 (free 4 | 10); h needs two pieces of 6: the pool has 14 free,
    # but only BB node 1 can take a piece of 6, so h waits for a to end. A policy that plans
    # on the pool has its start refused by the engine; fcfs checks the placement itself.
    jobs = [Job("a", 0, 10, 10, nodes=1, bb=6.0), Job("h", 0, 5, 5, nodes=2, bb=12.0)]
    pool = simulate(jobs, POOL, PoolOnly())
    named = simulate(jobs, NAMED, PoolOnly())
    assert pool.start == [0.0, 0.0]
    assert named.start == [0.0, 10.0]
    assert named.refused_starts >= 1 and pool.refused_starts == 0
    assert named.state == ["finished", "finished"]
    checked = simulate(jobs, NAMED, "fcfs")
    assert checked.start == [0.0, 10.0] and checked.refused_starts == 0


def test_fits_both_starts_at_once():
    # c's pieces of 4 go on BB node 0 (4 left there after a) and BB node 1.
    jobs = [Job("a", 0, 10, 10, nodes=1, bb=6.0), Job("c", 0, 5, 5, nodes=2, bb=8.0)]
    named = simulate(jobs, NAMED, "fcfs")
    assert named.start == [0.0, 0.0]
    assert named.refused_starts == 0


def test_first_fit_placement_and_release():
    ledger = bb_placement(NAMED)
    a = Job("a", 0, 10, 10, nodes=1, bb=6.0)
    ledger.take(a, ledger.placement(a, (0,)))
    assert ledger.free == [4.0, 10.0]
    c = Job("c", 0, 5, 5, nodes=3, bb=9.0)  # pieces of 3: BB0 (4 free), then BB1 twice
    assert ledger.placement(c, (1, 2, 3)) == [(0, 3.0), (1, 3.0), (1, 3.0)]
    assert ledger.free == [4.0, 10.0]  # placement alone changes nothing
    big = Job("big", 0, 5, 5, nodes=2, bb=12.0)
    assert ledger.placement(big, (1, 2)) is None and ledger.why_not_now(big, (1, 2)) == (
        "its 2 pieces of 6 B do not fit on the BB nodes (free: 4, 10 B)")
    assert ledger.free == [4.0, 10.0]
    ledger.release(a)
    assert ledger.free == [10.0, 10.0]


def test_never_placeable_jobs_are_rejected_at_submission():
    # 2 pieces of 9 (18 B) fit the pool and the two 10 B nodes; 3 pieces of 6 (18 B) fit the
    # pool but the two nodes take one piece of 6 each.
    assert NAMED.why_never_fits(Job("x", 0, 1, 1, nodes=2, bb=18.0)) is None
    why = NAMED.why_never_fits(Job("y", 0, 1, 1, nodes=3, bb=18.0))
    assert why is not None and "BB nodes hold 2" in why
    assert POOL.why_never_fits(Job("y", 0, 1, 1, nodes=3, bb=18.0)) is None
    res = simulate([Job("y", 0, 1, 1, nodes=3, bb=18.0)], NAMED, "fcfs-bb")
    assert res.state == ["rejected"] and "BB nodes" in res.reasons["y"]


def test_platform_option_and_validation():
    named = load_platform("kopanski:named")
    assert named.bb_nodes == (40e9,) * 12 and named.bb == 480e9
    assert load_platform("kopanski").bb_nodes is None
    with pytest.raises(InputError, match="kopanski:named"):
        load_platform("kopanski:bogus")
    with pytest.raises(InputError, match="bb_nodes"):
        Platform(nodes=4, bb=15.0, bb_nodes=(10.0, 10.0))

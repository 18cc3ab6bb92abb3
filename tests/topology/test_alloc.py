"""Allocation over an I/O tree (Herbein et al., Section 3.4): the engine's bandwidth check
(a charge refused leaves what is charged unchanged) and the free nodes and bandwidth a policy
places jobs against, on the Figure 2-3 tree: two 256 MB/s switches of two nodes under a
384 MB/s network switch and a 1 GB/s PFS."""

from __future__ import annotations

import numpy as np

from bbopt.core import Job
from bbopt.topology import AllocState, BandwidthLedger, herbein_example_topology

MB = 1e6


def test_the_ledger_charges_up_to_each_vertex_and_refuses_beyond_unchanged():
    tree = herbein_example_topology()  # two 256 MB/s switches of two nodes under 384 MB/s
    ledger = BandwidthLedger(tree)
    lls0 = tree.vertex_of["lls0"]
    assert ledger.charge(Job("a", 0.0, walltime=1.0, nodes=2, bandwidth=100 * MB), [0, 1]) is None
    assert ledger.avail[lls0] == 56 * MB and ledger.avail[0] == 800 * MB
    before = ledger.avail.copy()
    why = ledger.charge(Job("b", 0.0, walltime=1.0, nodes=1, bandwidth=100 * MB), [0])
    assert why == "over-allocates switch 'lls0': 300 MB/s would be charged on 256 MB/s"
    assert np.array_equal(ledger.avail, before)  # a refused charge takes nothing
    # a job without bandwidth is never refused; a release gives the bandwidth back
    assert ledger.charge(Job("c", 0.0, walltime=1.0, nodes=1), [0]) is None
    ledger.release(Job("a", 0.0, walltime=1.0, nodes=2, bandwidth=100 * MB), [0, 1])
    assert ledger.avail[lls0] == 256 * MB and ledger.avail[0] == 1000 * MB
    # the 384 MB/s network switch: four nodes of 96 MB/s exactly, not of 97
    assert ledger.why_never_fits(Job("d", 0.0, walltime=1.0, nodes=4, bandwidth=96 * MB)) is None
    assert "at most 3 such nodes" in ledger.why_never_fits(
        Job("e", 0.0, walltime=1.0, nodes=4, bandwidth=97 * MB))


def test_placing_one_by_one_counts_what_each_switch_leaves():
    tree = herbein_example_topology()
    state = AllocState(tree, tree.fresh_avail(), np.ones(4, dtype=bool))
    # 100 MB/s a node: two under each 256 MB/s switch, but three under the 384 MB/s one
    assert state.n_free == 4 and state.count(100 * MB) == 3 and state.count(0.0) == 4
    assert state.fits(3, 100 * MB) and not state.fits(4, 100 * MB)
    assert state.fits(4, 96 * MB)  # 4 x 96 = 384 exactly
    assert list(state.select(2, 128 * MB)) == [0, 1]
    before = state.copy()
    state.take([0, 1], 128 * MB)
    # the first switch is full; the network switch has 128 MB/s left: one more node, node 2
    assert state.n_free == 2 and state.count(128 * MB) == 1
    assert state.fits(1, 128 * MB) and not state.fits(2, 128 * MB)
    assert list(state.select(1, 128 * MB)) == [2]
    assert before.n_free == 4 and before.count(128 * MB) == 3  # a copy is apart
    state.give([0, 1], 128 * MB)
    assert state.n_free == 4 and state.count(128 * MB) == 3


def _job(bandwidth: float, nodes: int = 1) -> Job:
    return Job("j", 0.0, walltime=1.0, nodes=nodes, bandwidth=bandwidth)


def test_the_ledger_admits_up_to_the_engines_tolerance_and_refuses_beyond():
    tree = herbein_example_topology()
    lls0 = tree.vertex_of["lls0"]
    # lls0 has 256 MB/s; the engine's tolerance is 2e-9 of it, 0.512 B/s
    for over, refused in ((0.0, False), (0.5, False), (0.52, True)):
        ledger = BandwidthLedger(tree)
        why = ledger.charge(_job(128 * MB + over / 2, 2), [0, 1])
        assert (why is not None) == refused, over
        if refused:
            assert why.startswith("over-allocates switch 'lls0'")
            assert ledger.avail[lls0] == 256 * MB  # nothing taken
        else:
            assert ledger.avail[lls0] == 256 * MB - 2 * (128 * MB + over / 2)


def test_the_ledger_refusal_names_the_lowest_vertex_id_and_what_it_already_holds():
    tree = herbein_example_topology()
    ledger = BandwidthLedger(tree)
    assert ledger.charge(_job(150 * MB, 2), [0, 2]) is None  # network: 300 of 384 MB/s
    # 100 MB/s more on node 1: lls0 holds 150 + 100 (fits), network 300 + 100 > 384
    assert ledger.charge(_job(100 * MB), [1]) == (
        "over-allocates switch 'network_switch': 400 MB/s would be charged on 384 MB/s")
    # 200 MB/s on nodes 1 and 3: lls0 350 > 256, network 700 > 384, lls1 350: the first id
    assert ledger.charge(_job(200 * MB, 2), [1, 3]) == (
        "over-allocates switch 'network_switch': 700 MB/s would be charged on 384 MB/s")
    small = BandwidthLedger(herbein_example_topology(pfs=300e6))
    assert small.charge(_job(200 * MB, 2), [0, 2]) == (
        "over-allocates pfs 'pfs': 400 MB/s would be charged on 300 MB/s")
    assert ledger.charge(_job(0.0, 4), [0, 1, 2, 3]) is None
    assert ledger.charge(_job(1e12, 1), []) is None
    assert ledger.avail[0] == 700 * MB


def test_a_state_of_running_jobs_and_its_copy():
    from types import SimpleNamespace as NS

    tree = herbein_example_topology()
    running = [NS(job=NS(id="r", bandwidth=100 * MB), allocation=[1, 2])]
    state = AllocState.of_running(tree, running)
    assert state.n_free == 2 and list(state.free) == [True, False, False, True]
    assert state.avail[tree.vertex_of["network_switch"]] == 184 * MB
    assert np.array_equal(state.base, tree.base_counts(state.free))
    # 100 MB/s: lls0 holds 100 (one more), lls1 100 (one more), network 184 (one more)
    assert state.count(100 * MB) == 1 and state.fits(1, 100 * MB)
    assert not state.fits(2, 100 * MB) and state.select(2, 100 * MB) is None
    assert list(state.select(1, 100 * MB)) == [0]
    twin = state.copy()
    twin.take([0], 50 * MB)
    assert state.n_free == 2 and state.free[0] and state.avail[0] == 800 * MB
    assert np.array_equal(state.base, tree.base_counts(state.free))
    assert twin.n_free == 1 and twin.avail[0] == 750 * MB


def test_fits_and_select_at_the_free_node_count():
    tree = herbein_example_topology()
    state = AllocState(tree, tree.fresh_avail(), np.array([True, False, True, True]))
    assert state.fits(3, 0.0) and not state.fits(4, 0.0) and state.fits(3, -1.0)
    assert state.fits(3, 64 * MB) and not state.fits(4, 1.0)
    assert state.select(4, 0.0) is None and list(state.select(3, 0.0)) == [0, 2, 3]
    assert state.count(0.0) == 3 and state.count(-1.0) == 3
    # the PFS first: 4 x 300 MB/s is beyond its 1 GB/s whatever the switches
    big = herbein_example_topology(switch=1e12, network=1e12)
    wide = AllocState(big, big.fresh_avail(), np.ones(4, dtype=bool))
    assert wide.fits(3, 300 * MB) and not wide.fits(4, 300 * MB) and wide.count(300 * MB) == 3


def test_cached_counts_follow_takes_and_gives_when_the_deepest_level_is_summed():
    import networkx as nx

    from bbopt.topology import IOTree

    # pfs -> s (unlimited) -> a, b (unlimited); pfs -> e (a compute node one level up)
    g = nx.DiGraph([("pfs", "s"), ("s", "a"), ("s", "b"), ("pfs", "e")])
    for v in ("a", "b", "e"):
        g.nodes[v]["type"] = "node"
    g.nodes["pfs"].update(type="pfs", bandwidth=300 * MB)
    tree = IOTree(g)
    state = AllocState(tree, tree.fresh_avail(), np.ones(3, dtype=bool))
    for action, nodes in (("take", [2]), ("take", [0]), ("give", [2]), ("take", [1, 2]),
                          ("give", [0, 1, 2])):
        getattr(state, action)(nodes, 100 * MB)
        assert np.array_equal(state.base, tree.base_counts(state.free)), (action, nodes)
        assert state.n_free == int(state.free.sum())
        assert state.count(100 * MB) == tree.capacity_for(state.avail, state.free, 100 * MB)
    assert state.n_free == 3 and state.avail[0] == 300 * MB and state.count(100 * MB) == 3


def test_a_bandwidth_below_one_byte_per_second_is_checked_and_counted():
    tree = herbein_example_topology(pfs=1.0)  # the PFS gives 1 B/s
    ledger = BandwidthLedger(tree)
    assert ledger.charge(_job(0.5, 3), [0, 1, 2]) == (
        "over-allocates pfs 'pfs': 1.5 B/s would be charged on 1 B/s")
    assert ledger.charge(_job(0.5, 2), [0, 2]) is None and ledger.avail[0] == 0.0
    state = AllocState(tree, tree.fresh_avail(), np.ones(4, dtype=bool))
    assert state.count(0.5) == 2 and state.fits(2, 0.5) and not state.fits(3, 0.5)


def test_cached_counts_on_a_tree_whose_deepest_level_is_limited():
    from bbopt.topology import kopanski_dragonfly_topology

    tree = kopanski_dragonfly_topology()  # unlimited groups, chassis and routers; 1.25 GB/s nodes
    state = AllocState(tree, tree.fresh_avail(), np.ones(96, dtype=bool))
    state.take(list(range(10)), 100 * MB)
    state.give([3, 4], 100 * MB)
    assert np.array_equal(state.base, tree.base_counts(state.free)) and state.n_free == 88
    # the 5 GB/s PFS holds 8 x 100 MB/s: 4.2 GB/s left
    assert state.count(100 * MB) == 42 and state.count(1 * 2**30) == 3
    assert state.count(1 * MB) == 88

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

"""The I/O tree (Herbein et al., Section 3.4): vertex order, paths, common ancestors, and what
an empty machine can ever give."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.errors import InputError
from bbopt.topology import IOTree, herbein_example_topology, kopanski_dragonfly

MB = 1e6
GB = 1e9


def _tree() -> IOTree:
    g = nx.DiGraph()
    g.add_node("pfs", type="pfs", bandwidth=1000 * MB)
    for s in ("s0", "s1"):
        g.add_node(s, type="switch", bandwidth="256 MB/s")
        g.add_edge("pfs", s)
    for n, s in (("a", "s0"), ("b", "s0"), ("c", "s1")):
        g.add_node(n, type="node")
        g.add_edge(s, n)
    return IOTree(g, name="small")


def test_nodes_are_numbered_depth_first_in_insertion_order():
    t = _tree()
    assert t.name == "small" and t.nodes == 3
    assert t.labels == ["pfs", "s0", "a", "b", "s1", "c"]
    assert [t.labels[v] for v in t.node_vertex] == ["a", "b", "c"]
    assert t.path(2) == [5, 4, 0]
    assert t.labels[t.lca(t.node_vertex[0], t.node_vertex[1])] == "s0"
    assert t.labels[t.lca(t.node_vertex[0], t.node_vertex[2])] == "pfs"
    assert t.pfs_bandwidth == 1000 * MB and t.bb_total == 0.0
    assert list(t.capacity[:6]) == [1000 * MB, 256 * MB, np.inf, np.inf, 256 * MB, np.inf]


def test_what_an_empty_machine_can_ever_give():
    t = _tree()
    # two nodes under one 256 MB/s switch: 128 MB/s each fits, a byte per second more does not
    # fit there, but one node on each switch does
    assert t.fits_empty(2, 128 * MB) and t.fits_empty(2, 256 * MB)
    assert not t.fits_empty(3, 256 * MB)
    assert t.why_never_fits(3, 200 * MB) == (
        "requests 3 nodes x 200 MB/s; even an empty machine gives at most 2 such nodes under the "
        "I/O tree (PFS 1 GB/s)")
    assert t.why_never_fits(1, 256 * MB) is None
    assert "at most 0" in t.why_never_fits(1, 257 * MB)
    assert "at most 2" in t.why_never_fits(3, 250 * MB)


def test_a_tree_needs_one_root_and_compute_nodes():
    g = nx.DiGraph()
    g.add_node("x", type="pfs")
    with pytest.raises(InputError, match="no compute node"):
        IOTree(g)
    g.add_node("y", type="node")
    with pytest.raises(InputError, match="one root"):
        IOTree(g)
    with pytest.raises(InputError, match="non-empty"):
        IOTree(nx.DiGraph())


def _greedy(tree, avail, free, n, b):
    av = avail.copy()
    got = []
    for i in range(tree.nodes):
        if not free[i]:
            continue
        path = tree.path(i)
        if all(av[v] + 1e-9 * tree.capacity[v] >= b for v in path):
            for v in path:
                av[v] -= b
            got.append(i)
            if len(got) == n:
                return got
    return None


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), which=st.sampled_from(["example", "dragonfly"]))
def test_select_is_herbeins_node_by_node_greedy(seed, which):
    rng = np.random.default_rng(seed)
    tree = (herbein_example_topology() if which == "example"
            else kopanski_dragonfly(router=2.5 * GB, chassis=4 * GB).topology)
    free = rng.random(tree.nodes) < 0.7
    avail = tree.fresh_avail()
    finite = np.isfinite(avail[: tree.n_vertices])
    avail[: tree.n_vertices][finite] *= rng.uniform(0.2, 1.0, finite.sum())
    b = float(rng.choice([64 * MB, 128 * MB, 0.5 * GB, 1 * GB]))
    n = int(rng.integers(1, tree.nodes + 1))
    got = tree.select(avail, free, n, b)
    want = _greedy(tree, avail, free, n, b)
    assert (got is None) == (want is None)
    if want is not None:
        assert list(got) == want

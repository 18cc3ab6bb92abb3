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


# --------------------------------------------------------- a hand-built tree, every fact by hand
def _mixed() -> IOTree:
    """pfs 1 GB/s -> s0 256 MB/s {a, b 100 MB/s}, s1 unlimited {c, d}, node e, BB x (40 GB,
    500 MB/s): vertices 0-8 in that order, compute nodes 0-4 = a, b, c, d, e."""
    g = nx.DiGraph()
    g.add_node("pfs", type="pfs", bandwidth=1000 * MB)
    g.add_node("s0", type="switch", bandwidth=256 * MB)
    g.add_node("a", type="node")
    g.add_node("b", type="node", bandwidth=100 * MB)
    g.add_node("s1")  # no type: a switch; no bandwidth: unlimited
    g.add_node("c", type="node")
    g.add_node("d", type="node")
    g.add_node("e", type="node")
    g.add_node("x", type="bb", capacity=40 * GB, bandwidth="500 MB/s")
    for p, c in [("pfs", "s0"), ("s0", "a"), ("s0", "b"), ("pfs", "s1"), ("s1", "c"),
                 ("s1", "d"), ("pfs", "e"), ("pfs", "x")]:
        g.add_edge(p, c)
    return IOTree(g, name="mixed")


INF = float("inf")


def test_the_arrays_of_a_tree_with_nodes_at_two_depths():
    t = _mixed()
    assert t.labels == ["pfs", "s0", "a", "b", "s1", "c", "d", "e", "x"]
    assert t.kind == ["pfs", "switch", "node", "node", "switch", "node", "node", "node", "bb"]
    assert list(t.parent) == [-1, 0, 1, 1, 0, 4, 4, 0, 0, -1]
    assert list(t.depth) == [0, 1, 2, 2, 1, 2, 2, 1, 1, 0]
    assert list(t.capacity) == [1000 * MB, 256 * MB, INF, 100 * MB, INF, INF, INF, INF,
                                500 * MB, INF]
    assert t.sentinel == t.n_vertices == 9 and t.max_depth == 2 and t.root == 0
    assert list(t.node_vertex) == [2, 3, 5, 6, 7] and t.nodes == 5
    assert list(t.bb_vertex) == [8] and list(t.bb_capacity) == [40 * GB] and t.bb_total == 40 * GB
    assert t.ancestors.tolist() == [[2, 1, 0], [3, 1, 0], [5, 4, 0], [6, 4, 0], [7, 0, 9]]
    assert t.children == [[1, 4, 7, 8], [2, 3], [], [], [5, 6], [], [], [], []]
    assert t.path(4) == [7, 0] and t.path(1) == [3, 1, 0]
    assert t.chain(3) == [(3, -1), (1, 3), (0, 1)] and t.chain(3, 0) == [(3, -1), (1, 3)]
    assert t.chain(3, 1) == [(3, -1)] and t.chain(0) == [(0, -1)]
    assert (t.lca(2, 3), t.lca(2, 5), t.lca(3, 1), t.lca(1, 3), t.lca(7, 7)) == (1, 0, 1, 1, 7)
    assert t.pfs_bandwidth == 1000 * MB and t.vertex_of["x"] == 8


def test_a_description_of_every_level_and_the_repr():
    t = _mixed()
    text = ("mixed: 5 nodes, 1 BB nodes; depth 0: 1 x pfs @ 1 GB/s; depth 1: 4 x bb/node/switch "
            "@ 256 MB/s, 500 MB/s, inf; depth 2: 4 x node @ 100 MB/s, inf")
    assert t.describe() == text and repr(t) == f"IOTree({text})"


def test_the_graph_given_out_is_a_copy():
    t = _mixed()
    g = t.graph()
    g.add_node("z", type="node")
    g.nodes["s0"]["bandwidth"] = 1.0
    assert "z" not in t.graph() and t.graph().nodes["s0"]["bandwidth"] == 256 * MB


def test_to_dict_keeps_finite_bandwidths_capacities_and_children_only():
    assert _mixed().to_dict() == {"name": "mixed", "tree": {
        "type": "pfs", "name": "pfs", "bandwidth": 1000 * MB, "children": [
            {"type": "switch", "name": "s0", "bandwidth": 256 * MB, "children": [
                {"type": "node", "name": "a"}, {"type": "node", "name": "b", "bandwidth": 1e8}]},
            {"type": "switch", "name": "s1", "children": [{"type": "node", "name": "c"},
                                                          {"type": "node", "name": "d"}]},
            {"type": "node", "name": "e"},
            {"type": "bb", "name": "x", "bandwidth": 500 * MB, "capacity": 40 * GB}]}}


def test_the_nearest_bb_is_the_fewest_hops_then_the_lowest_id():
    g = nx.DiGraph()
    for v, kind in [("pfs", "pfs"), ("A", "bb"), ("s0", "switch"), ("a", "node"), ("B", "bb"),
                    ("s1", "switch"), ("c", "node"), ("C", "bb")]:
        g.add_node(v, type=kind)
    for p, c in [("pfs", "A"), ("pfs", "s0"), ("s0", "a"), ("s0", "B"), ("pfs", "s1"),
                 ("s1", "c"), ("pfs", "C")]:
        g.add_edge(p, c)
    t = IOTree(g)
    near = {v: t.labels[t.nearest_bb(t.vertex_of[v])] for v in ("a", "c", "pfs", "s0", "B")}
    assert near == {"a": "B", "c": "A", "pfs": "A", "s0": "B", "B": "B"}
    assert t.bb_capacity.tolist() == [0.0, 0.0, 0.0]  # no capacity given: none
    assert _tree().nearest_bb(2) is None


def test_tree_refusals_name_what_is_wrong():
    with pytest.raises(InputError, match="non-empty networkx DiGraph") as caught:
        IOTree(nx.Graph([("a", "b")]))
    assert caught.value.field == "graph"
    g = nx.DiGraph()
    g.add_nodes_from("abcdef", type="node")
    with pytest.raises(InputError) as caught:
        IOTree(g)
    assert caught.value.reason == (
        "the I/O topology must be a tree with one root (found roots ['a', 'b', 'c', 'd', 'e'])")
    assert caught.value.field == "graph"
    g = nx.DiGraph([("r", "p"), ("r", "q"), ("p", "n"), ("q", "n")])  # one root, not a tree
    with pytest.raises(InputError, match=r"found roots \['r'\]"):
        IOTree(g)
    g = nx.DiGraph([("r", "n"), ("n", "core")])
    g.nodes["n"]["type"] = "node"
    with pytest.raises(InputError) as caught:
        IOTree(g)
    assert (caught.value.reason, caught.value.field) == (
        "compute node 'n' has children in the I/O tree", "type")
    g = nx.DiGraph([("r", "n")])
    g.nodes["n"].update(type="node", bandwidth="fast")
    with pytest.raises(InputError) as caught:
        IOTree(g)
    assert caught.value.field == "bandwidth of 'n'"
    with pytest.raises(InputError) as caught:
        IOTree(nx.DiGraph([("r", "s")]))
    assert (caught.value.reason, caught.value.field) == (
        "the I/O topology has no compute node (type 'node')", "type")


def test_charging_takes_and_gives_per_node_on_every_ancestor():
    t = _mixed()
    avail = t.fresh_avail()
    assert avail is not t.capacity and list(avail) == list(t.capacity)
    t.charge(avail, [0, 1, 4], 50 * MB)
    assert list(avail) == [850 * MB, 156 * MB, INF, 50 * MB, INF, INF, INF, INF, 500 * MB, INF]
    t.charge(avail, np.array([1]), 50 * MB, sign=-1.0)
    assert avail[3] == 100 * MB and avail[1] == 206 * MB and avail[0] == 900 * MB
    assert avail[t.sentinel] == INF and list(t.capacity)[0] == 1000 * MB
    before = avail.copy()
    t.charge(avail, [0], 0.0)
    t.charge(avail, [0], -5.0)
    t.charge(avail, [], 50 * MB)
    assert np.array_equal(avail, before)


def test_the_state_of_running_jobs():
    from types import SimpleNamespace as NS

    t = _mixed()
    running = [NS(job=NS(id="j", bandwidth=50 * MB), allocation=[0, 1]),
               NS(job=NS(id="k", bandwidth=0.0), allocation=(4,)),
               NS(job=NS(id="l", bandwidth=10 * MB), allocation=np.array([2]))]
    avail, free = t.state_of(running)
    assert list(free) == [False, False, False, True, False]  # (nodes, not vertices)
    assert list(avail) == [890 * MB, 156 * MB, INF, 50 * MB, INF, INF, INF, INF, 500 * MB, INF]
    avail, free = t.state_of([])
    assert list(avail) == list(t.capacity) and free.all() and free.size == 5
    with pytest.raises(InputError) as caught:
        t.state_of([NS(job=NS(id="q", bandwidth=1.0), allocation=None)])
    assert (caught.value.reason, caught.value.field) == (
        "running job q has no allocation; I/O-aware scheduling needs the nodes of running jobs",
        "allocation")


def test_free_nodes_are_summed_into_parents_only_when_the_deepest_level_is_unlimited():
    free = np.array([True, False, True])
    assert list(_tree().base_counts(free)) == [0, 1, 1, 0, 1, 1, 0]
    free = np.array([True, False, True, True, True])
    assert list(_mixed().base_counts(free)) == [0, 0, 1, 0, 0, 1, 1, 1, 0, 0]


def test_room_is_the_floor_of_free_bandwidth_plus_the_tolerance_per_node():
    t = _mixed()
    avail = t.fresh_avail()
    assert list(t.room(avail, 100 * MB)) == [10, 2, INF, 1, INF, INF, INF, INF, 5, INF]
    # s0's tolerance is 1e-9 x 256 MB/s = 0.256 B/s: 0.2 B/s short of two nodes still gives two
    avail[1] = 200 * MB - 0.2
    assert t.room(avail, 100 * MB)[1] == 2
    avail[1] = 200 * MB - 0.3
    assert t.room(avail, 100 * MB)[1] == 1
    # at twice the tolerance (the engine's), 0.5 B/s short still gives two; asked twice alike
    avail[1] = 200 * MB - 0.5
    assert t.room(avail, 100 * MB, 2e-9)[1] == 2 and t.room(avail, 100 * MB, 2e-9)[1] == 2
    assert t.room(avail, 100 * MB)[1] == 1
    avail[1] = 200 * MB - 0.6
    assert t.room(avail, 100 * MB, 2e-9)[1] == 1


def test_the_root_admits_whole_nodes_within_its_tolerance():
    t = _mixed()  # the PFS's tolerance: 1e-9 x 1 GB/s = 1 B/s
    avail = t.fresh_avail()
    assert t.root_admits(avail, 10, 100 * MB) and not t.root_admits(avail, 11, 100 * MB)
    avail[0] = 1000 * MB - 1.0
    assert t.root_admits(avail, 10, 100 * MB)
    avail[0] = 1000 * MB - 1.5
    assert not t.root_admits(avail, 10, 100 * MB) and t.root_admits(avail, 9, 100 * MB)


@pytest.mark.parametrize("per_node, count", [
    (0.0, 5), (-1.0, 5), (100 * MB, 5), (128 * MB, 4), (150 * MB, 4), (256 * MB, 3),
    (257 * MB, 3), (400 * MB, 2), (500 * MB, 2), (501 * MB, 1), (1000 * MB, 1), (1001 * MB, 0),
])
def test_how_many_nodes_the_empty_tree_gives(per_node, count):
    # a: s0 only; b: its own 100 MB/s and s0; c, d: unlimited s1; e: the PFS only
    t = _mixed()
    free = np.ones(5, dtype=bool)
    assert t.capacity_for(t.fresh_avail(), free, per_node) == count
    assert t.capacity_for(t.fresh_avail(), free, per_node, t.base_counts(free)) == count
    assert t.fits_empty(count, per_node) and not t.fits_empty(count + 1, per_node)


def test_an_unlimited_middle_level_and_limited_leaves():
    g = nx.DiGraph()
    g.add_node("pfs", type="pfs", bandwidth=1000 * MB)
    for s, kids in (("sA", ("n0", "n1")), ("sB", ("n2",))):
        g.add_node(s, type="switch")
        g.add_edge("pfs", s)
        for n in kids:
            g.add_node(n, type="node", bandwidth=300 * MB)
            g.add_edge(s, n)
    t = IOTree(g)
    free = np.ones(3, dtype=bool)
    counts = [t.capacity_for(t.fresh_avail(), free, b) for b in (200 * MB, 300 * MB, 350 * MB)]
    assert counts == [3, 3, 0]
    assert list(t.select(t.fresh_avail(), free, 2, 300 * MB)) == [0, 1]
    assert t.select(t.fresh_avail(), free, 1, 350 * MB) is None


def test_select_takes_nodes_in_index_order_where_every_ancestor_has_room():
    t = _mixed()
    free = np.ones(5, dtype=bool)
    avail = t.fresh_avail()
    assert list(t.select(avail, free, 2, 400 * MB)) == [2, 3]  # s0 too small: c and d
    assert t.select(avail, free, 3, 400 * MB) is None  # the PFS: 2.5 such nodes
    assert list(t.select(avail, free, 2, 150 * MB)) == [0, 2]  # one node under s0
    assert list(t.select(avail, free, 4, 150 * MB)) == [0, 2, 3, 4]  # b's own link too small
    assert t.select(avail, free, 5, 150 * MB) is None  # the PFS admits 6, the tree gives 4
    assert list(t.select(avail, free, 5, 100 * MB)) == [0, 1, 2, 3, 4]
    assert list(t.select(avail, free, 1, 100 * MB)) == [0]
    some = np.array([False, True, True, False, True])
    assert list(t.select(avail, some, 2, 100 * MB)) == [1, 2]
    assert list(t.select(avail, some, 3, 0.0)) == [1, 2, 4]
    assert list(t.select(avail, some, 2, -1.0)) == [1, 2]
    assert t.select(avail, some, 4, 0.0) is None
    assert list(t.select(avail, some, 3, 100 * MB, t.base_counts(some))) == [1, 2, 4]
    assert np.array_equal(avail, t.capacity)  # selecting charges nothing


def test_why_a_job_never_fits_names_the_nodes_the_empty_tree_gives():
    t = _mixed()
    assert t.why_never_fits(5, 150 * MB) == (
        "requests 5 nodes x 150 MB/s; even an empty machine gives at most 4 such nodes under the "
        "I/O tree (PFS 1 GB/s)")
    assert t.why_never_fits(4, 150 * MB) is None
    assert t.why_never_fits(6, 150 * MB) is None  # more nodes than the machine: not the tree's
    assert t.why_never_fits(5, 0.0) is None and t.why_never_fits(5, -1.0) is None
    assert t.why_never_fits(5, 100 * MB) is None


def test_finite_paths_to_the_pfs_and_between_vertices():
    t = _mixed()
    assert t.finite_path(2) == ((1, -1), (0, 1))
    assert t.finite_path(3) == ((3, -1), (1, -1), (0, 1))
    assert t.finite_path(5) == ((0, 4),) and t.finite_path(8) == ((8, -1), (0, -1))
    assert t.finite_path(2) is t.finite_path(2)  # kept
    assert t.finite_path(2, 8) == ((1, -1), (8, -1))
    assert t.finite_path(3, 2) == ((3, -1),) and t.finite_path(5, 8) == ((8, -1),)
    d = kopanski_dragonfly(router=2 * GB, chassis=3 * GB).topology
    v = {k: d.vertex_of[k] for k in ("node0", "router0.0.0", "chassis0.0", "node95",
                                     "router2.3.2", "chassis2.3")}
    assert d.finite_path(v["node0"], v["node95"]) == (
        (v["node0"], -1), (v["router0.0.0"], -1), (v["chassis0.0"], v["router0.0.0"]),
        (v["node95"], -1), (v["router2.3.2"], -1), (v["chassis2.3"], v["router2.3.2"]))


def test_the_nearest_bb_counts_hops_through_the_common_ancestor():
    # v is 3 hops below the PFS; B2 hangs from the PFS (4 hops away), B1 from s, v's grandparent
    # (also 4 hops: up to s and down two): the tie goes to the lower id, B2
    g = nx.DiGraph([("pfs", "B2"), ("pfs", "s"), ("s", "t"), ("t", "v"), ("s", "u"), ("u", "B1")])
    for b in ("B1", "B2"):
        g.nodes[b]["type"] = "bb"
    g.nodes["v"]["type"] = "node"
    t = IOTree(g)
    assert t.labels[t.nearest_bb(t.vertex_of["v"])] == "B2"
    assert t.labels[t.nearest_bb(t.vertex_of["u"])] == "B1"
    assert _mixed().nearest_bb(2) == 8  # a tree of one BB node
    assert (_mixed().lca(2, 0), _mixed().lca(0, 3), t.lca(t.vertex_of["v"], 0)) == (0, 0, 0)


def test_the_running_state_is_a_boolean_mask_and_charges_the_smallest_bandwidth():
    from types import SimpleNamespace as NS

    t = _mixed()
    avail, free = t.state_of([NS(job=NS(id="j", bandwidth=0.5), allocation=[1])])
    assert free.dtype == bool and list(free) == [True, False, True, True, True]
    assert avail[3] == 100 * MB - 0.5 and avail[1] == 256 * MB - 0.5


def test_a_tree_is_walked_from_its_root_whatever_the_insertion_order_and_named_io():
    g = nx.DiGraph([("s", "n"), ("pfs", "s")])  # the root inserted after its children
    g.nodes["n"]["type"] = "node"
    t = IOTree(g)
    assert t.labels == ["pfs", "s", "n"] and t.name == "io"
    with pytest.raises(InputError) as caught:
        IOTree(nx.DiGraph())
    assert caught.value.reason == "an I/O topology needs a non-empty networkx DiGraph"


def test_counts_below_an_unlimited_deepest_level_are_summed_once():
    t = _tree()  # two nodes under s0, one under s1, all node links unlimited
    free = np.ones(3, dtype=bool)
    assert t.capacity_for(t.fresh_avail(), free, 1 * MB) == 3
    assert list(t.select(t.fresh_avail(), free, 3, 1 * MB)) == [0, 1, 2]
    d = kopanski_dragonfly().topology  # only the node links and the PFS are limited
    assert d.capacity_for(d.fresh_avail(), np.ones(96, dtype=bool), 10 * MB) == 96
    assert d.capacity_for(d.fresh_avail(), np.ones(96, dtype=bool), 1 * GB) == 5


def test_a_bandwidth_below_one_byte_per_second_is_still_a_bandwidth():
    t = herbein_example_topology(pfs=1.0)  # the PFS gives 1 B/s: two nodes of 0.5 B/s
    free = np.ones(4, dtype=bool)
    assert t.capacity_for(t.fresh_avail(), free, 0.5) == 2
    assert t.select(t.fresh_avail(), free, 3, 0.5) is None
    assert list(t.select(t.fresh_avail(), free, 2, 0.5)) == [0, 1]
    assert t.why_never_fits(3, 0.5) == (
        "requests 3 nodes x 0.5 B/s; even an empty machine gives at most 2 such nodes under the "
        "I/O tree (PFS 1 B/s)")
    avail = t.fresh_avail()
    t.charge(avail, [0], 0.5)
    assert avail[0] == 0.5


def test_select_visits_a_node_before_its_siblings_subtrees_and_may_take_none():
    g = nx.DiGraph([("pfs", "n"), ("pfs", "s"), ("s", "m"), ("s", "k")])
    for v in ("n", "m", "k"):
        g.nodes[v]["type"] = "node"
    g.nodes["pfs"].update(type="pfs", bandwidth=1 * GB)
    t = IOTree(g)
    free = np.ones(3, dtype=bool)
    assert list(t.select(t.fresh_avail(), free, 3, 1 * MB)) == [0, 1, 2]
    none = t.select(t.fresh_avail(), free, 0, 1 * MB)
    assert none is not None and none.size == 0


def test_a_switch_with_nothing_below_and_a_tree_without_bb_keep_integer_vertex_ids():
    g = nx.DiGraph([("pfs", "empty"), ("pfs", "s"), ("s", "n"), ("s", "m")])
    for v in ("n", "m"):
        g.nodes[v].update(type="node", bandwidth=1 * GB)
    t = IOTree(g)
    assert t.bb_vertex.dtype.kind == "i" and t.bb_vertex.size == 0
    free = np.ones(2, dtype=bool)
    assert list(t.select(t.fresh_avail(), free, 2, 1 * MB)) == [0, 1]
    assert t.capacity_for(t.fresh_avail(), free, 1 * MB) == 2

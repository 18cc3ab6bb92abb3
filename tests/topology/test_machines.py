"""The papers' machines as I/O trees: CTS-1 (Herbein et al., Section 4.1) and Kopanski &
Rzadca's dragonfly (Section 4.1), their sizes, bandwidths and the place of node 0."""

from __future__ import annotations

import pytest

from bbopt.errors import InputError
from bbopt.topology import cts1, cts1_topology, kopanski_dragonfly, kopanski_dragonfly_topology

GB = 1e9
MB = 1e6


def test_cts1_is_3888_nodes_under_24_edge_switches():
    t = cts1_topology()
    assert t.name == "cts1" and t.nodes == 3888
    assert t.pfs_bandwidth == 70 * GB
    # pfs, core pool, 24 edge switches, 3,888 nodes
    assert t.n_vertices == 1 + 1 + 24 + 3888
    assert [t.labels[v] for v in t.path(0)] == ["node0", "edge0", "core", "pfs"]
    # node 162 is the first of the second scalable unit
    assert [t.labels[v] for v in t.path(162)] == ["node162", "edge1", "core", "pfs"]
    assert t.capacity[t.vertex_of["edge0"]] == 216 * GB
    assert t.capacity[t.vertex_of["core"]] == 432 * GB


def test_cts1_underprovisioning_scales_the_pfs_only():
    t = cts1_topology(0.25)
    assert t.pfs_bandwidth == 52.5 * GB and t.name == "cts1-25pct"
    assert t.capacity[t.vertex_of["edge0"]] == 216 * GB
    assert cts1_topology(0.0).name == "cts1"
    with pytest.raises(InputError, match="underprovision"):
        cts1_topology(1.0)
    with pytest.raises(InputError, match="underprovision"):
        cts1_topology(-0.01)


def test_the_dragonfly_has_96_compute_nodes_and_a_bb_node_per_chassis():
    t = kopanski_dragonfly_topology()
    assert t.name == "kopanski-dragonfly" and t.nodes == 96
    assert len(t.bb_vertex) == 12 and t.bb_total == 480 * GB
    assert t.pfs_bandwidth == 5 * GB
    node0 = t.node_vertex[0]
    assert [t.labels[v] for v in t.path(0)] == ["node0", "router0.0.0", "chassis0.0",
                                                 "group0", "pfs"]
    assert t.capacity[node0] == 1.25 * GB
    assert t.labels[t.nearest_bb(node0)] == "bb0"
    # a chassis holds eight compute nodes (its ninth slot is the BB node): node 8 is the next one's
    assert t.labels[t.nearest_bb(t.node_vertex[8])] == "bb1"


def test_the_dragonfly_uplinks_are_unbounded_unless_given():
    t = kopanski_dragonfly_topology()
    assert t.capacity[t.vertex_of["router0.0.0"]] == float("inf")
    bounded = kopanski_dragonfly_topology(router=2 * GB, chassis=3 * GB, group=4 * GB,
                                          bb_capacity=10 * GB)
    assert bounded.capacity[bounded.vertex_of["router0.0.0"]] == 2 * GB
    assert bounded.capacity[bounded.vertex_of["chassis0.0"]] == 3 * GB
    assert bounded.capacity[bounded.vertex_of["group0"]] == 4 * GB
    assert bounded.bb_total == 120 * GB


def test_papers_machines():
    p = cts1(0.3)
    tree = p.topology
    assert p.nodes == 3888 and tree.pfs_bandwidth == pytest.approx(49 * GB)
    edges = [v for v in range(tree.n_vertices) if tree.kind[v] == "edge_switch"]
    assert len(edges) == 24 and all(tree.capacity[v] == 216 * GB for v in edges)
    assert [tree.capacity[v] for v in range(tree.n_vertices)
            if tree.kind[v] == "core_switch_pool"] == [432 * GB]
    # At 30 % underprovisioning a job gets at most 49 GB/s / 18 MB/s = 2722 nodes.
    assert "2722" in tree.why_never_fits(3000, 18 * MB)
    d = kopanski_dragonfly()
    assert d.nodes == 96 and d.bb == pytest.approx(480 * GB)
    assert d.topology.bb_vertex.size == 12 and d.topology.n_vertices == 1 + 3 + 12 + 36 + 108


def test_cts1_underprovision_bounds_and_labels():
    for bad in (1.0, -0.01, 1.5):
        with pytest.raises(InputError) as caught:
            cts1_topology(bad)
        assert (caught.value.reason, caught.value.field) == (
            f"underprovision must be in [0, 1), got {bad!r}", "underprovision")
    t = cts1_topology(0.999)
    assert t.pfs_bandwidth == pytest.approx(0.07 * GB) and t.name == "cts1-100pct"
    assert cts1_topology(0.125).name == "cts1-12pct" and cts1_topology(0.3).name == "cts1-30pct"
    p = cts1()
    assert p.name == "cts1" and p.bb == 0.0 and p.nodes == 3888 and p.topology.name == "cts1"
    assert cts1(0.1).name == "cts1-10pct"
    tree = cts1_topology()
    assert tree.kind[:3] == ["pfs", "core_switch_pool", "edge_switch"]
    assert tree.labels[-1] == "node3887" and tree.labels[tree.node_vertex[-1]] == "node3887"
    assert all(tree.capacity[v] == float("inf") for v in tree.node_vertex)
    assert [tree.labels[v] for v in tree.path(3887)] == ["node3887", "edge23", "core", "pfs"]
    assert tree.bb_vertex.size == 0


def test_the_dragonfly_options_reach_every_link_and_bb_node():
    t = kopanski_dragonfly_topology(link=2 * GB, pfs=7 * GB, bb_capacity=3 * GB)
    assert t.pfs_bandwidth == 7 * GB and t.bb_total == 36 * GB
    assert {float(t.capacity[v]) for v in t.node_vertex} == {2 * GB}
    assert {float(t.capacity[v]) for v in t.bb_vertex} == {2 * GB}
    assert [t.labels[v] for v in t.bb_vertex] == [f"bb{k}" for k in range(12)]
    assert t.labels[t.node_vertex[-1]] == "node95" and t.kind[t.vertex_of["bb11"]] == "bb"
    # the BB node is the last slot of a chassis' last router
    assert [t.labels[u] for u, _ in t.chain(t.vertex_of["bb5"])] == [
            "bb5", "router1.1.2", "chassis1.1", "group1", "pfs"]
    assert [t.labels[u] for u in t.children[t.vertex_of["router1.1.2"]]] == [
        "node46", "node47", "bb5"]
    group = kopanski_dragonfly_topology(group=9 * GB)
    assert group.capacity[group.vertex_of["group2"]] == 9 * GB
    assert group.capacity[group.vertex_of["chassis2.3"]] == float("inf")
    assert {group.kind[group.vertex_of[f"group{k}"]] for k in range(3)} == {"group"}
    assert group.kind[group.vertex_of["chassis0.0"]] == "chassis"
    assert group.kind[group.vertex_of["router0.0.0"]] == "router" and group.kind[0] == "pfs"
    p = kopanski_dragonfly(pfs=6 * GB, bb_capacity=1 * GB)
    assert p.name == "kopanski-dragonfly" and p.bb == 12 * GB
    assert p.topology.pfs_bandwidth == 6 * GB and p.nodes == 96


def test_the_herbein_example_tree_takes_its_three_bandwidths():
    from bbopt.topology import herbein_example_topology

    t = herbein_example_topology(switch=1e6, network=2e6, pfs=3e6)
    assert t.name == "herbein-fig2" and t.nodes == 4
    assert t.labels == ["pfs", "network_switch", "lls0", "node0", "node1", "lls1", "node2",
                        "node3"]
    assert list(t.capacity[:8]) == [3e6, 2e6, 1e6, float("inf"), float("inf"), 1e6,
                                    float("inf"), float("inf")]
    assert t.kind[:3] == ["pfs", "switch", "switch"]
    d = herbein_example_topology()
    assert list(d.capacity[:3]) == [1e9, 384e6, 256e6]

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

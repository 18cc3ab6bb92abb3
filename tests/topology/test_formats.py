"""Reading an I/O tree from parsed data: JGF (``{"graph": ...}``) or bbopt's nested description,
chosen by the data's shape; JGF written by bbopt reads back as the same tree."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bbopt.core import GB
from bbopt.errors import InputError
from bbopt.loading import load_topology
from bbopt.topology import (
    cts1,
    from_description,
    from_jgf,
    herbein_example_topology,
    kopanski_dragonfly,
    platform_from_topology,
    to_jgf,
    topology_from_data,
)


def test_a_description_is_read_as_a_description():
    data = {"name": "x", "tree": {"type": "pfs", "bandwidth": "1 GB/s",
                                  "children": [{"type": "node", "count": 3}]}}
    t = topology_from_data(data, "site.yaml")
    assert t.name == "x" and t.nodes == 3 and t.pfs_bandwidth == 1e9


def test_jgf_is_read_as_jgf_and_round_trips():
    h = herbein_example_topology()
    t = topology_from_data(to_jgf(h), "site.json")
    assert t.nodes == 4 and t.labels == h.labels
    assert list(t.capacity) == list(h.capacity)


def test_bad_data_names_its_file():
    with pytest.raises(InputError) as caught:
        topology_from_data({"nodes": 4}, "site.yaml")
    assert caught.value.source == "site.yaml" and caught.value.field == "tree"


@pytest.mark.parametrize("make", [lambda: cts1(0.1).topology, lambda: kopanski_dragonfly().topology,
                                  herbein_example_topology])
def test_jgf_round_trip(make):
    tree = make()
    text = json.dumps(to_jgf(tree))
    back = from_jgf(json.loads(text))
    assert back.to_dict() == tree.to_dict()
    assert back.nodes == tree.nodes
    assert np.array_equal(back.capacity, tree.capacity)


def test_jgf_with_flux_style_pools_and_sub_node_resources():
    def v(i, typ, size=1, unit=""):
        return {"id": str(i), "metadata": {"type": typ, "name": f"{typ}{i}", "size": size,
                                           "unit": unit, "paths": {"containment": f"/{i}"}}}

    def e(s, t, sub="containment"):
        return {"source": str(s), "target": str(t), "metadata": {"subsystem": sub}}

    jgf = {"graph": {"nodes": [v(0, "cluster"), v(1, "pfs", 70, "GB/s"), v(2, "switch"),
                               v(3, "bandwidth", 216, "GB/s"), v(4, "node"), v(5, "node"),
                               v(6, "core")],
                     "edges": [e(0, 1), e(1, 2), e(2, 3), e(2, 4), e(2, 5), e(4, 6),
                               e(5, 4, "ibnet")]}}
    tree = from_jgf(jgf)
    assert tree.nodes == 2
    assert tree.path(0) == [3, 2, 1, 0]
    assert tree.capacity[1] == 70 * GB and tree.capacity[2] == 216 * GB


def test_yaml_description(tmp_path):
    f = tmp_path / "tree.yaml"
    f.write_text("""
name: small
tree:
  type: pfs
  bandwidth: 1 GB/s
  children:
    - {type: switch, bandwidth: 256 MB/s, count: 2, children: [{type: node, count: 2}]}
    - {type: bb, capacity: 40 GB, bandwidth: 1.25 GB/s}
""")
    tree = load_topology(f)
    assert tree.nodes == 4 and tree.bb_total == 40 * GB
    assert from_description(tree.to_dict()).to_dict() == tree.to_dict()
    p = platform_from_topology(tree)
    assert p.bb == 40 * GB and p.topology is tree


# ------------------------------------------------------------------ refusals and exact readings
def _refusal(read, *args, **kwargs) -> tuple:
    """(reason, source, JSON path, field) of the refusal of ``read(*args, **kwargs)``."""
    with pytest.raises(InputError) as caught:
        read(*args, **kwargs)
    e = caught.value
    return e.reason, e.source, e.line, e.field


def _desc(*children, **root) -> dict:
    return {"tree": {"type": "pfs", **root, "children": list(children)}}


UNITS = "b, kb, mb, gb, tb, pb, kib, mib, gib, tib, pib"


def test_a_description_refusal_names_the_default_source_and_the_tree():
    assert _refusal(from_description, [1]) == (
        "an I/O topology description needs a 'tree' mapping", "<description>", None, "tree")
    assert _refusal(from_description, {"name": "x"})[3] == "tree"
    assert _refusal(topology_from_data, [1], "p.yaml")[1] == "p.yaml"


@pytest.mark.parametrize("count", [True, False, 0, -1, 1.5, "2", None])
def test_count_must_be_a_positive_integer(count):
    assert _refusal(from_description, _desc({"type": "node", "count": count}), "p.yaml") == (
        f"count must be a positive integer, got {count!r}", "p.yaml", "$.tree.children[0]",
        "count")


def test_count_one_is_one_vertex_and_names_without_a_suffix():
    tree = from_description(_desc({"type": "node", "name": "n", "count": 1},
                                  {"type": "node", "name": "m", "count": 2}))
    assert tree.labels == ["pfs0", "n", "m0", "m1"]


def test_bandwidth_and_capacity_refusals_name_the_vertex_and_field():
    assert _refusal(from_description, _desc({"type": "node"}, bandwidth="fast"), "p.yaml") == (
        f"cannot read 'fast'; use a number with a unit among {UNITS}", "p.yaml", "$.tree",
        "bandwidth")
    assert _refusal(from_description, _desc({"type": "node", "bandwidth": 0})) == (
        "bandwidth must be positive, got 0", "<description>", "$.tree.children[0]", "bandwidth")
    assert _refusal(from_description, _desc(
        {"type": "node"}, {"type": "switch", "children": [{"type": "bb", "capacity": "lots"}]})) \
        == (f"cannot read 'lots'; use a number with a unit among {UNITS}", "<description>",
            "$.tree.children[1].children[0]", "capacity")
    assert _refusal(from_description, _desc(5)) == (
        "must be a mapping", "<description>", "$.tree.children[0]", None)


def test_labels_count_per_type_and_repeated_names_get_the_type_count():
    tree = from_description({"name": "t", "tree": {
        "type": "pfs", "children": [
            {"type": "switch", "children": [{"type": "node", "count": 2}]},
            {"type": "switch", "name": "s", "children": [{"type": "node", "name": "s"}]},
            {"type": "bb", "capacity": "1 GB"}, {"type": "storage", "capacity": 2},
            {"type": "burst_buffer", "capacity": 3}, {"type": "bb", "name": "s"}]}})
    assert tree.labels == ["pfs0", "switch0", "node0", "node1", "s", "s#2", "bb0", "storage0",
                           "burst_buffer0", "s#1"]
    assert tree.nodes == 3 and list(tree.bb_capacity) == [1e9, 2.0, 3.0, 0.0]
    assert tree.name == "t" and from_description(_desc({"type": "node"})).name == "io"


def test_capacity_is_read_on_burst_buffers_only_and_no_children_is_a_leaf():
    tree = from_description(_desc({"type": "node", "children": None},
                                  {"type": "switch", "capacity": "lots", "children": []}))
    assert tree.nodes == 1 and "capacity" not in tree.graph().nodes["switch0"]
    assert tree.graph().nodes["switch0"] == {"type": "switch", "bandwidth": float("inf")}
    assert tree.graph().nodes["pfs0"]["type"] == "pfs"


def test_the_size_limit_is_counted_before_building_at_the_vertex_that_passes_it(monkeypatch):
    import bbopt.topology.formats as formats

    # root 1 + 3 switches x (1 + 4 nodes) = 16 vertices
    doc = _desc({"type": "switch", "count": 3, "children": [{"type": "node", "count": 4}]})
    monkeypatch.setattr(formats, "MAX_VERTICES", 16)
    assert from_description(doc).n_vertices == 16
    monkeypatch.setattr(formats, "MAX_VERTICES", 15)
    assert _refusal(from_description, doc, "p.yaml") == (
        "describes more than 15 vertices", "p.yaml", "$.tree", "count")
    monkeypatch.setattr(formats, "MAX_VERTICES", 14)
    assert _refusal(from_description, doc)[2] == "$.tree.children[0]"
    monkeypatch.setattr(formats, "MAX_VERTICES", 1000)
    big = _desc({"type": "node", "count": 1001})
    assert _refusal(from_description, big)[0] == "describes more than 1,000 vertices"


def test_the_size_limit_counts_a_shared_subtree_each_time_it_is_used(monkeypatch):
    import bbopt.topology.formats as formats

    rack = {"type": "switch", "children": [{"type": "node", "count": 3}]}
    doc = _desc(rack, rack, rack)  # 1 + 3 x (1 + 3) = 13 vertices
    monkeypatch.setattr(formats, "MAX_VERTICES", 13)
    assert from_description(doc).nodes == 9
    monkeypatch.setattr(formats, "MAX_VERTICES", 12)
    assert _refusal(from_description, doc)[2] == "$.tree"


def test_the_size_limit_holds_while_building_children_the_count_cannot_see(monkeypatch):
    import bbopt.topology.formats as formats

    # (a tuple of children, possible from Python, is not counted ahead; the build stops)
    doc = {"tree": {"type": "pfs", "children": ({"type": "node", "count": 3},)}}
    monkeypatch.setattr(formats, "MAX_VERTICES", 4)
    assert from_description(doc).nodes == 3
    monkeypatch.setattr(formats, "MAX_VERTICES", 3)
    assert _refusal(from_description, doc) == (
        "describes more than 3 vertices", "<description>", "$.tree.children[0]", "count")


def test_a_platform_takes_the_trees_name_unless_given_one():
    tree = herbein_example_topology()
    assert platform_from_topology(tree).name == "herbein-fig2"
    p = platform_from_topology(tree, name="site")
    assert p.name == "site" and p.nodes == 4 and p.bb == 0.0


def test_to_jgf_writes_flux_containment_with_bandwidth_pools():
    tree = from_description({"name": "small", "tree": {
        "type": "pfs", "name": "p", "bandwidth": 1e9, "children": [
            {"type": "switch", "name": "s", "children": [
                {"type": "node", "name": "n", "bandwidth": 5e8}, {"type": "node", "name": "m"}]},
            {"type": "bb", "name": "b", "capacity": 4e10, "bandwidth": 2e9}]}})
    contains = {"subsystem": "containment", "name": {"containment": "contains"}}
    assert to_jgf(tree) == {"graph": {"directed": True, "metadata": {"name": "small"}, "nodes": [
        {"id": "0", "metadata": {"type": "pfs", "basename": "pfs", "name": "p", "id": 0,
                                 "uniq_id": 0, "rank": -1, "exclusive": False,
                                 "paths": {"containment": "/p"}, "size": 1e9, "unit": "B/s"}},
        {"id": "1", "metadata": {"type": "switch", "basename": "switch", "name": "s", "id": 0,
                                 "uniq_id": 1, "rank": -1, "exclusive": False,
                                 "paths": {"containment": "/p/s"}, "size": 1, "unit": ""}},
        {"id": "2", "metadata": {"type": "node", "basename": "node", "name": "n", "id": 0,
                                 "uniq_id": 2, "rank": -1, "exclusive": True,
                                 "paths": {"containment": "/p/s/n"}, "size": 1, "unit": ""}},
        {"id": "2.bw", "metadata": {"type": "bandwidth", "basename": "bandwidth",
                                    "name": "n.bw", "id": 2, "uniq_id": 7, "rank": -1,
                                    "exclusive": False, "size": 5e8, "unit": "B/s",
                                    "paths": {"containment": "/p/s/n/bandwidth"}}},
        {"id": "3", "metadata": {"type": "node", "basename": "node", "name": "m", "id": 1,
                                 "uniq_id": 3, "rank": -1, "exclusive": True,
                                 "paths": {"containment": "/p/s/m"}, "size": 1, "unit": ""}},
        {"id": "4", "metadata": {"type": "bb", "basename": "bb", "name": "b", "id": 0,
                                 "uniq_id": 4, "rank": -1, "exclusive": False,
                                 "paths": {"containment": "/p/b"}, "size": 2e9, "unit": "B/s",
                                 "properties": {"capacity": 4e10}}},
        {"id": "4.bw", "metadata": {"type": "bandwidth", "basename": "bandwidth",
                                    "name": "b.bw", "id": 4, "uniq_id": 9, "rank": -1,
                                    "exclusive": False, "size": 2e9, "unit": "B/s",
                                    "paths": {"containment": "/p/b/bandwidth"}}}],
        "edges": [{"source": s, "target": t, "metadata": contains} for s, t in
                  [("0", "1"), ("1", "2"), ("2", "2.bw"), ("1", "3"), ("0", "4"),
                   ("4", "4.bw")]]}}
    back = from_jgf(to_jgf(tree))
    assert back.to_dict() == tree.to_dict() and back.name == "small"


# -------------------------------------------------------------------- Flux JGF, vertex by vertex
def _v(i, kind, **meta) -> dict:
    return {"id": i, "metadata": {"type": kind, "name": f"{kind}{i}", **meta}}


def _e(s, t, **meta) -> dict:
    return {"source": s, "target": t, "metadata": {"subsystem": "containment", **meta}}


NODES = [_v("0", "pfs"), _v("1", "switch"), _v("2", "node"), _v("3", "node")]
EDGES = [_e("0", "1"), _e("1", "2"), _e("1", "3")]


def _jgf(nodes=NODES, edges=EDGES, **graph) -> dict:
    return {"graph": {"nodes": nodes, "edges": edges, **graph}}


def test_a_jgf_refusal_names_the_default_source_and_the_graph():
    for data in ({}, {"graph": {}}, {"graph": 3}, {"graph": {"edges": []}}):
        assert _refusal(from_jgf, data) == (
            "JGF needs graph.nodes and graph.edges", "<jgf>", None, "graph")
    assert _refusal(topology_from_data, {"graph": {}}, "g.json")[1] == "g.json"


def test_jgf_vertex_refusals_name_the_vertex_path():
    assert _refusal(from_jgf, _jgf(nodes={"0": 1}), "g.json") == (
        "must be a list of vertices", "g.json", "$.graph.nodes", None)
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, {"metadata": {}}])) == (
        "a vertex needs an id", "<jgf>", "$.graph.nodes[4]", None)
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, 7]))[2] == "$.graph.nodes[4]"
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, {"id": "4", "metadata": [1]}])) == (
        "must be an object", "<jgf>", "$.graph.nodes[4]", "metadata")
    assert _refusal(from_jgf, _jgf(nodes=[NODES[0], *NODES])) == (
        "vertex id '0' appears twice", "<jgf>", "$.graph.nodes[1]", "id")


def test_jgf_edge_refusals_name_the_edge_path():
    assert _refusal(from_jgf, _jgf(edges={"a": 1}), "g.json") == (
        "must be a list of edges", "g.json", "$.graph.edges", None)
    assert _refusal(from_jgf, _jgf(edges=[*EDGES, 7])) == (
        "an edge must be an object with source and target, got 7", "<jgf>", "$.graph.edges[3]",
        None)
    assert _refusal(from_jgf, _jgf(edges=[*EDGES, {"source": "0", "target": "2",
                                                   "metadata": [1]}])) == (
        "must be an object", "<jgf>", "$.graph.edges[3]", "metadata")
    for key in ("source", "target"):
        edge = _e("0", "2")
        del edge[key]
        assert _refusal(from_jgf, _jgf(edges=[*EDGES, edge])) == (
            "is missing", "<jgf>", "$.graph.edges[3]", key)
    assert _refusal(from_jgf, _jgf(edges=[*EDGES, _e("9", "2")])) == (
        "edge 9 -> 2 names an unknown vertex", "<jgf>", "$.graph.edges[3]", None)
    assert _refusal(from_jgf, _jgf(edges=[*EDGES, _e("2", "9")]))[0] == (
        "edge 2 -> 9 names an unknown vertex")
    assert _refusal(from_jgf, _jgf(edges=[*EDGES, _e("2", "2")])) == (
        "vertex 2 contains itself (a self-loop)", "<jgf>", "$.graph.edges[3]", None)
    assert _refusal(from_jgf, _jgf(edges=[*EDGES, _e("0", "3")])) == (
        "vertex 3 has a second containment parent (first in $.graph.edges[2]); containment is "
        "a tree", "<jgf>", "$.graph.edges[3]", None)


def test_jgf_needs_one_root_and_no_detached_cycle():
    assert _refusal(from_jgf, _jgf(edges=EDGES[:2])) == (
        "the containment graph must have one root, found 2", "<jgf>", "$.graph.edges", None)
    ring = [_v(str(k), "switch") for k in range(2)]
    assert _refusal(from_jgf, _jgf(nodes=ring, edges=[_e("0", "1"), _e("1", "0")]))[0] == (
        "the containment graph must have one root, found 0 (every vertex lies on a cycle)")
    loops = [_v(str(k), "switch") for k in range(4, 11)]
    cycle = [_e(str(k), str(k + 1)) for k in range(4, 10)] + [_e("10", "4")]
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *loops], edges=[*EDGES, *cycle])) == (
        "vertices 10, 4, 5, 6, 7 ... form a containment cycle, not connected to the root",
        "<jgf>", "$.graph.edges", None)
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *loops[:5]], edges=[
        *EDGES, *cycle[:4], _e("8", "4")]))[0] == (
        "vertices 4, 5, 6, 7, 8 form a containment cycle, not connected to the root")


def test_jgf_edges_of_other_subsystems_are_ignored_containment_ones_kept():
    other = [_e("3", "2", subsystem="ibnet"),
             {"source": "3", "target": "2", "metadata": {"name": {"ibnet": "wired"}}}]
    named = [{"source": "1", "target": "3", "metadata": {"name": {"containment": "contains"}}}]
    bare = [{"source": "1", "target": "3"}, {"source": "1", "target": "3", "metadata": None}]
    for edges in ([*EDGES, *other], [*EDGES[:2], *named], [*EDGES[:2], bare[0]],
                  [*EDGES[:2], bare[1]]):
        tree = from_jgf(_jgf(edges=edges))
        assert tree.labels == ["pfs0", "switch1", "node2", "node3"]
    # a containment edge named only by its subsystem's name takes part in the tree checks
    assert "second containment parent" in _refusal(from_jgf, _jgf(edges=[*EDGES, *named]))[0]


def test_jgf_rates_are_read_in_any_spelling_of_a_rate_unit():
    nodes = [_v("0", "pfs", size=2, unit="GB/s"), _v("1", "switch", size=3, unit=" Mi B / s "),
             _v("2", "node", size=1.5, unit="kB/s"), _v("3", "node", size=7, unit="GiB"),
             _v("4", "node", size=1, unit=None)]
    tree = from_jgf(_jgf(nodes=nodes, edges=[*EDGES, _e("1", "4")]))
    assert list(tree.capacity[:5]) == [2e9, 3 * 2**20, 1500.0, np.inf, np.inf]


@pytest.mark.parametrize("size", [0, -1, True, "5", float("inf"), float("nan")])
def test_a_jgf_rate_must_be_a_positive_finite_number(size):
    nodes = [_v("0", "pfs", size=size, unit="GB/s"), *NODES[1:]]
    assert _refusal(from_jgf, _jgf(nodes=nodes)) == (
        f"bandwidth pool size must be positive, got {size!r}", "<jgf>", "vertex 0", "size")


def test_a_jgf_rate_without_a_size_is_refused_and_the_smallest_is_read():
    nodes = [{"id": "0", "metadata": {"type": "pfs", "unit": "B/s"}}, *NODES[1:]]
    assert _refusal(from_jgf, _jgf(nodes=nodes))[0] == "bandwidth pool size must be positive, got 0"
    nodes = [_v("0", "pfs", size=5e-324, unit="B/s"), *NODES[1:]]
    assert from_jgf(_jgf(nodes=nodes)).pfs_bandwidth == 5e-324


def test_a_bandwidth_child_is_its_parents_pool_and_needs_a_rate():
    pool = [_v("5", "bandwidth", size=4, unit="MB/s"), _v("6", "bw", size=6, unit="MB/s")]
    tree = from_jgf(_jgf(nodes=[*NODES, *pool], edges=[*EDGES, _e("1", "5"), _e("2", "6")]))
    assert list(tree.capacity[:4]) == [np.inf, 4e6, 6e6, np.inf]
    assert tree.labels == ["pfs0", "switch1", "node2", "node3"]  # the pools are no vertices
    bad = [_v("5", "bandwidth", size=4, unit="GB")]
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *bad], edges=[*EDGES, _e("1", "5")])) == (
        "a bandwidth pool needs a rate unit such as 'GB/s'", "<jgf>", "vertex 5", "unit")
    bad = [{"id": "5", "metadata": {"type": "bw", "size": 4}}]
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *bad], edges=[*EDGES, _e("1", "5")]))[3] == \
        "unit"
    # a pool vertex's own rate is not its bandwidth (its parent's is)
    top = [_v("0", "bandwidth", size=4, unit="MB/s"), *NODES[1:]]
    assert from_jgf(_jgf(nodes=top)).capacity[0] == np.inf


def test_jgf_burst_buffer_capacity_from_properties_or_an_ssd_child():
    bbs = [_v("4", "bb", properties={"capacity": "2 GB"}), _v("5", "burst_buffer"),
           _v("6", "ssd", size=300, unit="GB"), _v("7", "storage", properties=None),
           _v("8", "ssd", size=7), _v("9", "bb", properties={"capacity": 0}),
           _v("10", "ssd", size=9)]
    edges = [*EDGES, _e("0", "4"), _e("0", "5"), _e("5", "6"), _e("0", "7"), _e("7", "8"),
             _e("0", "9"), _e("9", "10")]
    tree = from_jgf(_jgf(nodes=[*NODES, *bbs], edges=edges))
    # an ssd child's size is a number of bytes (its unit is not read); properties win
    assert list(tree.bb_capacity) == [2e9, 300.0, 7.0, 0.0]
    assert tree.n_vertices == 8  # the ssd children are no vertices
    bad = [_v("4", "bb", properties=[1])]
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *bad], edges=[*EDGES, _e("0", "4")])) == (
        "must be an object", "<jgf>", "vertex 4", "properties")


@pytest.mark.parametrize("capacity, reason", [
    (-1, "must be a finite number of bytes >= 0, got -1"),
    (-1e-300, "must be a finite number of bytes >= 0, got -1e-300"),
    (float("inf"), "must be a finite number of bytes >= 0, got inf"),
    (float("nan"), "must be a finite number of bytes >= 0, got nan"),
    ("lots", f"cannot read 'lots'; use a number with a unit among {UNITS}"),
])
def test_a_jgf_capacity_must_be_finite_bytes_from_zero(capacity, reason):
    bad = [_v("4", "bb", properties={"capacity": capacity})]
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *bad], edges=[*EDGES, _e("0", "4")]),
                    "g.json") == (reason, "g.json", "vertex 4", "capacity")


def test_jgf_children_in_uniq_id_order_then_id_then_vertex_id():
    nodes = [_v("0", "pfs"), _v("a", "node", uniq_id=3), _v("b", "node", uniq_id=1),
             _v("c", "node", id=2), _v("d", "node", uniq_id="x"), _v("e", "node", id="y")]
    edges = [_e("0", v) for v in "abcde"]
    tree = from_jgf(_jgf(nodes=nodes, edges=edges))
    # (a uniq_id or id that is no number counts as 0; ties go by vertex id)
    assert tree.labels == ["pfs0", "noded", "nodee", "nodeb", "nodec", "nodea"]
    nodes = [_v("0", "pfs"), _v("b", "node"), _v("a", "node"), _v("c", "node", uniq_id=-1)]
    tree = from_jgf(_jgf(nodes=nodes, edges=[_e("0", v) for v in "bac"]))
    assert tree.labels == ["pfs0", "nodec", "nodea", "nodeb"]


def test_jgf_deeper_children_follow_the_order_too_and_names_fall_back_to_ids():
    nodes = [{"id": "0", "metadata": {"type": "pfs"}}, _v("s", "switch", uniq_id=2),
             _v("t", "switch", uniq_id=1), _v("a", "node", uniq_id=9), _v("b", "node", uniq_id=8),
             _v("c", "core")]
    edges = [_e("0", "s"), _e("0", "t"), _e("s", "a"), _e("s", "b"), _e("t", "c")]
    tree = from_jgf(_jgf(nodes=nodes, edges=edges, metadata={"name": "g"}))
    assert tree.labels == ["0", "switcht", "corec", "switchs", "nodeb", "nodea"]
    assert tree.name == "g" and tree.kind[0] == "pfs"
    # names repeated: the vertex ids are kept as labels
    same = [_v("0", "pfs"), {"id": "1", "metadata": {"type": "node", "name": "n"}},
            {"id": "2", "metadata": {"type": "node", "name": "n"}}]
    tree = from_jgf(_jgf(nodes=same, edges=[_e("0", "1"), _e("0", "2")], metadata=None))
    assert tree.labels == ["0", "1", "2"] and tree.name == "jgf"


def test_a_compute_nodes_sub_resources_take_no_part():
    nodes = [*NODES, _v("4", "core"), _v("5", "socket"), _v("6", "core")]
    tree = from_jgf(_jgf(nodes=nodes, edges=[*EDGES, _e("2", "5"), _e("5", "4"), _e("5", "6")]))
    assert tree.n_vertices == 4 and tree.nodes == 2


def test_a_description_that_contains_itself_is_refused_by_name():
    doc = _desc()
    doc["tree"]["children"].append(doc["tree"])  # what a YAML alias cycle reads as
    assert _refusal(from_description, doc, "p.yaml") == (
        "contains itself (a YAML alias cycle)", "p.yaml", "$.tree.children[0]", None)


def test_unknown_keys_name_the_source_at_the_top_and_in_a_vertex():
    assert _refusal(from_description, {"tree": {"type": "node"}, "nmae": "x"}, "p.yaml") == (
        "unknown key; did you mean 'name'?", "p.yaml", "$", "nmae")
    assert _refusal(from_description, _desc({"type": "node", "cuont": 2}), "p.yaml")[1:] == (
        "p.yaml", "$.tree.children[0]", "cuont")


def test_a_vertex_without_type_is_a_switch_and_a_bb_without_capacity_holds_nothing():
    tree = from_description({"tree": {"children": [{"type": "node"}, {"type": "bb"}]}})
    assert tree.kind == ["switch", "node", "bb"] and tree.labels == ["switch0", "node0", "bb0"]
    assert list(tree.bb_capacity) == [0.0] and tree.graph().nodes["bb0"]["capacity"] == 0.0


def test_the_size_count_treats_bad_entries_as_one_vertex_for_their_own_refusal(monkeypatch):
    import bbopt.topology.formats as formats

    monkeypatch.setattr(formats, "MAX_VERTICES", 2)
    # a child that is no mapping and a count that is no integer count as one vertex, so that
    # their own refusal is the one given
    assert _refusal(from_description, _desc(5))[0] == "must be a mapping"
    assert _refusal(from_description, _desc({"type": "node", "count": "x"}))[0] == (
        "count must be a positive integer, got 'x'")
    # a tuple of children is not counted ahead: one vertex, the root, then the build stops
    monkeypatch.setattr(formats, "MAX_VERTICES", 1)
    doc = {"tree": {"type": "pfs", "children": ({"type": "node"},)}}
    assert _refusal(from_description, doc)[2:] == ("$.tree.children[0]", "count")


@pytest.mark.parametrize("where", ["description", "jgf"])
def test_a_refused_value_is_quoted_whole_even_with_a_colon(where):
    if where == "description":
        reason = _refusal(from_description, _desc({"type": "bb", "capacity": "1: GB"}))[0]
    else:
        bad = [_v("4", "bb", properties={"capacity": "1: GB"})]
        reason = _refusal(from_jgf, _jgf(nodes=[*NODES, *bad], edges=[*EDGES, _e("0", "4")]))[0]
    assert reason == f"cannot read '1: GB'; use a number with a unit among {UNITS}"


def test_jgf_of_a_tree_whose_bb_holds_no_capacity_attribute():
    import networkx as nx

    from bbopt.topology import IOTree

    g = nx.DiGraph([("p", "n"), ("p", "b")])
    g.nodes["n"]["type"] = "node"
    g.nodes["b"]["type"] = "bb"
    out = to_jgf(IOTree(g))
    assert out["graph"]["nodes"][2]["metadata"]["properties"] == {"capacity": 0.0}


def test_jgf_edges_are_optional_and_other_subsystems_may_come_first():
    tree = from_jgf({"graph": {"nodes": [_v("0", "node")]}})
    assert tree.nodes == 1 and tree.labels == ["node0"]
    first = [_e("3", "2", subsystem="ibnet"), *EDGES]
    assert from_jgf(_jgf(edges=first)).labels == ["pfs0", "switch1", "node2", "node3"]
    unnamed = [*EDGES[:2], {"source": "1", "target": "3", "metadata": {"name": {}}}]
    assert from_jgf(_jgf(edges=unnamed)).nodes == 2  # a name of no subsystem: containment


def test_a_jgf_burst_buffer_holds_the_total_of_its_drives():
    # a storage vertex of two drives of 7 and 9 bytes holds 16 (not the last drive's 9); a
    # drive without size holds nothing; a core under a BB node is no drive
    bbs = [_v("4", "storage"), _v("5", "ssd", size=7), _v("6", "ssd", size=9),
           _v("7", "bb"), _v("8", "ssd"), _v("9", "core", size=4), _v("10", "ssd", size=2)]
    edges = [*EDGES, _e("0", "4"), _e("4", "5"), _e("4", "6"), _e("0", "7"), _e("7", "8"),
             _e("7", "9"), _e("7", "10")]
    tree = from_jgf(_jgf(nodes=[*NODES, *bbs], edges=edges))
    assert list(tree.bb_capacity) == [16.0, 2.0]
    bare = [_v("4", "bb"), _v("5", "bb", properties={}), _v("6", "bb"), _v("7", "core", size=3)]
    edges = [*EDGES, _e("0", "4"), _e("0", "5"), _e("0", "6"), _e("6", "7")]
    assert list(from_jgf(_jgf(nodes=[*NODES, *bare], edges=edges)).bb_capacity) == [0.0] * 3


def test_a_jgf_drive_or_pool_refusal_names_the_child_vertex():
    bad = [_v("4", "bb"), _v("5", "ssd", size="lots")]
    edges = [*EDGES, _e("0", "4"), _e("4", "5")]
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *bad], edges=edges), "g.json") == (
        f"cannot read 'lots'; use a number with a unit among {UNITS}", "g.json", "vertex 5",
        "size")
    pool = [_v("5", "bandwidth", size=0, unit="GB/s")]
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *pool], edges=[*EDGES, _e("1", "5")])) == (
        "bandwidth pool size must be positive, got 0", "<jgf>", "vertex 5", "size")


def test_of_two_refused_drives_the_first_in_uniq_id_order_is_named():
    # a BB vertex's children are read in the graph's order (uniq_id, then id, then vertex id),
    # as the tree's vertices are: drive 6 (uniq_id 1) before drive 5 (uniq_id 2)
    bad = [_v("4", "bb"), _v("5", "ssd", size="heaps", uniq_id=2),
           _v("6", "ssd", size="lots", uniq_id=1)]
    edges = [*EDGES, _e("0", "4"), _e("4", "5"), _e("4", "6")]
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *bad], edges=edges)) == (
        f"cannot read 'lots'; use a number with a unit among {UNITS}", "<jgf>", "vertex 6",
        "size")
    bad[1:] = [_v("5", "ssd", size="heaps", uniq_id=1), _v("6", "ssd", size="lots", uniq_id=2)]
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *bad], edges=edges))[0] == (
        f"cannot read 'heaps'; use a number with a unit among {UNITS}")


def test_a_jgf_vertex_without_type_is_a_switch_and_without_ids_counts_as_zero():
    nodes = [{"id": "r", "metadata": {}}, _v("a", "node", uniq_id=0.5), _v("z", "node")]
    tree = from_jgf(_jgf(nodes=nodes, edges=[_e("r", "a"), _e("r", "z")]))
    assert tree.kind == ["switch", "node", "node"] and tree.labels == ["r", "nodez", "nodea"]


@pytest.mark.parametrize("lost, tail", [(5, ""), (6, " ..."), (7, " ...")])
def test_a_detached_cycle_names_five_of_its_vertices(lost, tail):
    ring = [_v(str(k), "switch") for k in range(4, 4 + lost)]
    cycle = [_e(str(k), str(k + 1)) for k in range(4, 3 + lost)] + [_e(str(3 + lost), "4")]
    names = ", ".join(sorted(str(k) for k in range(4, 4 + lost))[:5])
    assert _refusal(from_jgf, _jgf(nodes=[*NODES, *ring], edges=[*EDGES, *cycle]))[0] == (
        f"vertices {names}{tail} form a containment cycle, not connected to the root")

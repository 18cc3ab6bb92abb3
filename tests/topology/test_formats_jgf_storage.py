"""Flux JGF with near-node storage (flux-sched's rabbit layout) read as burst-buffer capacity."""

from __future__ import annotations

import json

import pytest

from bbopt.loading import load_platform

GIB = 2**30


def _graph(nested: bool, node_ssd: bool = False, chassis: int = 2, nodes: int = 3,
           ssds: int = 2) -> dict:
    """cluster -> chassis -> {ssd x ssds, storage server, compute nodes with cores}."""
    vs, es = [], []

    def add(meta, parent=None):
        vid = str(len(vs))
        vs.append({"id": vid, "metadata": meta})
        if parent is not None:
            es.append({"source": parent, "target": vid,
                       "metadata": {"subsystem": "containment"}})
        return vid

    root = add({"type": "cluster", "name": "c"})
    for k in range(chassis):
        ch = add({"type": "chassis", "id": k, "paths": {"containment": f"/c/chassis{k}"}}, root)
        server = add({"type": "rabbit" if nested else "storage_node", "name": f"r{k}"}, ch)
        add({"type": "core", "id": 0}, server)
        holder = server if nested else ch
        for _ in range(ssds):
            add({"type": "ssd", "unit": "GiB", "size": 793}, holder)
        for n in range(nodes):
            node = add({"type": "node", "name": f"n{k}{n}"}, ch)
            for c in range(2):
                add({"type": "core", "id": c}, node)
            if node_ssd:
                add({"type": "ssd", "unit": "GB", "size": 100}, node)
    return {"graph": {"nodes": vs, "edges": es}}


@pytest.mark.parametrize("nested", [False, True])
def test_rabbit_ssds_become_pooled_burst_buffer(nested, tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(_graph(nested)))
    with pytest.warns(UserWarning, match="pooled burst buffer"):
        p = load_platform(path)
    assert p.nodes == 6  # compute nodes only: the storage servers' cores are not nodes
    assert p.bb == pytest.approx(2 * 2 * 793 * GIB)
    assert len(p.topology.bb_vertex) == 2  # one pool per chassis


def test_node_local_ssds_are_reported_unused(tmp_path):
    path = tmp_path / "g.json"
    path.write_text(json.dumps(_graph(False, node_ssd=True)))
    with pytest.warns(UserWarning) as record:
        p = load_platform(path)
    messages = [str(w.message) for w in record]
    assert any("6 node-local ssd vertices" in m and "0.6 TB" in m for m in messages)
    assert p.bb == pytest.approx(4 * 793 * GIB)  # node-local drives are not BB


def test_ssd_without_byte_unit_is_an_error(tmp_path):
    g = _graph(False)
    for v in g["graph"]["nodes"]:
        if v["metadata"]["type"] == "ssd":
            v["metadata"]["unit"] = "widgets"
    path = tmp_path / "g.json"
    path.write_text(json.dumps(g))
    from bbopt.errors import InputError

    with pytest.raises(InputError, match="byte unit"):
        load_platform(path)


def _read(graph: dict) -> tuple:
    """The tree read from ``graph`` as ``g.json`` and its warnings' texts."""
    import warnings

    from bbopt.topology.formats import from_jgf

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tree = from_jgf(graph, source="g.json")
    return tree, [str(w.message) for w in caught]


@pytest.mark.parametrize("chassis, names", [
    (1, "r0"), (4, "r0, r1, r2, r3"), (5, "r0, r1, r2, r3..."),
])
def test_the_pool_warning_names_up_to_four_groups_and_their_terabytes(chassis, names):
    tree, messages = _read(_graph(True, chassis=chassis))
    tb = f"{chassis * 2 * 793 * GIB / 1e12:.3g}"
    assert messages == [f"g.json: near-node storage of {chassis} groups ({tb} TB in {names}) is "
                        "read as one pooled burst buffer: a job is not restricted to its own "
                        "chassis' storage"]
    assert list(tree.bb_capacity) == [2 * 793 * GIB] * chassis
    assert [tree.labels[v] for v in tree.bb_vertex] == [f"r{k}" for k in range(chassis)]


def test_a_chassis_pool_is_named_by_the_chassis_then_its_path_then_its_id():
    g = _graph(False, chassis=3, ssds=1)
    chassis = [v for v in g["graph"]["nodes"] if v["metadata"]["type"] == "chassis"]
    chassis[0]["metadata"]["name"] = "left"
    del chassis[2]["metadata"]["paths"]
    tree, messages = _read(g)
    third = chassis[2]["id"]
    assert [tree.labels[v] for v in tree.bb_vertex] == ["left-ssd", "chassis1-ssd",
                                                        f"{third}-ssd"]
    assert f"(2.55 TB in left, chassis1, {third})" in messages[0]
    # a storage server without drives of its own is left out; so are its cores
    assert not any(str(label).startswith("r") for label in tree.labels)
    assert tree.n_vertices == 1 + 3 * (1 + 1 + 3) and tree.nodes == 9


def test_ssd_sizes_default_to_bytes_and_to_zero():
    g = _graph(False, chassis=1, ssds=3)
    ssds = [v for v in g["graph"]["nodes"] if v["metadata"]["type"] == "ssd"]
    ssds[0]["metadata"].update(unit="", size=1000)
    ssds[1]["metadata"].update(unit=None, size=24)
    del ssds[2]["metadata"]["size"], ssds[2]["metadata"]["unit"]
    tree, messages = _read(g)
    assert list(tree.bb_capacity) == [1024.0]
    assert messages[0].startswith("g.json: near-node storage of 1 groups (1.02e-09 TB in ")


def test_a_node_local_drive_without_byte_unit_is_refused_by_name():
    from bbopt.errors import InputError

    g = _graph(False, chassis=1, node_ssd=True)
    local = [v for v in g["graph"]["nodes"] if v["metadata"]["type"] == "ssd"][-1]
    local["metadata"]["unit"] = "widgets"
    with pytest.raises(InputError) as caught:
        _read(g)
    e = caught.value
    assert (e.reason, e.source, e.line, e.field) == (
        "an ssd size needs a byte unit, got 100 'widgets'", "g.json", f"vertex {local['id']}",
        "unit")


def test_node_local_drives_alone_warn_only_about_themselves():
    g = _graph(False, chassis=2, ssds=0, node_ssd=True)
    tree, messages = _read(g)
    assert messages == ["g.json: 6 node-local ssd vertices (0.6 TB) are not used (bbopt reads "
                        "local SSDs from Platform.node_ssd)"]
    assert tree.bb_total == 0.0 and tree.nodes == 6


def _meta(g: dict, kind: str) -> list[dict]:
    return [v["metadata"] for v in g["graph"]["nodes"] if v["metadata"]["type"] == kind]


def test_terabytes_in_the_warnings_are_bytes_over_10_to_the_12():
    # 1,005,000,000,001 B is 1.005000000001 TB: three digits round it up to 1.01
    g = _graph(False, chassis=1, ssds=1, nodes=1, node_ssd=True)
    for m in _meta(g, "ssd"):
        m.update(unit="B", size=1005000000001)
    _, messages = _read(g)
    assert "(1.01 TB in chassis0)" in messages[0] and "(1.01 TB) are not used" in messages[1]
    g = _graph(False, chassis=1, ssds=1, nodes=1, node_ssd=True)
    for m in _meta(g, "ssd"):
        m.update(unit="B", size=100)
    _, messages = _read(g)
    assert "(1e-10 TB in chassis0)" in messages[0] and "(1e-10 TB) are not used" in messages[1]


def test_every_storage_server_of_a_chassis_is_read_and_a_bare_one_left_out():
    g = _graph(True, chassis=1, ssds=1)
    (server,) = [v for v in g["graph"]["nodes"] if v["metadata"]["type"] == "rabbit"]
    chassis = [v for v in g["graph"]["nodes"] if v["metadata"]["type"] == "chassis"][0]
    # a bare server (no children at all) before it, and a second server without a name after
    nodes, edges = g["graph"]["nodes"], g["graph"]["edges"]
    nodes[nodes.index(server):nodes.index(server)] = [
        {"id": "bare", "metadata": {"type": "storage_node", "name": "bare"}}]
    nodes += [{"id": "s2", "metadata": {"type": "rabbit"}},
              {"id": "d2", "metadata": {"type": "ssd", "unit": "GB", "size": 5}}]
    edges[:0] = [{"source": chassis["id"], "target": "bare"}]
    edges += [{"source": chassis["id"], "target": "s2"}, {"source": "s2", "target": "d2"}]
    tree, messages = _read(g)
    assert sorted(tree.bb_capacity) == [5e9, 793 * GIB]
    assert "bare" not in tree.labels and "in r0, s2)" in messages[0]
    # each server is the BB vertex itself (its cores dropped), not a switch above a pool
    assert [tree.labels[v] for v in tree.bb_vertex] == ["r0", "s2"]
    assert tree.n_vertices == 1 + 1 + 2 + 3


@pytest.mark.parametrize("holder", ["server", "chassis"])
def test_a_pooled_drive_without_byte_unit_is_refused_by_name(holder):
    from bbopt.errors import InputError

    g = _graph(holder == "server", chassis=1, ssds=1)
    (drive,) = [v for v in g["graph"]["nodes"] if v["metadata"]["type"] == "ssd"]
    drive["metadata"]["unit"] = "widgets"
    with pytest.raises(InputError) as caught:
        _read(g)
    e = caught.value
    assert (e.reason, e.source, e.line, e.field) == (
        "an ssd size needs a byte unit, got 793 'widgets'", "g.json", f"vertex {drive['id']}",
        "unit")

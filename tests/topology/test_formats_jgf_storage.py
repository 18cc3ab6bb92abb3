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

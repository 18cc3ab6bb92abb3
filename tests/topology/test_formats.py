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

"""Reading an I/O tree from parsed data: JGF (``{"graph": ...}``) or bbopt's nested description,
chosen by the data's shape; JGF written by bbopt reads back as the same tree."""

from __future__ import annotations

import pytest

from bbopt.errors import InputError
from bbopt.topology import herbein_example_topology, to_jgf, topology_from_data


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

"""Platform files: an unknown key is an error naming it with the nearest known key (a misspelt
``node_ssd`` must not give a platform without SSD), and ``node_ssd`` is read, as one size for
every node or one per node."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt.cli import main
from bbopt.errors import InputError
from bbopt.loading import PLATFORM_FILE_KEYS, load_platform


def _file(tmp_path, doc, suffix=".json"):
    path = tmp_path / f"p{suffix}"
    path.write_text(json.dumps(doc))
    return str(path)


@pytest.mark.parametrize("key, hint", [("node_sdd", "did you mean 'node_ssd'?"),
                                       ("nodess", "did you mean 'nodes'?"),
                                       ("bbb", "did you mean 'bb'?"),
                                       ("colour", "known: bb, name, node_ssd, nodes")])
def test_unknown_key_is_named_with_a_suggestion(tmp_path, key, hint):
    path = _file(tmp_path, {"nodes": 4, "bb": "1TB", key: 1})
    with pytest.raises(InputError) as exc:
        load_platform(path)
    assert exc.value.field == key and exc.value.source == path and hint in str(exc.value)


def test_misspelt_key_through_the_cli(tmp_path, capsys):
    path = tmp_path / "p.yaml"
    path.write_text("nodes: 10\nbb: 1TB\nnode_sdd: 1GB\n")
    assert main(["simulate", "--jobs", "10", "-p", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "node_sdd" in err and "did you mean 'node_ssd'" in err


@pytest.mark.parametrize("ssd, expect", [("1GB", (1e9,) * 3), (5e8, (5e8,) * 3),
                                         (["1GB", "2GB", 0], (1e9, 2e9, 0.0))])
def test_node_ssd_is_read(tmp_path, ssd, expect):
    p = load_platform(_file(tmp_path, {"nodes": 3, "bb": 0, "node_ssd": ssd}))
    assert p.node_ssd == expect


def test_node_ssd_of_the_wrong_length(tmp_path):
    path = _file(tmp_path, {"nodes": 3, "node_ssd": ["1GB"]})
    with pytest.raises(InputError) as exc:
        load_platform(path)
    assert exc.value.field == "node_ssd" and exc.value.source == path


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.text(min_size=1, max_size=12),
                       st.one_of(st.integers(-5, 10**6), st.text(max_size=8), st.none(),
                                 st.lists(st.integers(0, 10), max_size=4)), max_size=5))
def test_any_mapping_is_a_platform_or_an_input_error(tmp_path, doc):
    doc = {"nodes": 4, **doc}
    path = _file(tmp_path, doc)
    try:
        p = load_platform(path)
    except InputError as exc:
        assert exc.source == path
        unknown = sorted((k for k in doc if k not in PLATFORM_FILE_KEYS), key=str)
        if unknown:
            assert exc.field == unknown[0]
        return
    assert set(doc) <= PLATFORM_FILE_KEYS and p.nodes == doc["nodes"]


@pytest.mark.parametrize("spec, name, bb_nodes, proximity, tree", [
    (None, "kopanski-kth", None, False, False),
    ("kopanski", "kopanski-kth", None, False, False),
    ("kopanski:pool", "kopanski-kth", None, False, False),
    ("kopanski:named", "kopanski-kth-named", 12, False, False),
    ("kopanski:proximity", "kopanski-kth-proximity", 12, True, False),
    ("kopanski-dragonfly", "kopanski-dragonfly", None, False, True),
    ("kopanski-dragonfly:pool", "kopanski-dragonfly", None, False, True),
    ("kopanski-dragonfly:named", "kopanski-dragonfly-named", 12, False, True),
    ("kopanski-dragonfly:proximity", "kopanski-dragonfly-proximity", 12, True, True),
])
def test_kopanskis_named_platforms(spec, name, bb_nodes, proximity, tree):
    p = load_platform(spec)
    assert (p.name, p.nodes, p.bb) == (name, 96, 480e9)
    assert p.bb_nodes == (None if bb_nodes is None else (40e9,) * bb_nodes)
    assert (p.bb_proximity is not None, p.topology is not None) == (proximity, tree)
    if proximity:
        assert p.bb_proximity == load_platform("kopanski:proximity").bb_proximity


@pytest.mark.parametrize("spec, name, pfs", [("cts1", "cts1", 0.0), ("cts1:0.3", "cts1-30pct", 0.3),
                                             ("cts1:0", "cts1", 0.0)])
def test_cts1_takes_its_underprovisioning(spec, name, pfs):
    from bbopt.topology.machines import cts1

    p = load_platform(spec)
    assert (p.name, p.nodes) == (name, 3888) and p.topology is not None
    assert p == cts1(pfs)


@pytest.mark.parametrize("spec, message", [
    ("kopanski:x", "kopanski takes pool, named (BB nodes, first fit) or proximity (BB nodes, the "
                   "authors' Dragonfly placement), e.g. kopanski:named, got 'x'"),
    ("kopanski-dragonfly:x", "kopanski-dragonfly takes pool, named or proximity, got 'x'"),
    ("cts1:x", "cts1 takes an underprovisioning fraction, e.g. cts1:0.3, got 'x'"),
])
def test_a_bad_platform_argument_is_named(spec, message):
    with pytest.raises(InputError) as exc:
        load_platform(spec)
    assert (exc.value.reason, exc.value.field) == (message, "platform")


def test_an_unknown_platform_lists_the_names(tmp_path, monkeypatch):
    from bbopt.errors import UnknownNameError

    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnknownNameError) as exc:
        load_platform("nope:1")
    assert str(exc.value) == ("unknown platform (name or file) 'nope:1'; known: cts1, kopanski, "
                              "kopanski-dragonfly")


def test_a_file_named_like_a_platform_is_read_as_a_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "kopanski").write_text('{"nodes": 3, "bb": "1GB"}')
    p = load_platform("kopanski")
    assert (p.name, p.nodes, p.bb) == ("kopanski", 3, 1e9)


@pytest.mark.parametrize("doc, expect", [
    ({"nodes": 5}, ("p", 5, 0.0, None)),
    ({"nodes": 5, "bb": "2GB", "name": 7}, ("7", 5, 2e9, None)),
    ({"nodes": 2, "bb": 3e9, "name": "m", "node_ssd": "1GB"}, ("m", 2, 3e9, (1e9, 1e9))),
])
def test_a_platform_file_is_read(tmp_path, doc, expect):
    p = load_platform(_file(tmp_path, doc))
    assert (p.name, p.nodes, p.bb, p.node_ssd) == expect


@pytest.mark.parametrize("doc, reason, field", [
    ([1, 2], "must be a mapping with 'nodes' and 'bb'", None),
    ({"bb": "1GB"}, "is missing", "nodes"),
    ({"nodes": 0}, None, "nodes"),
    ({"nodes": 2, "bb": "lots"}, "cannot read 'lots'; use a number with a unit among b, kb, mb, "
                                 "gb, tb, pb, kib, mib, gib, tib, pib", "bb"),
    ({"nodes": 2, "node_ssd": "x"}, None, "node_ssd"),
    ({"nodes": 2, "node_ssd": ["1GB", "y"]}, None, "node_ssd"),
])
def test_a_bad_platform_file_names_the_file_and_field(tmp_path, doc, reason, field):
    path = _file(tmp_path, doc)
    with pytest.raises(InputError) as exc:
        load_platform(path)
    assert (exc.value.source, exc.value.field) == (path, field)
    if reason is not None:
        assert exc.value.reason == reason


def test_a_topology_file_is_a_platform_with_its_tree(tmp_path):
    from bbopt.loading import load_platform_with_topology, load_topology

    doc = {"name": "mini", "tree": {"type": "pfs", "bandwidth": "10GB/s", "children": [
        {"type": "switch", "bandwidth": "5GB/s", "children": [{"type": "node", "count": 4}]}]}}
    path = _file(tmp_path, doc)
    p = load_platform(path)
    assert p.nodes == 4 and p.topology is not None and p.topology.nodes == 4
    assert load_topology(path).nodes == 4
    q = load_platform_with_topology(path)
    assert (q.nodes, q.name, q.bb) == (p.nodes, p.name, p.bb)


def test_a_jgf_file_is_a_platform_and_a_bad_tree_names_the_file(tmp_path):
    from bbopt.loading import load_topology

    nodes = [{"id": "0", "metadata": {"type": "pfs"}},
             *({"id": str(i), "metadata": {"type": "node"}} for i in (1, 2, 3))]
    edges = [{"source": "0", "target": str(i)} for i in (1, 2, 3)]
    path = _file(tmp_path, {"graph": {"nodes": nodes, "edges": edges}})
    p = load_platform(path)
    assert p.nodes == 3 and p.topology.nodes == 3
    bad = _file(tmp_path, {"tree": 3}, suffix=".yaml")
    for read in (load_platform, load_topology):
        with pytest.raises(InputError) as exc:
            read(bad)
        assert str(exc.value) == f"{bad}, $.tree: must be a mapping"

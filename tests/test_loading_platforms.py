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

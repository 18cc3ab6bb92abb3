"""A nested I/O-tree description refuses keys it does not know, at the top and in every
vertex, naming the key and its JSON path (a misspelt ``bandwith`` would silently make a link
of infinite bandwidth)."""

from __future__ import annotations

import pytest

from bbopt.errors import InputError
from bbopt.topology.formats import VERTEX_KEYS, from_description


def _tree(**over):
    node = {"type": "node", "count": 2}
    switch = {"type": "switch", "bandwidth": "1 GB/s", "children": [node]}
    doc = {"name": "t", "tree": {"type": "pfs", "bandwidth": "2 GB/s", "children": [switch]}}
    return doc, doc["tree"], switch, node


def test_a_known_description_is_read():
    doc, *_ = _tree()
    assert from_description(doc).nodes == 2


@pytest.mark.parametrize("where, key, path, hint", [
    (0, "tre", "$", "did you mean 'tree'?"),
    (1, "bandwith", "$.tree", "did you mean 'bandwidth'?"),
    (2, "childs", "$.tree.children[0]", "did you mean 'children'?"),
    (3, "cuont", "$.tree.children[0].children[0]", "did you mean 'count'?"),
])
def test_unknown_keys_are_named_with_their_path(where, key, path, hint):
    parts = _tree()
    parts[where][key] = 1
    with pytest.raises(InputError) as exc:
        from_description(parts[0], source="t.yaml")
    assert exc.value.field == key and exc.value.line == path and hint in str(exc.value)


def test_to_dict_writes_only_known_keys():
    doc, *_ = _tree()
    tree = from_description(doc)
    out = tree.to_dict()

    def keys(v):
        yield set(v)
        for c in v.get("children", []):
            yield from keys(c)

    assert all(k <= VERTEX_KEYS for k in keys(out["tree"]))
    assert from_description(out).to_dict() == out

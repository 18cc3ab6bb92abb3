"""The errors a user gets: where an input error is located (file, line or JSON path, field) and
how each message reads; keys checked against the known ones, repeated JSON and YAML keys,
documents that contain themselves or nest too deeply."""

from __future__ import annotations

import json

import pytest
import yaml

from bbopt.errors import (
    MAX_DEPTH,
    BboptError,
    InputError,
    InvalidDecision,
    UniqueKeys,
    UnknownNameError,
    check_acyclic,
    check_keys,
    unique_key_yaml_loader,
)


@pytest.mark.parametrize("where, text", [
    ({}, "bad"),
    ({"source": "w.swf"}, "w.swf: bad"),
    ({"line": 3}, "line 3: bad"),
    ({"line": 0}, "line 0: bad"),
    ({"line": "$.jobs[2]"}, "$.jobs[2]: bad"),
    ({"field": "nodes"}, "field 'nodes': bad"),
    ({"source": "p.json", "line": 7, "field": "bb"}, "p.json, line 7, field 'bb': bad"),
    ({"source": "s.json", "line": "$.queue[0]"}, "s.json, $.queue[0]: bad"),
])
def test_an_input_error_names_its_place(where, text):
    e = InputError("bad", **where)
    assert str(e) == text
    assert (e.reason, e.source, e.line, e.field) == ("bad", where.get("source"),
                                                     where.get("line"), where.get("field"))
    assert isinstance(e, BboptError) and isinstance(e, ValueError)


def test_at_fills_only_what_is_not_known():
    e = InputError("bad", field="nodes").at(source="p.json", line=4, field="other")
    assert (str(e), e.reason, e.source, e.line, e.field) == (
        "p.json, line 4, field 'nodes': bad", "bad", "p.json", 4, "nodes")
    e = InputError("bad", source="a", line="$.x").at(source="b", line=9)
    assert (e.source, e.line, e.field) == ("a", "$.x", None)
    e = InputError("bad").at()
    assert str(e) == "bad"
    assert InputError("bad", source="a").at(field="g").field == "g"


def test_an_unknown_name_lists_the_known_ones_sorted():
    e = UnknownNameError("policy", "esay", ["fcfs", "easy"])
    assert str(e) == "unknown policy 'esay'; known: easy, fcfs"
    assert (e.kind, e.name, e.known) == ("policy", "esay", ["easy", "fcfs"])
    assert isinstance(e, KeyError) and isinstance(e, BboptError)
    assert str(UnknownNameError("backend", "x", [])) == "unknown backend 'x'; known: "


@pytest.mark.parametrize("job, time, text", [
    ("j1", 1.5, "invalid decision (t=1.5s, job j1): too big"),
    ("j1", None, "invalid decision (job j1): too big"),
    (None, 0.0, "invalid decision (t=0s): too big"),
    (None, 1e7, "invalid decision (t=1e+07s): too big"),
    (None, None, "too big"),
])
def test_an_invalid_decision_names_its_time_and_job(job, time, text):
    e = InvalidDecision("too big", job_id=job, time=time)
    assert str(e) == text and (e.job_id, e.time) == (job, time)
    assert isinstance(e, RuntimeError) and isinstance(e, BboptError)


def test_check_keys_names_the_first_unknown_key_and_the_nearest_known():
    check_keys({"nodes": 1, "node_ssd": 2}, {"nodes", "node_ssd"})  # all known: no error
    with pytest.raises(InputError) as caught:
        check_keys({"nodes": 1, "node_sdd": 2, "zz": 3}, frozenset({"nodes", "node_ssd"}),
                   source="p.yaml", line="$.platform")
    e = caught.value
    assert (e.reason, e.source, e.line, e.field) == (
        "unknown key; did you mean 'node_ssd'?", "p.yaml", "$.platform", "node_sdd")
    with pytest.raises(InputError) as caught:
        check_keys({"qqq": 1, 5: 2}, {"nodes", "bb"})
    # keys sorted as text: "5" before "qqq"; nothing near: the known keys listed
    assert (caught.value.reason, caught.value.field) == ("unknown key; known: bb, nodes", "5")


def _check_json(text, source="d.json"):
    hook = UniqueKeys()
    data = json.loads(text, object_pairs_hook=hook)
    hook.check(data, source)
    return data


def test_a_repeated_json_key_is_named_with_its_path():
    assert _check_json('{"a": 1, "b": [{"c": 2}]}') == {"a": 1, "b": [{"c": 2}]}
    with pytest.raises(InputError) as caught:
        _check_json('{"a": 1, "b": {"x": 1, "c": 1, "c": 2}}')
    e = caught.value
    assert (e.reason, e.source, e.line, e.field) == (
        "key 'c' appears twice (JSON keeps only the last)", "d.json", "$.b", "c")
    with pytest.raises(InputError) as caught:
        _check_json('{"x": [{"k": 1}, {"k": 1, "j": 0, "k": 2}]}')
    assert (caught.value.line, caught.value.field) == ("$.x[1]", "k")
    with pytest.raises(InputError) as caught:  # the first in document order
        _check_json('{"a": [{"p": 1, "p": 2}], "b": {"q": 1, "q": 2}, "q": 0, "q": 1}')
    assert (caught.value.line, caught.value.field) == ("$", "q")
    with pytest.raises(InputError) as caught:
        _check_json('{"a": [{"p": 1, "p": 2}], "b": {"q": 1, "q": 2}}')
    assert (caught.value.line, caught.value.field) == ("$.a[0]", "p")
    with pytest.raises(InputError) as caught:
        _check_json('[[0], {"s": 1}, {"r": 1, "r": 1}, {"t": 1, "t": 2}]', source=None)
    assert (caught.value.source, caught.value.line, caught.value.field) == (None, "$[2]", "r")


def test_a_repeated_yaml_key_is_refused_with_its_line_and_merges_are_allowed(monkeypatch):
    import bbopt.errors

    monkeypatch.setattr(bbopt.errors, "_YAML_LOADER", None)  # built afresh, then kept
    loader = unique_key_yaml_loader()
    assert issubclass(loader, yaml.SafeLoader)
    assert unique_key_yaml_loader() is loader
    with pytest.raises(yaml.constructor.ConstructorError) as caught:
        yaml.load("a: 1\nb:\n  c: 1\n  c: 2\n", Loader=loader)
    assert caught.value.problem == "key 'c' appears twice (YAML keeps only the last)"
    assert caught.value.problem_mark.line == 3
    text = "base: &b {x: 1, y: 2}\nother:\n  <<: *b\n  x: 3\n"
    assert yaml.load(text, Loader=loader) == {"base": {"x": 1, "y": 2},
                                              "other": {"x": 3, "y": 2}}
    with pytest.raises(yaml.constructor.ConstructorError) as caught:  # checked past the merge
        yaml.load(text + "  x: 4\n", Loader=loader)
    assert caught.value.problem == "key 'x' appears twice (YAML keeps only the last)"


def _nested(n):
    x: list = []
    for _ in range(n - 1):
        x = [x]
    return x


def test_check_acyclic_refuses_a_cycle_with_its_path_and_allows_shared_subtrees():
    d: dict = {"a": [1]}
    d["a"].append({"back": d})
    with pytest.raises(InputError) as caught:
        check_acyclic(d, "c.yaml")
    e = caught.value
    assert (e.reason, e.source, e.line) == ("contains itself (a YAML alias cycle)", "c.yaml",
                                            "$.a[1].back")
    shared = {"x": [1, 2]}
    check_acyclic({"a": shared, "b": shared, "c": [shared, shared]}, "s.yaml")
    check_acyclic(5, "n.yaml")
    # a shared subtree met first does not end the walk before a later cycle
    c: dict = {}
    c["cyc"] = [c]
    c["s1"] = shared
    c["s2"] = shared
    with pytest.raises(InputError) as caught:
        check_acyclic(c, "c.yaml")
    assert caught.value.line == "$.cyc[0]"


def test_check_acyclic_walks_shared_aliases_once():
    a: list = [1]
    for _ in range(60):  # 2**60 paths, 61 containers
        a = [a, a]
    check_acyclic({"doc": a}, "aliases.yaml")


def test_check_acyclic_nesting_at_and_past_the_bound():
    assert MAX_DEPTH == 200
    check_acyclic(_nested(MAX_DEPTH), "ok.json")
    check_acyclic({"a": _nested(MAX_DEPTH - 1), "b": _nested(MAX_DEPTH - 1),
                   "c": [_nested(MAX_DEPTH - 2)] * 3}, "wide.json")  # siblings do not add up
    # the depth goes back to the branch point after a sibling is left: "x" is walked first
    with pytest.raises(InputError) as caught:
        check_acyclic({"a": {"y": _nested(MAX_DEPTH - 1), "x": []}}, "branch.json")
    assert caught.value.line == "$.a.y" + "[0]" * (MAX_DEPTH - 2)
    check_acyclic({"a": {"y": _nested(MAX_DEPTH - 2), "x": []}}, "branch.json")
    with pytest.raises(InputError) as caught:
        check_acyclic({"k": _nested(MAX_DEPTH)}, "deep.json")
    e = caught.value
    assert e.reason == "nested deeper than 200 levels" and e.source == "deep.json"
    assert e.line == "$.k" + "[0]" * (MAX_DEPTH - 1)

"""Two silent wrong answers of the readers: a JSON object that repeats a key (Python keeps the
last value) is an error naming the key and its JSON path, in decide states, Batsim workloads
and JSON documents (platforms, shares, specs); a UTF-8 byte-order mark is no part of a
document: SWF (plain and gzipped), Batsim, YAML/JSON documents and states with one read as
without."""

from __future__ import annotations

import gzip
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.cli import main
from bbopt.errors import InputError, UniqueKeys
from bbopt.loading import load_platform
from bbopt.schema import loads_state
from bbopt.units import read_document
from bbopt.workloads.batsim import read_batsim
from bbopt.workloads.swf import read_swf

BOM = b"\xef\xbb\xbf"
STATE = ('{"time": 5, "platform": {"nodes": 4, "bb": 0}, "running": [], '
         '"queue": [{"id": "a", "walltime": 10, "nodes": 1}, '
         '{"id": "b", "walltime": 10, "nodes": 2}]}')


@pytest.mark.parametrize("old, new, key, path", [
    ('"time": 5,', '"time": 5, "time": 7,', "time", "$"),
    ('"nodes": 4,', '"nodes": 4, "nodes": 400,', "nodes", "$.platform"),
    ('"id": "b", "walltime": 10,', '"id": "b", "walltime": 10, "walltime": 1,', "walltime",
     "$.queue[1]"),
])
def test_a_state_repeating_a_key_names_it(old, new, key, path):
    with pytest.raises(InputError) as exc:
        loads_state(STATE.replace(old, new), "s.json")
    assert (exc.value.field, exc.value.line, exc.value.source) == (key, path, "s.json")
    assert "appears twice" in str(exc.value)


def test_the_cli_refuses_a_repeated_key(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(STATE.replace('"time": 5,', '"time": 5, "time": 7,'))
    assert main(["decide", str(path)]) == 2
    err = capsys.readouterr().err
    assert "'time'" in err and "appears twice" in err


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=4),
                           lambda c: st.lists(c, max_size=3)
                           | st.dictionaries(st.text(max_size=3), c, max_size=3), max_leaves=12)


def _dicts(x):
    if isinstance(x, dict):
        yield x
        for v in x.values():
            yield from _dicts(v)
    elif isinstance(x, list):
        for v in x:
            yield from _dicts(v)


def _dump_repeating(x, target, key) -> str:
    """JSON text of ``x`` in which object ``target`` has ``key`` once more, first."""
    if isinstance(x, dict):
        items = [f"{json.dumps(k)}: {_dump_repeating(v, target, key)}" for k, v in x.items()]
        if x is target:
            items.insert(0, f"{json.dumps(key)}: 0")
        return "{" + ", ".join(items) + "}"
    if isinstance(x, list):
        return "[" + ", ".join(_dump_repeating(v, target, key) for v in x) + "]"
    return json.dumps(x)


@settings(max_examples=150, deadline=None)
@given(json_values, st.data())
def test_unique_keys_finds_exactly_the_repeated_key(doc, data):
    hook = UniqueKeys()
    hook.check(json.loads(json.dumps(doc), object_pairs_hook=hook))  # no repeat: no error
    candidates = [d for d in _dicts(doc) if d]
    if not candidates:
        return
    target = data.draw(st.sampled_from(candidates))
    key = data.draw(st.sampled_from(sorted(target)))
    hook = UniqueKeys()
    with pytest.raises(InputError) as exc:
        hook.check(json.loads(_dump_repeating(doc, target, key), object_pairs_hook=hook),
                   "<doc>")
    assert exc.value.source == "<doc>" and "appears twice" in str(exc.value)
    # the first object in document order that repeats a key is named (another one may also)
    assert isinstance(exc.value.field, str)


def test_batsim_and_json_documents_refuse_repeated_keys(tmp_path):
    bat = tmp_path / "w.json"
    bat.write_text('{"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 1, "res": 2, '
                   '"walltime": 10, "profile": "p"}], "profiles": {"p": {"type": "delay", '
                   '"delay": 5}}}')
    with pytest.raises(InputError) as exc:
        read_batsim(bat)
    assert (exc.value.field, exc.value.line) == ("res", "$.jobs[0]")
    plat = tmp_path / "p.json"
    plat.write_text('{"nodes": 4, "bb": "1TB", "nodes": 400}')
    with pytest.raises(InputError) as exc:
        load_platform(str(plat))
    assert (exc.value.field, exc.value.source) == ("nodes", str(plat))


SWF = ("; MaxNodes: 8\n1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1\n"
       "2 5 0 50 2 -1 -1 2 100 -1 1 2 1 -1 1 -1 -1 -1\n")


def _same(a, b):
    assert [(j.id, j.submit, j.walltime, j.nodes) for j in a] == \
        [(j.id, j.submit, j.walltime, j.nodes) for j in b]


@pytest.mark.parametrize("text", [SWF, SWF.split("\n", 1)[1]])  # header first, data first
@pytest.mark.parametrize("gz", [False, True])
def test_swf_with_a_byte_order_mark_reads_as_without(tmp_path, text, gz):
    plain, marked = tmp_path / "a.swf", tmp_path / "b.swf"
    data = text.encode()
    if gz:
        plain, marked = plain.with_suffix(".swf.gz"), marked.with_suffix(".swf.gz")
        plain.write_bytes(gzip.compress(data))
        marked.write_bytes(gzip.compress(BOM + data))
    else:
        plain.write_bytes(data)
        marked.write_bytes(BOM + data)
    a, b = read_swf(plain), read_swf(marked)
    _same(a.jobs, b.jobs)
    assert a.header == b.header and len(b.jobs) == 2


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(1, 10**5), st.integers(1, 64)),
                min_size=1, max_size=20))
def test_any_swf_reads_the_same_with_a_byte_order_mark(tmp_path_factory, rows):
    d = tmp_path_factory.mktemp("bom")
    text = "".join(f"{k + 1} {s} 0 {w} {n} -1 -1 {n} {w} -1 1 1 1 -1 1 -1 -1 -1\n"
                   for k, (s, w, n) in enumerate(rows))
    (d / "a.swf").write_text(text)
    (d / "b.swf").write_bytes(BOM + text.encode())
    _same(read_swf(d / "a.swf").jobs, read_swf(d / "b.swf").jobs)


def test_batsim_documents_and_states_with_a_byte_order_mark(tmp_path):
    bat = tmp_path / "w.json"
    bat.write_bytes(BOM + b'{"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 1, '
                    b'"walltime": 10, "profile": "p"}], "profiles": {"p": {"type": "delay", '
                    b'"delay": 5}}}')
    assert read_batsim(bat).nb_res == 4
    for suffix in (".yaml", ".json"):
        doc = tmp_path / f"p{suffix}"
        doc.write_bytes(BOM + b'{"nodes": 4, "bb": 0}')
        assert read_document(doc) == {"nodes": 4, "bb": 0}
    assert loads_state(BOM + STATE.encode()).time == 5
    assert loads_state("\ufeff" + STATE).time == 5


def test_simulate_reads_a_marked_trace(tmp_path, capsys):
    path = tmp_path / "t.swf"
    path.write_bytes(BOM + SWF.encode())
    assert main(["simulate", "-w", str(path), "--no-progress"]) == 0
    assert "jobs" in capsys.readouterr().out


def test_yaml_documents_refuse_repeated_keys_but_allow_merges(tmp_path):
    dup = tmp_path / "p.yaml"
    dup.write_text("nodes: 4\nbb: 1TB\nnodes: 400\n")
    with pytest.raises(InputError) as exc:
        load_platform(str(dup))
    assert "'nodes' appears twice" in str(exc.value) and "line 3" in str(exc.value)
    merged = tmp_path / "m.yaml"
    merged.write_text("a: &x {n: 1, m: 2}\nb:\n  <<: *x\n  n: 3\n")
    assert read_document(merged) == {"a": {"n": 1, "m": 2}, "b": {"n": 3, "m": 2}}

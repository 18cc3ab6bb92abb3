"""Fuzzing the readers: arbitrary bytes and mutations of valid files never raise anything but
``InputError``, never hang (a deadline per example), and never return jobs that differ from what
the valid lines say.

For SWF, a small reference reader written for clarity, not speed (every line split, every field
through ``float``) states what the default options must give; the real reader, with its numpy fast
path, must agree with it on every mutated file: the same error-or-not, the same jobs.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bbopt.api import decide
from bbopt.errors import InputError
from bbopt.schema import loads_state, state_to_dict
from bbopt.workloads.batsim import read_batsim
from bbopt.workloads.swf import MAX_VALUE, read_swf

FUZZ = settings(max_examples=120, deadline=5000,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

TRICKY = ["nan", "inf", "-inf", "1e30", "-1", "0", "1-2", "0x10", "abc", "1.5", "-0", "1e16",
          "+3", ".5", "5.", "1e", "--1", "1_0", "٣", "\x00", "99999999999999999999", "2e15"]


def _write(data: bytes, suffix: str) -> Path:
    fd, name = tempfile.mkstemp(suffix=suffix)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return Path(name)


def _lines(text: str) -> list[str]:
    """Lines as a text-mode file gives them (universal newlines; str.splitlines would also
    break at form feeds and record separators, which are mere whitespace inside a line)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _intstr(x: float) -> str:
    return str(int(x)) if x == int(x) else repr(float(x))


def reference_swf(text: str) -> list[tuple] | None:
    """The jobs the default options must give, as tuples, or ``None`` if the file is invalid.
    Only files whose records all have 18 fields are judged (other widths switch BB columns)."""
    rows = []
    for lineno, line in enumerate(_lines(text), 1):
        s = line.strip()
        if not s or s[0] == ";":
            continue
        rows.append((lineno, s.split()))
    if not rows:
        return None
    if any(len(t) != 18 for _, t in rows):
        return None
    jobs, ids = [], set()
    for lineno, toks in rows:
        try:
            f = [float(x) for x in toks]
        except ValueError:
            return None
        # (the used memory, field 7, sizes a job's checkpoint image: checked like the others)
        for c in (0, 1, 3, 4, 6, 7, 8, 11, 12):
            if not math.isfinite(f[c]) or abs(f[c]) > MAX_VALUE:
                return None
        if f[1] < 0:
            return None
        procs = f[7] if f[7] > 0 else f[4]
        if procs <= 0 or f[3] <= 0:
            continue  # skipped, and reported
        job_id = _intstr(f[0]) if f[0] >= 0 else str(lineno)
        if job_id in ids:
            return None
        ids.add(job_id)
        wall = f[8] if f[8] > 0 else max(f[3], 1.0)
        user = _intstr(f[11]) if f[11] >= 0 else None
        jobs.append((job_id, f[1], wall, f[3], math.ceil(max(procs, 1)), user))
    return jobs or None


def _swf_line(k, submit, run, procs, wall, user):
    return f"{k} {submit} 0 {run} {procs} -1 -1 {procs} {wall} -1 1 {user} 1 -1 -1 -1 -1 -1"


valid_swf = st.lists(
    st.tuples(st.integers(0, 10**6), st.integers(0, 10**5), st.integers(1, 96),
              st.integers(-1, 10**5), st.integers(-1, 50)),
    min_size=1, max_size=8,
).map(lambda rows: "; MaxNodes: 96\n" + "\n".join(
    _swf_line(k + 1, *r) for k, r in enumerate(rows)) + "\n")


@st.composite
def mutated_swf(draw) -> str:
    lines = draw(valid_swf).split("\n")
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.integers(1, max(1, len(lines) - 2)))
        toks = lines[k].split()
        op = draw(st.sampled_from(["delete", "insert", "replace", "join", "dup", "swap",
                                   "chars"]))
        if op == "delete" and toks:
            del toks[draw(st.integers(0, len(toks) - 1))]
            lines[k] = " ".join(toks)
        elif op == "insert":
            toks.insert(draw(st.integers(0, len(toks))), draw(st.sampled_from(TRICKY)))
            lines[k] = " ".join(toks)
        elif op == "replace" and toks:
            toks[draw(st.integers(0, len(toks) - 1))] = draw(
                st.sampled_from(TRICKY) | st.text(min_size=1, max_size=4))
            lines[k] = " ".join(toks)
        elif op == "join" and k + 1 < len(lines):
            lines[k:k + 2] = [lines[k] + " " + lines[k + 1]]
        elif op == "dup":
            lines.insert(k, lines[k])
        elif op == "swap" and k + 1 < len(lines):
            lines[k], lines[k + 1] = lines[k + 1], lines[k]
        elif op == "chars" and lines[k]:
            i = draw(st.integers(0, len(lines[k]) - 1))
            lines[k] = lines[k][:i] + draw(st.text(max_size=3)) + lines[k][i + 1:]
    return "\n".join(lines)


@FUZZ
@given(st.binary(max_size=3000))
def test_swf_arbitrary_bytes_only_input_errors(data):
    path = _write(data, ".swf")
    try:
        read_swf(path)
    except InputError:
        pass
    finally:
        path.unlink()


@FUZZ
@given(mutated_swf())
# (CI's seed on 6ddf713: a NaN used memory, which the reader refuses naming the field)
@example("; MaxNodes: 96\n1 0 0 0 1 -1 nan 1 0 -1 1 0 1 -1 -1 -1 -1 -1\n"
         "8 0 0 1 1 -1 -1 1 0 -1 1 0 1 -1 -1 -1 -1 -1\n")
def test_swf_mutations_agree_with_the_reference(text):
    path = _write(text.encode("utf-8", "surrogatepass"), ".swf")
    try:
        try:
            got = read_swf(path)
        except InputError:
            got = None
        want = reference_swf(text.encode("utf-8", "surrogatepass").decode("utf-8", "replace"))
        decoded = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        rows = [s for s in _lines(decoded) if s.strip() and not s.strip().startswith(";")]
        if rows and all(len(s.split()) == 18 for s in rows):
            if want is None:
                assert got is None, "the reader accepted a file the reference refuses"
            else:
                assert got is not None, "the reader refused a valid file"
                jobs = [(j.id, j.submit, j.walltime, j.runtime, j.nodes, j.user)
                        for j in got.jobs]
                assert jobs == want
        elif rows and len({len(s.split()) for s in rows}) > 1:
            assert got is None, "records of different widths must be refused"
    finally:
        path.unlink()


def test_reference_agrees_on_a_plain_file():
    text = "\n".join(_swf_line(k, 10 * k, 100, 4, 200, 3) for k in range(1, 4))
    path = _write(text.encode(), ".swf")
    try:
        assert [j.id for j in read_swf(path).jobs] == [j[0] for j in reference_swf(text)]
    finally:
        path.unlink()


# ------------------------------------------------------------------ JSON
VALID_STATE = {
    "version": 1, "time": 100.0,
    "platform": {"nodes": 4, "bb": 1e10, "name": "c", "node_ssd": None, "topology": None},
    "running": [{"job": {"id": "r1", "walltime": 100, "nodes": 2, "bb": 2e9, "submit": 0},
                 "start": 50, "allocation": [0, 1]}],
    "queue": [{"id": "q1", "walltime": 50, "nodes": 1, "submit": 20, "bb": 1e9},
              {"id": "q2", "walltime": 80, "nodes": 2, "submit": 30}],
    "memory": {},
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**6) | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=6)


def _paths(x, prefix=()):
    yield prefix
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _paths(v, (*prefix, i))


@st.composite
def mutated_state(draw) -> dict:
    doc = json.loads(json.dumps(VALID_STATE))
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(doc) if p]
        path = draw(st.sampled_from(paths))
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        op = draw(st.sampled_from(["set", "delete", "add"]))
        if op == "set":
            parent[path[-1]] = draw(json_values)
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=6))] = draw(json_values)
        else:
            parent.append(draw(json_values))
    return doc


@FUZZ
@given(st.binary(max_size=2000))
def test_state_arbitrary_bytes_only_input_errors(data):
    with contextlib.suppress(InputError):
        loads_state(data, "s.json")


@FUZZ
@given(mutated_state())
def test_state_mutations_only_input_errors_and_accepted_states_are_possible(doc):
    try:
        state = loads_state(json.dumps(doc), "s.json")
    except InputError:
        return
    # accepted: what was read is what the document says, and a policy can decide on it
    back = state_to_dict(state)
    assert [j["id"] for j in back["queue"]] == [str(j["id"]) for j in doc.get("queue", [])]
    assert back["time"] == doc["time"]
    assert back["platform"]["nodes"] == doc["platform"]["nodes"]
    used = sum(r.job.nodes for r in state.running)
    assert used <= state.platform.nodes
    assert all(j.submit <= state.time for j in state.queue)
    decision = decide(state, "fcfs-bb")
    ids = {j.id for j in state.queue}
    assert set(decision.started_ids) <= ids


@FUZZ
@given(st.binary(max_size=2000))
def test_batsim_arbitrary_bytes_only_input_errors(data):
    path = _write(data, ".json")
    try:
        read_batsim(path)
    except InputError:
        pass
    finally:
        path.unlink()

"""What determines a sweep's run, as the driver and the workers prepare it: the workload (read
or generated, cut to its first jobs, transformed with the run seed + k, split), its content hash,
the platform (named, from a file, inline, with local SSDs, a BB sized from a workload) and what
identifies it in the run's key, and the entitlements a run is measured against."""

from __future__ import annotations

import json

import pytest

from bbopt.analysis.store import canonical, file_sha256, jobs_sha256
from bbopt.analysis.sweep_inputs import (
    _file_sha,
    _is_named_platform,
    _measured_shares,
    _part,
    _shares,
    _sized_bb,
    _workload,
    build_platform,
    platform_fingerprint,
    resolve_platform,
    split_parts,
    workload_seed,
)
from bbopt.analysis.sweep_spec import parse_spec
from bbopt.core import GB, Platform
from bbopt.errors import InputError
from bbopt.workloads.generators.bbsched import bb_capacity_for_demand
from bbopt.workloads.generators.catalog import apply

GEN = {"name": "kth-like", "n_jobs": 30, "nodes": 16}


def _swf(path, nodes=2, n=6):
    lines = ["; MaxNodes: 16"]
    for k in range(n):
        lines.append(f"{k + 1} {k * 100} 0 {50 + k} {nodes} -1 -1 {nodes} 400 -1 1 1 1 -1 1 "
                     "-1 -1 -1")
    path.write_text("\n".join(lines) + "\n")
    return path


# --- workloads ------------------------------------------------------------------------------

def test_a_generated_workload_draws_with_the_run_seed_unless_it_fixes_its_own():
    jobs, sha = _workload(canonical({"generator": GEN}), 3)
    assert list(jobs) == apply("kth-like", None, 3, n_jobs=30, nodes=16)
    assert sha == jobs_sha256(jobs)
    fixed = canonical({"generator": {**GEN, "seed": 7}})
    assert _workload(fixed, 3)[0] == _workload(fixed, 4)[0] == tuple(
        apply("kth-like", None, 7, n_jobs=30, nodes=16))
    first, _ = _workload(canonical({"generator": GEN, "first": 4}), 3)
    assert first == jobs[:4]


def test_the_kth_transform_draws_with_the_run_seed_plus_k_unless_it_fixes_its_own():
    base = apply("kth-like", None, 5, n_jobs=30, nodes=16)
    spec = {"generator": GEN, "transforms": [{"name": "max-nodes", "nodes": 8},
                                             {"name": "lognormal-bb"}]}
    jobs, _ = _workload(canonical(spec), 5)
    cut = apply("max-nodes", base, 5, nodes=8)
    assert list(jobs) == apply("lognormal-bb", cut, 6)
    assert list(jobs) != apply("lognormal-bb", cut, 5)
    spec["transforms"][1]["seed"] = 11
    assert list(_workload(canonical(spec), 5)[0]) == apply("lognormal-bb", cut, 11)
    # the cut to the first jobs comes before the transforms
    spec = {"generator": GEN, "first": 10, "transforms": [{"name": "lognormal-bb"}]}
    assert list(_workload(canonical(spec), 5)[0]) == apply("lognormal-bb", base[:10], 5)


def test_a_file_workload_keeps_its_first_jobs_and_its_bb_rule(tmp_path):
    path = str(_swf(tmp_path / "a.swf"))
    jobs, sha = _workload(canonical({"file": path}), 0)
    assert [j.id for j in jobs] == ["1", "2", "3", "4", "5", "6"]
    assert all(j.bb == 0 for j in jobs)  # bb: none by default, the file's values
    assert sha == jobs_sha256(jobs)
    first, _ = _workload(canonical({"file": path, "first": 2}), 0)
    assert [j.id for j in first] == ["1", "2"]
    drawn, _ = _workload(canonical({"file": path, "bb": "lognormal"}), 0)
    again, _ = _workload(canonical({"file": path, "bb": "lognormal"}), 1)
    assert all(j.bb > 0 for j in drawn) and drawn != again  # drawn with the run seed
    read, _ = _workload(canonical({"file": path, "reader": {"n_jobs": 3}}), 0)
    assert len(read) == 3


def test_parts_are_the_split_of_the_prepared_workload():
    spec = canonical({"generator": GEN, "split": {"parts": 3}})
    whole, _ = _workload(spec, 2)
    parts = split_parts(spec, whole)
    assert len(parts) == 3 and sum(len(p) for p in parts) == len(whole) == 30
    assert [_part(spec, 2, k) for k in range(3)] == list(parts)
    assert _part(spec, 2, None) == whole
    ids = [j.id for p in parts for j in p]
    assert ids == [j.id for j in whole]
    # a length cuts by time: parts of one hour each
    hourly = canonical({"generator": GEN, "split": {"parts": 2, "length": 3600.0}})
    one = split_parts(hourly, whole)
    assert len(one) == 2
    assert all(max(j.submit for j in p) - min(j.submit for j in p) < 3600.0 for p in one)


@pytest.mark.parametrize("spec, seed, expected", [
    ({}, 4, 4), ({"seed": None}, 4, 4), ({"seed": 0}, 4, 0), ({"seed": 9}, 4, 9)])
def test_a_workloads_own_seed_wins_over_the_runs(spec, seed, expected):
    assert workload_seed(spec, seed) == expected


# --- platforms ------------------------------------------------------------------------------

def test_a_platform_is_built_from_a_name_a_file_or_a_mapping(tmp_path):
    assert build_platform(json.dumps("kopanski")) == Platform.kopanski()
    path = tmp_path / "m.json"
    path.write_text('{"nodes": 6, "bb": "3GB", "name": "m"}')
    assert build_platform(json.dumps({"file": str(path)})) == Platform(nodes=6, bb=3e9, name="m")
    assert build_platform(json.dumps({"nodes": 4})) == Platform(nodes=4, bb=0.0,
                                                                 name="platform")
    assert build_platform(json.dumps({"nodes": 4, "bb": "2GB", "name": "n"})) == Platform(
        nodes=4, bb=2e9, name="n")


def test_a_platform_name_is_loaded_by_that_name():
    from bbopt.loading import load_platform

    cts1 = build_platform(json.dumps("cts1:0.3"))
    assert cts1 == load_platform("cts1:0.3") and cts1 != Platform.kopanski()


@pytest.mark.parametrize("value, field", [
    ({"nodes": 2, "bb": "lots"}, "bb"),
    ({"nodes": 2, "ssd": {"small": "lots"}}, "ssd"),
    ({"nodes": 2, "ssd": {"large": "lots"}}, "ssd"),
])
def test_an_unreadable_size_names_its_field(value, field):
    with pytest.raises(InputError) as err:
        build_platform(json.dumps(value))
    assert err.value.field == field and err.value.reason.startswith("cannot read 'lots'")


def test_local_ssds_are_small_on_the_first_half_and_large_on_the_rest():
    p = build_platform(json.dumps({"nodes": 5, "bb": 1, "ssd": {"small": "1GB"}}))
    assert p.node_ssd == (1e9, 1e9, 256 * GB, 256 * GB, 256 * GB)
    assert p.name == "platform" and p.bb == 1.0 and p.nodes == 5
    p = build_platform(json.dumps({"nodes": 4, "ssd": {"large": "2GB"}, "name": "t"}))
    assert p.node_ssd == (128 * GB, 128 * GB, 2e9, 2e9) and p.name == "t"
    assert build_platform(json.dumps({"nodes": 4, "ssd": {}})).node_ssd is None


def test_a_named_platform_is_identified_by_its_name_and_sizes():
    spec_json, ident = platform_fingerprint("kopanski", __import__("pathlib").Path("."))
    p = Platform.kopanski()
    assert spec_json == canonical("kopanski")
    assert ident == {"nodes": p.nodes, "bb": p.bb, "node_ssd": None, "spec": "kopanski"}


def test_a_platform_file_is_identified_by_its_content_not_its_place(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    a = tmp_path / "a" / "m.json"
    a.write_text('{"nodes": 6, "bb": "3GB", "name": "m"}')
    spec_json, ident = platform_fingerprint("m.json", tmp_path / "a")  # beside the spec
    assert json.loads(spec_json) == {"file": str(a.resolve())}
    assert ident == {"nodes": 6, "bb": 3e9, "node_ssd": None, "spec": {},
                     "file_sha256": file_sha256(a)}
    b = tmp_path / "b.json"
    b.write_text('{"nodes": 6, "bb": "3GB", "name": "m"}')
    monkeypatch.chdir(tmp_path)  # relative to where bbopt runs
    spec_b, ident_b = platform_fingerprint("b.json", tmp_path / "a")
    assert json.loads(spec_b) == {"file": str(b.resolve())} and ident_b == ident
    # the same sizes in another file (another name in it): another platform
    b.write_text('{"nodes": 6, "bb": "3GB", "name": "n"}')
    assert platform_fingerprint("b.json", tmp_path)[1]["file_sha256"] != ident["file_sha256"]
    # a mapping naming a file: the file resolved, the rest kept in the identity
    spec_m, ident_m = platform_fingerprint({"file": "m.json", "name": "x"}, tmp_path / "a")
    assert json.loads(spec_m) == {"file": str(a.resolve()), "name": "x"}
    assert ident_m["spec"] == {"name": "x"} and ident_m["file_sha256"] == file_sha256(a)
    spec_c, _ = platform_fingerprint({"file": "b.json"}, tmp_path / "a")
    assert json.loads(spec_c) == {"file": str(b.resolve())}
    with pytest.raises(InputError) as err:
        platform_fingerprint("none.json", tmp_path)
    assert err.value.field == "platforms"
    assert err.value.reason == "platform 'none.json' is neither a known name nor a file"


def test_an_inline_platform_is_identified_by_its_spec_and_sizes():
    value = {"name": "s", "nodes": 4, "bb": "1GB", "ssd": {"small": "1GB", "large": "2GB"}}
    spec_json, ident = platform_fingerprint(value, __import__("pathlib").Path("."))
    assert spec_json == canonical(value)
    assert ident == {"nodes": 4, "bb": 1e9, "node_ssd": [1e9, 1e9, 2e9, 2e9], "spec": value}
    other = platform_fingerprint({**value, "ssd": {"small": "1GB", "large": "3GB"}},
                                 __import__("pathlib").Path("."))[1]
    assert other["node_ssd"] == [1e9, 1e9, 3e9, 3e9]


def test_a_name_is_a_named_platform_unless_a_file_has_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _is_named_platform("kopanski") and _is_named_platform("cts1:0.3")
    assert not _is_named_platform("nope") and not _is_named_platform("nope:kopanski")
    (tmp_path / "kopanski").write_text('{"nodes": 3, "bb": 0}')
    assert not _is_named_platform("kopanski")
    assert platform_fingerprint("kopanski", tmp_path)[1]["nodes"] == 3


def test_a_sized_bb_is_the_capacity_its_workload_gives_at_the_runs_seed():
    w = {"generator": GEN, "transforms": ["lognormal-bb"]}
    doc = {"workloads": {"w": w, "fixed": {**w, "seed": 2}}, "policies": ["fcfs-bb"],
           "platforms": [{"name": "s", "nodes": 16, "bb": {"sized_by": "w", "demand": 0.5}},
                         {"name": "d", "nodes": 16, "bb": {"sized_by": "w"}},
                         {"name": "f", "nodes": 16, "bb": {"sized_by": "fixed"}},
                         {"name": "plain", "nodes": 16, "bb": "1GB"}, "kopanski"]}
    spec = parse_spec(doc, source="<t>")
    assert _sized_bb(spec.platforms["s"]) and not _sized_bb(spec.platforms["plain"])
    assert not _sized_bb("kopanski")
    jobs1 = apply("lognormal-bb", apply("kth-like", None, 1, n_jobs=30, nodes=16), 1)
    sized = resolve_platform(spec, "s", 1)
    assert sized == {"name": "s", "nodes": 16, "bb": bb_capacity_for_demand(jobs1, 16, 0.5)}
    assert resolve_platform(spec, "d", 1)["bb"] == bb_capacity_for_demand(jobs1, 16, 1.0)
    assert resolve_platform(spec, "d", 1)["bb"] != sized["bb"]
    jobs2 = apply("lognormal-bb", apply("kth-like", None, 2, n_jobs=30, nodes=16), 2)
    assert resolve_platform(spec, "f", 1)["bb"] == bb_capacity_for_demand(jobs2, 16, 1.0)
    assert resolve_platform(spec, "plain", 1) is spec.platforms["plain"]
    assert resolve_platform(spec, "kopanski", 1) == "kopanski"


# --- entitlements ---------------------------------------------------------------------------

def test_a_run_is_measured_against_the_policys_shares_else_the_workloads():
    plain = canonical({"generator": GEN})
    assert _shares(plain, 0) is None
    ent = canonical({"generator": GEN, "transforms": [
        {"name": "omfs-entities", "by": "random", "n_entities": 2, "shares": "equal"}]})
    got = _shares(ent, 0)
    assert got is not None and sorted(got.values()) == [0.5, 0.5]
    assert _measured_shares({}, got) == got
    assert _measured_shares({"shares": None}, got) == got
    assert _measured_shares({"shares": "a:25,b:75"}, got) == {"a": 0.25, "b": 0.75}  # (%)
    assert _measured_shares({}, None) is None


def test_a_files_hash_is_its_content_hash(tmp_path):
    path = tmp_path / "x"
    path.write_text("abc")
    assert _file_sha(str(path)) == file_sha256(path)

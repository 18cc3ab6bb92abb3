"""The sweep specification's reader, rule by rule: what each field means (the grid's cells,
the budget entries, the labels, the ``quick`` merge, the defaults) and every refusal naming the
spec, the field's path and what is wrong with it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bbopt.analysis.sweep_spec import (
    Cell,
    PolicyEntry,
    load_spec,
    merge,
    parse_spec,
    resolve_file,
)
from bbopt.errors import InputError

SYN = {"generator": {"name": "kth-like", "n_jobs": 20}}


def doc(**over):
    d = {"workloads": {"w": json.loads(json.dumps(SYN))}, "policies": ["fcfs-bb"]}
    d.update(over)
    return d


def parse(d, **kw):
    return parse_spec(d, source="s.yaml", **kw)


def refused(d, field, match=None, **kw):
    """The error of ``d``: an InputError naming the spec and ``field`` (and ``match``)."""
    with pytest.raises(InputError, match=match) as err:
        parse(d, **kw)
    assert err.value.source == "s.yaml"
    assert err.value.field == field
    return err.value


# --- the grid -------------------------------------------------------------------------------

def test_defaults_of_an_almost_empty_spec():
    spec = parse(doc())
    assert spec.name == "s"  # the spec file's stem
    assert spec.source == "s.yaml"
    assert spec.base == Path.cwd()
    assert list(spec.platforms) == ["kopanski"]
    assert spec.seeds == [0]
    assert spec.budgets == {"default": {}}
    assert spec.executions == {"rigid": {"name": "rigid"}}
    assert spec.tick is None and spec.warmup == 0.0 and spec.cooldown == 0.0
    assert spec.reference is None
    assert spec.metrics == ["mean_wait", "mean_bounded_slowdown"]
    assert spec.exclude == [] and spec.zip == [] and spec.description == ""
    assert spec.report == {} and spec.budget_mode == "deterministic" and spec.plugins == []
    (cell,) = spec.cells()
    assert cell == Cell("w", None, "kopanski", PolicyEntry("fcfs-bb", "fcfs-bb", {}), 0,
                        "default", {}, "rigid")
    assert cell.params() == {"workload": "w", "part": None, "platform": "kopanski",
                             "policy": "fcfs-bb", "policy_name": "fcfs-bb", "seed": 0,
                             "budget": "default", "execution": "rigid"}


def test_fields_are_read_with_their_units():
    spec = parse(doc(name=2019, tick="2m", warmup="1h", cooldown=30, reference="fcfs-bb",
                     metrics="mean_wait", description="d", report={"a": 1},
                     budget_mode="wall", seeds=[3, 1]))
    assert spec.name == "2019"
    assert (spec.tick, spec.warmup, spec.cooldown) == (120.0, 3600.0, 30.0)
    assert spec.reference == "fcfs-bb" and spec.metrics == ["mean_wait"]
    assert spec.description == "d" and spec.report == {"a": 1}
    assert spec.budget_mode == "wall" and spec.seeds == [3, 1]
    assert [c.seed for c in spec.cells()] == [3, 1]


def test_cells_come_in_axis_order_the_last_axis_fastest():
    spec = parse(doc(policies=["fcfs-bb", "sjf-bb"], seeds=[0, 1]))
    assert [(c.policy.label, c.seed) for c in spec.cells()] == [
        ("fcfs-bb", 0), ("fcfs-bb", 1), ("sjf-bb", 0), ("sjf-bb", 1)]


def test_zipped_axes_vary_together_and_must_have_equal_lengths():
    spec = parse(doc(policies=["fcfs-bb", "sjf-bb"], seeds=[0, 1], zip=[["policies", "seeds"]]))
    assert [(c.policy.label, c.seed) for c in spec.cells()] == [("fcfs-bb", 0), ("sjf-bb", 1)]
    spec = parse(doc(policies=["fcfs-bb", "sjf-bb"], seeds=[0, 1, 2]))
    spec.zip = [["policies", "seeds"]]
    with pytest.raises(InputError) as err:
        spec.cells()
    assert err.value.field == "zip" and err.value.source == "s.yaml"
    assert err.value.reason == "zipped axes must have equal lengths, got {'policies': 2, " \
        "'seeds': 3}"
    refused(doc(seeds=[0, 1], zip=[["seeds", "budgets"]]), "zip", "equal lengths")


def test_a_zip_names_axes_only():
    e = refused(doc(zip=[["seeds", "seed"]]), "zip[0].seed")
    assert e.reason == ("not an axis; axes: workloads, platforms, policies, seeds, budgets, "
                        "executions")
    refused(doc(zip=[["seeds"], ["nodes"]]), "zip[1].nodes", "not an axis")


def test_a_split_workload_is_one_cell_per_part_or_per_chosen_part():
    w = {**SYN, "split": {"parts": 3}}
    spec = parse(doc(workloads={"w": w}))
    assert [c.part for c in spec.cells()] == [0, 1, 2]
    assert spec.workloads["w"]["split"] == {"parts": 3}
    spec = parse(doc(workloads={"w": {**w, "parts": [2, 0]}}))
    assert [c.part for c in spec.cells()] == [2, 0]
    spec = parse(doc(workloads={"w": {**SYN, "split": 2}}))  # the count alone
    assert [c.part for c in spec.cells()] == [0, 1]
    assert spec.workloads["w"]["split"] == {"parts": 2}
    spec = parse(doc(workloads={"w": {**SYN, "split": {"parts": 1, "length": "2d"}}}))
    assert spec.workloads["w"]["split"] == {"parts": 1, "length": 172800.0}
    assert [c.part for c in spec.cells()] == [0]


def test_parts_count_from_zero_below_the_split():
    w = {**SYN, "split": {"parts": 3}}
    e = refused(doc(workloads={"w": {**w, "parts": [1, 3]}}), "workloads.w.parts")
    assert e.reason == "part 3 of 3 (parts count from 0)"
    assert [c.part for c in parse(doc(workloads={"w": {**w, "parts": [2]}})).cells()] == [2]
    refused(doc(workloads={"w": {**w, "parts": [-1]}}), "workloads.w.parts[0]", ">= 0")
    e = refused(doc(workloads={"w": {**SYN, "parts": [0]}}), "workloads.w.parts")
    assert e.reason == "parts need a split"
    refused(doc(workloads={"w": {**w, "parts": []}}), "workloads", "no run")


@pytest.mark.parametrize("ex, kept", [
    ({"policy": "fcfs-bb"}, [("sjf-bb", 0), ("sjf-bb", 1)]),
    ({"policy": "F"}, [("sjf-bb", 0), ("sjf-bb", 1)]),  # by label too
    ({"policy_name": "fcfs-bb"}, [("sjf-bb", 0), ("sjf-bb", 1)]),
    ({"seed": 1}, [("F", 0), ("sjf-bb", 0)]),
    ({"seed": [0, 1], "policy": "sjf-bb"}, [("F", 0), ("F", 1)]),  # every key of the entry
    ({"policy": "F", "seed": 1}, [("F", 0), ("sjf-bb", 0), ("sjf-bb", 1)]),
    ({"seed": 2}, [("F", 0), ("F", 1), ("sjf-bb", 0), ("sjf-bb", 1)]),
    ({"seed": 1, "policy": "nope"}, [("F", 0), ("F", 1), ("sjf-bb", 0), ("sjf-bb", 1)]),
    ({"seed": [2], "policy": "F"}, [("F", 0), ("F", 1), ("sjf-bb", 0), ("sjf-bb", 1)]),
    ({"nothing": None}, [("F", 0), ("F", 1), ("sjf-bb", 0), ("sjf-bb", 1)][:0]),
])
def test_exclude_drops_the_cells_matching_every_key_of_an_entry(ex, kept):
    d = doc(policies=[{"name": "fcfs-bb", "label": "F"}, "sjf-bb"], seeds=[0, 1],
            exclude=[ex, {"seed": 5}])
    if not kept:  # (a key no cell has: None matches every cell's missing value)
        refused(d, "exclude", "no run")
        return
    assert [(c.policy.label, c.seed) for c in parse(d).cells()] == kept


def test_a_budget_entry_only_repeats_a_run_of_a_policy_that_takes_it_once():
    spec = parse(doc(policies=["fcfs-bb", "bbsched"],
                     budgets=[{"name": "a", "budget": 1}, None, 3,
                              {"name": "d", "deterministic": 2}]))
    cells = [(c.policy.label, c.budget, c.budget_options) for c in spec.cells()]
    assert cells == [("fcfs-bb", "a", {}), ("fcfs-bb", "default", {}),
                     ("bbsched", "a", {"budget": 1}), ("bbsched", "default", {}),
                     ("bbsched", "3s", {"budget": 3.0}), ("bbsched", "d", {"deterministic": 2})]
    assert spec.budgets == {"a": {"budget": 1}, "default": {}, "3s": {"budget": 3.0},
                            "d": {"deterministic": 2}}
    # the first entry is kept for every policy, even one it gives nothing
    spec = parse(doc(policies=["fcfs-bb"], budgets=[{"name": "a", "budget": 1}, None]))
    assert [(c.budget, c.budget_options) for c in spec.cells()] == [("a", {}), ("default", {})]
    # an entry of other policy options: a scenario of the policies that take them
    spec = parse(doc(policies=["fcfs-bb", "bbsched"],
                     budgets=[None, {"name": "nores", "reserve_bb": False}]))
    assert [(c.policy.label, c.budget) for c in spec.cells()] == [
        ("fcfs-bb", "default"), ("bbsched", "default"), ("bbsched", "nores")]
    assert spec.cells()[-1].budget_options == {"reserve_bb": False}


def test_the_grid_size_is_refused_above_max_cells(monkeypatch):
    import bbopt.analysis.sweep_spec as sweep_spec

    monkeypatch.setattr(sweep_spec, "MAX_CELLS", 4)
    assert len(parse(doc(seeds=[0, 1, 2, 3])).cells()) == 4
    e = refused(doc(seeds=[0, 1, 2, 3, 4]), "grid")
    assert e.reason == "the grid has 5 runs, more than 4"
    monkeypatch.setattr(sweep_spec, "MAX_CELLS", 1000)
    e = refused(doc(seeds=list(range(1001))), "grid")
    assert e.reason == "the grid has 1,001 runs, more than 1,000"


def test_merge_is_recursive_for_mappings_and_copies_the_rest():
    base = {"a": {"x": 1, "y": [1]}, "b": 2}
    over = {"a": {"y": [2], "z": {"k": 1}}, "c": [3]}
    out = merge(base, over)
    assert out == {"a": {"x": 1, "y": [2], "z": {"k": 1}}, "b": 2, "c": [3]}
    out["c"].append(4)
    out["a"]["z"]["k"] = 5
    assert over == {"a": {"y": [2], "z": {"k": 1}}, "c": [3]}  # deep copies
    assert base == {"a": {"x": 1, "y": [1]}, "b": 2}
    assert merge({"a": 1}, [1]) == [1] and merge([1], {"a": 1}) == {"a": 1}
    # copies all the way down: a value inside a new list or mapping is not shared either
    over = {"n": [[1]], "m": {"k": [2]}}
    out = merge({"m": 1}, over)
    out["n"][0].append(9)
    out["m"]["k"].append(9)
    assert over == {"n": [[1]], "m": {"k": [2]}}
    inner = [[1]]
    merge({"a": 1}, inner)[0].append(9)
    assert inner == [[1]]


def test_quick_merges_its_section_over_the_spec():
    d = doc(seeds=[0, 1, 2], quick={"seeds": [0], "workloads": {"w": {"first": 5}}})
    assert parse(d).seeds == [0, 1, 2]
    q = parse(d, quick=True)
    assert q.seeds == [0]
    assert q.workloads["w"] == {"generator": {"name": "kth-like", "n_jobs": 20}, "first": 5,
                                "transforms": []}
    e = refused(doc(), "quick", quick=True)
    assert e.reason == "has no 'quick' section for --quick"
    refused(doc(quick={"quick": 1}), "quick.quick", "unknown key", quick=True)
    refused(doc(quick=[1]), "quick", "must be a mapping", quick=True)


def test_load_spec_reads_the_file_and_resolves_files_beside_it(tmp_path):
    (tmp_path / "t.swf").write_text("1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n")
    path = tmp_path / "k.yaml"
    path.write_text("workloads: {w: {file: t.swf}}\npolicies: [fcfs-bb]\n"
                    "quick: {seeds: [7]}\n")
    spec = load_spec(path)
    assert spec.name == "k" and spec.source == str(path) and spec.base == tmp_path.resolve()
    assert spec.workloads["w"]["file"] == str((tmp_path / "t.swf").resolve())
    assert spec.seeds == [0]
    assert load_spec(path, quick=True).seeds == [7]


# --- refusals -------------------------------------------------------------------------------

def test_the_document_must_be_a_mapping():
    with pytest.raises(InputError) as err:
        parse([1])
    assert err.value.source == "s.yaml" and err.value.field is None
    assert err.value.reason == "a sweep specification must be a mapping"
    refused({**doc(), "nodes": 3}, "nodes", "unknown key")


@pytest.mark.parametrize("key", ["workloads", "policies"])
@pytest.mark.parametrize("value", [None, {}, []])
def test_workloads_and_policies_are_required(key, value):
    d = doc()
    if value is None:
        del d[key]
    else:
        d[key] = value
    assert refused(d, key).reason == "is missing or empty"


def test_workload_refusals_name_the_workloads_field():
    e = refused(doc(workloads={"w": {**SYN, "file": "x.swf"}}), "workloads.w")
    assert e.reason == "needs exactly one of 'file' and 'generator'"
    refused(doc(workloads={"w": {"first": 3}}), "workloads.w", "exactly one")
    refused(doc(workloads={"w": {**SYN, "size": 3}}), "workloads.w.size", "unknown key")
    refused(doc(workloads={"w": {**SYN, "first": 0}}), "workloads.w.first", ">= 1")
    assert parse(doc(workloads={"w": {**SYN, "first": 1}})).workloads["w"]["first"] == 1
    refused(doc(workloads={"w": {**SYN, "seed": -1}}), "workloads.w.seed", ">= 0")
    assert parse(doc(workloads={"w": {**SYN, "seed": 0}})).workloads["w"]["seed"] == 0
    e = refused(doc(workloads={"w": {**SYN, "bb": "draw"}}), "workloads.w.bb")
    assert e.reason == "must be auto, lognormal or none, got 'draw'"
    for bb in ("auto", "lognormal", "none"):
        assert parse(doc(workloads={"w": {**SYN, "bb": bb}})).workloads["w"]["bb"] == bb
    refused(doc(workloads={"w": {**SYN, "reader": [1]}}), "workloads.w.reader",
            "must be a mapping")
    assert parse(doc(workloads={"w": {**SYN, "reader": {"a": 1}}})).workloads["w"]["reader"] \
        == {"a": 1}
    refused(doc(workloads={"w": {**SYN, "split": {"parts": 2, "at": 1}}}),
            "workloads.w.split.at", "unknown key")
    refused(doc(workloads={"w": {**SYN, "split": {"parts": 2, "length": 0}}}),
            "workloads.w.split.length", "> 0")
    refused(doc(workloads={"w": {**SYN, "transforms": {"a": 1}}}), "workloads.w.transforms",
            "must be a list")


def test_a_workload_entry_keeps_its_fields_as_read():
    spec = parse(doc(workloads={"w": {**SYN, "split": 3, "parts": 2, "seed": 4, "first": 5,
                                      "reader": {"a": 1}, "bb": "auto"}}))
    assert spec.workloads == {"w": {**SYN, "transforms": [], "split": {"parts": 3},
                                    "parts": [2], "seed": 4, "first": 5, "reader": {"a": 1},
                                    "bb": "auto"}}  # a single part read as a list of it
    assert [c.part for c in spec.cells()] == [2]


def test_a_workload_list_names_its_entries():
    spec = parse(doc(workloads=[{"name": "a", **SYN}, SYN]))
    assert list(spec.workloads) == ["a", "w1"]
    assert "name" not in spec.workloads["a"]
    refused(doc(workloads=[{"name": [1], **SYN}]), "workloads[0].name", "must be text")
    refused(doc(workloads=[SYN, 5]), "workloads.5", "must be a mapping")


def test_a_workload_file_is_found_beside_the_spec_or_named_as_not_found(tmp_path, monkeypatch):
    (tmp_path / "t.swf").write_text("1 0 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1\n")
    spec = parse(doc(workloads=["t.swf"]), base=tmp_path)  # a list of file names: their stems
    assert spec.workloads == {"t": {"file": str((tmp_path / "t.swf").resolve()),
                                    "transforms": []}}
    monkeypatch.setenv("BBOPT_DATA", str(tmp_path / "none"))
    e = refused(doc(workloads={"w": {"file": "u.swf"}}), "workloads.w.file", base=tmp_path)
    assert e.reason.startswith("workload file 'u.swf' not found beside the spec; ")
    with pytest.raises(InputError) as err:
        resolve_file("u.swf", None, "s.yaml", "here")
    assert (err.value.source, err.value.field) == ("s.yaml", "here")
    monkeypatch.chdir(tmp_path)  # as given, relative to where bbopt runs
    assert resolve_file("t.swf", None, "s.yaml", "here") == (tmp_path / "t.swf").resolve()
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "t.swf").write_text("other")
    assert resolve_file("t.swf", sub, "s.yaml", "here") == (tmp_path / "t.swf").resolve()


def test_generator_refusals_name_the_generators_field():
    g = "workloads.w.generator"
    e = refused(doc(workloads={"w": {"generator": {"n_jobs": 3}}}), g)
    assert e.reason == "needs a 'name'"
    refused(doc(workloads={"w": {"generator": "nope"}}), f"{g}.name", "nope")
    refused(doc(workloads={"w": {"generator": {"name": "kth-like", "seed": "x"}}}),
            f"{g}.seed", "must be an integer")
    e = refused(doc(workloads={"w": {"generator": {"name": "kth-like", "jobs": 3}}}),
                f"{g}.jobs")
    assert e.reason.startswith("generator 'kth-like' has no parameter 'jobs'; its parameters: ")
    spec = parse(doc(workloads={"w": {"generator": "kth-like",
                                      "transforms": ["lognormal-bb", {"name": "max-nodes",
                                                                      "nodes": 4, "seed": 2}]}}))
    assert spec.workloads["w"]["generator"] == {"name": "kth-like"}
    assert spec.workloads["w"]["transforms"] == [{"name": "lognormal-bb"},
                                                 {"name": "max-nodes", "nodes": 4, "seed": 2}]
    refused(doc(workloads={"w": {**SYN, "transforms": [{"name": "max-nodes", "nodes": 4,
                                                        "seed": -2}]}}),
            "workloads.w.transforms[0].seed", ">= 0")


def test_platform_entries_and_their_refusals(tmp_path):
    (tmp_path / "p.json").write_text("{}")
    spec = parse(doc(platforms=["kopanski", "cts1:64", {"nodes": 4, "bb": "1GB"},
                                {"name": "f", "file": "x.json"}, "p.json"]), base=tmp_path)
    assert spec.platforms == {"kopanski": "kopanski", "cts1:64": "cts1:64",
                              "platform2": {"nodes": 4, "bb": "1GB"},
                              "f": {"name": "f", "file": "x.json"}, "p.json": "p.json"}
    e = refused(doc(platforms=["nowhere"]), "platforms[0]")
    assert e.reason == ("platform 'nowhere' is neither a known name (cts1, kopanski, "
                        "kopanski-dragonfly) nor a file")
    e = refused(doc(platforms=["kopanski", [1]]), "platforms[1]")
    assert e.reason == "must be a platform name, a file or a mapping, got [1]"
    e = refused(doc(platforms=[{"bb": "1GB"}]), "platforms[0]")
    assert e.reason == "needs 'nodes' (or a 'file')"
    refused(doc(platforms=[{"file": 3.5j}]), "platforms[0].file", "must be text")
    refused(doc(platforms=[{"name": [], "nodes": 1}]), "platforms[0].name", "must be text")
    assert parse(doc(platforms=[{"nodes": 1}])).platforms == {"platform0": {"nodes": 1}}
    refused(doc(platforms=[{"nodes": 1, "ssd": {"small": "1GB", "medium": "2GB"}}]),
            "platforms[0].ssd.medium", "unknown key")
    refused(doc(platforms=[{"nodes": 1, "ssd": {"small": "-1GB"}}]), "platforms[0].ssd.small")
    assert parse(doc(platforms=[{"nodes": 1, "ssd": {"small": "1GB"}}])).platforms[
        "platform0"]["ssd"] == {"small": "1GB"}
    e = refused(doc(platforms=[{"name": "a", "nodes": 1}, {"name": "a", "nodes": 2}]),
                "platforms[1].name")
    assert e.reason == "two platforms with one name; give one a 'name'"


def test_a_platform_keeps_its_ssd_sizes_and_a_sized_bb_its_demand_default():
    spec = parse(doc(platforms=[{"nodes": 2, "ssd": {"small": "1GB", "large": "2GB"},
                                 "bb": {"sized_by": "w"}}]))
    assert spec.platforms == {"platform0": {"nodes": 2, "ssd": {"small": "1GB", "large": "2GB"},
                                            "bb": {"sized_by": "w"}}}


@pytest.mark.parametrize("bb, reason", [
    (True, "must be a size (bytes, or text like 480GB), got True"),
    (None, None),
    ([1], "must be a size (bytes, or text like 480GB), got [1]"),
    ("lots", "cannot read 'lots'; use a number with a unit among b, kb, mb, gb, tb, pb, kib, "
             "mib, gib, tib, pib"),
    (float("inf"), "must be a finite size >= 0, got inf"),
    (-1, "must be a finite size >= 0, got -1"),
    (0, ""),
    ("0GB", ""),
    (1.5e12, ""),
])
def test_a_platforms_bb_is_a_finite_size(bb, reason):
    d = doc(platforms=[{"nodes": 2, "bb": bb}])
    if reason == "" or bb is None:
        assert parse(d).platforms["platform0"]["bb"] == bb
        return
    e = refused(d, "platforms[0].bb")
    assert e.reason == reason


def test_a_sized_bb_names_a_workload_and_needs_the_nodes():
    ok = {"name": "s", "nodes": 8, "bb": {"sized_by": "w", "demand": 0.5}}
    assert parse(doc(platforms=[ok])).platforms["s"]["bb"] == {"sized_by": "w", "demand": 0.5}
    e = refused(doc(platforms=[{**ok, "bb": {"sized_by": "v"}}]), "platforms[0].bb")
    assert e.reason == "a sized BB is {sized_by: WORKLOAD, demand: RATIO}, with WORKLOAD one " \
        "of w"
    e = refused(doc(platforms=[{"file": "x", "bb": {"sized_by": "w"}}]), "platforms[0].bb")
    assert e.reason == "a sized BB needs the platform's 'nodes'"
    refused(doc(platforms=[{**ok, "bb": {"sized_by": "w", "demand": 0}}]),
            "platforms[0].bb.demand", "> 0")
    refused(doc(platforms=[{**ok, "bb": {"sized_by": "w", "by": 1}}]), "platforms[0].bb.by",
            "unknown key")


def test_policy_entries_labels_and_sweeps():
    spec = parse(doc(policies=[
        "fcfs-bb",
        {"name": "conservative-bb", "label": "cons", "options": {"depth": 3}},
        {"name": "conservative-bb", "sweep": {"depth": [1, 2], "compiled": [False]}}]))
    assert spec.policies == [
        PolicyEntry("fcfs-bb", "fcfs-bb", {}),
        PolicyEntry("cons", "conservative-bb", {"depth": 3}),
        PolicyEntry("conservative-bb[depth=1,compiled=False]", "conservative-bb",
                    {"depth": 1, "compiled": False}),
        PolicyEntry("conservative-bb[depth=2,compiled=False]", "conservative-bb",
                    {"depth": 2, "compiled": False})]
    spec = parse(doc(policies=[{"name": "conservative-bb", "label": "c",
                                "sweep": {"depth": 4}}]))
    assert spec.policies == [PolicyEntry("c[depth=4]", "conservative-bb", {"depth": 4})]


def test_policy_refusals_name_the_policies_field():
    e = refused(doc(policies=["nope"]), "policies[0].name")
    assert "nope" in e.reason
    refused(doc(policies=[{"label": "x"}]), "policies[0].name")
    refused(doc(policies=[{"name": "fcfs-bb", "opts": {}}]), "policies[0].opts", "unknown key")
    e = refused(doc(policies=[{"name": "fcfs-bb", "options": {"depth": 1}}]),
                "policies[0].options.depth")
    assert e.reason == "policy 'fcfs-bb' has no option 'depth'; its options: none"
    e = refused(doc(policies=[{"name": "conservative-bb", "sweep": {"deep": [1]}}]),
                "policies[0].sweep.deep")
    assert e.reason == "policy 'conservative-bb' has no option 'deep'; its options: depth, " \
        "compiled"
    refused(doc(policies=[{"name": "conservative-bb", "sweep": {"depth": []}}]),
            "policies[0].sweep.depth", "must not be empty")
    e = refused(doc(policies=["fcfs-bb", "fcfs-bb"]), "policies")
    assert e.reason == "two policy entries have the same label; give one a 'label'"
    refused(doc(policies=[{"name": "conservative-bb", "options": {"depth": -1}}]),
            "policies[0].options.depth", "depth")
    refused(doc(policies=["fcfs-bb"], reference="sjf-bb"), "reference",
            r"reference 'sjf-bb' is not among the policies \(fcfs-bb\)")


def test_budget_entries_and_their_refusals():
    spec = parse(doc(policies=["bbsched"], budgets=[0.5, {"budget": 2}]))
    assert spec.budgets == {"0.5s": {"budget": 0.5}, "budget1": {"budget": 2}}
    refused(doc(budgets=[0]), "budgets[0]", "> 0")
    refused(doc(budgets=[{"name": [1]}]), "budgets[0].name", "must be text")
    e = refused(doc(policies=["fcfs-bb", "conservative-bb"], budgets=[{"window": 3}]),
                "budgets[0].window")
    assert e.reason == ("no policy of the spec has an option 'window' (a budget entry sets "
                        "'budget' (s), 'deterministic' and other policy options)")
    # 'budget' and 'deterministic' are allowed for every spec; an option some policy takes too
    spec = parse(doc(policies=["fcfs-bb", "conservative-bb"],
                     budgets=[{"name": "b", "budget": 1, "deterministic": 2, "depth": 3}]))
    assert spec.budgets == {"b": {"budget": 1, "deterministic": 2, "depth": 3}}
    assert [c.budget_options for c in spec.cells()] == [{}, {"depth": 3}]
    e = refused(doc(budgets=[None, {"name": "default"}]), "budgets[1].name")
    assert e.reason == "two budget entries have the same name"
    refused(doc(budgets=[1, 1.0]), "budgets[1].name", "same name")
    e = refused(doc(policies=["bbsched"], budgets=[{"name": "x", "window": -1}]),
                "budgets[0].window")
    assert "window" in e.reason


def test_budget_mode_and_executions():
    e = refused(doc(budget_mode="fast"), "budget_mode")
    assert e.reason == "must be one of wall, deterministic, got 'fast'"
    spec = parse(doc(executions=["rigid", {"name": "checkpoint", "label": "ck",
                                           "memory_per_node": "1GB"}]))
    assert spec.executions == {"rigid": {"name": "rigid"},
                               "ck": {"name": "checkpoint", "memory_per_node": 1e9}}
    assert [c.execution for c in spec.cells()] == ["rigid", "ck"]
    e = refused(doc(executions=["fluid"]), "executions[0].name")
    assert e.reason == ("unknown execution model 'fluid'; known: checkpoint, exclusive-io, "
                        "io-contention, phased-io, rigid")
    refused(doc(executions=[{"label": "x"}]), "executions[0].name", "unknown execution")
    refused(doc(executions=[{"name": "rigid", "label": []}]), "executions[0].label",
            "must be text")
    e = refused(doc(executions=["rigid", {"name": "rigid"}]), "executions[1]")
    assert e.reason == "two execution models with one label; give one a 'label'"
    refused(doc(executions=[{"name": "rigid", "speed": 1}]), "executions[0].speed")


def test_plugins_are_text_and_imported_before_the_check():
    refused(doc(plugins=[1.5j]), "plugins[0]", "must be text")
    e = refused(doc(plugins=["no_such_module_here"]), "plugins")
    assert "no_such_module_here" in e.reason
    assert parse(doc(plugins="json")).plugins == ["json"]


def test_free_text_and_lists_are_checked():
    refused(doc(reference=[1]), "reference", "must be text")
    refused(doc(metrics=[{}]), "metrics[0]", "must be text")
    refused(doc(report=[1]), "report", "must be a mapping")
    refused(doc(seeds=[True]), "seeds[0]", "must be an integer")
    refused(doc(cooldown="-1h"), "cooldown")
    refused(doc(tick="0s"), "tick")
    refused(doc(zip={"a": 1}), "zip", "must be a list")
    refused(doc(zip=[{"a": 1}]), "zip[0]", "must be a list")
    refused(doc(exclude=[{"policy": "fcfs-bb"}]), "exclude", "no run")


class AnyOptions:
    """A policy that takes any keyword (``**options``): it takes every budget entry."""

    io_aware = False

    def __init__(self, name: str = "any-options", **options) -> None:
        self.name, self.options = name, options

    def decide(self, state):
        from bbopt.core import Decision

        return Decision()


@pytest.fixture
def any_options(registered):
    return registered("test-any-options", AnyOptions)


def test_a_policy_taking_any_keyword_takes_every_budget_entry(any_options):
    spec = parse(doc(policies=["fcfs-bb", any_options],
                     budgets=[None, {"name": "b", "budget": 1, "window": 3}]))
    assert [(c.policy.label, c.budget, c.budget_options) for c in spec.cells()] == [
        ("fcfs-bb", "default", {}), (any_options, "default", {}),
        (any_options, "b", {"budget": 1, "window": 3})]
    spec = parse(doc(policies=[{"name": any_options, "options": {"x": 1},
                                "sweep": {"y": [2]}}]))
    assert spec.policies == [PolicyEntry(f"{any_options}[y=2]", any_options, {"x": 1, "y": 2})]

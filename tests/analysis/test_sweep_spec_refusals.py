"""The sweep specification's refusals, one a case: each names the spec, the JSON path of the
field and the reason, and the whole message is asserted (``s.yaml, field 'PATH': REASON``), so
a refusal that names another field, or the right field with another reason, fails here."""

from __future__ import annotations

import json

import pytest

from bbopt.analysis.sweep_spec import parse_spec
from bbopt.errors import InputError, UnknownNameError

SYN = {"generator": {"name": "kth-like", "n_jobs": 20}}
#: the top-level keys of a spec, as the refusal of an unknown one lists them
TOP = ("budget_mode, budgets, cooldown, description, exclude, executions, metrics, name, "
       "platforms, plugins, policies, quick, reference, report, seeds, tick, warmup, workloads, "
       "zip")
BUDGET_KEYS = ("no policy of the spec has an option {!r} (a budget entry sets 'budget' (s), "
               "'deterministic' and other policy options)")
NO_RUN = "the grid has no run (every cell excluded, or no part chosen)"
BYTES = ("cannot read 'x'; use a number with a unit among b, kb, mb, gb, tb, pb, kib, mib, gib, "
         "tib, pib")


def doc(**over):
    d = {"workloads": {"w": json.loads(json.dumps(SYN))}, "policies": ["fcfs-bb"]}
    d.update(over)
    return d


def wl(**keys):
    """A spec whose one workload, ``w``, has these keys beside its generator."""
    return doc(workloads={"w": {**SYN, **keys}})


def gen(g):
    return doc(workloads={"w": {"generator": g}})


def refusal(d, *, quick=False):
    with pytest.raises(InputError) as err:
        parse_spec(d, source="s.yaml", quick=quick)
    return err.value


def unknown(kind_error) -> str:
    """The message of a registry's refusal of a name (the reader passes it on unchanged)."""
    try:
        kind_error()
    except UnknownNameError as exc:
        return str(exc)
    raise AssertionError("the name was known")


CASES = [
    # (id, document, the field's path, the reason)
    ("unknown-top-level-key", {**doc(), "nodes": 3}, "nodes", f"unknown key; known: {TOP}"),
    ("name-not-text", doc(name=[1]), "name", "must be text, got a list"),
    ("description-not-text", doc(description=[]), "description", "must be text, got a list"),
    ("report-not-mapping", doc(report=3), "report", "must be a mapping, got 3"),
    ("budget-mode-null", doc(budget_mode=None), "budget_mode",
     "must be one of wall, deterministic, got None"),
    ("tick-zero", doc(tick=0), "tick", "must be a finite duration > 0, got 0"),
    ("warmup-negative", doc(warmup=-1), "warmup", "must be a finite duration >= 0, got -1"),
    ("cooldown-unreadable", doc(cooldown="x"), "cooldown",
     "cannot read 'x'; use a number with a unit among ms, s, m, min, h, d"),
    ("plugins-mapping", doc(plugins={"a": 1}), "plugins", "must be a list, got a mapping"),
    ("plugins-second-not-text", doc(plugins=["json", []]), "plugins[1]",
     "must be text, got a list"),
    ("plugins-blank", doc(plugins=[" "]), "plugins", "a plug-in is a module name, got ' '"),
    ("plugins-second-not-found", doc(plugins=["json", "no_such_mod_x"]), "plugins[1]",
     "cannot import plug-in 'no_such_mod_x': No module named 'no_such_mod_x'"),
    ("seeds-empty", doc(seeds=[]), "seeds", "must not be empty"),
    ("seeds-mapping", doc(seeds={"a": 1}), "seeds", "must be a list, got a mapping"),
    ("seeds-second-negative", doc(seeds=[0, -1]), "seeds[1]", "must be >= 0, got -1"),
    ("zip-mapping", doc(zip={"a": 1}), "zip", "must be a list, got a mapping"),
    ("zip-second-mapping", doc(zip=[["policies", "seeds"], {"a": 1}]), "zip[1]",
     "must be a list, got a mapping"),
    ("zip-not-an-axis", doc(zip=[["policies"], ["seeds", "nodes"]]), "zip[1].nodes",
     "not an axis; axes: workloads, platforms, policies, seeds, budgets, executions"),
    ("zip-unequal", doc(seeds=[0, 1], zip=[["policies", "seeds"]]), "zip",
     "zipped axes must have equal lengths, got {'policies': 1, 'seeds': 2}"),
    ("reference-not-text", doc(reference={}), "reference", "must be text, got a mapping"),
    ("reference-not-a-policy", doc(policies=["fcfs-bb", "sjf-bb"], reference="easy-bb"),
     "reference", "reference 'easy-bb' is not among the policies (fcfs-bb, sjf-bb)"),
    ("metrics-mapping", doc(metrics={"a": 1}), "metrics", "must be a list, got a mapping"),
    ("metrics-second-not-text", doc(metrics=["a", [1]]), "metrics[1]",
     "must be text, got a list"),
    ("exclude-mapping", doc(exclude={"policy": "fcfs-bb"}), "exclude",
     "must be a list, got a mapping"),
    ("exclude-second-not-mapping", doc(exclude=[{"seed": 5}, 3]), "exclude[1]",
     "must be a mapping, got 3"),
    ("every-cell-excluded", doc(seeds=[0, 1], exclude=[{"seed": [0, 1]}]), "exclude", NO_RUN),
    ("no-part-chosen", wl(split=2, parts=[]), "workloads", NO_RUN),
    # workloads
    ("workloads-text", doc(workloads="x"), "workloads", "must be a mapping, got 'x'"),
    ("workload-list-entry-not-text", doc(workloads=[SYN, 1.5j]), "workloads[1]",
     "must be text, got 1.5j"),
    ("workload-list-name-not-text", doc(workloads=[SYN, {"name": {}, **SYN}]),
     "workloads[1].name", "must be text, got a mapping"),
    ("workload-unknown-key", wl(size=1), "workloads.w.size", "unknown key; known: bb, file, "
     "first, generator, name, parts, reader, seed, split, transforms"),
    ("workload-neither-file-nor-generator", doc(workloads={"w": {"seed": 1}}), "workloads.w",
     "needs exactly one of 'file' and 'generator'"),
    ("workload-file-not-text", doc(workloads={"w": {"file": 3j}}), "workloads.w.file",
     "must be text, got 3j"),
    ("transforms-mapping", wl(transforms={"a": 1}), "workloads.w.transforms",
     "must be a list, got a mapping"),
    ("split-not-an-integer", wl(split="x"), "workloads.w.split.parts",
     "must be an integer, got 'x'"),
    ("split-zero-parts", wl(split=0), "workloads.w.split.parts", "must be >= 1, got 0"),
    ("split-too-many-parts", wl(split=10**9), "workloads.w.split.parts",
     "must be <= 100,000, got 1000000000"),
    ("split-without-parts", wl(split={"length": "1d"}), "workloads.w.split.parts",
     "must be an integer, got nothing (null)"),
    ("split-unknown-key", wl(split={"parts": 2, "at": 1}), "workloads.w.split.at",
     "unknown key; known: length, parts"),
    ("split-length-zero", wl(split={"parts": 2, "length": "0s"}), "workloads.w.split.length",
     "must be a finite duration > 0, got '0s'"),
    ("parts-mapping", wl(split=2, parts={"a": 1}), "workloads.w.parts",
     "must be a list, got a mapping"),
    ("parts-second-negative", wl(split=2, parts=[0, -1]), "workloads.w.parts[1]",
     "must be >= 0, got -1"),
    ("parts-at-the-count", wl(split=2, parts=[0, 2, 3]), "workloads.w.parts",
     "part 2 of 2 (parts count from 0)"),
    ("parts-without-split", wl(parts=[0]), "workloads.w.parts", "parts need a split"),
    ("parts-with-a-null-split", wl(split=None, parts=[0]), "workloads.w.parts",
     "parts need a split"),
    ("first-zero", wl(first=0), "workloads.w.first", "must be >= 1, got 0"),
    ("first-not-an-integer", wl(first="x"), "workloads.w.first",
     "must be an integer, got 'x'"),
    ("workload-seed-negative", wl(seed=-1), "workloads.w.seed", "must be >= 0, got -1"),
    ("workload-bb", wl(bb="draw"), "workloads.w.bb",
     "must be auto, lognormal or none, got 'draw'"),
    ("reader-not-mapping", wl(reader=[1]), "workloads.w.reader", "must be a mapping, got a list"),
    # generators and transforms
    ("generator-not-text", gen(1.5j), "workloads.w.generator", "must be text, got 1.5j"),
    ("generator-key-not-text", gen({1: 2}), "workloads.w.generator", "keys must be text, got 1"),
    ("generator-without-name", gen({"n_jobs": 3}), "workloads.w.generator", "needs a 'name'"),
    ("generator-name-not-text", gen({"name": []}), "workloads.w.generator.name",
     "must be text, got a list"),
    ("generator-seed-not-integer", gen({"name": "kth-like", "seed": "x"}),
     "workloads.w.generator.seed", "must be an integer, got 'x'"),
    ("generator-unknown-parameter", gen({"name": "kth-like", "jobs": 3}),
     "workloads.w.generator.jobs",
     "generator 'kth-like' has no parameter 'jobs'; its parameters: n_jobs, nodes, load, bb"),
    ("generator-bad-value", gen({"name": "kth-like", "n_jobs": "x"}),
     "workloads.w.generator.n_jobs", "generator 'kth-like' needs an integer, got 'x'"),
    ("transform-second-parameter", wl(transforms=["lognormal-bb", {"name": "max-nodes",
                                                                   "n": 1}]),
     "workloads.w.transforms[1].n",
     "generator 'max-nodes' has no parameter 'n'; its parameters: nodes"),
    ("transform-without-parameters", wl(transforms=[{"name": "exact-walltime", "x": 1}]),
     "workloads.w.transforms[0].x",
     "generator 'exact-walltime' has no parameter 'x'; its parameters: none"),
    # platforms
    ("platforms-mapping", doc(platforms={"a": 1}), "platforms", "must be a list, got a mapping"),
    ("platform-list", doc(platforms=[[1]]), "platforms[0]",
     "must be a platform name, a file or a mapping, got [1]"),
    ("platform-unknown-key", doc(platforms=[{"nodes": 1, "cpu": 2}]), "platforms[0].cpu",
     "unknown key; known: bb, file, name, nodes, ssd"),
    ("platform-nodes-zero", doc(platforms=[{"nodes": 0}]), "platforms[0].nodes",
     "must be >= 1, got 0"),
    ("platform-without-nodes", doc(platforms=[{"bb": "1GB"}]), "platforms[0]",
     "needs 'nodes' (or a 'file')"),
    ("platform-file-not-text", doc(platforms=[{"file": []}]), "platforms[0].file",
     "must be text, got a list"),
    ("sized-bb-unknown-key", doc(platforms=[{"nodes": 1, "bb": {"sized_by": "w", "x": 1}}]),
     "platforms[0].bb.x", "unknown key; known: demand, sized_by"),
    ("sized-bb-demand-not-number", doc(platforms=[{"nodes": 1, "bb": {"sized_by": "w",
                                                                      "demand": "x"}}]),
     "platforms[0].bb.demand", "must be a number, got 'x'"),
    ("sized-bb-by-no-workload", doc(workloads={"a": SYN, "b": SYN},
                                    platforms=[{"nodes": 1, "bb": {"sized_by": "c"}}]),
     "platforms[0].bb",
     "a sized BB is {sized_by: WORKLOAD, demand: RATIO}, with WORKLOAD one of a, b"),
    ("ssd-not-mapping", doc(platforms=[{"nodes": 1, "ssd": [1]}]), "platforms[0].ssd",
     "must be a mapping, got a list"),
    ("ssd-unknown-key", doc(platforms=[{"nodes": 1, "ssd": {"tiny": 1}}]),
     "platforms[0].ssd.tiny", "unknown key; known: large, small"),
    ("ssd-large-unreadable", doc(platforms=[{"nodes": 1, "ssd": {"small": 1, "large": "x"}}]),
     "platforms[0].ssd.large", BYTES),
    ("platform-named-as-a-default", doc(platforms=[{"nodes": 1},
                                                   {"name": "platform0", "nodes": 2}]),
     "platforms[1].name", "two platforms with one name; give one a 'name'"),
    # policies
    ("policies-mapping", doc(policies={"a": 1}), "policies", "must be a list, got a mapping"),
    ("policy-not-text", doc(policies=["fcfs-bb", 1.5j]), "policies[1]",
     "must be text, got 1.5j"),
    ("policy-unknown-key", doc(policies=[{"name": "fcfs-bb", "opts": 1}]), "policies[0].opts",
     "unknown key; known: label, name, options, sweep"),
    ("policy-name-not-text", doc(policies=[{"name": []}]), "policies[0].name",
     "must be text, got a list"),
    ("policy-label-not-text", doc(policies=[{"name": "fcfs-bb", "label": {"a": 1}}]),
     "policies[0].label", "must be text, got a mapping"),
    ("policy-options-not-mapping", doc(policies=[{"name": "fcfs-bb", "options": [1]}]),
     "policies[0].options", "must be a mapping, got a list"),
    ("policy-sweep-not-mapping", doc(policies=[{"name": "fcfs-bb", "sweep": [1]}]),
     "policies[0].sweep", "must be a mapping, got a list"),
    ("policy-sweep-values-mapping", doc(policies=[{"name": "conservative-bb",
                                                   "sweep": {"depth": {"a": 1}}}]),
     "policies[0].sweep.depth", "must be a list, got a mapping"),
    ("policy-option-unknown", doc(policies=[{"name": "conservative-bb",
                                             "options": {"deep": 1}}]),
     "policies[0].options.deep",
     "policy 'conservative-bb' has no option 'deep'; its options: depth, compiled"),
    ("policy-option-refused", doc(policies=[{"name": "conservative-bb",
                                             "options": {"depth": "x"}}]),
     "policies[0].options.depth", "policy 'conservative-bb' needs null or an integer, got 'x'"),
    ("policy-swept-value-refused", doc(policies=[{"name": "conservative-bb",
                                                  "sweep": {"depth": [1, -1]}}]),
     "policies[0].options.depth", "policy 'conservative-bb': depth must be >= 1 or None"),
    ("policy-label-taken", doc(policies=["fcfs-bb", {"name": "sjf-bb", "label": "fcfs-bb"}]),
     "policies", "two policy entries have the same label; give one a 'label'"),
    # budgets
    ("budgets-mapping", doc(budgets={"a": 1}), "budgets", "must be a list, got a mapping"),
    ("budget-second-zero", doc(budgets=[None, 0]), "budgets[1]", "must be > 0, got 0"),
    ("budget-true", doc(budgets=[True]), "budgets[0]", "must be a number, got True (true/false)"),
    ("budget-text", doc(budgets=["1s"]), "budgets[0]", "must be a number, got '1s'"),
    ("budget-key-not-text", doc(budgets=[{1: 2}]), "budgets[0]", "keys must be text, got 1"),
    ("budget-name-not-text", doc(budgets=[{"name": []}]), "budgets[0].name",
     "must be text, got a list"),
    ("budget-options-no-policy-takes", doc(budgets=[{"name": "b", "window": 3, "alpha": 1}]),
     "budgets[0].alpha", BUDGET_KEYS.format("alpha")),
    ("budget-label-of-a-number-taken", doc(budgets=[2, {"name": "2s"}]), "budgets[1].name",
     "two budget entries have the same name"),
    ("budget-option-refused", doc(policies=["fcfs-bb", "conservative-bb"],
                                  budgets=[{"depth": -1}]),
     "budgets[0].depth", "policy 'conservative-bb': depth must be >= 1 or None"),
    ("second-budget-option-refused", doc(policies=["bbsched"],
                                         budgets=[None, {"name": "x", "window": -1}]),
     "budgets[1].window", "policy 'bbsched': window must be >= 1"),
    # executions
    ("executions-mapping", doc(executions={"a": 1}), "executions",
     "must be a list, got a mapping"),
    ("execution-not-text", doc(executions=["rigid", 1.5j]), "executions[1]",
     "must be text, got 1.5j"),
    ("execution-key-not-text", doc(executions=[{"name": "rigid", 1: 2}]), "executions[0]",
     "keys must be text, got 1"),
    ("execution-name-not-text", doc(executions=[{"name": []}]), "executions[0].name",
     "must be text, got a list"),
    ("execution-without-name", doc(executions=[{"label": "x"}]), "executions[0].name",
     "unknown execution model ''; known: checkpoint, exclusive-io, io-contention, phased-io, "
     "rigid"),
    ("execution-label-not-text", doc(executions=[{"name": "rigid", "label": {}}]),
     "executions[0].label", "must be text, got a mapping"),
    ("execution-unknown-option", doc(executions=["checkpoint", {"name": "rigid", "label": "r",
                                                                "speed": 1}]),
     "executions[1].speed", "execution model 'rigid' has no option 'speed'; its options: none"),
    ("execution-option-unreadable", doc(executions=[{"name": "checkpoint",
                                                     "memory_per_node": "x"}]),
     "executions[0].memory_per_node", BYTES),
    ("execution-label-taken", doc(executions=[{"name": "rigid", "label": "a"},
                                              {"name": "checkpoint", "label": "a"}]),
     "executions[1]", "two execution models with one label; give one a 'label'"),
]


@pytest.mark.parametrize("d, field, reason", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_refusal_names_the_spec_the_fields_path_and_the_reason(d, field, reason):
    e = refusal(d)
    assert (e.source, e.line, e.field, e.reason) == ("s.yaml", None, field, reason)
    assert str(e) == f"s.yaml, field {field!r}: {reason}"


def test_the_quick_section_is_required_by_quick_and_checked_as_a_spec():
    e = refusal(doc(), quick=True)
    assert str(e) == "s.yaml, field 'quick': has no 'quick' section for --quick"
    assert str(refusal(doc(quick=[1]), quick=True)) == \
        "s.yaml, field 'quick': must be a mapping, got a list"
    e = refusal(doc(quick={"quick": {}}), quick=True)
    assert e.field == "quick.quick"
    assert e.reason == f"unknown key; known: {TOP.replace('quick, ', '')}"
    # without --quick, the section is not merged (its error is not reached)
    assert parse_spec(doc(quick={"seeds": [1, 2]}), source="s.yaml").seeds == [0]


def test_an_unknown_name_is_refused_with_the_registrys_message():
    from bbopt.policies import policy_options
    from bbopt.workloads.generators.catalog import generator

    e = refusal(doc(policies=["fcfs-bb", "nope"]))
    assert (e.source, e.field) == ("s.yaml", "policies[1].name")
    assert e.reason == unknown(lambda: policy_options("nope"))
    e = refusal(doc(policies=[{"label": "x"}]))  # no name: the name ''
    assert (e.source, e.field) == ("s.yaml", "policies[0].name")
    assert e.reason == unknown(lambda: policy_options(""))
    e = refusal(gen("nope"))
    assert (e.source, e.field) == ("s.yaml", "workloads.w.generator.name")
    assert e.reason == unknown(lambda: generator("nope"))
    e = refusal(wl(transforms=["lognormal-bb", "nope"]))
    assert (e.source, e.field) == ("s.yaml", "workloads.w.transforms[1].name")
    assert e.reason == unknown(lambda: generator("nope"))


def test_an_unknown_platform_lists_the_known_names():
    from bbopt.loading import PLATFORMS

    e = refusal(doc(platforms=["kopanski", "nowhere"]))
    assert (e.source, e.field) == ("s.yaml", "platforms[1]")
    assert e.reason == (f"platform 'nowhere' is neither a known name ({', '.join(PLATFORMS)}) "
                        "nor a file")


class Picky:
    """A policy taking any keyword that refuses the option ``bad`` (a ValueError: named by
    its first option) and ``lonely`` (an InputError naming no field)."""

    io_aware = False

    def __init__(self, name: str = "picky", **options) -> None:
        if "bad" in options:
            raise ValueError(f"bad is not an option, got {options['bad']}")
        if "lonely" in options:
            raise InputError("a lonely option needs a partner")
        self.name, self.options = name, options

    def decide(self, state):
        from bbopt.core import Decision

        return Decision()


@pytest.fixture
def picky(registered):
    return registered("test-picky", Picky)


def test_a_budget_entry_is_checked_by_a_policy_taking_any_keyword(picky):
    e = refusal(doc(policies=["fcfs-bb", picky], budgets=[None, {"name": "b", "bad": 7}]))
    assert str(e) == "s.yaml, field 'budgets[1].bad': policy 'test-picky': bad is not an " \
        "option, got 7"
    spec = parse_spec(doc(policies=[picky], budgets=[{"name": "b", "good": 7}]), source="s")
    assert spec.budgets == {"b": {"good": 7}}


def test_an_error_naming_no_option_names_the_options_or_the_budget_entry(picky):
    e = refusal(doc(policies=[{"name": picky, "options": {"lonely": 1}}]))
    assert str(e) == "s.yaml, field 'policies[0].options': a lonely option needs a partner"
    e = refusal(doc(policies=[picky], budgets=[None, {"name": "b", "lonely": 1}]))
    assert str(e) == "s.yaml, field 'budgets[1]': a lonely option needs a partner"


def test_a_top_level_key_that_is_not_text_names_the_spec_only():
    e = refusal({1: 2, **doc()})
    assert (e.source, e.field, e.reason) == ("s.yaml", None, "keys must be text, got 1")
    assert str(e) == "s.yaml: keys must be text, got 1"


def test_a_document_expanding_past_the_limit_is_refused_naming_the_spec():
    from bbopt.units import MAX_EXPANDED

    bomb: list = [0] * 10
    for _ in range(6):  # 10 ** 7 values through shared lists (YAML aliases)
        bomb = [bomb] * 10
    e = refusal(doc(description=bomb))
    assert str(e) == f"s.yaml: expands (through YAML aliases) to more than {MAX_EXPANDED:,} " \
        "values"


def test_a_spec_given_no_source_is_named_spec():
    with pytest.raises(InputError) as err:
        parse_spec(doc(seeds=[]))
    assert str(err.value) == "<spec>, field 'seeds': must not be empty"

"""Sweep specifications are checked like every other input: a field of the wrong kind, shape or
range is an :class:`InputError` naming the field's path, never a traceback or a grid of 0 runs;
policy and execution options are checked before the sweep starts; YAML aliases that expand
exponentially are refused in every field."""

from __future__ import annotations

import copy
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bbopt.analysis.sweep_spec import load_spec, parse_spec
from bbopt.errors import InputError

BASE = {
    "name": "t",
    "workloads": {"syn": {"generator": {"name": "kth-like", "n_jobs": 50},
                          "transforms": [{"name": "max-nodes", "nodes": 96}],
                          "split": {"parts": 2, "length": "1d"}, "first": 40}},
    "platforms": ["kopanski", {"name": "small", "nodes": 64, "bb": "320GB"}],
    "policies": ["fcfs-bb", {"name": "conservative-bb", "options": {"depth": 5}},
                 {"name": "plan-2", "sweep": {"max_queue": [20, 40]}}],
    "seeds": [0, 1],
    "budgets": [None, {"name": "det", "budget": 2, "deterministic": 1}],
    "executions": ["rigid", {"name": "checkpoint", "memory_per_node": "64GB"}],
    "warmup": "1h",
    "reference": "fcfs-bb",
    "metrics": ["mean_wait"],
}


def parse(doc):
    return parse_spec(doc, source="spec.yaml")


def test_the_base_spec_is_valid():
    spec = parse(BASE)
    # parts x platforms x policies x seeds x budgets x executions, less the "det" budget of
    # the two policies without a solver budget (the same runs as their default)
    assert len(spec.cells()) == 2 * 2 * 4 * 2 * 2 * 2 - 2 * (2 * 2 * 2 * 2)
    assert spec.executions["checkpoint"]["memory_per_node"] == 64e9


def _with(path, value):
    doc = copy.deepcopy(BASE)
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


@pytest.mark.parametrize("path, value, field", [
    (("platforms", 1, "nodes"), "many", "platforms[1].nodes"),
    (("platforms", 1, "nodes"), 0, "platforms[1].nodes"),
    (("platforms", 1, "nodes"), -3, "platforms[1].nodes"),
    (("platforms", 1, "bb"), [1], "platforms[1].bb"),
    (("platforms", 1, "bb"), "-5GB", "platforms[1].bb"),
    (("platforms", 1, "node_ssd"), 1, "platforms[1].node_ssd"),
    (("platforms",), 5, "platforms[0]"),
    (("workloads",), 5, "workloads"),
    (("workloads", "syn"), 5, "workloads.syn"),
    (("workloads", "syn", "split"), {"parts": 0}, "workloads.syn.split.parts"),
    (("workloads", "syn", "split"), {"parts": "2"}, "workloads.syn.split.parts"),
    (("workloads", "syn", "split"), {"parts": 2, "length": "soon"},
     "workloads.syn.split.length"),
    (("workloads", "syn", "first"), 0, "workloads.syn.first"),
    (("workloads", "syn", "first"), "ten", "workloads.syn.first"),
    (("workloads", "syn", "parts"), [2], "workloads.syn.parts"),
    (("workloads", "syn", "transforms"), [{"name": "max-nodes", "nodes": "x"}],
     "workloads.syn.transforms[0].nodes"),
    (("workloads", "syn", "generator"), {"name": "kth-like", "n_jobs": [1]},
     "workloads.syn.generator.n_jobs"),
    (("policies",), {"fcfs": 1}, "policies"),
    (("policies", 1, "options"), {"depth": "deep"}, "policies[1].options.depth"),
    (("policies", 1, "options"), [1], "policies[1].options"),
    (("policies", 2, "sweep"), {"max_queue": []}, "policies[2].sweep.max_queue"),
    (("policies", 2, "sweep"), {"depht": [1]}, "policies[2].sweep.depht"),
    (("policies", 1, "options"), {"depht": 1}, "policies[1].options.depht"),
    (("seeds",), ["0"], "seeds[0]"),
    (("seeds",), [-1], "seeds[0]"),
    (("seeds",), [], "seeds"),
    (("budgets",), [-1], "budgets[0]"),
    (("budgets",), [{"name": "x", "budget": "long"}], "budgets[0].budget"),
    (("budgets",), [10**400], "budgets[0]"),  # (too large for a float: was OverflowError)
    (("budgets",), [float("inf")], "budgets[0]"),
    (("platforms",), [{"name": "s", "nodes": 8, "bb": {"sized_by": "syn", "demand": 10**400}}],
     "platforms[0].bb.demand"),
    (("executions",), [{"name": "checkpoint", "memory_per_node": "lots"}],
     "executions[0].memory_per_node"),
    (("executions",), [{"name": "checkpoint", "speed": 2}], "executions[0].speed"),
    (("executions",), [{"name": 3}], "executions[0].name"),
    (("warmup",), "-1d", "warmup"),
    (("warmup",), [1], "warmup"),
    (("tick",), 0, "tick"),
    (("metrics",), {"a": 1}, "metrics"),
    (("exclude",), [{"seed": [0, 1]}], "exclude"),
    (("exclude",), [5], "exclude[0]"),
    (("description",), {"a": [1, 2]}, "description"),
    (("name",), ["x"], "name"),
    (("budget_mode",), "fast", "budget_mode"),
])
def test_a_bad_field_is_an_error_naming_its_path(path, value, field):
    with pytest.raises(InputError) as err:
        parse(_with(path, value))
    assert err.value.field == field
    assert err.value.source == "spec.yaml"


def test_policy_options_are_checked_before_the_sweep_starts():
    # a value the policy's constructor refuses, in options, in a swept value, in a budget
    with pytest.raises(InputError, match="depth") as err:
        parse(_with(("policies", 1, "options"), {"depth": -2}))
    assert err.value.field == "policies[1].options.depth"
    with pytest.raises(InputError) as err:
        parse(_with(("policies", 2, "sweep"), {"max_queue": [5, "x"]}))
    assert err.value.field == "policies[2].options.max_queue"
    with pytest.raises(InputError) as err:
        parse(_with(("budgets",), [{"name": "b", "budget": 1, "budget_mode": "fast"}]))
    assert err.value.field == "budgets[0].budget_mode"


VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-10**30, 10**30) | st.floats()
    | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=6)


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for k, v in enumerate(node):
            yield from _paths(v, (*prefix, k))


PATHS = [p for p in _paths(BASE) if p]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(PATHS), VALUES)
@example(("workloads", "syn", "split", "parts"), 10**30)  # (was a grid enumerated forever)
@example(("budgets",), 10**400)  # (a number too large for a float: was OverflowError)
def test_any_value_anywhere_is_valid_or_an_input_error(path, value):
    try:
        spec = parse(_with(path, value))
    except InputError:
        return
    assert spec.cells()  # never silently 0 runs


BOMB = """\
report:
  a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]
  b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
  c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
  d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
  e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
  f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
  g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
workloads: {w: {generator: kth-like}}
policies: [fcfs]
"""


@pytest.mark.parametrize("line", ["description: *g", "name: *g", "metrics: *g", ""])
def test_an_alias_bomb_in_a_free_text_field_is_refused_at_once(tmp_path, line):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB + line + "\n")
    t0 = time.process_time()
    with pytest.raises(InputError, match="expands") as err:
        load_spec(path)
    assert err.value.source == str(path)
    assert time.process_time() - t0 < 5  # (a bound on the work, not a benchmark)
    with pytest.raises(InputError, match="expands"):  # a document built in Python too
        import yaml

        parse(yaml.safe_load(BOMB + line + "\n"))


def test_a_workload_is_cut_into_at_most_max_parts():
    from bbopt.limits import MAX_PARTS

    doc = _with(("workloads", "syn", "split"), {"parts": MAX_PARTS + 1})
    with pytest.raises(InputError, match=f"must be <= {MAX_PARTS:,}") as err:
        parse(doc)
    assert err.value.field == "workloads.syn.split.parts"


@pytest.mark.parametrize("limit, ok", [(63, False), (64, True), (65, True)])
def test_a_grid_holds_at_most_max_cells_runs_counted_before_it_is_drawn(monkeypatch, limit, ok):
    import bbopt.analysis.sweep_spec as sweep_spec

    monkeypatch.setattr(sweep_spec, "MAX_CELLS", limit)
    # 2 parts x 2 platforms x 4 policies x 2 seeds x 2 budgets x 2 executions = 128 drawn,
    # 64 once the zip of seeds with executions pairs them
    doc = _with(("zip",), [["seeds", "executions"]])
    if ok:
        assert len(parse(doc).cells()) == 64 - 2 * 2 * 2 * 2
    else:
        with pytest.raises(InputError, match="the grid has 64 runs, more than 63") as err:
            parse(doc)
        assert err.value.field == "grid"

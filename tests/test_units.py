"""The one option vocabulary: options declared by a constructor's signature, read and checked by
:func:`bbopt.units.check_options` for policies (``-o``, ``decide``), execution models
(``--execution NAME:KEY=VALUE``, ``--checkpoint``) and sweep specifications, with units."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Annotated, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bbopt.cli import main
from bbopt.errors import InputError
from bbopt.policies import make_policy
from bbopt.units import Bandwidth, Bytes, Seconds, check_options


def _target(size: Annotated[float, Bytes] = 1.0, rate: Annotated[float, Bandwidth] = 1.0,
            period: Annotated[float, Seconds] = 60.0, depth: int = 3,
            cap: float | None = None, flag: bool = True, mode: str = "a") -> None:
    """A constructor-like signature with every kind of option."""


def test_quantities_are_read_in_si_units():
    got = check_options(_target, {"size": "64GB", "rate": "10MB/s", "period": "2h"},
                        what="t")
    assert got == {"size": 64e9, "rate": 10e6, "period": 7200.0}
    assert check_options(_target, {"size": "1KiB"}, what="t") == {"size": 1024.0}
    assert check_options(_target, {"size": 5, "cap": None}, what="t") == {"size": 5,
                                                                          "cap": None}


@pytest.mark.parametrize("options, message", [
    ({"size": "64 parsecs"}, "size"),
    ({"depth": 2.5}, "an integer"),
    ({"depth": True}, "an integer"),
    ({"cap": "x"}, "a number or null"),
    ({"flag": 1}, "true/false"),
    ({"mode": 3}, "text"),
    ({"period": float("nan")}, "finite"),
    ({"period": 10**400}, "finite number, got an integer of 401 digits"),
    ({"cap": -(10**400)}, "finite number"),
    ({"nope": 1}, "no option 'nope'"),
])
def test_wrong_kinds_are_refused_naming_the_field(options, message):
    with pytest.raises(InputError, match=message) as err:
        check_options(_target, options, what="policy 't'", prefix="-o ")
    assert err.value.field == f"-o {next(iter(options))}"


def test_an_integer_is_a_number_up_to_the_largest_float():
    """A JSON or YAML integer for a quantity: up to the largest finite float it is that number;
    one more has no float (a budget of 10^400 gave an OverflowError traceback)."""
    largest = int(sys.float_info.max)
    assert check_options(_target, {"period": largest}, what="t") == {"period": largest}
    assert check_options(_target, {"period": -largest}, what="t") == {"period": -largest}
    for beyond in (largest + 1, -largest - 1):
        with pytest.raises(InputError, match="finite number"):
            check_options(_target, {"period": beyond}, what="t")
    assert check_options(_target, {"depth": 10**400}, what="t") == {"depth": 10**400}


@given(st.floats(min_value=1e-6, max_value=1e6, allow_nan=False))
def test_a_size_with_a_unit_is_the_number_times_the_unit(x):
    got = check_options(_target, {"size": f"{x!r}GB", "rate": f"{x!r}GiB/s"}, what="t")
    assert got["size"] == pytest.approx(x * 1e9)
    assert got["rate"] == pytest.approx(x * 1024**3)


def test_policy_options_take_units_on_every_surface():
    # -o memory_per_node=64GB was refused ("needs a number") while --checkpoint took it
    p = make_policy("omfs", memory_per_node="64GB", checkpoint_bandwidth="2GB/s",
                    quantum="30min")
    assert (p.memory_per_node, p.checkpoint_bandwidth, p.quantum) == (64e9, 2e9, 1800.0)
    with pytest.raises(InputError, match="memory_per_node"):
        make_policy("omfs", memory_per_node="lots")


def test_the_command_line_reads_units_in_o_and_execution_options(capsys):
    args = ["compare", "--jobs", "40", "--policies", "fcfs-bb", "--no-progress",
            "--format", "json", "--execution", "checkpoint:memory_per_node=1GB,target=bb"]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out)["fcfs-bb"]["finished"] == 40
    assert main([*args[:-1], "checkpoint:memory_per_node=1 parsec"]) == 2
    err = capsys.readouterr().err
    assert "memory_per_node" in err and "Traceback" not in err
    assert main(["simulate", "--jobs", "30", "--policy", "fcfs-bb", "--no-progress",
                 "--execution", "rigid:speed=2"]) == 2
    assert "no option 'speed'" in capsys.readouterr().err


def test_generator_parameters_go_through_the_same_checks(tmp_path, capsys):
    out = str(tmp_path / "w.swf")
    assert main(["generate", "kth-like", "n_jobs=abc", "--out", out]) == 2
    err = capsys.readouterr().err
    assert "n_jobs" in err and "an integer" in err and "Traceback" not in err
    assert main(["generate", "kth-like", "n_jobs=20", "--out", out]) == 0


#: Option names that are quantities, with the unit they must declare.
QUANTITY_NAMES = {"budget": "seconds", "audit_budget": "seconds", "quantum": "seconds",
                  "half_life": "seconds", "checkpoint_interval": "seconds",
                  "memory_per_node": "bytes", "bandwidth": "bytes/s",
                  "checkpoint_bandwidth": "bytes/s", "pfs_bandwidth": "bytes/s",
                  "bb_bandwidth": "bytes/s", "local_bb_bandwidth": "bytes/s"}


def _declared_units(registry):
    from bbopt.units import _kinds, option_parameters

    out = {}
    for name in registry.names():
        for key, param in option_parameters(registry.get(name).obj).items():
            if key in QUANTITY_NAMES:
                out[(name, key)] = getattr(_kinds(param.annotation)[1], "name", None)
    return out


def test_every_quantity_option_of_a_policy_or_execution_model_declares_its_unit():
    from bbopt.policies.registry import POLICIES
    from bbopt.simulation.execution import EXECUTION_MODELS

    declared = {**_declared_units(POLICIES), **_declared_units(EXECUTION_MODELS)}
    assert ("plan-2", "budget") in declared and ("exclusive-io", "bandwidth") in declared
    wrong = {k: unit for k, unit in declared.items() if unit != QUANTITY_NAMES[k[1]]}
    assert wrong == {}


@pytest.mark.parametrize(("policy", "options", "attribute", "si"), [
    ("plan-2", {"budget": "2min"}, "budget", 120.0),
    ("plan-2", {"audit_budget": "1h"}, "audit_budget", 3600.0),
    ("bbsched", {"budget": "90s"}, "budget", 90.0),
    ("io-window", {"budget": "0.5s"}, "budget", 0.5),
    ("pack-opt", {"budget": "2m"}, "budget", 120.0),
    ("pack-opt", {"bandwidth": "18MB/s"}, "bandwidth", 18e6),
    ("io-list", {"bandwidth": "1GB/s"}, "bandwidth", 1e9),
    ("fair-share", {"half_life": "1d"}, "half_life", 86400.0),
])
def test_policy_quantities_accept_units(policy, options, attribute, si):
    value = getattr(make_policy(policy, **options), attribute)
    assert getattr(value, "seconds", value) == pytest.approx(si)
    with pytest.raises(InputError, match=attribute):
        make_policy(policy, **{next(iter(options)): "3 parsecs"})


def test_execution_model_quantities_accept_units():
    from bbopt.simulation.execution import make_execution_model

    m = make_execution_model("io-contention", checkpoint_interval="30min",
                             local_bb_bandwidth="2GB/s")
    assert (m.checkpoint_interval, m.local_bb_bandwidth) == (1800.0, 2e9)
    assert make_execution_model("exclusive-io", bandwidth="18MB/s").bandwidth == (18e6,)


def test_the_command_line_takes_a_budget_with_a_unit(capsys):
    args = ["compare", "--jobs", "30", "--policies", "plan-2", "--no-progress",
            "--format", "json"]
    assert main([*args, "-o", "budget=50 parsecs"]) == 2
    assert "budget" in capsys.readouterr().err
    outs = []
    for budget in ("0.05s", "50ms"):
        assert main([*args, "-o", f"budget={budget}"]) == 0
        outs.append(json.loads(capsys.readouterr().out)["plan-2"])
    assert outs[0]["finished"] == outs[1]["finished"] == 30
    assert outs[0]["mean_wait"] == outs[1]["mean_wait"]  # (deterministic: the same budget)


@pytest.mark.parametrize(("text", "seconds"), [("250ms", 0.25), ("1.5s", 1.5), ("2m", 120.0),
                                               ("2min", 120.0), ("1h", 3600.0), ("1d", 86400.0),
                                               ("90", 90.0)])
def test_durations_in_every_unit(text, seconds):
    from bbopt.units import parse_seconds

    assert parse_seconds(text) == pytest.approx(seconds)


def test_generator_quantities_accept_units(tmp_path, capsys):
    from bbopt.units import _kinds, option_parameters
    from bbopt.workloads.generators.catalog import GENERATORS
    from bbopt.workloads.swf import read_swf

    for name, key, unit in (("herbein", "duration", "seconds"), ("io-rate", "per_node", "bytes/s")):
        ann = option_parameters(GENERATORS.get(name).obj)[key].annotation
        assert _kinds(ann)[1].name == unit
    jobs = {}
    for text in ("2d", "172800"):
        out = tmp_path / f"{text}.swf"
        assert main(["generate", "herbein", "n_jobs=30", f"duration={text}", "--out",
                     str(out)]) == 0
        jobs[text] = [(j.submit, j.walltime, j.nodes) for j in read_swf(out).jobs]
    assert jobs["2d"] == jobs["172800"] and max(s for s, _, _ in jobs["2d"]) <= 172800
    assert main(["generate", "io-rate", "per_node=18MB/s", "--workload", str(tmp_path / "2d.swf"),
                 "--out", str(tmp_path / "io.swf")]) == 0
    assert main(["generate", "io-rate", "per_node=fast", "--workload", str(tmp_path / "2d.swf"),
                 "--out", str(tmp_path / "bad.swf")]) == 2
    assert "per_node" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# every refusal's reason and field, every branch of the kind check (hand-written expectations)


def _error(call, *args, **kwargs) -> InputError:
    with pytest.raises(InputError) as err:
        call(*args, **kwargs)
    return err.value


def test_a_duration_without_a_known_unit_names_the_units_and_its_field():
    from bbopt.units import parse_seconds

    e = _error(parse_seconds, "5 parsecs")
    assert (e.field, e.reason) == ("seconds", "cannot read '5 parsecs'; use a number with a "
                                   "unit among ms, s, m, min, h, d")
    assert _error(parse_seconds, "5y", "-o budget").field == "-o budget"


def test_key_value_options_are_json_when_they_parse_and_text_otherwise():
    from bbopt.units import parse_options

    got = parse_options(["a=3", "b=true", "c=[1, 2]", "d=fast", "max-queue=5", " k =1",
                         "e=b=c", "f=", "my-mode=fast-ish"])
    assert got == {"a": 3, "b": True, "c": [1, 2], "d": "fast", "max_queue": 5, "k": 1,
                   "e": "b=c", "f": "", "my_mode": "fast-ish"}
    for pair in ("=x", "novalue", "="):
        e = _error(parse_options, [pair])
        assert (e.field, e.reason) == ("-o", f"option {pair!r} is not KEY=VALUE")
    assert _error(parse_options, ["x"], "--execution").field == "--execution"


def _loose(depth=3, flag=True, mode="a", cap=None, req=None, items=(1,), *args,
           fn: Callable[..., Any] | str = "fcfs", seed: int = 0, name: str = "x",
           doc: Annotated[float, "a note"] = 1.0, opt: Annotated[float, Bytes] | None = None,
           either: Annotated[float, Seconds] | list = 0.0, text: float | str = 1.0,
           wide: int | float = 0) -> None:
    """Unannotated options judged by their default, and the annotations' corners."""


def test_an_unannotated_option_is_judged_by_its_default():
    ok = {"depth": 2.5, "flag": False, "mode": "b", "cap": "anything", "req": [1],
          "items": (2, 3)}
    assert check_options(_loose, ok, what="t") == ok
    for options, reason in (({"depth": "x"}, "t needs a number, got 'x'"),
                            ({"depth": True}, "t needs a number, got True"),
                            ({"flag": 1}, "t needs true/false, got 1"),
                            ({"mode": 3}, "t needs text, got 3")):
        assert _error(check_options, _loose, options, what="t").reason == reason
    assert check_options(_target, {"cap": "18e6"}, what="t") == {"cap": 18e6}


def test_a_required_option_and_one_of_an_unknown_type_pass_unchecked():
    def required(x, y: list = "z") -> None:  # (a default outside the annotation)
        """"""

    assert check_options(required, {"x": 3, "y": 4}, what="t") == {"x": 3, "y": 4}
    assert check_options(_loose, {"fn": len}, what="t") == {"fn": len}


def test_annotations_without_a_unit_or_mixing_kinds():
    from bbopt.units import _kinds

    assert _kinds(Annotated[float, "a note"]) == ({float}, None)
    assert _kinds(Annotated[float, Bytes] | None) == ({float, type(None)}, Bytes)
    assert _kinds(Annotated[float, Seconds] | list) == (None, Seconds)
    assert _kinds(list | Annotated[float, Seconds]) == (None, None)
    assert check_options(_loose, {"doc": 2, "opt": "1kB", "either": "1min"}, what="t") == \
        {"doc": 2, "opt": 1000.0, "either": 60.0}
    assert check_options(_loose, {"either": [1]}, what="t") == {"either": [1]}
    assert check_options(_loose, {"text": "18e6", "wide": 10**400}, what="t") == \
        {"text": "18e6", "wide": 10**400}
    assert check_options(_loose, {"text": 2.5, "opt": None}, what="t") == \
        {"text": 2.5, "opt": None}


@pytest.mark.parametrize(("options", "reason"), [
    ({"depth": 2.5}, "t needs an integer, got 2.5"),
    ({"size": [1]}, "t needs a number (or text with a unit of bytes), got [1]"),
    ({"rate": True}, "t needs a number (or text with a unit of bytes/s), got True"),
    ({"cap": "inf"}, "t needs a number or null, got 'inf'"),
    ({"cap": "nan"}, "t needs a number or null, got 'nan'"),
    ({"cap": "1e999"}, "t needs a number or null, got '1e999'"),
    ({"period": float("inf")}, "t needs a finite number, got inf"),
    ({"depth": float("-inf")}, "t needs a finite number, got -inf"),
])
def test_each_refused_value_is_named_with_what_wanted_it(options, reason):
    e = _error(check_options, _target, options, what="t", prefix="-o ")
    assert (e.reason, e.field) == (reason, f"-o {next(iter(options))}")


def test_a_seed_is_an_integer_from_zero():
    assert check_options(_loose, {"seed": 0}, what="t") == {"seed": 0}
    e = _error(check_options, _loose, {"seed": -1}, what="t", prefix="p.")
    assert (e.reason, e.field) == ("a seed must be an integer >= 0, got -1", "p.seed")
    assert check_options(_target, {"depth": -1}, what="t") == {"depth": -1}


def test_unknown_fixed_and_name_options_are_refused_listing_the_others():
    e = _error(check_options, _target, {"nope": 1}, what="policy 'p'")
    assert (e.field, e.reason) == ("nope", "policy 'p' has no option 'nope'; its options: "
                                   "cap, depth, flag, mode, period, rate, size")
    e = _error(check_options, _target, {"mode": "b"}, what="policy 'p'", fixed={"mode": "b"},
               prefix="-o ", name_prefix="policies[0].")
    assert (e.field, e.reason) == ("policies[0].mode",
                                   "option 'mode' is fixed by the name of policy 'p'")
    e = _error(check_options, _target, {"nope": 1}, what="t", fixed={"mode": "b", "cap": 1},
               prefix="-o ", name_prefix="policies[0].")
    assert (e.field, e.reason) == ("policies[0].nope", "t has no option 'nope'; its options: "
                                   "depth, flag, period, rate, size")
    assert _error(check_options, _loose, {"name": "y"}, what="t").reason.endswith(
        "its options: cap, depth, doc, either, flag, fn, items, mode, opt, req, seed, text, wide")

    def nothing() -> None:
        """"""

    assert _error(check_options, nothing, {"x": 1}, what="t").reason == \
        "t has no option 'x'; its options: none"


def test_a_constructor_taking_any_keyword_passes_unknown_options_on_but_not_name():
    def anything(depth: int = 1, name: str = "", **kwargs) -> None:
        """"""

    got = check_options(anything, {"x": [1], "y": "z", "depth": 2}, what="t")
    assert got == {"x": [1], "y": "z", "depth": 2}
    e = _error(check_options, anything, {"x": 1, "name": "n"}, what="t", prefix="-o ")
    assert (e.field, e.reason) == ("-o name", "t has no option 'name'; its options: depth")
    assert _error(check_options, anything, {"depth": "x"}, what="t").reason == \
        "t needs an integer, got 'x'"


# --------------------------------------------------------------------------------------------
# documents: every refusal names the file; the expansion count by hand


def test_each_unreadable_document_is_refused_naming_the_file(tmp_path):
    from bbopt.units import read_document

    cases = {"bad.json": (b'{"a": "\xff"}', "not UTF-8 text (byte 7)"),
             "yaml.json": (b"a: 1\n", "cannot read: Expecting value: line 1 column 1 (char 0)"),
             "deep.json": (b"[" * 100_000 + b"]" * 100_000, "nested deeper than 200 levels"),
             "flow.yaml": (b"a: [1, 2\nb: 3\n", "cannot read: while parsing a flow sequence in "
                           "\"<unicode string>\", line 1, column 4: a: [1, 2 ^ expected ',' or "
                           "']', but got ':' in \"<unicode string>\", line 2, column 2: b: 3 ^")}
    for name, (data, reason) in cases.items():
        (tmp_path / name).write_bytes(data)
        e = _error(read_document, tmp_path / name)
        assert (e.source, e.line, e.reason) == (str(tmp_path / name), None, reason)
    e = _error(read_document, tmp_path)
    assert (e.source, e.reason) == (str(tmp_path), "is a directory, not a file")
    e = _error(read_document, tmp_path / "missing.json")
    assert (e.source, e.reason) == (str(tmp_path / "missing.json"),
                                    "cannot read: No such file or directory")


def test_yml_is_yaml_and_aliases_are_checked_naming_the_file(tmp_path):
    from bbopt.units import read_document

    (tmp_path / "a.yml").write_text("a: 1\nb: [x, y]\n")
    assert read_document(tmp_path / "a.yml") == {"a": 1, "b": ["x", "y"]}
    cyclic = tmp_path / "c.yaml"
    cyclic.write_text("a: &x [*x]\n")
    e = _error(read_document, cyclic)
    assert (e.source, e.line, e.reason) == (str(cyclic), "$.a[0]",
                                            "contains itself (a YAML alias cycle)")
    laughs = tmp_path / "l.yaml"
    rows = ["a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"] + [
        f"{b}: &{b} [{', '.join([f'*{a}'] * 10)}]" for a, b in zip("abcde", "bcdef", strict=True)]
    laughs.write_text("\n".join(rows) + "\n")
    e = _error(read_document, laughs)
    assert (e.source, e.reason) == (str(laughs), "expands (through YAML aliases) to more than "
                                    "1,000,000 values")


def test_the_expansion_counts_each_value_key_and_container_once_per_use():
    from bbopt.units import check_expansion

    x = [1, 2]                                 # 1 + 2 = 3
    cases = [([1, 2, 3], 4), ({"a": 1}, 3),    # a dict: itself, its values and its keys
             ({"a": {"b": [1]}}, 6),           # [1]: 2; {"b": [1]}: 1 + 2 + 1; root: 1 + 4 + 1
             ([x, x, x], 10),                  # 1 + 3 * 3, x walked once
             ({"k": [x, {"y": x}]}, 11)]       # {"y": x}: 1 + 3 + 1; list: 1 + 3 + 5; root: +2
    cases += [([], 1), ({}, 1)]
    for doc, size in cases:
        check_expansion(doc, "s", limit=size)  # at the limit: kept
        e = _error(check_expansion, doc, "s", limit=size - 1)
        assert (e.source, e.reason) == ("s", f"expands (through YAML aliases) to more than "
                                        f"{size - 1:,} values")
    for scalar in (5, "text", None):
        check_expansion(scalar, "s", limit=0)
    chain: list = [1]
    for _ in range(60):                        # 2^61 values, 61 containers walked once each
        chain = [chain, chain]
    check_expansion(chain, "s", limit=2**62)
    assert _error(check_expansion, chain, "s").reason.endswith("more than 1,000,000 values")

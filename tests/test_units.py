"""The one option vocabulary: options declared by a constructor's signature, read and checked by
:func:`bbopt.units.check_options` for policies (``-o``, ``decide``), execution models
(``--execution NAME:KEY=VALUE``, ``--checkpoint``) and sweep specifications, with units."""

from __future__ import annotations

import json
import sys
from typing import Annotated

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

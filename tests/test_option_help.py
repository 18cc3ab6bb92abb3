"""`bbopt policies -v`: every option with its meaning, unit and the default the commands apply."""

from __future__ import annotations

import argparse
import inspect

import pytest

from bbopt.cli import main
from bbopt.option_help import MEANINGS, describe
from bbopt.policies import available_policies, policy_options


def test_every_option_of_every_policy_has_a_meaning():
    missing = sorted({k for n in available_policies() for k in policy_options(n)
                      if k != "**" and k not in MEANINGS})
    assert missing == []


@pytest.mark.parametrize("key, default, expected", [
    ("budget", 0.05, "budget = 0.05 s"),
    ("window", 20, "window = 20 jobs"),
    ("depth", 1000, "depth = 1000 jobs"),
    ("checkpoint_bandwidth", 1e9, "checkpoint_bandwidth = 1 GB/s"),
    ("half_life", 604800.0, "half_life = 604800 s (7 d)"),
    ("quantum", 59.0, "quantum = 59 s"),
    ("quantum", 60.0, "quantum = 60 s (1 min)"),
    ("quantum", 3600.0, "quantum = 3600 s (1 h)"),
    ("reserve_bb", True, "reserve_bb = True"),
    ("backend", "cpsat", "backend = cpsat"),
    ("audit", None, "audit = no audit"),
    ("shares", inspect.Parameter.empty, "shares = (required)"),
])
def test_values_in_their_units(key, default, expected):
    assert describe(key, default).split(":")[0] == expected


def test_policies_v_shows_meanings_and_the_commands_defaults(capsys):
    assert main(["policies", "-v"]) == 0
    out = capsys.readouterr().out
    options = [ln.strip() for ln in out.splitlines() if ln.strip().startswith("-o ")]
    assert options and all(": " in ln for ln in options)  # every option explained
    assert not any("= None" in ln for ln in options)
    assert "-o budget_mode = deterministic (simulate, compare, sweep; wall for decide)" in out
    assert "-o budget_mode = 'wall'" not in out


def _options(parser, path=("bbopt",)):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, (*path, name))
        elif not isinstance(action, argparse._HelpAction):
            yield " ".join(path), action


def test_every_option_of_every_command_has_help_and_names_its_default():
    from bbopt.cli import _parser

    options = list(_options(_parser()))
    assert len(options) > 100
    assert [(c, a.dest) for c, a in options if not a.help] == []
    from bbopt.option_help import HelpFormatter

    fmt = HelpFormatter("bbopt")
    for command, action in options:
        named = (action.option_strings and action.default is not argparse.SUPPRESS
                 and action.default not in (None, False, []))
        if named:  # the help says the default, in its own words or as "(default: X)"
            assert "default" in fmt._get_help_string(action), (command, action.dest)


def test_help_pages_show_defaults_and_the_version(capsys):
    for argv, shown in ((["simulate", "--help"], "(default: fcfs-bb)"),
                        (["compare", "--help"], "a table, CSV or JSON (default: table)"),
                        (["data", "fetch", "--help"], "(default: 20)")):
        with pytest.raises(SystemExit) as done:
            main(argv)
        assert done.value.code == 0
        assert shown in " ".join(capsys.readouterr().out.split())
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.strip() == "bbopt 0.1.0"


@pytest.mark.parametrize("key, default, expected", [
    ("**", 1, "any keyword"),
    ("unknown_key", None, "unknown_key = not set"),
    ("unknown_key", 3, "unknown_key = 3"),
    ("unknown_key", inspect.Parameter.empty, "unknown_key = (required)"),
    ("deterministic", None, "deterministic = 0.5 per budget second [CP-SAT units]"),
    ("audit_budget", None, "audit_budget = not set [s]"),
    ("weights", None, "weights = equal"),
    ("budget", "auto", "budget = auto s"),
    ("budget", True, "budget = True s"),
    ("memory_per_node", 64e9, "memory_per_node = 64 GB"),
    ("memory_per_node", 1000005000.0, "memory_per_node = 1.00001 GB"),  # (6 digits, in GB)
    ("bandwidth", 18e6, "bandwidth = 0.018 GB/s"),
    ("quantum", 86399.0, "quantum = 86399 s (23.9997 h)"),
    ("quantum", 86400.0, "quantum = 86400 s (1 d)"),
    ("quantum", 3599.0, "quantum = 3599 s (59.9833 min)"),
    ("quantum", 7200, "quantum = 7200 s (2 h)"),
    ("tolerance", 0.05, "tolerance = 0.05 fraction"),
    ("racks", [2, 3], "racks = [2, 3]"),
    ("budget_mode", None, "budget_mode = deterministic (simulate, compare, sweep; wall for "
                          "decide)"),
])
def test_every_form_of_a_default(key, default, expected):
    assert describe(key, default).split(": ")[0] == expected


def test_a_line_ends_with_the_meaning_when_there_is_one():
    assert describe("window", 20) == "window = 20 jobs: waiting jobs considered at each decision"
    assert describe("unknown_key", 3) == "unknown_key = 3"
    assert describe("penalty", 0.0) == ("penalty = 0 node-seconds: cost added per eviction in "
                                        "the victim choice")


def test_the_help_names_a_default_only_when_worth_naming():
    from bbopt.option_help import HelpFormatter, Parser

    parser = Parser(prog="x")
    assert parser.formatter_class is HelpFormatter
    assert Parser("positional-prog", "its usage").format_usage() == "usage: its usage\n"
    assert Parser(prog="y", formatter_class=argparse.RawTextHelpFormatter).formatter_class \
        is argparse.RawTextHelpFormatter
    made = {
        "pos": parser.add_argument("pos", default="p", help="a positional"),
        "a": parser.add_argument("--a", default=3, help="an a"),
        "blank": parser.add_argument("--blank", default=3, help=""),
        "c": parser.add_argument("--c", default=None, help="c"),
        "d": parser.add_argument("--d", action="store_true", help="d"),
        "e": parser.add_argument("--e", default=[], help="e"),
        "f": parser.add_argument("--f", default=0, help="f"),
        "g": parser.add_argument("--g", default="x", help="g, default is x"),
        "s": parser.add_argument("--s", default=argparse.SUPPRESS, help="s"),
        "v": parser.add_argument("--version", action="version", version="1", default="1",
                                 help="v"),
        "h": parser.add_argument("--info", action="help", default="z", help="h"),
        "t": parser.add_argument("--t", action="store_true", default=True, help="t"),
    }
    fmt = HelpFormatter("x")
    got = {k: fmt._get_help_string(a) for k, a in made.items()}
    assert got == {"pos": "a positional", "a": "an a (default: %(default)s)",
                   "blank": "(default: %(default)s)", "c": "c", "d": "d", "e": "e",
                   "f": "f (default: %(default)s)", "g": "g, default is x", "s": "s", "v": "v",
                   "h": "h", "t": "t (default: %(default)s)"}
    assert "--a A an a (default: 3)" in " ".join(parser.format_help().split())

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

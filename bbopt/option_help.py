"""What each command-line and policy option means, its unit, and its default as applied.

:class:`Parser` is the command line's parser class: every option's help ends with its default
(``(default: 20)``) unless the help already names it or there is none to name.

``bbopt policies -v`` prints, under every policy, each option it takes (``-o KEY=VALUE``) with
a line from :data:`MEANINGS`, the unit of its value, and the default the command line actually
uses: ``budget_mode`` is ``deterministic`` under ``simulate``, ``compare`` and ``sweep`` (the
class default ``wall`` is :func:`bbopt.decide`'s), and an option whose default is ``None``
says what ``None`` stands for instead of printing it.
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any

#: option -> (meaning, unit or "", what a default of None means).
MEANINGS: dict[str, tuple[str, str, str]] = {
    "audit": ("solve every decision again exactly and report the gap (plan: exhaustive or "
              "cpsat; omfs-opt: compare with Algorithm 1's victims)", "", "no audit"),
    "audit_budget": ("time for each audit's exact solve", "s", ""),
    "audit_max_jobs": ("audit only decisions with at most this many waiting jobs", "jobs", ""),
    "backend": ("solver backend of the decision's model", "", ""),
    "backend_options": ("extra options handed to the backend (a dict)", "", "none"),
    "backfill": ("backfilling while a reservation or a pack waits (easy, greedy, none)", "", ""),
    "bandwidth": ("bandwidth of the shared I/O node", "bytes/s",
                  "the bandwidth the workload was generated for"),
    "budget": ("solver budget per decision, model building included", "s", ""),
    "budget_mode": ("how the budget is counted: deterministic caps work (same schedule on any "
                    "load), wall caps wall-clock time", "", ""),
    "checkpoint_bandwidth": ("checkpoint write bandwidth per node (victim cost)", "bytes/s", ""),
    "compiled": ("run the profile and compression compiled with numba", "",
                 "switch once the Python compression has looked at 400,000 reservations"),
    "decision_rule": ("how one selection is chosen from the Pareto set", "", ""),
    "depth": ("waiting jobs that hold a reservation", "jobs", ""),
    "deterministic": ("CP-SAT deterministic-time limit per decision in the deterministic mode",
                      "CP-SAT units", "0.5 per budget second"),
    "half_life": ("decay half-life of the usage (Slurm's PriorityDecayHalfLife)", "s", ""),
    "max_exact_jobs": ("above this many waiting jobs an exact backend hands over to annealing",
                       "jobs", "the backend's own limit"),
    "max_queue": ("plan only the first waiting jobs", "jobs", ""),
    "memory_per_node": ("checkpoint image per node when the trace has no memory field",
                        "bytes", ""),
    "objective": ("objective of the pack model (work, stretch-work, lexicographic)", "", ""),
    "objectives": ("objectives of the window model (nodes, bb, order, ssd, ssd_waste, "
                   "bandwidth)", "", "nodes and bb"),
    "order": ("base order of the queue or of the packs", "", ""),
    "penalty": ("cost added per eviction in the victim choice", "node-seconds", ""),
    "priority": ("objectives in lexicographic order (the constrained methods)", "", "none"),
    "protect": ("victim rule: strict (no entity below its entitlement) or over (the paper's)",
                "", ""),
    "quantum": ("time a job runs before it may be evicted", "s", ""),
    "racks": ("racks, each with its own I/O node: a number of equal racks or their sizes", "",
              ""),
    "reserve_bb": ("the EASY reservation holds BB as well as processors", "", ""),
    "seed": ("seed of the policy's random choices", "", ""),
    "shares": ("entitlements of the entities (entity:share,...)", "", "the workload's own"),
    "solver": ("accepted for older specifications; use backend", "", "unused"),
    "ssd": ("place jobs on nodes with enough local SSD", "", ""),
    "starvation": ("decisions a job may be passed over before it must start", "decisions", ""),
    "temperatures": ("annealing temperatures (6 moves each), cooled to the paper's last", "",
                     "the paper's 30"),
    "tiebreak": ("break near-ties between packs by this order", "", "none"),
    "tolerance": ("near-tie tolerance of the pack tie-break", "fraction",
                  "5 % with a tie-break"),
    "warm_start": ("start the search from the previous decision's plan", "", ""),
    "weights": ("weights of the weighted-sum methods", "", "equal"),
    "window": ("waiting jobs considered at each decision", "jobs", ""),
}
#: What the commands pass for ``budget_mode`` (``--budget-mode``), and where.
COMMAND_BUDGET_MODE = "deterministic (simulate, compare, sweep; wall for decide)"


def describe(key: str, default: Any) -> str:
    """One line for option ``key`` with the class default ``default``.

    >>> describe("budget", 2.0)
    'budget = 2 s: solver budget per decision, model building included'
    >>> describe("deterministic", None).split(":")[0]
    'deterministic = 0.5 per budget second [CP-SAT units]'
    >>> describe("memory_per_node", 64e9).split(":")[0], describe("quantum", 1800.0).split(":")[0]
    ('memory_per_node = 64 GB', 'quantum = 1800 s (30 min)')
    >>> describe("budget_mode", "wall").split(":")[0]
    'budget_mode = deterministic (simulate, compare, sweep; wall for decide)'
    """
    if key == "**":
        return "any keyword"
    meaning, unit, none = MEANINGS.get(key, ("", "", "not set"))
    if key == "budget_mode":
        shown = COMMAND_BUDGET_MODE
    elif default is inspect.Parameter.empty:
        shown = "(required)"
    elif default is None:
        shown = none or "not set"
        shown += f" [{unit}]" if unit else ""
    else:
        shown = _value(default, unit)
    return f"{key} = {shown}" + (f": {meaning}" if meaning else "")


def _value(value: Any, unit: str) -> str:
    """``64e9, "bytes"`` -> ``"64 GB"``; ``1800.0, "s"`` -> ``"1800 s (30 min)"``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value} {unit}" if unit else str(value)
    if unit in ("bytes", "bytes/s"):
        return f"{value / 1e9:g} GB" + ("/s" if unit == "bytes/s" else "")
    text = f"{value:g} {unit}" if unit else f"{value:g}"
    if unit == "s" and value >= 60:
        for size, name in ((86400, "d"), (3600, "h"), (60, "min")):
            if value >= size:
                return f"{text} ({value / size:g} {name})"
    return text


class HelpFormatter(argparse.HelpFormatter):
    """Appends ``(default: X)`` to an option's help when it has a default worth naming (not
    None, not a flag's False, not an empty list) that the help does not state already."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (not action.option_strings or "default" in text or default is argparse.SUPPRESS
                or default is None or default is False or default == []
                or isinstance(action, argparse._VersionAction | argparse._HelpAction)):
            return text
        return f"{text} (default: %(default)s)" if text else "(default: %(default)s)"


class Parser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` with :class:`HelpFormatter`; its subcommands inherit it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

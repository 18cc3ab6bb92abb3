"""The ``bbopt`` command line: simulate, compare, decide, policies.

``bbopt compare`` with no workload runs the embedded KTH-like default on Kopanski's platform and
prints the run metrics of each policy side by side. Bad input prints one line naming what to
fix (file, line or JSON path, field) and exits with status 2; no traceback.

This module parses the arguments and prints errors: ``simulate`` and ``compare`` run in
:mod:`bbopt.analysis.run_cli` (through :mod:`bbopt.runs`), the experiment commands in
:mod:`bbopt.analysis.sweep_cli`, the Slurm and interoperability commands in their packages, each
adding its parsers with an ``add_parser(sub)`` function.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from bbopt import __version__
from bbopt.errors import BboptError
from bbopt.option_help import Parser  # every option's help names its default
from bbopt.signals import interrupted, terminate_as_interrupt

DEFAULT_POLICIES = "fcfs,fcfs-easy,filler,fcfs-bb,sjf-bb,conservative-bb"

#: Commands whose arguments parse without the experiment and Slurm parsers (built, and their
#: modules imported, only for other commands and for the help listing every command).
_CORE_COMMANDS = frozenset({"simulate", "compare", "decide", "policies"})


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # (no BLAS work: see bbopt/__init__)
    words = sys.argv[1:] if argv is None else argv
    parser = _parser(full=not (words and words[0] in _CORE_COMMANDS))
    args = parser.parse_args(argv)
    if not getattr(args, "command", None):
        parser.print_help()
        return 2
    from datetime import UTC, datetime

    terminate_as_interrupt()  # SIGTERM (batch systems, kill) cleans up as Ctrl-C does
    args.started = datetime.now(UTC)
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if getattr(args, "shares", None):  # fair-share entitlements: the policies' shares option
        args.option.append(f"shares={args.shares}")
    try:
        if getattr(args, "plugin", None):
            from bbopt.registry import load_plugins

            load_plugins(args.plugin)
        return args.func(args)
    except BboptError as exc:
        print(f"bbopt: error: {_flagged(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # the reader of our output went away (``bbopt policies | head -1``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as exc:  # unreadable or unwritable files: the system's message, one line
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"bbopt: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        return interrupted(exc)


#: A run's fields (:class:`bbopt.runs.RunSpec`) as the command line names them.
_FLAGS = {"seed": "--seed", "warmup": "--warmup", "cooldown": "--cooldown", "first": "--jobs",
          "jobs": "--jobs", "execution": "--execution", "tick": "--tick"}


def _flagged(exc: BboptError) -> BboptError:
    """An error about a run's field, named by its command-line flag."""
    from bbopt.errors import InputError

    if isinstance(exc, InputError) and exc.source is None and exc.field in _FLAGS:
        return InputError(exc.reason, line=exc.line, field=_FLAGS[exc.field])
    return exc


def _parser(full: bool = True) -> argparse.ArgumentParser:
    p = Parser(prog="bbopt", description=(
        "Schedule HPC jobs with burst buffers: simulate policies, compare them, or take one "
        "decision for a cluster state."))
    p.add_argument("--version", action="version", version=f"bbopt {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    def workload_args(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--workload", "-w", metavar="FILE",
                        help="SWF (.swf, .swf.gz) or Batsim JSON workload; default: the "
                             "embedded KTH-like synthetic workload (no download)")
        sp.add_argument("--platform", "-p", metavar="NAME|FILE", default=None,
                        help="platform name (kopanski, kopanski-dragonfly, cts1[:u]), a "
                             "JSON/YAML file with nodes and bb, or a topology file; default: "
                             "the trace's own (SWF '; BurstBuffer:' header; a Batsim file's "
                             "nb_res nodes with Kopanski's 5 GB of BB per node), else kopanski")
        sp.add_argument("--jobs", "--first", type=int, default=None, metavar="N",
                        help="take the first N jobs of the workload (by submission); the "
                             "embedded default has 3000")
        sp.add_argument("--bb", choices=("auto", "lognormal", "none"), default="auto",
                        help="BB requests: auto draws Kopanski's log-normal model when the "
                             "workload has none (default)")
        sp.add_argument("--no-bb-rules", action="store_true",
                        help="with drawn BB requests on the kopanski platforms, do not apply the "
                             "two rules of Kopanski's generator (per-node request capped to fit "
                             "the 12 x 40 GB BB nodes; jobs of walltime <= 120 s ask 10 MB per "
                             "node), which are on by default")
        sp.add_argument("--io-aware", choices=("phased", "plain"), default=None,
                        help="a Kopanski I/O-aware Batsim part (compute without its I/O): "
                             "phased adds the I/O back as stage-in, checkpoints and stage-out "
                             "(run with --execution phased-io -p kopanski-dragonfly), plain "
                             "reads the compute as runtimes; refused without it")
        sp.add_argument("--checkpoint-factor", type=float, default=None, metavar="X",
                        help="with --io-aware phased: each checkpoint writes X times the BB "
                             "request (default 1.0, the paper's text; the authors' code: 0.5)")
        sp.add_argument("--seed", type=int, default=0, help="seed of every random draw")
        sp.add_argument("--tick", type=float, default=None, metavar="SECONDS",
                        help="also schedule every SECONDS while jobs wait")
        sp.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                        help="policy option, e.g. -o depth=10 (repeatable)")
        sp.add_argument("--warmup", default="0", metavar="DURATION",
                        help="leave out of the job and utilisation metrics what happens before "
                             "the first submission + DURATION, e.g. 15d (default 0)")
        sp.add_argument("--cooldown", default="0", metavar="DURATION",
                        help="... and after the last submission - DURATION (default 0)")
        sp.add_argument("--no-progress", action="store_true", help="no progress bar or log lines")
        sp.add_argument("--budget-mode", choices=("deterministic", "wall"),
                        default="deterministic",
                        help="how solver budgets are counted: deterministic (default) caps "
                             "work (CP-SAT deterministic time, fixed annealing and NSGA-II "
                             "iterations) so the same command gives the same jobs.csv on a "
                             "loaded machine; wall caps each decision's wall-clock time")
        sp.add_argument("--shares", metavar="FILE", default=None,
                        help="entitlement shares of the entities (Job.user), YAML/JSON "
                             "'entity: share' (fair-share policies: omfs, partition, ...); "
                             "default: the workload's own, if its jobs carry them")
        sp.add_argument("--preemptable", type=float, default=None, metavar="FRACTION",
                        help="mark this fraction of the jobs preemptable (seeded; traces carry "
                             "no such flag)")
        sp.add_argument("--checkpointable", type=float, default=None, metavar="FRACTION",
                        help="... and this fraction of all jobs checkpointable (among them)")
        sp.add_argument("--execution", default=None, metavar="NAME",
                        help="execution model: rigid (default), checkpoint (preemption by "
                             "checkpoint/restart), io-contention, phased-io, exclusive-io "
                             "(the default for jeannot:... workloads)")
        sp.add_argument("--checkpoint", action="append", default=[], metavar="KEY=VALUE",
                        help="checkpoint model option: memory_per_node, pfs_bandwidth, "
                             "bb_bandwidth (bytes, bytes/s per node), target=pfs|bb, "
                             "on_kill=drop|requeue (repeatable)")
        sp.add_argument("--out", metavar="DIR", help="write DIR/<policy>_jobs.csv, summary.json "
                        "(metrics, provenance) and skipped.csv; checked before any work starts")
        sp.add_argument("--force", action="store_true",
                        help="overwrite existing result files in --out (and --plot)")
        plugin_arg(sp)

    def plugin_arg(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                        help="import MODULE first: the policies, backends and execution "
                             "models it registers can then be named (repeatable; installed "
                             "plug-ins are found without it, through their entry points)")

    s = sub.add_parser("simulate", help="simulate one policy")
    workload_args(s)
    s.add_argument("--policy", default="fcfs-bb", help="policy name (see `bbopt policies`)")
    s.set_defaults(func=_run_command("simulate"))

    c = sub.add_parser("compare", help="simulate several policies and compare their metrics")
    workload_args(c)
    c.add_argument("--policies", default=DEFAULT_POLICIES,
                   help=f"comma-separated policy names (default {DEFAULT_POLICIES})")
    c.add_argument("--format", choices=("table", "csv", "json"), default="table",
                   help="how the metrics are printed: a table, CSV or JSON")
    c.add_argument("--plot", metavar="FILE.png", help="mean wait and bounded slowdown per "
                   "policy with 95 %% intervals, the longest waits; with --split, the forest "
                   "plot of the normalised metrics (needs matplotlib: pip install 'bbopt[plot]')")
    c.add_argument("--split", type=int, metavar="N", help="split the trace into N parts of "
                   "equal duration, run every policy on each, normalise by --reference and "
                   "print mean, 95%% CI and per-part values (Kopanski & Rzadca, Section 4.2)")
    c.add_argument("--reference", default="sjf-bb", metavar="NAME",
                   help="reference policy of --split (default sjf-bb; always run)")
    c.add_argument("--metrics", default="mean_wait,mean_bounded_slowdown",
                   help="metrics compared by --split (default mean_wait,mean_bounded_slowdown)")
    c.add_argument("--workers", type=int, default=None, metavar="N",
                   help="run the policies (and parts) in N processes (default: every core, "
                   "or 1 for runs too small to gain; 1 runs them here); the output is the same")
    c.set_defaults(func=_run_command("compare"))

    d = sub.add_parser("decide", help="one decision: read a state JSON, print a decision JSON")
    d.add_argument("state", nargs="?", default="-", help="state JSON file, or - for stdin")
    d.add_argument("--policy", default="fcfs-bb",
                   help="policy name (default fcfs-bb; `bbopt policies -v` lists them)")
    d.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option, repeatable (e.g. -o depth=20)")
    d.add_argument("--budget-mode", choices=("wall", "deterministic"), default="wall",
                   help="wall (default here: the decision is back within its budget) or "
                        "deterministic (capped by work: the same state gives the same decision "
                        "on any load)")
    plugin_arg(d)
    d.set_defaults(func=_cmd_decide)

    ls = sub.add_parser("policies", help="list the registered policies")
    ls.add_argument("-v", "--verbose", action="store_true",
                    help="also list each policy's options (-o KEY=VALUE) and their defaults")
    plugin_arg(ls)
    ls.set_defaults(func=_cmd_policies)
    if not full:
        return p
    # `bbopt sweep`, `report`, `generate` (bbopt.analysis.sweep_cli); `slurm` (bbopt.slurm);
    # `serve`, `batsim`: decisions for other tools (bbopt.interop); `bench` (bbopt.bench);
    # `data`: the public traces (below)
    from bbopt.analysis.sweep_cli import add_parsers as add_experiment_parsers
    from bbopt.bench.cli import add_parser as add_bench_parser
    from bbopt.interop.cli import add_parser as add_interop_parser
    from bbopt.slurm.cli import add_parser as add_slurm_parser

    for add in (add_experiment_parsers, add_slurm_parser, add_interop_parser, add_bench_parser,
                _data_parser):
        add(sub)
    return p


def _data_parser(sub) -> None:
    """``bbopt data list`` and ``bbopt data fetch NAME`` (:mod:`bbopt.workloads.archive`)."""
    from bbopt.workloads.archive import TRACES, user_data_dir

    d = sub.add_parser("data", help="public workload traces: where they come from, fetch them")
    dsub = d.add_subparsers(dest="data_command", metavar="ACTION", required=True)
    ls = dsub.add_parser("list", help="the catalogued traces, their archive and where each is "
                         "found by the lookup rule")
    ls.set_defaults(func=_cmd_data_list)
    f = dsub.add_parser("fetch", help="download a catalogued trace into the per-user data "
                        "directory (or --dir), unless it is already found")
    f.add_argument("name", help=f"trace name: {', '.join(TRACES)} (or its file name)")
    f.add_argument("--dir", metavar="DIR", default=None,
                   help=f"where to put it (default: {user_data_dir()}, searched by every "
                   "command)")
    f.add_argument("--url", metavar="URL", default=None,
                   help="download from this address instead of the archive (a mirror, file://)")
    f.add_argument("--timeout", type=float, default=20.0, metavar="SECONDS",
                   help="give up a network wait after this many seconds (default: 20)")
    f.add_argument("--force", action="store_true",
                   help="download even when the trace is already found (over a file in the "
                        "target directory)")
    f.set_defaults(func=_cmd_data_fetch)


def _cmd_data_list(args) -> int:
    from bbopt.workloads.archive import TRACES, found_trace, user_data_dir

    for t in TRACES.values():
        path = found_trace(t)
        where = str(path) if path is not None else f"not found (bbopt data fetch {t.name})"
        print(f"{t.name:10s} {t.file}\n    {t.what}\n    from {t.url}\n    here: {where}")
    print(f"lookup order: current directory, $BBOPT_DATA, {user_data_dir()}")
    return 0


def _cmd_data_fetch(args) -> int:
    from bbopt.workloads.archive import fetch_trace, found_trace, lookup

    trace = lookup(args.name)
    found = found_trace(trace, args.dir)
    if found is not None and not args.force:
        print(f"{trace.name} is already here: {found} (--force downloads it again)")
        return 0
    print(f"downloading {trace.url if args.url is None else args.url} ...", flush=True)
    path = fetch_trace(trace.name, args.dir, url=args.url, timeout=args.timeout,
                       force=args.force)
    print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB)")
    return 0


def _run_command(name: str):
    """The function of a run command (``simulate``, ``compare``), imported when it runs."""

    def command(args) -> int:
        from bbopt.analysis import run_cli

        return getattr(run_cli, f"cmd_{name}")(args)

    return command


def _cmd_decide(args) -> int:
    from bbopt.api import decide
    from bbopt.errors import InputError
    from bbopt.outputs import echo
    from bbopt.schema import dumps, loads_state

    if args.state == "-":
        text, source = sys.stdin.buffer.read(), "<stdin>"
    else:
        path = Path(args.state)
        if not path.exists():
            raise InputError("no such file", source=args.state)
        if path.is_dir():
            raise InputError("is a directory, not a state file", source=args.state)
        text, source = path.read_bytes(), args.state
    from bbopt.policies import make_policy
    from bbopt.runs import with_budget_mode
    from bbopt.units import parse_options

    options = with_budget_mode(args.policy, parse_options(args.option), args.budget_mode)

    policy = make_policy(args.policy, **options)  # a bad name or option before the state
    state = loads_state(text, source, check=False)  # (checked once, by decide: its budget)
    try:
        decision = decide(state, policy)
    except InputError as exc:
        raise exc.at(source=source) from None
    echo(dumps(decision))
    return 0


def _cmd_policies(args) -> int:
    from bbopt.option_help import describe  # meanings, units, defaults as the commands apply
    from bbopt.outputs import echo
    from bbopt.policies import available_policies, policy_options

    for name, summary in available_policies().items():
        echo(f"{name:18s} {summary}")
        if args.verbose:
            for key, default in policy_options(name).items():
                echo(f"{'':18s}   -o {describe(key, default)}")
    if args.verbose:
        from bbopt.jit import kernels_note

        echo(kernels_note())
    return 0


if __name__ == "__main__":
    sys.exit(main())

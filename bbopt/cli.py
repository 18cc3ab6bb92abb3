"""The ``bbopt`` command line: simulate, compare, decide, policies.

``bbopt compare`` with no workload runs the embedded KTH-like default on Kopanski's platform and
prints the run metrics of each policy side by side. Bad input prints one line naming what to
fix (file, line or JSON path, field) and exits with status 2; no traceback.

Length: one parser and a short function per subcommand, with the checks that must run before
any simulation starts (options, output paths); outputs are written by :mod:`bbopt.outputs`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from bbopt.errors import BboptError

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
    except KeyboardInterrupt:
        print("bbopt: interrupted", file=sys.stderr)
        return 130


#: A run's fields (:class:`bbopt.runs.RunSpec`) as the command line names them.
_FLAGS = {"seed": "--seed", "warmup": "--warmup", "cooldown": "--cooldown", "first": "--jobs",
          "jobs": "--jobs", "execution": "--execution", "tick": "--tick"}


def _flagged(exc: BboptError) -> BboptError:
    """An error about a run's field, named by its command-line flag."""
    from bbopt.errors import InputError

    if isinstance(exc, InputError) and exc.source is None and exc.field in _FLAGS:
        return InputError(exc.reason, line=exc.line, field=_FLAGS[exc.field])
    return exc


def _echo(text: str = "", end: str = "\n") -> None:
    """Print to stdout. A reader that went away (``bbopt ... | head``) never stops the work: the
    rest of the output goes to /dev/null and result files are still written."""
    try:
        sys.stdout.write(text + end)
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _parser(full: bool = True) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bbopt", description=(
        "Schedule HPC jobs with burst buffers: simulate policies, compare them, or take one "
        "decision for a cluster state."))
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
        sp.add_argument("--no-progress", action="store_true", help="no progress bar")
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
        sp.add_argument("--out", metavar="DIR", help="write per-job CSVs, the summary (with "
                        "provenance) and skipped.csv here; checked before any work starts")
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
    s.set_defaults(func=_cmd_simulate)

    c = sub.add_parser("compare", help="simulate several policies and compare their metrics")
    workload_args(c)
    c.add_argument("--policies", default=DEFAULT_POLICIES,
                   help=f"comma-separated policy names (default {DEFAULT_POLICIES})")
    c.add_argument("--format", choices=("table", "csv", "json"), default="table")
    c.add_argument("--plot", metavar="FILE.png", help="bar charts of wait and slowdown; with "
                   "--split, the forest plot of the normalised metrics "
                   "(needs matplotlib: pip install 'bbopt[plot]')")
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
    c.set_defaults(func=_cmd_compare)

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
    # `bbopt sweep`, `report`, `generate` (bbopt.analysis.sweep_cli); `bbopt slurm ...`
    # (bbopt.slurm); `bbopt serve`, `bbopt batsim ...`: decisions for other tools (bbopt.interop)
    from bbopt.analysis.sweep_cli import add_parsers as add_experiment_parsers
    from bbopt.interop.cli import add_parser as add_interop_parser
    from bbopt.slurm.cli import add_parser as add_slurm_parser

    add_experiment_parsers(sub)
    add_slurm_parser(sub)
    add_interop_parser(sub)
    return p


def _options(pairs: list[str]) -> dict[str, Any]:
    from bbopt.units import parse_options

    return parse_options(pairs)


def _spec(args, policy: str):
    """The run the workload flags describe, for ``policy``."""
    from bbopt.runs import RunSpec
    from bbopt.units import parse_seconds

    name, _, pairs = (getattr(args, "execution", None) or "").partition(":")
    extra = _options([*(p for p in pairs.split(",") if p), *getattr(args, "checkpoint", [])])
    if getattr(args, "checkpoint", None) and name not in ("", "checkpoint"):
        from bbopt.errors import InputError

        raise InputError("--checkpoint options need --execution checkpoint",
                         field="--checkpoint")
    return RunSpec(workload=args.workload, platform=args.platform, policy=policy,
                   options=_options(args.option), execution=name or None,
                   execution_options=extra, seed=args.seed, first=args.jobs, bb=args.bb,
                   bb_rules=not args.no_bb_rules, preemptable=args.preemptable,
                   checkpointable=args.checkpointable, tick=args.tick,
                   budget_mode=args.budget_mode,
                   warmup=parse_seconds(args.warmup, "--warmup"),
                   cooldown=parse_seconds(args.cooldown, "--cooldown"))


def _load(args, spec, policies: list[str]):
    """``spec`` loaded (:func:`bbopt.runs.load`) with the workload's own entitlements for the
    policies that take shares when none are given; prints one line about skipped records."""
    from bbopt.analysis.entitlements import describe
    from bbopt.runs import entitled, load

    spec, w = load(spec)
    note = w.skipped_summary()
    if note:
        where = f"; see {Path(args.out) / 'skipped.csv'}" if args.out else \
            "; --out DIR lists them in DIR/skipped.csv"
        print(f"bbopt: {note}{where}", file=sys.stderr)
    spec, own = entitled(spec, policies)
    if own is not None:
        print(f"bbopt: {describe(policies, own)}", file=sys.stderr)
    return spec, w


def _prepare_out(args, names: list[str]) -> Path | None:
    """Check --out and --plot before any work (exit 2 at once on a bad path)."""
    from bbopt.outputs import check_out_dir, check_plot_path

    if getattr(args, "plot", None):
        check_plot_path(args.plot, args.force)
    if not args.out:
        return None
    return check_out_dir(args.out, [*names, "summary.json", "skipped.csv"], args.force)


def _provenance(args, w, spec, policies) -> dict[str, Any]:
    from bbopt.outputs import provenance

    return provenance(workload=w, seed=spec.seed, platform=spec.platform, policies=policies,
                      options=dict(spec.options), started=args.started, command=args.argv,
                      budget_mode=spec.options.get("budget_mode", spec.budget_mode))


def _write_skipped(out: Path | None, w) -> None:
    if out is not None and w.skipped:
        from bbopt.outputs import write_skipped

        write_skipped(out / "skipped.csv", w.skipped)


def _title(spec, extra: str = "") -> str:
    p = spec.platform
    return (f"{spec.name}: {len(spec.workload)} jobs on {p.name} ({p.nodes} nodes, "
            f"{p.bb / 1e9:g} GB BB){extra}")


def _cmd_simulate(args) -> int:
    from bbopt.gc_pause import gc_paused
    with gc_paused():  # (importing numpy and the policy's modules leaves no garbage to look for)
        from bbopt.analysis.table import metrics_table, rejections
        from bbopt.outputs import streamed_csv, write_json, write_run
        from bbopt.runs import check_policies, run
        spec = _spec(args, args.policy)
        check_policies(spec, [args.policy])  # a bad name or option fails before any work
    out = _prepare_out(args, [f"{args.policy}_jobs.csv", f"{args.policy}_segments.csv"])
    spec, w = _load(args, spec, [args.policy])
    _write_skipped(out, w)
    records = []

    def replay(on_job_end=None):
        records.append(run(spec, progress=not args.no_progress, on_job_end=on_job_end))
        return records[-1].result

    replay() if out is None else streamed_csv(out / f"{args.policy}_jobs.csv", replay)
    result, metrics = records[0].result, records[0].metrics
    _echo(metrics_table({args.policy: metrics}, _title(spec)))
    print(rejections({args.policy: result}), end="")
    if out is not None:
        write_run(out, args.policy, result, jobs_csv=False)  # (streamed as jobs ended)
        write_json(out / "summary.json", {
            "provenance": _provenance(args, w, spec, [args.policy]),
            "metrics": {args.policy: metrics}, "unfinished": []})
        _echo(f"wrote {out / f'{args.policy}_jobs.csv'} and {out / 'summary.json'}")
    return 0


def _cmd_compare(args) -> int:
    from bbopt.analysis.table import rejections, render
    from bbopt.analysis.workers import compare_policies
    from bbopt.errors import InputError
    from bbopt.outputs import write_json, write_run
    from bbopt.runs import check_policies

    policies = list(dict.fromkeys(p.strip() for p in args.policies.split(",") if p.strip()))
    if not policies:
        raise InputError("no policy given", field="--policies")
    spec = _spec(args, policies[0])
    names = list(dict.fromkeys([args.reference, *policies])) if args.split is not None \
        else policies
    check_policies(spec, names)  # fail before the first run on an unknown name or option
    if args.split is not None:
        if spec.warmup or spec.cooldown:
            raise InputError("--warmup/--cooldown do not apply to --split (each part is "
                             "measured whole)", field="--split")
        out = _prepare_out(args, ["split_summary.csv", "split_parts.csv"])
        spec, w = _load(args, spec, names)
        _write_skipped(out, w)
        return _compare_split(args, w, spec, names, out)
    out = _prepare_out(args, [f"{p}_{k}.csv" for p in policies for k in ("jobs", "segments")])
    spec, w = _load(args, spec, policies)
    _write_skipped(out, w)
    prov = _provenance(args, w, spec, policies)
    results, metrics = {}, {}
    runs = compare_policies(spec, policies, workers_=args.workers)
    try:
        for pol, result, m in _progress(runs, not args.no_progress and sys.stderr.isatty()):
            results[pol], metrics[pol] = result, m
            if out is not None:  # each policy's results as soon as it finishes
                write_run(out, pol, result)
                write_json(out / "summary.json", {
                    "provenance": prov, "metrics": metrics,
                    "unfinished": [p for p in policies if p not in metrics]})
    except KeyboardInterrupt:
        left = ", ".join(p for p in policies if p not in metrics)
        kept = f"; their results are in {out}" if out is not None and metrics else ""
        print(f"bbopt: interrupted: finished {', '.join(metrics) or 'none'}; not finished "
              f"{left}{kept}", file=sys.stderr)
        return 130
    _echo(render(metrics, args.format, _title(spec)))
    if args.format == "table":
        print(rejections(results), end="")
    if out is not None:
        print(f"wrote {len(results)} job CSVs and summary.json to {out}", file=sys.stderr)
    if args.plot:
        from bbopt.analysis.plots import plot_comparison

        _plot(args.plot, plot_comparison, results, title=_title(spec))
    return 0


def _compare_split(args, w, spec, names, out) -> int:
    """``bbopt compare --split N``: the normalised per-part comparison."""
    from bbopt.analysis.experiments import compare_split, format_split
    from bbopt.analysis.workers import workers
    from bbopt.runs import for_policy

    show = not args.no_progress and sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if show:
            print(f"\r{done}/{total} runs", end="" if done < total else "\n", file=sys.stderr)

    table = compare_split(spec.workload, spec.platform, names, n_parts=args.split,
                          reference=args.reference, tick=spec.tick, progress=progress,
                          metrics=[m.strip() for m in args.metrics.split(",") if m.strip()],
                          base=spec, options={p: for_policy(spec, p).options for p in names},
                          workers=workers(args.workers, len(spec.workload), names))
    title = _title(spec, f", {args.split} parts")
    _echo(format_split(table, args.format, title), end="")
    if out is not None:
        from bbopt.outputs import write_split

        write_split(out, table, _provenance(args, w, spec, names))
        print(f"wrote split_summary.csv, split_parts.csv and summary.json to {out}",
              file=sys.stderr)
    if args.plot:  # the forest plot of the normalised metrics
        from bbopt.analysis.figures import forest_plot
        from bbopt.analysis.intervals import interval_table

        _plot(args.plot, forest_plot, interval_table(table.attrs["raw"]),
              reference=args.reference, title=title)
    return 0


def _plot(path: str, draw, *data, **options) -> None:
    from bbopt.outputs import atomic_path

    with atomic_path(path) as tmp:
        draw(*data, path=tmp, **options)
    print(f"wrote {path}", file=sys.stderr)


def _progress(items, show):
    if not show:
        return items
    from tqdm import tqdm

    return tqdm(items, unit="policy", leave=False)


def _cmd_decide(args) -> int:
    from bbopt.api import decide
    from bbopt.errors import InputError
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

    options = with_budget_mode(args.policy, _options(args.option), args.budget_mode)

    policy = make_policy(args.policy, **options)  # a bad name or option before the state
    state = loads_state(text, source)
    _echo(dumps(decide(state, policy)))
    return 0


def _cmd_policies(args) -> int:
    import inspect

    from bbopt.policies import available_policies, policy_options

    for name, summary in available_policies().items():
        _echo(f"{name:18s} {summary}")
        if args.verbose:
            for key, default in policy_options(name).items():
                shown = "any keyword" if key == "**" else (
                    "(required)" if default is inspect.Parameter.empty else f"= {default!r}")
                _echo(f"{'':18s}   -o {key} {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

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
        return args.func(args)
    except BboptError as exc:
        print(f"bbopt: error: {exc}", file=sys.stderr)
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
    d.set_defaults(func=_cmd_decide)

    ls = sub.add_parser("policies", help="list the registered policies")
    ls.add_argument("-v", "--verbose", action="store_true",
                    help="also list each policy's options (-o KEY=VALUE) and their defaults")
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


def _load(args):
    """The workload (with what was skipped and its digest), the platform and its name; prints
    one line about skipped records."""
    from bbopt.core import GB, Platform
    from bbopt.errors import InputError
    from bbopt.loading import declared_platform, load_platform, read_workload

    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"must be >= 1, got {args.jobs}", field="--jobs")
    if args.seed < 0:
        raise InputError(f"a seed must be an integer >= 0, got {args.seed}", field="--seed")
    from bbopt.units import parse_seconds

    for flag, value in (("--warmup", args.warmup), ("--cooldown", args.cooldown)):
        if parse_seconds(value, flag) < 0:
            raise InputError(f"must be >= 0, got {value!r}", field=flag)
    declared = declared_platform(args.workload) if args.platform is None else None
    platform = declared or load_platform(args.platform)
    w = read_workload(args.workload, n_jobs=args.jobs, seed=args.seed, bb=args.bb,
                      platform=platform, bb_rules=not args.no_bb_rules, **_io_aware(args))
    if args.platform is None and declared is None and w.nb_res is not None:
        # a Batsim file declares its machine size; BB per node as on Kopanski's machine
        per_node = Platform.kopanski().bb / Platform.kopanski().nodes
        platform = Platform(nodes=w.nb_res, bb=w.nb_res * per_node,
                            name=f"{w.name} (nb_res {w.nb_res}, {per_node / GB:g} GB BB/node)")
    if args.preemptable is not None or args.checkpointable is not None:
        from bbopt.workloads.generators.omfs import with_preemption_flags

        ckpt = args.checkpointable or 0.0
        pre = max(args.preemptable if args.preemptable is not None else 0.0, ckpt)
        w.jobs = with_preemption_flags(w.jobs, preemptable=pre, checkpointable=ckpt,
                                       seed=args.seed)
    note = w.skipped_summary()
    if note:
        where = f"; see {Path(args.out) / 'skipped.csv'}" if args.out else \
            "; --out DIR lists them in DIR/skipped.csv"
        print(f"bbopt: {note}{where}", file=sys.stderr)
    return w, platform


def _entitlements(args, w, policies: list[str]) -> dict[str, Any]:
    """The ``-o`` options, with the workload's own entitlements when a policy takes shares and
    no --shares is given (:mod:`bbopt.analysis.entitlements`; an error with neither)."""
    from bbopt.analysis.entitlements import describe, workload_entitlements

    own = workload_entitlements(policies, _options(args.option), w.jobs)
    if own is not None:
        import json
        print(f"bbopt: {describe(policies, own)}", file=sys.stderr)
        args.option.append("shares=" + json.dumps(own))
    return _options(args.option)


def _prepare_out(args, names: list[str]) -> Path | None:
    """Check --out and --plot before any work (exit 2 at once on a bad path)."""
    from bbopt.outputs import check_out_dir, check_plot_path

    if getattr(args, "plot", None):
        check_plot_path(args.plot, args.force)
    if not args.out:
        return None
    return check_out_dir(args.out, [*names, "summary.json", "skipped.csv"], args.force)


def _provenance(args, w, platform, policies, options) -> dict[str, Any]:
    from bbopt.outputs import provenance

    return provenance(workload=w, seed=args.seed, platform=platform, policies=policies,
                      options=options, started=args.started, command=args.argv,
                      budget_mode=options.get("budget_mode", getattr(args, "budget_mode", None)))


def _write_skipped(out: Path | None, w) -> None:
    if out is not None and w.skipped:
        from bbopt.outputs import write_skipped

        write_skipped(out / "skipped.csv", w.skipped)


def _run(jobs, platform, name, policy, args, model=None, on_job_end=None):
    from bbopt.simulation import simulate

    return simulate(jobs, platform, policy,
                    options=_with_mode(policy, _options(args.option), args), tick=args.tick,
                    progress=not args.no_progress, workload_name=name,
                    execution=model if model is not None else _execution(args),
                    on_job_end=on_job_end)


def _io_aware(args) -> dict:
    """The Batsim reader's options for Kopanski's I/O-aware parts (``--io-aware``,
    ``--checkpoint-factor``); only Batsim JSON workloads take them."""
    from bbopt.errors import InputError

    io_aware, factor = getattr(args, "io_aware", None), getattr(args, "checkpoint_factor", None)
    if factor is not None and io_aware != "phased":
        raise InputError("--checkpoint-factor needs --io-aware phased",
                         field="--checkpoint-factor")
    if io_aware is None:
        return {}
    if not str(args.workload or "").endswith(".json"):
        raise InputError("--io-aware applies to Batsim JSON workloads (Kopanski's parts)",
                         source=str(args.workload), field="--io-aware")
    return {"io_aware": io_aware} | ({} if factor is None else {"checkpoint_factor": factor})


def _execution(args):
    """The execution model of ``--execution`` with its ``--checkpoint`` options (a name or a
    model object); periodic applications (``jeannot:...``) run under exclusive I/O."""
    from bbopt.errors import InputError

    name = getattr(args, "execution", None)
    extra = _options(getattr(args, "checkpoint", []))
    if name is None and extra:
        name = "checkpoint"
    if name is None and str(getattr(args, "workload", None) or "").startswith("jeannot:"):
        name = "exclusive-io"
    if name != "checkpoint":
        if extra:
            raise InputError("--checkpoint options need --execution checkpoint",
                             field="--checkpoint")
        return name
    from bbopt.resources import parse_bandwidth, parse_bytes
    from bbopt.simulation.checkpoint import CheckpointRestart

    for key, parse in (("memory_per_node", parse_bytes), ("pfs_bandwidth", parse_bandwidth),
                       ("bb_bandwidth", parse_bandwidth)):
        if key in extra:
            extra[key] = parse(extra[key], f"--checkpoint {key}")
    try:
        return CheckpointRestart(**extra)
    except TypeError as exc:
        raise InputError(f"--checkpoint: {exc}", field="--checkpoint") from None


def _with_mode(policy: str, options: dict[str, Any], args) -> dict[str, Any]:
    """``options`` plus ``budget_mode`` from ``--budget-mode`` for a policy that has budgets
    (an explicit ``-o budget_mode=...`` wins)."""
    from bbopt.policies import policy_options

    if "budget_mode" in policy_options(policy) and "budget_mode" not in options:
        return {**options, "budget_mode": args.budget_mode}
    return options


def _metrics(result, args) -> dict[str, float]:
    """The run metrics of the table: with --warmup/--cooldown, the job and utilisation metrics
    over the measurement interval; with a ``shares`` option, entitlement satisfaction."""
    from bbopt.analysis.table import run_metrics
    from bbopt.units import parse_seconds

    options = _options(args.option)
    return run_metrics(result, warmup=parse_seconds(args.warmup, "--warmup"),
                       cooldown=parse_seconds(args.cooldown, "--cooldown"),
                       shares=options.get("shares"),
                       quantum=float(options.get("quantum", 1800.0)))


def _cmd_simulate(args) -> int:
    from bbopt.gc_pause import gc_paused
    with gc_paused():  # (importing numpy and the policy's modules leaves no garbage to look for)
        from bbopt.analysis.table import metrics_table, model_metrics, rejections
        from bbopt.outputs import atomic_path, streamed_csv, write_json
        from bbopt.policies import make_policy
        options = _options(args.option)
        make_policy(args.policy, **options)  # a bad name or option fails before any work
    out = _prepare_out(args, [f"{args.policy}_jobs.csv", f"{args.policy}_segments.csv"])
    w, platform = _load(args)
    options = _entitlements(args, w, [args.policy])
    _write_skipped(out, w)
    from bbopt.simulation.execution import make_execution_model
    model = make_execution_model(_execution(args))
    result = _run(w.jobs, platform, w.name, args.policy, args, model) if out is None else \
        streamed_csv(out / f"{args.policy}_jobs.csv",  # written as jobs end
                     lambda end: _run(w.jobs, platform, w.name, args.policy, args, model, end))
    metrics = _metrics(result, args) | model_metrics(result, model)
    _echo(metrics_table({args.policy: metrics}, f"{w.name}: {len(w.jobs)} jobs on {platform.name} "
                 f"({platform.nodes} nodes, {platform.bb / 1e9:g} GB BB)"))
    print(rejections({args.policy: result}), end="")
    if out is not None:
        if len(result.segments) > len(result.jobs) - result.state.count("rejected"):
            with atomic_path(out / f"{args.policy}_segments.csv") as tmp:
                result.segments_to_csv(tmp)  # jobs were preempted: every run segment
        write_json(out / "summary.json", {
            "provenance": _provenance(args, w, platform, [args.policy], options),
            "metrics": {args.policy: metrics}, "unfinished": []})
        _echo(f"wrote {out / f'{args.policy}_jobs.csv'} and {out / 'summary.json'}")
    return 0


def _cmd_compare(args) -> int:
    from bbopt.analysis.table import metrics_table, rejections
    from bbopt.errors import InputError
    from bbopt.outputs import atomic_path, write_json
    from bbopt.policies import make_policy

    policies = list(dict.fromkeys(p.strip() for p in args.policies.split(",") if p.strip()))
    if not policies:
        raise InputError("no policy given", field="--policies")
    options = _options(args.option)
    for name in policies:  # fail before the first run on an unknown name or option
        make_policy(name, **_applicable(name, options))
    _check_options(list(dict.fromkeys([*policies, args.reference])) if args.split is not None
                   else policies, options)
    if args.split is not None:
        if args.warmup not in ("0", 0) or args.cooldown not in ("0", 0):
            raise InputError("--warmup/--cooldown do not apply to --split (each part is "
                             "measured whole)", field="--split")
        out = _prepare_out(args, ["split_summary.csv", "split_parts.csv"])
        w, platform = _load(args)
        options = _entitlements(args, w, list(dict.fromkeys([*policies, args.reference])))
        _write_skipped(out, w)
        return _compare_split(args, w, platform, policies, options, out)
    out = _prepare_out(args, [f"{p}_jobs.csv" for p in policies])
    w, platform = _load(args)
    options = _entitlements(args, w, policies)
    _write_skipped(out, w)
    prov = _provenance(args, w, platform, policies, options)
    results = {}
    metrics: dict[str, dict[str, float]] = {}
    show = not args.no_progress and sys.stderr.isatty()
    from bbopt.analysis.workers import run_each

    runs = run_each(_simulate_measured, [(w.jobs, platform, pol, _with_mode(
        pol, _applicable(pol, options), args), args.tick, w.name, _execution(args))
        for pol in policies], _workers(args, len(w.jobs), policies))
    try:
        for pol, (r, extra) in zip(_progress(policies, show), runs, strict=True):
            r.jobs = w.jobs
            results[pol] = r
            metrics[pol] = _metrics(r, args) | extra
            if out is not None:  # each policy's results as soon as it finishes
                with atomic_path(out / f"{pol}_jobs.csv") as tmp:
                    r.to_csv(tmp)
                write_json(out / "summary.json", {
                    "provenance": prov, "metrics": metrics,
                    "unfinished": [p for p in policies if p not in metrics]})
    except KeyboardInterrupt:
        done = ", ".join(metrics) or "none"
        left = ", ".join(p for p in policies if p not in metrics)
        kept = f"; their results are in {out}" if out is not None and metrics else ""
        print(f"bbopt: interrupted: finished {done}; not finished {left}{kept}",
              file=sys.stderr)
        return 130
    title = (f"{w.name}: {len(w.jobs)} jobs on {platform.name} ({platform.nodes} nodes, "
             f"{platform.bb / 1e9:g} GB BB)")
    if args.format == "table":
        _echo(metrics_table(metrics, title))
        print(rejections(results), end="")
    elif args.format == "csv":
        keys = list(next(iter(metrics.values())))
        _echo("metric," + ",".join(metrics))
        for k in keys:
            _echo(k + "," + ",".join(repr(metrics[p][k]) for p in metrics))
    else:
        import json
        _echo(json.dumps(metrics, indent=2))
    if out is not None:
        print(f"wrote {len(results)} job CSVs and summary.json to {out}", file=sys.stderr)
    if args.plot:
        from bbopt.analysis.plots import plot_comparison

        with atomic_path(args.plot) as tmp:
            plot_comparison(results, tmp, title=title)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _compare_split(args, w, platform, policies, options, out) -> int:
    """``bbopt compare --split N``: the normalised per-part comparison."""
    import json

    from bbopt.analysis.experiments import compare_split, format_table
    from bbopt.policies import make_policy

    make_policy(args.reference, **_applicable(args.reference, options))
    names = list(dict.fromkeys([args.reference, *policies]))
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    show = not args.no_progress and sys.stderr.isatty()

    def progress(done: int, total: int) -> None:
        if show:
            print(f"\r{done}/{total} runs", end="" if done < total else "\n", file=sys.stderr)

    jobs, name = w.jobs, w.name
    table = compare_split(jobs, platform, names, n_parts=args.split, reference=args.reference,
                          metrics=metrics, tick=args.tick, progress=progress,
                          options={p: _with_mode(p, _applicable(p, options), args)
                                   for p in names}, workers=_workers(args, len(jobs), names))
    title = (f"{name}: {len(jobs)} jobs on {platform.name} ({platform.nodes} nodes, "
             f"{platform.bb / 1e9:g} GB BB), {args.split} parts")
    if args.format == "table":
        _echo(format_table(table, title))
    elif args.format == "csv":
        _echo(table.to_csv(index=False), end="")
    else:
        _echo(table.to_json(orient="records", indent=2))
    if out is not None:
        from bbopt.outputs import write_json, write_text

        write_text(out / "split_summary.csv", table.to_csv(index=False))
        write_text(out / "split_parts.csv", table.attrs["raw"].to_csv(index=False))
        write_json(out / "summary.json", {"provenance": _provenance(args, w, platform, names,
                                                                    options),
                                          "split": json.loads(table.to_json(orient="records"))})
        print(f"wrote split_summary.csv, split_parts.csv and summary.json to {out}",
              file=sys.stderr)
    if args.plot:  # the forest plot of the normalised metrics
        from bbopt.analysis.figures import forest_plot
        from bbopt.analysis.intervals import interval_table
        from bbopt.outputs import atomic_path

        with atomic_path(args.plot) as tmp:
            forest_plot(interval_table(table.attrs["raw"]), reference=args.reference,
                        title=title, path=tmp)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0


def _applicable(policy: str, options: dict[str, Any]) -> dict[str, Any]:
    """The subset of ``options`` that ``policy`` accepts (compare runs different policies)."""
    from bbopt.policies import policy_options

    accepted = policy_options(policy)
    if "**" in accepted:
        return options
    return {k: v for k, v in options.items() if k in accepted}


def _check_options(policies: list[str], options: dict[str, Any]) -> None:
    """Every ``-o`` option must be accepted by at least one of ``policies`` (a typo is an error,
    not a silently ignored option)."""
    from bbopt.errors import InputError
    from bbopt.policies import policy_options

    accepted: set[str] = set()
    for name in policies:
        accepted |= set(policy_options(name))
    if "**" in accepted:
        return
    unknown = sorted(set(options) - accepted)
    if unknown:
        raise InputError(f"no policy among {', '.join(policies)} accepts {', '.join(unknown)}; "
                         f"their options: {', '.join(sorted(accepted)) or 'none'}",
                         field=f"-o {unknown[0]}")


def _simulate_measured(jobs, platform, policy, options, tick, name, execution=None):
    """One policy's replay (in a worker process of ``compare``) and the metrics its execution
    model adds (the model's record of the run, e.g. the exclusive-I/O transfers, stays where it
    ran). The result comes back without its jobs, the caller's list in its order: sending them
    back from a worker cost as much as sending them there."""
    from bbopt.analysis.table import model_metrics
    from bbopt.simulation import simulate
    from bbopt.simulation.execution import make_execution_model

    model = make_execution_model(execution)
    result = simulate(jobs, platform, policy, options=options, tick=tick, workload_name=name,
                      execution=model)
    extra = model_metrics(result, model)
    result.jobs = []
    return result, extra


def _workers(args, runs: int, policies) -> int:
    """--workers, or every core unless the runs (``runs`` jobs per policy) are small."""
    from bbopt.analysis.workers import workers_for
    from bbopt.errors import InputError

    if args.workers is not None and args.workers < 1:
        raise InputError(f"--workers must be >= 1, got {args.workers}", field="--workers")
    return args.workers or workers_for(runs, policies)


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
    options = _with_mode(args.policy, _options(args.option), args)
    from bbopt.policies import make_policy

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

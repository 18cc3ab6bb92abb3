"""``bbopt simulate`` and ``bbopt compare`` (with ``--split``): the command-line flags as a
:class:`~bbopt.runs.RunSpec`, the runs (:mod:`bbopt.runs`, :func:`~bbopt.analysis.workers.
compare_policies`, :func:`~bbopt.analysis.experiments.compare_split` for Kopanski & Rzadca's
split comparison, Section 4.2), and what they print and write (:mod:`bbopt.outputs`). The
parsers are in :mod:`bbopt.cli`; every check that can fail runs before the first simulation.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from bbopt.outputs import echo as _echo
from bbopt.units import parse_options as _options


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
                   cooldown=parse_seconds(args.cooldown, "--cooldown"),
                   reader=_io_aware(args))


def _io_aware(args) -> dict[str, Any]:
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


def cmd_simulate(args) -> int:
    from bbopt.analysis.table import metrics_table, rejections
    from bbopt.outputs import run_file, streamed_csv, write_json, write_run
    from bbopt.runs import check_policies, run

    spec = _spec(args, args.policy)
    check_policies(spec, [args.policy])  # a bad name or option fails before any work
    out = _prepare_out(args, [run_file(args.policy), run_file(args.policy, "segments")])
    spec, w = _load(args, spec, [args.policy])
    _write_skipped(out, w)
    records = []

    def replay(on_job_end=None):
        records.append(run(spec, progress=not args.no_progress, on_job_end=on_job_end))
        return records[-1].result

    replay() if out is None else streamed_csv(out / run_file(args.policy), replay)
    result, metrics = records[0].result, records[0].metrics
    _echo(metrics_table({args.policy: metrics}, _title(spec)))
    print(rejections({args.policy: result}), end="")
    if out is not None:
        write_run(out, args.policy, result, jobs_csv=False)  # (streamed as jobs ended)
        write_json(out / "summary.json", {
            "provenance": _provenance(args, w, spec, [args.policy]),
            "metrics": {args.policy: metrics}, "unfinished": []})
        _echo(f"wrote {out / run_file(args.policy)} and {out / 'summary.json'}")
    return 0


def cmd_compare(args) -> int:
    from bbopt.analysis.table import rejections, render
    from bbopt.analysis.workers import compare_policies
    from bbopt.errors import InputError
    from bbopt.outputs import run_file, write_json, write_run
    from bbopt.progress import Within
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
    out = _prepare_out(args, [run_file(p, k) for p in policies for k in ("jobs", "segments")])
    spec, w = _load(args, spec, policies)
    _write_skipped(out, w)
    prov = _provenance(args, w, spec, policies)
    results, metrics = {}, {}
    within = Within(unit="job", enabled=not args.no_progress)
    runs = compare_policies(spec, policies, workers_=args.workers, on_jobs=within.report)
    try:
        for pol, result, m in _progress(runs, len(policies), not args.no_progress):
            within.end(pol)
            results[pol], metrics[pol] = result, m
            if out is not None:  # each policy's results as soon as it finishes
                write_run(out, pol, result)
                write_json(out / "summary.json", {
                    "provenance": prov, "metrics": metrics,
                    "unfinished": [p for p in policies if p not in metrics]})
    except KeyboardInterrupt as exc:
        from bbopt.signals import interrupted

        within.close()
        left = ", ".join(p for p in policies if p not in metrics)
        kept = f"; their results are in {out}" if out is not None and metrics else ""
        return interrupted(exc, f"finished {', '.join(metrics) or 'none'}; not finished "
                                f"{left}{kept}")
    _echo(render(metrics, args.format, _title(spec)))
    if args.format == "table":
        print(rejections(results), end="")
    if out is not None:
        print(f"wrote {len(results)} job CSVs and summary.json to {out}", file=sys.stderr)
    if args.plot:
        from bbopt.analysis.figures import comparison_plot

        _plot(args.plot, comparison_plot, results, title=_title(spec))
    return 0


def _compare_split(args, w, spec, names, out) -> int:
    """``bbopt compare --split N``: the normalised per-part comparison."""
    from bbopt.analysis.experiments import compare_split, format_split
    from bbopt.analysis.workers import workers
    from bbopt.progress import progress as display
    from bbopt.runs import for_policy

    bars: list[Any] = []  # (the runs are counted by compare_split: the bar at its first report)

    def progress(done: int, total: int) -> None:
        if not bars:
            bars.append(display(total, unit="run", desc="compare --split",
                                enabled=not args.no_progress, quiet=True))
        bars[0].update(done - bars[0].n)

    try:
        table = compare_split(spec.workload, spec.platform, names, n_parts=args.split,
                              reference=args.reference, tick=spec.tick, progress=progress,
                              metrics=[m.strip() for m in args.metrics.split(",") if m.strip()],
                              base=spec, options={p: for_policy(spec, p).options for p in names},
                              workers=workers(args.workers, len(spec.workload), names))
    finally:
        for bar in bars:
            bar.close()
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


def _progress(items, total: int, enabled: bool):
    """Policies as they finish: a bar on a terminal, a line a minute in a log once the
    comparison has lasted a minute (:mod:`bbopt.progress`)."""
    from bbopt.progress import progress

    bar = progress(total, unit="policy", desc="compare", enabled=enabled, quiet=True)
    for item in items:
        bar.update(1)
        yield item
    bar.close()

"""The command line of experiments at scale: ``bbopt sweep SPEC.yaml`` (and ``sweep collect``),
``bbopt report DIR`` and ``bbopt generate NAME``, attached to ``bbopt`` by :mod:`bbopt.cli`.

The work itself is in :mod:`bbopt.experiments` (specifications, the results store, execution on
processes or Dask) and the report and figure modules of :mod:`bbopt.analysis`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from bbopt.units import parse_options


def add_parsers(sub) -> None:
    """Add ``sweep``, ``report`` and ``generate`` to the ``bbopt`` command line."""
    sw = sub.add_parser("sweep", help="run a sweep specification into a results store, or "
                        "'sweep collect DIR' to tabulate one",
                        description="bbopt sweep SPEC.yaml --out DIR runs every missing cell "
                        "of the grid (an interrupted sweep resumes); bbopt sweep collect DIR "
                        "[--out FILE.csv|.parquet] prints or writes one row per run.")
    sw.add_argument("spec", metavar="SPEC|collect", help="the sweep YAML, or 'collect'")
    sw.add_argument("--plugin", action="append", default=[], metavar="MODULE",
                    help="import MODULE first (its policies, backends, execution models), as "
                         "the spec's 'plugins:' list does (repeatable)")
    sw.add_argument("dir", nargs="?", metavar="DIR", help="with collect: the results directory")
    sw.add_argument("--out", "-O", metavar="DIR|FILE",
                    help="results directory (sweep; default results/NAME), or the table file "
                         "(collect: .csv, or .parquet with the parquet extra)")
    sw.add_argument("--quick", action="store_true", help="the spec's quick variant")
    sw.add_argument("--workers", "-j", type=int, default=None,
                    help="worker processes (default: the CPU count)")
    sw.add_argument("--serial", action="store_true", help="run in this process")
    sw.add_argument("--dask", metavar="local|tcp://HOST:PORT|FILE.json", default=None,
                    help="run on Dask: a LocalCluster, or a running scheduler by address or "
                         "scheduler file (cluster extra)")
    sw.add_argument("--batch", type=int, default=None, metavar="N", help="runs per task")
    sw.add_argument("--dry-run", action="store_true",
                    help="list the cells and how many are already done; run nothing")
    sw.add_argument("--no-progress", action="store_true", help="no progress bar")
    sw.add_argument("--progress-every", type=float, default=60.0, metavar="S",
                    help="without a terminal (batch jobs): a progress line every S seconds "
                         "(default 60)")
    sw.add_argument("--no-timing", action="store_true",
                    help="collect: leave out wall/decision times, host and dates")
    sw.add_argument("--force", action="store_true",
                    help="collect: overwrite an existing table file (a sweep never overwrites "
                    "its runs: it resumes)")
    sw.set_defaults(func=_cmd_sweep)

    rp = sub.add_parser("report", help="figures and a summary page from a results store")
    rp.add_argument("dir", metavar="DIR", help="results directory of bbopt sweep")
    rp.add_argument("--out", "-O", metavar="DIR", default=None,
                    help="where to write (default DIR/report)")
    rp.add_argument("--reference", default=None, help="normalise by this policy (default: "
                    "the spec's reference, else the first policy)")
    rp.add_argument("--metrics", default=None, help="comma-separated metrics of the forest "
                    "plot (default: the spec's)")
    rp.add_argument("--format", choices=("png", "svg", "pdf"), default="png",
                    help="file format of the figures")
    rp.add_argument("--force", action="store_true", help="overwrite an existing report")
    rp.set_defaults(func=_cmd_report)

    gen = sub.add_parser("generate", help="write a workload made by one of the papers' "
                         "generators (SWF or Batsim JSON)")
    gen.add_argument("name", nargs="?", help="generator name (--list shows them)")
    gen.add_argument("params", nargs="*", metavar="KEY=VALUE", help="generator parameters")
    gen.add_argument("--workload", "-w", metavar="FILE", help="input workload of a transform")
    gen.add_argument("--seed", type=int, default=0, help="seed of the generator's draws")
    gen.add_argument("--out", "-O", metavar="FILE", help=".swf or .json (Batsim)")
    gen.add_argument("--nodes", type=int, default=None,
                     help="machine size written in the header (SWF MaxNodes / Batsim nb_res)")
    gen.add_argument("--list", action="store_true", help="list the generators and parameters")
    gen.add_argument("--force", action="store_true", help="overwrite an existing --out file")
    gen.set_defaults(func=_cmd_generate)


def _cmd_sweep(args) -> int:
    from bbopt.analysis.store import collect, write_table
    from bbopt.errors import InputError
    from bbopt.outputs import check_out_file

    if args.spec == "collect":
        if not args.dir:
            raise InputError("give the results directory: bbopt sweep collect DIR",
                             field="DIR")
        if args.out:
            check_out_file(args.out, args.force)
        frame = collect(args.dir, include_timing=not args.no_timing)
        if args.out:
            write_table(frame, args.out)
            print(f"wrote {len(frame)} runs to {args.out}", file=sys.stderr)
        else:
            print(frame.to_csv(index=False), end="")
        return 0
    from bbopt.analysis.sweep import plan, run_sweep
    from bbopt.analysis.sweep_spec import load_spec

    if args.dir:
        raise InputError(f"unexpected argument {args.dir!r} (the results go to --out DIR)",
                         field="DIR")
    spec = load_spec(args.spec, quick=args.quick)
    spec.plugins = list(dict.fromkeys([*args.plugin, *spec.plugins]))  # (workers import them)
    out = Path(args.out or Path("results") / (spec.name + ("-quick" if args.quick else "")))
    if args.dry_run:
        from bbopt.analysis.store import Store

        tasks = plan(spec)
        store = Store(out)
        done = sum(store.done(t.hash) for t in tasks)
        for t in tasks:
            mark = "done" if store.done(t.hash) else "todo"
            print(f"{mark}  {t.hash}  " + "  ".join(f"{k}={v}" for k, v in t.params.items()
                                                      if v is not None))
        print(f"{len(tasks)} runs, {done} done, {len(tasks) - done} to run", file=sys.stderr)
        return 0
    report = run_sweep(spec, out, executor="serial" if args.serial else "processes",
                       workers=args.workers, dask=args.dask, batch=args.batch,
                       progress=False if args.no_progress else
                       (True if sys.stderr.isatty() else args.progress_every),
                       spec_text=Path(args.spec).read_text())
    print(f"{spec.name}: {report.total} runs, {report.skipped} already done, {report.ran} run, "
          f"{report.failed} failed, in {report.wall_time:.1f} s -> {out}", file=sys.stderr)
    for line in report.failures[:5]:
        print(f"  failed: {line}", file=sys.stderr)
    return 1 if report.failed else 0


def _cmd_report(args) -> int:
    from bbopt.analysis.report import write_report
    from bbopt.outputs import check_out_dir

    metrics = [m.strip() for m in args.metrics.split(",")] if args.metrics else None
    check_out_dir(args.out or Path(args.dir) / "report", ["index.html", "index.md",
                                                          "results.csv"], args.force)
    page = write_report(args.dir, args.out or Path(args.dir) / "report",
                        reference=args.reference, metrics=metrics, fmt=args.format)
    print(f"wrote {page}", file=sys.stderr)
    return 0


def _cmd_generate(args) -> int:
    from bbopt.errors import InputError
    from bbopt.outputs import atomic_path, check_out_file
    from bbopt.workloads.generators.catalog import GENERATORS, apply, generator

    if args.list or not args.name:
        for g in map(generator, GENERATORS.names()):
            params = ", ".join(f"{k}={v!r}" for k, v in g.parameters().items())
            print(f"{g.name:16s} {g.kind:9s} {g.about}" + (f"\n{'':27s}{params}"
                                                           if params else ""))
        return 0 if args.list else 2
    gen = generator(args.name)
    from bbopt.units import check_options

    params = check_options(gen.fn, parse_options(args.params, field="params"),
                           what=f"generator {gen.name!r}", fixed={"jobs": None})
    jobs = None
    if gen.kind == "transform":
        if not args.workload:
            raise InputError(f"{gen.name!r} transforms a workload: give --workload FILE",
                             field="--workload")
        from bbopt.loading import load_workload

        jobs, _ = load_workload(args.workload, bb="none", seed=args.seed)
    out = apply(gen.name, jobs, args.seed, **params)
    if not args.out:
        raise InputError("give --out FILE.swf or FILE.json", field="--out")
    path = Path(args.out)
    if args.workload and path.exists():  # (a transform never overwrites what it reads)
        from bbopt.loading import find_workload

        if os.path.samefile(path, find_workload(args.workload)):
            raise InputError("is the input workload: write the generated one elsewhere",
                             source=str(path), field="--out")
    check_out_file(path, args.force)  # any other existing file: only with --force
    nodes = args.nodes or max(j.nodes for j in out)
    note = (f"bbopt generate {gen.name} " + " ".join(args.params) + f" --seed {args.seed}"
            ).strip()
    if path.name.endswith((".swf", ".swf.gz")):
        from bbopt.workloads.swf_writer import write_swf

        def write(tmp: Path) -> None:
            write_swf(out, tmp, max_nodes=nodes,
                      bb_columns="cqsim" if any(j.bb > 0 for j in out) else "none",
                      comments=(note,))
    elif path.suffix == ".json":
        from bbopt.workloads.batsim import write_batsim

        def write(tmp: Path) -> None:
            write_batsim(out, tmp, nb_res=nodes, description=note)
    else:
        raise InputError("the output must end in .swf, .swf.gz or .json", field="--out")
    with atomic_path(path) as tmp:  # (the same suffix: a .gz is written gzipped)
        write(tmp)
    print(f"wrote {len(out)} jobs to {path}", file=sys.stderr)
    return 0



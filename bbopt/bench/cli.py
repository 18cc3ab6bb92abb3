"""``bbopt bench``: capture the instance library, export it, run the backends on it, report.

``bbopt bench capture`` records instances from simulations (:mod:`bbopt.bench.capture`);
``bbopt bench export`` writes the integer forms as MPS / LP files (:mod:`bbopt.bench.export`);
``bbopt bench run`` solves a tier with every applicable backend x budget x seed into a
resumable store (:mod:`bbopt.bench.run`); ``bbopt bench report`` draws the performance profiles
and tables (:mod:`bbopt.bench.report`). See ``docs/bench.md``.
"""

from __future__ import annotations

import sys


def add_parser(sub) -> None:
    """Add the ``bench`` command and its subcommands to the ``bbopt`` parser."""
    b = sub.add_parser("bench", help="solver-quality benchmark: instances, runs, reports")
    bs = b.add_subparsers(dest="bench_command", metavar="SUBCOMMAND")
    b.set_defaults(func=lambda args: (b.print_help(), 2)[1])

    c = bs.add_parser("capture", help="record the decision problems policies face as "
                      "instances (needs $BBOPT_DATA for the KTH trace)")
    c.add_argument("--tier", action="append", choices=("small", "medium", "large"),
                   help="tier(s) to capture (repeatable; default: small)")
    c.add_argument("--family", action="append",
                   help="instance family (repeatable; default: all)")
    c.add_argument("--out", help="library root (default: the committed library in the "
                   "package; tiers go to OUT/<tier>/)")
    c.add_argument("--seed", type=int, default=0, help="workload seed (default 0)")
    c.add_argument("--no-optimum", action="store_true",
                   help="do not solve the instances for their proven optimum")
    c.set_defaults(func=_cmd_capture)

    e = bs.add_parser("export", help="write the integer forms of a tier as MPS and LP files")
    e.add_argument("--tier", default="small", choices=("small", "medium", "large"),
                   help="the tier to export (default: small)")
    e.add_argument("--instances", help="instance directory (default: the library's tier)")
    e.add_argument("--out", required=True, help="directory for the .mps / .lp files")
    e.set_defaults(func=_cmd_export)

    r = bs.add_parser("run", help="every applicable backend x budget x seed on a tier")
    r.add_argument("--tier", default="small", choices=("small", "medium", "large"),
                   help="the tier to run (default: small)")
    r.add_argument("--instances", help="instance directory (default: the library's tier)")
    r.add_argument("--out", default="results/bench", help="results store (resumable; default "
                   "results/bench)")
    r.add_argument("--budgets", default=None,
                   help="comma-separated budgets in seconds (default: the tier's)")
    r.add_argument("--seeds", type=int, default=None, help="seeds per heuristic backend "
                   "(default: the tier's)")
    r.add_argument("--backends", help="comma-separated backend names (default: all "
                   "applicable)")
    r.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    r.add_argument("--no-progress", action="store_true",
                   help="no progress bar (terminal) or lines every $BBOPT_PROGRESS_EVERY "
                        "seconds, default 60 (log) of the runs done")
    r.set_defaults(func=_cmd_run)

    p = bs.add_parser("report", help="performance profiles, shifted geometric means, primal "
                      "integrals, hypervolume ECDFs and tables from a results store")
    p.add_argument("store", nargs="?", default="results/bench", help="results store")
    p.add_argument("--out", help="directory for figures and tables (default STORE/report)")
    p.add_argument("--outcomes", help="a sweep store of audited runs (e.g. of "
                   "benchmarks/quality/audit.yaml): relate decision gaps to waits")
    p.set_defaults(func=_cmd_report)


def _cmd_capture(args) -> int:
    from bbopt.bench.capture import capture

    files = capture(args.family, tuple(args.tier or ("small",)), args.out, args.seed,
                    solve_known=not args.no_optimum, log=print)
    print(f"{len(files)} instances written")
    return 0


def _instances_dir(args):
    from bbopt.bench.instances import tier_dir

    return args.instances or tier_dir(args.tier)


def _cmd_export(args) -> int:
    from bbopt.bench.export import export_dir

    files = export_dir(_instances_dir(args), args.out)
    print(f"{len(files)} files written to {args.out}")
    return 0


def _cmd_run(args) -> int:
    from bbopt.bench.run import run_tier

    budgets = None if args.budgets is None else [float(b) for b in args.budgets.split(",")]
    backends = None if args.backends is None else args.backends.split(",")
    summary = run_tier(_instances_dir(args), args.out, tier=args.tier, budgets=budgets,
                       seeds=args.seeds, backends=backends, workers=args.workers,
                       log=lambda s: print(s, file=sys.stderr),
                       progress=not args.no_progress)
    print(summary)
    return 0


def _cmd_report(args) -> int:
    from bbopt.bench.report import report

    for path in report(args.store, args.out, args.outcomes):
        print(path)
    return 0

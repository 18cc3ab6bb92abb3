"""``bbopt bench``: capture the instance library, export it, run the backends on it, report.

``bbopt bench capture`` records instances from simulations (:mod:`bbopt.bench.capture`);
``bbopt bench export`` writes the integer forms as MPS / LP files (:mod:`bbopt.bench.export`);
``bbopt bench run`` solves a tier with every applicable backend x budget x seed into a
resumable store (:mod:`bbopt.bench.run`); ``bbopt bench report`` draws the performance profiles
and tables (:mod:`bbopt.bench.report`). See ``docs/bench.md``.
"""

from __future__ import annotations


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
    e.add_argument("--tier", default="small", choices=("small", "medium", "large"))
    e.add_argument("--instances", help="instance directory (default: the library's tier)")
    e.add_argument("--out", required=True, help="directory for the .mps / .lp files")
    e.set_defaults(func=_cmd_export)


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

"""``bbopt serve`` and ``bbopt batsim``: the command-line faces of :mod:`bbopt.interop`.

``bbopt serve`` runs the warm decision service (:mod:`bbopt.interop.serve`) on stdin/stdout, a
Unix domain socket or 127.0.0.1; ``bbopt batsim scheduler`` answers Batsim as its scheduler and
``bbopt batsim server`` replays a workload in bbopt's simulator for a Batsim scheduler
(:mod:`bbopt.interop.batsim`).
"""

from __future__ import annotations

import sys


def add_parser(sub) -> None:
    """Add the ``serve`` and ``batsim`` commands to the ``bbopt`` parser."""
    s = sub.add_parser("serve", help="a warm decision service: JSON lines on stdin/stdout, a "
                       "Unix socket or 127.0.0.1")
    s.add_argument("--socket", metavar="PATH", default=None,
                   help="listen on this Unix domain socket (default: stdin/stdout)")
    s.add_argument("--port", type=int, default=None, metavar="PORT",
                   help="also (or only) listen on 127.0.0.1:PORT (0: any free port)")
    s.add_argument("--warm", default=None, metavar="P1,P2",
                   help="policies decided once at start (default: "
                   "fcfs-bb,sjf-bb,conservative-bb,bbsched,plan-2; '' for none)")
    s.set_defaults(func=_cmd_serve)

    b = sub.add_parser("batsim", help="Batsim's scheduler protocol: bbopt as the scheduler, or "
                       "bbopt's simulator for a Batsim scheduler")
    bs = b.add_subparsers(dest="batsim_command", metavar="SUBCOMMAND")
    b.set_defaults(func=lambda args: (b.print_help(), 2)[1])

    sc = bs.add_parser("scheduler", help="answer Batsim (4.x JSON protocol) with a bbopt policy")
    sc.add_argument("--policy", default="fcfs-bb", help="policy name (see `bbopt policies`)")
    sc.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                    help="policy option (repeatable)")
    sc.add_argument("--socket", default="tcp://127.0.0.1:28000", metavar="ENDPOINT",
                    help="ZeroMQ endpoint to bind (default tcp://127.0.0.1:28000, Batsim's)")
    sc.add_argument("--platform", "-p", default=None, metavar="NAME|FILE",
                    help="a bbopt platform instead of Batsim's resources (nodes and BB)")
    sc.add_argument("--tick", type=float, default=None, metavar="SECONDS",
                    help="also ask Batsim for a call every SECONDS while jobs wait")
    sc.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                    help="longest wait for Batsim's next message (default 600)")
    sc.set_defaults(func=_cmd_scheduler)

    sv = bs.add_parser("server", help="replay a workload in bbopt's simulator, scheduled by a "
                       "Batsim scheduler (e.g. pybatsim's)")
    sv.add_argument("--workload", "-w", required=True, metavar="FILE",
                    help="SWF or Batsim JSON workload")
    sv.add_argument("--platform", "-p", default=None, metavar="NAME|FILE",
                    help="platform (default: the trace's own, as `bbopt simulate`)")
    sv.add_argument("--jobs", type=int, default=None, metavar="N",
                    help="take the first N jobs (by submission)")
    sv.add_argument("--bb", choices=("auto", "lognormal", "none"), default="auto",
                    help="BB requests, as `bbopt simulate` (none: jobs ask no BB)")
    sv.add_argument("--seed", type=int, default=0, help="seed of every random draw")
    sv.add_argument("--socket", default="tcp://127.0.0.1:28000", metavar="ENDPOINT",
                    help="the scheduler's ZeroMQ endpoint (default tcp://127.0.0.1:28000)")
    sv.add_argument("--timeout", type=float, default=600.0, metavar="SECONDS",
                    help="longest wait for the scheduler's answer (default 600)")
    sv.add_argument("--out", metavar="DIR", default=None,
                    help="write batsim_jobs.csv and summary.json here")
    sv.add_argument("--force", action="store_true", help="overwrite existing result files")
    sv.set_defaults(func=_cmd_server)


def _cmd_serve(args) -> int:
    from bbopt.interop.serve import WARM_POLICIES
    from bbopt.interop.transport import run

    warm = WARM_POLICIES if args.warm is None else tuple(
        p.strip() for p in args.warm.split(",") if p.strip())
    return run(args.socket, args.port, warm, announce=sys.stderr)



def _cmd_scheduler(args) -> int:
    from bbopt.interop.batsim.scheduler import run_scheduler
    from bbopt.loading import load_platform
    from bbopt.units import parse_options

    platform = load_platform(args.platform) if args.platform is not None else None
    s = run_scheduler(args.socket, args.policy, parse_options(args.option), platform, args.tick,
                      args.timeout)
    print(f"bbopt batsim scheduler: {s.decisions} decisions, simulation ended at "
          f"t={s.now:g}s", file=sys.stderr)
    return 0


def _cmd_server(args) -> int:
    import json

    from bbopt.analysis.metrics import summarize
    from bbopt.errors import InputError
    from bbopt.interop.batsim.server import serve_batsim
    from bbopt.loading import read_workload_and_platform
    from bbopt.outputs import check_out_dir, streamed_csv, write_json

    if args.jobs is not None and args.jobs < 1:
        raise InputError(f"must be >= 1, got {args.jobs}", field="--jobs")
    out = check_out_dir(args.out, ["batsim_jobs.csv", "summary.json"], args.force) \
        if args.out else None
    w, platform = read_workload_and_platform(args.workload, args.platform, n_jobs=args.jobs,
                                             seed=args.seed, bb=args.bb)

    def run(on_job_end=None):
        return serve_batsim(w.jobs, platform, args.socket, workload_name=w.name,
                            workload_path=str(args.workload), timeout=args.timeout,
                            on_job_end=on_job_end)

    result = run() if out is None else streamed_csv(out / "batsim_jobs.csv", run)
    metrics = summarize(result)
    if out is not None:
        write_json(out / "summary.json", {"workload": str(args.workload), "jobs": len(w.jobs),
                                          "platform": platform.name, "scheduler": args.socket,
                                          "metrics": {"batsim": metrics}})
    print(json.dumps(metrics, indent=2))
    return 0

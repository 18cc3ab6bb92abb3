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


def _cmd_serve(args) -> int:
    from bbopt.interop.serve import WARM_POLICIES, run

    warm = WARM_POLICIES if args.warm is None else tuple(
        p.strip() for p in args.warm.split(",") if p.strip())
    return run(args.socket, args.port, warm, announce=sys.stderr)

"""``bbopt slurm``: a local test cluster, the bridge, and trace replay through Slurm.

``bbopt slurm cluster`` starts a local Slurm (:mod:`bbopt.slurm.cluster`) and prints the
``SLURM_CONF`` to use; ``bbopt slurm run`` puts a bbopt policy in front of a Slurm partition
(:mod:`bbopt.slurm.bridge`); ``bbopt slurm replay`` replays a trace through a fresh local Slurm
under Slurm's backfill or the bridge (:mod:`bbopt.slurm.replay`) and writes bbopt's jobs.csv.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any


def add_parser(sub) -> None:
    """Add the ``slurm`` command and its subcommands to the ``bbopt`` parser."""
    s = sub.add_parser("slurm", help="drive a real Slurm: local cluster, bridge, replay")
    ss = s.add_subparsers(dest="slurm_command", metavar="SUBCOMMAND")
    s.set_defaults(func=lambda args: (s.print_help(), 2)[1])

    c = ss.add_parser("cluster", help="start a local Slurm cluster until interrupted")
    c.add_argument("--nodes", type=int, default=16, help="emulated nodes (default 16)")
    c.add_argument("--bb", default="80GB", help="burst-buffer pool size (default 80GB)")
    c.add_argument("--bb-unit", default="1GB", help="bytes per bb license (default 1GB)")
    c.add_argument("--dir", help="directory for config, state and logs (default: a new "
                   "temporary one, removed on exit)")
    c.add_argument("--hold-new-jobs", action="store_true",
                   help="submit every job held (job_submit.lua), for `bbopt slurm run`")
    c.set_defaults(func=_cmd_cluster)

    g = ss.add_parser("site-config", help="print the slurm.conf lines (bb license pool) and "
                      "write the job_submit.lua that puts bbopt in front of a site's Slurm")
    g.add_argument("--bb", required=True, help="burst-buffer capacity, e.g. 480TB")
    g.add_argument("--bb-unit", default="1GB", help="bytes per bb license (default 1GB)")
    g.add_argument("--partition", action="append", default=[],
                   help="partition bbopt schedules (repeatable; default: every partition)")
    g.add_argument("--not-default", action="store_true",
                   help="the default partition is not bbopt's: jobs without -p are not held")
    g.add_argument("--bf-licenses", action="store_true",
                   help="also let Slurm's own backfill reserve bb licenses")
    g.add_argument("--lua", default=None, metavar="PATH",
                   help="write job_submit.lua here (beside slurm.conf); default: do not hold")
    g.add_argument("--force", action="store_true", help="replace an existing --lua file")
    g.set_defaults(func=_cmd_site_config)

    r = ss.add_parser("run", help="schedule a Slurm partition's held jobs with a bbopt policy")
    r.add_argument("--policy", default="fcfs-bb", help="policy name (see `bbopt policies`)")
    r.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option (repeatable)")
    r.add_argument("--state-dir", default="bbopt-bridge", help="policy memory and decision "
                   "log (default ./bbopt-bridge)")
    r.add_argument("--interval", default="1s", help="polling interval (default 1s)")
    r.add_argument("--tick", default=None, help="decide only every TICK (periodic scheduler) "
                   "instead of at every change")
    r.add_argument("--bb-unit", default="1GB", help="bytes per bb license (default 1GB)")
    r.add_argument("--partition", default=None, help="partition to schedule (default: all)")
    r.add_argument("--conf", default=None, help="slurm.conf (default: $SLURM_CONF)")
    r.add_argument("--until-idle", action="store_true",
                   help="exit when no job waits, is released or runs")
    r.add_argument("--max-time", default=None, help="exit after this long")
    r.add_argument("--progress-every", default=None, metavar="DURATION",
                   help="a progress line on stderr this often (default "
                        "$BBOPT_PROGRESS_EVERY seconds, else 60s; 0: never)")
    r.add_argument("--connect-timeout", default="10s", metavar="DURATION",
                   help="give up at start if slurmctld does not answer within this (default "
                        "10s)")
    r.set_defaults(func=_cmd_run)

    p = ss.add_parser("replay", help="replay a trace through a fresh local Slurm")
    p.add_argument("trace", nargs="?", default=None,
                   help="SWF or Batsim JSON; default: the embedded KTH-like workload")
    p.add_argument("--speedup", type=float, default=600.0, help="time scale-down (default 600)")
    p.add_argument("--jobs", type=int, default=300, help="first N jobs (default 300)")
    p.add_argument("--nodes", type=int, default=16, help="emulated nodes (default 16)")
    p.add_argument("--bb-pool", default=None, help="BB pool (default 5GB per node)")
    p.add_argument("--bb-unit", default="1GB", help="bytes per bb license (default 1GB)")
    p.add_argument("--bb", choices=("auto", "lognormal", "none"), default="auto",
                   help="BB requests: auto draws Kopanski's log-normal model when the trace has "
                   "none")
    p.add_argument("--seed", type=int, default=0, help="seed of the BB draw and the policy")
    p.add_argument("--scheduler", choices=("slurm", "bridge"), default="slurm",
                   help="Slurm's own backfill, or the bridge with --policy (default slurm)")
    p.add_argument("--policy", default="fcfs-bb", help="the bridge's policy (--scheduler bridge)")
    p.add_argument("-o", "--option", action="append", default=[], metavar="KEY=VALUE",
                   help="policy option, e.g. -o budget=0.2 (repeatable)")
    p.add_argument("--budget-mode", choices=("deterministic", "wall"), default="deterministic",
                   help="how the bridge's solver budgets are counted, as in simulate: "
                        "deterministic (default) caps work, so the bridge decides as the "
                        "simulation of the same trace does; wall caps each decision's time")
    p.add_argument("--interval", default="1s", help="bridge polling interval (default 1s)")
    p.add_argument("--tick", default=None, help="bridge decides only every TICK")
    p.add_argument("--warmup", default="0", metavar="DURATION",
                   help="leave out of the metrics what happens before the first submission "
                        "+ DURATION (scaled time; default 0)")
    p.add_argument("--cooldown", default="0", metavar="DURATION",
                   help="... and after the last submission - DURATION (default 0)")
    p.add_argument("--out", default="slurm_jobs.csv", help="jobs.csv to write")
    p.add_argument("--no-progress", action="store_true",
                   help="no progress bar (terminal) or lines every $BBOPT_PROGRESS_EVERY "
                        "seconds, default 60 (log) of the jobs ended")
    p.set_defaults(func=_cmd_replay)


def _options(pairs: list[str]) -> dict[str, Any]:
    from bbopt.units import parse_options

    return parse_options(pairs)


def _available() -> None:
    from bbopt.errors import InputError
    from bbopt.slurm.cluster import why_unavailable

    reason = why_unavailable()
    if reason:
        raise InputError(reason, field="slurm")


def _exit_on_sigterm() -> None:
    """SIGTERM ends the command through SystemExit, so that the local cluster's context manager
    stops its daemons and jobs (by default SIGTERM would end Python without cleaning up)."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def _cmd_cluster(args) -> int:
    from bbopt.resources import parse_bytes
    from bbopt.slurm.cluster import LocalSlurm

    _available()
    unit = parse_bytes(args.bb_unit, "--bb-unit")
    licenses = int(parse_bytes(args.bb, "--bb") // unit)
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    with LocalSlurm(args.nodes, bb_licenses=licenses, directory=args.dir,
                    hold_new_jobs=args.hold_new_jobs) as cluster:
        print(f"export SLURM_CONF={cluster.conf}", flush=True)
        print(f"# {args.nodes} nodes, bb pool {licenses} licenses of {args.bb_unit}; "
              f"logs in {cluster.directory}; Ctrl-C stops it", file=sys.stderr, flush=True)
        stop.wait()
    return 0


def _cmd_site_config(args) -> int:
    from bbopt.errors import InputError
    from bbopt.outputs import atomic_path
    from bbopt.resources import parse_bytes
    from bbopt.slurm.site import job_submit_lua, slurm_conf_lines

    bb, unit = parse_bytes(args.bb, "--bb"), parse_bytes(args.bb_unit, "--bb-unit")
    lines = slurm_conf_lines(bb, unit, bf_licenses=args.bf_licenses, lua=bool(args.lua))
    text = job_submit_lua(args.partition, hold_default=not args.not_default) \
        if args.lua else None  # (checked before anything is printed or written)
    if args.lua and os.path.lexists(args.lua) and not args.force:
        raise InputError("exists; give --force to replace it", source=args.lua)
    for line in lines:
        print(line)
    if text is not None:
        with atomic_path(args.lua) as tmp:  # slurmctld never reads a half-written script
            tmp.write_text(text)
        print(f"# wrote {args.lua}; then: scontrol reconfigure", file=sys.stderr)
    return 0


def _bb_unit(args) -> float:
    """``--bb-unit`` in bytes: at least one byte per license."""
    from bbopt.resources import parse_bytes

    unit = parse_bytes(args.bb_unit, "--bb-unit")
    if not unit >= 1:
        from bbopt.errors import InputError

        raise InputError(f"must be at least 1 byte per license, got {unit!r}",
                         field="--bb-unit")
    return unit


def _cmd_run(args) -> int:
    from bbopt.progress import default_every
    from bbopt.slurm.bridge import Bridge
    from bbopt.slurm.commands import SlurmCommands
    from bbopt.slurm.site import check_partition
    from bbopt.units import parse_seconds

    if args.partition is not None:
        check_partition(args.partition)
    unit = _bb_unit(args)
    every = default_every() if args.progress_every is None else \
        parse_seconds(args.progress_every, "--progress-every")
    commands = SlurmCommands(conf=args.conf)
    bridge = Bridge(commands, args.policy, _options(args.option),
                    state_dir=args.state_dir, interval=parse_seconds(args.interval, "--interval"),
                    tick=parse_seconds(args.tick, "--tick") if args.tick else None,
                    bb_unit=unit, partition=args.partition)  # (checks the policy and options)
    commands.check_reachable(parse_seconds(args.connect_timeout, "--connect-timeout"))
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    max_time = parse_seconds(args.max_time, "--max-time") if args.max_time else None
    progress = RunProgress(bridge, every)
    print(f"bbopt slurm run: {args.policy} schedules "
          f"{args.partition or 'every partition'}; log in {bridge.log_file}", file=sys.stderr,
          flush=True)
    bridge.run(until_idle=args.until_idle, max_seconds=max_time,
               stop=lambda: progress.tick() or stop.is_set(), on_step=progress.step)
    progress.line()
    return 0


class RunProgress:
    """What ``bbopt slurm run`` says while it runs: a line every ``every`` seconds (decisions,
    jobs started, failed polls), and at once when polls start failing or recover. A service
    has no total, so no bar: on a terminal as in a log, lines on the clock and with the elapsed
    time of :mod:`bbopt.progress`."""

    def __init__(self, bridge, every: float, stream=None) -> None:
        from bbopt import progress

        self.bridge, self.every, self.stream = bridge, every, stream or sys.stderr
        self.clock = lambda: progress.monotonic()
        self.t0 = self.last = self.clock()
        self.decisions = self.started = 0
        self.errors_seen = 0
        self.failing = False

    def step(self, record) -> None:
        self.decisions += 1
        self.started += len(record.started)

    def tick(self) -> None:
        """Called after every poll."""
        errors = self.bridge.errors
        if errors > self.errors_seen and not self.failing:
            self.failing = True
            last = _last_error(self.bridge.error_file)
            print(f"bbopt slurm run: a Slurm command failed ({last}); retrying every poll, "
                  f"errors in {self.bridge.error_file}", file=self.stream, flush=True)
        elif errors == self.errors_seen and self.failing:
            self.failing = False
            print("bbopt slurm run: Slurm answers again", file=self.stream, flush=True)
        self.errors_seen = errors
        if self.every > 0 and self.clock() - self.last >= self.every:
            self.line()

    def line(self) -> None:
        from bbopt.progress import hms

        self.last = self.clock()
        print(f"bbopt slurm run: {hms(self.last - self.t0)} elapsed, {self.decisions} decisions, "
              f"{self.started} jobs started, {self.errors_seen} failed polls",
              file=self.stream, flush=True)


def _last_error(path: Path) -> str:
    import json

    try:
        return json.loads(path.read_text().splitlines()[-1])["error"]
    except (OSError, IndexError, ValueError, KeyError, TypeError):
        return "see the error log"


def _cmd_replay(args) -> int:
    from bbopt.resources import parse_bytes
    from bbopt.runs import RunSpec
    from bbopt.slurm.replay import replay_spec, run_replay
    from bbopt.units import parse_seconds

    pool = parse_bytes(args.bb_pool, "--bb-pool") if args.bb_pool else None
    spec = RunSpec(workload=args.trace, policy=args.policy, options=_options(args.option),
                   seed=args.seed, first=args.jobs, bb=args.bb,
                   tick=parse_seconds(args.tick, "--tick") if args.tick else None,
                   budget_mode=args.budget_mode,
                   warmup=parse_seconds(args.warmup, "--warmup"),
                   cooldown=parse_seconds(args.cooldown, "--cooldown"))
    spec = replay_spec(spec, nodes=args.nodes, speedup=args.speedup, bb_pool=pool)
    bb_unit = _bb_unit(args)
    interval = parse_seconds(args.interval, "--interval")
    _available()  # (bad input is refused first, with or without Slurm)
    _exit_on_sigterm()
    record = run_replay(spec, scheduler=args.scheduler, bb_unit=bb_unit, interval=interval,
                        progress=not args.no_progress)
    out = record.result.to_csv(Path(args.out))
    print(f"{spec.name}: {len(spec.workload)} jobs on {spec.platform.nodes} nodes under "
          f"{'slurm backfill' if args.scheduler == 'slurm' else args.policy}: "
          f"{_waited(record.metrics)}; wrote {out}")
    return 0


def _waited(m: dict[str, float]) -> str:
    """The replay's mean wait and finished jobs, or what left the wait unmeasured: no job
    submitted in the measurement window ran (never a NaN)."""
    import math

    if not math.isnan(m["mean_wait"]):
        return f"mean wait {m['mean_wait']:.2f} s, finished {m['finished']:.0f}"
    window = ""
    if "measured_from" in m:
        window = f" in the measurement window [{m['measured_from']:g}, {m['measured_to']:g}) s"
    return (f"no wait measured: none of the {m['jobs']:.0f} jobs submitted{window} ran "
            f"(finished {m['finished']:.0f}, rejected {m['rejected']:.0f})")

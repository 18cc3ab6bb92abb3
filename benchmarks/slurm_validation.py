"""bbopt's simulator against a real Slurm: the first jobs of the KTH-SP2 trace, with Kopanski &
Rzadca's log-normal BB requests, scaled to 16 nodes and sped up, replayed through a local Slurm
(a) under Slurm's own ``sched/backfill`` with the BB as a ``bb`` license pool and (b) under the
bridge with bbopt policies; each real schedule is compared with bbopt's simulation of the same
scaled workload (the jobs exactly as Slurm saw them: BB in whole licenses, runtime capped at the
walltime).

Slurm's default backfill is compared with ``fcfs-easy`` (EASY with a processor-only
reservation): by default the 22.05 backfill planner reserves nothing for a job blocked on
licenses (see :mod:`bbopt.slurm.pool`); with ``bf_licenses`` it plans licenses for every job it
tests, which is conservative backfilling with BB, ``conservative-bb``. Columns: share
of jobs whose real start is within one polling interval of the simulated one (and within that
plus 1 s, slurmctld's scheduling loop), mean wait real and simulated, mean |start difference|,
and the first divergence (the earliest simulated start that the real run misses by more than
the interval plus 1 s). Each run has a second row against the simulation of the jobs as Slurm
holds them (see :func:`slurm_view`): at least one second per job, and for Slurm's own backfill
walltimes in whole minutes, planned by ``conservative-bb``.

    python benchmarks/slurm_validation.py                      # all four runs, one after another
    python benchmarks/slurm_validation.py --only slurm --out DIR   # one run, saved in DIR
    python benchmarks/slurm_validation.py --table DIR          # the table from saved runs

Needs root and Slurm (``apt-get install slurm-wlm munge``). Each run takes about
(trace span / speed-up) plus the drain: 12 minutes with the defaults, set by the trace's one
60-hour job (runs started with ``--only`` in parallel share the machine, which adds latency).
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import data_path  # noqa: E402

from bbopt import Job, Platform  # noqa: E402
from bbopt.core import GB  # noqa: E402
from bbopt.runs import RunSpec  # noqa: E402
from bbopt.runs import run as run_spec  # noqa: E402
from bbopt.slurm.cluster import why_unavailable  # noqa: E402
from bbopt.slurm.pool import quantize  # noqa: E402
from bbopt.slurm.replay import replay_spec, run_replay  # noqa: E402

RUNS = ("slurm", "slurm-bf-licenses", "fcfs-bb", "sjf-bb", "plan-2")
#: The simulated counterpart of each run.
SIMULATED = {"slurm": "fcfs-easy", "slurm-bf-licenses": "conservative-bb", "fcfs-bb": "fcfs-bb",
             "sjf-bb": "sjf-bb", "plan-2": "plan-2"}
#: Policy options for bridge and simulation alike (plan-2 must decide within a poll).
OPTIONS = {"plan-2": {"budget": 0.2}}


def workload(args, policy: str = "fcfs-bb") -> RunSpec:
    """The replay's run (scaled, its options checked) with the jobs as Slurm runs them."""
    spec = replay_spec(RunSpec(workload=str(data_path("KTH-SP2-1996-2.1-cln.swf")), policy=policy,
                               options=OPTIONS.get(policy, {}), first=args.jobs,
                               seed=args.seed),
                       nodes=args.nodes, speedup=args.speedup)
    platform = spec.platform
    jobs = [quantize(j, GB) for j in spec.workload if platform.why_never_fits(j) is None]
    jobs = [j if j.runtime is None or j.runtime <= j.walltime
            else j.__class__(**{**_fields(j), "runtime": j.walltime}) for j in jobs]
    return replace(spec, workload=jobs)


def simulated(spec: RunSpec, policy: str, jobs=None, platform=None):
    """bbopt's simulation of ``spec``'s jobs (or ``jobs`` on ``platform``) under ``policy``."""
    return run_spec(RunSpec(workload=spec.workload if jobs is None else jobs,
                            platform=spec.platform if platform is None else platform,
                            policy=policy, options=OPTIONS.get(policy, {}), seed=spec.seed,
                            budget_mode=spec.budget_mode)).result


def _fields(job):
    return {f: getattr(job, f) for f in job.__slots__}


def run_one(run: str, args, out: Path) -> dict:
    spec = workload(args, "fcfs-bb" if run.startswith("slurm") else run)
    jobs, platform = spec.workload, spec.platform
    t0 = time.monotonic()
    if run.startswith("slurm"):
        params = {"bf_licenses": None} if run == "slurm-bf-licenses" else None
        real = run_replay(spec, scheduler="slurm", interval=args.interval,
                          scheduler_parameters=params).result
    else:
        real = run_replay(spec, scheduler="bridge", interval=args.interval).result
    wall = time.monotonic() - t0
    real.to_csv(out / f"{run}_real_jobs.csv")
    sim = simulated(spec, SIMULATED[run])
    sim.to_csv(out / f"{run}_sim_jobs.csv")
    rows = []
    for k, j in enumerate(jobs):
        rows.append({"id": j.id, "submit": j.submit, "walltime": j.walltime,
                     "runtime": j.runtime, "nodes": j.nodes, "bb": j.bb,
                     "real": real.start[k], "sim": sim.start[k]})
    res = {"run": run, "simulated": SIMULATED[run], "interval": args.interval,
           "nodes": platform.nodes, "bb_pool": platform.bb,
           "speedup": args.speedup, "jobs": len(jobs), "wall": wall, "rows": rows}
    (out / f"{run}.json").write_text(json.dumps(res))
    return res


def summarize(res: dict, label: str | None = None, sim: list[float] | None = None) -> dict:
    """Compare the real starts of ``res`` with its simulation (or with the starts ``sim``)."""
    rows = [dict(r, sim=sim[k]) if sim is not None else r for k, r in enumerate(res["rows"])]
    rows = [r for r in rows if not (math.isnan(r["real"]) or math.isnan(r["sim"]))]
    iv = res["interval"]
    diffs = [r["real"] - r["sim"] for r in rows]
    within = sum(abs(d) <= iv for d in diffs) / len(rows)
    within1 = sum(abs(d) <= iv + 1.0 for d in diffs) / len(rows)
    wait_real = sum(r["real"] - r["submit"] for r in rows) / len(rows)
    wait_sim = sum(r["sim"] - r["submit"] for r in rows) / len(rows)
    first = None
    for r in sorted(rows, key=lambda r: (r["sim"], r["submit"])):
        if abs(r["real"] - r["sim"]) > iv + 1.0:
            first = r
            break
    return {"run": res["run"], "simulated": label or res["simulated"], "jobs": len(rows),
            "missing": len(res["rows"]) - len(rows), "within": within, "within1": within1,
            "wait_real": wait_real, "wait_sim": wait_sim,
            "mean_abs": sum(abs(d) for d in diffs) / len(rows), "first": first,
            "wall": res["wall"]}


def slurm_view(res: dict) -> tuple[str, list[float]]:
    """The simulation of the jobs as Slurm holds them: every job occupies its nodes for at least
    one second (Slurm's clock and launch), and under Slurm's own backfill walltimes are whole
    minutes (``--time``), planned by ``conservative-bb`` (backfill with reservations for every
    tested job) when licenses are planned, ``fcfs-easy`` otherwise."""
    own = res["run"].startswith("slurm")
    jobs = []
    for r in res["rows"]:
        walltime = math.ceil(r["walltime"] / 60 - 1e-9) * 60 if own else r["walltime"]
        runtime = max(1.0, r["runtime"])
        jobs.append(Job(r["id"], r["submit"], max(walltime, runtime), runtime, r["nodes"],
                        r["bb"]))
    platform = Platform(res.get("nodes", 16), res.get("bb_pool", 80 * GB))
    policy = "conservative-bb" if own else res["simulated"]
    sim = simulated(RunSpec(), policy, jobs, platform)
    what = "walltime in minutes, >= 1 s" if own else ">= 1 s"
    return f"{policy}, {what}", list(sim.start)


def table(results: list[dict]) -> str:
    lines = ["| run (simulated as) | jobs | within 1 poll | within poll + 1 s | mean wait real [s] "
             "| mean wait sim [s] | mean abs start diff [s] | first divergence (job: sim -> real "
             "start, s) |", "|---|---|---|---|---|---|---|---|"]
    for res in results:
        label, view = slurm_view(res)
        for s in (summarize(res), summarize(res, label, view)):
            f = s["first"]
            first = "-" if f is None else (
                f"{f['id']} ({f['nodes']} nodes, {f['bb'] / GB:.0f} GB, walltime "
                f"{f['walltime']:.1f} s): {f['sim']:.1f} -> {f['real']:.1f}")
            lines.append(f"| {s['run']} ({s['simulated']}) | {s['jobs']} "
                         f"| {100 * s['within']:.0f}% | {100 * s['within1']:.0f}% "
                         f"| {s['wait_real']:.1f} | {s['wait_sim']:.1f} | {s['mean_abs']:.1f} "
                         f"| {first} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, default=200)
    p.add_argument("--nodes", type=int, default=16)
    p.add_argument("--speedup", type=float, default=300.0)
    p.add_argument("--interval", type=float, default=0.5, help="bridge polling interval [s]")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", choices=RUNS, action="append", help="run only these")
    p.add_argument("--out", default="slurm_validation", help="directory for the runs")
    p.add_argument("--table", metavar="DIR", help="print the table from saved runs and exit")
    args = p.parse_args(argv)
    if args.table:
        saved = [Path(args.table) / f"{r}.json" for r in RUNS]
        print(table([json.loads(f.read_text()) for f in saved if f.exists()]))
        return 0
    reason = why_unavailable()
    if reason:
        sys.exit(reason)
    # SIGTERM ends through SystemExit, so that the running replay stops its local cluster
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = []
    for run in args.only or RUNS:
        print(f"{run} ...", file=sys.stderr, flush=True)
        results.append(run_one(run, args, out))
    print(f"KTH-SP2, first {args.jobs} jobs, {args.nodes} nodes, speed-up {args.speedup:g}, "
          f"poll {args.interval:g} s")
    print(table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

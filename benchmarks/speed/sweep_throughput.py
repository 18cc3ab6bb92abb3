"""Sweep throughput: runs per second of the queue policies on the 16 three-week KTH parts
(Kopanski & Rzadca's split, log-normal BB), serial against worker processes (and Dask's
LocalCluster when the cluster extra is installed), and Dask's scheduling overhead per task.

Each execution writes into its own fresh results store, so every cell really runs; the
collected tables are compared (without timing columns) to show that the executions agree.
Ratios are against the serial run measured in the same invocation.

``--spec experiments/bbsched.yaml [--quick]`` times a paper's specification the same way (the
issue's target: the BBSched sweep on 2 cores in at most half its serial time); ``--only
workload=S4 --only budget=wfp,fcfs`` keeps a subset of its cells (repeatable; keys: workload,
platform, policy, seed, budget, execution). Each execution starts with this process's workload
caches empty, so each prepares its workloads as a fresh sweep would. The table adds the sum of
the runs' own CPU seconds (measured in the process that ran each): the serial estimate of the
grid on an idle machine. ``--keep DIR`` keeps the stores (``DIR/serial``, ``DIR/processes``):
running the whole spec into ``DIR/processes`` afterwards runs only the missing cells.

Run: ``python benchmarks/speed/sweep_throughput.py [--workers 2] [--parts 16] [--policies ...]
[--spec FILE [--quick] [--only KEY=V1,V2 ...]] [--no-dask] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bbopt.analysis.store import collect  # noqa: E402
from bbopt.analysis.sweep import dask_overhead, run_sweep  # noqa: E402
from bbopt.analysis.sweep_spec import load_spec, parse_spec  # noqa: E402
from benchmarks._data import data_path  # noqa: E402

KTH = "KTH-SP2-1996-2.1-cln.swf"
QUEUE = "fcfs,fcfs-easy,filler,fcfs-bb,sjf-bb,conservative-bb"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--parts", type=int, default=16)
    ap.add_argument("--policies", default=QUEUE)
    ap.add_argument("--spec", default=None, help="time this sweep specification instead")
    ap.add_argument("--quick", action="store_true", help="with --spec: its quick variant")
    ap.add_argument("--only", action="append", default=[], metavar="KEY=V1,V2",
                    help="with --spec: keep the cells whose KEY is one of the values")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--keep", metavar="DIR", help="keep the results stores here")
    args = ap.parse_args()
    if args.spec:
        spec = _subset(load_spec(args.spec, quick=args.quick), args.only)
        n = len(spec.cells())
        print(f"{n} runs of {args.spec}{' (quick)' if args.quick else ''}"
              f"{' with ' + ' '.join(args.only) if args.only else ''}; {args.workers} workers")
    else:
        spec = _kth_spec(args)
        n = len(spec.cells())
        print(f"{n} runs: {len(spec.policies)} queue policies x {args.parts} KTH parts of 21 "
              f"days (log-normal BB) on kopanski; {args.workers} workers")
    print("load average before: " + " ".join(f"{x:.2f}" for x in os.getloadavg())
          + f" on {os.cpu_count()} CPUs")
    _measure(spec, n, args)


def _subset(spec, only: list[str]):
    """``spec`` with every cell excluded whose KEY is not among the values of ``KEY=V1,V2``."""
    axes = {"workload": list(spec.workloads), "platform": list(spec.platforms),
            "policy": [p.label for p in spec.policies], "seed": list(spec.seeds),
            "budget": list(spec.budgets), "execution": list(spec.executions)}
    exclude = list(spec.exclude)
    for item in only:
        key, _, values = item.partition("=")
        keep = set(values.split(","))
        if key not in axes or not keep <= {str(v) for v in axes[key]}:
            raise SystemExit(f"--only {item}: {key} takes {axes.get(key, list(axes))}")
        exclude.append({key: [v for v in axes[key] if str(v) not in keep]})
    return replace(spec, exclude=exclude)


def _fresh() -> None:
    """Forget this process's prepared workloads (each execution prepares its own)."""
    from bbopt.analysis import sweep_inputs, sweep_schedule

    for f in (sweep_inputs._workload, sweep_inputs._split, sweep_inputs._shares):
        f.cache_clear()
    sweep_schedule._PREPARED.clear()


def _kth_spec(args):
    doc = {"name": "throughput",
           "workloads": {"kth": {"file": str(data_path(KTH)), "transforms": ["lognormal-bb"],
                                 "split": {"parts": 16, "length": "21d"},
                                 "parts": list(range(args.parts))}},
           "policies": args.policies.split(","), "seeds": [0]}
    return parse_spec(doc, source="<benchmark>")


def _cpu() -> float:
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _measure(spec, n: int, args) -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        if args.keep:
            tmp = args.keep
        execs = [("serial", {"executor": "serial"}),
                 (f"processes x{args.workers}", {"executor": "processes",
                                                 "workers": args.workers})]
        if not args.no_dask:
            try:
                import distributed  # noqa: F401

                execs.append((f"dask LocalCluster x{args.workers}",
                              {"dask": "local", "workers": args.workers}))
            except ImportError:
                print("(dask not installed: pip install 'bbopt[cluster]')")
        tables = {}
        for label, kw in execs:
            out = Path(tmp) / label.split()[0]
            _fresh()
            c0, t0 = _cpu(), time.perf_counter()
            rep = run_sweep(spec, out, progress=False, **kw)
            wall, cpu = time.perf_counter() - t0, _cpu() - c0
            assert rep.ran == n and rep.failed == 0, rep.failures
            tables[label] = collect(out, include_timing=False)
            full = collect(out)
            rows.append((label, wall, n / wall, full["simulation_wall_time"].sum(), cpu,
                         full["cpu_time"].sum()))
        same = all(t.equals(tables["serial"]) for t in tables.values())
    base, base_cpu = rows[0][1], rows[0][4]
    print(f"\n{'execution':<26}{'wall s':>9}{'wall / serial':>14}{'runs/s':>9}"
          f"{'sim s (sum)':>13}{'CPU s':>9}{'CPU / serial':>14}{'run CPU s (sum)':>17}")
    for label, wall, rate, sim, cpu, run_cpu in rows:
        print(f"{label:<26}{wall:>9.1f}{wall / base:>14.3f}{rate:>9.2f}{sim:>13.1f}"
              f"{cpu:>9.1f}{cpu / base_cpu:>14.3f}{run_cpu:>17.1f}")
    print(f"collected tables identical across executions: {same}")
    bounds = ", ".join(f"{row[0].split()[0]} {args.workers * base_cpu / row[4]:.2f}x"
                       for row in rows[1:])
    print("CPU s: user + system of this process and its (reaped) workers. On a machine as busy "
          "as its load average, wall-clock speed-ups say little; the CPU ratio is the cost of "
          "spreading the runs (worker start-up, each worker preparing its workloads), and "
          f"{args.workers} x serial CPU / parallel CPU bounds the speed-up on {args.workers} "
          f"idle cores: {bounds}")
    if not args.no_dask:
        try:
            per = dask_overhead("local", n=300, workers=args.workers)
            print(f"Dask LocalCluster scheduling overhead: {per * 1e3:.2f} ms per task "
                  "(300 trivial tasks; target <= 50 ms per run)")
        except ImportError:
            pass
    print("load average after: " + " ".join(f"{x:.2f}" for x in os.getloadavg()))


if __name__ == "__main__":
    main()

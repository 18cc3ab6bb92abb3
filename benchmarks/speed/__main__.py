"""One entry point for the speed suite: runs the speed scripts of this folder as whole processes
and writes one JSON record of the run -- the machine, its load average before and after each
script, Python and the package versions, and per script its command, exit code, wall time, CPU
time (user + system of the script and its children) and printed tables (which hold each
script's ratios against the reference it measures in the same run).

    python -m benchmarks.speed [NAME ...] [--tiny] [-j N] [--json out.json] [--list]

``--tiny`` runs each script on a tiny input (a few jobs, one repetition): a smoke run that
checks the script still works against the package, not a measurement; ``-j N`` runs N scripts
side by side (for smoke runs: side by side they disturb each other's timings).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))

from bbopt.outputs import atomic_path  # noqa: E402

# Each speed script with the arguments of its tiny run (few jobs, one repetition). A script
# added to this folder must appear here: the smoke test fails otherwise.
TINY: dict[str, list[str]] = {
    "batsim_agreement": ["--jobs", "100", "--skip-slow"],
    "big_swf": ["--copies", "1", "--repeat", "1"],
    "budget_20k": ["--jobs", "300", "--repeat", "1"],
    "compare_workers": ["--embedded", "--policies", "fcfs,fcfs-easy", "--repeat", "1"],
    "easy_named": ["--jobs", "200", "--policies", "fcfs-bb", "--platforms", "kopanski:named"],
    "gym_steps": ["--steps", "50", "--envs", "2", "--episode-jobs", "16"],
    "named_plan": ["--jobs", "30", "--only", "conservative"],
    "omfs_speed": ["--jobs", "300"],
    "pack_builders": ["--repeats", "1", "--sizes", "20", "--apps", "100"],
    "optimising_policies": ["--jobs", "100"],
    "plan_decisions": ["--jobs", "100", "--repeat", "1"],
    "plan_evaluator": ["--queues", "1,5", "--reps", "20"],
    "plan_jit_cost": ["--repeat", "1"],
    "plan_warm_start": ["--jobs", "100", "--no-parts"],
    "read_workloads": ["--repeat", "1"],
    "report_figures": ["--first", "100"],
    "scaling": ["--ks", "1", "--policies", "fcfs"],
    "scan_buckets": ["--ks", "1", "--every", "2000"],
    "serve_latency": ["--waiting", "100", "--repeats", "3", "--process-runs", "1",
                      "--stream-policies", "sjf-bb", "--no-first"],
    "simulate_kth": ["--policies", "fcfs", "--repeat", "1"],
    "sweep_throughput": ["--parts", "1", "--policies", "fcfs", "--no-dask"],
    "whole_process": ["--policies", "fcfs-bb", "--repeat", "1"],
}
PACKAGES = ("bbopt", "numpy", "ortools", "numba", "pulp", "pymoo", "gymnasium", "dask")


def scripts() -> list[str]:
    """The speed scripts of this folder, by name."""
    return sorted(p.stem for p in HERE.glob("*.py") if not p.stem.startswith("_"))


def machine() -> dict:
    """Where and with what the run was measured."""
    versions = {}
    for dist in PACKAGES:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    try:
        commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = None
    return {"host": platform.node(), "machine": platform.machine(),
            "processor": platform.processor(), "cpus": os.cpu_count(),
            "system": platform.platform(), "python": platform.python_version(),
            "packages": versions, "commit": commit, "load_average": list(os.getloadavg())}


def run_script(name: str, extra: list[str]) -> dict:
    """Run one speed script as a whole process; its record for the JSON file. The CPU time is
    that of this process and the children it waited for (``wait4``), so that scripts run side by
    side keep their own."""
    cmd = [sys.executable, str(HERE / f"{name}.py"), *extra]
    load_before = list(os.getloadavg())
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    return {"name": name, "command": [Path(cmd[0]).name, *cmd[1:]], "returncode": proc.returncode,
            "wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "load_average_before": load_before, "load_average_after": list(os.getloadavg()),
            "stdout": stdout, "stderr": stderr[-4000:]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.speed",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("names", nargs="*", help="scripts to run (default: all)")
    ap.add_argument("--tiny", action="store_true", help="tiny inputs: a smoke run")
    ap.add_argument("--json", default="speed.json", help="the record (default speed.json)")
    ap.add_argument("--list", action="store_true", help="list the scripts and exit")
    ap.add_argument("-j", "--parallel", type=int, default=1,
                    help="scripts run side by side (default 1: timings undisturbed)")
    args = ap.parse_args(argv)
    known = scripts()
    if args.list:
        print("\n".join(known))
        return 0
    unknown = [n for n in args.names if n not in known]
    if unknown:
        print(f"unknown speed scripts {', '.join(unknown)}; known: {', '.join(known)}",
              file=sys.stderr)
        return 2
    names = args.names or known
    record = {"suite": "speed", "tiny": args.tiny, "parallel": args.parallel,
              "machine": machine(), "scripts": []}

    def one(name: str) -> dict:
        result = run_script(name, TINY.get(name, []) if args.tiny else [])
        status = "ok" if result["returncode"] == 0 else f"FAILED ({result['returncode']})"
        print(f"{name:22s} {result['cpu_s']:8.2f} CPU s {result['wall_s']:8.2f} wall s  {status}",
              flush=True)
        return result

    with ThreadPoolExecutor(max(1, args.parallel)) as pool:
        record["scripts"] = list(pool.map(one, names))
    with atomic_path(args.json) as tmp:
        tmp.write_text(json.dumps(record, indent=1) + "\n")
    return 0 if all(r["returncode"] == 0 for r in record["scripts"]) else 1


if __name__ == "__main__":
    sys.exit(main())

"""Behaviour lock for refactors: the sha256 of each reference policy's jobs.csv on its usual
workload, checked against the digests stored in ``tools/jobs_digests.json``.

A change that only moves code must leave every per-job outcome (start, end, state, allocation,
in Batsim's jobs.csv columns plus bbopt's, as ``SimulationResult.to_csv`` writes them) identical
to the byte. Each policy runs on the workload its reproduction benchmark uses:

- fcfs, fcfs-easy, filler, fcfs-bb, sjf-bb, conservative-bb: the whole KTH-SP2 trace, read as
  ``simulate_kth.py`` reads it (jobs over 96 nodes dropped), Kopanski's log-normal BB requests
  (seed 0), on ``Platform.kopanski()`` (Kopanski & Rzadca, Euro-Par 2021, Section 4);
- plan-2: the first 3,000 jobs of that workload (the whole trace takes minutes);
- bbsched, naive: ``experiments/bbsched.yaml``'s S4 scenario on its first 5,000 KTH jobs (100
  nodes, BB capacity sized so that S4's BB demand equals its node demand), WFP base order,
  window 20, EASY backfilling with BB reserved (Fan et al., HPDC 2019, Section 4);
- io-easy: ``experiments/herbein.yaml``'s stand-in workload (2,000 KTH-like jobs, seed 0, nodes
  x32, 18 MB/s per node) on CTS-1 with 30 % PFS underprovisioning, Herbein's contention model
  with slowed jobs running to completion (Herbein et al., HPDC 2016, Section 5).

Determinism: plan-2 and the window policies cap each decision by wall seconds. Here their
``budget`` is 3,600 s per decision, so the annealing's fixed number of steps (plan-2) and
CP-SAT solving to optimality with one worker (bbsched) decide the answer, not the clock. (The
window drivers' queue-order tie-break keeps its own small wall cap next to its deterministic
work limit; on a heavily loaded machine that cap could in principle bite first.)

The workloads are rebuilt here with the public readers and generators only, so the script runs
unchanged before and after a re-layout of the package.

    python tools/jobs_digest.py [--policies a,b]   # check: exit 1 if any digest differs
    python tools/jobs_digest.py --write            # store the digests

About two minutes on one core for all ten policies.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import platform as _platform
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bbopt import Job, Platform, simulate  # noqa: E402
from bbopt.loading import load_platform  # noqa: E402
from bbopt.simulation.io_model import IOContention  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.generators.bbsched import bbsched_scenario  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from bbopt.workloads.synthetic import kth_like  # noqa: E402
from benchmarks._data import data_path  # noqa: E402

STORE = Path(__file__).resolve().with_name("jobs_digests.json")
KTH = "KTH-SP2-1996-2.1-cln.swf"
MB, GB = 1e6, 1e9
#: Per-decision wall budget large enough that work, not the clock, ends every search.
LARGE_BUDGET = 3600.0


# --- the usual workloads -----------------------------------------------------------------------

def kth_kopanski(n_jobs: int | None = None) -> tuple[list[Job], Platform]:
    """KTH-SP2 as simulate_kth.py reads it, log-normal BB (seed 0), Kopanski's platform."""
    trace = read_swf(data_path(KTH), max_nodes=96, oversize="drop")
    jobs = with_lognormal_bb(trace.jobs, seed=0)
    return (jobs[:n_jobs] if n_jobs else jobs), Platform.kopanski()


def bbsched_s4(n_jobs: int = 5000, seed: int = 0) -> tuple[list[Job], Platform]:
    """BBSched's S4 workload on KTH-SP2 and its platform, as experiments/bbsched.yaml builds
    them."""
    nodes, theta_nodes = 100, 4392
    scale = nodes / theta_nodes
    lo, hi = 1 * GB, 285e12  # Theta's requests with more than 1 GB moved
    jobs = [j for j in read_swf(data_path(KTH)).jobs[:n_jobs] if j.nodes <= nodes]
    rng = np.random.default_rng(seed)
    asks = rng.random(len(jobs)) < 0.1718
    size = np.round(np.exp(rng.uniform(np.log(lo), np.log(hi), len(jobs))) * scale / 1e6) * 1e6
    original = [replace(j, bb=float(b)) if a else replace(j, bb=0.0)
                for j, a, b in zip(jobs, asks, size, strict=True)]
    s4 = bbsched_scenario(original, "S4", seed + 1, scale=scale)

    def demand(js: list[Job], capacity: float, attr: str) -> float:
        span = max(j.submit for j in js) - min(j.submit for j in js)
        return sum(getattr(j, attr) * (j.runtime or j.walltime) for j in js) / (capacity * span)

    capacity = demand(s4, 1.0, "bb") / demand(jobs, nodes, "nodes")
    capacity = max(capacity, hi * scale)
    return s4, Platform(nodes, float(np.floor(capacity / GB) * GB), name="kth-bb")


def herbein_stand_in(n_jobs: int = 2000, seed: int = 0) -> tuple[list[Job], Platform]:
    """experiments/herbein.yaml's KTH-like stand-in on CTS-1 with 30 % underprovisioning."""
    base = kth_like(n_jobs, seed=seed, nodes=3888 // 32, load=0.95, bb=False)
    jobs = [dataclasses.replace(j, nodes=j.nodes * 32, bandwidth=18 * MB) for j in base]
    return jobs, load_platform("cts1:0.3")


@dataclass(frozen=True)
class Case:
    workload: str
    options: dict[str, Any] = field(default_factory=dict)
    execution: Callable[[], Any] | None = None


WORKLOADS: dict[str, tuple[str, Callable[[], tuple[list[Job], Platform]]]] = {
    "kth": ("KTH-SP2 (jobs over 96 nodes dropped), log-normal BB seed 0, Platform.kopanski()",
            kth_kopanski),
    "kth-3000": ("first 3,000 jobs of KTH-SP2 (jobs over 96 nodes dropped), log-normal BB "
                 "seed 0, Platform.kopanski()", lambda: kth_kopanski(3000)),
    "bbsched-s4-5000": ("bbsched_reproduction S4 (seed 0) on the first 5,000 KTH-SP2 jobs, "
                        "100 nodes, BB sized for S4 BB demand = node demand",
                        lambda: bbsched_s4(5000)),
    "herbein-2000": ("herbein_reproduction stand-in: 2,000 kth_like jobs (seed 0, 121 nodes, "
                     "load 0.95) x32 nodes, 18 MB/s per node, cts1:0.3",
                     lambda: herbein_stand_in(2000)),
}

CASES: dict[str, Case] = {
    **{p: Case("kth") for p in ("fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb",
                                "conservative-bb")},
    "plan-2": Case("kth-3000", {"budget": LARGE_BUDGET}),
    "bbsched": Case("bbsched-s4-5000", {"order": "wfp", "budget": LARGE_BUDGET}),
    "naive": Case("bbsched-s4-5000", {"order": "wfp", "budget": LARGE_BUDGET}),
    "io-easy": Case("herbein-2000", execution=lambda: IOContention(kill_at_walltime=False)),
}


def describe(policy: str) -> str:
    case = CASES[policy]
    text = WORKLOADS[case.workload][0]
    if case.options:
        text += f"; options {json.dumps(case.options, sort_keys=True)}"
    if case.execution is not None:
        text += "; execution io-contention (kill_at_walltime=False)"
    return text


# --- running and digesting ---------------------------------------------------------------------

def digest(policy: str, cache: dict[str, tuple[list[Job], Platform]], folder: Path
           ) -> tuple[str, int, float]:
    """sha256 of ``policy``'s jobs.csv on its workload, the number of job rows, run seconds."""
    case = CASES[policy]
    if case.workload not in cache:
        cache[case.workload] = WORKLOADS[case.workload][1]()
    jobs, platform = cache[case.workload]
    t0 = time.perf_counter()
    res = simulate(jobs, platform, policy, options=case.options or None,
                   execution=case.execution() if case.execution else None)
    seconds = time.perf_counter() - t0
    path = res.to_csv(folder / f"{policy}.csv")
    data = path.read_bytes()
    rows = data.count(b"\n") - 1
    return hashlib.sha256(data).hexdigest(), rows, seconds


def environment() -> dict[str, str]:
    """Versions that may legitimately change a digest (CP-SAT's search, numpy's generators)."""
    out = {"python": _platform.python_version()}
    for dist in ("numpy", "ortools"):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = "absent"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--policies", default=",".join(CASES),
                    help=f"comma-separated subset of {','.join(CASES)}")
    ap.add_argument("--write", action="store_true",
                    help=f"store the digests in {STORE.name} instead of checking them")
    args = ap.parse_args()
    policies = [p for p in args.policies.split(",") if p]
    unknown = [p for p in policies if p not in CASES]
    if unknown:
        sys.exit(f"unknown policies {', '.join(unknown)}; known: {', '.join(CASES)}")
    stored = json.loads(STORE.read_text()) if STORE.exists() else {"policies": {}}
    if not args.write and not stored["policies"]:
        sys.exit(f"{STORE.name} holds no digests: run with --write first")
    env = environment()
    if not args.write and stored.get("environment", env) != env:
        print(f"note: digests were stored under {stored['environment']}, running under {env}")
    cache: dict[str, tuple[list[Job], Platform]] = {}
    differ = []
    t_all = time.perf_counter()
    print(f"{'policy':<16} {'rows':>6}  {'sha256':<16} {'digest':<10} {'seconds':>8}")
    with tempfile.TemporaryDirectory() as tmp:
        for policy in policies:
            sha, rows, seconds = digest(policy, cache, Path(tmp))
            if args.write:
                stored["policies"][policy] = {"sha256": sha, "rows": rows,
                                              "workload": describe(policy)}
                verdict = "stored"
            else:
                ref = stored["policies"].get(policy)
                if ref is None:
                    verdict = "missing"
                    differ.append(policy)
                elif ref["sha256"] == sha:
                    verdict = "ok"
                else:
                    verdict = "DIFFERENT"
                    differ.append(policy)
                    if ref.get("rows") != rows:
                        verdict += f" ({ref.get('rows')} rows stored)"
            print(f"{policy:<16} {rows:>6}  {sha[:16]} {verdict:<10} {seconds:>8.1f}", flush=True)
    print(f"total {time.perf_counter() - t_all:.1f} s (workloads built once, included)")
    if args.write:
        stored["environment"] = env
        stored["about"] = ("sha256 of SimulationResult.to_csv() per policy on its usual "
                           "workload; tools/jobs_digest.py checks them")
        STORE.write_text(json.dumps(stored, indent=2, sort_keys=True) + "\n")
        print(f"wrote {STORE}")
    elif differ:
        print(f"DIFFERENT: {', '.join(differ)}")
        sys.exit(1)


if __name__ == "__main__":
    main()

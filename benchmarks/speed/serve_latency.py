"""How long another tool waits for a decision: `bbopt serve` (warm, over its Unix socket)
against `bbopt decide` (a process per decision) and the in-process call, side by side, on the
same KTH states (docs/interop.md, "Three ways in").

    BBOPT_DATA=/work/shared/data python benchmarks/speed/serve_latency.py [--waiting 1000,5000]

A state is the first 16 KTH jobs (with Kopanski's drawn BB) running on Kopanski's machine and
the next 1,000 or 5,000 waiting. Each policy decides it REPEATS times in each way, with its
memory kept as a session keeps it. Columns: the in-process decide; serve's round trip seen by
the client without the service's JSON parsing of the state (reported apart: its parse); serve's
whole round trip; `bbopt decide` per process (wall time of the process, a few runs). p50/p99 in
milliseconds. The first serve request of each policy (a new connection: its session reads
every job) is reported apart, and its decision time beside the later ones' (a warm start
decides as fast as any later request).
Requests are --gap seconds apart (the service's clean-up after a reply runs in that gap).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bbopt.core import ClusterState, Platform, RunningJob  # noqa: E402
from bbopt.interop.client import ServiceClient  # noqa: E402
from bbopt.loading import read_workload  # noqa: E402
from bbopt.policies import make_policy  # noqa: E402
from bbopt.schema import dumps, state_to_dict  # noqa: E402
from benchmarks._data import data_path  # noqa: E402

POLICIES = ("fcfs-bb", "sjf-bb", "conservative-bb", "bbsched", "plan-2")


def kth_state(waiting: int) -> ClusterState:
    platform = Platform.kopanski()
    w = read_workload(data_path("KTH-SP2-1996-2.1-cln.swf"), n_jobs=16 + waiting + 200,
                      platform=platform)
    jobs = [j for j in w.jobs if j.nodes <= platform.nodes and j.bb <= platform.bb]
    running, nodes, bb = [], 0, 0.0
    for j in jobs[:16]:
        if nodes + j.nodes <= platform.nodes and bb + j.bb <= platform.bb:
            running.append(RunningJob(j, start=j.submit))
            nodes, bb = nodes + j.nodes, bb + j.bb
    queue = tuple(jobs[16:16 + waiting])
    now = max(j.submit for j in queue)
    return ClusterState(now, platform, tuple(running), queue)


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(q * (len(xs) - 1)))] * 1e3


def in_process(state: ClusterState, policy: str, repeats: int) -> list[float]:
    p = make_policy(policy)
    memory: dict = {}
    p.decide(state)  # (warm, as the service is)
    out = []
    for _ in range(repeats):
        s = replace(state, memory=memory)
        t0 = time.perf_counter()
        d = p.decide(s)
        out.append(time.perf_counter() - t0)
        memory = d.memory if d.memory is not None else memory
    return out


def through_serve(client: ServiceClient, line: bytes, repeats: int, gap: float):
    rtt, parse, decide, first = [], [], [], None
    for k in range(repeats + 1):
        time.sleep(gap)
        t0 = time.perf_counter()
        client.file.write(line)
        client.file.flush()
        reply = json.loads(client.file.readline())
        dt = time.perf_counter() - t0
        assert reply["ok"], reply
        if k == 0:
            first = (dt, reply["budget"]["cold"], reply["timing"]["decide"])
            continue
        rtt.append(dt)
        parse.append(reply["timing"]["parse"])
        decide.append(reply["timing"]["decide"])
    return rtt, parse, decide, first


def per_process(path: str, policy: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "bbopt", "decide", path, "--policy", policy],
                       check=True, capture_output=True, cwd=ROOT)
        out.append(time.perf_counter() - t0)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--waiting", default="1000,5000")
    p.add_argument("--policies", default=",".join(POLICIES))
    p.add_argument("--repeats", type=int, default=100)
    p.add_argument("--process-runs", type=int, default=3)
    p.add_argument("--gap", type=float, default=0.1,
                   help="seconds between two requests (default 0.1: a resource manager asks "
                   "at scheduling events, and the service frees the last request's state and "
                   "collects garbage after its reply, in that gap)")
    args = p.parse_args()
    policies = args.policies.split(",")
    tmp = tempfile.mkdtemp(prefix="bbsl")
    sock = os.path.join(tmp, "s")
    t0 = time.perf_counter()
    service = subprocess.Popen([sys.executable, "-m", "bbopt", "serve", "--socket", sock],
                               cwd=ROOT, stderr=subprocess.PIPE, text=True)
    announce = service.stderr.readline().strip()
    start = time.perf_counter() - t0
    print(f"service up in {start:.2f} s: {announce}\n")
    print("| waiting | policy | in-process p50 / p99 | serve without parse p50 / p99 | "
          "serve p50 / p99 | parse p50 | serve's decide p50 / first | first serve request | "
          "`bbopt decide` per process |")
    print("|---|---|---|---|---|---|---|---|---|")
    try:
        for waiting in (int(x) for x in args.waiting.split(",")):
            state = kth_state(waiting)
            body = state_to_dict(state)
            del body["memory"]
            path = os.path.join(tmp, f"state{waiting}.json")
            Path(path).write_text(dumps(state))
            for policy in policies:
                reps = args.repeats if policy != "plan-2" else max(10, args.repeats // 5)
                local = in_process(state, policy, reps)
                with ServiceClient.unix(sock, timeout=600) as client:
                    line = json.dumps({"policy": policy, "state": body}).encode() + b"\n"
                    rtt, parse, decide, (first, cold, first_decide) = through_serve(
                        client, line, reps, args.gap)
                bare = [r - q for r, q in zip(rtt, parse, strict=True)]
                proc = per_process(path, policy, args.process_runs)
                print(f"| {waiting} | {policy} | {pct(local, .5):.2f} / {pct(local, .99):.2f} | "
                      f"{pct(bare, .5):.2f} / {pct(bare, .99):.2f} | "
                      f"{pct(rtt, .5):.2f} / {pct(rtt, .99):.2f} | {pct(parse, .5):.1f} | "
                      f"{pct(decide, .5):.2f} / {first_decide * 1e3:.2f} | "
                      f"{first * 1e3:.1f}{' (cold)' if cold else ''} | "
                      f"{statistics.median(proc) * 1e3:.0f} |", flush=True)
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(60)
        os.rmdir(tmp) if not os.listdir(tmp) else None


if __name__ == "__main__":
    main()

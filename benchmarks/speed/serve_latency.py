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

Second table, a stream of scheduling events (--stream-policies): from the same state, the jobs
the policy's last decision started start (at that decision's time), and the next event comes:
running jobs reaching their walltime end, or the next KTH job is submitted; the policy decides
each event's state in-process, through serve with the whole state, and through serve with only
the delta since the last request (bbopt.interop.delta). p50/p95/p99 in milliseconds of the wall time
(serve: the round trip the client sees) and of the CPU time of each decision (in-process: the
thread's around the call; serve: the service thread's for the request, its `timing.cpu`: on a
loaded machine the CPU columns are the ones to compare); the differences and ratios are
against the in-process row of the same run. The last column is the service process's whole
CPU (/proc) over the stream per request. Every way must answer the same starts (checked).

Third table, plan-2's first request after start (--first): a new service (warmed at start,
then one with --warm '') is asked plan-2 on the 5,000-job state first of all, then REPEATS
more times: the first request's decide time and round trip against the warm ones'.
"""

from __future__ import annotations

import argparse
import json
import math
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

from bbopt.core import ClusterState, Platform, RunningJob, decide_planned  # noqa: E402
from bbopt.interop.client import ServiceClient  # noqa: E402
from bbopt.loading import read_workload  # noqa: E402
from bbopt.policies import make_policy  # noqa: E402
from bbopt.schema import dumps, job_to_dict, state_to_dict  # noqa: E402
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


def pcts(xs: list[float]) -> str:
    return " / ".join(f"{pct(xs, q):.2f}" for q in (.5, .95, .99))


def stream(state: ClusterState, pool: list, policy: str, steps: int, gap: float = 0.0):
    """The states of ``steps`` scheduling events after ``state`` and the delta of each, with
    the in-process decision of each state (the starts, wall and CPU seconds of each), ``gap``
    seconds apart as the service's requests are (caches cool between events alike)."""
    p = make_policy(policy)
    decide_planned(p, state)  # (warm, as the service is)
    states, deltas, starts, wall, cpu = [state], [None], [], [], []
    memory: dict = {}
    p_next = 0  # the next job of the pool to submit
    for k in range(steps + 1):
        s = replace(states[-1], memory=memory)
        time.sleep(gap)
        t0, c0 = time.perf_counter(), time.thread_time()
        d = decide_planned(p, s)  # (bbopt.decide with the policy kept, as the service does)
        wall.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
        memory = d.memory if d.memory is not None else memory
        starts.append(sorted(x.job_id for x in d.start))
        if k == steps:
            break
        by_id = {j.id: j for j in s.queue}
        started = [RunningJob(by_id[x.job_id], s.time) for x in d.start]
        gone = {x.job_id for x in d.start}
        running = s.running + tuple(started)
        # the next event: a running job reaching its walltime, or the next submission
        t_end = min((r.start + r.job.walltime for r in running), default=math.inf)
        t_sub = pool[p_next].submit
        now = max(s.time, min(t_end, t_sub))
        ended = [r for r in running if r.start + r.job.walltime <= now]
        new = [pool[p_next]] if t_sub <= now else []
        p_next += len(new)
        nxt = ClusterState(now, s.platform, tuple(r for r in running if r not in ended),
                           tuple(j for j in s.queue if j.id not in gone) + tuple(new))
        states.append(nxt)
        deltas.append({"time": now, "submitted": [job_to_dict(j) for j in new],
                       "started": [{"id": r.job.id, "start": r.start} for r in started],
                       "ended": [r.job.id for r in ended]})
    return states, deltas, starts, wall[1:], cpu[1:]


def proc_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def replay(client: ServiceClient, lines: list[bytes], pid: int, gap: float):
    """Send each request line, wait for its reply: the round trips, parse and CPU times (the
    first request, a whole state, left out), the starts, and the service process's CPU per
    request (all its threads, the reply's encoding and the clean-up after it included)."""
    rtt, parse, cpu, starts = [], [], [], []
    cpu0 = None
    for k, line in enumerate(lines):
        time.sleep(gap)
        if k == 1:
            cpu0 = proc_cpu(pid)
        t0 = time.perf_counter()
        client.file.write(line)
        client.file.flush()
        reply = json.loads(client.file.readline())
        dt = time.perf_counter() - t0
        assert reply["ok"], reply
        starts.append(sorted(x["job_id"] for x in reply["decision"]["start"]))
        if k:
            rtt.append(dt)
            parse.append(reply["timing"]["parse"])
            cpu.append(reply["timing"]["cpu"])
    total = (proc_cpu(pid) - cpu0) / max(1, len(lines) - 1) if cpu0 is not None else math.nan
    return rtt, parse, cpu, starts, total


def stream_table(sock: str, pid: int, waiting: list[int], policies: list[str], steps: int,
                 gap: float) -> None:
    print("\n| waiting | policy | way | wall p50 / p95 / p99 (ms) | CPU p50 / p95 / p99 (ms) | "
          "p99 minus in-process p99: wall / CPU (ms) | CPU p50 ratio | parse p50 (ms) | "
          "service process CPU per request (ms) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in waiting:
        state = kth_state(n)
        pool = kth_pool(n, steps)
        for policy in policies:
            states, deltas, starts, wall, cpu = stream(state, pool, policy, steps, gap)
            whole_lines, delta_lines = [], []
            for k, (s, d) in enumerate(zip(states, deltas, strict=True)):
                b = state_to_dict(s)
                del b["memory"]
                whole_lines.append(json.dumps({"policy": policy, "state": b}).encode() + b"\n")
                delta_lines.append(whole_lines[-1] if k == 0 else json.dumps(
                    {"policy": policy, "delta": d}).encode() + b"\n")
            print(f"| {n} | {policy} | in-process | {pcts(wall)} | {pcts(cpu)} | | 1 | | |")
            for way, lines in (("serve, whole state", whole_lines),
                               ("serve, delta", delta_lines)):
                with ServiceClient.unix(sock, timeout=600) as client:
                    rtt, parse, c, got, total = replay(client, lines, pid, gap)
                if got != starts:
                    raise SystemExit(f"{policy}: serve ({way}) started other jobs than the "
                                     "in-process decision")
                print(f"| {n} | {policy} | {way} | {pcts(rtt)} | {pcts(c)} | "
                      f"{pct(rtt, .99) - pct(wall, .99):+.2f} / "
                      f"{pct(c, .99) - pct(cpu, .99):+.2f} | "
                      f"{pct(c, .5) / pct(cpu, .5):.1f} | {pct(parse, .5):.2f} | "
                      f"{total * 1e3:.2f} |", flush=True)


def kth_pool(waiting: int, steps: int) -> list:
    """The KTH jobs submitted after the state's waiting jobs (the stream's submissions)."""
    platform = Platform.kopanski()
    w = read_workload(data_path("KTH-SP2-1996-2.1-cln.swf"), n_jobs=16 + waiting + 3 * steps
                      + 400, platform=platform)
    jobs = [j for j in w.jobs if j.nodes <= platform.nodes and j.bb <= platform.bb]
    return jobs[16 + waiting:16 + waiting + steps]


def first_table(waiting: int, repeats: int, gap: float, tmp: str) -> None:
    """plan-2's first request to a new service against its later ones, warmed and not."""
    state = kth_state(waiting)
    b = state_to_dict(state)
    del b["memory"]
    line = json.dumps({"policy": "plan-2", "state": b}).encode() + b"\n"
    print("\n| service started with | start-up (s) | plan-2's first request: decide / round "
          "trip (ms) | later requests: decide p50 / p99 (ms) | first decide / later p50 |")
    print("|---|---|---|---|---|")
    for label, warm in (("default warm-up", None), ("--warm ''", "")):
        sock = os.path.join(tmp, "first")
        args = [sys.executable, "-m", "bbopt", "serve", "--socket", sock]
        if warm is not None:
            args += ["--warm", warm]
        t0 = time.perf_counter()
        service = subprocess.Popen(args, cwd=ROOT, stderr=subprocess.PIPE, text=True)
        try:
            service.stderr.readline()
            up = time.perf_counter() - t0
            with ServiceClient.unix(sock, timeout=600) as client:
                rtt, _, decide, (first, cold, first_decide) = through_serve(
                    client, line, repeats, gap)
        finally:
            service.send_signal(signal.SIGTERM)
            service.wait(60)
        print(f"| {label} | {up:.1f} | {first_decide * 1e3:.1f} / {first * 1e3:.1f}"
              f"{' (cold)' if cold else ''} | {pct(decide, .5):.1f} / {pct(decide, .99):.1f} | "
              f"{first_decide / (pct(decide, .5) / 1e3):.2f} |", flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--waiting", default="1000,5000")
    p.add_argument("--policies", default=",".join(POLICIES))
    p.add_argument("--stream-policies", default="fcfs-bb,sjf-bb,conservative-bb,bbsched,plan-2",
                   help="policies of the stream table ('' for none)")
    p.add_argument("--first", action=argparse.BooleanOptionalAction, default=True,
                   help="measure plan-2's first request to a new service (default: yes)")
    p.add_argument("--repeats", type=int, default=100)
    p.add_argument("--process-runs", type=int, default=3)
    p.add_argument("--gap", type=float, default=0.1,
                   help="seconds between two requests (default 0.1: a resource manager asks "
                   "at scheduling events, and the service frees the last request's state and "
                   "collects garbage after its reply, in that gap)")
    args = p.parse_args()
    policies = [x for x in args.policies.split(",") if x]
    waiting = [int(x) for x in args.waiting.split(",")]
    tmp = tempfile.mkdtemp(prefix="bbsl")
    sock = os.path.join(tmp, "s")
    t0 = time.perf_counter()
    service = subprocess.Popen([sys.executable, "-m", "bbopt", "serve", "--socket", sock],
                               cwd=ROOT, stderr=subprocess.PIPE, text=True)
    announce = service.stderr.readline().strip()
    start = time.perf_counter() - t0
    print(f"service up in {start:.2f} s: {announce}\n")
    try:
        if policies:
            same_state_table(sock, tmp, waiting, policies, args)
        streamed = [x for x in args.stream_policies.split(",") if x]
        if streamed:
            stream_table(sock, service.pid, waiting, streamed, args.repeats, args.gap)
    finally:
        service.send_signal(signal.SIGTERM)
        service.wait(60)
    if args.first:
        first_table(max(waiting), max(3, args.repeats // 10), args.gap, tmp)
    for f in os.listdir(tmp):
        os.remove(os.path.join(tmp, f))
    os.rmdir(tmp)


def same_state_table(sock: str, tmp: str, waiting: list[int], policies: list[str],
                     args) -> None:
    print("| waiting | policy | in-process p50 / p99 | serve without parse p50 / p99 | "
          "serve p50 / p99 | parse p50 | serve's decide p50 / first | first serve request | "
          "`bbopt decide` per process |")
    print("|---|---|---|---|---|---|---|---|---|")
    for n in waiting:
        state = kth_state(n)
        body = state_to_dict(state)
        del body["memory"]
        path = os.path.join(tmp, f"state{n}.json")
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
            print(f"| {n} | {policy} | {pct(local, .5):.2f} / {pct(local, .99):.2f} | "
                  f"{pct(bare, .5):.2f} / {pct(bare, .99):.2f} | "
                  f"{pct(rtt, .5):.2f} / {pct(rtt, .99):.2f} | {pct(parse, .5):.1f} | "
                  f"{pct(decide, .5):.2f} / {first_decide * 1e3:.2f} | "
                  f"{first * 1e3:.1f}{' (cold)' if cold else ''} | "
                  f"{statistics.median(proc) * 1e3:.0f} |", flush=True)


if __name__ == "__main__":
    main()

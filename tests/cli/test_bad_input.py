"""A corpus of bad inputs: each must give exit status 2 and one line naming what to fix.

Every case writes its files into a fresh directory and runs the CLI on them. The message must be a
single line starting ``bbopt: error:``, with no traceback, and must name the file and, where the
input has them, the line or JSON path and the field. Most cases run in-process (``bbopt.cli.main``)
under an alarm, so a hang fails the test; a representative subset also runs in a subprocess.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bbopt.cli import main


@dataclass
class Case:
    id: str
    files: dict[str, bytes | str]
    argv: list[str]
    expect: list[str] = field(default_factory=list)  # substrings of the message


def swf_line(k: int, submit: int = 0, run: int = 100, procs: int = 4, wall: int = 200) -> str:
    return (f"{k} {submit} 0 {run} {procs} -1 -1 {procs} {wall} -1 1 {k % 3} 1 -1 -1 -1 -1 -1")


def swf(lines: list[str], header: str = "; MaxNodes: 96\n") -> str:
    return header + "\n".join(lines) + "\n"


GOOD = [swf_line(k, submit=10 * k) for k in range(1, 6)]


def with_line(n: int, text: str) -> str:
    lines = list(GOOD)
    lines[n - 1] = text
    return swf(lines)


def mixed_up(n: int = 1000) -> str:
    """One line a field short and a nearby line a field long: same total field count."""
    lines = [swf_line(k, submit=10 * k) for k in range(1, n + 1)]
    # rows 503 and 505: off the 1-in-10 sample an earlier reader checked
    a, b = lines[503].split(), lines[505].split()
    lines[503] = " ".join(a[:3] + a[4:])
    lines[505] = " ".join(b[:3] + ["7"] + b[3:])
    return swf(lines)


def gz(text: str) -> bytes:
    return gzip.compress(text.encode())


SIM = ["simulate", "--no-progress", "--policy", "fcfs-bb"]


def sim_w(name: str) -> list[str]:
    return [*SIM, "--workload", name]


def batsim(jobs: list, profiles: dict | None = None, **top) -> str:
    return json.dumps({"nb_res": 8, **top, "jobs": jobs,
                       "profiles": profiles if profiles is not None else
                       {"p": {"type": "delay", "delay": 100}}})


def bjob(k: int = 0, **over) -> dict:
    return {"id": str(k), "subtime": 10 * k, "res": 2, "walltime": 300, "profile": "p", **over}


def jgf(nodes: list, edges: list) -> str:
    return json.dumps({"graph": {"nodes": nodes, "edges": edges}})


def v(i: str, kind: str, **meta) -> dict:
    return {"id": i, "metadata": {"type": kind, "name": f"{kind}{i}", **meta}}


def e(s: str, t: str) -> dict:
    return {"source": s, "target": t, "metadata": {"subsystem": "containment"}}


TREE_NODES = [v("0", "pfs"), v("1", "switch"), v("2", "node"), v("3", "node")]
TREE_EDGES = [e("0", "1"), e("1", "2"), e("1", "3")]


def plat_w(name: str) -> list[str]:
    return [*SIM, "--jobs", "5", "--platform", name]


def state(**over) -> dict:
    s = {"time": 100.0, "platform": {"nodes": 4, "bb": 1e10},
         "running": [{"job": {"id": "r1", "walltime": 100, "nodes": 2, "bb": 2e9,
                              "submit": 0}, "start": 50, "allocation": [0, 1]}],
         "queue": [{"id": "q1", "walltime": 50, "nodes": 1, "submit": 20}]}
    s.update(over)
    return s


def running(**job) -> list:
    base = {"id": "r1", "walltime": 100, "nodes": 2, "bb": 2e9, "submit": 0}
    alloc = job.pop("allocation", [0, 1])
    start = job.pop("start", 50)
    return [{"job": {**base, **job}, "start": start, "allocation": alloc}]


def dec(name: str, *extra: str) -> list[str]:
    return ["decide", name, *extra]


def st(**over) -> str:
    return json.dumps(state(**over))


CASES = [
    # ---- SWF
    Case("swf-short-line", {"t.swf": with_line(3, " ".join(swf_line(3).split()[:17]))},
         sim_w("t.swf"), ["t.swf", "line 4", "field 'think_time'"]),
    Case("swf-long-line", {"t.swf": with_line(2, swf_line(2) + " 5")},
         sim_w("t.swf"), ["t.swf", "line 3", "19"]),
    Case("swf-mixed-up", {"t.swf": mixed_up()}, sim_w("t.swf"), ["t.swf", "line 505"]),
    Case("swf-not-a-number", {"t.swf": with_line(2, swf_line(2, 20).replace(" 20 ", " 2o ", 1))},
         sim_w("t.swf"), ["t.swf", "line 3", "field 'submit_time'", "'2o'"]),
    Case("swf-nan-procs", {"t.swf": with_line(4, "4 40 0 100 nan -1 -1 nan 200 -1 1 1 1 -1 -1 "
                                                 "-1 -1 -1")},
         sim_w("t.swf"), ["t.swf", "line 5", "field 'allocated_processors'", "finite"]),
    Case("swf-inf-runtime", {"t.swf": with_line(1, swf_line(1).replace(" 100 ", " inf ", 1))},
         sim_w("t.swf"), ["t.swf", "line 2", "field 'run_time'"]),
    Case("swf-1e30-procs", {"t.swf": with_line(2, "2 20 0 100 4 -1 -1 1e30 200 -1 1 1 1 -1 -1 "
                                                  "-1 -1 -1")},
         sim_w("t.swf"), ["t.swf", "line 3", "field 'requested_processors'", "out of range"]),
    Case("swf-huge-job-number", {"t.swf": with_line(2, swf_line(2).replace("2", "1e16", 1))},
         sim_w("t.swf"), ["t.swf", "line 3", "field 'job_number'"]),
    Case("swf-negative-submit", {"t.swf": with_line(2, swf_line(2, submit=-5))},
         sim_w("t.swf"), ["t.swf", "line 3", "field 'submit_time'"]),
    Case("swf-duplicate-id", {"t.swf": with_line(3, swf_line(2, submit=30))},
         sim_w("t.swf"), ["t.swf", "line 4", "field 'job_number'", "duplicate"]),
    Case("swf-empty", {"t.swf": ""}, sim_w("t.swf"), ["t.swf", "no job records"]),
    Case("swf-header-only", {"t.swf": "; Version: 2\n; MaxNodes: 8\n"}, sim_w("t.swf"),
         ["t.swf", "no job records"]),
    Case("swf-all-skipped", {"t.swf": swf([swf_line(k, run=0) for k in range(1, 4)])},
         sim_w("t.swf"), ["t.swf", "no job records"]),
    Case("swf-binary", {"t.swf": b"\x00\xff\xfe\x80" * 40 + b"\n"}, sim_w("t.swf"),
         ["t.swf", "line 1"]),
    Case("swf-minus-inside", {"t.swf": with_line(2, swf_line(2).replace(" 100 ", " 1-2 ", 1))},
         sim_w("t.swf"), ["t.swf", "line 3", "field 'run_time'"]),
    Case("swf-hex", {"t.swf": with_line(2, swf_line(2).replace(" 100 ", " 0x10 ", 1))},
         sim_w("t.swf"), ["t.swf", "line 3", "field 'run_time'"]),
    Case("swf-bb-header", {"t.swf": swf(GOOD, "; MaxNodes: 8\n; BurstBuffer: lots\n")},
         sim_w("t.swf"), ["t.swf", "field 'BurstBuffer'"]),
    Case("swf-bb-no-maxnodes", {"t.swf": swf(GOOD, "; BurstBuffer: 100\n")},
         sim_w("t.swf"), ["t.swf", "field 'MaxNodes'"]),
    Case("swf-first-line-short", {"t.swf": swf(["1 0 0 100"])}, sim_w("t.swf"),
         ["t.swf", "line 2", "expected 18 fields"]),
    Case("swf-companion-bb", {"t.swf": swf(GOOD), "t.swf.bb": "1 2 x 4\n"}, sim_w("t.swf"),
         ["t.swf.bb", "line 1", "field 'data_run'"]),
    # ---- SWF.gz
    Case("gz-truncated", {"t.swf.gz": gz(swf(GOOD * 3))[:40]}, sim_w("t.swf.gz"),
         ["t.swf.gz", "cannot read"]),
    Case("gz-not-gzip", {"t.swf.gz": b"this is not gzip\n"}, sim_w("t.swf.gz"),
         ["t.swf.gz", "cannot read"]),
    Case("gz-corrupt-body", {"t.swf.gz": gz(swf(GOOD))[:12] + b"\x00" * 30 + gz(swf(GOOD))[42:]},
         sim_w("t.swf.gz"), ["t.swf.gz", "cannot read"]),
    Case("gz-short-line", {"t.swf.gz": gz(with_line(2, "2 20 0 100"))}, sim_w("t.swf.gz"),
         ["t.swf.gz", "line 3"]),
    Case("gz-nan", {"t.swf.gz": gz(with_line(2, swf_line(2).replace(" 100 ", " nan ", 1)))},
         sim_w("t.swf.gz"), ["t.swf.gz", "line 3", "field 'run_time'"]),
    # ---- Batsim JSON
    Case("batsim-invalid-json", {"w.json": '{"jobs": [1,'}, sim_w("w.json"),
         ["w.json", "line 1"]),
    Case("batsim-jobs-not-list", {"w.json": json.dumps({"jobs": {}, "profiles": {}})},
         sim_w("w.json"), ["w.json", "field 'jobs'"]),
    Case("batsim-missing-res", {"w.json": batsim([{"id": "1", "subtime": 0, "profile": "p"}])},
         sim_w("w.json"), ["w.json", "jobs[0]", "field 'res'"]),
    Case("batsim-res-zero", {"w.json": batsim([bjob(res=0)])}, sim_w("w.json"),
         ["w.json", "jobs[0].res", "field 'res'"]),
    Case("batsim-res-text", {"w.json": batsim([bjob(), bjob(1, res="four")])}, sim_w("w.json"),
         ["w.json", "jobs[1].res", "field 'res'"]),
    Case("batsim-unknown-profile", {"w.json": batsim([bjob(profile="q")])}, sim_w("w.json"),
         ["w.json", "jobs[0].profile", "field 'profile'"]),
    Case("batsim-nb-res", {"w.json": batsim([bjob()], nb_res=-1)}, sim_w("w.json"),
         ["w.json", "field 'nb_res'"]),
    Case("batsim-nan-subtime", {"w.json": batsim([bjob(subtime=float("nan"))])},
         sim_w("w.json"), ["w.json", "jobs[0].subtime", "field 'subtime'"]),
    Case("batsim-negative-walltime", {"w.json": batsim([bjob(walltime=-5)])}, sim_w("w.json"),
         ["w.json", "jobs[0].walltime", "field 'walltime'"]),
    Case("batsim-unsupported-type", {"w.json": batsim([bjob()], {"p": {"type": "smpi"}})},
         sim_w("w.json"), ["w.json", "smpi"]),
    Case("batsim-composed-cycle", {"w.json": batsim([bjob()], {
        "p": {"type": "composed", "seq": ["p"], "repeat": 1}})}, sim_w("w.json"),
         ["w.json", "p"]),
    Case("batsim-not-utf8", {"w.json": b'{"jobs": ["\xff\xfe"]}'}, sim_w("w.json"),
         ["w.json"]),
    Case("batsim-bbopt-bb-text", {"w.json": batsim([bjob(extra_data={"bbopt": {"bb": "x"}})])},
         sim_w("w.json"), ["w.json", "jobs[0]"]),
    # ---- platform YAML/JSON
    Case("platform-no-nodes", {"p.yaml": "bb: 10GB\n"}, plat_w("p.yaml"),
         ["p.yaml", "field 'nodes'"]),
    Case("platform-nodes-text", {"p.json": '{"nodes": "many", "bb": 0}'}, plat_w("p.json"),
         ["p.json", "field 'nodes'"]),
    Case("platform-bb-text", {"p.yaml": "nodes: 8\nbb: lots\n"}, plat_w("p.yaml"),
         ["p.yaml", "field 'bb'"]),
    Case("platform-nodes-negative", {"p.yaml": "nodes: -3\n"}, plat_w("p.yaml"),
         ["p.yaml", "field 'nodes'"]),
    Case("platform-a-list", {"p.yaml": "- 1\n- 2\n"}, plat_w("p.yaml"), ["p.yaml"]),
    Case("platform-yaml-syntax", {"p.yaml": "nodes: [8\n"}, plat_w("p.yaml"),
         ["p.yaml", "line"]),
    Case("platform-yaml-alias-cycle", {"p.yaml": "tree: &t\n  type: pfs\n  children: [*t]\n"},
         plat_w("p.yaml"), ["p.yaml", "$.tree.children[0]", "alias cycle"]),
    Case("platform-directory", {"d/x": ""}, plat_w("d"), ["d"]),
    Case("topology-count-zero", {"p.yaml": "tree:\n  type: pfs\n  children:\n"
                                           "    - {type: node, count: 0}\n"},
         plat_w("p.yaml"), ["p.yaml", "$.tree.children[0]", "field 'count'"]),
    Case("topology-bandwidth-text", {"p.yaml": "tree:\n  type: pfs\n  bandwidth: fast\n"
                                               "  children: [{type: node}]\n"},
         plat_w("p.yaml"), ["p.yaml", "$.tree", "field 'bandwidth'"]),
    Case("topology-too-many", {"p.yaml": "tree:\n  type: pfs\n  children:\n"
                                         "    - {type: node, count: 20000000}\n"},
         plat_w("p.yaml"), ["p.yaml", "field 'count'"]),
    # ---- JGF
    Case("jgf-self-loop", {"g.json": jgf(TREE_NODES, [*TREE_EDGES, e("1", "1")])},
         plat_w("g.json"), ["g.json", "$.graph.edges[3]", "self-loop"]),
    Case("jgf-cycle-below-root", {"g.json": jgf(TREE_NODES, [*TREE_EDGES, e("2", "1")])},
         plat_w("g.json"), ["g.json", "$.graph.edges[3]", "parent"]),
    Case("jgf-detached-cycle", {"g.json": jgf([*TREE_NODES, v("4", "switch"), v("5", "switch")],
                                              [*TREE_EDGES, e("4", "5"), e("5", "4")])},
         plat_w("g.json"), ["g.json", "$.graph.edges", "cycle"]),
    Case("jgf-edges-numbers", {"g.json": jgf(TREE_NODES, [0, 1])}, plat_w("g.json"),
         ["g.json", "$.graph.edges[0]"]),
    Case("jgf-two-roots", {"g.json": jgf([*TREE_NODES, v("9", "pfs")], TREE_EDGES)},
         plat_w("g.json"), ["g.json", "one root"]),
    Case("jgf-unknown-vertex", {"g.json": jgf(TREE_NODES, [*TREE_EDGES, e("1", "7")])},
         plat_w("g.json"), ["g.json", "$.graph.edges[3]", "unknown vertex"]),
    Case("jgf-nodes-not-list", {"g.json": json.dumps({"graph": {"nodes": 3, "edges": []}})},
         plat_w("g.json"), ["g.json", "$.graph.nodes"]),
    Case("jgf-pool-no-unit", {"g.json": jgf([*TREE_NODES, v("4", "bandwidth", size=5)],
                                            [*TREE_EDGES, e("1", "4")])},
         plat_w("g.json"), ["g.json", "vertex 4", "field 'unit'"]),
    Case("jgf-bb-capacity-text", {"g.json": jgf(
        [*TREE_NODES, v("4", "bb", properties={"capacity": "huge"})], [*TREE_EDGES, e("0", "4")])},
        plat_w("g.json"), ["g.json", "vertex 4", "field 'capacity'"]),
    Case("jgf-duplicate-id", {"g.json": jgf([*TREE_NODES, v("3", "node")], TREE_EDGES)},
         plat_w("g.json"), ["g.json", "$.graph.nodes[4]", "field 'id'"]),
    # ---- decide states
    Case("state-too-many-nodes", {"s.json": st(running=running(nodes=5, allocation=None))},
         dec("s.json"), ["s.json", "$.running[0]", "5 nodes"]),
    Case("state-too-much-bb", {"s.json": st(running=running(bb=2e11))}, dec("s.json"),
         ["s.json", "$.running[0]", "burst buffer"]),
    Case("state-overlap",
         {"s.json": st(running=[*running(), *running(id="r2", allocation=[1, 2])])},
         dec("s.json"), ["s.json", "$.running[1]", "field 'allocation'", "node 1"]),
    Case("state-alloc-range", {"s.json": st(running=running(allocation=[0, 4]))}, dec("s.json"),
         ["s.json", "$.running[0]", "field 'allocation'"]),
    Case("state-alloc-text", {"s.json": st(running=running(allocation=[0, "b"]))},
         dec("s.json"), ["s.json", "$.running[0]", "field 'allocation[1]'"]),
    Case("state-queued-future", {"s.json": st(queue=[{"id": "q", "walltime": 5,
                                                      "submit": 500}])},
         dec("s.json"), ["s.json", "$.queue[0]", "field 'submit'", "future"]),
    Case("state-negative-time", {"s.json": st(time=-1, running=[], queue=[])}, dec("s.json"),
         ["s.json", "field 'time'"]),
    Case("state-start-future", {"s.json": st(running=running(start=200))}, dec("s.json"),
         ["s.json", "$.running[0]", "field 'start'", "future"]),
    Case("state-negative-ssd", {"s.json": st(platform={"nodes": 2, "node_ssd": [1e9, -1]},
                                             running=[], queue=[])},
         dec("s.json"), ["s.json", "$.platform", "node_ssd"]),
    Case("state-misspelled-top", {"s.json": json.dumps({**state(), "queu": []})}, dec("s.json"),
         ["s.json", "field 'queu'", "did you mean 'queue'"]),
    Case("state-misspelled-job", {"s.json": st(queue=[{"id": "q", "waltime": 5}])},
         dec("s.json"), ["s.json", "$.queue[0]", "field 'waltime'"]),
    Case("state-not-utf8", {"s.json": b'{"time": 1, "platform": {"nodes": 2, "name": "\xff"}}'},
         dec("s.json"), ["s.json", "UTF-8"]),
    Case("state-memory-rounds", {"s.json": st(memory={"rounds": [1, 2]})},
         dec("s.json", "--policy", "bbsched"), ["s.json", "$.memory", "field 'rounds'"]),
    Case("state-memory-reservation", {"s.json": st(memory={"reservations": {"q1": "soon"}})},
         dec("s.json", "--policy", "conservative-bb"),
         ["s.json", "$.memory.reservations", "field 'q1'"]),
    Case("state-nan-literal", {"s.json": st().replace("100.0", "NaN", 1)}, dec("s.json"),
         ["s.json", "NaN"]),
    Case("state-invalid-json", {"s.json": st()[:-3]}, dec("s.json"), ["s.json", "line 1"]),
    Case("state-version", {"s.json": st(version=2)}, dec("s.json"),
         ["s.json", "field 'version'"]),
    Case("state-directory", {"s/x": ""}, dec("s"), ["s", "directory"]),
    Case("state-topology-self-loop", {"s.json": st(platform={
        "nodes": 2, "topology": json.loads(jgf(TREE_NODES, [*TREE_EDGES, e("2", "2")]))},
        running=[])}, dec("s.json"), ["s.json", "$.platform.topology", "self-loop"]),
    # ---- CLI options
    Case("opt-depth-0", {}, [*SIM, "--jobs", "5", "--policy", "conservative-bb", "-o", "depth=0"],
         ["-o depth", "depth"]),
    Case("opt-depth-negative", {}, [*SIM, "--jobs", "5", "--policy", "conservative-bb", "-o",
                                    "depth=-1"], ["-o depth"]),
    Case("opt-depth-text", {}, [*SIM, "--jobs", "5", "--policy", "conservative-bb", "-o",
                                "depth=abc"], ["-o depth", "integer"]),
    Case("opt-budget-text", {}, [*SIM, "--jobs", "5", "--policy", "plan-2", "-o", "budget=abc"],
         ["-o budget", "number"]),
    Case("opt-budget-nan", {}, [*SIM, "--jobs", "5", "--policy", "plan-2", "-o", "budget=NaN"],
         ["-o budget", "finite"]),
    Case("opt-seed-negative", {}, [*SIM, "--jobs", "5", "--seed", "-1"], ["--seed"]),
    Case("opt-policy-seed-negative", {}, [*SIM, "--jobs", "5", "--policy", "plan-2", "-o",
                                          "seed=-3"], ["-o seed"]),
    Case("opt-jobs-zero", {}, [*SIM, "--jobs", "0"], ["--jobs"]),
    Case("opt-typo-compare", {}, ["compare", "--no-progress", "--jobs", "5", "-o", "dpeth=2"],
         ["dpeth"]),
    Case("opt-unknown-policy", {}, [*SIM, "--jobs", "5", "--policy", "fcfs-typo"], ["fcfs-typo"]),
    Case("opt-warmup-text", {}, [*SIM, "--jobs", "5", "--warmup", "soon"], ["--warmup"]),
    Case("opt-not-key-value", {}, [*SIM, "--jobs", "5", "-o", "depth"], ["-o", "KEY=VALUE"]),
    Case("opt-window-float", {}, [*SIM, "--jobs", "5", "--policy", "bbsched", "-o",
                                  "window=2.5"], ["-o window", "integer"]),
    Case("workload-directory", {"w/x": ""}, [*SIM, "--workload", "w"], ["w", "directory"]),
    Case("workload-suffix", {"w.txt": "1 2 3\n"}, sim_w("w.txt"), ["w.txt", "format"]),
    Case("workload-missing", {}, sim_w("nothing.swf"), ["nothing.swf", "no such file"]),
    # ---- output paths (checked before any work)
    Case("out-is-file", {"out": "x"}, [*SIM, "--jobs", "5", "--out", "out"],
         ["out", "field '--out'"]),
    Case("out-under-file", {"f": "x"}, [*SIM, "--jobs", "5", "--out", "f/sub"],
         ["f", "field '--out'"]),
    Case("out-existing-results", {"r/fcfs-bb_jobs.csv": "old"},
         [*SIM, "--jobs", "5", "--out", "r"], ["r", "--force"]),
    Case("plot-no-extension", {}, ["compare", "--no-progress", "--jobs", "5", "--plot", "chart"],
         ["chart", "field '--plot'", "image extension"]),
    Case("plot-missing-dir", {}, ["compare", "--no-progress", "--jobs", "5", "--plot",
                                  "nodir/c.png"], ["nodir", "field '--plot'"]),
    Case("plot-exists", {"c.png": "old"}, ["compare", "--no-progress", "--jobs", "5", "--plot",
                                           "c.png"], ["c.png", "--force"]),
    # ---- a sweep spec's size past any float; a measurement window with no submission in it
    Case("spec-bb-past-float", {"s.yaml": "name: s\nworkloads: {w: {generator: {name: kth-like,"
                                          " n_jobs: 5}}}\nplatforms: [{name: p, nodes: 8, bb: 1"
                                          + "0" * 400 + "}]\npolicies: [fcfs-bb]\n"},
         ["sweep", "s.yaml", "--dry-run", "--out", "r"], ["s.yaml", "platforms[0].bb",
                                                          "too large"]),
    Case("opt-warmup-empty-window", {"t.swf": swf(GOOD)}, [*sim_w("t.swf"), "--warmup",
                                                          "40.5s"],
         ["'--warmup'", "[50.5, 51) s is empty"]),
]

#: One case of each kind also runs as a real process (exit status, stderr, a wall-clock limit).
SUBPROCESS = ["swf-mixed-up", "gz-truncated", "batsim-res-text", "platform-yaml-alias-cycle",
              "jgf-cycle-below-root", "jgf-self-loop", "state-overlap", "opt-depth-text",
              "out-is-file"]


def _materialise(case: Case, root: Path) -> None:
    for name, content in case.files.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            p.write_text(content)
        else:
            p.write_bytes(content)


def _check(case: Case, rc: int, err: str, out: str = "") -> None:
    assert rc == 2, (case.id, rc, err, out[-500:])
    lines = err.strip().splitlines()
    assert len(lines) == 1, (case.id, err)
    assert lines[0].startswith("bbopt: error: "), (case.id, err)
    assert "Traceback" not in err + out
    for want in case.expect:
        assert want in lines[0], (case.id, want, lines[0])
    assert "field 'field" not in lines[0]  # no repeated field prefix


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def test_corpus_is_large_and_ids_unique():
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)
    assert set(SUBPROCESS) <= {c.id for c in CASES}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_in_process(case: Case, tmp_path, monkeypatch):
    _materialise(case, tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BBOPT_DATA", raising=False)
    err, out = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(20)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = main(case.argv)
    except _Timeout:
        pytest.fail(f"{case.id}: no answer within 20 s (a hang)")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    _check(case, rc, err.getvalue(), out.getvalue())


@pytest.mark.parametrize("name", SUBPROCESS)
def test_bad_input_subprocess(name: str, tmp_path):
    case = next(c for c in CASES if c.id == name)
    _materialise(case, tmp_path)
    r = subprocess.run([sys.executable, "-m", "bbopt.cli", *case.argv], cwd=tmp_path,
                       capture_output=True, text=True, timeout=60)
    _check(case, r.returncode, r.stderr, r.stdout)

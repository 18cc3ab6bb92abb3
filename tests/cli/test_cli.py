"""The command line: the default comparison, one-line errors with exit status 2, decide as JSON."""

import json
import subprocess
import sys

import pytest

from bbopt.cli import main
from bbopt.core import GB
from tests.test_schema import state


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "bbopt.cli", *args], capture_output=True,
                          text=True, input=stdin, timeout=300)


def test_compare_on_the_embedded_default(capsys):
    assert main(["compare", "--jobs", "300", "--policies", "fcfs-easy,fcfs-bb",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "kth-like: 300 jobs" in out
    assert "fcfs-easy" in out and "mean bounded slowdown" in out


def test_simulate_writes_csv(tmp_path, capsys):
    assert main(["simulate", "--jobs", "100", "--policy", "sjf-bb", "--out", str(tmp_path),
                 "--no-progress"]) == 0
    lines = (tmp_path / "sjf-bb_jobs.csv").read_text().splitlines()
    assert lines[0].startswith("job_id,workload_name,profile,submission_time")
    assert len(lines) == 101
    assert "sjf-bb" in json.loads((tmp_path / "summary.json").read_text())["metrics"]


def test_policy_options_pass_through(capsys, monkeypatch):
    """-o depth=K reaches the policy: conservative-bb reserves for K of the 4 jobs that cannot
    start now (each needs the whole machine, held by r until 100 s)."""
    import io

    from bbopt.core import ClusterState, Job, Platform, RunningJob
    from bbopt.schema import dumps

    queue = tuple(Job(f"q{k}", 0.0, 50.0, nodes=4) for k in range(4))
    st = ClusterState(10.0, Platform(4, 0.0), (RunningJob(Job("r", 0.0, 100.0, nodes=1), 0.0),),
                      queue)

    def reservations(*opts):
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(dumps(st).encode())))
        assert main(["decide", "--policy", "conservative-bb", *opts]) == 0
        return [(r["job_id"], r["start"]) for r in json.loads(capsys.readouterr().out)[
            "reservations"]]

    assert reservations() == [("q0", 100.0), ("q1", 150.0), ("q2", 200.0), ("q3", 250.0)]
    assert reservations("-o", "depth=2") == [("q0", 100.0), ("q1", 150.0)]
    assert main(["simulate", "--jobs", "50", "--policy", "conservative-bb", "-o", "depth=3",
                 "--no-progress"]) == 0


def test_errors_are_one_line_without_traceback(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("1 0 -1 x 2 -1 -1 2 60 -1 1 3 1 -1 -1 -1 -1 -1\n")
    for args in (["compare", "--workload", str(bad)],
                 ["compare", "--policies", "fcfs,nope"],
                 ["simulate", "--workload", str(tmp_path / "missing.swf")],
                 ["simulate", "--policy", "conservative-bb", "-o", "deep=2"],
                 ["simulate", "--platform", "mars"]):
        r = run(*args)
        assert r.returncode == 2, args
        assert "Traceback" not in r.stderr
        assert r.stderr.startswith("bbopt: error:") and r.stderr.count("\n") == 1, r.stderr
    r = run("compare", "--workload", str(bad))
    assert "bad.swf" in r.stderr and "line 1" in r.stderr and "run_time" in r.stderr


def test_platform_file(tmp_path, capsys):
    p = tmp_path / "machine.yaml"
    p.write_text("nodes: 32\nbb: 100GB\n")
    assert main(["simulate", "--jobs", "50", "--platform", str(p), "--no-progress"]) == 0
    assert "32 nodes, 100 GB BB" in capsys.readouterr().out


def test_decide_reads_state_json():
    from bbopt.schema import dumps

    r = run("decide", "--policy", "fcfs-bb", stdin=dumps(state()))
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert [s["job_id"] for s in d["start"]] == ["q2"]
    assert d["reservations"] == [{"job_id": "q1", "start": 600.0, "never_fits": False}]
    assert GB > 0


def test_decide_bad_state_names_path():
    r = run("decide", stdin='{"time": 0, "platform": {"nodes": 4}, "queue": [{"id": 1}]}')
    assert r.returncode == 2
    assert "$.queue[0]" in r.stderr and "walltime" in r.stderr


def test_papers_machines_by_name(capsys):
    assert main(["simulate", "--jobs", "50", "--platform", "kopanski-dragonfly",
                 "--policy", "io-easy", "--no-progress"]) == 0
    assert "96 nodes" in capsys.readouterr().out
    from bbopt.loading import load_platform

    full, under = load_platform("cts1"), load_platform("cts1:0.3")
    assert full.nodes == under.nodes == 3888
    pfs = full.topology.vertex_of["pfs"]
    assert under.topology.capacity[pfs] == pytest.approx(0.7 * full.topology.capacity[pfs])


def test_trace_declared_burst_buffer_sets_the_platform(tmp_path, capsys):
    trace = tmp_path / "bb.swf"
    trace.write_text("; MaxNodes: 16\n; BurstBuffer: 200\n"
                     "1 0 -1 100 4 -1 -1 4 200 -1 1 3 1 -1 -1 -1 -1 -1 50\n"
                     "2 10 -1 100 4 -1 -1 4 200 -1 1 3 1 -1 -1 -1 -1 -1 180\n")
    assert main(["simulate", "--workload", str(trace), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "16 nodes, 200 GB BB" in out


def test_warmup_and_cooldown_measure_the_middle_of_the_trace(tmp_path, capsys):
    args = ["simulate", "--jobs", "400", "--policy", "fcfs-bb", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "all")]) == 0
    assert main([*args, "--warmup", "1d", "--cooldown", "1d", "--out", str(tmp_path / "mid")]) \
        == 0
    whole = json.loads((tmp_path / "all" / "summary.json").read_text())["metrics"]["fcfs-bb"]
    mid = json.loads((tmp_path / "mid" / "summary.json").read_text())["metrics"]["fcfs-bb"]
    assert 0 < mid["jobs"] < whole["jobs"] == 400
    assert mid["decisions"] == whole["decisions"]  # decision statistics: the whole run
    r = run("simulate", "--jobs", "50", "--warmup", "400d")
    assert r.returncode == 2 and "warmup" in r.stderr and "Traceback" not in r.stderr


def _without_timings(summary: dict) -> dict:
    """The metrics of summary.json, minus the measured times (they differ between any runs)."""
    return {pol: {k: v for k, v in m.items() if "decision" not in k and "simulation" not in k}
            for pol, m in summary.items()}


def test_compare_in_workers_matches_the_serial_run(tmp_path, capsys):
    outs = {}
    for workers in ("1", "2"):
        out = tmp_path / workers
        assert main(["compare", "--jobs", "200", "--policies", "fcfs,sjf-bb,conservative-bb",
                     "--no-progress", "--workers", workers, "--out", str(out)]) == 0
        outs[workers] = out
    for pol in ("fcfs", "sjf-bb", "conservative-bb"):
        serial = (outs["1"] / f"{pol}_jobs.csv").read_bytes()
        assert serial == (outs["2"] / f"{pol}_jobs.csv").read_bytes()
    summaries = [json.loads((outs[w] / "summary.json").read_text())["metrics"]
                 for w in ("1", "2")]
    assert list(summaries[0]) == list(summaries[1]) == ["fcfs", "sjf-bb", "conservative-bb"]
    assert _without_timings(summaries[0]) == _without_timings(summaries[1])
    split = []
    for workers in ("1", "2"):
        capsys.readouterr()
        assert main(["compare", "--jobs", "150", "--split", "3", "--policies", "fcfs,fcfs-bb",
                     "--no-progress", "--workers", workers, "--format", "csv"]) == 0
        split.append(capsys.readouterr().out)
    assert split[0] == split[1] and "fcfs-bb" in split[0]


def test_rejected_jobs_are_grouped_by_kind_of_reason(capsys):
    # Without the generator's rules the default workload draws 51 BB requests larger than the
    # 480 GB platform, each a different size: one line says so, with the first job ids, not one
    # line per size.
    assert main(["compare", "--policies", "fcfs-bb", "--no-progress", "--no-bb-rules"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if " x requests " in line]
    assert len(lines) == 1
    assert lines[0].split()[:5] == ["51", "x", "requests", "more", "burst"]
    assert "(46 more)" in lines[0]

"""What an operator relies on beyond single bad inputs: engine states are possible states,
results carry provenance, skipped records are reported, --jobs cuts any workload, outputs are
never overwritten without --force, and readers cannot loop."""

from __future__ import annotations

import csv
import json
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.cli import main
from bbopt.core import ClusterState, RunningJob
from bbopt.errors import InputError, check_acyclic
from bbopt.loading import read_workload
from bbopt.topology.formats import from_jgf
from bbopt.validation import validate_state
from bbopt.workloads.swf import read_swf
from tests._workload_data import KTH_BATSIM, KTH_SWF, data_dir, data_file


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 20), st.integers(1, 9),
                          st.integers(0, 110)), min_size=1, max_size=20),
       st.sampled_from(["fcfs-bb", "conservative-bb", "filler", "bbsched"]))
def test_engine_states_pass_validation(rows, policy):
    jobs = [Job(id=str(k), submit=float(s), walltime=float(w), runtime=float(w), nodes=n,
                bb=b * 1e9) for k, (s, w, n, b) in enumerate(rows)]
    seen = []

    def check(state, decision):
        validate_state(state)
        seen.append(state.time)

    platform = Platform(nodes=8, bb=100e9)
    simulate(jobs, platform, policy, on_decision=check)
    assert seen or all(platform.why_never_fits(j) for j in jobs)


def _state(**over):
    p = Platform(nodes=4, bb=10.0, node_ssd=(5.0, 5.0, 1.0, 1.0))
    r = RunningJob(Job("r", 0.0, 10.0, nodes=2, bb=4.0, ssd=2.0), 5.0, (0, 1))
    base = dict(time=8.0, platform=p, running=(r,), queue=(Job("q", 1.0, 5.0),))
    base.update(over)
    return ClusterState(**base)


@pytest.mark.parametrize("over, field", [
    ({}, None),
    ({"running": (RunningJob(Job("r", 0.0, 10.0, nodes=2, ssd=2.0), 5.0, (0, 2)),)},
     "allocation"),  # node 2 has 1 B of SSD < 2 B
    ({"running": (RunningJob(Job("r", 0.0, 10.0, nodes=2, bb=11.0), 5.0),)}, "job"),
    ({"running": (RunningJob(Job("r", 6.0, 10.0, nodes=2), 5.0),)}, "submit"),
    ({"queue": (Job("q", 9.0, 5.0),)}, "submit"),
    ({"queue": (Job("r", 1.0, 5.0),)}, "id"),
    ({"memory": {"rounds": {"q": -1}}}, "q"),
    ({"time": float("nan")}, "time"),
])
def test_validate_state_names_the_field(over, field):
    s = _state(**over)
    if field is None:
        validate_state(s)
        return
    with pytest.raises(InputError) as exc:
        validate_state(s)
    assert exc.value.field == field


def test_decide_refuses_an_impossible_state():
    import bbopt

    with pytest.raises(InputError, match="future"):
        bbopt.decide(_state(queue=(Job("q", 9.0, 5.0),)), "fcfs-bb")


def test_swf_skip_or_raise(tmp_path):
    p = tmp_path / "t.swf"
    p.write_text("1 0 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                 "2 5 0 0 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1\n"
                 "3 9 0 50 -1 -1 -1 -1 200 -1 1 1 1 -1 -1 -1 -1 -1\n")
    t = read_swf(p, on_bad="skip")
    assert [j.id for j in t.jobs] == ["1"]
    assert [(ln, why) for ln, why, _ in t.skipped_records] == [(2, "runtime <= 0"),
                                                               (3, "no processors")]
    with pytest.raises(InputError, match="line 2"):
        read_swf(p, on_bad="raise")


def test_kth_skipped_records_reported_and_written(tmp_path, capsys):
    trace = data_file(KTH_SWF)
    assert main(["simulate", "--no-progress", "--workload", str(trace), "--jobs", "40",
                 "--out", str(tmp_path)]) == 0
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "skipped" in x)
    assert line == (f"bbopt: skipped 9 records: 8 runtime <= 0, 1 no processors; see "
                    f"{tmp_path / 'skipped.csv'}")
    with (tmp_path / "skipped.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 9 and rows[0]["line"] == "2476"
    summary = json.loads((tmp_path / "summary.json").read_text())
    prov = summary["provenance"]
    assert prov["workload"]["sha256"] and len(prov["workload"]["sha256"]) == 64
    assert prov["workload"]["jobs"] == 40 and prov["workload"]["jobs_in_file"] == 28467
    assert prov["seed"] == 0 and prov["platform"]["nodes"] == 96
    assert "simulate" in prov["command"] and prov["bbopt_version"]
    assert prov["policies"] == ["fcfs-bb"] and summary["metrics"]["fcfs-bb"]["jobs"] == 40


def test_first_n_jobs_of_a_file_and_bbopt_data(monkeypatch, tmp_path):
    d = data_dir()
    if d is None or not (d / KTH_SWF).exists():
        pytest.skip("no KTH trace")
    monkeypatch.setenv("BBOPT_DATA", str(d))
    monkeypatch.chdir(tmp_path)
    w = read_workload(KTH_SWF, n_jobs=25, bb="none")  # a bare name, found in $BBOPT_DATA
    full = read_swf(d / KTH_SWF).jobs
    assert [j.id for j in w.jobs] == [j.id for j in full[:25]]
    monkeypatch.delenv("BBOPT_DATA")
    with pytest.raises(InputError, match="BBOPT_DATA"):
        read_workload(KTH_SWF)


def test_batsim_nb_res_sets_the_machine(tmp_path, capsys):
    doc = {"nb_res": 12, "jobs": [{"id": "1", "subtime": 0, "res": 12, "walltime": 100,
                                   "profile": "p"}],
           "profiles": {"p": {"type": "delay", "delay": 50}}}
    (tmp_path / "w.json").write_text(json.dumps(doc))
    assert main(["simulate", "--no-progress", "--workload", str(tmp_path / "w.json")]) == 0
    out = capsys.readouterr().out
    assert "(12 nodes, 60 GB BB)" in out
    assert data_file(KTH_BATSIM).exists()


def test_numpy_integers_are_node_counts():
    job = Job("a", 0.0, 10.0, nodes=np.int64(4))
    assert job.nodes == 4 and type(job.nodes) is int
    assert Platform(nodes=np.int32(8)).nodes == 8
    with pytest.raises(InputError):
        Job("a", 0.0, 10.0, nodes=np.float64(4.0))


def test_overwrite_needs_force(tmp_path):
    args = ["simulate", "--no-progress", "--jobs", "10", "--out", str(tmp_path)]
    assert main(args) == 0
    before = (tmp_path / "summary.json").read_text()
    assert main(args) == 2
    assert (tmp_path / "summary.json").read_text() == before
    assert main([*args, "--force"]) == 0
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_yaml_alias_shared_is_fine_cyclic_is_not():
    shared = {"type": "node"}
    check_acyclic({"a": [shared, shared]}, "x")
    loop: list = []
    loop.append(loop)
    with pytest.raises(InputError, match="alias cycle"):
        check_acyclic({"a": loop}, "x")


def test_exponential_aliases_are_checked_in_linear_time():
    level: list = [1]
    for _ in range(60):  # 2**60 leaves if expanded
        level = [level, level]
    check_acyclic(level, "x")


def test_jgf_deep_chain_without_recursion():
    n = 20000
    nodes = [{"id": str(i), "metadata": {"type": "switch" if i < n - 1 else "node"}}
             for i in range(n)]
    nodes[0]["metadata"]["type"] = "pfs"
    edges = [{"source": str(i), "target": str(i + 1)} for i in range(n - 1)]
    tree = from_jgf({"graph": {"nodes": nodes, "edges": edges}})
    assert tree.nodes == 1


def test_swf_fast_and_strict_paths_agree(tmp_path):
    rows = [f"{k} {k * 7} 0 {k + 1} 2 -1 -1 2 {k + 50} -1 1 3 1 -1 -1 -1 -1 -1"
            for k in range(1, 200)]
    a, b = tmp_path / "a.swf", tmp_path / "b.swf"
    a.write_text("\n".join(rows))
    b.write_text("\n".join(rows).replace(" 1 3 1 ", " 1.0 3 1 "))  # a decimal: strict path
    ja, jb = read_swf(a).jobs, read_swf(b).jobs
    assert ja == jb and [replace(j) for j in ja] == jb

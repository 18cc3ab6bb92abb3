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


# -- read_workload: every kind of workload, its name, its first jobs and its BB requests ---------

ROWS = ["1 5 0 100 4 -1 -1 4 200 -1 1 1 1 -1 -1 -1 -1 -1",
        "2 1 0 50 2 -1 -1 2 100 -1 1 2 1 -1 -1 -1 -1 -1",
        "3 3 0 30 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1"]


def _swf(tmp_path, name="t.swf", rows=ROWS, header=""):
    path = tmp_path / name
    text = header + "\n".join(rows) + "\n"
    if name.endswith(".gz"):
        import gzip

        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_the_embedded_workload_is_drawn_for_the_platform():
    from bbopt.workloads.bb import KOPANSKI_RULES
    from bbopt.workloads.synthetic import kth_like

    w = read_workload(None, n_jobs=60, seed=4)
    assert (w.name, w.path, w.total, w.sha256) == ("kth-like", None, 60, None)
    assert w.jobs == kth_like(n_jobs=60, seed=4, nodes=96, bb=True, rules=KOPANSKI_RULES)
    plain = read_workload(None, n_jobs=60, seed=4, bb_rules=False).jobs
    assert plain == kth_like(n_jobs=60, seed=4, nodes=96, bb=True, rules=None)
    assert plain != w.jobs  # (60 jobs: some short or oversized request the rules replace)
    assert read_workload(None, n_jobs=30, seed=4, bb="none").jobs == kth_like(
        n_jobs=30, seed=4, nodes=96, bb=False)
    small = Platform(nodes=10, bb=1e12, name="small")
    assert read_workload(None, n_jobs=30, platform=small).jobs == kth_like(
        n_jobs=30, seed=0, nodes=10, bb=True, rules=None)
    named = Platform.kopanski(named_bb=True)
    assert read_workload(None, n_jobs=30, platform=named).jobs == kth_like(
        n_jobs=30, seed=0, nodes=96, bb=True, rules=KOPANSKI_RULES)
    assert len(read_workload(None).jobs) == 3000


@pytest.mark.parametrize("bb, jobs, message", [
    ("x", None, "bb model must be auto, lognormal or none, got 'x'"),
    ("auto", 0, "must be between 1 and 100,000,000, got 0"),
    ("auto", 10**8 + 1, "must be between 1 and 100,000,000, got 100000001"),
])
def test_a_bad_model_or_job_count_is_named(bb, jobs, message):
    with pytest.raises(InputError) as exc:
        read_workload(None, bb=bb, n_jobs=jobs)
    assert exc.value.reason == message
    assert exc.value.field == ("bb" if bb == "x" else "jobs")


def test_periodic_applications_come_from_their_generator():
    from bbopt.workloads.generators.jeannot import from_spec

    w = read_workload("jeannot:U-No:0.5:4", seed=3)
    assert (w.name, w.total, w.path) == ("jeannot:U-No:0.5:4", 4, None)
    assert w.jobs == from_spec("jeannot:U-No:0.5:4", 3).jobs
    assert w.jobs != from_spec("jeannot:U-No:0.5:4", 0).jobs


@pytest.mark.parametrize("name, stem", [("t.swf", "t"), ("t.swf.gz", "t"), ("a.b.swf", "a.b"),
                                        ("t.swf.bb", "t"), ("t.swf.bb.gz", "t")])
def test_the_workload_name_is_the_file_without_its_suffixes(tmp_path, name, stem):
    path = _swf(tmp_path, name, rows=[r + " 0 0 0" for r in ROWS] if ".bb" in name
                else ROWS)  # (BBSimulator's three staging fields)
    w = read_workload(path, bb="none", bbsimulator_min_processors=1)
    assert (w.name, w.path, w.total) == (stem, str(path), 3)
    assert [(j.id, j.submit, j.nodes, j.runtime) for j in w.jobs] == [
        ("1", 5.0, 4, 100.0), ("2", 1.0, 2, 50.0), ("3", 3.0, 1, 30.0)]


def test_the_first_jobs_are_the_first_submitted_in_file_order(tmp_path):
    path = _swf(tmp_path)
    w = read_workload(path, n_jobs=2, bb="none")
    assert [j.id for j in w.jobs] == ["2", "3"] and w.total == 3
    assert [j.id for j in read_workload(path, n_jobs=3, bb="none").jobs] == ["1", "2", "3"]
    assert [j.id for j in read_workload(path, n_jobs=1, bb="none").jobs] == ["2"]


def test_bb_requests_are_drawn_when_the_trace_has_none(tmp_path):
    from bbopt.workloads.bb import with_lognormal_bb

    path = _swf(tmp_path)
    plain = read_workload(path, bb="none").jobs
    assert [j.bb for j in plain] == [0.0, 0.0, 0.0]
    kop = Platform.kopanski()
    for kw, rules in (({}, None), ({"platform": kop}, True), ({"platform": kop, "bb_rules": False},
                                                             None)):
        drawn = with_lognormal_bb(plain, 5, rules=rules)
        assert read_workload(path, seed=5, **kw).jobs == drawn
        assert read_workload(path, seed=5, bb="lognormal", **kw).jobs == drawn
        # the first jobs' requests are drawn for them alone, after the cut
        assert read_workload(path, seed=5, n_jobs=2, **kw).jobs == with_lognormal_bb(
            plain[1:], 5, rules=rules)
    assert read_workload(path, seed=5).jobs != read_workload(path, seed=6).jobs


def test_a_traces_own_bb_requests_are_kept_unless_lognormal(tmp_path):
    from bbopt.workloads.bb import with_lognormal_bb

    rows = [r + " 2" for r in ROWS]  # CQSim's 19th field: the BB request in GB
    path = _swf(tmp_path, rows=rows, header="; MaxNodes: 8\n; BurstBuffer: 10\n")
    w = read_workload(path)
    assert [j.bb for j in w.jobs] == [2e9, 2e9, 2e9] and w.max_nodes == 8
    assert read_workload(path, bb="none").jobs == w.jobs
    again = read_workload(path, bb="lognormal", seed=2).jobs
    assert again == with_lognormal_bb(w.jobs, 2) and again != w.jobs


def test_skipped_records_are_counted_by_reason(tmp_path):
    bad = ["4 2 0 0 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1",
           "5 2 0 -1 1 -1 -1 1 60 -1 1 1 1 -1 -1 -1 -1 -1",
           "6 2 0 10 -1 -1 -1 -1 60 -1 1 1 1 -1 -1 -1 -1 -1"]
    w = read_workload(_swf(tmp_path, rows=[*bad, *ROWS]), bb="none")
    assert [(line, why) for line, why, _ in w.skipped] == [
        (1, "runtime <= 0"), (2, "runtime <= 0"), (3, "no processors")]
    assert w.skipped_summary() == "skipped 3 records: 2 runtime <= 0, 1 no processors"
    assert read_workload(_swf(tmp_path), bb="none").skipped_summary() is None


def test_a_batsim_file_brings_its_machine_size(tmp_path):
    doc = {"nb_res": 12, "jobs": [{"id": "1", "subtime": 0, "res": 3, "walltime": 100,
                                   "profile": "p"}],
           "profiles": {"p": {"type": "delay", "delay": 50}}}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    w = read_workload(path, bb="none")
    assert (w.name, w.nb_res, w.total, w.max_nodes) == ("w", 12, 1, None)
    assert [(j.id, j.nodes, j.runtime, j.bb) for j in w.jobs] == [("1", 3, 50.0, 0.0)]
    from bbopt.workloads.bb import with_lognormal_bb

    assert read_workload(path, seed=3).jobs == with_lognormal_bb(w.jobs, 3)  # none: drawn


def test_a_batsim_files_requests_are_kept_unless_lognormal(tmp_path):
    from bbopt.workloads.bb import with_lognormal_bb

    doc = {"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 2, "walltime": 100,
                                  "profile": "p"}],
           "profiles": {"p": {"type": "parallel_homogeneous", "cpu": 4e10, "com": 0,
                              "bb": 1e9}}}
    path = tmp_path / "w.json"
    path.write_text(json.dumps(doc))
    w = read_workload(path)
    assert [(j.runtime, j.bb) for j in w.jobs] == [(40.0, 2e9)]  # the BB per node, both nodes
    assert read_workload(path, speed=2e9).jobs[0].runtime == 20.0  # the reader's options
    again = read_workload(path, bb="lognormal", seed=1).jobs
    assert again == with_lognormal_bb(w.jobs, 1) and again[0].bb != 2e9


def test_a_directory_or_an_unknown_format_is_named(tmp_path):
    (tmp_path / "d.swf").mkdir()
    with pytest.raises(InputError) as exc:
        read_workload(tmp_path / "d.swf")
    assert (exc.value.reason, exc.value.source) == ("is a directory, not a workload file",
                                                    str(tmp_path / "d.swf"))
    (tmp_path / "w.csv").write_text("id\n")
    with pytest.raises(InputError) as exc:
        read_workload(tmp_path / "w.csv")
    assert exc.value.reason == "unknown workload format; known: .swf, .swf.gz, .swf.bb, .json"
    assert exc.value.source == str(tmp_path / "w.csv")


def test_a_registered_reader_reads_its_suffix(tmp_path):
    from bbopt.loading import READERS, load_workload

    READERS.add(".w.csv", lambda p: [Job(p.read_text().strip(), 0.0, 10.0, nodes=2, bb=1.0)])
    try:
        (tmp_path / "a.w.csv").write_text("x\n")
        jobs, name = load_workload(tmp_path / "a.w.csv")
        # a request of one byte is a request: none is drawn
        assert (name, [(j.id, j.nodes, j.bb) for j in jobs]) == ("a.w.csv", [("x", 2, 1.0)])
        (tmp_path / "a.txt").write_text("x\n")
        with pytest.raises(InputError, match=r"known: \.swf, \.swf\.gz, \.swf\.bb, \.json, "
                                             r"\.w\.csv$"):
            load_workload(tmp_path / "a.txt")
    finally:
        READERS.remove(".w.csv")


def test_the_digest_is_the_files_sha256_computed_once(tmp_path):
    import hashlib

    from bbopt.loading import LoadedWorkload, _sha256

    path = _swf(tmp_path)
    w = read_workload(path, bb="none")
    assert w.digest is None
    assert w.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() == w.digest
    path.write_text("changed")
    assert w.sha256 == hashlib.sha256(_swf(tmp_path).read_bytes()).hexdigest()
    big = tmp_path / "big"
    big.write_bytes(bytes(range(256)) * 9000)  # more than one block of 1 MiB
    assert _sha256(big) == hashlib.sha256(big.read_bytes()).hexdigest()
    assert LoadedWorkload([], "x", str(tmp_path)).sha256 is None  # a directory: no digest


def test_load_workload_is_the_jobs_and_name(tmp_path):
    from bbopt.loading import load_workload
    from bbopt.workloads.bb import with_lognormal_bb

    path = _swf(tmp_path)
    jobs, name = load_workload(path, n_jobs=2, seed=1, bb="lognormal", bb_rules=False)
    w = read_workload(path, n_jobs=2, seed=1, bb="lognormal", bb_rules=False)
    assert (jobs, name) == (w.jobs, "t")
    jobs, name = load_workload(path, rebase=True, bb="none")
    assert [(j.submit, j.bb) for j in jobs] == [(4.0, 0.0), (0.0, 0.0), (2.0, 0.0)]
    kop = Platform.kopanski()  # jobs 2 and 3 are short (walltime <= 120 s): the rules apply
    jobs = load_workload(path, bb="none")[0]
    ruled = with_lognormal_bb(jobs, 0, rules=True)
    assert ruled != with_lognormal_bb(jobs, 0, rules=None)
    assert load_workload(path, platform=kop)[0] == ruled
    assert load_workload(path, platform=kop, bb_rules=False)[0] == with_lognormal_bb(jobs, 0)


# -- the platform a workload brings along ---------------------------------------------------------

def test_bb_rules_follow_kopanskis_platforms_only():
    from bbopt.loading import bb_rules_for
    from bbopt.workloads.bb import KOPANSKI_RULES, KopanskiRules

    assert bb_rules_for(None) is None
    assert bb_rules_for(Platform(nodes=96, bb=480e9, name="kth")) is None
    assert bb_rules_for(Platform(nodes=96, bb=480e9, name="my-kopanski")) is None
    assert bb_rules_for(Platform.kopanski()) is KOPANSKI_RULES
    assert bb_rules_for(Platform(nodes=8, bb=1e9, name="kopanski")) is KOPANSKI_RULES
    named = Platform(nodes=8, bb=7e9, name="kopanski-x", bb_nodes=(3e9, 2e9, 2e9))
    assert bb_rules_for(named) == KopanskiRules(bb_nodes=3, bb_node_capacity=2e9)


@pytest.mark.parametrize("header, expect", [
    ("; MaxNodes: 8\n; BurstBuffer: 10\n", (8, 10e9, "t")),
    ("; MaxProcs: 16\n; BurstBuffer: 2.5 GB\n", (16, 2.5e9, "t")),  # the number before a unit
    ("; MaxProcs: 16\n; MaxNodes: 8 nodes\n; BurstBuffer: 1\n", (8, 1e9, "t")),  # nodes first
    ("; MaxNodes: 8\n; MaxNodes: 9\n; BurstBuffer: 1\n", (8, 1e9, "t")),  # the first value
    ("; Version: 2\n;\n; MaxNodes: 4\n;BurstBuffer:3\n", (4, 3e9, "t")),
    ("; MaxNodes: 8\n", None),                                     # no burst buffer
    ("; MaxNodes: 8\n1 0 0 1 1 -1 -1 1 1\n; BurstBuffer: 10\n", None),  # after the header
])
def test_an_swf_header_declares_its_platform(tmp_path, header, expect):
    from bbopt.loading import declared_platform

    for name in ("t.swf", "t.swf.gz"):
        p = declared_platform(_swf(tmp_path, name, header=header))
        assert (None if p is None else (p.nodes, p.bb, p.name)) == expect
    path = _swf(tmp_path, "t.swf", header=header)
    if expect is not None:
        assert declared_platform(path, bb_unit=1e6).bb == expect[1] / 1e3


def test_a_header_read_as_text_whatever_its_bytes(tmp_path):
    from bbopt.loading import declared_platform

    path = tmp_path / "t.swf"
    path.write_bytes(b"\xef\xbb\xbf; MaxNodes: 8 (see: notes)\n; Comp\xe9: x\n; BurstBuffer: 4\n"
                     + "\n".join(ROWS).encode())  # a BOM, a colon in a value, a Latin-1 byte
    p = declared_platform(path)
    assert (p.nodes, p.bb) == (8, 4e9)


@pytest.mark.parametrize("error, reason", [
    (PermissionError(13, "Permission denied", "t.swf.gz"), "Permission denied"),
    (OSError("disk gone"), "disk gone"), (EOFError(), "EOFError")])
def test_a_read_error_is_named_by_its_reason(tmp_path, monkeypatch, error, reason):
    import gzip

    from bbopt.loading import declared_platform

    path = _swf(tmp_path, "t.swf.gz")

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr(gzip, "open", broken)
    with pytest.raises(InputError) as exc:
        declared_platform(path)
    assert (exc.value.reason, exc.value.source) == (f"cannot read: {reason}", str(path))


def test_what_declares_no_platform(tmp_path, monkeypatch):
    from bbopt.loading import declared_platform

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BBOPT_DATA", str(tmp_path / "none"))
    (tmp_path / "d.swf").mkdir()
    header = "; MaxNodes: 8\n; BurstBuffer: 10\n"
    _swf(tmp_path, "w.txt", header=header)
    assert [declared_platform(x) for x in (None, "w.txt", "missing.swf", "d.swf")] == [None] * 4
    data = tmp_path / "data"
    data.mkdir()
    _swf(data, "far.swf", header=header)
    monkeypatch.setenv("BBOPT_DATA", str(data))  # found where any trace is
    assert declared_platform("far.swf").nodes == 8


@pytest.mark.parametrize("spec, nodes, name", [("jeannot:M-BN:0.5", 49152, "mira"),
                                               ("jeannot:m-no:0.5:10", 49152, "mira"),
                                               ("jeannot:U-No:0.5", 2048, "uniform-2048"),
                                               ("jeannot:", 2048, "uniform-2048")])
def test_periodic_applications_bring_their_machine(spec, nodes, name):
    from bbopt.loading import declared_platform

    p = declared_platform(spec)
    assert (p.nodes, p.bb, p.name) == (nodes, 0.0, name)


@pytest.mark.parametrize("header, reason, field", [
    ("; MaxNodes: 8\n; BurstBuffer: lots\n", "cannot read the header value 'lots'", "BurstBuffer"),
    ("; MaxNodes: 8\n; BurstBuffer:\n", "cannot read the header value ''", "BurstBuffer"),
    ("; MaxNodes: many\n; BurstBuffer: 1\n", "cannot read the header value '1'", "BurstBuffer"),
    ("; BurstBuffer: 1\n", "declares a burst buffer but no MaxNodes/MaxProcs", "MaxNodes"),
    ("; MaxNodes: 0\n; BurstBuffer: 1\n",
     "platform nodes must be an integer in [1, 10,000,000], got 0", "MaxNodes"),
    ("; MaxNodes: 8\n; BurstBuffer: -1\n",
     "platform bb must be in [0, 1e+21] bytes, got -1000000000.0", "BurstBuffer"),
])
def test_a_bad_header_is_named(tmp_path, header, reason, field):
    from bbopt.loading import declared_platform

    path = _swf(tmp_path, header=header)
    with pytest.raises(InputError) as exc:
        declared_platform(path)
    assert (exc.value.source, exc.value.field) == (str(path), field)
    if reason is not None:
        assert exc.value.reason == reason


def test_an_unreadable_trace_is_named(tmp_path):
    from bbopt.loading import declared_platform

    path = tmp_path / "t.swf.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(InputError) as exc:
        declared_platform(path)
    assert exc.value.source == str(path)
    assert exc.value.reason == "cannot read: Not a gzipped file (b'no')"


def test_the_platform_of_a_workload(tmp_path):
    from bbopt.loading import read_workload_and_platform

    declared = _swf(tmp_path, "d.swf", rows=[r + " 1" for r in ROWS],
                    header="; MaxNodes: 8\n; BurstBuffer: 10\n")
    w, p = read_workload_and_platform(declared, bb="none")
    assert (p.nodes, p.bb, p.name, w.name) == (8, 10e9, "d", "d")
    w, p = read_workload_and_platform(declared, "kopanski", bb="none")
    assert p == Platform.kopanski() and len(w.jobs) == 3
    w, p = read_workload_and_platform(_swf(tmp_path), bb="none")
    assert p == Platform.kopanski() and w.name == "t"
    doc = {"nb_res": 12, "jobs": [{"id": "1", "subtime": 0, "res": 3, "walltime": 100,
                                   "profile": "p"}],
           "profiles": {"p": {"type": "delay", "delay": 50}}}
    (tmp_path / "w.json").write_text(json.dumps(doc))
    w, p = read_workload_and_platform(tmp_path / "w.json")
    assert (p.nodes, p.bb, p.name) == (12, 60e9, "w (nb_res 12, 5 GB BB/node)")
    w, p = read_workload_and_platform(tmp_path / "w.json", "cts1")
    assert p.name == "cts1"
    # the platform chosen is the one the BB requests are drawn for
    small = tmp_path / "small.json"
    small.write_text('{"nodes": 10, "bb": "1TB"}')
    w, p = read_workload_and_platform(None, str(small), n_jobs=5)
    assert p.nodes == 10 and w.jobs == read_workload(None, n_jobs=5, platform=p).jobs
    assert max(j.nodes for j in w.jobs) <= 10


def test_batsim_documents_both_ways():
    from bbopt.loading import batsim_document, batsim_jobs

    jobs = [Job("a", 0.0, 100.0, runtime=40.0, nodes=2), Job("b", 5.0, 60.0, runtime=60.0)]
    doc = batsim_document(jobs, nb_res=4)
    assert doc["nb_res"] == 4
    assert {p["type"] for p in doc["profiles"].values()} == {"delay"}
    back = batsim_jobs(doc)
    assert [(j.id, j.submit, j.walltime, j.runtime, j.nodes) for j in back] == [
        ("a", 0.0, 100.0, 40.0, 2), ("b", 5.0, 60.0, 60.0, 1)]
    io_aware = {"nb_res": 4, "profiles": {str(i): {  # Kopanski's I/O-aware parts: read plainly
        "type": "parallel_homogeneous", "cpu": 100e9 - 37_123_456 * (i + 1), "com": 0, "bb": 1e9}
        for i in range(12)}, "jobs": [{"id": i, "subtime": i, "walltime": 3600, "res": 1,
                                       "profile": str(i)} for i in range(12)]}
    assert batsim_jobs(io_aware)[0].runtime == pytest.approx(100 - 0.037123456)
    with pytest.raises(InputError) as exc:
        batsim_jobs({"jobs": 3}, source="msg")
    assert exc.value.source == "msg"
    with pytest.raises(InputError) as exc:
        batsim_jobs({"jobs": 3})
    assert exc.value.source == "<json>"


def test_find_workload_looks_in_bbopt_data(tmp_path, monkeypatch):
    from bbopt.loading import find_workload

    monkeypatch.chdir(tmp_path)
    data = tmp_path / "data"
    data.mkdir()
    _swf(data, "x.swf")
    monkeypatch.setenv("BBOPT_DATA", str(data))
    assert find_workload("x.swf") == data / "x.swf"

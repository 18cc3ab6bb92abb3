"""Batsim JSON workloads: the real Kopanski file, v4/v5 profiles, round trips and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import GB, Job
from bbopt.errors import InputError
from bbopt.loading import load_workload
from bbopt.workloads.batsim import (
    parse_batsim,
    read_batsim,
    read_batsim_jobs,
    to_batsim,
    write_batsim,
)
from bbopt.workloads.swf import read_swf
from tests._workload_data import KTH_BATSIM, KTH_SWF, data_file


def test_kopanski_file_matches_the_swf_records():
    workload = read_batsim(data_file(KTH_BATSIM))
    swf = {j.id: j for j in read_swf(data_file(KTH_SWF)).jobs}
    assert len(workload.jobs) == 1221
    assert workload.nb_res == 96
    offsets = set()
    for job in workload.jobs:
        ref = swf[job.id]
        offsets.add(ref.submit - job.submit)
        assert (job.nodes, job.walltime) == (ref.nodes, ref.walltime)
        assert job.runtime == ref.runtime
        prof = workload.profiles[job.id]
        assert job.runtime == prof["cpu"] / 1e9
        assert job.bb == pytest.approx(prof["bb"] * job.nodes)
    assert len(offsets) == 1  # one constant offset
    ids = {int(j.id) for j in workload.jobs}
    assert min(ids) == 1781 and max(ids) == 3002
    # the records its authors dropped (jobs larger than the 96-node platform)
    assert all(swf[str(i)].nodes > 96 for i in range(1781, 3003) if i not in ids and str(i) in swf)


def test_loading_picks_the_json_reader_and_keeps_its_bb():
    jobs, name = load_workload(data_file(KTH_BATSIM))
    assert len(jobs) == 1221 and all(j.bb > 0 for j in jobs)
    assert name.startswith("KTH-split")


def _doc(profiles, jobs=None, **top):
    jobs = jobs if jobs is not None else [
        {"id": "w0!1", "subtime": 0, "res": 2, "walltime": 100, "profile": "p"}]
    return {"nb_res": 4, "jobs": jobs, "profiles": profiles, **top}


@pytest.mark.parametrize(("profile", "runtime"), [
    ({"type": "delay", "delay": 42.5}, 42.5),
    ({"type": "parallel_homogeneous", "cpu": 3e10, "com": 1e6}, 30.0),
    ({"type": "ptask_homogeneous", "cpu": 3e10, "com": 0}, 30.0),
    ({"type": "parallel_homogeneous_total", "cpu": 4e10, "com": 0}, 20.0),
    ({"type": "ptask_homogeneous", "cpu": 4e10, "com": 0,
      "generation_strategy": "defined_amount_spread_uniformly"}, 20.0),
    ({"type": "parallel", "cpu": [1e10, 5e10], "com": [0, 0, 0, 0]}, 50.0),
    ({"type": "ptask", "cpu": [1e10, 5e10], "com": [0, 0, 0, 0]}, 50.0),
])
def test_v4_and_v5_profile_types(profile, runtime):
    (job,) = parse_batsim(_doc({"p": profile})).jobs
    assert job.runtime == pytest.approx(runtime)
    assert job.id == "w0!1" and job.nodes == 2


@pytest.mark.parametrize("kind", ["composed", "sequential_composition"])
def test_composed_profiles_sum_their_members(kind):
    profiles = {"a": {"type": "delay", "delay": 10}, "b": {"type": "delay", "delay": 5},
                "p": {"type": kind, "repeat": 3, "seq": ["a", "b"]}}
    (job,) = parse_batsim(_doc(profiles)).jobs
    assert job.runtime == 45


def test_missing_walltime_defaults_to_runtime():
    jobs = [{"id": 1, "subtime": 5, "res": 1, "profile": "p"},
            {"id": 2, "subtime": 5, "res": 1, "profile": "p", "walltime": -1}]
    out = parse_batsim(_doc({"p": {"type": "delay", "delay": 7}}, jobs)).jobs
    assert [j.walltime for j in out] == [7, 7]
    assert [j.id for j in out] == ["1", "2"]
    with pytest.raises(InputError, match="walltime"):
        parse_batsim(_doc({"p": {"type": "delay", "delay": 7}}, jobs), missing_walltime="error")


@pytest.mark.parametrize(("doc", "where", "fld"), [
    (_doc({"p": {"type": "delay", "delay": 1}}, jobs=[]), "jobs", "jobs"),
    ({"nb_res": 4, "profiles": {}}, "$", "jobs"),
    (_doc({"p": {"type": "delay", "delay": 1}}, jobs=[
        {"id": 1, "subtime": 0, "res": 1, "profile": "p"},
        {"id": "1", "subtime": 0, "res": 1, "profile": "p"}]), "jobs[1].id", "id"),
    (_doc({"p": {"type": "delay", "delay": 1}}, jobs=[
        {"id": 1, "subtime": 0, "res": -2, "profile": "p"}]), "jobs[0].res", "res"),
    (_doc({"p": {"type": "delay", "delay": 1}}, jobs=[
        {"id": 1, "subtime": -5, "res": 1, "profile": "p"}]), "jobs[0].subtime", "subtime"),
    (_doc({"p": {"type": "delay", "delay": 1}}, jobs=[
        {"id": 1, "subtime": 0, "res": 1, "profile": "nope"}]), "jobs[0].profile", "profile"),
    (_doc({"p": {"type": "composed", "seq": ["ghost"]}}), "profiles.p.seq[0]", "seq"),
    (_doc({"p": {"type": "delay", "delay": -3}}), "profiles.p.delay", "delay"),
    (_doc({"p": {"type": "delay", "delay": 1, "bb": -1}}), "profiles.p.bb", "bb"),
    (_doc({"p": {"type": "parallel_homogeneous_pfs", "bytes_to_read": 1}}), "profiles.p",
     "type"),
    (_doc({"p": {"type": "wat"}}), "profiles.p", "type"),
    (_doc({"p": {"type": "delay", "delay": 1}}, nb_res=0), "nb_res", "nb_res"),
])
def test_bad_input_names_path_and_field(doc, where, fld):
    with pytest.raises(InputError) as info:
        parse_batsim(doc, source="w.json")
    msg = str(info.value)
    assert msg.startswith("w.json, ") and where in msg and f"field {fld!r}" in msg
    assert info.value.field == fld


def test_unsupported_profile_error_says_what_is_supported():
    with pytest.raises(InputError, match="does not simulate; supported: delay"):
        parse_batsim(_doc({"p": {"type": "ptask_data_staging_between_storages",
                                 "nb_bytes": 1, "from": "a", "to": "b"}}))


def test_invalid_json_reports_the_line(tmp_path: Path):
    path = tmp_path / "bad.json"
    path.write_text('{"nb_res": 4,\n "jobs": [\n  {"id": 1,,}\n ]}\n')
    with pytest.raises(InputError, match=r"bad.json, line 3: invalid JSON"):
        read_batsim_jobs(path)


def test_cli_prints_bad_input_without_traceback(tmp_path: Path, capsys):
    from bbopt.cli import main

    path = tmp_path / "w.json"
    path.write_text(json.dumps(_doc({"p": {"type": "delay", "delay": 1}}, jobs=[
        {"id": 1, "subtime": 0, "res": 1, "profile": "missing"}])))
    assert main(["simulate", "--workload", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "jobs[0].profile" in err and "Traceback" not in err


def _job_strategy():
    return st.builds(
        Job,
        id=st.text("abc0123456789!", min_size=1, max_size=6),
        submit=st.floats(0, 1e7, allow_nan=False),
        walltime=st.floats(1, 1e6, allow_nan=False),
        runtime=st.one_of(st.none(), st.floats(0, 1e6, allow_nan=False)),
        nodes=st.integers(1, 512),
        bb=st.one_of(st.just(0.0), st.floats(0, 1e14, allow_nan=False)),
        ssd=st.sampled_from([0.0, 128 * GB]),
        bandwidth=st.sampled_from([0.0, 18e6]),
        user=st.one_of(st.none(), st.sampled_from(["1", "alice"])),
        priority=st.sampled_from([0.0, 2.5]),
        preemptable=st.booleans(),
        checkpointable=st.booleans(),
        extra=st.sampled_from([{}, {"phases": {"compute_phases": 3, "stage_in_bytes": 1e9}}]),
    )


FIELDS = ("id", "submit", "walltime", "runtime", "nodes", "bb", "ssd", "bandwidth", "user",
          "priority", "preemptable", "checkpointable")


@settings(max_examples=60, deadline=None)
@given(st.lists(_job_strategy(), min_size=1, max_size=8, unique_by=lambda j: j.id))
def test_round_trip_preserves_every_field(jobs):
    back = parse_batsim(json.loads(json.dumps(to_batsim(jobs)))).jobs
    for a, b in zip(jobs, back, strict=True):
        assert [getattr(a, f) for f in FIELDS] == [getattr(b, f) for f in FIELDS]
        assert {k: v for k, v in b.extra.items() if k != "batsim"} == dict(a.extra)


def test_swf_to_batsim_to_jobs_round_trip(tmp_path: Path):
    swf = read_swf(data_file(KTH_SWF)).jobs[:500]
    for kind in ("delay", "parallel_homogeneous"):
        path = write_batsim(swf, tmp_path / f"{kind}.json", profile_type=kind, nb_res=100)
        back = read_batsim_jobs(path)
        assert [(j.id, j.submit, j.walltime, j.nodes, j.user) for j in back] == \
            [(j.id, j.submit, j.walltime, j.nodes, j.user) for j in swf]
        assert [j.runtime for j in back] == pytest.approx([j.runtime for j in swf], rel=1e-12)
    doc = json.loads((tmp_path / "parallel_homogeneous.json").read_text())
    assert doc["profiles"][swf[0].id]["type"] == "parallel_homogeneous"
    v5 = to_batsim(swf[:3], profile_type="parallel_homogeneous", version=5)
    assert {p["type"] for p in v5["profiles"].values()} == {"ptask_homogeneous"}

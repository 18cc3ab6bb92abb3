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


def _bb_part(seconds: list[float], ptype: str = "parallel_homogeneous") -> dict:
    """One job per compute time, each on a profile of 1 GB of BB per node."""
    profiles = {f"p{i}": {"type": ptype, "cpu": s * 1e9, "com": 0, "bb": 1e9}
                for i, s in enumerate(seconds)}
    jobs = [{"id": i, "subtime": 0, "res": 1, "walltime": 1e6, "profile": f"p{i}"}
            for i in range(len(seconds))]
    return _doc(profiles, jobs)


@pytest.mark.parametrize("seconds, io_aware", [
    ([100.5] * 3 + [100] * 7, True),        # 30 % of 10 BB profiles fractional
    ([100.5] * 2 + [100] * 8, False),       # 20 %: not more than the share
    ([100.5] * 9, False),                   # every one, but only 9 profiles
    ([100.5] * 10, True),
    ([0.5] * 10, True),                     # under 1 s: half a second is a fraction
    ([1 + 2e-6] * 10, True),                # 2 us over a whole second
    ([1 + 5e-7] * 10, False),               # within the 1e-6 s of rounding
    ([2e6 + 0.5] * 10, False),              # within 1e-6 relative of 2e6 s
])
def test_an_io_aware_part_is_over_a_fifth_of_at_least_ten_bb_profiles(seconds, io_aware):
    doc = _bb_part(seconds)
    if io_aware:
        with pytest.raises(InputError, match=f"of its {len(seconds)} burst-buffer profiles"):
            parse_batsim(doc)
        jobs = parse_batsim(doc, io_aware="plain").jobs
        # flagged, and still naming their profiles
        assert [j.extra["batsim"] for j in jobs] == [
            {"profile": f"p{i}", "io_aware": True} for i in range(len(seconds))]
    else:
        jobs = parse_batsim(doc).jobs
        assert not any("io_aware" in j.extra["batsim"] for j in jobs)
    assert [j.runtime for j in jobs] == pytest.approx(seconds, rel=1e-15)


def test_only_homogeneous_bb_profiles_with_a_numeric_amount_count_as_io_aware():
    doc = _bb_part([100.5] * 10, ptype="ptask_homogeneous")  # (Batsim 5's name)
    with pytest.raises(InputError, match="of its 10 burst-buffer profiles"):
        parse_batsim(doc)
    delays = _doc({f"p{i}": {"type": "delay", "delay": 100.5, "bb": 1e9} for i in range(10)},
                  [{"id": i, "subtime": 0, "res": 1, "profile": f"p{i}"} for i in range(10)])
    assert len(parse_batsim(delays).jobs) == 10
    no_bb = _bb_part([100.5] * 10)
    for prof in no_bb["profiles"].values():
        del prof["bb"]
    assert len(parse_batsim(no_bb).jobs) == 10


def test_profiles_that_do_not_count_do_not_stop_the_count_of_those_that_do():
    # before the ten fractional BB profiles: one without BB, a BB delay, and an unused
    # homogeneous BB profile whose amount is no number (checked only if a job used it)
    doc = _bb_part([100.5] * 10)
    doc["profiles"] = {"none": {"type": "delay", "delay": 1},
                       "delay": {"type": "delay", "delay": 1.5, "bb": 1e9},
                       "text": {"type": "parallel_homogeneous", "cpu": "x", "bb": 1e9},
                       "flag": {"type": "parallel_homogeneous", "cpu": True, "bb": 1e9},
                       **doc["profiles"]}
    with pytest.raises(InputError, match="100% of its 10 burst-buffer profiles"):
        parse_batsim(doc)


@pytest.mark.parametrize("cpu, fractional", [
    (1000, False),  # 1 us: exactly the 1e-6 s tolerance, a whole second
    (1001, True),  # just over it
    (1e9 + 1500, True),  # 1.5 us over one second: over 1e-6 s, under 2e-6 s
])
def test_the_tolerance_of_a_whole_second_is_one_microsecond_up_to_a_second(cpu, fractional):
    doc = _bb_part([cpu / 1e9] * 10)
    if fractional:
        with pytest.raises(InputError, match="burst-buffer profiles"):
            parse_batsim(doc)
    else:
        assert len(parse_batsim(doc).jobs) == 10


@pytest.mark.parametrize("walltime, runtime, want", [
    (None, 7.0, 7.0), (-1, 7.0, 7.0), (-1, 0.5, 1.0), (0.5, 7.0, 0.5), (3600, 7.0, 3600.0)])
def test_a_walltime_of_minus_one_is_the_runtime_at_least_one_second(walltime, runtime, want):
    job = {"id": 1, "subtime": 0, "res": 1, "profile": "p"}
    if walltime is not None:
        job["walltime"] = walltime
    doc = _doc({"p": {"type": "delay", "delay": runtime}}, [job])
    (out,) = parse_batsim(doc).jobs
    assert out.walltime == want and out.runtime == runtime
    if walltime in (None, -1):
        assert parse_batsim(doc, missing_walltime=30).jobs[0].walltime == 30.0
        with pytest.raises(InputError) as info:
            parse_batsim(doc, missing_walltime="error")
        assert info.value.field == "walltime" and info.value.line == "jobs[0]"


@pytest.mark.parametrize("walltime", [0, -2])
def test_a_walltime_of_zero_or_below_is_refused(walltime):
    doc = _doc({"p": {"type": "delay", "delay": 1}},
               [{"id": 1, "subtime": 0, "res": 1, "profile": "p", "walltime": walltime}])
    with pytest.raises(InputError) as info:
        parse_batsim(doc, source="w.json")
    assert str(info.value) == (f"w.json, jobs[0].walltime, field 'walltime': must be > 0 "
                               f"(or -1 for none), got {walltime}")


@pytest.mark.parametrize("subtime, ok", [(0, True), (0.001, True), (-0.001, False)])
def test_a_submission_time_is_from_zero(subtime, ok):
    doc = _doc({"p": {"type": "delay", "delay": 1}},
               [{"id": 1, "subtime": subtime, "res": 1, "profile": "p", "walltime": 5}])
    if ok:
        assert parse_batsim(doc).jobs[0].submit == subtime
    else:
        with pytest.raises(InputError, match=r"must be >= 0, got -0.001"):
            parse_batsim(doc)


@pytest.mark.parametrize("repeat, ok", [(1, True), (2, True), (0, False), (True, False),
                                        (2.0, False)])
def test_a_composed_profile_repeats_a_positive_integer_number_of_times(repeat, ok):
    profiles = {"a": {"type": "delay", "delay": 10},
                "p": {"type": "composed", "repeat": repeat, "seq": ["a", "a"]}}
    if ok:
        assert parse_batsim(_doc(profiles)).jobs[0].runtime == 20 * repeat
    else:
        with pytest.raises(InputError) as info:
            parse_batsim(_doc(profiles))
        assert info.value.field == "repeat" and info.value.line == "profiles.p.repeat"
        assert f"must be a positive integer, got {repeat!r}" in str(info.value)


@pytest.mark.parametrize("profile, message", [
    ({"type": "parallel", "cpu": []}, "must be a non-empty list of flop amounts"),
    ({"type": "parallel", "cpu": [1e9, -1]}, "amounts must be >= 0"),
    ({"type": "composed", "seq": []}, "must be a non-empty list of profile names"),
    ({"type": "composed", "seq": ["p"]}, "profile 'p' contains itself"),
    ({"type": "parallel_homogeneous"}, "is missing"),
])
def test_bad_profiles_are_refused_naming_what_is_wrong(profile, message):
    with pytest.raises(InputError, match=message) as info:
        parse_batsim(_doc({"p": profile}))
    assert info.value.line.startswith("profiles.p")


def test_a_parallel_profile_lasts_its_largest_amount_and_zero_is_allowed():
    (job,) = parse_batsim(_doc({"p": {"type": "parallel", "cpu": [0, 3e9, 2e9]}})).jobs
    assert job.runtime == 3.0


@pytest.mark.parametrize("speed, runtime", [(1e9, 30.0), (2e9, 15.0), (0.5e9, 60.0)])
def test_compute_amounts_are_seconds_at_the_nodes_speed(speed, runtime):
    profiles = {"p": {"type": "parallel_homogeneous", "cpu": 3e10},
                "t": {"type": "parallel_homogeneous_total", "cpu": 6e10}}
    jobs = [{"id": 1, "subtime": 0, "res": 2, "walltime": 100, "profile": "p"},
            {"id": 2, "subtime": 0, "res": 2, "walltime": 100, "profile": "t"}]
    assert [j.runtime for j in parse_batsim(_doc(profiles, jobs), speed=speed).jobs] == [
        runtime, runtime]


@pytest.mark.parametrize("option, message", [
    ({"speed": 0.0}, "speed must be a positive number of flop/s, got 0.0"),
    ({"speed": float("inf")}, "speed must be a positive number of flop/s, got inf"),
    ({"io_aware": "maybe"}, "io_aware must be 'refuse', 'phased' or 'plain', got 'maybe'"),
    ({"missing_walltime": "runtime!"}, "missing_walltime must be 'runtime', 'error' or a "),
])
def test_bad_reader_options_are_refused_with_their_name(option, message):
    with pytest.raises(InputError) as info:
        parse_batsim(_doc({"p": {"type": "delay", "delay": 1}}), **option)
    assert info.value.reason.startswith(message)


def test_bb_per_node_times_nodes_and_the_rest_of_the_document_kept():
    doc = _doc({"p": {"type": "delay", "delay": 1, "bb": 2e9}, "q": {"type": "delay", "delay": 1}},
               [{"id": 1, "subtime": 0, "res": 3, "profile": "p", "walltime": 5,
                 "extra_data": {"queue": "x", "bbopt": {"user": 7, "priority": 2}}},
                {"id": "b", "subtime": 0, "res": 1, "profile": "q", "walltime": 5}],
               name="w", description="two jobs")
    w = parse_batsim(doc)
    assert [j.bb for j in w.jobs] == [6e9, 0.0] and w.nb_res == 4
    assert w.meta == {"name": "w", "description": "two jobs"}
    assert w.jobs[0].extra["batsim"] == {"profile": "p", "extra_data": {"queue": "x"}}
    assert w.jobs[1].extra["batsim"] == {"profile": "q"}
    assert (w.jobs[0].user, w.jobs[0].priority, w.jobs[1].user) == ("7", 2.0, None)
    assert parse_batsim({k: v for k, v in doc.items() if k != "nb_res"}).nb_res is None


@pytest.mark.parametrize("job_id", [True, "", 1.5, None])
def test_a_job_id_is_a_nonempty_string_or_an_integer(job_id):
    doc = _doc({"p": {"type": "delay", "delay": 1}},
               [{"id": job_id, "subtime": 0, "res": 1, "profile": "p"}])
    with pytest.raises(InputError) as info:
        parse_batsim(doc)
    assert info.value.field == "id" and info.value.line == "jobs[0].id"


def test_the_writer_sizes_the_machine_by_its_largest_job_and_names_v5_types():
    jobs = [Job(id="a", submit=0, walltime=10, runtime=5, nodes=3, bb=3e9),
            Job(id="b", submit=1, walltime=10, runtime=None, nodes=5)]
    doc = to_batsim(jobs)
    assert doc["nb_res"] == 5 and to_batsim(jobs, nb_res=8)["nb_res"] == 8
    assert doc["profiles"]["a"] == {"type": "delay", "delay": 5, "bb": 1e9}
    assert doc["profiles"]["b"] == {"type": "delay", "delay": 10}
    assert doc["jobs"][1]["extra_data"] == {"bbopt": {"runtime_unknown": True}}
    v5 = to_batsim(jobs, profile_type="parallel_homogeneous", version=5, speed=2e9)
    assert v5["profiles"]["a"] == {"type": "ptask_homogeneous", "cpu": 1e10, "com": 0,
                                   "bb": 1e9}


def test_the_file_reader_passes_its_options_to_the_document_reader(tmp_path: Path):
    # a UTF-8 file with a byte-order mark (as some editors write it) reads like one without
    path = tmp_path / "w.json"
    doc = _bb_part([100.5] * 10)
    doc["jobs"].append({"id": "x", "subtime": 3, "res": 2, "profile": "d"})
    doc["profiles"]["d"] = {"type": "parallel_homogeneous", "cpu": 4e10, "bb": 1e9}
    path.write_text("\ufeff" + json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_batsim(path)
    assert info.value.field == "io_aware" and info.value.source == str(path)
    w = read_batsim(path, speed=2e9, missing_walltime=30, io_aware="phased",
                    checkpoint_factor=0.5)
    assert w.path == str(path) and w.nb_res == 4 and len(w.jobs) == 11
    x = w.jobs[-1]
    assert (x.runtime, x.walltime, x.bb) == (20.0, 30.0, 2e9)
    assert x.extra["batsim"]["io_aware"] is True
    assert x.extra["phases"]["checkpoint_bytes"] == 1e9  # half of the job's 2 GB
    assert read_batsim_jobs(path, io_aware="plain", missing_walltime="runtime")[-1].walltime \
        == 40.0
    # each checkpoint writes the job's whole BB request unless told otherwise (the paper's text)
    assert read_batsim(path, io_aware="phased").jobs[-1].extra["phases"]["checkpoint_bytes"] \
        == 2e9


@pytest.mark.parametrize("content, message, line", [
    (b"\xff\xfe{}", "cannot read: ", None),  # not UTF-8
    (b'{"jobs": [], "jobs": []}', "key 'jobs' appears twice", "$"),
    (b"[" * 100_000 + b"]" * 100_000, "invalid JSON: ", None),  # nested too deep
    (b'{"nb_res": 4,\n  "jobs": [1,]}', "invalid JSON: Expecting value (column 14)", 2),
])
def test_an_unreadable_file_is_refused_naming_it(tmp_path: Path, content, message, line):
    path = tmp_path / "w.json"
    path.write_bytes(content)
    with pytest.raises(InputError) as info:
        read_batsim(path)
    assert info.value.reason.startswith(message) and info.value.source == str(path)
    assert info.value.line == line


def test_a_directory_is_not_a_workload(tmp_path: Path):
    with pytest.raises(InputError, match="cannot read: ") as info:
        read_batsim(tmp_path)
    assert info.value.source == str(tmp_path)


def test_the_writer_puts_one_job_and_one_profile_per_line(tmp_path: Path):
    jobs = [Job(id="a", submit=0, walltime=10, runtime=5, nodes=2, bb=4e9, user="u"),
            Job(id="b", submit=1.5, walltime=20, runtime=None, nodes=1)]
    path = write_batsim(jobs, tmp_path / "w.json", name="two", description="d")
    assert path == tmp_path / "w.json"
    assert path.read_text(encoding="utf-8").split("\n") == [
        "{",
        ' "name": "two",',
        ' "description": "d",',
        ' "nb_res": 2,',
        ' "jobs": [',
        '  {"id": "a", "subtime": 0, "res": 2, "walltime": 10, "profile": "a", '
        '"extra_data": {"bbopt": {"user": "u"}}},',
        '  {"id": "b", "subtime": 1.5, "res": 1, "walltime": 20, "profile": "b", '
        '"extra_data": {"bbopt": {"runtime_unknown": true}}}',
        " ],",
        ' "profiles": {',
        '  "a": {"type": "delay", "delay": 5, "bb": 2000000000.0},',
        '  "b": {"type": "delay", "delay": 20}',
        " }",
        "}",
        "",
    ]
    assert [j.id for j in read_batsim_jobs(path)] == ["a", "b"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {1, 2}])
def test_what_json_cannot_hold_is_refused_naming_the_file(tmp_path: Path, value):
    jobs = [Job(id="a", submit=0, walltime=10, runtime=5, nodes=1, extra={"x": value})]
    with pytest.raises(InputError, match="cannot be written as JSON: ") as info:
        write_batsim(jobs, tmp_path / "w.json")
    assert info.value.source == str(tmp_path / "w.json") and info.value.field == "extra"
    assert not (tmp_path / "w.json").exists()


def test_a_speed_that_makes_amounts_infinite_writes_no_file(tmp_path: Path):
    # Batsim's JSON has no infinity: a flop amount of runtime x inf is refused, not written
    jobs = [Job(id="a", submit=0, walltime=10, runtime=5, nodes=1)]
    with pytest.raises(InputError, match="cannot be written as JSON"):
        write_batsim(jobs, tmp_path / "w.json", profile_type="parallel_homogeneous",
                     speed=float("inf"))
    assert not (tmp_path / "w.json").exists()


@pytest.mark.parametrize("option, message", [
    ({"profile_type": "parallel"},
     "profile_type must be 'delay' or 'parallel_homogeneous', got 'parallel'"),
    ({"version": 3}, "version must be 4 or 5, got 3"),
])
def test_bad_writer_options_are_refused_with_their_name(option, message):
    job = Job(id="a", submit=0, walltime=10, runtime=5, nodes=1)
    with pytest.raises(InputError) as info:
        to_batsim([job], **option)
    assert info.value.reason == message
    with pytest.raises(InputError) as info:
        to_batsim([])
    assert info.value.reason == "empty workload: no jobs to write"


def test_the_writer_keeps_what_batsim_has_no_place_for_under_bbopt():
    # 1 GB + 1 B over 47 nodes times 47 is not 1 GB + 1 B in floats: the exact total is kept
    jobs = [Job(id="a", submit=0, walltime=10, runtime=5, nodes=47, bb=1e9 + 1, ssd=1e9,
                bandwidth=2e6, priority=1.5, preemptable=True, checkpointable=True,
                extra={"batsim": {"profile": "p", "extra_data": {"queue": "q"}}, "k": 1}),
            Job(id="b", submit=0, walltime=10, runtime=4, nodes=2, bb=6e9,
                extra={"batsim": "not a mapping"})]
    doc = to_batsim(jobs, profile_type="parallel_homogeneous", speed=2e9)
    a, b = doc["jobs"]
    assert list(doc) == ["nb_res", "jobs", "profiles"] and doc["nb_res"] == 47
    assert a["extra_data"] == {"queue": "q", "bbopt": {
        "bb": 1e9 + 1, "ssd": 1e9, "bandwidth": 2e6, "priority": 1.5, "preemptable": True,
        "checkpointable": True, "extra": {"k": 1}}}
    assert "extra_data" not in b  # 3 GB per node is exact; nothing else differs
    assert doc["profiles"]["a"] == {"type": "parallel_homogeneous", "cpu": 1e10, "com": 0,
                                    "bb": (1e9 + 1) / 47}
    assert doc["profiles"]["b"] == {"type": "parallel_homogeneous", "cpu": 8e9, "com": 0,
                                    "bb": 3e9}
    back = parse_batsim(doc, speed=2e9).jobs
    assert [j.bb for j in back] == [1e9 + 1, 6e9] and back[0].extra["k"] == 1
    assert back[0].extra["batsim"] == {"profile": "a", "extra_data": {"queue": "q"}}


_JOB = {"id": "1", "subtime": 0, "res": 2, "walltime": 100, "profile": "p"}


@pytest.mark.parametrize("profile, message", [
    ([1], "profiles.p: a profile must be an object"),
    ({"delay": 1}, "profiles.p, field 'type': is missing or not a string"),
    ({"type": 5}, "profiles.p, field 'type': is missing or not a string"),
    ({"type": "wat"}, "profiles.p, field 'type': unknown profile type 'wat'; supported: delay, "
     "parallel_homogeneous, parallel_homogeneous_total, parallel, composed (and their v5 names)"),
    ({"type": "send"}, "profiles.p, field 'type': profile type 'send' needs an I/O, network or "
     "trace model that bbopt does not simulate; supported: delay, parallel_homogeneous, "
     "parallel_homogeneous_total, parallel, composed (and their v5 names)"),
    ({"type": "delay", "delay": 1, "bb": "x"},
     "profiles.p.bb, field 'bb': must be a number, got 'x'"),
    ({"type": "delay", "delay": 1, "bb": -1}, "profiles.p.bb, field 'bb': must be >= 0 bytes, "
     "got -1"),
    ({"type": "delay", "delay": 1, "bb": 1e400}, "profiles.p.bb, field 'bb': must be finite, "
     "got inf"),
    ({"type": "delay"}, "profiles.p, field 'delay': is missing"),
    ({"type": "delay", "delay": "x"}, "profiles.p.delay, field 'delay': must be a number, got 'x'"),
    ({"type": "delay", "delay": 10 ** 400},
     "profiles.p.delay, field 'delay': must be finite, got an integer of 401 digits"),
    ({"type": "delay", "delay": -3}, "profiles.p.delay, field 'delay': must be >= 0, got -3"),
    ({"type": "parallel_homogeneous", "cpu": True},
     "profiles.p.cpu, field 'cpu': must be a number, got True"),
    ({"type": "parallel", "cpu": 5},
     "profiles.p.cpu, field 'cpu': must be a non-empty list of flop amounts"),
    ({"type": "parallel", "cpu": [1, "x"]}, "profiles.p.cpu, field 'cpu': must be a number, "
     "got 'x'"),
    ({"type": "parallel", "cpu": [1, -1]}, "profiles.p.cpu, field 'cpu': amounts must be >= 0"),
    ({"type": "composed", "seq": "a"},
     "profiles.p.seq, field 'seq': must be a non-empty list of profile names"),
    ({"type": "composed", "seq": ["a", 3]},
     "profiles.p.seq[1], field 'seq': references profile 3, which is not in 'profiles'"),
    ({"type": "composed", "seq": ["a", "p"]},
     "profiles.p.seq[1], field 'seq': profile 'p' contains itself"),
    ({"type": "composed", "seq": ["a", "q"]},  # p -> q -> p
     "profiles.q.seq[0], field 'seq': profile 'p' contains itself"),
])
def test_a_bad_profile_is_named_by_its_path_and_field_with_what_is_wrong(profile, message):
    profiles = {"p": profile, "a": {"type": "delay", "delay": 1},
                "q": {"type": "composed", "seq": ["p"]}}
    with pytest.raises(InputError) as info:
        parse_batsim(_doc(profiles, [dict(_JOB)]), source="w.json")
    assert str(info.value) == "w.json, " + message


@pytest.mark.parametrize("doc, message", [
    ([1], "$: the workload must be a JSON object with 'jobs' and 'profiles'"),
    ({"jobs": 3, "profiles": {}}, "jobs, field 'jobs': must be a list of jobs"),
    ({"jobs": [], "profiles": {}}, "jobs, field 'jobs': empty workload: no jobs"),
    ({"nb_res": 4}, "$, field 'jobs': is missing"),
    ({"jobs": [_JOB], "profiles": []},
     "profiles, field 'profiles': must be an object mapping profile names to profiles"),
    ({"nb_res": "x", "jobs": [_JOB], "profiles": {}},
     "nb_res, field 'nb_res': must be an integer, got 'x'"),
    (_doc({}, [5]), "jobs[0]: a job must be an object"),
    (_doc({}, [{"id": "1", "res": 2, "profile": "p"}]), "jobs[0], field 'subtime': is missing"),
    (_doc({}, [{**_JOB, "id": "a"}, {**_JOB, "id": "a"}]),
     "jobs[1].id, field 'id': duplicate job id 'a'"),
    (_doc({}, [{**_JOB, "id": 1.5}]), "jobs[0].id, field 'id': must be a string or an integer, "
     "got 1.5"),
    (_doc({}, [{**_JOB, "res": True}]), "jobs[0].res, field 'res': must be an integer, got True"),
    (_doc({}, [{**_JOB, "profile": 3}]),
     "jobs[0].profile, field 'profile': must be a profile name (string), got 3"),
    (_doc({}, [{**_JOB, "profile": "nope"}]),
     "jobs[0].profile, field 'profile': references profile 'nope', which is not in 'profiles'"),
    (_doc({}, [{**_JOB, "walltime": "x"}]),
     "jobs[0].walltime, field 'walltime': must be a number, got 'x'"),
    (_doc({}, [{**_JOB, "subtime": "0"}]),
     "jobs[0].subtime, field 'subtime': must be a number, got '0'"),
    (_doc({}, [{**_JOB, "subtime": float("nan")}]),
     "jobs[0].subtime, field 'subtime': must be finite, got nan"),
    (_doc({}, [{**_JOB, "subtime": -1}]), "jobs[0].subtime, field 'subtime': must be >= 0, "
     "got -1"),
    (_doc({}, [{**_JOB, "extra_data": {"bbopt": 3}}]),
     "jobs[0].extra_data.bbopt, field 'bbopt': must be an object"),
    (_doc({}, [{**_JOB, "extra_data": {"bbopt": {"ssd": -1}}}]),
     "jobs[0], field 'ssd': job 1: ssd must be in [0, 1e+21], got -1.0"),
    (_doc({}, [{**_JOB, "walltime": -1}]), None),  # the runtime, 7 s
])
def test_a_bad_document_or_job_is_named_by_its_path_and_field(doc, message):
    if isinstance(doc, dict) and doc.get("profiles") == {}:
        doc = {**doc, "profiles": {"p": {"type": "delay", "delay": 7}}}
    if message is None:
        assert parse_batsim(doc, missing_walltime="runtime").jobs[0].walltime == 7.0
        return
    with pytest.raises(InputError) as info:
        parse_batsim(doc, source="w.json")
    assert str(info.value) == "w.json, " + message


def test_bbopts_fields_and_other_extra_data_read_back():
    doc = _doc({"p": {"type": "delay", "delay": 7}}, [
        {**_JOB, "extra_data": [1]},  # not an object: kept as Batsim's
        {**_JOB, "id": "2", "extra_data": {"bbopt": None}},  # nothing of bbopt's
        {**_JOB, "id": "3", "extra_data": {"bbopt": {
            "ssd": 1e9, "bandwidth": 2e6, "priority": 3, "preemptable": 1, "checkpointable": 1,
            "user": 12, "bb": 5.0, "runtime_unknown": True, "extra": {"k": [1]}}}}])
    a, b, c = parse_batsim(doc).jobs
    assert a.extra == {"batsim": {"profile": "p", "extra_data": [1]}}
    assert b.extra == {"batsim": {"profile": "p"}} and b.runtime == 7.0
    assert (c.ssd, c.bandwidth, c.priority, c.preemptable, c.checkpointable, c.user, c.bb,
            c.runtime) == (1e9, 2e6, 3.0, True, True, "12", 5.0, None)
    assert c.extra == {"k": [1], "batsim": {"profile": "p"}} and c.walltime == 100.0


@pytest.mark.parametrize("profile", [{"type": "delay", "delay": 0},
                                     {"type": "parallel_homogeneous", "cpu": 0},
                                     {"type": "parallel_homogeneous_total", "cpu": 0}])
def test_an_amount_of_zero_is_a_job_of_no_time(profile):
    (job,) = parse_batsim(_doc({"p": profile}, [{**_JOB, "walltime": -1}])).jobs
    assert (job.runtime, job.walltime) == (0.0, 1.0)  # the walltime: at least one second


def test_the_document_readers_defaults_and_option_bounds():
    from bbopt.limits import MAX_NODES

    with pytest.raises(InputError) as info:  # no source given: the document is named <json>
        parse_batsim([])
    assert str(info.value).startswith("<json>, $: ")
    with pytest.raises(InputError) as info:
        parse_batsim(_doc({"p": {"type": "delay", "delay": 1}}), io_aware="yes")
    assert info.value.field == "io_aware"
    # a speed is any positive number of flop/s, below one included
    one = _doc({"p": {"type": "parallel_homogeneous", "cpu": 3}})
    assert parse_batsim(one, speed=0.5).jobs[0].runtime == 6.0
    # the machine's size at the node limit and one over
    assert parse_batsim({**one, "nb_res": MAX_NODES}).nb_res == MAX_NODES
    with pytest.raises(InputError) as info:
        parse_batsim({**one, "nb_res": MAX_NODES + 1})
    assert info.value.field == "nb_res" and info.value.line == "nb_res"
    # no profiles at all: the job names the profile it lacks
    with pytest.raises(InputError) as info:
        parse_batsim({k: v for k, v in one.items() if k != "profiles"})
    assert info.value.line == "jobs[0].profile"
    # a phased part's checkpoints write the whole BB request unless told otherwise
    part = _bb_part([100.5] * 10)
    assert parse_batsim(part, io_aware="phased").jobs[0].extra["phases"][
        "checkpoint_bytes"] == 1e9


def test_a_composed_profile_runs_once_by_default_and_spreads_totals_over_the_jobs_nodes():
    profiles = {"a": {"type": "delay", "delay": 10},
                "t": {"type": "parallel_homogeneous_total", "cpu": 8e9},  # 4 s on 2 nodes
                "p": {"type": "composed", "seq": ["a", "t"]}}
    (job,) = parse_batsim(_doc(profiles)).jobs  # the job holds 2 nodes
    assert job.runtime == 14.0


def test_a_missing_walltime_refused_on_demand_says_so():
    doc = _doc({"p": {"type": "delay", "delay": 1}}, [{**_JOB, "walltime": -1}])
    with pytest.raises(InputError) as info:
        parse_batsim(doc, source="w.json", missing_walltime="error")
    assert str(info.value) == "w.json, jobs[0], field 'walltime': is missing"


def test_a_bbopt_field_that_is_no_number_names_the_job_and_the_value():
    doc = _doc({"p": {"type": "delay", "delay": 1}},
               [{**_JOB, "extra_data": {"bbopt": {"ssd": "x"}}}])
    with pytest.raises(InputError) as info:
        parse_batsim(doc, source="w.json")
    assert str(info.value) == "w.json, jobs[0]: could not convert string to float: 'x'"

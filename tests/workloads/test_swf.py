"""SWF reader: the real KTH log, the documented choices, and errors naming file, line, field."""

import gzip

import pytest

from bbopt import InputError
from bbopt.core import GB
from bbopt.workloads.swf import read_swf

LINE = "{id} {submit} -1 {run} {alloc} -1 -1 {req} {wall} -1 1 3 1 -1 -1 -1 -1 -1\n"


def write(tmp_path, rows, header="; MaxNodes: 8\n", name="t.swf"):
    p = tmp_path / name
    p.write_text(header + "".join(LINE.format(**r) for r in rows))
    return p


def row(**kw):
    base = dict(id=1, submit=0, run=10, alloc=2, req=2, wall=60)
    base.update(kw)
    return base


def test_kth_trace(kth_swf):
    trace = read_swf(kth_swf)
    # 28,476 records: 8 with run time <= 0 and 1 without processors are dropped.
    assert len(trace.jobs) == 28467
    assert trace.skipped == {"nonpositive_runtime": 8, "missing_processors": 1}
    assert trace.max_nodes == 100
    first = trace.jobs[0]
    assert (first.id, first.submit, first.runtime, first.nodes, first.walltime) == (
        "15", 599850.0, 3477.0, 4, 53940.0)
    # Kopanski & Rzadca's 28,453 jobs: the 14 larger than their 96 nodes dropped too.
    assert len(read_swf(kth_swf, max_nodes=96, oversize="drop").jobs) == 28453


def test_choices(tmp_path):
    p = write(tmp_path, [row(id=1, req=-1, alloc=3), row(id=2, run=0), row(id=3, wall=-1),
                         row(id=4, req=9, alloc=9)])
    t = read_swf(p)
    assert [j.id for j in t.jobs] == ["1", "3", "4"]
    assert t.jobs[0].nodes == 3  # requested missing: allocated
    assert t.jobs[1].walltime == 10  # missing walltime: runtime
    assert read_swf(p, missing_walltime=3600).jobs[1].walltime == 3600
    assert [j.id for j in read_swf(p, nonpositive_runtime="keep").jobs] == ["1", "2", "3", "4"]
    assert [j.id for j in read_swf(p, max_nodes=8, oversize="drop").jobs] == ["1", "3"]
    assert read_swf(p, processors="allocated").jobs[0].nodes == 3
    assert read_swf(p, procs_per_node=2).jobs[0].nodes == 2
    assert read_swf(p, rebase=True).jobs[0].submit == 0


def test_requested_and_allocated_processors_are_told_apart(tmp_path):
    # Field 8 (requested) differs from field 5 (allocated) on every row.
    p = write(tmp_path, [row(id=1, req=4, alloc=2), row(id=2, req=1, alloc=8),
                         row(id=3, req=-1, alloc=5), row(id=4, req=6, alloc=-1)])
    assert [j.nodes for j in read_swf(p).jobs] == [4, 1, 5, 6]
    assert [j.nodes for j in read_swf(p, processors="allocated").jobs] == [2, 8, 5, 6]


def test_gzip(tmp_path):
    rows = [row(id=1, submit=0, run=10, alloc=2, req=3, wall=60),
            row(id=2, submit=5, run=70, alloc=4, req=4, wall=120)]
    p = tmp_path / "t.swf.gz"
    with gzip.open(p, "wt") as fh:
        fh.write("; MaxNodes: 8\n" + "".join(LINE.format(**r) for r in rows))
    plain = write(tmp_path, rows)
    jobs = read_swf(p).jobs
    assert [(j.id, j.submit, j.runtime, j.nodes, j.walltime) for j in jobs] == [
        ("1", 0.0, 10.0, 3, 60.0), ("2", 5.0, 70.0, 4, 120.0)]
    assert jobs == read_swf(plain).jobs
    assert read_swf(p).max_nodes == 8


@pytest.mark.parametrize("text, line, field", [
    ("1 0 -1 10 2 -1 -1 2 60 -1 1\n", 1, "user_id"),
    ("1 0 -1 ten 2 -1 -1 2 60 -1 1 3 1 -1 -1 -1 -1 -1\n", 1, "run_time"),
    ("; x\n1 0 -1 10 2 -1 -1 2 60 -1 1 3 1 -1 -1 -1 -1 -1\n"
     "1 5 -1 10 2 -1 -1 2 60 -1 1 3 1 -1 -1 -1 -1 -1\n", 3, "job_number"),
    ("1 -5 -1 10 2 -1 -1 2 60 -1 1 3 1 -1 -1 -1 -1 -1\n", 1, "submit_time"),
])
def test_errors_name_file_line_field(tmp_path, text, line, field):
    p = tmp_path / "bad.swf"
    p.write_text(text)
    with pytest.raises(InputError) as err:
        read_swf(p)
    msg = str(err.value)
    assert "bad.swf" in msg and f"line {line}" in msg and field in msg


def test_strict_modes(tmp_path):
    p = write(tmp_path, [row(run=0)])
    with pytest.raises(InputError, match="run_time"):
        read_swf(p, nonpositive_runtime="error")
    with pytest.raises(InputError, match="no job records"):
        read_swf(p)
    with pytest.raises(InputError, match="no such file"):
        read_swf(tmp_path / "missing.swf")


def test_streamed_in_chunks_reads_the_same(kth_swf, tmp_path, monkeypatch):
    """The reader parses a few records at a time: chunk boundaries change nothing, neither
    the jobs, nor what was skipped (the skipped lines' text read back from the file), nor the
    line an error names."""
    from pathlib import Path

    from bbopt.workloads import swf

    whole = read_swf(kth_swf)
    monkeypatch.setattr(swf, "CHUNK", 997)
    chunked = read_swf(kth_swf)
    assert chunked.jobs == whole.jobs
    assert [j.user for j in chunked.jobs] == [j.user for j in whole.jobs]
    assert chunked.skipped_records == whole.skipped_records
    raw = Path(kth_swf).read_text().splitlines()
    assert len(chunked.skipped_records) == 9
    for n, _, text in chunked.skipped_records:
        assert text == raw[n - 1].strip()
    monkeypatch.setattr(swf, "CHUNK", 3)
    p = write(tmp_path, [row(id=k, submit=k) for k in range(1, 12)])
    text = p.read_text().splitlines()
    text[9] = text[9].rsplit(" ", 1)[0]  # record 9 (line 10) loses its last field
    p.write_text("\n".join(text) + "\n")
    with pytest.raises(InputError) as err:
        read_swf(p)
    assert err.value.line == 10 and "(as on line 2)" in str(err.value)


@pytest.mark.parametrize("chunk", [2, 1000])
def test_duplicate_job_numbers_across_chunks(tmp_path, monkeypatch, chunk):
    """The first record whose id an earlier record has is refused, wherever the chunks end;
    a record without a job number takes its line number as id, and that can collide too."""
    from bbopt.workloads import swf

    monkeypatch.setattr(swf, "CHUNK", chunk)
    rows = [row(id=k, submit=k) for k in (1, 2, 3, 4, 5, 3, 4)]
    with pytest.raises(InputError, match="duplicate job number 3") as err:
        read_swf(write(tmp_path, rows))
    assert err.value.line == 7  # the second 3 (the header is line 1)
    rows = [row(id=k, submit=abs(k)) for k in (1, 2, 3, 4, -1, 6)]  # the -1 on line 6 is job "6"
    with pytest.raises(InputError, match="duplicate job number 6") as err:
        read_swf(write(tmp_path, rows))
    assert err.value.line == 7
    rows = [row(id=k, submit=abs(k)) for k in (1, 2, 3, 4, -1, 7)]
    assert [j.id for j in read_swf(write(tmp_path, rows)).jobs] == ["1", "2", "3", "4", "6", "7"]


@pytest.mark.parametrize("procs,nodes", [(1, 1), (3, 1), (4, 1), (5, 2), (8, 2), (9, 3)])
def test_processors_round_up_to_whole_nodes(tmp_path, procs, nodes):
    p = write(tmp_path, [row(req=procs, alloc=procs)])
    assert read_swf(p, procs_per_node=4).jobs[0].nodes == nodes


@pytest.mark.parametrize("nodes,kept", [(7, True), (8, True), (9, False)])
def test_oversize_jobs_are_those_over_the_platforms_nodes(tmp_path, nodes, kept):
    p = write(tmp_path, [row(id=1, req=1), row(id=2, req=nodes)])
    t = read_swf(p, max_nodes=8, oversize="drop")
    assert [j.id for j in t.jobs] == (["1", "2"] if kept else ["1"])
    assert t.skipped == ({} if kept else {"oversize": 1})
    assert [j.nodes for j in read_swf(p, max_nodes=8).jobs] == [1, nodes]  # kept by default
    if not kept:
        with pytest.raises(InputError, match="line 3, field 'requested_processors': 9 nodes "
                                             "exceed the platform's 8"):
            read_swf(p, max_nodes=8, oversize="error")


def test_a_missing_walltime_is_the_runtime_at_least_one_second_or_the_given_seconds(tmp_path):
    p = write(tmp_path, [row(id=1, run=0.25, wall=-1), row(id=2, run=30, wall=0),
                         row(id=3, run=30, wall=1)])
    assert [j.walltime for j in read_swf(p).jobs] == [1.0, 30.0, 1.0]
    assert [j.walltime for j in read_swf(p, missing_walltime=7.5).jobs] == [7.5, 7.5, 1.0]
    with pytest.raises(InputError, match="line 2, field 'requested_time': requested time is "
                                         "missing"):
        read_swf(p, missing_walltime="error")


def test_rebase_shifts_every_submission_by_the_first(tmp_path):
    p = write(tmp_path, [row(id=1, submit=100), row(id=2, submit=250)])
    assert [j.submit for j in read_swf(p, rebase=True).jobs] == [0.0, 150.0]
    assert [j.submit for j in read_swf(p).jobs] == [100.0, 250.0]


@pytest.mark.parametrize("option,message", [
    ({"on_bad": "drop"}, "on_bad must be 'skip' or 'raise', got 'drop'"),
    ({"processors": "used"}, "processors must be 'requested' or 'allocated', got 'used'"),
    ({"nonpositive_runtime": "zero"}, "nonpositive_runtime must be one of"),
    ({"oversize": "clip"}, "oversize must be one of"),
    ({"missing_processors": "keep"}, "missing_processors must be one of"),
    ({"bb_columns": "x"}, "bb_columns must be one of"),
    ({"missing_walltime": "wall"}, "missing_walltime must be 'runtime', 'error' or a number"),
    ({"procs_per_node": 0}, "procs_per_node must be >= 1"),
    ({"bb_unit": 0.0}, "bb_unit must be a positive number of bytes, got 0.0"),
    ({"bb_unit": float("inf")}, "bb_unit must be a positive number of bytes, got inf"),
])
def test_bad_options_are_refused_with_their_name(tmp_path, option, message):
    p = write(tmp_path, [row()])
    with pytest.raises(InputError, match=f"^{message}"):
        read_swf(p, **option)


def test_on_bad_overrides_the_two_choices_it_stands_for(tmp_path):
    p = write(tmp_path, [row(id=1), row(id=2, run=-1), row(id=3, req=-1, alloc=-1)])
    t = read_swf(p, on_bad="skip", nonpositive_runtime="keep")
    assert [j.id for j in t.jobs] == ["1"]
    assert t.skipped == {"nonpositive_runtime": 1, "missing_processors": 1}
    with pytest.raises(InputError, match="line 3, field 'run_time': run time is -1"):
        read_swf(p, on_bad="raise")
    assert [j.runtime for j in read_swf(p, nonpositive_runtime="keep").jobs] == [10.0, 0.0]


def _record(extra: str = "", **fields) -> str:
    """One SWF record: job 1 submitted at 0, run 10 s on 2 requested processors with 60 s
    requested, every other field -1 (missing), but those given as ``f<number>=value`` (the
    archive's 1-based field numbers); ``extra`` is appended (burst-buffer columns)."""
    values = {1: 1, 2: 0, 4: 10, 8: 2, 9: 60}
    values.update({int(k[1:]): v for k, v in fields.items()})
    return " ".join(str(values.get(i, -1)) for i in range(1, 19)) + extra + "\n"


# the fast path builds trusted jobs; with staging columns every job is built and checked
PATHS = pytest.mark.parametrize("extra", ["", " 0 0 0"], ids=["plain", "staging"])


@PATHS
@pytest.mark.parametrize("kb, procs_per_node, want", [
    (-1, 1, None), (0, 1, None), (0.0005, 1, 0.0005 * 1024), (1, 1, 1024.0), (1, 4, 4096.0),
    (2.5, 2, 5120.0)])
def test_used_memory_is_kilobytes_per_processor_read_as_bytes_per_node(
        tmp_path, extra, kb, procs_per_node, want):
    p = tmp_path / "m.swf"
    p.write_text(_record(extra, f7=kb))
    (job,) = read_swf(p, procs_per_node=procs_per_node).jobs
    assert job.extra.get("memory_per_node") == want
    assert (job.id, job.submit, job.runtime, job.walltime, job.nodes) == (
        "1", 0.0, 10.0, 60.0, -(-2 // procs_per_node))


@PATHS
@pytest.mark.parametrize("kb, groups, want", [
    (1, False, {"memory_per_node": 1024.0}), (1, True, {"memory_per_node": 1024.0, "group": "5"}),
    (0, True, {"group": "5"}), (0, False, {})])
def test_a_group_only_when_asked_beside_a_memory_size(tmp_path, extra, kb, groups, want):
    p = tmp_path / "g.swf"
    p.write_text(_record(extra, f7=kb, f13=5))
    (job,) = read_swf(p, groups=groups).jobs
    assert {k: v for k, v in job.extra.items() if k != "staging"} == want


@PATHS
@pytest.mark.parametrize("number, job_id", [(0, "0"), (1, "1"), (-1, "2")])
def test_a_record_without_a_job_number_is_named_by_its_line(tmp_path, extra, number, job_id):
    p = tmp_path / "n.swf"
    p.write_text("; a header line\n" + _record(extra, f1=number))
    assert [j.id for j in read_swf(p).jobs] == [job_id]


@PATHS
@pytest.mark.parametrize("user, group, want_user, want_group", [
    (-1, -1, None, None), (0, 0, "0", "0"), (7, 12, "7", "12")])
def test_user_and_group_ids_missing_at_minus_one(tmp_path, extra, user, group, want_user,
                                                 want_group):
    p = tmp_path / "u.swf"
    p.write_text(_record(extra, f12=user, f13=group))
    (job,) = read_swf(p, groups=True).jobs
    assert job.user == want_user and job.extra.get("group") == want_group
    (job,) = read_swf(p).jobs
    assert job.user == want_user and "group" not in job.extra  # groups only when asked


@pytest.mark.parametrize("fields, columns", [(18, "none"), (19, "cqsim"), (20, "none"),
                                             (21, "bbsim"), (22, "bbsim")])
def test_burst_buffer_columns_are_told_by_the_record_width(tmp_path, fields, columns):
    p = tmp_path / "w.swf"
    p.write_text(_record(" 4" * (fields - 18)) + _record(" 4" * (fields - 18), f1=2))
    trace = read_swf(p)
    assert trace.bb_columns == columns
    assert [j.bb for j in trace.jobs] == [0.0 if columns == "none" else 4e9] * 2


@pytest.mark.parametrize("status", [0, 1, 5])
def test_the_status_field_does_not_decide_what_is_replayed(tmp_path, status):
    """Failed (0), completed (1) and cancelled (5) jobs that ran are replayed; a job that never
    ran (run time -1) is skipped, whatever its status."""
    p = tmp_path / "s.swf"
    p.write_text(_record(f11=status) + _record(f1=2, f2=5, f4=-1, f11=status))
    trace = read_swf(p)
    assert [j.id for j in trace.jobs] == ["1"] and trace.skipped == {"nonpositive_runtime": 1}
    assert trace.skipped_records == [(2, "runtime <= 0", _record(f1=2, f2=5, f4=-1,
                                                                 f11=status).strip())]


@pytest.mark.parametrize("header, nodes", [
    ("; MaxNodes: 64\n; MaxProcs: 128\n", 64), ("; MaxProcs: 128\n", 128),
    ("; MaxNodes: unknown\n; MaxProcs: 128\n", 128), ("; MaxNodes: 1\n", 1),
    ("; Note: no size\n", None)])
def test_the_machine_size_is_max_nodes_else_max_procs(tmp_path, header, nodes):
    p = tmp_path / "h.swf"
    p.write_text(header + _record())
    assert read_swf(p).max_nodes == nodes


@pytest.mark.parametrize("value", ["0", "-1"])
def test_a_machine_of_no_nodes_is_refused_naming_the_header_field(tmp_path, value):
    p = tmp_path / "h.swf"
    p.write_text(f"; MaxNodes: {value}\n" + _record())
    with pytest.raises(InputError) as info:
        read_swf(p).max_nodes  # noqa: B018
    assert info.value.field == "MaxNodes" and info.value.line == "header"
    assert info.value.source == str(p)


@pytest.mark.parametrize("procs, nodes", [(-1, None), (0, None), (1, 256), (255, 256),
                                          (256, 256), (257, 257)])
def test_bbsimulator_raises_jobs_to_256_processors(tmp_path, procs, nodes):
    p = tmp_path / "b.swf.bb"
    p.write_text(_record(" 0 0 0", f5=procs, f8=procs))
    if nodes is None:
        with pytest.raises(InputError, match="no job records"):
            read_swf(p)
        return
    assert [j.nodes for j in read_swf(p).jobs] == [nodes]
    assert [j.nodes for j in read_swf(p, bbsimulator_min_processors=255).jobs] == [
        max(procs, 255)]


@pytest.mark.parametrize("value, bb", [(-1, 0.0), (0, 0.0), (1, 1e9), (2.5, 2.5e9)])
def test_a_cqsim_request_is_in_units_and_missing_at_minus_one(tmp_path, value, bb):
    p = tmp_path / "c.swf"
    p.write_text("; BurstBuffer: 10\n" + _record(f" {value}"))
    trace = read_swf(p)
    assert [j.bb for j in trace.jobs] == [bb] and trace.bb_capacity == 10e9
    assert [j.bb for j in read_swf(p, bb_unit=1e6).jobs] == [bb / 1000]


def test_an_unreadable_burst_buffer_capacity_is_refused_by_name(tmp_path):
    p = tmp_path / "c.swf"
    p.write_text("; BurstBuffer: lots\n" + _record(" 1"))
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert info.value.field == "BurstBuffer" and "cannot read the capacity 'lots'" in str(
        info.value)


def test_ids_that_are_not_whole_numbers_are_kept_as_written(tmp_path):
    """Job and user ids are text: ``1.5`` stays ``1.5``, ``3.0`` is ``3``."""
    p = tmp_path / "ids.swf"
    p.write_text(_record(f1=1.5, f12=7.5) + _record(f1=2, f2=1, f12="3.0")
                 + _record(f1=3, f2=2, f12=3))
    assert [(j.id, j.user) for j in read_swf(p).jobs] == [("1.5", "7.5"), ("2", "3"),
                                                           ("3", "3")]


@pytest.mark.parametrize("token, what", [
    ("nan", "not a finite number"), ("inf", "not a finite number"),
    ("-inf", "not a finite number"), ("1.0000001e15", "out of range (magnitude over 1e+15)"),
    ("-2e15", "out of range (magnitude over 1e+15)")])
def test_a_value_not_finite_or_over_1e15_is_refused_naming_line_and_field(tmp_path, token,
                                                                          what):
    p = tmp_path / "v.swf"
    p.write_text(_record() + _record(f1=2, f9=token) + _record(f1=3, f4=token))
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert str(info.value) == f"{p}, line 2, field 'requested_time': {token} is {what}"


def test_a_value_of_1e15_is_read(tmp_path):
    # (the reader's own bound; a job's fields have their own, narrower ones: the used memory,
    # KB per processor, has none)
    p = tmp_path / "v.swf"
    p.write_text(_record(f7="1e15") + _record(f1=2, f2=-0.0))
    jobs = read_swf(p).jobs
    assert [j.submit for j in jobs] == [0.0, 0.0]
    assert jobs[0].extra["memory_per_node"] == 1e15 * 1024


def test_a_job_refused_by_its_own_checks_is_named_by_file_and_line(tmp_path):
    """With staging columns every job is built through ``Job``'s checks: more than 10^7 nodes
    is refused there, and the reader says which record it was."""
    p = tmp_path / "big.swf"
    p.write_text("; a header line\n" + _record(" 0 0 0") + _record(" 0 0 0", f1=2, f8=10**8))
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert info.value.source == str(p) and info.value.line == 3
    assert str(info.value).startswith(f"{p}, line 3")
    assert "job 2: nodes must be an integer in [1, 10,000,000]" in str(info.value)


@pytest.mark.parametrize("header, columns, field", [
    ("; BurstBuffer: 10\n", "auto", "burst_buffer"), ("", "cqsim", "burst_buffer"),
    ("", "bbsim", "data_in"), ("", "bbsimulator", "data_in")])
def test_a_record_short_of_its_bb_columns_names_the_first_missing_one(tmp_path, header,
                                                                      columns, field):
    p = tmp_path / "short.swf"
    p.write_text(header + _record())
    width = 19 if field == "burst_buffer" else 21
    with pytest.raises(InputError) as info:
        read_swf(p, bb_columns=columns)
    assert str(info.value) == (f"{p}, line {1 + header.count(chr(10))}, field {field!r}: "
                               f"expected {width} fields, found 18")


@pytest.mark.parametrize("fields, field", [(17, "think_time"),
                                           (25, "field 26")])
def test_a_record_of_another_width_than_the_first_names_its_extra_or_missing_field(
        tmp_path, fields, field):
    p = tmp_path / "w.swf"
    line = _record(f1=3, f2=2).split()
    line = (line + ["7"] * 8)[:fields]
    p.write_text(_record() + _record(f1=2, f2=1) + " ".join(line) + "\n")
    with pytest.raises(InputError) as info:
        read_swf(p, bb_columns="none")
    assert str(info.value) == (f"{p}, line 3, field {field!r}: expected 18 fields (as on line "
                               f"1), found {fields}")


def test_a_field_that_is_not_a_number_is_named_with_its_text(tmp_path):
    p = tmp_path / "x.swf"
    p.write_text(_record() + _record(f1=2, f2=1, f9="1h"))
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert str(info.value) == f"{p}, line 2, field 'requested_time': not a number: '1h'"


def test_a_bb_unit_below_one_byte_is_a_unit(tmp_path):
    p = tmp_path / "c.swf"
    p.write_text(_record(" 4"))
    assert [j.bb for j in read_swf(p, bb_unit=0.5).jobs] == [2.0]


def test_a_directory_is_refused_by_name(tmp_path):
    with pytest.raises(InputError) as info:
        read_swf(tmp_path)
    assert str(info.value) == f"{tmp_path}: is a directory, not an SWF file"


def test_a_compressed_bbsimulator_trace_is_one(tmp_path):
    p = tmp_path / "t.swf.bb.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(_record(" 2000 3 4", f8=300))
    (job,) = read_swf(p).jobs
    assert job.extra["staging"] == {"in": 2e9, "run": 3e9, "out": 4e9} and job.nodes == 300


def test_the_companion_of_a_compressed_trace_drops_the_gz(tmp_path):
    p = tmp_path / "t.swf.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(_record())
    (tmp_path / "t.swf.bb").write_text("1 2 8 1\n")
    (job,) = read_swf(p).jobs
    assert job.bb == 8e9 and job.extra["staging"] == {"in": 2e9, "run": 8e9, "out": 1e9}


def test_a_companion_is_read_only_for_staging_columns_and_never_over_a_given_file(tmp_path):
    p = tmp_path / "t.swf"
    p.write_text(_record())
    (tmp_path / "t.swf.bb").write_text("1 2 x 1\n")  # unreadable: read, it would be an error
    assert read_swf(p, bb_columns="none").jobs[0].bb == 0.0
    given = tmp_path / "given.bb"
    given.write_text("1 1 5 1\n")
    (job,) = read_swf(p, bb_file=given).jobs
    assert job.bb == 5e9


@PATHS
@pytest.mark.parametrize("field, at, over, name", [
    ("f9", 10**10, 10**10 + 1, "walltime"),  # (0, MAX_SECONDS]
    ("f2", 10**10, 10**10 + 1, "submit"),  # [0, MAX_SECONDS]
    ("f8", 10**7, 10**7 + 1, "nodes"),  # [1, MAX_NODES]
])
def test_the_fast_path_keeps_jobs_bounds(tmp_path, extra, field, at, over, name):
    # a record at a bound of Job's checks is read on both paths; one just over it is refused
    # naming its line and field, as the checked path refuses it (the fast path once kept it)
    p = tmp_path / "b.swf"
    p.write_text(_record(extra, **{field: at}))
    (job,) = read_swf(p).jobs
    assert {"f9": job.walltime, "f2": job.submit, "f8": job.nodes}[field] == at
    p.write_text(_record(extra, **{field: over}))
    with pytest.raises(InputError) as err:
        read_swf(p)
    assert "b.swf, line 1, field '" + name + "'" in str(err.value)


@pytest.mark.parametrize("extra, refused", [(" 5", False), (" 5 6", True), (" 5 6 7", True)])
def test_a_bb_capacity_header_over_wider_records_is_refused_in_auto(tmp_path, extra, refused):
    """``; BurstBuffer:`` announces CQSim's 19 fields; records of 20 or 21 fields (BBSimulator's
    staging columns) would lose fields 20 on: the automatic choice refuses, naming the
    option; an explicit choice reads them."""
    p = tmp_path / "both.swf"
    p.write_text("; BurstBuffer: 10\n" + _record(extra) + _record(extra, f1=2))
    if not refused:
        assert [j.bb for j in read_swf(p).jobs] == [5 * GB, 5 * GB]
        return
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert info.value.field == "bb_columns" and info.value.source == str(p)
    assert f"the records have {18 + len(extra.split())} fields" in info.value.reason
    assert [j.bb for j in read_swf(p, bb_columns="cqsim").jobs] == [5 * GB, 5 * GB]
    if len(extra.split()) == 3:
        staged = read_swf(p, bb_columns="bbsim").jobs[0]
        assert staged.extra["staging"] == {"in": 5 * GB, "run": 6 * GB, "out": 7 * GB}
        assert staged.bb == 7 * GB

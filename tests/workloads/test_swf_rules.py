"""SWF reader rules at their edges: which fields are checked, which records an option applies
to once another rule has skipped them, the order of refusals, the burst-buffer convention each
file layout selects, the arguments a BB draw is given, and where warnings point."""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import numpy as np
import pytest

from bbopt import InputError
from bbopt.workloads.swf import read_swf


def _record(extra: str = "", **fields) -> str:
    """One SWF record: job 1 submitted at 0, run 10 s on 2 requested processors with 60 s
    requested, every other field -1, but those given as ``f<number>=value`` (1-based)."""
    values = {1: 1, 2: 0, 4: 10, 8: 2, 9: 60}
    values.update({int(k[1:]): v for k, v in fields.items()})
    return " ".join(str(values.get(i, -1)) for i in range(1, 19)) + extra + "\n"


def _write(path: Path, *records: str, header: str = "") -> Path:
    path.write_text(header + "".join(records))
    return path


# -- the fields checked for finite values: every field the reader uses, by its name ---------

USED = [(1, "job_number"), (2, "submit_time"), (4, "run_time"), (5, "allocated_processors"),
        (7, "used_memory"), (8, "requested_processors"), (9, "requested_time"),
        (12, "user_id"), (13, "group_id")]


@pytest.mark.parametrize("number, name", USED)
@pytest.mark.parametrize("token", ["inf", "nan", "2e15"])
def test_every_used_field_must_be_a_finite_number(tmp_path, number, name, token):
    p = _write(tmp_path / "v.swf", _record(), _record(**{"f1": 2, f"f{number}": token}))
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert (info.value.line, info.value.field) == (2, name)
    assert str(info.value).startswith(f"{p}, line 2, field {name!r}: {token} is ")


@pytest.mark.parametrize("number", [3, 6, 10, 11, 14, 15, 16, 17, 18])
def test_fields_the_reader_does_not_use_may_hold_anything_numeric(tmp_path, number):
    p = _write(tmp_path / "v.swf", _record(**{f"f{number}": "nan"}),
               _record(f1=2, **{f"f{number}": "inf"}))
    assert [j.id for j in read_swf(p).jobs] == ["1", "2"]


@pytest.mark.parametrize("extra, columns, name", [
    (" nan", "cqsim", "burst_buffer"), (" inf 0 0", "bbsim", "data_in"),
    (" 0 nan 0", "bbsim", "data_run"), (" 0 0 inf", "bbsim", "data_out")])
def test_the_bb_columns_must_be_finite_numbers(tmp_path, extra, columns, name):
    p = _write(tmp_path / "v.swf", _record(extra))
    with pytest.raises(InputError) as info:
        read_swf(p, bb_columns=columns)
    assert (info.value.line, info.value.field) == (1, name)


def test_a_used_memory_of_1e15_is_read_one_over_it_is_refused(tmp_path):
    p = _write(tmp_path / "m.swf", _record(f7="1e15"))
    assert read_swf(p).jobs[0].extra["memory_per_node"] == 1e15 * 1024
    _write(p, _record(f7="1.0000001e15"))
    with pytest.raises(InputError, match="field 'used_memory': 1.0000001e15 is out of range"):
        read_swf(p)


# -- submit times, processors and the order of refusals -------------------------------------

@pytest.mark.parametrize("submit, ok", [(0, True), ("-0.5", False), (-1, False)])
def test_a_submit_time_at_zero_is_read_below_it_is_refused_with_its_text(tmp_path, submit, ok):
    p = _write(tmp_path / "s.swf", _record(), _record(f1=2, f2=submit), header="; x\n")
    if ok:
        assert [j.submit for j in read_swf(p).jobs] == [0.0, 0.0]
        return
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert str(info.value) == f"{p}, line 3, field 'submit_time': submit time must be >= 0, " \
                              f"got {submit}"


@pytest.mark.parametrize("processors, f5, f8, nodes", [
    ("requested", 3, 0, 3), ("requested", 3, 1, 1), ("requested", 0, 4, 4),
    ("allocated", 0, 4, 4), ("allocated", 1, 4, 1), ("allocated", 3, 0, 3)])
def test_a_processor_count_of_zero_is_missing_and_the_other_field_is_read(
        tmp_path, processors, f5, f8, nodes):
    p = _write(tmp_path / "p.swf", _record(f5=f5, f8=f8))
    assert [j.nodes for j in read_swf(p, processors=processors).jobs] == [nodes]


@pytest.mark.parametrize("processors, field", [("requested", "requested_processors"),
                                               ("allocated", "allocated_processors")])
def test_the_first_unusable_record_is_refused_whatever_its_fault(tmp_path, processors, field):
    """With both refusals on, the earlier of a record without processors and one that did not
    run is named, in file order."""
    no_procs, no_run = _record(f1=2, f8=0), _record(f1=3, f4=0)
    p = _write(tmp_path / "u.swf", _record(), no_procs, no_run)
    with pytest.raises(InputError) as info:
        read_swf(p, on_bad="raise", processors=processors)
    assert str(info.value) == (f"{p}, line 2, field {field!r}: no processor count (fields 5 "
                               "and 8 both missing)")
    _write(p, _record(), no_run, no_procs)
    with pytest.raises(InputError) as info:
        read_swf(p, on_bad="raise", processors=processors)
    assert str(info.value) == f"{p}, line 2, field 'run_time': run time is 0"
    # only one of the two refusals on: the other fault is skipped first
    _write(p, _record(), no_run, no_procs)
    with pytest.raises(InputError, match="line 3, field .*no processor count"):
        read_swf(p, missing_processors="error")
    _write(p, _record(), no_procs, no_run)
    with pytest.raises(InputError, match="line 3, field 'run_time': run time is 0"):
        read_swf(p, nonpositive_runtime="error")


@pytest.mark.parametrize("options, record, says", [
    ({"nonpositive_runtime": "error"}, {"f4": 0}, "field 'run_time': run time is 0"),
    ({"nonpositive_runtime": "error"}, {"f4": "-1"}, "field 'run_time': run time is -1"),
    ({"missing_walltime": "error"}, {"f9": -1}, "field 'requested_time': requested time is "
     "missing"),
    ({"missing_walltime": "error"}, {"f9": 0}, "field 'requested_time': requested time is "
     "missing"),
    ({"max_nodes": 2, "oversize": "error"}, {"f8": 3},
     "field 'requested_processors': 3 nodes exceed the platform's 2"),
    ({"max_nodes": 2, "oversize": "error", "processors": "allocated"}, {"f5": 4},
     "field 'allocated_processors': 4 nodes exceed the platform's 2"),
    ({"missing_processors": "error"}, {"f8": -1},
     "field 'requested_processors': no processor count (fields 5 and 8 both missing)")])
def test_each_refusal_of_a_record_names_file_line_and_field(tmp_path, options, record, says):
    """The record refused is the second (the first is a good job), named by file and line."""
    p = _write(tmp_path / "e.swf", _record(), _record(f1=2, **record), _record(f1=3))
    with pytest.raises(InputError) as info:
        read_swf(p, **options)
    assert str(info.value) == f"{p}, line 2, {says}"
    assert (info.value.source, info.value.line) == (str(p), 2)


@pytest.mark.parametrize("run", ["1", "0.5"])
def test_a_short_run_before_a_record_without_processors_is_a_job(tmp_path, run):
    """With both refusals on, a record that ran one second or half of one is no fault: the
    record after it, without processors, is the one named."""
    p = _write(tmp_path / "u.swf", _record(f4=run), _record(f1=2, f8=-1))
    with pytest.raises(InputError) as info:
        read_swf(p, on_bad="raise")
    assert str(info.value) == (f"{p}, line 2, field 'requested_processors': no processor "
                               "count (fields 5 and 8 both missing)")


def test_a_file_whose_every_record_is_skipped_is_refused_by_name(tmp_path):
    p = _write(tmp_path / "s.swf", _record(f4=0), _record(f1=2, f8=-1), header="; x: 1\n")
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert str(info.value) == f"{p}: no job records" and info.value.source == str(p)


def test_a_record_skipped_for_one_reason_is_counted_once(tmp_path):
    """A record without processors that did not run either is counted as without processors;
    one that did not run, over the platform's nodes and without a requested time is counted
    as not run, and neither the oversize nor the missing walltime refusal names it."""
    p = _write(tmp_path / "k.swf", _record(), _record(f1=2, f4=0, f8=0),
               _record(f1=3, f4=-1, f8=9, f9=-1))
    trace = read_swf(p, max_nodes=8, oversize="drop")
    assert trace.skipped == {"missing_processors": 1, "nonpositive_runtime": 1}
    assert [(n, why) for n, why, _ in trace.skipped_records] == [
        (2, "no processors"), (3, "runtime <= 0")]
    trace = read_swf(p, max_nodes=8, oversize="error", missing_walltime="error")
    assert [j.id for j in trace.jobs] == ["1"]


@pytest.mark.parametrize("run, kept", [("-1", False), (0, False), ("0.001", True)])
def test_a_run_time_above_zero_is_a_job(tmp_path, run, kept):
    p = _write(tmp_path / "r.swf", _record(), _record(f1=2, f4=run))
    trace = read_swf(p)
    assert [j.id for j in trace.jobs] == (["1", "2"] if kept else ["1"])
    assert trace.skipped == ({} if kept else {"nonpositive_runtime": 1})


def test_rebase_subtracts_the_earliest_submission_not_the_first(tmp_path):
    p = _write(tmp_path / "r.swf", _record(f2=100), _record(f1=2, f2=40), _record(f1=3, f2=70))
    assert [j.submit for j in read_swf(p, rebase=True).jobs] == [60.0, 0.0, 30.0]


@pytest.mark.parametrize("ids, line", [((1, 1), 2), ((1, 2, 2), 3), ((5, 4, 4), 3),
                                       ((3, 2, 1, 3), 4)])
def test_a_repeated_job_number_is_named_at_its_second_record(tmp_path, ids, line):
    p = _write(tmp_path / "d.swf", *(_record(f1=k) for k in ids))
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert str(info.value) == (f"{p}, line {line}, field 'job_number': duplicate job number "
                               f"{ids[line - 1]}")


def test_job_numbers_out_of_order_but_distinct_are_read(tmp_path):
    p = _write(tmp_path / "d.swf", *(_record(f1=k) for k in (3, 1, 2)))
    assert [j.id for j in read_swf(p).jobs] == ["3", "1", "2"]


@pytest.mark.parametrize("ids, names", [((0, 1, -1), ["0", "1", "3"]),
                                        ((-1, 0, 2), ["1", "0", "2"])])
def test_job_number_zero_is_a_number_and_minus_one_gives_the_line(tmp_path, ids, names):
    """Job number 0 is the job's number (not missing: only ``-1`` is), so it is no duplicate
    of a record numbered by its line 1; a record without number is named by its line."""
    p = _write(tmp_path / "z.swf", *(_record(f1=k) for k in ids))
    assert [j.id for j in read_swf(p).jobs] == names


def test_a_duplicate_among_skipped_records_is_no_duplicate(tmp_path):
    p = _write(tmp_path / "d.swf", _record(), _record(f4=0), _record(f1=2))
    assert [j.id for j in read_swf(p).jobs] == ["1", "2"]


# -- the burst-buffer capacity in the header -------------------------------------------------

@pytest.mark.parametrize("value, capacity", [("10", 10e9), ("2.5 GB-units", 2.5e9),
                                             ("0", 0.0)])
def test_the_header_capacity_is_its_first_word_in_units(tmp_path, value, capacity):
    p = _write(tmp_path / "c.swf", _record(" 1"), header=f"; BurstBuffer: {value}\n")
    trace = read_swf(p)
    assert trace.bb_capacity == capacity and trace.bb_columns == "cqsim"


@pytest.mark.parametrize("value", ["", "ten"])
def test_a_header_capacity_without_a_number_is_refused_by_name(tmp_path, value):
    p = _write(tmp_path / "c.swf", _record(" 1"), header=f"; BurstBuffer: {value}\n")
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert str(info.value) == f"{p}, field 'BurstBuffer': cannot read the capacity {value!r}"


def test_no_header_capacity_is_none(tmp_path):
    trace = read_swf(_write(tmp_path / "c.swf", _record(" 1")))
    assert trace.bb_capacity is None and trace.bb_columns == "cqsim"


# -- which convention a file selects ---------------------------------------------------------

@pytest.mark.parametrize("columns", ["bbsim", "bbsimulator", "auto"])
def test_a_companion_is_read_for_the_staging_conventions(tmp_path, columns):
    p = _write(tmp_path / "t.swf", _record(f5=300, f8=300))
    (tmp_path / "t.swf.bb").write_text("1 2000 3 4\n")
    trace = read_swf(p, bb_columns=columns)
    (job,) = trace.jobs
    scale = 1e-3 if columns == "bbsimulator" else 1.0
    assert job.extra["staging"] == {"in": 2000e9 * scale, "run": 3e9, "out": 4e9}
    assert trace.bb_columns == ("bbsim" if columns == "auto" else columns)


@pytest.mark.parametrize("columns", ["bbsim", "bbsimulator"])
def test_a_given_companion_is_read_for_an_explicit_convention(tmp_path, columns):
    p = _write(tmp_path / "t.swf", _record())
    given = tmp_path / "vols.txt"
    given.write_text("1 4000 5 6\n")
    (job,) = read_swf(p, bb_columns=columns, bb_file=given).jobs
    assert job.bb == (6e9 if columns == "bbsimulator" else 4000e9)


def test_a_cqsim_trace_ignores_a_companion(tmp_path):
    p = _write(tmp_path / "t.swf", _record(" 3"))
    (tmp_path / "t.swf.bb").write_text("1 x\n")
    trace = read_swf(p, bb_columns="cqsim")
    assert [j.bb for j in trace.jobs] == [3e9] and "staging" not in trace.jobs[0].extra


def test_bbsimulators_own_trace_looks_for_no_companion(tmp_path):
    p = _write(tmp_path / "t.swf.bb", _record(" 1000 2 3"))
    (tmp_path / "t.swf.bb.bb").write_text("1 x\n")  # read, it would be an error
    (job,) = read_swf(p).jobs
    assert job.extra["staging"] == {"in": 1e9, "run": 2e9, "out": 3e9}


def test_the_companion_of_a_compressed_trace_is_first_its_full_name(tmp_path):
    p = tmp_path / "t.swf.gz"
    with gzip.open(p, "wt") as fh:
        fh.write(_record())
    (tmp_path / "t.swf.gz.bb").write_text("1 1 7 1\n")
    (tmp_path / "t.swf.bb").write_text("1 1 9 1\n")
    assert read_swf(p).jobs[0].bb == 7e9


def test_a_plain_trace_never_looks_for_a_companion_without_its_suffix(tmp_path):
    p = _write(tmp_path / "t.swf", _record())
    (tmp_path / "t.bb").write_text("1 1 9 1\n")
    trace = read_swf(p)
    assert trace.bb_columns == "none" and trace.jobs[0].bb == 0.0


def test_a_burst_buffer_header_selects_cqsim_and_refuses_wider_records(tmp_path):
    p = _write(tmp_path / "c.swf", _record(" 2"), header="; BurstBuffer: 10\n")
    assert read_swf(p).bb_columns == "cqsim"
    _write(p, _record(" 2 3 4"), header="; BurstBuffer: 10\n")
    with pytest.raises(InputError, match="the records have 21 fields"):
        read_swf(p)  # (21 fields under a BurstBuffer header: which layout is meant?)
    trace = read_swf(p, bb_columns="cqsim")  # (CQSim's one column, field 19)
    assert trace.bb_columns == "cqsim" and [j.bb for j in trace.jobs] == [2e9]
    assert read_swf(p, bb_columns="none").jobs[0].bb == 0.0


def test_a_companion_of_which_every_number_matches_says_nothing(tmp_path):
    p = _write(tmp_path / "t.swf", _record(), _record(f1=2))
    (tmp_path / "t.swf.bb").write_text("1 1 1 1\n2 2 2 2\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [j.bb for j in read_swf(p).jobs] == [1e9, 2e9]


@pytest.mark.parametrize("volumes, says", [
    ("11 2 8 1\n", "t.swf.bb: none of its 1 job numbers matches a job of"),
    ("1 2 8 1\n11 1 1 1\n12 1 1 1\n", "t.swf.bb: 2 of its 3 job numbers match no job of")])
def test_a_companion_warning_counts_the_numbers_that_match(tmp_path, volumes, says):
    p = _write(tmp_path / "t.swf", _record(), _record(f1=2))
    (tmp_path / "t.swf.bb").write_text(volumes)
    with pytest.warns(UserWarning) as caught:
        read_swf(p)
    (w,) = caught
    assert says in str(w.message) and str(w.message).endswith(
        "every job gets no burst buffer" if "none" in says else f"{p}")
    assert not w.filename.endswith("swf.py")  # (the caller's line, not the reader's)


# -- the BB draw ----------------------------------------------------------------------------

def test_the_draw_is_given_the_kept_records_nodes_walltimes_and_whether_some_has_bb(tmp_path):
    """The draw sees the records kept (not those skipped), their sizes in whole nodes and their
    requested times with a missing one filled; its answer is their BB, in order."""
    p = _write(tmp_path / "d.swf", _record(f8=5, f9=-1), _record(f1=2, f4=0),
               _record(f1=3, f8=8, f9=90), _record(f1=4, f8=1, f9=30, f4=20))
    seen = []

    def draw(nodes, walltime, has_bb):
        seen.append((nodes.tolist(), walltime.tolist(), has_bb))
        return np.array([1.0, 2.0, 3.0])

    trace = read_swf(p, procs_per_node=4, draw_bb=draw)
    assert seen == [([2, 2, 1], [10.0, 90.0, 30.0], False)]
    assert [j.bb for j in trace.jobs] == [1.0, 2.0, 3.0] and trace.bb_drawn


@pytest.mark.parametrize("values, has_bb", [(("0", "0"), False), (("0", "1"), True),
                                            (("-1", "0.5"), True), (("-1", "-1"), False)])
def test_the_draw_is_told_whether_some_record_asks_bb(tmp_path, values, has_bb):
    p = _write(tmp_path / "d.swf", _record(f" {values[0]}"), _record(f" {values[1]}", f1=2))
    seen = []
    read_swf(p, draw_bb=lambda n, w, b: seen.append(b))
    assert seen == [has_bb]


@pytest.mark.parametrize("value, has_bb", [("0", False), ("1", True), ("0.5", True)])
def test_a_request_of_one_byte_is_a_bb_request(tmp_path, value, has_bb):
    """``has_bb`` is any request above 0 bytes: one byte (``bb_unit=1``) counts."""
    p = _write(tmp_path / "d.swf", _record(" 0"), _record(f" {value}", f1=2))
    seen = []
    read_swf(p, bb_unit=1.0, draw_bb=lambda n, w, b: seen.append(b))
    assert seen == [has_bb]


def test_a_draw_that_answers_none_keeps_the_files_bb(tmp_path):
    p = _write(tmp_path / "d.swf", _record(" 4"))
    trace = read_swf(p, draw_bb=lambda n, w, b: None)
    assert [j.bb for j in trace.jobs] == [4e9] and not trace.bb_drawn
    assert not read_swf(p).bb_drawn


@pytest.mark.parametrize("columns", ["bbsim", "bbsimulator"])
def test_staging_columns_are_never_drawn(tmp_path, columns):
    p = _write(tmp_path / "d.swf", _record(" 1000 2 3", f8=300))

    def draw(*_):
        raise AssertionError("drawn")

    trace = read_swf(p, bb_columns=columns, draw_bb=draw)
    assert not trace.bb_drawn and trace.jobs[0].bb == (3e9 if columns == "bbsimulator"
                                                       else 1000e9)


@pytest.mark.parametrize("text", ["", "; MaxNodes: 8\n", "\n  \n; only a header\n\n"])
def test_a_file_without_records_is_refused_by_name(tmp_path, text):
    p = tmp_path / "e.swf"
    p.write_text(text)
    with pytest.raises(InputError) as info:
        read_swf(p)
    assert str(info.value) == f"{p}: no job records" and info.value.source == str(p)

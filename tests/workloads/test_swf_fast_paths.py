"""The SWF reader's shortcuts read what the plain passes read: header lines anywhere in the file
(the header scan looks past the first records only at lines holding a ``;``), and the text of
skipped records, kept while parsing for the usual reasons and read back from the file for the
others; and the jobs it builds from columns that passed ``Job``'s checks without repeating them
per job equal, field for field, those built with the checks (a record that fails a check still
raises naming its line)."""

import math
from pathlib import Path

import pytest

from bbopt import InputError
from bbopt.workloads import swf
from bbopt.workloads.swf import read_swf
from tests._workload_data import job_fields

LINE = "{id} {submit} -1 {run} {alloc} -1 -1 {req} {wall} -1 1 3 1 -1 -1 -1 -1 -1\n"


def _line(k: int, run: int = 10, alloc: int = 2, req: int = 2) -> str:
    return LINE.format(id=k, submit=k, run=run, alloc=alloc, req=req, wall=60)


def test_header_lines_anywhere(tmp_path):
    """A header line after the first 50 records, one indented, one repeated (the first value
    wins)."""
    rows = [_line(k) for k in range(1, 61)]
    rows.insert(55, "; MaxProcs: 50\n")
    rows.insert(58, "   ;   Note: indented\n")
    rows.insert(59, "; MaxProcs: 70\n")
    p = tmp_path / "t.swf"
    p.write_text("; MaxNodes: 8\n" + "".join(rows))
    trace = read_swf(p)
    assert trace.header == {"MaxNodes": "8", "MaxProcs": "50", "Note": "indented"}
    assert len(trace.jobs) == 60


@pytest.mark.parametrize("chunk", [3, 1 << 15])
def test_skipped_texts_kept_or_read_back(tmp_path, monkeypatch, chunk):
    """Skipped records name their line and text, whether the text was kept while parsing (run
    time <= 0, no processor count) or read back (jobs over ``max_nodes``)."""
    monkeypatch.setattr(swf, "CHUNK", chunk)
    rows = [_line(k) for k in range(1, 21)]
    rows[3] = _line(4, run=0)
    rows[7] = "  " + _line(8, alloc=-1, req=-1)  # (the text is kept stripped)
    rows[11] = _line(12, alloc=9, req=9)  # over max_nodes
    rows[12] = _line(13, alloc=-1, req=5)  # field 5 missing, field 8 given: not skipped
    p = tmp_path / "t.swf"
    p.write_text("; MaxNodes: 8\n" + "".join(rows))
    trace = read_swf(p, max_nodes=8, oversize="drop")
    raw = Path(p).read_text().splitlines()
    assert [(n, why) for n, why, _ in trace.skipped_records] == [
        (5, "runtime <= 0"), (9, "no processors"), (13, "more nodes than the platform")]
    for n, _, text in trace.skipped_records:
        assert text == raw[n - 1].strip()
    assert [j.id for j in trace.jobs] == [str(k) for k in range(1, 21) if k not in (4, 8, 12)]


@pytest.mark.parametrize("groups", [False, True])
def test_unchecked_jobs_equal_checked_ones(kth_swf, monkeypatch, groups):
    fast = read_swf(kth_swf, groups=groups).jobs
    monkeypatch.setattr(swf, "valid_columns", lambda *a: False)  # every job checked
    slow = read_swf(kth_swf, groups=groups).jobs
    assert len(fast) == len(slow) == 28467
    assert [job_fields(j) for j in fast] == [job_fields(j) for j in slow]


def test_a_record_failing_a_job_check_is_still_named(tmp_path):
    p = tmp_path / "t.swf"
    p.write_text("1 0 -1 10 2 -1 -1 2 60 -1 1 3 1 -1 -1 -1 -1 -1\n"
                 "2 5 -1 10 2 -1 -1 2 -1 -1 1 3 1 -1 -1 -1 -1 -1\n")
    with pytest.raises(InputError) as e:
        read_swf(p, missing_walltime=0.0)  # record 2's walltime becomes 0: not positive
    assert e.value.line == 2 and "walltime" in str(e.value)


def _plain(k: int, wait: str = "-1", submit: str | None = None) -> str:
    return (f"{k} {submit if submit is not None else k} {wait} 10 2 -1 -1 2 60 -1 1 3 1 -1 -1 "
            "-1 -1 -1\n")


def test_integers_past_the_numpy_bound_read_as_the_strict_path_reads_them(tmp_path):
    """A wait time of 10^16 (a field the reader does not use) makes the text-free parse
    decline the chunk; the records are still whole integers, and read as those with no wait
    time."""
    p = tmp_path / "big.swf"
    p.write_text(_plain(1, wait=str(10**16)) + _plain(2) + _plain(3, wait="7"))
    q = tmp_path / "small.swf"
    q.write_text(_plain(1) + _plain(2) + _plain(3))
    jobs = read_swf(p).jobs
    assert [job_fields(j) for j in jobs] == [job_fields(j) for j in read_swf(q).jobs]
    assert [(j.id, j.submit, j.nodes) for j in jobs] == [("1", 1.0, 2), ("2", 2.0, 2),
                                                         ("3", 3.0, 2)]


def test_a_minus_zero_keeps_its_sign_whichever_path_reads_the_chunk(tmp_path):
    """``-0`` is read as ``float`` reads it (-0.0), also in a chunk of integers that no zero
    but it and no number but -1 below zero."""
    for wait in ("-1", str(10**16)):
        p = tmp_path / "zero.swf"
        p.write_text(_plain(1, wait=wait, submit="-0") + _plain(2, wait="5"))
        (first, second) = read_swf(p).jobs
        assert first.submit == 0.0 and math.copysign(1.0, first.submit) == -1.0, wait
        assert math.copysign(1.0, second.submit) == 1.0
    # no number below zero at all (every field given), one past 10^16: -0 is still -0.0
    p.write_text(f"1 -0 5 10 2 1 1 2 60 1 1 3 1 1 1 1 1 {10**16}\n")
    (job,) = read_swf(p).jobs
    assert math.copysign(1.0, job.submit) == -1.0 and job.walltime == 60.0


def test_a_record_of_21_fields_after_18_names_field_22(tmp_path):
    p = tmp_path / "w.swf"
    p.write_text(_plain(1) + _plain(2).strip() + " 1 2 3\n")
    with pytest.raises(InputError) as err:
        read_swf(p, bb_columns="none")
    assert str(err.value) == (f"{p}, line 2, field 'field 22': expected 18 fields (as on "
                              "line 1), found 21")

"""The SWF header scan (:func:`bbopt.workloads.swf_files._scan_header`) reads past the first 50
records in blocks and looks only at blocks holding a ``;``: it finds every header line, wherever
it is and wherever the blocks end, as a scan of every line finds them (the text after the first
50 records is what the blocks read)."""

from __future__ import annotations

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.errors import InputError
from bbopt.workloads import swf_files
from bbopt.workloads.swf_files import (
    _companion_kind,
    _data_chunks,
    _data_lines,
    _header_line,
    _intstr,
    _read_bb_file,
    _scan_header,
)


def _every_line(path) -> tuple[dict[str, str], list[int]]:
    """The scan written plainly: every line of the file, in order."""
    header: dict[str, str] = {}
    widths: list[int] = []
    with open(path, encoding="utf-8", errors="replace") as fh:
        for line in fh:
            text = line.strip()
            if not text:
                continue
            if text[0] == ";":
                _header_line(text, header)
            elif len(widths) < 50:
                widths.append(len(text.split()))
    return header, widths


lines = st.one_of(
    st.builds(lambda n: " ".join(["1"] * n), st.integers(1, 20)),  # records
    st.builds(lambda k, v, pad: f"{pad}; {k}: {v}", st.sampled_from(["MaxNodes", "Note",
              "BurstBuffer", "MaxProcs"]), st.integers(0, 999), st.sampled_from(["", " ", "\t"])),
    st.just(""), st.just("   "), st.just("1 2 ; not a header"), st.just(";no colon"))


@settings(max_examples=300, deadline=None)
@given(st.lists(lines, max_size=90), st.sampled_from(["\n", "\r\n", "\r"]),
       st.integers(1, 40), st.booleans())
def test_blocks_find_what_every_line_finds(tmp_path_factory, body, newline, block, last_newline):
    path = tmp_path_factory.mktemp("swf") / "t.swf"
    first = ["; Version: 2"] + [" ".join(["7"] * (1 + k % 18)) for k in range(50)]
    text = newline.join(first + body) + (newline if last_newline else "")
    path.write_bytes(text.encode())
    swf_files._BLOCK, saved = block, swf_files._BLOCK
    try:
        assert _scan_header(path) == _every_line(path)
    finally:
        swf_files._BLOCK = saved


def test_a_header_line_after_the_first_records(tmp_path):
    path = tmp_path / "t.swf"
    records = [" ".join(["1"] * 18)] * 80
    path.write_text("\n".join(["; MaxNodes: 96", *records, "; BurstBuffer: 480",
                               *records]) + "\n")
    header, widths = _scan_header(path)
    assert header == {"MaxNodes": "96", "BurstBuffer": "480"}
    assert widths == [18] * 50


# -- header lines: `; key: value`, a one-word key, the first value of a key kept -------------

@pytest.mark.parametrize("text, header", [
    ("; MaxNodes: 96", {"MaxNodes": "96"}), (";MaxNodes:96", {"MaxNodes": "96"}),
    (";  Note :  two words  ", {"Note": "two words"}), ("; Max Nodes: 96", {}),
    ("; no colon here", {}), ("; : 96", {}), ("; Empty:", {"Empty": ""}),
    ("; URL: http://x:80", {"URL": "http://x:80"})])
def test_a_header_line_is_a_one_word_key_and_its_value(text, header):
    got: dict[str, str] = {}
    _header_line(text, got)
    assert got == header


def test_the_first_value_of_a_header_key_wins_wherever_it_is(tmp_path):
    path = tmp_path / "t.swf"
    record = " ".join(["1"] * 18)
    path.write_text("\n".join(["; MaxNodes: 8", record, "; MaxNodes: 9", "\t; Note: late",
                               record + " ; MaxProcs: 4", *[record] * 60,
                               "; MaxNodes: 10", "   ; BurstBuffer: 7  "]) + "\n")
    assert _scan_header(path) == ({"MaxNodes": "8", "Note": "late", "BurstBuffer": "7"},
                                  [18, 21] + [18] * 48)  # (a record's `;` is a field)


def test_a_header_line_without_a_newline_at_the_end_is_read(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("\n".join([" ".join(["1"] * 18)] * 51 + ["; BurstBuffer: 5"]))
    assert _scan_header(path)[0] == {"BurstBuffer": "5"}


def test_data_lines_are_numbered_from_one_past_blank_and_header_lines(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("; Version: 2\n\n 1 2 \n   \n; x: 1\n3 4\n")
    header: dict[str, str] = {}
    assert list(_data_lines(path, header)) == [(3, "1 2"), (6, "3 4")]
    assert header == {"Version": "2", "x": "1"}
    assert [(n, t) for n, t in zip(*next(_data_chunks(path, 1)), strict=True)] == [(3, "1 2")]


def test_a_corrupt_gzip_file_cannot_be_read_and_is_named(tmp_path):
    path = tmp_path / "t.swf.gz"
    data = gzip.compress("".join(f"{k} {k * 7} 3\n" for k in range(5000)).encode())
    path.write_bytes(data[:len(data) // 2])  # (truncated)
    for scan in (_scan_header, lambda p: list(_data_lines(p))):
        with pytest.raises(InputError) as info:
            scan(path)
        assert str(info.value).startswith(f"{path}: cannot read: ")
        assert info.value.source == str(path) and info.value.line is None


# -- the companion files: BBSimulator's 4 columns or its whole trace --------------------------

def test_a_companion_has_its_volumes_in_units_and_stage_in_scaled(tmp_path):
    path = tmp_path / "t.swf.bb"
    path.write_text("; volumes\n1 2 3 4\n2.00 -1 0 0.5\n\n7.5 1 1 1\n")
    assert _read_bb_file(path, 10.0, 0.5) == {"1": (10.0, 30.0, 40.0), "2": (0.0, 0.0, 5.0),
                                              "7.5": (5.0, 10.0, 10.0)}
    assert _read_bb_file(path, 1.0)["1"] == (2.0, 3.0, 4.0)


def test_bbsimulators_whole_trace_as_companion_gives_fields_1_and_19_to_21(tmp_path):
    path = tmp_path / "t.swf.bb"
    row = ["5.00"] + ["9"] * 17 + ["1000", "2", "3"]
    path.write_text(" ".join(row) + "\n" + " ".join(row[:20] + ["4", "8"]) + "\n")
    with pytest.raises(InputError, match="duplicate job number 5"):
        _read_bb_file(path, 1.0)
    path.write_text(" ".join(row) + "\n")
    assert _read_bb_file(path, 2.0, 1e-3) == {"5": (2.0, 4.0, 6.0)}
    assert _companion_kind(path) == "bbsimulator"


@pytest.mark.parametrize("fields, kind", [(21, "bbsimulator"), (22, "bbsimulator"),
                                          (20, "bbsim"), (4, "bbsim"), (0, "bbsim")])
def test_a_companion_of_21_fields_or_more_is_bbsimulators_trace(tmp_path, fields, kind):
    path = tmp_path / "t.bb"
    path.write_text("; c\n" + (" ".join(["1"] * fields) + "\n" if fields else "")
                    + " ".join(["1"] * 4) + "\n")
    assert _companion_kind(path) == kind


@pytest.mark.parametrize("text, field, says", [
    ("1 2 3\n", "data_out", "expected 4 fields (job, data_in, data_run, data_out), found 3"),
    ("1\n", "data_in", "expected 4 fields (job, data_in, data_run, data_out), found 1"),
    ("1 2 x 4\n", "data_run", "not a number: 'x'"),
    ("1 y 3 4\n", "data_in", "not a number: 'y'"),
    ("1 2 3 -2\n", "data_out", "volume must be >= 0, got -2"),
    ("1 -1.5 3 4\n", "data_in", "volume must be >= 0, got -1.5"),
    ("1 2 3 -0.5\n", "data_out", "volume must be >= 0, got -0.5")])
def test_a_bad_companion_line_is_named_by_file_line_and_field(tmp_path, text, field, says):
    path = tmp_path / "t.bb"
    path.write_text("; c\n1.0 0 0 0\n" + text)
    with pytest.raises(InputError) as info:
        _read_bb_file(path, 1.0)
    assert str(info.value) == f"{path}, line 3, field {field!r}: {says}"


def test_a_repeated_companion_job_is_named_at_its_second_line(tmp_path):
    path = tmp_path / "t.bb"
    path.write_text("1 0 0 0\n2 0 0 0\n1.00 0 0 0\n")
    with pytest.raises(InputError) as info:
        _read_bb_file(path, 1.0)
    assert str(info.value) == f"{path}, line 3, field 'job_number': duplicate job number 1"


@pytest.mark.parametrize("read", [_read_bb_file, _companion_kind])
def test_a_missing_companion_is_named(tmp_path, read):
    path = tmp_path / "none.bb"
    with pytest.raises(InputError) as info:
        read(path, 1.0) if read is _read_bb_file else read(path)
    assert str(info.value) == f"{path}: no such file"


@pytest.mark.parametrize("x, text", [(3.0, "3"), (-1.0, "-1"), (2.5, "2.5"), (0.0, "0")])
def test_a_whole_number_is_written_without_a_fraction(x, text):
    assert _intstr(x) == text


@pytest.mark.parametrize("name", ["t.swf", "t.swf.gz"])
def test_a_byte_order_mark_and_bytes_that_are_not_utf8_are_read(tmp_path, name):
    """A file saved with a UTF-8 byte order mark (its first line a header or a record) and a
    comment in Latin-1: the mark is no part of the first line, a bad byte is replaced."""
    path = tmp_path / name
    for first in ("; MaxNodes: 8", "1 0 5"):
        data = ("\ufeff" + first + "\n; Note: caf").encode() + b"\xe9\n2 1 5\n"
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
        header, widths = _scan_header(path)
        assert header == ({"MaxNodes": "8"} if first[0] == ";" else {}) | {"Note": "caf\ufffd"}
        records = [(1, first)] if first[0] != ";" else []
        assert list(_data_lines(path)) == records + [(3, "2 1 5")]
        assert widths == [3] * len(records + [(3, "2 1 5")])


def test_a_blank_line_among_the_first_records_is_no_end_of_them(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text("1 2\n\n   \n3 4 5\n; Note: after\n6\n")
    assert _scan_header(path) == ({"Note": "after"}, [2, 3, 1])


@pytest.mark.parametrize("exc, says", [
    (EOFError("Compressed file ended"), "cannot read: Compressed file ended"),
    (IsADirectoryError(21, "Is a directory"), "cannot read: Is a directory"),
    (OSError("Not a gzipped file"), "cannot read: Not a gzipped file"),
    (EOFError(), "cannot read: EOFError")])
def test_what_cannot_be_read_says_why_or_what_failed(exc, says):
    from pathlib import Path

    from bbopt.workloads.swf_files import _cannot_read

    err = _cannot_read(Path("t.swf"), exc)
    assert str(err) == f"t.swf: {says}" and err.source == "t.swf"


def test_a_directory_cannot_be_read_as_a_trace(tmp_path):
    for scan in (_scan_header, lambda p: list(_data_lines(p))):
        with pytest.raises(InputError) as info:
            scan(tmp_path)
        assert str(info.value) == f"{tmp_path}: cannot read: Is a directory"


def test_a_companion_without_records_is_the_four_column_kind(tmp_path):
    path = tmp_path / "t.bb"
    path.write_text("; nothing yet\n\n")
    assert _companion_kind(path) == "bbsim"
    assert _read_bb_file(path, 1.0) == {}


def test_a_companion_job_number_that_is_not_a_number_is_kept_as_written(tmp_path):
    path = tmp_path / "t.bb"
    path.write_text("job7 1 2 3\ninf 0 0 1\nnan 1 0 0\n1e400 0 1 0\n")
    assert _read_bb_file(path, 1.0) == {"job7": (1.0, 2.0, 3.0), "inf": (0.0, 0.0, 1.0),
                                        "nan": (1.0, 0.0, 0.0), "1e400": (0.0, 1.0, 0.0)}

"""The SWF header scan (:func:`bbopt.workloads.swf_files._scan_header`) reads past the first 50
records in blocks and looks only at blocks holding a ``;``: it finds every header line, wherever
it is and wherever the blocks end, as a scan of every line finds them (the text after the first
50 records is what the blocks read)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.workloads import swf_files
from bbopt.workloads.swf_files import _header_line, _scan_header


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

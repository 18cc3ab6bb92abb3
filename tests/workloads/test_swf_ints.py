"""The SWF reader's integer fast path (:func:`bbopt.workloads.swf_ints.int_rows`) reads what the
strict path reads, token by token, or declines: never a different number, never a record with
a field too many or too few."""

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.workloads import swf
from bbopt.workloads.swf import read_swf
from bbopt.workloads.swf_ints import int_rows

PLAIN = re.compile(r"[+-]?[0-9]{1,15}", re.ASCII)
plain = st.integers(-10**15, 10**15).map(str)
odd = st.sampled_from(["-0", "+0", "+7", "-00", "007", "1.5", "1e3", "-", "+", "5-3", "--5",
                       "+-5", "0x10", "1_000", "nan", "inf", "١٢", "99999999999999999999",
                       "-9223372036854775809", "12345678901234567", "123456789012345678"])
tokens = st.one_of(plain, plain, plain, odd)
spaces = st.sampled_from([" ", "  ", "\t", " \t ", "\x0b", "\x0c", "\x1c"])


@st.composite
def chunks(draw):
    width = draw(st.integers(1, 6))
    words_of = tokens if draw(st.booleans()) else plain  # (half the chunks: plain integers)
    lines = []
    for _ in range(draw(st.integers(1, 6))):
        n = width if draw(st.integers(0, 9)) else draw(st.integers(1, 7))
        words = [draw(words_of) for _ in range(n)]
        text = words[0] + "".join(draw(spaces) + w for w in words[1:])
        lines.append(text.strip())
    lines = [t for t in lines if t]
    if len(lines) > 1 and draw(st.booleans()):  # a field moved to the next record: same count
        k = draw(st.integers(0, len(lines) - 2))
        head, _, last = lines[k].rpartition(" ")
        if head.strip():
            lines[k], lines[k + 1] = head.strip(), last + " " + lines[k + 1]
    return lines, width


def _strict(texts, width):
    """What the strict path reads: every token by float(), or None for a bad line."""
    rows = []
    for text in texts:
        words = text.split()
        if len(words) != width:
            return None
        try:
            rows.append([float(w) for w in words])
        except ValueError:
            return None
    return rows


@settings(max_examples=600, deadline=None)
@given(chunks())
def test_reads_what_float_reads_or_declines(chunk):
    texts, width = chunk
    if not texts:
        return
    got = int_rows(texts, width)
    strict = _strict(texts, width)
    if got is None:  # declined: only when some token is not a plain integer, or -0
        simple = strict is not None and not any("\x1c" in t for t in texts) and all(
            PLAIN.fullmatch(w) and not (w[0] == "-" and int(w) == 0)
            for t in texts for w in t.split())
        assert not simple, texts
        return
    assert strict is not None
    assert got.shape == (len(texts), width)
    for row, want in zip(got.tolist(), strict, strict=True):
        for value, exact in zip(row, want, strict=True):
            # the same float, sign of zero included
            assert float(value).hex() == exact.hex()


def test_kth_through_both_paths(kth_swf, monkeypatch):
    """The whole trace read with and without the fast path: the same jobs."""
    fast = read_swf(kth_swf)
    monkeypatch.setattr(swf, "int_rows", lambda texts, fields: None)
    slow = read_swf(kth_swf)
    assert fast.jobs == slow.jobs
    assert [j.user for j in fast.jobs] == [j.user for j in slow.jobs]
    assert fast.skipped_records == slow.skipped_records


def test_declines_each_trap():
    """Texts ``np.fromstring`` would read as other numbers (or with a field moved between
    records) are declined, whichever check catches them."""
    for texts, width in [(["3 +"], 2), (["3 4+5"], 2), (["5-3 1"], 2), (["3 -"], 2),
                         (["1 99999999999999999999"], 2), (["-9223372036854775809 1"], 2),
                         (["1 2 3", "4"], 2), (["-0 1"], 2), (["1\x1c2"], 2), (["١ 2"], 2),
                         (["1.5 2"], 2), (["1e3 2"], 2), (["1_000 2"], 2), (["0x10 2"], 2),
                         (["nan 1"], 2), (["1 2"], 3),
                         (["1 " * 257 + "1", "1 2"], 2)]:  # (258 fields: 2 modulo 256)
        assert int_rows(texts, width) is None, texts
    assert int_rows(["+5\t-3", "007 0"], 2).tolist() == [[5, -3], [7, 0]]


@pytest.mark.parametrize("token, value", [(str(10**16 - 1), 10**16 - 1),
                                          (str(-(10**16 - 1)), -(10**16 - 1)),
                                          (str(10**16), None), (str(-(10**16)), None),
                                          (str(10**16 + 1), None)])
def test_magnitudes_below_10_to_the_16_are_read_exactly_from_there_declined(token, value):
    got = int_rows([f"1 {token}", "2 3"], 2)
    if value is None:
        assert got is None
        return
    assert got.dtype == np.int64 and got.tolist() == [[1, value], [2, 3]]
    assert int(got[0, 1]) == value  # (exact: 10**16 - 1 is no float64)

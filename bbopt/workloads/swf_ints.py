"""The SWF reader's fast path for the usual text, whole records of plain integers: a chunk of
records checked and parsed inside numpy, with no string per field (splitting each line and
converting its tokens one by one was most of the reading time of a trace).

:func:`int_rows` accepts a chunk only when every token matches ``[+-]?[0-9]+`` (ASCII digits, a
sign only at the start of a token) with a magnitude below ``10**16``, tokens are separated by
ASCII whitespace, every record has the same number of fields, and no token with a minus sign
reads as a non-negative number (``-0``, which ``float`` reads as -0.0). Then ``np.fromstring``
reads exactly those tokens, each as ``int()`` would; on any doubt it returns ``None`` and the
reader takes its strict path, which names the line and field of any fault.

The checks work on three byte masks of the text, reused, and count the tokens of each record
by a sum over its bytes (no array of token positions, no text copy for ``np.fromstring``):
every array of a whole chunk is fresh memory the system must map, which cost about as much as
the arithmetic.
"""

from __future__ import annotations

import warnings

import numpy as np

#: The bytes a record of plain integers may hold: ASCII whitespace (as str.split sees it),
#: digits and signs.
_VALID = b"\t\n\x0b\x0c\r 0123456789+-"
#: Magnitudes from here on are declined: an int64 parse saturates on overflow (a token of more
#: digits reads as the largest int64), and every smaller one is read exactly.
_LIMIT = 10**16


def int_rows(texts: list[str], fields: int) -> np.ndarray | None:
    """The records ``texts`` (stripped, non-empty lines) as an int64 array of ``fields``
    columns, or ``None`` when any of them is not ``fields`` plain integers (``fields`` below
    256)."""
    if not 0 < fields < 256:
        return None
    try:
        data = "\n".join(texts).encode("ascii")
    except UnicodeEncodeError:
        return None
    if data.translate(None, _VALID):  # a byte that is neither whitespace, digit nor sign
        return None
    raw = np.frombuffer(data, dtype=np.uint8)
    word = raw > 32  # (digits and signs; every other byte left is whitespace)
    start = np.empty_like(word)  # a token's first byte: a word byte after a space (or first)
    start[0] = word[0]
    np.greater(word[1:], word[:-1], out=start[1:])
    mark = np.less(raw, 48)  # (among the bytes left: whitespace and signs)
    mark &= word  # the signs
    if mark.any():  # a sign only opens a token, and a digit follows it
        if mark[-1] or np.greater(mark, start, out=word).any():
            return None
        np.less(raw[1:], 48, out=word[:-1])  # (not a digit)
        if np.logical_and(mark[:-1], word[:-1], out=word[:-1]).any():
            return None
    # every record has `fields` tokens: the token starts summed over each record's bytes
    firsts = np.flatnonzero(np.equal(raw, 10, out=mark))
    firsts += 1
    # (summed in bytes, modulo 256: with each record holding at least one token and the total
    # checked below, a record whose count is `fields` modulo 256 holds exactly `fields`)
    per_line = np.add.reduceat(start.view(np.uint8), np.concatenate(([0], firsts)),
                               dtype=np.uint8)
    if (per_line != fields).any():
        return None
    del word, start, mark
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            values = np.fromstring(data, dtype=np.int64, sep=" ")
    except (ValueError, DeprecationWarning):
        return None
    if values.size != len(texts) * fields or values.max() >= _LIMIT \
            or values.min() <= -_LIMIT:
        return None
    if data.count(b"-") != int(np.count_nonzero(values < 0)):  # "-0": the strict path
        return None
    return values.reshape(len(texts), fields)

"""The SWF reader's fast path for the usual text, whole records of plain integers: a chunk of
records checked and parsed inside numpy, with no string per field (splitting each line and
converting its tokens one by one was most of the reading time of a trace).

:func:`int_rows` accepts a chunk only when every token matches ``[+-]?[0-9]{1,17}`` (ASCII
digits, a sign only at the start of a token), tokens are separated by ASCII whitespace, every
record has the same number of fields, and no token with a minus sign reads as a non-negative
number (``-0``, which ``float`` reads as -0.0). Then ``np.fromstring`` reads exactly those
tokens, each as ``int()`` would; on any doubt it returns ``None`` and the reader takes its strict
path, which names the line and field of any fault.
"""

from __future__ import annotations

import warnings

import numpy as np

# byte classes: 0 anything else, 1 ASCII whitespace (as str.split sees it), 2 digit, 3 sign
_CLASS = np.zeros(256, dtype=np.uint8)
_CLASS[[9, 10, 11, 12, 13, 32]] = 1
_CLASS[ord("0"):ord("9") + 1] = 2
_CLASS[[ord("+"), ord("-")]] = 3
#: The longest token taken (sign included): 17 characters cannot overflow int64.
_MAX_TOKEN = 17


def int_rows(texts: list[str], fields: int) -> np.ndarray | None:
    """The records ``texts`` (stripped, non-empty lines) as an int64 array of ``fields``
    columns, or ``None`` when any of them is not ``fields`` plain integers."""
    text = "\n".join(texts)
    try:
        data = text.encode("ascii")
    except UnicodeEncodeError:
        return None
    cls = _CLASS[np.frombuffer(data, dtype=np.uint8)]
    if not cls.all():  # a byte that is neither whitespace, digit nor sign
        return None
    space = cls == 1
    word = ~space
    # token starts: a non-space byte after a space (or first); ends: before a space (or last)
    before = np.empty(len(cls), dtype=bool)
    before[0] = True
    before[1:] = space[:-1]
    starts = np.flatnonzero(word & before)
    after = before  # (reused)
    after[-1] = True
    after[:-1] = space[1:]
    ends = np.flatnonzero(word & after)
    if starts.size != len(texts) * fields or int((ends - starts).max()) >= _MAX_TOKEN:
        return None
    signs = np.flatnonzero(cls == 3)
    # a sign only opens a token, and a digit follows it
    if signs.size and not (np.isin(signs, starts, assume_unique=True).all()
                           and (signs + 1 < len(cls)).all()
                           and (cls[np.minimum(signs + 1, len(cls) - 1)] == 2).all()):
        return None
    # every record has `fields` tokens: count the starts between line breaks
    breaks = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    per_line = np.diff(np.searchsorted(starts, breaks), prepend=0, append=starts.size)
    if (per_line != fields).any():
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            values = np.fromstring(text, dtype=np.int64, sep=" ")
    except (ValueError, DeprecationWarning):
        return None
    if values.size != starts.size:
        return None
    if text.count("-") != int(np.count_nonzero(values < 0)):  # "-0": the strict path
        return None
    return values.reshape(len(texts), fields)

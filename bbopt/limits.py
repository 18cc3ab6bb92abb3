"""The sane range of every count, size and period bbopt reads, in one place.

Readers (platform files, SWF headers, Batsim ``nb_res``, decide states, generators, the
scheduling tick) check their magnitudes against these ranges at the edge, so that a value of
10^20 nodes or 10^12 jobs is an :class:`~bbopt.errors.InputError` naming the field instead of
an ``OverflowError`` deep inside, or an allocation of terabytes. The ranges are wide: each is at
least ten times the largest real value known (the largest machines have about 10^5 nodes, the
largest public traces about 10^7 jobs), so no real workload or machine meets them.

=====================  ==============================  ======================================
quantity               range                           why
=====================  ==============================  ======================================
nodes (machine, job)   1 .. 10^7                       the largest machines: ~1.6 x 10^5 nodes
jobs (trace, queue)    0 .. 10^8                       the largest public traces: ~10^7 jobs
bytes (BB, SSD)        0 .. 10^21 (1 ZB)               the largest file systems: ~10^18 B
bandwidth              0 .. 10^15 B/s (1 PB/s)         the fastest file systems: ~10^13 B/s
times, durations       0 .. 10^10 s (317 years)        Unix timestamps are ~2 x 10^9 s
scheduling tick        1 s .. 10^7 s                   traces have one-second resolution;
                                                       Slurm's shortest scheduling interval
polling (Slurm bridge) 0.01 s .. 10^7 s                a Slurm command takes ~10 ms
entities (shares)      1 .. 10^6                       one per user or account
=====================  ==============================  ======================================
"""

from __future__ import annotations

import math
import numbers
from typing import Any

from bbopt.errors import InputError

MAX_NODES = 10**7
MAX_JOBS = 10**8
MAX_BYTES = 1e21
MAX_BANDWIDTH = 1e15
MAX_SECONDS = 1e10
MIN_TICK = 1.0
MAX_TICK = 1e7
#: The shortest polling interval of a resource manager (a Slurm command takes ~10 ms).
MIN_POLL = 0.01
MAX_ENTITIES = 10**6
#: Parts a sweep may cut a workload into, and runs its grid may hold (beyond: a typo).
MAX_PARTS = 10**5
MAX_CELLS = 10**6


def check_count(value: Any, field: str, *, low: int = 1, high: int = MAX_NODES,
                source: str | None = None, line: int | str | None = None) -> int:
    """``value`` as an integer in ``[low, high]``, else an :class:`InputError` naming ``field``.

    Integral floats (``96.0``) and numpy integers are integers; booleans are not.
    """
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InputError(f"must be an integer, got {value!r}", source=source, line=line,
                         field=field)
    value = int(value)
    if not low <= value <= high:
        raise InputError(f"must be between {low:,} and {high:,}, got {magnitude(value)}",
                         source=source, line=line, field=field)
    return value


def count_from_text(text: str, field: str, **kw: Any) -> int:
    """An integer written in a text header (``"96"``), checked as :func:`check_count` does;
    a number too long to convert (Python refuses over 4,300 digits) is out of range too."""
    digits = text.strip()
    if len(digits.lstrip("-")) > 30:
        high = kw.get("high", MAX_NODES)
        raise InputError(f"must be between {kw.get('low', 1):,} and {high:,}, got a number of "
                         f"{len(digits.lstrip('-'))} digits", source=kw.get("source"),
                         line=kw.get("line"), field=field)
    try:
        value = int(digits)
    except ValueError:
        raise InputError(f"must be an integer, got {digits[:40]!r}", source=kw.get("source"),
                         line=kw.get("line"), field=field) from None
    return check_count(value, field, **kw)


def check_number(value: Any, field: str, *, low: float = 0.0, high: float,
                 low_open: bool = False, source: str | None = None,
                 line: int | str | None = None) -> float:
    """``value`` as a finite float in ``[low, high]`` (``(low, high]`` when ``low_open``)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InputError(f"must be a number, got {value!r}", source=source, line=line,
                         field=field)
    try:
        x = float(value)
    except OverflowError:  # an integer beyond any float
        x = math.inf
    if not (math.isfinite(x) and (x > low if low_open else x >= low) and x <= high):
        bracket = "(" if low_open else "["
        raise InputError(f"must be in {bracket}{low:g}, {high:g}], got {magnitude(value)}",
                         source=source, line=line, field=field)
    return x


def check_tick(tick: float | None, field: str = "tick") -> float | None:
    """A scheduling period in seconds within [:data:`MIN_TICK`, :data:`MAX_TICK`], or ``None``."""
    if tick is None:
        return None
    return check_number(tick, field, low=MIN_TICK, high=MAX_TICK)


def magnitude(value: Any) -> str:
    """A magnitude readable in one line (a 10^30 integer as ``1e+30``)."""
    if isinstance(value, int) and abs(value) >= 10**12:
        digits = int(abs(value).bit_length() * math.log10(2)) + 1
        return f"{float(value):.3g}" if digits < 300 else f"an integer of {digits} digits"
    return repr(value)

"""Resource quantities in text form: ``"480GB"`` -> 4.8e11 bytes, ``"18 MB/s"`` -> 1.8e7 bytes/s
(and back, for messages), as readers, topology formats and the CLI turn user text into the SI
values used everywhere else. (Availability profiles are in :mod:`bbopt.planner`.)
"""

from __future__ import annotations

import math
import re
from typing import Any

from bbopt.errors import InputError

_SIZE_UNITS = {
    "": 1.0, "b": 1.0,
    "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15,
    "kib": 1024.0, "mib": 1024.0**2, "gib": 1024.0**3, "tib": 1024.0**4, "pib": 1024.0**5,
}
_QTY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_bytes(value: str | float, field: str = "bytes") -> float:
    """``"480GB"``, ``"1.5 TiB"`` or a plain number of bytes."""
    return parse_quantity(value, _SIZE_UNITS, field)


def parse_quantity(value: str | float, units: dict[str, float], field: str) -> float:
    """``value`` (a number, or a number and one of ``units``) in the base unit of ``units``."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:  # an integer past any float (10^400): out of every range
            raise InputError(f"is too large: an integer of about "
                             f"{int(value.bit_length() * math.log10(2)) + 1} digits",
                             field=field) from None
    m = _QTY.match(str(value))
    if not m or m.group(2).lower() not in units:
        raise InputError(f"cannot read {value!r}; use a number with a unit among "
                         f"{', '.join(u for u in units if u)}", field=field)
    return float(m.group(1)) * units[m.group(2).lower()]

RATE_UNITS = {"b/s": 1.0, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "tb/s": 1e12,
              "kib/s": 1024.0, "mib/s": 1024.0**2, "gib/s": 1024.0**3, "tib/s": 1024.0**4,
              "bps": 1.0}


def parse_bandwidth(value: Any, field: str = "bandwidth") -> float:
    """``"216 GB/s"``, ``"18MB/s"``, ``"inf"``, ``None`` (inf) or a number of bytes/s."""
    if value is None:
        return math.inf
    if isinstance(value, bool):
        raise InputError(f"cannot read {value!r} as a bandwidth", field=field)
    if isinstance(value, int | float):
        out = float(value)
    else:
        text = str(value).strip().lower().replace(" ", "")
        if text in ("inf", "infinite", "infinity", "unlimited"):
            return math.inf
        if text.endswith("/s"):
            text = text[:-2]
        out = parse_bytes(text, field)
    if not (out > 0):
        raise InputError(f"bandwidth must be positive, got {value!r}", field=field)
    return out


def format_bandwidth(x: float) -> str:
    """``2.16e11`` -> ``"216 GB/s"``, for messages."""
    if not math.isfinite(x):
        return "inf"
    for unit, f in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if abs(x) >= f:
            return f"{x / f:.4g} {unit}"
    return f"{x:.4g} B/s"

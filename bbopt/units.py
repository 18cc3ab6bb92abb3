"""Quantities with units at the edges: ``"480GB"`` -> 4.8e11 bytes, ``"2h"`` -> 7200 s,
``"18 MB/s"`` -> 1.8e7 bytes/s, and YAML/JSON documents read with errors that name the file.

Everything inside bbopt is SI (seconds, bytes, bytes/s); these functions are where user text
becomes those values. A leaf module: it imports nothing of bbopt but its errors.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from bbopt.errors import InputError

_SIZE_UNITS = {
    "": 1.0, "b": 1.0,
    "kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12, "pb": 1e15,
    "kib": 1024.0, "mib": 1024.0**2, "gib": 1024.0**3, "tib": 1024.0**4, "pib": 1024.0**5,
}
_TIME_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_QTY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_bytes(value: str | float, field: str = "bytes") -> float:
    """``"480GB"``, ``"1.5 TiB"`` or a plain number of bytes."""
    return _parse(value, _SIZE_UNITS, field)


def parse_seconds(value: str | float, field: str = "seconds") -> float:
    """``"90s"``, ``"10min"``, ``"2h"`` or a plain number of seconds."""
    return _parse(value, _TIME_UNITS, field)


def _parse(value: str | float, units: dict[str, float], field: str) -> float:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
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


#: Nesting deeper than this in a document is refused (no description of a machine needs it).
MAX_DEPTH = 200


def read_document(path: str | Path) -> Any:
    """The content of a YAML (``.yaml``, ``.yml``) or JSON file; errors name the file.

    A YAML alias that refers to a node containing it (``a: &x [*x]``) makes a cyclic structure
    that every later walk would follow forever: it is refused here, as is nesting deeper than
    :data:`MAX_DEPTH` and text that is not UTF-8.
    """
    path = Path(path)
    if path.is_dir():
        raise InputError("is a directory, not a file", source=str(path))
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", source=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        else:
            data = json.loads(text)
    except RecursionError:
        raise InputError(f"nested deeper than {MAX_DEPTH} levels", source=str(path)) from None
    except Exception as exc:  # the parsers' errors carry a position in their message
        msg = " ".join(str(exc).split())
        raise InputError(f"cannot read: {msg}", source=str(path)) from None
    check_acyclic(data, str(path))
    return data


def check_acyclic(data: Any, source: str) -> None:
    """Refuse a document that contains itself (a YAML alias cycle) or nests too deeply.

    Shared subtrees (the same alias used twice) are fine; only a container that is its own
    ancestor is an error. The walk is iterative, so it cannot overflow the stack either.
    """
    on_path: set[int] = set()
    done: set[int] = set()
    stack: list[tuple[Any, str, bool]] = [(data, "$", True)]
    depth = 0
    while stack:
        node, where, enter = stack.pop()
        if not enter:
            on_path.discard(id(node))
            done.add(id(node))
            depth -= 1
            continue
        if not isinstance(node, dict | list) or id(node) in done:
            continue  # a shared subtree is checked once (no exponential walk of aliases)
        if id(node) in on_path:
            raise InputError("contains itself (a YAML alias cycle)", source=source, line=where)
        depth += 1
        if depth > MAX_DEPTH:
            raise InputError(f"nested deeper than {MAX_DEPTH} levels", source=source, line=where)
        on_path.add(id(node))
        stack.append((node, where, False))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for k, v in items:
            if isinstance(v, dict | list):
                stack.append((v, f"{where}.{k}" if isinstance(node, dict) else f"{where}[{k}]",
                              True))

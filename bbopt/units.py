"""Text at the edges: durations (``"2h"`` -> 7200 s, ``"15d"``), ``KEY=VALUE`` options and
YAML/JSON documents read with errors that name the file.

Everything inside bbopt is SI (seconds, bytes, bytes/s). Resource quantities (``"480GB"``,
``"18 MB/s"``) are read by :func:`bbopt.resources.parse_bytes` and
:func:`bbopt.resources.parse_bandwidth`, which the topology formats use too; this module is the
part of the edge that the domain layers never need.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bbopt.errors import (
    MAX_DEPTH,
    InputError,
    UniqueKeys,
    check_acyclic,
    unique_key_yaml_loader,
)
from bbopt.resources import parse_quantity

_TIME_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def parse_seconds(value: str | float, field: str = "seconds") -> float:
    """``"90s"``, ``"10min"``, ``"2h"`` or a plain number of seconds."""
    return parse_quantity(value, _TIME_UNITS, field)


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
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"not UTF-8 text (byte {exc.start})", source=str(path)) from None
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", source=str(path)) from None
    hook = UniqueKeys()  # (a JSON object that repeats a key is refused, naming it)
    try:
        if path.suffix in (".yaml", ".yml"):
            import yaml

            data = yaml.load(text, Loader=unique_key_yaml_loader())  # (safe, keys once)
        else:
            import json  # (json only when a document or an option is read)

            data = json.loads(text, object_pairs_hook=hook)
    except RecursionError:
        raise InputError(f"nested deeper than {MAX_DEPTH} levels", source=str(path)) from None
    except Exception as exc:  # the parsers' errors carry a position in their message
        msg = " ".join(str(exc).split())
        raise InputError(f"cannot read: {msg}", source=str(path)) from None
    hook.check(data, str(path))
    check_acyclic(data, str(path))
    return data


def parse_options(pairs: list[str], field: str = "-o") -> dict[str, Any]:
    """``KEY=VALUE`` pairs of the command line as options: values are JSON when they parse
    (``3``, ``true``, ``[1, 2]``), text otherwise; dashes in keys become underscores."""
    out: dict[str, Any] = {}
    for pair in pairs:
        import json

        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"option {pair!r} is not KEY=VALUE", field=field)
        try:
            out[key.strip().replace("-", "_")] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip().replace("-", "_")] = value
    return out

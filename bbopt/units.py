"""Text at the edges: durations (``"2h"`` -> 7200 s, ``"15d"``), ``KEY=VALUE`` options,
YAML/JSON documents read with errors that name the file, and the one option vocabulary: a
policy's, backend's, execution model's or generator's options are its constructor's keyword
parameters, their kinds and units declared in the annotations (``Annotated[float, Bytes]``), and
:func:`check_options` reads and checks them for ``-o``, ``--execution NAME:KEY=VALUE``, sweep
specifications and :func:`bbopt.decide` alike.

Everything inside bbopt is SI (seconds, bytes, bytes/s). Resource quantities (``"480GB"``,
``"18 MB/s"``) are read by :func:`bbopt.resources.parse_bytes` and
:func:`bbopt.resources.parse_bandwidth`, which the topology formats use too; this module is the
part of the edge that the domain layers never need.
"""

from __future__ import annotations

import inspect
import math
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin, get_type_hints

from bbopt.errors import (
    MAX_DEPTH,
    InputError,
    UniqueKeys,
    check_acyclic,
    unique_key_yaml_loader,
)
from bbopt.limits import magnitude
from bbopt.resources import parse_bandwidth, parse_bytes, parse_quantity

_TIME_UNITS = {"": 1.0, "ms": 1e-3, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


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
    check_expansion(data, str(path))
    return data


#: A document whose YAML aliases expand to more values than this is refused: no platform,
#: shares file or sweep specification has as many, and walking or printing it would not end.
MAX_EXPANDED = 1_000_000


def check_expansion(data: Any, source: str, limit: int = MAX_EXPANDED) -> None:
    """Refuse a document (acyclic: :func:`~bbopt.errors.check_acyclic`) whose shared subtrees
    (YAML aliases, ``a: &x [*y, *y]`` nested) expand past ``limit`` values: each shared subtree
    is counted once and weighted by its uses, so the check takes the document's own size."""
    sizes: dict[int, int] = {}
    stack: list[tuple[Any, bool]] = [(data, True)]
    while stack:
        node, enter = stack.pop()
        if not isinstance(node, dict | list) or id(node) in sizes:
            continue
        children = list(node.values()) if isinstance(node, dict) else node
        if enter:
            stack.append((node, False))
            stack.extend((c, True) for c in children if isinstance(c, dict | list))
            continue
        total = 1 + sum(sizes.get(id(c), 1) for c in children)
        if isinstance(node, dict):
            total += len(node)  # the keys
        if total > limit:
            raise InputError(f"expands (through YAML aliases) to more than {limit:,} values",
                             source=source)
        sizes[id(node)] = total
    if isinstance(data, dict | list) and sizes.get(id(data), 0) > limit:
        raise InputError(f"expands to more than {limit:,} values", source=source)


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


# --------------------------------------------------------------------------------------------
# options: declared once in a constructor's signature, read and checked by one function


@dataclass(frozen=True)
class Unit:
    """The unit of an option, declared in its annotation (``Annotated[float, Bytes]``): a value
    given as text with a unit (``"64GB"``) is read into SI by ``parse``."""

    name: str
    parse: Callable[[Any, str], float]


Bytes = Unit("bytes", parse_bytes)
Bandwidth = Unit("bytes/s", parse_bandwidth)
Seconds = Unit("seconds", parse_seconds)


_KIND_NAMES = {int: "an integer", float: "a number", bool: "true/false", str: "text",
               type(None): "null"}


def _kinds(tp: Any) -> tuple[set[type] | None, Unit | None]:
    """The plain kinds a type annotation allows (``None``: not checked here) and its unit."""
    origin = get_origin(tp)
    if origin is Annotated:
        base, *meta = get_args(tp)
        kinds, _ = _kinds(base)
        return kinds, next((m for m in meta if isinstance(m, Unit)), None)
    if origin is Union or origin is UnionType:
        out: set[type] = set()
        unit = None
        for arg in get_args(tp):
            kinds, u = _kinds(arg)
            if kinds is None:
                return None, unit or u
            out |= kinds
            unit = unit or u
        return out, unit
    if tp is None:
        return {type(None)}, None
    if tp in _KIND_NAMES:
        return {tp}, None
    return None, None


@lru_cache(maxsize=512)
def option_parameters(target: Callable[..., Any]) -> dict[str, inspect.Parameter]:
    """The keyword parameters of ``target`` (a class: its constructor) with their annotations
    resolved (``Annotated`` units kept); a ``**kwargs`` parameter is under ``"**"``."""
    sig = inspect.signature(target)
    try:
        hints = get_type_hints(target.__init__ if isinstance(target, type) else target,
                               include_extras=True)
    except Exception:  # an annotation this interpreter cannot resolve: checked as written
        hints = {}
    out = {}
    for key, p in sig.parameters.items():
        if p.kind is p.VAR_KEYWORD:
            out["**"] = p
        elif p.kind is not p.VAR_POSITIONAL:
            out[key] = p.replace(annotation=hints.get(key, p.annotation))
    return out


def check_options(target: Callable[..., Any], options: Mapping[str, Any], *, what: str,
                  fixed: Mapping[str, Any] | None = None, prefix: str = "",
                  name_prefix: str | None = None) -> dict[str, Any]:
    """``options`` for ``target`` (a policy's, backend's, execution model's or generator's
    constructor) read and checked against its signature: unknown keys, options fixed by a
    registered name, values of the wrong kind (judged from the annotation, else the default's
    type) and quantities with units (``"64GB"``, ``"10MB/s"``, ``"2h"`` for an option annotated
    ``Annotated[float, Bytes]`` etc.) read into SI. Errors name ``what`` and the field
    (``prefix`` + key, e.g. ``"-o "`` or ``"policies[0].options."``; an unknown or fixed key
    with ``name_prefix`` instead when given)."""
    params = option_parameters(target)
    fixed = fixed or {}
    out: dict[str, Any] = {}
    for key, value in options.items():
        where = f"{prefix}{key}"
        named = where if name_prefix is None else f"{name_prefix}{key}"
        if key in fixed:
            raise InputError(f"option {key!r} is fixed by the name of {what}", field=named)
        param = params.get(key)
        if param is None or key == "name":
            if "**" in params and key != "name":
                out[key] = value
                continue
            allowed = sorted(k for k in params if k not in fixed and k not in ("name", "**"))
            raise InputError(f"{what} has no option {key!r}; its options: "
                             f"{', '.join(allowed) or 'none'}", field=named)
        out[key] = _checked(what, where, value, param)
    return out


def _checked(what: str, where: str, value: Any, param: inspect.Parameter) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"{what} needs a finite number, got {value!r}", field=where)
    if param.name == "seed" and isinstance(value, int) and value < 0:
        raise InputError(f"a seed must be an integer >= 0, got {value}", field=where)
    ann = param.annotation
    kinds, unit = (None, None) if ann is param.empty or isinstance(ann, str) else _kinds(ann)
    if unit is not None and isinstance(value, str):
        return unit.parse(value, where)
    if kinds is None:
        d = param.default
        if ann is not param.empty or d is param.empty or d is None \
                or not isinstance(d, bool | int | float | str):
            return value  # a type this check does not know (a callable, a sequence)
        kinds = {bool} if isinstance(d, bool) else {float} if isinstance(d, int | float) \
            else {str}
    allowed = set(kinds)
    if float in allowed:
        allowed.add(int)
        if isinstance(value, str) and str not in kinds:
            value = _number_text(value, value)  # YAML reads 18e6 as text
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, tuple(allowed)):
        want = " or ".join(dict.fromkeys(_KIND_NAMES[k] for k in kinds))
        unit_note = f" (or text with a unit of {unit.name})" if unit is not None else ""
        raise InputError(f"{what} needs {want}{unit_note}, got {value!r}", field=where)
    if float in kinds and int not in kinds and isinstance(value, int) \
            and not isinstance(value, bool) and abs(value) > _FLOAT_MAX:
        raise InputError(f"{what} needs a finite number, got {magnitude(value)}", field=where)
    return value


#: The largest finite float: an integer above it (a JSON integer of 400 digits) has no float.
_FLOAT_MAX = sys.float_info.max


def _number_text(text: str, default: Any) -> Any:
    """``text`` as a finite number when it is one (``"18e6"``), else ``default``."""
    try:
        out = float(text)
    except ValueError:
        return default
    return out if math.isfinite(out) else default

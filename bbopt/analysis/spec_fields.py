"""Typed reads of a sweep specification's fields: each value is checked for its kind, shape and
range where it is read, and an error names the spec and the field's path
(``platforms[0].nodes``, ``workloads.kth.split.parts``), as every other input of bbopt does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bbopt.errors import InputError
from bbopt.limits import magnitude
from bbopt.units import parse_seconds


class Fields:
    """The readers of one specification (``source`` names it in errors)."""

    def __init__(self, source: str) -> None:
        self.source = source

    def error(self, message: str, where: str) -> InputError:
        """An error at ``where`` (``""``: the document itself, named by the spec alone)."""
        return InputError(message, source=self.source, field=where or None)

    def mapping(self, value: Any, where: str, *, keys: set[str] | None = None
                ) -> dict[str, Any]:
        """A mapping (``None``: empty) whose keys are text and, with ``keys``, among them."""
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise self.error(f"must be a mapping, got {_kind(value)}", where)
        for k in value:
            if not isinstance(k, str):
                raise self.error(f"keys must be text, got {k!r}", where)
        if keys is not None:
            unknown = sorted(set(value) - keys)
            if unknown:
                raise self.error(f"unknown key; known: {', '.join(sorted(keys))}",
                                 f"{where}.{unknown[0]}" if where else unknown[0])
        return dict(value)

    def items(self, value: Any, where: str, *, empty: bool = True) -> list[Any]:
        """A list (``None``: empty; a single value that is not a list: a list of it)."""
        if value is None:
            out: list[Any] = []
        elif isinstance(value, list | tuple):
            out = list(value)
        elif isinstance(value, Mapping):
            raise self.error("must be a list, got a mapping", where)
        else:
            out = [value]
        if not out and not empty:
            raise self.error("must not be empty", where)
        return out

    def text(self, value: Any, where: str) -> str:
        """Text (a number is accepted as its text, as YAML reads ``name: 2019``)."""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.error(f"must be text, got {_kind(value)}", where)
        return str(value)

    def integer(self, value: Any, where: str, *, least: int = 0,
                most: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"must be an integer, got {_kind(value)}", where)
        if value < least:
            raise self.error(f"must be >= {least}, got {value}", where)
        if most is not None and value > most:
            raise self.error(f"must be <= {most:,}, got {magnitude(value)}", where)
        return value

    def number(self, value: Any, where: str, *, positive: bool = False) -> float:
        """A finite number, at least 0 (above 0 with ``positive``): an integer too large for a
        float, or an infinity, is refused here like any other value out of range."""
        if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
            raise self.error(f"must be a number, got {_kind(value)}", where)
        if value < 0 or (positive and value == 0):
            raise self.error(f"must be {'> 0' if positive else '>= 0'}, got {magnitude(value)}",
                             where)
        try:
            out = float(value)
        except OverflowError:
            out = math.inf
        if out == math.inf:
            raise self.error(f"must be a finite number, got {magnitude(value)}", where)
        return out

    def seconds(self, value: Any, where: str, *, positive: bool = False) -> float:
        """A duration: seconds or text with a unit (``15d``)."""
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise self.error(f"must be a duration (seconds, or text like 15d), got "
                             f"{_kind(value)}", where)
        try:
            out = parse_seconds(value, where)
        except InputError as exc:
            raise self.error(exc.reason, where) from None
        if not out == out or out < 0 or (positive and out == 0) or out == float("inf"):
            raise self.error(f"must be a finite duration {'> 0' if positive else '>= 0'}, "
                             f"got {value!r}", where)
        return out


def _kind(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, bool):
        return f"{value!r} (true/false)"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."

"""One registry class for everything chosen by name: policies, solver backends, execution models
(and the readers and generators that declare themselves the same way), found lazily by module
name, with their ``about`` text and their options read from the constructor's signature
(:func:`bbopt.units.option_parameters`), and user plug-ins.

A built-in entry is declared by the module that defines it (imported when the name is first
asked for, so ``import bbopt`` imports no solver); a plug-in is found through a Python entry
point of the registry's group (``[project.entry-points."bbopt.policies"]``: ``name =
"package.module:Object"``) or by importing its module (``--plugin module`` on the command line,
``plugins:`` in a sweep specification), whose registrations then run. What a registry needs of
an entry is checked when it is registered, with a message naming what is missing, so an
incomplete plug-in is refused at once rather than failing inside a run.

A name ending in ``:`` registers a family: ``"rl:"`` answers ``"rl:path/model.zip"``, whose
object is given the whole name (a trained agent read from that file).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from bbopt.errors import InputError, UnknownNameError

__all__ = ["Entry", "Registry", "load_plugins"]


@dataclass(frozen=True)
class Entry:
    """One registered name: the object (a class or a function), a one-line description and the
    options its name fixes."""

    name: str
    obj: Any
    about: str = ""
    fixed: dict[str, Any] = field(default_factory=dict)

    def options(self) -> dict[str, Any]:
        """The options the name accepts with their defaults (``inspect.Parameter.empty`` when
        required; ``"**"`` when it takes any keyword); options fixed by the name left out."""
        from bbopt.units import option_parameters

        out: dict[str, Any] = {}
        for key, param in option_parameters(self.obj).items():
            if key == "**":
                out["**"] = param.empty
            elif key != "name" and key not in self.fixed:
                out[key] = param.default
        return out


class Registry:
    """Names of one kind (``kind``: ``"policy"``, ``"execution model"``...), each an
    :class:`Entry`, registered now (:meth:`add`) or declared to be found in a module
    (:meth:`declare`, imported on first use), and the plug-ins of the entry-point ``group``.
    ``check(name, obj)`` refuses an incomplete entry with an :class:`InputError`."""

    def __init__(self, kind: str, group: str | None = None,
                 check: Callable[[str, Any], None] | None = None) -> None:
        self.kind = kind
        self.group = group
        self.check = check
        self._entries: dict[str, Entry] = {}
        self._declared: dict[str, str] = {}  # name -> module (or "module:attribute")
        self._plugins: dict[str, Any] | None = None  # entry points of the group, by name

    # -- registering ----------------------------------------------------------------------------
    def add(self, name: str, obj: Any, about: str | None = None, **fixed: Any) -> Any:
        """Register ``obj`` under ``name`` (checked); ``about`` defaults to the first line of its
        docstring; ``fixed`` are options the name sets."""
        if not isinstance(name, str) or not name:
            raise InputError(f"a {self.kind} name must be non-empty text, got {name!r}")
        if self.check is not None:
            self.check(name, obj)
        doc = inspect.getdoc(obj) or ""
        self._entries[name] = Entry(name, obj, about or (doc.splitlines()[0] if doc else ""),
                                    dict(fixed))
        return obj

    def register(self, name: str, about: str | None = None, **fixed: Any) -> Callable:
        """Decorator form of :meth:`add`."""

        def wrap(obj: Any) -> Any:
            return self.add(name, obj, about, **fixed)

        return wrap

    def remove(self, name: str) -> None:
        """Forget the registered entry ``name`` (a declared one is found again on use)."""
        self._entries.pop(name, None)

    def declare(self, where: dict[str, str | tuple[str, ...]]) -> None:
        """Declare names found on first use: ``{"module": ("name", ...)}`` (the module registers
        them when imported) or ``{"name": "module:attribute"}`` (the attribute, or the package's
        submodule of that name, is the entry)."""
        for key, value in where.items():
            if isinstance(value, str):
                self._declared[key] = value
            else:
                for name in value:
                    self._declared[name] = key

    # -- finding -----------------------------------------------------------------------------
    def get(self, name: str) -> Entry:
        """The entry of ``name``: registered, declared (imported now) or a plug-in's."""
        if name in self._entries:
            return self._entries[name]
        if name in self._declared:
            self._import(name, self._declared[name])
        elif name in self._entry_points():
            self._load_entry_point(name)
        if name not in self._entries:
            family = self._family(name)
            if family is not None:
                return family
            self.load_all()  # (a name declared in the wrong module's list is still found)
        if name not in self._entries:
            raise UnknownNameError(self.kind, name, list(self._entries))
        return self._entries[name]

    def _family(self, name: str) -> Entry | None:
        """A name of a family (``"rl:model.zip"``, whose entry is registered as ``"rl:"``): the
        family's entry under the whole name (its object reads the rest of the name), or
        ``None``."""
        prefix, colon, rest = name.partition(":")
        if not colon or not rest or f"{prefix}:" not in self:
            return None
        entry = self.get(f"{prefix}:")
        return Entry(name, entry.obj, entry.about, entry.fixed)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        if name in self._entries or name in self._declared or name in self._entry_points():
            return True
        prefix, colon, rest = name.partition(":")
        return bool(colon and rest) and f"{prefix}:" in self

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __getitem__(self, name: str) -> Any:
        """The registered object of ``name`` (a mapping of names to objects)."""
        return self.get(name).obj

    def known(self) -> list[str]:
        """Every name, without importing anything (registered, declared, plug-ins')."""
        return sorted({*self._entries, *self._declared, *self._entry_points()})

    def names(self) -> list[str]:
        """Every name, built-in and plug-in (imports every declared module)."""
        self.load_all()
        return sorted(self._entries)

    def load_all(self) -> None:
        for name, where in list(self._declared.items()):
            if name not in self._entries:
                self._import(name, where)
        for name in self._entry_points():
            if name not in self._entries:
                self._load_entry_point(name)

    def _import(self, name: str, where: str) -> None:
        module, _, attribute = where.partition(":")
        loaded = importlib.import_module(module)
        if attribute and name not in self._entries:
            if not hasattr(loaded, attribute):  # (a submodule of a package, not yet imported)
                importlib.import_module(f"{module}.{attribute}")
            self.add(name, getattr(loaded, attribute))

    def _entry_points(self) -> dict[str, Any]:
        if self._plugins is None:
            self._plugins = {}
            if self.group is not None:
                from importlib.metadata import entry_points

                self._plugins = {ep.name: ep for ep in entry_points(group=self.group)}
        return self._plugins

    def _load_entry_point(self, name: str) -> None:
        ep = self._entry_points()[name]
        try:
            obj = ep.load()
        except Exception as exc:  # a broken plug-in: say which, do not hide the others
            raise InputError(f"the {self.kind} plug-in {name!r} ({ep.value}) does not load: "
                             f"{type(exc).__name__}: {exc}", field=self.group) from None
        if name not in self._entries and not inspect.ismodule(obj):
            self.add(name, obj)  # (a module entry point registers its own names)


def load_plugins(modules: list[str] | tuple[str, ...], where: str = "--plugin") -> None:
    """Import each plug-in module (its registrations run); an error names the module."""
    for k, module in enumerate(modules):
        if not isinstance(module, str) or not module.strip():
            raise InputError(f"a plug-in is a module name, got {module!r}", field=where)
        try:
            importlib.import_module(module.strip())
        except ImportError as exc:
            raise InputError(f"cannot import plug-in {module!r}: {exc}",
                             field=where if len(modules) == 1 else f"{where}[{k}]") from None

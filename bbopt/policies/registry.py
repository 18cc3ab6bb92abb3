"""The registry of scheduling policies, by name.

A policy is a small object built from options (``make_policy("sjf-bb")``) whose
``decide(state) -> Decision`` is a pure function of the :class:`~bbopt.core.ClusterState`: what it
must remember between calls travels in ``state.memory`` and ``Decision.memory``. New policies
register with :func:`register`, as scikit-learn estimators share one interface under many names;
bbopt's own are imported, and so registered, by :mod:`bbopt.policies` (its explicit list).
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from bbopt.core import ClusterState, Decision
from bbopt.errors import InputError, UnknownNameError


@runtime_checkable
class Policy(Protocol):
    """What the engine and :func:`bbopt.decide` need of a policy.

    ``io_aware`` declares that its starts name nodes that keep every link of the platform's I/O
    tree within its bandwidth; the engine then enforces bandwidth as it enforces nodes and BB.
    An optional ``idle_unless_fits = True`` declares that the decision is empty (no start, no
    preemption, no memory) whenever no waiting job fits the free nodes and BB; the engine then
    does not ask at such events (:mod:`bbopt.simulation.engine`).
    """

    name: str
    io_aware: bool

    def decide(self, state: ClusterState) -> Decision: ...


_REGISTRY: dict[str, tuple[Callable[..., Policy], dict[str, Any], str]] = {}
#: The built-in policy modules and the names each registers (:mod:`bbopt.policies` declares
#: them); a module is imported when one of its names is first asked for.
_BUILTIN: dict[str, tuple[str, ...]] = {}


def declare_builtin(modules: dict[str, tuple[str, ...]]) -> None:
    """Declare policy modules (module name -> the policy names it registers), imported on the
    first use of one of their names."""
    _BUILTIN.update(modules)


def _load(name: str | None = None) -> None:
    """Import the module that registers ``name`` (every declared module when ``name`` is None
    or is not declared), unless it is registered already."""
    if name is not None and name in _REGISTRY:
        return
    for module, names in _BUILTIN.items():
        if name is not None and name in names:
            importlib.import_module(module)
            if name in _REGISTRY:
                return
    for module in _BUILTIN:
        importlib.import_module(module)


def register(name: str, about: str | None = None, **defaults: Any) -> Callable:
    """Class decorator: register ``cls`` under ``name``; ``defaults`` are fixed options.

    The same class can be registered under several names with different defaults (``fcfs-bb``
    and ``sjf-bb`` are one EASY class); ``about`` says in one line what the name does (default:
    the first line of the class docstring).
    """

    def wrap(cls: Callable[..., Policy]) -> Callable[..., Policy]:
        doc = inspect.getdoc(cls) or ""
        summary = about or (doc.splitlines()[0] if doc else "")
        _REGISTRY[name] = (cls, dict(defaults), summary)
        return cls

    return wrap


def available_policies() -> dict[str, str]:
    """Registered policy names with a one-line description each."""
    _load()
    return {name: summary for name, (_, _, summary) in sorted(_REGISTRY.items())}


def policy_options(name: str) -> dict[str, Any]:
    """The options policy ``name`` accepts, each with its default (``inspect.Parameter.empty``
    when it has none); options fixed by the name are left out. A policy that takes any keyword
    has the key ``"**"``.

    >>> sorted(policy_options("conservative-bb"))
    ['compiled', 'depth']
    """
    _load(name)
    if name not in _REGISTRY:
        raise UnknownNameError("policy", name, list(_REGISTRY))
    cls, fixed, _ = _REGISTRY[name]
    out: dict[str, Any] = {}
    for key, param in inspect.signature(cls).parameters.items():
        if param.kind is param.VAR_KEYWORD:
            out["**"] = param.empty
        elif key != "name" and key not in fixed and param.kind is not param.VAR_POSITIONAL:
            out[key] = param.default
    return out


def make_policy(name: str | Policy, **options: Any) -> Policy:
    """Build the policy registered as ``name`` with ``options``; a policy object passes through."""
    if not isinstance(name, str):
        if options:
            raise InputError("options are given to make_policy only with a policy name")
        if not isinstance(name, Policy):
            raise InputError(f"{type(name).__name__} is not a policy: it needs a name, an "
                             "io_aware flag and decide(state)", field="policy")
        return name
    _load(name)
    if name not in _REGISTRY:
        raise UnknownNameError("policy", name, list(_REGISTRY))
    cls, defaults, _ = _REGISTRY[name]
    params = inspect.signature(cls).parameters
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for key in options:
        if key not in params and not accepts_any:
            allowed = sorted(k for k in params if k not in defaults and k != "name")
            raise InputError(f"policy {name!r} has no option {key!r}; its options: "
                             f"{', '.join(allowed) or 'none'}", field=key)
        if key in defaults:
            raise InputError(f"option {key!r} is fixed by the policy name {name!r}", field=key)
        if key in params:
            _check_type(name, key, options[key], params[key])
    try:
        return cls(name=name, **defaults, **options)
    except (TypeError, ValueError) as exc:  # the constructor's own checks of option values
        if isinstance(exc, InputError):
            if exc.field in options and exc.source is None and exc.line is None:
                raise InputError(f"policy {name!r}: {exc.reason}", field=f"-o {exc.field}") \
                    from None  # an option the constructor refused: name it as given
            raise
        first = next(iter(options), None)
        raise InputError(f"policy {name!r}: {exc}",
                         field=f"-o {first}" if first else None) from None


_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "bool": (bool,),
                                       "str": (str,), "None": (type(None),)}


def _check_type(policy: str, key: str, value: Any, param: inspect.Parameter) -> None:
    """Refuse an option value of the wrong kind (``-o depth=abc``), judged from the
    constructor's annotation (``int | None``) or, without one, the default's type."""
    if isinstance(value, float) and not math.isfinite(value):
        raise InputError(f"policy {policy!r} needs a finite number, got {value!r}",
                         field=f"-o {key}")
    if key == "seed" and isinstance(value, int) and value < 0:
        raise InputError(f"a seed must be an integer >= 0, got {value}", field=f"-o {key}")
    ann = param.annotation
    names = [t.strip() for t in ann.split("|")] if isinstance(ann, str) else []
    if any(t not in _TYPES for t in names):
        return  # a type this check does not know (a callable, a sequence): the policy checks
    if not names:
        d = param.default
        if d is param.empty or d is None or not isinstance(d, bool | int | float | str):
            return
        names = ["bool" if isinstance(d, bool) else "float" if isinstance(d, int | float)
                 else "str"]
    allowed = tuple(t for n in names for t in _TYPES[n])
    if (isinstance(value, bool) and "bool" not in names) or not isinstance(value, allowed):
        want = " or ".join({"int": "an integer", "float": "a number", "bool": "true/false",
                            "str": "text", "None": "null"}[n] for n in names)
        raise InputError(f"policy {policy!r} needs {want}, got {value!r}", field=f"-o {key}")

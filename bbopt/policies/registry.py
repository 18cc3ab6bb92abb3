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
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from bbopt.core import ClusterState, Decision
from bbopt.errors import InputError, UnknownNameError
from bbopt.units import check_options


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
    options = check_options(cls, options, what=f"policy {name!r}", fixed=defaults, prefix="-o ")
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

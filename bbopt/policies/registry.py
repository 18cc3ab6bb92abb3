"""The registry of scheduling policies, by name.

A policy is a small object built from options (``make_policy("sjf-bb")``) whose
``decide(state) -> Decision`` is a pure function of the :class:`~bbopt.core.ClusterState`: what it
must remember between calls travels in ``state.memory`` and ``Decision.memory``. New policies
register with :func:`register`, as scikit-learn estimators share one interface under many names;
bbopt's own are imported, and so registered, by :mod:`bbopt.policies` (its explicit list).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from bbopt.core import ClusterState, Decision
from bbopt.errors import InputError, UnknownNameError


@runtime_checkable
class Policy(Protocol):
    """What the engine and :func:`bbopt.decide` need of a policy.

    ``io_aware`` declares that its starts name nodes that keep every link of the platform's I/O
    tree within its bandwidth; the engine then enforces bandwidth as it enforces nodes and BB.
    """

    name: str
    io_aware: bool

    def decide(self, state: ClusterState) -> Decision: ...


_REGISTRY: dict[str, tuple[Callable[..., Policy], dict[str, Any], str]] = {}


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
    return {name: summary for name, (_, _, summary) in sorted(_REGISTRY.items())}


def policy_options(name: str) -> dict[str, Any]:
    """The options policy ``name`` accepts, each with its default (``inspect.Parameter.empty``
    when it has none); options fixed by the name are left out. A policy that takes any keyword
    has the key ``"**"``.

    >>> sorted(policy_options("conservative-bb"))
    ['depth']
    """
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
    return cls(name=name, **defaults, **options)

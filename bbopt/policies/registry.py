"""The registry of scheduling policies, by name.

A policy is a small object built from options (``make_policy("sjf-bb")``) whose
``decide(state) -> Decision`` is a pure function of the :class:`~bbopt.core.ClusterState`: what it
must remember between calls travels in ``state.memory`` and ``Decision.memory``. New policies
register with :func:`register`, as scikit-learn estimators share one interface under many names;
bbopt's own are imported, and so registered, by :mod:`bbopt.policies` (its explicit list).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from bbopt.core import ClusterState, Decision
from bbopt.errors import InputError
from bbopt.registry import Registry
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


def _complete(name: str, cls: Any) -> None:
    """Refuse a policy class that lacks what the engine and :func:`bbopt.decide` use."""
    missing = []
    if not callable(getattr(cls, "decide", None)):
        missing.append("decide(state) -> Decision")
    if not isinstance(getattr(cls, "io_aware", None), bool):
        missing.append("io_aware (a class attribute, True or False: whether its starts keep "
                       "every link of the I/O tree within its bandwidth)")
    if not callable(cls):
        missing.append("a constructor taking the options")
    if missing:
        where = f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', cls)}"
        raise InputError(f"policy {name!r} ({where}) is missing " + "; ".join(missing),
                         field="policy")


#: Every policy by name: bbopt's own (declared by :mod:`bbopt.policies`, imported on first use)
#: and plug-ins (entry points of the group ``bbopt.policies``, or a module that registers).
POLICIES = Registry("policy", group="bbopt.policies", check=_complete)


def declare_builtin(modules: dict[str, tuple[str, ...]]) -> None:
    """Declare policy modules (module name -> the policy names it registers), imported on the
    first use of one of their names."""
    POLICIES.declare(modules)


def register(name: str, about: str | None = None, **defaults: Any) -> Callable:
    """Class decorator: register ``cls`` under ``name``; ``defaults`` are fixed options.

    The same class can be registered under several names with different defaults (``fcfs-bb``
    and ``sjf-bb`` are one EASY class); ``about`` says in one line what the name does (default:
    the first line of the class docstring). A class without ``decide`` or a boolean
    ``io_aware`` is refused here, with a message naming what is missing.
    """
    return POLICIES.register(name, about, **defaults)


def available_policies() -> dict[str, str]:
    """Registered policy names with a one-line description each."""
    return {name: POLICIES.get(name).about for name in POLICIES.names()}


def policy_options(name: str) -> dict[str, Any]:
    """The options policy ``name`` accepts, each with its default (``inspect.Parameter.empty``
    when it has none); options fixed by the name are left out. A policy that takes any keyword
    has the key ``"**"``.

    >>> sorted(policy_options("conservative-bb"))
    ['compiled', 'depth']
    """
    return POLICIES.get(name).options()


def make_policy(name: str | Policy, **options: Any) -> Policy:
    """Build the policy registered as ``name`` with ``options``; a policy object passes through."""
    if not isinstance(name, str):
        if options:
            raise InputError("options are given to make_policy only with a policy name")
        if not isinstance(name, Policy):
            raise InputError(f"{type(name).__name__} is not a policy: it needs a name, an "
                             "io_aware flag and decide(state)", field="policy")
        return name
    entry = POLICIES.get(name)
    cls, defaults = entry.obj, entry.fixed
    options = check_options(cls, options, what=f"policy {name!r}", fixed=defaults, prefix="-o ",
                            name_prefix="")
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

"""The solver contract: ``solve(model, backend=NAME, budget=Budget(...), seed=...) -> Result``.

A *model* (``bbopt.models``) is data plus evaluation and imports no solver. A *backend* turns a
model into its own form (CP-SAT, PuLP/CBC or HiGHS, pymoo, plain numpy) and back. Backends are
registered per model type and chosen by name, so any policy can run its model through the exact
and the heuristic backend side by side (DESIGN.md, "Models and solvers"; cvxpy's
``Problem.solve(solver=...)`` is the model of this interface).

Every backend

- obeys the :class:`Budget` (wall seconds, and a deterministic limit where the solver has one). In
  the ``deterministic`` mode only work limits decide (CP-SAT's deterministic time, annealing's and
  NSGA-II's fixed iteration counts; the exhaustive backends run to the end) and the wall clock is a
  distant safety net, so the answer does not depend on the machine's load; CBC (``milp``) has no
  work limit and is cut only by that net;
- returns a :class:`Result`: status OPTIMAL / FEASIBLE / FALLBACK / INFEASIBLE, the solution (or a
  Pareto set), objective values, a bound where known, the time used and its name;
- is deterministic for a given seed.

When a backend cannot produce a feasible answer in time (it returns no solution, or raises
:class:`BudgetExceeded`), :func:`solve` answers with the model's own fast feasible solution
(``model.fallback()``) and status FALLBACK: a decision is never missing and never late.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from bbopt.core import Status
from bbopt.errors import InputError, UnknownNameError
from bbopt.models.io_window import IOWindowModel
from bbopt.models.packs import PackModel
from bbopt.models.plan import PlanModel
from bbopt.models.preemption import PreemptionModel
from bbopt.models.window import WindowModel
from bbopt.registry import Registry

#: Budget modes: ``wall`` caps each decision's wall-clock time (the answer depends on how fast
#: the machine is at that moment); ``deterministic`` caps the work instead (CP-SAT deterministic
#: time, fixed iteration counts of annealing and NSGA-II), so the same input gives the same answer
#: on a loaded machine, with a wall-clock safety cap of :data:`SAFETY` x the budget.
BUDGET_MODES = ("wall", "deterministic")
#: Wall-clock safety cap of the deterministic mode: SAFETY x the nominal budget, and never less
#: than SAFETY_FLOOR seconds (a cap that bites makes the answer depend on the load again).
SAFETY = 10.0
SAFETY_FLOOR = 30.0
#: CP-SAT deterministic time granted per second of nominal budget in the deterministic mode
#: (about half a second of solving on an idle core, leaving room for model building).
DET_PER_SECOND = 0.5
#: The least wall time a backend is handed once model building has used the rest.
MIN_SECONDS = 1e-3
#: The share of a decision's wall budget a policy keeps for what follows its backend (reading
#: the answer, building the decision over a long queue), so that the whole decision, from
#: :func:`bbopt.decide`'s call, stays within its budget (:meth:`Budget.less`).
TAIL_SHARE = 0.1
#: How far from 0 or 1 a MILP solver's value may be and still be read as a 0-1 choice (CBC's and
#: SCIP's integer tolerance is 1e-6).
INTEGRALITY = 1e-5


def binary_answer(values: Any) -> np.ndarray | None:
    """A MILP solver's values of 0-1 variables as booleans (``None`` read as 0), or ``None`` when
    one is fractional: such a point is no answer, whatever status the solver gives it."""
    v = np.array([0.0 if a is None else float(a) for a in values])
    if np.any(np.minimum(np.abs(v), np.abs(1.0 - v)) > INTEGRALITY):
        return None
    return v > 0.5


@dataclass(frozen=True, slots=True)
class Budget:
    """How much a backend may spend.

    ``seconds``: wall-clock cap. ``deterministic``: the solver's own deterministic work limit
    where it has one (CP-SAT's ``max_deterministic_time``), which unlike wall time makes results
    reproducible across machines and loads; ``None`` leaves only the wall-clock cap. ``mode``
    says which of the two is the real limit (see :data:`BUDGET_MODES`); build one with
    :meth:`of`.
    """

    seconds: float = 1.0
    deterministic: float | None = None
    mode: str = "wall"

    def __post_init__(self) -> None:
        if not (isinstance(self.seconds, int | float) and self.seconds > 0
                and math.isfinite(self.seconds)):
            raise InputError(f"budget seconds must be positive, got {self.seconds!r}",
                             field="seconds")
        if self.mode not in BUDGET_MODES:
            raise InputError(f"budget mode must be one of {', '.join(BUDGET_MODES)}, got "
                             f"{self.mode!r}", field="budget_mode")

    @classmethod
    def of(cls, seconds: float, deterministic: float | None = None,
           mode: str = "wall") -> Budget:
        """The budget of a decision of nominal ``seconds`` in ``mode``.

        ``wall``: ``seconds`` of wall clock (and ``deterministic`` if given). ``deterministic``:
        the work limits are the real cap (``deterministic`` CP-SAT time, default
        :data:`DET_PER_SECOND` x ``seconds``; the fixed iteration counts of annealing and
        NSGA-II) and the wall clock only a safety net (:data:`SAFETY` x ``seconds``, at least
        :data:`SAFETY_FLOOR`).
        """
        try:
            nominal = cls(float(seconds), deterministic, mode)  # validates
        except InputError as exc:  # named as the policies' options are
            raise InputError(exc.reason, field="budget" if exc.field == "seconds"
                             else exc.field) from None
        if mode == "wall":
            return nominal
        det = deterministic if deterministic is not None else DET_PER_SECOND * nominal.seconds
        return cls(max(nominal.seconds * SAFETY, SAFETY_FLOOR), det, mode)

    def less(self, elapsed: float, tail: float = 0.0) -> Budget:
        """What is left for the backend after ``elapsed`` seconds of model building: the wall
        budget minus ``elapsed`` (a decision's wall time includes building its model) and
        minus the ``tail`` share of it kept for what follows the backend (reading its answer,
        building the decision: :data:`TAIL_SHARE` for a policy's whole decision); the
        deterministic mode's work limits do not depend on time and are left whole."""
        if self.mode == "deterministic":
            return self
        return replace(self, seconds=max(self.seconds * (1 - tail) - elapsed, MIN_SECONDS))


@dataclass(frozen=True, slots=True)
class Solution:
    """One candidate answer with its objective values (as the model defines them)."""

    x: Any
    objectives: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Result:
    """What every backend returns.

    ``solution`` is the chosen answer (``None`` only when INFEASIBLE); ``pareto`` the set of
    non-dominated solutions for multi-objective forms (empty otherwise).
    """

    status: Status
    solution: Any
    objective: float | tuple[float, ...] | None = None
    pareto: tuple[Solution, ...] = ()
    bound: float | tuple[float, ...] | None = None
    wall_time: float = 0.0
    backend: str = ""
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def gap(self) -> float | None:
        """Relative gap between objective and bound, when both are scalars."""
        if not isinstance(self.objective, int | float) or not isinstance(self.bound, int | float):
            return None
        denom = max(abs(self.bound), 1e-12)
        return abs(self.objective - self.bound) / denom


class BudgetExceeded(Exception):
    """Raised by a backend that ran out of budget before it had any feasible answer."""


Backend = Callable[..., Result]

#: The built-in backends: model type -> backend name -> ``"module:function"``. A module is imported
#: the first time one of its backends is chosen, so ``import bbopt`` loads neither OR-Tools nor
#: PuLP nor pymoo. Adding a backend is one module and one line here.
BUILTIN_BACKENDS: dict[type, dict[str, str]] = {
    WindowModel: {
        "cpsat": "bbopt.solvers.window.cpsat:solve_cpsat",
        "milp": "bbopt.solvers.window.milp:solve_milp",
        "scip": "bbopt.solvers.window.scip:solve_scip",
        "highs": "bbopt.solvers.window.highs:solve_highs",
        "nsga2": "bbopt.solvers.window.nsga2:solve_nsga2",
        "exhaustive": "bbopt.solvers.window.exhaustive:solve_exhaustive",
        "greedy": "bbopt.solvers.window.greedy:solve_greedy",
    },
    IOWindowModel: {
        "cpsat": "bbopt.solvers.io_window.cpsat:solve_cpsat",
        "scip": "bbopt.solvers.io_window.scip:solve_scip",
        "exhaustive": "bbopt.solvers.io_window.exhaustive:solve_exhaustive",
        "greedy": "bbopt.solvers.window.greedy:solve_greedy",  # the model's own greedy rule
    },
    PlanModel: {
        "annealing": "bbopt.solvers.plan.annealing:solve_annealing",
        "cpsat": "bbopt.solvers.plan.cpsat:solve_cpsat",
        "exhaustive": "bbopt.solvers.plan.exhaustive:solve_exhaustive",
        "greedy": "bbopt.solvers.plan.greedy:solve_greedy",
    },
    PackModel: {
        "cpsat": "bbopt.solvers.packs.cpsat:solve_cpsat",
        "milp": "bbopt.solvers.packs.milp:solve_milp",
        "scip": "bbopt.solvers.packs.scip:solve_scip",
        "exhaustive": "bbopt.solvers.packs.exhaustive:solve_exhaustive",
        "greedy": "bbopt.solvers.packs.greedy:solve_greedy",
    },
    PreemptionModel: {
        "cpsat": "bbopt.solvers.preemption.cpsat:solve_cpsat",
        "milp": "bbopt.solvers.preemption.milp:solve_milp",
        "scip": "bbopt.solvers.preemption.scip:solve_scip",
        "exhaustive": "bbopt.solvers.preemption.exhaustive:solve_exhaustive",
        "greedy": "bbopt.solvers.preemption.greedy:solve_greedy",
    },
}
#: The backends of each model type, one registry per type (bbopt's from :data:`BUILTIN_BACKENDS`,
#: imported on first use; others by :func:`register_backend` and the ``bbopt.backends`` plug-ins).
_BACKENDS: dict[type, Registry] = {}


def _complete(name: str, fn: Any) -> None:
    if not callable(fn):
        raise InputError(f"backend {name!r} must be a function fn(model, budget, seed, "
                         f"**options) -> Result, got {type(fn).__name__}", field="backend")


def _registry(model_type: type) -> Registry:
    if model_type not in _BACKENDS:
        reg = Registry(f"backend for {model_type.__name__}", check=_complete)
        reg.declare(BUILTIN_BACKENDS.get(model_type, {}))
        _BACKENDS[model_type] = reg
    return _BACKENDS[model_type]


def register_backend(model_type: type, name: str) -> Callable[[Backend], Backend]:
    """Decorator: register ``fn(model, budget, seed, **options) -> Result`` for ``model_type``
    (your own models and backends, or a new backend of bbopt's models; bbopt's are listed in
    :data:`BUILTIN_BACKENDS`)."""
    return _registry(model_type).register(name)


def unregister_backend(model_type: type, name: str) -> None:
    """Remove a backend :func:`register_backend` registered (nothing if there is none)."""
    if model_type in _BACKENDS:
        _BACKENDS[model_type].remove(name)


_PLUGINS_LOADED = False


def _load_plugins() -> None:
    """Import the backend plug-ins (entry points of the group ``bbopt.backends``: each names a
    module, or a function, whose import registers it with :func:`register_backend`)."""
    global _PLUGINS_LOADED
    if _PLUGINS_LOADED:
        return
    _PLUGINS_LOADED = True
    from importlib.metadata import entry_points

    for ep in entry_points(group="bbopt.backends"):
        try:
            ep.load()
        except Exception as exc:  # a broken plug-in: say which
            raise InputError(f"the backend plug-in {ep.name!r} ({ep.value}) does not load: "
                             f"{type(exc).__name__}: {exc}", field="bbopt.backends") from None


def _table(model: Any) -> Registry | None:
    """The backends of ``model``'s type (or of its nearest base type that has some)."""
    for cls in type(model).__mro__:
        if cls in _BACKENDS or cls in BUILTIN_BACKENDS:
            return _registry(cls)
    return None


def backends_for(model: Any) -> list[str]:
    """Names of the backends available for ``model``'s type (plug-ins included)."""
    _load_plugins()
    table = _table(model)
    return [] if table is None else table.known()


def solve(model: Any, backend: str, budget: Budget | None = None, seed: int = 0,
          **options: Any) -> Result:
    """Solve ``model`` with the backend called ``backend`` within ``budget``.

    Never returns without a solution unless the model is infeasible: on a backend that ran out
    of budget the model's ``fallback()`` answer comes back with status FALLBACK.

    Example: Table 1 of the BBSched paper (100 nodes, 100 TB of BB free; jobs as (nodes, TB)),
    its exact Pareto set by CP-SAT and by enumeration.

    >>> from bbopt import Job
    >>> from bbopt.core import TB
    >>> from bbopt.models.window import WindowModel
    >>> jobs = [Job(f"J{i}", 0, 3600, nodes=n, bb=b * TB) for i, (n, b) in
    ...         enumerate([(80, 20), (10, 85), (40, 5), (10, 0), (20, 0)], 1)]
    >>> model = WindowModel.from_jobs(jobs, free_nodes=100, free_bb=100 * TB)
    >>> for backend in ("cpsat", "exhaustive"):
    ...     result = solve(model, backend, Budget(seconds=5), seed=0, form="pareto")
    ...     print(backend, result.status, sorted(model.selected(p.x) for p in result.pareto))
    cpsat OPTIMAL [[0, 4], [1, 2, 3, 4]]
    exhaustive OPTIMAL [[0, 4], [1, 2, 3, 4]]
    """
    budget = budget or Budget()
    table = _table(model)
    if table is None:
        raise InputError(f"no backend is registered for {type(model).__name__}")
    if backend not in table:
        _load_plugins()
        table = _table(model)
    if backend not in table:
        raise UnknownNameError(f"backend for {type(model).__name__}", backend,
                               backends_for(model))
    t0 = _time.perf_counter()
    try:
        result = table[backend](model, budget, seed, **options)
    except BudgetExceeded:
        result = None
    elapsed = _time.perf_counter() - t0
    if result is None or (result.solution is None and result.status is not Status.INFEASIBLE):
        return _fallback(model, backend, elapsed)
    return replace(result, wall_time=elapsed, backend=result.backend or backend)


def _fallback(model: Any, backend: str, elapsed: float) -> Result:
    t0 = _time.perf_counter()
    x = model.fallback()
    objective = model.evaluate(x) if hasattr(model, "evaluate") else None
    return Result(Status.FALLBACK, x, objective, wall_time=elapsed + _time.perf_counter() - t0,
                  backend=backend, info={"fallback": "greedy"})

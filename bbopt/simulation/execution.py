"""Job execution models: how long a started job runs, and when it ends.

The engine decides *which* jobs start; an execution model decides *when they end*. It owns the
completion events, so a model whose job durations depend on each other (I/O contention over a
bandwidth tree, recomputed whenever the set of running jobs changes) plugs in as easily as the
rigid model of the trace.

Protocol (all times in seconds):

- ``reset(jobs, platform)``: before a run;
- ``start(k, t, allocation)``: job ``jobs[k]`` starts at ``t`` on the given nodes;
- ``next_time() -> float``: the next instant at which some job ends (``inf`` if none);
- ``finish(t) -> list[(k, state)]``: the jobs ending at ``t`` with their final state
  (``"finished"`` or ``"killed"``), in a deterministic order.

Preemption hooks (optional; a model without ``evict`` refuses every eviction, as the rigid,
contention and phased models do):

- ``evict(k, t) -> float``: running job ``k`` is evicted at ``t``; return when its resources
  come back (it keeps them until then, e.g. while it writes a checkpoint). At that time
  ``finish`` reports ``(k, why)`` with ``why`` ``"checkpointed"`` or ``"requeued"`` (the job goes
  back to the queue, see :data:`REQUEUE_ENDS`) or ``"dropped"`` (final);
- ``resubmit(k) -> Job``: the job as the queue sees it again (e.g. its remaining walltime);
- ``record(result)``: write the model's per-job accounting into the result after the run.

Metrics: ``metrics(result) -> dict[str, float]`` gives the metrics the model adds to a run's
job metrics, under the same names wherever a run is measured (:func:`bbopt.runs.run`):
Herbein et al.'s I/O metrics for the fluid models, Jeannot et al.'s ``xio_*`` for exclusive I/O;
``curves(result) -> dict[str, list[float]]`` its quantities over time in equal bins of the run
(a sweep keeps them in each run's summary for ``bbopt report``: Jeannot et al.'s Figures 4-5
and 8 for exclusive I/O; default none).

:class:`ExecutionModelBase` declares the optional hooks with their defaults (no metrics, no
accounting, every instant may end a job); the built-in models derive from it.

:class:`Rigid` is the default (Kopanski & Rzadca, Section 4.1, without I/O side effects): a job
runs ``min(runtime, walltime)`` and is killed at its walltime when its runtime exceeds it.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from bbopt.core import Job, JobState, Platform
from bbopt.errors import InputError
from bbopt.registry import Registry

__all__ = ["EXECUTION_MODELS", "REQUEUE_ENDS", "ExecutionModel", "ExecutionModelBase", "Rigid",
           "make_execution_model"]


#: Segment ends that send the job back to the queue (the engine asks the model's ``resubmit``).
REQUEUE_ENDS = ("checkpointed", "requeued")


class ExecutionModel(Protocol):
    def reset(self, jobs: Sequence[Job], platform: Platform) -> None: ...

    def start(self, k: int, t: float, allocation: tuple[int, ...]) -> None: ...

    def next_time(self) -> float: ...

    def finish(self, t: float) -> list[tuple[int, str]]: ...


@runtime_checkable
class Evicting(Protocol):
    """The preemption hooks (see the module docstring): a model without them refuses every
    eviction."""

    def evict(self, k: int, t: float) -> float: ...

    def resubmit(self, k: int) -> Job: ...


class ExecutionModelBase:
    """The optional side of the protocol, with its defaults: derive a model from this class
    and override what it needs."""

    name = "model"
    #: True when jobs end only at :meth:`next_time` and ``finish`` changes nothing at other
    #: instants (the engine then calls it only then).
    ends_only_at_next_time = False

    def record(self, result: Any) -> None:
        """Write the model's per-job accounting into ``result`` after the run (default:
        nothing)."""

    def metrics(self, result: Any) -> dict[str, float]:
        """The metrics this model adds to the run's job metrics (default: none)."""
        return {}

    def curves(self, result: Any) -> dict[str, list[float]]:
        """This model's quantities over the run in equal time bins (default: none)."""
        return {}


class Rigid(ExecutionModelBase):
    """Each job runs for its trace runtime (its walltime when none is known), cut at walltime."""

    name = "rigid"
    #: Jobs end only at :meth:`next_time` and :meth:`finish` changes nothing at other instants,
    #: so the engine calls it only then.
    ends_only_at_next_time = True

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, str]] = []
        self._jobs: Sequence[Job] = ()

    def reset(self, jobs: Sequence[Job], platform: Platform) -> None:
        self._heap = []
        self._jobs = jobs

    def start(self, k: int, t: float, allocation: tuple[int, ...]) -> None:
        job = self._jobs[k]
        runtime = job.runtime if job.runtime is not None else job.walltime
        if runtime > job.walltime:
            heapq.heappush(self._heap, (t + job.walltime, k, JobState.KILLED))
        else:
            heapq.heappush(self._heap, (t + runtime, k, JobState.FINISHED))

    def next_time(self) -> float:
        return self._heap[0][0] if self._heap else float("inf")

    def finish(self, t: float) -> list[tuple[int, str]]:
        heap = self._heap
        done = []
        while heap and heap[0][0] == t:
            _, k, state = heapq.heappop(heap)
            done.append((k, state))
        return done


def _complete(name: str, cls: Any) -> None:
    """Refuse an execution model class without the protocol's methods."""
    missing = [m for m in ("reset", "start", "next_time", "finish")
               if not callable(getattr(cls, m, None))]
    if missing:
        raise InputError(f"execution model {name!r} ({getattr(cls, '__qualname__', cls)}) is "
                         f"missing {', '.join(missing)} (see bbopt.simulation.execution)",
                         field="execution")


#: Execution models by name (classes; each module imported when its model is first asked for,
#: so a replay under the rigid model imports neither the I/O models nor numpy), and plug-ins of
#: the entry-point group ``bbopt.execution_models``.
EXECUTION_MODELS = Registry("execution model", group="bbopt.execution_models", check=_complete)
EXECUTION_MODELS.add("rigid", Rigid)
EXECUTION_MODELS.declare({"io-contention": "bbopt.simulation.io_model:IOContention",
                          "phased-io": "bbopt.simulation.io_model:PhasedIO",
                          "checkpoint": "bbopt.simulation.checkpoint:CheckpointRestart",
                          "exclusive-io": "bbopt.simulation.exclusive_io:ExclusiveIO"})


def make_execution_model(model: str | ExecutionModel | None, **options: Any) -> ExecutionModel:
    """An execution model by name (``"rigid"``) with its constructor's ``options`` (checked
    and quantities with units read into SI: :func:`bbopt.units.check_options`), or the object
    itself."""
    if model is None:
        model = "rigid"
    if isinstance(model, str):
        from bbopt.units import check_options

        cls = EXECUTION_MODELS[model]
        options = check_options(cls, options, what=f"execution model {model!r}",
                                prefix="execution ")
        try:
            return cls(**options)
        except TypeError as exc:  # an option the constructor does not take
            raise InputError(f"execution model {model!r}: {exc}", field="execution") from None
    if options:
        raise InputError("execution options go with an execution model's name",
                         field="execution")
    if isinstance(model, ExecutionModelBase):
        return model
    _complete(getattr(model, "name", type(model).__name__), model)
    return _Adapted(model)


class _Adapted(ExecutionModelBase):
    """A model object that follows the protocol without deriving from
    :class:`ExecutionModelBase`: its own methods, and the base's defaults for the optional
    hooks it does not define (the only place they are looked up by name)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.name = getattr(inner, "name", type(inner).__name__)
        self.ends_only_at_next_time = bool(getattr(inner, "ends_only_at_next_time", False))
        for hook in ("record", "metrics"):
            if callable(getattr(inner, hook, None)):
                setattr(self, hook, getattr(inner, hook))

    def __getattr__(self, name: str) -> Any:  # reset, start, next_time, finish, evict, ...
        return getattr(self._inner, name)

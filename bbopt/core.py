"""Immutable domain types: jobs, platforms, cluster states and scheduling decisions.

These are the nouns every other layer speaks (DESIGN.md, "Domain types"). All quantities are SI:
seconds, bytes, bytes/s; readers, CLI flags and reports convert at the edges. The resource
dimensions of the scheduling problem are, in this order, ``(nodes, bb)``: compute nodes and bytes
of shared burst buffer (Kopanski & Rzadca, Euro-Par 2021, Section 3: a job holds its processors and
its burst buffer for its whole duration). ``ClusterState`` is the input of :func:`bbopt.decide`
and ``Decision`` its output; both round-trip through JSON (see :mod:`bbopt.schema`).

Length: the domain types every layer imports (jobs, platforms, states and their queue and
running-job views, decisions, the fit rule) stay in one module.
"""

from __future__ import annotations

import math
import numbers
import time as _time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, NamedTuple

from bbopt.errors import InputError, OverbookedError
from bbopt.limits import MAX_BANDWIDTH, MAX_BYTES, MAX_NODES, MAX_SECONDS, magnitude
from bbopt.quick_init import quick_init

if TYPE_CHECKING:  # a type-only edge: the tree knows nothing of the core
    from bbopt.topology.tree import IOTree

#: Names of the resource dimensions, in the order used by profiles and capacities.
DIMENSIONS: tuple[str, ...] = ("nodes", "bb")

KB, MB, GB, TB = 1e3, 1e6, 1e9, 1e12
KIB, MIB, GIB, TIB = 1024.0, 1024.0**2, 1024.0**3, 1024.0**4
MINUTE, HOUR, DAY = 60.0, 3600.0, 86400.0


@dataclass(frozen=True, slots=True)
class Job:
    """A rigid batch job.

    ``walltime`` is the user's requested time limit (what a scheduler may plan with);
    ``runtime`` the time the job would really run (known to a simulator only; ``None`` for a
    scheduler that is not told). ``bb`` is the job's total shared burst-buffer request,
    ``ssd`` its local SSD request per node and ``bandwidth`` its PFS bandwidth per node.
    ``extra`` carries format-specific data (e.g. an I/O profile) and takes no part in equality.
    """

    id: str
    submit: float
    walltime: float
    runtime: float | None = None
    nodes: int = 1
    bb: float = 0.0
    ssd: float = 0.0
    bandwidth: float = 0.0
    user: str | None = None
    priority: float = 0.0
    preemptable: bool = False
    checkpointable: bool = False
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        # (exact-type tests first: ABC isinstance checks cost most of a job's construction)
        if type(self.nodes) is not int and isinstance(self.nodes, numbers.Integral) \
                and not isinstance(self.nodes, bool | int):
            object.__setattr__(self, "nodes", int(self.nodes))  # numpy integers are integers
        if isinstance(self.nodes, bool) or not isinstance(self.nodes, int) \
                or not 1 <= self.nodes <= MAX_NODES:
            raise InputError(f"job {self.id}: nodes must be an integer in [1, {MAX_NODES:,}], "
                             f"got {magnitude(self.nodes)}", field="nodes")
        for name in ("submit", "walltime", "bb", "ssd", "bandwidth", "priority", "runtime"):
            value = getattr(self, name)
            if type(value) is float or type(value) is int:
                continue
            if (value is not None or name != "runtime") and (
                    isinstance(value, bool) or not isinstance(value, numbers.Real)):
                raise InputError(f"job {self.id}: {name} must be a number, got {value!r}",
                                 field=name)
        if not 0 < self.walltime <= MAX_SECONDS:  # (also refuses nan and inf)
            raise InputError(f"job {self.id}: walltime must be in (0, {MAX_SECONDS:g}] s, "
                             f"got {self.walltime!r}", field="walltime")
        if not 0 <= self.submit <= MAX_SECONDS:
            raise InputError(f"job {self.id}: submit time must be in [0, {MAX_SECONDS:g}] s, "
                             f"got {self.submit!r}", field="submit")
        if self.runtime is not None and not 0 <= self.runtime <= MAX_SECONDS:
            raise InputError(f"job {self.id}: runtime must be in [0, {MAX_SECONDS:g}] s, "
                             f"got {self.runtime!r}", field="runtime")
        for name, high in (("bb", MAX_BYTES), ("ssd", MAX_BYTES), ("bandwidth", MAX_BANDWIDTH)):
            value = getattr(self, name)
            if not 0 <= value <= high:
                raise InputError(f"job {self.id}: {name} must be in [0, {high:g}], got {value!r}",
                                 field=name)

    @property
    def demand(self) -> tuple[float, float]:
        """The job's demand in :data:`DIMENSIONS` order: ``(nodes, bb)``."""
        return (self.nodes, self.bb)

    @property
    def bb_per_node(self) -> float:
        return self.bb / self.nodes


#: The one tolerance of every capacity test in bbopt: a demand fits a free amount when it exceeds
#: it by at most ``REL_TOL`` of the capacity (sums of bytes are rounded). Policies, models and
#: profiles use it (:func:`fits`, :func:`slack`); the engine allows :data:`ENGINE_REL_TOL`, twice
#: as much, so it is at least as lenient as every policy and never refuses a decision that was
#: built within capacity, whatever order the sums were taken in.
REL_TOL = 1e-9
ENGINE_REL_TOL = 2 * REL_TOL


def slack(capacity: float) -> float:
    """How far above a free amount a demand may be and still fit: ``REL_TOL * capacity``."""
    return capacity * REL_TOL


def fits(demand: float, free: float, capacity: float) -> bool:
    """The one "does it fit" rule of one resource: ``demand <= free + slack(capacity)``.

    >>> fits(480e9, 480e9 - 1.0, 480e9)   # one byte short of 480 GB is rounding
    True
    >>> fits(2, 1, 96)
    False
    """
    return demand <= free + capacity * REL_TOL


class Resources(NamedTuple):
    """An amount of the pooled resources, nodes and burst-buffer bytes: a capacity
    (:attr:`Platform.capacity`). A tuple in :data:`DIMENSIONS` order, so profiles and models
    index it as they index any ``(nodes, bb)`` pair (what fits where: :func:`fits` and
    :mod:`bbopt.planner`)."""

    nodes: int = 0
    bb: float = 0.0


#: Each compute node's BB nodes in order of preference (:attr:`Platform.bb_proximity`).
Proximity = tuple[tuple[int, ...], ...]


def dragonfly_proximity(nodes: int = 96, chassis_nodes: int = 8, group_chassis: int = 4
                        ) -> Proximity:
    """Each compute node's order of preference over the BB nodes on the authors' Dragonfly
    (Section 4.1: 3 groups of 4 chassis, each chassis 8 compute nodes and one BB node).

    Compute node ``i`` (numbered in the platform's order, chassis after chassis) is in chassis
    ``i // chassis_nodes``, whose BB node has that number; the chassis of BB node ``b`` is in
    group ``b // group_chassis``. Order: the chassis' BB node, the other BB nodes of its group
    (ascending), then every other BB node (ascending).

    >>> dragonfly_proximity(8, 2, 2)[5]
    (2, 3, 0, 1)
    """
    if nodes % chassis_nodes:
        raise ValueError(f"{nodes} compute nodes are not whole chassis of {chassis_nodes}")
    n_bb = nodes // chassis_nodes
    out = []
    for i in range(nodes):
        c = i // chassis_nodes
        g0 = c // group_chassis * group_chassis
        group = [b for b in range(g0, min(g0 + group_chassis, n_bb)) if b != c]
        rest = [b for b in range(n_bb) if b != c and b not in group]
        out.append((c, *group, *rest))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class Platform:
    """The machine: compute nodes and a shared burst buffer.

    ``node_ssd`` optionally gives each node's local SSD capacity in bytes; ``topology`` is left
    for the I/O hierarchy (a bandwidth tree from the PFS down to the nodes). ``bb_nodes``
    optionally names the burst-buffer nodes that make up ``bb`` (their capacities, summing to
    ``bb``): a job's burst buffer is then split into one piece per compute node, and every piece
    must fit on one BB node (see :class:`bbopt.planner.bb.FirstFitBB`); without it the
    burst buffer is one pool. ``bb_proximity`` (with ``bb_nodes``): each compute node's order of
    preference over the BB nodes; pieces then go by proximity instead of first fit, and compute
    nodes are chosen as consecutive runs (:mod:`bbopt.planner.pieces`).
    """

    nodes: int
    bb: float = 0.0
    name: str = "cluster"
    node_ssd: tuple[float, ...] | None = None
    topology: IOTree | None = field(default=None, compare=False)
    bb_nodes: tuple[float, ...] | None = None
    bb_proximity: Proximity | None = None

    def __post_init__(self) -> None:
        if isinstance(self.nodes, numbers.Integral) and not isinstance(self.nodes, bool | int):
            object.__setattr__(self, "nodes", int(self.nodes))
        if isinstance(self.nodes, bool) or not isinstance(self.nodes, int) \
                or not 1 <= self.nodes <= MAX_NODES:
            raise InputError(f"platform nodes must be an integer in [1, {MAX_NODES:,}], got "
                             f"{magnitude(self.nodes)}", field="nodes")
        if not 0 <= self.bb <= MAX_BYTES:
            raise InputError(f"platform bb must be in [0, {MAX_BYTES:g}] bytes, got "
                             f"{self.bb!r}", field="bb")
        if self.node_ssd is not None and len(self.node_ssd) != self.nodes:
            raise InputError(f"node_ssd has {len(self.node_ssd)} entries for {self.nodes} nodes",
                             field="node_ssd")
        for i, c in enumerate(self.node_ssd or ()):
            if not 0 <= c <= MAX_BYTES:
                raise InputError(f"must be a finite number of bytes >= 0 and <= {MAX_BYTES:g}, "
                                 f"got {c!r}", field=f"node_ssd[{i}]")
        if self.bb_nodes is not None:
            if not self.bb_nodes or any(not (c > 0 and math.isfinite(c)) for c in self.bb_nodes):
                raise InputError("bb_nodes must be positive capacities in bytes",
                                 field="bb_nodes")
            if not math.isclose(sum(self.bb_nodes), self.bb, rel_tol=1e-9):
                raise InputError(f"bb_nodes sum to {sum(self.bb_nodes):.6g} B, bb is "
                                 f"{self.bb:.6g} B", field="bb_nodes")
        if self.bb_proximity is not None:
            k = len(self.bb_nodes or ())
            if len(self.bb_proximity) != self.nodes or any(
                    sorted(row) != list(range(k)) for row in self.bb_proximity) or k == 0:
                raise InputError("bb_proximity must give, for each compute node, an order of "
                                 "all the bb_nodes", field="bb_proximity")

    @property
    def capacity(self) -> Resources:
        """Node and BB capacity."""
        return Resources(self.nodes, self.bb)

    @classmethod
    def kopanski(cls, named_bb: bool = False, bb_placement: str = "first-fit") -> Platform:
        """The KTH experiment machine of Kopanski & Rzadca (Section 4.1).

        96 compute nodes and 12 burst-buffer nodes of 40 GB each (480 GB shared), the expected
        total request of a fully busy machine under the log-normal BB model. ``named_bb``: the
        12 BB nodes are kept apart (per-node pieces placed on them) instead of one 480 GB pool.
        ``bb_placement`` (named BB only): ``"first-fit"`` (default) or ``"proximity"``, the
        authors' Dragonfly placement (3 groups of 4 chassis of 8 compute nodes and one BB node:
        the chassis' BB node, then the group's, then any; compute nodes in consecutive runs).
        """
        if bb_placement not in ("first-fit", "proximity"):
            raise InputError(f"bb_placement must be 'first-fit' or 'proximity', got "
                             f"{bb_placement!r}", field="bb_placement")
        if bb_placement == "proximity" and not named_bb:
            raise InputError("bb_placement='proximity' needs named_bb=True",
                             field="bb_placement")
        if named_bb and bb_placement == "proximity":
            return cls(nodes=96, bb=12 * 40 * GB, name="kopanski-kth-proximity",
                       bb_nodes=(40 * GB,) * 12, bb_proximity=dragonfly_proximity(96, 8, 4))
        if named_bb:
            return cls(nodes=96, bb=12 * 40 * GB, name="kopanski-kth-named",
                       bb_nodes=(40 * GB,) * 12)
        return cls(nodes=96, bb=12 * 40 * GB, name="kopanski-kth")

    def why_never_fits(self, job: Job) -> str | None:
        """The reason ``job`` can never run on this platform, or ``None`` if it can."""
        if job.nodes > self.nodes:
            return f"requests {job.nodes} nodes, platform has {self.nodes}"
        if job.bb > self.bb:
            return f"requests {job.bb:.4g} B of burst buffer, platform has {self.bb:.4g} B"
        if self.bb_nodes is not None and job.bb > 0:
            # An empty BB node takes floor(capacity / piece) pieces, or all; counted until all fit
            piece = job.bb / job.nodes
            room = 0
            for c in self.bb_nodes:
                fit = c / piece * (1 + 1e-12) if piece > 0 else math.inf
                room += job.nodes if fit >= job.nodes else math.floor(fit)
                if room >= job.nodes:
                    break
            if room < job.nodes:
                return (f"requests {job.nodes} pieces of {piece:.4g} B of burst buffer, the "
                        f"{len(self.bb_nodes)} BB nodes hold {room} such pieces")
        if job.ssd > 0:
            if self.node_ssd is None:
                return "requests local SSD, platform has none"
            if sum(1 for s in self.node_ssd if s >= job.ssd) < job.nodes:
                return f"fewer than {job.nodes} nodes have {job.ssd:.4g} B of SSD"
        return None


@quick_init
@dataclass(frozen=True, slots=True)
class RunningJob:
    """A job that holds resources since ``start``; a scheduler plans with ``expected_end``."""

    job: Job
    start: float
    allocation: tuple[int, ...] | None = None
    #: On a platform with named BB nodes: the ``(BB node, bytes)`` pieces the job holds
    #: (``None``: not known; :func:`bbopt.planner.pieces.running_pieces` places them again).
    bb_pieces: tuple[tuple[int, float], ...] | None = None

    @property
    def expected_end(self) -> float:
        return self.start + self.job.walltime


class RunningJobs(tuple):
    """The running jobs as the engine hands them: sorted by expected end (start + walltime;
    ties in no set order), with ``held``, the ``(nodes, bb)`` they hold together, kept
    incrementally by the engine's ledger. Policies that see this type may use the order and the
    total instead of sorting and summing (O(running) per decision); any other tuple of running
    jobs is taken as unordered.
    """

    held: tuple[float, float]

    def __new__(cls, jobs: Iterable[RunningJob] = (), held: tuple[float, float] | None = None):
        self = super().__new__(cls, jobs)
        if held is None:
            nodes, bb = 0, 0.0
            for r in self:
                nodes += r.job.nodes
                bb += r.job.bb
            held = (nodes, bb)
        self.held = held
        return self

    @staticmethod
    def of(jobs: Iterable[RunningJob], held: tuple[float, float]) -> RunningJobs:
        """The view of ``jobs`` (sorted by expected end) holding ``held`` together, built
        without the constructor's dispatch (half its cost): the engine's view after every start
        or end, with the total its ledger keeps."""
        self = _new_tuple(RunningJobs, jobs)
        self.held = held
        return self


_new_tuple = tuple.__new__


@quick_init
@dataclass(frozen=True, slots=True)
class ClusterState:
    """What a policy sees at a scheduling point.

    ``queue`` is the waiting queue in arrival order (a tuple, or the engine's
    :class:`~bbopt.queue_view.QueueView`: any read-only sequence). ``running`` lists the
    running jobs; the engine hands them sorted by expected end as :class:`RunningJobs`; a
    policy may rely on that order only when ``running`` has that type. ``memory`` is the
    policy's own state carried from one decision to the next (returned in
    :attr:`Decision.memory`), so that :func:`bbopt.decide` stays a pure function.
    """

    time: float
    platform: Platform
    running: tuple[RunningJob, ...] = ()
    queue: Sequence[Job] = ()
    memory: Mapping[str, Any] = field(default_factory=dict)

    def used(self) -> tuple[float, float]:
        """Resources held by running jobs, ``(nodes, bb)``."""
        if type(self.running) is RunningJobs:
            return self.running.held
        nodes = 0
        bb = 0.0
        for r in self.running:
            nodes += r.job.nodes
            bb += r.job.bb
        return (nodes, bb)

    def free(self) -> tuple[float, float]:
        """Resources free now, ``(nodes, bb)``."""
        nodes, bb = self.used()
        return (self.platform.nodes - nodes, self.platform.bb - bb)


#: How long after ``now`` a planner takes a running job at or past its walltime to end
#: (:func:`planning_state`).
OVERDUE_GRACE = 1.0


def planning_state(state: ClusterState, grace: float = OVERDUE_GRACE) -> ClusterState:
    """``state`` as every policy plans on it: no running job ends at or before ``now``.

    A job at or past its walltime still holds its nodes and BB (a resource manager kills it
    with a grace period: Slurm's KillWait, then the epilogue); planned from ``start +
    walltime``, its resources would look free now and a policy would start a job on them. Such
    a job is taken to end ``grace`` seconds from now (its walltime stretched to that), and the
    running jobs keep the engine's order by expected end. The state is returned as is when no
    job is overdue (the usual case, checked in one pass).
    """
    now = state.time
    running = state.running
    if all(r.start + r.job.walltime > now for r in running):
        return state
    from dataclasses import replace

    out = [r if r.start + r.job.walltime > now else
           replace(r, job=replace(r.job, walltime=now + grace - r.start)) for r in running]
    if type(running) is RunningJobs:
        out.sort(key=lambda r: r.start + r.job.walltime)
        out = RunningJobs.of(out, running.held)
    return replace(state, running=tuple(out) if type(out) is list else out)


#: When the caller asked for the decision being made (``time.perf_counter``), while
#: :func:`bbopt.decide` makes it: its check of the state comes before the policy and belongs to
#: the same budget. Context-local, and reset when the call returns.
_ASKED: ContextVar[float | None] = ContextVar("bbopt_decision_asked", default=None)
#: This thread's CPU time (``time.thread_time``) when the caller asked (:func:`decision_asked`).
_ASKED_CPU: ContextVar[float | None] = ContextVar("bbopt_decision_asked_cpu", default=None)


@contextmanager
def decision_asked(at: float) -> Iterator[None]:
    """Within this block, a decision's wall budget runs from ``at`` (a ``time.perf_counter``
    moment; :func:`decision_elapsed`), and its CPU time from now (:func:`decision_slowdown`)."""
    token = _ASKED.set(at)
    cpu = _ASKED_CPU.set(_time.thread_time())
    try:
        yield
    finally:
        _ASKED_CPU.reset(cpu)
        _ASKED.reset(token)


def decision_slowdown() -> float:
    """Wall seconds per CPU second of the current decision so far (:func:`decision_asked`),
    what a policy under a wall budget divides its planned work by: 1 on an idle core, outside
    a call or under 1 ms of CPU time (too little to tell); at most 50."""
    asked, cpu_at = _ASKED.get(), _ASKED_CPU.get()
    cpu = 0.0 if cpu_at is None else _time.thread_time() - cpu_at
    if asked is None or cpu < 1e-3:
        return 1.0
    return min(max((_time.perf_counter() - asked) / cpu, 1.0), 50.0)


def decision_elapsed() -> float:
    """Seconds of the current decision's wall budget spent before the policy was asked: since
    the caller asked (:func:`decision_asked`; :func:`bbopt.decide` asks before it checks the
    state, which on a 20,000-job queue takes a quarter of a 10 ms budget), else 0 (the
    simulator's own decisions, whose states need no check). A policy starts its clock at
    ``perf_counter() - decision_elapsed()``."""
    asked = _ASKED.get()
    return 0.0 if asked is None else max(0.0, _time.perf_counter() - asked)


def decide_planned(policy: Any, state: ClusterState, overran: bool = False) -> Decision:
    """``policy.decide`` on :func:`planning_state` of ``state``: how :func:`bbopt.decide` and the
    engine ask every policy.

    When a running job overran its walltime (now, or at the decision that made the memory:
    ``overran``), what the policy remembered (conservative reservations, a kept plan) was
    planned for a past that did not happen: holding it again may overbook the planner's
    profile (:class:`~bbopt.errors.OverbookedError`). Then, and only then, the policy decides
    again without memory, as on its first call; any other error is the policy's and propagates.
    """
    planned = planning_state(state)
    if (planned is state and not overran) or not planned.memory:
        return policy.decide(planned)
    try:
        return policy.decide(planned)
    except OverbookedError:  # a stale plan the state has no room for: plan afresh
        from dataclasses import replace

        return policy.decide(replace(planned, memory={}))


class JobState(StrEnum):
    """How a job's life in a simulation ended (its final state in the per-job record)."""

    FINISHED = "finished"  # ran to its end
    KILLED = "killed"  # stopped at its walltime
    REJECTED = "rejected"  # could never run on the platform (the record says why)
    DROPPED = "dropped"  # preempted without a checkpoint and not requeued (Zvi & Oren, Alg. 1)


class Status(StrEnum):
    """How a solver's answer relates to the model's optimum (DESIGN.md, "Models and solvers")."""

    OPTIMAL = "OPTIMAL"  # proven optimal (or the exact Pareto front)
    FEASIBLE = "FEASIBLE"  # feasible, optimality not proven
    FALLBACK = "FALLBACK"  # the solver could not answer in time: the greedy answer instead
    INFEASIBLE = "INFEASIBLE"  # the model has no feasible solution


@quick_init
@dataclass(frozen=True, slots=True)
class SolveStats:
    """How a decision was reached: which backend, how well, how fast.

    ``audited``: an exact backend solved the decision's model again (a plan policy's ``audit=``)
    and ``bound``/``gap`` come from it; without an audit a ``gap`` is only the backend's own
    (e.g. annealing solving a tiny queue exhaustively), which says nothing about the heuristic.
    """

    backend: str = "greedy"
    status: Status = Status.OPTIMAL
    objective: float | tuple[float, ...] | None = None
    bound: float | tuple[float, ...] | None = None
    gap: float | None = None
    wall_time: float = 0.0
    budget: float | None = None
    audited: bool = False

    def __reduce__(self):
        # Pickled as its field values, three times faster than the slots' default state: a
        # replay's tens of thousands of decision statistics travel back from compare's workers.
        return (SolveStats, (self.backend, self.status, self.objective, self.bound, self.gap,
                             self.wall_time, self.budget, self.audited))


@quick_init
@dataclass(frozen=True, slots=True)
class Start:
    """Start job ``job_id`` now, optionally on the given node indices and with the given
    ``(BB node, bytes)`` pieces on named BB nodes (one per compute node; checked, then taken)."""

    job_id: str
    nodes: tuple[int, ...] | None = None
    bb_pieces: tuple[tuple[int, float], ...] | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Reservation:
    """A planned (future) start of a waiting job; informative, the engine does not enforce it."""

    job_id: str
    start: float


@quick_init
@dataclass(frozen=True, slots=True)
class Decision:
    """A policy's answer: what to start now, what it plans, what to preempt, and why."""

    start: tuple[Start, ...] = ()
    reservations: tuple[Reservation, ...] = ()
    preempt: tuple[str, ...] = ()
    alternatives: tuple[Mapping[str, Any], ...] = ()
    stats: SolveStats = field(default_factory=SolveStats)
    memory: Mapping[str, Any] | None = None

    @property
    def started_ids(self) -> list[str]:
        return [s.job_id for s in self.start]


# Periodic applications (Jeannot, Pallez & Vidal, "Job Model"): the one reading of a job's
# ``extra["io"]``, shared by the exclusive-I/O execution model, the pack model and its policies.

def periodic_spec(job: Job) -> tuple[int, float, float] | None:
    """``(iterations, compute seconds, bytes per I/O phase)`` of a periodic job, or ``None``
    for a job without ``extra["io"]``. Bad values raise :class:`InputError` naming the field."""
    io = job.extra.get("io") if job.extra else None
    if io is None:
        return None
    if not isinstance(io, Mapping):
        raise InputError(f"job {job.id}: extra['io'] must be a mapping", field="io")
    try:
        n = int(io["iterations"])
        w = float(io["compute_seconds"])
        v = float(io["io_bytes"])
    except KeyError as e:
        raise InputError(f"job {job.id}: extra['io'] lacks {e.args[0]!r}",
                         field=f"io.{e.args[0]}") from None
    except (TypeError, ValueError):
        raise InputError(f"job {job.id}: extra['io'] iterations, compute_seconds and io_bytes "
                         "must be numbers", field="io") from None
    if n < 1:
        raise InputError(f"job {job.id}: io.iterations must be >= 1, got {n}",
                         field="io.iterations")
    for name, x in (("compute_seconds", w), ("io_bytes", v)):
        if not (x >= 0 and math.isfinite(x)):
            raise InputError(f"job {job.id}: io.{name} must be >= 0, got {x!r}",
                             field=f"io.{name}")
    return n, w, v


def rack_sizes(racks: int | Sequence[int], nodes: int) -> list[int]:
    """Node counts of the racks, each with its own I/O node (Jeannot et al., "Machine Model"):
    ``racks`` equal consecutive slices of nodes ``0 .. nodes-1`` (the first ones one node
    larger when it does not divide), or the sizes themselves, which must sum to ``nodes``."""
    if isinstance(racks, int):
        if not 1 <= racks <= nodes:
            raise InputError(f"{racks} racks for {nodes} nodes", field="racks")
        return [nodes // racks + (r < nodes % racks) for r in range(racks)]
    sizes = [int(r) for r in racks]
    if not sizes or any(r < 1 for r in sizes):
        raise InputError("rack sizes must be positive integers", field="racks")
    if sum(sizes) != nodes:
        raise InputError(f"rack sizes sum to {sum(sizes)}, platform has {nodes} nodes",
                         field="racks")
    return sizes


def time_alone(job: Job, bandwidth: float | None = None) -> float:
    """Equation (1): the job's execution time with the I/O node to itself."""
    spec = periodic_spec(job)
    if spec is None:
        return job.runtime if job.runtime is not None else job.walltime
    n, w, v = spec
    b = bandwidth if bandwidth is not None else float(job.extra["io"].get("io_bandwidth", 0))
    if not b > 0:
        raise InputError(f"job {job.id}: no I/O bandwidth (io.io_bandwidth)",
                         field="io.io_bandwidth")
    return n * (w + v / b)

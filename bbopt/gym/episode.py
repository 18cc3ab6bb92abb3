"""One episode of a scheduling environment: a window of a trace replayed by bbopt's engine, one
decision point at a time (:func:`bbopt.simulation.engine.stepwise`), with what fits now and the
rewards the environments share.

The engine is the one :func:`bbopt.simulate` runs: the environment applies its decisions through
the engine's checks, so a masked-in action is exactly a start the engine admits. Rewards follow
the metrics of :mod:`bbopt.analysis.metrics` (bounded slowdown with the 600 s bound of Kopanski &
Rzadca, Section 4.2; wait; node utilisation).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice

import numpy as np

from bbopt.analysis.metrics import summarize
from bbopt.core import ClusterState, Decision, Job, Platform, Start, fits
from bbopt.errors import InputError
from bbopt.planner import Planner, bb_placement
from bbopt.policies.registry import Policy, make_policy
from bbopt.simulation.engine import stepwise
from bbopt.simulation.result import BSLD_BOUND

#: The metrics a reward can be made of, with the modes each supports.
REWARDS = {"bsld": ("episode", "step"), "wait": ("episode", "step"), "util": ("episode",)}


class _Driver:
    """What the engine needs of the policy it is built with when the environment decides: it
    is never asked (:func:`~bbopt.simulation.engine.stepwise`); ``idle_unless_fits`` lets the
    engine skip the instants where no waiting job fits the free nodes and BB."""

    name = "gym"
    io_aware = False

    def __init__(self, idle_unless_fits: bool) -> None:
        self.idle_unless_fits = idle_unless_fits

    def decide(self, state: ClusterState) -> Decision:  # pragma: no cover - never called
        raise NotImplementedError("the environment takes the decisions")


class Room:
    """What is free at one decision point, and the one "does this job fit now" rule of the
    environments (nodes, pooled BB with :func:`bbopt.core.fits`, per-node pieces on named BB
    nodes placed by the planner's BB placement as the engine places them -- with proximity
    placement on the compute nodes that placement chooses, as the queue policies name them --,
    nodes with enough local SSD): a start that fits here is one the engine admits."""

    __slots__ = ("platform", "free_n", "free_b", "planner", "ssd_nodes")

    def __init__(self, state: ClusterState) -> None:
        platform = state.platform
        self.platform = platform
        self.free_n, self.free_b = state.free()
        #: the named BB nodes as they are now (:meth:`bbopt.planner.Planner.placing`; ``None``
        #: on a BB pool)
        self.planner: Planner | None = Planner.placing(state)
        self.ssd_nodes: list[int] | None = None
        if platform.node_ssd is not None:
            self.ssd_nodes = (self.planner or Planner.of(state)).free_nodes

    @property
    def bb_free(self) -> list[float] | None:
        """The free bytes of each named BB node (``None`` on a BB pool)."""
        return None if self.planner is None else self.planner.bb.free

    @property
    def chosen(self) -> dict[str, tuple[int, ...]]:
        """The compute nodes of the jobs :meth:`take` took, by id, where the BB placement
        chooses them (proximity; empty otherwise: the engine takes the lowest free ones)."""
        return {} if self.planner is None else self.planner.chosen

    def fits(self, job: Job) -> bool:
        if job.nodes > self.free_n or not fits(job.bb, self.free_b, self.platform.bb):
            return False
        if self.planner is not None and job.bb > 0 and not self.planner.bb_fits(job):
            return False
        if job.ssd > 0 and self.ssd_nodes is not None:
            ssd = self.platform.node_ssd
            return sum(1 for x in self.ssd_nodes if ssd[x] >= job.ssd) >= job.nodes
        return True

    def take(self, job: Job, nodes: Sequence[int] | None = None
             ) -> tuple[tuple[int, float], ...] | None:
        """Hold ``job``'s resources as the engine will when it starts (smallest admissible
        SSDs first, BB pieces by the platform's placement; where it chooses the compute nodes,
        ``nodes`` if given, else its own choice: :attr:`chosen`); its pieces on the named BB
        nodes (``None`` without)."""
        self.free_n -= job.nodes
        self.free_b -= job.bb
        pieces = None
        planner = self.planner
        if planner is not None:
            pieces = ()
            if (job.bb > 0 or planner.bb.chooses_nodes) and planner.take_bb(job, nodes):
                pieces = planner.bb.pieces_of(job)
        if job.ssd > 0 and self.ssd_nodes is not None:
            ssd = self.platform.node_ssd
            chosen = sorted((ssd[x], x) for x in self.ssd_nodes if ssd[x] >= job.ssd)
            taken = {x for _, x in chosen[:job.nodes]}
            self.ssd_nodes = [x for x in self.ssd_nodes if x not in taken]
        elif self.ssd_nodes is not None:
            self.ssd_nodes = self.ssd_nodes[job.nodes:]
        return pieces


@dataclass
class Episode:
    """A replay of ``jobs`` on ``platform`` driven from outside, instant by instant.

    ``backfill``: the policy that closes each instant after the environment's own starts (a
    registered name such as ``"fcfs-bb"``, EASY with the head's nodes and BB reserved; ``None``:
    only the environment's starts). ``tick``: as :func:`bbopt.simulate`'s. ``every_event``:
    stop at every instant where jobs wait and something changed, also where no waiting job fits
    (by default those are skipped: nothing could start there).
    """

    jobs: Sequence[Job]
    platform: Platform
    backfill: str | Policy | None = "fcfs-bb"
    tick: float | None = None
    every_event: bool = False
    t: float = 0.0
    state: ClusterState | None = None
    done: bool = False
    #: (job, start time) of the jobs started since the last :meth:`take_started`
    started: list[tuple[Job, float]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.closer = make_policy(self.backfill) if self.backfill is not None else None
        # (instants where nothing fits are skipped only if the backfill policy allows it)
        idle = not self.every_event and getattr(self.closer, "idle_unless_fits", True)
        self.engine = stepwise(self.jobs, self.platform, _Driver(idle), tick=self.tick)
        #: whether a start names its compute nodes (chosen by the BB placement: proximity)
        self.names_nodes = bb_placement(self.platform).chooses_nodes
        self._instants = self.engine.instants()

    def window(self, size: int) -> list[Job]:
        """The first ``size`` waiting jobs, in arrival order."""
        return list(islice(self.state.queue, size))

    def advance(self) -> bool:
        """Go to the next decision point; False (and ``done``) once every job has ended."""
        try:
            self.t = next(self._instants)
        except StopIteration:
            self.done = True
            self.state = None
            return False
        self.state = self.engine.state(self.t)
        return True

    def start(self, jobs: Sequence[Job],
              nodes: Mapping[str, Sequence[int]] | None = None) -> None:
        """Start ``jobs`` now, in this order (each must fit: :class:`Room`), checked by the
        engine. Where the BB placement chooses the compute nodes (proximity), each start names
        them: ``nodes[job.id]`` if given (e.g. EASY's, clear of the nodes its head's
        reservation holds: :func:`~bbopt.policies.queue.keeps_reservation`), else the
        placement's choice among the nodes still free (:meth:`Room.take`)."""
        if not jobs:
            return
        if not self.names_nodes:
            self.apply(Decision(start=tuple(Start(j.id) for j in jobs)))
            return
        room = Room(self.state)
        for job in jobs:
            room.take(job, None if nodes is None else nodes.get(job.id))
        chosen = room.chosen
        self.apply(Decision(start=tuple(Start(j.id, chosen.get(j.id)) for j in jobs)))

    def close(self) -> None:
        """End the instant: the backfill policy decides on what is left (if there is one)."""
        if self.closer is not None and self.state.queue:
            self.apply(self.closer.decide(self.state))

    def apply(self, decision: Decision) -> None:
        """Apply a decision at this instant through the engine's checks; its starts are
        recorded for the rewards."""
        before = self.engine.queue
        ids = [s.job_id for s in decision.start]
        waiting = [before[i] for i in ids if i in before]
        self.engine.apply(decision, self.t)
        self.started.extend((j, self.t) for j in waiting if j.id not in before)
        self.state = self.engine.state(self.t)

    def take_started(self) -> list[tuple[Job, float]]:
        out, self.started = self.started, []
        return out

    def accrued(self, metric: str) -> float:
        """What the waiting jobs would cost in ``metric`` if they started now
        (:func:`job_value` at this instant). With the values of the jobs already started it is
        the potential whose decrease is the per-step reward: a job's cost grows while it waits
        and stops at its start, so a step is charged for the waiting it let happen (not all at
        the job's start, which a discounting agent would learn to postpone)."""
        t = self.t
        total = 0.0
        for job in self.engine.queue.values():
            total += job_value(metric, job, t)
        return total

    def final_reward(self, metric: str) -> float:
        """The episode's metric once every job has ended: minus the mean bounded slowdown, minus
        the mean wait in hours, or the node utilisation."""
        m = summarize(self.engine.result)
        if metric == "bsld":
            value = -m["mean_bounded_slowdown"]
        elif metric == "wait":
            value = -m["mean_wait"] / 3600.0
        else:
            value = m["node_utilization"]
        return 0.0 if np.isnan(value) else float(value)


def job_value(metric: str, job: Job, start: float) -> float:
    """A started job's whole share of ``metric``: its bounded slowdown, or its wait in hours."""
    wait = start - job.submit
    if metric == "wait":
        return wait / 3600.0
    run = job.walltime if job.runtime is None else min(job.runtime, job.walltime)
    return max((wait + run) / max(run, BSLD_BOUND), 1.0)


def may_wait(state: ClusterState, closer: Policy | None, mask: Sequence[bool]) -> bool:
    """Whether PickJob's "wait" is allowed: always with a backfill policy (it closes the
    instant), otherwise unless the machine would stay idle (nothing runs, a job fits)."""
    return closer is not None or bool(state.running) or not any(mask)


def pick_mask(mask: Sequence[bool], window: int, wait: bool) -> np.ndarray:
    """PickJob's action mask: the ``window`` slots' fit flags, then "wait"."""
    out = np.zeros(window + 1, dtype=bool)
    out[:len(mask)] = mask
    out[window] = wait
    return out


def check_reward(metric: str, mode: str) -> None:
    """Refuse a reward metric or mode the environments do not have."""
    if metric not in REWARDS:
        raise InputError(f"unknown reward metric {metric!r}; known: {', '.join(REWARDS)}",
                         field="reward")
    if mode not in REWARDS[metric]:
        raise InputError(f"reward {metric!r} is given {' or '.join(REWARDS[metric])}, not "
                         f"{mode!r}", field="reward_mode")

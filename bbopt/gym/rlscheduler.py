"""RLScheduler's observation and action on bbopt's engine (``bbopt/RLScheduler-v0``), so its
published baselines can be rerun with their own SWF traces (Zhang et al., "RLScheduler: An
Automated HPC Batch Job Scheduler Using Reinforcement Learning", SC'20, Section 4; the
environment ``SchedGym``/``HPCEnv`` of their code, read for its features, not copied).

Observation: a flat ``Box(0, 1, (8 * 128,))``, 8 features for each of 128 queue slots: wait so
far / 12 h, requested walltime / the trace's longest, nodes / platform nodes, memory per node /
the trace's largest (1 when unknown), user id / largest (1 when not numeric), group id / largest
(1 when unknown), executable (always 1: bbopt keeps none), can start now (``1 - 1e-5`` or
``1e-5``; here with BB, not only processors). Values are capped at ``1 - 1e-5``; an empty slot
is ``[0, 1, 1, 1, 1, 1, 1, 0]``. The slots hold the first 128 waiting jobs in arrival order
(RLScheduler's case of a queue up to 128; for longer queues it mixes several orders).

Action: ``Discrete(128)``, a slot (empty slots masked out; an empty slot is taken as slot 0).
The chosen job starts now if it fits; otherwise the episode runs until it fits, with
``backfill`` (a policy name, e.g. ``"fcfs-bb"``; default ``None``, RLScheduler's default)
applied around it at each decision point: the policy sees the chosen job first in the queue,
so EASY reserves for it and backfills the others. Reward: as :class:`~bbopt.gym.envs.PickJobEnv`
(RLScheduler's own is minus the mean bounded slowdown at the episode's end, with a 10 s bound
where bbopt's metric uses 600 s).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from gymnasium import spaces

from bbopt.core import ClusterState, Job
from bbopt.errors import InputError
from bbopt.gym.envs import _TraceEnv
from bbopt.gym.episode import Episode, Room
from bbopt.policies.registry import make_policy

QUEUE_SLOTS = 128
FEATURES = 8
WAIT_BOUND = 12 * 3600.0
_TOP = 1.0 - 1e-5
_EMPTY = (0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)


class RLSchedulerEnv(_TraceEnv):
    """``bbopt/RLScheduler-v0``: RLScheduler's 8 x 128 observation and slot action."""

    def __init__(self, workload: Any = None, platform: Any = None, *,
                 backfill: str | None = None, **kwargs: Any) -> None:
        if kwargs.pop("window", QUEUE_SLOTS) != QUEUE_SLOTS:
            raise InputError(f"RLScheduler's window is {QUEUE_SLOTS} slots", field="window")
        super().__init__(workload, platform, window=QUEUE_SLOTS, backfill=None, **kwargs)
        self.pivot_policy = make_policy(backfill) if backfill is not None else None
        self.observation_space = spaces.Box(0.0, 1.0, (QUEUE_SLOTS * FEATURES,), np.float32)
        self.action_space = spaces.Discrete(QUEUE_SLOTS)
        jobs = self.jobs
        self.max_walltime = max(j.walltime for j in jobs)
        self.max_memory = max((float(j.extra.get("memory_per_node", 0) or 0) for j in jobs),
                              default=0.0) or 1.0
        self.max_user = max((_number(j.user) for j in jobs), default=0.0) or 1.0
        self.max_group = max((_number(j.extra.get("group")) for j in jobs), default=0.0) or 1.0

    def _episode(self, jobs: list[Job]) -> Episode:
        return Episode(jobs, self.platform, None, self.tick, every_event=True)

    def _next_choice(self) -> None:
        """Advance until a job waits (RLScheduler asks at every event while jobs wait, also
        when none of them fits)."""
        ep = self.episode
        while ep.state is None or not ep.state.queue:
            if not ep.advance():
                self.slots, self.mask = [], []
                return
        self.slots = ep.window(QUEUE_SLOTS)
        self.mask = [True] * len(self.slots)

    def action_masks(self) -> np.ndarray:
        out = np.zeros(QUEUE_SLOTS, dtype=bool)
        out[:len(self.slots)] = True
        if not self.slots:
            out[0] = True  # (the episode has ended: any action)
        return out

    def _observe(self) -> np.ndarray:
        out = np.tile(np.asarray(_EMPTY, np.float32), QUEUE_SLOTS)
        ep = self.episode
        if ep.done:
            return out
        t, nodes = ep.t, self.platform.nodes
        room = Room(ep.state)
        for i, job in enumerate(self.slots):
            memory = job.extra.get("memory_per_node")
            user, group = _number(job.user), _number(job.extra.get("group"))
            row = (min((t - job.submit) / WAIT_BOUND, _TOP),
                   min(job.walltime / self.max_walltime, _TOP),
                   min(job.nodes / nodes, _TOP),
                   min(float(memory) / self.max_memory, _TOP) if memory else 1.0,
                   min(user / self.max_user, _TOP) if user else 1.0,
                   min(group / self.max_group, _TOP) if group else 1.0,
                   1.0,
                   _TOP if room.fits(job) else 1e-5)
            out[i * FEATURES:(i + 1) * FEATURES] = row
        return out

    def step(self, action: int):
        ep = self._live()
        a = int(action)
        invalid = not 0 <= a < len(self.slots)
        job = self.slots[0 if invalid else a]
        while not Room(ep.state).fits(job):
            if self.pivot_policy is not None:
                rest = tuple(j for j in ep.state.queue if j.id != job.id)
                s = ep.state
                ep.apply(self.pivot_policy.decide(
                    ClusterState(s.time, s.platform, s.running, (job, *rest), s.memory)))
            ep.state = None
            if not ep.advance():  # (cannot happen: the job fits the empty machine)
                raise InputError(f"job {job.id} never fits", field="action")
        ep.start([job])
        self._next_choice()
        return self._end_step(invalid=invalid)


#: The priority functions RLScheduler compares with (Zhang et al., SC'20, Section 5.1; lower
#: first): ``job, now -> key``. WFP3 and UNICEP are Tang et al.'s (IPDPS 2009), F1 is
#: Carastan-Santos & de Camargo's (SC'17); times in seconds, walltime is the request. UNICEP
#: counts a one-node job as two nodes (its log2 would be 0).
SCORES: dict[str, Callable[[Job, float], float]] = {
    "fcfs": lambda j, now: j.submit,
    "sjf": lambda j, now: j.walltime,
    "wfp3": lambda j, now: -((now - j.submit) / j.walltime) ** 3 * j.nodes,
    "unicep": lambda j, now: -(now - j.submit) / (math.log2(max(j.nodes, 2)) * j.walltime),
    "f1": lambda j, now: (math.log10(max(j.walltime, 0.1)) * j.nodes
                          + 870 * math.log10(max(j.submit, 0.1))),
}


def score_agent(env: Any, score: str) -> Callable[[np.ndarray, dict[str, Any]], int]:
    """An agent for ``bbopt/RLScheduler-v0`` that picks the waiting job of least ``score``
    (a name of :data:`SCORES`; ties to the earlier slot): RLScheduler's heuristic baselines,
    ``agent(observation, info) -> slot``."""
    if score not in SCORES:
        raise InputError(f"unknown score {score!r}; known: {', '.join(SCORES)}", field="score")
    key, u = SCORES[score], env.unwrapped

    def agent(obs: np.ndarray, info: dict[str, Any]) -> int:
        now = u.episode.t
        slots = u.slots
        return min(range(len(slots)), key=lambda k: key(slots[k], now)) if slots else 0

    return agent


def _number(value: Any) -> float:
    """A numeric id as a float (0 when missing or not a number)."""
    try:
        return float(value) if value is not None else 0.0
    except (TypeError, ValueError):
        return 0.0

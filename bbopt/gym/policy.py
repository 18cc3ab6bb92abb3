"""A trained PickJob agent as a bbopt policy: ``decide(state)`` asks the agent for picks as
``bbopt/PickJob-v0`` would at that decision point, then lets the backfill policy close the
instant, so the agent runs in :func:`bbopt.simulate`, ``bbopt compare`` and :func:`bbopt.decide`
beside the heuristic and exact policies (RLScheduler's evaluation, Zhang et al., SC'20,
Section 5, on bbopt's engine).

On pooled, named and proximity BB platforms the schedule is the one the environment produces for
the same agent (the tests hold the two to the byte; with proximity placement each pick names the
compute nodes the placement, or EASY's reservation mask, chose); on platforms with local SSDs
the picks' node sets are chosen by the engine and the observations of later picks at the same
instant may differ.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from itertools import islice
from typing import Any

import numpy as np

from bbopt.core import ClusterState, Decision, Job, RunningJob, RunningJobs, Start
from bbopt.gym.episode import Room, may_wait, pick_mask
from bbopt.gym.observe import Observer, room_mask
from bbopt.policies.queue import keeps_reservation
from bbopt.policies.registry import Policy, make_policy

#: ``predict(observation, action_mask) -> action``: an action of ``bbopt/PickJob-v0``.
Predict = Callable[[np.ndarray, np.ndarray], int]


class AgentPolicy:
    """The policy of a PickJob agent. ``settings``: the environment's observer settings
    (``env.unwrapped.observer.settings()``: window, running slots, scales) and its
    ``reservation`` flag, so the agent sees and may do what it saw and did in training;
    ``backfill``: as the environment's."""

    io_aware = False

    def __init__(self, predict: Predict, settings: dict[str, Any],
                 backfill: str | Policy | None = "fcfs-bb", name: str = "rl") -> None:
        self.name = name
        self.predict = predict
        self.settings = dict(settings)
        self.reservation = bool(self.settings.get("reservation", True))
        self.window = int(self.settings["window"])
        self.closer = make_policy(backfill) if backfill is not None else None
        # (asked where nothing fits only if the backfill policy wants to be)
        self.idle_unless_fits = getattr(self.closer, "idle_unless_fits", True)
        self._observer: Observer | None = None

    @classmethod
    def of_env(cls, predict: Predict, env: Any, name: str = "rl") -> AgentPolicy:
        """The policy of ``predict`` trained on ``env`` (a PickJob environment, wrapped or not)."""
        env = env.unwrapped
        return cls(predict, env.observer.settings() | {"reservation": env.reservation},
                   env.backfill, name)

    def decide(self, state: ClusterState) -> Decision:
        obs = self._observer
        if obs is None or obs.platform is not state.platform:
            s = self.settings
            obs = self._observer = Observer(
                state.platform, self.window, int(s["running_slots"]),
                walltime_scale=s["walltime_scale"], bandwidth_scale=s["bandwidth_scale"],
                wait_scale=s["wait_scale"])
        t, platform = state.time, state.platform
        running = list(state.running) if type(state.running) is RunningJobs else \
            sorted(state.running, key=lambda r: r.start + r.job.walltime)
        keys = [r.start + r.job.walltime for r in running]
        held_n, held_b = state.used()
        queue = list(state.queue)
        picks: list[Job] = []
        chosen: dict[str, tuple[int, ...] | None] = {}
        now = state
        while True:
            slots = list(islice(queue, self.window))
            room = Room(now)  # (what is free, as the engine's state after the picks shows it)
            mask = room_mask(room, slots)
            nodes: dict[str, tuple[int, ...]] = {}
            if self.reservation:
                mask = keeps_reservation(now, slots, mask, nodes)
            if not any(mask):
                break
            action = int(self.predict(obs(now, slots, mask, room),
                                      pick_mask(mask, self.window,
                                                may_wait(now, self.closer, mask))))
            if not (0 <= action < len(slots) and mask[action]):
                break  # wait (or an action the mask refuses, taken as a wait)
            job = slots[action]
            picks.append(job)
            queue.remove(job)
            pieces = room.take(job, nodes.get(job.id))
            chosen[job.id] = room.chosen.get(job.id)  # (proximity: the nodes placed on)
            i = bisect_left(keys, t + job.walltime)  # (where the engine puts it)
            running.insert(i, RunningJob(job, t, chosen[job.id], pieces))
            keys.insert(i, t + job.walltime)
            held_n += job.nodes
            held_b += job.bb
            now = ClusterState(t, platform, RunningJobs(running, (held_n, held_b)), tuple(queue),
                               state.memory)
        starts = [Start(j.id, chosen[j.id]) for j in picks]
        if self.closer is None or not queue:
            return Decision(start=tuple(starts))
        closing = self.closer.decide(now)
        return Decision(start=(*starts, *closing.start), reservations=closing.reservations,
                        stats=closing.stats, memory=closing.memory)

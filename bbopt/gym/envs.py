"""The Gymnasium environments on bbopt's engine: ``bbopt/PickJob-v0`` (which waiting job of the
window starts next, or wait) and ``bbopt/Window-v0`` (which subset of the window starts now, the
decision of BBSched, Fan et al., HPDC 2019, Section 3).

An episode is a window of ``episode_jobs`` consecutive jobs (by submission) of a workload, its
first job drawn with the seed of :meth:`reset`, replayed on the platform by the engine of
:func:`bbopt.simulate` (:mod:`bbopt.gym.episode`). At each decision point the agent sees the
first ``window`` waiting jobs and the machine (:mod:`bbopt.gym.observe`); after its starts the
``backfill`` policy (default ``fcfs-bb``: EASY with the head's nodes and BB reserved) closes the
instant, or nothing more starts with ``backfill=None``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from bbopt.core import ClusterState, Job, Platform
from bbopt.errors import InputError
from bbopt.gym.episode import (
    Episode,
    Room,
    check_reward,
    job_value,
    may_wait,
    pick_mask,
)
from bbopt.gym.observe import Observer, room_mask
from bbopt.loading import load_platform, load_workload
from bbopt.policies.queue import keeps_reservation
from bbopt.policies.registry import Policy


class _TraceEnv(gym.Env):
    """What the environments share: the trace, the platform, the episodes and the rewards.

    ``workload``: a workload file or name bbopt reads (SWF, Batsim JSON, ...; a bare name is
    looked up in ``$BBOPT_DATA``; ``None``: the embedded KTH-like trace) or a list of jobs;
    ``bb`` and ``workload_seed``: the BB requests drawn when the trace has none (as ``bbopt
    simulate --bb``). ``platform``: a :class:`~bbopt.core.Platform` or a platform name
    (``kopanski``, ``kopanski:named``, ``kopanski:proximity``, a file). Jobs that can never fit
    the platform are left out. ``episode_jobs`` consecutive jobs make an episode, ``window``
    slots are observed, ``running_slots`` running jobs are described. ``reward``: ``bsld``
    (minus the mean bounded slowdown), ``wait`` (minus the mean wait, hours) or ``util`` (node
    utilisation), given ``reward_mode="episode"`` (at the last step) or ``"step"`` (each job's
    share when it starts; not for ``util``).
    """

    metadata = {"render_modes": []}

    def __init__(self, workload: str | Path | Sequence[Job] | None = None,
                 platform: str | Platform | None = None, *, episode_jobs: int = 256,
                 window: int = 16, backfill: str | Policy | None = "fcfs-bb",
                 reward: str = "bsld", reward_mode: str = "episode", running_slots: int = 16,
                 workload_seed: int = 0, bb: str = "auto", tick: float | None = None) -> None:
        super().__init__()
        check_reward(reward, reward_mode)
        for name, value in (("episode_jobs", episode_jobs), ("window", window),
                            ("running_slots", running_slots)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"must be a positive integer, got {value!r}", field=name)
        self.platform = platform if isinstance(platform, Platform) else load_platform(platform)
        if workload is None or isinstance(workload, str | Path):
            jobs, _ = load_workload(workload, seed=workload_seed, bb=bb, platform=self.platform)
        else:
            jobs = list(workload)
        jobs = [j for j in jobs if self.platform.why_never_fits(j) is None]
        if not jobs:
            raise InputError("no job of the workload fits the platform", field="workload")
        self.jobs = sorted(jobs, key=lambda j: j.submit)
        self.episode_jobs = min(episode_jobs, len(self.jobs))
        self.window = window
        self.backfill = backfill
        self.reward_metric, self.reward_mode = reward, reward_mode
        self.tick = tick
        self.observer = Observer.of_trace(self.platform, self.jobs, window, running_slots)
        self.observation_space = spaces.Box(0.0, 1.0, (self.observer.size,), np.float32)
        self.episode: Episode | None = None
        self.slots: list[Job] = []
        self.mask: list[bool] = []
        self.room: Room | None = None  # what is free at the current decision point

    # -- episodes
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """A new episode: ``options["start"]`` fixes the index of its first job (in submission
        order), otherwise drawn from the environment's seeded generator."""
        super().reset(seed=seed)
        last = len(self.jobs) - self.episode_jobs
        start = (options or {}).get("start")
        if start is None:
            start = int(self.np_random.integers(0, last + 1))
        elif not 0 <= start <= last:
            raise InputError(f"start must be in [0, {last}], got {start!r}", field="start")
        self.episode = self._episode(self.jobs[start:start + self.episode_jobs])
        self._next_choice()
        # (the potential starts at 0: what the jobs are worth at the first decision point,
        # including the first starts, comes with the first step's reward)
        self._started_value = self._potential = 0.0
        return self._observe(), self._info()

    def _episode(self, jobs: list[Job]) -> Episode:
        return Episode(jobs, self.platform, self.backfill, self.tick)

    @property
    def state(self) -> ClusterState | None:
        """The :class:`~bbopt.core.ClusterState` a policy would see now (``bbopt.decide``)."""
        return self.episode.state if self.episode is not None else None

    def _next_choice(self) -> None:
        """Close instants (backfill) and advance until the agent has a choice, or the episode
        ends: an instant where a job of the window fits."""
        ep = self.episode
        while True:
            if ep.state is None and not ep.advance():
                self.slots, self.mask = [], []
                return
            self.slots = ep.window(self.window)
            self.room = Room(ep.state)
            self.mask = self._fit_mask()
            if any(self.mask):
                return
            ep.close()
            ep.state = None  # (the next instant; the loop goes on)

    def _fit_mask(self) -> list[bool]:
        """Which window slots the agent may start now."""
        return room_mask(self.room, self.slots)

    def _observe(self) -> np.ndarray:
        ep = self.episode
        if ep.done:
            return np.zeros(self.observation_space.shape, np.float32)
        return self.observer(ep.state, self.slots, self.mask, self.room)

    def _info(self) -> dict[str, Any]:
        return {"action_mask": self.action_masks(), "time": self.episode.t}

    def _reward(self, started: list[tuple[Job, float]], terminated: bool) -> float:
        """Episode mode: the metric at the last step. Step mode: minus the increase of the
        potential (started jobs' values plus what the waiting ones have accrued) over the
        episode's job count, so the step rewards add up to the episode's value."""
        ep = self.episode
        if self.reward_mode != "step":
            return ep.final_reward(self.reward_metric) if terminated else 0.0
        metric = self.reward_metric
        self._started_value += sum(job_value(metric, job, t) for job, t in started)
        potential = self._started_value + (0.0 if ep.done else ep.accrued(metric))
        reward = (self._potential - potential) / len(ep.jobs)
        self._potential = potential
        return reward

    def _live(self) -> Episode:
        """The episode a step acts on (refused once it has ended)."""
        ep = self.episode
        if ep is None or ep.done:
            raise InputError("step after the episode ended: call reset()", field="action")
        return ep

    def _close_instant(self) -> None:
        """Let the backfill policy close the instant and go on to the agent's next choice."""
        self.episode.close()
        self.episode.state = None
        self._next_choice()

    def _end_step(self, **info: Any):
        ep = self.episode
        started = ep.take_started()
        terminated = ep.done
        reward = self._reward(started, terminated)
        out = self._info() | info
        out["started"] = [j.id for j, _ in started]
        return self._observe(), reward, terminated, False, out

    def action_masks(self) -> np.ndarray:  # (the name sb3-contrib's MaskablePPO asks for)
        raise NotImplementedError


class PickJobEnv(_TraceEnv):
    """``bbopt/PickJob-v0``: action ``i < window`` starts the job in slot ``i`` now (masked out
    when it does not fit now or the slot is empty); action ``window`` waits: the ``backfill``
    policy closes the instant and the episode moves to the next decision point where a job of
    the window fits. After a start the agent chooses again at the same instant while a job of the
    window still fits. Waiting is masked out when nothing runs and no backfill policy is set
    (the machine would stay idle). An action that is masked out is taken as a wait (counted in
    ``info["invalid"]``). ``reservation`` (default): only starts that keep EASY's reservation
    for the oldest waiting job are allowed (:func:`~bbopt.policies.queue.keeps_reservation`), so
    the agent cannot starve it; ``False``: every job that fits now."""

    def __init__(self, *args: Any, reservation: bool = True, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.reservation = reservation
        self.action_space = spaces.Discrete(self.window + 1)
        #: the compute nodes EASY gives the allowed starts, where the BB placement chooses them
        self.nodes: dict[str, tuple[int, ...]] = {}

    def _fit_mask(self) -> list[bool]:
        mask = room_mask(self.room, self.slots)
        self.nodes = {}
        if not self.reservation:
            return mask
        return keeps_reservation(self.state, self.slots, mask, self.nodes)

    def action_masks(self) -> np.ndarray:
        ep = self.episode
        return pick_mask(self.mask, self.window, ep.done or may_wait(ep.state, ep.closer,
                                                                     self.mask))

    def step(self, action: int):
        ep = self._live()
        a = int(action)
        mask = self.action_masks()
        invalid = not (0 <= a <= self.window and mask[a])
        if not invalid and a < self.window:
            ep.start([self.slots[a]], self.nodes)
            self.slots = ep.window(self.window)
            self.room = Room(ep.state)
            self.mask = self._fit_mask()
            if not any(self.mask):
                self._close_instant()
        else:
            self._close_instant()
        return self._end_step(invalid=invalid)


class WindowEnv(_TraceEnv):
    """``bbopt/Window-v0``: the action is a subset of the window (``MultiBinary(window)``); its
    jobs start now in window order, each while it still fits with those before it (the rest of
    the subset is dropped and counted in ``info["dropped"]``); then the ``backfill`` policy
    closes the instant. One step per decision point. ``action_masks()`` is sb3-contrib's form
    (for each slot: may be 0, may be 1); ``info["action_mask"]`` the same."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.action_space = spaces.MultiBinary(self.window)

    def action_masks(self) -> np.ndarray:
        out = np.ones((self.window, 2), dtype=bool)
        out[:, 1] = False
        out[:len(self.mask), 1] = self.mask
        return out.ravel()

    def subset(self, action) -> tuple[list[Job], int]:
        """The jobs ``action`` starts now (the chosen slots in window order, each while it
        still fits) and how many chosen ones are dropped."""
        room = Room(self.episode.state)
        starts, dropped = [], 0
        for job, pick in zip(self.slots, np.asarray(action).astype(bool).ravel(), strict=False):
            if not pick:
                continue
            if room.fits(job):
                room.take(job)
                starts.append(job)
            else:
                dropped += 1
        return starts, dropped

    def step(self, action):
        ep = self._live()
        starts, dropped = self.subset(action)
        ep.start(starts)
        self._close_instant()
        return self._end_step(dropped=dropped)

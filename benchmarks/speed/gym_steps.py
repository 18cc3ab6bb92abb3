"""Steps per second of bbopt's Gymnasium environments on KTH-SP2 with BB, single and vectorised,
beside a minimal SchedGym-style reference loop measured in the same run; memory per environment.

    python benchmarks/speed/gym_steps.py [--steps 20000] [--envs 4] [--episode-jobs 256]

Workload: the KTH-SP2 trace with Kopanski's log-normal BB requests (seed 0) on Kopanski's
96-node platform (480 GB pooled BB, and 12 named 40 GB BB nodes). Agent: uniformly random over
the masked-in actions (seeded). Time: CPU seconds of this process (``time.process_time``),
episodes reset as they end; the vectorised figures are environment steps (``--envs`` per vector
step) with Gymnasium's ``SyncVectorEnv``.

The reference is a minimal loop with the mechanics of RLScheduler's SchedGym (Zhang et al.,
SC'20; processors only, no BB): a queue observation of 128 slots x 8 features rebuilt at each
step, the chosen job started when enough processors are free (time skipped forward otherwise),
time moved to the next arrival when the queue is empty. It is written here from that
description, as a yardstick of what a Python scheduling environment step costs; bbopt's steps
also carry BB, the engine's checks and the backfill policy.

Memory: the traced Python allocations (``tracemalloc``) of ``--envs`` environments built on one
shared trace and stepped 1,000 times, per environment; and the trace's own size.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import gymnasium as gym  # noqa: E402

from bbopt.core import Platform  # noqa: E402
from bbopt.gym import PickJobEnv, RLSchedulerEnv, WindowEnv  # noqa: E402
from bbopt.loading import load_workload  # noqa: E402
from benchmarks._data import data_path  # noqa: E402


class SchedGymReference:
    """A minimal SchedGym-style environment: processors only, 128 x 8 observation, slot
    action, reward minus the mean bounded slowdown (10 s bound) at the episode's end."""

    slots, features = 128, 8

    def __init__(self, jobs, nodes: int, episode_jobs: int) -> None:
        self.jobs = [(j.submit, j.walltime, min(j.runtime if j.runtime is not None
                                                else j.walltime, j.walltime), j.nodes)
                     for j in jobs]
        self.nodes = nodes
        self.n = episode_jobs
        self.max_wall = max(j[1] for j in self.jobs)

    def reset(self, rng: np.random.Generator) -> np.ndarray:
        self.start = int(rng.integers(0, len(self.jobs) - self.n))
        self.next = self.start + 1
        self.end = self.start + self.n
        self.now = self.jobs[self.start][0]
        self.queue = [self.start]
        self.running: list[tuple[float, int]] = []  # (end, nodes)
        self.free = self.nodes
        self.bsld = 0.0
        return self.observe()

    def observe(self) -> np.ndarray:
        self.queue.sort(key=lambda k: self.jobs[k][0])
        out = np.zeros(self.slots * self.features, dtype=np.float32)
        rows = []
        for k in self.queue[:self.slots]:
            submit, wall, _, nodes = self.jobs[k]
            rows.append((min((self.now - submit) / 43200, 1 - 1e-5),
                         min(wall / self.max_wall, 1 - 1e-5), min(nodes / self.nodes, 1 - 1e-5),
                         1, 1, 1, 1, 1 - 1e-5 if nodes <= self.free else 1e-5))
        rows += [(0, 1, 1, 1, 1, 1, 1, 0)] * (self.slots - len(rows))
        out[:] = np.asarray(rows, dtype=np.float32).ravel()
        return out

    def _release_first(self) -> None:
        self.running.sort()
        end, nodes = self.running.pop(0)
        self.now = max(self.now, end)
        self.free += nodes

    def _arrive(self) -> None:
        self.now = max(self.now, self.jobs[self.next][0])
        self.queue.append(self.next)
        self.next += 1

    def step(self, action: int):
        k = self.queue[action if action < len(self.queue) else 0]
        submit, _, run, nodes = self.jobs[k]
        while self.free < nodes:  # skip forward: an arrival or the first release
            self.running.sort()
            if self.next < self.end and self.jobs[self.next][0] <= self.running[0][0]:
                self._arrive()
            else:
                self._release_first()
        self.free -= nodes
        self.running.append((self.now + run, nodes))
        self.queue.remove(k)
        self.bsld += max((self.now - submit + run) / max(run, 10.0), 1.0)
        while not self.queue:  # move to the next arrival, releasing what ends before it
            if self.next >= self.end:
                return self.observe(), -self.bsld / self.n, True
            self.running.sort()
            if self.running and self.running[0][0] <= self.jobs[self.next][0]:
                self._release_first()
            else:
                self._arrive()
        return self.observe(), 0.0, False


def random_masked(rng: np.random.Generator, mask: np.ndarray, multibinary: bool):
    if multibinary:
        may = mask.reshape(-1, 2)[:, 1]
        return ((rng.random(may.size) < 0.5) & may).astype(np.int8)
    return int(rng.choice(np.flatnonzero(mask)))


def single_rate(env, steps: int, seed: int = 0) -> tuple[float, int]:
    rng = np.random.default_rng(seed)
    multibinary = isinstance(env.action_space, gym.spaces.MultiBinary)
    _, info = env.reset(seed=seed)
    episodes = 0
    c0 = time.process_time()
    for _ in range(steps):
        _, _, terminated, truncated, info = env.step(
            random_masked(rng, info["action_mask"], multibinary))
        if terminated or truncated:
            episodes += 1
            _, info = env.reset()
    return steps / (time.process_time() - c0), episodes


def vector_rate(make, n_envs: int, steps: int, seed: int = 0) -> float:
    vec = gym.vector.SyncVectorEnv([make] * n_envs)
    rng = np.random.default_rng(seed)
    multibinary = isinstance(vec.single_action_space, gym.spaces.MultiBinary)
    _, info = vec.reset(seed=seed)
    rounds = max(steps // n_envs, 1)
    c0 = time.process_time()
    for _ in range(rounds):
        actions = np.stack([random_masked(rng, m, multibinary) for m in info["action_mask"]])
        _, _, _, _, info = vec.step(actions)
    return rounds * n_envs / (time.process_time() - c0)


def reference_rate(jobs, nodes: int, episode_jobs: int, steps: int, seed: int = 0) -> float:
    env = SchedGymReference(jobs, nodes, episode_jobs)
    rng = np.random.default_rng(seed)
    env.reset(rng)
    c0 = time.process_time()
    for _ in range(steps):
        _, _, done = env.step(int(rng.integers(0, min(len(env.queue), 128))))
        if done:
            env.reset(rng)
    return steps / (time.process_time() - c0)


def memory_per_env(make, n_envs: int) -> float:
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    envs = [make() for _ in range(n_envs)]
    rng = np.random.default_rng(0)
    for env in envs:
        multibinary = isinstance(env.action_space, gym.spaces.MultiBinary)
        _, info = env.reset(seed=0)
        for _ in range(1000):
            _, _, term, _, info = env.step(random_masked(rng, info["action_mask"], multibinary))
            if term:
                _, info = env.reset()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return used / n_envs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--envs", type=int, default=4)
    ap.add_argument("--episode-jobs", type=int, default=256)
    args = ap.parse_args()
    kth = data_path("KTH-SP2-1996-2.1-cln.swf")
    tracemalloc.start()
    jobs = load_workload(kth, seed=0, platform=Platform.kopanski())[0]
    trace_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    jobs = [j for j in jobs if j.nodes <= 96]
    print(f"KTH-SP2: {len(jobs)} jobs with log-normal BB, episodes of {args.episode_jobs} jobs, "
          f"{args.steps} steps per figure, CPU time")
    ref = reference_rate(jobs, 96, args.episode_jobs, args.steps)
    rows = [("SchedGym-style reference (processors only)", "pooled", ref, None, None)]
    cases = [("PickJob-v0, window 16, fcfs-bb backfill", PickJobEnv, {}),
             ("Window-v0, window 16, fcfs-bb backfill", WindowEnv, {}),
             ("RLScheduler-v0 (8 x 128), no backfill", RLSchedulerEnv, {"backfill": None})]
    for label, cls, kw in cases:
        for plat in ("kopanski", "kopanski:named"):
            def make(cls=cls, kw=kw, plat=plat):
                return cls(jobs, plat, episode_jobs=args.episode_jobs, **kw)

            single, _ = single_rate(make(), args.steps)
            vec = vector_rate(make, args.envs, args.steps)
            mem = memory_per_env(make, args.envs)
            rows.append((label, plat.partition(":")[2] or "pooled", single, vec, mem))
    print(f"\n| environment | BB | steps/s single | x reference | steps/s sync x{args.envs} "
          f"| KiB per env |")
    print("|---|---|---:|---:|---:|---:|")
    for label, bb, single, vec, mem in rows:
        v = f"{vec:,.0f}" if vec is not None else "-"
        m = f"{mem / 1024:,.0f}" if mem is not None else "-"
        print(f"| {label} | {bb} | {single:,.0f} | {single / ref:.2f} | {v} | {m} |")
    print(f"\nthe shared trace: {trace_bytes / 2**20:.1f} MiB for {len(jobs)} jobs")


if __name__ == "__main__":
    main()

"""Train a masked PPO agent (sb3-contrib's MaskablePPO, CPU) on bbopt/PickJob-v0 for a fixed
number of steps on KTH-SP2 windows with burst buffers; writes model.zip and model.json (the
observation settings the policy needs).

    BBOPT_DATA=/path/to/traces python examples/rl/train.py [--steps 300000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

import gymnasium as gym
import torch
from common import ENV, HERE, save_settings, training_jobs
from sb3_contrib import MaskablePPO
from stable_baselines3.common.vec_env import DummyVecEnv

import bbopt.gym  # noqa: F401  (registers the environments)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--envs", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    jobs = training_jobs()
    # (Stable-Baselines3 steps its own vector of environments; each is a bbopt/PickJob-v0)
    envs = DummyVecEnv([lambda: gym.make("bbopt/PickJob-v0", workload=jobs, **ENV)
                        for _ in range(args.envs)])
    envs.seed(args.seed)
    model = MaskablePPO("MlpPolicy", envs, n_steps=512, batch_size=256, n_epochs=4,
                        gamma=0.99, learning_rate=3e-4, seed=args.seed, verbose=0,
                        policy_kwargs={"net_arch": [64, 64]})
    c0 = time.process_time()
    model.learn(total_timesteps=args.steps)
    cpu = time.process_time() - c0
    model.save(HERE / "model.zip")
    observer = envs.envs[0].unwrapped.observer
    save_settings(HERE / "model.json", observer.settings() | {"backfill": ENV["backfill"]})
    print(f"trained {args.steps} steps in {cpu:.0f} s CPU; wrote model.zip and model.json")


if __name__ == "__main__":
    main()

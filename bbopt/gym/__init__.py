"""Gymnasium environments on bbopt's engine (the optional extra ``bbopt[rl]``).

Importing this package registers ``bbopt/PickJob-v0`` and ``bbopt/Window-v0`` with Gymnasium
(``gymnasium.make("bbopt/PickJob-v0", workload="KTH-SP2-1996-2.1-cln.swf")``) and the
RLScheduler-shaped adapter ``bbopt/RLScheduler-v0``. See docs/gym.md.

Example: six 2-node jobs arriving every 10 s on 4 nodes; the agent always takes the first slot.

>>> import gymnasium as gym
>>> from bbopt import Job, Platform
>>> jobs = [Job(str(k), 10 * k, walltime=100, runtime=50, nodes=2) for k in range(6)]
>>> env = gym.make("bbopt/PickJob-v0", workload=jobs, platform=Platform(nodes=4),
...                episode_jobs=6, window=4)
>>> obs, info = env.reset(seed=0)
>>> info["action_mask"].tolist()  # slot 0 holds job 0, which fits; the last action waits
[True, False, False, False, True]
>>> terminated = False
>>> while not terminated:
...     obs, reward, terminated, truncated, info = env.step(0)
>>> env.unwrapped.episode.engine.result.start
[0, 10, 50, 60, 100, 110]
>>> reward  # minus the mean bounded slowdown, at the end of the episode
-1.0
"""

from __future__ import annotations

try:
    import gymnasium
except ImportError as exc:  # pragma: no cover - the extra is not installed
    raise ImportError("bbopt.gym needs gymnasium: pip install 'bbopt[rl]'") from exc

from bbopt.gym.envs import PickJobEnv, WindowEnv
from bbopt.gym.rlscheduler import RLSchedulerEnv

_IDS = {
    "bbopt/PickJob-v0": "bbopt.gym.envs:PickJobEnv",
    "bbopt/Window-v0": "bbopt.gym.envs:WindowEnv",
    "bbopt/RLScheduler-v0": "bbopt.gym.rlscheduler:RLSchedulerEnv",
}

for _id, _entry in _IDS.items():
    if _id not in gymnasium.registry:
        gymnasium.register(_id, entry_point=_entry, disable_env_checker=True)

__all__ = ["PickJobEnv", "RLSchedulerEnv", "WindowEnv"]

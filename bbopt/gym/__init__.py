"""Gymnasium environments on bbopt's engine (the optional extra ``bbopt[rl]``).

Importing this package registers ``bbopt/PickJob-v0`` and ``bbopt/Window-v0`` with Gymnasium
(``gymnasium.make("bbopt/PickJob-v0", workload="KTH-SP2-1996-2.1-cln.swf")``) and the
RLScheduler-shaped adapter ``bbopt/RLScheduler-v0``. See docs/gym.md.
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

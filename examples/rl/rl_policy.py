"""A trained MaskablePPO agent as a bbopt policy plug-in: ``rl:PATH`` is the agent saved in
``PATH`` (a ``model.zip`` of ``train.py``, with its observer settings in ``model.json`` beside
it), choosing which waiting job starts next as on ``bbopt/PickJob-v0``, then its backfilling
policy (``fcfs-bb``) closing each decision, as in training.

Load it with ``--plugin`` (this folder on ``PYTHONPATH``)::

    PYTHONPATH=examples/rl python -m bbopt compare --plugin rl_policy \\
        --policies sjf-bb,plan-2,rl:examples/rl/model.zip --workload KTH-SP2-1996-2.1-cln.swf

Stable-Baselines3 and torch are imported only when such a policy is made, so listing the
policies (``bbopt policies --plugin rl_policy``) does not need them.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from common import load_settings

from bbopt.errors import InputError
from bbopt.gym.policy import AgentPolicy
from bbopt.policies import register


@register("rl:", about="a MaskablePPO agent of examples/rl: rl:PATH/model.zip (its picks, then "
          "fcfs-bb)")
class TrainedAgent(AgentPolicy):
    """A MaskablePPO model as a bbopt policy (deterministic actions), read from the file its
    name gives."""

    def __init__(self, name: str = "rl:model.zip") -> None:
        model = Path(name.partition(":")[2])
        settings_file = model.with_suffix(".json")
        for path in (model, settings_file):
            if not path.is_file():
                raise InputError(f"policy {name!r}: no file {str(path)!r} (train.py writes "
                                 "model.zip and model.json)", field="--policies")
        import torch
        from sb3_contrib import MaskablePPO

        torch.set_num_threads(1)
        ppo = MaskablePPO.load(model, device="cpu")
        settings = load_settings(settings_file)

        def predict(obs: np.ndarray, mask: np.ndarray) -> int:
            return int(ppo.predict(obs, action_masks=mask, deterministic=True)[0])

        super().__init__(predict, settings, settings["backfill"], name)

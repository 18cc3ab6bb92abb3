"""State-for-state comparison of an agent with bbopt's policies: at every decision point of an
episode the environment's :class:`~bbopt.core.ClusterState` goes to each reference policy
(:func:`bbopt.decide`'s policies: EASY ``fcfs-bb``, ``plan-2``, the exact window solution
``bbsched``, ...) and the agent's choice is checked against their starts.

This is the evaluation RL scheduling papers leave out (DRAS, TPDS 2022; MRSch, Cluster 2022
compare final metrics only): how often the agent's pick is one the exact window decision (Fan et
al., BBSched, HPDC 2019, Section 3.2) would also start, decision for decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from bbopt.policies.registry import make_policy

#: ``agent(observation, info) -> action``, ``info["action_mask"]`` being the mask.
Agent = Callable[[np.ndarray, dict[str, Any]], Any]

DEFAULT_REFERENCES = ("fcfs-bb", "plan-2", "bbsched")


def agreement(env: Any, agent: Agent, references: Sequence[str] = DEFAULT_REFERENCES, *,
              options: Mapping[str, Mapping[str, Any]] | None = None, seed: int | None = None,
              reset_options: Mapping[str, Any] | None = None) -> dict[str, dict[str, float]]:
    """Play one episode of ``env`` (``bbopt/PickJob-v0`` or ``bbopt/Window-v0``) with ``agent``
    and, at each step, ask every reference policy (with ``options[name]``; ``bbsched`` gets the
    environment's window unless told otherwise) on the same state.

    Per reference: ``picks`` (jobs the agent started), ``agree`` (the share of them the
    reference also starts at that state), ``waits`` (PickJob's wait actions), ``agree_wait``
    (the share of waits where the reference starts no job of the window). The key ``"agent"``
    holds the episode's return and step count.
    """
    u = env.unwrapped
    opts = {name: dict((options or {}).get(name, {})) for name in references}
    if "bbsched" in opts:
        opts["bbsched"].setdefault("window", u.window)
    policies = {name: make_policy(name, **opts[name]) for name in references}
    counts = {name: [0, 0, 0, 0] for name in references}  # picks, agreed, waits, agreed waits
    obs, info = env.reset(seed=seed, options=dict(reset_options or {}))
    total, steps = 0.0, 0
    while True:
        action = agent(obs, info)
        state, slots = u.state, list(u.slots)
        picked = _picked(u, slots, action)
        window = {j.id for j in slots}
        for name, policy in policies.items():
            starts = {s.job_id for s in policy.decide(state).start}
            c = counts[name]
            if picked:
                c[0] += len(picked)
                c[1] += sum(1 for j in picked if j in starts)
            else:
                c[2] += 1
                c[3] += not (starts & window)
        obs, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        steps += 1
        if terminated or truncated:
            break
    out: dict[str, dict[str, float]] = {"agent": {"return": total, "steps": float(steps)}}
    for name, (p, a, w, aw) in counts.items():
        out[name] = {"picks": float(p), "agree": a / p if p else float("nan"),
                     "waits": float(w), "agree_wait": aw / w if w else float("nan")}
    return out


def _picked(u: Any, slots: list, action: Any) -> list[str]:
    """The ids of the jobs ``action`` starts: PickJob's slot if the mask allows it, Window's
    subset as the environment takes it (:meth:`~bbopt.gym.envs.WindowEnv.subset`)."""
    if hasattr(u, "subset"):
        return [j.id for j in u.subset(action)[0]]
    k = int(np.asarray(action))
    return [slots[k].id] if k < len(slots) and u.mask[k] else []

"""Evaluate the trained agent as a bbopt policy beside fcfs-bb, sjf-bb and plan-2 on the first
3,000 KTH jobs (which training never saw), through ``bbopt compare``; then, state for state,
how often its picks are starts that EASY, plan-2 and the exact window decision (bbsched) would
also make at the same decision points.

    BBOPT_DATA=/path/to/traces python examples/rl/evaluate.py [--episodes 4]

The agent is the policy plug-in of ``rl_policy.py`` (``--plugin rl_policy``), named
``rl:`` and the model's path, so ``bbopt compare --plugin rl_policy --policies
sjf-bb,plan-2,rl:examples/rl/model.zip`` runs it like any other policy: its decisions are
:class:`bbopt.gym.policy.AgentPolicy`'s, the agent's picks then EASY with BB (``fcfs-bb``)
closing each decision, as in training.
"""

from __future__ import annotations

import argparse
import os

from common import ENV, EVAL_JOBS, HERE, TRACE, evaluation_jobs
from rl_policy import TrainedAgent

from bbopt.cli import main
from bbopt.gym.compare import agreement
from bbopt.gym.envs import PickJobEnv

REFERENCES = ("fcfs-bb", "sjf-bb", "plan-2", "bbsched")
MODEL = f"rl:{os.path.relpath(HERE / 'model.zip')}"  # rl:examples/rl/model.zip from the top


def agreement_table(episodes: int) -> None:
    """The agent's picks against the references' starts, on 256-job windows of the evaluation
    jobs (one every 600 jobs)."""
    agent = TrainedAgent(MODEL)
    env = PickJobEnv(evaluation_jobs(), **(ENV | {"episode_jobs": 256}))
    totals = {name: [0.0, 0.0] for name in REFERENCES}
    for k in range(episodes):
        out = agreement(env, lambda obs, info: agent.predict(obs, info["action_mask"]),
                        REFERENCES, reset_options={"start": 600 * k})
        for name in REFERENCES:
            totals[name][0] += out[name]["picks"]
            totals[name][1] += out[name]["agree"] * out[name]["picks"]
    print(f"\nagent's picks also started by the reference, same state ({episodes} windows of "
          f"256 evaluation jobs):\n")
    print("| reference | picks | also started by the reference |")
    print("|---|---:|---:|")
    for name, (picks, agreed) in totals.items():
        print(f"| {name} | {picks:.0f} | {agreed / picks:.1%} |")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=4)
    args = ap.parse_args()
    code = main(["compare", "--plugin", "rl_policy", "--workload", TRACE, "--jobs",
                 str(EVAL_JOBS), "--policies", f"fcfs-bb,sjf-bb,plan-2,{MODEL}", "--workers", "1",
                 "--no-progress"])
    if code == 0:
        agreement_table(args.episodes)
    raise SystemExit(code)

"""RLScheduler's observation and action on bbopt's engine: its features, and the slot-0 agent
reproducing FCFS (without backfilling) and EASY with BB (backfilling around the chosen job)."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium", reason="bbopt.gym needs the [rl] extra (gymnasium)")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import bbopt.gym  # noqa: E402,F401  (registers the environments)
from bbopt import simulate  # noqa: E402
from bbopt.core import Job, Platform  # noqa: E402
from bbopt.errors import InputError  # noqa: E402
from bbopt.gym.rlscheduler import RLSchedulerEnv  # noqa: E402
from bbopt.loading import load_platform, load_workload  # noqa: E402


@pytest.fixture(scope="module")
def kth(kth_swf):
    return load_workload(kth_swf, seed=0, platform=Platform.kopanski())[0]


@pytest.mark.parametrize("backfill", [None, "fcfs-bb"])
def test_check_env(kth, backfill):
    check_env(RLSchedulerEnv(kth, episode_jobs=64, backfill=backfill),
              skip_render_check=True)  # (no render modes to try)


@pytest.mark.parametrize("platform", ["kopanski", "kopanski:named"])
@pytest.mark.parametrize(("backfill", "policy"), [(None, "fcfs"), ("fcfs-bb", "fcfs-bb")])
def test_slot_zero_agent_reproduces_the_queue_policy(kth, tmp_path, platform, backfill, policy):
    env = gym.make("bbopt/RLScheduler-v0", workload=kth, platform=platform, episode_jobs=300,
                   backfill=backfill).unwrapped
    env.reset(options={"start": 2000})
    while not env.step(0)[2]:
        pass
    ref = simulate(env.episode.jobs, load_platform(platform), policy)
    assert env.episode.engine.result.to_csv(tmp_path / "a.csv").read_bytes() == \
        ref.to_csv(tmp_path / "b.csv").read_bytes()


def test_features_of_a_slot_and_of_empty_slots():
    jobs = [Job("r", 0, walltime=7200, runtime=7200, nodes=3, user="4"),
            Job("a", 10, walltime=3600, runtime=100, nodes=2, user="2",
                extra={"memory_per_node": 500, "group": "3"}),
            Job("b", 20, walltime=600, runtime=60, nodes=1, bb=0.0, user="x")]
    env = RLSchedulerEnv(jobs, Platform(nodes=4, bb=0.0), episode_jobs=3)
    obs, info = env.reset(options={"start": 0})
    assert env.episode.t == 0.0 and [j.id for j in env.slots] == ["r"]
    obs, *_ = env.step(0)  # r starts; at t=10 a waits (needs 2 nodes, 1 free)
    assert env.episode.t == 10.0 and [j.id for j in env.slots] == ["a"]
    row = obs[:8]
    assert row == pytest.approx([0.0, 3600 / 7200, 2 / 4, 1 - 1e-5, 2 / 4, 1 - 1e-5, 1.0, 1e-5])
    assert obs[8:16] == pytest.approx([0, 1, 1, 1, 1, 1, 1, 0])
    assert info["action_mask"][:2].tolist() == [True, False]


def test_a_larger_window_is_refused(kth):
    with pytest.raises(InputError):
        RLSchedulerEnv(kth, window=64)


def test_observation_is_8_by_128(kth):
    env = gym.make("bbopt/RLScheduler-v0", workload=kth, episode_jobs=50)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (1024,) and obs.dtype == np.float32


def test_scores_order_jobs_as_their_formulas():
    """At t=30: jobs of 2, 1 and 3 nodes asking 1000, 300 and 600 s, submitted at 0, 10, 20 s.
    WFP3 ranks by (wait / walltime)^3 x nodes: 0.03^3 x 2 = 5.4e-5, (20/300)^3 = 2.96e-4,
    (10/600)^3 x 3 = 1.39e-5, so b first, then a, then c; UNICEP by wait / (log2(nodes) x
    walltime): 0.03, 0.0667 (log2 of 1 taken as 1), 0.0105; F1 by log10(walltime) x nodes +
    870 log10(submit), the earliest submission first at these sizes."""
    from bbopt.gym.rlscheduler import SCORES

    jobs = [Job("a", 0, walltime=1000, nodes=2), Job("b", 10, walltime=300, nodes=1),
            Job("c", 20, walltime=600, nodes=3)]

    def order(name):
        return [j.id for j in sorted(jobs, key=lambda j: SCORES[name](j, 30.0))]

    assert order("fcfs") == ["a", "b", "c"]
    assert order("sjf") == ["b", "c", "a"]
    assert order("wfp3") == ["b", "a", "c"]
    assert order("unicep") == ["b", "a", "c"]
    assert SCORES["wfp3"](jobs[0], 30.0) == pytest.approx(-(30 / 1000) ** 3 * 2)
    assert SCORES["f1"](jobs[1], 30.0) == pytest.approx(np.log10(300) + 870 * np.log10(10))
    assert order("f1") == ["a", "b", "c"]


def test_score_agent_picks_the_least_score_of_the_window(kth):
    from bbopt.gym.rlscheduler import SCORES, score_agent

    env = RLSchedulerEnv(kth, episode_jobs=200)
    obs, info = env.reset(options={"start": 900})
    agent = score_agent(env, "sjf")
    picks = 0
    while True:
        k = agent(obs, info)
        assert env.slots[k].walltime == min(j.walltime for j in env.slots)
        picks += len(env.slots) > 1
        obs, _, terminated, _, info = env.step(k)
        if terminated:
            break
    assert picks > 0
    assert set(SCORES) == {"fcfs", "sjf", "wfp3", "unicep", "f1"}
    with pytest.raises(InputError):
        score_agent(env, "ljf")

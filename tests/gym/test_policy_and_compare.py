"""A PickJob agent as a bbopt policy (the same schedule as in the environment), the state-for-
state comparison with the reference policies, and vectorised stepping."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium", reason="bbopt.gym needs the [rl] extra (gymnasium)")

import bbopt.gym  # noqa: E402,F401  (registers the environments)
from bbopt import simulate  # noqa: E402
from bbopt.core import Platform  # noqa: E402
from bbopt.gym.compare import agreement  # noqa: E402
from bbopt.gym.envs import PickJobEnv  # noqa: E402
from bbopt.gym.policy import AgentPolicy  # noqa: E402
from bbopt.loading import load_workload  # noqa: E402


@pytest.fixture(scope="module")
def kth(kth_swf):
    return load_workload(kth_swf, seed=0, platform=Platform.kopanski())[0]


def widest_fitting(obs, mask):
    """A deterministic agent that reads the observation: the fitting slot with the most nodes
    (ties: the first), waiting once half the window fits."""
    slots = mask[:-1]
    if mask[-1] and slots.sum() * 2 >= len(slots):
        return len(slots)
    nodes = obs[1:8 * len(slots):8]
    return int(np.argmax(np.where(slots, nodes, -1.0)))


@pytest.mark.parametrize("platform", ["kopanski", "kopanski:named", "kopanski:proximity"])
@pytest.mark.parametrize("backfill", ["fcfs-bb", None])
def test_agent_policy_schedules_as_the_environment(kth, tmp_path, platform, backfill):
    env = PickJobEnv(kth, platform, episode_jobs=250, window=8, backfill=backfill)
    obs, info = env.reset(options={"start": 3000})
    while True:
        obs, _, terminated, _, info = env.step(widest_fitting(obs, info["action_mask"]))
        if terminated:
            break
    policy = AgentPolicy.of_env(widest_fitting, env)
    ref = simulate(env.episode.jobs, env.platform, policy)
    mine = env.episode.engine.result
    as_policy = ref.to_csv(tmp_path / "b.csv").read_bytes()
    assert mine.to_csv(tmp_path / "a.csv").read_bytes() == as_policy
    # and it is not EASY's schedule: the agent changed something
    easy = simulate(env.episode.jobs, env.platform, "fcfs-bb" if backfill else "fcfs")
    assert easy.to_csv(tmp_path / "c.csv").read_bytes() != as_policy


def test_head_agent_agrees_with_easy_on_every_pick(kth):
    env = PickJobEnv(kth, episode_jobs=80, window=8)
    out = agreement(env, lambda o, i: 0 if i["action_mask"][0] else 8, ["fcfs-bb", "fcfs"],
                    reset_options={"start": 100})
    assert out["fcfs-bb"]["picks"] > 0
    assert out["fcfs-bb"]["agree"] == 1.0  # EASY's FCFS pass starts every head that fits
    assert out["fcfs"]["agree"] == 1.0
    assert out["agent"]["steps"] == out["fcfs-bb"]["picks"] + out["fcfs-bb"]["waits"]


def test_last_fitting_slot_disagrees_with_fcfs(kth):
    env = PickJobEnv(kth, episode_jobs=80, window=8)

    def last(obs, info):
        return int(np.flatnonzero(info["action_mask"][:-1])[-1])

    out = agreement(env, last, ["fcfs"], reset_options={"start": 100})
    assert 0.0 < out["fcfs"]["agree"] < 1.0


def test_sync_vector_env_steps_as_single_envs(kth):
    def make():
        return PickJobEnv(kth, "kopanski:named", episode_jobs=40, window=4)

    vec = gym.vector.SyncVectorEnv([make for _ in range(3)])
    obs, info = vec.reset(seed=[7, 8, 9])
    singles = [make() for _ in range(3)]
    firsts = [s.reset(seed=k)[0] for s, k in zip(singles, [7, 8, 9], strict=True)]
    assert np.array_equal(obs, np.stack(firsts))
    for _ in range(30):
        actions = np.array([int(np.flatnonzero(m)[0]) for m in info["action_mask"]])
        obs, rewards, term, trunc, info = vec.step(actions)
        expect = []
        for k, s in enumerate(singles):
            if s.episode.done:
                continue  # (the vector env resets it on its next step)
            o, r, t, _, _ = s.step(int(actions[k]))
            expect.append((k, o, r, t))
        for k, o, r, t in expect:
            assert rewards[k] == r and term[k] == t
            if not t:
                assert np.array_equal(obs[k], o)


def test_make_vec_by_id(kth):
    vec = gym.make_vec("bbopt/Window-v0", num_envs=2, vectorization_mode="sync",
                       workload=kth, episode_jobs=30)
    obs, info = vec.reset(seed=0)
    assert obs.shape[0] == 2 and info["action_mask"].shape == (2, 32)


def test_the_state_goes_to_bbopt_decide(kth):
    """Mid-episode (named BB nodes, jobs running and waiting), the environment's state is a
    valid input of bbopt.decide for EASY, plan-2 and the exact window policy."""
    from bbopt import decide

    env = PickJobEnv(kth, "kopanski:named", episode_jobs=200, window=8)
    _, info = env.reset(options={"start": 7000})
    for _ in range(40):
        _, _, _, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
    state = env.state
    assert state.queue and state.running
    for name in ("fcfs-bb", "plan-2", "bbsched"):
        d = decide(state, name)
        assert {s.job_id for s in d.start} <= {j.id for j in state.queue}


def test_agreement_on_window_subsets(kth):
    """Window-v0: the agent choosing every fitting slot starts them in window order while they
    fit, which EASY's FCFS pass does for the fitting prefix; filler, which starts every job that
    fits in queue order, starts each of them (the window is the queue's front)."""
    from bbopt.gym.envs import WindowEnv

    env = WindowEnv(kth, episode_jobs=80, window=4, backfill=None)

    def all_fitting(obs, info):
        return info["action_mask"].reshape(-1, 2)[:, 1].astype(np.int8)

    out = agreement(env, all_fitting, ["filler", "fcfs"], reset_options={"start": 100})
    assert out["filler"]["picks"] > 0
    assert out["filler"]["agree"] == 1.0
    assert out["fcfs"]["agree"] < 1.0

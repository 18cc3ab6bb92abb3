"""The Gymnasium environments: Gymnasium's own checks, determinism, action masks, rewards, and
the conformance of the "always pick the head" agent with the queue policies' schedules."""

from __future__ import annotations

import numpy as np
import pytest

gym = pytest.importorskip("gymnasium", reason="bbopt.gym needs the [rl] extra (gymnasium)")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import bbopt.gym  # noqa: E402,F401  (registers the environments)
from bbopt import simulate  # noqa: E402
from bbopt.core import ClusterState, Job, Platform, RunningJob, RunningJobs  # noqa: E402
from bbopt.errors import InputError  # noqa: E402
from bbopt.gym.envs import PickJobEnv, WindowEnv  # noqa: E402
from bbopt.gym.episode import Room  # noqa: E402
from bbopt.loading import load_platform, load_workload  # noqa: E402

PLATFORMS = ("kopanski", "kopanski:named", "kopanski:proximity")


@pytest.fixture(scope="module")
def kth(kth_swf):
    """The KTH trace with Kopanski's log-normal BB requests (seed 0), as the CLI reads it."""
    return load_workload(kth_swf, seed=0, platform=Platform.kopanski())[0]


def head_pick(env, info):
    """Always the head of the queue when it fits, else wait."""
    return 0 if info["action_mask"][0] else env.unwrapped.window


def head_window(env, info):
    """The window's subset holding the head alone, when it fits (else nothing)."""
    u = env.unwrapped
    action = np.zeros(u.window, dtype=np.int8)
    action[0] = info["action_mask"][1]  # (slot 0 may be 1)
    return action


def play(env, agent, seed=0, **reset):
    obs, info = env.reset(seed=seed, **reset)
    trace, total = [obs], 0.0
    while True:
        obs, reward, terminated, truncated, info = env.step(agent(env, info))
        trace.append(obs)
        total += reward
        assert not truncated
        if terminated:
            return trace, total, info


@pytest.mark.parametrize("cls", [PickJobEnv, WindowEnv])
@pytest.mark.parametrize("backfill", ["fcfs-bb", None])
@pytest.mark.parametrize("platform", PLATFORMS)
def test_check_env(kth, cls, backfill, platform):
    env = cls(kth, platform, episode_jobs=48, window=8, backfill=backfill)
    check_env(env, skip_render_check=True)  # (no render modes to try)


def test_registered_ids_make_the_environments(kth):
    assert isinstance(gym.make("bbopt/PickJob-v0", workload=kth).unwrapped, PickJobEnv)
    assert isinstance(gym.make("bbopt/Window-v0", workload=kth).unwrapped, WindowEnv)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize(("cls", "agent", "backfill", "policy"), [
    (PickJobEnv, head_pick, "fcfs-bb", "fcfs-bb"),
    (PickJobEnv, head_pick, None, "fcfs"),
    (WindowEnv, head_window, "fcfs-bb", "fcfs-bb"),
])
def test_head_agent_reproduces_the_queue_policy(kth, tmp_path, platform, cls, agent, backfill,
                                                policy):
    env = cls(kth, platform, episode_jobs=300, backfill=backfill)
    play(env, agent, options={"start": 1200})
    mine = env.unwrapped.episode.engine.result
    ref = simulate(env.episode.jobs, load_platform(platform), policy)
    assert len(mine) == 300
    assert mine.to_csv(tmp_path / "env.csv").read_bytes() == \
        ref.to_csv(tmp_path / "ref.csv").read_bytes()


@pytest.mark.parametrize("cls", [PickJobEnv, WindowEnv])
def test_same_seed_same_episode(kth, cls):
    def run(seed):
        env = cls(kth, "kopanski:named", episode_jobs=80, window=8)
        env.action_space.seed(seed)
        sampler = np.random.default_rng(seed)

        def agent(env, info):  # a random masked agent, seeded
            mask = info["action_mask"]
            if cls is PickJobEnv:
                return int(sampler.choice(np.flatnonzero(mask)))
            return (sampler.random(env.window) < 0.5) & mask.reshape(-1, 2)[:, 1]

        trace, total, _ = play(env, agent, seed=seed)
        return np.stack(trace), total, env.episode.jobs[0].id

    a, b, c = run(5), run(5), run(6)
    assert np.array_equal(a[0], b[0]) and a[1] == b[1] and a[2] == b[2]
    assert a[2] != c[2]  # another seed, another window of the trace


def test_masked_in_starts_are_admitted_and_masked_out_do_not_fit(kth):
    """A random agent over the masked actions on named BB nodes: the engine never refuses a
    start, and every masked-out slot holds a job that needs more nodes or BB than is free, or
    whose pieces cannot be placed on the BB nodes."""
    env = PickJobEnv(kth, "kopanski:named", episode_jobs=200, window=16, backfill=None,
                     reservation=False)
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=2)
    checked = 0
    while True:
        state, slots, mask = env.state, env.slots, info["action_mask"]
        room = Room(state)
        free_n, free_b = state.free()
        for job, ok in zip(slots, mask, strict=False):
            if not ok:
                checked += 1
                assert job.nodes > free_n or job.bb > free_b or room.planner.bb.placement(
                    job) is None
        action = int(rng.choice(np.flatnonzero(mask)))
        if action < env.window:
            job = slots[action]
            obs, _, terminated, _, info = env.step(action)
            k = env.episode.engine.index[job.id]
            assert env.episode.engine.result.start[k] == state.time  # started at once
        else:
            obs, _, terminated, _, info = env.step(action)
        if terminated:
            break
    assert checked > 0
    assert env.episode.engine.result.refused_starts == 0


def test_mask_at_the_burst_buffer_threshold():
    """Pooled BB of 100 B, 60 B held: a 40 B job fits, one 40 B + slack fits (rounding), one a
    byte more does not; a job asking more nodes than are free does not."""
    platform = Platform(nodes=4, bb=100.0)
    running = RunningJobs([RunningJob(Job("r", 0, walltime=10, runtime=10, nodes=2, bb=60.0),
                                      0.0, (0, 1))])

    state = ClusterState(1.0, platform, running, ())
    room = Room(state)
    fits = [room.fits(Job(i, 0, walltime=5, nodes=n, bb=b)) for i, n, b in
            [("a", 2, 40.0), ("b", 2, 40.0 + 100 * 1e-9), ("c", 2, 41.0), ("d", 3, 0.0)]]
    assert fits == [True, True, False, False]


def test_wait_is_masked_only_on_an_idle_machine_without_backfill(kth):
    env = PickJobEnv(kth, episode_jobs=20, window=4, backfill=None)
    _, info = env.reset(seed=0)
    assert not env.state.running and not info["action_mask"][-1]
    env = PickJobEnv(kth, episode_jobs=20, window=4)
    _, info = env.reset(seed=0)
    assert info["action_mask"][-1]


def test_invalid_action_is_a_wait(kth):
    env = PickJobEnv(kth, episode_jobs=30, window=4)
    _, info = env.reset(seed=0)
    bad = int(np.flatnonzero(~info["action_mask"])[0]) if not info["action_mask"].all() else 99
    _, _, _, _, info = env.step(bad)
    assert info["invalid"]


@pytest.mark.parametrize("metric", ["bsld", "wait"])
def test_step_rewards_sum_to_the_episode_metric(kth, metric):
    """Per-step rewards add up to minus the episode's mean bounded slowdown (or wait in hours),
    the value of the episode-end reward."""
    step = PickJobEnv(kth, episode_jobs=120, reward=metric, reward_mode="step")
    end = PickJobEnv(kth, episode_jobs=120, reward=metric, reward_mode="episode")
    _, total_step, _ = play(step, head_pick, options={"start": 500})
    _, total_end, _ = play(end, head_pick, options={"start": 500})
    assert total_end < 0
    assert total_step == pytest.approx(total_end, rel=1e-9)
    if metric == "bsld":
        assert total_end <= -1.0  # a bounded slowdown is at least 1


def test_utilisation_reward_at_episode_end(kth):
    env = PickJobEnv(kth, episode_jobs=60, reward="util")
    _, total, _ = play(env, head_pick, options={"start": 0})
    assert 0.0 < total <= 1.0


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"reward": "makespan"}, "reward"),
    ({"reward": "util", "reward_mode": "step"}, "reward_mode"),
    ({"window": 0}, "window"),
    ({"episode_jobs": True}, "episode_jobs"),
])
def test_bad_options_raise_input_errors(kth, kwargs, field):
    with pytest.raises(InputError) as err:
        PickJobEnv(kth, **kwargs)
    assert err.value.field == field


def test_reset_start_out_of_range(kth):
    env = PickJobEnv(kth, episode_jobs=10)
    with pytest.raises(InputError):
        env.reset(options={"start": len(env.jobs)})


@pytest.mark.parametrize(("cls", "kwargs"), [(PickJobEnv, {"reservation": True}),
                                             (PickJobEnv, {"reservation": False}),
                                             (WindowEnv, {})])
def test_random_agent_on_proximity_placement_is_admitted(kth, cls, kwargs):
    """A random masked agent on proximity BB placement: every start it picks names the compute
    nodes the placement (or, keeping the oldest job's reservation, EASY's backfill) chose, and
    the engine admits every start (picks and the closing fcfs-bb's); each started job holds its
    nodes and pieces, which lie on the BB nodes its nodes prefer first when they have room."""
    env = cls(kth, "kopanski:proximity", episode_jobs=150, window=8, **kwargs)
    rng = np.random.default_rng(7)
    _, info = env.reset(options={"start": 2000})
    picked = 0
    while True:
        mask = info["action_mask"]
        if cls is PickJobEnv:
            action = int(rng.choice(np.flatnonzero(mask)))
            picked += action < env.window
        else:
            action = (rng.random(env.window) < 0.5) & mask.reshape(-1, 2)[:, 1]
            picked += int(action.sum())
        _, _, terminated, _, info = env.step(action)
        if terminated:
            break
    res = env.episode.engine.result
    assert picked > 20
    assert res.refused_starts == 0
    assert len(res) == 150 and all(s >= j.submit for j, s in zip(res.jobs, res.start,
                                                                    strict=True))


def test_reservation_nodes_on_proximity_avoid_the_heads():
    """Proximity placement, 6 nodes, nodes 0-2 busy until 100: the oldest job (5 nodes) is
    held from 100 on nodes 0-4 (the consecutive run the authors' filter takes). A 1-node job
    still running then may start now only clear of them: on node 5, where the placement alone
    would take node 3 (the lowest of the free run 3-5); one that ends by 100 gets node 3."""
    from bbopt.core import dragonfly_proximity
    from bbopt.policies.queue import keeps_reservation

    platform = Platform(nodes=6, bb=60.0, bb_nodes=(20.0, 20.0, 20.0),
                        bb_proximity=dragonfly_proximity(6, 2, 3))
    busy = RunningJob(Job("r", 0, 100.0, nodes=3), 0.0, (0, 1, 2), ())
    head = Job("h", 0, 50.0, nodes=5)
    long = Job("l", 0, 200.0, nodes=1, bb=6.0)
    short = Job("s", 0, 100.0, nodes=1, bb=6.0)
    state = ClusterState(0.0, platform, RunningJobs([busy]), (head, long, short))
    nodes: dict = {}
    assert keeps_reservation(state, [head, long, short], [False, True, True], nodes) == \
        [False, True, True]
    assert nodes == {"l": (5,), "s": (3,)}
    room = Room(state)
    assert room.take(long) == ((1, 6.0),) and room.chosen == {"l": (3,)}
    room = Room(state)
    assert room.take(long, nodes["l"]) == ((2, 6.0),) and room.chosen == {"l": (5,)}


def test_observation_layout(kth):
    env = PickJobEnv(kth, "kopanski:named", episode_jobs=30, window=4, running_slots=3)
    obs, info = env.reset(seed=0, options={"start": 0})
    assert obs.shape == (4 * 8 + 5 + 12 + 3 * 2,)
    head = env.slots[0]
    assert obs[0] == 1.0 and obs[1] == pytest.approx(head.nodes / 96)
    assert obs[2] == pytest.approx(head.bb / (480e9))
    assert obs[7] == float(info["action_mask"][0])
    machine = obs[32:37]
    free_n, _ = env.state.free()
    assert machine[0] == pytest.approx(free_n / 96)
    assert np.all((obs >= 0) & (obs <= 1))


@pytest.mark.parametrize("platform", ["kopanski", "kopanski:proximity"])
def test_reservation_mask_never_delays_the_oldest_job(kth, platform):
    """Random masked agents, EASY with BB closing each instant: with ``reservation`` the oldest
    waiting job starts no later than the EASY shadow time of any decision point where it was
    the oldest; without it, some oldest jobs are pushed past it. With proximity placement the
    shadow time is the planner's (the head's nodes and pieces placeable then), and a pick the
    mask allows starts on the nodes EASY gives it, clear of those the head's reservation holds
    (on the placement's own choice, one oldest job of this episode starts late)."""
    from bbopt.planner import Planner
    from bbopt.policies.queue import head_reservation

    def late_heads(reservation):
        env = PickJobEnv(kth, platform, episode_jobs=300, window=16,
                         reservation=reservation)
        rng = np.random.default_rng(3)
        obs, info = env.reset(options={"start": 4000})
        promised: dict[str, float] = {}
        while True:
            state = env.state
            head = state.queue[0]
            free_n, free_b = state.free()
            shadow = (head_reservation(state, [], head, free_n, free_b)[0]
                      if platform == "kopanski" else Planner.of(state).earliest(head))
            promised[head.id] = min(promised.get(head.id, np.inf), shadow)
            obs, _, terminated, _, info = env.step(
                int(rng.choice(np.flatnonzero(info["action_mask"]))))
            if terminated:
                break
        res = env.episode.engine.result
        start = {j.id: s for j, s in zip(res.jobs, res.start, strict=True)}
        return sum(start[j] > t + 1e-6 for j, t in promised.items())

    assert late_heads(True) == 0
    assert late_heads(False) > 0


def test_window_subset_starts_in_window_order_while_it_fits():
    """4 free nodes, a window of 3 jobs of 3, 2 and 1 nodes, all chosen: the 3-node job starts,
    the 2-node one no longer fits and is dropped, the 1-node one starts."""
    jobs = [Job("a", 0, walltime=100, runtime=100, nodes=3),
            Job("b", 0, walltime=100, runtime=100, nodes=2),
            Job("c", 0, walltime=100, runtime=100, nodes=1)]
    env = WindowEnv(jobs, Platform(nodes=4), episode_jobs=3, window=3, backfill=None)
    _, info = env.reset(options={"start": 0})
    assert info["action_mask"].reshape(-1, 2)[:, 1].tolist() == [True, True, True]
    _, _, _, _, info = env.step(np.ones(3, dtype=np.int8))
    assert info["started"] == ["a", "c"] and info["dropped"] == 1

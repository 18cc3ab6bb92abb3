"""A policy's kept memory on a state its decisions did not make.

``bbopt.decide`` and ``bbopt serve`` are asked by resource managers that need not carry out
the advice: jobs start that were not advised (or later than advised), jobs end before their
walltime, jobs leave the queue. A policy that keeps memory between decisions (conservative-bb's
reservations, a plan policy's kept order, fair share's usage and claims, a window's rounds, a
pack) must check it against the state it is given: never raise, and start only what fits.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import ClusterState, Job, Platform, Reservation, decide
from bbopt.core import RunningJob
from bbopt.errors import InputError
from bbopt.policies import make_policy

POOLED = Platform(nodes=6, bb=100.0)
NAMED = Platform(nodes=6, bb=100.0, bb_nodes=(40.0, 30.0, 30.0))
#: Pack scheduling plans nodes and the I/O node's bandwidth only: a platform without BB.
NO_BB = Platform(nodes=6, bb=0.0)
#: The policies that keep memory between decisions, with the options of a quick decision.
KEEPERS = {
    "conservative-bb": {},
    "plan-2": {"budget": 0.02},
    "fair-share": {},
    "omfs": {},
    "naive": {},
    "weighted": {},
    "pack-char": {"bandwidth": 1e9},
    "pack-opt": {"bandwidth": 1e9, "budget": 0.02},
}


def _repro() -> tuple[ClusterState, tuple[Job, ...]]:
    jobs = tuple(Job(f"j{i}", 0.0, 100.0, nodes=1) for i in range(10))
    return ClusterState(0.0, Platform(nodes=4, bb=0.0), (), jobs), jobs


def test_a_start_the_resource_manager_chose_keeps_what_still_holds():
    """10 one-node jobs of 100 s on 4 nodes: conservative-bb starts j0-j3 and reserves j4-j7
    at 100, j8-j9 at 200. The resource manager starts j0 alone, at 1: j0 holds a node until
    101, so only three of j4-j7 can hold their slot at 100; the fourth (j7) is planned again,
    and the free nodes let the three move up to now. Nothing is refused, nothing overbooks."""
    state, jobs = _repro()
    first = decide(state, "conservative-bb")
    assert first.started_ids == ["j0", "j1", "j2", "j3"]
    assert first.memory == {"reservations": {"j4": 100.0, "j5": 100.0, "j6": 100.0,
                                             "j7": 100.0, "j8": 200.0, "j9": 200.0}}
    after = ClusterState(1.0, state.platform, (RunningJob(jobs[0], 1.0),), jobs[1:],
                         first.memory)
    again = decide(after, "conservative-bb")
    assert again.started_ids == ["j4", "j5", "j6"]
    assert again.reservations == (Reservation("j1", 101.0), Reservation("j2", 101.0),
                                  Reservation("j8", 101.0), Reservation("j9", 101.0),
                                  Reservation("j3", 201.0), Reservation("j7", 201.0))


def test_a_memory_from_another_platform_is_checked_against_this_one():
    """The reservations of the 4-node decision on a 2-node platform: none overbooks it."""
    state, jobs = _repro()
    first = decide(state, "conservative-bb")
    small = ClusterState(0.0, Platform(nodes=2, bb=0.0), (), jobs[4:], first.memory)
    again = decide(small, "conservative-bb")
    assert again.started_ids == ["j4", "j5"]
    assert [r.start for r in again.reservations] == [100.0, 100.0, 200.0, 200.0]


@pytest.mark.parametrize("memory, path", [
    ({"reservations": [1, 2]}, "$.memory reservations"),
    ({"reservations": {"j4": "soon"}}, "$.memory.reservations j4"),
    ({"reservations": {"j4": float("nan")}}, "$.memory.reservations j4"),
])
def test_a_malformed_memory_names_its_json_path(memory, path):
    state, jobs = _repro()
    with pytest.raises(InputError) as err:
        decide(ClusterState(0.0, state.platform, (), jobs, memory), "conservative-bb")
    where, field = path.split()
    assert where in str(err.value) and field in str(err.value)


def _fits(state: ClusterState, started: list[str]) -> None:
    """The started jobs wait in ``state`` and fit beside the running jobs."""
    by_id = {j.id: j for j in state.queue}
    assert len(set(started)) == len(started)
    assert set(started) <= set(by_id)
    nodes = sum(r.job.nodes for r in state.running) + sum(by_id[i].nodes for i in started)
    bb = sum(r.job.bb for r in state.running) + sum(by_id[i].bb for i in started)
    assert nodes <= state.platform.nodes
    assert bb <= state.platform.bb * (1 + 1e-9) + 1e-9


def _perturbed(state: ClusterState, advised: list[str], rnd: random.Random,
               step: float) -> ClusterState:
    """What a resource manager made of the advice ``step`` seconds later: some advised jobs
    start (late), some not, some jobs start that were not advised, some running jobs end
    early, some waiting jobs leave the queue."""
    now = state.time + step
    platform = state.platform
    running = [r for r in state.running
               if r.start + r.job.walltime > now and rnd.random() > 0.3]
    queue = [j for j in state.queue if rnd.random() > 0.15]
    nodes = sum(r.job.nodes for r in running)
    bb = sum(r.job.bb for r in running)
    free_bb_nodes = list(platform.bb_nodes or ())
    for r in running:
        for b, size in r.bb_pieces or ():
            free_bb_nodes[b] -= size
    wanted = [j for j in queue if j.id in advised and rnd.random() > 0.3]
    wanted += [j for j in queue if j.id not in advised and rnd.random() > 0.6]
    started = set()
    for job in wanted:
        if nodes + job.nodes > platform.nodes or bb + job.bb > platform.bb:
            continue
        pieces = None
        if platform.bb_nodes is not None:
            # all of its BB on one BB node with room, else it does not start
            b = next((b for b, f in enumerate(free_bb_nodes) if f >= job.bb), None)
            if b is None:
                continue
            free_bb_nodes[b] -= job.bb
            pieces = ((b, job.bb),) if job.bb > 0 else ()
        nodes += job.nodes
        bb += job.bb
        started.add(job.id)
        running.append(RunningJob(job, now - rnd.choice([0.0, 0.5]) * step,
                                  bb_pieces=pieces))
    queue = [j for j in queue if j.id not in started]
    return ClusterState(now, platform, tuple(running), tuple(queue))


@st.composite
def _queues(draw):
    n = draw(st.integers(1, 12))
    return tuple(Job(f"j{k}", 0.0, float(draw(st.integers(1, 40))), nodes=draw(st.integers(1, 6)),
                     bb=float(draw(st.sampled_from([0, 10, 25, 30, 60])))) for k in range(n))


def _setting(policy: str, named: bool) -> tuple[Platform, dict]:
    if policy.startswith("pack-"):
        return NO_BB, dict(KEEPERS[policy])
    return (NAMED if named and policy == "conservative-bb" else POOLED), dict(KEEPERS[policy])


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(sorted(KEEPERS)), _queues(), st.booleans(), st.booleans(),
       st.randoms(use_true_random=False), st.lists(st.sampled_from([0.0, 1.0, 7.0, 30.0]),
                                                   min_size=1, max_size=4))
def test_memory_on_a_state_an_outside_manager_perturbed(policy, queue, named, kept, rnd, steps):
    """Decide, let a resource manager do something else, decide again with the memory (a fresh
    policy each time, as ``bbopt.decide``, or one kept policy, as a ``bbopt serve`` session):
    never an error, and every start fits."""
    platform, options = _setting(policy, named)
    if platform is NO_BB:
        queue = tuple(Job(j.id, 0.0, j.walltime, nodes=j.nodes) for j in queue)
    state = ClusterState(0.0, platform, (), queue)
    one = make_policy(policy, **options) if kept else None
    for step in steps:
        decision = decide(state, one if kept else policy, **({} if kept else options))
        _fits(state, decision.started_ids)
        memory = decision.memory or {}
        state = _perturbed(state, decision.started_ids, rnd, step)
        state = ClusterState(state.time, platform, state.running, state.queue, memory)
    _fits(state, decide(state, one if kept else policy,
                        **({} if kept else options)).started_ids)

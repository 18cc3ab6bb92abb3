"""EASY's shadow time over the engine's sorted running jobs (``RunningJobs``: a scan that stops
at the shadow time) equals the generic one over an unordered tuple (every release sorted and
given by :func:`bbopt.planner.first_fit_time`), with many running jobs ending together."""

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import ClusterState, Job, Platform, RunningJob, RunningJobs
from bbopt.policies.queue import head_reservation

PLATFORM = Platform(nodes=16, bb=100.0)


@st.composite
def situations(draw):
    """Running jobs with few distinct expected ends, jobs started now, a head that waits."""
    now = float(draw(st.integers(0, 5)))
    running, used_n, used_b = [], 0, 0.0
    for k in range(draw(st.integers(0, 8))):
        n = draw(st.integers(1, 4))
        b = float(draw(st.sampled_from([0, 5, 12.5, 30])))
        if used_n + n > PLATFORM.nodes or used_b + b > PLATFORM.bb:
            break
        start = float(draw(st.integers(0, int(now))))
        wall = float(draw(st.sampled_from([1, 2, 4, 8]))) + (now - start)
        running.append(RunningJob(Job(f"r{k}", start, wall, wall, n, b), start))
        used_n, used_b = used_n + n, used_b + b
    started = []
    for k in range(draw(st.integers(0, 3))):
        n = draw(st.integers(1, 3))
        b = float(draw(st.sampled_from([0, 5, 20])))
        if used_n + n > PLATFORM.nodes or used_b + b > PLATFORM.bb:
            break
        started.append(Job(f"s{k}", now, float(draw(st.sampled_from([1, 2, 4, 8]))), 1.0, n, b))
        used_n, used_b = used_n + n, used_b + b
    head = Job("h", now, 3.0, 3.0, draw(st.integers(1, PLATFORM.nodes)),
               float(draw(st.sampled_from([0, 10, 50, 100]))))
    return now, running, started, head, PLATFORM.nodes - used_n, PLATFORM.bb - used_b


@settings(max_examples=400, deadline=None)
@given(situations(), st.booleans(), st.randoms(use_true_random=False))
def test_sorted_scan_equals_generic_shadow(situation, reserve_bb, rnd):
    now, running, started, head, free_n, free_b = situation
    by_end = RunningJobs(sorted(running, key=lambda r: r.expected_end))
    shuffled = list(running)
    rnd.shuffle(shuffled)
    fast = head_reservation(ClusterState(now, PLATFORM, by_end), started, head, free_n, free_b,
                            reserve_bb=reserve_bb)
    plain = head_reservation(ClusterState(now, PLATFORM, tuple(shuffled)), started, head,
                             free_n, free_b, reserve_bb=reserve_bb)
    assert fast == plain

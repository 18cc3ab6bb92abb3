"""EASY's backfill pass over a long queue visits only the jobs the engine's numpy columns
(:mod:`bbopt.simulation.queue_columns`) say could start: the same jobs as the plain filter, so
the same schedules as the pass over the whole queue."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.core import QueueView
from bbopt.simulation.queue_columns import JobColumns


def _plain(jobs, start, now, free_n, fit_b, shadow, extra_n, extra_fit_b):
    """The filter written as the backfill loop's own tests (the reference)."""
    return [j for j in jobs[start:] if j.nodes <= free_n and j.bb <= fit_b
            and (now + j.walltime <= shadow or (j.nodes <= extra_n and j.bb <= extra_fit_b))]


@st.composite
def _jobs(draw):
    n = draw(st.integers(1, 40))
    return [Job(str(k), 0.0, walltime=float(draw(st.integers(1, 12))),
                nodes=draw(st.integers(1, 6)), bb=float(draw(st.integers(0, 8))) / 4)
            for k in range(n)]


@settings(max_examples=300, deadline=None)
@given(_jobs(), st.data())
def test_candidates_are_exactly_the_plain_filter(jobs, data):
    lo = data.draw(st.integers(0, len(jobs)))
    start = data.draw(st.integers(0, len(jobs) - lo))
    order = data.draw(st.permutations(range(len(jobs))))  # (queue order is not job order)
    queue = [jobs[k] for k in order]
    bounds = (data.draw(st.sampled_from([0.0, 2.0, 5.0])),  # now
              data.draw(st.integers(0, 6)),  # free nodes
              data.draw(st.integers(0, 9)) / 4,  # BB that fits now
              data.draw(st.sampled_from([3.0, 7.0, 10.0, math.inf])),  # shadow time
              data.draw(st.integers(0, 6)),  # extra nodes at the shadow time
              data.draw(st.sampled_from([0.0, 0.5, 1.25, math.inf])))  # extra BB there
    view = QueueView.of(queue, lo, list(order), JobColumns(jobs))
    got = view.backfill_candidates(start, *bounds)
    assert got == _plain(queue[lo:], start, *bounds)
    assert QueueView.of(queue, lo).backfill_candidates(start, *bounds) is None


@st.composite
def _long_workloads(draw):
    """Enough jobs at once on 8 nodes for queues past the engine's short-queue length."""
    jobs = []
    for k in range(draw(st.integers(70, 160))):
        walltime = draw(st.integers(1, 20))
        jobs.append(Job(str(k), float(draw(st.integers(0, 40))), walltime=float(walltime),
                        runtime=float(draw(st.integers(0, walltime))),
                        nodes=draw(st.integers(1, 8)), bb=float(draw(st.integers(0, 100)))))
    return jobs


@pytest.mark.parametrize("policy", ["fcfs-easy", "fcfs-bb", "sjf-bb"])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=_long_workloads())
def test_long_queue_schedules_equal_the_pass_over_the_whole_queue(policy, jobs):
    platform = Platform(nodes=8, bb=100.0)
    views = []
    fast = simulate(jobs, platform, policy, on_decision=lambda s, d: views.append(
        type(s.queue) is QueueView))
    assert any(views)  # (long queues were handed as views with columns)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(QueueView, "backfill_candidates", lambda self, *a: None)
        plain = simulate(jobs, platform, policy)
    assert fast.start == plain.start and fast.end == plain.end

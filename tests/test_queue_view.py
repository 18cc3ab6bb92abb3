"""The engine hands the waiting queue as a tuple when it is short and otherwise as a
:class:`bbopt.queue_view.QueueView` kept between decisions (arrivals appended, head starts
moving its start, other changes on copies): at every decision it lists exactly the waiting jobs
in arrival order, and a view kept after its decision never changes."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import Job, simulate
from bbopt.queue_view import QueueView
from bbopt.simulation.engine import SHORT_QUEUE
from tests._random_workloads import PLATFORMS, workloads


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(["fcfs", "filler", "fcfs-easy", "sjf-bb",
                                     "conservative-bb"]),
       st.sampled_from(PLATFORMS), st.sampled_from([None, 3.0]))
def test_the_view_is_the_waiting_queue_and_never_changes(jobs, policy, platform, tick):
    seen = []
    simulate(jobs, platform, policy, tick=tick, on_decision=lambda s, d: seen.append(
        (s.time, s.queue, tuple(s.queue), d.started_ids)))
    rank = {job.id: (job.submit, k) for k, job in enumerate(jobs)}
    gone: set[str] = set()  # started at an earlier decision
    for t, view, snapshot, started in seen:
        assert type(view) is (tuple if len(snapshot) <= SHORT_QUEUE else QueueView)
        assert view == snapshot and tuple(view) == snapshot and len(view) == len(snapshot)
        assert [rank[j.id] for j in snapshot] == sorted(rank[j.id] for j in snapshot)
        if platform.bb_nodes is None:  # (named BB nodes: a start can be refused)
            waiting = tuple(j for j in sorted(jobs, key=lambda j: rank[j.id])
                            if j.submit <= t and j.id not in gone
                            and j.nodes <= platform.nodes and j.bb <= platform.bb)
            assert snapshot == waiting, t
        gone.update(started)


def test_view_reads_like_a_tuple():
    jobs = [Job(str(k), 0, 10) for k in range(6)]
    v = QueueView(jobs, 2, 5)
    t = tuple(jobs[2:5])
    assert len(v) == 3 and tuple(v) == t and list(v) == list(t)
    assert v[0] is jobs[2] and v[-1] is jobs[4] and v[1:] == t[1:] and v[::-1] == t[::-1]
    with pytest.raises(IndexError):
        v[3]
    with pytest.raises(IndexError):
        v[-4]
    assert v == t and v == QueueView(list(t)) and v != t[:2] and hash(v) == hash(t)
    assert jobs[3] in v and jobs[0] not in v and v.index(jobs[4]) == 2
    assert pickle.loads(pickle.dumps(v)) == v
    jobs.append(Job("x", 0, 1))  # appended after the view: unseen
    assert tuple(v) == t and len(QueueView(jobs, 2)) == 5


@pytest.mark.parametrize("policy", ["fcfs", "fcfs-bb", "sjf-bb", "conservative-bb"])
def test_long_queues_come_as_views_that_never_change(policy):
    """Past ``SHORT_QUEUE`` waiting jobs the queue is a view on the engine's list: at each
    decision it lists the waiting jobs in arrival order, and still does after the run."""
    from bbopt import Platform

    jobs = [Job(str(k), float(k // 40), walltime=5.0 + k % 7, runtime=3.0 + k % 5,
                nodes=1 + k % 4) for k in range(300)]
    seen = []
    res = simulate(jobs, Platform(4, 0.0), policy, on_decision=lambda s, d: seen.append(
        (s.time, s.queue, tuple(s.queue))))
    assert sum(type(q) is QueueView for _, q, _ in seen) > 10  # (long queues were seen)
    for t, view, snapshot in seen:
        assert type(view) is (tuple if len(snapshot) <= SHORT_QUEUE else QueueView)
        assert tuple(view) == snapshot  # unchanged since its decision
        # waiting then: submitted, and started by this decision or later (one per instant)
        assert snapshot == tuple(j for k, j in enumerate(jobs)
                                 if j.submit <= t and not res.start[k] < t)


def test_running_view_of_the_engine_keeps_its_jobs_and_total():
    """``RunningJobs.of`` (the engine's view after a start or an end) is the constructor's
    view with the total the ledger keeps, a copy the engine's later changes do not reach."""
    from bbopt.core import RunningJob, RunningJobs

    running = [RunningJob(Job(str(k), 0, 10 + k, nodes=k + 1), 0.0) for k in range(4)]
    view = RunningJobs.of(running, (10, 0.0))
    assert type(view) is RunningJobs and view == RunningJobs(running)
    assert view.held == RunningJobs(running).held == (10, 0.0)
    running.pop()
    assert len(view) == 4


def test_engine_view_built_by_of_is_the_constructors():
    """``QueueView.of(blocks, mins, first, skip, n)`` (the engine's view at every decision)
    shows what the constructor's view of the same jobs shows: from job ``skip`` of block
    ``first`` on; its blocks come with their summaries, the first and last cut to the view."""
    from bbopt.queue_view import block_summary

    jobs = [Job(str(k), 0, 10 + k, nodes=1 + k % 3) for k in range(9)]
    blocks = [tuple(jobs[:2]), tuple(jobs[2:4]), tuple(jobs[4:5]), tuple(jobs[5:])]
    mins = [block_summary(b) for b in blocks]
    v = QueueView.of(blocks, mins, 1, 1, 6)  # jobs 3..8
    assert type(v) is QueueView and v == QueueView(jobs[3:]) and len(v) == 6
    assert v[0] is jobs[3] and v[1] is jobs[4] and v[-1] is jobs[8] and v[1:3] == tuple(jobs[4:6])
    got = [(tuple(b), m) for b, m in v.blocks_from(0)]
    assert got == [((jobs[3],), mins[1]), ((jobs[4],), mins[2]), (tuple(jobs[5:]), mins[3])]
    got = [(tuple(b), m) for b, m in v.blocks_from(3)]
    assert got == [((jobs[6], jobs[7], jobs[8]), mins[3])]
    assert list(v.blocks_from(6)) == []
    blocks[3] += (Job("late", 0, 1),)  # (an arrival after the view: unseen)
    assert tuple(v) == tuple(jobs[3:]) and [b for b, _ in v.blocks_from(2)] == [tuple(jobs[5:])]


def test_constructors_view_of_a_long_queue_lists_every_block_with_its_least():
    """Twenty jobs make a block of 16 and one of 4: from position 0 both blocks come with
    their least nodes, BB and walltime (computed here by hand); from 17, the last three jobs."""
    jobs = [Job(str(k), 0, walltime=100 - k, nodes=1 + (k * 7) % 5, bb=float(10 + k % 3))
            for k in range(20)]
    v = QueueView(jobs)
    got = [(tuple(b), m) for b, m in v.blocks_from(0)]
    assert got == [(tuple(jobs[:16]), (1, 10.0, 85)), (tuple(jobs[16:]), (2, 10.0, 81))]
    assert [(tuple(b), m) for b, m in v.blocks_from(17)] == [(tuple(jobs[17:]), (2, 10.0, 81))]
    assert [(tuple(b), m) for b, m in v.blocks_from(16)] == [(tuple(jobs[16:]), (2, 10.0, 81))]
    assert list(v.blocks_from(20)) == []


def test_an_index_past_the_view_is_refused_by_name():
    """Position ``n`` (one past the last job) and ``-n - 1`` are out of range, with the view's
    own message, even where the engine's last block holds jobs beyond the view."""
    jobs = [Job(str(k), 0, 10) for k in range(5)]
    for v in (QueueView(jobs), QueueView.of([tuple(jobs[:3]), tuple(jobs[3:])],
                                            [(1, 0.0, 10)] * 2, 0, 1, 4)):
        assert v[len(v) - 1] is jobs[4]
        for i in (len(v), -len(v) - 1):
            with pytest.raises(IndexError, match=r"^queue index out of range$"):
                v[i]


def test_repr_shows_the_jobs():
    a, b = Job("a", 0, 10), Job("b", 1, 20)
    assert repr(QueueView([a, b])) == f"QueueView(({a!r}, {b!r}))"
    assert repr(QueueView()) == "QueueView(())"

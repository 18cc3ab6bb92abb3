"""A long waiting queue is kept in blocks with their least nodes, BB and walltime
(:mod:`bbopt.simulation.queue_blocks`), and EASY's backfill pass and the engine's idle gate
skip the blocks none of whose jobs can pass their test: the decisions and schedules are those of
the plain loop over every job.

- The blocks follow arrivals and starts in any order: their jobs are the waiting queue, each
  summary is its block's least nodes, BB and walltime, and a view handed out never changes.
- EASY (fcfs-bb, sjf-bb, fcfs-easy) decides on a view of such blocks as on the tuple of its jobs
  (random states, queues past the short-queue limit).
- Whole replays of long queues equal the replays where the engine hands every queue as a tuple,
  and the idle gate skips only decisions where nothing fits.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, make_policy, simulate
from bbopt.core import ClusterState, RunningJob, RunningJobs, slack
from bbopt.queue_view import QueueView, block_summary
from bbopt.simulation import engine
from bbopt.simulation.queue_blocks import BlockQueue


def _job(k: int, rnd: random.Random, nodes: int = 9, bb: int = 105) -> Job:
    walltime = float(rnd.randint(1, 30))
    return Job(str(k), float(k // 8), walltime, runtime=float(rnd.randint(0, int(walltime))),
               nodes=rnd.randint(1, nodes), bb=float(rnd.randint(0, bb)))


def _lower(summary: tuple, jobs) -> bool:
    """Whether ``summary`` is at most each of the least nodes, BB and walltime of ``jobs``."""
    return all(m <= x for m, x in zip(summary, block_summary(jobs), strict=True))


def _check(bq: BlockQueue, waiting: dict[int, Job]) -> None:
    """``bq`` holds exactly the waiting jobs in rank order, each summary a lower bound of its
    block's jobs."""
    live = list(bq.live())
    assert [j for b, _ in live for j in b] == [waiting[r] for r in sorted(waiting)]
    assert all(_lower(m, b) for b, m in live)
    assert bq.n == len(waiting)
    rest = slice(bq.first, None)
    assert all(0 < len(b) <= 16 for b in bq.blocks[rest])
    assert [r for rs in bq.ranks[rest] for r in rs][bq.skip:] == sorted(waiting)
    assert bq.lasts[rest] == [rs[-1] for rs in bq.ranks[rest]]


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(0, 80), st.integers(20, 300),
       st.sampled_from([0.3, 0.5, 0.6]))
def test_blocks_follow_arrivals_and_starts_and_views_never_change(seed, first, steps, starts):
    rnd = random.Random(seed)
    jobs = [_job(k, rnd) for k in range(first + steps)]
    waiting = {r: jobs[r] for r in range(first)}
    bq = BlockQueue(waiting.items())
    _check(bq, waiting)
    nxt, views = first, []
    for _ in range(steps):
        if rnd.random() < 0.3:
            views.append((bq.view(), tuple(waiting[r] for r in sorted(waiting))))
        if waiting and rnd.random() < starts:  # a start: at the head, or anywhere
            x = rnd.random()  # (the head, the newest, or any)
            r = min(waiting) if x < 0.3 else max(waiting) if x < 0.5 else rnd.choice(
                sorted(waiting))
            bq.remove(waiting.pop(r), r)
        else:
            waiting[nxt] = jobs[nxt]
            bq.append(jobs[nxt], nxt)
            nxt += 1
        _check(bq, waiting)
    for view, snapshot in views:
        assert tuple(view) == snapshot and len(view) == len(snapshot)
        assert list(view) == [view[i] for i in range(len(view))]
        for i in {0, 1, len(view) // 2, len(view) - 1, len(view)} - {-1}:
            got = list(view.blocks_from(i))
            assert tuple(j for b, _ in got for j in b) == snapshot[i:]
            assert all(_lower(m, b) for b, m in got if b)


def test_an_arrival_after_the_last_block_emptied_keeps_summaries_lower_bounds():
    """Block 0 full, block 1 emptied by starts, then a start in block 0 and an arrival: the
    arrival joins block 0, whose summary must cover it."""
    rnd = random.Random(5)
    jobs = [_job(k, rnd) for k in range(40)]
    jobs[30] = Job("30", 9.0, 0.5, nodes=1, bb=0.0)  # (the least of everything)
    waiting = {r: jobs[r] for r in range(18)}
    bq = BlockQueue(waiting.items())
    bq.append(jobs[18], 18)
    waiting[18] = jobs[18]
    for r in (16, 17, 18, 5):
        bq.remove(waiting.pop(r), r)
        _check(bq, waiting)
    bq.append(jobs[30], 30)
    waiting[30] = jobs[30]
    _check(bq, waiting)


def _state(rnd: random.Random, platform: Platform, n_queue: int) -> tuple[ClusterState, list]:
    """A random state: running jobs holding part of the machine, ``n_queue`` waiting jobs; and
    the engine's blocks of that queue after random starts (so blocks are uneven)."""
    running, used_n, used_b = [], 0, 0.0
    for k in range(rnd.randint(0, 6)):
        job = _job(1000 + k, rnd, nodes=4, bb=40)
        if used_n + job.nodes <= platform.nodes and used_b + job.bb <= platform.bb:
            running.append(RunningJob(job, float(rnd.randint(0, 9))))
            used_n, used_b = used_n + job.nodes, used_b + job.bb
    pool = [_job(k, rnd) for k in range(n_queue + 60)]
    bq = BlockQueue(enumerate(pool))
    left = dict(enumerate(pool))
    for r in rnd.sample(range(len(pool)), 60):
        bq.remove(left.pop(r), r)
    queue = [left[r] for r in sorted(left)]
    state = ClusterState(10.0, platform, RunningJobs(sorted(running,
                                                            key=lambda r: r.expected_end)),
                         bq.view())
    return state, queue


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**32 - 1), st.sampled_from(["fcfs-bb", "sjf-bb", "fcfs-easy"]),
       st.integers(65, 200), st.sampled_from([8, 16]))
def test_easy_on_blocks_decides_as_on_the_tuple(seed, policy, n_queue, nodes):
    rnd = random.Random(seed)
    state, queue = _state(rnd, Platform(nodes=nodes, bb=100.0 * nodes / 8), n_queue)
    assert type(state.queue) is QueueView and tuple(state.queue) == tuple(queue)
    plain = ClusterState(state.time, state.platform, state.running, tuple(queue))
    pol = make_policy(policy)
    got, want = pol.decide(state), pol.decide(plain)
    assert got.started_ids == want.started_ids
    assert got.reservations == want.reservations


@st.composite
def long_workloads(draw):
    """70 to 160 jobs arriving over 20 s on an 8-node machine: queues past 64 jobs."""
    rnd = random.Random(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(70, 160))
    jobs = [_job(k, rnd) for k in range(n)]
    return [Job(j.id, float(rnd.randint(0, 20)), j.walltime, runtime=j.runtime, nodes=j.nodes,
                bb=j.bb) for j in jobs]


PLATFORMS = [Platform(nodes=8, bb=100.0), Platform(nodes=8, bb=100.0, bb_nodes=(25.0,) * 4)]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(long_workloads(), st.sampled_from(["fcfs", "filler", "fcfs-easy", "fcfs-bb", "sjf-bb"]),
       st.sampled_from(PLATFORMS))
def test_long_queue_replays_equal_tuple_replays(jobs, policy, platform):
    seen, views = [], []

    def observe(state, decision):
        free_n, free_b = state.free()
        tol = slack(state.platform.bb)
        seen.append(any(j.nodes <= free_n and j.bb <= free_b + tol for j in state.queue))
        views.append(type(state.queue) is QueueView)

    got = simulate(jobs, platform, policy, on_decision=observe)
    assert all(seen)  # the idle gate skipped only decisions where nothing fitted
    old = engine.SHORT_QUEUE
    engine.SHORT_QUEUE = 10**9  # every queue handed as a tuple, the gate walking it whole
    try:
        asked = make_policy(policy)
        asked.idle_unless_fits = False
        want = simulate(jobs, platform, asked)
    finally:
        engine.SHORT_QUEUE = old
    assert got.start == want.start and got.end == want.end
    assert got.allocation == want.allocation and got.state == want.state


def test_long_queues_are_seen():
    """(The workloads above do reach long queues.)"""
    rnd = random.Random(1)
    jobs = [Job(j.id, float(rnd.randint(0, 20)), j.walltime, runtime=j.runtime, nodes=j.nodes,
                bb=j.bb) for j in (_job(k, rnd) for k in range(150))]
    views = []
    simulate(jobs, PLATFORMS[0], "fcfs-bb",
             on_decision=lambda s, d: views.append(type(s.queue) is QueueView))
    assert sum(views) > 10


@pytest.mark.parametrize("policy", ["fcfs-bb", "sjf-bb"])
def test_a_kept_view_is_unchanged_after_later_starts_and_arrivals(policy):
    rnd = random.Random(3)
    jobs = [Job(j.id, float(k // 30), j.walltime, runtime=j.runtime, nodes=j.nodes, bb=j.bb)
            for k, j in enumerate(_job(k, rnd) for k in range(400))]
    seen = []
    simulate(jobs, PLATFORMS[0], policy,
             on_decision=lambda s, d: seen.append((s.queue, tuple(s.queue))))
    assert sum(type(q) is QueueView for q, _ in seen) > 20
    for view, snapshot in seen:
        assert tuple(view) == snapshot
        if type(view) is QueueView:
            got = list(view.blocks_from(0))
            assert tuple(j for b, _ in got for j in b) == snapshot
            assert all(_lower(m, b) for b, m in got)


class _EvictsOnce:
    """Starts what fits in queue order; evicts ``victim`` once it runs and more than 70 jobs
    wait (it is requeued)."""

    io_aware = False
    name = "evicts-once"

    def __init__(self, victim: str) -> None:
        self.victim, self.done = victim, False

    def decide(self, state):
        from bbopt.core import Decision, Start

        if not self.done and len(state.queue) > 70 and any(
                r.job.id == self.victim for r in state.running):
            self.done = True
            return Decision(preempt=(self.victim,))
        free, starts = state.free()[0], []
        for job in state.queue:
            if job.nodes <= free:
                starts.append(Start(job.id))
                free -= job.nodes
        return Decision(start=tuple(starts))


@pytest.mark.parametrize("victim", ["0", "199"])
def test_a_requeue_out_of_submission_order_keeps_long_views_right(victim):
    """Jobs not given in submission order (the last submitted first), a long queue, and a job
    requeued while it is long: the views list the engine's queue, the requeued job takes its
    place by submission, and the schedule is the one of tuples."""
    from bbopt.simulation.checkpoint import CheckpointRestart

    rnd = random.Random(7)
    jobs = [Job(str(k), float(rnd.randint(1, 40)), 50.0, runtime=40.0, nodes=rnd.randint(1, 4),
                preemptable=True) for k in range(200)]
    v = int(victim)
    jobs[v] = Job(victim, 0.0, 1000.0, runtime=900.0, nodes=2, preemptable=True)
    runs = []
    for short in (engine.SHORT_QUEUE, 10**9):
        old, engine.SHORT_QUEUE = engine.SHORT_QUEUE, short
        seen = []
        try:
            model = CheckpointRestart(memory_per_node=1e9, pfs_bandwidth=1e9, on_kill="requeue")
            res = simulate(jobs, Platform(nodes=8), _EvictsOnce(victim), execution=model,
                           on_decision=lambda s, d, seen=seen: seen.append((s.queue,
                                                                            tuple(s.queue))))
        finally:
            engine.SHORT_QUEUE = old
        assert all(tuple(q) == snap for q, snap in seen)
        # The requeued job is back in submission order (original submission, then index).
        assert all(keys == sorted(keys) for keys in (
            [(jobs[int(j.id)].submit, int(j.id)) for j in snap] for _, snap in seen))
        runs.append(res)
    assert any(why == "requeued" for *_, why in runs[0].segments)
    assert runs[0].start == runs[1].start and runs[0].end == runs[1].end
    assert runs[0].segments == runs[1].segments


# Hand-built queues: blocks packed by arrivals, summaries exact where they are known, merges.

def _plain(k: int, nodes: int = 4, bb: float = 50.0, walltime: float = 20.0) -> Job:
    return Job(str(k), 0.0, walltime, nodes=nodes, bb=bb)


def _summaries(bq: BlockQueue) -> list:
    return [m if m is not OPEN else "open" for m in bq.mins[bq.first:]]


#: The summary of a block still filling up (the last one): it says nothing.
OPEN = BlockQueue([(0, _plain(0))]).mins[0]


def test_full_blocks_are_summarised_and_the_last_one_is_open_until_full():
    jobs = [_plain(k, nodes=1 + k % 5, bb=float(10 + k), walltime=float(100 - k))
            for k in range(36)]
    bq = BlockQueue(enumerate(jobs[:20]))
    assert [len(b) for b in bq.blocks] == [16, 4]
    assert _summaries(bq) == [block_summary(jobs[:16]), "open"]
    for k in range(20, 36):  # arrivals fill the last block first
        bq.append(jobs[k], k)
    assert [len(b) for b in bq.blocks] == [16, 16, 4]
    assert _summaries(bq) == [block_summary(jobs[:16]), block_summary(jobs[16:32]), "open"]
    lone = BlockQueue([(0, jobs[0])])
    lone.append(jobs[1], 1)  # (a lone open block takes the arrival)
    assert [len(b) for b in lone.blocks] == [2]


@pytest.mark.parametrize("least", ["nodes", "bb", "walltime"])
def test_a_start_of_a_blocks_least_job_tightens_its_summary(least):
    """The job leaving a block in the middle of the queue was the block's only least in one
    dimension, and above the least in the others: that dimension's summary is the least of the
    jobs left, the others stay."""
    jobs = [_plain(k, nodes=4 + k % 3, bb=50.0 + k % 4, walltime=20.0 + k % 5)
            for k in range(40)]
    jobs[5] = _plain(5, **{"nodes": 6, "bb": 53.0, "walltime": 24.0,
                           least: {"nodes": 1, "bb": 7.0, "walltime": 3.0}[least]})
    for k in (0, 12):  # (the others' least values, held by jobs that stay)
        jobs[k] = _plain(k, nodes=4, bb=50.0, walltime=20.0)
    bq = BlockQueue(enumerate(jobs))
    assert bq.mins[0] == block_summary(jobs[:16]) != (4, 50.0, 20.0)
    bq.remove(jobs[5], 5)
    rest = jobs[:5] + jobs[6:16]
    assert bq.mins[0] == block_summary(rest) == (4, 50.0, 20.0)


def test_a_block_merges_with_the_next_when_both_fit_in_one_exactly():
    jobs = [_plain(k, nodes=1 + k % 7) for k in range(33)]  # blocks of 16, 16 and 1 (open)
    bq = BlockQueue(enumerate(jobs))
    bq.remove(jobs[20], 20)  # 15 + 1 = 16: one block
    assert [len(b) for b in bq.blocks] == [16, 16]
    assert _summaries(bq) == [block_summary(jobs[:16]), "open"]
    bq.append(_plain(33, nodes=9), 33)  # the merged block was open: full now, summarised
    kept = jobs[16:20] + jobs[21:33]
    assert _summaries(bq) == [block_summary(jobs[:16]), block_summary(kept), "open"]


def test_a_block_merges_with_the_one_before_it_and_keeps_its_least():
    jobs = [_plain(k, nodes=1 + k % 7, walltime=float(5 + k)) for k in range(48)]
    bq = BlockQueue(enumerate(jobs))
    for r in range(1, 9):  # block 0 down to 8 jobs (its head stays)
        bq.remove(jobs[r], r)
    for r in range(17, 25):  # block 1 down to 8: it joins block 0
        bq.remove(jobs[r], r)
    assert [len(b) for b in bq.blocks] == [16, 16]
    left = [jobs[0]] + jobs[9:17] + jobs[25:32]
    assert [j.id for j in bq.blocks[0]] == [j.id for j in left]
    assert _summaries(bq) == [block_summary(left), block_summary(jobs[32:])]

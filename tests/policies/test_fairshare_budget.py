"""omfs-opt's victim choices share the decision's budget: with no time left the jobs that need
evictions wait (status FALLBACK) and nothing is evicted; the eviction candidates kept between
jobs give the decisions of a fresh list per job."""

from __future__ import annotations

import pytest

from bbopt import Job, Platform, decide
from bbopt.core import ClusterState, RunningJob, Status
from bbopt.policies.fairshare import MemorylessFairShare


def _state(n_queue: int = 200) -> ClusterState:
    """Entity b fills the machine with preemptable jobs running for 2 h; entity a, entitled to
    half of it, waits with many jobs."""
    p = Platform(nodes=16)
    running = tuple(RunningJob(Job(f"b{k}", 0.0, 10_000.0, nodes=2, user="b",
                                   preemptable=True, checkpointable=k % 2 == 0), 0.0)
                    for k in range(8))
    queue = tuple(Job(f"a{k}", 100.0 + k, 3600.0, nodes=1 + k % 3, user="a")
                  for k in range(n_queue))
    return ClusterState(7200.0, p, running, queue)


SHARES = {"a": 0.5, "b": 0.5}


def test_no_time_left_means_no_eviction_and_a_fallback():
    d = decide(_state(), "omfs-opt", shares=SHARES, budget=1e-9)
    assert d.stats.status is Status.FALLBACK
    assert d.preempt == () and d.start == ()


def test_with_time_it_evicts_up_to_the_entitlement():
    d = decide(_state(), "omfs-opt", shares=SHARES, budget=5.0)
    assert d.stats.status is not Status.FALLBACK
    evicted = [j for j in d.preempt]
    assert 0 < len(evicted) <= 4  # b keeps its 8 entitled nodes (4 jobs of 2)


@pytest.mark.parametrize("backend", ["greedy", "auto"])
def test_kept_candidates_give_the_decisions_of_fresh_lists(backend, monkeypatch):
    state = _state(60)
    pol = MemorylessFairShare(shares=SHARES, backend=backend, budget=5.0)
    kept = pol.decide(state)
    from bbopt.policies import fairshare

    class Fresh(fairshare.EvictionCandidates):
        def candidates(self, entity, version=None):
            return super().candidates(entity, None)  # rebuilt for every job

    monkeypatch.setattr(fairshare, "EvictionCandidates", Fresh)
    fresh = pol.decide(state)
    assert (kept.start, kept.preempt, kept.reservations) == \
        (fresh.start, fresh.preempt, fresh.reservations)


def _long_queue_state() -> ClusterState:
    """b holds 15 of 16 nodes (not preemptable) for 10,000 s; a (entitled to no node, its jobs
    preemptable: they go through EASY) waits with 256 jobs of 2 nodes, then a 1-node job that
    backfills the free node."""
    running = (RunningJob(Job("b0", 0.0, 10_000.0, nodes=15, user="b"), 0.0),)
    queue = tuple(Job(f"a{k}", 100.0 + k, 3600.0, nodes=2, user="a", preemptable=True)
                  for k in range(256))
    small = Job("small", 500.0, 60.0, nodes=1, user="a", preemptable=True)
    return ClusterState(7200.0, Platform(nodes=16), running, (*queue, small))


@pytest.mark.parametrize("step", [0.4, 0.6])
def test_a_long_queue_stops_being_offered_once_the_budget_is_spent(monkeypatch, step):
    """The clock is looked at once per LOOK_EVERY (256) jobs; each look finds ``step`` x the
    budget gone. At 0.6 the look before job 256 finds 1.2 budgets gone: the jobs from there
    wait (FALLBACK), so the 1-node job that would backfill does not start; at 0.4 it finds 0.8
    and the whole queue is offered."""
    from bbopt.policies import fairshare
    from tests._slow_clock import SlowClock

    assert fairshare.LOOK_EVERY == 256
    pol = MemorylessFairShare(name="omfs-opt", shares={"a": 0.05, "b": 0.95}, backend="auto",
                              budget=1.0)
    state = _long_queue_state()
    idle = pol.decide(state)
    assert [s.job_id for s in idle.start] == ["small"]
    assert idle.stats.status is not Status.FALLBACK
    monkeypatch.setattr(fairshare, "_time", SlowClock(step))
    d = pol.decide(state)
    if step > 0.5:
        assert d.start == () and d.stats.status is Status.FALLBACK
    else:
        assert [s.job_id for s in d.start] == ["small"]
        assert d.stats.status is not Status.FALLBACK
    # the greedy omfs has no budget: it offers every job whatever the clock says
    greedy = MemorylessFairShare(shares={"a": 0.05, "b": 0.95}).decide(state)
    assert [s.job_id for s in greedy.start] == ["small"]


@pytest.mark.parametrize("step,offered", [(0.44, True), (0.45, True), (0.46, False)])
def test_the_queue_is_offered_until_the_budget_less_its_tail_is_spent(monkeypatch, step,
                                                                      offered):
    """The decision keeps TAIL_SHARE (a tenth) of its budget for its end: the look before job
    256 finds 2 x ``step`` budgets gone, 0.88 or exactly 0.9 (not past 0.9: the whole queue is
    offered) or 0.92 (the jobs from there wait)."""
    from bbopt.policies import fairshare
    from tests._slow_clock import SlowClock

    pol = MemorylessFairShare(name="omfs-opt", shares={"a": 0.05, "b": 0.95}, backend="auto",
                              budget=1.0)
    monkeypatch.setattr(fairshare, "_time", SlowClock(step))
    d = pol.decide(_long_queue_state())
    assert [s.job_id for s in d.start] == (["small"] if offered else [])
    assert (d.stats.status is Status.FALLBACK) is not offered


def test_a_deterministic_budget_stops_the_queue_only_at_its_wall_safety_net(monkeypatch):
    """In deterministic mode the wall clock is a safety net (10 x the budget, at least 30 s):
    1.2 s gone of a 1 s budget still offers the whole queue."""
    from bbopt.policies import fairshare
    from tests._slow_clock import SlowClock

    pol = MemorylessFairShare(name="omfs-opt", shares={"a": 0.05, "b": 0.95}, backend="auto",
                              budget=1.0, budget_mode="deterministic")
    monkeypatch.setattr(fairshare, "_time", SlowClock(0.6))
    d = pol.decide(_long_queue_state())
    assert [s.job_id for s in d.start] == ["small"]
    assert d.stats.status is not Status.FALLBACK


def test_the_decisions_clock_starts_when_the_caller_asked(monkeypatch):
    # 100 s spent before the policy was asked (bbopt.decide's check of a state): the decision's
    # wall time counts them, and omfs-opt's victim choice has no budget left
    from bbopt.policies import fairshare
    monkeypatch.setattr(fairshare, "decision_elapsed", lambda: 100.0)
    greedy = MemorylessFairShare("omfs", shares=SHARES).decide(_state(5))
    assert 100.0 <= greedy.stats.wall_time < 200.0
    exact = MemorylessFairShare("omfs-opt", backend="auto", shares=SHARES,
                                budget=50.0).decide(_state(5))
    assert exact.stats.status is Status.FALLBACK and exact.preempt == ()

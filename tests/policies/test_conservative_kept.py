"""conservative-bb reuses the profile it kept from its previous decision only where that profile
still describes the state: every running job one it knew, with the same expected end, nodes and
BB, and its kept reservations not yet due. Small hand-made states whose schedules are computed
by hand: a state the kept profile does not describe must be decided as a fresh policy decides
it (the profile built again from the running jobs and the remembered reservations).
"""

from __future__ import annotations

import pytest

from bbopt import ClusterState, Job, Platform, Reservation
from bbopt.core import RunningJob, RunningJobs
from bbopt.policies import make_policy

POOL = Platform(4, 100.0)


def _both(policy, state):
    """The decision of ``policy`` (which decided the previous state) and a fresh policy's, after
    checking they agree."""
    kept = policy.decide(state)
    fresh = make_policy("conservative-bb").decide(state)
    assert (kept.started_ids, kept.reservations, kept.memory) == (
        fresh.started_ids, fresh.reservations, fresh.memory)
    return kept


@pytest.mark.parametrize("as_engine", [True, False], ids=["engine-tuple", "plain-tuple"])
@pytest.mark.parametrize(("a", "b", "running_a", "started", "reserved"), [
    # A (3 s) started 1 s late: it ends at 4, so B (reserved at 3 behind it) waits until 4
    # (A's end, 4, is as many seconds as it runs nodes: a check that compared the end it
    # holds with its nodes would miss it)
    (Job("A", 0, 3, 3, 4, 100.0), Job("B", 0, 10, 10, 2, 50.0),
     RunningJob(Job("A", 0, 3, 3, 4, 100.0), 1.0), [], (Reservation("B", 4.0),)),
    # A (4 nodes) started on 2: B (2 nodes) fits beside it now (A's BB, 2.0, is as many bytes
    # as it runs nodes: a check that compared the BB it holds with its nodes would miss it)
    (Job("A", 0, 10, 10, 4, 2.0), Job("B", 0, 10, 10, 2, 0.0),
     RunningJob(Job("A", 0, 10, 10, 2, 2.0), 0.0), ["B"], ()),
    # A (3 nodes, all 100 of BB) started with 50: B (1 node, 50 of BB) fits beside it now
    (Job("A", 0, 10, 10, 3, 100.0), Job("B", 0, 10, 10, 1, 50.0),
     RunningJob(Job("A", 0, 10, 10, 3, 50.0), 0.0), ["B"], ()),
], ids=["later-end", "fewer-nodes", "less-bb"])
def test_a_running_job_unlike_the_start_decided_makes_the_kept_profile_stale(
        a, b, running_a, started, reserved, as_engine):
    """The policy starts A at 0 and reserves B when A ends; at 1 the resource manager
    reports A running, but started later, or holding fewer nodes or less BB than decided: the
    next decision plans with A as it runs."""
    policy = make_policy("conservative-bb")
    first = policy.decide(ClusterState(0.0, POOL, (), (a, b)))
    assert first.started_ids == ["A"] and first.reservations == (Reservation("B", a.walltime),)
    running = RunningJobs([running_a]) if as_engine else (running_a,)
    decision = _both(policy, ClusterState(1.0, POOL, running, (b,), first.memory))
    assert decision.started_ids == started
    assert decision.reservations == reserved


@pytest.mark.parametrize("as_engine", [True, False], ids=["engine-tuple", "plain-tuple"])
def test_a_running_job_as_decided_keeps_the_reservations(as_engine):
    # the same start as decided: B keeps 10 (the kept profile describes the state)
    a, b = Job("A", 0, 10, 10, 4, 100.0), Job("B", 0, 10, 10, 2, 50.0)
    policy = make_policy("conservative-bb")
    first = policy.decide(ClusterState(0.0, POOL, (), (a, b)))
    run = RunningJob(a, 0.0)
    running = RunningJobs([run]) if as_engine else (run,)
    decision = _both(policy, ClusterState(1.0, POOL, running, (b,), first.memory))
    assert decision.started_ids == [] and decision.reservations == (Reservation("B", 10.0),)


_X = Job("X", 0, 5, 9, 1, 0.0)  # (past its 5 s walltime at 6 and 7: planned as ending now)


@pytest.mark.parametrize(("others", "queue", "first", "then"), [
    # Y (1 node) runs until 20: A and B (1 node each) start at 6 and C (4 nodes) is reserved
    # at 20; at 7 neither start happened, and both happen then, C keeping 20
    ((RunningJob(Job("Y", 0, 20, 20, 1, 0.0), 0.0),),
     (Job("A", 0, 10, 10, 1, 0.0), Job("B", 0, 10, 10, 1, 0.0), Job("C", 0, 5, 5, 4, 0.0)),
     (["A", "B"], (Reservation("C", 20.0),)), (["A", "B"], (Reservation("C", 20.0),))),
    # Z too is past its walltime: A (2 nodes) starts at 6 and C is reserved at its end, 16; at
    # 7 A did not start, so C, free of it, starts at 7 and A is reserved after C, at 12
    ((RunningJob(Job("Z", 0, 5, 9, 1, 0.0), 0.0),),
     (Job("A", 0, 10, 10, 2, 0.0), Job("C", 0, 5, 5, 4, 0.0)),
     (["A"], (Reservation("C", 16.0),)), (["C"], (Reservation("A", 12.0),))),
], ids=["one-past-walltime", "two-past-walltime"])
def test_the_same_running_tuple_with_jobs_past_their_walltime_and_a_start_that_did_not_happen(
        others, queue, first, then):
    """The engine's very running tuple handed again (X past its walltime, still running): the
    jobs still due are those whose expected end is after now, and the starts decided at 6 that
    the tuple does not hold give their slots back."""
    running = RunningJobs([RunningJob(_X, 0.0), *others])
    policy = make_policy("conservative-bb")
    d0 = policy.decide(ClusterState(6.0, POOL, running, queue))
    assert (d0.started_ids, d0.reservations) == first
    decision = _both(policy, ClusterState(7.0, POOL, running, queue, d0.memory))
    assert (decision.started_ids, decision.reservations) == then


def test_a_job_the_policy_never_started_is_seen_behind_one_past_its_walltime():
    """At 0 X (1 node, 5 s) and Y (2 nodes, 10 s) run and A (4 nodes) is reserved at 10. At 6
    the running jobs come as a plain tuple: X, past its walltime, then Y, then W (1 node until
    20), which the resource manager started and the policy never saw: A waits for W, until
    20."""
    x, y = Job("X", 0, 5, 9, 1, 0.0), Job("Y", 0, 10, 10, 2, 0.0)
    a = Job("A", 0, 5, 5, 4, 0.0)
    policy = make_policy("conservative-bb")
    first = policy.decide(ClusterState(0.0, POOL, (RunningJob(x, 0.0), RunningJob(y, 0.0)), (a,)))
    assert first.started_ids == [] and first.reservations == (Reservation("A", 10.0),)
    running = (RunningJob(x, 0.0), RunningJob(y, 0.0), RunningJob(Job("W", 0, 14, 14, 1, 0.0), 6.0))
    decision = _both(policy, ClusterState(6.0, POOL, running, (a,), first.memory))
    assert decision.started_ids == [] and decision.reservations == (Reservation("A", 20.0),)


def test_a_job_resized_after_the_kept_jobs_were_pruned_is_planned_for_its_new_request():
    """70 one-node jobs start at once on 72 nodes, D and E (72 nodes, 5 s each) are reserved at
    10 and 15 (the policy then forgets the jobs it started, keeping the two it reserved); at 1
    D asks 10 s instead of 5: E, reserved at D's old end, moves to its new one, 20."""
    platform = Platform(72, 100.0)
    d, e = Job("D", 0, 5, 5, 72, 0.0), Job("E", 0, 5, 5, 72, 0.0)
    short = tuple(Job(f"L{k}", 0, 10, 10, 1, 0.0) for k in range(70))
    policy = make_policy("conservative-bb")
    first = policy.decide(ClusterState(0.0, platform, (), (*short, d, e)))
    assert len(first.started_ids) == 70
    assert first.reservations == (Reservation("D", 10.0), Reservation("E", 15.0))
    running = RunningJobs([RunningJob(job, 0.0) for job in short])
    longer = Job("D", 0, 10, 10, 72, 0.0)
    decision = _both(policy, ClusterState(1.0, platform, running, (longer, e), first.memory))
    assert decision.reservations == (Reservation("D", 10.0), Reservation("E", 20.0))


def test_a_displaced_reservation_is_planned_again_once_within_the_depth():
    """Depth 2: the policy starts A (4 nodes, 5 s) at 0 and reserves B (3 nodes) at 5, when A
    ends; C (2 nodes) is beyond the depth. The resource manager starts A only at 1: B no longer
    fits at 5 and is planned again with the jobs that have no reservation, in queue order (B at
    A's end, 6, then C, now within the depth, after B, at 16)."""
    a, b, c = (Job("A", 0, 5, 5, 4, 25.0), Job("B", 0, 10, 10, 3, 0.0),
               Job("C", 0, 5, 5, 2, 25.0))
    policy = make_policy("conservative-bb", depth=2)
    first = policy.decide(ClusterState(0.0, POOL, (), (a, b, c)))
    assert first.started_ids == ["A"] and first.reservations == (Reservation("B", 5.0),)
    state = ClusterState(1.0, POOL, (RunningJob(a, 1.0),), (b, c), first.memory)
    decision = policy.decide(state)
    fresh = make_policy("conservative-bb", depth=2).decide(state)
    assert (decision.started_ids, decision.reservations) == (fresh.started_ids,
                                                              fresh.reservations)
    assert decision.started_ids == []
    assert decision.reservations == (Reservation("B", 6.0), Reservation("C", 16.0))

"""conservative-bb on small hand-made states whose schedules are computed by hand (Mu'alem &
Feitelson's conservative backfilling with the BB reservations of Kopanski & Rzadca, Section 3.2):
a reservation moves earlier into what a job ending before its walltime gave back, BB used to
the last byte, the jobs beyond the depth starting now only where they delay no reservation,
and a policy carried over to another platform planning for that platform. Each state is decided
twice (the first decision's memory given back), by the policy that kept its profile and by a
fresh one.
"""

from __future__ import annotations

import pytest

from bbopt import ClusterState, Job, Platform, Reservation, simulate
from bbopt.core import RunningJob, RunningJobs
from bbopt.policies import make_policy
from tests._policies import conservative_memory

POOL = Platform(4, 100.0)
#: The same machine with its BB on two named BB nodes of 50 (planned with first-fit pieces).
NAMED = Platform(4, 100.0, bb_nodes=(50.0,) * 2)
_POOL_AND_NAMED = pytest.mark.parametrize("platform", [POOL, NAMED], ids=["pool", "named"])


def _running(*runs: tuple[Job, float]) -> RunningJobs:
    return RunningJobs([RunningJob(job, start) for job, start in runs])


def _then(first: ClusterState, time: float, running, queue=None, depth=1000):
    """Decide ``first``, then the state at ``time`` with ``running`` (and ``queue``, default the
    same) and the first decision's memory, by that policy and by a fresh one: the two decisions
    (after checking the second equals the fresh policy's, and that the policy with its profile
    and compression compiled takes both decisions alike, where numba is installed)."""
    out = []
    for compiled in (False, True):
        policy = make_policy("conservative-bb", depth=depth, compiled=compiled)
        d0 = policy.decide(first)
        state = ClusterState(time, first.platform, running,
                             first.queue if queue is None else queue, d0.memory)
        d1 = policy.decide(state)
        fresh = make_policy("conservative-bb", depth=depth, compiled=compiled).decide(state)
        assert (d1.started_ids, d1.reservations, d1.memory) == (
            fresh.started_ids, fresh.reservations, fresh.memory)
        out.append(tuple((d.started_ids, d.reservations, d.memory) for d in (d0, d1)))
        if compiled is False:
            decisions = d0, d1
    assert out[0] == out[1]
    return decisions


@pytest.mark.parametrize(("bb", "moves"), [
    (50.0 - 1e-6, True), (50.0, True), (50.0 + 100 * 1e-9, True), (50.0 + 1e-6, False)],
    ids=["below", "exactly", "at-the-slack", "above"])
def test_a_reservation_moves_into_bb_freed_to_the_last_byte(bb, moves):
    """X (1 node, 50 of BB, 10 s) ends at 4 instead of 10; Z holds the other 50 until 20. A
    (1 node) asking exactly the 50 X held (or less) was reserved at 10 and starts at 4; asking
    up to the fit slack (1e-9 of the pool: 1e-7) more it fits too; asking more than that it
    never fitted beside Z and keeps 20."""
    x, z = Job("X", 0, 10, 4, 1, 50.0), Job("Z", 0, 20, 20, 1, 50.0)
    a = Job("A", 0, 5, 5, 1, bb)
    d0, d1 = _then(ClusterState(0.0, POOL, _running((x, 0.0), (z, 0.0)), (a,)), 4.0,
                   _running((z, 0.0)))
    assert d0.started_ids == []
    assert d0.reservations == (Reservation("A", 10.0 if moves else 20.0),)
    if moves:
        assert d1.started_ids == ["A"] and d1.reservations == ()
    else:
        assert d1.started_ids == [] and d1.reservations == (Reservation("A", 20.0),)


def test_a_reservation_that_needs_the_whole_bb_moves_into_a_freed_whole_bb():
    # X held all 100 of BB until 10 and ends at 4: A (all 100) moves from 10 to 4
    x, a = Job("X", 0, 10, 4, 1, 100.0), Job("A", 0, 5, 5, 1, 100.0)
    d0, d1 = _then(ClusterState(0.0, POOL, _running((x, 0.0)), (a,)), 4.0, _running())
    assert d0.reservations == (Reservation("A", 10.0),)
    assert d1.started_ids == ["A"] and d1.reservations == ()


@pytest.mark.parametrize(("bb", "started"), [(40.0, ["A"]), (40.0 + 1e-6, [])],
                         ids=["to-capacity", "beyond"])
def test_a_job_starts_now_when_its_bb_fills_the_pool_exactly(bb, started):
    # X holds 60 of 100 until 10: A asking the 40 left starts now, asking more waits for 10
    x, a = Job("X", 0, 10, 10, 1, 60.0), Job("A", 0, 5, 5, 1, bb)
    decision = make_policy("conservative-bb").decide(
        ClusterState(0.0, POOL, _running((x, 0.0)), (a,)))
    assert decision.started_ids == started
    assert decision.reservations == (() if started else (Reservation("A", 10.0),))


@_POOL_AND_NAMED
def test_a_reservation_the_freed_slot_cannot_hold_does_not_stop_a_later_one(platform):
    """Y (3 nodes) runs until 12, X (1 node, 10 s) ends at 2. A (4 nodes) was reserved at 12
    and B (1 node, 3 s) at 17 (X's node is free for only 2 s before 12). X's node, free from 2,
    cannot hold A (4 nodes), but B fits there now: B starts at 2 and A keeps 12."""
    y, x = Job("Y", 0, 12, 12, 3, 0.0), Job("X", 0, 10, 2, 1, 0.0)
    a, b = Job("A", 0, 5, 5, 4, 0.0), Job("B", 0, 3, 3, 1, 0.0)
    d0, d1 = _then(ClusterState(0.0, platform, _running((y, 0.0), (x, 0.0)), (a, b)), 2.0,
                   _running((y, 0.0)))
    assert d0.reservations == (Reservation("A", 12.0), Reservation("B", 17.0))
    assert d1.started_ids == ["B"] and d1.reservations == (Reservation("A", 12.0),)


@_POOL_AND_NAMED
def test_moves_chain_through_the_slots_earlier_moves_give_back(platform):
    """Y (2 nodes, 50 of BB) runs until 6, X (2 nodes, 10 s) ends at 2. B (2 nodes, 50 of BB,
    4 s) was reserved at 6, A (4 nodes, 4 s) at 10 and C (4 nodes, 2 s) at 14. At 2, B starts
    in X's nodes and the other 50 of BB, A moves to 6 (when Y ends) and C into the slot A gave
    back, at 10. (B's move gives back more BB than X's end did: A is checked against it.)"""
    y, x = Job("Y", 0, 6, 6, 2, 50.0), Job("X", 0, 10, 2, 2, 0.0)
    a, b, c = Job("A", 0, 4, 4, 4, 0.0), Job("B", 0, 4, 4, 2, 50.0), Job("C", 0, 2, 2, 4, 0.0)
    d0, d1 = _then(ClusterState(0.0, platform, _running((y, 0.0), (x, 0.0)), (a, b, c)), 2.0,
                   _running((y, 0.0)))
    assert d0.reservations == (Reservation("B", 6.0), Reservation("A", 10.0),
                               Reservation("C", 14.0))
    assert d1.started_ids == ["B"]
    assert d1.reservations == (Reservation("A", 6.0), Reservation("C", 10.0))
    assert d1.memory == conservative_memory(platform, {"A": 6.0, "C": 10.0},
                                            {"Y": 6.0, "B": 6.0})


@_POOL_AND_NAMED
def test_an_early_end_beside_a_job_still_running_frees_its_slot(platform):
    # X (2 nodes, 10 s) ends at 4, Y (1 node) runs until 20: A (3 nodes), reserved at 10,
    # starts at 4 in X's nodes and the free one
    x, y = Job("X", 0, 10, 4, 2, 0.0), Job("Y", 0, 20, 20, 1, 0.0)
    a = Job("A", 0, 5, 5, 3, 0.0)
    d0, d1 = _then(ClusterState(0.0, platform, _running((x, 0.0), (y, 0.0)), (a,)), 4.0,
                   _running((y, 0.0)))
    assert d0.reservations == (Reservation("A", 10.0),)
    assert d1.started_ids == ["A"] and d1.reservations == ()


@_POOL_AND_NAMED
def test_a_job_ending_exactly_at_its_walltime_lets_the_reservation_start_then(platform):
    x, a = Job("X", 0, 10, 10, 4, 0.0), Job("A", 0, 5, 5, 4, 0.0)
    d0, d1 = _then(ClusterState(0.0, platform, _running((x, 0.0)), (a,)), 10.0, _running())
    assert d0.reservations == (Reservation("A", 10.0),)
    assert d1.started_ids == ["A"] and d1.reservations == ()


@_POOL_AND_NAMED
def test_a_job_ended_at_its_walltime_does_not_hide_one_that_ended_early(platform):
    # X (2 nodes) ended at its walltime, 4; Z (2 nodes, 10 s) ended at 5: at 5 A (4 nodes),
    # reserved at 10, starts
    x, z = Job("X", 0, 4, 4, 2, 0.0), Job("Z", 0, 10, 5, 2, 0.0)
    a = Job("A", 0, 5, 5, 4, 0.0)
    d0, d1 = _then(ClusterState(0.0, platform, _running((x, 0.0), (z, 0.0)), (a,)), 5.0,
                   _running())
    assert d0.reservations == (Reservation("A", 10.0),)
    assert d1.started_ids == ["A"] and d1.reservations == ()


def test_a_job_ending_at_its_walltime_as_another_ends_early():
    """A (3 nodes, 3 s) runs 0-3; C (2 nodes, 4 s, submitted at 3) runs 3-7 and B (1 node, 25 of
    BB, 4 s, submitted at 5) 5-7, ending early at the instant C ends at its walltime; D (4
    nodes, submitted at 6) waits for both and starts at 7."""
    jobs = [Job("A", 0, 3, 3, 3, 0.0), Job("B", 5, 4, 2, 1, 25.0), Job("C", 3, 4, 4, 2, 0.0),
            Job("D", 6, 2, 2, 4, 0.0)]
    for compiled in (False, True):
        res = simulate(jobs, POOL, "conservative-bb", options={"compiled": compiled})
        assert res.start == [0.0, 5.0, 3.0, 7.0]


@_POOL_AND_NAMED
def test_beyond_the_depth_each_job_that_fits_now_starts_and_takes_its_room(platform):
    """Depth 1: X holds 3 of 4 nodes until 10, A (4 nodes) is reserved at 10. Beyond the depth,
    in queue order: C (2 nodes) does not fit now, D (1 node, ending by 10) starts in the free
    node, and E (1 node) then finds none."""
    x = Job("X", 0, 10, 10, 3, 0.0)
    queue = (Job("A", 0, 10, 10, 4, 0.0), Job("C", 0, 5, 5, 2, 0.0), Job("D", 0, 5, 5, 1, 0.0),
             Job("E", 0, 5, 5, 1, 0.0))
    decision = make_policy("conservative-bb", depth=1).decide(
        ClusterState(0.0, platform, _running((x, 0.0)), queue))
    assert decision.started_ids == ["D"]
    assert decision.reservations == (Reservation("A", 10.0),)


def test_a_policy_given_a_platform_with_named_bb_nodes_plans_on_them():
    """The same policy decides on pooled BB, then on two named BB nodes of 50: there three
    one-node jobs of 30 cannot all start (a piece of 30 per BB node), so C waits for 5."""
    policy = make_policy("conservative-bb")
    queue = tuple(Job(k, 0, 5, 5, 1, 30.0) for k in "ABC")
    pooled = policy.decide(ClusterState(0.0, POOL, (), queue))
    assert pooled.started_ids == ["A", "B", "C"]
    decision = policy.decide(ClusterState(0.0, NAMED, (), queue))
    assert decision.started_ids == ["A", "B"]
    assert decision.reservations == (Reservation("C", 5.0),)
    again = policy.decide(ClusterState(0.0, POOL, (), queue))
    assert again.started_ids == ["A", "B", "C"]


def test_jobs_starting_together_start_in_queue_order():
    """Y (2 nodes, 50 of BB, 12 s) ends at 10 with X (2 nodes, 10 s). B (first in the queue; 2
    nodes, 60 of BB) was reserved at 12, after Y, and C (2 nodes) at 10. At 10 C's reservation
    is due and B moves up into Y's slot: both start, B first, as they are queued."""
    y, x = Job("Y", 0, 12, 10, 2, 50.0), Job("X", 0, 10, 10, 2, 0.0)
    b, c = Job("B", 0, 5, 5, 2, 60.0), Job("C", 0, 5, 5, 2, 0.0)
    d0, d1 = _then(ClusterState(0.0, POOL, _running((x, 0.0), (y, 0.0)), (b, c)), 10.0,
                   _running())
    assert d0.reservations == (Reservation("C", 10.0), Reservation("B", 12.0))
    assert d1.started_ids == ["B", "C"] and d1.reservations == ()


@pytest.mark.parametrize("compiled", [False, True], ids=["python", "compiled"])
def test_a_reservation_never_moves_onto_a_row_overbooked_beyond_the_slack(compiled):
    """A pool of 1 MB (slack 1e-3 B), R on every node until 10. L (1 node, 1 MB + 1e-3 B, let
    in by the fit rule ``bb <= free + slack``) kept at 18 leaves the BB of [18, 28) at
    -1.00000005e-3 B, below minus the slack. K (1 node, no BB) kept at 15 fits no earlier
    start: every run from 10 on reaches 18, where even no BB does not fit. So K keeps 15 (its
    own hold is tested row by row once a row went below minus half the slack). L, which needs
    at least as much of everything as K, moves to 10 all the same: released, it gives back
    the row it overbooked (the bound K's start would give a later job holds only on a
    profile no row of which went that low)."""
    from bbopt.planner import profile_of

    pool = Platform(4, 1e6)
    r = RunningJob(Job("R", 0, 10, 10, 4, 0.0), 0.0)
    k = Job("K", 0, 10, 10, 1, 0.0)
    big = Job("L", 0, 10, 10, 1, 1e6 + 1e-3)
    state = ClusterState(0.0, pool, (r,), (k, big), {"reservations": {"K": 15.0, "L": 18.0}})
    profile = profile_of(state)
    profile.reserve(18.0, 28.0, big.demand)
    assert profile.free[-2] == [3.0, 1e6 - big.bb] and 1e6 - big.bb + 1e-3 < 0.0
    assert profile.fits(10.0, 10.0, k.demand) is False
    d = make_policy("conservative-bb", compiled=compiled).decide(state)
    assert d.started_ids == [] and d.memory["reservations"] == {"K": 15.0, "L": 10.0}

"""EASY's shadow time over the engine's sorted running jobs (``RunningJobs``: a scan that stops
at the shadow time) equals the generic one over an unordered tuple (every release sorted and
given by :func:`bbopt.planner.first_fit_time`), with many running jobs ending together."""

import math
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import make_policy
from bbopt.core import (
    ClusterState,
    Job,
    Platform,
    Reservation,
    RunningJob,
    RunningJobs,
    Start,
    Status,
    dragonfly_proximity,
)
from bbopt.policies.promises import Promise
from bbopt.policies.queue import (
    FCFS,
    EasyBackfilling,
    Filler,
    backfill,
    backfill_blocks,
    head_reservation,
    keeps_reservation,
    shortest_first,
)
from bbopt.queue_view import QueueView, block_summary

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


# -- the rules by hand: thresholds at, below and above them -------------------------------------
# A machine of 10 nodes and 1 TB of BB, whose fit tolerance is 1000 B (REL_TOL x capacity).

TB = 1e12
MACHINE = Platform(nodes=10, bb=TB)


def _job(jid, nodes, bb=0.0, walltime=5.0, submit=0.0):
    return Job(jid, submit, walltime, walltime, nodes, bb)


def _running(jid, nodes, bb=0.0, end=10.0, start=0.0):
    return RunningJob(Job(jid, start, end - start, end - start, nodes, bb), start)


def _states(now, running, queue):
    """The same situation as the engine hands it (running jobs sorted by expected end, a long
    queue's block view) and as a hand-built state (an unordered tuple, a tuple queue)."""
    by_end = sorted(running, key=lambda r: r.expected_end)
    return [ClusterState(now, MACHINE, run, q)
            for run in (RunningJobs(by_end), tuple(reversed(by_end)))
            for q in (tuple(queue), QueueView(queue))]


def _decide(policy, now, running, queue):
    """The starts and the reservations of ``policy``, the same on every form of the state."""
    got = {(tuple(s.job_id for s in d.start), tuple((r.job_id, r.start) for r in d.reservations))
           for d in (make_policy(policy).decide(s) for s in _states(now, running, queue))}
    assert len(got) == 1, got
    return got.pop()


def _shadow(now, running, started, head, reserve_bb=True):
    """``head_reservation``, the same over sorted and unordered running jobs."""
    used_n = sum(r.job.nodes for r in running) + sum(j.nodes for j in started)
    used_b = sum(r.job.bb for r in running) + sum(j.bb for j in started)
    got = {head_reservation(s, list(started), head, MACHINE.nodes - used_n, MACHINE.bb - used_b,
                            reserve_bb=reserve_bb) for s in _states(now, running, ())}
    assert len(got) == 1, got
    return got.pop()


BUSY = [_running("r", 6, 4e11)]  # 4 nodes and 600 GB free now


@pytest.mark.parametrize("policy", ["fcfs", "filler", "fcfs-easy", "fcfs-bb", "sjf-bb"])
def test_a_start_takes_the_free_nodes_and_bb_exactly_up_to_the_tolerance(policy):
    at = [_job("a", 4, 6e11 + 1000.0), _job("b", 1)]
    assert _decide(policy, 0.0, BUSY, at)[0] == ("a",)
    over = [_job("a", 4, 6e11 + 1001.0)]
    assert _decide(policy, 0.0, BUSY, over)[0] == ()
    assert _decide(policy, 0.0, BUSY, [_job("a", 5)])[0] == ()


def test_fcfs_stops_at_the_first_job_that_does_not_fit():
    queue = [_job("a", 5), _job("b", 1)]
    assert _decide("fcfs", 0.0, BUSY, queue)[0] == ()
    assert _decide("filler", 0.0, BUSY, queue)[0] == ("b",)
    # what each start takes is gone for the next
    assert _decide("fcfs", 0.0, BUSY, [_job("a", 2), _job("b", 2), _job("c", 1)])[0] == ("a", "b")
    bb = [_job("a", 1, 5e11), _job("b", 1, 1e11 + 1000.0), _job("c", 1, 1.0), _job("d", 1)]
    assert _decide("fcfs", 0.0, BUSY, bb)[0] == ("a", "b")  # c: 1 B over the tolerance left
    assert _decide("filler", 0.0, BUSY, bb)[0] == ("a", "b", "d")


def test_filler_starts_every_job_that_fits_until_the_nodes_run_out():
    queue = [_job("a", 5), _job("b", 3, 6e11 + 1001.0), _job("c", 3, 6e11 + 1000.0),
             _job("d", 1), _job("e", 1)]
    assert _decide("filler", 0.0, BUSY, queue)[0] == ("c", "d")
    assert _decide("filler", 0.0, BUSY, [_job("a", 3), _job("b", 1)])[0] == ("a", "b")


# EASY: 6 nodes and 500 GB held until 10, 2 nodes until 20: 2 nodes and 500 GB free now, 8 nodes
# and 1 TB at 10.
EASY = [_running("r1", 6, 5e11, end=10.0), _running("r2", 2, 0.0, end=20.0)]


def test_the_head_is_reserved_at_the_first_end_that_frees_its_nodes_and_bb():
    head = _job("h", 8, 8e11)
    assert _shadow(0.0, EASY, (), head) == (10.0, 0, 2e11)
    assert _shadow(0.0, EASY, (), head, reserve_bb=False) == (10.0, 0, TB)
    assert _shadow(0.0, EASY, (), _job("h", 7, 8e11)) == (10.0, 1, 2e11)
    assert _shadow(0.0, EASY, (), _job("h", 9)) == (20.0, 1, TB)
    assert _shadow(0.0, EASY, (), _job("h", 11)) == (math.inf, 0, 0.0)  # never
    # now, when it fits now: nodes at the free count, BB up to the tolerance
    assert _shadow(0.0, EASY, (), _job("h", 2, 5e11 + 1000.0)) == (0.0, 0, -1000.0)
    # BB at the tolerance frees the head at the first end; one byte more waits for 20
    bb = [_running("r1", 2, 5e11, end=10.0), _running("r2", 2, 5e11, end=20.0)]
    assert _shadow(0.0, bb, (), _job("h", 1, 1000.0)) == (0.0, 5, -1000.0)
    assert _shadow(0.0, bb, (), _job("h", 1, 1001.0)) == (10.0, 7, 5e11 - 1001.0)
    assert _shadow(0.0, bb, (), _job("h", 1, 5e11 + 1000.0)) == (10.0, 7, -1000.0)
    assert _shadow(0.0, bb, (), _job("h", 1, 5e11 + 1001.0)) == (20.0, 9, 5e11 - 1001.0)
    assert _shadow(0.0, bb, (), _job("h", 1, 5e11 + 1001.0), reserve_bb=False) == (0.0, 5, 0.0)


def test_ends_of_one_instant_are_given_together():
    # running and started jobs that end at 10 all count in what the head leaves over there
    running = [_running("a", 3, 0.0, end=10.0), _running("b", 3, 1e11, end=10.0),
               _running("c", 4, 0.0, end=20.0)]
    assert _shadow(0.0, running, (), _job("h", 2)) == (10.0, 4, 1e12)
    mixed = [_running("a", 3, 1e11, end=10.0), _running("c", 4, 0.0, end=30.0)]
    started = [_job("s1", 2, 2e11, walltime=10.0), _job("s2", 1, 0.0, walltime=20.0)]
    assert _shadow(0.0, mixed, started, _job("h", 5)) == (10.0, 0, 1e12)
    assert _shadow(0.0, mixed, started, _job("h", 6)) == (20.0, 0, 1e12)
    assert _shadow(0.0, mixed, started, _job("h", 7, 1e12)) == (30.0, 3, 0.0)
    assert _shadow(0.0, mixed, started, _job("h", 11)) == (math.inf, 0, 0.0)
    # started jobs alone, their ends sorted whatever their order
    late_first = [_job("s1", 4, 0.0, walltime=30.0), _job("s2", 6, 0.0, walltime=10.0)]
    assert _shadow(0.0, (), late_first, _job("h", 6)) == (10.0, 0, TB)


def test_an_overdue_release_frees_the_head_now_not_in_the_past():
    # a was expected to end at 5; at 8 it still runs, and its nodes are the head's from now on
    overdue = [_running("a", 5, 0.0, end=5.0), _running("b", 4, 0.0, end=20.0)]
    assert _shadow(8.0, overdue, (), _job("h", 6, submit=8.0)) == (8.0, 0, TB)
    started = [_job("s", 1, 1e11, walltime=4.0, submit=8.0)]  # ends at 12
    assert _shadow(8.0, overdue, started, _job("h", 6, 1e12, submit=8.0)) == (12.0, 0, 0.0)
    assert _shadow(8.0, overdue, started, _job("h", 5, submit=8.0)) == (8.0, 0, 9e11)


def test_a_backfilled_job_ending_at_the_shadow_time_is_not_late():
    head = _job("h", 8, 8e11)
    at = _job("c1", 1, walltime=10.0)  # ends at 10, the shadow time: takes nothing from h
    after = _job("c2", 1, walltime=10.5)  # still running at 10, where h leaves no node
    for policy in ("fcfs-bb", "sjf-bb", "fcfs-easy"):
        assert _decide(policy, 0.0, EASY, [head, after, at]) == (("c1",), (("h", 10.0),))


def test_late_jobs_share_what_the_head_leaves_at_its_shadow_time():
    # h (6 nodes, 800 GB) at 10 leaves 2 nodes and 200 GB; every candidate runs past 10
    head = _job("h", 6, 8e11)
    d1 = _job("d1", 1, 2e11 + 1000.0, walltime=15.0)  # exactly what h leaves, up to the tolerance
    d2 = _job("d2", 1, 2e11 + 1001.0, walltime=15.0)  # one byte more
    f = _job("f", 1, 1.0, walltime=15.0)  # after d1 no byte is left
    g = _job("g", 1, 0.0, walltime=15.0)
    assert _decide("fcfs-bb", 0.0, EASY, [head, d2, d1, f, g]) == (("d1", "g"), (("h", 10.0),))
    # fcfs-easy reserves h's processors only: any byte free now may run past 10
    assert _decide("fcfs-easy", 0.0, EASY, [head, d2, d1, f, g])[0] == ("d2", "d1")
    # the head's nodes: 7 nodes leave 1 at 10 for one late job
    h7 = _job("h", 7, 8e11)
    g2 = _job("g2", 1, 0.0, walltime=15.0)
    assert _decide("fcfs-bb", 0.0, EASY, [h7, g, g2])[0] == ("g",)
    assert _decide("fcfs-easy", 0.0, EASY, [h7, g, g2])[0] == ("g",)


def test_sjf_backfills_the_shortest_first_ties_in_queue_order():
    head = _job("h", 7, 8e11)  # leaves 1 node at 10
    long = _job("long", 1, walltime=30.0)
    short = _job("short", 1, walltime=15.0)
    short2 = _job("short2", 1, walltime=15.0)
    assert _decide("fcfs-bb", 0.0, EASY, [head, long, short])[0] == ("long",)
    assert _decide("sjf-bb", 0.0, EASY, [head, long, short, short2])[0] == ("short",)
    # both end by the shadow time: both start, shortest first
    quick = [head, _job("q1", 1, walltime=8.0), _job("q2", 1, walltime=4.0)]
    assert _decide("sjf-bb", 0.0, EASY, quick)[0] == ("q2", "q1")
    # a job whose nodes or BB are not free now is never a candidate
    big = [head, _job("x", 3, walltime=1.0), _job("y", 1, 5e11 + 1001.0, walltime=1.0),
           _job("z", 1, 5e11 + 1000.0, walltime=2.0)]
    assert _decide("sjf-bb", 0.0, EASY, big)[0] == ("z",)
    # no node free now: nothing is backfilled
    full = [_running("r1", 8, 5e11, end=10.0), _running("r2", 2, 0.0, end=20.0)]
    assert _decide("sjf-bb", 0.0, full, [_job("h", 8), _job("a", 1, walltime=1.0)]) == (
        (), (("h", 10.0),))


def test_the_first_jobs_start_and_the_next_one_is_the_head():
    queue = [_job("a", 1, 1e11), _job("b", 1), _job("h", 8), _job("c", 1, walltime=10.0)]
    # a and b take the 2 free nodes; h is reserved at 10; c finds no node now
    assert _decide("fcfs-bb", 0.0, EASY, queue) == (("a", "b"), (("h", 10.0),))
    assert _decide("fcfs-bb", 0.0, EASY, queue[:2]) == (("a", "b"), ())


def test_backfill_vetoes_take_nothing():
    state = _states(0.0, EASY, ())[0]
    late = [_job("v", 1, walltime=15.0), _job("w", 1, walltime=15.0)]
    # h (7 nodes) leaves 1 node at 10: the vetoed v does not use it up
    got = backfill(state, late, 10.0, (2, 5e11), (1, 2e11), accept=lambda j: j.id != "v")
    assert got == [late[1]]
    assert backfill(state, late, 10.0, (2, 5e11), (1, 2e11)) == [late[0]]
    assert backfill(state, late, 10.0, (0, 5e11), (1, 2e11)) == []


def test_keeps_reservation_narrows_the_mask_to_easys_backfill():
    head = _job("h", 8, 8e11)
    at, after = _job("c1", 1, walltime=10.0), _job("c2", 1, walltime=10.5)
    queue = [head, after, at]
    for state in _states(0.0, EASY, queue):
        assert keeps_reservation(state, queue, [True, True, True]) == [True, False, True]
        assert keeps_reservation(state, queue, [False, True, False]) == [False, False, False]
        assert keeps_reservation(state, queue, [False] * 3) == [False] * 3
    empty = ClusterState(0.0, MACHINE, tuple(EASY), ())
    assert keeps_reservation(empty, [], []) == []


def test_an_unknown_order_is_refused():
    with pytest.raises(ValueError, match="order must be 'fcfs' or 'sjf', got 'ljf'"):
        EasyBackfilling(order="ljf")
    assert EasyBackfilling("x", reserve_bb=True).promise == Promise.HEAD_NEVER_DELAYED
    assert EasyBackfilling("x", reserve_bb=False).promise == Promise.NONE


# -- named BB nodes: starts and the head's shadow time asked of the planner ---------------------
# 4 nodes, two BB nodes of 10 B; r1 holds 6 B on BB node 0 until 10, r2 6 B on BB node 1 until
# 20: 8 B are free in the pool, but no more than 4 B on one BB node.

NAMED = Platform(nodes=4, bb=20.0, bb_nodes=(10.0, 10.0))
NAMED_RUNNING = (RunningJob(Job("r1", 0.0, 10.0, 10.0, 1, 6.0), 0.0, bb_pieces=((0, 6.0),)),
                 RunningJob(Job("r2", 0.0, 20.0, 20.0, 1, 6.0), 0.0, bb_pieces=((1, 6.0),)))


def _decide_named(policy, queue):
    got = {(tuple((s.job_id, s.nodes) for s in d.start),
            tuple((r.job_id, r.start) for r in d.reservations))
           for d in (make_policy(policy).decide(ClusterState(0.0, NAMED, run, q))
                     for run in (RunningJobs(NAMED_RUNNING), NAMED_RUNNING)
                     for q in (tuple(queue), QueueView(queue)))}
    assert len(got) == 1, got
    return got.pop()


def test_a_start_on_named_bb_nodes_needs_its_pieces_placed_not_the_pool_only():
    queue = [_job("a", 1, 5.0), _job("b", 1, 4.0), _job("c", 1, 1.0)]
    assert _decide_named("fcfs", queue) == ((), ())  # a's 5 B fit no BB node now
    # b takes BB node 0's 4 B; c goes to BB node 1
    assert _decide_named("filler", queue) == ((("b", None), ("c", None)), ())
    assert _decide_named("fcfs", queue[1:]) == ((("b", None), ("c", None)), ())


def test_easy_on_named_bb_nodes_keeps_the_heads_pieces_placeable():
    head = _job("h", 1, 8.0)  # placeable at 10, on BB node 0 (10 B free then)
    late = _job("late", 1, 3.0, walltime=20.0)  # on BB node 0 until 20: h not placeable at 10
    short = _job("short", 1, 3.0, walltime=10.0)  # gone by 10
    queue = [head, late, short]
    assert _decide_named("fcfs-bb", queue) == ((("short", None),), (("h", 10.0),))
    # shortest first: short takes BB node 0 now, so late goes to BB node 1 and leaves h room
    assert _decide_named("sjf-bb", queue) == ((("short", None), ("late", None)), (("h", 10.0),))
    # processors only: h's node is held from now, and late takes the other free one
    assert _decide_named("fcfs-easy", queue) == ((("late", None),), (("h", 0.0),))
    state = ClusterState(0.0, NAMED, NAMED_RUNNING, tuple(queue))
    assert keeps_reservation(state, queue, [True, True, True]) == [True, False, True]
    assert keeps_reservation(state, queue, [True, True, False]) == [True, False, False]
    # the first jobs that fit start, the next is the head
    # (a ends at 5; short takes BB node 1 until 10)
    first = [_job("a", 1, 4.0), head, short]
    assert _decide_named("fcfs-bb", first) == ((("a", None), ("short", None)), (("h", 10.0),))
    assert _decide_named("fcfs-bb", [_job("a", 1, 4.0)]) == ((("a", None),), ())


# -- the backfill pass and its inlined copies over a long queue's blocks ------------------------

def _passes(candidates, free, extra, reserve_bb=True, shadow=10.0):
    """What the backfill pass starts from ``candidates`` at 0 (shadow time 10), the same over
    blocks of every size; and what the shortest-first pass starts."""
    state = ClusterState(0.0, MACHINE, (), ())
    tol = 1000.0000000000001  # (REL_TOL x 1 TB)
    got = backfill(state, candidates, shadow, free, extra, reserve_bb=reserve_bb)
    for size in (1, 2, len(candidates)):
        blocks = [(candidates[a:a + size], block_summary(candidates[a:a + size]))
                  for a in range(0, len(candidates), size)]
        assert backfill_blocks(0.0, blocks, shadow, free, extra, reserve_bb, tol) == got
    by_walltime = sorted(candidates, key=lambda j: j.walltime)
    sjf = backfill(state, by_walltime, shadow, free, extra, reserve_bb=reserve_bb)
    for size in (1, 2, len(candidates)):
        blocks = [(candidates[a:a + size], block_summary(candidates[a:a + size]))
                  for a in range(0, len(candidates), size)]
        assert shortest_first(0.0, blocks, shadow, free, extra, reserve_bb, tol) == sjf
    return [j.id for j in got], [j.id for j in sjf]


def test_backfill_takes_free_nodes_and_bb_now_up_to_the_tolerance():
    jobs = [_job("j1", 2, walltime=10.0),  # ends at the shadow time: not late
            _job("j2", 2, walltime=5.0),  # 2 nodes, 1 free after j1
            _job("j3", 1, 5e11 + 1001.0, walltime=4.0),  # one byte over the tolerance
            _job("j4", 1, 5e11 + 1000.0, walltime=5.0),
            _job("j5", 1, walltime=6.0)]  # no node left
    assert _passes(jobs, (3, 5e11), (0, 0.0)) == (["j1", "j4"], ["j2", "j4"])
    # what a start takes is gone: after a, 1001 B are more than the tolerance left
    jobs = [_job("a", 1, 5e11, walltime=3.0), _job("b", 1, 1001.0, walltime=2.0),
            _job("c", 1, walltime=4.0)]
    assert _passes(jobs, (3, 5e11), (0, 0.0)) == (["a", "c"], ["b", "c"])
    assert _passes(jobs, (0, 5e11), (0, 0.0)) == ([], [])
    assert _passes(jobs, (1, 5e11), (0, 0.0)) == (["a"], ["b"])


def test_backfilled_late_jobs_take_what_the_head_leaves():
    late = [_job("k1", 2, walltime=11.0), _job("k2", 1, walltime=12.0),
            _job("k3", 1, walltime=10.0)]
    assert _passes(late, (3, TB), (2, 0.0)) == (["k1", "k3"], ["k3", "k1"])
    assert _passes(late, (3, TB), (1, 0.0)) == (["k2", "k3"], ["k3", "k2"])
    bb = [_job("b1", 1, 2e11 + 1001.0, walltime=20.0), _job("b2", 1, 2e11 + 1000.0,
                                                             walltime=30.0),
          _job("b3", 1, 1.0, walltime=11.0), _job("b4", 1, 0.0, walltime=40.0)]
    # (b3's byte taken first leaves b2 one byte short)
    assert _passes(bb, (4, TB), (4, 2e11)) == (["b2", "b4"], ["b3", "b4"])
    # BB is not counted at the shadow time without the head's BB reserved
    assert _passes(bb, (4, TB), (4, 2e11), reserve_bb=False) == (
        ["b1", "b2", "b3", "b4"], ["b3", "b1", "b2", "b4"])
    # late jobs, but the head leaves no node
    assert _passes(bb, (4, TB), (0, TB)) == ([], [])


def test_the_last_release_can_be_the_shadow_time():
    # the head fits only once every running job has ended: at the last end, with no node or
    # byte to spare (BB up to the tolerance), and never in the past
    assert _shadow(0.0, [_running("a", 4, 0.0, end=10.0)], (), _job("h", 10)) == (10.0, 0, TB)
    last = [_running("a", 1, 4e11, end=10.0)]
    assert _shadow(0.0, last, (), _job("h", 1, TB + 1000.0)) == (10.0, 9, -1000.0)
    assert _shadow(0.0, last, (), _job("h", 1, TB + 1001.0)) == (math.inf, 0, 0.0)
    overdue = [_running("a", 5, 0.0, end=5.0)]
    assert _shadow(8.0, overdue, (), _job("h", 6, submit=8.0)) == (8.0, 4, TB)


def test_fcfs_easy_reserves_no_byte_for_its_head():
    # the BB is full until 20; the head's nodes are free at 10: fcfs-easy reserves them there
    small = Platform(nodes=4, bb=100.0)
    running = (_running("r1", 2, 100.0, end=20.0), _running("r2", 2, 0.0, end=10.0))
    head = _job("h", 2, 50.0)
    for run in (RunningJobs(running[::-1]), running):
        state = ClusterState(0.0, small, run, (head,))
        assert make_policy("fcfs-easy").decide(state).reservations == (Reservation("h", 10.0),)
        assert make_policy("fcfs-bb").decide(state).reservations == (Reservation("h", 20.0),)


def test_keeps_reservation_reserves_the_heads_bb():
    head = _job("h", 7, 8e11)  # leaves 1 node and 200 GB at 10
    takes = _job("takes", 1, 3e11, walltime=15.0)  # free now, but 100 GB more than h leaves
    fits = _job("fits", 1, 2e11, walltime=15.0)
    queue = [head, takes, fits]
    for state in _states(0.0, EASY, queue):
        assert keeps_reservation(state, queue, [True] * 3) == [True, False, True]


def test_a_rule_decides_feasibly_without_a_claim_and_names_the_chosen_nodes():
    prox = Platform(8, 100.0, bb_nodes=(25.0,) * 4, bb_proximity=dragonfly_proximity(8, 2, 2))
    states = [(ClusterState(0.0, MACHINE, (), (_job("a", 2), _job("b", 9))), (None,)),
              (ClusterState(0.0, prox, (), (_job("a", 2, 10.0), _job("b", 8))), ((0, 1),))]
    for policy in ("fcfs", "filler", "fcfs-easy", "fcfs-bb", "sjf-bb"):
        for state, nodes in states:
            before = time.perf_counter()
            d = make_policy(policy).decide(state)
            took = time.perf_counter() - before
            assert d.start == tuple(Start(j, n) for j, n in zip(("a",), nodes, strict=True))
            assert d.reservations == (() if policy in ("fcfs", "filler")
                                      else (Reservation("b", 5.0),))
            assert d.preempt == () and d.alternatives == () and d.memory is None
            s = d.stats
            assert (s.backend, s.status, s.objective, s.bound, s.gap, s.budget, s.audited) == (
                "rule", Status.FEASIBLE, None, None, None, None, False)
            assert 0.0 <= s.wall_time <= took


def test_the_policies_names_and_defaults():
    assert (FCFS().name, Filler().name) == ("fcfs", "filler")
    easy = EasyBackfilling()
    assert (easy.name, easy.reserve_bb, easy.order) == ("fcfs-bb", True, "fcfs")
    for name in ("fcfs", "filler", "fcfs-easy", "fcfs-bb", "sjf-bb"):
        assert make_policy(name).name == name


def test_shortest_first_at_the_shadow_time_and_at_what_the_head_leaves():
    # a job ending exactly at the shadow time takes nothing from the head, whatever its size
    assert _passes([_job("e", 2, walltime=10.0)], (3, TB), (0, 0.0)) == (["e"], ["e"])
    # a late job of exactly the BB the head leaves, up to the tolerance
    exact = [_job("x", 1, 2e11 + 1000.0, walltime=30.0)]
    assert _passes(exact, (4, TB), (4, 2e11)) == (["x"], ["x"])
    # each late job's bytes are taken from what the head leaves: 20 GB of 100, 70 GB fit after
    shares = [_job("x1", 1, 2e10, walltime=20.0), _job("x2", 1, 7e10, walltime=30.0),
              _job("x3", 1, 1e10 + 1001.0, walltime=40.0)]
    assert _passes(shares, (4, TB), (4, 1e11)) == (["x1", "x2"], ["x1", "x2"])


def test_every_rule_decides_when_the_whole_queue_starts():
    prox = Platform(8, 100.0, bb_nodes=(25.0,) * 4, bb_proximity=dragonfly_proximity(8, 2, 2))
    cases = [(MACHINE, (_job("a", 2), _job("b", 3)), (None, None)),
             (NAMED, (_job("a", 1, 1.0), _job("b", 1, 1.0)), (None, None)),
             (prox, (_job("a", 2, 10.0), _job("b", 2)), ((0, 1), (2, 3)))]
    for policy in ("fcfs", "filler", "fcfs-easy", "fcfs-bb", "sjf-bb"):
        for platform, queue, nodes in cases:
            running = NAMED_RUNNING if platform is NAMED else ()
            for q in (queue, QueueView(queue)):
                before = time.perf_counter()
                d = make_policy(policy).decide(ClusterState(0.0, platform, running, q))
                took = time.perf_counter() - before
                assert d.start == (Start("a", nodes[0]), Start("b", nodes[1])), policy
                assert d.reservations == ()
                assert 0.0 <= d.stats.wall_time <= took
    # and with a head that waits, over a long queue's blocks too
    for policy in ("fcfs-easy", "fcfs-bb", "sjf-bb"):
        before = time.perf_counter()
        d = make_policy(policy).decide(_states(0.0, EASY, [_job("h", 8), _job("c", 1)])[1])
        assert 0.0 <= d.stats.wall_time <= time.perf_counter() - before
        assert d.reservations == (Reservation("h", 10.0),)


def test_sjf_bb_on_a_long_queue_keeps_the_heads_bb():
    head = _job("h", 7, 8e11)  # leaves 1 node and 200 GB at 10
    queue = [head, _job("takes", 1, 3e11, walltime=15.0), _job("fits", 1, 2e11, walltime=16.0)]
    assert _decide("sjf-bb", 0.0, EASY, queue)[0] == ("fits",)
    assert _decide("fcfs-easy", 0.0, EASY, queue)[0] == ("takes",)


def test_shadow_time_with_started_jobs_at_the_bb_tolerance():
    mixed = [_running("a", 3, 1e11, end=10.0), _running("c", 4, 0.0, end=30.0)]
    started = [_job("s1", 2, 2e11, walltime=10.0), _job("s2", 1, 0.0, walltime=20.0)]
    assert _shadow(0.0, mixed, started, _job("h", 5, TB + 1000.0)) == (10.0, 0, -1000.0)
    assert _shadow(0.0, mixed, started, _job("h", 5, TB + 1001.0)) == (math.inf, 0, 0.0)


def test_named_easy_reserves_its_head_re_placeable_after_the_jobs_that_start():
    # two jobs start, the third is the head
    queue = [_job("a", 1, 1.0), _job("b", 1, 1.0), _job("h", 1, 8.0), _job("c", 1)]
    assert _decide_named("fcfs-bb", queue) == ((("a", None), ("b", None)), (("h", 10.0),))
    # fcfs-easy's head asks no byte: with every byte of the BB nodes held until 10 and 20, its
    # processors are reserved now
    full = (RunningJob(Job("r1", 0.0, 10.0, 10.0, 1, 10.0), 0.0, bb_pieces=((0, 10.0),)),
            RunningJob(Job("r2", 0.0, 20.0, 20.0, 1, 10.0), 0.0, bb_pieces=((1, 10.0),)))
    state = ClusterState(0.0, NAMED, full, (_job("h", 2, 5.0),))
    assert make_policy("fcfs-easy").decide(state).reservations == (Reservation("h", 0.0),)
    assert make_policy("fcfs-bb").decide(state).reservations == (Reservation("h", 10.0),)
    # the head's pieces are chosen again when a late job takes room where they would have gone
    # (tests/planner/test_plan.py: four pieces of 3 GB at 10, first fit three on BB node 0)
    gb = 1e9
    platform = Platform(6, 20 * gb, bb_nodes=(10 * gb, 10 * gb))
    running = (RunningJob(Job("r", 0, 10.0, nodes=4), 0.0, (0, 1, 2, 3)),)
    queue = (Job("head", 0, 50.0, nodes=4, bb=12 * gb), Job("late", 0, 100.0, nodes=1, bb=6 * gb))
    d = make_policy("fcfs-bb").decide(ClusterState(0.0, platform, running, queue))
    assert d.start == (Start("late"),) and d.reservations == (Reservation("head", 10.0),)

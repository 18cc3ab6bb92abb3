"""The plan searches' profile as plain lists (:mod:`bbopt.planner.lists`): a job's earliest
start where its nodes and pooled BB are free for its whole walltime, and its reservation
(Kopanski & Rzadca, Sections 3.2 and 3.3), on hand-built profiles whose answers are computed
here: a segment at exactly the demand, a walltime ending exactly on a breakpoint (half-open
segments), a short segment skipped with every start that would still hold it."""

from __future__ import annotations

import math

import pytest

from bbopt.planner.lists import earliest, pool_window, reserve, reserve_named

INF = math.inf


# --- earliest: the first segment from i where n nodes and bneed bytes stay free for w seconds

def test_a_segment_at_exactly_the_demand_fits():
    T, FN, FB = [0.0, 10.0], [2, 5], [1.5, 9.0]
    assert earliest(T, FN, FB, 0, 2, 1.5, 5.0) == (0.0, 0, 1)
    assert earliest(T, FN, FB, 0, 3, 1.5, 5.0) == (10.0, 1, 2)  # one node short at 0
    assert earliest(T, FN, FB, 0, 2, 1.75, 5.0) == (10.0, 1, 2)  # a quarter byte short


def test_a_walltime_ending_on_a_breakpoint_does_not_hold_the_next_segment():
    T, FN, FB = [0.0, 10.0, 20.0], [4, 1, 4], [5.0, 5.0, 5.0]
    assert earliest(T, FN, FB, 0, 2, 1.0, 10.0) == (0.0, 0, 1)
    # one second more reaches the short segment at 10: the next start after it, at 20
    assert earliest(T, FN, FB, 0, 2, 1.0, 10.5) == (20.0, 2, 3)
    # started from segment 1: the search begins there
    assert earliest(T, FN, FB, 1, 1, 1.0, 30.0) == (10.0, 1, 3)


def test_a_window_cut_by_a_short_segment_starts_again_just_after_it():
    # the window from 0 for 15 s meets the short segment at 10 (nodes), the one from 20 fits
    T, FN, FB = [0.0, 10.0, 20.0, 30.0, 40.0], [4, 1, 4, 4, 4], [5.0] * 5
    assert earliest(T, FN, FB, 0, 2, 1.0, 15.0) == (20.0, 2, 4)
    # the same with bytes short at 10
    FN, FB = [4] * 5, [5.0, 0.5, 5.0, 5.0, 5.0]
    assert earliest(T, FN, FB, 0, 2, 1.0, 15.0) == (20.0, 2, 4)
    # a job that holds the last segment: it ends the window
    assert earliest(T, FN, FB, 0, 2, 1.0, 100.0) == (20.0, 2, 5)


# --- reserve: take n nodes and b bytes on segments i .. j - 1, up to end

def test_a_reservation_splits_the_segment_its_end_falls_in():
    T, FN, FB = [0.0, 10.0, 20.0], [4, 3, 2], [5.0, 6.0, 7.0]
    reserve(T, FN, FB, 0, 2, 15.0, 1, 0.5)
    assert (T, FN, FB) == ([0.0, 10.0, 15.0, 20.0], [3, 2, 3, 2], [4.5, 5.5, 6.0, 7.0])


def test_a_reservation_ending_on_a_breakpoint_or_past_the_last_one():
    T, FN, FB = [0.0, 10.0, 20.0], [4, 3, 2], [5.0, 6.0, 7.0]
    reserve(T, FN, FB, 1, 2, 20.0, 2, 1.0)  # ends on the breakpoint at 20: no new one
    assert (T, FN, FB) == ([0.0, 10.0, 20.0], [4, 1, 2], [5.0, 5.0, 7.0])
    reserve(T, FN, FB, 2, 3, 25.0, 1, 2.0)  # past the last breakpoint: one appended
    assert (T, FN, FB) == ([0.0, 10.0, 20.0, 25.0], [4, 1, 1, 2], [5.0, 5.0, 5.0, 7.0])


# --- pool_window: the window of the nodes and the pool on a profile ended by a sentinel

def test_the_pool_window_fits_at_exactly_the_demand_within_the_slack():
    T, FN, FB = [0.0, 10.0, INF], [2, 4, 8], [4.0, 9.0, 9.0]
    assert pool_window(T, FN, FB, 0, 2, 5.0, 10.0, 1.0) == (0, 1)  # 4 B + 1 B of slack
    assert pool_window(T, FN, FB, 0, 2, 5.5, 10.0, 1.0) == (1, 2)  # half a byte more
    assert pool_window(T, FN, FB, 0, 3, 5.0, 10.0, 1.0) == (1, 2)  # a node more
    assert pool_window(T, FN, FB, 0, 2, 5.0, 10.0, 0.0) == (1, 2)  # no slack


def test_the_pool_window_ends_at_the_first_breakpoint_at_or_after_its_end():
    T, FN, FB = [0.0, 10.0, 20.0, INF], [4, 4, 4, 8], [5.0, 5.0, 5.0, 9.0]
    assert pool_window(T, FN, FB, 0, 2, 1.0, 10.0, 0.0) == (0, 1)
    assert pool_window(T, FN, FB, 0, 2, 1.0, 10.5, 0.0) == (0, 2)
    assert pool_window(T, FN, FB, 0, 2, 1.0, 20.0, 0.0) == (0, 2)
    assert pool_window(T, FN, FB, 1, 2, 1.0, 10.0, 0.0) == (1, 2)


def test_the_pool_window_skips_every_start_that_would_hold_a_short_segment():
    # nodes short at 20: the windows from 0 and 10 for 25 s hold it; the next start is 30
    T, FN, FB = [0.0, 10.0, 20.0, 30.0, INF], [4, 4, 1, 4, 8], [5.0] * 5
    assert pool_window(T, FN, FB, 0, 2, 1.0, 25.0, 0.0) == (3, 4)
    # bytes short at 20 (with a slack of 1 B): the same
    FN, FB = [4] * 5, [5.0, 5.0, -0.5, 5.0, 9.0]
    assert pool_window(T, FN, FB, 0, 2, 1.0, 25.0, 1.0) == (3, 4)
    # bytes at 20 short of the demand by exactly the slack: the window from 0 holds
    FB[2] = 0.0
    assert pool_window(T, FN, FB, 0, 2, 1.0, 25.0, 1.0) == (0, 3)
    # one node short at the window's last segment: the segment after it the first start
    T, FN, FB = [0.0, 10.0, 20.0, 30.0, 40.0, INF], [4, 4, 4, 1, 4, 8], [5.0] * 6
    assert pool_window(T, FN, FB, 0, 2, 1.0, 35.0, 0.0) == (4, 5)


def test_the_pool_window_is_none_when_only_the_sentinel_is_left():
    T, FN, FB = [0.0, 10.0, INF], [1, 1, 8], [5.0, 5.0, 9.0]
    assert pool_window(T, FN, FB, 0, 2, 1.0, 5.0, 0.0) is None
    T, FN, FB = [0.0, 10.0, 20.0, INF], [4, 4, 1, 8], [5.0, 5.0, 5.0, 9.0]
    assert pool_window(T, FN, FB, 0, 2, 1.0, 25.0, 0.0) is None
    assert pool_window(T, FN, FB, 0, 2, 1.0, 15.0, 0.0) == (0, 2)


# --- reserve_named: nodes, pool and each BB node's piece on the named-BB profile

def test_a_named_reservation_takes_every_piece_and_splits_at_its_end():
    shared = (2.0, 3.0)
    prof = [[0.0, 10.0, INF], [4, 4, 8], [5.0, 5.0, 9.0], [shared, shared, (4.0, 5.0)]]
    reserve_named(prof, 0, 1, 5.0, 1, 1.0, [(1, 0.5), (0, 0.25), (0, 0.5)])
    T, FN, FB, FK = prof
    assert (T, FN, FB) == ([0.0, 5.0, 10.0, INF], [3, 4, 4, 8], [4.0, 5.0, 5.0, 9.0])
    assert FK == [(1.25, 2.5), (2.0, 3.0), (2.0, 3.0), (4.0, 5.0)]
    assert FK[1] is shared  # the new breakpoint shares its neighbour's row


def test_a_named_reservation_on_a_breakpoint_without_pieces():
    rows = [(2.0, 3.0), (1.0, 1.0), (4.0, 5.0)]
    prof = [[0.0, 10.0, INF], [4, 4, 8], [5.0, 5.0, 9.0], list(rows)]
    reserve_named(prof, 0, 2, INF, 2, 0.0, [])  # held to the sentinel: no new breakpoint
    assert prof[:3] == [[0.0, 10.0, INF], [2, 2, 8], [5.0, 5.0, 9.0]]
    assert prof[3] == rows and all(a is b for a, b in zip(prof[3], rows, strict=True))
    reserve_named(prof, 1, 2, 10.0 + 2.5, 1, 2.0, [(1, 1.0)])
    assert prof[:3] == [[0.0, 10.0, 12.5, INF], [2, 1, 2, 8], [5.0, 3.0, 5.0, 9.0]]
    assert prof[3] == [(2.0, 3.0), (1.0, 0.0), (1.0, 1.0), (4.0, 5.0)]


@pytest.mark.parametrize("start", [0, 1, 2])
def test_the_pool_window_from_any_segment_before_the_fit(start):
    T, FN, FB = [0.0, 10.0, 20.0, 30.0, INF], [1, 1, 1, 4, 8], [5.0] * 5
    assert pool_window(T, FN, FB, start, 2, 1.0, 5.0, 0.0) == (3, 4)


def test_the_search_goes_on_from_the_segment_it_was_given():
    T, FN, FB = [0.0, 10.0, 20.0, 30.0], [4, 4, 1, 4], [5.0] * 4
    assert earliest(T, FN, FB, 2, 2, 1.0, 5.0) == (30.0, 3, 4)  # never back to segment 1
    assert earliest([0.0, 10.0, 20.0], [4, 1, 4], [5.0] * 3, 1, 2, 1.0, 5.0) == (20.0, 2, 3)


def test_a_later_segment_at_exactly_the_demand_is_held():
    T = [0.0, 10.0, 20.0]
    assert earliest(T, [4, 2, 4], [5.0] * 3, 0, 2, 1.0, 15.0) == (0.0, 0, 2)
    assert earliest(T, [4] * 3, [5.0, 1.0, 5.0], 0, 2, 1.0, 15.0) == (0.0, 0, 2)
    # the same for the pool window, nodes and bytes (within the slack)
    T, FB = [0.0, 10.0, 20.0, INF], [5.0] * 4
    assert pool_window(T, [4, 2, 4, 8], FB, 0, 2, 1.0, 15.0, 0.0) == (0, 2)
    assert pool_window(T, [4] * 4, [5.0, 0.5, 5.0, 9.0], 0, 2, 1.0, 15.0, 0.5) == (0, 2)


def test_the_pool_window_checks_the_one_segment_after_its_start():
    # the window from 0 for 15 s holds segment 1 only, one node short: the next start is 20
    T, FN, FB = [0.0, 10.0, 20.0, 30.0, INF], [4, 1, 4, 4, 8], [5.0] * 5
    assert pool_window(T, FN, FB, 0, 2, 1.0, 15.0, 0.0) == (2, 4)
    # started after a short segment, from a segment that fits, before another short one
    FN = [1, 4, 1, 4, 8]
    assert pool_window(T, FN, FB, 1, 2, 1.0, 15.0, 0.0) == (3, 4)


def test_the_pool_window_stops_at_a_sentinel_that_fits_nothing():
    assert pool_window([0.0, INF], [1, 1], [5.0, 5.0], 0, 2, 1.0, 5.0, 0.0) is None
    assert pool_window([0.0, 10.0, INF], [4, 1, 0], [5.0, 5.0, 0.0], 0, 2, 1.0, 15.0,
                       0.0) is None


def test_a_named_reservation_reads_the_first_four_lists_of_a_longer_profile():
    extra = ["kept as is"]
    prof = [[0.0, INF], [4, 8], [5.0, 9.0], [(2.0,), (4.0,)], extra]
    reserve_named(prof, 0, 1, 5.0, 1, 1.0, [(0, 1.0)])
    assert prof == [[0.0, 5.0, INF], [3, 4, 8], [4.0, 5.0, 9.0], [(1.0,), (2.0,), (4.0,)],
                    ["kept as is"]]

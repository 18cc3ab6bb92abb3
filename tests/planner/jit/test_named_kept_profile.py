"""The profile conservative-bb keeps between decisions on named BB nodes
(bbopt.planner.jit.named_conservative: ``_advance``, and ``_plan`` on a profile that holds the
kept reservations already): brought to the next decision's now, the rest of the slot of a job
gone early given back, breakpoints between equal segments dropped; a reservation that cannot
move left in place only when every amount is whole (Kopanski & Rzadca, Sections 3.2 and 4.1;
Mu'alem & Feitelson's compression)."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("numba")

from bbopt.planner.jit import named_conservative as C  # noqa: E402

# A profile of nodes, pool BB and two BB nodes: breakpoints, then each dimension's free amount.
_ROWS = [[0.0, 10.0, 20.0, 30.0],
         [1.0, 2.0, 3.0, 4.0],
         [10.0, 20.0, 30.0, 40.0],
         [5.0, 10.0, 15.0, 20.0],
         [5.0, 10.0, 15.0, 20.0]]


def _advance(rows, now, gone=(), cap=16):
    prof = np.zeros((len(rows), cap))
    prof[:, :len(rows[0])] = rows
    gone = np.array(gone, dtype=np.float64).reshape(len(gone), len(rows))
    length = C._advance(prof, len(rows[0]), now, np.zeros(len(rows) - 1), gone)
    return prof[:, :length].tolist()


@pytest.mark.parametrize(("now", "kept"), [(0.0, 0), (5.0, 0), (10.0, 1), (15.0, 1),
                                           (math.nextafter(20.0, 0.0), 1), (20.0, 2),
                                           (35.0, 3)])
def test_the_segments_before_now_go_and_the_one_holding_now_starts_there(now, kept):
    got = _advance(_ROWS, now)
    assert got[0] == [now] + _ROWS[0][kept + 1:]
    assert [row for row in got[1:]] == [row[kept:] for row in _ROWS[1:]]


def test_the_rest_of_a_job_gone_early_is_given_back_from_now_to_its_end():
    """At t=12 a job due until 25 ended: its 1 node, 4 of pool BB and 3 + 1 on the BB nodes
    come back on [12, 25): a breakpoint at 25 splits segment [20, 30)."""
    got = _advance(_ROWS, 12.0, [(25.0, 1.0, 4.0, 3.0, 1.0)])
    assert got == [[12.0, 20.0, 25.0, 30.0],
                   [3.0, 4.0, 3.0, 4.0],
                   [24.0, 34.0, 30.0, 40.0],
                   [13.0, 18.0, 15.0, 20.0],
                   [11.0, 16.0, 15.0, 20.0]]


def test_two_jobs_gone_early_are_both_given_back():
    got = _advance(_ROWS, 0.0, [(10.0, 1.0, 2.0, 1.0, 1.0), (30.0, 1.0, 2.0, 0.0, 1.0)])
    assert got == [[0.0, 10.0, 20.0, 30.0],
                   [3.0, 3.0, 4.0, 4.0],
                   [14.0, 22.0, 32.0, 40.0],
                   [6.0, 10.0, 15.0, 20.0],
                   [7.0, 11.0, 16.0, 20.0]]


def test_a_job_gone_that_gives_the_free_amounts_of_the_next_segment_merges_the_two():
    """[0, 10) given 1 node, 10 of pool and 5 + 5: equal to [10, 20), which merges into it."""
    got = _advance(_ROWS, 0.0, [(10.0, 1.0, 10.0, 5.0, 5.0)])
    assert got == [[0.0, 20.0, 30.0], [2.0, 3.0, 4.0], [20.0, 30.0, 40.0], [10.0, 15.0, 20.0],
                   [10.0, 15.0, 20.0]]


@pytest.mark.parametrize("dim", [0, 1, 2, 3])
@pytest.mark.parametrize("apart", [0.0, 1.0, -1.0, 1e-9])
def test_neighbours_merge_only_when_every_dimension_is_equal(dim, apart):
    rows = [[0.0, 10.0, 20.0, 30.0], [2.0] * 4, [20.0] * 4, [10.0] * 4, [10.0] * 4]
    rows[1 + dim][2] += apart  # ([20, 30) differs in one dimension by ``apart``)
    got = _advance(rows, 5.0)
    if apart:
        assert got[0] == [5.0, 20.0, 30.0]
        assert [r[1] for r in got[1:]] == [r[2] for r in rows[1:]]
    else:
        assert got == [[5.0]] + [[r[0]] for r in rows[1:]]


def _kept(free, exact):
    """``_plan`` on a kept profile where reservation q (2 nodes, 0.2 of pool, one piece of 0.2
    on BB node 0) holds [10, 20) and no node is free before 10: compressing cannot move it."""
    prof = np.zeros((4, 16))
    prof[:, :3] = [[0.0, 10.0, 20.0], [0.0, 2.0, 4.0], [free, free, 1.0], [free, free, 1.0]]
    planned, seq, got = np.zeros(1), np.zeros(1, dtype=np.int64), np.zeros((1, 1))
    n, length = C._plan(0.0, np.zeros(3), 0.0, 0.0, prof, 3, np.array([[2.0], [0.2], [10.0]]),
                        np.array([10.0]), np.array([[0.2]]), np.array([0], dtype=np.int64),
                        math.inf, planned, seq, got, True, True, exact)
    assert (n, planned.tolist(), got.tolist()) == (1, [10.0], [[0.2]])
    return prof[2:, :length].tolist()


def test_a_reservation_that_cannot_move_is_left_untouched_when_amounts_are_whole():
    """Released and held again, the slot's free 0.1 becomes (0.1 + 0.2) - 0.2, one ulp more,
    as the Python reference computes it; left in place (``exact``: whole amounts, where the
    two are equal) it stays 0.1. The ``exact`` shortcut is only right for whole amounts."""
    again = (0.1 + 0.2) - 0.2
    assert again != 0.1
    assert _kept(0.1, exact=False) == [[0.1, again, 1.0], [0.1, again, 1.0]]
    assert _kept(0.1, exact=True) == [[0.1, 0.1, 1.0], [0.1, 0.1, 1.0]]
    assert _kept(1.0, exact=False) == _kept(1.0, exact=True) == [[1.0, 1.0, 1.0]] * 2


def test_a_profile_built_again_releases_and_holds_a_reservation_that_cannot_move():
    """conservative_running (the profile built from the running jobs, fractional amounts): R
    holds 3 of 4 nodes until 10, S 1 node and 0.43 of the 0.9 pool and BB node until 20; q (2
    nodes, 0.22) kept at 10 cannot move (no node before), and released and held again it
    leaves (0.47 - 0.22 + 0.22) - 0.22 = 0.24999999999999997 free there, as the planner's
    Python does; n (1 node, 0.25) then waits for S's end. Left untouched, 0.25 would be free
    and n would start at 10: the shortcut is for whole amounts only."""
    x = (0.9 - 0.43) - 0.22
    assert (x, (x + 0.22) - 0.22) == (0.25, 0.24999999999999997)
    caps = np.array([4.0, 0.9, 0.9])
    jobs = np.array([[2.0, 1.0], [0.22, 0.25], [10.0, 10.0]])
    planned, seq, got = np.zeros(2), np.zeros(2, dtype=np.int64), np.zeros((2, 1))
    n = C.conservative_running(0.0, caps, np.zeros(3), 0.0, 0.0, np.array([10.0, 20.0]),
                               np.array([[3.0, 0.0, 0.0], [1.0, 0.43, 0.43]]), jobs,
                               np.array([10.0, math.nan]), np.full((2, 1), math.nan),
                               math.inf, planned, seq, got, True)
    assert (n, planned.tolist(), seq.tolist()) == (2, [10.0, 20.0], [0, 1])


@pytest.mark.parametrize(("columns", "ok"), [(3, False), (4, False), (5, True)])
def test_a_change_that_would_write_past_the_profiles_columns_raises(columns, ok):
    """A reservation of [5, 15) on a profile of 3 breakpoints inserts two (at 5 and 15): it
    needs 5 columns, and with fewer it raises instead of writing past them."""
    prof = np.zeros((3, columns))
    prof[:, :3] = [[0.0, 10.0, 20.0], [4.0, 4.0, 4.0], [9.0, 9.0, 9.0]]
    demand = np.array([1.0, 1.0])
    if ok:
        assert C._change(prof, 3, 5.0, 15.0, demand, -1.0, np.zeros(2)) == 5
        assert prof.tolist() == [[0.0, 5.0, 10.0, 15.0, 20.0], [4.0, 3.0, 3.0, 4.0, 4.0],
                                 [9.0, 8.0, 8.0, 9.0, 9.0]]
    else:
        with pytest.raises(ValueError, match=r"^the profile's arrays are full$"):
            C._change(prof, 3, 5.0, 15.0, demand, -1.0, np.zeros(2))


@pytest.mark.parametrize(("columns", "ok"), [(2, False), (3, True)])
def test_the_running_jobs_profile_is_built_only_into_enough_columns(columns, ok):
    """Two running jobs (ends 10 and 20) need 3 breakpoints: now, 10 and 20."""
    prof = np.zeros((3, columns))
    args = (prof, 0.0, np.array([4.0, 9.0]), np.array([20.0, 10.0]),
            np.array([[1.0, 2.0], [2.0, 3.0]]))
    if ok:
        assert C._build(*args) == 3
        assert prof.tolist() == [[0.0, 10.0, 20.0], [1.0, 3.0, 4.0], [4.0, 7.0, 9.0]]
    else:
        with pytest.raises(ValueError, match=r"^the profile's arrays are full$"):
            C._build(*args)


def test_a_job_past_the_depth_that_does_not_fit_now_is_left_out_of_the_plan():
    """Depth 1, one node free until 10: the first job starts now, the second (beyond the
    depth) gets no reservation and no start: one job planned, the count returned."""
    prof = np.zeros((4, 16))
    prof[:, :2] = [[0.0, 10.0], [1.0, 4.0], [9.0, 9.0], [9.0, 9.0]]
    planned, seq, got = np.zeros(2), np.full(2, -7, dtype=np.int64), np.zeros((2, 1))
    n = C.conservative_named(0.0, np.zeros(3), 0.0, 0.0, prof, 2,
                             np.array([[1.0, 1.0], [0.0, 0.0], [5.0, 5.0]]),
                             np.full(2, math.nan), np.full((2, 1), math.nan),
                             np.zeros(0, dtype=np.int64), 1.0, planned, seq, got, True)
    assert n == 1 and planned.tolist()[0] == 0.0 and math.isnan(planned[1])
    assert seq[:n].tolist() == [0]

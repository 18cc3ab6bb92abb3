"""The compiled kernels' shared primitives (bbopt.planner.jit.primitives), each called alone
against the Python it stands for: ``bisect``, the profile's segment lookup, the room tests at
and one ulp off their boundary, the earliest-fit window, breakpoints inserted and demands taken,
the least free space over segments, the first-fit rule of ``planner.pieces`` (whose closed form
must give the piece-by-piece loop's count even where rounding decides), the pieces summed one
by one, and the plan's wait term (Kopanski & Rzadca, Sections 3.2-3.3 and 4.1)."""

from __future__ import annotations

import bisect
import math
import random

import numpy as np
import pytest

pytest.importorskip("numba")

from bbopt.planner.jit import primitives as P  # noqa: E402
from bbopt.planner.pieces import first_fit_runs  # noqa: E402


def _arr(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float64)


def test_bisect_left_and_right_are_pythons_with_duplicates_and_bounds():
    rnd = random.Random(3)
    for _ in range(300):
        a = sorted(rnd.choice([0.0, 1.0, 2.0, 2.0, 3.5, 7.0]) for _ in range(rnd.randint(0, 7)))
        x = rnd.choice([-1.0, 0.0, 1.0, 2.0, 2.5, 3.5, 7.0, 9.0])
        lo = rnd.randint(0, len(a))
        hi = rnd.randint(lo, len(a))
        arr = np.array(a, dtype=np.float64)
        assert P.bisect_left(arr, x, lo, hi) == bisect.bisect_left(a, x, lo, hi)
        assert P.bisect_right(arr, x, lo, hi) == bisect.bisect_right(a, x, lo, hi)


def test_the_segment_holding_a_time_is_the_last_breakpoint_at_or_before_it():
    T = _arr(10.0, 20.0, 30.0, 99.0)  # (the last one past the profile's length 3)
    assert [P.segment(T, t, 3) for t in (5.0, 10.0, 15.0, 20.0, 29.0, 30.0, 31.0, 99.0)] == [
        0, 0, 0, 1, 1, 2, 2, 2]


def test_room_and_short_are_decided_at_equality_and_one_ulp_off():
    need = 4.0
    below = math.nextafter(need, 0.0)
    F0 = _arr(below, need, 9.0)
    F1 = _arr(9.0, 9.0, below)
    # room: F + add >= need in both rows; short: F + add < need in a row
    assert P.room(F0, F1, 0, 3, need, need, 0.0, 0.0) == 1
    assert P.room(F0, F1, 2, 3, need, need, 0.0, 0.0) == 3  # (none: the stop)
    assert P.room(F0, F1, 0, 3, need, need, math.ulp(below), 0.0) == 0  # the slack added
    assert P.room(F1, F0, 0, 3, need, need, 0.0, math.ulp(below)) == 0  # (either row)
    assert P.short(F0, F1, 1, 3, need, need, 0.0, 0.0) == 2
    assert P.short(F0, F1, 0, 3, need, need, 0.0, 0.0) == 0
    assert P.short(F0, F1, 1, 2, need, need, 0.0, 0.0) == -1  # exactly the need: room
    assert P.short(F1, F0, 1, 2, need, need, 0.0, 0.0) == -1  # (either row)
    assert P.short(F0, F1, 0, 3, need, need, 1.0, 1.0) == -1


def test_the_window_is_the_earliest_start_with_room_for_the_whole_duration():
    T = _arr(0.0, 10.0, 20.0, 30.0, 40.0)
    F0 = _arr(1.0, 4.0, 4.0, 2.0, 4.0)
    F1 = _arr(9.0, 9.0, 9.0, 9.0, 9.0)
    # from now 5: segment 1 [10, 20) and 2 [20, 30) hold 15 s, not 25 s (segment 3 short)
    assert P.window(T, F0, F1, 0, 5, 5.0, 15.0, 4.0, 1.0, 0.0, 0.0) == (10.0, 1, 3)
    assert P.window(T, F0, F1, 0, 5, 5.0, 20.0, 4.0, 1.0, 0.0, 0.0) == (10.0, 1, 3)
    assert P.window(T, F0, F1, 0, 5, 5.0, 25.0, 4.0, 1.0, 0.0, 0.0) == (40.0, 4, 5)
    assert P.window(T, F0, F1, 0, 5, 12.0, 5.0, 4.0, 1.0, 0.0, 0.0) == (12.0, 1, 2)  # now
    assert P.window(T, F0, F1, 0, 5, 0.0, 5.0, 5.0, 1.0, 0.0, 0.0) == (math.inf, 5, 5)
    assert P.window(T, F0, F1, 0, 5, 0.0, 5.0, 2.0, 1.0, 0.0, 0.0) == (10.0, 1, 2)
    assert P.window(T, F0, F1, 0, 5, 0.0, 5.0, 2.0, 1.0, 1.0, 0.0) == (0.0, 0, 1)  # slack
    # the slack counts in every segment of the window, in either row
    assert P.window(T, F0, F1, 0, 5, 0.0, 15.0, 4.5, 1.0, 1.0, 0.0) == (10.0, 1, 3)
    assert P.window(T, F1, F0, 0, 5, 0.0, 15.0, 1.0, 4.5, 0.0, 1.0) == (10.0, 1, 3)
    assert P.window(T, F0, F1, 0, 5, 0.0, 15.0, 4.5, 1.0, 0.0, 0.0) == (math.inf, 5, 5)


def test_a_breakpoint_is_inserted_with_the_rows_before_it_and_a_demand_taken_there():
    prof = np.zeros((3, 6))
    prof[:, :3] = [[0.0, 10.0, 20.0], [4.0, 2.0, 4.0], [8.0, 6.0, 8.0]]
    assert P.insert(prof, 3, 2, 15.0) == 4
    assert prof[:, :4].tolist() == [[0.0, 10.0, 15.0, 20.0], [4.0, 2.0, 2.0, 4.0],
                                    [8.0, 6.0, 6.0, 8.0]]
    P.add(prof, 1, 3, _arr(1.0, 0.5), -1.0)
    assert prof[1:, :4].tolist() == [[4.0, 1.0, 1.0, 4.0], [8.0, 5.5, 5.5, 8.0]]
    P.add(prof, 1, 2, (1.0, 0.5), 1.0)
    assert prof[1:, :4].tolist() == [[4.0, 2.0, 1.0, 4.0], [8.0, 6.0, 5.5, 8.0]]
    # reserve to 20 (a breakpoint already: none inserted), then to 25 (inserted)
    assert P.reserve(prof, 4, 0, 3, 20.0, _arr(1.0, 1.0)) == 4
    assert prof[:, :4].tolist() == [[0.0, 10.0, 15.0, 20.0], [3.0, 1.0, 0.0, 4.0],
                                    [7.0, 5.0, 4.5, 8.0]]
    prof[:, 4] = [math.inf, 4.0, 8.0]
    assert P.reserve(prof, 5, 3, 4, 25.0, _arr(2.0, 3.0)) == 6
    assert prof[:, :6].tolist() == [[0.0, 10.0, 15.0, 20.0, 25.0, math.inf],
                                    [3.0, 1.0, 0.0, 2.0, 4.0, 4.0],
                                    [7.0, 5.0, 4.5, 5.0, 8.0, 8.0]]


def test_least_takes_each_rows_least_over_the_segments_from_its_top_row():
    prof = _arr(0, 1, 2, 3, 9, 5, 7, 8, 4, 6, 3, 1, 2, 0, 5, 9).reshape(4, 4)
    low = np.zeros(2)
    P.least(prof, 1, 4, low, 2)
    assert low.tolist() == [1.0, 0.0]
    P.least(prof, 0, 1, low, 1)
    assert low.tolist() == [9.0, 4.0]
    P.least(prof, 2, 3, low, 1)
    assert low.tolist() == [7.0, 3.0]


@pytest.mark.parametrize("free, todo, bb, ftol", [
    # the closed form's margin within its guard: the loop decides (984 pieces, not 983)
    ([2295999999999.9985, 35000000000000.004], 1500, 3500000000000.0, 0.0),
    # a BB node with exactly one piece of room takes it
    ([9.313225746154776e-10, 0.0], 64, 5.9604644775390565e-08, 0.0),
    ([4.0, 8.0], 3, 12.0, 0.0),
    ([3.0, 8.0, 4.0], 3, 12.0, 1.0),  # (3.0 is within the slack of a 4.0 piece)
    ([0.3, 0.0], 3, 0.3, 0.0),  # (0.3 - 0.1 - 0.1 < 0.1: two pieces, not three)
    ([5.0, 5.0], 3, 12.0, 0.0),  # one piece without room
    ([1.0], 2, 0.0, 0.0),  # no BB: no pieces
    ([1e15, 1.0], 1500, 1500.0, 0.0),
    # the closed form's count trusted only with its margin inside the guard: 4 + 4, not 5 + 5
    ([5.49999999945, 5.49999999945], 10, 11.0, 5.500000000000001e-10),
    # a piece so small that its guard is 0 B: a margin of 0 B is the loop's to decide
    ([-1e-12, 0.0], 4, 8e-320, 1e-12),  # more than 1000 pieces fit: the loop counts to todo
])
def test_first_fit_counts_the_pieces_of_planner_pieces(free, todo, bb, ftol):
    cnt = np.full(len(free), -7, dtype=np.int64)
    left = P.first_fit(_arr(*free), todo, bb, ftol, cnt)
    runs = first_fit_runs(free, todo, bb, ftol)
    if runs is None:
        assert left > 0
    else:
        assert left == 0
        expected = [0] * len(free)
        for b, k in runs:
            expected[b] = k
        assert cnt.tolist() == expected


def test_first_fit_leaves_the_pieces_without_room_and_counts_the_others():
    cnt = np.zeros(3, dtype=np.int64)
    assert P.first_fit(_arr(4.0, 5.9, 0.0), 5, 10.0, 0.0, cnt) == 1  # 2 + 2 of 5 pieces of 2
    assert cnt.tolist() == [2, 2, 0]
    assert P.first_fit(_arr(4.0, 6.0, 0.0), 5, 10.0, 0.0, cnt) == 0
    assert cnt.tolist() == [2, 3, 0]


def test_first_fit_agrees_with_the_loop_on_random_boundaries():
    rnd = random.Random(11)
    for _ in range(2000):
        todo = rnd.choice([1, 2, 3, 7, 64, 1500])
        piece = rnd.choice([0.1, 1 / 3, 0.7, 3.0, 40e9 / 7, 2.0 ** -30])
        ftol = rnd.choice([0.0, piece * 1e-12, piece * 0.5e-9])
        f = rnd.randint(0, 5) * piece - ftol
        f = max(f + rnd.choice([0, 1, -1, 2, -2]) * math.ulp(f), 0.0)
        free = [f, rnd.choice([f, 0.0, 10 * piece * todo])]
        cnt = np.zeros(2, dtype=np.int64)
        left = P.first_fit(_arr(*free), todo, piece * todo, ftol, cnt)
        runs = first_fit_runs(free, todo, piece * todo, ftol)
        got = None if left else tuple((b, int(k)) for b, k in enumerate(cnt) if k)
        assert got == (None if runs is None else tuple(r for r in runs if r[1])), free


def test_a_demand_sums_the_pieces_one_by_one():
    demand = np.zeros(5)
    P.demand_of(10.0, 1.0, np.array([1, 0, 9], dtype=np.int64), demand)
    tenth = 1.0 / 10.0
    nine = sum([tenth] * 9)  # 0.8999999999999999: not 9 * 0.1 (0.9)
    assert nine != 9 * tenth
    assert demand.tolist() == [10.0, 1.0, tenth, 0.0, nine]


def test_the_wait_term_is_the_wait_to_the_power_alpha_and_nothing_for_an_early_start():
    assert [P.term(3.0, a) for a in (1, 2, 3)] == [3.0, 9.0, 27.0]
    assert [P.term(-2.0, a) for a in (1, 2, 3)] == [0.0, 0.0, 0.0]
    assert P.term(0.5, 2) == 0.25


def test_a_profile_is_copied_up_to_its_sentinel():
    src = np.array([[0.0, 5.0, math.inf, 7.0], [1.0, 2.0, 3.0, 4.0]])
    dst = np.full((2, 4), -1.0)
    assert P.copy_profile(src, dst) == 3
    assert dst.tolist() == [[0.0, 5.0, math.inf, -1.0], [1.0, 2.0, 3.0, -1.0]]

"""The profile conservative-bb keeps in arrays once its compression runs compiled
(bbopt.planner.jit.arrays; Kopanski & Rzadca, Section 3.2) against the list profile it
mirrors: a reservation within the fit tolerance marks it low exactly when the list profile's
does, and its arrays grow before a reservation needs more room than they hold."""

from __future__ import annotations

import pytest

pytest.importorskip("numba")

from bbopt.planner import Profile  # noqa: E402
from bbopt.planner.jit.arrays import ArrayProfile  # noqa: E402


def _both() -> tuple[Profile, ArrayProfile]:
    listed = Profile(0.0, (8, 100.0))
    return listed, ArrayProfile(listed.copy())


def test_a_reservation_past_half_the_tolerance_marks_the_profile_low_as_the_list_does():
    """The pool's fit tolerance is 1e-7 of its 100 bytes: a reservation of 100 + 4e-8 leaves
    -4e-8 (above minus half of it: not low), one of 100 + 6e-8 leaves -6e-8 (low)."""
    listed, arrays = _both()
    for p in (listed, arrays):
        p.reserve(0.0, 10.0, (8, 100.0 + 4e-8))
    assert listed._low is arrays._low is False
    for p in (listed, arrays):
        p.reserve(10.0, 20.0, (8, 100.0 + 6e-8))
    assert listed._low is arrays._low is True
    assert (arrays.times, arrays.free) == (listed.times, listed.free)


def test_the_arrays_grow_before_a_reservation_needs_more_room():
    """60 reservations of two breakpoints each on a profile whose arrays first hold fewer (66
    for its one breakpoint): after each, the arrays hold every breakpoint, and the profile is
    the list profile's."""
    listed, arrays = _both()
    first = arrays.T.shape[0]
    for k in range(60):
        for p in (listed, arrays):
            p.reserve(2.0 * k + 1, 2.0 * k + 1.5, (1, 1.0))
        assert arrays.n <= arrays.T.shape[0] and arrays.n <= arrays.F.shape[0]
    assert arrays.n == len(listed.times) == 121 > first
    assert (arrays.times, arrays.free) == (listed.times, listed.free)


def test_room_for_more_breakpoints_than_the_arrays_hold_grows_them():
    """Asked room for 66 more breakpoints (more than the 66 its arrays first hold, one
    used), the profile grows its arrays to hold them all, keeping what they held."""
    listed, arrays = _both()
    arrays._room(66)
    assert arrays.T.shape[0] >= 67 and arrays.F.shape[0] >= 67
    assert (arrays.times, arrays.free) == (listed.times, listed.free)
    arrays._room(2)  # (room enough: kept as they are)
    assert arrays.T.shape[0] >= 67


@pytest.mark.parametrize(("held", "low"), [(3e-8, True), (0.0, False)])
def test_a_compression_marks_the_profile_low_as_the_list_profile_holding_its_moves(held, low):
    """All 8 nodes and 100 bytes held until 10, ``held`` bytes until 20, and a reservation of 4
    nodes and 100 + 4e-8 bytes kept at 20. The slot until 10 comes free: the compression moves
    the reservation to 0, where the pool is left at -7e-8 with 3e-8 held (below minus half the
    tolerance of 1e-7: low) or at -4e-8 without (not low), as on the list profile with the same
    releases and reservation."""
    from bbopt.core import Job

    kept = Job("k", 0, 5.0, nodes=4, bb=100.0 + 4e-8)
    listed, _ = _both()
    listed.reserve(0.0, 10.0, (8, 100.0))
    listed.reserve(0.0, 20.0, (0, held))
    listed.reserve(20.0, 25.0, (4, kept.bb))
    assert listed._low is False
    arrays = ArrayProfile(listed.copy())
    assert arrays.compress(0.0, 20.0, [(0.0, 10.0, 8, 100.0)], [(20.0, 0, kept)], True) == [
        (0, 0.0)]
    listed.release(0.0, 10.0, (8, 100.0))
    listed.release(20.0, 25.0, (4, kept.bb))
    listed.reserve(0.0, 5.0, (4, kept.bb))
    assert arrays._low is listed._low is low
    assert (arrays.times, arrays.free) == (listed.times, listed.free)


def test_a_compression_on_full_arrays_grows_them_first():
    """The same compression with 3e-8 bytes held until 10 only and a node held on [15, 20) and
    two on [25, 30) (so no row given back merges with its neighbours), once short reservations
    from t=100 on have filled the arrays exactly (76 breakpoints for the 76 they first hold):
    the arrays grow before the compression adds the reservation's new end, and hold every
    breakpoint after it."""
    from bbopt.core import Job

    kept = Job("k", 0, 5.0, nodes=4, bb=100.0 + 4e-8)
    listed, _ = _both()
    listed.reserve(0.0, 10.0, (8, 100.0))
    listed.reserve(0.0, 10.0, (0, 3e-8))
    listed.reserve(15.0, 20.0, (1, 1.0))
    listed.reserve(25.0, 30.0, (2, 1.0))
    listed.reserve(20.0, 25.0, (4, kept.bb))
    arrays = ArrayProfile(listed.copy())
    k = 0
    while arrays.n < arrays.T.shape[0]:
        for p in (listed, arrays):
            p.reserve(100.0 + 2 * k, 101.0 + 2 * k, (1, 1.0))
        k += 1
    assert arrays.n == arrays.T.shape[0] == 76 <= arrays.F.shape[0]
    assert arrays.compress(0.0, 20.0, [(0.0, 10.0, 8, 100.0)], [(20.0, 0, kept)], True) == [
        (0, 0.0)]
    assert arrays.n <= arrays.T.shape[0] and arrays.n <= arrays.F.shape[0]
    listed.release(0.0, 10.0, (8, 100.0))
    listed.release(20.0, 25.0, (4, kept.bb))
    listed.reserve(0.0, 5.0, (4, kept.bb))
    assert arrays.n == len(listed.times) == 77
    assert (arrays.times, arrays.free) == (listed.times, listed.free)


def test_slots_given_back_inside_rows_grow_arrays_four_short_of_full():
    """Four nodes held on [0, 1000), then short reservations from t=2000 on until the arrays
    (68 long) hold 64 breakpoints. Three slots of a node given back inside that row, on
    [10, 20), [30, 40) and [50, 60), add two breakpoints each: 70, more than the arrays hold,
    so they grow first (room for two breakpoints a slot, plus two); the profile is then the
    list profile's with the same releases."""
    listed = Profile(0.0, (8, 100.0))
    listed.reserve(0.0, 1000.0, (4, 0.0))
    arrays = ArrayProfile(listed.copy())
    k = 0
    while arrays.n < arrays.T.shape[0] - 4:
        for p in (listed, arrays):
            p.reserve(2000.0 + 2 * k, 2001.0 + 2 * k, (1, 1.0))
        k += 1
    assert (arrays.n, arrays.T.shape[0], k) == (64, 68, 31)
    frees = [(10.0, 20.0, 1, 0.0), (30.0, 40.0, 1, 0.0), (50.0, 60.0, 1, 0.0)]
    assert arrays.compress(0.0, 1000.0, frees, [], True) == []
    for start, end, nodes, bb in frees:
        listed.release(start, end, (nodes, bb))
    assert arrays.n == len(listed.times) == 70
    assert arrays.n <= arrays.T.shape[0] and arrays.n <= arrays.F.shape[0]
    assert (arrays.times, arrays.free) == (listed.times, listed.free)
    assert arrays.free[1:7] == [[5.0, 100.0], [4.0, 100.0]] * 3

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

"""Availability profiles: exact boundaries and agreement with a brute-force reference."""

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.planner import OverbookedError, Profile


def test_end_at_t_frees_for_start_at_t():
    p = Profile(0.0, (4, 10.0), releases=[(5.0, (4, 10.0))])
    assert p.earliest_fit(0.0, 1.0, (1, 0.0)) == 5.0
    assert p.fits(5.0, 3.0, (4, 10.0))
    assert not p.fits(4.999, 3.0, (4, 10.0))


def test_reserve_and_release_round_trip():
    p = Profile(0.0, (4, 10.0))
    p.reserve(2.0, 6.0, (3, 4.0))
    assert p.earliest_fit(0.0, 3.0, (2, 0.0)) == 6.0
    assert p.earliest_fit(0.0, 2.0, (2, 0.0)) == 0.0
    assert p.earliest_fit(0.0, 1.0, (1, 6.0)) == 0.0
    p.release(2.0, 6.0, (3, 4.0))
    assert p.earliest_fit(0.0, 3.0, (4, 10.0)) == 0.0


def test_overbooking_raises():
    p = Profile(0.0, (4, 10.0))
    p.reserve(0.0, 5.0, (3, 0.0))
    try:
        p.reserve(1.0, 2.0, (2, 0.0))
    except OverbookedError:
        pass
    else:
        raise AssertionError("expected OverbookedError")


def test_never_fits_is_inf():
    p = Profile(0.0, (4, 10.0))
    assert p.earliest_fit(0.0, 1.0, (5, 0.0)) == math.inf


def _brute_free(intervals, cap, t):
    used = [0.0, 0.0]
    for s, e, d in intervals:
        if s <= t < e:
            used[0] += d[0]
            used[1] += d[1]
    return cap[0] - used[0], cap[1] - used[1]


def _brute_earliest(intervals, cap, now, dur, demand):
    points = sorted({now} | {e for _, e, _ in intervals if e > now}
                    | {s for s, _, _ in intervals if s > now})
    for t in points:
        checks = [t] + [x for x in points if t < x < t + dur]
        if all(all(f >= d for f, d in zip(_brute_free(intervals, cap, x), demand, strict=True))
               for x in checks):
            return t
    return math.inf


intervals_st = st.lists(
    st.tuples(st.integers(0, 20), st.integers(1, 10), st.integers(1, 4), st.integers(0, 10)),
    max_size=8)


@settings(max_examples=200, deadline=None)
@given(intervals_st, st.integers(0, 10), st.integers(1, 10), st.integers(1, 4),
       st.integers(0, 10))
def test_earliest_fit_matches_brute_force(raw, now, dur, n, b):
    cap = (4, 10)
    p = Profile(0.0, cap)
    placed = []
    for s, length, rn, rb in raw:
        s = float(s)
        t = p.earliest_fit(s, float(length), (rn, rb))
        p.reserve(t, t + length, (rn, rb))
        placed.append((t, t + length, (rn, rb)))
    expected = _brute_earliest(placed, cap, float(now), float(dur), (n, b))
    assert p.earliest_fit(float(now), float(dur), (n, b)) == expected
    if math.isfinite(expected):
        assert p.fits(expected, float(dur), (n, b))

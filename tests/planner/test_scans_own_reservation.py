"""A reservation's own hold, given back, always admits it unless the profile was ever
overbooked by more than half the fit tolerance (``Profile._low``): the earlier-start scan of
conservative backfilling's compression then skips the segments of the hold
(:func:`bbopt.planner.scans.earlier_fit2`, ``own_fits``). Checked here: the flag bounds every
row, on random reservations that use up to all of the tolerance; the scan answers the same with
and without the skip, and as the general n-dimensional scan; an overbooked hold is still walked.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.planner import OverbookedError, Profile
from bbopt.planner.scans import earlier_fit2

CAP = (8, 100.0)

# (start, duration, nodes, BB in tenths, share of the fit tolerance to take beyond the free BB)
steps = st.lists(st.tuples(st.integers(0, 40), st.integers(1, 15), st.integers(1, 8),
                           st.integers(0, 1000), st.sampled_from([None, 0.0, 0.3, 0.5, 0.7, 1.0])),
                 min_size=1, max_size=25)


def _rows_above_half_tol(p: Profile) -> bool:
    return all(r >= -t / 2 for row in p.free for r, t in zip(row, p._tol, strict=True))


def _build(seq):
    """Reserve what fits of ``seq`` on a 2-D profile and on a 3-D one (general path); a step
    with a share asks for all the BB free over its slot plus that share of the tolerance."""
    p2, p3 = Profile(0.0, CAP), Profile(0.0, (*CAP, 1.0))
    held = []
    for a, d, n, tenths, share in seq:
        a, e = float(a), float(a + d)
        b = tenths / 10
        if share is not None:  # take the slot's least free BB, and part of the tolerance
            i = max(i for i, t in enumerate(p2.times) if t <= a)
            low = min(row[1] for t, row in zip(p2.times[i:], p2.free[i:], strict=True)
                      if t < e or t == p2.times[i])
            b = low + share * p2._tol[1]
            if b < 0:
                continue
        try:
            p2.reserve(a, e, (n, b))
        except OverbookedError:
            continue
        p3.reserve(a, e, (n, b, 0.0))
        held.append((a, e, n, b))
        assert p2._low or _rows_above_half_tol(p2)
    return p2, p3, held


@settings(max_examples=300, deadline=None)
@given(steps)
def test_the_flag_bounds_every_row(seq):
    p2, p3, _ = _build(seq)
    assert p2._low or _rows_above_half_tol(p2)
    assert p2.copy()._low == p2._low


@settings(max_examples=300, deadline=None)
@given(steps, st.data())
def test_skipping_the_own_hold_answers_the_same(seq, data):
    p2, p3, held = _build(seq)
    if not held:
        return
    a, e, n, b = held[data.draw(st.integers(0, len(held) - 1))]
    now = float(data.draw(st.integers(0, int(a))))
    got = p2.earlier_fit(now, e - a, (n, b), a)
    assert got == p3.earlier_fit(now, e - a, (n, b, 0.0), a)
    full = earlier_fit2(p2.times, p2.free, p2._tol, now, e - a, (n, b), a, a,
                        max(i for i, t in enumerate(p2.times) if t <= now), own_fits=False)
    assert got == full


def test_an_overbooked_hold_is_still_walked():
    """Rows below the tolerance inside a job's own hold (an overbooked start counted in the
    profile) stop a start that reaches them: no earlier start than the hold itself."""
    p = Profile(0.0, (4, 100.0), releases=[(8.0, (-6, 0.0)), (20.0, (6, 0.0))], used=(0, 0.0))
    assert p.free_at(9.0)[0] == -2 and p._low
    assert p.earlier_fit(0.0, 10.0, (1, 0.0), 8.0) == 8.0
    assert p.earlier_fit(0.0, 10.0, (1, 0.0), 8.0) == Profile.earlier_fit(
        Profile(0.0, (4, 100.0, 1.0), releases=[(8.0, (-6, 0.0, 0.0)), (20.0, (6, 0.0, 0.0))],
                used=(0, 0.0, 0.0)), 0.0, 10.0, (1, 0.0, 0.0), 8.0)
    # and a start that ends before the hold is found as before
    assert p.earlier_fit(0.0, 5.0, (1, 0.0), 8.0) == 0.0

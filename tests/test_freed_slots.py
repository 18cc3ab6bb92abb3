"""The freed-slot log behind conservative-bb's compression (bbopt.policies.freed_slots): giving
a slot back changes the profile exactly as Profile.release does, its maxima bound the free
capacity of every point of the slot, and the window it yields for a reservation that had no
earlier start before the frees holds that reservation's earliest start whenever there is one.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.policies.freed_slots import give_back, move, window
from bbopt.resources import Profile

CAPACITY = (8, 100.0)

intervals = st.tuples(st.integers(0, 40), st.integers(1, 15)).map(
    lambda x: (float(x[0]), float(x[0] + x[1])))
demands = st.tuples(st.integers(1, 8), st.integers(0, 100)).map(lambda x: (x[0], float(x[1])))


def _booked(slots, rows):
    """A profile with the reservations that fit, and the list of those reservations."""
    p = Profile(0.0, CAPACITY)
    held = []
    for (a, b), d in zip(slots, rows, strict=False):
        if p.fits(a, b - a, d):
            p.reserve(a, b, d)
            held.append((a, b, d))
    return p, held


@settings(max_examples=200, deadline=None)
@given(st.lists(intervals, min_size=1, max_size=12), st.lists(demands, min_size=12, max_size=12),
       st.data())
def test_give_back_is_release_and_bounds_the_slot(slots, rows, data):
    p, held = _booked(slots, rows)
    if not held:
        return
    a, b, d = held[data.draw(st.integers(0, len(held) - 1))]
    horizon = float(data.draw(st.integers(0, 60)))
    q = p.copy()
    q.release(a, b, d)
    slot = give_back(p, a, b, d, horizon)
    assert (p.times, p.free) == (q.times, q.free)
    for x in range(int(a) * 2, int(min(b, horizon)) * 2):  # every half second of the slot
        t = x / 2
        j = max(k for k, s in enumerate(slot.times) if s <= t)
        free = p.free_at(t)
        assert free[0] <= slot.max_nodes[j] and free[1] <= slot.max_bb[j]


@settings(max_examples=400, deadline=None)
@given(st.lists(intervals, min_size=1, max_size=12), st.lists(demands, min_size=12, max_size=12),
       demands, st.integers(1, 15), st.integers(0, 10), st.lists(st.integers(0, 11), max_size=3),
       st.integers(0, 5))
def test_window_holds_the_earliest_start(slots, rows, demand, w, now, gone, later):
    """A job reserved at its earliest start; then reservations are given back (early ends) and
    time moves on a little: the earlier start found in the window equals the one found by a
    scan of all of [now, old)."""
    p, held = _booked(slots, rows)
    w = float(w)
    old = p.earliest_fit(float(now), w, demand)
    if math.isinf(old):
        return
    p.reserve(old, old + w, demand)
    now = float(now + later)
    if now >= old:
        return
    p.advance(now)
    log = []
    for k in sorted(set(gone)):
        if k < len(held):
            a, b, d = held[k]
            if b > now:
                log.append(give_back(p, max(a, now), b, d, old))
    full = p.earlier_fit(now, w, demand, old)
    tol = p._tol
    lo, hi = window(log, now, old, w, demand[0] - tol[0], demand[1] - tol[1])
    got = p.earlier_fit(now, w, demand, old, lo, hi) if lo < hi else old
    assert got == full


@settings(max_examples=200, deadline=None)
@given(st.lists(intervals, min_size=1, max_size=12), st.lists(demands, min_size=12, max_size=12),
       st.data())
def test_move_is_release_then_reserve(slots, rows, data):
    """Moving a reservation earlier leaves the profile as giving it back and reserving it
    again does (whole numbers: no rounding), and the logged slot is the part of the old slot
    the new one does not cover."""
    p, held = _booked(slots, rows)
    if not held:
        return
    a, b, d = held[data.draw(st.integers(0, len(held) - 1))]
    q = p.copy()
    q.release(a, b, d)
    start = float(data.draw(st.integers(0, int(a))))
    if start >= a or not q.fits(start, b - a, d):
        return
    q.reserve(start, start + (b - a), d)
    slot = move(p, a, start, b - a, d)
    assert [p.free_at(x / 2) for x in range(120)] == [q.free_at(x / 2) for x in range(120)]
    assert (slot.start, slot.end) == (max(a, start + (b - a)), b)

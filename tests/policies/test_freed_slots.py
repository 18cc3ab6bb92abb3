"""The freed-slot log behind conservative-bb's compression (bbopt.policies.freed_slots): giving
a slot back changes the profile exactly as Profile.release does, it logs the free capacity of
every point of the slot (and its maxima), and the end of the window it yields for a reservation
that had no earlier start before the frees, scanned from any bound on its start, holds that
reservation's earliest start whenever there is one.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.planner import Profile
from bbopt.policies.freed_slots import Freed, _take, freed, give_back, log_slot, move, reach

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
    assert (slot.last, slot.top_nodes, slot.top_bb) == (
        slot.times[-1], max(slot.nodes), max(slot.bb))
    cut = min(b, horizon)
    if cut <= a:
        assert slot.top_nodes == slot.top_bb == -math.inf  # nobody can use it
    for x in range(int(a) * 2, int(cut) * 2):  # every half second of the slot
        t = x / 2
        j = max(k for k, s in enumerate(slot.times) if s <= t)
        assert p.free_at(t) == [slot.nodes[j], slot.bb[j]]
    if p.fits(a, b - a, (1, 0.0)):
        p.reserve(a, b, (1, 0.0))
    for x in range(int(a) * 2, int(cut) * 2):  # later reservations only take room away
        t = x / 2
        j = max(k for k, s in enumerate(slot.times) if s <= t)
        free = p.free_at(t)
        assert free[0] <= slot.nodes[j] and free[1] <= slot.bb[j]


@settings(max_examples=400, deadline=None)
@given(st.lists(intervals, min_size=1, max_size=12), st.lists(demands, min_size=12, max_size=12),
       demands, st.integers(1, 15), st.integers(0, 10), st.lists(st.integers(0, 11), max_size=3),
       st.integers(0, 5), st.data())
def test_window_holds_the_earliest_start(slots, rows, demand, w, now, gone, later, data):
    """A job reserved at its earliest start; then reservations are given back (early ends) and
    time moves on a little: the earlier start found by a scan from any bound on it (no start
    before the bound fits) up to the end :func:`reach` gives equals the one found by a scan of
    all of [now, old)."""
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
    log: list[Freed] = []
    for k in sorted(set(gone)):
        if k < len(held):
            a, b, d = held[k]
            if b > now:
                log_slot(log, give_back(p, max(a, now), b, d, old))
    assert [s.end for s in log] == sorted(s.end for s in log)
    full = p.earlier_fit(now, w, demand, old)
    floor = float(data.draw(st.integers(int(now), int(full))))  # (whole times: any bound)
    tol = p._tol
    hi = reach(log, floor, old, demand[0] - tol[0], demand[1] - tol[1])
    got = p.earlier_fit(floor, w, demand, old, floor, hi) if floor < hi else old
    assert got == full


def _slot(start: int, cuts: list[int], rows: list[tuple[int, int]]) -> Freed:
    """A logged slot from ``start`` with segments after each cut and their free room."""
    times = [float(start)] + [float(start + c) for c in sorted(set(cuts))]
    rows = (rows * len(times))[:len(times)]
    return freed(float(start), times[-1] + 3.0, times, [float(n) for n, _ in rows],
                 [float(b) for _, b in rows])


slots_logged = st.builds(_slot, st.integers(0, 20), st.lists(st.integers(1, 12), max_size=3),
                         st.lists(st.tuples(st.integers(0, 8), st.integers(0, 100)), min_size=1,
                                  max_size=4))


def _reach(log: list[Freed], old: float, nodes: int, bb: int) -> float | None:
    """The end of the window by its definition: the latest end, cut at ``old``, of the slots
    starting before ``old`` whose free capacity before ``old`` admits the demand somewhere in
    each dimension; None if none does."""
    admitted = [s for s in log if s.start < old
                and any(n >= nodes for t, n in zip(s.times, s.nodes, strict=True) if t < old)
                and any(b >= bb for t, b in zip(s.times, s.bb, strict=True) if t < old)]
    if not admitted:
        return None
    return max(min(s.end, old) for s in admitted)


@settings(max_examples=max(400, settings.default.max_examples), deadline=None)  # slow: 3000
@given(st.lists(slots_logged, max_size=8), st.integers(0, 10), st.integers(0, 20),
       st.integers(1, 25), st.integers(0, 8), st.integers(0, 100))
def test_reach_is_the_latest_admitting_end(log, now, rise, old, nodes, bb):
    """:func:`reach` is the latest end of the admitting slots whenever it lies after the bound
    on the start (else it answers no later than the bound), though its walk over the log,
    latest end first, stops at the first slot that admits the demand or ends by the bound."""
    old = float(now + old)
    ordered: list[Freed] = []
    for slot in log:
        log_slot(ordered, slot)
    for floor in (float(now), float(now + rise)):
        got = reach(ordered, floor, old, nodes, bb)
        want = _reach(log, old, nodes, bb)
        if want is not None and want > floor:
            assert got == want
        else:
            assert got <= floor


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
    assert p._low == q._low


@settings(max_examples=300, deadline=None)
@given(st.lists(intervals, min_size=1, max_size=12), st.lists(demands, min_size=12, max_size=12),
       intervals, demands, st.sampled_from([0.0, 0.3, 0.6, 0.9]))
def test_take_is_reserve(slots, rows, span, demand, over):
    """A move takes its new slot as Profile.reserve does (the same rows, breakpoints and record
    of a row left below minus half the fit tolerance), for demands that fit by part of the
    tolerance (``over``: how much of it the BB demand exceeds the least free BB)."""
    p, _ = _booked(slots, rows)
    a, b = span
    free = [p.free_at(t) for t in p.times if a <= t < b] + [p.free_at(a)]
    need = (demand[0], min(f[1] for f in free) + over * p._tol[1])
    if not p.fits(a, b - a, need):
        return
    q = p.copy()
    q.reserve(a, b, need)
    _take(p, a, b, need)
    assert (p.times, p.free, p._low) == (q.times, q.free, q._low)


# Hand-computed slots: the log's boundaries, each at, just inside and just past its rule.

def _two_reservations(first: tuple[float, float], second: tuple[float, float]) -> Profile:
    """8 nodes and 100 B, a reservation of 2 nodes and 10 B on ``first``, one of 1 node and
    5 B on ``second``."""
    p = Profile(0.0, CAPACITY)
    p.reserve(*first, (2, 10.0))
    p.reserve(*second, (1, 5.0))
    return p


def test_a_slot_given_back_wholly_past_the_horizon_keeps_its_span_and_is_not_logged():
    p = Profile(0.0, CAPACITY)
    p.reserve(10.0, 20.0, (2, 10.0))
    slot = give_back(p, 10.0, 20.0, (2, 10.0), horizon=10.0)
    assert (slot.start, slot.end, slot.times) == (10.0, 20.0, [10.0])
    assert (slot.top_nodes, slot.top_bb) == (-math.inf, -math.inf)
    assert p.free == [[8, 100.0]]  # (released all the same)
    log: list[Freed] = []
    log_slot(log, slot)
    assert log == []


@pytest.mark.parametrize("second, start, horizon, logged, whole", [
    # disjoint: the old slot [10, 20) given back, logged up to 15
    ((15.0, 30.0), 0.0, 15.0, (10.0, [10.0]), [10.0, 15.0]),
    # overlapping: [15, 20) left, logged up to 17
    ((17.0, 30.0), 5.0, 17.0, (15.0, [15.0]), [15.0, 17.0]),
])
def test_a_move_logs_the_part_of_the_old_slot_it_leaves_only_up_to_the_horizon(
        second, start, horizon, logged, whole):
    """A reservation of 2 nodes and 10 B for 10 s moved from 10 to ``start``, beside one of 1
    node and 5 B on ``second``."""
    slot = move(_two_reservations((10.0, 20.0), second), 10.0, start, 10.0, (2, 10.0),
                horizon=horizon)
    assert (slot.start, slot.end, slot.times, slot.nodes, slot.bb) == (
        logged[0], 20.0, logged[1], (8,), (100.0,))
    full = move(_two_reservations((10.0, 20.0), second), 10.0, start, 10.0, (2, 10.0))
    assert (full.times, full.nodes, full.bb) == (whole, (8, 7), (100.0, 95.0))


@pytest.mark.parametrize("demand, low", [
    ((8.25, 100.0), False),   # nodes left at minus half their slack exactly
    ((8.2, 100.0), False),    # a fifth of a node short: within half the slack
    ((8.5, 100.0), True),     # past half the slack (within twice it)
    ((8.0, 100.125), False),  # BB left at minus half its slack exactly
    ((8.0, 100.1), False),    # within half the slack (past a third of it)
    ((8.0, 100.25), True),    # past half the slack
])
def test_take_marks_a_row_below_minus_half_the_slack(demand, low):
    """``_take`` records a row left below minus half the fit slack of its dimension, as
    ``Profile.reserve`` does (slacks of 0.5 node and 0.25 B here, so that the halves are
    exact: -0.25 node, -0.125 B)."""
    p = Profile(0.0, CAPACITY)
    p._tol = [0.5, 0.25]
    _take(p, 0.0, 10.0, demand)
    assert p._low is low
    assert p.free[0] == [8 - demand[0], 100.0 - demand[1]]


def test_reach_counts_only_the_part_of_a_slot_before_the_old_start():
    """A slot whose last segment starts at the old start exactly: only the segments before it
    count, and the one before lacks nodes, so nothing is worth scanning."""
    slot = freed(5.0, 20.0, [5.0, 10.0], (0, 8), (0.0, 100.0))
    assert reach([slot], 0.0, 10.0, 4, 10.0) == 0.0
    assert reach([slot], 0.0, 10.5, 4, 10.0) == 10.5  # (the segment at 10 is before 10.5)


@pytest.mark.parametrize("need_bb, stop", [(49.5, 20.0), (50.0, 20.0), (50.5, 0.0)])
def test_reach_admits_a_slot_whose_free_bb_before_the_old_start_is_the_need(need_bb, stop):
    slot = freed(0.0, 30.0, [0.0, 10.0, 20.0], (8, 8, 8), (50.0, 50.0, 100.0))
    assert reach([slot], 0.0, 20.0, 4, need_bb) == stop

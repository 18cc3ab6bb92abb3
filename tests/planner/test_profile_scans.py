"""The two-dimensional scans of the availability profile (nodes and BB: conservative-bb's
compression and every earliest start) against the general n-dimensional scan and a brute force,
on random sequences of reservations, releases and advances of the origin: the same answers.

The scans (:mod:`bbopt.planner.scans`) bound each stretch a candidate start must hold by
bisection (before the job's own hold, in it, after it) and walk it by ``enumerate`` over a
slice; the general path tests every segment against the same rule one by one, and the brute
force tries every candidate start.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.planner import Profile, earlier_fit2, earliest_fit2

CAP = (8, 100.0)

# (start, duration, nodes, BB): BB in tenths, so sums round like real byte counts do
ops = st.lists(st.tuples(st.integers(0, 40), st.integers(1, 15), st.integers(1, 8),
                         st.integers(0, 1000).map(lambda x: x / 10)), min_size=1, max_size=25)
demands = st.tuples(st.integers(1, 8), st.integers(0, 1000).map(lambda x: x / 10))


def _build(seq, drops, advance):
    """Reserve what fits of ``seq``, release the reservations picked by ``drops``, advance the
    origin: the same steps on a 2-D profile and on a 3-D one whose third dimension is never
    asked for (so it takes the general path)."""
    p2, p3 = Profile(0.0, CAP), Profile(0.0, (*CAP, 1.0))
    held = []
    for a, d, n, b in seq:
        if p2.fits(float(a), float(d), (n, b)):
            p2.reserve(float(a), float(a + d), (n, b))
            p3.reserve(float(a), float(a + d), (n, b, 0.0))
            held.append((float(a), float(a + d), n, b))
    for k in drops:
        if k < len(held):
            a, e, n, b = held.pop(k)
            p2.release(a, e, (n, b))
            p3.release(a, e, (n, b, 0.0))
    p2.advance(float(advance))
    p3.advance(float(advance))
    return p2, p3, held


def _brute_earliest(p: Profile, now: float, dur: float, demand) -> float:
    """Every candidate start (``now`` and the breakpoints after it), each tested at every
    breakpoint its run covers."""
    cands = sorted({now, *(t for t in p.times if t > now)})
    for t in cands:
        points = [t, *(x for x in p.times if t < x < t + dur)]
        if all(p.free_at(x)[0] + p._tol[0] >= demand[0]
               and p.free_at(x)[1] + p._tol[1] >= demand[1] for x in points):
            return t
    return math.inf


@settings(max_examples=300, deadline=None)
@given(ops, st.lists(st.integers(0, 24), max_size=6), st.integers(0, 20), demands,
       st.integers(0, 30), st.integers(1, 20))
def test_earliest_fit_two_dimensions(seq, drops, advance, demand, now, dur):
    p2, p3, _ = _build(seq, drops, advance)
    now = float(max(now, advance))
    got = p2.earliest_fit(now, float(dur), demand)
    assert got == p3.earliest_fit(now, float(dur), (*demand, 0.0))
    assert got == _brute_earliest(p2, now, float(dur), demand)


@settings(max_examples=400, deadline=None)
@given(ops, st.lists(st.integers(0, 24), max_size=6), st.integers(0, 20), st.data())
def test_earlier_fit_two_dimensions(seq, drops, advance, data):
    """A held reservation looks for an earlier start, over all of ``[now, held_from)`` and
    within a window ``[lo, hi)``: the 2-D scan answers as the general one, and without a window
    as giving the hold back and asking for the earliest start (capped at its own start)."""
    p2, p3, held = _build(seq, drops, advance)
    held = [h for h in held if h[0] >= advance]
    if not held:
        return
    a, e, n, b = held[data.draw(st.integers(0, len(held) - 1))]
    now = float(data.draw(st.integers(advance, int(a))))
    lo = float(data.draw(st.integers(0, 45)))
    hi = float(data.draw(st.integers(0, 45)))
    got = p2.earlier_fit(now, e - a, (n, b), a)
    assert got == p3.earlier_fit(now, e - a, (n, b, 0.0), a)
    q = p2.copy()
    q.release(a, e, (n, b))
    assert got == min(_brute_earliest(q, now, e - a, (n, b)), a)
    if lo < hi:
        assert (p2.earlier_fit(now, e - a, (n, b), a, lo, hi)
                == p3.earlier_fit(now, e - a, (n, b, 0.0), a, lo, hi))


@settings(max_examples=400, deadline=None)
@given(ops, st.lists(st.integers(0, 24), max_size=6), st.integers(0, 20), st.data())
def test_earlier_fit_in_a_short_window(seq, drops, advance, data):
    """Within a window shorter than the walltime every candidate start holds the stretch from
    the window's end to a walltime after its start, which the 2-D scan tests first: it
    answers as the general one, and as the brute force over that window."""
    p2, p3, held = _build(seq, drops, advance)
    held = [h for h in held if h[0] > advance]
    if not held:
        return
    a, e, n, b = held[data.draw(st.integers(0, len(held) - 1))]
    lo = float(data.draw(st.integers(advance, int(a) - 1)))
    hi = lo + data.draw(st.integers(1, max(1, int(e - a) - 1)))
    got = p2.earlier_fit(lo, e - a, (n, b), a, lo, hi)
    assert got == p3.earlier_fit(lo, e - a, (n, b, 0.0), a, lo, hi)
    q = p2.copy()
    q.release(a, e, (n, b))
    brute = _brute_earliest(q, lo, e - a, (n, b))
    assert got == (brute if brute < min(hi, a) else a)


def test_earlier_fit_stretch_ends_with_the_walltime():
    """A job fitting exactly at the window's start, with the segment right after its walltime
    full: the stretch every candidate holds ends there, so the start is found."""
    p = Profile(0.0, (4, 100.0))
    p.reserve(0.0, 2.0, (4, 0.0))  # full before 2
    p.reserve(7.0, 9.0, (4, 0.0))  # full on [7, 9): a 5 s job fits on [2, 7)
    p.reserve(20.0, 25.0, (1, 0.0))  # its own hold
    assert p.earlier_fit(2.0, 5.0, (1, 0.0), 20.0, 2.0, 3.0) == 2.0


def test_earliest_fit2_on_a_hand_profile():
    """Free (nodes, BB) of [1, 5] on [0, 10), [4, 10] on [10, 20), [2, 10] from 20 on; the
    needs are the demand less the fit tolerance."""
    times = [0.0, 10.0, 20.0]
    free = [[1.0, 5.0], [4.0, 10.0], [2.0, 10.0]]
    # two nodes: not before 10; a 5 s run ends before the next breakpoint, a 15 s one crosses it
    assert earliest_fit2(times, free, 0.0, 5.0, 2.0, 0.0, 0) == 10.0
    assert earliest_fit2(times, free, 0.0, 15.0, 2.0, 0.0, 0) == 10.0
    # three nodes: [10, 20) has them, but a run longer than 10 s reaches the 2 of [20, inf)
    assert earliest_fit2(times, free, 0.0, 10.0, 3.0, 0.0, 0) == 10.0
    assert earliest_fit2(times, free, 0.0, 10.5, 3.0, 0.0, 0) == math.inf
    # from inside a segment the start is now, not the segment's breakpoint
    assert earliest_fit2(times, free, 12.0, 5.0, 2.0, 0.0, 1) == 12.0
    # BB alone decides: 6 B is not free before 10; exactly the free amount fits
    assert earliest_fit2(times, free, 0.0, 1.0, 1.0, 6.0, 0) == 10.0
    assert earliest_fit2(times, free, 0.0, 1.0, 1.0, 5.0, 0) == 0.0
    assert earliest_fit2(times, free, 0.0, 1.0, 1.0, 10.0 + 1e-9, 0) == math.inf
    # the last row extends to infinity
    assert earliest_fit2(times, free, 30.0, 1e9, 2.0, 10.0, 2) == 30.0
    # exactly the free amount fits, in the first segment a run holds and in the later ones
    assert earliest_fit2(times, free, 0.0, 5.0, 4.0, 0.0, 0) == 10.0
    assert earliest_fit2(times, free, 0.0, 5.0, 4.0 + 1e-9, 0.0, 0) == math.inf
    assert earliest_fit2(times, free, 10.0, 15.0, 2.0, 10.0, 1) == 10.0
    assert earliest_fit2(times, free, 10.0, 15.0, 2.0 + 1e-9, 10.0, 1) == math.inf
    assert earliest_fit2(times, free, 10.0, 15.0, 2.0, 10.0 + 1e-9, 1) == math.inf


def test_a_full_segment_moves_the_candidate_past_it():
    """A run from 0 that meets a full segment at [10, 20) starts again after it, at 20, not
    at 10 (the full segment) nor at the next fitting breakpoint after 20."""
    times = [0.0, 10.0, 20.0, 30.0]
    free = [[4.0, 0.0], [0.0, 0.0], [4.0, 0.0], [4.0, 0.0]]
    assert earliest_fit2(times, free, 0.0, 15.0, 4.0, 0.0, 0) == 20.0
    assert earliest_fit2(times, free, 0.0, 10.0, 4.0, 0.0, 0) == 0.0  # ends at the full one
    p = Profile(0.0, (4, 1.0))
    p.reserve(10.0, 20.0, (4, 0.0))
    assert p.earliest_fit(0.0, 15.0, (4, 0.0)) == 20.0
    assert p.earlier_fit(0.0, 15.0, (4, 0.0), 30.0) == 20.0
    assert p.earlier_fit(0.0, 10.0, (4, 0.0), 30.0) == 0.0


def test_earlier_fit2_at_exactly_the_free_amount_in_every_stretch():
    """A job of ``duration`` holding 2 nodes from 30 on (its own rows are net of them), with no
    fit tolerance: every stretch a candidate start from 0 must hold (before its own hold, in it,
    and the stretch every start in a short window holds) admits exactly 2 free nodes, and
    refuses a hair less. (A candidate starts before the hold, so its run ends before the hold
    does: the stretch after the hold is never reached.)"""
    times = [0.0, 10.0, 20.0, 30.0, 40.0]
    tol, demand = (0.0, 0.0), (2.0, 0.0)

    def scan(free, duration, limit=30.0, own_fits=False):
        return earlier_fit2(times, free, tol, 0.0, duration, demand, 30.0, limit, 0, own_fits)

    exact = [[2.0, 0.0], [2.0, 0.0], [2.0, 0.0], [0.0, 0.0], [2.0, 0.0]]
    for duration in (5.0, 15.0, 35.0):
        assert scan(exact, duration) == 0.0
        assert scan(exact, duration, own_fits=True) == 0.0
    assert scan(exact, 15.0, limit=5.0) == 0.0  # [5, 15) is held by every start before 5
    short = 2.0 - 1e-9
    # a row a hair short: the first start after it (20 reaches its own hold, which admits
    # it), else the hold itself
    for row, duration, later in ((0, 5.0, 10.0), (1, 15.0, 20.0), (2, 35.0, 30.0)):
        free = [list(r) for r in exact]
        free[row][0] = short
        assert scan(free, duration) == later, (row, duration)
    free = [list(r) for r in exact]
    free[3][0] = -1e-9  # its own hold, given back, is a hair short
    assert scan(free, 35.0) == 30.0
    assert scan(free, 35.0, own_fits=True) == 0.0  # (the caller vouched for the hold)
    # by default the hold is walked
    assert earlier_fit2(times, free, tol, 0.0, 35.0, demand, 30.0, 30.0, 0) == 30.0
    free = [list(r) for r in exact]
    free[1][0] = short
    assert scan(free, 15.0, limit=5.0) == 30.0  # the common stretch [5, 15) lacks room


def test_earlier_fit2_takes_each_dimension_s_own_tolerance():
    """Nodes with a tolerance of 4e-9 (4 nodes), BB with 1000 B (1 TB): a start short of a
    node is refused whatever the BB's tolerance; one 1000 B short of BB fits, 1001 B not."""
    times, tol = [0.0, 10.0], (4e-9, 1000.0)
    free = [[1.0, 5e11], [4.0, 1e12]]
    # 2 nodes on [0, 10): one free; its own hold from 10
    assert earlier_fit2(times, free, tol, 0.0, 5.0, (2.0, 0.0), 10.0, 10.0, 0) == 10.0
    assert earlier_fit2(times, free, tol, 0.0, 5.0, (1.0, 5e11 + 1000.0), 10.0, 10.0, 0) == 0.0
    assert earlier_fit2(times, free, tol, 0.0, 5.0, (1.0, 5e11 + 1001.0), 10.0, 10.0, 0) == 10.0


def test_the_stretch_every_start_holds_ends_a_walltime_after_now():
    """Breakpoints a tenth of a second apart, a window [0, 0.2) and a 0.25 s walltime: every
    start holds [0.2, 0.25) and nothing later, so a full segment at [0.5, 0.6) stops none."""
    times = [k / 10 for k in range(11)]
    free = [[4.0, 0.0] for _ in times]
    free[5] = [0.0, 0.0]
    tol = (0.0, 0.0)
    assert earlier_fit2(times, free, tol, 0.0, 0.25, (2.0, 0.0), 3.0, 0.2, 0) == 0.0
    free[2] = [1.0, 0.0]  # [0.2, 0.3) short: every start in the window holds it
    assert earlier_fit2(times, free, tol, 0.0, 0.25, (2.0, 0.0), 3.0, 0.2, 0) == 3.0


def test_only_the_rows_a_run_holds_are_read_in_its_own_hold():
    """An overbooked profile (rows below zero, e.g. a start the resource manager made) past
    the end of a candidate's run, inside the job's own hold [30, 45) and after it, does not
    stop the candidate: only [20, 35) is held by a start at 20."""
    times = [0.0, 10.0, 20.0, 30.0, 35.0, 45.0, 50.0]
    free = [[0.0, 0.0], [0.0, 0.0], [2.0, 0.0], [0.0, 0.0], [-1.0, 0.0], [-1.0, 0.0],
            [2.0, 0.0]]
    assert earlier_fit2(times, free, (0.0, 0.0), 0.0, 15.0, (2.0, 0.0), 30.0, 30.0, 0) == 20.0
    free[3] = [-1e-9, 0.0]  # the part of its own hold the run holds, a hair short
    assert earlier_fit2(times, free, (0.0, 0.0), 0.0, 15.0, (2.0, 0.0), 30.0, 30.0, 0) == 30.0

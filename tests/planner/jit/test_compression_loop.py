"""The compiled compression loop (bbopt.planner.jit.compression: ``compress``, ``earlier_fit``,
``_reach``) on hand-made profiles, each against the Python it translates: the loop of
``ConservativeBackfilling.decide`` on a list profile (copied below as :func:`_python`, with
``freed_slots`` and ``scans.earlier_fit2``), and the hand-computed starts and rows. Each case
reaches one branch of the loop: a log with no room, the needs filter at equality, a
reservation filtered out before one that moves, the stuck floor, the own-fits shortcut on a low
profile, slots logged from several frees, a reach that ends at its floor. The kernels are
run as compiled (numba on) and, under ``NUMBA_DISABLE_JIT=1``, as Python.
"""

from __future__ import annotations

import math
from bisect import bisect_right, insort

import pytest

pytest.importorskip("numba")

import numpy as np  # noqa: E402

from bbopt.planner import Profile  # noqa: E402
from bbopt.planner.jit.compression import compress, earlier_fit  # noqa: E402
from bbopt.planner.scans import earlier_fit2  # noqa: E402
from bbopt.policies import freed_slots  # noqa: E402

STUCK = 8  # (conservative._STUCK)


def _python(times, free, tol, low, now, horizon, frees, kept, use_log):
    """The Python compression: ``frees`` given back and logged as ``_reuse`` does, then the
    loop of ``ConservativeBackfilling.decide`` over ``kept`` ((old, nodes, BB, walltime), by
    start). ``(starts, indices moved, (times, rows), low)``."""
    profile = Profile(0.0, (8, 100.0))
    profile.times[:] = [float(t) for t in times]
    profile.free[:] = [[float(x) for x in row] for row in free]
    profile._tol = list(tol)
    profile._low = low
    log = []
    for a, b, x0, x1 in frees:
        freed_slots.log_slot(log, freed_slots.give_back(profile, a, b, (x0, x1), horizon))
    starts = [float(old) for old, *_ in kept]
    moved = []
    if use_log and not log:
        return starts, moved, _listed(profile), profile._low
    tol0, tol1 = tol
    max0 = max((s.top_nodes for s in log), default=-math.inf)
    max1 = max((s.top_bb for s in log), default=-math.inf)
    stuck = []
    for r, (old, nodes, bb, walltime) in enumerate(kept):
        need0, need1 = nodes - tol0, bb - tol1
        if use_log and (need0 > max0 or need1 > max1):
            continue
        floor = now
        for sold, s0, s1, sw in reversed(stuck):
            if need0 >= s0 and need1 >= s1 and walltime >= sw:
                floor = sold
                break
        hi = old if not use_log or floor >= old else freed_slots.reach(log, floor, old, need0,
                                                                       need1)
        if floor < hi:
            start = earlier_fit2(profile.times, profile.free, tol, floor, walltime, (nodes, bb),
                                 old, hi, bisect_right(profile.times, floor) - 1,
                                 not profile._low)
            if start < old:
                slot = freed_slots.move(profile, old, start, walltime, (nodes, bb), horizon)
                if start > now:
                    insort(stuck, (start, need0, need1, walltime))
                    del stuck[:-STUCK]
                if use_log:
                    freed_slots.log_slot(log, slot)
                    max0, max1 = max(max0, slot.top_nodes), max(max1, slot.top_bb)
                starts[r] = start
                moved.append(r)
                continue
            insort(stuck, (old, need0, need1, walltime))
            del stuck[:-STUCK]
    return starts, moved, _listed(profile), profile._low


def _listed(profile):
    return [float(t) for t in profile.times], [tuple(float(x) for x in r) for r in profile.free]


def _compiled(times, free, tol, low, now, horizon, frees, kept, use_log):
    """``compress`` on arrays with exactly the room it needs; the same four as :func:`_python`
    (``starts`` preset to NaN: every entry must be written)."""
    n = len(times)
    size = n + 2 * len(frees) + 4 * len(kept)
    T, F = np.full(size, np.nan), np.full((size, 2), np.nan)
    T[:n], F[:n] = times, free
    starts = np.full(len(kept), np.nan)
    moved = np.full(len(kept), -1, dtype=np.int64)
    n, low, count = compress(T, F, n, low, *tol, now, horizon,
                             np.array(frees, dtype=np.float64).reshape(-1, 4),
                             np.array(kept, dtype=np.float64).reshape(-1, 4), use_log, starts,
                             moved)
    rows = (T[:n].tolist(), [tuple(r) for r in F[:n].tolist()])
    return starts.tolist(), moved[:count].tolist(), rows, bool(low)


def _both(*case):
    """The compiled compression's outcome, checked equal to the Python one."""
    got = _compiled(*case)
    assert got == _python(*case)
    return got


def test_a_log_with_no_room_compresses_nothing_and_reports_no_move():
    """A free past the horizon is given back but logged with no room: with the log in use
    nothing is scanned (no reservation moved, count 0), though the reservation at 10 would
    move to 0 when every earlier start is scanned."""
    times, free = (0.0, 10.0, 20.0), ((4.0, 100.0), (0.0, 100.0), (4.0, 100.0))
    case = (times, free, (0.0, 0.0), False, 0.0, 20.0, [(30.0, 40.0, 1.0, 0.0)],
            [(10.0, 4.0, 0.0, 10.0)])
    given_back = ([0.0, 10.0, 20.0, 30.0, 40.0],
                  [(4, 100), (0, 100), (4, 100), (5, 100), (4, 100)])
    assert _both(*case, True) == ([10.0], [], given_back, False)
    assert _both(*case, False) == ([0.0], [0], ([0.0, 10.0, 30.0, 40.0],
                                                [(0, 100), (4, 100), (5, 100), (4, 100)]),
                                   False)


@pytest.mark.parametrize(("row", "moves"), [
    ((2.5, 35.0), True),  # the slot's maxima equal the needs (3.5, 35): scanned, moves
    ((math.nextafter(2.5, 0.0), 35.0), False),  # one ulp short in nodes: filtered out
    ((2.5, math.nextafter(35.0, 0.0)), False)])  # in BB
def test_the_needs_filter_lets_a_reservation_through_at_the_slots_maxima(row, moves):
    """1 node freed on [0, 10) (and no BB); the reservation of (4, 40) at 10 needs (3.5, 35)
    within the tolerance (0.5, 5): it moves to 0 when the freed row reaches that exactly."""
    times, free = (0.0, 10.0, 20.0), (row, (0.0, 60.0), (4.0, 100.0))
    case = (times, free, (0.5, 5.0), False, 0.0, math.inf, [(0.0, 10.0, 1.0, 0.0)],
            [(10.0, 4.0, 40.0, 10.0)], True)
    starts, moved, rows, low = _both(*case)
    if moves:
        assert (starts, moved, rows, low) == ([0.0], [0], ([0.0, 10.0],
                                                            [(-0.5, -5.0), (4.0, 100.0)]), True)
    else:
        assert (starts, moved, low) == ([10.0], [], False)
        assert rows == ([0.0, 10.0, 20.0], [(row[0] + 1, row[1]), (0, 60), (4, 100)])


def test_a_reservation_filtered_out_does_not_stop_the_next_from_moving():
    """2 nodes freed on [0, 10): the reservation of 4 nodes at 10 needs more than any slot
    holds (skipped), the one of 2 nodes at 20 after it moves to 0."""
    times = (0.0, 10.0, 20.0, 30.0)
    free = ((0.0, 100.0), (0.0, 100.0), (2.0, 100.0), (4.0, 100.0))
    kept = [(10.0, 4.0, 0.0, 10.0), (20.0, 2.0, 0.0, 10.0)]
    case = (times, free, (0.0, 0.0), False, 0.0, math.inf, [(0.0, 10.0, 2.0, 0.0)], kept, True)
    assert _both(*case) == ([10.0, 0.0], [1], ([0.0, 20.0], [(0, 100), (4, 100)]), False)


def test_the_stuck_floor_bounds_only_a_reservation_needing_as_many_nodes_and_as_much_bb():
    """Every earlier start scanned. The reservation of 4 nodes and no BB at 10 cannot move (1
    node free before it) and is remembered as stuck; the one of 1 node and 10 BB at 20 needs
    fewer nodes (though more nodes than the stuck one's BB), so 10 is no floor for it: it
    moves to 0."""
    times = (0.0, 10.0, 20.0, 30.0)
    free = ((1.0, 100.0), (0.0, 100.0), (3.0, 90.0), (4.0, 100.0))
    kept = [(10.0, 4.0, 0.0, 10.0), (20.0, 1.0, 10.0, 10.0)]
    case = (times, free, (0.0, 0.0), False, 0.0, math.inf, [], kept, False)
    assert _both(*case) == ([10.0, 0.0], [1], ([0.0, 10.0, 20.0],
                                                [(0, 90), (0, 100), (4, 100)]), False)


def test_a_stuck_reservation_needing_no_more_is_where_the_next_scan_starts():
    """8 nodes; none free before 1. The reservation of 4 nodes at 1 for 1 cannot move: stuck
    at 1. The one of 4 nodes at 3 for 1 needs as much, so its scan starts at 1 (its floor, a
    time, not the stuck one's need of 4 nodes, which would lie past its start): it moves to
    1, beside the stuck one."""
    times = (0.0, 1.0, 2.0, 3.0, 4.0)
    free = ((0.0, 100.0), (4.0, 100.0), (8.0, 100.0), (4.0, 100.0), (8.0, 100.0))
    kept = [(1.0, 4.0, 0.0, 1.0), (3.0, 4.0, 0.0, 1.0)]
    case = (times, free, (0.0, 0.0), False, 0.0, math.inf, [], kept, False)
    assert _both(*case) == ([1.0, 1.0], [1], ([0.0, 2.0], [(0, 100), (8, 100)]), False)


@pytest.mark.parametrize(("hold", "start"), [(-0.5, 5.0), (-0.75, 10.0)])
def test_on_a_low_profile_the_own_hold_is_tested(hold, start):
    """A low profile (a row below minus half the tolerance, 0.5): the reservation of 2 nodes
    at 10 for 10 may start at 5 only if its own hold, given back, admits it: a row of -0.5
    there (-0.5 + 2 = 1.5, the need) does; one of -0.75 does not, and it stays."""
    times = (0.0, 5.0, 10.0, 20.0)
    free = ((0.0, 100.0), (2.0, 100.0), (hold, 100.0), (4.0, 100.0))
    case = (times, free, (0.5, 0.0), True, 0.0, math.inf, [], [(10.0, 2.0, 0.0, 10.0)], False)
    starts, moved, rows, low = _both(*case)
    assert (starts, moved, low) == ([start], [0] if start < 10.0 else [], True)
    if start < 10.0:
        assert rows == ([0.0, 10.0, 15.0, 20.0],
                        [(0, 100), (hold, 100), (hold + 2.0, 100), (4, 100)])


def test_every_freed_slot_is_logged_in_a_row_of_its_own():
    """Three frees: 1 node on [0, 5), 2 on [10, 20), 1 on [25, 30). Only the second admits the
    reservation of 2 nodes at 20, which moves to 10; the third's row must not replace it."""
    times = (0.0, 10.0, 20.0, 30.0)
    free = ((0.0, 100.0), (0.0, 100.0), (0.0, 100.0), (4.0, 100.0))
    frees = [(0.0, 5.0, 1.0, 0.0), (10.0, 20.0, 2.0, 0.0), (25.0, 30.0, 1.0, 0.0)]
    case = (times, free, (0.0, 0.0), False, 0.0, math.inf, frees, [(20.0, 2.0, 0.0, 10.0)],
            True)
    assert _both(*case) == ([10.0], [0], ([0.0, 5.0, 20.0, 25.0, 30.0],
                                          [(1, 100), (0, 100), (2, 100), (3, 100), (4, 100)]),
                            False)


def test_a_reach_that_ends_at_the_floor_leaves_the_reservation_unscanned():
    """With the log in use, only the logged slots before a reservation can move it: the one
    freed (after it, on [30, 40)) does not, so the reservation at 10 stays, though the
    hand-made profile has room at now (5) for it: nothing is scanned."""
    times = (0.0, 10.0, 15.0, 30.0)
    free = ((2.0, 100.0), (0.0, 100.0), (4.0, 100.0), (4.0, 100.0))
    case = (times, free, (0.0, 0.0), False, 5.0, math.inf, [(30.0, 40.0, 1.0, 0.0)],
            [(10.0, 2.0, 0.0, 5.0)], True)
    assert _both(*case) == ([10.0], [], ([0.0, 10.0, 15.0, 30.0, 40.0],
                                         [(2, 100), (0, 100), (4, 100), (5, 100), (4, 100)]),
                            False)


def test_reach_reads_only_the_slots_logged():
    """``_reach`` over ``m`` slots of ``order``: a row past them (in ``compress``, a slot with
    no room or one not written yet, its index left in ``order``'s tail) never counts, even
    when it would admit the demand."""
    from bbopt.planner.jit.compression import _reach

    L = np.array([[0.0, 10.0, 0.0, 1.0, 100.0],  # (start, end, last, maxima): 1 node
                  [0.0, 15.0, 0.0, 5.0, 100.0]])  # 5 nodes, not logged
    LO = np.zeros((2, 2), dtype=np.int64)
    S = np.zeros((1, 3))
    order = np.array([0, 1])
    log = [freed_slots.freed(0.0, 10.0, [0.0], [1.0], [100.0])]
    assert _reach(L, LO, S, order, 1, 0.0, 20.0, 2.0, 0.0) == 0.0
    assert freed_slots.reach(log, 0.0, 20.0, 2.0, 0.0) == 0.0
    assert _reach(L, LO, S, order, 2, 0.0, 20.0, 2.0, 0.0) == 15.0  # logged: it counts


def _fit(times, free, tol, now, duration, demand, held, limit, own):
    """``earlier_fit`` from the segment holding ``now``, checked equal to ``earlier_fit2``."""
    i = bisect_right(times, now) - 1
    T = np.array(times, dtype=np.float64)
    F = np.array(free, dtype=np.float64)
    got = earlier_fit(T, F, len(times), *tol, now, duration, *demand, held, limit, i, own)
    assert got == earlier_fit2(list(times), [list(r) for r in free], tol, now, duration,
                               demand, held, limit, i, own)
    return got


@pytest.mark.parametrize("own", [False, True])
def test_earlier_fit_needs_the_nodes_and_bb_before_the_hold_to_the_ulp(own):
    """A start at 0 for 25 (its hold from 20) needs 2.5 nodes and 25 BB (3 and 30 less the
    tolerance, 0.5 and 5) on [10, 20), before its hold: a row of exactly that admits it, one
    ulp less in either column does not (then no start before the hold fits: 20)."""
    times = (0.0, 10.0, 20.0, 30.0)
    for row, want in (((2.5, 25.0), 0.0), ((2.5, math.nextafter(25.0, 0.0)), 20.0),
                      ((math.nextafter(2.5, 0.0), 25.0), 20.0)):
        free = ((4.0, 50.0), row, (4.0, 50.0), (4.0, 50.0))
        assert _fit(times, free, (0.5, 5.0), 0.0, 25.0, (3.0, 30.0), 20.0, 20.0, own) == want


def test_earlier_fit_tests_the_own_hold_only_up_to_the_candidates_end():
    """Not own-fits: the start at 0 for 30 (its hold [10, 40)) needs its hold, given back, on
    [10, 30) only; the row of [30, 40), short even with the hold given back (one ulp below
    -0.5: -0.5 + 1 is the need, 0.5), lies after its end and does not stop it."""
    times = (0.0, 10.0, 20.0, 30.0, 40.0)
    for row in (-0.5, math.nextafter(-0.5, -1.0), -1.0):
        free = ((1.0, 0.0), (0.0, 0.0), (0.0, 0.0), (row, 0.0), (1.0, 0.0))
        assert _fit(times, free, (0.5, 0.0), 0.0, 30.0, (1.0, 0.0), 10.0, 10.0, False) == 0.0
    free = ((1.0, 0.0), (0.0, 0.0), (math.nextafter(-0.5, -1.0), 0.0), (0.0, 0.0), (1.0, 0.0))
    assert _fit(times, free, (0.5, 0.0), 0.0, 30.0, (1.0, 0.0), 10.0, 10.0, False) == 10.0

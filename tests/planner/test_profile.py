"""Availability profiles: exact boundaries and agreement with a brute-force reference."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import ClusterState, Job, Platform, RunningJob
from bbopt.planner import OverbookedError, Profile, Release, first_fit_time, profile_of


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
    with pytest.raises(OverbookedError, match=r"reserving \(2, 0.0\) on \[1.0, 2.0\) overbooks"):
        p.reserve(1.0, 2.0, (2, 0.0))
    assert p.free_at(1.5) == [1.0, 10.0]  # nothing taken
    # the general path (a third dimension) refuses alike
    q = Profile(0.0, (4, 10.0, 1.0))
    q.reserve(0.0, 5.0, (3, 0.0, 0.0))
    with pytest.raises(OverbookedError, match="overbooks"):
        q.reserve(1.0, 2.0, (2, 0.0, 0.0))
    assert q.free_at(1.5) == [1.0, 10.0, 1.0]


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


# -- the shadow-time scan, releases and the profile of a cluster state -----------------------------

def _counting(releases, need, start_free=1):
    """first_fit_time over ``releases`` of nodes; notes how many releases were given at each
    ``fits()`` call."""
    free, given, calls = [start_free], [], []

    def fits():
        calls.append(len(given))
        return free[0] >= need

    def give(r):
        given.append(r)
        free[0] += r.nodes

    return fits, give, given, calls


def test_first_fit_time_gives_the_releases_of_one_instant_together():
    rel = [Release(5.0, 1, 0.0), Release(5.0, 1, 0.0), Release(9.0, 2, 0.0)]
    fits, give, given, calls = _counting(rel, need=3)
    assert first_fit_time(0.0, rel, fits, give) == 5.0
    assert calls == [0, 2]  # asked before any release, then after both releases at 5
    fits, give, given, calls = _counting(rel, need=4)
    assert first_fit_time(0.0, rel, fits, give) == 9.0
    assert calls == [0, 2, 3]


def test_first_fit_time_is_now_when_it_fits_and_takes_no_release():
    def releases():
        raise AssertionError("no release should be read")
        yield  # pragma: no cover

    assert first_fit_time(7.0, releases(), lambda: True, lambda r: None) == 7.0


def test_first_fit_time_never_starts_before_now_and_reads_releases_lazily():
    taken = []

    def releases():
        for r in (Release(2.0, 2, 0.0), Release(12.0, 5, 0.0)):
            taken.append(r.time)
            yield r

    fits, give, _, _ = _counting(releases(), need=3)
    # an end expected before now (an overdue job) frees its nodes now, not in the past
    assert first_fit_time(6.0, releases(), fits, give) == 6.0
    # the first release is read, and the second one only to find where the first instant ends
    assert taken == [2.0, 12.0]


def test_first_fit_time_is_inf_when_the_releases_never_make_room():
    fits, give, given, _ = _counting([Release(1.0, 1, 0.0)], need=5)
    assert first_fit_time(0.0, [Release(1.0, 1, 0.0)], fits, give) == math.inf
    assert len(given) == 1
    assert first_fit_time(0.0, [], lambda: False, lambda r: None) == math.inf


def test_a_release_holds_nodes_bb_and_optionally_its_node_set_and_bandwidth():
    r = Release(5.0, 2, 3.0)
    assert (r.time, r.nodes, r.bb, r.allocation, r.bandwidth) == (5.0, 2, 3.0, None, 0.0)
    assert Release(5.0, 2, 3.0, (0, 1), 1e9).allocation == (0, 1)


def test_the_profile_of_a_state_frees_running_jobs_at_start_plus_walltime():
    platform = Platform(nodes=4, bb=10.0)
    running = (RunningJob(Job("a", 0.0, walltime=30.0, nodes=1, bb=2.0), start=10.0),
               RunningJob(Job("b", 0.0, walltime=20.0, nodes=2, bb=5.0), start=5.0))
    state = ClusterState(12.0, platform, running, ())
    p = profile_of(state)
    assert p.origin == 12.0
    assert p.times == [12.0, 25.0, 40.0]
    assert p.free == [[1.0, 3.0], [3.0, 8.0], [4.0, 10.0]]
    # a start just decided holds its demand until its end
    q = profile_of(state, [(50.0, (1, 1.0))])
    assert q.times == [12.0, 25.0, 40.0, 50.0]
    assert q.free_at(45.0) == [3.0, 9.0] and q.free_at(50.0) == [4.0, 10.0]


def test_the_profile_s_origin_and_a_release_before_it():
    # a release expected before the origin (an overdue job) frees at the origin: its row has it
    # back, and no breakpoint lies before the origin
    p = Profile(10.0, (4, 10.0), releases=[(3.0, (2, 1.0)), (15.0, (1, 0.0))])
    assert p.times == [10.0, 15.0] and p.free == [[3.0, 10.0], [4.0, 10.0]]
    assert p.free_at(9.0) == [3.0, 10.0]  # before the origin: the origin's row
    three = Profile(10.0, (4, 10.0, 1.0), releases=[(3.0, (2, 1.0, 0.0)), (15.0, (1, 0.0, 0.0))])
    assert three.times == [10.0, 15.0] and three.free == [[3.0, 10.0, 1.0], [4.0, 10.0, 1.0]]
    # what is held now, when given, is not the sum of the releases
    held = Profile(0.0, (4, 10.0), releases=[(5.0, (1, 2.0))], used=(3, 4.0))
    assert held.free == [[1.0, 6.0], [2.0, 8.0]]
    held3 = Profile(0.0, (4, 10.0, 1.0), releases=[(5.0, (1, 2.0, 0.0))], used=(3, 4.0, 0.5))
    assert held3.free == [[1.0, 6.0, 0.5], [2.0, 8.0, 0.5]]


# -- hand profiles: boundaries of the fit rule, the scans' candidates, the origin ---------------

TB = 1e12  # a BB capacity whose fit tolerance (REL_TOL x capacity) is 1000 B


def _both(capacity=(4, 10.0)):
    """The same machine on the 2-D path (nodes, BB) and on the general path (a third
    dimension, never asked for)."""
    return Profile(0.0, capacity), Profile(0.0, (*capacity, 1.0))


def _d(p, demand):
    return demand if len(p._tol) == 2 else (*demand, 0.0)


def test_a_profile_prints_its_breakpoints_and_rows():
    p = Profile(0.0, (4, 10.0), releases=[(5.0, (1, 2.0))], used=(3, 4.0))
    assert repr(p) == "Profile(0:(1.0, 6.0), 5:(2.0, 8.0))"


def test_a_copy_is_apart_and_keeps_the_flag():
    p = Profile(0.0, (4, TB))
    p.reserve(0.0, 5.0, (1, TB + 600.0))  # within the tolerance, more than half of it
    q = p.copy()
    assert q._low and q.times == p.times and q.free == p.free
    q.reserve(0.0, 2.0, (1, 0.0))
    assert p.free_at(1.0)[0] == 3.0 and q.free_at(1.0)[0] == 2.0


def test_the_fit_tolerance_is_one_billionth_of_the_capacity():
    for p in _both((4, TB)):
        assert p.fits(0.0, 1.0, _d(p, (4, TB + 1000.0)))
        assert not p.fits(0.0, 1.0, _d(p, (4, TB + 1001.0)))
        assert p.earliest_fit(0.0, 1.0, _d(p, (4, TB + 1000.0))) == 0.0
        assert p.earliest_fit(0.0, 1.0, _d(p, (4, TB + 1001.0))) == math.inf
        # each dimension its own tolerance: a node short is not made up by the BB's 1000 B
        assert p.earliest_fit(0.0, 1.0, _d(p, (5, 0.0))) == math.inf
        assert p.earlier_fit(0.0, 1.0, _d(p, (5, 0.0)), 3.0) == 3.0
        p.reserve(0.0, 5.0, _d(p, (1, TB + 1000.0)))  # taken: the row is 1000 B below 0
        assert p.free_at(0.0)[:2] == [3.0, -1000.0]
        with pytest.raises(OverbookedError):
            p.reserve(6.0, 7.0, _d(p, (1, TB + 1001.0)))


def test_the_flag_is_raised_below_half_the_tolerance_only():
    p = Profile(0.0, (4, TB))
    p.reserve(0.0, 5.0, (1, TB + 500.0))  # a row of -500 B: exactly half the tolerance
    assert not p._low
    p.reserve(5.0, 6.0, (1, TB + 501.0))
    assert p._low
    # nodes alike: their tolerance on 4 nodes is 4e-9, half of it 2e-9
    q = Profile(0.0, (4, TB))
    q.reserve(0.0, 5.0, (4 + 1.5e-9, 0.0))
    assert not q._low
    q.reserve(5.0, 6.0, (4 + 2.5e-9, 0.0))  # within the tolerance: taken, and flagged
    assert q._low and q.free_at(5.0)[0] < -2e-9
    # at exactly minus half the tolerance a row is not low, on either dimension
    for d in (0, 1):
        r = Profile(0.0, (4, TB))
        r.reserve(0.0, 5.0, (4, TB))
        half = [0.0, 0.0]
        half[d] = r._tol[d] / 2
        r.reserve(0.0, 5.0, tuple(half))
        assert r.free_at(0.0)[d] == -r._tol[d] / 2 and not r._low
    # a demand of exactly the free amount plus the tolerance is taken
    r = Profile(0.0, (4, TB))
    r.reserve(0.0, 1.0, (4 + r._tol[0], TB + r._tol[1]))
    assert r._low and r.free_at(0.0) == [4 - (4 + r._tol[0]), TB - (TB + r._tol[1])]


def test_a_run_may_end_where_the_machine_fills():
    for p in _both():
        p.reserve(5.0, 10.0, _d(p, (4, 0.0)))
        assert p.fits(0.0, 5.0, _d(p, (1, 0.0)))
        assert not p.fits(0.0, 5.5, _d(p, (1, 0.0)))
        assert p.fits(10.0, 3.0, _d(p, (4, 0.0)))  # and start where it empties
        assert not p.fits(9.5, 3.0, _d(p, (4, 0.0)))
        assert p.earliest_fit(0.0, 5.0, _d(p, (1, 0.0))) == 0.0
        assert p.earliest_fit(0.0, 6.0, _d(p, (1, 0.0))) == 10.0
        assert p.earliest_fit(2.0, 3.0, _d(p, (1, 0.0))) == 2.0  # from inside a segment
        assert p.earliest_fit(2.0, 3.5, _d(p, (1, 0.0))) == 10.0
        assert p.free_at(-1.0)[:2] == [4.0, 10.0] and p.free_at(5.0)[:2] == [0.0, 10.0]


def test_the_general_scan_skips_past_a_full_segment():
    for p in _both():
        p.reserve(10.0, 20.0, _d(p, (4, 0.0)))
        p.reserve(30.0, 40.0, _d(p, (2, 0.0)))
        assert p.earliest_fit(0.0, 15.0, _d(p, (3, 0.0))) == 40.0
        assert p.earliest_fit(0.0, 15.0, _d(p, (2, 0.0))) == 20.0
        assert p.earliest_fit(0.0, 10.0, _d(p, (3, 0.0))) == 0.0
        assert p.earliest_fit(0.0, 1.0, _d(p, (5, 0.0))) == math.inf


def test_an_earlier_start_within_a_window():
    """A job holding 2 nodes on [30, 40) looks for an earlier start; the machine is full on
    [10, 20). Without a window it goes back to 0; a window narrows where it may start."""
    for p in _both():
        p.reserve(10.0, 20.0, _d(p, (4, 0.0)))
        p.reserve(30.0, 40.0, _d(p, (2, 0.0)))
        demand = _d(p, (2, 0.0))
        assert p.earlier_fit(0.0, 10.0, demand, 30.0) == 0.0
        assert p.earlier_fit(0.0, 15.0, demand, 30.0) == 20.0  # across its own hold
        assert p.earlier_fit(5.0, 10.0, demand, 30.0) == 20.0
        assert p.earlier_fit(0.0, 10.0, demand, 30.0, lo=3.0) == 20.0  # 3 + 10 meets the full
        assert p.earlier_fit(0.0, 10.0, demand, 30.0, lo=-5.0) == 0.0
        assert p.earlier_fit(0.0, 15.0, demand, 30.0, hi=20.0) == 30.0  # no start before 20
        assert p.earlier_fit(0.0, 15.0, demand, 30.0, hi=20.5) == 20.0
        assert p.earlier_fit(0.0, 15.0, demand, 30.0, hi=45.0) == 20.0
        assert p.earlier_fit(30.0, 15.0, demand, 30.0) == 30.0  # no time left before it
        assert p.earlier_fit(0.0, 10.0, demand, 30.0, lo=30.0) == 30.0
        # a window that is one instant holds no start, even one that would fit
        assert p.earlier_fit(0.0, 10.0, demand, 30.0, lo=21.0, hi=21.0) == 30.0
        assert p.earlier_fit(0.0, 10.0, demand, 30.0, lo=21.0, hi=21.5) == 21.0
        # a run past the last breakpoint (its own hold runs to 55)
        assert p.earlier_fit(0.0, 25.0, demand, 30.0) == 20.0


def test_advancing_forgets_the_past_only():
    for p in _both():
        p.reserve(5.0, 10.0, _d(p, (1, 2.0)))
        p.reserve(10.0, 20.0, _d(p, (2, 1.0)))
        p.advance(-3.0)
        assert p.origin == 0.0 and p.times == [0.0, 5.0, 10.0, 20.0]
        p.advance(7.0)  # inside [5, 10): its row from 7 on
        assert p.times == [7.0, 10.0, 20.0] and p.free[0][:2] == [3.0, 8.0]
        p.advance(10.0)  # exactly at a breakpoint
        assert p.times == [10.0, 20.0] and p.free[0][:2] == [2.0, 9.0]
        p.advance(25.0)
        assert p.times == [25.0] and p.free[0][:2] == [4.0, 10.0]


def test_a_hold_to_infinity_and_one_before_the_origin():
    for p in _both():
        p.reserve(5.0, math.inf, _d(p, (1, 0.0)))
        assert p.free_at(1e12)[0] == 3.0 and p.times == [0.0, 5.0]
        p.release(5.0, math.inf, _d(p, (1, 0.0)))
        assert p.free_at(1e12)[0] == 4.0
        p.reserve(-5.0, 2.0, _d(p, (1, 0.0)))  # clamped to the origin
        assert p.free_at(0.0)[0] == 3.0 and p.free_at(2.0)[0] == 4.0
        with pytest.raises(ValueError, match=r"^time -1.0 is before the profile's origin 0.0$"):
            p.reserve(-5.0, -1.0, _d(p, (1, 0.0)))
        p.reserve(3.0, 3.0, _d(p, (4, 0.0)))  # nothing to hold
        p.release(3.0, 3.0, _d(p, (4, 0.0)))
        assert p.free_at(3.0)[0] == 4.0


def test_a_profile_built_overbooked_is_flagged_below_half_the_tolerance_only():
    """What is held now beyond the capacity (an overbooked start) raises the flag at
    construction as a reservation does: below minus half the tolerance of a dimension, on
    either dimension alone (BB: 1000 B on 1 TB, half of it 500 B; nodes: 4e-9 on 4 nodes)."""
    assert not Profile(0.0, (4, TB), used=(4, TB))._low  # full, not overbooked
    assert not Profile(0.0, (4, TB), used=(4, TB + 500.0))._low  # -500 B: not below -500
    assert Profile(0.0, (4, TB), used=(3, TB + 501.0))._low  # BB alone, one byte further
    assert not Profile(0.0, (4, TB), used=(4 + 1.5e-9, TB))._low  # nodes: above -2e-9
    assert Profile(0.0, (4, TB), used=(4 + 2.5e-9, 0.0))._low  # nodes alone, below -2e-9
    # a full dimension of no capacity (no BB on the platform, no nodes) is exactly at minus
    # half its tolerance (0): not low
    assert not Profile(0.0, (4, 0.0), used=(2, 0.0))._low
    assert not Profile(0.0, (0, TB), used=(0, 0.0))._low


def test_releases_of_one_instant_make_one_breakpoint():
    for p in (Profile(0.0, (4, 10.0), releases=[(5.0, (1, 1.0)), (5.0, (1, 2.0))],
                      used=(3, 4.0)),
              Profile(0.0, (4, 10.0, 1.0), releases=[(5.0, (1, 1.0, 0.0)),
                                                     (5.0, (1, 2.0, 0.5))], used=(3, 4.0, 0.5))):
        assert p.times == [0.0, 5.0]
        assert [row[:2] for row in p.free] == [[1.0, 6.0], [3.0, 9.0]]


def test_releases_are_sorted_by_time_alone():
    # amounts of one instant are never compared (numpy arrays cannot be): they keep their order
    for cap in ((4, 10.0), (4, 10.0, 1.0)):
        k = len(cap)
        rel = [(9.0, np.ones(k)), (5.0, np.full(k, 0.5)), (5.0, np.full(k, 0.25))]
        p = Profile(0.0, cap, releases=rel)
        assert p.times == [0.0, 5.0, 9.0]
        assert [row[:2] for row in p.free] == [[2.25, 8.25], [3.0, 9.0], [4.0, 10.0]]

"""conservative-bb's profile and compression compiled (bbopt.planner.jit.compression, the
profile in arrays of bbopt.planner.jit.arrays) against the Python ones: one contract. Each
operation of the array profile answers as the list profile's, and every decision of a replay
with the compiled loop (with ``compiled=True`` every compression runs compiled, however small;
unset, from the switch on) must be the Python one -- the same starts, the same
reservations at the same float times, the same memory -- both when the profile is kept between
decisions (the log of freed slots) and when it is rebuilt (every start before a reservation's
own scanned). Sizes and times are fractional, so the float operations must be the same ones in
the same order; some BB requests fill the pool to within its fit tolerance, so rows go below
zero and a job's own hold is tested.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from bbopt import Job, Platform, simulate  # noqa: E402
from bbopt.jit import kernels  # noqa: E402
from bbopt.policies import conservative, make_policy  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from tests._workload_data import KTH_SWF, data_file  # noqa: E402

PLATFORM = Platform(nodes=8, bb=100.0)
#: (the fixture below patches module constants the same way for every example)
SUPPRESSED = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@pytest.fixture
def every_compression_compiled(monkeypatch):
    """Counts the compiled compressions and the reservations they moved."""
    fast = kernels("compression")
    assert fast is not None
    seen = {"calls": 0, "moved": 0}
    inner = fast.ArrayProfile.compress

    def counted(self, *args):
        out = inner(self, *args)
        seen["calls"] += 1
        seen["moved"] += len(out)
        return out

    monkeypatch.setattr(fast.ArrayProfile, "compress", counted)
    return seen


@st.composite
def fractional_workloads(draw):
    """5 to 30 jobs with fractional walltimes, runtimes and BB (thirds and sevenths), most ending
    early; a few BB requests above the pool or half of it by most of the fit tolerance (1e-7
    of 100), which leave rows below minus half of it."""
    jobs = []
    for k in range(draw(st.integers(5, 30))):
        walltime = draw(st.integers(1, 60)) / 3
        bb = draw(st.one_of(st.integers(0, 700).map(lambda x: x / 7),
                            st.sampled_from([100.0 + 9e-8, 50.0 + 4.5e-8, 100.0 - 1e-12])))
        jobs.append(Job(id=str(k), submit=draw(st.integers(0, 90)) / 3, walltime=walltime,
                        runtime=walltime * draw(st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0])),
                        nodes=draw(st.integers(1, 8)), bb=bb))
    return jobs


def _replay(jobs, platform, compiled: bool, depth=None):
    decisions = []

    def observe(state, decision):
        decisions.append((state.time, decision.started_ids, decision.reservations,
                          decision.memory))

    res = simulate(jobs, platform, "conservative-bb",
                   options={"depth": depth, "compiled": compiled}, on_decision=observe)
    return res, decisions


@settings(max_examples=200, deadline=None, suppress_health_check=SUPPRESSED)
@given(fractional_workloads(), st.sampled_from([None, 2, 1000]))
def test_the_compiled_compression_takes_the_python_decisions(every_compression_compiled, jobs,
                                                             depth):
    py, py_decisions = _replay(jobs, PLATFORM, compiled=False, depth=depth)
    jit, jit_decisions = _replay(jobs, PLATFORM, compiled=True, depth=depth)
    assert jit_decisions == py_decisions
    assert (jit.start, jit.end, jit.state) == (py.start, py.end, py.state)


@settings(max_examples=100, deadline=None, suppress_health_check=SUPPRESSED)
@given(fractional_workloads())
def test_a_rebuilt_profile_compressed_compiled_gives_the_kept_one(every_compression_compiled,
                                                                   jobs):
    """A fresh compiled policy on each state of a replay (no kept profile: every reservation
    scanned from now on) decides as the policy that kept its profile."""
    _fresh_compiled_decides_as_kept(jobs)


def _fresh_compiled_decides_as_kept(jobs) -> None:
    """Replay ``jobs`` in Python; at each decision a fresh compiled policy decides the same."""
    def observe(state, decision):
        fresh = make_policy("conservative-bb", compiled=True).decide(state)
        assert (fresh.started_ids, fresh.reservations, fresh.memory) == (
            decision.started_ids, decision.reservations, decision.memory), state.time

    simulate(jobs, PLATFORM, "conservative-bb", options={"compiled": False},
             on_decision=observe)


def test_kth_replays_the_same_with_the_compiled_compression(every_compression_compiled):
    """3,000 KTH jobs with log-normal BB on a third of Kopanski's machine: the same schedule,
    and the compiled loop did move reservations (thousands of them)."""
    trace = read_swf(data_file(KTH_SWF), max_nodes=96, oversize="drop")
    jobs = with_lognormal_bb(trace.jobs[:3000], seed=0)
    platform = Platform(nodes=96, bb=480e9)
    py, _ = _replay(jobs, platform, compiled=False)
    assert every_compression_compiled["calls"] == 0
    jit, _ = _replay(jobs, platform, compiled=True)
    assert (jit.start, jit.end) == (py.start, py.end)
    assert every_compression_compiled["moved"] > 1000


def test_kth_replays_the_same_across_the_switch(every_compression_compiled, monkeypatch):
    """Unset, as in a fresh process with a switch after 20,000 reservations compressed in
    Python: part of the 3,000 KTH jobs' compressions run in Python, the rest compiled, and the
    schedule is the Python one."""
    trace = read_swf(data_file(KTH_SWF), max_nodes=96, oversize="drop")
    jobs = with_lognormal_bb(trace.jobs[:3000], seed=0)
    platform = Platform(nodes=96, bb=480e9)
    py, _ = _replay(jobs, platform, compiled=False)
    monkeypatch.setattr(conservative, "_loaded", lambda: False)
    monkeypatch.setattr(conservative, "SWITCH_AFTER", 20_000)
    switched, _ = _replay(jobs, platform, compiled=None)
    assert (switched.start, switched.end) == (py.start, py.end)
    assert every_compression_compiled["calls"] > 100


def test_unset_the_policy_switches_to_the_compiled_loop_after_enough_work(monkeypatch):
    """Automatic: compressions run in Python until they looked at SWITCH_AFTER reservations,
    then compiled (at once when the kernels are loaded already)."""
    assert kernels("compression") is not None  # loaded: unset means compiled
    assert make_policy("conservative-bb")._kernels() is not None
    assert make_policy("conservative-bb", compiled=False)._kernels() is None
    monkeypatch.setattr(conservative, "_loaded", lambda: False)  # as in a fresh process
    policy = make_policy("conservative-bb")
    policy._interpreted = conservative.SWITCH_AFTER - 1
    assert policy._kernels() is None
    policy._interpreted += 1
    assert policy._kernels() is not None
    with pytest.raises(ValueError, match="compiled"):
        make_policy("conservative-bb", compiled="yes")


@settings(max_examples=100, deadline=None, suppress_health_check=SUPPRESSED)
@given(fractional_workloads(), st.integers(1, 40), st.integers(0, 30))
def test_switching_in_the_middle_of_a_replay_changes_no_decision(monkeypatch, jobs, after,
                                                                   off_at):
    """Unset, as in a fresh process: the first compressions run in Python, once they looked
    at ``after`` reservations the next run compiled on the profile they left; and a compiled
    replay whose kernels are turned off after ``off_at`` decisions (BBOPT_NO_JIT) rebuilds
    its profile in Python. Both decide as the Python replay."""
    py, py_decisions = _replay(jobs, PLATFORM, compiled=False)
    monkeypatch.setattr(conservative, "_loaded", lambda: False)
    monkeypatch.setattr(conservative, "SWITCH_AFTER", after)
    switched, switched_decisions = _replay(jobs, PLATFORM, compiled=None)
    assert switched_decisions == py_decisions
    decisions = []

    def observe(state, decision):
        decisions.append((state.time, decision.started_ids, decision.reservations,
                          decision.memory))
        if len(decisions) == off_at:
            monkeypatch.setenv("BBOPT_NO_JIT", "1")

    try:
        simulate(jobs, PLATFORM, "conservative-bb", options={"compiled": True},
                 on_decision=observe)
    finally:
        monkeypatch.delenv("BBOPT_NO_JIT", raising=False)
    assert decisions == py_decisions


# (start, duration, nodes, BB): BB in tenths, so sums round like real byte counts do
_ops = st.lists(st.tuples(st.integers(0, 40), st.integers(1, 15), st.integers(1, 8),
                          st.integers(0, 1000).map(lambda x: x / 10)), min_size=1, max_size=25)


@settings(max_examples=300, deadline=None)
@given(_ops, _ops, st.integers(0, 30))
def test_the_array_profile_answers_as_the_list_profile(held, asked, advance_to):
    """Reserve what fits of ``held`` on both profiles (some within the fit tolerance), advance
    both, then ask each of ``asked``: the same earliest start, the same fit on every start
    from the origin to past the last breakpoint, the same reservation (or overbooking), the
    same breakpoints and rows after each."""
    from bbopt.planner import OverbookedError, Profile

    fast = kernels("compression")
    listed = Profile(0.0, (8, 100.0))
    for a, d, n, b in held:
        if listed.fits(float(a), float(d), (n, b + 5e-8)):
            listed.reserve(float(a), float(a + d), (n, b + 5e-8))
    arrays = fast.ArrayProfile(listed.copy())
    for p in (listed, arrays):
        p.advance(float(advance_to))
    assert (arrays.times, arrays.free, arrays._low) == (listed.times, listed.free, listed._low)
    for a, d, n, b in asked:
        demand = (n, b)
        now = float(advance_to + a)
        assert arrays.earliest_fit(now, float(d), demand) == listed.earliest_fit(
            now, float(d), demand)
        for t in sorted({float(advance_to), now, *listed.times, listed.times[-1] + 1.0}):
            assert arrays.fits(t, float(d), demand) == listed.fits(t, float(d), demand), t
        outcomes = []
        for p in (listed, arrays):
            try:
                p.reserve(now, now + d, demand)
                outcomes.append(None)
            except OverbookedError as e:
                outcomes.append(str(e))
        assert outcomes[0] == outcomes[1]
        assert (arrays.times, arrays.free, arrays._low) == (listed.times, listed.free,
                                                              listed._low)


def _arrays(T, F, room=4):
    """A hand-made array profile ``(T, F, n)``: breakpoints, rows (nodes, BB), spare rows."""
    import numpy as np

    n = len(T)
    Ta, Fa = np.zeros(n + room), np.zeros((n + room, 2))
    Ta[:n], Fa[:n] = T, F
    return Ta, Fa, n


def _rows(T, F, n):
    return T[:n].tolist(), [tuple(r) for r in F[:n].tolist()]


#: 4 nodes and 40 B free on [0, 10), 2 and 20 on [10, 20), 8 and 80 from 20 on
HAND = ((0.0, 10.0, 20.0), ((4.0, 40.0), (2.0, 20.0), (8.0, 80.0)))


def test_split_makes_a_breakpoint_with_the_row_before_it_and_keeps_one_already_there():
    from bbopt.planner.jit.compression import split

    for t, index, times, rows in (
            (15.0, 2, [0.0, 10.0, 15.0, 20.0], [(4, 40), (2, 20), (2, 20), (8, 80)]),
            (5.0, 1, [0.0, 5.0, 10.0, 20.0], [(4, 40), (4, 40), (2, 20), (8, 80)]),
            (25.0, 3, [0.0, 10.0, 20.0, 25.0], [(4, 40), (2, 20), (8, 80), (8, 80)]),
            (10.0, 1, [0.0, 10.0, 20.0], [(4, 40), (2, 20), (8, 80)]),
            (20.0, 2, [0.0, 10.0, 20.0], [(4, 40), (2, 20), (8, 80)])):
        T, F, n = _arrays(*HAND)
        i, n = split(T, F, n, t)
        assert (i, _rows(T, F, n)) == (index, (times, rows)), t
    T, F, n = _arrays(*HAND)
    T[3] = 25.0  # (a stale row past the profile's end is no breakpoint)
    assert split(T, F, n, 25.0) == (3, 4)


def test_merge_drops_a_breakpoint_only_between_rows_equal_in_both_columns():
    from bbopt.planner.jit.compression import merge

    T, F, n = _arrays((0.0, 10.0, 15.0, 20.0), ((4, 40), (2, 20), (2, 20), (8, 80)))
    n = merge(T, F, n, 2, 3)  # 15 between equal rows goes, 20 stays
    assert _rows(T, F, n) == ([0.0, 10.0, 20.0], [(4, 40), (2, 20), (8, 80)])
    T, F, n = _arrays((0.0, 10.0, 15.0, 20.0), ((4, 40), (2, 20), (2, 20), (2, 80)))
    n = merge(T, F, n, 1, 3)  # (2, 80) after (2, 20), (2, 20) after (4, 40): both kept
    assert n == 4
    F[4] = F[3]  # (a stale row past the end, equal to the last)
    n = merge(T, F, n, 3, 4)  # j == n: nothing after the last row
    assert n == 4
    T, F, n = _arrays((0.0, 10.0, 20.0), ((4, 40), (4, 40), (8, 80)), room=0)
    n = merge(T, F, n, 1, 2)  # row 1 as row 0: 10 goes (on arrays exactly full)
    assert _rows(T, F, n) == ([0.0, 20.0], [(4, 40), (8, 80)])
    T, F, n = _arrays((0.0, 10.0, 20.0), ((4, 40), (4, 20), (4, 40)), room=0)
    n = merge(T, F, n, 0, 1)  # nothing before row 0 (not the last row, read as F[-1])
    assert _rows(T, F, n) == ([0.0, 10.0, 20.0], [(4, 40), (4, 20), (4, 40)])
    n = merge(T, F, n, 1, 2)
    assert n == 3


def test_take_subtracts_and_tells_a_row_below_minus_half_the_tolerance():
    from bbopt.planner.jit.compression import take

    T, F, n = _arrays(*HAND)
    n, low = take(T, F, n, 5.0, 15.0, 2.0, 20.0, -0.25, -2.5)
    assert (n, low) == (5, False)
    assert _rows(T, F, n) == ([0.0, 5.0, 10.0, 15.0, 20.0],
                              [(4, 40), (2, 20), (0, 0), (2, 20), (8, 80)])
    T, F, n = _arrays(*HAND)
    n, low = take(T, F, n, 0.0, 10.0, 2.0, 20.0, -0.25, -2.5)  # merged with [10, 20)
    assert ((n, low), _rows(T, F, n)) == ((2, False), ([0.0, 20.0], [(2, 20), (8, 80)]))
    below = math.nextafter(-0.25, 0.0)
    for d0, d1, h0, h1, went_low in ((2.25, 20.0, -0.25, -2.5, False),  # at -h: not low
                                     (2.25, 20.0, below, -2.5, True),  # one ulp below it
                                     (2.0, 22.5, -0.25, -2.5, False),
                                     (2.0, 22.5, -0.25, math.nextafter(-2.5, 0.0), True)):
        T, F, n = _arrays(*HAND)
        assert take(T, F, n, 10.0, 20.0, d0, d1, h0, h1) == (3, went_low)
        assert F[1].tolist() == [2.0 - d0, 20.0 - d1]
    T, F, n = _arrays(*HAND)
    assert take(T, F, n, 5.0, 5.0, 2.0, 20.0, -0.25, -2.5) == (3, False)  # empty: nothing
    assert _rows(T, F, n) == ([0.0, 10.0, 20.0], [(4, 40), (2, 20), (8, 80)])
    T, F, n = _arrays((0.0, 10.0, 20.0), ((4, 40), (4, 40), (8, 80)))  # (not merged)
    assert take(T, F, n, 10.0, 10.0, 2.0, 20.0, -0.25, -2.5) == (3, False)  # 10 kept


def test_fits_checks_every_segment_the_walltime_touches_at_the_boundaries():
    from bbopt.planner.jit.compression import fits

    T, F, n = _arrays(*HAND)
    after = math.nextafter(10.0, math.inf)
    cases = [((0.0, 10.0, 4.0, 40.0, 0.0, 0.0), True),  # [10, 20) starts at the end
             ((0.0, after, 4.0, 40.0, 0.0, 0.0), False),  # one ulp into it
             ((0.0, 10.0, 4.0, 40.5, 0.0, 0.5), True),  # within the tolerance
             ((0.0, 10.0, 4.0, math.nextafter(40.5, 99.0), 0.0, 0.5), False),
             ((0.0, 10.0, 4.5, 40.0, 0.5, 0.0), True),
             ((0.0, 10.0, math.nextafter(4.5, 9.0), 40.0, 0.5, 0.0), False),
             ((-5.0, 10.0, 4.0, 40.0, 0.0, 0.0), True),  # before the origin: segment 0
             ((15.0, 5.0, 2.0, 20.0, 0.0, 0.0), True),
             ((12.0, 10.0, 3.0, 20.0, 0.0, 0.0), False),
             ((25.0, 100.0, 8.0, 80.0, 0.0, 0.0), True),  # the last segment, unbounded
             ((25.0, 100.0, 8.0, 81.0, 0.0, 0.0), False)]
    for (start, duration, d0, d1, tol0, tol1), want in cases:
        assert fits(T, F, n, start, duration, d0, d1, tol0, tol1) is want, (start, duration)


def test_reserve_subtracts_within_the_tolerance_and_refuses_past_it():
    from bbopt.planner.jit.compression import reserve

    def run(start, end, d0, d1, tol=(0.5, 5.0), hand=HAND):
        T, F, n = _arrays(*hand)
        n, status = reserve(T, F, n, start, end, d0, d1, *tol)
        return status, _rows(T, F, n)

    assert run(0.0, 10.0, 4.0, 40.0) == (0, ([0.0, 10.0, 20.0], [(0, 0), (2, 20), (8, 80)]))
    # exactly -tol / 2 below zero: status 0; one ulp more: 1 (still within the tolerance)
    assert run(0.0, 10.0, 4.25, 40.0)[0] == 0
    assert run(0.0, 10.0, math.nextafter(4.25, 9.0), 40.0)[0] == 1
    assert run(0.0, 10.0, 4.0, 42.5)[0] == 0
    assert run(0.0, 10.0, 4.0, math.nextafter(42.5, 99.0))[0] == 1
    assert run(0.0, 10.0, 4.5, 40.0) == (1, ([0.0, 10.0, 20.0],
                                             [(-0.5, 0), (2, 20), (8, 80)]))
    # past the tolerance in either column: refused, rows unchanged
    assert run(0.0, 10.0, math.nextafter(4.5, 9.0), 40.0) == (
        -1, ([0.0, 10.0, 20.0], [(4, 40), (2, 20), (8, 80)]))
    assert run(0.0, 10.0, 4.0, math.nextafter(45.0, 99.0))[0] == -1
    assert run(5.0, 15.0, 3.0, 20.0)[0] == -1  # short in the second segment only
    # merged with the next row; from before the origin; to infinity; empty
    assert run(0.0, 10.0, 2.0, 20.0) == (0, ([0.0, 20.0], [(2, 20), (8, 80)]))
    assert run(-5.0, 5.0, 1.0, 10.0) == (0, ([0.0, 5.0, 10.0, 20.0],
                                            [(3, 30), (4, 40), (2, 20), (8, 80)]))
    assert run(15.0, math.inf, 2.0, 20.0) == (
        0, ([0.0, 10.0, 15.0, 20.0], [(4, 40), (2, 20), (0, 0), (6, 60)]))
    assert run(5.0, 5.0, 9.0, 99.0) == (0, ([0.0, 10.0, 20.0], [(4, 40), (2, 20), (8, 80)]))
    unmerged = ((0.0, 10.0, 20.0), ((4, 40), (4, 40), (8, 80)))
    assert run(10.0, 10.0, 1.0, 1.0, hand=unmerged) == (0, ([0.0, 10.0, 20.0],
                                                            [(4, 40), (4, 40), (8, 80)]))
    # from inside the first segment
    assert run(5.0, 8.0, 1.0, 10.0) == (0, ([0.0, 5.0, 8.0, 10.0, 20.0],
                                           [(4, 40), (3, 30), (4, 40), (2, 20), (8, 80)]))
    # the rows before the start do not count, short or not
    assert run(20.0, 30.0, 6.0, 60.0)[0] == 0
    assert run(20.0, 30.0, 8.3, 80.0)[0] == 1
    assert run(0.0, 10.0, 4.0, 45.0)[0] == 1  # exactly the tolerance in the BB column


def test_advance_forgets_the_segments_before_the_new_origin():
    from bbopt.planner.jit.compression import advance

    for t, times, rows in ((15.0, [15.0, 20.0], [(2, 20), (8, 80)]),
                           (10.0, [10.0, 20.0], [(2, 20), (8, 80)]),
                           (20.0, [20.0], [(8, 80)]),
                           (5.0, [5.0, 10.0, 20.0], [(4, 40), (2, 20), (8, 80)]),
                           (0.0, [0.0, 10.0, 20.0], [(4, 40), (2, 20), (8, 80)]),
                           (-1.0, [0.0, 10.0, 20.0], [(4, 40), (2, 20), (8, 80)])):
        T, F, n = _arrays(*HAND, room=0)  # (arrays exactly full: nothing read past them)
        n = advance(T, F, n, t)
        assert _rows(T, F, n) == (times, rows), t


def test_earliest_fit_starts_now_or_at_the_first_breakpoint_with_room_throughout():
    from bbopt.planner.jit.compression import earliest_fit

    T, F, n = _arrays(*HAND)
    cases = [((5.0, 3.0, 3.0, 30.0, 0.0, 0.0), 5.0),
             ((5.0, 5.0, 3.0, 30.0, 0.0, 0.0), 5.0),  # ends at 10 exactly
             ((5.0, 6.0, 3.0, 30.0, 0.0, 0.0), 20.0),
             ((12.0, 100.0, 2.0, 20.0, 0.0, 0.0), 12.0),
             ((-3.0, 1.0, 4.0, 40.0, 0.0, 0.0), 0.0),  # before the origin: at the origin
             ((5.0, 1.0, 4.5, 40.0, 0.5, 0.0), 5.0),  # within the tolerance
             ((5.0, 1.0, math.nextafter(4.5, 9.0), 40.0, 0.5, 0.0), 20.0),
             ((5.0, 1.0, 4.0, 45.0, 0.0, 5.0), 5.0),
             ((5.0, 1.0, 4.0, math.nextafter(45.0, 99.0), 0.0, 5.0), 20.0),
             ((5.0, 1.0, 9.0, 40.0, 0.0, 0.0), math.inf),
             # no walltime: the segment holding now must have room (Profile.earliest_fit)
             ((10.0, 0.0, 3.0, 30.0, 0.0, 0.0), 20.0)]
    for (now, duration, d0, d1, tol0, tol1), want in cases:
        assert earliest_fit(T, F, n, now, duration, d0, d1, tol0, tol1) == want, (now, d0)


def test_remember_keeps_the_latest_stuck_reservations_sorted_as_tuples():
    """``_remember`` against ``insort`` on tuples, then ``del stuck[0]`` past STUCK = 8."""
    import bisect
    import random

    import numpy as np

    from bbopt.planner.jit.compression import STUCK, _remember

    assert STUCK == 8
    rnd = random.Random(5)
    for _ in range(60):
        stuck, count, ref = np.zeros((STUCK + 1, 4)), 0, []
        for _ in range(rnd.randint(1, 14)):
            entry = tuple(float(rnd.choice([1, 2, 3])) for _ in range(4))
            count = _remember(stuck, count, *entry)
            bisect.insort(ref, entry)
            if len(ref) > STUCK:
                del ref[0]
            assert [tuple(r) for r in stuck[:count].tolist()] == ref


def test_log_inserts_a_slot_after_every_slot_ending_no_later_unless_it_has_no_room():
    import numpy as np

    from bbopt.planner.jit.compression import END, TOP0, _log

    L = np.zeros((6, 5))
    L[:, END] = (5.0, 3.0, 5.0, 1.0, 9.0, 3.0)
    L[4, TOP0] = -math.inf  # nothing logged before the horizon: left out
    order, m = np.zeros(6, dtype=np.int64), 0
    for k in range(6):
        m = _log(L, order, m, k)
    assert order[:m].tolist() == [3, 1, 5, 0, 2]


def test_give_back_and_reach_are_the_freed_slots_ones():
    """Slots given back on a hand-made profile by ``_give_back`` and by ``freed_slots.
    give_back`` on the list profile: the same profile, the same logged segments (cut at the
    horizon, none past it) and maxima; then ``_reach`` over the log answers ``reach`` for
    floors, old starts and needs at and around the slots' bounds and capacities."""
    import numpy as np

    from bbopt.planner import Profile
    from bbopt.planner.jit import compression as C
    from bbopt.policies import freed_slots

    listed = Profile(0.0, (8, 100.0))
    listed.times[:] = [0.0, 10.0, 20.0, 30.0]
    listed.free[:] = [[4.0, 40.0], [2.0, 20.0], [8.0, 80.0], [6.0, 70.0]]
    T, F, n = _arrays(listed.times, listed.free, room=12)
    slots = [(5.0, 15.0, 2.0, 10.0), (12.0, 26.0, 1.0, 5.0), (26.0, 40.0, 2.0, 2.0),
             (1.0, 3.0, 1.0, 50.0), (28.0, 29.0, 1.0, 1.0)]
    horizon = 27.0
    L, LO, S = np.zeros((5, 5)), np.zeros((5, 2), dtype=np.int64), np.zeros((2, 3))
    order, m, fill, log = np.zeros(5, dtype=np.int64), 0, 0, []
    for k, (a, b, x0, x1) in enumerate(slots):
        slot = freed_slots.give_back(listed, a, b, (x0, x1), horizon)
        freed_slots.log_slot(log, slot)
        n, S, fill = C._give_back(T, F, n, a, b, x0, x1, horizon, L, LO, S, k, fill)
        m = C._log(L, order, m, k)
        assert _rows(T, F, n) == (listed.times, [tuple(r) for r in listed.free])
        assert L[k, [C.START, C.END, C.LAST, C.TOP0, C.TOP1]].tolist() == list(slot[:5])
        off, length = LO[k]
        logged = [] if slot.top_nodes == -math.inf else [
            list(r) for r in zip(*slot[5:], strict=True)]  # (nothing before the horizon)
        assert S[off:off + length].tolist() == logged
    # segments logged: 5, 10; 12, 15, 20; 26 (30 is past the horizon); 1; none (slot 5)
    assert m == len(log) == 4 and fill == 7
    points = sorted({0.0, *(x for s in slots for x in s[:2]), 11.0, 27.0, 35.0})
    for floor in points:
        for old in points:
            for need0 in (1.0, 3.0, 4.0, 6.0, 9.0):
                for need1 in (5.0, 30.0, 50.0, 90.0):
                    assert C._reach(L, LO, S, order, m, floor, old, need0, need1) == \
                        freed_slots.reach(log, floor, old, need0, need1), (floor, old)


def test_earlier_fit_is_the_python_scan_on_small_profiles():
    """``earlier_fit`` against ``scans.earlier_fit2`` on 3000 drawn profiles (times on a grid,
    rows around the need and below zero), with and without the own-fits shortcut."""
    import bisect
    import random

    from bbopt.planner.jit.compression import earlier_fit
    from bbopt.planner.scans import earlier_fit2

    rnd = random.Random(11)
    tol = (0.5, 5.0)
    for _ in range(3000):
        times = sorted(rnd.sample(range(0, 50, 2), rnd.randint(1, 9)))
        # (rows one below the need, at it, and short even with the job's own hold added)
        free = [[rnd.choice([-1.0, -0.2, 0.0, 1.0, 2.0, 2.5, 3.0, 4.0]),
                 rnd.choice([-10.0, -2.0, 0.0, 24.0, 25.0, 29.0, 30.0, 40.0])] for _ in times]
        now = float(rnd.randint(times[0], 48))
        held = float(rnd.randint(int(now), 50))
        limit = rnd.choice([held, float(rnd.randint(int(now), int(held)))])
        duration = float(rnd.choice([0, 1, 2, 3, 5, 8, 20]))
        d0, d1 = rnd.choice([1.0, 3.0, 3.5, 4.5]), rnd.choice([0.0, 30.0, 35.0, 45.0])
        own = rnd.random() < 0.5
        i = max(bisect.bisect_right(times, now) - 1, 0)
        T, F, n = _arrays([float(t) for t in times], free)
        want = earlier_fit2([float(t) for t in times], free, tol, now, duration, (d0, d1),
                            held, limit, i, own)
        got = earlier_fit(T, F, n, *tol, now, duration, d0, d1, held, limit, i, own)
        assert got == want, (times, free, now, held, limit, duration, d0, d1, own)


def test_drawn_slots_given_back_logged_and_reached_as_freed_slots_does():
    """200 drawn profiles: up to 12 slots of several segments given back (some past the
    horizon, some ending at it) by ``_give_back`` with a segment store of one row (grown as it
    fills) and by ``freed_slots.give_back``, logged by end (``_log`` and ``log_slot``); the same
    profile after each, and ``_reach`` answers ``reach`` for floors and old starts on the grid
    and needs at the free values themselves (ties with the maxima)."""
    import random

    import numpy as np

    from bbopt.planner import Profile
    from bbopt.planner.jit.compression import _give_back, _log, _reach
    from bbopt.policies import freed_slots

    rnd = random.Random(17)
    values = (0.0, 1.0, 2.0, 3.0)
    for _ in range(200):
        listed = Profile(0.0, (8, 100.0))
        listed.times[:] = [0.0, *sorted(rnd.sample(range(1, 30), rnd.randint(0, 8)))]
        listed.free[:] = [[rnd.choice(values), 10 * rnd.choice(values)] for _ in listed.times]
        listed.times[:] = [float(t) for t in listed.times]
        T, F, n = _arrays(listed.times, listed.free, room=40)
        count = rnd.randint(1, 12)
        horizon = float(rnd.choice([10, 20, 30, 40]))
        L, LO, S = np.zeros((count, 5)), np.zeros((count, 2), dtype=np.int64), np.zeros((1, 3))
        order, m, fill, log = np.arange(count), 0, 0, []
        for k in range(count):
            a = float(rnd.randint(0, 35))
            b = a + rnd.choice([1.0, 4.0, 9.0, 20.0])
            amount = (rnd.choice(values), 10 * rnd.choice(values))
            freed_slots.log_slot(log, freed_slots.give_back(listed, a, b, amount, horizon))
            n, S, fill = _give_back(T, F, n, a, b, *amount, horizon, L, LO, S, k, fill)
            m = _log(L, order, m, k)
            assert _rows(T, F, n) == (listed.times, [tuple(r) for r in listed.free])
        assert [L[k, 1] for k in order[:m]] == [s.end for s in log]
        for _ in range(30):
            floor = float(rnd.randint(0, 40))
            old = floor + rnd.randint(0, 30)
            need0, need1 = rnd.choice(values), 10 * rnd.choice(values)
            assert _reach(L, LO, S, order, m, floor, old, need0, need1) == freed_slots.reach(
                log, floor, old, need0, need1)


def test_the_compiled_compression_decides_as_python_on_seeded_workloads(
        every_compression_compiled):
    """20 seeded workloads drawn as ``fractional_workloads`` draws them (no shrinking, so a
    wrong compression fails at once): every decision with the compiled loop (kept profile)
    and with a fresh compiled policy on each state (rebuilt profile) is the Python one."""
    import random

    rnd = random.Random(23)
    for trial in range(20):
        jobs = []
        for k in range(rnd.randint(5, 30)):
            walltime = rnd.randint(1, 60) / 3
            bb = rnd.choice([rnd.randint(0, 700) / 7, rnd.randint(0, 700) / 7,
                             100.0 + 9e-8, 50.0 + 4.5e-8, 100.0 - 1e-12])
            jobs.append(Job(id=str(k), submit=rnd.randint(0, 90) / 3, walltime=walltime,
                            runtime=walltime * rnd.choice([0.0, 0.25, 0.5, 0.9, 1.0]),
                            nodes=rnd.randint(1, 8), bb=bb))
        depth = rnd.choice([None, 2, 1000])
        py, py_decisions = _replay(jobs, PLATFORM, compiled=False, depth=depth)
        jit, jit_decisions = _replay(jobs, PLATFORM, compiled=True, depth=depth)
        assert jit_decisions == py_decisions, trial
        assert (jit.start, jit.end) == (py.start, py.end)
        _fresh_compiled_decides_as_kept(jobs)
    assert every_compression_compiled["moved"] > 100


@pytest.mark.parametrize(("free", "bb", "row", "low"), [
    ((2.75, 0.0, 4.0), (100.0, 100.0, 100.0), (-0.25, 100.0), False),  # at -tol / 2
    ((2.7, 0.0, 4.0), (100.0, 100.0, 100.0), (2.7 + 1.0 - 4.0, 100.0), True),  # below
    ((3.0, 0.0, 4.0), (37.5, 60.0, 100.0), (0.0, -2.5), False),
    ((3.0, 0.0, 4.0), (37.4, 60.0, 100.0), (0.0, 37.4 - 40.0), True)])
def test_a_move_within_the_tolerance_marks_the_profile_low_past_half_of_it(free, bb, row, low):
    """``compress`` alone: 1 node freed on [0, 10); the reservation of 4 nodes at 10 moves to
    0, within the tolerance (0.5, 5); low only when a row went below minus half of it."""
    import numpy as np

    from bbopt.planner.jit.compression import compress
    T, F, n = _arrays((0.0, 10.0, 20.0), tuple(zip(free, bb, strict=True)), room=8)
    frees = np.array([[0.0, 10.0, 1.0, 0.0]])
    kept = np.array([[10.0, 4.0, 100.0 - bb[1], 10.0]])
    starts, moved = np.zeros(1), np.zeros(1, dtype=np.int64)
    n, went_low, count = compress(T, F, n, False, 0.5, 5.0, 0.0, math.inf, frees, kept, True,
                                  starts, moved)
    assert (went_low, count, starts[0], moved[0]) == (low, 1, 0.0, 0)
    assert _rows(T, F, n) == ([0.0, 10.0], [row, (4.0, 100.0)])

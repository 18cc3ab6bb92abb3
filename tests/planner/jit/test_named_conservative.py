"""conservative-bb's compiled decision on named BB nodes (bbopt.planner.jit.named_conservative),
each kernel called alone against the Python it translates: the profile's reservation and
release, fit test and earliest fit (``Profile.reserve``, ``release``, ``fits``,
``earliest_fit`` on more than two dimensions), a job's pieces over a window
(``Planner._pieces_over``) and whole decisions worked by hand (Kopanski & Rzadca, Sections
3.2 and 4.1: the kept reservations held again and compressed, earliest first, then the rest of
the queue planned after them). Each test runs compiled and with ``NUMBA_DISABLE_JIT=1``."""

from __future__ import annotations

import contextlib
import math
import random

import numpy as np
import pytest

pytest.importorskip("numba")

from bbopt.core import ClusterState, Job, Platform, RunningJob, Start  # noqa: E402
from bbopt.errors import OverbookedError  # noqa: E402
from bbopt.planner.jit import named_conservative as C  # noqa: E402
from bbopt.planner.pieces import first_fit_pieces  # noqa: E402
from bbopt.planner.profile import Profile  # noqa: E402
from bbopt.policies.conservative import ConservativeBackfilling  # noqa: E402


def _arrays(p: Profile, cap: int = 64) -> tuple[np.ndarray, int]:
    """``p`` as the kernels' ``prof[1 + D, cap]`` and its length."""
    prof = np.full((1 + len(p.free[0]), cap), -7.0)  # (past the length: never read)
    length = len(p.times)
    prof[0, :length] = p.times
    prof[1:, :length] = np.array(p.free).T
    return prof, length


def _same(prof: np.ndarray, length: int, p: Profile) -> None:
    assert prof[0, :length].tolist() == p.times
    assert prof[1:, :length].T.tolist() == p.free


def _profile(rnd: random.Random) -> Profile:
    """Four dimensions (nodes, pool BB, two BB nodes): the general path of ``Profile``."""
    cap = (8.0, 20.0, 12.0, 8.0)
    rel = [(float(rnd.choice([5, 10, 10, 20, 35])),
            (float(rnd.randint(0, 2)), rnd.choice([0.0, 2.5, 4.0]), rnd.choice([0.0, 1.5]),
             rnd.choice([0.0, 1.0, 2.5]))) for _ in range(rnd.randint(0, 4))]
    return Profile(0.0, cap, rel)


def test_reserve_and_release_are_the_profiles_with_every_breakpoint_and_overbooking():
    rnd = random.Random(11)
    overbooked = 0
    for _ in range(150):
        p = _profile(rnd)
        prof, length = _arrays(p)
        tol = np.array(p._tol)
        for _ in range(6):
            start = float(rnd.choice([-5, 0, 0, 5, 7.5, 10, 20, 30]))
            end = start + rnd.choice([-1.0, 0.0, 2.5, 5.0, 10.0, 30.0, math.inf])
            if start < end < 0.0:
                continue  # (a window wholly before the origin: the Profile refuses it)
            amount = np.array([float(rnd.randint(0, 4)), rnd.choice([0.0, 3.0, 9.5]),
                               rnd.choice([0.0, 4.0, 6.0]), rnd.choice([0.0, 2.0, 5.5])])
            if rnd.random() < 0.3:
                p.release(start, end, tuple(amount))
                length = C._change(prof, length, start, end, amount, 1.0, tol)
            else:
                try:
                    p.reserve(start, end, tuple(amount))
                except OverbookedError:
                    assert C._change(prof, length, start, end, amount, -1.0, tol) == -1
                    overbooked += 1
                    break
                length = C._change(prof, length, start, end, amount, -1.0, tol)
            _same(prof, length, p)
    assert overbooked > 20


def test_a_reservation_is_refused_below_the_slack_and_taken_at_it():
    p = Profile(0.0, (4.0, 10.0, 5.0), [(10.0, (2.0, 4.0, 2.0))])
    prof, length = _arrays(p)
    need = np.array([2.0, 6.0, 3.0])  # free: 2, 6, 3 until t=10 (exactly the demand)
    tol = np.zeros(3)
    assert C._change(prof.copy(), length, 0.0, 10.0, need, -1.0, tol) == 2
    over = need.copy()
    over[2] = math.nextafter(3.0, 4.0)
    assert C._change(prof.copy(), length, 0.0, 10.0, over, -1.0, tol) == -1
    tol[2] = math.ulp(3.0)  # (the slack added to the free space: one ulp over fits again)
    assert C._change(prof.copy(), length, 0.0, 10.0, over, -1.0, tol) == 2
    # (a release never checks: what it gives back is added, past the capacity if so)
    got = prof.copy()
    assert C._change(got, length, 0.0, 5.0, over, 1.0, np.zeros(3)) == 3
    assert got[:, :3].tolist() == [[0.0, 5.0, 10.0], [4.0, 2.0, 4.0], [12.0, 6.0, 10.0],
                                   [3.0 + over[2], 3.0, 5.0]]


def test_a_reservation_from_before_the_origin_or_to_infinity_adds_no_breakpoint_there():
    p = Profile(0.0, (4.0, 10.0, 5.0), [(10.0, (2.0, 4.0, 2.0))])
    prof, length = _arrays(p)
    one = np.array([1.0, 1.0, 1.0])
    tol = np.zeros(3)
    assert C._change(prof, length, -5.0, math.inf, one, -1.0, tol) == 2
    assert prof[:, :2].tolist() == [[0.0, 10.0], [1.0, 3.0], [5.0, 9.0], [2.0, 4.0]]
    assert C._change(prof, 2, 10.0, 10.0, one, -1.0, tol) == 2  # (empty: nothing)
    assert C._change(prof, 2, 10.0, 9.0, one, 1.0, tol) == 2
    assert prof[:, :2].tolist() == [[0.0, 10.0], [1.0, 3.0], [5.0, 9.0], [2.0, 4.0]]
    assert C._change(prof, 2, 5.0, 10.0, one, -1.0, tol) == 3  # (10 already a breakpoint)
    assert prof[:, :3].tolist() == [[0.0, 5.0, 10.0], [1.0, 0.0, 3.0], [5.0, 4.0, 9.0],
                                    [2.0, 1.0, 4.0]]


def test_fits_and_earliest_fit_are_the_profiles():
    rnd = random.Random(5)
    found = set()
    for _ in range(300):
        p = _profile(rnd)
        for _ in range(rnd.randint(0, 3)):
            s = float(rnd.choice([0, 5, 10, 15]))
            a = (1.0, rnd.choice([0.0, 4.0]), rnd.choice([0.0, 3.0]), rnd.choice([0.0, 2.0]))
            with contextlib.suppress(OverbookedError):
                p.reserve(s, s + rnd.choice([5.0, 10.0]), a)
        prof, length = _arrays(p)
        tol = np.array(p._tol)
        now = float(rnd.choice([0, 0, 3, 5, 10, 12, 40]))
        duration = float(rnd.choice([1, 5, 10, 25]))
        demand = np.array([float(rnd.randint(1, 8)), rnd.choice([0.0, 8.0, 16.0, 20.0]),
                           rnd.choice([0.0, 6.0, 10.5, 12.0]), rnd.choice([0.0, 3.0, 8.0])])
        start = float(rnd.choice([0, 3, 5, 10, 20, 40]))
        assert C._fits(prof, length, start, duration, tol, demand) == p.fits(
            start, duration, tuple(demand))
        want = p.earliest_fit(now, duration, tuple(demand))
        assert C._earliest_fit(prof, length, now, duration, tol, demand) == want
        found.add(want if want in (math.inf, now) else "later")
    assert len(found) >= 3


def test_a_fit_ends_at_a_short_segment_that_starts_exactly_at_its_end():
    # nodes free: 4 on [0, 10), 1 on [10, 20), 4 from 20; BB node: 5 throughout
    T = [0.0, 10.0, 20.0]
    prof = np.array([T, [4.0, 1.0, 4.0], [5.0, 5.0, 5.0]])
    tol, need = np.zeros(2), np.array([4.0, 5.0])
    assert C._fits(prof, 3, 0.0, 10.0, tol, need)
    assert not C._fits(prof, 3, 0.0, math.nextafter(10.0, 11.0), tol, need)
    assert not C._fits(prof, 3, 12.0, 1.0, tol, need)
    assert C._fits(prof, 3, 20.0, math.inf, tol, need)
    assert C._fits(prof, 3, 15.0, 1.0, tol, np.array([1.0, 5.0]))  # exactly the free
    assert not C._fits(prof, 3, 15.0, 1.0, tol, np.array([1.0, math.nextafter(5.0, 6.0)]))
    assert C._fits(prof, 3, 15.0, 1.0, np.array([0.0, 1e-9]),
                   np.array([1.0, math.nextafter(5.0, 6.0)]))
    assert C._earliest_fit(prof, 3, 0.0, 10.0, tol, need) == 0.0
    assert C._earliest_fit(prof, 3, 3.0, 10.0, tol, need) == 20.0  # 3 + 10 > 10
    assert C._earliest_fit(prof, 3, 3.0, 7.0, tol, need) == 3.0  # ends at 10 exactly
    assert C._earliest_fit(prof, 3, 12.0, 1.0, tol, need) == 20.0
    assert C._earliest_fit(prof, 3, 25.0, 1.0, tol, need) == 25.0
    assert C._earliest_fit(prof, 3, 0.0, 1.0, tol, np.array([5.0, 1.0])) == math.inf
    assert C._earliest_fit(prof, 3, 0.0, 1.0, np.array([1.0, 0.0]),
                           np.array([5.0, 1.0])) == 0.0


def _decision_state(rnd: random.Random) -> ClusterState | None:
    """One decision at t=40 on three BB nodes of unequal sizes: running jobs holding first-fit
    pieces (their expected ends before, at and after now), a queue with kept reservations
    (before now, at it, later, some no longer feasible) and new jobs; BB whole (pieces that
    fill a node exactly) or fractional."""
    caps = (rnd.choice([6.0, 10.0]), 10.0, rnd.choice([4.0, 7.5]))
    platform = Platform(nodes=8, bb=sum(caps), bb_nodes=caps)
    space, free, running = list(caps), 8, []
    for r in range(rnd.randint(0, 4)):
        n = rnd.randint(1, 3)
        bb = rnd.choice([0.0, 2.0, 4.0, 5.0, 2.5])
        pieces = first_fit_pieces(space, n, bb, 1e-12 * max(caps)) if bb else ()
        if n > free or pieces is None:
            continue
        for b, size in pieces:
            space[b] -= size
        free -= n
        w = float(rnd.choice([45, 60, 100]))
        running.append(RunningJob(Job(f"r{r}", 0, walltime=w, runtime=w, nodes=n, bb=bb),
                                  0.0, None, tuple(pieces)))
    queue, kept = [], {}
    for q in range(rnd.randint(1, 7)):
        queue.append(Job(f"q{q}", 0, walltime=float(rnd.choice([5, 20, 30, 60])),
                         nodes=rnd.randint(1, 8),
                         bb=rnd.choice([0.0, 3.0, 4.0, 6.0, 7.5, 1.25, 12.0])))
        if rnd.random() < 0.5:
            kept[f"q{q}"] = float(rnd.choice([20, 40, 50, 60, 100, 140, 300]))
    return ClusterState(40.0, platform, tuple(running), tuple(queue),
                        memory={"reservations": kept})


def test_one_decision_is_the_python_one_on_random_states():
    """Every start and reservation of one decision, compiled kernel (``conservative_running``)
    against the planner's ``replan``, at depths 1, 2, 3 and none."""
    rnd = random.Random(17)
    seen = {"start": 0, "moved": 0, "dropped": 0}
    for _ in range(120):
        state = _decision_state(rnd)
        depth = rnd.choice([None, 1, 2, 3])
        got = ConservativeBackfilling(depth=depth).decide(state)
        ref = ConservativeBackfilling(depth=depth, compiled=False).decide(state)
        assert [s.job_id for s in got.start] == [s.job_id for s in ref.start]
        assert [(r.job_id, r.start) for r in got.reservations] == [
            (r.job_id, r.start) for r in ref.reservations]
        kept = state.memory["reservations"]
        planned = {r.job_id: r.start for r in ref.reservations}
        seen["start"] += bool(ref.start)
        seen["moved"] += any(planned.get(j, t) < max(t, 40.0) for j, t in kept.items())
        seen["dropped"] += any(j not in planned for j in kept)
    assert min(seen.values()) >= 10, seen


def test_a_jobs_pieces_are_placed_on_each_bb_nodes_least_free_space_over_its_window():
    """``Planner._pieces_over``: 2 nodes and 6 of BB, two pieces of 3. BB node 0 has 5 free
    on [0, 10), 2 on [10, 20), 5 after; node 1 has 5 throughout (one piece each)."""
    prof = np.array([[0.0, 10.0, 20.0], [4.0, 4.0, 1.0], [10.0, 10.0, 6.0],
                     [5.0, 2.0, 5.0], [5.0, 5.0, 5.0]])
    low, cnt = np.zeros(4), np.zeros(2, dtype=np.int64)

    def over(start, w, n=2.0, bb=6.0, bb_tol=0.0):
        return C._pieces_over(prof, 3, start, n, bb, w, bb_tol, 0.0, low, cnt), cnt.tolist()

    assert over(0.0, 10.0) == (True, [1, 1])
    assert low[2:].tolist() == [5.0, 5.0]
    assert over(5.0, 5.0) == (True, [1, 1])  # (inside segment 0: ends at its end)
    assert over(5.0, math.nextafter(5.0, 6.0)) == (True, [1, 1])  # (5 + 5+ulp rounds to 10)
    assert over(5.0, 5.5) == (False, [0, 1])  # node 0's 2 counts
    assert low[2:].tolist() == [2.0, 5.0]
    assert over(0.0, 10.0, bb=10.0) == (True, [1, 1])  # two pieces of 5: exactly full
    assert over(0.0, 10.0, bb=math.nextafter(10.0, 11.0))[0] is False  # the pool first
    assert over(0.0, 10.0, bb=math.nextafter(10.0, 11.0), bb_tol=1e-9) == (False, [0, 0])
    assert over(10.0, 5.0, n=1.0, bb=5.0) == (True, [0, 1])  # node 0 holds 2 there
    assert over(15.0, 10.0, bb=1.0)[0] is False  # 1 node free from 20
    assert over(15.0, 5.0, bb=1.0) == (True, [2, 0])
    assert over(15.0, 5.0, n=1.0, bb=1.0) == (True, [1, 0])
    assert over(15.0, 5.0, n=4.0, bb=1.0) == (True, [4, 0])
    assert over(20.0, 5.0, n=math.nextafter(1.0, 2.0), bb=0.0)[0] is False  # nodes: no slack
    prof[3, 2] = 7.0  # (node 0 holds 7 from 20)
    assert over(20.0, 5.0, n=1.0, bb=6.0) == (True, [1, 0])  # the pool: exactly 6 free
    assert over(20.0, 5.0, n=1.0, bb=math.nextafter(6.0, 7.0))[0] is False
    assert over(20.0, 5.0, n=1.0, bb=math.nextafter(6.0, 7.0), bb_tol=1e-9) == (True, [1, 0])
    prof[3, 2] = 5.0  # (the pool's slack lets it pass, but no BB node holds 6 from 20)
    assert over(20.0, 5.0, n=1.0, bb=math.nextafter(6.0, 7.0), bb_tol=1e-9) == (False, [0, 0])
    # _pieces_at from the segment given (the caller found it): the window starts there
    assert C._pieces_at(prof, 3, 1, 10.0, 2.0, 5.0, 10.0, 0.0, 0.0, low, cnt)
    assert cnt.tolist() == [0, 2]
    assert not C._pieces_at(prof, 3, 1, 10.0, 2.0, 5.0, 10.5, 0.0, 0.0, low, cnt)


def _decide(rows, jobs, previous=None, now=0.0, tol=None, bb_tol=0.0, ftol=0.0,
            depth=math.inf, pieces=None):
    """``conservative_named`` on a profile given by its rows (breakpoints, nodes, pool, each
    BB node); ``pieces``: the bytes each kept job holds on each BB node (``None``: placed
    again). The planned starts (``nan``: none) and their order."""
    rows = np.array(rows, dtype=np.float64)
    prof = np.zeros((rows.shape[0], 64))
    prof[:, :rows.shape[1]] = rows
    count, k = len(jobs), rows.shape[0] - 3
    previous = np.array(previous if previous is not None else [math.nan] * count)
    keys = [(max(p, now), q) for q, p in enumerate(previous) if not math.isnan(p)]
    kept_order = np.array([q for _, q in sorted(keys)], dtype=np.int64)
    tol = np.zeros(rows.shape[0] - 1) if tol is None else np.array(tol, dtype=np.float64)
    planned, seq = np.zeros(count), np.zeros(count, dtype=np.int64)
    own = np.full((count, k), math.nan) if pieces is None else np.array(pieces, dtype=float)
    n = C.conservative_named(now, tol, bb_tol, ftol, prof, rows.shape[1],
                             np.array(jobs, dtype=np.float64).T.copy(), previous, own,
                             kept_order, depth, planned, seq, np.zeros((count, k)), True)
    return planned.tolist(), seq[:n].tolist()


def test_a_start_now_is_tested_on_the_segment_holding_now_at_equality_and_slack():
    # the segment holding now (5) is segment 0: 3 nodes free, then 1, then 8
    rows = [[5.0, 10.0, 20.0], [3.0, 1.0, 8.0], [10.0, 10.0, 10.0], [10.0, 10.0, 10.0]]
    assert _decide(rows, [(3, 0.0, 5.0)], now=5.0) == ([5.0], [0])
    assert _decide(rows, [(3, 0.0, 6.0)], now=5.0) == ([20.0], [0])
    # exactly the nodes now, the pool short of them (no BB asked): a start now
    rows = [[0.0, 10.0], [3.0, 8.0], [2.0, 10.0], [10.0, 10.0]]
    assert _decide(rows, [(3, 0.0, 5.0)]) == ([0.0], [0])
    assert _decide(rows, [(4, 0.0, 5.0)]) == ([10.0], [0])
    # exactly the pool now (6 of 6)
    rows = [[0.0, 10.0], [4.0, 8.0], [6.0, 10.0], [10.0, 10.0]]
    assert _decide(rows, [(2, 6.0, 5.0)]) == ([0.0], [0])
    assert _decide(rows, [(2, math.nextafter(6.0, 7.0), 5.0)]) == ([10.0], [0])
    # a start now is tested as a later one (Planner._pieces_over): the nodes exactly, the
    # pool within its own slack (bb_tol), whatever the profile's slack on the nodes
    rows = [[0.0, 10.0], [2.5, 8.0], [5.5, 10.0], [10.0, 10.0]]
    assert _decide(rows, [(3, 0.0, 5.0)], tol=[1.0, 0.0, 0.0]) == ([10.0], [0])
    assert _decide(rows, [(2, 0.0, 5.0)], tol=[1.0, 0.0, 0.0]) == ([0.0], [0])
    assert _decide(rows, [(1, 6.0, 5.0)], tol=[0.0, 1.0, 0.0], bb_tol=1.0) == ([0.0], [0])
    assert _decide(rows, [(1, 6.0, 5.0)], tol=[0.0, 1.0, 0.0], bb_tol=0.4) == ([10.0], [0])
    assert _decide(rows, [(1, 6.0, 5.0)], tol=[0.0, 1.0, 0.0]) == ([10.0], [0])


def test_a_start_now_places_its_pieces_on_the_least_free_space_over_its_window():
    """BB node 0 has 5 free now but 2 from t=10 (a reservation), node 1 has 5: a 4-byte piece
    for 20 s goes on node 1, the first whose least free space over [0, 20) holds it, and
    starts now (first fit on the BB nodes as they are now would have put it on node 0, short
    from 10, and it would have waited until 10); for 10 s it fits on node 0 and starts now."""
    rows = [[0.0, 10.0, 30.0], [4.0, 4.0, 4.0], [10.0, 7.0, 10.0], [5.0, 2.0, 5.0],
            [5.0, 5.0, 5.0]]
    assert _decide(rows, [(1, 4.0, 20.0)]) == ([0.0], [0])
    assert _decide(rows, [(1, 4.0, 10.0)]) == ([0.0], [0])
    # two of them: the second finds 1 left on node 1 until 20 and 2 on node 0 until 30, so
    # it starts at 20 on node 1
    assert _decide(rows, [(1, 4.0, 20.0), (1, 4.0, 20.0)]) == ([0.0, 20.0], [0, 1])


def test_a_reservation_that_overbooks_a_bb_node_raises_the_policys_error():
    """Pieces placed with a tolerance wider than the profile's (``ftol`` above ``tol``): the
    reservation at t=10 overbooks BB node 0 by a millionth, which the profile refuses."""
    rows = [[0.0, 10.0], [0.0, 1.0], [10.0, 10.0], [5.0, 5.0]]
    with pytest.raises(ValueError, match=r"^a reservation on the named BB nodes overbooks$"):
        _decide(rows, [(1, 5.000001, 5.0)], ftol=1e-3)
    assert _decide(rows, [(1, 5.0, 5.0)], ftol=1e-3) == ([10.0], [0])


def _running(now, caps, ends, held, jobs, previous=None, depth=math.inf, slack=0.0, ftol=0.0,
             junk=None, pieces=None):
    """``conservative_running``; ``slack``: the profile's tolerance as a fraction of each
    capacity (``bbopt.core.REL_TOL``), the pool's too; ``ftol``: the pieces' tolerance;
    ``junk``: the value of an array of the profile's size freed just before (whose memory
    ``np.empty`` then hands the kernel's profile, uncompiled); ``pieces``: the bytes each kept
    job holds on each BB node (``None``: placed again)."""
    count, k = len(jobs), len(caps) - 2
    planned, seq = np.zeros(count), np.zeros(count, dtype=np.int64)
    caps = np.array(caps, dtype=np.float64)
    if junk is not None:
        np.full((1 + len(caps), len(ends) + 1 + 6 * count + 4), junk)
    own = np.full((count, k), math.nan) if pieces is None else np.array(pieces, dtype=float)
    n = C.conservative_running(now, caps, caps * slack, caps[1] * slack, ftol,
                               np.array(ends, dtype=np.float64),
                               np.array(held, dtype=np.float64).reshape(len(ends), len(caps)),
                               np.array(jobs, dtype=np.float64).T.copy(),
                               np.array(previous or [math.nan] * count), own, depth, planned,
                               seq, np.zeros((count, k)), True)
    return planned.tolist(), seq[:n].tolist()


def test_the_bb_nodes_now_are_the_capacities_less_each_running_jobs_own_bytes():
    # a running job with 2 bytes on each of two 5-byte BB nodes (4 in the pool): two pieces
    # of 3 fit now, one on each node
    assert _running(0.0, [4, 10, 5, 5], [100.0], [[2, 4, 2, 2]], [(2, 6.0, 10.0)]) == (
        [0.0], [0])
    # a running job with 1 byte on node 0 (6.5 -> 5.5 free): one 3-byte piece there, the
    # other on node 1, so it starts now
    assert _running(0.0, [4, 12.5, 6.5, 6], [100.0], [[1, 1, 1, 0]], [(2, 6.0, 10.0)]) == (
        [0.0], [0])
    # five BB nodes, the first three full, 1 byte held on node 3 (5.5 free) and none on node
    # 4: one piece on each of nodes 3 and 4, now
    held = [[1, 20.5, 6.5, 6.5, 6.5, 1, 0]]
    assert _running(0.0, [4, 32.5] + [6.5] * 5, [100.0], held, [(2, 6.0, 10.0)]) == (
        [0.0], [0])
    # the pieces of a job that fits nowhere now wait for the running job's end
    assert _running(0.0, [4, 10, 5, 5], [100.0], [[2, 8, 4, 4]], [(2, 6.0, 10.0)]) == (
        [100.0], [0])


def test_each_decision_starts_from_its_own_now():
    """Two decisions on arrays of the same shapes (the second may get the first's memory):
    the profile's origin is each one's now."""
    args = ([4, 10, 5, 5], [50.0], [[4, 0, 0, 0]], [(1, 0.0, 10.0)])
    assert _running(0.0, *args) == ([50.0], [0])
    assert _running(60.0, *args) == ([60.0], [0])
    assert _running(20.0, *args) == ([50.0], [0])


def test_the_profiles_origin_is_now_whatever_its_memory_held():
    """Memory left holding the running job's end (50: its release would merge into the
    origin, its nodes free now), a time after now (30) or past everything (a hold now would
    be taken from there) or NaN: the origin is now, the job waits for the nodes at 50;
    beside a running job of 2 nodes until 50, 2 nodes for 10 s start now, 2 for 5 s after
    them at 30, 4 at 50."""
    args = ([4, 10, 5, 5], [50.0], [[4, 0, 0, 0]], [(1, 0.0, 10.0)])
    two = ([4, 10, 5, 5], [50.0], [[2, 0, 0, 0]], [(2, 0.0, 10.0), (2, 0.0, 5.0),
                                                   (4, 0.0, 5.0)])
    for junk in (50.0, 30.0, 1e9, math.nan):
        assert _running(20.0, *args, junk=junk) == ([50.0], [0])
        assert _running(20.0, *two, junk=junk) == ([20.0, 30.0, 50.0], [0, 1, 2])


def test_a_kept_job_whose_pieces_no_longer_fit_by_its_start_keeps_that_start():
    """The compression's fallback: a kept job that fits nowhere up to its kept start once
    released is planned at that start. Six nodes, two BB nodes of 10 (a slack of 1e-9 of each
    capacity on every dimension, wider than the pieces' 1e-12 of the largest, as the BB nodes
    had before :func:`bbopt.planner.bb.profile_slacks`); running: 3 nodes
    until t=2, 1 node and 5 bytes of BB node 1 until 100. Kept: ``c`` (3 nodes, 6 bytes, 8 s)
    at 2, ``a`` (1 node, 4 bytes and 5e-9, 20 s) at 5, ``q`` (1 node, 6 bytes, 20 s) at 10.
    Held again: ``c`` on node 0 over [2, 10), so ``a`` on node 1 (4 left on node 0), ``q`` on
    node 0 from 10. Compressed: ``c`` stays at 2 (the nodes are busy before), ``a`` starts now
    on node 0 (10 free now; the profile's 4 there from 2 hold it within their 1e-8 of
    slack), which leaves ``q`` 6 less 5e-9 on node 0 from 10, short of its 6 bytes by more
    than a piece's tolerance, and 5 on node 1: no start up to 10, so 10."""
    caps, ends = [6, 20, 10, 10], [2.0, 100.0]
    held = [[3, 0, 0, 0], [1, 5, 0, 5]]
    jobs = [(3, 6.0, 8.0), (1, 4.0 + 5e-9, 20.0), (1, 6.0, 20.0)]
    got = _running(0.0, caps, ends, held, jobs, [2.0, 5.0, 10.0], slack=1e-9, ftol=1e-11)
    assert got == ([2.0, 0.0, 10.0], [0, 1, 2])
    # (the bytes of a exactly 4: q's 6 fit on node 0 from 10 again, held there)
    jobs[1] = (1, 4.0, 20.0)
    assert _running(0.0, caps, ends, held, jobs, [2.0, 5.0, 10.0], slack=1e-9,
                    ftol=1e-11) == ([2.0, 0.0, 10.0], [0, 1, 2])
    # the platform's own slacks (a BB node admits what first fit places there, 1e-11), the
    # pieces not kept in the memory (placed again): a, placed over its window, starts now on
    # node 1 (5 free until 100), clear of what c and q hold on node 0, and c keeps 2 and q 10
    # -- the compiled decision and the planner's (Python) alike
    platform = Platform(nodes=6, bb=20.0, bb_nodes=(10.0, 10.0))
    running = (RunningJob(Job("r0", 0, walltime=2.0, runtime=2.0, nodes=3), 0.0, None, ()),
               RunningJob(Job("r1", 0, walltime=100.0, runtime=100.0, nodes=1, bb=5.0), 0.0,
                          None, ((1, 5.0),)))
    queue = tuple(Job(j, 0, walltime=w, nodes=n, bb=bb)
                  for j, (n, bb, w) in zip("caq", [(3, 6.0, 8.0), (1, 4.0 + 5e-9, 20.0),
                                                   (1, 6.0, 20.0)], strict=True))
    state = ClusterState(0.0, platform, running, queue,
                         memory={"reservations": {"c": 2.0, "a": 5.0, "q": 10.0}})
    for compiled in (False, None):
        got = ConservativeBackfilling(compiled=compiled).decide(state)
        assert got.start == (Start("a", None, ((1, 4.0 + 5e-9),)),)
        assert [(r.job_id, r.start) for r in got.reservations] == [("c", 2.0), ("q", 10.0)]


def test_the_releases_of_one_time_are_summed_in_the_order_given_past_sixteen_running_jobs():
    """Twenty running jobs, the i-th (1 to 20) holding ``0.1 * i`` of the pool and of one BB
    node of 30, ending at 3 and 5 in turn: ``Profile`` sums them in that order (sorted by end,
    stably), 8.999999999999996 free before 3 and 18.999999999999996 from 3 (summed otherwise:
    9.0 and 19.0). 19 bytes for 1 s start at 5, one ulp less at 3; 9 bytes at 3, one ulp less
    at 3 too (the BB node now, from the running jobs in the order given, holds
    8.999999999999998), 8.999999999999996 now."""
    bbs = [0.1 * i for i in range(1, 21)]
    ends = [3.0, 5.0] * 10
    held = [[1, b, b] for b in bbs]
    p = Profile(0.0, (24.0, 30.0, 30.0), list(zip(ends, held, strict=True)))
    assert p.times == [0.0, 3.0, 5.0]
    assert [row[1] for row in p.free] == [8.999999999999996, 18.999999999999996,
                                          29.999999999999996]
    for bb, start in [(19.0, 5.0), (math.nextafter(19.0, 0.0), 3.0), (9.0, 3.0),
                      (math.nextafter(9.0, 0.0), 3.0), (8.999999999999996, 0.0)]:
        assert _running(0.0, [24, 30, 30], ends, held, [(1, bb, 1.0)]) == ([start], [0])

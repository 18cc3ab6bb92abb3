"""The ``exhaustive`` pack backend, the reference of the exact ones: every subset, the node
row and the average-bandwidth row within their slack, the stages within the tolerance, the
size and time it refuses."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bbopt.core import Status
from bbopt.models.packs import PackModel
from bbopt.solvers.base import Budget, BudgetExceeded, solve
from bbopt.solvers.packs.exhaustive import solve_exhaustive


def model_of(q, t, u, cap, stages=None, tolerance=0.0):
    q = np.asarray(q, dtype=np.int64)
    t = np.asarray(t, dtype=float)
    stages = stages or (q * t,)
    return PackModel(tuple(f"a{i}" for i in range(len(q))), q, t, np.asarray(u, dtype=float),
                     t, cap, tuple(np.asarray(s, dtype=float) for s in stages), tolerance)


def test_every_subset_within_the_nodes_is_looked_at_and_the_best_returned():
    """Three one-node applications (work 5, 9, 1) on two nodes: 7 packs fit (the empty one,
    3 singletons, 3 pairs); the best is {1, 0}, work 14 = its bound."""
    r = solve_exhaustive(model_of([1, 1, 1], [5, 9, 1], [0, 0, 0], cap=2), Budget(10.0), 0)
    assert r.solution.tolist() == [True, True, False]
    assert (r.status, r.objective, r.bound, r.backend) == (Status.OPTIMAL, 14.0, 14.0,
                                                           "exhaustive")
    assert r.info == {"stages": (14.0,), "feasible": 7}


def test_an_application_as_wide_as_the_free_nodes_fits():
    r = solve_exhaustive(model_of([3, 4], [5, 9], [0, 0], cap=3), Budget(10.0), 0)
    assert r.solution.tolist() == [True, False] and r.info["feasible"] == 2


def test_no_application_is_the_empty_pack():
    model = PackModel((), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0), 4,
                      (np.zeros(0),))
    r = solve_exhaustive(model, Budget(10.0), 0)
    assert r.solution.tolist() == [] and (r.objective, r.info["feasible"]) == (0.0, 1)


@pytest.mark.parametrize(("u1", "fits"), [
    (10.0 * (1 + 1e-9) - 1.0, True),  # 1 + u1 = 10 (1 + 1e-9), to the last bit
    (math.nextafter(10.0 * (1 + 1e-9) - 1.0, math.inf), False)])
def test_the_average_row_holds_within_its_relative_slack(u1, fits):
    """Two one-node applications of 10 s, 1 s and ``u1`` of I/O: together within 10 (1 + 1e-9)
    s of I/O they are a pack (work 20), a float above it not (work 10)."""
    r = solve_exhaustive(model_of([1, 1], [10, 10], [1.0, u1], cap=2), Budget(10.0), 0)
    assert r.objective == (20.0 if fits else 10.0)
    assert r.info["feasible"] == (4 if fits else 3)


@pytest.mark.parametrize(("work1", "first"), [(90.0, 1), (89.0, 0), (91.0, 1),
                                              (89.9999999, 1), (89.9999998, 0)])
def test_a_later_stage_counts_among_packs_within_the_tolerance(work1, first):
    """One node, work 100 or ``work1``, the second stage prefers application 1: within 10 % of
    the best work (90 included, and 1e-9 of 100 below it: 89.9999999) it is taken; at 89 (or
    89.9999998) the best work is."""
    model = model_of([1, 1], [100.0, work1], [0, 0], cap=1,
                     stages=([100.0, work1], [1.0, 2.0]), tolerance=0.1)
    r = solve_exhaustive(model, Budget(10.0), 0)
    assert np.flatnonzero(r.solution).tolist() == [first]
    assert r.info["stages"] == ((100.0, 1.0) if first == 0 else (work1, 2.0))


@pytest.mark.parametrize(("works", "first"), [
    ([95.0, 100.0], 1),  # the tolerance is no slack on the last stage
    ([100.0 - 0.5e-7, 100.0], 0),  # within 1e-9 of 100: a tie, the first pack in the
    ([99.9999999, 100.0], 0),  # enumeration is kept (at 1e-9 of 100 included); beyond it
    ([100.0 - 2e-7, 100.0], 1),  # the better one
    ([0.5 - 0.5e-9, 0.5], 0),  # below 1 the slack is 1e-9 absolute
    ([0.5 - 2e-9, 0.5], 1)])
def test_the_last_stage_is_maximised_within_float_noise_only(works, first):
    model = model_of([1, 1], [10.0, 10.0], [0, 0], cap=1, stages=(works,), tolerance=0.1)
    r = solve_exhaustive(model, Budget(10.0), 0)
    assert np.flatnonzero(r.solution).tolist() == [first]


@pytest.mark.parametrize(("m", "max_items", "refused"), [(3, 3, False), (4, 3, True),
                                                          (21, None, True)])
def test_more_applications_than_max_items_are_refused(m, max_items, refused):
    """At most ``max_items`` (default 20) applications; beyond, BudgetExceeded (the contract's
    FALLBACK: the fallback's pack)."""
    model = model_of([1] * m, [10.0 + k for k in range(m)], [0] * m, cap=1)
    options = {} if max_items is None else {"max_items": max_items}
    if refused:
        with pytest.raises(BudgetExceeded, match=f"{m} applications > max_items="):
            solve_exhaustive(model, Budget(10.0), 0, **options)
        r = solve(model, "exhaustive", Budget(10.0), **options)
        assert r.status is Status.FALLBACK
    else:
        r = solve_exhaustive(model, Budget(10.0), 0, **options)
        assert r.status is Status.OPTIMAL
    assert np.flatnonzero(r.solution).tolist() == [m - 1]


class _Clock:
    """Each look finds ``step`` seconds more gone."""

    def __init__(self, step: float) -> None:
        self.now, self.step = -step, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


@pytest.mark.parametrize(("step", "refused"), [(1.0, False), (1.5, True)])
def test_the_enumeration_stops_when_the_budget_is_spent(monkeypatch, step, refused):
    """A 1 s budget: a block started after exactly 1 s is still enumerated; after 1.5 s the
    enumeration stops (BudgetExceeded)."""
    import bbopt.solvers.packs.exhaustive as exhaustive

    monkeypatch.setattr(exhaustive, "_time", _Clock(step))
    model = model_of([1, 1], [5.0, 9.0], [0, 0], cap=1)
    if refused:
        with pytest.raises(BudgetExceeded, match="^exhaustive enumeration out of time$"):
            solve_exhaustive(model, Budget(1.0), 0)
    else:
        assert solve_exhaustive(model, Budget(1.0), 0).objective == 9.0


def test_the_clock_is_read_once_per_block_of_masks(monkeypatch):
    """14 applications are 2^14 masks, one block: on a 1 s budget where each look at the clock
    finds 1 s more gone, the one look before the block passes (1 s is not over 1 s)."""
    import bbopt.solvers.packs.exhaustive as exhaustive

    assert exhaustive.BLOCK == 1 << 14
    monkeypatch.setattr(exhaustive, "_time", _Clock(1.0))
    model = model_of([1] * 14, [1.0 + k for k in range(14)], [0] * 14, cap=1)
    assert np.flatnonzero(solve_exhaustive(model, Budget(1.0), 0).solution).tolist() == [13]


def test_every_mask_of_several_blocks_is_counted_once():
    """15 one-node applications on 15 nodes, no I/O: all 2^15 packs fit, in two blocks."""
    model = model_of([1] * 15, [1.0] * 15, [0] * 15, cap=15)
    r = solve_exhaustive(model, Budget(10.0), 0)
    assert r.info["feasible"] == 1 << 15 and r.objective == 15.0


@pytest.mark.parametrize("short", [2.0, 0.5])
def test_each_pack_s_average_row_is_over_its_own_longest_member(short):
    """a (10 s, no I/O), b and c (``short`` s, all of it I/O) on two nodes: b and c together
    bring twice their length of I/O and are no pack, whatever the longer a left out (and also
    when shorter than 1 s); the 6 packs are {}, a, b, c, ab and ac."""
    model = model_of([1, 1, 1], [10.0, short, short], [0.0, short, short], cap=2)
    r = solve_exhaustive(model, Budget(10.0), 0)
    assert r.info["feasible"] == 6 and r.solution.tolist() == [True, True, False]

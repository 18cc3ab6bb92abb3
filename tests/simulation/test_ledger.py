"""The ledger's fit tolerance at its threshold (twice the policies' ``REL_TOL`` of the capacity,
so that a decision built within capacity is never refused for rounding), the policies' own rule
(:func:`bbopt.core.fits`, once ``REL_TOL``) beside it, and the node count at, under and one over
the free nodes."""

from __future__ import annotations

import pytest

from bbopt.core import ENGINE_REL_TOL, REL_TOL, Job, Platform, fits
from bbopt.errors import InvalidDecision
from bbopt.simulation.ledger import Ledger

CAP = 1e12  # 1 TB: REL_TOL x CAP = 1000 B, ENGINE_REL_TOL x CAP = 2000 B


def test_the_tolerances_are_one_and_two_billionths():
    assert REL_TOL == 1e-9 and ENGINE_REL_TOL == 2e-9


@pytest.mark.parametrize("over,ok", [(0.0, True), (1000.0, True), (1001.0, False)])
def test_policies_fit_within_one_billionth_of_the_capacity(over, ok):
    assert fits(CAP / 2 + over, CAP / 2, CAP) is ok


@pytest.mark.parametrize("over,ok", [(0.0, True), (1999.0, True), (2000.0, True),
                                     (2001.0, False)])
def test_the_ledger_admits_bb_within_twice_the_policies_tolerance(over, ok):
    ledger = Ledger(Platform(4, CAP))
    ledger.admit(Job("a", 0.0, 10.0, nodes=1, bb=CAP / 2), None, 0.0)
    job = Job("b", 0.0, 10.0, nodes=1, bb=CAP / 2 + over)
    if ok:
        assert ledger.admit(job, None, 0.0) == (1,)
        assert ledger.used_bb == CAP + over and ledger.free_bb == -over
    else:
        with pytest.raises(InvalidDecision, match="burst buffer"):
            ledger.admit(job, None, 0.0)
        assert ledger.used_bb == CAP / 2 and ledger.used_nodes == 1  # nothing taken


@pytest.mark.parametrize("nodes,ok", [(2, True), (3, True), (4, False)])
def test_the_ledger_admits_up_to_the_free_nodes(nodes, ok):
    ledger = Ledger(Platform(4, 0.0))
    ledger.admit(Job("a", 0.0, 10.0, nodes=1), None, 0.0)
    job = Job("b", 0.0, 10.0, nodes=nodes)
    if ok:
        assert ledger.admit(job, None, 0.0) == tuple(range(1, 1 + nodes))
        assert ledger.free_nodes_count == 3 - nodes
    else:
        with pytest.raises(InvalidDecision, match="needs 4 nodes, 3 free"):
            ledger.admit(job, None, 0.0)


def test_released_nodes_come_back_sorted_few_or_many():
    ledger = Ledger(Platform(40, 0.0))
    wide = Job("w", 0.0, 10.0, nodes=20)
    narrow = Job("n", 0.0, 10.0, nodes=3)
    got_w = ledger.admit(wide, None, 0.0)
    got_n = ledger.admit(narrow, None, 0.0)
    ledger.release(narrow, got_n)
    ledger.release(wide, got_w)
    assert ledger.free_nodes == list(range(40)) and ledger.used_nodes == 0


def test_asked_nodes_are_checked():
    ledger = Ledger(Platform(4, 0.0))
    ledger.admit(Job("a", 0.0, 10.0, nodes=1), (2,), 0.0)
    with pytest.raises(InvalidDecision, match=r"nodes \[2\] are busy"):
        ledger.admit(Job("b", 0.0, 10.0, nodes=2), (1, 2), 0.0)
    with pytest.raises(InvalidDecision, match="is not 2 distinct nodes"):
        ledger.admit(Job("b", 0.0, 10.0, nodes=2), (1, 1), 0.0)
    with pytest.raises(InvalidDecision, match=r"nodes \[4\] are busy or do not exist"):
        ledger.admit(Job("b", 0.0, 10.0, nodes=1), (4,), 0.0)
    assert ledger.admit(Job("b", 0.0, 10.0, nodes=2), (3, 0), 0.0) == (3, 0)
    assert ledger.free_nodes == [1]

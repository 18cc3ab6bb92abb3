"""The ledger's fit tolerance at its threshold (twice the policies' ``REL_TOL`` of the capacity,
so that a decision built within capacity is never refused for rounding), the policies' own rule
(:func:`bbopt.core.fits`, once ``REL_TOL``) beside it, and the node count at, under and one over
the free nodes."""

from __future__ import annotations

import pytest

from bbopt.core import ENGINE_REL_TOL, REL_TOL, Job, Platform, fits
from bbopt.errors import InvalidDecision
from bbopt.simulation.ledger import Ledger, StartRefused

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


# ---------------------------------------------------------------- refusals name the job and time
def _refusal(ledger: Ledger, job: Job, asked, t: float = 7.5) -> InvalidDecision:
    """The refusal of ``job`` at ``t``, after checking that nothing was taken."""
    free, used_n, used_b = list(ledger.free_nodes), ledger.used_nodes, ledger.used_bb
    with pytest.raises(InvalidDecision) as info:
        ledger.admit(job, asked, t)
    assert (ledger.free_nodes, ledger.used_nodes, ledger.used_bb) == (free, used_n, used_b)
    assert info.value.job_id == job.id and info.value.time == t
    return info.value


SSD = Platform(4, 0.0, node_ssd=(100.0, 300.0, 200.0, 300.0))


def test_every_refusal_names_the_job_and_the_time():
    ledger = Ledger(Platform(4, 10.0))
    ledger.admit(Job("a", 0.0, 10.0, nodes=1, bb=4.0), None, 0.0)
    assert str(_refusal(ledger, Job("b", 0.0, 10.0, nodes=4), None)) == (
        "invalid decision (t=7.5s, job b): needs 4 nodes, 3 free")
    assert str(_refusal(ledger, Job("b", 0.0, 10.0, bb=7.0), None)) == (
        "invalid decision (t=7.5s, job b): needs 7 B of burst buffer, 6 B free")
    assert "job b" in str(_refusal(ledger, Job("b", 0.0, 10.0, nodes=2), (1, 1)))
    assert "job b" in str(_refusal(ledger, Job("b", 0.0, 10.0), (0,)))
    ledger = Ledger(SSD)
    assert str(_refusal(ledger, Job("s", 0.0, 10.0, nodes=3, ssd=250.0), None)) == (
        "invalid decision (t=7.5s, job s): needs 3 nodes with 250 B of local SSD, 2 free")


# ---------------------------------------------------------------- local SSD
def test_an_ssd_request_takes_the_smallest_admissible_ssds():
    ledger = Ledger(SSD)
    assert not ledger.plain or ledger.bandwidth is None
    assert ledger.admit(Job("s", 0.0, 10.0, nodes=2, ssd=150.0), None, 0.0) == (2, 1)
    assert ledger.free_nodes == [0, 3] and ledger.used_nodes == 2
    assert ledger.admit(Job("t", 0.0, 10.0, nodes=1), None, 0.0) == (0,)  # no SSD: lowest free


@pytest.mark.parametrize("ssd,ok", [(199.0, True), (200.0, True), (201.0, False)])
def test_asked_nodes_need_at_least_the_ssd_asked_per_node(ssd, ok):
    ledger = Ledger(SSD)
    job = Job("s", 0.0, 10.0, nodes=2, ssd=ssd)
    if ok:
        assert ledger.admit(job, (2, 3), 0.0) == (2, 3)
        assert ledger.free_nodes == [0, 1]
    else:
        assert str(_refusal(ledger, job, (2, 3))) == (
            "invalid decision (t=7.5s, job s): nodes [2] have less than the 201 B of local SSD "
            "it asks per node")


def test_an_ssd_request_on_a_platform_without_ssd_takes_any_asked_nodes():
    ledger = Ledger(Platform(4, 0.0))
    assert ledger.admit(Job("s", 0.0, 10.0, nodes=2, ssd=50.0), (3, 1), 0.0) == (3, 1)
    assert ledger.free_nodes == [0, 2]


# ---------------------------------------------------------------- named BB nodes
def test_named_bb_nodes_hold_the_pieces_and_refuse_what_cannot_be_placed():
    ledger = Ledger(Platform(4, 20.0, bb_nodes=(10.0, 10.0)))
    assert ledger.bb_nodes is ledger.bb and not ledger.plain
    a = Job("a", 0.0, 10.0, nodes=2, bb=12.0)  # pieces of 6 B: one on each BB node
    assert ledger.admit(a, None, 0.0) == (0, 1)
    assert ledger.pieces_of(a) == ((0, 6.0), (1, 6.0))
    b = Job("b", 0.0, 10.0, nodes=1, bb=5.0)  # the pool has 8 B, no BB node has 5
    with pytest.raises(StartRefused, match="pieces of 5 B do not fit"):
        ledger.admit(b, None, 0.0)
    assert ledger.free_nodes == [2, 3] and ledger.used_nodes == 2 and ledger.used_bb == 12.0
    ledger.release(a, (0, 1))
    assert ledger.pieces_of(a) == () and ledger.bb.free == [10.0, 10.0]
    assert ledger.used_bb == 0.0 and ledger.free_nodes == [0, 1, 2, 3]
    assert ledger.admit(b, None, 0.0) == (0,) and ledger.used_bb == 5.0


def test_a_pooled_bb_has_no_bb_nodes_and_no_pieces():
    ledger = Ledger(Platform(4, 20.0))
    assert ledger.bb_nodes is None and ledger.plain
    assert ledger.pieces_of(Job("a", 0.0, 10.0, bb=1.0)) is None


def test_proximity_pieces_follow_the_nodes_and_a_refusal_gives_the_nodes_back():
    platform = Platform(4, 20.0, bb_nodes=(10.0, 10.0),
                        bb_proximity=((0, 1), (0, 1), (1, 0), (1, 0)))
    ledger = Ledger(platform)
    a = Job("a", 0.0, 10.0, nodes=2, bb=8.0)  # nodes 0-1, both pieces on their BB node 0
    assert ledger.admit(a, None, 0.0) == (0, 1)
    assert ledger.pieces_of(a) == ((0, 4.0), (0, 4.0))
    b = Job("b", 0.0, 10.0, nodes=1, bb=9.0)  # node 2, its piece on BB node 1
    assert ledger.admit(b, None, 0.0) == (2,) and ledger.bb.free == [2.0, 1.0]
    c = Job("c", 0.0, 10.0, nodes=1, bb=3.0)  # the pool has 3 B, no BB node has
    with pytest.raises(StartRefused, match="pieces of 3 B do not fit"):
        ledger.admit(c, None, 0.0)
    assert ledger.free_nodes == [3] and ledger.used_nodes == 3 and ledger.used_bb == 17.0


# ---------------------------------------------------------------- bandwidth
def test_bandwidth_is_charged_refused_with_the_job_and_time_and_given_back():
    from bbopt.topology import herbein_example_topology, platform_from_topology

    platform = platform_from_topology(herbein_example_topology())  # 256 MB/s per 2 nodes
    assert Ledger(platform).bandwidth is None  # enforced only when asked
    ledger = Ledger(platform, enforce_bandwidth=True)
    assert not ledger.plain
    a = Job("a", 0.0, 100.0, nodes=2, bandwidth=128e6)  # fills the first switch exactly
    assert ledger.admit(a, None, 0.0) == (0, 1)
    assert ledger.bandwidth.avail[2] == 0.0
    assert ledger.admit(Job("z", 0.0, 100.0), (2,), 0.0) == (2,)  # no bandwidth: always fits
    b = Job("b", 0.0, 100.0, nodes=1, bandwidth=129e6)  # 128 MB/s left above the switches
    assert str(_refusal(ledger, b, (3,))) == (
        "invalid decision (t=7.5s, job b): over-allocates switch 'network_switch': 385 MB/s "
        "would be charged on 384 MB/s")
    assert ledger.bandwidth.avail[1] == 128e6  # the refused charge taken back
    ledger.release(a, (0, 1))
    assert ledger.bandwidth.avail[1] == 384e6 and ledger.bandwidth.avail[2] == 256e6
    assert ledger.free_nodes == [0, 1, 3]
    assert ledger.admit(b, None, 0.0) == (0,) and ledger.bandwidth.avail[1] == 255e6
    wide = Job("w", 0.0, 100.0, nodes=4, bandwidth=200e6)
    assert ledger.why_never_fits(wide).startswith("requests 4 nodes x 200 MB/s; even an empty")
    assert Ledger(platform).why_never_fits(wide) is None
    assert ledger.why_never_fits(Job("x", 0.0, 1.0, nodes=5)) == (
        "requests 5 nodes, platform has 4")


def test_an_ssd_request_of_half_a_byte_is_still_an_ssd_request():
    # no named BB, no bandwidth (the ledger's plain case) but node SSDs: 0.5 B must not take
    # node 0, which has none
    ledger = Ledger(Platform(4, 0.0, node_ssd=(0.0, 2.0, 1.0, 2.0)))
    assert ledger.plain
    job = Job("s", 0.0, 10.0, ssd=0.5)
    assert ledger.admit(job, None, 0.0) == (2,)  # the smallest admissible SSD
    assert "nodes [0] have less than the 0.5 B" in str(_refusal(ledger, job, (0,)))


def test_proximity_takes_a_consecutive_run_even_for_a_job_without_bb():
    platform = Platform(4, 20.0, bb_nodes=(10.0, 10.0),
                        bb_proximity=((0, 1), (0, 1), (1, 0), (1, 0)))
    ledger = Ledger(platform)
    ledger.admit(Job("x", 0.0, 10.0), (1,), 0.0)
    assert ledger.admit(Job("y", 0.0, 10.0, nodes=2), None, 0.0) == (2, 3)  # not (0, 2)
    assert ledger.free_nodes == [0]

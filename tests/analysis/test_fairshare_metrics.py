"""The fair-share metrics of a run (Zvi & Oren, OMFS), computed by hand on run records built
directly: utilisation from useful node-time, each entity's share, wait and bounded slowdown,
the deprived episodes and their quantiles, checkpoint/restart accounting and thrashing."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from bbopt.analysis.fairshare_metrics import fairshare_summary, satisfaction_episodes
from bbopt.core import Job, Platform

SHARES = {"A": 0.5, "B": 0.5}  # 2 nodes each of 4


def _job(jid, user, nodes, submit=0.0):
    return Job(jid, submit, 10_000.0, 10_000.0, nodes, user=user)


def _record(runs, preemption=None, states=None, nodes=4):
    """A run record: ``runs`` as (job, [(start, end), ...]) segments in order."""
    jobs = [job for job, _ in runs]
    segments = [(job.id, t0, t1, None) for job, segs in runs for t0, t1 in segs]
    start = [segs[0][0] if segs else math.nan for _, segs in runs]
    end = [segs[-1][1] if segs else math.nan for _, segs in runs]
    return SimpleNamespace(platform=Platform(nodes=nodes), jobs=jobs, segments=segments,
                           start=start, end=end, preemption=preemption or {},
                           state=states or ["done"] * len(jobs))


#: a1 (A, 2 nodes) runs 0-1000; b1 (B, 1 node) waits 500 and runs 300; b2 (B, 2 nodes) waits
#: until 1000 and runs 1200. B is deprived from 0 (b1 fits its 2 nodes) to 500, and from 800
#: (b1 ended, b2 fits) to 1000: episodes of 500 and 200 s.
A1, B1, B2 = _job("a1", "A", 2), _job("b1", "B", 1), _job("b2", "B", 2)
RUN = [(A1, [(0.0, 1000.0)]), (B1, [(500.0, 800.0)]), (B2, [(1000.0, 2200.0)])]


def test_utilisation_shares_waits_and_bounded_slowdowns_by_hand():
    m = fairshare_summary(_record(RUN), SHARES)
    # useful node-time 2 x 1000 + 1 x 300 + 2 x 1200 = 4700 over 4 nodes x 2200 s
    assert m["utilisation"] == pytest.approx(4700 / 8800, rel=1e-12)
    a, b = m["entities"]["A"], m["entities"]["B"]
    assert a["node_time_share"] == pytest.approx(2000 / 4700, rel=1e-12)
    assert b["node_time_share"] == pytest.approx(2700 / 4700, rel=1e-12)
    assert (a["mean_wait"], b["mean_wait"], m["mean_wait"]) == (0.0, 750.0, pytest.approx(500.0))
    # bounded slowdown max((wait + run) / max(run, 600 s), 1): b1 (500 + 300) / 600 (not / 300),
    # b2 2200 / 1200; a1 1
    assert b["mean_bounded_slowdown"] == pytest.approx((800 / 600 + 2200 / 1200) / 2)
    assert a["mean_bounded_slowdown"] == 1.0
    assert m["mean_bounded_slowdown"] == pytest.approx((1 + 800 / 600 + 2200 / 1200) / 3)
    assert (a["jobs"], b["jobs"], a["entitlement"]) == (1.0, 2.0, 0.5)
    # shortfall: A received 2000/4700 = 0.4255 of its 0.5
    assert m["share_shortfall_max"] == pytest.approx(0.5 - 2000 / 4700, rel=1e-12)
    assert (m["checkpoints"], m["restarts"], m["kills"], m["dropped"]) == (0, 0, 0, 0)
    assert (m["cr_overhead"], m["cr_node_hours"], m["lost_node_hours"]) == (0.0, 0.0, 0.0)


def test_a_bounded_slowdown_floors_at_one_and_bounds_at_ten_minutes():
    # a wait of 0 and a run of 100 s: (0 + 100) / 600 floored to 1; a wait of 300 and a run of
    # exactly 600: 900 / 600; of 601: 901 / 601
    runs = [(_job("x", "A", 1), [(0.0, 100.0)]), (_job("y", "A", 1), [(300.0, 900.0)]),
            (_job("z", "A", 1), [(300.0, 901.0)])]
    m = fairshare_summary(_record(runs), SHARES)
    assert m["entities"]["A"]["mean_bounded_slowdown"] == pytest.approx(
        (1.0 + 900 / 600 + 901 / 601) / 3, rel=1e-12)


def test_the_deprived_episodes_and_their_quantiles():
    entitled = {"A": 2, "B": 2}
    assert satisfaction_episodes(_record(RUN), entitled) == [("B", 0.0, 500.0),
                                                               ("B", 800.0, 1000.0)]
    sat = fairshare_summary(_record(RUN), SHARES, quantum=200.0)["satisfaction"]
    assert sat["episodes"] == 2.0 and sat["max"] == 500.0
    assert sat["p50"] == pytest.approx(350.0) and sat["p95"] == pytest.approx(485.0)


@pytest.mark.parametrize("quantum, within", [(199.0, 0.0), (200.0 - 2e-9, 0.0),
                                             (200.0 - 1e-9, 0.5), (200.0, 0.5), (499.0, 0.5),
                                             (500.0, 1.0)])
def test_an_episode_within_the_quantum_counts_at_exactly_the_quantum(quantum, within):
    # (within 1e-9 s of the quantum: 200 - 1e-9 + 1e-9 is 200.0 in floats, 200 - 2e-9 is not)
    sat = fairshare_summary(_record(RUN), SHARES, quantum=quantum)["satisfaction"]
    assert sat["within_quantum"] == within
    assert "within_quantum" not in fairshare_summary(_record(RUN), SHARES)["satisfaction"]


def test_a_waiting_job_wider_than_what_is_left_deprives_nobody():
    # B holds 1 node (b1) while b2 (2 nodes) waits: 2 > 2 - 1 left, not deprived; an entity
    # without an entitlement, or a job never run, is not counted
    runs = [(_job("c", "C", 1), [(5.0, 6.0)]), (B1, [(0.0, 800.0)]), (B2, [(1000.0, 2200.0)]),
            (_job("b3", "B", 1, submit=50.0), [])]
    assert satisfaction_episodes(_record(runs), {"A": 2, "B": 2}) == [("B", 800.0, 1000.0)]


def test_an_evicted_job_waits_again_between_its_segments():
    # b1 runs 0-100, is evicted, waits 100-400 (deprived: B holds nothing, b1 fits) and runs
    # again 400-700; a job asking exactly the entitlement is deprived too
    runs = [(B1, [(0.0, 100.0), (400.0, 700.0)]), (_job("b2", "B", 2, submit=700.0),
                                                   [(900.0, 1000.0)])]
    assert satisfaction_episodes(_record(runs), {"B": 2}) == [("B", 100.0, 400.0),
                                                                ("B", 700.0, 900.0)]


def test_checkpoint_restart_accounting_and_thrashing():
    # a1 did 900 s of useful work in its 1000 s of segments: 10 s checkpointing and 20 s
    # restarting, 50 s lost, 4 evictions (thrashing: more than 3); b1 evicted exactly 3 times
    pre = {"a1": {"work_done": 900.0, "checkpoint_time": 10.0, "restart_time": 20.0,
                  "lost_work": 50.0, "checkpoints": 2, "restarts": 1, "kills": 1,
                  "evictions": 4},
           "b1": {"work_done": 300.0, "checkpoint_time": 0.0, "restart_time": 0.0,
                  "lost_work": 0.0, "checkpoints": 0, "restarts": 0, "kills": 3,
                  "evictions": 3}}
    m = fairshare_summary(_record(RUN, preemption=pre, states=["done", "done", "dropped"]),
                          SHARES)
    assert m["utilisation"] == pytest.approx((2 * 900 + 300 + 2 * 1200) / 8800, rel=1e-12)
    assert m["cr_overhead"] == pytest.approx(2 * 30 / 8800, rel=1e-12)
    assert m["cr_node_hours"] == pytest.approx(60 / 3600, rel=1e-12)
    assert m["lost_node_hours"] == pytest.approx(100 / 3600, rel=1e-12)
    assert (m["checkpoints"], m["restarts"], m["kills"], m["thrashing_jobs"]) == (2, 1, 4, 1)
    assert m["dropped"] == 1


def test_a_run_with_nothing_done():
    m = fairshare_summary(_record([(A1, [])], states=["rejected"]), SHARES, quantum=60.0)
    assert (m["utilisation"], m["cr_overhead"], m["mean_wait"]) == (0.0, 0.0, 0.0)
    assert m["satisfaction"] == {"episodes": 0.0, "p50": 0.0, "p95": 0.0, "max": 0.0,
                                 "within_quantum": 1.0}
    assert m["entities"]["A"]["jobs"] == 0.0 and m["entities"]["B"]["node_time_share"] == 0.0
    assert m["share_shortfall_max"] == 0.5 and m["mean_bounded_slowdown"] == 0.0
    none = fairshare_summary(_record([(A1, [])], states=["rejected"]), {})
    assert none["entities"] == {} and none["share_shortfall_max"] == 0.0


def test_entities_without_a_share_without_jobs_and_without_a_name():
    # "C" ran but has no share (entitled to 0); "D" has a share but no job; a job without a
    # user belongs to "unknown"
    runs = [(_job("c", "C", 2), [(0.0, 100.0)]), (_job("u", None, 2), [(0.0, 300.0)])]
    m = fairshare_summary(_record(runs), {"A": 0.25, "D": 0.5, "unknown": 0.25})
    c, d, u = m["entities"]["C"], m["entities"]["D"], m["entities"]["unknown"]
    assert c["entitlement"] == 0.0 and c["node_time_share"] == pytest.approx(0.25)
    assert d == {"entitlement": 0.5, "node_time_share": 0.0, "mean_wait": 0.0,
                 "mean_bounded_slowdown": 0.0, "jobs": 0.0}
    assert u["entitlement"] == 0.25 and u["node_time_share"] == pytest.approx(0.75)
    assert m["share_shortfall_max"] == 0.5  # D's whole share


def test_what_counts_as_a_start_a_run_and_the_span():
    # submissions from 100 s; x (never started, still waiting: no wait counted) first; y runs
    # 0 s after a wait of 1200 s (bounded slowdown 1200 / 600); z runs twice, 100 s then 200 s,
    # with no preemption record: 300 s of useful work
    runs = [(_job("x", "A", 1, submit=100.0), []),
            (_job("y", "A", 1, submit=100.0), [(1300.0, 1300.0)]),
            (_job("z", "A", 1, submit=100.0), [(100.0, 200.0), (1000.0, 1200.0)])]
    m = fairshare_summary(_record(runs, states=["waiting", "done", "done"]), SHARES)
    a = m["entities"]["A"]
    assert a["jobs"] == 2.0 and a["mean_wait"] == pytest.approx((1200 + 0) / 2)
    # z: first start 100, end 1200: (0 + 1100) / 1100
    assert a["mean_bounded_slowdown"] == pytest.approx((1200 / 600 + 1.0) / 2)
    # span: last end 1300 - first submission 100 (not + 100)
    assert m["utilisation"] == pytest.approx(300 / (4 * 1200), rel=1e-12)


@pytest.mark.parametrize("length", [0.5, 1.0, 2.0])
def test_a_run_shorter_than_a_second_still_has_a_capacity(length):
    # two nodes of four busy for the whole span: a half; a span of 0 has no capacity
    m = fairshare_summary(_record([(A1, [(0.0, length)])]), SHARES)
    assert m["utilisation"] == pytest.approx(0.5)
    empty = fairshare_summary(_record([(A1, [(0.0, 0.0)])]), SHARES)
    assert empty["utilisation"] == 0.0

"""The schemes memoryless fair share argues against (hard partitions, capping, Slurm's classic
fair share) and omfs-opt's audited victim choice, on hand-built states."""

from __future__ import annotations

import pytest

from bbopt.core import ClusterState, Job, Platform, RunningJob
from bbopt.policies import make_policy
from bbopt.simulation import simulate

HALVES = {"A": 0.5, "B": 0.5}


def _job(jid, user, nodes, submit=0.0, wall=1000.0, **kw):
    return Job(jid, submit, wall, wall, nodes, user=user, **kw)


def _state(t, running, queue, nodes=8, memory=None):
    return ClusterState(t, Platform(nodes=nodes), tuple(RunningJob(j, s) for j, s in running),
                        tuple(queue), memory or {})


def test_capping_never_lets_an_entity_beyond_its_entitlement():
    pol = make_policy("capping", shares=HALVES)
    d = pol.decide(_state(0.0, [(_job("a1", "A", 3), 0.0)],
                          [_job("a2", "A", 2), _job("b1", "B", 2)]))
    # A holds 3 of its 4 nodes: a2 would make 5 and waits on an idle half machine; b1 runs.
    assert d.started_ids == ["b1"]
    # A job larger than any entitlement runs only on an otherwise idle machine.
    assert pol.decide(_state(0.0, [], [_job("big", "A", 6)])).started_ids == ["big"]
    assert pol.decide(_state(0.0, [(_job("b1", "B", 1), 0.0)],
                             [_job("big", "A", 6)])).started_ids == []


def test_partition_keeps_idle_nodes_of_one_entity_from_the_other():
    pol = make_policy("partition", shares=HALVES)
    d = pol.decide(_state(0.0, [(_job("a1", "A", 3), 0.0)],
                          [_job("a2", "A", 2), _job("b1", "B", 4)]))
    assert d.started_ids == ["b1"]  # 4 idle nodes are B's; A's partition has 1 free
    # EASY inside the partition: a short job backfills ahead of A's blocked head.
    d = pol.decide(_state(0.0, [(_job("a1", "A", 3, wall=500), 0.0)],
                          [_job("a2", "A", 2), _job("a3", "A", 1, wall=400)]))
    assert d.started_ids == ["a3"]
    assert [r.job_id for r in d.reservations] == ["a2"]

    # A job larger than its partition ran on the idle machine and spills into B's half: B's
    # partition looks free, but the machine has only 2 idle nodes.
    d = pol.decide(_state(0.0, [(_job("big", "A", 6), 0.0)], [_job("b1", "B", 3),
                                                               _job("b2", "B", 2)]))
    assert d.started_ids == ["b2"]


def test_partition_never_overcommits_after_an_oversize_job():
    jobs = [_job("big", "A", 6, wall=1000.0), _job("b1", "B", 3, submit=10.0),
            _job("b2", "B", 4, submit=20.0)]
    res = simulate(jobs, Platform(nodes=8), "partition", options={"shares": HALVES})
    # b1 (3 nodes) waits for big: only 2 nodes are idle although B's partition is empty
    assert res.start == [0.0, 1000.0, 2000.0]


def test_classic_fair_share_orders_by_decayed_usage():
    pol = make_policy("fair-share", shares=HALVES, half_life=100.0)
    memory = {"time": 0.0, "usage": {"A": 1000.0, "B": 0.0}, "running": {}}
    d = pol.decide(_state(0.0, [(_job("x", "C", 6), 0.0)],
                          [_job("a1", "A", 2), _job("b1", "B", 2)], memory=memory))
    assert d.started_ids == ["b1"]  # A's factor 2^(-1/0.5) = 0.25 < B's 1
    # Decay: after one half-life the usage is halved (plus nothing new: nothing ran).
    usage, _ = pol.usage(_state(100.0, [], [], memory=memory))
    assert usage["A"] == pytest.approx(500.0)
    # Running jobs accrue node-seconds since the last decision.
    usage, _ = pol.usage(_state(100.0, [(_job("b9", "B", 2), 50.0)], [], memory=memory))
    assert usage["B"] == pytest.approx(2 * 50.0)
    f = pol.factor({"A": 1.0, "B": 1.0})
    assert f("A") == pytest.approx(0.5) and f("nobody") == 0.0


def test_omfs_opt_picks_cheaper_victims_than_algorithm_1_and_reports_the_saving():
    # B (no entitlement) runs two checkpointable 4-node jobs: the young one has a 1 GB image
    # (checkpoint + restart 2 x 100 s per node), the old one a 0.1 GB image (2 x 10 s).
    shares = {"A": 0.5, "B": 0.0}
    running = [(_job("b_old", "B", 4, preemptable=True, checkpointable=True,
                     extra={"memory_per_node": 1e8}), 0.0),
               (_job("b_new", "B", 4, preemptable=True, checkpointable=True), 100.0)]
    state = _state(2000.0, running, [_job("a1", "A", 4)])
    opts = {"shares": shares, "quantum": 0.0, "memory_per_node": 1e9,
            "checkpoint_bandwidth": 1e7}
    greedy = make_policy("omfs", **opts).decide(state)
    exact = make_policy("omfs-opt", **opts).decide(state)
    assert greedy.preempt == ("b_new",)  # youngest first
    assert exact.preempt == ("b_old",)  # 4 x 2 x 10 s instead of 4 x 2 x 100 s
    (info,) = exact.alternatives
    assert info["cost"] == pytest.approx(80.0) and info["greedy_cost"] == pytest.approx(800.0)


def test_every_baseline_finishes_a_preemptive_workload():
    jobs = [_job(f"j{i}", "AB"[i % 2], 1 + i % 3, submit=100.0 * i, wall=500.0 + 50 * i,
                 preemptable=True, checkpointable=i % 2 == 0) for i in range(12)]
    for policy in ("partition", "capping", "fair-share", "omfs", "omfs-opt"):
        res = simulate(jobs, Platform(nodes=4), policy, options={"shares": HALVES},
                       execution="checkpoint")
        assert all(s in ("finished", "killed", "dropped") for s in res.state), policy

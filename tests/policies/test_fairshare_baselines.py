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


# -- the baselines' rules at their thresholds ------------------------------------------------------

@pytest.mark.parametrize("name", ["capping", "partition", "fair-share"])
def test_a_baseline_is_named_as_registered_and_reports_a_rule_decision(name):
    from bbopt.core import Status
    from bbopt.policies.fairshare import Capping, ClassicFairShare, Partition

    cls = {"capping": Capping, "partition": Partition, "fair-share": ClassicFairShare}[name]
    import time

    assert cls().name == name and make_policy(name, shares=HALVES).name == name
    pol = make_policy(name, shares=HALVES)
    before = time.perf_counter()
    d = pol.decide(_state(0.0, [], [_job("a1", "A", 1)]))
    spent = time.perf_counter() - before
    assert d.started_ids == ["a1"]
    assert (d.stats.backend, d.stats.status, d.stats.objective) == ("rule", Status.FEASIBLE,
                                                                    None)
    assert 0.0 < d.stats.wall_time <= spent  # the decision's own time


@pytest.mark.parametrize("nodes,started", [(1, True), (2, True), (3, False)])
def test_capping_admits_a_job_up_to_exactly_the_entitlement(nodes, started):
    # A (entitled to 4 of 8) holds 1 + 1 nodes: a job of 2 brings it to exactly 4 and runs,
    # one of 3 would make 5 and waits, although 6 nodes are idle
    running = [(_job("a1", "A", 1), 0.0), (_job("a2", "A", 1), 0.0)]
    d = make_policy("capping", shares=HALVES).decide(
        _state(0.0, running, [_job("a3", "A", nodes)]))
    assert d.started_ids == (["a3"] if started else [])


def test_capping_counts_the_jobs_it_starts_against_the_entitlement():
    # on an idle machine A (4 nodes) gets a1 and a2 (2 + 2), a3 (1 more) would make 5
    d = make_policy("capping", shares=HALVES).decide(_state(
        0.0, [], [_job("a1", "A", 2), _job("a2", "A", 2), _job("a3", "A", 1)]))
    assert d.started_ids == ["a1", "a2"]


def test_capping_runs_a_job_of_exactly_the_entitlement_on_a_busy_machine():
    # 4 nodes = A's whole entitlement: within the cap, not an oversize job that needs an idle
    # machine; a job of an entity without a share is oversize even at 1 node
    busy = [(_job("b1", "B", 1), 0.0)]
    pol = make_policy("capping", shares=HALVES)
    assert pol.decide(_state(0.0, busy, [_job("a1", "A", 4)])).started_ids == ["a1"]
    assert pol.decide(_state(0.0, busy, [_job("z1", "Z", 1)])).started_ids == []
    assert pol.decide(_state(0.0, [], [_job("z1", "Z", 1)])).started_ids == ["z1"]


def test_capping_skips_an_oversize_job_and_looks_at_the_next():
    pol = make_policy("capping", shares=HALVES)
    busy = [(_job("b0", "B", 1), 0.0)]
    # the oversize job waits for an idle machine; the job behind it still runs
    d = pol.decide(_state(0.0, busy, [_job("big", "A", 6), _job("b1", "B", 1)]))
    assert d.started_ids == ["b1"]
    # on an idle machine, not after another job started in the same decision
    d = pol.decide(_state(0.0, [], [_job("b1", "B", 1), _job("big", "A", 6)]))
    assert d.started_ids == ["b1"]


def test_capping_reserves_for_the_first_job_within_its_cap_that_does_not_fit():
    # C (no share) runs an oversize 6-node job until 500: A's 3-node job is within its cap but
    # 2 nodes are idle; it is reserved at 500
    from bbopt.core import Reservation

    d = make_policy("capping", shares=HALVES).decide(_state(
        0.0, [(_job("c1", "C", 6, wall=500.0), 0.0)], [_job("a1", "A", 3)]))
    assert d.started_ids == [] and d.reservations == (Reservation("a1", 500.0),)


NAMED = Platform(nodes=8, bb=100.0, bb_nodes=(50.0, 50.0))


def _named_state(queue, memory=None):
    """Two named BB nodes of 50 B; B's two 1-node jobs of 30 B fill each to 20 B free: 40 B are
    free in the pool, but no BB node holds a 40 B piece."""
    running = (RunningJob(_job("x", "B", 1, bb=30.0), 0.0),
               RunningJob(_job("y", "B", 1, bb=30.0), 0.0))
    return ClusterState(0.0, NAMED, running, tuple(queue), memory or {})


@pytest.mark.parametrize("name", ["capping", "partition", "fair-share", "omfs"])
def test_a_policy_starts_only_a_burst_buffer_the_named_nodes_can_place(name):
    pol = make_policy(name, shares=HALVES)
    assert pol.decide(_named_state([_job("a1", "A", 1, bb=40.0)])).started_ids == []
    assert pol.decide(_named_state([_job("a1", "A", 1, bb=20.0)])).started_ids == ["a1"]
    # two pieces of 20 B: one on each BB node, not both on the first
    d = pol.decide(_named_state([_job("a1", "A", 1, bb=20.0), _job("a2", "A", 1, bb=20.0)]))
    assert d.started_ids == ["a1", "a2"]
    d = pol.decide(_named_state([_job("a1", "A", 1, bb=15.0), _job("a2", "A", 1, bb=25.0)]))
    assert d.started_ids == ["a1"]


@pytest.mark.parametrize("share,started", [(0.125, ["a1", "b1"]), (0.0, ["b1"])])
def test_partition_gives_an_entity_of_one_node_its_partition(share, started):
    # 8 nodes: a share of 1/8 is exactly 1 node; an entity entitled to none is passed over
    # (and the entities after it still run)
    pol = make_policy("partition", shares={"A": share, "B": 0.5})
    d = pol.decide(_state(0.0, [(_job("c", "C", 1), 0.0)], [_job("a1", "A", 1),
                                                             _job("b1", "B", 1)]))
    assert d.started_ids == started


def test_partition_passes_over_an_entity_without_a_share():
    pol = make_policy("partition", shares=HALVES)
    d = pol.decide(_state(0.0, [(_job("b0", "B", 1), 0.0)], [_job("a1", "A", 1),
                                                               _job("Z1", "0", 1)]))
    assert d.started_ids == ["a1"]


def test_partition_starts_and_reserves_in_every_partition():
    # A's 4 nodes: a1 (3 nodes) runs until 500, so a2 (2 nodes) is reserved at 500 and a3
    # starts; B's: b1 (2 nodes) until 800, b2 (3) reserved at 800, b3 starts
    from bbopt.core import Reservation

    running = [(_job("a1", "A", 3, wall=500.0), 0.0), (_job("b1", "B", 2, wall=800.0), 0.0)]
    queue = [_job("a2", "A", 2), _job("a3", "A", 1, wall=400.0), _job("b2", "B", 3),
             _job("b3", "B", 1, wall=700.0)]
    d = make_policy("partition", shares=HALVES).decide(_state(0.0, running, queue))
    assert d.started_ids == ["a3", "b3"]
    assert d.reservations == (Reservation("a2", 500.0), Reservation("b2", 800.0))


@pytest.mark.parametrize("bb,started", [(49.0, ["a1"]), (50.0, ["a1"]), (51.0, [])])
def test_partition_holds_its_share_of_the_burst_buffer(bb, started):
    # 100 B of BB, A's half is 50 B: a job of 50 B fits its partition, one of 51 B never does
    # although the machine has 100 B free
    plat = Platform(nodes=8, bb=100.0)
    state = ClusterState(0.0, plat, (RunningJob(_job("b0", "B", 1), 0.0),),
                         (_job("a1", "A", 1, bb=bb),))
    assert make_policy("partition", shares=HALVES).decide(state).started_ids == started


@pytest.mark.parametrize("first", [_job("wide", "A", 5), _job("deep", "A", 1, bb=60.0)])
def test_partition_gives_no_reservation_to_a_job_its_partition_can_never_hold(first):
    # A's partition: 4 nodes and 50 B. A job wider or deeper than that is passed over, and
    # the reservation goes to a2, which waits only for a1 (until 500)
    from bbopt.core import Reservation

    plat = Platform(nodes=8, bb=100.0)
    state = ClusterState(0.0, plat, (RunningJob(_job("a1", "A", 2, wall=500.0), 0.0),
                                     RunningJob(_job("b0", "B", 1), 0.0)),
                         (first, _job("a2", "A", 3), _job("a3", "A", 2, wall=800.0)))
    d = make_policy("partition", shares=HALVES).decide(state)
    assert d.reservations == (Reservation("a2", 500.0),)
    assert d.started_ids == []  # a3 ends after 500 and would take a node a2 needs there


def test_partition_drains_only_a_job_the_machine_can_hold():
    pol = make_policy("partition", shares=HALVES)
    plat = Platform(nodes=8, bb=100.0)
    for job in (_job("wide", "A", 9), _job("deep", "A", 1, bb=101.0)):
        assert pol.decide(ClusterState(0.0, plat, (), (job,))).started_ids == []
    assert pol.decide(ClusterState(0.0, plat, (), (_job("ok", "A", 8, bb=100.0),))
                      ).started_ids == ["ok"]


# -- Slurm's classic fair share: usage, decay, factor ----------------------------------------------

def test_half_life_must_be_positive():
    from bbopt.policies.fairshare import ClassicFairShare

    for bad in (0.0, -1.0):
        with pytest.raises(ValueError, match="half_life must be positive, got"):
            ClassicFairShare(shares=HALVES, half_life=bad)
    assert ClassicFairShare(shares=HALVES, half_life=0.5).half_life == 0.5


def test_usage_decays_by_the_time_since_the_last_decision():
    # last decision at 100, now 200, half-life 100: halved once (not by 2^-(200+100)/100)
    pol = make_policy("fair-share", shares=HALVES, half_life=100.0)
    memory = {"time": 100.0, "usage": {"A": 1000.0}, "running": {}}
    usage, _ = pol.usage(_state(200.0, [], [], memory=memory))
    assert usage == {"A": 500.0}
    # a second decision at the same instant leaves the usage as it is
    usage, _ = pol.usage(_state(100.0, [], [], memory=memory))
    assert usage == {"A": 1000.0}


def test_usage_accrues_each_job_since_the_last_decision_and_ended_jobs_until_their_end():
    pol = make_policy("fair-share", shares=HALVES, half_life=1e12)
    # at the last decision (100) "gone" (B, 3 nodes, expected end 150) and "a1" ran; now (200)
    # a1 and a2 (A, 2 + 1 nodes) run and "gone" has ended: B accrues 3 x 50, A 2 x 100 + 1 x 50,
    # a job starting now accrues nothing (and gives its entity no entry)
    memory = {"time": 100.0, "usage": {},
              "running": {"gone": ("B", 3, 0.0, 150.0), "a1": ("A", 2, 0.0, 5000.0)}}
    running = [(_job("a1", "A", 2, wall=5000.0), 0.0), (_job("a2", "A", 1), 150.0),
               (_job("c1", "C", 1), 200.0)]
    usage, current = pol.usage(_state(200.0, running, [], memory=memory))
    assert usage == pytest.approx({"A": 250.0, "B": 150.0})
    assert set(usage) == {"A", "B"}
    assert current == {"a1": ["A", 2, 0.0, 5000.0], "a2": ["A", 1, 150.0, 1150.0],
                       "c1": ["C", 1, 200.0, 1200.0]}


def test_factor_uses_normalised_shares_and_shares_of_usage():
    # shares of 1/4 each normalise to S = 1/3 (not 1/4); A has used 1 of 4 units: U = 1/4, so
    # 2^(-3/4); B 2^(-9/4); C, with a share and no usage, 2^0 = 1
    pol = make_policy("fair-share", shares={"A": 0.25, "B": 0.25, "C": 0.25})
    f = pol.factor({"A": 1.0, "B": 3.0})
    assert f("A") == pytest.approx(2 ** -(0.25 / (1 / 3)))
    assert f("B") == pytest.approx(2 ** -(0.75 / (1 / 3)))
    assert f("C") == 1.0
    # a total usage below one node-second is still shared out: U = 1, 2^(-1/0.5)
    assert make_policy("fair-share", shares=HALVES).factor({"A": 0.5})("A") == 0.25
    # no usage at all: every entity with a share gets factor 1
    assert pol.factor({})("A") == 1.0 and pol.factor({"A": 0.0})("A") == 1.0


def test_fair_share_remembers_time_usage_and_running_jobs_and_reserves():
    from bbopt.core import Reservation

    pol = make_policy("fair-share", shares=HALVES, half_life=100.0)
    memory = {"time": 0.0, "usage": {"A": 100.0}, "running": {}}
    d = pol.decide(_state(100.0, [(_job("b0", "B", 6, wall=900.0), 0.0)],
                          [_job("a1", "A", 4), _job("b1", "B", 1)], memory=memory))
    # A's usage halves to 50, B accrues 6 x 100 = 600: A's factor is the higher, a1 (4 nodes)
    # comes first and is reserved at b0's end (900); b1 (1 node, ending at 1100) backfills on
    # the 4 nodes a1 leaves free there
    assert d.memory == {"time": 100.0, "usage": pytest.approx({"A": 50.0, "B": 600.0}),
                        "running": {"b0": ["B", 6, 0.0, 900.0]}}
    assert d.started_ids == ["b1"]
    assert d.reservations == (Reservation("a1", 900.0),)


# -- EASY inside the baselines: what a late backfill may take ------------------------------------

@pytest.mark.parametrize("wall2,started", [(1000.0, ["b1"]), (500.0, ["b1", "b2"]),
                                           (400.0, ["b1", "b2"])])
def test_late_backfills_share_the_nodes_spare_at_the_reservation(wall2, started):
    # 8 nodes (A entitled to 6, B to 2): c1 (no share) holds 5 nodes until 500, 1 more runs
    # on. a1 (6 nodes) is reserved at 500, where 7 - 6 = 1 node is spare: b1 (ending at 1000)
    # takes it; b2 starts only if it ends by 500 (exactly at it included)
    from bbopt.core import Reservation

    shares = {"A": 0.75, "B": 0.25}
    running = [(_job("c1", "C", 5, wall=500.0), 0.0), (_job("c2", "C", 1, wall=5000.0), 0.0)]
    d = make_policy("capping", shares=shares).decide(_state(
        0.0, running, [_job("a1", "A", 6), _job("b1", "B", 1), _job("b2", "B", 1, wall=wall2)]))
    assert d.started_ids == started and d.reservations == (Reservation("a1", 500.0),)


def test_late_backfills_share_the_burst_buffer_spare_at_the_reservation():
    # 100 B: c1 holds 6 nodes and 60 B until 500. a1 (2 nodes, 90 B) is reserved at 500, where
    # 10 B are spare: b1 (10 B, ending at 1000) takes them, b2 (10 B more) waits
    from bbopt.core import Reservation

    plat = Platform(nodes=8, bb=100.0)
    state = ClusterState(0.0, plat, (RunningJob(_job("c1", "C", 6, wall=500.0, bb=60.0), 0.0),),
                         (_job("a1", "A", 2, bb=90.0), _job("b1", "B", 1, bb=10.0),
                          _job("b2", "B", 1, bb=10.0)))
    d = make_policy("capping", shares=HALVES).decide(state)
    assert d.started_ids == ["b1"] and d.reservations == (Reservation("a1", 500.0),)


def test_each_start_takes_its_burst_buffer_from_what_is_free():
    # 40 B free: b1 takes 30, b2 (20 B) no longer fits and holds the reservation (c1's end)
    from bbopt.core import Reservation

    plat = Platform(nodes=8, bb=100.0)
    state = ClusterState(0.0, plat, (RunningJob(_job("c1", "C", 1, wall=500.0, bb=60.0), 0.0),),
                         (_job("b1", "B", 1, bb=30.0), _job("b2", "B", 1, bb=20.0)))
    d = make_policy("capping", shares=HALVES).decide(state)
    assert d.started_ids == ["b1"] and d.reservations == (Reservation("b2", 500.0),)

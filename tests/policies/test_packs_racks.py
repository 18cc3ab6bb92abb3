"""List and pack scheduling on a platform of several racks, one I/O node each (Jeannot et al.,
"Machine Model": "extending it to several racks ... is straightforward"): every job runs inside
one rack, the strict (list) or average (pack) constraint holds on each rack's I/O node, each
rack has its own sequence of packs, and transfers never overlap on one I/O node."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt import Platform, simulate
from bbopt.core import rack_sizes
from bbopt.errors import InputError
from bbopt.policies.packs import average_bandwidth
from bbopt.simulation.exclusive_io import ExclusiveIO, io_node_usage, time_alone
from bbopt.workloads.generators.jeannot import generate
from tests._periodic import B, periodic

POLICIES = [("io-list", {}), ("io-list", {"backfill": "greedy"}), ("pack-max", {}),
            ("pack-char", {}), ("pack-opt", {"budget": 5.0})]


def run(jobs, policy, nodes, racks, **options):
    model = ExclusiveIO(racks=racks)
    decisions = []
    res = simulate(jobs, Platform(nodes=nodes), policy, options={"racks": racks, **options},
                   execution=model, on_decision=lambda s, d: decisions.append(d))
    return res, model, decisions


def test_rack_sizes():
    assert rack_sizes(2, 8) == [4, 4]
    assert rack_sizes(3, 8) == [3, 3, 2]
    assert rack_sizes([5, 3], 8) == [5, 3]
    with pytest.raises(InputError, match="sum"):
        rack_sizes([5, 2], 8)
    with pytest.raises(InputError, match="racks"):
        rack_sizes(9, 8)


def test_io_list_uses_both_io_nodes():
    """Four 2-node applications of average bandwidth 0.6 b on 8 nodes. With one I/O node the
    strict constraint runs them one at a time; with two racks of 4 nodes, one per rack at a
    time, each on its own I/O node: twice as fast, and no transfer ever waits."""
    jobs = [periodic(f"A{i}", 4, 4.0, 6.0, nodes=2) for i in range(4)]
    assert average_bandwidth(jobs[0], B) == pytest.approx(0.6 * B)
    one, _, _ = run(jobs, "io-list", 8, 1)
    assert one.start == [0.0, 40.0, 80.0, 120.0]
    two, model, decisions = run(jobs, "io-list", 8, 2)
    assert two.start == [0.0, 0.0, 40.0, 40.0]
    assert max(two.end) == 80.0
    assert [two.allocation[k] for k in range(4)] == [(0, 1), (4, 5), (0, 1), (4, 5)]
    assert sorted({r for _, r, _, _ in model.transfers}) == [0, 1]
    assert all(end - start == pytest.approx(6.0) for _, _, start, end in model.transfers)
    assert model.due == [s for _, _, s, _ in model.transfers]  # no FIFO wait
    assert decisions[0].memory == {"racks": [{}, {}]}
    # A2 is the head on both racks: one reservation, the earliest (A0 and A1 end at 40)
    assert [(r.job_id, r.start) for r in decisions[0].reservations] == [("A2", 40.0)]


def test_pack_max_builds_one_pack_sequence_per_rack():
    """Two racks of 4 nodes. L1, L2: 2 nodes, T = 40 with 20 s of I/O; S1..S4: 2 nodes, T = 10
    with 8 s of I/O. Rack 0 decides first: Max order packs L1 and L2 (40 s of I/O in a 40 s pack:
    the average constraint is tight), no S fits beside them (48 > 40) nor backfills later. Rack 1
    packs S1 alone (S2 would make 16 s of I/O in a 10 s pack), then S2, S3, S4 one pack each.
    On one 8-node rack the S would wait for L1 and L2 (the pack's I/O node is already full)."""
    ls = [periodic(f"L{i}", 2, 10.0, 10.0, nodes=2) for i in (1, 2)]
    ss = [periodic(f"S{i}", 1, 2.0, 8.0, nodes=2) for i in (1, 2, 3, 4)]
    res, model, decisions = run([*ls, *ss], "pack-max", 8, 2)
    assert res.start == [0.0, 0.0, 0.0, 10.0, 20.0, 30.0]
    assert res.allocation[:3] == [(0, 1), (2, 3), (4, 5)]
    assert all(res.allocation[k] == (4, 5) for k in range(2, 6))
    assert res.end[:2] == [40.0, 50.0]  # L2's transfers wait behind L1's on rack 0's I/O node
    assert {r for k, r, _, _ in model.transfers if k >= 2} == {1}
    packs = {(m["pack_start"], tuple(m["pack"])) for d in decisions if d.memory
             for m in d.memory["racks"] if m}
    assert packs == {(0.0, ("L1", "L2")), (0.0, ("S1",)), (10.0, ("S2",)), (20.0, ("S3",)),
                     (30.0, ("S4",))}
    one, _, _ = run([*ls, *ss], "pack-max", 8, 1)
    assert min(one.start[2:]) == 50.0


@pytest.mark.parametrize(("policy", "options"), POLICIES,
                         ids=[p + "-" + "-".join(map(str, o.values())) for p, o in POLICIES])
def test_generated_workload_on_two_racks(policy, options):
    """A Uniform workload sized for a 1,024-node rack, run on two such racks: every job inside
    one rack, never more nodes than a rack has, one transfer at a time per I/O node, every job
    ends; list scheduling keeps the strict constraint on each rack's I/O node."""
    wl = generate(40, alpha=0.5, protocol="uniform", io_profile="normal", nodes=1024, seed=5)
    res, model, _ = run(wl.jobs, policy, 2048, 2, **options)
    assert res.state == ["finished"] * 40
    rack = []
    for k, job in enumerate(wl.jobs):
        alloc = res.allocation[k]
        assert len(alloc) == job.nodes
        assert len({i // 1024 for i in alloc}) == 1
        rack.append(alloc[0] // 1024)
        assert res.end[k] - res.start[k] >= time_alone(job) * (1 - 1e-9)
    assert set(rack) == {0, 1}  # both racks used
    for node in io_node_usage(model.transfers, 2):
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(node, node[1:], strict=False))
    events = sorted({*res.start, *res.end})
    for t in events:
        on = [k for k in range(40) if res.start[k] <= t < res.end[k]]
        for r in (0, 1):
            here = [k for k in on if rack[k] == r]
            assert sum(wl.jobs[k].nodes for k in here) <= 1024
            if policy == "io-list":
                bw = sum(average_bandwidth(wl.jobs[k], wl.bandwidth) for k in here)
                assert bw <= wl.bandwidth * (1 + 1e-6)


def test_a_job_wider_than_every_rack_is_an_input_error():
    jobs = [periodic("W", 1, 1.0, 1.0, nodes=5)]
    with pytest.raises(InputError, match="largest rack"):
        run(jobs, "pack-max", 8, 2)
    assert np.all(np.asarray(rack_sizes(2, 8)) == 4)


def test_a_rack_decision_places_each_start_in_its_rack_and_reports_every_rack():
    """8 nodes in two racks of 4. R runs on nodes 4 and 5 (rack 1); U, whose nodes are not
    known, is counted on rack 0. io-list starts X (3 nodes) on rack 0's free nodes 1-3 and Y
    (2 nodes) on rack 1's 6 and 7; Z (2 nodes) finds room on neither. Without R, and U's nodes
    unknown (none marked busy), the packs take rack 0's first nodes and all of rack 1. The
    decision reports both racks: FEASIBLE from the lists, OPTIMAL when every rack's pack is
    optimal."""
    from bbopt import ClusterState, RunningJob, decide
    from bbopt.core import Status

    r = periodic("R", 1, 9.0, 1.0, nodes=2)
    u = periodic("U", 1, 9.0, 1.0)
    queue = (periodic("X", 1, 4.0, 1.0, nodes=3), periodic("Y", 1, 4.0, 1.0, nodes=2),
             periodic("Z", 1, 4.0, 1.0, nodes=2))
    state = ClusterState(0.0, Platform(nodes=8), running=(
        RunningJob(r, 0.0, (4, 5)), RunningJob(u, 0.0, (0,))), queue=queue)
    d = decide(state, "io-list", racks=2)
    assert [(s.job_id, s.nodes) for s in d.start] == [("X", (1, 2, 3)), ("Y", (6, 7))]
    assert (d.stats.backend, d.stats.status) == ("2-racks", Status.FEASIBLE)
    assert 0.0 <= d.stats.wall_time < 3600.0
    state = ClusterState(0.0, Platform(nodes=8), running=(RunningJob(u, 0.0),), queue=queue)
    d = decide(state, "pack-opt", racks=2, backend="exhaustive")
    assert [(s.job_id, s.nodes) for s in d.start] == [("X", (0, 1, 2)), ("Y", (4, 5)),
                                                      ("Z", (6, 7))]
    assert (d.stats.backend, d.stats.status) == ("2-racks", Status.OPTIMAL)
    wide = ClusterState(0.0, Platform(nodes=8), queue=(periodic("W", 1, 1.0, 1.0, nodes=7),))
    with pytest.raises(InputError, match="job W needs 7 nodes, more than the largest rack "
                                         r"\(6\)") as e:
        decide(wide, "pack-max", racks=[6, 2])
    assert e.value.field == "racks"


def test_each_rack_keeps_its_own_pack_across_decisions():
    """Two racks of 4. Rack 0's pack {A} (planned to end at 10) runs on nodes 0-1: at 2, X
    (2 nodes, T = 20) cannot be backfilled into it (it would end at 22) and rack 1, which has
    no pack, takes X as a pack of its own; rack 0's memory is kept as it was."""
    from bbopt import ClusterState, RunningJob, decide

    a = periodic("A", 1, 9.0, 1.0, nodes=2)
    pack = {"pack": ["A"], "pack_start": 0.0, "pack_end": 10.0, "pack_io": 1.0, "pack_no": 1,
            "backfilled": []}
    x = periodic("X", 1, 19.0, 1.0, nodes=2)
    state = ClusterState(2.0, Platform(nodes=8), running=(RunningJob(a, 0.0, (0, 1)),),
                         queue=(x,), memory={"racks": [pack, {}]})
    d = decide(state, "pack-max", racks=2)
    assert [(s.job_id, s.nodes) for s in d.start] == [("X", (4, 5))]
    assert d.memory["racks"][0] == pack
    assert d.memory["racks"][1]["pack"] == ["X"]
    assert d.stats.wall_time > 0.0


def test_a_rack_sees_its_own_slice_of_the_nodes_local_ssd():
    """The slices given to each rack are the rack's own (4 + 4 entries: a slice of another
    length is not a platform)."""
    from bbopt import ClusterState, decide

    state = ClusterState(0.0, Platform(nodes=8, node_ssd=(1.0,) * 8),
                         queue=(periodic("X", 1, 1.0, 1.0, nodes=2),))
    for racks in (2, [6, 2], [2, 6]):
        assert [s.job_id for s in decide(state, "io-list", racks=racks).start] == ["X"]


@pytest.mark.parametrize("policy", ["io-list", "pack-max"])
def test_a_rack_left_with_nothing_to_decide_is_skipped(policy):
    """One application on two racks: rack 0 starts it, and rack 1, with an empty queue and
    nothing running, has no job to read the I/O node's bandwidth from; it decides nothing (this
    was an input error asking for the 'bandwidth' option)."""
    res, _, _ = run([periodic("A", 1, 1.0, 1.0)], policy, 8, 2)
    assert res.start == [0.0] and res.end == [2.0]


@pytest.mark.parametrize("policy", ["io-list", "pack-max"])
def test_a_rack_after_one_with_nothing_to_decide_still_decides(policy):
    """Two racks of 4, nothing waits: rack 0 is idle (skipped), rack 1 runs A. Rack 1 still
    decides (the list, or backfilling into its pack) and the decision reports its FEASIBLE
    status, not the OPTIMAL of a decision where no rack decided."""
    from bbopt import ClusterState, RunningJob, decide
    from bbopt.core import Status

    a = periodic("A", 1, 9.0, 1.0, nodes=2)
    pack = {"pack": ["A"], "pack_start": 0.0, "pack_end": 10.0, "pack_io": 1.0, "pack_no": 1,
            "backfilled": []}
    state = ClusterState(2.0, Platform(nodes=8), running=(RunningJob(a, 0.0, (4, 5)),),
                         memory={"racks": [{}, pack]})
    d = decide(state, policy, racks=2)
    assert d.start == () and d.memory == {"racks": [{}, pack]}
    assert (d.stats.backend, d.stats.status) == ("2-racks", Status.FEASIBLE)
    idle = decide(ClusterState(2.0, Platform(nodes=8)), policy, racks=2, bandwidth=1e9)
    assert (idle.start, idle.stats.status) == ((), Status.OPTIMAL)


def test_a_rack_out_of_time_makes_the_whole_decision_a_fallback():
    """Rack 0 backfills its running pack (FEASIBLE); rack 1 forms a pack with the exact builder
    but the caller asked 0.95 s ago for a 1 s decision, past the model's reading deadline: its
    pack is the greedy fallback, and the two racks' decision is FALLBACK, the worst of the
    racks' statuses."""
    import time

    from bbopt import ClusterState, RunningJob, make_policy
    from bbopt.core import Status, decision_asked

    a = periodic("A", 1, 9.0, 1.0, nodes=2)
    pack = {"pack": ["A"], "pack_start": 0.0, "pack_end": 10.0, "pack_io": 1.0, "pack_no": 1,
            "backfilled": []}
    x = periodic("X", 1, 19.0, 1.0, nodes=2)
    state = ClusterState(2.0, Platform(nodes=8), running=(RunningJob(a, 0.0, (0, 1)),),
                         queue=(x,), memory={"racks": [pack, {}]})
    policy = make_policy("pack-opt", racks=2, budget=1.0, backend="exhaustive")
    with decision_asked(time.perf_counter() - 0.95):
        d = policy.decide(state)
    assert [(s.job_id, s.nodes) for s in d.start] == [("X", (4, 5))]
    assert (d.stats.backend, d.stats.status) == ("2-racks", Status.FALLBACK)

"""I/O-aware list scheduling and pack scheduling under exclusive I/O: hand-built cases and the
invariants of packs (members start together, the average constraint, no overlap of packs,
backfilled jobs never delay the next pack) and of the strict constraint."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bbopt import ClusterState, Job, Platform, RunningJob, decide, simulate
from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.policies import available_policies
from bbopt.policies.packs import (
    IOList,
    average_bandwidth,
    io_bandwidth,
    time_and_io,
    without_bb,
)
from bbopt.simulation.exclusive_io import ExclusiveIO, time_alone
from bbopt.workloads.generators.jeannot import generate
from tests._periodic import B, periodic

PACKS = ("pack-random", "pack-max", "pack-char", "pack-opt", "pack-opt-char")


def run(jobs, policy, nodes=4, **options):
    decisions = []
    res = simulate(jobs, Platform(nodes=nodes), policy, options=options or None,
                   execution=ExclusiveIO(), on_decision=lambda s, d: decisions.append((s, d)))
    return res, decisions


def packs_of(decisions):
    """pack number -> (start, planned end, members, backfilled, admitted I/O seconds)."""
    packs = {}
    for _, d in decisions:
        mem = d.memory or {}
        if "pack_no" not in mem:
            continue
        no = mem["pack_no"]
        if no not in packs:
            packs[no] = (mem["pack_start"], mem["pack_end"], list(mem["pack"]), [], 0.0)
        start, end, members, _, _ = packs[no]
        packs[no] = (start, end, members, list(mem["backfilled"]), mem["pack_io"])
    return packs


def test_policies_are_registered():
    names = available_policies()
    for name in ("io-list", *PACKS):
        assert name in names


def test_pack_max_builds_packs_by_length_and_waits_for_the_last_member():
    """4 nodes. Max order: C (T=12) and A (T=8) fill the nodes (2 + 2); B (T=4, 1 node) waits
    for the next pack although A ends at 8: backfilling needs B to end by 12, 8 + 4 = 12 fits.
    Without backfilling the I/O phases never meet (A's at 7-8, C's at 11-12)."""
    a = periodic("A", 1, 7.0, 1.0, nodes=2)
    b = periodic("B", 1, 3.0, 1.0, nodes=1)
    c = periodic("C", 1, 11.0, 1.0, nodes=2)
    res, decisions = run([a, b, c], "pack-max", backfill=False)
    # A and C: one pack at 0; C's I/O waits for A? A requests at 7, C at 11: no conflict.
    assert res.start == [0.0, 12.0, 0.0]
    assert res.end == [8.0, 16.0, 12.0]
    res, decisions = run([a, b, c], "pack-max")
    assert res.start == [0.0, 8.0, 0.0]  # backfilled at 8 into A's nodes: ends at 12
    packs = packs_of(decisions)
    assert sorted(packs[1][2]) == ["A", "C"] and packs[1][3] == ["B"]


def test_average_constraint_forms_the_packs():
    """Two I/O-heavy jobs (T = 10, u = 6 each) cannot share a pack (12 > 10); a light one can."""
    h1 = periodic("H1", 2, 2.0, 3.0)
    h2 = periodic("H2", 2, 2.0, 3.0)
    light = periodic("L", 1, 9.0, 1.0)
    res, decisions = run([h1, h2, light], "pack-max", backfill=False)
    assert res.start[0] == 0.0 and res.start[2] == 0.0
    # H2 is the next pack, when the last member ends: L's I/O (due at 9) waits for H1's second
    # transfer (7-10), so L ends at 11
    assert res.end[2] == 11.0
    assert res.start[1] == 11.0
    # list scheduling uses the strict constraint: 0.6 + 0.6 > 1 -> H2 waits too, L (0.1) fits
    res, _ = run([h1, h2, light], "io-list")
    assert res.start == [0.0, pytest.approx(res.end[0]), 0.0]


def test_io_list_backfills_under_nodes_and_bandwidth():
    """Head H needs 4 nodes; A runs on 2 until 10. Short S (T=5) backfills (ends before 10);
    long L (T=20, 2 nodes) does not (it would hold H's nodes)."""
    a = periodic("A", 1, 9.0, 1.0, nodes=2)
    h = periodic("H", 1, 9.0, 1.0, nodes=4)
    s = periodic("S", 1, 4.0, 1.0, nodes=1)
    big = periodic("L", 1, 19.0, 1.0, nodes=2)
    res, decisions = run([a, h, big, s], "io-list")
    assert res.start[0] == 0.0 and res.start[3] == 0.0
    assert res.start[1] == 10.0
    assert res.start[2] >= 20.0
    first = decisions[0][1]
    assert [(r.job_id, r.start) for r in first.reservations] == [("H", 10.0)]
    res, _ = run([a, h, big, s], "io-list", backfill=False)
    assert res.start[3] == 20.0  # behind H and L in FCFS order
    # greedy list scheduling (Garey & Graham): no reservation, L passes H at once and delays
    # it to 20; S waits for a free node (A's, at 10)
    res, decisions = run([a, h, big, s], "io-list", backfill="greedy")
    assert res.start == [0.0, 20.0, 0.0, 10.0]
    assert not decisions[0][1].reservations
    with pytest.raises(InputError, match="backfill"):
        run([a], "io-list", backfill="eager")


def test_greedy_io_list_skips_a_job_over_the_bandwidth():
    """Strict constraint in the greedy list: X's average bandwidth (0.9 b) does not fit beside
    A's (0.5 b), so Y (0.1 b) behind it starts first, and X only once A has ended."""
    a = periodic("A", 1, 5.0, 5.0, nodes=1)   # average 0.5 b
    x = periodic("X", 1, 1.0, 9.0, nodes=1)   # average 0.9 b
    y = periodic("Y", 1, 9.0, 1.0, nodes=1)   # average 0.1 b
    res, _ = run([a, x, y], "io-list", backfill="greedy")
    assert res.start[0] == 0.0 and res.start[2] == 0.0
    assert res.start[1] == res.end[0] == 10.0


def test_missing_bandwidth_is_a_clear_error():
    job = Job("x", 0, walltime=10, nodes=1)
    with pytest.raises(InputError, match="bandwidth"):
        decide(ClusterState(0.0, Platform(nodes=4), queue=(job,)), "pack-max")


job_st = st.tuples(st.integers(1, 4), st.integers(1, 8), st.integers(0, 6), st.integers(1, 4),
                   st.sampled_from([0, 0, 0, 5, 30]))


@settings(max_examples=25, deadline=None)
@given(specs=st.lists(job_st, min_size=1, max_size=12), policy=st.sampled_from(PACKS))
# j4, backfilled at 6 into the first pack (planned to end at 8, its end), takes 4 s instead of 2
# behind the members' exclusive I/O and ends at 10; the members end at 9, and the second pack's
# 3 nodes are free only when j4 ends (found under a rotated seed)
@example(specs=[(1, 1, 0, 1, 0), (1, 1, 0, 1, 0), (1, 1, 0, 3, 0), (1, 1, 1, 2, 0),
                (1, 1, 1, 2, 0), (1, 3, 0, 2, 0), (2, 1, 3, 1, 0)], policy="pack-max")
def test_pack_invariants(specs, policy):
    jobs = [periodic(f"j{i}", n, float(w), float(io), nodes=q, submit=float(s))
            for i, (n, w, io, q, s) in enumerate(specs)]
    res, decisions = run(jobs, policy)
    assert res.state == ["finished"] * len(jobs)
    k_of = {j.id: k for k, j in enumerate(jobs)}
    packs = packs_of(decisions)
    seen = [j for p in packs.values() for j in p[2] + p[3]]
    assert sorted(seen) == sorted(j.id for j in jobs)  # every job in exactly one pack
    prev_members_end, prev_backfilled_ends = 0.0, []
    for no in sorted(packs):
        start, end, members, backfilled, io = packs[no]
        assert all(res.start[k_of[j]] == start for j in members)  # members start together
        assert start >= prev_members_end  # no pack before the previous pack's last member ends
        if all(j.submit == 0 for j in jobs) and no > 1:
            # static batch: the next pack starts right then, or, when a job backfilled into the
            # previous pack overran its plan (I/O contention) and holds nodes, when one such ends
            assert start == prev_members_end or start in [
                t for t in prev_backfilled_ends if t > prev_members_end]
        ts = [time_and_io(jobs[k_of[j]], B) for j in members + backfilled]
        assert end == pytest.approx(start + max(t for t, _ in ts[:len(members)]))
        assert sum(u for _, u in ts) <= (end - start) * (1 + 1e-9)  # average constraint
        for j in backfilled:  # backfilled: later, and planned to end before the pack does
            k = k_of[j]
            assert start <= res.start[k]
            assert res.start[k] + time_alone(jobs[k]) <= end * (1 + 1e-9)
        prev_members_end = max(res.end[k_of[j]] for j in members)
        prev_backfilled_ends = [res.end[k_of[j]] for j in backfilled]


@settings(max_examples=25, deadline=None)
@given(specs=st.lists(job_st, min_size=1, max_size=12))
def test_io_list_strict_constraint(specs):
    jobs = [periodic(f"j{i}", n, float(w), float(io), nodes=q, submit=float(s))
            for i, (n, w, io, q, s) in enumerate(specs)]
    res, _ = run(jobs, "io-list")
    assert res.state == ["finished"] * len(jobs)
    for t in sorted(set(res.start)):
        on = [k for k in range(len(jobs)) if res.start[k] <= t < res.end[k]]
        assert sum(average_bandwidth(jobs[k], B) for k in on) <= B * (1 + 1e-9)
        assert sum(jobs[k].nodes for k in on) <= 4


@pytest.mark.parametrize("policy", ["io-list", *PACKS])
def test_generated_workload_runs_to_the_end(policy):
    wl = generate(40, alpha=0.3, protocol="uniform", io_profile="binormal", seed=3)
    res = simulate(wl.jobs, Platform(nodes=wl.nodes), policy, execution="exclusive-io")
    assert res.state == ["finished"] * 40
    for k, job in enumerate(wl.jobs):
        assert res.end[k] - res.start[k] >= time_alone(job) * (1 - 1e-9)


def test_exact_packs_pack_at_least_as_much_work_as_max_at_the_first_pack():
    wl = generate(60, alpha=0.5, protocol="mira", io_profile="binormal", seed=2)
    firsts = {}
    for policy in ("pack-max", "pack-opt"):
        d = decide(ClusterState(0.0, Platform(nodes=wl.nodes), queue=tuple(wl.jobs)), policy)
        by_id = {j.id: j for j in wl.jobs}
        firsts[policy] = sum(by_id[s.job_id].nodes * time_alone(by_id[s.job_id])
                             for s in d.start)
    assert firsts["pack-opt"] >= firsts["pack-max"] * (1 - 1e-9)


def test_dynamic_trace_packs_form_at_boundaries_and_backfill_arrivals():
    """Jobs arriving over time (the policy's dynamic reading). 4 nodes, pack-max.

    t=0: only A (2 nodes, T=10) waits: pack 1 = {A}, planned end 10. t=2: X (1 node, T=5)
    arrives and ends by 10 within the pack's average constraint: backfilled at 2. t=3: Y (1 node,
    T=8) would end at 11 > 10: waits. t=4: W (3 nodes, T=2) does not fit the 1 idle node (nor the
    2 idle after X ends at 7): waits. t=10: A ends, pack 2 = {Y, W} from the queue. t=20: Z
    arrives with nothing running and starts a pack at once."""
    a = periodic("A", 1, 9.0, 1.0, nodes=2)
    x = periodic("X", 1, 4.0, 1.0, submit=2.0)
    y = periodic("Y", 1, 7.0, 1.0, submit=3.0)
    w = periodic("W", 1, 1.0, 1.0, nodes=3, submit=4.0)
    z = periodic("Z", 1, 1.0, 1.0, submit=20.0)
    res, decisions = run([a, x, y, w, z], "pack-max")
    assert res.start == [0.0, 2.0, 10.0, 10.0, 20.0]
    assert res.end == [10.0, 7.0, 18.0, 12.0, 22.0]
    packs = packs_of(decisions)
    assert [(p[0], sorted(p[2]), p[3]) for _, p in sorted(packs.items())] == [
        (0.0, ["A"], ["X"]), (10.0, ["W", "Y"], []), (20.0, ["Z"], [])]


# --- io-list's decision, hand-computed on one state -------------------------------------------
# Jobs without ``extra["io"]`` plan with ``bandwidth x nodes`` as their average I/O bandwidth
# (``flat``: a share of b), so the shares are exact and the thresholds can be met exactly.


def flat(id_, nodes, walltime, share):
    """A job of ``nodes`` nodes and ``walltime`` seconds whose average bandwidth is
    ``share x b``."""
    return Job(id_, 0, walltime=walltime, runtime=walltime, nodes=nodes,
               bandwidth=share * B / nodes)


def decide_list(running, queue, nodes=4, now=0.0, **options):
    """io-list's decision at ``now``: (started ids, [(reserved id, time)], the decision)."""
    state = ClusterState(now, Platform(nodes=nodes),
                         running=tuple(RunningJob(j, s) for j, s in running), queue=tuple(queue))
    d = decide(state, "io-list", bandwidth=B, **options)
    return [s.job_id for s in d.start], [(r.job_id, r.start) for r in d.reservations], d


#: b(1 + 1e-9) - b/2: with a running job of b/2, a job of this average bandwidth fills the
#: strict constraint's cap exactly (the sum is the cap, to the last bit).
AT_CAP = 500000001.0000001


def test_io_list_strict_constraint_at_just_above_and_just_below_the_cap():
    a = flat("A", 1, 10, 0.5)
    for x, fits in ((Job("X", 0, walltime=10, nodes=1, bandwidth=AT_CAP), True),
                    (Job("X", 0, walltime=10, nodes=1, bandwidth=AT_CAP * (1 + 1e-9)), False),
                    (flat("X", 1, 10, 0.5), True), (flat("X", 1, 10, 0.51), False)):
        for backfill in ("none", "greedy", "easy"):
            # as the head (FCFS), and behind a head that waits for nodes (greedy and EASY)
            started, _, _ = decide_list([(a, 0.0)], [x], backfill=backfill)
            assert started == (["X"] if fits else [])
            if backfill != "none":
                started, _, _ = decide_list([(a, 0.0)], [flat("H", 4, 10, 0.1), x],
                                            backfill=backfill)
                assert started == (["X"] if fits else [])


def test_io_list_nodes_at_and_just_above_the_free_ones():
    r = flat("R", 2, 10, 0.1)
    for backfill in ("none", "greedy", "easy"):
        assert decide_list([(r, 0.0)], [flat("X", 2, 5, 0.1)], backfill=backfill)[0] == ["X"]
        assert decide_list([(r, 0.0)], [flat("X", 3, 5, 0.1)], backfill=backfill)[0] == []
        if backfill != "none":  # behind a head of 4 nodes: a job of 2 ends before it, 3 waits
            queue = [flat("H", 4, 5, 0.1), flat("X", 3, 5, 0.1), flat("Y", 2, 5, 0.1)]
            assert decide_list([(r, 0.0)], queue, backfill=backfill)[0] == ["Y"]


def test_io_list_fcfs_adds_up_the_started_jobs_bandwidths():
    """0.4 b each: the first two start (0.8 b), the third would make 1.2 b."""
    queue = [flat(k, 1, 10, 0.4) for k in "ABC"]
    for backfill in ("none", "greedy", "easy"):
        assert decide_list([], queue, backfill=backfill)[0] == ["A", "B"]


def test_greedy_io_list_passes_every_job_that_fits_and_adds_them_up():
    """R holds 2 of 4 nodes and 0.2 b until 10; H (4 nodes) waits, with no reservation. O (3
    nodes) does not fit the 2 free nodes; J1 (0.5 b) does; J2 (0.5 b) would make 1.2 b; J3
    (0.3 b) fits beside J1: 1.0 b."""
    r = flat("R", 2, 10, 0.2)
    queue = [flat("H", 4, 10, 0.1), flat("O", 3, 5, 0.1), flat("J1", 1, 50, 0.5),
             flat("J2", 1, 50, 0.5), flat("J3", 1, 50, 0.3)]
    started, reserved, _ = decide_list([(r, 0.0)], queue, backfill="greedy")
    assert started == ["J1", "J3"] and reserved == []


#: Running on 5 nodes: R1 (2 nodes, 0.2 b, ends at 10), R2 (1 node, 0.3 b, ends at 20), R3
#: (1 node, 0.1 b, ends at 30): 1 node and 0.4 b free. The head H (3 nodes, 0.7 b) has its nodes
#: at 10 but its bandwidth only at 20 (0.9 b free then): reserved at 20, leaving 1 node and
#: 0.2 b beside it.
SHADOW_RUNNING = [(flat("R1", 2, 10, 0.2), 0.0), (flat("R2", 1, 20, 0.3), 0.0),
                  (flat("R3", 1, 30, 0.1), 0.0)]
#: b(1 + 1e-9) - 0.7 b + 0.2 b: the same float as AT_CAP.
HEAD_AT_FIRST_END = AT_CAP
#: b(1 + 1e-9) - 0.6 b + 0.5 b - 0.7 b: exactly what the head leaves beside it at 20.
LEFT_AT_SHADOW = 200000001.00000012


@pytest.mark.parametrize(("queue", "started"), [
    # O needs 2 nodes (1 free): passed over; P (0.3 b) fits now but ends after 20 and would
    # take more than the 0.2 b the head leaves; Q (0.2 b) ends after 20 within it
    ([flat("O", 2, 5, 0.1), flat("P", 1, 25, 0.3), flat("Q", 1, 25, 0.2)], ["Q"]),
    # exactly the bandwidth the head leaves
    ([Job("Q", 0, walltime=25, nodes=1, bandwidth=LEFT_AT_SHADOW)], ["Q"]),
    ([Job("Q", 0, walltime=25, nodes=1, bandwidth=LEFT_AT_SHADOW * (1 + 1e-9))], []),
    # S ends at the reservation exactly: it needs nothing the head leaves, so Q finds no node
    ([flat("S", 1, 20, 0.35), flat("Q", 1, 25, 0.2)], ["S"]),
    # S ends half a second after: it needs the head's leftover bandwidth, 0.35 b > 0.2 b
    ([flat("S", 1, 20.5, 0.35), flat("Q", 1, 25, 0.2)], ["Q"]),
], ids=["passes", "at-leftover", "above-leftover", "ends-at-reservation", "ends-after"])
def test_easy_io_list_reserves_where_nodes_and_bandwidth_are_both_free(queue, started):
    got, reserved, _ = decide_list(SHADOW_RUNNING, [flat("H", 3, 10, 0.7), *queue], nodes=5)
    assert (got, reserved) == (started, [("H", 20.0)])


def test_easy_io_list_backfills_long_jobs_within_what_the_head_leaves_together():
    """6 nodes; R (4 nodes, 0.2 b) ends at 10. The head H (5 nodes, 0.3 b) is reserved at 10 and
    leaves 1 node and 0.7 b beside it. Two long jobs: the first takes the node, the second
    (though 1 node is still free now) finds none left beside the head; with 2 nodes left
    (H of 4 nodes), L1 (0.4 b) leaves 0.3 b and L2 (0.35 b) does not fit in it."""
    r = [(flat("R", 4, 10, 0.2), 0.0)]
    longs = [flat("L1", 1, 50, 0.1), flat("L2", 1, 50, 0.1)]
    assert decide_list(r, [flat("H", 5, 10, 0.3), *longs], nodes=6)[:2] == (
        ["L1"], [("H", 10.0)])
    longs = [flat("L1", 1, 50, 0.4), flat("L2", 1, 50, 0.35)]
    assert decide_list(r, [flat("H", 4, 10, 0.3), *longs], nodes=6)[:2] == (
        ["L1"], [("H", 10.0)])


def test_easy_io_list_reserves_at_the_first_end_that_frees_exactly_the_head_s_nodes():
    """R1 (2 nodes) ends at 10, R2 (1 node) at 20, 1 node free: the head of 3 nodes has exactly
    its nodes at 10. The bandwidth likewise: its 0.5 b are exactly free once R1 ends (b(1+1e-9)
    - 0.7 b + 0.2 b, to the last bit, taken as the head's own)."""
    running = [(flat("R1", 2, 10, 0.2), 0.0), (flat("R2", 1, 20, 0.5), 0.0)]
    assert decide_list(running, [flat("H", 3, 5, 0.1)])[1] == [("H", 10.0)]
    head = Job("H", 0, walltime=5, nodes=1, bandwidth=HEAD_AT_FIRST_END)
    assert decide_list(running, [head], nodes=3)[1] == [("H", 10.0)]
    head = Job("H", 0, walltime=5, nodes=1, bandwidth=HEAD_AT_FIRST_END * (1 + 1e-9))
    assert decide_list(running, [head], nodes=3)[1] == [("H", 20.0)]


def test_io_list_options_and_what_its_decision_reports():
    assert IOList().name == "io-list"
    assert [IOList(backfill=v).backfill for v in (True, False, "easy", "greedy", "none")] == [
        "easy", "none", "easy", "greedy", "none"]
    with pytest.raises(InputError, match="backfill must be 'easy', 'greedy' or 'none', "
                                         "got 'eager'") as e:
        IOList(backfill="eager")
    assert e.value.field == "backfill"
    _, _, d = decide_list([], [flat("A", 1, 10, 0.4)])
    assert (d.stats.backend, d.stats.status) == ("list", Status.FEASIBLE)
    assert 0.0 < d.stats.wall_time < 3600.0  # its own time, not the clock's reading


def test_time_alone_io_time_and_average_bandwidth():
    """Equation (1), T_i = n (w + v / b), and u_i = n v / b; a job without extra["io"] transfers
    bandwidth x nodes for its walltime."""
    assert time_and_io(periodic("P", 3, 2.0, 1.0), B) == (9.0, 3.0)
    assert time_and_io(periodic("P", 3, 2.0, 1.0), 2 * B) == (7.5, 1.5)
    plain = Job("J", 0, walltime=10, nodes=2, bandwidth=3e8)
    assert time_and_io(plain, B) == (10.0, 6.0)
    assert average_bandwidth(plain, B) == pytest.approx(6e8)
    assert average_bandwidth(periodic("P", 3, 2.0, 1.0), B) == pytest.approx(B / 3)
    assert average_bandwidth(periodic("P", 1, 0.25, 0.25), B) == pytest.approx(B / 2)  # T < 1
    zero = Job("Z", 0, walltime=1, nodes=1, extra={"io": {
        "iterations": 2, "compute_seconds": 0.0, "io_bytes": 0.0, "io_bandwidth": B}})
    assert average_bandwidth(zero, B) == 0.0  # T = 0: no bandwidth


def test_io_bandwidth_is_the_option_else_the_first_periodic_job_s():
    bare = Job("x", 0, walltime=10, nodes=1, extra=None)
    assert io_bandwidth([bare, periodic("P", 1, 1.0, 1.0)], None) == B
    assert io_bandwidth([bare, periodic("P", 1, 1.0, 1.0)], 3e9) == 3e9
    with pytest.raises(InputError, match="needs the I/O node's bandwidth: pass the 'bandwidth' "
                                         "option or give the jobs") as e:
        io_bandwidth([bare, Job("y", 0, walltime=10, nodes=1)], None)
    assert e.value.field == "bandwidth"


def test_list_and_pack_policies_refuse_platforms_with_burst_buffers_or_local_ssd():
    why = "plans nodes and the I/O node's bandwidth; it knows no burst buffer or local SSD"
    assert without_bb(Platform(nodes=4)) is None
    assert without_bb(Platform(nodes=4, bb=1.0)) == why  # a single byte of BB
    assert without_bb(Platform(nodes=2, node_ssd=(0.0, 0.0))) == why


# --- pack policies: the decision that forms a pack, and backfilling into it -------------------

ABC = (periodic("A", 1, 7.0, 1.0, nodes=2), periodic("B", 1, 3.0, 1.0),
       periodic("C", 1, 11.0, 1.0, nodes=2))


@pytest.mark.parametrize(("policy", "options", "pack", "stats"), [
    ("pack-max", {}, ["A", "C"], ("greedy-max", Status.FEASIBLE, 40.0, None, None, None)),
    ("pack-char", {}, ["A", "B"], ("greedy-char", Status.FEASIBLE, 20.0, None, None, None)),
    ("pack-opt", {"backend": "exhaustive", "budget": 3.0}, ["A", "C"],
     ("exhaustive", Status.OPTIMAL, 40.0, 40.0, 0.0, 3.0)),
])
def test_a_pack_s_decision_reports_its_builder_and_remembers_the_pack(policy, options, pack,
                                                                     stats):
    """4 nodes at t = 5: Max (and the optimum) packs A (2 nodes, T = 8) and C (2 nodes, T = 12),
    2 x 8 + 2 x 12 = 40 node-seconds, planned to end with C at 17; Char (characteristic times
    B 4, A 8, C 12) packs B and A, 1 x 4 + 2 x 8 = 20, ending with A at 13; 1 s of I/O each."""
    d = decide(ClusterState(5.0, Platform(nodes=4), queue=ABC), policy, **options)
    assert sorted(s.job_id for s in d.start) == pack
    s = d.stats
    assert (s.backend, s.status, s.objective, s.bound, s.gap, s.budget) == stats
    assert 0.0 <= s.wall_time < 3600.0
    end = {"C": 17.0, "B": 13.0}[pack[1]]
    assert d.memory == {"pack": pack, "pack_start": 5.0, "pack_end": end,
                        "pack_io": 2.0, "pack_no": 1, "backfilled": []}
    # nothing waits: no pack, and the memory (the last pack's number) is kept
    kept = {"pack_no": 3}
    d = decide(ClusterState(5.0, Platform(nodes=4), memory=kept), policy, bandwidth=B,
               **options)
    assert d.start == () and d.memory == kept


def pack_running(queue, memory, nodes=4, now=2.0, policy="pack-max", running=None, **options):
    """A pack policy's decision at ``now`` while ``A`` (2 nodes, T = 10, its pack's only member,
    started at 0) runs: (started ids, the memory it returns, the decision)."""
    running = running or [(periodic("A", 1, 9.0, 1.0, nodes=2), 0.0)]
    mem = {"pack": [j.id for j, _ in running], "pack_start": 0.0, "pack_end": 10.0,
           "pack_io": 1.0, "pack_no": 1, "backfilled": [], **memory}
    state = ClusterState(now, Platform(nodes=nodes),
                         running=tuple(RunningJob(j, s) for j, s in running),
                         queue=tuple(queue), memory=mem)
    d = decide(state, policy, **options)
    return [s.job_id for s in d.start], d.memory, d


def test_backfilling_ends_by_the_pack_s_planned_end():
    """At 2, the pack {A} is planned to end at 10: a job of T = 8 ends at 10 exactly and is
    backfilled; T = 8.5 would end at 10.5 and waits for the next pack."""
    started, mem, d = pack_running([periodic("X", 1, 7.5, 0.5)], {"backfilled": ["W"]})
    assert started == ["X"]
    assert mem["backfilled"] == ["W", "X"] and mem["pack_io"] == 1.5
    assert (d.stats.backend, d.stats.status) == ("backfill", Status.FEASIBLE)
    assert 0.0 < d.stats.wall_time < 3600.0
    assert pack_running([periodic("X", 1, 8.0, 0.5)], {})[0] == []
    # at the planned end itself no job ends in time, not even one of a nanosecond
    tiny = periodic("T", 1, 1e-9, 0.0)
    assert pack_running([tiny], {}, now=10.0)[0] == []
    assert pack_running([tiny], {}, now=9.0)[0] == ["T"]
    # the span is the pack's own (start 4, end 10: 6 s of I/O at most), not counted from 0
    started, _, _ = pack_running([periodic("X", 1, 0.5, 5.5)], {"pack_start": 4.0},
                                 now=4.0)
    assert started == []
    started, _, _ = pack_running([periodic("X", 1, 1.0, 5.0)], {"pack_start": 4.0},
                                 now=4.0)
    assert started == ["X"]


def test_backfilling_keeps_the_pack_s_average_constraint():
    """The pack {A} (span 10, 1 s of I/O admitted): a job bringing 9 s fills it exactly; 9.5 s
    would exceed it, as would 8 s beside 7 already admitted (1.5 x the span). A candidate over
    the constraint is passed over, not an end to the scan; the admitted I/O adds up."""
    assert pack_running([periodic("X", 1, 0.0, 9.0)], {}, now=1.0)[0] == ["X"]
    assert pack_running([periodic("X", 1, 0.0, 9.5)], {}, now=0.5)[0] == []
    assert pack_running([periodic("X", 1, 0.0, 8.0)], {"pack_io": 7.0})[0] == []
    # Max order (longest first), 2 s admitted: X (8.5 s of I/O) passed over, Y and Z (3 s each)
    # admitted: 2 + 3 + 3
    queue = [periodic("X", 1, 0.0, 8.5), periodic("Y", 1, 4.0, 3.0), periodic("Z", 1, 3.0, 3.0)]
    started, mem, _ = pack_running(queue, {"pack_io": 2.0}, now=1.5)
    assert started == ["Y", "Z"] and mem["pack_io"] == 8.0


def test_backfilling_fills_exactly_the_idle_nodes():
    """2 of 4 nodes idle: a 3-node job is passed over (not an end to the scan), a 2-node job
    fills them; with 1 idle node a 1-node job still starts."""
    queue = [periodic("W", 1, 6.0, 1.0, nodes=3), periodic("X", 1, 5.0, 1.0, nodes=2)]
    assert pack_running(queue, {})[0] == ["X"]
    assert pack_running([periodic("X", 1, 5.0, 1.0)], {}, nodes=3)[0] == ["X"]


@pytest.mark.parametrize(("queue", "first"), [
    # characteristic time w + v / b: X 2 (T = 4), Y 2.5 (T = 2.5); by w - v / b Y would be first
    ([periodic("X", 2, 2.0, 0.0), periodic("Y", 1, 0.5, 2.0)], "X"),
    # X 4 (1 GB per phase), Y 2.5 (2 GB): by the bytes, or by w + v x b, X would be first
    ([periodic("X", 1, 3.0, 1.0), periodic("Y", 1, 0.5, 2.0)], "Y"),
    # a job without extra["io"]: its characteristic time is its walltime
    ([flat("X", 1, 3.0, 0.1), periodic("Y", 1, 3.0, 1.0)], "X"),
])
def test_pack_char_backfills_by_characteristic_time(queue, first):
    """One idle node (3 of 4 busy with the pack): the candidate of least characteristic time
    takes it."""
    running = [(periodic("A", 1, 9.0, 1.0, nodes=3), 0.0)]
    started, _, _ = pack_running(queue, {}, policy="pack-char", running=running,
                                 bandwidth=B)
    assert started == [first]


def test_pack_policy_defaults_and_refusals():
    from bbopt.models.packs import OBJECTIVES, ORDERS
    from bbopt.policies.packs import PackScheduling

    p = PackScheduling()
    assert (p.name, p.builder, p.order, p.backend, p.objective, p.tiebreak, p.seed) == (
        "pack-max", "greedy", "max", "cpsat", "work", None, 0)
    assert (p.budget_seconds, p.budget.seconds, p.budget.deterministic, p.tolerance) == (
        1.0, 1.0, 2.0, 0.0)
    assert PackScheduling(tiebreak="char").tolerance == 0.05  # 5 % by default with a tie-break
    assert PackScheduling(tiebreak="char").tiebreak == "char"
    assert PackScheduling(tiebreak="char", tolerance=0.2).tolerance == 0.2
    assert PackScheduling(tolerance=0.1).tolerance == 0.1
    for field, value, choices in (("builder", "optimal", "'greedy' or 'exact'"),
                                  ("order", "min", ", ".join(ORDERS)),
                                  ("objective", "time", ", ".join(OBJECTIVES)),
                                  ("tiebreak", "min", ", ".join(ORDERS))):
        with pytest.raises(InputError) as e:
            PackScheduling(**{field: value})
        assert e.value.field == field
        assert f"{field} must be {'' if field == 'builder' else 'one of '}{choices}, got " \
               f"'{value}'" in str(e.value)


def test_backfilling_ends_by_the_planned_end_within_its_relative_slack():
    """The pack {A} is planned to end at 10, with a relative slack of 1e-9: at 2, a job of
    8.00000001 s ends at 10.00000001 = 10 (1 + 1e-9) to the last bit and is backfilled; one a
    float above it is not."""
    import math

    at_end = Job("X", 0, walltime=8.00000001, nodes=1)
    assert pack_running([at_end], {})[0] == ["X"]
    over = Job("X", 0, walltime=math.nextafter(8.00000001, math.inf), nodes=1)
    assert pack_running([over], {})[0] == []


def test_backfilling_fills_the_average_constraint_within_its_relative_slack():
    """The pack {A} (span 10, 1 s of I/O admitted) on an I/O node of 1 B/s: a job bringing
    9.00000001 s of I/O makes 10.00000001 = 10 (1 + 1e-9) to the last bit and is backfilled;
    one a float above it is not."""
    import math

    at_cap = Job("X", 0, walltime=1.0, nodes=1, bandwidth=9.00000001)
    started, mem, _ = pack_running([at_cap], {}, bandwidth=1.0)
    assert started == ["X"] and mem["pack_io"] == 10.00000001
    over = Job("X", 0, walltime=1.0, nodes=1, bandwidth=math.nextafter(9.00000001, math.inf))
    assert pack_running([over], {}, bandwidth=1.0)[0] == []


#: Four alike one-node applications; pack-random's order depends on its seed and the ids only:
#: seed 0 puts X first, seed 3 puts Y first (and seed 7 Z).
WXYZ = tuple(periodic(i, 1, 1.0, 1.0) for i in "WXYZ")


@pytest.mark.parametrize(("seed", "first"), [(0, "X"), (3, "Y"), (7, "Z")])
def test_pack_random_forms_and_backfills_in_its_seeded_order(seed, first):
    """One free node: pack-random's pack is the first of its seeded order; with one idle node
    beside a running pack, the backfilled job is that first one too."""
    d = decide(ClusterState(0.0, Platform(nodes=1), queue=WXYZ), "pack-random", seed=seed)
    assert [s.job_id for s in d.start] == [first]
    started, _, _ = pack_running(WXYZ, {}, nodes=3, policy="pack-random", seed=seed)
    assert started == [first]


def test_pack_opt_s_stretch_work_counts_the_wait_until_now():
    """One free node at 100: A (T = 10, submitted at 0) has stretch-work 100 + 10 = 110, B
    (T = 30, submitted at 90) 10 + 30 = 40: A is packed. By work alone (10 against 30), or by
    waits counted to 0 (10 against 30), B would be."""
    queue = (periodic("A", 1, 9.0, 1.0), periodic("B", 1, 29.0, 1.0, submit=90.0))
    d = decide(ClusterState(100.0, Platform(nodes=1), queue=queue), "pack-opt",
               objective="stretch-work", backend="exhaustive")
    assert [s.job_id for s in d.start] == ["A"] and d.stats.objective == 110.0
    d = decide(ClusterState(100.0, Platform(nodes=1), queue=queue), "pack-opt",
               backend="exhaustive")
    assert [s.job_id for s in d.start] == ["B"] and d.stats.objective == 30.0


@pytest.mark.parametrize(("policy", "options", "first"), [
    ("pack-opt-char", {}, "B"),
    ("pack-opt-char", {"tolerance": 0.03}, "A"),
    ("pack-opt", {"tolerance": 0.05}, "A"),
])
def test_pack_opt_char_takes_the_char_first_pack_within_its_tolerance(policy, options, first):
    """Two nodes, A (2 nodes, T = 50: work 100, characteristic time 50) or B (2 nodes, two
    iterations of 24 s: work 96, characteristic time 24). pack-opt-char, within its default 5 %
    of the best work (95), takes B, first in Char order; within 3 % (97) only A is left; pack-opt
    has no tie-break and takes the best work."""
    queue = (periodic("A", 1, 49.0, 1.0, nodes=2), periodic("B", 2, 23.0, 1.0, nodes=2))
    d = decide(ClusterState(0.0, Platform(nodes=2), queue=queue), policy,
               backend="exhaustive", **options)
    assert [s.job_id for s in d.start] == [first]

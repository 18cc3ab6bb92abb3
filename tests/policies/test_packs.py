"""I/O-aware list scheduling and pack scheduling under exclusive I/O: hand-built cases and the
invariants of packs (members start together, the average constraint, no overlap of packs,
backfilled jobs never delay the next pack) and of the strict constraint."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import ClusterState, Job, Platform, decide, simulate
from bbopt.errors import InputError
from bbopt.policies import available_policies
from bbopt.policies.packs import average_bandwidth, time_and_io
from bbopt.simulation.exclusive_io import ExclusiveIO, time_alone
from bbopt.workloads.generators.jeannot import generate

B = 1e9
PACKS = ("pack-random", "pack-max", "pack-char", "pack-opt", "pack-opt-char")


def periodic(id_, n, w, io_seconds, nodes=1, submit=0.0):
    t = n * (w + io_seconds)
    return Job(id_, submit, walltime=t, runtime=t, nodes=nodes,
               extra={"io": {"iterations": n, "compute_seconds": w,
                             "io_bytes": io_seconds * B, "io_bandwidth": B}})


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
def test_pack_invariants(specs, policy):
    jobs = [periodic(f"j{i}", n, float(w), float(io), nodes=q, submit=float(s))
            for i, (n, w, io, q, s) in enumerate(specs)]
    res, decisions = run(jobs, policy)
    assert res.state == ["finished"] * len(jobs)
    k_of = {j.id: k for k, j in enumerate(jobs)}
    packs = packs_of(decisions)
    seen = [j for p in packs.values() for j in p[2] + p[3]]
    assert sorted(seen) == sorted(j.id for j in jobs)  # every job in exactly one pack
    prev_members_end = 0.0
    for no in sorted(packs):
        start, end, members, backfilled, io = packs[no]
        assert all(res.start[k_of[j]] == start for j in members)  # members start together
        assert start >= prev_members_end  # no pack before the previous pack's last member ends
        if all(j.submit == 0 for j in jobs):  # static batch: the next pack starts right then
            assert no == 1 or start == prev_members_end
        ts = [time_and_io(jobs[k_of[j]], B) for j in members + backfilled]
        assert end == pytest.approx(start + max(t for t, _ in ts[:len(members)]))
        assert sum(u for _, u in ts) <= (end - start) * (1 + 1e-9)  # average constraint
        for j in backfilled:  # backfilled: later, and planned to end before the pack does
            k = k_of[j]
            assert start <= res.start[k]
            assert res.start[k] + time_alone(jobs[k]) <= end * (1 + 1e-9)
        prev_members_end = max(res.end[k_of[j]] for j in members)


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

"""Invariants of preemptive fair share (hypothesis): capacities hold at every instant including
checkpoints and restarts, work is conserved, entitlements are served within a quantum plus a
checkpoint; and the exact victim choice equals exhaustive enumeration and never costs more than
Algorithm 1's greedy rule."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from bbopt.core import Job, JobState, Platform, Status
from bbopt.models.preemption import PreemptionModel
from bbopt.simulation import simulate
from bbopt.simulation.checkpoint import CheckpointRestart
from bbopt.solvers import Budget, solve
from bbopt.workloads.shares import entitled_nodes

ENTITIES = ("A", "B", "C")
SHARES = {"A": 1 / 3, "B": 1 / 3, "C": 1 / 3}
NODES = 12  # 4 nodes per entity


@st.composite
def workloads(draw, unit=False):
    n = draw(st.integers(2, 12))
    jobs = []
    for i in range(n):
        ckpt = draw(st.booleans())
        pre = ckpt or draw(st.booleans())
        nodes = 1 if unit else draw(st.integers(1, 4 if not pre else 8))
        runtime = float(draw(st.integers(1, 40)) * 100)
        wall = runtime if draw(st.booleans()) else runtime + float(draw(st.integers(-5, 20)) * 50)
        jobs.append(Job(f"j{i}", float(draw(st.integers(0, 60)) * 100), max(wall, 50.0),
                        runtime, nodes, bb=0.0 if unit else float(draw(st.integers(0, 3)) * 10),
                        user=draw(st.sampled_from(ENTITIES)), preemptable=pre,
                        checkpointable=ckpt))
    return jobs


def _segments_within_capacity(result, platform):
    events = []
    bb = {j.id: j.bb for j in result.jobs}
    nodes = {j.id: j.nodes for j in result.jobs}
    for jid, t0, t1, _ in result.segments:
        assert t1 >= t0
        events.append((t0, 1, nodes[jid], bb[jid]))
        events.append((t1, 0, -nodes[jid], -bb[jid]))  # ends before starts at the same instant
    used_n, used_b = 0, 0.0
    for _, _, dn, db in sorted(events):
        used_n += dn
        used_b += db
        assert used_n <= platform.nodes
        assert used_b <= platform.bb * (1 + 1e-9) + 1e-9


def _conserved(result):
    seg_len: dict[str, float] = {}
    for jid, t0, t1, _ in result.segments:
        seg_len[jid] = seg_len.get(jid, 0.0) + (t1 - t0)
    for k, job in enumerate(result.jobs):
        state = result.state[k]
        assert state in (JobState.FINISHED, JobState.KILLED, JobState.DROPPED,
                         JobState.REJECTED)
        if state == JobState.REJECTED:
            continue
        p = result.preemption[job.id]
        run = seg_len[job.id]
        assert p["work_done"] + p["lost_work"] + p["checkpoint_time"] + p["restart_time"] \
            == pytest.approx(run, abs=1e-6)
        if state == JobState.FINISHED:
            assert p["work_done"] == pytest.approx(job.runtime)
        elif state == JobState.KILLED:
            assert p["work_done"] == pytest.approx(job.walltime)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=workloads(), quantum=st.sampled_from([0.0, 300.0, 1800.0]),
       cost=st.sampled_from([0.0, 50.0, 400.0]), on_kill=st.sampled_from(["drop", "requeue"]),
       policy=st.sampled_from(["omfs", "omfs-opt"]))
def test_capacity_and_work_conservation(jobs, quantum, cost, on_kill, policy):
    platform = Platform(nodes=NODES, bb=60.0)
    model = CheckpointRestart(memory_per_node=cost * 1e6, pfs_bandwidth=1e6, on_kill=on_kill)
    result = simulate(jobs, platform, policy,
                      options={"shares": SHARES, "quantum": quantum}, execution=model)
    _segments_within_capacity(result, platform)
    _conserved(result)
    # The record keeps the first start and the final end.
    for k, job in enumerate(jobs):
        segs = [s for s in result.segments if s[0] == job.id]
        assert result.start[k] == segs[0][1] and result.end[k] == segs[-1][2]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=workloads(unit=True), quantum=st.sampled_from([0.0, 300.0, 1800.0]),
       cost=st.sampled_from([0.0, 100.0]))
def test_no_entity_waits_below_its_entitlement_longer_than_quantum_plus_checkpoint(
        jobs, quantum, cost):
    tick = 10.0
    worst = _deprivation(jobs, Platform(nodes=NODES), {"quantum": quantum}, cost, tick)
    bound = quantum + cost + tick
    for e, w in worst.items():
        assert w <= bound + 1e-9, (e, w, bound)


def _deprivation(jobs, platform, options, cost, tick):
    """The longest time each entity waits, under omfs, with a job within its entitlement."""
    entitled = entitled_nodes(SHARES, NODES)
    since: dict[str, float] = {}
    worst: dict[str, float] = {}

    def watch(state, decision):
        held = dict.fromkeys(ENTITIES, 0)
        for r in state.running:
            if not r.job.extra.get("evicting"):
                held[r.job.user] += r.job.nodes
        started = set(decision.started_ids)
        for j in state.queue:
            if j.id in started:
                held[j.user] += j.nodes
        for e in ENTITIES:
            if e in since:  # deprived since then, up to this decision
                worst[e] = max(worst.get(e, 0.0), state.time - since[e])
            # still deprived once this decision is applied?
            eligible = any(j.user == e and j.id not in started
                           and j.nodes <= entitled[e] - held[e] for j in state.queue)
            if eligible:
                since.setdefault(e, state.time)
            else:
                since.pop(e, None)

    model = CheckpointRestart(memory_per_node=cost * 1e6, pfs_bandwidth=1e6)
    simulate(jobs, platform, "omfs", options={"shares": SHARES, **options},
             execution=model, tick=tick, on_decision=watch)
    return worst


#: B's 2-node job becomes entitled at 5000 (B's 3-node job ends) while A's 8-node job, over A's
#: entitlement of 4, is being checkpointed; at 5010 the pass restarts A's job (first in priority
#: order, it fits) and B's job no longer fits. Counted among the running jobs (quantum 0), A's
#: job is taken back in the same pass and B starts at 5010; when a start of the pass was no
#: eviction candidate, A's job was evicted at 5020 and B started at 5120: 120 s deprived, beyond
#: quantum 0 + checkpoint 100 + tick 10.
RESTARTED_BEFORE_AN_ENTITLED_JOB = [
    Job(f"j{i}", float(s), float(w), float(w), n, user=u, preemptable=p, checkpointable=p)
    for i, (s, w, n, u, p) in enumerate([
        (3400, 1500, 2, "C", False), (0, 100, 1, "A", False), (3400, 100, 8, "A", True),
        (3300, 1700, 3, "B", True), (0, 100, 1, "A", True), (0, 100, 1, "A", False),
        (0, 100, 1, "A", False), (4900, 100, 2, "B", True), (0, 100, 1, "A", False),
        (4800, 200, 3, "C", False)])]


#: B's 4-node job (entitled to 4) arrives at 1200 while A, over its entitlement, holds 6 nodes
#: whose jobs are within their 30 min quantum. When they end at 1600, the pass starts A's 7-node
#: job j9 first (it comes first in priority order, and fits). With protect="over" B's job takes
#: it back at once (it has not run: its quantum does not hold it) and starts at 1600; when a
#: start of the pass was protected by its quantum, A's j0 started likewise at 1900 and B waited
#: until 3100, 1,900 s against quantum 1800 + checkpoint 0 + tick 10.
FRESH_OVER_ENTITLED_STARTS_AHEAD = [
    Job(f"j{i}", float(s), float(w), float(w), n, user=u, preemptable=p, checkpointable=p)
    for i, (s, w, n, u, p) in enumerate([
        (100, 1200, 7, "A", True), (0, 100, 1, "A", False), (0, 1600, 1, "A", True),
        (0, 100, 1, "A", True), (0, 100, 1, "A", False), (0, 100, 1, "A", False),
        (0, 1600, 1, "A", False), (1200, 100, 4, "B", False), (0, 1600, 4, "A", False),
        (0, 300, 7, "A", True), (1100, 2000, 3, "C", True)])]

@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jobs=workloads(), quantum=st.sampled_from([0.0, 300.0, 1800.0]),
       cost=st.sampled_from([0.0, 100.0]))
@example(jobs=RESTARTED_BEFORE_AN_ENTITLED_JOB, quantum=0.0, cost=100.0)
@example(jobs=FRESH_OVER_ENTITLED_STARTS_AHEAD, quantum=1800.0, cost=0.0)
def test_papers_reading_serves_multi_node_entitlements_within_quantum_plus_checkpoint(
        jobs, quantum, cost):
    # Jobs of 1-8 nodes with BB on a machine without BB limits that bind (every job preemptable):
    # with protect="over" an over-entitled entity's jobs are victims while it is over, so the
    # over-entitled nodes always cover an entitled deficit once their quantum has passed. (The
    # strict rule keeps every victim entity at its entitlement and can leave the deficit
    # uncovered: test_fairshare.py.)
    jobs = [replace(j, preemptable=True, bb=0.0) for j in jobs]
    tick = 10.0
    platform = Platform(nodes=NODES)
    worst = _deprivation(jobs, platform, {"quantum": quantum, "protect": "over"}, cost, tick)
    for e, w in worst.items():
        assert w <= quantum + cost + tick + 1e-9, (e, w)


@st.composite
def victim_models(draw):
    m = draw(st.integers(1, 10))
    ents = [draw(st.sampled_from("xyz")) for _ in range(m)]
    nodes = [draw(st.integers(1, 6)) for _ in range(m)]
    bb = [float(draw(st.integers(0, 5)) * 10) for _ in range(m)]
    cost = [float(draw(st.integers(0, 50)) * 7) for _ in range(m)]
    slack = {e: draw(st.integers(0, 15)) for e in "xyz"}
    order = draw(st.permutations(range(m)))
    return PreemptionModel.build([f"v{i}" for i in range(m)], nodes, bb, cost, ents, slack,
                                 need_nodes=draw(st.integers(1, 12)),
                                 need_bb=float(draw(st.integers(0, 4)) * 10), order=order,
                                 penalty=float(draw(st.integers(0, 3)) * 5), bb_capacity=100.0)


# Ten candidates of one entity (slack 3 nodes), a deficit of 1 node and 40 B of BB that v7 (2
# nodes, 40 B, cost 0) covers alone, v8 and v9 alike: with the BB row scaled to ~4e9 units per
# victim CP-SAT's presolve answered {v1, v8, v9} (cost 7) as optimal.
@example(model=PreemptionModel(
    ids=tuple(f"v{i}" for i in range(10)), nodes=np.array([1, 1, 1, 1, 1, 1, 1, 2, 1, 1]),
    bb=np.array([0.0, 20.0, 0.0, 0.0, 0.0, 30.0, 0.0, 40.0, 10.0, 10.0]),
    cost=np.array([0.0, 7.0, 0.0, 0.0, 0.0, 14.0, 0.0, 0.0, 0.0, 0.0]),
    entity=np.zeros(10, dtype=np.int64), slack=np.array([3]), need_nodes=1, need_bb=40.0,
    order=tuple(range(10)), penalty=0.0, bb_capacity=100.0))
@settings(max_examples=60, deadline=None)
@given(model=victim_models())
def test_exact_victim_choice_equals_exhaustive_and_never_costs_more_than_greedy(model):
    ref = solve(model, "exhaustive", Budget(10.0))
    greedy = model.greedy()
    for backend in ("cpsat", "milp", "scip"):
        res = solve(model, backend, Budget(10.0))
        assert res.status == ref.status, backend
        if ref.solution is None:
            assert greedy is None
            continue
        assert model.feasible(res.solution)
        assert res.objective == pytest.approx(ref.objective, abs=1e-6), backend
        if greedy is not None:
            assert res.objective <= model.evaluate(greedy) + 1e-9


def test_exhaustive_beats_greedy_on_a_known_state():
    # Least prioritised first takes the two 3-node jobs (cost 2 x 300); one 6-node job with
    # cost 100 covers the deficit alone.
    model = PreemptionModel.build(["a", "b", "c"], [3, 3, 6], [0, 0, 0], [300, 300, 100],
                                  ["x", "x", "y"], {"x": 6, "y": 6}, need_nodes=6, need_bb=0)
    assert model.victims(model.greedy()) == ["a", "b"]
    res = solve(model, "exhaustive")
    assert model.victims(res.solution) == ["c"] and res.objective == 100
    assert solve(model, "cpsat").objective == 100
    assert math.isinf(model.evaluate(np.array([True, False, False])))


def test_exact_victim_choice_takes_bb_that_exactly_covers_the_deficit():
    # 10 + 20 BB units cover a deficit of 30 exactly; scaling BB to integers must not lose it.
    model = PreemptionModel(ids=("v0", "v1", "v2"), nodes=np.array([1, 1, 1]),
                            bb=np.array([0.0, 10.0, 20.0]), cost=np.array([0.0, 0.0, 0.0]),
                            entity=np.array([0, 0, 0]), slack=np.array([2]), need_nodes=1,
                            need_bb=30.0, order=(0, 1, 2), penalty=0.0, bb_capacity=100.0)
    for backend in ("exhaustive", "cpsat", "milp", "scip"):
        res = solve(model, backend, Budget(10.0))
        assert res.status is Status.OPTIMAL, backend
        assert model.victims(res.solution) == ["v1", "v2"], backend

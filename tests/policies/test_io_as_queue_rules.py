"""io-fcfs and io-easy are fcfs and fcfs-bb asking a planner that plans link bandwidth
(Herbein et al., HPDC 2016, Section 3.4): where no job asks for bandwidth the I/O tree never
binds and their schedules are those of the I/O-ignorant rules to the byte (the greedy then
takes the lowest-numbered free nodes, as the engine does); with bandwidth asked they differ.
On random states io-easy decides as EASY on the tree written out directly."""

from __future__ import annotations

import dataclasses
import hashlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import simulate
from bbopt.core import ClusterState, Job, Platform, RunningJob, slack
from bbopt.loading import load_platform
from bbopt.planner import Release, first_fit_time
from bbopt.policies.registry import make_policy
from bbopt.topology import AllocState, herbein_example_topology
from bbopt.workloads.synthetic import kth_like

MB = 1e6


def _digest(jobs, platform, policy, tmp_path) -> str:
    path = simulate(jobs, platform, policy).to_csv(tmp_path / f"{policy}.csv")
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("aware, ignorant", [("io-easy", "fcfs-bb"), ("io-fcfs", "fcfs")])
def test_without_bandwidth_the_io_aware_rules_are_the_queue_rules(aware, ignorant, tmp_path):
    platform = load_platform("kopanski-dragonfly")  # 96 nodes, a BB pool, a dragonfly tree
    jobs = kth_like(300, seed=1, nodes=96, load=0.95, bb=True)
    assert _digest(jobs, platform, aware, tmp_path) == _digest(jobs, platform, ignorant,
                                                               tmp_path)
    asking = [dataclasses.replace(j, bandwidth=(j.nodes % 3) * 40 * MB) for j in jobs]
    assert _digest(asking, platform, aware, tmp_path) != _digest(asking, platform, ignorant,
                                                                 tmp_path)


def test_io_easy_keeps_easys_promise_and_declares_the_bandwidth_it_allocates():
    io_easy, fcfs_bb = make_policy("io-easy"), make_policy("fcfs-bb")
    assert io_easy.io_aware and not fcfs_bb.io_aware
    assert io_easy.promise == fcfs_bb.promise and io_easy.reserve_bb and io_easy.order == "fcfs"
    assert make_policy("io-fcfs").io_aware


# --- io-easy against a direct transcription of Herbein's EASY on the tree ------------------------

GB = 1e9
#: Herbein's Figure 2-3 tree with 100 GB of pooled burst buffer beside it.
TREE_BB = Platform(4, 100 * GB, name="tree-bb", topology=herbein_example_topology())


def herbein_easy(state: ClusterState) -> tuple[list[tuple[str, tuple[int, ...]]], float | None]:
    """EASY on the I/O tree written out (Herbein, Section 3.4): jobs in order while the greedy
    places them; the head's shadow is the first expected end after which its nodes, BB and
    bandwidth fit; a later job starts if the greedy places it now and it ends by the shadow or
    leaves the head placeable there. The starts with their nodes, and the shadow."""
    tree, now, tol = state.platform.topology, state.time, slack(state.platform.bb)
    alloc = AllocState.of_running(tree, state.running)
    free_b = state.free()[1]
    started, placed, queue = [], [], list(state.queue)
    while queue:
        job = queue[0]
        nodes = alloc.select(job.nodes, job.bandwidth) if job.bb <= free_b + tol else None
        if nodes is None:
            break
        alloc.take(nodes, job.bandwidth)
        free_b -= job.bb
        started.append((job.id, tuple(int(x) for x in nodes)))
        placed.append(Release(now + job.walltime, job.nodes, job.bb, nodes, job.bandwidth))
        queue.pop(0)
    if not queue:
        return started, None
    head, at, free = queue[0], alloc.copy(), [free_b]
    ends = sorted([Release(r.start + r.job.walltime, r.job.nodes, r.job.bb, r.allocation,
                           r.job.bandwidth) for r in state.running] + placed,
                  key=lambda e: e.time)

    def give(r: Release) -> None:
        at.give(r.allocation, r.bandwidth)
        free[0] += r.bb

    shadow = first_fit_time(now, ends, lambda: head.bb <= free[0] + tol and at.fits(
        head.nodes, head.bandwidth), give)
    b_shadow = free[0]
    for job in queue[1:]:
        if job.nodes > alloc.n_free or job.bb > free_b + tol:
            continue
        nodes = alloc.select(job.nodes, job.bandwidth)
        if nodes is None:
            continue
        if now + job.walltime > shadow:
            trial = at.copy()
            trial.take(nodes, job.bandwidth)
            if job.bb > b_shadow - head.bb + tol or not trial.fits(head.nodes, head.bandwidth):
                continue
            at, b_shadow = trial, b_shadow - job.bb
        alloc.take(nodes, job.bandwidth)
        free_b -= job.bb
        started.append((job.id, tuple(int(x) for x in nodes)))
    return started, shadow


_job = st.tuples(st.integers(1, 4), st.sampled_from([0, 50, 100, 128, 200]),
                 st.sampled_from([0, 30, 60]), st.integers(1, 20))


@settings(max_examples=150, deadline=None)
@given(st.lists(_job, max_size=4), st.lists(_job, min_size=1, max_size=7))
def test_io_easy_decides_as_herbeins_easy_on_the_tree(running, queue):
    tree = TREE_BB.topology
    alloc = AllocState(tree, tree.fresh_avail(), np.ones(tree.nodes, dtype=bool))
    free_b, held = TREE_BB.bb, []
    for k, (n, bw, bb, w) in enumerate(running):  # (placed as the engine admits them)
        nodes = alloc.select(n, bw * MB)
        if nodes is not None and bb * GB <= free_b:
            alloc.take(nodes, bw * MB)
            free_b -= bb * GB
            job = Job(f"r{k}", 0.0, 5.0 + w, nodes=n, bb=bb * GB, bandwidth=bw * MB)
            held.append(RunningJob(job, 0.0, tuple(int(x) for x in nodes)))
    jobs = tuple(Job(f"q{k}", 1.0, float(w), nodes=n, bb=bb * GB, bandwidth=bw * MB)
                 for k, (n, bw, bb, w) in enumerate(queue))
    state = ClusterState(5.0, TREE_BB, tuple(held), jobs)
    decision = make_policy("io-easy").decide(state)
    starts, shadow = herbein_easy(state)
    assert [(s.job_id, s.nodes) for s in decision.start] == starts
    assert [r.start for r in decision.reservations] == ([] if shadow is None else [shadow])

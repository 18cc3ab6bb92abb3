"""Select-and-place window selection on the I/O tree (io-window): CP-SAT against exhaustive
enumeration, no vertex ever over-allocated, joint placement beating Herbein's greedy, a full
simulation under the engine's bandwidth check, and the budget fallback."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import ClusterState, Job, RunningJob, decide, simulate
from bbopt.analysis.metrics import summarize
from bbopt.core import GB, MB, Status
from bbopt.models.io_window import IOWindowModel
from bbopt.solvers.base import Budget, solve
from bbopt.topology import (
    AllocState,
    cts1,
    from_description,
    herbein_example_topology,
    platform_from_topology,
)


def _tree(rng: np.random.Generator):
    """A random two-level tree: PFS -> 1-2 switches -> 1-3 lowest switches -> 1-3 nodes."""
    def mb(lo, hi):
        return int(rng.integers(lo, hi)) * MB

    switches = []
    for _ in range(int(rng.integers(1, 3))):
        lls = [{"type": "switch", "bandwidth": mb(100, 400),
                "children": [{"type": "node", "count": int(rng.integers(1, 4)),
                              **({"bandwidth": mb(80, 200)} if rng.random() < 0.3 else {})}]}
               for _ in range(int(rng.integers(1, 4)))]
        switches.append({"type": "switch", "bandwidth": mb(200, 800), "children": lls})
    return from_description({"tree": {"type": "pfs", "bandwidth": mb(300, 1200),
                                      "children": switches}})


def _case(seed: int, w: int | None = None):
    """A random tree, some running jobs placed by Herbein's rule, and a window of jobs."""
    rng = np.random.default_rng(seed)
    tree = _tree(rng)
    alloc = AllocState(tree, tree.fresh_avail(), np.ones(tree.nodes, dtype=bool))
    for _ in range(int(rng.integers(0, 3))):
        n, b = int(rng.integers(1, 3)), int(rng.integers(0, 120)) * MB
        nodes = alloc.select(n, b)
        if nodes is not None:
            alloc.take(nodes, b)
    w = w or int(rng.integers(2, 7))
    jobs = [Job(f"j{i}", 0, 100, nodes=int(rng.integers(1, 4)),
                bandwidth=int(rng.integers(0, 150)) * MB, bb=float(rng.integers(0, 5)) * GB)
            for i in range(w)]
    model = IOWindowModel.from_tree(jobs, tree, alloc.avail, alloc.free, free_bb=6 * GB,
                                    total_bb=10 * GB)
    return tree, alloc, jobs, model


def _overallocated(tree, alloc: AllocState, jobs, placement) -> bool:
    avail = alloc.avail.copy()
    for i, nodes in placement.items():
        assert not np.any(~alloc.free[list(nodes)]), "a busy node was used"
        tree.charge(avail, list(nodes), jobs[i].bandwidth)
    fin = np.isfinite(tree.capacity)
    return bool(np.any(avail[fin] < -tree.capacity[fin] * 1e-9))


@pytest.mark.parametrize("backend", ["cpsat", "scip"])
def test_exact_backends_equal_exhaustive_on_small_trees(backend):
    for seed in range(12):
        _, _, _, model = _case(seed)
        ex = solve(model, "exhaustive", Budget(30), 0)
        cp = solve(model, backend, Budget(30), 0)
        assert cp.status is Status.OPTIMAL and ex.status is Status.OPTIMAL
        assert [s.objectives for s in cp.pareto] == [s.objectives for s in ex.pareto], seed
        for s in cp.pareto:
            assert model.feasible(s.x)
        wx = solve(model, "exhaustive", Budget(30), 0, form="weighted")
        wc = solve(model, backend, Budget(30), 0, form="weighted")
        assert wc.objective == pytest.approx(wx.objective), seed
        assert model.feasible(wc.solution)


def test_bandwidth_share_objective_exact_equals_exhaustive():
    """The bandwidth objective (share of the window's I/O demand started now) on the
    select-and-place model: CP-SAT's front and weighted optimum are the enumeration's."""
    for seed in range(6):
        tree, _, jobs, _ = _case(seed)
        model = IOWindowModel.from_tree(jobs, tree, tree.fresh_avail(),
                                        np.ones(tree.nodes, bool), free_bb=6 * GB,
                                        objectives=("nodes", "bandwidth"))
        demand = sum(j.bandwidth * j.nodes for j in jobs)
        ex = solve(model, "exhaustive", Budget(30), 0)
        cp = solve(model, "cpsat", Budget(30), 0)
        assert [s.objectives for s in cp.pareto] == [s.objectives for s in ex.pareto], seed
        for s in ex.pareto:
            x = model.selection(s.x)
            assert s.objectives[1] == pytest.approx(
                sum(j.bandwidth * j.nodes for j, on in zip(jobs, x, strict=True) if on))
        assert model.window.scales()[1] == pytest.approx(max(demand, 1.0))
        wx = solve(model, "exhaustive", Budget(30), 0, form="weighted", weights=(1, 2))
        wc = solve(model, "cpsat", Budget(30), 0, form="weighted", weights=(1, 2))
        assert wc.objective == pytest.approx(wx.objective, rel=1e-3), seed


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000))
def test_chosen_placement_never_overallocates(seed):
    tree, alloc, jobs, model = _case(seed)
    for backend in ("cpsat", "greedy"):
        res = solve(model, backend, Budget(10), 0)
        for sol in res.pareto or (res,):
            y = sol.x if hasattr(sol, "objectives") else sol.solution
            assert model.feasible(y)
            placement = model.placement(y)
            assert {i for i in placement} == set(np.flatnonzero(model.selection(y)).tolist())
            for i, nodes in placement.items():
                assert len(nodes) == jobs[i].nodes
            used = [n for nodes in placement.values() for n in nodes]
            assert len(used) == len(set(used))
            assert not _overallocated(tree, alloc, jobs, placement)


def test_joint_placement_beats_herbeins_greedy():
    """A (2 x 100 MB/s) then B (2 x 150 MB/s) under two 256 MB/s switches of two nodes each:
    Herbein's greedy puts A under one switch, and B cannot split 300 MB/s over the other; a
    joint placement puts one node of each job under each switch (250 MB/s per switch)."""
    platform = platform_from_topology(herbein_example_topology(network=1e12, pfs=1e12))
    a = Job("A", 0, 100, runtime=100, nodes=2, bandwidth=100 * MB)
    b = Job("B", 0, 100, runtime=100, nodes=2, bandwidth=150 * MB)
    state = ClusterState(0.0, platform, queue=(a, b))
    jobs = {"A": a, "B": b}

    def node_hours(d):
        return sum(jobs[s.job_id].nodes * jobs[s.job_id].walltime for s in d.start) / 3600

    easy, win = decide(state, "io-easy"), decide(state, "io-window")
    assert [s.job_id for s in easy.start] == ["A"]
    assert sorted(s.job_id for s in win.start) == ["A", "B"]
    assert node_hours(win) == 2 * node_hours(easy)
    placed = {s.job_id: s.nodes for s in win.start}
    assert {len(set(n) & {0, 1}) for n in placed.values()} == {1}  # one node per switch
    # In simulation (the engine checks every link), B no longer waits for A.
    waits = {p: summarize(simulate([a, b], platform, p))["mean_wait"]
             for p in ("io-easy", "io-window")}
    assert waits["io-window"] == 0.0 < waits["io-easy"]


def test_simulation_runs_to_the_end_with_the_bandwidth_check():
    rng = np.random.default_rng(3)
    tree = from_description({"tree": {"type": "pfs", "bandwidth": 600 * MB, "children": [
        {"type": "switch", "bandwidth": 400 * MB, "count": 2, "children": [
            {"type": "switch", "bandwidth": 250 * MB, "count": 2,
             "children": [{"type": "node", "count": 3}]}]}]}})
    platform = platform_from_topology(tree)
    jobs = []
    t = 0.0
    for i in range(40):
        t += float(rng.exponential(30))
        wall = float(rng.integers(60, 600))
        jobs.append(Job(str(i), t, wall, runtime=wall * float(rng.uniform(0.3, 1.0)),
                        nodes=int(rng.integers(1, 7)), bandwidth=int(rng.integers(0, 80)) * MB))
    seen = []
    res = simulate(jobs, platform, "io-window", options={"window": 6, "budget": 1.0},
                   on_decision=lambda s, d: seen.append(d.stats.status))
    assert np.all(res.end >= res.start) and len(res.end) == len(jobs)
    # The strict bandwidth constraint: at every start, the running jobs' bandwidth fits the PFS.
    for t in set(res.start):
        assert sum(j.bandwidth for j, s, e in zip(jobs, res.start, res.end, strict=True)
                   if s <= t < e) <= 600 * MB * (1 + 1e-9)
    assert Status.OPTIMAL in seen
    # The same run is reproducible.
    again = simulate(jobs, platform, "io-window", options={"window": 6, "budget": 1.0})
    assert np.array_equal(res.start, again.start)


def test_one_millisecond_budget_falls_back_to_a_feasible_placement():
    platform = cts1(0.3)
    tree = platform.topology
    alloc = AllocState(tree, tree.fresh_avail(), np.ones(tree.nodes, dtype=bool))
    running = []
    for k in range(6):
        nodes = alloc.select(300, 18 * MB)
        alloc.take(nodes, 18 * MB)
        running.append(RunningJob(Job(f"r{k}", 0, 3600, nodes=300, bandwidth=18 * MB), 0.0,
                                  tuple(int(x) for x in nodes)))
    rng = np.random.default_rng(0)
    jobs = [Job(f"q{i}", 0, 3600, nodes=int(2 ** rng.integers(0, 11)), bandwidth=18 * MB)
            for i in range(20)]
    model = IOWindowModel.from_tree(jobs, tree, alloc.avail, alloc.free, 0.0, total_bb=1.0)
    res = solve(model, "cpsat", Budget(0.001), 0)
    assert res.status is Status.FALLBACK
    assert model.feasible(res.solution)
    assert not _overallocated(tree, alloc, jobs, model.placement(res.solution))
    # With time, CP-SAT starts at least as many nodes as the greedy fallback.
    full = solve(model, "cpsat", Budget(10), 0)
    assert full.status is Status.OPTIMAL
    assert full.pareto[0].objectives[0] >= res.objective[0]
    # The policy on this state: explicit node sets, no link over-allocated.
    state = ClusterState(0.0, platform, running=tuple(running), queue=tuple(jobs))
    d = decide(state, "io-window", budget=0.001)
    placement = {int(s.job_id[1:]): s.nodes for s in d.start}
    assert d.start and all(s.nodes is not None for s in d.start)
    assert not _overallocated(tree, alloc, jobs, placement)


def test_starvation_bound_forces_or_blocks(io_tree_platform):
    platform = io_tree_platform
    x = Job("X", 0, 100, nodes=2, bandwidth=10 * MB)
    y = Job("Y", 0, 100, nodes=3, bandwidth=10 * MB)
    state = ClusterState(0.0, platform, queue=(x, y))
    assert [s.job_id for s in decide(state, "io-window").start] == ["Y"]  # max nodes
    starving = ClusterState(0.0, platform, queue=(x, y), memory={"rounds": {"X": 50}})
    d = decide(starving, "io-window")
    assert [s.job_id for s in d.start] == ["X"]
    assert d.memory["rounds"] == {"Y": 1}
    # A starving job that cannot be placed holds the reservation; nothing delays it.
    busy = RunningJob(Job("R", 0, 50, nodes=3, bandwidth=10 * MB), 0.0, (0, 1, 2))
    blocked = ClusterState(0.0, platform, running=(busy,), queue=(x, y),
                           memory={"rounds": {"X": 50}})
    d = decide(blocked, "io-window")
    assert d.start == () and d.reservations[0].job_id == "X"
    assert d.reservations[0].start == 50.0 and d.stats.backend == "starvation"


def test_starving_jobs_that_fit_start_beside_a_blocked_one(io_tree_platform):
    """Two starving 3-node jobs on an idle 4-node machine: the first starts, the second holds
    the reservation (the machine never idles with jobs waiting)."""
    platform = io_tree_platform
    x = Job("X", 0, 100, nodes=3, bandwidth=10 * MB)
    y = Job("Y", 0, 100, nodes=3, bandwidth=10 * MB)
    state = ClusterState(0.0, platform, queue=(x, y), memory={"rounds": {"X": 60, "Y": 55}})
    d = decide(state, "io-window")
    assert [s.job_id for s in d.start] == ["X"]
    assert d.reservations[0].job_id == "Y" and d.reservations[0].start == 100.0

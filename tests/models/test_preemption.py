"""Rules of preemption that a plausible bug breaks (Zvi & Oren, OMFS, Algorithm 1 lines 35-39):
the walltime bounds a job's useful work across a checkpoint and restart, and no victim entity is
brought below its entitlement."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import Job, JobState, Platform
from bbopt.models.preemption import PreemptionModel
from bbopt.simulation import simulate
from bbopt.simulation.checkpoint import CheckpointRestart
from bbopt.solvers import Budget, solve


def test_walltime_bounds_the_useful_work_across_a_restart():
    """b (walltime 3000 s, runtime 5000 s: over its walltime) runs [0, 2000] and is checkpointed
    until 2100 (1 GB per node at 10 MB/s); a runs [2100, 3100]; b restarts at 3100 with 1000 s
    of walltime left: 100 s of restart, 1000 s of work, killed at 4200 with 3000 s of work done.
    Were the walltime counted afresh after the restart, b would run its 3000 s of remaining work
    and finish at 6200."""
    b = Job("b", 0.0, 3000.0, 5000.0, 4, user="B", preemptable=True, checkpointable=True)
    a = Job("a", 2000.0, 1000.0, 1000.0, 2, user="A", preemptable=True)
    model = CheckpointRestart(memory_per_node=1e9, pfs_bandwidth=1e7)
    r = simulate([b, a], Platform(nodes=4), "omfs",
                 options={"shares": {"A": 0.5, "B": 0.0}, "quantum": 1000.0}, execution=model)
    assert r.segments == [("b", 0.0, 2100.0, "checkpointed"), ("a", 2100.0, 3100.0, "finished"),
                          ("b", 3100.0, 4200.0, "killed")]
    assert r.state == [JobState.KILLED, JobState.FINISHED]
    p = r.preemption["b"]
    assert (p["work_done"], p["checkpoint_time"], p["restart_time"]) == (3000.0, 100.0, 100.0)


def _victims_model() -> PreemptionModel:
    """4 nodes needed. Entity B holds 3 nodes beyond its entitlement, with two cheap 2-node jobs;
    entity C holds 2 beyond, with one dear 2-node job. Taking both of B's jobs (4 > 3 nodes)
    would bring B below its entitlement: the only victim sets are one of B's jobs with C's."""
    return PreemptionModel.build(["b1", "b2", "c1"], [2, 2, 2], [0.0, 0.0, 0.0], [1.0, 1.0, 5.0],
                                 ["B", "B", "C"], {"B": 3, "C": 2}, need_nodes=4, need_bb=0.0)


def test_no_victim_entity_drops_below_its_entitlement():
    m = _victims_model()
    assert not m.feasible(np.array([True, True, False]))
    assert m.evaluate(np.array([True, True, False])) == float("inf")
    assert m.feasible(np.array([True, False, True]))
    assert m.evaluate(np.array([True, False, True])) == 6.0


@pytest.mark.parametrize("backend", ["exhaustive", "cpsat", "milp", "scip", "greedy"])
def test_every_victim_backend_keeps_entities_at_their_entitlement(backend):
    m = _victims_model()
    r = solve(m, backend, Budget(10.0))
    assert r.objective == pytest.approx(6.0), backend
    victims = m.victims(r.solution)
    assert "c1" in victims and len(victims) == 2, (backend, victims)  # one of B's jobs, and C's


@pytest.mark.parametrize("backend", ["exhaustive", "cpsat", "milp", "scip"])
def test_exact_victim_backends_find_the_free_victim_set(backend):
    """Nodes 2, 2, 1, 4 costing 0, 0, 7, 0; 7 nodes needed, 8 of slack: {v0, v1, v3} costs
    nothing (CBC with its preprocessing answered {v0, v2, v3}, cost 7, as optimal)."""
    m = PreemptionModel.build(["v0", "v1", "v2", "v3"], [2, 2, 1, 4], [0.0] * 4,
                              [0.0, 0.0, 7.0, 0.0], ["x"] * 4, {"x": 8}, need_nodes=7,
                              need_bb=0.0, bb_capacity=100.0)
    r = solve(m, backend, Budget(10.0))
    assert r.objective == 0.0 and m.victims(r.solution) == ["v0", "v1", "v3"], backend

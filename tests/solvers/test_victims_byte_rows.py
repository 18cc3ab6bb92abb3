"""The victim choice's 0-1 program with BB rows in bytes (a state OMFS met on KTH-SP2): CBC
answered a fractional set as optimal (so the backend fell back to the greedy victims) while the
row's coefficients were byte counts; every exact backend finds the optimum."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import Status
from bbopt.models.preemption import PreemptionModel
from bbopt.solvers import Budget, solve

MODEL = PreemptionModel(
    ids=("1478", "1358", "1465", "1445", "1453", "1408"),
    nodes=np.array([14, 16, 3, 20, 16, 17]),
    bb=np.array([12722740842.0, 187923625840.0, 22006185573.0, 38820118060.0, 58256070976.0,
                 40266081578.0]),
    cost=np.array([1792.0, 2048.0, 384.0, 2560.0, 2048.0, 2176.0]),
    entity=np.array([1, 1, 0, 1, 1, 0]), slack=np.array([1, 30]), need_nodes=21,
    need_bb=77100625689.0, order=(0, 1, 2, 3, 4, 5), penalty=0.0, bb_capacity=480e9)


@pytest.mark.parametrize("backend", ["exhaustive", "cpsat", "milp", "scip"])
def test_every_exact_backend_takes_the_two_cheapest_covering_victims(backend):
    r = solve(MODEL, backend, Budget(10.0))
    assert r.status is Status.OPTIMAL
    assert MODEL.victims(r.solution) == ["1478", "1358"]  # 30 nodes of entity 1, 200 GB
    assert r.objective == 3840.0

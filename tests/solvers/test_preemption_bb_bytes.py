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


def test_cpsat_cuts_off_a_set_its_relaxed_bb_row_admits_and_solves_again():
    """CP-SAT's BB row counts 2^20 units of the largest amount, each victim rounded up: ``v0``
    (free, 0.5e-6 B short of the 1 B deficit, five times the model's 1e-7 B tolerance) passes
    that row; the model rejects it in exact floats, so it is cut off together with ``{v0, v2}``
    (``v2`` brings no BB) and CP-SAT answers ``v1``, the exhaustive optimum, as OPTIMAL (not a
    fallback). Without ``v1``'s BB no set covers the deficit: INFEASIBLE, as enumeration says."""
    model = PreemptionModel(ids=("v0", "v1", "v2"), nodes=np.array([1, 1, 1]),
                            bb=np.array([1.0 - 5e-7, 1.0, 0.0]), cost=np.array([0.0, 5.0, 0.0]),
                            entity=np.array([0, 0, 0]), slack=np.array([3]), need_nodes=1,
                            need_bb=1.0, order=(0, 1, 2), penalty=0.0, bb_capacity=100.0)
    assert not model.feasible(np.array([True, False, False]))
    for backend in ("exhaustive", "cpsat"):
        r = solve(model, backend, Budget(10.0))
        assert r.status is Status.OPTIMAL, backend
        assert model.victims(r.solution) == ["v1"] and r.objective == 5.0, backend
    short = PreemptionModel(**{**model.__dict__, "bb": np.array([1.0 - 5e-7, 0.0, 0.0])})
    for backend in ("exhaustive", "cpsat"):
        assert solve(short, backend, Budget(10.0)).status is Status.INFEASIBLE, backend
    # within the tolerance (0.5e-7 B short) v0 is a victim set of its own
    close = PreemptionModel(**{**model.__dict__, "bb": np.array([1.0 - 5e-8, 1.0, 0.0])})
    r = solve(close, "cpsat", Budget(10.0))
    assert r.status is Status.OPTIMAL and close.victims(r.solution) == ["v0"]
    assert r.objective == 0.0

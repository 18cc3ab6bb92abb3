"""The ``cpsat`` and ``scip`` select-and-place windows (Herbein et al., HPDC 2016, Section 3.4;
Fan et al., BBSched, Section 3.2) on hand-made windows: their names, forms and options, and the
trace of incumbents as placement count matrices."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import GB, Status
from bbopt.errors import InputError
from bbopt.models.io_window import IOWindowModel
from bbopt.models.window import WindowModel
from bbopt.solvers import Budget
from bbopt.solvers.io_window.cpsat import solve_cpsat
from bbopt.solvers.io_window.exhaustive import solve_exhaustive
from bbopt.solvers.io_window.forms import io_linear_form
from bbopt.solvers.io_window.scip import solve_scip
from tests.models.test_io_window_evaluation import herbein_case

INF = float("inf")
BACKENDS = {"cpsat": solve_cpsat, "scip": solve_scip}


def trade_off() -> IOWindowModel:
    """A 3-node job without BB and a 1-node job with 5 GB on three free nodes (one group):
    either starts, not both: a front of two points."""
    window = WindowModel(nodes=[3, 1], bb=[0.0, 5 * GB], free_nodes=3, free_bb=5 * GB)
    return IOWindowModel(window=window, bandwidth=[0.0, 0.0], group_nodes=([0, 1, 2],),
                         group_link=[INF], vertices=[], vertex_avail=[],
                         membership=np.zeros((0, 1), bool))


@pytest.mark.parametrize("backend", ["cpsat", "scip"])
def test_the_front_and_its_first_point_alone(backend):
    m = trade_off()
    r = BACKENDS[backend](m, Budget(10.0), 0)
    assert (r.status, r.backend) == (Status.OPTIMAL, backend)
    assert [p.objectives for p in r.pareto] == [(3.0, 0.0), (1.0, 5 * GB)]
    assert [p.x.tolist() for p in r.pareto] == [[[3], [0]], [[0], [1]]]
    one = BACKENDS[backend](m, Budget(10.0), 0, max_points=1)
    assert [p.objectives for p in one.pareto] == [(3.0, 0.0)]


@pytest.mark.parametrize("backend", ["exhaustive", "cpsat", "scip"])
def test_lexicographic_priority_and_the_queue_order_tie_break(backend):
    # {0, 2} and {1, 2} both start 3 nodes and 1 GB: the front job's selection is taken
    solve = {**BACKENDS, "exhaustive": solve_exhaustive}[backend]
    m = herbein_case()
    r = solve(m, Budget(10.0), 0, form="lexicographic")
    assert m.selection(r.solution).tolist() == [True, False, True]
    assert r.objective == (3.0, 1e9)
    r = solve(m, Budget(10.0), 0, form="lexicographic", priority=("bb", "nodes"))
    assert m.selection(r.solution).tolist() == [True, False, True]
    assert r.objective == (1e9, 3.0)


@pytest.mark.parametrize("backend", ["cpsat", "scip"])
def test_the_trace_holds_the_first_stages_incumbents_as_count_matrices(backend):
    m = trade_off()
    plain = solve_cpsat(m, Budget(10.0), 0)
    r = BACKENDS[backend](m, Budget(10.0), 0, trace=True)
    assert [p.objectives for p in r.pareto] == [p.objectives for p in plain.pareto]
    assert "trace" not in plain.info
    trace = r.info["trace"]
    assert trace and all(t >= 0.0 for t, _ in trace)
    assert all(np.asarray(c).shape == (2, 1) for _, c in trace)
    assert all(type(v) is int for _, c in trace for row in c for v in row)
    # the first stage maximises the nodes started: its last incumbent starts the 3-node job
    assert trace[-1][1] == [[3], [0]]
    # traced, the backend still names itself and takes the front's options
    one = BACKENDS[backend](m, Budget(10.0), 0, trace=True, max_points=1)
    assert (one.backend, [p.objectives for p in one.pareto]) == (backend, [(3.0, 0.0)])


def test_the_select_and_place_program_refuses_the_wasted_ssd_objective():
    window = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0,
                         objectives=("nodes", "ssd_waste"), ssd=np.array([GB]),
                         free_node_ssd=np.array([2 * GB]))
    m = IOWindowModel(window=window, bandwidth=[0.0], group_nodes=([0],), group_link=[INF],
                      vertices=[], vertex_avail=[], membership=np.zeros((0, 1), bool))
    with pytest.raises(InputError) as err:
        io_linear_form(m)
    assert err.value.reason == "the select-and-place model has no SSD-waste objective"

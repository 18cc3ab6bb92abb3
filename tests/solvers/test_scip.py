"""Anytime traces (incumbents over time) on the library's small instances, whose optima are
recorded: SCIP's are feasible, in time order, improving, and end at the optimum; CP-SAT's and
NSGA-II's are recorded only on request and end at the answer."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.bench.instances import LIBRARY, iter_instances
from bbopt.core import Status
from bbopt.solvers import Budget, solve

pytest.importorskip("pyscipopt")

# (plan orders have no SCIP form and CP-SAT traces no plan)
SCALAR = [i for i in iter_instances(LIBRARY / "small") if i.kind != "pareto"
          and i.problem != "plan"]


@pytest.mark.parametrize("inst", SCALAR[::3], ids=lambda i: i.id)
def test_scip_trace_is_a_sequence_of_improving_feasible_incumbents(inst):
    assert "trace" not in solve(inst.model, "scip", Budget(10.0), 0,
                                **inst.solve_options()).info  # (recorded only when asked)
    r = solve(inst.model, "scip", Budget(10.0), 0, trace=True, **inst.solve_options())
    assert r.status is Status.OPTIMAL
    trace = r.info["trace"]
    assert trace, "SCIP reports at least the optimal incumbent"
    times = [t for t, _ in trace]
    assert times == sorted(times) and 0 <= times[0] <= r.wall_time
    values = [inst.score(x) for _, x in trace]
    assert None not in values
    better = np.diff(values) if inst.sense == "max" else -np.diff(values)
    assert np.all(better >= -1e-9 * max(abs(v) for v in values))
    assert inst.score(r.solution) == pytest.approx(inst.known["objective"], rel=1e-9)
    if inst.problem != "window":  # the window's trace is the weighted stage's, before ties
        assert values[-1] == pytest.approx(inst.known["objective"], rel=1e-9)


@pytest.mark.parametrize("inst", SCALAR[1::4], ids=lambda i: i.id)
def test_cpsat_trace_on_request_ends_at_the_optimum_and_is_absent_otherwise(inst):
    opts = inst.solve_options()
    plain = solve(inst.model, "cpsat", Budget(10.0), 0, **opts)
    assert "trace" not in plain.info  # the decision path records nothing
    r = solve(inst.model, "cpsat", Budget(10.0), 0, trace=True, **opts)
    values = [inst.score(x) for _, x in r.info["trace"]]
    assert values and None not in values
    assert values[-1] == pytest.approx(inst.known["objective"], rel=1e-9)
    assert inst.score(r.solution) == inst.score(plain.solution)


def test_nsga2_front_trace_on_request():
    inst = next(i for i in SCALAR if i.problem == "window")
    r = solve(inst.model, "nsga2", Budget(10.0), 0, trace=True, form="weighted",
              weights=(0.5, 0.5), generations=60)
    fronts = r.info["front_trace"]
    assert fronts and all(len(X) >= 1 for _, X in fronts)
    assert [t for t, _ in fronts] == sorted(t for t, _ in fronts)
    assert all(inst.model.feasible(x) for _, X in fronts for x in X)
    assert "front_trace" not in solve(inst.model, "nsga2", Budget(10.0), 0,
                                      generations=60).info

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


@pytest.mark.parametrize("seconds, limit", [(2.5, 2.5), (0.01, 0.01), (0.001, 0.01)])
def test_scip_settings_one_thread_no_gap_the_seed_and_the_time_left(seconds, limit):
    # (zero relative and absolute gap: the exact-agreement tests compare optima, and SCIP's
    # defaults stop at a relative gap of 1e-4)
    from bbopt.solvers.scip import ScipCommand

    command = ScipCommand(seconds, 7)
    assert command.msg is False and command.timeLimit == limit
    assert (command.optionsDict["gapRel"], command.optionsDict["gapAbs"]) == (0.0, 0.0)
    assert command.options == ["randomization/randomseedshift=7"]
    assert command.watch == [] and command.on_solution is None


def test_the_incumbent_watch_is_let_go_without_an_error(monkeypatch):
    # SCIP lets the event handler go when it frees the problem, after the answer is read: an
    # error there would only be printed ("Exception ignored"), so it is caught here
    import gc
    import sys

    from tests.solvers.window._int_solvers import FORCED

    ignored = []
    monkeypatch.setattr(sys, "unraisablehook", lambda raised: ignored.append(raised.exc_value))
    r = solve(FORCED, "scip", Budget(10.0), form="weighted", trace=True)
    gc.collect()
    assert r.status is Status.OPTIMAL and r.info["trace"] and ignored == []

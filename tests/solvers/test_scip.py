"""The scip backends' anytime traces: every incumbent is a feasible answer, they come in time
order and improve, and the last of the first stage is the answer's value (on the library's
small instances, whose optima are recorded)."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.bench.instances import LIBRARY, iter_instances
from bbopt.core import Status
from bbopt.solvers import Budget, solve

pytest.importorskip("pyscipopt")

SCALAR = [i for i in iter_instances(LIBRARY / "small") if i.kind != "pareto"]


@pytest.mark.parametrize("inst", SCALAR[::3], ids=lambda i: i.id)
def test_scip_trace_is_a_sequence_of_improving_feasible_incumbents(inst):
    r = solve(inst.model, "scip", Budget(10.0), 0, **inst.solve_options())
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

"""The select-and-place program's driver (:mod:`bbopt.solvers.io_window.forms`): the recording
wrapper hands the solver everything it is asked with, and the queue-order tie-break is a stage
of its own, left out when not wanted (Fan et al., BBSched, Section 3.2)."""

from __future__ import annotations

import numpy as np

from bbopt.solvers import Budget
from bbopt.solvers.io_window.forms import Recording, solve_io_window
from bbopt.solvers.window.cpsat import _CpSat
from tests.models.test_io_window_evaluation import herbein_case


class Inner:
    """A solver stand-in that records its calls and answers a fixed selection."""

    def __init__(self, answer):
        self.calls, self.answer = [], answer

    def maximize(self, cx, ca, seconds, hint=None, work=None):
        self.calls.append((seconds, hint, work))
        return self.answer


def test_the_recording_solver_passes_every_argument_and_keeps_each_placement():
    x, a = np.array([1, 0, 1]), np.array([2, 0, 1])
    inner = Inner(("optimal", x, a, 5.0))
    solver = Recording(inner)
    hint = (np.array([1, 1, 0]), None)
    assert solver.maximize(None, None, 1.5, hint=hint, work=0.25) == inner.answer
    assert inner.calls == [(1.5, hint, 0.25)]
    assert list(solver.seen) == [np.array([True, False, True]).tobytes()]
    assert solver.seen[np.array([True, False, True]).tobytes()].tolist() == [2, 0, 1]
    inner.answer = ("none", None, None, None)
    solver.maximize(None, None, 0.5)
    assert inner.calls[-1] == (0.5, None, None) and len(solver.seen) == 1


def test_the_queue_order_tie_break_is_one_more_stage_unless_left_out():
    """Lexicographic on Herbein's case: nodes, then BB, then (by default) the queue order."""
    m = herbein_case()
    stages = {}
    for tiebreak in (True, False):
        calls = []

        def make(lf, calls=calls):
            solver = _CpSat(lf, Budget(10.0), 0)
            inner = solver.maximize

            def counted(*args, **kwargs):
                calls.append(1)
                return inner(*args, **kwargs)

            solver.maximize = counted
            return solver

        r = solve_io_window(m, Budget(10.0), make, "cpsat", form="lexicographic",
                            tiebreak=tiebreak)
        assert r.objective == (3.0, 1e9)
        stages[tiebreak] = len(calls)
    assert stages == {True: 3, False: 2}

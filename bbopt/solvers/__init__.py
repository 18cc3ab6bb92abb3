"""Solver backends behind one contract (see :mod:`bbopt.solvers.base`)."""

from bbopt.solvers.base import (
    Budget,
    BudgetExceeded,
    Result,
    Solution,
    backends_for,
    register_backend,
    solve,
)

__all__ = ["Budget", "BudgetExceeded", "Result", "Solution", "backends_for", "register_backend",
           "solve"]

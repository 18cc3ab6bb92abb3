"""A clock for budget tests: every look finds a fixed step of time gone, as on a machine so
loaded that a wall budget runs out wherever it is checked."""

from __future__ import annotations

import itertools


class SlowClock:
    """Stands in for the ``time`` module: every ``perf_counter()`` is ``step`` seconds later."""

    def __init__(self, step: float) -> None:
        self.t = itertools.count()
        self.step = step

    def perf_counter(self) -> float:
        return next(self.t) * self.step

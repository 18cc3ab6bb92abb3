"""Reading simulation records: run metrics (:mod:`~bbopt.analysis.metrics`; an execution
model's own metrics come from its ``metrics`` method), split-trace comparisons
(:mod:`~bbopt.analysis.experiments`) and plots (:mod:`~bbopt.analysis.plots`).

This package sits above :mod:`bbopt.simulation`: it reads
:class:`~bbopt.simulation.SimulationResult` and is never imported by it, so the engine records
and analysis reads the record.
"""

from bbopt.analysis.metrics import per_job, summarize

__all__ = ["per_job", "summarize"]

"""The experiment layer's public face: sweep specifications, running them, the results store.

::

    from bbopt import experiments
    spec = experiments.load_spec("experiments/kopanski.yaml", quick=True)
    experiments.run_sweep(spec, "results/kopanski")         # resumable; processes or Dask
    table = experiments.collect("results/kopanski")         # one row per run
    experiments.write_report("results/kopanski", "report")  # figures + index.html
    fig = experiments.gantt(bbopt.simulate(jobs, platform, "fcfs-bb"))  # a matplotlib Figure

The figure functions (:func:`forest_plot`, :func:`wait_ecdf`, :func:`utilisation_plot`,
:func:`gantt`, :func:`pareto_plot`) return ``Figure`` objects and write a file only when given
``path``; they take a ``SimulationResult``, a :func:`to_pandas` frame or a stored ``jobs.csv``.

The pieces live in :mod:`bbopt.analysis` (sweep_spec, sweep, store, report, figures); the
one-process split comparison (:func:`compare_split`) is here too.
"""

from bbopt.analysis.experiments import compare_split, split_trace
from bbopt.analysis.figures import forest_plot, gantt, pareto_plot, utilisation_plot, wait_ecdf
from bbopt.analysis.frames import metrics_frame, timeline, to_pandas
from bbopt.analysis.intervals import interval_table, normalise_runs
from bbopt.analysis.store import Store, collect, run_hash, write_table
from bbopt.analysis.sweep import plan, run_sweep
from bbopt.analysis.sweep_spec import load_spec, parse_spec


def write_report(*args, **kwargs):
    """:func:`bbopt.analysis.report.write_report` (imports matplotlib on first use)."""
    from bbopt.analysis.report import write_report as _write

    return _write(*args, **kwargs)


__all__ = ["Store", "collect", "compare_split", "forest_plot", "gantt", "interval_table",
           "load_spec", "metrics_frame", "normalise_runs", "parse_spec", "pareto_plot", "plan",
           "run_hash", "run_sweep", "split_trace", "timeline", "to_pandas", "utilisation_plot",
           "wait_ecdf", "write_report", "write_table"]

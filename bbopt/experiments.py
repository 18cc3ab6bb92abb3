"""The experiment layer's public face: sweep specifications, running them, the results store.

::

    from bbopt import experiments
    spec = experiments.load_spec("experiments/kopanski.yaml", quick=True)
    experiments.run_sweep(spec, "results/kopanski")         # resumable; processes or Dask
    table = experiments.collect("results/kopanski")         # one row per run
    experiments.write_report("results/kopanski", "report")  # figures + index.html

The pieces live in :mod:`bbopt.analysis` (sweep_spec, sweep, store, report, figures); the
one-process split comparison (:func:`compare_split`) is here too.
"""

from bbopt.analysis.experiments import compare_split, split_trace
from bbopt.analysis.store import Store, collect, run_hash, write_table
from bbopt.analysis.sweep import plan, run_sweep
from bbopt.analysis.sweep_spec import load_spec, parse_spec


def write_report(*args, **kwargs):
    """:func:`bbopt.analysis.report.write_report` (imports matplotlib on first use)."""
    from bbopt.analysis.report import write_report as _write

    return _write(*args, **kwargs)


__all__ = ["Store", "collect", "compare_split", "load_spec", "parse_spec", "plan", "run_hash",
           "run_sweep", "split_trace", "write_report", "write_table"]

"""bbopt: HPC batch scheduling with burst buffers, local SSDs and I/O bandwidth, where every
scheduling decision is a formal optimisation model solved by interchangeable backends.

The public face::

    import bbopt
    decision = bbopt.decide(state, policy="sjf-bb")
    result = bbopt.simulate(jobs, bbopt.Platform.kopanski(), policy="fcfs-bb")
    record = bbopt.run(bbopt.RunSpec(workload="KTH-SP2-1996-2.1-cln.swf", policy="sjf-bb"))
    print(record.metrics["mean_wait"])   # what ``bbopt simulate`` prints, with its defaults
    print(bbopt.summarize(result))        # run metrics (bbopt.analysis.metrics)
    frame = result.to_pandas()            # one row per job (also bbopt.to_pandas(result))
    runs = bbopt.metrics_frame({"a": result})  # one row of summarize() per run

Sweeps, collected tables, reports and figures: :mod:`bbopt.experiments`.

``summarize``, ``to_pandas``, ``metrics_frame`` and the solver entry points (``solve``,
``Budget``, ``Result``, ``backends_for``) are imported on first use (PEP 562): pandas and the
models cost more to import than a whole replay of a small trace, and ``bbopt simulate`` under a
queue policy needs neither. ``import bbopt`` imports no numpy, so that the command line
(:func:`bbopt.cli.main`) can ask for one BLAS thread before numpy loads, unless the environment
says otherwise: no command does BLAS-heavy work, ``compare`` runs its policies in worker
processes, and starting OpenBLAS's threads costs about 0.03 s of CPU per process.
"""

from typing import Any

from bbopt.api import decide
from bbopt.core import (
    ClusterState,
    Decision,
    Job,
    Platform,
    Reservation,
    RunningJob,
    SolveStats,
    Start,
    Status,
)
from bbopt.errors import BboptError, InputError, InvalidDecision, UnknownNameError
from bbopt.policies import available_policies, make_policy, register
from bbopt.simulation import SimulationResult, simulate

__version__ = "0.1.0"

_LAZY = {"metrics_frame": "bbopt.analysis.frames", "to_pandas": "bbopt.analysis.frames",
         "summarize": "bbopt.analysis.metrics",
         **dict.fromkeys(("run", "RunSpec", "RunRecord"), "bbopt.runs"),
         **dict.fromkeys(("Budget", "Result", "backends_for", "solve"), "bbopt.solvers")}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bbopt' has no attribute {name!r}")

__all__ = [
    "BboptError",
    "Budget",
    "ClusterState",
    "Decision",
    "InputError",
    "InvalidDecision",
    "Job",
    "Platform",
    "Reservation",
    "Result",
    "RunRecord",
    "RunSpec",
    "RunningJob",
    "SimulationResult",
    "SolveStats",
    "Start",
    "Status",
    "UnknownNameError",
    "available_policies",
    "backends_for",
    "decide",
    "make_policy",
    "metrics_frame",
    "register",
    "run",
    "simulate",
    "solve",
    "summarize",
    "to_pandas",
]

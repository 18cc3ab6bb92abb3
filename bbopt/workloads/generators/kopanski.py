"""Kopanski & Rzadca's workload model (Euro-Par 2021, Section 4.1): log-normal burst-buffer
requests per processor and the phased job model.

BB requests: :func:`bbopt.workloads.bb.with_lognormal_bb` (per-processor log-normal fitted on
METACENTRUM-2013-3, median 2.63 GB per processor); re-exported here.

Job model (Fig. 4 of the paper): a job stages its data in from the PFS to its burst buffer, then
alternates 1 to 10 compute phases with checkpoints written to the burst buffer (and drained to the
PFS while the next compute phase runs), and finally stages its data out. "The size of the data
transfers is equal to the requested burst buffer size." The paper says the number of phases
depends on the job's amount of computation without giving the rule; Kopanski's simulator code
divides the computation into phases of a target length and rounds. bbopt does the same with a
target phase length in seconds: ``compute_phases = clip(round(runtime / phase_length), 1, 10)``.
Its default of one hour is bbopt's choice (the paper publishes no value). The checkpoint size is
``checkpoint_factor x bb`` (default 1.0, the paper's text; Kopanski's code uses 0.5).

**The I/O time taken out** (``io_out``, :func:`with_io_taken_out`). The authors' generator of
their I/O-aware workloads (``scripts/generate_swf_workload.py`` of
``jankopanski/Burst-Buffer-Scheduling``) shortens each job's computation so that computation
plus I/O is about the trace's runtime: ``max(runtime - 40 x bb_per_node / 1.25 GB/s,
0.05 x runtime)`` (``multiply_factor_runtime: 40`` of its configuration, the 1,250 MB/s
``bandwidth`` of ``platforms/dragonfly96.yaml``), except for jobs of walltime <= 120 s, which
keep their runtime (and ask 10 MB per node). Without it the phased model adds the I/O on top of
the trace's runtimes and jobs run longer than the authors'.

Key layout written to ``Job.extra["phases"]`` (SI units), read by the I/O execution model::

    {"model": "kopanski",
     "compute_phases": int,          # 1..10
     "compute_seconds": float,       # length of one compute phase (runtime / compute_phases)
     "checkpoints": int,             # compute_phases - 1 (between consecutive compute phases)
     "checkpoint_bytes": float,      # written to the BB at each checkpoint, then drained to PFS
     "stage_in_bytes": float,        # PFS -> BB before the first phase (= Job.bb)
     "stage_out_bytes": float}       # BB -> PFS after the last phase (= Job.bb)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from bbopt.core import HOUR, Job
from bbopt.errors import InputError
from bbopt.workloads.bb import lognormal_bb_per_processor, with_lognormal_bb

__all__ = ["kopanski_workload", "lognormal_bb_per_processor", "phases_of", "with_io_taken_out",
           "with_lognormal_bb", "with_phases"]

MAX_PHASES = 10
#: The authors' generator: I/O time taken out = IO_OUT_FACTOR x bb_per_node / IO_OUT_BANDWIDTH,
#: at most 1 - IO_OUT_FLOOR of the runtime, for jobs of walltime above IO_OUT_SHORT seconds.
IO_OUT_FACTOR = 40.0
IO_OUT_BANDWIDTH = 1.25e9
IO_OUT_FLOOR = 0.05
IO_OUT_SHORT = 120.0


def phases_of(job: Job, *, phase_length: float = HOUR, max_phases: int = MAX_PHASES,
              checkpoint_factor: float = 1.0) -> dict[str, float | int | str]:
    """The ``extra["phases"]`` record of one job (see the module docstring)."""
    if not phase_length > 0:
        raise InputError(f"phase_length must be > 0 seconds, got {phase_length!r}",
                         field="phase_length")
    if max_phases < 1:
        raise InputError(f"max_phases must be >= 1, got {max_phases!r}", field="max_phases")
    if checkpoint_factor < 0:
        raise InputError(f"checkpoint_factor must be >= 0, got {checkpoint_factor!r}",
                         field="checkpoint_factor")
    runtime = job.runtime if job.runtime is not None else job.walltime
    n = int(np.clip(round(runtime / phase_length), 1, max_phases))
    return {
        "model": "kopanski",
        "compute_phases": n,
        "compute_seconds": runtime / n,
        "checkpoints": n - 1,
        "checkpoint_bytes": checkpoint_factor * job.bb,
        "stage_in_bytes": job.bb,
        "stage_out_bytes": job.bb,
    }


def with_phases(jobs: Sequence[Job], *, phase_length: float = HOUR,
                max_phases: int = MAX_PHASES, checkpoint_factor: float = 1.0) -> list[Job]:
    """Copies of ``jobs`` with Kopanski's phase parameters in ``extra["phases"]``."""
    return [replace(job, extra={**job.extra,
                                "phases": phases_of(job, phase_length=phase_length,
                                                    max_phases=max_phases,
                                                    checkpoint_factor=checkpoint_factor)})
            for job in jobs]


def with_io_taken_out(jobs: Sequence[Job]) -> list[Job]:
    """Copies of ``jobs`` whose runtime is the computation of the authors' I/O-aware workloads:
    the trace's runtime less 40 x the per-node BB request / 1.25 GB/s, at least 5 % of it;
    jobs of walltime <= 120 s unchanged (module docstring)."""
    out = []
    for job in jobs:
        runtime = job.runtime if job.runtime is not None else job.walltime
        if job.walltime <= IO_OUT_SHORT or job.nodes <= 0:
            out.append(job)
            continue
        io = IO_OUT_FACTOR * (job.bb / job.nodes) / IO_OUT_BANDWIDTH
        out.append(replace(job, runtime=max(runtime - io, IO_OUT_FLOOR * runtime)))
    return out


def kopanski_workload(jobs: Sequence[Job], seed: int | np.random.Generator = 0, *,
                      phases: bool = True, rules: bool = False, io_out: bool = False,
                      **phase_options: float) -> list[Job]:
    """Kopanski's KTH workload: log-normal BB per processor (``rules``: with the two rules of
    the authors' generator, :data:`bbopt.workloads.bb.KOPANSKI_RULES`), optionally the I/O time
    taken out of the runtimes as the authors' I/O-aware workloads have it (``io_out``), and
    optionally the phases."""
    out = with_lognormal_bb(jobs, seed, rules=rules)
    if io_out:
        out = with_io_taken_out(out)
    return with_phases(out, **phase_options) if phases else out

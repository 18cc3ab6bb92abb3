"""Jobs built from columns that passed :class:`~bbopt.core.Job`'s checks, without repeating
the checks one job at a time: the SWF reader builds every job of a trace this way once its
columns pass :func:`valid_columns`, and the log-normal BB draw (Kopanski & Rzadca, Section 4.1)
copies jobs with their new request. A checked ``Job`` costs about five times as much, a few
tenths of a second on a whole trace.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bbopt.core import Job
from bbopt.quick_init import fill_fields


def valid_columns(submit: np.ndarray, walltime: np.ndarray, run: np.ndarray,
                   nodes: np.ndarray, bb: np.ndarray) -> bool:
    """Whether every record passes :class:`~bbopt.core.Job`'s checks of these fields: submit
    >= 0, walltime > 0, runtime >= 0, BB >= 0 (all finite) and at least one node."""
    with np.errstate(invalid="ignore"):
        return bool(np.isfinite(submit).all() and (submit >= 0).all()
                    and np.isfinite(walltime).all() and (walltime > 0).all()
                    and np.isfinite(run).all() and (run >= 0).all()
                    and np.isfinite(bb).all() and (bb >= 0).all() and (nodes >= 1).all())


#: A ``Job`` from every field's value, in field order, without its checks (filled in a twin
#: class with the same slots by plain assignment: :func:`bbopt.quick_init.fill_fields`); about a
#: third of the cost of writing each slot through its descriptor (a whole trace's jobs are built
#: this way, twice with a BB draw).
_fill_job = fill_fields(Job)


def trusted_job(job_id: str, submit: float, walltime: float, runtime: float, nodes: int,
                 bb: float, user: str | None, extra: dict) -> Job:
    """``Job(...)`` without its per-job checks, for records whose columns passed
    :func:`valid_columns` (a fraction of the time of a checked job)."""
    return _fill_job(job_id, submit, walltime, runtime, nodes, bb, 0.0, 0.0, user, 0.0, False,
                     False, extra)


def with_bb(job: Job, bb: float) -> Job:
    """``replace(job, bb=bb)`` without the checks when ``bb`` is finite and >= 0 (with them
    otherwise, so a bad value still names the job)."""
    if not (bb >= 0 and math.isfinite(bb)):
        from dataclasses import replace

        return replace(job, bb=bb)
    return with_bbs([job], [bb])[0]


def with_bbs(jobs: Sequence[Job], bbs: Sequence[float]) -> list[Job]:
    """``[with_bb(job, bb) for job, bb in zip(jobs, bbs)]``, each copy filled from its fields
    unchecked (a whole trace's BB draw copies every job: the generic copy loop cost most of it)."""
    out: list[Job] = []
    append, fill = out.append, _fill_job
    for job, bb in zip(jobs, bbs, strict=True):
        if not (bb >= 0 and math.isfinite(bb)):
            append(with_bb(job, bb))
            continue
        append(fill(job.id, job.submit, job.walltime, job.runtime, job.nodes, bb, job.ssd,
                    job.bandwidth, job.user, job.priority, job.preemptable,
                    job.checkpointable, job.extra))
    return out

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
from bbopt.quick_init import slot_twin


def valid_columns(submit: np.ndarray, walltime: np.ndarray, run: np.ndarray,
                   nodes: np.ndarray, bb: np.ndarray) -> bool:
    """Whether every record passes :class:`~bbopt.core.Job`'s checks of these fields: submit
    >= 0, walltime > 0, runtime >= 0, BB >= 0 (all finite) and at least one node."""
    with np.errstate(invalid="ignore"):
        return bool(np.isfinite(submit).all() and (submit >= 0).all()
                    and np.isfinite(walltime).all() and (walltime > 0).all()
                    and np.isfinite(run).all() and (run >= 0).all()
                    and np.isfinite(bb).all() and (bb >= 0).all() and (nodes >= 1).all())


#: Jobs are filled in a twin class by plain assignment, then made ``Job``s (the same slots:
#: :func:`bbopt.quick_init.slot_twin`): about a third of the cost of writing each slot through
#: its descriptor (a whole trace's jobs are built this way, twice with a BB draw).
_JobFields = slot_twin(Job)


def trusted_job(job_id: str, submit: float, walltime: float, runtime: float, nodes: int,
                 bb: float, user: str | None, extra: dict) -> Job:
    """``Job(...)`` without its per-job checks, for records whose columns passed
    :func:`valid_columns` (a fraction of the time of a checked job)."""
    job = _JobFields()
    job.id = job_id
    job.submit = submit
    job.walltime = walltime
    job.runtime = runtime
    job.nodes = nodes
    job.bb = bb
    job.ssd = 0.0
    job.bandwidth = 0.0
    job.user = user
    job.priority = 0.0
    job.preemptable = False
    job.checkpointable = False
    job.extra = extra
    job.__class__ = Job
    return job


def with_bb(job: Job, bb: float) -> Job:
    """``replace(job, bb=bb)`` without the checks when ``bb`` is finite and >= 0 (with them
    otherwise, so a bad value still names the job)."""
    if not (bb >= 0 and math.isfinite(bb)):
        from dataclasses import replace

        return replace(job, bb=bb)
    return with_bbs([job], [bb])[0]


def with_bbs(jobs: Sequence[Job], bbs: Sequence[float]) -> list[Job]:
    """``[with_bb(job, bb) for job, bb in zip(jobs, bbs)]``, each copy written out field by
    field (a whole trace's BB draw copies every job: the generic copy loop cost most of it)."""
    out: list[Job] = []
    append = out.append
    for job, bb in zip(jobs, bbs, strict=True):
        if not (bb >= 0 and math.isfinite(bb)):
            append(with_bb(job, bb))
            continue
        j = _JobFields()
        j.id = job.id
        j.submit = job.submit
        j.walltime = job.walltime
        j.runtime = job.runtime
        j.nodes = job.nodes
        j.bb = bb
        j.ssd = job.ssd
        j.bandwidth = job.bandwidth
        j.user = job.user
        j.priority = job.priority
        j.preemptable = job.preemptable
        j.checkpointable = job.checkpointable
        j.extra = job.extra
        j.__class__ = Job
        append(j)
    return out

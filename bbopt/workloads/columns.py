"""Jobs built from columns that passed :class:`~bbopt.core.Job`'s checks, without repeating
the checks one job at a time: the SWF reader builds every job of a trace this way once its
columns pass :func:`valid_columns`, and the log-normal BB draw (Kopanski & Rzadca, Section 4.1)
copies jobs with their new request. A checked ``Job`` costs about three times as much, a few
tenths of a second on a whole trace.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from bbopt.core import Job


def valid_columns(submit: np.ndarray, walltime: np.ndarray, run: np.ndarray,
                   nodes: np.ndarray, bb: np.ndarray) -> bool:
    """Whether every record passes :class:`~bbopt.core.Job`'s checks of these fields: submit
    >= 0, walltime > 0, runtime >= 0, BB >= 0 (all finite) and at least one node."""
    with np.errstate(invalid="ignore"):
        return bool(np.isfinite(submit).all() and (submit >= 0).all()
                    and np.isfinite(walltime).all() and (walltime > 0).all()
                    and np.isfinite(run).all() and (run >= 0).all()
                    and np.isfinite(bb).all() and (bb >= 0).all() and (nodes >= 1).all())


_JOB_NEW = object.__new__
# Each field's slot written through its descriptor: about two thirds of the cost of
# ``object.__setattr__`` per field (a whole trace's jobs are built this way, twice with a BB draw)
(_ID, _SUBMIT, _WALLTIME, _RUNTIME, _NODES, _BB, _SSD, _BANDWIDTH, _USER, _PRIORITY, _PREEMPTABLE,
 _CHECKPOINTABLE, _EXTRA) = (Job.__dict__[name].__set__ for name in Job.__slots__)


def trusted_job(job_id: str, submit: float, walltime: float, runtime: float, nodes: int,
                 bb: float, user: str | None, extra: dict) -> Job:
    """``Job(...)`` without its per-job checks, for records whose columns passed
    :func:`valid_columns` (a third of the time of a checked job)."""
    job = _JOB_NEW(Job)
    _ID(job, job_id)
    _SUBMIT(job, submit)
    _WALLTIME(job, walltime)
    _RUNTIME(job, runtime)
    _NODES(job, nodes)
    _BB(job, bb)
    _SSD(job, 0.0)
    _BANDWIDTH(job, 0.0)
    _USER(job, user)
    _PRIORITY(job, 0.0)
    _PREEMPTABLE(job, False)
    _CHECKPOINTABLE(job, False)
    _EXTRA(job, extra)
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
    new = _JOB_NEW
    out: list[Job] = []
    append = out.append
    for job, bb in zip(jobs, bbs, strict=True):
        if not (bb >= 0 and math.isfinite(bb)):
            append(with_bb(job, bb))
            continue
        j = new(Job)
        _ID(j, job.id)
        _SUBMIT(j, job.submit)
        _WALLTIME(j, job.walltime)
        _RUNTIME(j, job.runtime)
        _NODES(j, job.nodes)
        _BB(j, bb)
        _SSD(j, job.ssd)
        _BANDWIDTH(j, job.bandwidth)
        _USER(j, job.user)
        _PRIORITY(j, job.priority)
        _PREEMPTABLE(j, job.preemptable)
        _CHECKPOINTABLE(j, job.checkpointable)
        _EXTRA(j, job.extra)
        append(j)
    return out

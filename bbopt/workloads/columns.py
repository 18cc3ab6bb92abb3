"""Jobs built from columns that passed :class:`~bbopt.core.Job`'s checks, without repeating
the checks one job at a time: the SWF reader builds every job of a trace this way once its
columns pass :func:`valid_columns`, and the log-normal BB draw (Kopanski & Rzadca, Section 4.1)
copies jobs with their new request. A checked ``Job`` costs about five times as much, a few
tenths of a second on a whole trace.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bbopt.core import Job
from bbopt.limits import MAX_BYTES, MAX_NODES, MAX_SECONDS
from bbopt.quick_init import fill_fields


def valid_columns(submit: np.ndarray, walltime: np.ndarray, run: np.ndarray,
                   nodes: np.ndarray, bb: np.ndarray) -> bool:
    """Whether every record passes :class:`~bbopt.core.Job`'s checks of these fields, with
    the same bounds (:mod:`bbopt.limits`): submit and runtime in [0, MAX_SECONDS], walltime in
    (0, MAX_SECONDS], BB in [0, MAX_BYTES] and nodes in [1, MAX_NODES] (a comparison with NaN is
    false, so NaN and the infinities fail too). A record that fails goes through ``Job``'s own
    checks, which name it."""
    with np.errstate(invalid="ignore"):
        return bool(((submit >= 0) & (submit <= MAX_SECONDS)).all()
                    and ((walltime > 0) & (walltime <= MAX_SECONDS)).all()
                    and ((run >= 0) & (run <= MAX_SECONDS)).all()
                    and ((bb >= 0) & (bb <= MAX_BYTES)).all()
                    and ((nodes >= 1) & (nodes <= MAX_NODES)).all())


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
    """``replace(job, bb=bb)`` without the checks when ``bb`` is in [0, MAX_BYTES] (with them
    otherwise, so a bad value still names the job)."""
    if not 0 <= bb <= MAX_BYTES:  # (NaN too)
        from dataclasses import replace

        return replace(job, bb=bb)
    return with_bbs([job], [bb])[0]


def with_bbs(jobs: Sequence[Job], bbs: Sequence[float]) -> list[Job]:
    """``[with_bb(job, bb) for job, bb in zip(jobs, bbs)]``, each copy filled from its fields
    unchecked (a whole trace's BB draw copies every job: the generic copy loop cost most of it)."""
    out: list[Job] = []
    append, fill = out.append, _fill_job
    for job, bb in zip(jobs, bbs, strict=True):
        if not 0 <= bb <= MAX_BYTES:  # (NaN too: checked, the error names the job)
            append(with_bb(job, bb))
            continue
        append(fill(job.id, job.submit, job.walltime, job.runtime, job.nodes, bb, job.ssd,
                    job.bandwidth, job.user, job.priority, job.preemptable,
                    job.checkpointable, job.extra))
    return out

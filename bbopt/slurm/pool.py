"""The shared burst buffer as a Slurm pool, and Slurm's records as bbopt's types.

**Why cluster licenses.** Slurm 22.05 offers two ways to model a shared burst buffer: cluster
licenses (``Licenses=bb:<count>`` in ``slurm.conf``, jobs ask ``-L bb:<n>``) and the
``burst_buffer/lua`` plugin with pools. Licenses are enforced by ``slurmctld`` itself, with no
site script: a job asking more than the pool holds is refused at submission ("Invalid license
specification"), and a job whose licenses are not free stays pending until they are —
capacity can never be exceeded, whoever starts the job. The lua plugin accounts pool capacity
too, but only through a site-written ``burst_buffer.lua`` whose stage-in and stage-out run
asynchronously before and after the job, which adds states and latencies that Kopanski &
Rzadca's model (Section 2: a job holds its processors and its BB for its whole duration) does
not have. Licenses are that model exactly. How Slurm's own backfill plans
with them is a switch: by default (22.05) "any job blocked on license availability will not have
resources reserved" (``slurm.conf(5)``, ``bf_licenses``), so a job waiting for BB gets no
reservation at all and smaller jobs pass it freely; with ``SchedulerParameters=bf_licenses`` the
backfill planner tracks licenses over time and reserves them, as ``conservative-bb`` reserves BB.

**The mapping.** One license is ``unit`` bytes of BB (default 1 GB). ``Platform.bb`` is the
license total times ``unit``; a job's BB request becomes ``ceil(bb / unit)`` licenses and reads
back as licenses times ``unit`` (:func:`quantize` gives the job exactly as Slurm sees it). A job's
real walltime in seconds travels in its comment (``bbopt:walltime=S``) because Slurm's time
limits are whole minutes; a job without it plans with its Slurm time limit.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from bbopt.core import GB, Job, Platform
from bbopt.slurm.commands import License, SlurmJob, SlurmNode

#: The license that stands for the shared burst buffer.
BB_LICENSE = "bb"
#: Bytes of burst buffer per license unless told otherwise.
DEFAULT_UNIT = GB
#: Walltime used for a job with neither a bbopt walltime nor a Slurm time limit.
UNLIMITED_WALLTIME = 365 * 86400.0


def licenses_for(bb: float, unit: float = DEFAULT_UNIT) -> int:
    """Licenses that cover ``bb`` bytes (rounded up)."""
    if bb <= 0:
        return 0
    return max(1, math.ceil(bb / unit * (1 - 1e-12)))


def bb_of(licenses: int, unit: float = DEFAULT_UNIT) -> float:
    return float(licenses) * unit


def quantize(job: Job, unit: float = DEFAULT_UNIT) -> Job:
    """``job`` with its BB rounded up to whole licenses (what Slurm enforces)."""
    return dataclasses.replace(job, bb=bb_of(licenses_for(job.bb, unit), unit))


def platform_from_slurm(nodes: Sequence[SlurmNode], licenses: dict[str, License],
                        unit: float = DEFAULT_UNIT, name: str = "slurm") -> Platform:
    """The partition's nodes and the ``bb`` license pool as a :class:`~bbopt.Platform`."""
    pool = licenses.get(BB_LICENSE)
    return Platform(nodes=len(nodes), bb=bb_of(pool.total, unit) if pool else 0.0, name=name)


def comment_for(job: Job) -> str:
    """The comment that carries what Slurm cannot hold: the walltime to the second."""
    return f"bbopt:walltime={job.walltime:.6g},id={job.id}"


def job_from_slurm(sj: SlurmJob, origin: float, unit: float = DEFAULT_UNIT) -> Job:
    """A Slurm job as a bbopt :class:`~bbopt.Job`; its id is Slurm's job id.

    Times are relative to ``origin`` (Unix seconds), clipped at 0. The trace id from the comment
    (if any) and the Slurm job name go to ``extra``.
    """
    tags = sj.tags
    walltime = float(tags["walltime"]) if "walltime" in tags else (
        sj.time_limit or UNLIMITED_WALLTIME)
    submit = max(0.0, (sj.submit if sj.submit is not None else origin) - origin)
    return Job(id=sj.id, submit=submit, walltime=walltime, nodes=max(1, sj.nodes),
               bb=bb_of(sj.licenses.get(BB_LICENSE, 0), unit), user=sj.user or None,
               extra={"name": sj.name, "trace_id": tags.get("id", sj.name)})

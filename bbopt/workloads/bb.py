"""Burst-buffer requests for traces that have none.

Kopanski & Rzadca, Section 4.1, "Burst buffer request model": BB request per processor, fitted on
the memory requests of the METACENTRUM-2013-3 log, is log-normal and independent of job size:
in KiB, ``lognorm(s=1.0972516604, loc=-150361.595, scale=2714115.572)`` (scipy's
parametrisation), times 1024 to bytes, clamped to [100 MB, 40 GB]. A job's total request is its
per-processor draw times its node count (one node = one processor on their platform). The
median per processor is loc + scale = 2.56e6 KiB = 2.63 GB; the mean times 96 processors is about
the 480 GB of the paper's platform.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from bbopt.core import GB, MB, Job

LOGNORM_S = 1.0972516604
LOGNORM_LOC = -150361.595
LOGNORM_SCALE = 2714115.572
BB_PER_PROC_MIN = 100 * MB
BB_PER_PROC_MAX = 40 * GB


def lognormal_bb_per_processor(size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of the per-processor BB request in bytes (whole bytes, clamped).

    The draw is scipy's ``lognorm.rvs(s, loc, scale, random_state=rng)`` written out with
    numpy (``exp(s * N(0, 1)) * scale + loc``, in that order, from the same normal stream), so
    the numbers are bit for bit scipy's without importing ``scipy.stats`` (about 0.6 s).
    """
    kib = np.exp(LOGNORM_S * rng.standard_normal(size)) * LOGNORM_SCALE + LOGNORM_LOC
    return np.round(np.clip(kib * 1024.0, BB_PER_PROC_MIN, BB_PER_PROC_MAX))


def with_lognormal_bb(jobs: Sequence[Job], seed: int | np.random.Generator = 0) -> list[Job]:
    """Copies of ``jobs`` with ``bb`` drawn from the log-normal model (seeded)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    per_proc = lognormal_bb_per_processor(len(jobs), rng)
    return [replace(job, bb=float(p) * job.nodes) for job, p in zip(jobs, per_proc, strict=True)]

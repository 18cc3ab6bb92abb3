"""Burst-buffer requests for traces that have none.

Kopanski & Rzadca, Section 4.1, "Burst buffer request model": BB request per processor, fitted on
the memory requests of the METACENTRUM-2013-3 log, is log-normal and independent of job size:
in KiB, ``lognorm(s=1.0972516604, loc=-150361.595, scale=2714115.572)`` (scipy's
parametrisation), times 1024 to bytes, clamped to [100 MB, 40 GB]. A job's total request is its
per-processor draw times its node count (one node = one processor on their platform). The
median per processor is loc + scale = 2.56e6 KiB = 2.63 GB; the mean times 96 processors is about
the 480 GB of the paper's platform.

Two further rules of the authors' workload generator (they are not in the paper's text; the
Batsim workloads of the authors' public artifact show them: every short job there asks
10 MB per node and every wide job's per-node request sits exactly at the cap below), applied
after the draw when ``rules`` is on (:class:`KopanskiRules`):

- **fit in the platform**: the per-node request of a job on ``n`` nodes is at most
  ``floor(C / ceil(n / B))`` bytes, where ``B`` BB nodes of ``C`` bytes each serve the machine
  (12 x 40 GB on the paper's platform): ``ceil(n / B)`` per-node pieces must share one BB node
  when the pieces are spread evenly, so with the cap every job that fits the compute nodes fits
  the burst buffers of an empty machine;
- **short jobs**: a job whose walltime is at most 120 s asks 10 MB per node (its draw is
  discarded, but still made, so that the other jobs keep the same draws with and without the
  rule).

Without them, wide jobs draw more than the platform can hold and are rejected (283 of the KTH
log's jobs instead of the authors' 14 too-wide ones), which removes the hardest jobs from the
trace and halves the waits. bbopt applies them by default when the BB model is drawn for the
Kopanski platform (``bbopt ... --bb auto``; ``--no-bb-rules`` turns them off).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bbopt.core import GB, MB, Job
from bbopt.workloads.columns import with_bbs

LOGNORM_S = 1.0972516604
LOGNORM_LOC = -150361.595
LOGNORM_SCALE = 2714115.572
BB_PER_PROC_MIN = 100 * MB
BB_PER_PROC_MAX = 40 * GB


@dataclass(frozen=True, slots=True)
class KopanskiRules:
    """The two rules of the authors' generator (see the module docstring), with the platform
    they refer to: ``bb_nodes`` BB nodes of ``bb_node_capacity`` bytes; jobs with walltime
    ``<= short_walltime`` seconds ask ``short_bb_per_node`` bytes per node."""

    bb_nodes: int = 12
    bb_node_capacity: float = 40 * GB
    short_walltime: float = 120.0
    short_bb_per_node: float = 10 * MB

    def cap_per_node(self, nodes: int) -> float:
        """The largest per-node request of a job on ``nodes`` nodes that fits the BB nodes."""
        return float(math.floor(self.bb_node_capacity / math.ceil(nodes / self.bb_nodes)))

    def per_node(self, job: Job, drawn: float) -> float:
        """The per-node request of ``job`` given its per-processor draw ``drawn`` (bytes)."""
        if job.walltime <= self.short_walltime:
            return self.short_bb_per_node
        return min(drawn, self.cap_per_node(job.nodes))


#: The rules as the authors' generator applies them on the paper's 96-node platform.
KOPANSKI_RULES = KopanskiRules()


def lognormal_bb_per_processor(size: int, rng: np.random.Generator) -> np.ndarray:
    """``size`` draws of the per-processor BB request in bytes (whole bytes, clamped).

    The draw is scipy's ``lognorm.rvs(s, loc, scale, random_state=rng)`` written out with
    numpy (``exp(s * N(0, 1)) * scale + loc``, in that order, from the same normal stream), so
    the numbers are bit for bit scipy's without importing ``scipy.stats`` (about 0.6 s).
    """
    kib = np.exp(LOGNORM_S * rng.standard_normal(size)) * LOGNORM_SCALE + LOGNORM_LOC
    return np.round(np.clip(kib * 1024.0, BB_PER_PROC_MIN, BB_PER_PROC_MAX))


def lognormal_bb_column(nodes: np.ndarray, walltime: np.ndarray,
                        seed: int | np.random.Generator = 0, *,
                        rules: KopanskiRules | bool | None = None) -> np.ndarray | None:
    """The requests :func:`with_lognormal_bb` gives jobs of these node counts and walltimes (in
    job order), from the columns alone; ``None`` for rules of a subclass (they see whole jobs)."""
    if rules is True:
        rules = KOPANSKI_RULES
    if rules and type(rules) is not KopanskiRules:
        return None
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    per_proc = lognormal_bb_per_processor(len(nodes), rng)
    nodes = np.asarray(nodes, dtype=np.float64)
    if rules:  # KopanskiRules.per_node on whole columns (the same float operations)
        cap = np.floor(rules.bb_node_capacity / np.ceil(nodes / rules.bb_nodes))
        per_proc = np.where(np.asarray(walltime, dtype=np.float64) <= rules.short_walltime,
                            rules.short_bb_per_node, np.minimum(per_proc, cap))
    return per_proc * nodes


def with_lognormal_bb(jobs: Sequence[Job], seed: int | np.random.Generator = 0, *,
                      rules: KopanskiRules | bool | None = None) -> list[Job]:
    """Copies of ``jobs`` with ``bb`` drawn from the log-normal model (seeded).

    ``rules``: ``None`` or ``False`` draws the paper's model alone; ``True`` applies
    :data:`KOPANSKI_RULES` (fit-in-platform cap and short-job rule); a :class:`KopanskiRules`
    applies those. The draws are the same either way: the rules only replace some of them.
    """
    if rules is True:
        rules = KOPANSKI_RULES
    if rules and type(rules) is not KopanskiRules:  # (a subclass may change the rule)
        rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
        per_proc = lognormal_bb_per_processor(len(jobs), rng)
        return with_bbs(jobs, [rules.per_node(job, p) * job.nodes
                               for job, p in zip(jobs, per_proc.tolist(), strict=True)])
    nodes = np.fromiter((job.nodes for job in jobs), np.float64, len(jobs))
    walltime = np.fromiter((job.walltime for job in jobs), np.float64, len(jobs))
    return with_bbs(jobs, lognormal_bb_column(nodes, walltime, seed, rules=rules).tolist())

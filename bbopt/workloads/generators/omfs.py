"""Entities, entitlements and preemption flags for fair-share scheduling (Zvi & Oren, OMFS).

OMFS guarantees each entity its CPU entitlement (a percentage of the machine) and lets jobs of
over-entitled entities be preempted: checkpointable jobs are checkpointed and requeued, other
preemptable jobs are dropped (Algorithm 1). A workload therefore needs, per job, the entity it
belongs to and two flags, and, per entity, an entitlement share.

The entity is stored in ``Job.user`` (the field Algorithm 1 reads as ``J.user``); the trace's
user id, if it is replaced, is kept in ``Job.extra["original_user"]``. Entitlements are returned
as ``{entity: share}`` with shares summing to 1 (``J.user.percent / 100`` in the paper).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import numpy as np

from bbopt.core import Job
from bbopt.errors import InputError
from bbopt.workloads.generators import rng_of


def assign_entities(jobs: Sequence[Job], *, by: str = "user", n_entities: int | None = None,
                    shares: str | Mapping[str, float] = "usage",
                    seed: int | np.random.Generator = 0) -> tuple[list[Job], dict[str, float]]:
    """Map jobs to entities and give each entity an entitlement share.

    - ``by="user"`` / ``"group"``: the entity is the job's SWF user id (``Job.user``) or group id
      (``Job.extra["group"]``, read with ``read_swf(..., groups=True)``); with ``n_entities``,
      those ids are folded into that many entities (``e0``..) by a seeded random mapping.
      ``by="random"``: each job goes to one of ``n_entities`` entities uniformly at random.
    - ``shares``: ``"equal"``, ``"usage"`` (proportional to each entity's node-seconds of
      runtime in the workload) or an explicit ``{entity: weight}`` mapping (normalised to 1).
    """
    rng = rng_of(seed)
    jobs = list(jobs)
    if not jobs:
        raise InputError("empty workload: no jobs", field="jobs")
    if by not in ("user", "group", "random"):
        raise InputError(f"by must be 'user', 'group' or 'random', got {by!r}", field="by")
    if n_entities is not None and n_entities < 1:
        raise InputError(f"n_entities must be >= 1, got {n_entities!r}", field="n_entities")
    if by == "random":
        if n_entities is None:
            raise InputError("by='random' needs n_entities", field="n_entities")
        labels = [f"e{k}" for k in rng.integers(0, n_entities, len(jobs)).tolist()]
    else:
        raw = [(j.user if by == "user" else j.extra.get("group")) for j in jobs]
        raw = [str(r) if r is not None else "unknown" for r in raw]
        if n_entities is not None:
            distinct = sorted(set(raw))
            folded = rng.integers(0, n_entities, len(distinct)).tolist()
            mapping = {d: f"e{f}" for d, f in zip(distinct, folded, strict=True)}
            labels = [mapping[r] for r in raw]
        else:
            labels = raw
    out = []
    for job, label in zip(jobs, labels, strict=True):
        extra = dict(job.extra)
        if job.user is not None and job.user != label:
            extra["original_user"] = job.user
        out.append(replace(job, user=label, extra=extra))
    entities = sorted(set(labels))
    if isinstance(shares, str):
        if shares == "equal":
            weights = {e: 1.0 for e in entities}
        elif shares == "usage":
            weights = dict.fromkeys(entities, 0.0)
            for job in out:
                weights[job.user] += job.nodes * (job.runtime if job.runtime is not None
                                                  else job.walltime)
        else:
            raise InputError(f"shares must be 'equal', 'usage' or a mapping, got {shares!r}",
                             field="shares")
    else:
        unknown = set(entities) - set(shares)
        if unknown:
            raise InputError(f"no share given for entities {sorted(unknown)[:5]}",
                             field="shares")
        weights = {e: float(shares[e]) for e in entities}
        if any(w < 0 for w in weights.values()):
            raise InputError("shares must be >= 0", field="shares")
    total = sum(weights.values())
    if total <= 0:
        raise InputError("shares sum to zero", field="shares")
    return out, {e: w / total for e, w in weights.items()}


def with_preemption_flags(jobs: Sequence[Job], *, preemptable: float = 0.5,
                          checkpointable: float = 0.5,
                          seed: int | np.random.Generator = 0) -> list[Job]:
    """Mark ``preemptable`` of the jobs preemptable and, among those, ``checkpointable`` of all
    jobs checkpointable (a checkpointable job is preemptable: it is evicted by checkpointing).

    Both are fractions of the whole workload; exact counts (rounded), chosen at random.
    """
    for name, value in (("preemptable", preemptable), ("checkpointable", checkpointable)):
        if not 0.0 <= value <= 1.0:
            raise InputError(f"{name} must be in [0, 1], got {value!r}", field=name)
    if checkpointable > preemptable:
        raise InputError("checkpointable jobs are a subset of preemptable ones: "
                         f"checkpointable={checkpointable} > preemptable={preemptable}",
                         field="checkpointable")
    rng = rng_of(seed)
    n = len(jobs)
    order = rng.permutation(n)
    n_pre = int(round(preemptable * n))
    n_ckpt = int(round(checkpointable * n))
    pre = np.zeros(n, dtype=bool)
    ckpt = np.zeros(n, dtype=bool)
    pre[order[:n_pre]] = True
    ckpt[order[:n_ckpt]] = True
    return [replace(j, preemptable=bool(p), checkpointable=bool(c))
            for j, p, c in zip(jobs, pre.tolist(), ckpt.tolist(), strict=True)]

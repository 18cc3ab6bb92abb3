"""Fan et al.'s synthetic burst-buffer and local-SSD scenarios (BBSched, HPDC 2019).

**S1-S4** (Section 4.1): starting from a trace with (few) BB requests, the share of jobs that
request burst buffer is expanded to 50 % (S1, S3) or 75 % (S2, S4); "the assigned burst buffer
request is randomly selected from the original burst buffer requests in a certain range": the
original requests greater than 5 TB (S1, S2) or greater than 20 TB (S3, S4). bbopt's reading:
jobs that already request BB keep their request; jobs without one are picked uniformly at random
until the target share is reached, and each gets a request drawn uniformly, with replacement,
from the pool of original requests above the threshold. When the trace has no such request,
pass ``distribution`` (a function ``(rng, size) -> bytes``) and requests are drawn from it,
conditioned on exceeding the threshold (by rejection).

**S5-S7** (Section 5): local SSD requests per node on top of S2: 80/20 (S5), 50/50 (S6) and
20/80 (S7) splits between "0-128 GB" and "129-256 GB" per node. bbopt draws whole gigabytes
uniformly in [0, 128] and [129, 256] (a 0 GB draw means no SSD request). The platform of that
section has half of its nodes with 128 GB and half with 256 GB SSDs: :func:`theta_ssd_platform`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from bbopt.core import GB, TB, Job, Platform
from bbopt.errors import InputError
from bbopt.workloads.generators import rng_of

#: name -> (share of jobs requesting BB, requests drawn from originals strictly above this)
BB_SCENARIOS: dict[str, tuple[float, float]] = {
    "S1": (0.50, 5 * TB),
    "S2": (0.75, 5 * TB),
    "S3": (0.50, 20 * TB),
    "S4": (0.75, 20 * TB),
}
#: name -> share of jobs whose per-node SSD request is in 0-128 GB (the rest: 129-256 GB)
SSD_SCENARIOS: dict[str, float] = {"S5": 0.80, "S6": 0.50, "S7": 0.20}

Distribution = Callable[[np.random.Generator, int], np.ndarray]


def expand_bb_requests(jobs: Sequence[Job], share: float, above: float,
                       seed: int | np.random.Generator = 0, *,
                       distribution: Distribution | None = None,
                       max_request: float | None = None) -> list[Job]:
    """Copies of ``jobs`` where at least ``share`` of the jobs request burst buffer.

    New requests come from the original requests ``> above`` bytes (or from ``distribution``
    when given, or when the trace has none above the threshold); ``max_request`` (e.g. the
    platform's capacity) excludes larger values from the pool and from the draws.
    """
    if not 0.0 <= share <= 1.0:
        raise InputError(f"share must be in [0, 1], got {share!r}", field="share")
    rng = rng_of(seed)
    jobs = list(jobs)
    if not jobs:
        raise InputError("empty workload: no jobs", field="jobs")
    has = np.array([j.bb > 0 for j in jobs])
    target = int(round(share * len(jobs)))
    missing = max(0, target - int(has.sum()))
    if missing == 0:
        return jobs
    limit = max_request if max_request is not None else np.inf
    pool = np.array([j.bb for j in jobs if above < j.bb <= limit])
    candidates = np.flatnonzero(~has)
    chosen = np.sort(rng.choice(candidates, size=missing, replace=False))
    if distribution is None:
        if pool.size == 0:
            raise InputError(f"the trace has no BB request above {above:.4g} B to draw from; "
                             "pass distribution=", field="distribution")
        draws = rng.choice(pool, size=missing, replace=True)
    else:
        draws = _conditioned(distribution, rng, missing, above, limit)
    out = list(jobs)
    for k, value in zip(chosen.tolist(), draws.tolist(), strict=True):
        out[k] = replace(out[k], bb=float(value))
    return out


def _conditioned(distribution: Distribution, rng: np.random.Generator, size: int, above: float,
                 limit: float) -> np.ndarray:
    got: list[float] = []
    drawn = 0
    while len(got) < size:
        batch = np.asarray(distribution(rng, max(2 * (size - len(got)), 64)), dtype=float)
        drawn += batch.size
        got.extend(batch[(batch > above) & (batch <= limit)].tolist())
        if drawn > 1000 * size + 10_000 and len(got) < size:
            raise InputError(f"distribution rarely exceeds {above:.4g} B (accepted {len(got)} "
                             f"of {drawn} draws)", field="distribution")
    return np.array(got[:size])


def bbsched_scenario(jobs: Sequence[Job], name: str, seed: int | np.random.Generator = 0, *,
                     distribution: Distribution | None = None,
                     max_request: float | None = None, scale: float = 1.0) -> list[Job]:
    """Fan et al.'s scenario ``"S1"``..``"S4"`` (BB) or ``"S5"``..``"S7"`` (S2 + local SSD).

    ``scale`` multiplies the 5 TB / 20 TB thresholds, for a machine smaller than the paper's
    (e.g. its BB capacity over Theta's 1.26 PB)."""
    if not scale > 0:
        raise InputError(f"scale must be > 0, got {scale!r}", field="scale")
    rng = rng_of(seed)
    if name in BB_SCENARIOS:
        share, above = BB_SCENARIOS[name]
        return expand_bb_requests(jobs, share, above * scale, rng, distribution=distribution,
                                  max_request=max_request)
    if name in SSD_SCENARIOS:
        s2 = bbsched_scenario(jobs, "S2", rng, distribution=distribution,
                              max_request=max_request, scale=scale)
        return with_ssd_requests(s2, SSD_SCENARIOS[name], rng)
    raise InputError(f"unknown scenario {name!r}; known: "
                     f"{', '.join([*BB_SCENARIOS, *SSD_SCENARIOS])}", field="scenario")


def with_ssd_requests(jobs: Sequence[Job], small_share: float,
                      seed: int | np.random.Generator = 0, *,
                      small: tuple[float, float] = (0, 128),
                      large: tuple[float, float] = (129, 256), unit: float = GB) -> list[Job]:
    """Per-node local SSD requests: ``small_share`` of the jobs in ``small`` (whole units,
    inclusive), the others in ``large`` (Fan et al., Section 5)."""
    if not 0.0 <= small_share <= 1.0:
        raise InputError(f"small_share must be in [0, 1], got {small_share!r}",
                         field="small_share")
    rng = rng_of(seed)
    n = len(jobs)
    is_small = np.zeros(n, dtype=bool)
    is_small[rng.choice(n, size=int(round(small_share * n)), replace=False)] = True
    lo = np.where(is_small, small[0], large[0])
    hi = np.where(is_small, small[1], large[1])
    values = rng.integers(lo, np.asarray(hi) + 1) * unit
    return [replace(j, ssd=float(v)) for j, v in zip(jobs, values.tolist(), strict=True)]


def theta_ssd_platform(nodes: int, bb: float, *, small: float = 128 * GB,
                       large: float = 256 * GB, name: str = "theta-ssd") -> Platform:
    """A platform whose first half of nodes has ``small`` and the rest ``large`` local SSDs."""
    half = nodes // 2
    return Platform(nodes=nodes, bb=bb, name=name,
                    node_ssd=tuple([small] * half + [large] * (nodes - half)))


def bb_capacity_for_demand(jobs: Sequence[Job], nodes: int, demand: float = 1.0) -> float:
    """The BB capacity (bytes, whole GB) at which the workload's BB demand -- requested
    byte-seconds over capacity x submission span -- is ``demand`` times its node demand on
    ``nodes`` nodes, and at least its largest request.

    This is how the KTH stand-in of Fan et al.'s S3/S4 is made BB-bound (their BB usage above
    80 %): with Theta's per-node share of its 1.26 PB, KTH's jobs, which hold far more of the
    machine's nodes per job than Theta's, would leave the BB idle.
    """
    if not demand > 0:
        raise InputError(f"demand must be > 0, got {demand!r}", field="demand")
    work = [(j.runtime if j.runtime is not None else j.walltime) for j in jobs]
    node_s = sum(j.nodes * w for j, w in zip(jobs, work, strict=True))
    bb_s = sum(j.bb * w for j, w in zip(jobs, work, strict=True))
    if node_s <= 0 or bb_s <= 0:
        raise InputError("the workload requests no BB (or no node-time): nothing to size the "
                         "BB by", field="sized_by")
    capacity = float(np.floor(nodes * bb_s / (demand * node_s) / GB) * GB)
    return max(capacity, max(j.bb for j in jobs))

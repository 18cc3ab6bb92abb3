"""A capability-computing workload like Theta's (Fan et al., BBSched, HPDC 2019, Section 4.1).

BBSched's largest gains (-41 % mean wait against naive on Theta-S4) come from Theta: 4,392 KNL
nodes, Cobalt's WFP base order, 70,507 jobs from January to May 2018, burst-buffer requests
taken from Darshan (17.18 % of the jobs moved more than 1 GB; requests in [1 GB, 285 TB]),
a projected shared burst buffer of 1.26 PB (Table 2), node usage around 80 % under the
optimisation methods (Section 4.4). The trace is not public; this module draws a workload with
those stated properties. What the paper states is used as stated; the rest is bbopt's reading:

- **job sizes** (capability computing: Cobalt runs no job below 128 nodes on Theta): the
  Lublin-Feitelson size model (Lublin & Feitelson, JPDC 2003): ``log2(nodes)`` drawn from a
  two-stage uniform over ``[log2(128), u_med]`` with probability ``u_prob`` and
  ``[u_med, log2(4392)]`` otherwise, ``u_med = log2(4392) - 2.5`` (their rule for the change
  point); with probability ``pow2_prob`` the exponent is rounded (a power-of-two job). No serial
  jobs.
- **runtimes**: Lublin-Feitelson's hyper-gamma for batch jobs: ``ln(runtime)`` is Gamma(4.2,
  0.94) (short jobs, about a minute) with probability ``p`` and Gamma(312, 0.03) (hours)
  otherwise. Their ``p = pa x nodes + pb`` (``pa = -0.0054``, ``pb = 0.78``) was fitted on a
  128-node machine; bbopt applies it to the job's share of the machine scaled to 128 nodes
  (``p = pb + pa x 128 x nodes / 4392``: 0.76 for a 128-node job, 0.09 for the whole machine),
  so that wider jobs run longer, as in their model. Runtimes are clipped to [10 s, 24 h].
- **walltimes**: the runtime times a factor drawn uniformly in [1, 3], rounded up to 10 minutes
  and capped at 24 h (users overestimate; the paper gives no number).
- **arrivals**: a Poisson process whose rate gives an offered node load of ``load`` (node-seconds
  requested per second over the node count; default 0.85, so that the achieved node usage is
  near the paper's ~80 %). The resulting job rate is reported by :func:`job_rate_per_day`
  (Theta's: 70,507 jobs in 151 days, about 467 a day).
- **burst buffer** ("Original"): ``bb_share`` (17.18 %) of the jobs, picked at random, get a
  request drawn log-uniformly in [1 GB, 285 TB] (whole GB); the others none. The scenarios S1-S4
  are then :func:`bbopt.workloads.generators.bbsched.bbsched_scenario` with the paper's own
  thresholds (5 TB, 20 TB; ``scale=1``).

Jobs are numbered ``1, 2, ...`` in submission order; ``Job.extra["capability"]`` records the
drawn mixture branch (``"short"`` / ``"long"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from bbopt.core import DAY, GB, HOUR, MINUTE, TB, Job, Platform
from bbopt.errors import InputError
from bbopt.workloads.generators import rng_of

#: Theta (Table 2 of the paper).
THETA_NODES = 4392
THETA_BB = 1.26e15
THETA_JOBS, THETA_DAYS = 70_507, 151
#: Cobalt's smallest job on Theta (capability computing).
THETA_MIN_NODES = 128
#: Share of Theta's jobs moving more than 1 GB, and the range of their requests.
ORIGINAL_SHARE = 0.1718
ORIGINAL_RANGE = (1 * GB, 285 * TB)


@dataclass(frozen=True)
class CapabilityModel:
    """Parameters of the capability workload (module docstring); defaults are Theta's."""

    nodes: int = THETA_NODES
    min_nodes: int = THETA_MIN_NODES
    u_prob: float = 0.86
    u_med_offset: float = 2.5
    pow2_prob: float = 0.75
    short_gamma: tuple[float, float] = (4.2, 0.94)
    long_gamma: tuple[float, float] = (312.0, 0.03)
    pa: float = -0.0054
    pb: float = 0.78
    runtime_range: tuple[float, float] = (10.0, 24 * HOUR)
    overestimate: tuple[float, float] = (1.0, 3.0)
    max_walltime: float = 24 * HOUR
    load: float = 0.85
    bb_share: float = ORIGINAL_SHARE
    bb_range: tuple[float, float] = ORIGINAL_RANGE

    def __post_init__(self) -> None:
        if not 1 <= self.min_nodes <= self.nodes:
            raise InputError(f"min_nodes must be in [1, nodes], got {self.min_nodes}",
                             field="min_nodes")
        if not self.load > 0:
            raise InputError(f"load must be > 0, got {self.load!r}", field="load")
        if not 0.0 <= self.bb_share <= 1.0:
            raise InputError(f"bb_share must be in [0, 1], got {self.bb_share!r}",
                             field="bb_share")
        if not 0.0 <= self.u_prob <= 1.0 or not 0.0 <= self.pow2_prob <= 1.0:
            raise InputError("u_prob and pow2_prob must be probabilities", field="u_prob")

    def sizes(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """Node counts from the two-stage log-uniform model, in ``[min_nodes, nodes]``."""
        lo, hi = math.log2(self.min_nodes), math.log2(self.nodes)
        med = min(max(hi - self.u_med_offset, lo), hi)
        first = rng.random(n) < self.u_prob
        e = np.where(first, rng.uniform(lo, med, n), rng.uniform(med, hi, n))
        e = np.where(rng.random(n) < self.pow2_prob, np.round(e), e)
        return np.clip(np.round(2.0 ** e), self.min_nodes, self.nodes).astype(int)

    def short_probability(self, nodes: np.ndarray) -> np.ndarray:
        """Probability of the short branch of the hyper-gamma for jobs of ``nodes`` nodes."""
        return np.clip(self.pb + self.pa * 128.0 * nodes / self.nodes, 0.0, 1.0)

    def runtimes(self, rng: np.random.Generator, nodes: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
        """(runtimes in seconds, True where the short branch was drawn)."""
        short = rng.random(len(nodes)) < self.short_probability(nodes)
        a1, b1 = self.short_gamma
        a2, b2 = self.long_gamma
        log_rt = np.where(short, rng.gamma(a1, b1, len(nodes)), rng.gamma(a2, b2, len(nodes)))
        lo, hi = self.runtime_range
        return np.clip(np.exp(log_rt), lo, hi), short

    def generate(self, n_jobs: int, seed: int | np.random.Generator = 0) -> list[Job]:
        """``n_jobs`` jobs (the "Original" workload, with its BB requests)."""
        if n_jobs < 1:
            raise InputError(f"n_jobs must be >= 1, got {n_jobs}", field="n_jobs")
        rng = rng_of(seed)
        nodes = self.sizes(rng, n_jobs)
        runtime, short = self.runtimes(rng, nodes)
        runtime = np.round(runtime)
        f = rng.uniform(*self.overestimate, n_jobs)
        walltime = np.minimum(np.ceil(runtime * f / (10 * MINUTE)) * 10 * MINUTE,
                              self.max_walltime)
        walltime = np.maximum(walltime, runtime)
        rate = self.load * self.nodes / float(np.mean(nodes * runtime))  # jobs per second
        submit = np.floor(np.cumsum(rng.exponential(1.0 / rate, n_jobs)))
        submit -= submit[0]
        asks = rng.random(n_jobs) < self.bb_share
        lo, hi = (math.log(x) for x in self.bb_range)
        bb = np.round(np.exp(rng.uniform(lo, hi, n_jobs)) / GB) * GB
        bb = np.where(asks, bb, 0.0)
        return [Job(id=str(k + 1), submit=float(submit[k]), nodes=int(nodes[k]),
                    walltime=float(walltime[k]), runtime=float(runtime[k]), bb=float(bb[k]),
                    extra={"capability": "short" if short[k] else "long"})
                for k in range(n_jobs)]


def job_rate_per_day(jobs: list[Job]) -> float:
    """Submissions per day over the span of ``jobs`` (Theta: about 467)."""
    span = max(j.submit for j in jobs) - min(j.submit for j in jobs)
    return (len(jobs) - 1) / span * DAY if span > 0 else math.inf


def theta_platform(bb: float = THETA_BB) -> Platform:
    """Theta: 4,392 nodes and (by default) the paper's projected 1.26 PB shared burst buffer."""
    return Platform(nodes=THETA_NODES, bb=float(bb), name="theta")

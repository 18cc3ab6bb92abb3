"""The embedded default workload: a seeded, KTH-like synthetic trace that needs no download.

It stands in for the KTH-SP2 log of Kopanski & Rzadca (Section 4.1) on their 96-node, 480 GB
platform: Poisson arrivals, power-of-two sizes up to 64 nodes,
log-normal (heavy-tailed) runtimes, walltimes overestimated by a log-uniform factor as users do,
and burst-buffer requests from the paper's log-normal per-processor model. The defaults give an
offered node load of about 0.9, where the policies differ visibly.

``rules`` applies the two rules of the authors' generator after the draw (fit-in-platform cap,
short jobs; :class:`bbopt.workloads.bb.KopanskiRules`), as for any trace whose requests are drawn
for Kopanski's platform: without the cap a wide job's draw can exceed the 480 GB platform, and
about 1.7 % of the jobs (51 of the 3,000 of seed 0, of 16 to 64 nodes) would be rejected
although the authors reject only too-wide jobs. The draws are the same with and without it.
``bbopt compare`` with no workload (:func:`bbopt.loading.read_workload`) turns it on for
Kopanski's platform; the default here (``None``) keeps the paper's model alone.
"""

from __future__ import annotations

import numpy as np

from bbopt.core import HOUR, MINUTE, Job
from bbopt.workloads.bb import KopanskiRules, lognormal_bb_per_processor
from bbopt.workloads.columns import with_bb

_SIZES = np.array([1, 2, 4, 8, 16, 32, 64])
_SIZE_WEIGHTS = np.array([0.34, 0.14, 0.14, 0.13, 0.11, 0.08, 0.06])


def kth_like(n_jobs: int = 3000, seed: int = 0, nodes: int = 96, load: float = 0.9,
             bb: bool = True, rules: KopanskiRules | None = None) -> list[Job]:
    """``n_jobs`` jobs with a KTH-like mix, arriving at a rate that offers ``load`` of ``nodes``.

    Runtimes: log-normal with a median of 20 minutes, clipped to [30 s, 36 h]. Walltime: runtime
    times a factor log-uniform in [1, 10], rounded up to a minute (so no job is killed).
    ``rules``: the generator rules applied to the BB draws (see the module docstring).
    """
    if n_jobs < 1:
        raise ValueError("n_jobs must be >= 1")
    rng = np.random.default_rng(seed)
    allowed = nodes >= _SIZES
    sizes = rng.choice(_SIZES[allowed], size=n_jobs, p=_normalized(_SIZE_WEIGHTS[allowed]))
    runtime = np.clip(rng.lognormal(np.log(20 * MINUTE), 1.6, n_jobs), 30.0, 36 * HOUR)
    runtime = np.round(runtime)
    factor = np.exp(rng.uniform(0.0, np.log(10.0), n_jobs))
    walltime = np.ceil(runtime * factor / MINUTE) * MINUTE
    mean_work = float(np.mean(sizes * runtime))
    rate = load * nodes / mean_work  # jobs per second
    submit = np.round(np.cumsum(rng.exponential(1.0 / rate, n_jobs)))
    submit -= submit[0]
    per_proc = lognormal_bb_per_processor(n_jobs, rng) if bb else np.zeros(n_jobs)
    users = rng.integers(1, 60, n_jobs)
    jobs = [
        Job(id=str(k + 1), submit=float(submit[k]), walltime=float(walltime[k]),
            runtime=float(runtime[k]), nodes=int(sizes[k]), bb=float(per_proc[k] * sizes[k]),
            user=str(users[k]))
        for k in range(n_jobs)
    ]
    if bb and rules is not None:
        jobs = [with_bb(j, rules.per_node(j, float(p)) * j.nodes)
                for j, p in zip(jobs, per_proc, strict=True)]
    return jobs


def _normalized(w: np.ndarray) -> np.ndarray:
    return w / w.sum()

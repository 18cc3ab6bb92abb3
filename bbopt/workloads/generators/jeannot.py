"""Periodic I/O applications of Jeannot, Pallez & Vidal (IJHPCA 2023, "Workload Generation").

An application ``i`` runs on ``Q_i`` of the ``P`` nodes and repeats ``n_i`` times (10 to 100,
uniform) a compute phase of ``w_i`` seconds followed by an I/O phase transferring ``v_i`` bytes
through the I/O node of bandwidth ``b``; alone, it takes ``T_i(b) = n_i (w_i + v_i / b)``
(equation (1)). The I/O load of a workload is equation (2)::

    alpha = sum_i n_i v_i / b  /  sum_i (Q_i / P) T_i(b)

the total I/O time over a lower bound of the makespan. Each application draws ``X_i``, the
proportion of time spent doing I/O, from a normal law truncated to [0, 1] with variance 0.1
(standard deviation 0.316: with means 0.1 and 0.9 this truncation gives the means 0.289 and 0.711
the paper quotes), and its I/O volume per iteration is the paper's
``v_i = X_i * w_i * Q_i / P`` (in seconds of the whole bandwidth, i.e. times ``b`` in bytes).

I/O profiles:

- **BiNormal** (BN): low-I/O applications (mean 0.1) and high-I/O ones (mean 0.9); "the
  prevalence of each type depends on alpha". The paper says the I/O of an application is chosen
  depending on the ones already generated, "in order to fit the target exertion"; bbopt makes
  each application high-I/O when the alpha of the applications so far is below the target and
  low-I/O otherwise. Targets outside what all-low / all-high sets can give are reported.
- **Normal** (No): one truncated normal of mean ``mu = alpha``. Truncation and the ``Q_i / P``
  term make equation (2) differ from ``mu``; with ``calibrate=True`` (default) bbopt moves ``mu``
  (same random numbers, by bisection) until equation (2) gives the target; ``calibrate=False``
  keeps the paper's ``mu = alpha`` and only reports the resulting alpha.

Job generation protocols:

- **Mira**: ``Q_i`` from a discrete exponential law of parameter ``lambda = 1.35e-4`` on
  [512, 49152]; total compute time ``n_i w_i`` normal with median 1 h below 4K nodes, 2 h from 4K
  to 16K nodes, 0.5 h above 16K, with a spread of 10 % of the median (bbopt's reading of
  "a variance of 10 percent of the median": standard deviation 0.1 x median), truncated to
  positive values. ``P`` defaults to Mira's 49,152 nodes.
- **Uniform**: ``w_i`` uniform in [10, 100] minutes (per iteration); ``Q_i`` in
  ``{2^j, j = 0..11}`` with mean ``Q_bar = P E(X) / (alpha (1 + E(X)))``, the paper's
  rearrangement of equation (2) with every value replaced by its mean. A uniform law on that set
  has a fixed mean (341.25), so bbopt takes the distribution on ``{2^j}`` closest to uniform with
  that mean (maximum entropy: ``p_j ~ exp(theta 2^j)``); ``E(X)`` is the mean of the truncated
  normal (Normal) or 0.5 (BiNormal, even mix). ``P`` defaults to 2^11 = 2048, the largest ``Q``.

Note: with the paper's volume formula, equation (2) depends little on ``Q_i``, so the ``Q_bar``
rearrangement (which treats the I/O time as ``X_i w_i``) does not steer alpha in bbopt; alpha is
reached through the I/O proportions as above. The two statements of the paper are not consistent
with each other; bbopt follows the volume formula and equation (2) literally.

Output: :class:`~bbopt.core.Job` objects, all submitted at 0 (the paper's static batch), with
``nodes = Q_i``, ``runtime = walltime = T_i(b)``, ``bandwidth`` = the average I/O bandwidth per
node ``n_i v_i / (T_i Q_i)`` (what I/O-aware policies reserve) and ``Job.extra["io"]``::

    {"model": "periodic", "iterations": n_i, "compute_seconds": w_i, "io_bytes": v_i,
     "io_fraction": X_i, "io_class": "low" | "high" | "normal", "io_bandwidth": b}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special, stats

from bbopt.core import GB, HOUR, MINUTE, Job
from bbopt.errors import InputError
from bbopt.limits import MAX_JOBS, check_count
from bbopt.workloads.generators import rng_of

MIRA_NODES = 49152
MIRA_LAMBDA = 1.35e-4
MIRA_MIN, MIRA_MAX = 512, 49152
UNIFORM_SIZES = 2 ** np.arange(12)
IO_SD = math.sqrt(0.1)
BN_MEANS = (0.1, 0.9)
DEFAULT_BANDWIDTH = 10 * GB


@dataclass
class PeriodicWorkload:
    """Generated applications and their I/O load (equation (2)) against the target."""

    jobs: list[Job]
    alpha: float
    target: float
    family: str
    nodes: int
    bandwidth: float

    @property
    def relative_error(self) -> float:
        return abs(self.alpha - self.target) / self.target


def io_load(jobs: Sequence[Job], nodes: int) -> float:
    """Equation (2) for jobs that carry ``extra["io"]`` (periodic applications) on ``nodes``."""
    n, w, v, q, b = _arrays(jobs)
    return _alpha(n, w, v / b, q, nodes)


def _arrays(jobs: Sequence[Job]):
    try:
        io = [j.extra["io"] for j in jobs]
    except KeyError:
        raise InputError("io_load needs jobs with extra['io'] (periodic applications)",
                         field="io") from None
    n = np.array([d["iterations"] for d in io], dtype=float)
    w = np.array([d["compute_seconds"] for d in io])
    v = np.array([d["io_bytes"] for d in io])
    q = np.array([j.nodes for j in jobs], dtype=float)
    b = np.array([d["io_bandwidth"] for d in io])
    return n, w, v, q, b


def _alpha(n: np.ndarray, w: np.ndarray, io_time: np.ndarray, q: np.ndarray, p: int) -> float:
    """Equation (2) with per-iteration I/O times ``io_time = v / b``."""
    num = float(np.sum(n * io_time))
    den = float(np.sum(q / p * n * (w + io_time)))
    return num / den


def _trunc_normal(u: np.ndarray, mean: float, sd: float = IO_SD) -> np.ndarray:
    """Inverse-CDF draws of N(mean, sd) truncated to [0, 1] from uniforms ``u``."""
    a, b = (0.0 - mean) / sd, (1.0 - mean) / sd
    return stats.truncnorm.ppf(u, a, b, loc=mean, scale=sd)


def generate(n_apps: int = 1000, *, alpha: float = 0.5, protocol: str = "mira",
             io_profile: str = "binormal", nodes: int | None = None,
             bandwidth: float = DEFAULT_BANDWIDTH, calibrate: bool = True,
             strict: bool = True, tolerance: float = 0.05,
             seed: int | np.random.Generator = 0) -> PeriodicWorkload:
    """A set of ``n_apps`` periodic applications with I/O load ``alpha`` (equation (2)).

    ``protocol``: ``"mira"`` or ``"uniform"``; ``io_profile``: ``"binormal"`` or ``"normal"``
    (the paper's M-BN, M-No, U-BN and U-No families). ``nodes`` is ``P`` (default 49152 for
    Mira, 2048 for Uniform); ``bandwidth`` the I/O node's ``b`` in bytes/s (it scales volumes
    only). With ``strict``, a realised alpha further than ``tolerance`` (relative) from the target
    raises :class:`~bbopt.errors.InputError` saying which range is reachable.
    """
    n_apps = check_count(n_apps, "n_apps", high=MAX_JOBS)
    if not (alpha > 0 and math.isfinite(alpha)):
        raise InputError(f"alpha must be > 0, got {alpha!r}", field="alpha")
    if protocol not in ("mira", "uniform"):
        raise InputError(f"protocol must be 'mira' or 'uniform', got {protocol!r}",
                         field="protocol")
    if io_profile not in ("binormal", "normal"):
        raise InputError(f"io_profile must be 'binormal' or 'normal', got {io_profile!r}",
                         field="io_profile")
    if not bandwidth > 0:
        raise InputError(f"bandwidth must be > 0 bytes/s, got {bandwidth!r}", field="bandwidth")
    rng = rng_of(seed)
    p = nodes if nodes is not None else (MIRA_NODES if protocol == "mira" else 2048)
    iterations = rng.integers(10, 101, n_apps).astype(float)
    if protocol == "mira":
        q = mira_processors(n_apps, rng)
        if q.max() > p:
            raise InputError(f"Mira jobs reach {MIRA_MAX} nodes; nodes={p} is too small",
                             field="nodes")
        total = mira_durations(q, rng)
        w = total / iterations
    else:
        w = rng.uniform(10 * MINUTE, 100 * MINUTE, n_apps)
        ex = (float(stats.truncnorm.mean(-alpha / IO_SD, (1 - alpha) / IO_SD, loc=alpha,
                                         scale=IO_SD))
              if io_profile == "normal" else 0.5)
        q_bar = p * ex / (alpha * (1 + ex))
        sizes = UNIFORM_SIZES[p >= UNIFORM_SIZES]
        q = rng.choice(sizes, size=n_apps, p=max_entropy_weights(sizes, q_bar)).astype(float)
    u_main = rng.uniform(size=n_apps)
    u_alt = rng.uniform(size=n_apps)
    scale = w * q / p  # I/O time per iteration = X * scale

    if io_profile == "normal":
        def alpha_of(mu: float) -> float:
            return _alpha(iterations, w, _trunc_normal(u_main, mu) * scale, q, p)

        mu = alpha
        if calibrate:
            lo, hi = -5.0, 6.0
            f_lo, f_hi = alpha_of(lo) - alpha, alpha_of(hi) - alpha
            if f_lo < 0 < f_hi:
                mu = optimize.brentq(lambda m: alpha_of(m) - alpha, lo, hi, xtol=1e-9)
            else:
                mu = lo if f_lo >= 0 else hi
        x = _trunc_normal(u_main, mu)
        classes = ["normal"] * n_apps
    else:
        low = _trunc_normal(u_main, BN_MEANS[0])
        high = _trunc_normal(u_alt, BN_MEANS[1])
        x = np.empty(n_apps)
        classes = []
        num = den = 0.0
        for k in range(n_apps):
            base = q[k] / p * iterations[k] * w[k]
            if den == 0.0:  # first application: the type that lands closer to the target
                a_low = low[k] * scale[k] / (w[k] + low[k] * scale[k]) * p / q[k]
                a_high = high[k] * scale[k] / (w[k] + high[k] * scale[k]) * p / q[k]
                pick_high = abs(a_high - alpha) < abs(a_low - alpha)
            else:
                pick_high = num / den < alpha
            xk = high[k] if pick_high else low[k]
            x[k] = xk
            classes.append("high" if pick_high else "low")
            io_t = xk * scale[k]
            num += iterations[k] * io_t
            den += base + q[k] / p * iterations[k] * io_t
    io_time = x * scale
    realised = _alpha(iterations, w, io_time, q, p)
    if strict and abs(realised - alpha) > tolerance * alpha:
        lo_x = np.zeros(n_apps) if io_profile == "normal" else _trunc_normal(u_main, BN_MEANS[0])
        hi_x = np.ones(n_apps) if io_profile == "normal" else _trunc_normal(u_alt, BN_MEANS[1])
        a_min = _alpha(iterations, w, lo_x * scale, q, p)
        a_max = _alpha(iterations, w, hi_x * scale, q, p)
        raise InputError(f"target I/O load alpha={alpha:g} not reached: got {realised:.4g}; "
                         f"this {protocol}-{io_profile} set on P={p} nodes reaches about "
                         f"[{a_min:.3g}, {a_max:.3g}] (strict=False returns it anyway)",
                         field="alpha")
    volume = io_time * bandwidth
    runtime = iterations * (w + io_time)
    jobs = []
    width = len(str(n_apps))
    for k in range(n_apps):
        qk = int(q[k])
        jobs.append(Job(
            id=f"app{k + 1:0{width}d}", submit=0.0, walltime=float(runtime[k]),
            runtime=float(runtime[k]), nodes=qk,
            bandwidth=float(iterations[k] * volume[k] / (runtime[k] * qk)),
            extra={"io": {"model": "periodic", "iterations": int(iterations[k]),
                          "compute_seconds": float(w[k]), "io_bytes": float(volume[k]),
                          "io_fraction": float(x[k]), "io_class": classes[k],
                          "io_bandwidth": float(bandwidth)}},
        ))
    family = {"mira": "M", "uniform": "U"}[protocol] + "-" + \
        {"binormal": "BN", "normal": "No"}[io_profile]
    return PeriodicWorkload(jobs, realised, alpha, family, p, bandwidth)


def mira_processors(size: int, rng: np.random.Generator) -> np.ndarray:
    """Discrete exponential node counts on [512, 49152] with ``lambda = 1.35e-4``."""
    span = MIRA_MAX - MIRA_MIN
    # P(Q = 512 + k) ~ exp(-lambda k), k = 0..span: a geometric law truncated by inversion
    u = rng.uniform(size=size)
    tail = 1.0 - math.exp(-MIRA_LAMBDA * (span + 1))
    k = np.floor(-np.log1p(-u * tail) / MIRA_LAMBDA)
    return MIRA_MIN + np.minimum(k, span)


def mira_durations(q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Total compute time per application by size class (median 1 h / 2 h / 0.5 h)."""
    median = np.where(q < 4096, 1 * HOUR, np.where(q <= 16384, 2 * HOUR, 0.5 * HOUR))
    sd = 0.1 * median
    a = -median / sd
    return stats.truncnorm.rvs(a, np.inf, loc=median, scale=sd, random_state=rng)


def max_entropy_weights(values: np.ndarray, mean: float) -> np.ndarray:
    """The distribution on ``values`` closest to uniform whose mean is ``mean`` (clipped into
    the open range of ``values``)."""
    values = np.asarray(values, dtype=float)
    lo, hi = values.min(), values.max()
    mean = float(np.clip(mean, lo + 1e-9 * (hi - lo), hi - 1e-9 * (hi - lo)))
    x = (values - lo) / (hi - lo)
    target = (mean - lo) / (hi - lo)

    def weights(theta: float) -> np.ndarray:
        return special.softmax(theta * x)

    def gap(theta: float) -> float:
        return float(weights(theta) @ x) - target

    a, b = -1.0, 1.0
    while gap(a) > 0:
        a *= 2
    while gap(b) < 0:
        b *= 2
    return weights(optimize.brentq(gap, a, b, xtol=1e-12))


SPEC_PREFIX = "jeannot:"


def from_spec(spec: str, seed: int = 0) -> PeriodicWorkload:
    """A workload from ``"jeannot:FAMILY:ALPHA[:APPS]"`` (FAMILY one of M-BN, M-No, U-BN, U-No;
    APPS defaults to 1000), as the command line names it (``--workload jeannot:U-No:0.5``)."""
    parts = spec.split(":")
    families = {"M-BN": ("mira", "binormal"), "M-NO": ("mira", "normal"),
                "U-BN": ("uniform", "binormal"), "U-NO": ("uniform", "normal")}
    if parts[0] != SPEC_PREFIX[:-1] or len(parts) not in (3, 4) \
            or parts[1].upper() not in families:
        raise InputError(f"workload {spec!r}: expected jeannot:FAMILY:ALPHA[:APPS] with FAMILY "
                         "one of M-BN, M-No, U-BN, U-No", field="workload")
    try:
        alpha = float(parts[2])
        apps = int(parts[3]) if len(parts) == 4 else 1000
    except ValueError:
        raise InputError(f"workload {spec!r}: ALPHA must be a number and APPS an integer",
                         field="workload") from None
    protocol, profile = families[parts[1].upper()]
    return generate(apps, alpha=alpha, protocol=protocol, io_profile=profile, seed=seed)

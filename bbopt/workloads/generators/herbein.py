"""Herbein et al.'s workload model (HPDC 2016, Section 4.2): user arrivals as Poisson processes.

Fitting (:meth:`HerbeinModel.fit`, from a trace such as an SWF file):

- **user arrivals**: a user's submissions less than ``burst_gap`` (10 s) apart are bundled into one
  "user arrival" (Dinh et al.'s method); the arrival time is its first submission;
- **four time ranges** with their own Poisson rate: weekday day (6:00-18:59), weekday night
  (19:00-5:59), weekend day and weekend night. The rate of a range is the number of arrivals in
  it over the time the trace spends in it. An instant belongs to the range of its own calendar
  day and hour (Saturday 2:00 is weekend night, Friday 23:00 weekday night);
- **jobs per arrival**: the empirical distribution of bundle sizes;
- **node counts**: binned by powers of two, ``[2^k, 2^(k+1))``, with the frequency of each bin;
  a sampled bin gives ``2^k`` nodes (so power-of-two requests, the common case, are exact);
- **(time limit, elapsed time)**: sampled jointly from the empirical frequencies of the unique
  pairs, as the paper does, keeping their correlation;
- **I/O rate**: 18 MB/s per node for every job (``Job.bandwidth``), from the checkpointing
  pattern of Section 4.1 (half of a 128 GB node memory every hour).

Generation (:meth:`HerbeinModel.generate`): arrivals follow a piecewise-constant Poisson process
over the calendar (starting at ``start``, seconds since a Monday 00:00 by default); each arrival
brings ``k`` jobs of one user, submitted at the arrival time; each job gets a node count and a
(time limit, elapsed) pair. Ids are 1, 2, ... (the paper's monotonically increasing identifier);
cores are ``nodes x cores_per_node`` in ``Job.extra["cores"]``.

:meth:`HerbeinModel.default` is a built-in parameter set for use without a trace. The paper does
not publish its fitted LLNL Cab/Zin values, so these are bbopt's illustrative numbers (a few
arrivals per hour, more on weekdays, small power-of-two jobs, minutes to a day of runtime), not
the paper's.

:meth:`HerbeinModel.cts1` calibrates the model to the paper's CTS-1 runs (Sections 4.1, 4.2 and
5) from what the paper does state: jobs of power-of-two node counts "heavily biased towards
smaller sizes", up to the 2,048-node bin (the largest that fits Zin's 2,740 nodes, whose jobs the
CTS-1 workload extrapolates); 18 MB/s per node; 2,500 jobs per run with "on average 31.7 s
between state changes" and about four state changes per job, i.e. a job every ~127 s. The node
bins below have a mean of 58 nodes; with the default (time limit, elapsed) pairs (mean elapsed
1.9 h) the arrival rate that gives an offered load of ``load`` (default 0.9, a busy machine:
the paper's I/O-ignorant runs have 21 % of node-time blocked at 30 % underprovisioning, which
needs more than 70 % of the nodes streaming) is ~31 jobs per hour, a job every ~116 s: close to
the paper's rate. The weekday/weekend shape of the rates is the default's. These are bbopt's
calibration choices where the paper gives no number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bbopt.core import DAY, HOUR, MB, MINUTE, Job
from bbopt.errors import InputError
from bbopt.workloads.generators import rng_of

RANGES = ("weekday_day", "weekday_night", "weekend_day", "weekend_night")
IO_RATE_PER_NODE = 18 * MB
DAY_START, NIGHT_START = 6, 19
WEEK = 7 * DAY


def time_range(t: float) -> str:
    """The range of instant ``t`` (seconds since a Monday 00:00, local time)."""
    day = int(t // DAY) % 7
    hour = (t % DAY) / HOUR
    weekend = day >= 5
    is_day = DAY_START <= hour < NIGHT_START
    return ("weekend_" if weekend else "weekday_") + ("day" if is_day else "night")


def _segments(t0: float, t1: float):
    """Consecutive ``(start, end, range)`` pieces of [t0, t1) with a constant range."""
    t = t0
    while t < t1:
        day_start = math.floor(t / DAY) * DAY
        edges = (day_start + DAY_START * HOUR, day_start + NIGHT_START * HOUR, day_start + DAY)
        nxt = min(e for e in edges if e > t)
        end = min(nxt, t1)
        yield t, end, time_range(t)
        t = end


@dataclass
class HerbeinModel:
    """Sampling distributions of the user-arrival model (rates in arrivals per second)."""

    rates: dict[str, float]
    jobs_per_arrival: tuple[np.ndarray, np.ndarray]
    node_bins: tuple[np.ndarray, np.ndarray]
    time_pairs: tuple[np.ndarray, np.ndarray]
    users: tuple[np.ndarray, np.ndarray] = field(
        default_factory=lambda: (np.array(["1"]), np.array([1.0])))
    io_rate_per_node: float = IO_RATE_PER_NODE

    def __post_init__(self) -> None:
        missing = set(RANGES) - set(self.rates)
        if missing:
            raise InputError(f"rates missing for {sorted(missing)}", field="rates")
        if any(r < 0 for r in self.rates.values()) or sum(self.rates.values()) <= 0:
            raise InputError("rates must be >= 0 and not all zero", field="rates")
        for name in ("jobs_per_arrival", "node_bins", "time_pairs", "users"):
            values, probs = getattr(self, name)
            probs = np.asarray(probs, dtype=float)
            if len(values) == 0 or len(values) != len(probs) or probs.min() < 0:
                raise InputError(f"{name}: values and probabilities must be non-empty, of equal "
                                 "length, probabilities >= 0", field=name)
            setattr(self, name, (np.asarray(values), probs / probs.sum()))

    @classmethod
    def fit(cls, jobs: Sequence[Job], *, start: float = 0.0, burst_gap: float = 10.0,
            io_rate_per_node: float = IO_RATE_PER_NODE) -> HerbeinModel:
        """Fit the model on ``jobs``; ``start`` is the local time of submit time 0, in seconds
        since a Monday 00:00 (see :func:`start_of_swf`)."""
        jobs = list(jobs)
        if len(jobs) < 2:
            raise InputError("fitting needs at least two jobs", field="jobs")
        by_user: dict[str, list[float]] = {}
        for j in jobs:
            by_user.setdefault(j.user or "?", []).append(j.submit)
        arrivals: list[float] = []
        arrival_users: list[str] = []
        sizes: list[int] = []
        for user, times in by_user.items():
            times.sort()
            count = 1
            first = times[0]
            for prev, cur in zip(times, times[1:], strict=False):
                if cur - prev < burst_gap:
                    count += 1
                    continue
                arrivals.append(first)
                arrival_users.append(user)
                sizes.append(count)
                first, count = cur, 1
            arrivals.append(first)
            arrival_users.append(user)
            sizes.append(count)
        t0 = min(j.submit for j in jobs) + start
        t1 = max(j.submit for j in jobs) + start
        exposure = dict.fromkeys(RANGES, 0.0)
        for a, b, r in _segments(t0, t1 + 1.0):
            exposure[r] += b - a
        counts = dict.fromkeys(RANGES, 0)
        for t in arrivals:
            counts[time_range(t + start)] += 1
        rates = {r: counts[r] / exposure[r] if exposure[r] > 0 else 0.0 for r in RANGES}
        jpa_values, jpa_counts = np.unique(sizes, return_counts=True)
        nodes = np.array([j.nodes for j in jobs])
        bins = 2 ** np.floor(np.log2(nodes)).astype(int)
        bin_values, bin_counts = np.unique(bins, return_counts=True)
        pairs = np.array([(j.walltime, j.runtime if j.runtime is not None else j.walltime)
                          for j in jobs])
        pair_values, pair_counts = np.unique(pairs, axis=0, return_counts=True)
        user_values, user_counts = np.unique(np.array(arrival_users), return_counts=True)
        return cls(rates, (jpa_values, jpa_counts), (bin_values, bin_counts),
                   (pair_values, pair_counts), (user_values, user_counts), io_rate_per_node)

    @classmethod
    def default(cls) -> HerbeinModel:
        """bbopt's built-in parameters (illustrative; see the module docstring)."""
        per_hour = {"weekday_day": 6.0, "weekday_night": 2.5, "weekend_day": 2.5,
                    "weekend_night": 1.5}
        rates = {r: v / HOUR for r, v in per_hour.items()}
        jpa = (np.array([1, 2, 3, 4, 8, 16]), np.array([0.62, 0.14, 0.07, 0.08, 0.06, 0.03]))
        bins = (2 ** np.arange(9), np.array([0.30, 0.14, 0.14, 0.13, 0.11, 0.08, 0.05, 0.03,
                                             0.02]))
        limits = np.array([30, 60, 120, 240, 480, 720, 960, 1440]) * MINUTE
        pairs, weights = [], []
        for k, limit in enumerate(limits):
            for frac, wt in ((0.05, 0.25), (0.2, 0.3), (0.5, 0.25), (0.9, 0.15), (1.0, 0.05)):
                pairs.append((limit, round(frac * limit)))
                weights.append(wt * (0.8 ** k))
        users = (np.array([str(u) for u in range(1, 41)]), 1.0 / np.arange(1, 41))
        return cls(rates, jpa, bins, (np.array(pairs, dtype=float), np.array(weights)), users)

    @classmethod
    def cts1(cls, load: float = 0.9, nodes: int = 3888) -> HerbeinModel:
        """The model calibrated to the paper's CTS-1 setting (see the module docstring):
        offered load ``load`` on ``nodes`` nodes, averaged over a week."""
        if not load > 0:
            raise InputError(f"load must be > 0, got {load!r}", field="load")
        base = cls.default()
        bins = (2 ** np.arange(12), np.array([0.24, 0.15, 0.13, 0.11, 0.10, 0.09, 0.06, 0.045,
                                              0.035, 0.025, 0.01, 0.005]))
        shape = {"weekday_day": 6.0, "weekday_night": 2.5, "weekend_day": 2.5,
                 "weekend_night": 1.5}
        hours = {r: 0.0 for r in RANGES}
        for a, b, r in _segments(0.0, WEEK):
            hours[r] += (b - a) / HOUR
        mean_shape = sum(shape[r] * hours[r] for r in RANGES) / (WEEK / HOUR)  # per hour
        jpa_values, jpa_p = base.jobs_per_arrival
        pair_values, pair_p = base.time_pairs
        bin_values, bin_p = bins[0], bins[1] / bins[1].sum()
        node_seconds = float((bin_values * bin_p).sum()) * float((pair_values[:, 1]
                                                                  * pair_p).sum())
        jobs_per_second = load * nodes / node_seconds
        arrivals_per_second = jobs_per_second / float((jpa_values * jpa_p).sum())
        scale = arrivals_per_second / (mean_shape / HOUR)
        rates = {r: shape[r] / HOUR * scale for r in RANGES}
        return cls(rates, base.jobs_per_arrival, bins, base.time_pairs, base.users)

    def offered_load(self, nodes: int, start: float = 0.0, duration: float = WEEK) -> float:
        """Expected node-seconds asked per second over ``[start, start + duration)``, divided
        by ``nodes`` (1.0: a machine of ``nodes`` kept exactly busy)."""
        jv, jp = self.jobs_per_arrival
        bv, bp = self.node_bins
        pv, pp = self.time_pairs
        per_job = float((bv * bp).sum()) * float((pv[:, 1] * pp).sum())
        jobs = self.expected_arrivals(duration, start) * float((jv * jp).sum())
        return jobs * per_job / (nodes * duration)

    def expected_arrivals(self, duration: float, start: float = 0.0) -> float:
        """Expected number of user arrivals in ``[start, start + duration)``."""
        return sum((b - a) * self.rates[r] for a, b, r in _segments(start, start + duration))

    def generate(self, *, n_jobs: int | None = None, duration: float | None = None,
                 start: float = 0.0, max_nodes: int | None = None, cores_per_node: int = 36,
                 seed: int | np.random.Generator = 0) -> list[Job]:
        """Jobs from the model: the first ``n_jobs`` jobs, or all arrivals within ``duration``
        seconds (at least one of the two). Submit times start at 0 (= local ``start``).
        ``max_nodes`` caps node counts (CTS-1: 3,888 nodes, 36 cores per node)."""
        if n_jobs is None and duration is None:
            raise InputError("give n_jobs or duration", field="n_jobs")
        if n_jobs is not None and n_jobs < 1:
            raise InputError(f"n_jobs must be >= 1, got {n_jobs!r}", field="n_jobs")
        rng = rng_of(seed)
        horizon = start + (duration if duration is not None else math.inf)
        times: list[float] = []
        total_jobs = 0
        t = start
        jpa_values, jpa_p = self.jobs_per_arrival
        bundle: list[int] = []
        while t < horizon and (n_jobs is None or total_jobs < n_jobs):
            chunk_end = min(t + WEEK, horizon)
            for a, b, r in _segments(t, chunk_end):
                k = rng.poisson(self.rates[r] * (b - a))
                arr = np.sort(rng.uniform(a, b, k))
                sizes = rng.choice(jpa_values, size=k, p=jpa_p)
                times.extend(arr.tolist())
                bundle.extend(int(s) for s in sizes)
                total_jobs += int(sizes.sum())
                if n_jobs is not None and total_jobs >= n_jobs:
                    break
            t = chunk_end
        n_total = sum(bundle)
        if n_total == 0:
            raise InputError("no arrival in the requested duration", field="duration")
        bins, bin_p = self.node_bins
        nodes = rng.choice(bins, size=n_total, p=bin_p).astype(int)
        if max_nodes is not None:
            nodes = np.minimum(nodes, max_nodes)
        pair_values, pair_p = self.time_pairs
        pairs = pair_values[rng.choice(len(pair_values), size=n_total, p=pair_p)]
        user_values, user_p = self.users
        users = rng.choice(user_values, size=len(times), p=user_p)
        jobs: list[Job] = []
        k = 0
        for arrival, size, user in zip(times, bundle, users.tolist(), strict=True):
            for _ in range(size):
                if n_jobs is not None and k >= n_jobs:
                    break
                limit, elapsed = float(pairs[k][0]), float(pairs[k][1])
                nk = int(nodes[k])
                jobs.append(Job(
                    id=str(k + 1), submit=round(arrival - start, 3), walltime=max(limit, 1.0),
                    runtime=max(elapsed, 0.0), nodes=nk, user=str(user),
                    bandwidth=self.io_rate_per_node,
                    extra={"cores": nk * cores_per_node},
                ))
                k += 1
        return jobs


def start_of_swf(header: dict[str, str]) -> float:
    """Local time of an SWF trace's submit time 0, in seconds since a Monday 00:00, from its
    ``UnixStartTime`` and ``TimeZone`` (offset in seconds) header lines; 0 when absent."""
    try:
        unix = float(header["UnixStartTime"])
    except (KeyError, ValueError):
        return 0.0
    try:
        offset = float(header.get("TimeZone", 0))
    except ValueError:
        offset = 0.0
    # 1970-01-01 was a Thursday: shift by 3 days to count from a Monday
    return (unix + offset + 3 * DAY) % WEEK

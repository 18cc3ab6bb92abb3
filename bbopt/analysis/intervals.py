"""Normalised metrics per policy with three 95 % intervals, for forest plots and reports.

Kopanski & Rzadca (Section 4.2) normalise each part's mean by the reference policy's on the same
part and report the mean ratio with a Student-t interval. Per-part ratios are skewed (a ratio
of 3 and one of 1/3 do not average to 1), so :func:`interval_table` adds two intervals that
respect that: the *geometric* mean ratio with the t-interval of the log-ratios mapped back by
``exp`` (the log-ratio interval), and a percentile bootstrap of the mean ratio (seeded, so the
table is reproducible).

A *unit* is what a ratio is taken within: by default every grid coordinate except the policy
(workload, part, platform, seed, budget, execution), so a policy is compared with the
reference on the same part, seed and machine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats

from bbopt.errors import InputError

UNIT_COLUMNS = ("workload", "part", "platform", "seed", "budget", "execution")


def normalise_runs(table: pd.DataFrame, reference: str, metrics: Sequence[str], *,
                   units: Sequence[str] | None = None) -> pd.DataFrame:
    """Long frame ``unit columns.., policy, metric, value, normalised`` from a collected
    table (one row per run): each value over the reference policy's in the same unit."""
    units = [u for u in (units or UNIT_COLUMNS) if u in table.columns]
    if reference not in set(table["policy"]):
        raise InputError(f"reference policy {reference!r} is not in the results "
                         f"({', '.join(sorted(set(table['policy'])))})", field="reference")
    missing = [m for m in metrics if m not in table.columns]
    if missing:
        raise InputError(f"unknown metric {missing[0]!r}", field="metrics")
    key = pd.Series(["|".join(str(v) for v in row) for row in
                     zip(*(table[u].tolist() for u in units), strict=True)] if units else "",
                    index=table.index, dtype=object)
    rows = []
    for metric in metrics:
        ref = pd.Series(table.loc[table["policy"] == reference, metric].to_numpy(float),
                        index=key[table["policy"] == reference]).groupby(level=0).first()
        denom = key.map(ref).to_numpy(float)
        value = table[metric].to_numpy(float)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = value / denom
        ratio[~np.isfinite(ratio)] = np.nan
        part = table[units + ["policy"]].copy()
        part["unit"] = key.to_numpy()
        part["metric"] = metric
        part["value"] = value
        part["normalised"] = ratio
        rows.append(part)
    return pd.concat(rows, ignore_index=True)


def t_interval(x: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    x = x[~np.isnan(x)]
    if x.size == 0:
        return (math.nan,) * 3
    mean = float(x.mean())
    if x.size < 2:
        return mean, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + level / 2, x.size - 1)) * float(x.std(ddof=1)) / math.sqrt(
        x.size)
    return mean, mean - half, mean + half


def log_ratio_interval(x: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """Geometric mean of positive ratios and ``exp`` of the t-interval of their logs."""
    x = x[~np.isnan(x)]
    x = x[x > 0]
    m, lo, hi = t_interval(np.log(x), level) if x.size else (math.nan,) * 3
    return math.exp(m) if not math.isnan(m) else m, math.exp(lo) if not math.isnan(
        lo) else lo, math.exp(hi) if not math.isnan(hi) else hi


def bootstrap_interval(x: np.ndarray, level: float = 0.95, n: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (``n`` resamples, seeded)."""
    x = x[~np.isnan(x)]
    if x.size < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, x.size, size=(n, x.size))].mean(axis=1)
    a = (1 - level) / 2
    return float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


def interval_table(long: pd.DataFrame, *, level: float = 0.95, n_boot: int = 2000,
                   seed: int = 0) -> pd.DataFrame:
    """Per metric and policy (in order of appearance): n, mean ratio with its t-interval,
    geometric mean with the log-ratio interval, the bootstrap interval, and the per-unit
    ratios (a list, in unit order)."""
    rows = []
    for metric in dict.fromkeys(long["metric"]):
        for policy in dict.fromkeys(long["policy"]):
            sel = long[(long["metric"] == metric) & (long["policy"] == policy)]
            x = sel["normalised"].to_numpy(float)
            mean, lo, hi = t_interval(x.copy(), level)
            g, glo, ghi = log_ratio_interval(x.copy(), level)
            blo, bhi = bootstrap_interval(x.copy(), level, n_boot, seed)
            rows.append({"metric": metric, "policy": policy, "n": int(np.sum(~np.isnan(x))),
                         "mean": mean, "ci_low": lo, "ci_high": hi,
                         "gmean": g, "log_ci_low": glo, "log_ci_high": ghi,
                         "boot_low": blo, "boot_high": bhi,
                         "values": x.tolist(),
                         "raw_mean": float(np.nanmean(sel["value"])) if len(sel) else math.nan})
    return pd.DataFrame(rows)


def from_split_table(table: pd.DataFrame) -> pd.DataFrame:
    """The long frame of :func:`normalise_runs` from ``compare_split``'s raw frame."""
    raw = table.attrs.get("raw") if "normalised" not in table else table
    if raw is None:
        raise InputError("need compare_split's table (with attrs['raw'])")
    out = raw.rename(columns={"part": "unit"}).copy()
    return out

"""The one style of every bbopt figure: matplotlib set up once, metrics named with their units,
titles from what a run means, and intervals that stay inside a metric's domain.

:mod:`bbopt.analysis.figures` draws every figure (``bbopt compare --plot``, ``bbopt report``,
the benchmarks' and the reproductions' figures) through these helpers, so a change of style is
made here once:

- :func:`pyplot` -- matplotlib with the Agg backend and the house style (:data:`STYLE`);
- :func:`log_ticks` -- plain-number ticks at 1-2-5 steps on a log axis (matplotlib's default
  labels of a short log axis overlap);
- :func:`metric_label` -- ``"mean_wait"`` -> ``("mean wait", "h", 1/3600)``: the name shown, the
  unit and the factor from bbopt's SI values (seconds, bytes, fractions) to that unit;
- :func:`run_title` -- ``{"workload": "kth", "platform": "kopanski", "budget": "default"}`` ->
  ``"kth on kopanski"``: what a scenario is, leaving out what is at its default;
- :func:`mean_interval` -- the mean of non-negative per-job or per-unit values with a seeded
  percentile-bootstrap 95 % interval, which never leaves the values' range (a t-interval of a
  skewed metric or a ratio can reach below zero); :data:`MIN_N` is the smallest sample an
  interval is drawn for, below it the figure says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from bbopt.errors import InputError

#: matplotlib settings of every figure: readable at a column's width in a paper.
STYLE: dict[str, Any] = {
    "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9, "legend.fontsize": 8,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "axes.spines.top": False,
    "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3, "figure.dpi": 110,
    "savefig.dpi": 150, "savefig.bbox": "tight",
}
#: Below this many values a figure draws the points without an interval and says ``n < 3``.
MIN_N = 3
HOUR = 3600.0
GB = 1e9

#: bbopt metric name (after its ``mean_``/``p95_``/... prefix) -> (shown name, unit, factor).
_BASES: dict[str, tuple[str, str, float]] = {
    "wait": ("wait", "h", 1 / HOUR),
    "turnaround": ("turnaround", "h", 1 / HOUR),
    "bounded_slowdown": ("bounded slowdown", "", 1.0),
    "slowdown": ("slowdown", "", 1.0),
    "stretch": ("stretch", "", 1.0),
    "node_utilization": ("node utilisation", "%", 100.0),
    "bb_utilization": ("BB utilisation", "%", 100.0),
    "useful_utilization": ("useful utilisation", "%", 100.0),
    "makespan": ("makespan", "days", 1 / 86400.0),
    "bb": ("BB request", "GB", 1 / GB),
}
_PREFIXES = {"mean": "mean", "median": "median", "p95": "95th percentile", "max": "max"}


def pyplot():
    """matplotlib's pyplot on the Agg backend, with :data:`STYLE` applied."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("plotting needs matplotlib: pip install 'bbopt[plot]'") from None
    plt.rcParams.update(STYLE)
    return plt


def metric_label(metric: str) -> tuple[str, str, float]:
    """The name shown for ``metric``, its unit (``""``: none) and the factor from bbopt's value.

    >>> metric_label("mean_wait")
    ('mean wait', 'h', 0.0002777777777777778)
    >>> metric_label("bb_utilization")
    ('BB utilisation', '%', 100.0)
    >>> metric_label("decisions")
    ('decisions', '', 1.0)
    """
    if metric in _BASES:
        return _BASES[metric]
    head, _, rest = metric.partition("_")
    if head in _PREFIXES and rest in _BASES:
        name, unit, factor = _BASES[rest]
        return f"{_PREFIXES[head]} {name}", unit, factor
    return metric.replace("_", " "), "", 1.0


def axis_label(metric: str, ratio_to: str | None = None) -> str:
    """``"mean wait [h]"``, or ``"mean wait / sjf-bb's"`` for a ratio (no unit).

    >>> axis_label("mean_wait"), axis_label("mean_wait", "sjf-bb")
    ('mean wait [h]', "mean wait / sjf-bb's")
    """
    name, unit, _ = metric_label(metric)
    if ratio_to:
        return f"{name} / {ratio_to}'s"
    return f"{name} [{unit}]" if unit else name


#: Scenario keys and the values at which a title leaves them out.
_DEFAULTS = {"budget": ("default", "", None), "execution": ("rigid", "", None)}


def run_title(scenario: Mapping[str, Any]) -> str:
    """A readable title for a scenario of a sweep (workload, platform, budget, execution, part,
    seed): ``"kth on kopanski"``; a budget or an execution model is named only when it is not
    the default.

    >>> run_title({"workload": "kth", "platform": "kopanski", "budget": "default",
    ...            "execution": "rigid"})
    'kth on kopanski'
    >>> run_title({"workload": "S4", "platform": "theta", "budget": "det",
    ...            "execution": "io-contention", "part": 3, "seed": 0})
    'S4 on theta, budget det, io-contention execution, part 3, seed 0'
    """
    head = str(scenario.get("workload", "workload"))
    if scenario.get("platform") not in (None, ""):
        head += f" on {scenario['platform']}"
    parts = [head]
    budget = scenario.get("budget")
    if budget not in _DEFAULTS["budget"]:
        parts.append(f"budget {budget}")
    execution = scenario.get("execution")
    if execution not in _DEFAULTS["execution"]:
        parts.append(f"{execution} execution")
    parts += [f"{k} {scenario[k]}" for k in ("part", "seed") if scenario.get(k) is not None]
    return ", ".join(parts)


def mean_interval(values: np.ndarray, level: float = 0.95, n_boot: int = 1000,
                  seed: int = 0) -> tuple[float, float, float]:
    """``(mean, low, high)`` of ``values`` with a percentile-bootstrap interval (seeded); the
    bounds are NaN below :data:`MIN_N` values. The interval lies within the values' range, so a
    non-negative metric never gets a negative bound.

    >>> m, lo, hi = mean_interval(np.array([1.0, 2.0, 3.0, 10.0]))
    >>> m, 1.0 <= lo <= m <= hi <= 10.0
    (4.0, True)
    >>> mean_interval(np.array([1.0, 2.0]))[1]
    nan
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan"), float("nan"), float("nan")
    mean = float(x.mean())
    if x.size < MIN_N:
        return mean, float("nan"), float("nan")
    rng = np.random.default_rng(seed)
    means = np.empty(n_boot)
    for k in range(0, n_boot, 100):  # in blocks: a million jobs x 1000 resamples would not fit
        idx = rng.integers(0, x.size, size=(min(100, n_boot - k), x.size))
        means[k:k + idx.shape[0]] = x[idx].mean(axis=1)
    a = (1 - level) / 2
    return mean, float(np.quantile(means, a)), float(np.quantile(means, 1 - a))


def log_ticks(axis, most: int = 6) -> None:
    """Plain-number labels (``0.5``, ``2``, ``100``) at 1-2-5 steps on the log-scaled ``axis``
    (``ax.xaxis``), at most ``most`` of them, and no minor labels."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    lo, hi = axis.get_view_interval()
    lo, hi = max(min(lo, hi), 1e-12), max(lo, hi)
    decades = range(int(np.floor(np.log10(lo))), int(np.ceil(np.log10(hi))) + 1)
    for steps in ((1, 2, 5), (1, 3), (1,)):
        ticks = [m * 10.0 ** d for d in decades for m in steps if lo <= m * 10.0 ** d <= hi]
        if len(ticks) <= most:
            break
    if len(ticks) > most:  # many decades: every k-th power of ten
        ticks = ticks[::int(np.ceil(len(ticks) / most))]
    axis.set_major_locator(FixedLocator(ticks))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.10g}"))
    axis.set_minor_formatter(NullFormatter())

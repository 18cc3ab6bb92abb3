"""Plots of simulation results (matplotlib, from the ``plot`` extra).

``plot_comparison`` draws what Kopanski & Rzadca show in Section 4.2: mean waiting time and mean
bounded slowdown per policy, and the tail of the waiting-time distribution (the jobs that wait
longest), where starvation shows.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from bbopt.analysis.metrics import per_job
from bbopt.errors import InputError
from bbopt.simulation.result import SimulationResult


def plot_comparison(results: Mapping[str, SimulationResult], path: str | Path,
                    title: str = "") -> Path:
    """Write a PNG (or any format matplotlib knows by suffix) comparing the policies."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise InputError("plotting needs matplotlib: pip install 'bbopt[plot]'") from None
    names = list(results)
    metrics = {n: per_job(r) for n, r in results.items()}
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
    x = np.arange(len(names))
    axes[0].bar(x, [np.mean(metrics[n]["wait"]) / 3600 for n in names], color="tab:blue")
    axes[0].set_ylabel("mean waiting time [h]")
    axes[1].bar(x, [np.mean(metrics[n]["bounded_slowdown"]) for n in names], color="tab:orange")
    axes[1].set_ylabel("mean bounded slowdown")
    for ax in axes[:2]:
        ax.set_xticks(x, names, rotation=30, ha="right")
        ax.set_yscale("log")
    for n in names:
        waits = np.sort(metrics[n]["wait"])[::-1][:3000] / 3600
        axes[2].plot(np.arange(1, waits.size + 1), waits, label=n)
    axes[2].set_xlabel("job rank by waiting time")
    axes[2].set_ylabel("waiting time [h]")
    axes[2].set_yscale("log")
    axes[2].set_title("tail: longest waits")
    axes[2].legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

"""Independent replays in worker processes: ``bbopt compare`` runs its policies (and, with
``--split``, every part of every policy) on all cores.

A replay is deterministic and shares nothing with the others, so the runs are farmed out whole
and collected **in submission order**: the output is the serial run's (only the measured wall
and decision times differ, as they do between two serial runs). With one worker, or one task,
everything runs in this process.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any


def default_workers() -> int:
    """The cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def run_all(fn: Callable[..., Any], tasks: Sequence[tuple], workers: int | None = None,
            progress: Callable[[int, int], None] | None = None) -> list[Any]:
    """``[fn(*task) for task in tasks]``, on up to ``workers`` processes (default: every core).

    ``fn`` must be a module-level function and its arguments and result picklable.
    ``progress(done, total)`` is called as runs finish (in any order).
    """
    n = len(tasks)
    workers = default_workers() if workers is None else workers
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if workers == 1 or n <= 1:
        out = []
        for done, task in enumerate(tasks, 1):
            out.append(fn(*task))
            if progress is not None:
                progress(done, n)
        return out
    results: list[Any] = [None] * n
    with ProcessPoolExecutor(max_workers=min(workers, n)) as pool:
        futures = {pool.submit(fn, *task): k for k, task in enumerate(tasks)}
        for done, fut in enumerate(as_completed(futures), 1):
            results[futures[fut]] = fut.result()
            if progress is not None:
                progress(done, n)
    return results

"""How a sweep's runs are handed to workers, so that two workers take half the serial time.

- **Longest first.** Each run's cost is estimated before it runs (:func:`estimate`: the jobs of
  its part times its policy's CPU cost per job, :data:`POLICY_COST`), and runs are handed out
  longest first (:func:`longest_first`: Graham's LPT rule, a makespan within 4/3 of the best),
  so the last runs to start are the short ones and no worker idles while another finishes a
  full-trace run. The order changes nothing in the runs themselves.
- **Batches by cost.** Runs whose estimate is small are grouped into one task up to a target
  cost (:func:`cost_batches`), so the scheduler's overhead per task (Dask: a few ms) stays small
  against the work; a long run is a task of its own.
- **Prepared workloads.** The driver has prepared every workload to hash it; it hands them to
  the local workers as pickles named by their content hash (:func:`write_prepared`), and a
  worker keeps each one it has used, keyed by that hash, with its split into parts
  (:func:`worker_part`), instead of reading the trace and applying the transforms again.
"""

from __future__ import annotations

import os
import pickle
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from bbopt.core import Job
from bbopt.errors import InputError

T = TypeVar("T")

#: CPU seconds per 1,000 jobs of a run, by policy. Window policies: measured on the BBSched
#: reproduction's S4 workload (28,467 KTH jobs, 100 nodes, WFP order, deterministic budgets);
#: queue policies: the KTH throughput benchmark's 96 runs (about 0.1 s per 1,000 jobs on
#: average, conservative backfilling the dearest); plan policies: plan-2 on the whole KTH trace
#: (84 CPU s for 28,467 jobs, the paper's search). Only the ratios matter: they order the runs
#: (and tell ``bbopt compare`` whether worker processes pay).
POLICY_COST: dict[str, float] = {
    "fcfs": 0.05, "fcfs-easy": 0.08, "filler": 0.05, "fcfs-bb": 0.08, "sjf-bb": 0.08,
    "conservative-bb": 0.3, "naive": 0.13, "bin-packing": 0.14,
    "weighted": 0.77, "weighted-cpu": 0.78, "weighted-bb": 0.77, "constrained-cpu": 0.72,
    "constrained-bb": 0.77, "bbsched": 0.4, "plan-1": 3.0, "plan-2": 3.0, "plan-3": 3.0,
}
#: A policy not in the table: one with a solver budget costs like a window policy, else like
#: a queue policy.
DEFAULT_COST = {"budgeted": 0.6, "rule": 0.1}


def estimate(n_jobs: int, policy: str, accepted: Mapping[str, Any]) -> float:
    """Estimated CPU seconds of a run of ``policy`` (whose options are ``accepted``) on
    ``n_jobs`` jobs; the execution model and the platform are not counted."""
    per = POLICY_COST.get(policy)
    if per is None:
        per = DEFAULT_COST["budgeted" if "budget" in accepted else "rule"]
    return max(n_jobs, 1) * per / 1000.0


def longest_first(tasks: Sequence[T], cost: Callable[[T], float]) -> list[T]:
    """``tasks`` by decreasing estimated cost (equal costs keep their order)."""
    return sorted(tasks, key=lambda t: -cost(t))


def cost_batches(tasks: Sequence[T], cost: Callable[[T], float], n_workers: int, *,
                 target: float = 1.0) -> list[list[T]]:
    """``tasks`` (longest first) grouped into batches of about ``target`` estimated seconds,
    but never so few batches that a worker waits: at most a quarter of the total per worker
    goes into one batch. A task at least that long is a batch of its own."""
    ordered = longest_first(tasks, cost)
    total = sum(cost(t) for t in ordered)
    cap = min(target, total / (4 * max(n_workers, 1))) if ordered else target
    out: list[list[T]] = []
    current: list[T] = []
    acc = 0.0
    for t in ordered:
        c = cost(t)
        if c >= cap:
            out.append([t])
            continue
        current.append(t)
        acc += c
        if acc >= cap:
            out.append(current)
            current, acc = [], 0.0
    if current:
        out.append(current)
    return out


# --- prepared workloads -----------------------------------------------------------------------

def write_prepared(directory: Path, sha: str, jobs: Sequence[Job]) -> Path:
    """Write a prepared workload as ``<sha>.pickle`` in ``directory`` (atomically)."""
    path = directory / f"{sha}.pickle"
    if not path.exists():
        tmp = directory / f".{sha}.{os.getpid()}.tmp"
        tmp.write_bytes(pickle.dumps(tuple(jobs), protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(tmp, path)
    return path


#: This process's prepared workloads by content hash: [jobs, parts or None] (least recently
#: used first).
_PREPARED: OrderedDict[str, list[Any]] = OrderedDict()
_KEEP = 12


def worker_part(sha: str, prepared: str | None, part: int | None,
                prepare: Callable[[], tuple[tuple[Job, ...], str]],
                split: Callable[[tuple[Job, ...]], tuple[tuple[Job, ...], ...]]
                ) -> tuple[Job, ...]:
    """The jobs of ``part`` (``None``: all) of the workload whose content hash is ``sha``: kept
    from an earlier run of this process, else read from the driver's pickle in ``prepared``,
    else ``prepare()``-d here and checked against ``sha`` (a Dask worker on another machine)."""
    entry = _PREPARED.get(sha)
    if entry is None:
        path = Path(prepared) / f"{sha}.pickle" if prepared else None
        if path is not None and path.is_file():
            jobs = pickle.loads(path.read_bytes())  # written by this sweep's driver
        else:
            jobs, got = prepare()
            if got != sha:
                raise InputError(f"this worker's workload differs from the driver's (content "
                                 f"{got[:12]} != {sha[:12]}): is the file the same?",
                                 field="workloads")
        entry = _PREPARED[sha] = [jobs, None]
        while len(_PREPARED) > _KEEP:
            _PREPARED.popitem(last=False)
    else:
        _PREPARED.move_to_end(sha)
    if part is None:
        return entry[0]
    if entry[1] is None:
        entry[1] = split(entry[0])
    return entry[1][part]

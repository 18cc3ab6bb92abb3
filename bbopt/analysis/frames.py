"""Simulation records as pandas DataFrames, and the schedule as a timeline.

- :func:`to_pandas` -- one row per job of a :class:`~bbopt.simulation.SimulationResult`
  (submit, start, end, state, nodes, bb, ssd, wait, turnaround, bounded slowdown, allocation):
  the result's own :meth:`~bbopt.simulation.SimulationResult.to_pandas`;
  :func:`from_jobs_csv` reads the same columns back from the ``jobs.csv`` bbopt writes (and a
  sweep stores gzipped per run), so every plot takes either.
- :func:`metrics_frame` -- one row per run of :func:`bbopt.summarize`.
- :func:`timeline` -- nodes and BB in use and the queue length as step functions of time. The
  events of one instant are applied ends first, then submissions, then starts (what the engine
  does), and only the state after the instant is kept, so the use never exceeds the capacity.
  :func:`utilisation` integrates it; over the run's span it equals ``summarize``'s
  ``node_utilization`` and ``bb_utilization``.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd

from bbopt.analysis.metrics import summarize
from bbopt.core import JobState
from bbopt.simulation.result import BSLD_BOUND, OUTCOME_COLUMNS, SimulationResult


def to_pandas(result: SimulationResult) -> pd.DataFrame:
    """Per-job outcomes, indexed like ``result.jobs`` (NaN times for rejected jobs):
    :meth:`SimulationResult.to_pandas`."""
    return result.to_pandas()


_STATES = {"COMPLETED_SUCCESSFULLY": JobState.FINISHED,
           "COMPLETED_WALLTIME_REACHED": JobState.KILLED, "REJECTED": JobState.REJECTED}


#: The columns of a ``jobs.csv`` :func:`from_jobs_csv` reads, and whether each must be a
#: number in every row (``True``) or a number where given (``False``: the times of a job
#: that never ran are empty); ``job_id`` and ``final_state`` are text.
JOBS_CSV_NUMBERS = {"submission_time": True, "requested_number_of_resources": True,
                    "requested_time": True, "starting_time": False, "finish_time": False}
JOBS_CSV_OPTIONAL = {"bb": False, "trace_runtime": False}


def check_jobs_csv(frame: pd.DataFrame) -> None:
    """Raise :class:`~bbopt.errors.InputError` naming the column (and the first bad row, 1
    for the first record) where ``frame`` is not a jobs.csv :func:`from_jobs_csv` can read: a
    column missing, a number that is not one, a node count that is not a whole number in [0,
    MAX_NODES]; and the file, ``frame.attrs["source"]``, when it is known."""
    from bbopt.errors import InputError
    from bbopt.limits import MAX_NODES

    source = frame.attrs.get("source")
    for column in ("job_id", "final_state", *JOBS_CSV_NUMBERS):
        if column not in frame.columns:
            raise InputError("a jobs.csv column is missing", source=source, field=column)
    for column, required in {**JOBS_CSV_NUMBERS, **JOBS_CSV_OPTIONAL}.items():
        if column not in frame.columns:
            continue
        raw = frame[column]
        values = pd.to_numeric(raw, errors="coerce").to_numpy(float)
        bad = (np.isnan(values) & (raw.notna().to_numpy() | required)) | np.isinf(values)
        what = "a finite number"
        if column == "requested_number_of_resources":
            bad |= (values < 0) | (values != np.floor(values)) | (values > MAX_NODES)
            what = f"a whole number in [0, {MAX_NODES:,}]"
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise InputError(f"must be {what}, got {raw.iloc[row]!r}", source=source,
                             line=row + 1, field=column)


def from_jobs_csv(frame: pd.DataFrame) -> pd.DataFrame:
    """The columns of :func:`to_pandas` from a ``jobs.csv`` DataFrame (Batsim's + bbopt's;
    :func:`check_jobs_csv` says what it needs, and refuses what it cannot read)."""
    check_jobs_csv(frame)
    state = frame["final_state"].map(_STATES).fillna("").astype(str)
    ran = state.isin([JobState.FINISHED, JobState.KILLED]).to_numpy()
    start = np.where(ran, frame["starting_time"].to_numpy(float), np.nan)
    end = np.where(ran, frame["finish_time"].to_numpy(float), np.nan)
    submit = frame["submission_time"].to_numpy(float)
    execution = end - start
    turnaround = end - submit
    alloc = frame.get("allocated_resources", "")
    return pd.DataFrame({
        "job_id": frame["job_id"].astype(str), "submit": submit, "start": start, "end": end,
        "state": state, "nodes": frame["requested_number_of_resources"].astype(int),
        "bb": frame["bb"].astype(float) if "bb" in frame else 0.0,
        "ssd": 0.0, "walltime": frame["requested_time"].astype(float),
        "runtime": frame["trace_runtime"].astype(float) if "trace_runtime" in frame
        else np.nan,
        "wait": start - submit, "turnaround": turnaround,
        "bounded_slowdown": np.maximum(turnaround / np.maximum(execution, BSLD_BOUND), 1.0),
        "user": frame.get("user"),
        "allocation": pd.Series(alloc, index=frame.index).fillna("").astype(str),
    }, columns=list(OUTCOME_COLUMNS))


def outcomes(obj: SimulationResult | pd.DataFrame) -> pd.DataFrame:
    """A :func:`to_pandas` frame from a result, a to_pandas frame or a jobs.csv frame."""
    if isinstance(obj, SimulationResult):
        return to_pandas(obj)
    if "final_state" in obj.columns:
        return from_jobs_csv(obj)
    return obj


def metrics_frame(results: SimulationResult | Mapping[str, SimulationResult], *,
                  interval: tuple[float, float] | None = None) -> pd.DataFrame:
    """One row of :func:`bbopt.summarize` per run (indexed by the mapping's keys, or the
    policy name of a single result)."""
    if isinstance(results, SimulationResult):
        results = {results.policy: results}
    rows = {name: summarize(r, interval=interval) for name, r in results.items()}
    frame = pd.DataFrame.from_dict(rows, orient="index")
    frame.index.name = "run"
    return frame


def timeline(obj: SimulationResult | pd.DataFrame) -> pd.DataFrame:
    """Columns ``time, nodes, bb, queued, running``: the state after each event instant."""
    f = outcomes(obj)
    ran = f["start"].notna().to_numpy()
    submit = f["submit"].to_numpy(float)[ran]
    start = f["start"].to_numpy(float)[ran]
    end = f["end"].to_numpy(float)[ran]
    nodes = f["nodes"].to_numpy(float)[ran]
    bb = f["bb"].to_numpy(float)[ran]
    n = start.size
    # kinds: 0 end, 1 submit, 2 start -- the order within one instant
    t = np.concatenate([end, submit, start])
    kind = np.concatenate([np.zeros(n), np.ones(n), np.full(n, 2.0)])
    d_nodes = np.concatenate([-nodes, np.zeros(n), nodes])
    d_bb = np.concatenate([-bb, np.zeros(n), bb])
    d_queue = np.concatenate([np.zeros(n), np.ones(n), -np.ones(n)])
    d_run = np.concatenate([-np.ones(n), np.zeros(n), np.ones(n)])
    order = np.lexsort((kind, t))
    t = t[order]
    cols = {name: np.cumsum(d[order]) for name, d in
            (("nodes", d_nodes), ("bb", d_bb), ("queued", d_queue), ("running", d_run))}
    last = np.r_[t[1:] != t[:-1], True] if t.size else np.zeros(0, dtype=bool)
    out = pd.DataFrame({"time": t[last], **{k: v[last] for k, v in cols.items()}})
    out["bb"] = out["bb"].clip(lower=0.0)  # float round-off of sums of large byte counts
    return out


def utilisation(tl: pd.DataFrame, capacity: float, column: str = "nodes",
                t0: float | None = None, t1: float | None = None) -> float:
    """The time-average of ``column`` over ``[t0, t1]`` (default: the timeline's span) over
    ``capacity``."""
    times = tl["time"].to_numpy(float)
    values = tl[column].to_numpy(float)
    if times.size == 0 or capacity <= 0:
        return float("nan")
    t0 = times[0] if t0 is None else t0
    t1 = times[-1] if t1 is None else t1
    edges = np.clip(np.r_[times, t1], t0, t1)
    held = float(np.sum(values * np.diff(edges)))
    return held / (capacity * max(t1 - t0, 1e-12))

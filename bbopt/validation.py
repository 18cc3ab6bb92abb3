"""Checks that a :class:`~bbopt.core.ClusterState` describes a cluster that can exist.

A state that comes from outside (``bbopt decide``, a resource-manager plugin, a digital twin)
may be impossible: running jobs holding more nodes or burst buffer than the platform has,
overlapping or out-of-range node allocations, a queued job submitted in the future, a running job
that starts in the future, negative times or SSD sizes. A policy handed such a state answers
something meaningless (five policies would start a job "submitted" in the future), so
:func:`validate_state` refuses it with an :class:`~bbopt.errors.InputError` naming the JSON path
and the field, as :mod:`bbopt.schema` spells them. The simulation engine builds its states
itself and they pass by construction (a test checks it); :func:`bbopt.decide` and the JSON reader
call this function. Capacities follow Kopanski & Rzadca (Euro-Par 2021, Section 3): a running
job holds its nodes and its burst buffer for its whole duration.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bbopt.core import ClusterState, Platform, RunningJob
from bbopt.errors import InputError

#: Relative slack on the burst-buffer sum (floating-point sums of byte counts).
_BB_SLACK = 1e-9


def validate_state(state: ClusterState, source: str | None = None) -> None:
    """Raise :class:`InputError` if ``state`` is impossible on its own platform.

    Checked: ``time`` finite and >= 0; platform SSD sizes finite and >= 0; job ids unique;
    every running job started at or before ``time`` and at a time >= 0, running jobs together
    within the platform's nodes and burst buffer, allocations (when given) of exactly
    ``job.nodes`` distinct indices in ``[0, nodes)``, disjoint between jobs and with enough SSD
    on each node; named BB pieces (when given) on the platform's BB nodes, adding up to the
    job's BB and within each BB node; every queued job submitted at or before ``time``; the
    policy memory that bbopt's own policies write (``rounds``, ``reservations``) well formed.
    """

    def fail(path: str, field: str | None, message: str) -> InputError:
        return InputError(message, source=source, line=path, field=field)

    p = state.platform
    if not (isinstance(state.time, int | float) and math.isfinite(state.time)
            and state.time >= 0):
        raise fail("$", "time", f"must be a finite number >= 0, got {state.time!r}")
    # (a node's SSD size is checked where a Platform is made: bbopt.core.Platform)
    ids = {r.job.id for r in state.running} | {j.id for j in state.queue}
    if len(ids) != len(state.running) + len(state.queue):  # find the first repeat
        seen: dict[str, str] = {}
        for k, r in enumerate(state.running):
            _unique(seen, r.job.id, f"$.running[{k}].job", fail)
        for k, j in enumerate(state.queue):
            _unique(seen, j.id, f"$.queue[{k}]", fail)

    used_nodes = 0
    used_bb = 0.0
    owner: dict[int, int] = {}
    held = [0.0] * len(p.bb_nodes or ())  # bytes the pieces named so far take on each BB node
    for k, r in enumerate(state.running):
        path = f"$.running[{k}]"
        if not (math.isfinite(r.start) and r.start >= 0):
            raise fail(path, "start", f"must be a finite number >= 0, got {r.start!r}")
        if r.start > state.time:
            raise fail(path, "start", f"job {r.job.id} starts at {r.start:g}, after the state's "
                       f"time {state.time:g}: a running job cannot start in the future")
        if r.job.submit > r.start:
            raise fail(f"{path}.job", "submit", f"job {r.job.id} was submitted at "
                       f"{r.job.submit:g}, after its start {r.start:g}")
        used_nodes += r.job.nodes
        used_bb += r.job.bb
        if used_nodes > p.nodes:
            raise fail(path, "job", f"running jobs use {used_nodes} nodes up to here; the "
                       f"platform has {p.nodes}")
        if used_bb > p.bb * (1 + _BB_SLACK) + 1e-6:
            raise fail(path, "job", f"running jobs use {used_bb:.6g} B of burst buffer up to "
                       f"here; the platform has {p.bb:.6g} B")
        if r.bb_pieces is not None:
            _check_pieces(r, p, held, f"{path}.bb_pieces", fail)
        if r.allocation is None:
            continue
        alloc = r.allocation
        if len(alloc) != r.job.nodes:
            raise fail(path, "allocation", f"lists {len(alloc)} nodes for a job of "
                       f"{r.job.nodes}")
        for i in alloc:
            if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < p.nodes:
                raise fail(path, "allocation", f"node {i!r} is not an index in 0..{p.nodes - 1}")
            if i in owner:
                other = owner[i]
                where = "twice in this allocation" if other == k else \
                    f"also in $.running[{other}].allocation"
                raise fail(path, "allocation", f"node {i} is {where}")
            owner[i] = k
            if r.job.ssd > 0 and (p.node_ssd is None or p.node_ssd[i] < r.job.ssd):
                have = 0.0 if p.node_ssd is None else p.node_ssd[i]
                raise fail(path, "allocation", f"node {i} has {have:.6g} B of SSD, job "
                           f"{r.job.id} holds {r.job.ssd:.6g} B per node")
    latest = max((j.submit for j in state.queue), default=0.0)
    for k, j in enumerate(state.queue if latest > state.time else ()):
        if j.submit > state.time:
            raise fail(f"$.queue[{k}]", "submit", f"job {j.id} is submitted at {j.submit:g}, "
                       f"after the state's time {state.time:g}: a queued job cannot come from "
                       "the future")
    _check_memory(state.memory, fail)


def _check_pieces(r: RunningJob, p: Platform, held: list[float], path: str, fail) -> None:
    """A running job's named BB pieces: on a platform with BB nodes, each ``(BB node, bytes)``
    with an index in range and finite bytes >= 0, adding up to the job's BB (within the
    rounding slack), and the pieces of all running jobs within each BB node's capacity."""
    if p.bb_nodes is None:
        raise fail(path, "bb_pieces", "names BB nodes, but the platform's burst buffer is one "
                   "pool (no bb_nodes)")
    total = 0.0
    for node, size in r.bb_pieces:
        if isinstance(node, bool) or not isinstance(node, int) \
                or not 0 <= node < len(p.bb_nodes):
            raise fail(path, "bb_pieces", f"BB node {node!r} is not an index in "
                       f"0..{len(p.bb_nodes) - 1}")
        if not (isinstance(size, int | float) and math.isfinite(size) and size >= 0):
            raise fail(path, "bb_pieces", f"a piece must be finite bytes >= 0, got {size!r}")
        total += size
        held[node] += size
        cap = p.bb_nodes[node]
        if held[node] > cap * (1 + _BB_SLACK) + 1e-6:
            raise fail(path, "bb_pieces", f"running jobs' pieces take {held[node]:.6g} B of BB "
                       f"node {node} up to here; it holds {cap:.6g} B")
    if abs(total - r.job.bb) > r.job.bb * _BB_SLACK + 1e-6:
        raise fail(path, "bb_pieces", f"the pieces add up to {total:.6g} B, job {r.job.id} "
                   f"holds {r.job.bb:.6g} B of burst buffer")


def _unique(seen: dict[str, str], job_id: str, path: str, fail) -> None:
    if job_id in seen:
        raise fail(path, "id", f"job id {job_id!r} appears twice (also at {seen[job_id]})")
    seen[job_id] = path


def _check_memory(memory: Any, fail) -> None:
    """The memory keys bbopt's policies write: ``rounds`` ({id: int >= 0}) and
    ``reservations`` ({id: time}, a finite time or +inf: the job never fits the platform, as
    ``conservative-bb`` remembers it)."""
    if not isinstance(memory, Mapping):
        raise fail("$", "memory", f"must be an object, got {type(memory).__name__}")
    for key, kind in (("rounds", "count"), ("reservations", "time")):
        if key not in memory:
            continue
        value = memory[key]
        if not isinstance(value, Mapping):
            raise fail("$.memory", key, f"must be an object {{job id: {kind}}}, got "
                       f"{type(value).__name__}")
        for job_id, x in value.items():
            ok = isinstance(x, int | float) and not isinstance(x, bool) and (
                math.isfinite(x) or kind == "time" and x == math.inf)
            if kind == "count":
                ok = ok and x >= 0 and float(x).is_integer()
            if not ok:
                want = "an integer >= 0" if kind == "count" else "a finite time or +inf"
                raise fail(f"$.memory.{key}", str(job_id), f"must be {want}, got {x!r}")

"""Conservative backfilling on named BB nodes: the reservations planned at every decision, each
with the pieces it holds, compiled or in Python (Kopanski & Rzadca, Euro-Par 2021, Sections
3.2 and 4.1: a job's processors and its per-node BB pieces on the BB nodes, reserved for its
whole walltime; a start names its pieces to the engine).

:class:`bbopt.policies.conservative.ConservativeBackfilling` on a platform whose BB nodes are
named asks :meth:`NamedArrays.plan` (the compiled kernel
:func:`bbopt.planner.jit.named_conservative.conservative_step`, fed with arrays kept between
decisions: the running jobs' while they run, the queue's while it only loses the jobs started
and gains the jobs queued since, and the profile while every amount is a whole number of bytes
and nothing but the jobs it started ran) and, without the kernels,
:func:`~bbopt.policies.conservative_replan.replan` (the planner's Python path, the kernel's
reference, which builds the profile at every decision): the same starts, bit for bit. A
profile kept is the one built again because sums of whole numbers below 2**50 are exact in any
order (docs/named-bb-speed.md).
"""

from __future__ import annotations

import math
from itertools import chain
from operator import attrgetter, is_, itemgetter
from typing import NamedTuple

import numpy as np

from bbopt.core import ClusterState, Job, RunningJob, RunningJobs, slack
from bbopt.planner import bb_placement
from bbopt.planner.bb import profile_slacks
from bbopt.planner.named import conservative_kernels
from bbopt.planner.pieces import pieces_of_bytes
from bbopt.planner.profile import OverbookedError
from bbopt.policies.conservative_replan import came_free


def _end(r) -> float:
    return r.start + r.job.walltime


_job_id = attrgetter("job.id")
_first, _second, _third = itemgetter(0), itemgetter(1), itemgetter(2)


def _holding(r: RunningJob, k: int) -> tuple[RunningJob, tuple[float, ...]] | None:
    """What running job ``r`` holds as the compiled decision reads it: ``r`` (a job started
    again under the same id holds other pieces) and its expected end, nodes, pool BB and bytes
    on each of the ``k`` BB nodes; ``None`` when its pieces are not known."""
    job = r.job
    pieces = r.bb_pieces
    if pieces is None:
        if job.bb > 0:
            return None
        pieces = ()
    vec = [0.0] * k
    for b, size in pieces:
        vec[b] += size
    return r, (r.start + job.walltime, job.nodes, job.bb, *vec)


def _whole_amount(x: float) -> bool:
    """Whether ``x`` is a whole number below 2**50 (sums of such are exact in any order)."""
    x = float(x)
    return x.is_integer() and abs(x) < _EXACT


def _whole(job: Job) -> bool:
    """Whether what ``job`` would hold is whole: its nodes, its BB and each of its pieces
    (``bb / nodes``), so that a profile kept between decisions is the one built again."""
    return _whole_amount(job.bb) and _whole_amount(job.bb / job.nodes)


def _exact(caps: tuple[float, ...], tol: tuple[float, ...]) -> bool:
    """Whether a profile of capacities ``caps`` and slacks ``tol`` may be kept: each capacity
    whole (:func:`_whole_amount`) and each slack's fraction at most a half, so that a whole
    free amount plus the slack never rounds up to the next whole number."""
    return all(map(_whole_amount, caps)) and all(t % 1.0 <= 0.5 for t in tol)


#: Whole amounts below this sum exactly, and a slack's fraction of at most a half adds to
#: them without reaching the next whole number.
_EXACT = 2.0 ** 50


class NamedArrays:
    """What the compiled decision keeps between decisions: the platform with its capacities
    and slacks as arrays, what each running job holds (by id), the running jobs last seen
    with their arrays, the queue last planned with its profile (:class:`_Queue`) and what
    holds resources in that profile besides the reservations (job id -> expected end, row,
    the running job or the job started, its pieces)."""

    __slots__ = ("_consts", "_running", "_queue", "_holders", "_none")

    def __init__(self) -> None:
        self._consts: tuple | None = None
        self._running: tuple | None = None
        self._queue: _Queue | None = None
        self._holders: dict[str, list] = {}
        self._none: tuple[np.ndarray, ...] = ()

    def plan(self, state: ClusterState, queue: tuple[Job, ...], previous: dict[str, float],
             pieces: dict[str, list[float]], depth: float) -> NamedPlan | None:
        """conservative-bb's plan of ``queue`` on named BB nodes, computed by the compiled
        kernel (:func:`bbopt.planner.jit.named_conservative.conservative_step`) from arrays.
        When ``previous`` and ``pieces`` (the bytes each kept reservation holds on each BB node)
        are the plan this object returned last and ``queue`` is the one it planned less the
        jobs it started, then the jobs queued since, the queue's arrays are kept, and so is the
        profile while the running jobs are those it left running or started (each with the
        pieces it named) less the ones that ended, every reservation is due at or after now
        and every amount is a whole number (:meth:`_gone`, :func:`_whole`): the rest of the
        slot of a job that ended early is given back, and the kept reservations are compressed
        then (something came free). Otherwise the profile is built again from what each
        running job holds (nodes, pool BB, bytes per BB node; worked out once per job and kept
        while it runs) and the kept reservations held again, compressed when :func:`came_free`
        says. ``None`` without the kernels, or when some running job's pieces are not known,
        or when one is at or past its walltime (then Python decides: the kernel takes a running
        job's nodes and BB to be free from its expected end on, which the engine and
        :func:`bbopt.decide` never let pass, :func:`bbopt.core.planning_state`, but a caller
        of ``decide`` may)."""
        platform = state.platform
        consts = self._consts
        if consts is None or consts[0] is not platform:
            loaded = conservative_kernels()
            if loaded is None:
                return None
            bb = bb_placement(platform)
            caps = (float(platform.nodes), float(platform.bb), *bb.capacity)
            tol = profile_slacks(platform)
            consts = self._consts = (
                platform, np.array(caps), np.array(tol), slack(platform.bb), bb.tol, {},
                loaded.conservative_step, _exact(caps, tol))
            self._running = self._queue = None
            width = len(caps)  # (no running job, no job gone: one compiled signature)
            self._none = (np.empty(0), np.empty((0, width)), np.empty((0, 1 + width)))
        _, caps, tol, bb_tol, ftol, rows, step, exact = consts
        running = state.running
        if running:  # (a job at or past its walltime: see the docstring)
            first = running[0] if type(running) is RunningJobs else min(running, key=_end)
            if first.start + first.job.walltime <= state.time:
                return None
        now = float(state.time)
        count = len(queue)
        k = len(caps) - 2
        last = self._queue
        if last is None or last.jobs.shape[1] < count:
            last = self._queue = _Queue(max(64, 2 * count), k, last)
        n = len(last.rest)
        none = last.none  # (no kept start, no kept pieces)
        kept = self._running
        same = kept is not None and kept[0] is running
        gone = None
        if previous is last.later and pieces is last.held and queue[:n] == last.rest:
            fresh = queue[n:]  # (no kept start: ``previous`` names only jobs of ``rest``)
            ids = last.rest_ids + [j.id for j in fresh]
            rows_new = [(j.nodes, j.bb, j.walltime, *none) for j in fresh]
            kept_cols = last.count
            whole = last.whole and all(map(_whole, fresh))
            # (the same running jobs as at that decision, which started none: none ended
            # since, and every job it left holding resources still holds them)
            quiet = same and not last.started
            if last.length and last.whole and last.first >= now:  # (the profile kept)
                gone = () if quiet else self._gone(running, now)
            if quiet:
                compress = False
            elif gone is None:
                compress = came_free(state)
            else:  # (room came free iff a job it held is gone before its expected end)
                compress = bool(gone)
        else:  # (planned from the queue and the reservations given)
            ids = [j.id for j in queue]
            get, own = previous.get, pieces.get
            nan = math.nan
            rows_new = [(j.nodes, j.bb, j.walltime, get(j.id, nan), *(own(j.id) or none[1:]))
                        for j in queue]
            kept_cols = 0
            whole = exact and all(map(_whole, queue))
            quiet = False
            compress = came_free(state, sum(r[3] == r[3] for r in rows_new))
        if gone is None:  # (the profile built again from the running jobs)
            if not same:
                table = self._table(running, rows, len(caps))
                if table is None:
                    return None
                kept = self._running = (running, *table)
            _, ends, held, whole_running, values = kept
            # (every amount of the profile built: a fraction gone, it may be kept again)
            whole = exact and whole_running and (whole or all(map(_whole, queue)))
            length = 0
            base = len(running) + 1
            gone_rows = self._none[2]
            # (what holds resources in the profile: the running jobs, and the jobs started
            # below)
            self._holders = {r.job.id: [v[0], v, r]
                             for r, v in zip(running, values, strict=True)}
        else:
            ends, held, none_gone = self._none
            length = last.length
            base = length + 2 * len(gone) + 1
            gone_rows = np.array(gone, dtype=np.float64) if gone else none_gone
            if not same:  # (the running jobs' table no longer describes them)
                self._running = None
        if last.prof.shape[1] < base + 6 * count + 4:
            last.grow(base + 6 * count + 4)
        news = (np.array(rows_new, dtype=np.float64) if rows_new
                else np.empty((0, 4 + k)))  # (no job queued since the last plan)
        try:
            n_now, n_later, n_moved, length, soonest = step(
                now, caps, tol, bb_tol, ftol, ends, held, float(depth), last.jobs, last.previous,
                last.pieces, last.planned, last.seq, last.got, last.marks, kept_cols, last.then,
                news, compress, last.prof, length, gone_rows, whole)
        except ValueError as exc:
            self._queue = None
            raise OverbookedError(str(exc)) from None
        starts = last.planned[:count].tolist()
        marks = last.marks
        now_at = marks[0, :n_now].tolist() if n_now else ()
        if n_later + n_now == count:  # (each job starts now or is reserved)
            later = dict(zip(ids, starts, strict=True))
            for q in now_at:
                del later[ids[q]]
        else:
            later = {ids[q]: starts[q] for q in marks[1, :n_later].tolist()}
        moved = ([ids[q] for q in marks[2, :n_moved].tolist()] if n_moved else []) \
            if kept_cols else None  # (given, ``previous`` may name jobs no longer queued)
        rows = last.pieces
        if moved is None:  # (the bytes each reservation holds on each BB node, for the memory)
            held = {ids[q]: rows[q].tolist() for q in marks[1, :n_later].tolist()}
        elif moved:
            held = dict(last.held)
            for q in marks[2, :n_moved].tolist():
                if starts[q] > now:
                    held[ids[q]] = rows[q].tolist()
                else:
                    held.pop(ids[q], None)
        else:
            held = last.held
        if n_now:
            started = [queue[q] for q in now_at]
            placed = {}
            holders = self._holders
            for q, job in zip(now_at, started, strict=True):
                own = rows[q].tolist()
                placed[job.id] = named = pieces_of_bytes(own, job.nodes, job.bb)
                end = now + job.walltime
                holders[job.id] = [end, (end, job.nodes, job.bb, *own), job, named]
            rest, rest_ids, b = [], [], 0
            for q in now_at:
                rest.extend(queue[b:q])
                rest_ids.extend(ids[b:q])
                b = q + 1
            rest.extend(queue[b:])
            rest_ids.extend(ids[b:])
            last.rest, last.rest_ids = tuple(rest), rest_ids
        else:
            started, placed = [], {}
            last.rest, last.rest_ids = queue, ids
        last.count, last.then, last.later, last.held = count, now, later, held
        last.started = n_now
        last.length, last.first, last.whole = length, soonest, whole
        if not (quiet and not n_now and last.holding is not None):  # (the same jobs)
            last.holding = {jid: h[0] for jid, h in self._holders.items()}
        return NamedPlan(starts, started, later, moved, held, placed, last.holding)

    def _table(self, running, rows: dict, dims: int):
        """What each running job holds as the kernel reads it: expected ends, then nodes, pool
        BB and bytes on each BB node (one row each), and whether every amount is whole;
        ``None`` when some running job's pieces are not known. The rows as tuples too."""
        entries = list(map(rows.get, map(_job_id, running)))
        if None in entries or not all(map(is_, map(_first, entries), running)):
            entries = []
            for r in running:
                entry = rows.get(r.job.id)
                if entry is None or (entry[0] is not r and entry[0] != r):
                    entry = _holding(r, dims - 2)
                    if entry is None:
                        return None
                    rows[r.job.id] = entry
                entries.append(entry)
        if len(rows) > 2 * len(running) + 256:  # (forget the jobs that ended)
            ids = set(map(_job_id, running))
            for jid in [jid for jid in rows if jid not in ids]:
                del rows[jid]
        values = list(map(_second, entries))
        width = dims + 1
        table = np.fromiter(chain.from_iterable(values), np.float64,
                            len(values) * width).reshape(len(values), width)
        whole = all(_whole_amount(x) for v in values for x in v[1:])
        # (contiguous, as every other array handed over: one compiled signature)
        return (np.ascontiguousarray(table[:, 0]), np.ascontiguousarray(table[:, 1:]), whole,
                values)

    def _gone(self, running, now: float) -> list[tuple[float, ...]] | None:
        """What each job the kept profile holds that is no longer running held, if it was due
        past ``now`` (its expected end, nodes, pool BB, bytes on each BB node), forgetting every
        job gone; ``None`` when some running job is not one it holds there as it runs: not
        left running or started by the last decisions, with another expected end, or started
        with other pieces than those named."""
        holders = self._holders
        ids = list(map(_job_id, running))
        rows = list(map(holders.get, ids))
        if None in rows:
            return None
        if not all(map(is_, map(_third, rows), running)):  # (first seen running: check it)
            for h, r in zip(rows, running, strict=True):
                if h[2] is not r:
                    job = r.job
                    if h[2] is not job or r.start + job.walltime != h[0] or \
                            r.bb_pieces != h[3]:
                        return None
                    h[2] = r
        if len(holders) == len(running):
            return []
        known = set(ids)
        gone = []
        for jid in [jid for jid in holders if jid not in known]:
            h = holders.pop(jid)
            if h[0] > now:
                gone.append(h[1])
        return gone


class NamedPlan(NamedTuple):
    """One decision's plan on named BB nodes: ``starts`` by queue position (``nan``: none),
    the jobs ``started`` now, the ones reserved ``later`` (job id -> start, in queue order) and
    the ids whose reservation is new, moved, placed on other pieces or gone since the
    ``previous`` plan (``moved``; ``None`` unless that plan was the one this object returned
    last), the bytes each reservation holds on each BB node (``held``, job id -> list), the
    pieces of each job started now (``placed``, job id -> pieces, for its start) and the jobs
    holding resources once those start (``holding``, job id -> expected end: the running ones
    and the ones started, what :func:`~bbopt.policies.conservative_replan.holding_after` gives)."""

    starts: list[float]
    started: list[Job]
    later: dict[str, float]
    moved: list[str] | None
    held: dict[str, list[float]]
    placed: dict[str, tuple[tuple[int, float], ...]]
    holding: dict[str, float]


class _Queue:
    """The queue last planned as the compiled decision reads it: per job (column) nodes, BB
    and walltime, kept start, planned start and the bytes it holds on each of the ``k`` BB
    nodes; the jobs left once the started ones leave (``rest``, ``rest_ids``), the plan
    returned (``later``, ``held``), its time, its column count and how many jobs it
    started; the profile it left (``prof``: breakpoints, then the free amount of each
    dimension, its first ``length`` columns; 0: none kept), its earliest reservation and
    whether every amount it holds is whole (:func:`_whole`)."""

    __slots__ = ("jobs", "previous", "pieces", "got", "planned", "seq", "marks", "rest",
                 "rest_ids", "later", "held", "then", "count", "started", "none", "prof",
                 "length", "first", "whole", "holding")

    def __init__(self, capacity: int, k: int, before: _Queue | None) -> None:
        self.jobs = np.empty((3, capacity))
        self.previous = np.empty(capacity)
        self.pieces = np.empty((capacity, k))
        self.got = np.empty((capacity, k))
        self.planned = np.empty(capacity)
        self.seq = np.empty(capacity, dtype=np.int64)
        self.marks = np.empty((3, capacity), dtype=np.int64)
        self.rest: tuple[Job, ...] = ()
        self.rest_ids: list[str] = []
        self.later: dict[str, float] | None = None
        self.held: dict[str, list[float]] | None = None
        self.then = math.nan
        self.count = self.started = 0
        self.none = (math.nan,) * (1 + k)  # (a new row's kept start and pieces: none)
        self.prof = np.empty((3 + k, 256))
        self.length = 0
        self.first = math.inf
        self.whole = False
        self.holding: dict[str, float] | None = None
        if before is not None:  # (grown: the last plan's columns carried over)
            c = before.count
            self.jobs[:, :c] = before.jobs[:, :c]
            self.planned[:c] = before.planned[:c]
            self.pieces[:c] = before.pieces[:c]
            self.rest, self.rest_ids = before.rest, before.rest_ids
            self.later, self.held = before.later, before.held
            self.then, self.count, self.started = before.then, c, before.started
            self.prof, self.length = before.prof, before.length
            self.first, self.whole = before.first, before.whole
            self.holding = before.holding

    def grow(self, columns: int) -> None:
        """Room for a profile of ``columns`` breakpoints (twice that), the kept one copied."""
        prof = np.empty((self.prof.shape[0], 2 * columns))
        prof[:, :self.length] = self.prof[:, :self.length]
        self.prof = prof

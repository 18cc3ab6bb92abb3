"""Exclusive, non-preemptive I/O on one I/O node per rack (Jeannot, Pallez & Vidal, IJHPCA 2023,
"Machine Model" and "Job Model").

A periodic application ``i`` (``Job.extra["io"]``, as written by
:mod:`bbopt.workloads.generators.jeannot`) runs ``n_i`` iterations of a compute phase of ``w_i``
seconds followed by an I/O phase transferring ``v_i`` bytes. Its transfers go through the I/O
node of its rack, which serves **one application at a time at its full bandwidth ``b``**: a job
whose I/O phase is due while the node is busy waits in the node's FIFO, and a transfer, once
started, is never preempted. Alone, the job takes equation (1), ``T_i = n_i (w_i + v_i / b)``;
its real end comes out of the simulation (never earlier than ``start + T_i``).

Several I/O nodes ("extending it to several racks ... is straightforward"): the platform's nodes
``0 .. P-1`` are cut into consecutive racks (``racks=2`` gives two equal halves, a sequence of
sizes gives them explicitly), each with its own I/O node and bandwidth. A job uses the I/O node
of the rack holding most of its nodes (the lowest such rack on a tie); a policy that keeps jobs
inside one rack gets the paper's model exactly.

Conventions that make the run deterministic: at one instant, transfers end first (the freed node
takes the head of its FIFO at once), then compute phases end in job-index order, each joining
its node's FIFO; a zero-length phase completes at the same instant. The bandwidth ``b`` of an
I/O node is ``bandwidth`` (a number, or one per rack) or, by default, the ``io_bandwidth`` the
job was generated for. A job without ``extra["io"]`` computes for its runtime (walltime when
unknown) and does no I/O. Jobs run to completion (``kill_at_walltime=False``, as in the paper,
where walltime is the time alone); with ``True`` a job is killed at ``start + walltime``.

Recorded for the metrics (:mod:`bbopt.simulation.pack_metrics`): every transfer as ``(job index,
I/O node, start, end)`` in :attr:`ExclusiveIO.transfers` (requested at :attr:`ExclusiveIO.due`),
and per job the time its I/O phases waited in a FIFO (:meth:`ExclusiveIO.job_stats`).
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Sequence
from typing import Annotated, Any

import numpy as np

from bbopt.core import Job, JobState, Platform, periodic_spec, rack_sizes, time_alone
from bbopt.errors import InputError
from bbopt.simulation.execution import ExecutionModelBase
from bbopt.units import Bandwidth

INF = math.inf
_IO_END, _COMPUTE_END, _KILL = 0, 1, 2

__all__ = ["ExclusiveIO", "io_node_usage", "periodic_spec", "time_alone"]


class ExclusiveIO(ExecutionModelBase):
    """Periodic jobs, one transfer at a time per I/O node, FIFO, never preempted."""

    name = "exclusive-io"

    def __init__(self, racks: int | Sequence[int] = 1,
                 bandwidth: Annotated[float, Bandwidth] | Sequence[float] | None = None,
                 kill_at_walltime: bool = False) -> None:
        if isinstance(racks, int):
            if racks < 1:
                raise InputError(f"racks must be >= 1, got {racks}", field="racks")
        elif not racks or any(int(r) < 1 for r in racks):
            raise InputError("rack sizes must be positive integers", field="racks")
        self.racks = racks if isinstance(racks, int) else tuple(int(r) for r in racks)
        n_racks = racks if isinstance(racks, int) else len(self.racks)
        if bandwidth is None:
            self.bandwidth: tuple[float | None, ...] = (None,) * n_racks
        elif isinstance(bandwidth, int | float):
            self.bandwidth = (float(bandwidth),) * n_racks
        else:
            self.bandwidth = tuple(float(b) for b in bandwidth)
            if len(self.bandwidth) != n_racks:
                raise InputError(f"{len(self.bandwidth)} bandwidths for {n_racks} racks",
                                 field="bandwidth")
        if any(b is not None and not b > 0 for b in self.bandwidth):
            raise InputError("I/O node bandwidth must be > 0 bytes/s", field="bandwidth")
        self.kill_at_walltime = kill_at_walltime
        self.reset((), None)

    # ------------------------------------------------------------------ protocol
    def reset(self, jobs: Sequence[Job], platform: Platform | None) -> None:
        self._jobs = jobs
        self._specs = [periodic_spec(j) for j in jobs]
        n_racks = len(self.bandwidth)
        self.rack_of_node: list[int] = []
        if platform is not None:
            for r, size in enumerate(rack_sizes(self.racks, platform.nodes)):
                self.rack_of_node.extend([r] * size)
        self._rack_arr = np.asarray(self.rack_of_node, dtype=np.int64)
        self._heap: list[tuple[float, int, int, int]] = []  # (time, kind, k, iteration)
        self._fifo: list[deque[tuple[int, float]]] = [deque() for _ in range(n_racks)]
        self._busy: list[int | None] = [None] * n_racks  # job transferring on each node
        self._rack: dict[int, int] = {}
        self._io_time: dict[int, float] = {}
        self._left: dict[int, int] = {}  # iterations not yet completed
        self._start: dict[int, float] = {}
        self._wait: dict[int, float] = {}
        self._stats: dict[int, dict[str, float]] = {}
        self.transfers: list[tuple[int, int, float, float]] = []
        self.due: list[float] = []  # when each transfer of ``transfers`` was requested

    def start(self, k: int, t: float, allocation: tuple[int, ...]) -> None:
        job = self._jobs[k]
        spec = self._specs[k]
        self._start[k] = t
        self._wait[k] = 0.0
        if self.kill_at_walltime:
            heapq.heappush(self._heap, (t + job.walltime, _KILL, k, -1))
        if spec is None:
            self._left[k] = 0
            runtime = job.runtime if job.runtime is not None else job.walltime
            heapq.heappush(self._heap, (t + runtime, _COMPUTE_END, k, 0))
            return
        n, w, v = spec
        rack = self.rack_for(allocation)
        b = self.bandwidth[rack]
        if b is None:
            b = float(job.extra["io"].get("io_bandwidth", 0))
            if not b > 0:
                raise InputError(f"job {job.id}: no I/O bandwidth (io.io_bandwidth) and none "
                                 "given to the exclusive-io model", field="io.io_bandwidth")
        self._rack[k] = rack
        self._io_time[k] = v / b
        self._left[k] = n
        heapq.heappush(self._heap, (t + w, _COMPUTE_END, k, 0))

    def next_time(self) -> float:
        return self._heap[0][0] if self._heap else INF

    def finish(self, t: float) -> list[tuple[int, str]]:
        heap = self._heap
        done: list[tuple[int, str]] = []
        while heap and heap[0][0] <= t:
            _, kind, k, it = heapq.heappop(heap)
            if k not in self._left:  # already ended (killed)
                continue
            if kind == _KILL:
                done.append((k, JobState.KILLED))
                self._end(k, t)
                continue
            if kind == _IO_END:
                rack = self._rack[k]
                self._busy[rack] = None
                self._left[k] -= 1
                if self._left[k] == 0:
                    done.append((k, JobState.FINISHED))
                    self._end(k, t)
                else:
                    heapq.heappush(heap, (t + self._specs[k][1], _COMPUTE_END, k, it + 1))
                self._serve(rack, t)
            elif self._specs[k] is None:  # a job without I/O: its one compute phase ended
                done.append((k, JobState.FINISHED))
                self._end(k, t)
            else:  # compute phase ended: the I/O phase is due
                rack = self._rack[k]
                self._fifo[rack].append((k, t))
                if self._busy[rack] is None:
                    self._serve(rack, t)
        return done

    # ------------------------------------------------------------------ internals
    def rack_for(self, allocation: Sequence[int]) -> int:
        """The rack whose I/O node serves a job on ``allocation``: the one holding most of its
        nodes, the lowest on a tie (rack 0 when the model was not given a platform)."""
        if len(self.bandwidth) == 1 or not self.rack_of_node or not allocation:
            return 0
        counts = np.bincount(self._rack_arr[np.asarray(allocation, dtype=np.int64)],
                             minlength=len(self.bandwidth))
        return int(np.argmax(counts))  # the first maximum: the lowest rack on a tie

    def _serve(self, rack: int, t: float) -> None:
        fifo = self._fifo[rack]
        if self._busy[rack] is not None or not fifo:
            return
        k, since = fifo.popleft()
        self._busy[rack] = k
        self._wait[k] += t - since
        end = t + self._io_time[k]
        self.transfers.append((k, rack, t, end))
        self.due.append(since)
        heapq.heappush(self._heap, (end, _IO_END, k, 0))

    def _end(self, k: int, t: float) -> None:
        rack = self._rack.get(k)
        if rack is not None:
            if self._busy[rack] == k:  # killed during its transfer: the node is freed now
                i = max(i for i, tr in enumerate(self.transfers) if tr[0] == k)
                k0, r0, s0, _ = self.transfers[i]
                self.transfers[i] = (k0, r0, s0, t)
                self._busy[rack] = None
                self._serve(rack, t)
            self._fifo[rack] = deque(e for e in self._fifo[rack] if e[0] != k)
        self._stats[k] = {"io_wait": self._wait.pop(k, 0.0), "elapsed": t - self._start.pop(k),
                          "io_node": float(rack if rack is not None else -1)}
        del self._left[k]
        self._rack.pop(k, None)

    def metrics(self, result: Any) -> dict[str, float]:
        """Jeannot et al.'s run metrics (:func:`~bbopt.simulation.pack_metrics.pack_metrics`),
        each named ``xio_<metric>``."""
        from bbopt.simulation.pack_metrics import pack_metrics

        return {f"xio_{k}": float(v) for k, v in pack_metrics(result, self).items()}

    def curves(self, result: Any) -> dict[str, list[float]]:
        """Jeannot et al.'s usage over time (:func:`~bbopt.simulation.pack_metrics.usage_over_time`
        in :data:`~bbopt.simulation.pack_metrics.USAGE_BINS` bins of the makespan)."""
        from bbopt.simulation.pack_metrics import USAGE_BINS, usage_over_time

        return {k: [float(x) for x in v]
                for k, v in usage_over_time(result, self, bins=USAGE_BINS).items()}

    def job_stats(self) -> dict[int, dict[str, float]]:
        """Per ended job: seconds its I/O phases waited (``io_wait``), its elapsed time and the
        I/O node it used."""
        return dict(self._stats)


def io_node_usage(transfers: Sequence[tuple[int, int, float, float]],
                  io_nodes: int = 1) -> list[list[tuple[float, float, int]]]:
    """Busy intervals ``(start, end, job)`` per I/O node, sorted (for checks and plots)."""
    out: list[list[tuple[float, float, int]]] = [[] for _ in range(io_nodes)]
    for k, r, s, e in transfers:
        out[r].append((s, e, k))
    for lst in out:
        lst.sort()
    return out


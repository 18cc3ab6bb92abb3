"""The observation of the environments: per-slot job features and machine features, each
normalised to [0, 1], as one flat ``float32`` vector (a Gymnasium ``Box``).

Layout (``W`` window slots, ``K`` named BB nodes, 0 on a pooled BB, ``R`` running slots)::

    [ W x JOB_FEATURES | MACHINE_FEATURES | K | R x 2 ]

- per job slot (:data:`JOB_FEATURES`): present, nodes / platform nodes, BB / platform BB,
  walltime / the trace's longest walltime, wait so far / ``wait_scale`` (12 h, RLScheduler's
  bound), local SSD per node / the largest node SSD, bandwidth per node / the PFS link
  bandwidth, fits now (the :class:`~bbopt.gym.episode.Room` rule, i.e. the action mask);
- machine (:data:`MACHINE_FEATURES`): free nodes, free BB (fractions), link load (the running
  jobs' bandwidth over the I/O tree's PFS link; 0 without a tree), running jobs / nodes, queue
  length / 256;
- each named BB node's free fraction;
- the ``R`` running jobs that end first: remaining walltime / longest walltime, nodes fraction.

Values above the scale are clipped to 1. The features follow the design of RLScheduler (Zhang et
al., SC'20, Section 4.1: per-job rows of a fixed-size window) with the BB, SSD and bandwidth
columns and machine state that BB-aware schedulers need (MRSch, Cluster 2022).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bbopt.core import ClusterState, Job, Platform, RunningJobs
from bbopt.gym.episode import Room

JOB_FEATURES = ("present", "nodes", "bb", "walltime", "wait", "ssd", "bandwidth", "fits")
MACHINE_FEATURES = ("free_nodes", "free_bb", "link_load", "running", "queue")
#: RLScheduler's bound of the wait feature (12 hours).
WAIT_SCALE = 12 * 3600.0


class Observer:
    """Builds the observation vector of one platform and trace (scales fixed at creation)."""

    def __init__(self, platform: Platform, window: int, running_slots: int = 16, *,
                 walltime_scale: float, bandwidth_scale: float = 1.0,
                 wait_scale: float = WAIT_SCALE) -> None:
        self.platform = platform
        self.window = window
        self.running_slots = running_slots
        self.wait_scale = wait_scale
        self.walltime_scale = walltime_scale
        self.ssd_scale = max(platform.node_ssd) if platform.node_ssd else 1.0
        tree = platform.topology
        self.link = tree.pfs_bandwidth if tree is not None else 0.0
        self.bw_scale = self.link or bandwidth_scale
        self.bb_nodes = len(platform.bb_nodes) if platform.bb_nodes is not None else 0
        self.size = (window * len(JOB_FEATURES) + len(MACHINE_FEATURES) + self.bb_nodes
                     + 2 * running_slots)

    @classmethod
    def of_trace(cls, platform: Platform, jobs: Sequence[Job], window: int,
                 running_slots: int = 16) -> Observer:
        """The observer whose scales come from the trace ``jobs`` (its longest walltime, its
        largest per-node bandwidth when the platform has no I/O tree)."""
        return cls(platform, window, running_slots,
                   walltime_scale=max((j.walltime for j in jobs), default=1.0),
                   bandwidth_scale=max((j.bandwidth for j in jobs), default=0.0) or 1.0)

    def settings(self) -> dict[str, float]:
        """What rebuilds this observer on another platform object (:mod:`bbopt.gym.policy`)."""
        return {"window": self.window, "running_slots": self.running_slots,
                "walltime_scale": self.walltime_scale, "bandwidth_scale": self.bw_scale,
                "wait_scale": self.wait_scale}

    def __call__(self, state: ClusterState, slots: Sequence[Job], mask: Sequence[bool],
                 room: Room) -> np.ndarray:
        """The observation of ``state`` with the window ``slots``, their fit flags ``mask`` and
        what is free now (``room``, for the named BB nodes' free space)."""
        p = self.platform
        F = len(JOB_FEATURES)
        out = np.zeros(self.size, dtype=np.float32)
        t, n, bb = state.time, p.nodes, p.bb or 1.0
        rows = []
        for job, ok in zip(slots, mask, strict=False):
            rows.append((1.0, job.nodes / n, job.bb / bb, job.walltime / self.walltime_scale,
                         (t - job.submit) / self.wait_scale, job.ssd / self.ssd_scale,
                         job.bandwidth / self.bw_scale, 1.0 if ok else 0.0))
        if rows:
            out[:len(rows) * F] = np.asarray(rows, dtype=np.float32).ravel()
        i = self.window * F
        free_n, free_b = state.free()
        load = 0.0
        if self.link:
            load = sum(r.job.bandwidth * r.job.nodes for r in state.running) / self.link
        out[i:i + 5] = (free_n / n, free_b / bb if p.bb else 0.0, load, len(state.running) / n,
                        len(state.queue) / 256)
        i += 5
        if self.bb_nodes:
            out[i:i + self.bb_nodes] = np.asarray(room.bb_free) / np.asarray(p.bb_nodes)
            i += self.bb_nodes
        run = state.running
        if type(run) is RunningJobs:  # (the engine's view comes sorted by expected end)
            first = run[:self.running_slots]
        else:
            first = sorted(run, key=lambda r: r.start + r.job.walltime)[:self.running_slots]
        for k, r in enumerate(first):
            out[i + 2 * k] = (r.start + r.job.walltime - t) / self.walltime_scale
            out[i + 2 * k + 1] = r.job.nodes / n
        np.clip(out, 0.0, 1.0, out=out)
        return out


def room_mask(room: Room, slots: Sequence[Job]) -> list[bool]:
    """Which window slots hold a job that fits now (empty slots never do)."""
    return [room.fits(j) for j in slots]

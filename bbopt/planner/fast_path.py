"""The planner's two-dimension fast path on named BB nodes (Kopanski & Rzadca, Euro-Par 2021,
Section 4.1: EASY's starts and head reservation on the authors' 12 BB nodes).

As long as every hold on the BB nodes starts now (EASY: the jobs it starts; its head's
re-placeable reservation holds nodes and pooled bytes only), the free bytes of each BB node
never fall after now: running and started jobs only give pieces back. Then the least free space
of a BB node over an interval is its free space at the interval's start, and a start now whose
pieces the placement finds on the BB nodes now fits the profile's BB-node dimensions (whose
tolerance is wider). The planner then keeps a profile of two dimensions (nodes, pooled BB) and
computes the BB nodes' free bytes at a time from the pieces held and the expected ends: the same
answers as the profile of every dimension (:class:`bbopt.planner.plan.Planner`, the reference,
``Planner.fast_path = False``; ``tests/planner/test_fast_path.py``), which is built (the holds
made so far replayed in order) as soon as a hold on the BB nodes starts later or anything else
is asked. Measured in ``benchmarks/speed/easy_named.py``: fcfs-bb on the whole KTH trace on the
named nodes 6.0 -> 3.6 CPU s, the same schedule.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from operator import itemgetter

from bbopt.core import Job, RunningJobs
from bbopt.planner.profile import Profile

_first = itemgetter(0)


class TwoDimensions:
    """The fast path's methods of :class:`~bbopt.planner.plan.Planner` (module docstring)."""

    __slots__ = ()

    def _split(self) -> Profile | None:
        """The two-dimension profile while the fast path holds, else ``None``."""
        if self._profile is not None or not self.k or not self.fast_path:
            return None
        two = self._two
        if two is None:
            platform, pieces = self.platform, self.pieces
            run_pieces = self._run_pieces
            releases = []
            for r in self.running:
                job = r.job
                end = r.expected_end
                if job.id in pieces:
                    run_pieces.append((end, pieces[job.id]))
                releases.append((end, (job.nodes, job.bb)))
            if type(self.running) is not RunningJobs:  # (the engine's come by expected end)
                run_pieces.sort(key=_first)
            self._run_ends = [end for end, _ in run_pieces]
            self._two = two = Profile(self.now, (platform.nodes, platform.bb), releases)
        return two

    def _bb_at(self, t: float) -> list[float]:
        """The free bytes of each BB node at ``t`` (>= now) on the fast path: free now, plus
        the pieces of the jobs whose expected end is ``t`` or earlier (the caller must not
        change the list)."""
        row = self._bb_rows.get(t)
        if row is None:
            given = self._given(t)
            row = [f + g for f, g in zip(self.bb.free, given, strict=True)]
            held = self.bb.held
            for jid, end in self._ends.items():
                if end <= t:
                    for b, size in held.get(jid, ()):
                        row[b] += size
            self._bb_rows[t] = row
        return row

    def _given(self, t: float) -> list[float]:
        """The bytes the running jobs whose expected end is ``t`` or earlier give back to each
        BB node: a prefix of them by expected end, summed in that order from zero, kept per
        prefix asked for (a longer one goes on from the longest shorter one kept: the same
        additions in the same order; the caller must not change the list)."""
        k = bisect_right(self._run_ends, t)
        sums = self._run_rel
        given = sums.get(k)
        if given is None:
            base = max([j for j in sums if j < k], default=0)
            given = sums[base].copy() if base else [0.0] * self.k
            for _, pieces in self._run_pieces[base:k]:
                for b, size in pieces:
                    given[b] += size
            sums[k] = given
        return given

    def _later_row(self, two: Profile) -> list[float] | None:
        """The row of ``two`` at the first hold after now (``None`` when there is none), the
        first a start now still running then must fit (:meth:`_placement_now_split`); the
        caller must not change it."""
        if self._later == math.inf:
            return None
        return two.free[bisect_right(two.times, self._later) - 1]

    def _placement_now_split(self, two: Profile,
                             job: Job) -> tuple[tuple[int, ...], list] | None:
        """:meth:`placement_now` on the fast path."""
        times, rows = two.times, two.free
        row, tol = rows[0], two._tol
        n, b = job.nodes, job.bb
        if n > row[0] + tol[0] or b > row[1] + tol[1]:
            return None
        end = self.now + job.walltime
        if end > self._later:
            # (before the first hold after now, nodes and pooled BB only come free: the rows
            # from that hold's on decide, as Profile.fits tests them)
            t0, t1 = tol
            i, last = bisect_right(times, self._later) - 1, len(times)
            while True:
                row = rows[i]
                if row[0] + t0 < n or row[1] + t1 < b:
                    return None
                i += 1
                if i == last or times[i] >= end:
                    break
        if self.bb.chooses_nodes and not self.bb.placeable(job):
            return None
        nodes = self._choose(job, self.now)
        if nodes is None:
            return None
        got = self.bb.placement(job, nodes)
        if got is None:
            return None
        if self.floating and not self._leaves_floating_split(
                self.now, job.walltime, self._demand(job, got)):
            return None
        return nodes, got

    def _pieces_over_split(self, two: Profile, job: Job, start: float, pieces: bool = True
                           ) -> tuple[tuple[int, ...], tuple[float, ...] | None] | None:
        """:meth:`_pieces_over` on the fast path."""
        if not two.fits(start, job.walltime, (job.nodes, job.bb)):
            return None
        return self._placed_over(job, start, self._bb_at(start), pieces,
                                 self._leaves_floating_split)

    def _leaves_floating_split(self, start: float, walltime: float,
                               demand: Sequence[float]) -> bool:
        """:meth:`_leaves_floating` on the fast path: over a re-placeable reservation's
        interval the least free space is at its start, or where ``demand`` begins to be held
        less ``demand``, whichever is less."""
        end = start + walltime
        dk = demand[2:]
        for job, at in self.floating.values():
            until = at + job.walltime
            if job.bb <= 0 or until <= start or end <= at:
                continue
            if start <= at:
                low = [f - d for f, d in zip(self._bb_at(at), dk, strict=True)]
            else:
                low = [a if a < c - d else c - d for a, c, d in
                       zip(self._bb_at(at), self._bb_at(start), dk, strict=True)]
            if not self.bb.placeable(job, low):
                return False
        return True

"""The engine's long waiting queue, kept between decisions as blocks of consecutive jobs with
their summaries (least nodes, BB and walltime), so that the policies get an O(1) view
(:class:`bbopt.queue_view.QueueView`) and a pass over the queue can skip the blocks none of
whose jobs can pass its test (EASY's backfill on a large machine:
:func:`bbopt.policies.queue.backfill_blocks`).

Jobs are kept in submission rank (the engine's arrival order, which requeued jobs and refused
starts keep too). A start at the head only moves where the next view begins (``first``,
``skip``); an arrival is appended to the last block, after every view's jobs (the last block's
summary says nothing until it is full, as a view's summaries must stay lower bounds of its
jobs); any other start leaves its block
(found by bisection on the blocks' last ranks) in copies of the lists once a view holds them,
and neighbouring blocks merge once they fit in one. So a view never changes.
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from itertools import chain, islice

from bbopt.core import Job
from bbopt.queue_view import QUEUE_BLOCK, QueueView, block_summary

#: The summary of the last block while it fills up: no test skips it.
_OPEN = (0, -math.inf, -math.inf)


class BlockQueue:
    """The waiting jobs in blocks of at most :data:`~bbopt.core.QUEUE_BLOCK`, in rank order:
    ``blocks[first][skip:]``, then the later blocks."""

    __slots__ = ("blocks", "mins", "ranks", "lasts", "first", "skip", "n", "shared")

    def __init__(self, jobs: Iterable[tuple[int, Job]]) -> None:
        """The queue of ``(rank, job)`` pairs given in increasing rank."""
        self.blocks: list[list[Job]] = []  # (shared with views: only the last ever grows)
        self.mins: list[tuple[int, float, float]] = []  # (shared with views)
        self.ranks: list[list[int]] = []
        self.lasts: list[int] = []
        self.first = self.skip = 0
        self.shared = False
        pairs = list(jobs)
        for a in range(0, len(pairs), QUEUE_BLOCK):
            part = pairs[a:a + QUEUE_BLOCK]
            self.blocks.append([j for _, j in part])
            self.ranks.append([r for r, _ in part])
            self.lasts.append(part[-1][0])
            self.mins.append(block_summary(self.blocks[-1]) if len(part) == QUEUE_BLOCK
                             else _OPEN)
        self.n = len(pairs)

    def view(self) -> QueueView:
        """The policies' view of the queue now (it never changes afterwards)."""
        if self.first == len(self.blocks):
            return QueueView()
        self.shared = True
        return QueueView.of(self.blocks, self.mins, self.first, self.skip, self.n)

    def live(self) -> Iterator[tuple[Sequence[Job], tuple[int, float, float]]]:
        """``(jobs, summary)`` of the waiting jobs, block by block (what a view now shows)."""
        first, skip = self.first, self.skip
        rest = first + (skip > 0)
        later = zip(islice(self.blocks, rest, None), islice(self.mins, rest, None), strict=True)
        if not skip:
            return later
        return chain(((self.blocks[first][skip:], self.mins[first]),), later)

    def append(self, job: Job, rank: int) -> None:
        """Queue ``job``, whose rank is above every queued job's."""
        self.n += 1
        blocks = self.blocks
        c = len(blocks) - 1
        if c >= self.first:
            if len(blocks[c]) < QUEUE_BLOCK:
                blocks[c].append(job)  # (after the jobs of every view given: theirs stop before)
                self.ranks[c].append(rank)
                self.lasts[c] = rank
                if self.mins[c] is not _OPEN:  # (a block left last by starts after it)
                    self.mins[c] = _OPEN
                return
            if self.mins[c] is _OPEN:
                self.mins[c] = block_summary(blocks[c])
        blocks.append([job])
        self.ranks.append([rank])
        self.lasts.append(rank)
        self.mins.append(_OPEN)

    def remove(self, job: Job, rank: int) -> None:
        """Take the queued ``job`` of that ``rank`` out (it started)."""
        self.n -= 1
        first, skip = self.first, self.skip
        ranks = self.ranks[first]
        if ranks[skip] == rank:  # the head: the next view begins after it
            if skip + 1 < len(ranks):
                self.skip = skip + 1
                return
            self.first, self.skip = first + 1, 0
            if first >= 8:  # (let the started jobs go: views and passes skip `first` blocks)
                self._own()
            return
        if self.shared or first or skip:
            self._own()
        c = bisect_left(self.lasts, rank)
        ranks = self.ranks[c]
        i = ranks.index(rank)
        jobs = self.blocks[c]
        jobs = jobs[:i] + jobs[i + 1:]
        if not jobs:
            del self.blocks[c], self.ranks[c], self.lasts[c], self.mins[c]
            return
        ranks = ranks[:i] + ranks[i + 1:]
        n, b, w = self.mins[c]
        if job.nodes <= n or job.bb <= b or job.walltime <= w:  # (it may have been the least)
            if job.nodes <= n:
                n = min([j.nodes for j in jobs])
            if job.bb <= b:
                b = min([j.bb for j in jobs])
            if job.walltime <= w:
                w = min([j.walltime for j in jobs])
            self.mins[c] = (n, b, w)
        self.blocks[c] = jobs
        self.ranks[c] = ranks
        self.lasts[c] = ranks[-1]
        if c + 1 < len(self.blocks) and len(jobs) + len(self.blocks[c + 1]) <= QUEUE_BLOCK:
            self._merge(c)
        elif c > 0 and len(jobs) + len(self.blocks[c - 1]) <= QUEUE_BLOCK:
            self._merge(c - 1)

    def _merge(self, c: int) -> None:
        """Join blocks ``c`` and ``c + 1``."""
        n, b, w = self.mins[c]
        later = self.mins.pop(c + 1)
        n2, b2, w2 = later
        self.mins[c] = _OPEN if later is _OPEN else (min(n, n2), min(b, b2), min(w, w2))
        self.blocks[c] = self.blocks[c] + self.blocks.pop(c + 1)  # (new lists: views keep theirs)
        self.ranks[c] = self.ranks[c] + self.ranks.pop(c + 1)
        self.lasts[c] = self.lasts.pop(c + 1)

    def _own(self) -> None:
        """New lists of the waiting jobs alone (the views given keep the old ones), before a
        change in the middle."""
        first, skip = self.first, self.skip
        self.blocks = self.blocks[first:]
        self.mins = self.mins[first:]
        del self.ranks[:first], self.lasts[:first]
        if skip:  # (the head block's summary stays: a lower bound of the jobs left)
            self.blocks[0] = self.blocks[0][skip:]
            self.ranks[0] = self.ranks[0][skip:]
        self.first = self.skip = 0
        self.shared = False

"""The engine's long waiting queue, kept between decisions as blocks of consecutive jobs with
their summaries (least nodes, BB and walltime), so that the policies get an O(1) view
(:class:`bbopt.core.QueueView`) and a pass over the queue can skip the blocks none of whose jobs
can pass its test (EASY's backfill at a large machine: :func:`bbopt.policies.queue.backfill`).

Jobs are kept in submission rank (the engine's arrival order, which requeued jobs and refused
starts keep too): an arrival goes to the last block, a start leaves its block (found by
bisection on the blocks' last ranks) and neighbouring blocks merge once they fit in one.
Once a view was handed out, the next change first copies the lists (a view never changes).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable

from bbopt.core import QUEUE_BLOCK, Job, QueueView, block_summary


class BlockQueue:
    """The waiting jobs in blocks of at most :data:`~bbopt.core.QUEUE_BLOCK`, in rank order."""

    __slots__ = ("blocks", "ranks", "lasts", "mins", "n", "shared")

    def __init__(self, jobs: Iterable[tuple[int, Job]]) -> None:
        """The queue of ``(rank, job)`` pairs given in increasing rank."""
        self.blocks: list[tuple[Job, ...]] = []
        self.ranks: list[tuple[int, ...]] = []
        self.lasts: list[int] = []
        self.mins: list[tuple[int, float, float]] = []
        self.n = 0
        self.shared = False
        pairs = list(jobs)
        for a in range(0, len(pairs), QUEUE_BLOCK):
            part = pairs[a:a + QUEUE_BLOCK]
            ranks = tuple([r for r, _ in part])
            self._add_block(len(self.blocks), tuple([j for _, j in part]), ranks)
        self.n = len(pairs)

    def view(self) -> QueueView:
        """The policies' view of the queue now (it never changes afterwards)."""
        self.shared = True
        return QueueView.of(self.blocks, self.mins, self.n)

    def append(self, job: Job, rank: int) -> None:
        """Queue ``job``, whose rank is above every queued job's."""
        if self.shared:
            self._own()
        self.n += 1
        c = len(self.blocks) - 1
        if c < 0 or len(self.blocks[c]) >= QUEUE_BLOCK:
            self._add_block(c + 1, (job,), (rank,))
            return
        self.blocks[c] += (job,)
        self.ranks[c] += (rank,)
        self.lasts[c] = rank
        n, b, w = self.mins[c]
        self.mins[c] = (min(n, job.nodes), min(b, job.bb), min(w, job.walltime))

    def remove(self, job: Job, rank: int) -> None:
        """Take the queued ``job`` of that ``rank`` out (it started)."""
        if self.shared:
            self._own()
        self.n -= 1
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
        n2, b2, w2 = self.mins.pop(c + 1)
        self.mins[c] = (min(n, n2), min(b, b2), min(w, w2))
        self.blocks[c] += self.blocks.pop(c + 1)
        self.ranks[c] += self.ranks.pop(c + 1)
        self.lasts[c] = self.lasts.pop(c + 1)

    def _add_block(self, c: int, jobs: tuple[Job, ...], ranks: tuple[int, ...]) -> None:
        """Insert a new block at index ``c``."""
        self.blocks.insert(c, jobs)
        self.ranks.insert(c, ranks)
        self.lasts.insert(c, ranks[-1])
        self.mins.insert(c, block_summary(jobs))

    def _own(self) -> None:
        """Copy the lists a view was given before changing them."""
        self.blocks = self.blocks.copy()
        self.ranks = self.ranks.copy()
        self.lasts = self.lasts.copy()
        self.mins = self.mins.copy()
        self.shared = False

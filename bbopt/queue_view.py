"""The waiting queue as the engine hands a long one to the policies: a read-only sequence of
blocks of consecutive jobs, each with the least nodes, BB and walltime of its jobs, so that a
pass over the queue can skip a block none of whose jobs can pass its test (EASY's backfill on a
large machine, :func:`bbopt.policies.queue.backfill_blocks`; the engine keeps the blocks between
decisions: :mod:`bbopt.simulation.queue_blocks`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain, islice
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bbopt.core import Job

_new_object = object.__new__

#: Jobs per block of a :class:`QueueView` (fewer once jobs left a block; see ``blocks_from``).
QUEUE_BLOCK = 16


def block_summary(jobs: Sequence[Job]) -> tuple[int, float, float]:
    """``(least nodes, least BB, least walltime)`` of a non-empty block of waiting jobs: what
    lets a pass over a long queue skip a block none of whose jobs can pass its test."""
    return (min([j.nodes for j in jobs]), min([j.bb for j in jobs]),
            min([j.walltime for j in jobs]))


def _blocks_between(blocks: list[Sequence[Job]], mins: list[tuple[int, float, float]],
                    c: int, lo: int, last: int,
                    stop: int) -> Iterator[tuple[Sequence[Job], tuple[int, float, float]]]:
    """``(jobs, summary)`` from job ``lo`` of ``blocks[c]`` to job ``stop`` (excluded) of
    ``blocks[last]``, block by block: :meth:`QueueView.blocks_from`."""
    while c < last and lo >= len(blocks[c]):  # (the block of position lo: usually the first)
        lo -= len(blocks[c])
        c += 1
    if c == last:
        return iter(((blocks[c][lo:stop], mins[c]),) if lo < stop else ())
    jobs, end = blocks[c], blocks[last]
    return chain(((jobs[lo:] if lo else jobs, mins[c]),),
                 zip(islice(blocks, c + 1, last), islice(mins, c + 1, last), strict=True),
                 ((end if stop == len(end) else end[:stop], mins[last]),))


class QueueView(Sequence):
    """The waiting queue as the engine hands it when it is long (a short one comes as a tuple:
    :data:`bbopt.simulation.engine.SHORT_QUEUE`), read only: consecutive blocks of jobs (tuples),
    each with a :func:`block_summary` of a superset of its jobs (the least of each is then a
    lower bound). The view shows ``n`` jobs, from job ``skip`` of block ``first`` to job
    ``stop`` (excluded) of block ``last``. The engine
    never changes what a view shows: starts from the head move ``first``/``skip`` for the next
    view, arrivals go after the view's jobs, other changes go to copies of the lists. So a view
    costs O(1) per decision, and one kept beyond its decision never changes. Compares equal to
    the tuple of its jobs."""

    __slots__ = ("_blocks", "_mins", "_first", "_skip", "_last", "_stop", "_n", "_flat")

    def __init__(self, items: Sequence[Job] = (), lo: int = 0, hi: int | None = None) -> None:
        jobs = tuple(items[lo:hi])
        blocks = [jobs[a:a + QUEUE_BLOCK] for a in range(0, len(jobs), QUEUE_BLOCK)]
        self._blocks = blocks
        self._mins = [block_summary(b) for b in blocks]
        self._first = self._skip = 0
        self._last = max(len(blocks) - 1, 0)
        self._stop = len(blocks[-1]) if blocks else 0
        self._n = len(jobs)
        self._flat = jobs

    @staticmethod
    def of(blocks: list[Sequence[Job]], mins: list[tuple[int, float, float]], first: int,
           skip: int, n: int) -> QueueView:
        """The view of the ``n`` jobs from job ``skip`` of ``blocks[first]`` to the end of the
        last block, ``mins`` their blocks' summaries, without the constructor's work (the
        engine's view at every decision)."""
        view = _new_object(QueueView)
        view._blocks = blocks
        view._mins = mins
        view._first = first
        view._skip = skip
        view._last = len(blocks) - 1
        view._stop = len(blocks[-1])
        view._n = n
        view._flat = None
        return view

    def blocks_from(self, i: int) -> Iterator[tuple[Sequence[Job], tuple[int, float, float]]]:
        """``(jobs, summary)`` of the view's blocks from its position ``i`` on, in queue order;
        the first and the last may hold part of a block only, with the whole block's summary
        (still a lower bound of each of their jobs)."""
        if i >= self._n:
            return iter(())
        return _blocks_between(self._blocks, self._mins, self._first, self._skip + i,
                               self._last, self._stop)

    def _items(self) -> tuple[Job, ...]:
        """All the jobs as one tuple (built once per view, when first needed)."""
        if self._flat is None:
            self._flat = tuple(self)
        return self._flat

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[Job]:
        blocks, first, skip = self._blocks, self._first, self._skip
        if not self._n:
            return iter(())
        later = chain.from_iterable(islice(blocks, first + 1, None))
        if skip:
            return islice(chain(islice(blocks[first], skip, None), later), self._n)
        return islice(chain(blocks[first], later), self._n)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self._items()[i]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("queue index out of range")
        first = self._blocks[self._first]
        i += self._skip
        return first[i] if i < len(first) else self._items()[i - self._skip]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, QueueView | tuple):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"QueueView({tuple(self)!r})"

"""The node, BB and walltime requests of a run's jobs as numpy columns, so that EASY's
backfill pass over a long queue visits only the jobs that could start (Kopanski & Rzadca,
Euro-Par 2021, Algorithm 1: a backfilled job must fit now and, if it would still run at the
head's shadow time, fit what the head's reservation leaves there).

The engine builds one :class:`JobColumns` per run (when a queue first gets long) and hands it,
with the job indices of its queue list, to the :class:`~bbopt.core.QueueView` of a long queue;
:meth:`bbopt.core.QueueView.backfill_candidates` answers from them with one vectorised mask.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bbopt.core import Job


class JobColumns:
    """Every job's nodes, BB and walltime by job index (the engine's ``k``), read only."""

    __slots__ = ("nodes", "bb", "walltime")

    def __init__(self, jobs: Sequence[Job]) -> None:
        self.nodes = np.array([j.nodes for j in jobs], dtype=np.int64)
        self.bb = np.array([j.bb for j in jobs], dtype=np.float64)
        self.walltime = np.array([j.walltime for j in jobs], dtype=np.float64)

    def candidates(self, keys: Sequence[int], lo: int, hi: int, now: float, free_n: float,
                   fit_b: float, shadow: float, extra_n: float, extra_fit_b: float) -> list[int]:
        """Positions ``p`` in ``lo <= p < hi`` of the queue list whose job indices are
        ``keys``, in order, where the job needs at most ``free_n`` nodes and ``fit_b`` BB and,
        if ``now`` plus its walltime passes ``shadow``, at most ``extra_n`` nodes and
        ``extra_fit_b`` BB: the same float comparisons as the backfill loop, so the jobs left
        out are exactly those that pass would skip with these (only shrinking) bounds."""
        ks = np.array(keys[lo:hi], dtype=np.intp)
        nodes = self.nodes[ks]
        bb = self.bb[ks]
        keep = (nodes <= free_n) & (bb <= fit_b)
        late = (now + self.walltime[ks]) > shadow
        keep &= ~late | ((nodes <= extra_n) & (bb <= extra_fit_b))
        return (np.flatnonzero(keep) + lo).tolist()

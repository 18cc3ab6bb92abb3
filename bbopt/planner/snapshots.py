"""The planner's snapshots: what a search over job orders (the plan models' exhaustive search
and annealing on the planner, Kopanski & Rzadca, Euro-Par 2021, Section 3.3) saves before
trying an order and restores after (:class:`bbopt.planner.plan.Planner`, whose state these
methods copy: its profile, BB nodes now, free node ids, holds and the nodes they name).
"""

from __future__ import annotations


class Snapshots:
    """The snapshot part of :class:`~bbopt.planner.plan.Planner` (its state, its slots)."""

    __slots__ = ()

    def snapshot(self) -> tuple:
        """What :meth:`rollback` restores: a copy of the profile, the BB nodes now, the free
        node ids and the holds (re-placeable ones and the nodes they name too)."""
        free_nodes = list(self.free_nodes)  # (first: names the started jobs' nodes)
        return (self.profile.copy(), self.bb.snapshot(), free_nodes, dict(self.holds),
                dict(self.floating), dict(self.started), dict(self.named),
                self.links and self.links.snapshot())

    def rollback(self, snap: tuple) -> None:
        """Back to the state of :meth:`snapshot` ``snap`` (which stays usable)."""
        profile, bb, free_nodes, holds, floating, started, named, links = snap
        if links:
            self.links.rollback(links)
        self.named = dict(named)
        self._ids.clear()
        self._ids_n.clear()
        self.started = dict(started)
        self.profile = profile.copy()
        self.bb.restore(bb)
        self.free_nodes = list(free_nodes)
        self.holds = dict(holds)
        self.floating = dict(floating)

"""Whom to preempt: the victim-choice model of memoryless fair share (Zvi & Oren, OMFS,
Algorithm 1 lines 34-39, stated as an optimisation problem).

An entity within its entitlement needs ``need_nodes`` nodes and ``need_bb`` bytes of burst buffer
more than are idle (its job's deficit). The candidates are the running jobs that may be evicted:
preemptable, past their quantum, not already being evicted, of entities holding more than their
entitlement. Choose a set ``x`` of victims such that

- the freed nodes and BB cover the deficit: ``sum nodes_i x_i >= need_nodes``,
  ``sum bb_i x_i >= need_bb``;
- no victim entity drops below its own entitlement: for each entity ``e``,
  ``sum_{i in e} nodes_i x_i <= slack_e`` (``slack_e`` = nodes it holds beyond its entitlement);

and the cost is minimal: ``sum cost_i x_i + penalty * |x|``, where ``cost_i`` is the node-time the
eviction wastes: ``nodes * (checkpoint + restart time)`` for a checkpointable job, ``nodes * work
since its start`` (lost work) for one that is killed. Algorithm 1's own rule is the ``greedy``
answer: walk the candidates least prioritised first (``order``) and take each that keeps its entity
within its slack until the deficit is covered. The model imports no solver; backends live in
:mod:`bbopt.solvers.preemption`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bbopt.core import REL_TOL


@dataclass(frozen=True)
class PreemptionModel:
    """Victim choice for one waiting job (see the module docstring).

    ``ids``, ``nodes``, ``bb``, ``cost``, ``entity`` (an index into ``slack``) describe the
    candidates; ``order`` lists candidate indices least prioritised first (Algorithm 1's running
    queue); ``penalty`` is added per eviction.
    """

    ids: tuple[str, ...]
    nodes: np.ndarray
    bb: np.ndarray
    cost: np.ndarray
    entity: np.ndarray
    slack: np.ndarray
    need_nodes: int
    need_bb: float
    order: tuple[int, ...]
    penalty: float = 0.0
    bb_capacity: float = 0.0
    #: The looser reading of Algorithm 1 (greedy only): a victim's entity must hold more than
    #: its entitlement *before* each eviction, so it may end below it by less than one job.
    over_only: bool = False

    @classmethod
    def build(cls, ids: Sequence[str], nodes: Sequence[int], bb: Sequence[float],
              cost: Sequence[float], entities: Sequence[str], slack: dict[str, int],
              need_nodes: int, need_bb: float, order: Sequence[int] | None = None,
              penalty: float = 0.0, bb_capacity: float = 0.0) -> PreemptionModel:
        names = sorted(set(entities))
        pos = {e: i for i, e in enumerate(names)}
        return cls(tuple(ids), np.asarray(nodes, dtype=np.int64), np.asarray(bb, dtype=float),
                   np.asarray(cost, dtype=float),
                   np.asarray([pos[e] for e in entities], dtype=np.int64),
                   np.asarray([int(slack.get(e, 0)) for e in names], dtype=np.int64),
                   int(max(need_nodes, 0)), float(max(need_bb, 0.0)),
                   tuple(range(len(ids)) if order is None else order), float(penalty),
                   float(bb_capacity))

    @property
    def size(self) -> int:
        return len(self.ids)

    @property
    def bb_tol(self) -> float:
        return self.bb_capacity * REL_TOL

    def feasible(self, x: Sequence[bool] | np.ndarray) -> bool:
        x = np.asarray(x, dtype=bool)
        if int(self.nodes[x].sum()) < self.need_nodes:
            return False
        if float(self.bb[x].sum()) + self.bb_tol < self.need_bb:
            return False
        per = np.bincount(self.entity[x], weights=self.nodes[x], minlength=len(self.slack))
        if self.over_only:  # without its largest victim, each entity is still over
            big = np.zeros(len(self.slack))
            np.maximum.at(big, self.entity[x], self.nodes[x])
            return bool(np.all(per - big < self.slack) or not x.any())
        return bool(np.all(per <= self.slack))

    def evaluate(self, x: Sequence[bool] | np.ndarray | None) -> float:
        """The cost of victim set ``x`` (``inf`` when it is infeasible or missing)."""
        if x is None:
            return float("inf")
        x = np.asarray(x, dtype=bool)
        if not self.feasible(x):
            return float("inf")
        return float(self.cost[x].sum() + self.penalty * x.sum())

    def surely_infeasible(self) -> bool:
        """A quick necessary test: even taking, per entity, as many candidate nodes as its
        slack allows (and every candidate's BB) does not cover the deficit."""
        per = np.bincount(self.entity, weights=self.nodes, minlength=len(self.slack))
        if not self.over_only and float(np.minimum(per, self.slack).sum()) < self.need_nodes:
            return True
        return float(self.bb.sum()) + self.bb_tol < self.need_bb

    def greedy(self) -> np.ndarray | None:
        """Algorithm 1's rule: least prioritised first, each victim kept within its entity's
        slack, until the deficit is covered; ``None`` when the candidates cannot cover it."""
        x = np.zeros(self.size, dtype=bool)
        left = self.slack.copy()
        got_n, got_b = 0, 0.0
        for i in self.order:
            if got_n >= self.need_nodes and got_b + self.bb_tol >= self.need_bb:
                break
            e = self.entity[i]
            if (left[e] <= 0) if self.over_only else (self.nodes[i] > left[e]):
                continue
            x[i] = True
            left[e] -= self.nodes[i]
            got_n += int(self.nodes[i])
            got_b += float(self.bb[i])
        if got_n >= self.need_nodes and got_b + self.bb_tol >= self.need_bb:
            return x
        return None

    def fallback(self) -> np.ndarray | None:
        """The contract's fast feasible answer: the greedy victims (``None``: no victims)."""
        return self.greedy()

    def victims(self, x: Sequence[bool] | np.ndarray | None) -> list[str]:
        """The candidate ids chosen by ``x``, least prioritised first."""
        if x is None:
            return []
        x = np.asarray(x, dtype=bool)
        return [self.ids[i] for i in self.order if x[i]]

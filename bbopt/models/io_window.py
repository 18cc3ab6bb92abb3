"""Window selection with placement under per-subtree bandwidth: choose AND place jobs.

Beyond Herbein et al. (HPDC 2016, Section 3.4), who place the jobs of the queue one by one with
a greedy rule, and Fan et al. (BBSched, HPDC 2019, Section 3.2.1), who select a window of jobs
under node and burst-buffer (BB) capacities only: here the window's jobs are selected and placed
jointly on the I/O tree.

Free compute nodes fall into **groups**: the free nodes under the same lowest switch (their
parent vertex) with the same free node-link bandwidth. Nodes of one group are interchangeable for
bandwidth, so a placement is a matrix of counts. Variables, for window job ``j`` (``n_j`` nodes,
``b_j`` bytes/s per node) and group ``g`` (``c_g`` free nodes):

- ``x_j in {0, 1}``: job ``j`` starts now (the selection of
  :class:`~bbopt.models.window.WindowModel`);
- ``y_{j,g} in {0..min(n_j, c_g)}``: nodes of job ``j`` placed in group ``g`` (0 if ``b_j``
  exceeds the group's node links).

Constraints: ``sum_g y_{j,g} = n_j x_j``; ``sum_j y_{j,g} <= c_g``; for every vertex ``v`` above
the groups with finite remaining bandwidth ``a_v`` (capacity minus what running jobs take):
``sum_j b_j sum_{g under v} y_{j,g} <= a_v``; and the window model's rows (free nodes, free BB,
forced jobs). Rows that can never bind (every free node under ``v`` at the largest request still
fits) are left out. Objectives are the window model's (``nodes``, ``bb``, ``order``), functions of
``x`` only: the placement is a witness of feasibility.

A candidate solution is the count matrix ``y`` (``w x G`` ints); ``x = y.sum(1) > 0``.
:meth:`IOWindowModel.evaluate` scores it with the window model, :meth:`IOWindowModel.feasible`
checks every row in exact bytes/s, :meth:`IOWindowModel.placement` maps counts to concrete free
node ids, and :meth:`IOWindowModel.fallback` is Herbein's greedy, job by job in window order
(forced jobs first), each job's nodes taken group by group in node-index order while every
ancestor has its bandwidth left.

Integer form (:meth:`IOWindowModel.integer_bandwidth`): bandwidth in an integer unit, requests
rounded up and capacities down, so a placement feasible in units is feasible in bytes/s.
Bandwidth sums are compared with the core tolerance :data:`bbopt.core.REL_TOL` of the bandwidth
left on the vertex; BB with the window model's fit rule.
The model is data plus evaluation; it imports no solver.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from bbopt.core import REL_TOL, Job
from bbopt.errors import InputError
from bbopt.models.window import WindowModel, integer_unit


@dataclass(frozen=True)
class IOWindowModel:
    """Select and place a window of jobs on the groups of free nodes (see the module docstring).

    ``window``: the selection part (nodes, BB, objectives, order, forced). ``bandwidth``: bytes/s
    per node of each job. ``group_nodes``: the free node ids of each group, in index order.
    ``group_link``: free bandwidth of each group's node links (``inf``: unlimited).
    ``vertices``/``vertex_avail``/``membership``: the tree vertices kept as rows, their remaining
    bandwidth and which groups lie under each (``R x G`` bool).
    """

    window: WindowModel
    bandwidth: np.ndarray
    group_nodes: tuple[np.ndarray, ...]
    group_link: np.ndarray
    vertices: np.ndarray
    vertex_avail: np.ndarray
    membership: np.ndarray
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        w, G = self.window.size, len(self.group_nodes)
        set_(self, "bandwidth", np.asarray(self.bandwidth, dtype=float))
        set_(self, "group_nodes", tuple(np.asarray(g, dtype=np.int64) for g in self.group_nodes))
        set_(self, "group_link", np.asarray(self.group_link, dtype=float))
        set_(self, "vertices", np.asarray(self.vertices, dtype=np.int64))
        set_(self, "vertex_avail", np.asarray(self.vertex_avail, dtype=float))
        member = np.asarray(self.membership, dtype=bool)
        if member.size == len(self.vertices) * G:  # (else refused below, naming the field)
            member = member.reshape(len(self.vertices), G)
        set_(self, "membership", member)
        if self.bandwidth.shape != (w,) or np.any(self.bandwidth < 0):
            raise InputError("bandwidth needs one entry >= 0 per window job", field="bandwidth")
        if self.group_link.shape != (G,):
            raise InputError("group_link needs one entry per group", field="group_link")
        if self.membership.shape != (len(self.vertices), G) or \
                self.vertex_avail.shape != (len(self.vertices),):
            raise InputError("membership/vertex_avail must have one row per vertex",
                             field="membership")
        if sum(len(g) for g in self.group_nodes) != self.window.free_nodes:
            raise InputError("the groups must hold exactly the free nodes", field="group_nodes")

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def from_tree(cls, jobs: Sequence[Job], tree, avail: np.ndarray, free: np.ndarray,
                  free_bb: float, *, total_nodes: int | None = None,
                  total_bb: float | None = None, objectives: Sequence[str] = ("nodes", "bb"),
                  order: Sequence[int] | None = None,
                  forced: Sequence[bool] | None = None) -> IOWindowModel:
        """The model of ``jobs`` (window, queue order) on ``tree`` (an
        :class:`~bbopt.topology.IOTree`) with free bandwidth ``avail`` per vertex and the
        free-node mask ``free`` (as :meth:`~bbopt.topology.IOTree.state_of` returns them)."""
        free = np.asarray(free, dtype=bool)
        ids = np.flatnonzero(free)
        verts = tree.node_vertex[ids]
        parents = tree.parent[verts]
        links = np.asarray(avail, dtype=float)[verts]
        keys: dict[tuple[int, float], list[int]] = {}
        for node, p, lk in zip(ids.tolist(), parents.tolist(), links.tolist(), strict=True):
            keys.setdefault((int(p), float(lk)), []).append(int(node))
        groups = list(keys.items())  # first-seen order = node-index order of the first node
        group_nodes = tuple(np.asarray(v, dtype=np.int64) for _, v in groups)
        group_link = np.array([lk for (_, lk), _ in groups], dtype=float)
        G = len(groups)
        bw = np.array([j.bandwidth for j in jobs], dtype=float)
        bmax = float(bw.max(initial=0.0))
        # Vertices above the groups (the group parents and their ancestors).
        under: dict[int, list[int]] = {}
        for g, ((p, _), _) in enumerate(groups):
            u = p
            while u >= 0:
                under.setdefault(u, []).append(g)
                u = int(tree.parent[u])
        sizes = np.array([len(v) for v in group_nodes], dtype=np.int64)
        rows, av, member = [], [], []
        for v in sorted(under):
            a = float(avail[v])
            if not math.isfinite(a):
                continue
            gs = under[v]
            if bmax <= 0 or sizes[gs].sum() * bmax <= a * (1 + REL_TOL):
                continue  # can never bind
            m = np.zeros(G, dtype=bool)
            m[gs] = True
            rows.append(v)
            av.append(max(a, 0.0))
            member.append(m)
        window = WindowModel.from_jobs(jobs, int(ids.size), max(float(free_bb), 0.0),
                                       total_nodes=total_nodes, total_bb=total_bb,
                                       objectives=objectives, order=order, forced=forced)
        return cls(window=window, bandwidth=bw, group_nodes=group_nodes, group_link=group_link,
                   vertices=np.array(rows, dtype=np.int64), vertex_avail=np.array(av, dtype=float),
                   membership=np.array(member, dtype=bool).reshape(len(rows), G))

    # --- structure ----------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The window size ``w``."""
        return self.window.size

    @property
    def groups(self) -> int:
        """The number of groups ``G``."""
        return len(self.group_nodes)

    @property
    def objectives(self) -> tuple[str, ...]:
        return self.window.objectives

    def group_size(self) -> np.ndarray:
        """Free nodes per group (``c_g``)."""
        return np.array([len(g) for g in self.group_nodes], dtype=np.int64)

    def admissible(self) -> np.ndarray:
        """``w x G`` bool: job ``j`` may use nodes of group ``g`` (its node links suffice)."""
        link = self.group_link
        return self.bandwidth[:, None] <= link[None, :] * (1 + REL_TOL)

    def upper(self) -> np.ndarray:
        """``w x G`` int: upper bound of each ``y_{j,g}``."""
        hi = np.minimum(self.window.nodes[:, None], self.group_size()[None, :])
        return np.where(self.admissible(), hi, 0).astype(np.int64)

    def integer_bandwidth(self) -> tuple[np.ndarray, np.ndarray, float]:
        """Per-node requests (rounded up) and vertex capacities (rounded down) in an integer
        unit, and the unit in bytes/s."""
        if "bw" not in self._cache:
            top = max(float(self.vertex_avail.max(initial=0.0)),
                      float(self.bandwidth.max(initial=0.0)), 1.0)
            unit = integer_unit(top, target=1e6, minimum=1.0)
            req = np.ceil(self.bandwidth / unit - 1e-9).astype(np.int64)
            cap = np.floor(self.vertex_avail / unit + 1e-9).astype(np.int64)
            self._cache["bw"] = (req, cap, unit)
        return self._cache["bw"]

    # --- evaluation ---------------------------------------------------------------------------

    def _as_counts(self, y) -> np.ndarray:
        y = np.asarray(y)
        if y.shape != (self.size, self.groups):
            raise InputError(f"a placement must be a {self.size} x {self.groups} count matrix, "
                             f"got shape {y.shape}")
        return y.astype(np.int64)

    def selection(self, y) -> np.ndarray:
        """The selection ``x`` (bool, length ``w``) of a count matrix."""
        return self._as_counts(y).sum(axis=1) > 0

    def violations(self, y) -> list[str]:
        """Every row ``y`` breaks (empty: feasible), in exact bytes/s."""
        y = self._as_counts(y)
        out = []
        if np.any(y < 0):
            out.append("negative counts")
        x = y.sum(axis=1) > 0
        bad = np.flatnonzero(x & (y.sum(axis=1) != self.window.nodes))
        if bad.size:
            out.append(f"jobs {bad.tolist()} get a wrong number of nodes")
        if np.any((y > 0) & ~self.admissible()):
            out.append("a job uses node links slower than its bandwidth")
        over = np.flatnonzero(y.sum(axis=0) > self.group_size())
        if over.size:
            out.append(f"groups {over.tolist()} over-filled")
        if len(self.vertices):
            load = self.membership.astype(float) @ (y.T.astype(float) @ self.bandwidth)
            tol = self.vertex_avail * REL_TOL + 1e-6
            hot = np.flatnonzero(load > self.vertex_avail + tol)
            if hot.size:
                out.append(f"vertices {self.vertices[hot].tolist()} over-allocated")
        if not self.window.feasible(x):
            out.append("the window's node, BB or forced rows are broken")
        return out

    def feasible(self, y) -> bool:
        return not self.violations(y)

    def evaluate(self, y) -> tuple[float, ...]:
        """Objective values (the window model's, maximised) of a placement."""
        return self.window.evaluate(self.selection(y))

    def placement(self, y) -> dict[int, tuple[int, ...]]:
        """Concrete free node ids for each selected job (window index -> ids): every group
        hands out its nodes in index order, to jobs in window order."""
        y = self._as_counts(y)
        nxt = np.zeros(self.groups, dtype=np.int64)
        out: dict[int, tuple[int, ...]] = {}
        for j in np.flatnonzero(y.sum(axis=1) > 0):
            ids: list[int] = []
            for g in np.flatnonzero(y[j]):
                k = int(y[j, g])
                ids.extend(self.group_nodes[g][nxt[g]:nxt[g] + k].tolist())
                nxt[g] += k
            out[int(j)] = tuple(sorted(ids))
        return out

    # --- fast feasible answers ----------------------------------------------------------------

    def place_one(self, j: int, left: np.ndarray, avail: np.ndarray) -> np.ndarray | None:
        """Herbein's greedy for window job ``j`` given free counts ``left`` and free vertex
        bandwidth ``avail`` (one entry per kept vertex): groups in node-index order, each taking
        as many nodes as it and every vertex above it still allow. ``None`` if ``n_j`` nodes
        cannot be found (nothing is taken then)."""
        need = int(self.window.nodes[j])
        b = float(self.bandwidth[j])
        ok = self.admissible()[j]
        row = np.zeros(self.groups, dtype=np.int64)
        av = avail.copy()
        for g in range(self.groups):
            if need == 0:
                break
            if not ok[g] or left[g] == 0:
                continue
            t = min(need, int(left[g]))
            if b > 0 and len(self.vertices):
                rows = self.membership[:, g]
                if rows.any():
                    room = np.floor((av[rows] + self.vertex_avail[rows] * REL_TOL) / b)
                    t = min(t, int(max(room.min(), 0)))
            if t <= 0:
                continue
            row[g] = t
            need -= t
            if b > 0 and len(self.vertices):
                av[self.membership[:, g]] -= t * b
        return row if need == 0 else None

    def greedy(self, rule: str = "first-fit") -> np.ndarray:
        """A feasible placement, job by job (forced jobs first, then window order), each placed
        by :meth:`place_one`. ``"first-fit"`` skips jobs that do not fit, ``"in-order"`` stops
        at the first (Herbein's I/O-aware FCFS)."""
        if rule not in ("first-fit", "in-order"):
            raise InputError(f"unknown greedy rule {rule!r}", field="rule")
        w = self.size
        y = np.zeros((w, self.groups), dtype=np.int64)
        left = self.group_size()
        avail = self.vertex_avail.copy()
        free_b = self.window.bb_room
        order = list(np.flatnonzero(self.window.forced)) + \
            [j for j in range(w) if not self.window.forced[j]]
        for j in order:
            fits = self.window.bb[j] <= free_b and self.window.nodes[j] <= left.sum()
            row = self.place_one(j, left, avail) if fits else None
            if row is None:
                if rule == "in-order" and not self.window.forced[j]:
                    break
                continue
            y[j] = row
            left = left - row
            if len(self.vertices):
                avail = avail - self.membership.astype(float) @ (row * self.bandwidth[j])
            free_b -= self.window.bb[j]
        return y

    def fallback(self) -> np.ndarray:
        """The solver contract's fast feasible answer: :meth:`greedy` first fit."""
        return self.greedy("first-fit")

"""Window selection as a formal model: which jobs of the queue's front window start now.

Length: the model, its SSD-placement extension and the objectives table that reads its integer
form are one specification (Sections 3.2.1 and 5) and change together.

Fan et al., "Scheduling Beyond CPUs for HPC" (BBSched, HPDC 2019), Section 3.2.1 and Section 5.
At a scheduling point the first ``w`` eligible jobs of the queue form the window. A selection is a
binary vector ``x`` of length ``w``; it is feasible when

    sum n_i x_i <= free nodes,       sum b_i x_i <= free burst buffer,

and, with the local-SSD extension (Section 5), when the selected jobs can be placed on free nodes
whose SSD is at least their per-node request. Objectives, all maximised, by name:

- ``"nodes"``: node utilisation ``sum n_i x_i`` (f1);
- ``"bb"``: burst-buffer utilisation ``sum b_i x_i`` in bytes (f2);
- ``"order"``: keeping the queue order, ``sum o_i x_i`` with an integer weight per job (by default
  ``w - i``: the front of the window weighs most). The paper's decision maker uses the order only
  to break ties; as an objective it conflicts with the utilisations, so Pareto sets carry a real
  trade-off (the two utilisations are the capacity rows themselves and rarely conflict);
- ``"ssd"``: local SSD utilisation ``sum s_i n_i x_i`` in bytes (f3);
- ``"ssd_waste"``: minus the wasted SSD, ``-(capacity of the assigned nodes - sum s_i n_i x_i)``
  under the best placement (f4);
- ``"bandwidth"``: the PFS bandwidth the started jobs draw, ``sum beta_i n_i x_i`` in bytes/s
  (``Job.bandwidth`` per node); 100 % is the whole window's demand, so its utilisation is the
  share of the window's I/O demand started now (for the select-and-place window of Herbein et
  al., HPDC 2016, on the I/O tree).

Each is one entry of the :data:`OBJECTIVES` table (coefficients, integer coefficients, scale,
unit, whether linear), which the solvers and policies read instead of branching on names;
adding an objective is one entry there.

SSD placement. Free nodes come in SSD *levels* ``L_1 < ... < L_k`` with ``c_j`` free nodes each.
A job asking ``s_i`` per node may use any node of a level ``>= s_i``: the admissible sets are
nested, so by Hall's theorem a selection can be placed iff, for every level ``j``, the nodes
asked by selected jobs that need level ``j`` or higher do not exceed the free nodes of level
``j`` or higher (``D_j(x) <= sum_{l >= j} c_l``), which are ``k`` linear rows. The placement that
wastes least gives every job the smallest admissible nodes; the number of assigned nodes at level
``>= j`` is then ``A_1 = D_1``, ``A_j = max(D_j, A_{j-1} - c_{j-1})``, and the assigned capacity is
``sum_j L_j (A_j - A_{j+1})``. :meth:`WindowModel.placement` returns node indices for it.

Integer form. CP-SAT and the exact MILP forms need integer coefficients:
:meth:`WindowModel.integer_form` scales bytes to an integer unit (a power of ten, at least 1 MB,
chosen so that the free burst buffer is at most about a million units), rounding requests **up**
and capacities **down**, so that a selection feasible in integer units is truly feasible in
bytes. Objective values reported by every backend come from :meth:`WindowModel.evaluate` in exact
bytes. On data given in whole units (e.g. whole GB) the two forms agree exactly.

The model is data (numpy arrays) and can evaluate any ``x`` (or a matrix of them, one per row);
it imports no solver. BB capacity is tested with the core fit rule (:attr:`WindowModel.bb_room`).

Over 450 lines: the objectives table, the SSD placement rows and the greedy rules are one model.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from bbopt.core import MB, Job, slack
from bbopt.errors import InputError


def integer_unit(capacity: float, target: float = 1e6, minimum: float = MB) -> float:
    """The smallest power of ten >= ``minimum`` bytes that keeps ``capacity`` within ``target``
    units."""
    unit = minimum
    while capacity / unit > target:
        unit *= 10.0
    return unit


@dataclass(frozen=True)
class IntegerForm:
    """The model in integer units (requests rounded up, capacities down); see the module doc."""

    nodes: np.ndarray  # int64 (w,)
    bb: np.ndarray  # int64 (w,), in units of bb_unit
    free_nodes: int
    free_bb: int
    bb_unit: float
    order: np.ndarray  # int64 (w,)
    ssd: np.ndarray  # int64 (w,) per node, in ssd_unit
    ssd_unit: float
    level: np.ndarray  # int64 (w,): lowest admissible SSD level of each job (-1: no placement)
    level_size: np.ndarray  # int64 (k,): level capacities L_j in ssd_unit (rounded down)
    level_count: np.ndarray  # int64 (k,): free nodes per level
    allowed: np.ndarray  # bool (w,): jobs that can be selected at all
    forced: np.ndarray  # bool (w,)

    def level_demand(self) -> np.ndarray:
        """``(k, w)`` int matrix: row ``j`` holds ``n_i`` for jobs that need level ``>= j``."""
        k = len(self.level_size)
        rows = np.arange(k)[:, None]
        return np.where((self.level[None, :] >= rows) & (self.level[None, :] >= 0),
                        self.nodes[None, :], 0).astype(np.int64)


@dataclass(frozen=True)
class Objective:
    """One maximised objective of the window model, as every solver and policy reads it.

    ``unit``: SI unit of its values. ``scale(model)``: the amount that counts as 100 %.
    ``coefficients(model)``: exact per-job coefficients (``None``: not linear, then ``values``
    computes it). ``integer(model)``: integer per-job coefficients for the exact solvers (for a
    non-linear objective, its part over ``x``), ``integer_unit(model)`` the size of one of their
    units in ``unit``, and ``level_integer(model)`` the coefficients over the assigned counts
    per SSD level ``A_j`` of the :class:`IntegerForm` (non-linear objectives only).
    ``needs_ssd``: only defined with ``free_node_ssd``. ``gain``: BBSched's decision maker
    counts it as a gain against the node loss (Section 5). ``monotone``: adding a job never
    lowers it (a repair may fill a selection freely).
    """

    unit: str
    scale: Callable[[WindowModel], float]
    integer: Callable[[WindowModel], np.ndarray]
    integer_unit: Callable[[WindowModel], float]
    coefficients: Callable[[WindowModel], np.ndarray] | None = None
    values: Callable[[WindowModel, np.ndarray], np.ndarray] | None = None
    level_integer: Callable[[WindowModel], np.ndarray] | None = None
    needs_ssd: bool = False
    gain: bool = False
    monotone: bool = True

    @property
    def linear(self) -> bool:
        return self.coefficients is not None


def _one(model: WindowModel) -> float:
    return 1.0


def _int(model: WindowModel) -> IntegerForm:
    return model.integer_form()


def _bandwidth_unit(model: WindowModel) -> float:
    return integer_unit(float(np.max(model.bandwidth * model.nodes, initial=1.0)), minimum=1.0)


def _waste_levels(model: WindowModel) -> np.ndarray:
    """Minus the assigned SSD capacity per level count ``A_j`` (``L_0, L_1 - L_0, ...``)."""
    L = _int(model).level_size.astype(np.int64)
    return -np.concatenate([[L[0]], np.diff(L)]).astype(np.int64)


#: The scale of an objective over a capacity of 0 (no BB on the platform, say): every selection
#: scores 0 of it, and a fraction of it is 0, not a division by zero.
EMPTY_SCALE = 1e-300

#: The window model's objectives by name (see the module docstring); the order of this table is
#: the order in which the decision maker sums its gains.
OBJECTIVES: dict[str, Objective] = {
    "nodes": Objective(
        "nodes", scale=lambda m: float(m.total_nodes), coefficients=lambda m: m.nodes.astype(float),
        integer=lambda m: m.nodes, integer_unit=_one),
    "bb": Objective(
        "B", scale=lambda m: float(m.total_bb), coefficients=lambda m: m.bb,
        integer=lambda m: _int(m).bb, integer_unit=lambda m: _int(m).bb_unit, gain=True),
    "order": Objective(
        "", scale=lambda m: float(max(np.sum(m.order), 1)),
        coefficients=lambda m: m.order.astype(float), integer=lambda m: m.order,
        integer_unit=_one),
    "ssd": Objective(
        "B", scale=lambda m: float(m.total_ssd or 1.0), coefficients=lambda m: m.ssd * m.nodes,
        integer=lambda m: _int(m).ssd * m.nodes, integer_unit=lambda m: _int(m).ssd_unit,
        needs_ssd=True, gain=True),
    "ssd_waste": Objective(
        "B", scale=lambda m: float(m.total_ssd or 1.0), values=lambda m, X: -m.ssd_waste_many(X),
        integer=lambda m: _int(m).ssd * m.nodes, integer_unit=lambda m: _int(m).ssd_unit,
        level_integer=_waste_levels, needs_ssd=True, gain=True, monotone=False),
    "bandwidth": Objective(
        "B/s", scale=lambda m: max(float(m.bandwidth @ m.nodes), 1.0),
        coefficients=lambda m: m.bandwidth * m.nodes,
        integer=lambda m: np.round(m.bandwidth * m.nodes / _bandwidth_unit(m)).astype(np.int64),
        integer_unit=lambda m: _bandwidth_unit(m)),
}


def objective(name: str) -> Objective:
    """The table entry of objective ``name``; an unknown name is an
    :class:`~bbopt.errors.InputError`."""
    try:
        return OBJECTIVES[name]
    except KeyError:
        raise InputError(f"unknown objective {name!r}; known: {', '.join(OBJECTIVES)}",
                         field="objectives") from None


@dataclass(frozen=True)
class WindowModel:
    """BBSched's window-selection problem (see the module docstring).

    ``nodes``/``bb``/``ssd``: per-job node count, total BB bytes, SSD bytes per node.
    ``free_nodes``/``free_bb``: what is free now. ``total_nodes``/``total_bb``/``total_ssd``:
    the platform's capacities, used to express objectives as utilisation fractions.
    ``free_node_ssd``: SSD bytes of each free node (``None``: no SSD extension).
    ``bandwidth``: bytes/s per node of each job (default 0).
    ``order``: integer order weights (default ``w - i``). ``forced``: jobs that must be selected
    (the starvation bound). ``objectives``: names from :data:`OBJECTIVES`, all maximised.

    Examples
    --------
    BBSched's Table 1: five jobs, 100 free nodes and 100 TB of BB. Its two Pareto-optimal
    selections: jobs 2 to 5 fill 90 TB of BB on 80 nodes; jobs 1 and 5 fill every node but
    only 20 TB of BB:

    >>> from bbopt.core import TB
    >>> model = WindowModel(nodes=[80, 10, 40, 10, 20], bb=[20 * TB, 85 * TB, 5 * TB, 0, 0],
    ...                     free_nodes=100, free_bb=100 * TB)
    >>> [model.feasible(x) for x in ([0, 1, 1, 1, 1], [1, 0, 0, 0, 1], [1, 1, 0, 0, 0])]
    [True, True, False]
    >>> model.evaluate([0, 1, 1, 1, 1]) == (80.0, 90 * TB)
    True
    >>> model.evaluate([1, 0, 0, 0, 1]) == (100.0, 20 * TB)
    True
    """

    nodes: np.ndarray
    bb: np.ndarray
    free_nodes: int
    free_bb: float
    objectives: tuple[str, ...] = ("nodes", "bb")
    total_nodes: int | None = None
    total_bb: float | None = None
    ssd: np.ndarray | None = None
    free_node_ssd: np.ndarray | None = None
    total_ssd: float | None = None
    order: np.ndarray | None = None
    forced: np.ndarray | None = None
    job_ids: tuple[str, ...] = ()
    bandwidth: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        w = len(self.nodes)
        set_ = object.__setattr__
        set_(self, "nodes", np.asarray(self.nodes, dtype=np.int64))
        set_(self, "bb", np.asarray(self.bb, dtype=float))
        if self.bb.shape != (w,):
            raise InputError("bb must have one entry per job", field="bb")
        if np.any(self.nodes < 1) or np.any(self.bb < 0):
            raise InputError("node requests must be >= 1 and BB requests >= 0")
        for name in self.objectives:
            objective(name)
        if len(set(self.objectives)) != len(self.objectives) or not self.objectives:
            raise InputError("objectives must be distinct and not empty", field="objectives")
        ssd = np.zeros(w) if self.ssd is None else np.asarray(self.ssd, dtype=float)
        set_(self, "ssd", ssd)
        set_(self, "bandwidth", np.zeros(w) if self.bandwidth is None
             else np.asarray(self.bandwidth, dtype=float))
        if self.free_node_ssd is not None:
            set_(self, "free_node_ssd", np.sort(np.asarray(self.free_node_ssd, dtype=float)))
            if len(self.free_node_ssd) != self.free_nodes:
                raise InputError("free_node_ssd needs one entry per free node",
                                 field="free_node_ssd")
        elif np.any(ssd > 0) or any(OBJECTIVES[n].needs_ssd for n in self.objectives):
            raise InputError("SSD requests or objectives need free_node_ssd", field="ssd")
        order = (np.arange(w, 0, -1) if self.order is None
                 else np.asarray(self.order)).astype(np.int64)
        set_(self, "order", order)
        forced = (np.zeros(w, dtype=bool) if self.forced is None
                  else np.asarray(self.forced, dtype=bool))
        set_(self, "forced", forced)
        if self.total_nodes is None:
            set_(self, "total_nodes", int(self.free_nodes))
        if self.total_bb is None:
            set_(self, "total_bb", float(self.free_bb))
        if self.total_ssd is None and self.free_node_ssd is not None:
            set_(self, "total_ssd", float(np.sum(self.free_node_ssd)))
        if self.job_ids and len(self.job_ids) != w:
            raise InputError("job_ids must have one entry per job", field="job_ids")

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def from_jobs(cls, jobs: Sequence[Job], free_nodes: int, free_bb: float, *,
                  total_nodes: int | None = None, total_bb: float | None = None,
                  objectives: Sequence[str] = ("nodes", "bb"),
                  free_node_ssd: Sequence[float] | None = None, total_ssd: float | None = None,
                  order: Sequence[int] | None = None,
                  forced: Sequence[bool] | None = None) -> WindowModel:
        """The model of a window of ``jobs`` (in queue order) against the free resources."""
        return cls(
            nodes=np.array([j.nodes for j in jobs], dtype=np.int64),
            bb=np.array([j.bb for j in jobs], dtype=float),
            free_nodes=int(free_nodes), free_bb=float(free_bb),
            objectives=tuple(objectives), total_nodes=total_nodes, total_bb=total_bb,
            ssd=np.array([j.ssd for j in jobs], dtype=float),
            free_node_ssd=None if free_node_ssd is None else np.asarray(free_node_ssd, float),
            total_ssd=total_ssd,
            order=None if order is None else np.asarray(order),
            forced=None if forced is None else np.asarray(forced, dtype=bool),
            job_ids=tuple(j.id for j in jobs),
            bandwidth=np.array([j.bandwidth for j in jobs], dtype=float),
        )

    # --- structure ----------------------------------------------------------------------------

    @property
    def size(self) -> int:
        """The window size ``w`` (number of binary variables)."""
        return len(self.nodes)

    @property
    def bb_room(self) -> float:
        """The most BB a selection may ask: what is free plus the core fit rule's slack of the
        platform's BB (:func:`bbopt.core.fits`)."""
        return self.free_bb + slack(self.total_bb)

    @property
    def has_ssd(self) -> bool:
        return self.free_node_ssd is not None

    def scales(self) -> np.ndarray:
        """Per objective, the amount that counts as 100 % (platform capacity; for ``order`` the
        sum of all weights), so that ``evaluate(x) / scales()`` are utilisation fractions."""
        out = [OBJECTIVES[name].scale(self) for name in self.objectives]
        return np.maximum(np.asarray(out), EMPTY_SCALE)

    def levels(self) -> tuple[np.ndarray, np.ndarray]:
        """Distinct SSD sizes of the free nodes (ascending) and how many free nodes have each."""
        if "levels" not in self._cache:
            if self.free_node_ssd is None:
                sizes, counts = np.array([math.inf]), np.array([self.free_nodes])
            elif len(self.free_node_ssd) == 0:  # no free node: one empty level
                sizes, counts = np.zeros(1), np.zeros(1, dtype=np.int64)
            else:
                sizes, counts = np.unique(self.free_node_ssd, return_counts=True)
            self._cache["levels"] = (sizes, counts.astype(np.int64))
        return self._cache["levels"]

    def job_levels(self) -> np.ndarray:
        """Lowest admissible SSD level of each job (index into :meth:`levels`), -1 if none."""
        sizes, _ = self.levels()
        lvl = np.searchsorted(sizes, self.ssd, side="left")
        return np.where(lvl < len(sizes), lvl, -1).astype(np.int64)

    def integer_form(self) -> IntegerForm:
        """The model in integer units for exact solvers (cached)."""
        if "int" in self._cache:
            return self._cache["int"]
        unit = integer_unit(max(self.free_bb, float(np.max(self.bb, initial=0.0))))
        bb = np.ceil(self.bb / unit - 1e-9).astype(np.int64)
        cap_b = int(math.floor(self.free_bb / unit + 1e-9))
        if self.has_ssd:
            sizes, counts = self.levels()
            ssd_unit = integer_unit(float(np.max(sizes, initial=1.0)), target=1e4)
            level_size = np.floor(sizes / ssd_unit + 1e-9).astype(np.int64)
            ssd = np.ceil(self.ssd / ssd_unit - 1e-9).astype(np.int64)
            level = np.searchsorted(level_size, ssd, side="left")
            level = np.where(level < len(level_size), level, -1).astype(np.int64)
        else:
            ssd_unit = 1.0
            level_size = np.zeros(1, dtype=np.int64)
            counts = np.array([self.free_nodes], dtype=np.int64)
            ssd = np.zeros(self.size, dtype=np.int64)
            level = np.zeros(self.size, dtype=np.int64)
        allowed = (level >= 0) & (self.nodes <= self.free_nodes) & (bb <= cap_b)
        form = IntegerForm(nodes=self.nodes, bb=bb, free_nodes=int(self.free_nodes), free_bb=cap_b,
                           bb_unit=unit, order=self.order, ssd=ssd, ssd_unit=ssd_unit,
                           level=level, level_size=level_size, level_count=counts,
                           allowed=allowed, forced=self.forced)
        self._cache["int"] = form
        return form

    # --- evaluation ---------------------------------------------------------------------------

    def _as_matrix(self, x) -> tuple[np.ndarray, bool]:
        a = np.asarray(x)
        single = a.ndim == 1
        a = np.atleast_2d(a).astype(bool)
        if a.shape[1] != self.size:
            raise InputError(f"a selection has {a.shape[1]} entries for a window of {self.size}")
        return a, single

    def _placement_counts(self, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row: demand ``D`` (rows x k) and least-waste assigned counts ``A`` (rows x k)."""
        sizes, counts = self.levels()
        lvl = self.job_levels()
        k = len(sizes)
        n = np.where(X, self.nodes[None, :], 0)
        D = np.zeros((X.shape[0], k), dtype=np.int64)
        for j in range(k):
            D[:, j] = n[:, lvl >= j].sum(axis=1) if j > 0 else n.sum(axis=1)
        A = D.copy()
        for j in range(1, k):
            A[:, j] = np.maximum(D[:, j], A[:, j - 1] - counts[j - 1])
        return D, A

    def feasible_many(self, X, check_forced: bool = True) -> np.ndarray:
        """Feasibility of each row of ``X`` (capacities, SSD placement and, unless
        ``check_forced`` is false, the forced jobs)."""
        X, _ = self._as_matrix(X)
        ok = X @ self.nodes <= self.free_nodes
        ok &= X @ self.bb <= self.bb_room
        if check_forced:
            ok &= np.all(X[:, self.forced], axis=1)
        if self.has_ssd:
            lvl = self.job_levels()
            ok &= ~np.any(X[:, lvl < 0], axis=1)
            _, counts = self.levels()
            D, _ = self._placement_counts(X & (lvl >= 0)[None, :])
            avail = np.cumsum(counts[::-1])[::-1]
            ok &= np.all(avail[None, :] >= D, axis=1)
        return ok

    def feasible(self, x) -> bool:
        return bool(self.feasible_many(x)[0])

    def evaluate_many(self, X) -> np.ndarray:
        """Objective values (rows x objectives, maximised, SI units) of each row of ``X``."""
        X, _ = self._as_matrix(X)
        Xf = X.astype(float)
        cols = [self._values(name, X, Xf) for name in self.objectives]
        return np.column_stack(cols) if cols else np.zeros((X.shape[0], 0))

    def values(self, name: str, X) -> np.ndarray:
        """The values of objective ``name`` (any of :data:`OBJECTIVES`, used by the model or
        not) for each row of ``X``."""
        objective(name)
        X, _ = self._as_matrix(X)
        return self._values(name, X, X.astype(float))

    def _values(self, name: str, X: np.ndarray, Xf: np.ndarray) -> np.ndarray:
        obj = OBJECTIVES[name]
        if obj.coefficients is None:
            return obj.values(self, X)
        return Xf @ obj.coefficients(self)

    def ssd_waste_many(self, X) -> np.ndarray:
        """Wasted SSD bytes of each selection under its least-waste placement."""
        X, _ = self._as_matrix(X)
        if not self.has_ssd:
            return np.zeros(X.shape[0])
        sizes, _ = self.levels()
        _, A = self._placement_counts(X)
        per_level = A - np.column_stack([A[:, 1:], np.zeros(len(A), dtype=np.int64)])
        assigned = per_level @ sizes
        return assigned - X.astype(float) @ (self.ssd * self.nodes)

    def evaluate(self, x) -> tuple[float, ...]:
        """Objective values of one selection, in :attr:`objectives` order."""
        return tuple(float(v) for v in self.evaluate_many(np.asarray(x)[None, :])[0])

    def selected(self, x) -> list[int]:
        """Indices of the selected jobs."""
        return [int(i) for i in np.flatnonzero(np.asarray(x).astype(bool))]

    def placement(self, x, node_ids: Sequence[int],
                  node_ssd: Sequence[float]) -> dict[int, tuple[int, ...]]:
        """Node ids for each selected job (window index -> node ids) under the least-waste
        placement: jobs most demanding first, each on the smallest admissible free nodes.

        ``node_ids``/``node_ssd``: the free nodes and their SSD bytes. Raises
        :class:`~bbopt.errors.InputError` if the selection cannot be placed.
        """
        pool = sorted(zip(node_ssd, node_ids, strict=False))
        sizes = [s for s, _ in pool]
        taken = [False] * len(pool)
        out: dict[int, tuple[int, ...]] = {}
        chosen = self.selected(x)
        for i in sorted(chosen, key=lambda i: (-self.ssd[i], i)):
            start = int(np.searchsorted(sizes, self.ssd[i], side="left"))
            got = []
            for k in range(start, len(pool)):
                if not taken[k]:
                    got.append(k)
                    if len(got) == self.nodes[i]:
                        break
            if len(got) < self.nodes[i]:
                raise InputError(f"job {i} of the window cannot be placed on the free nodes")
            for k in got:
                taken[k] = True
            out[i] = tuple(int(pool[k][1]) for k in got)
        return out

    # --- fast feasible answers ----------------------------------------------------------------

    def greedy(self, rule: str = "first-fit", order: Sequence[int] | None = None) -> np.ndarray:
        """A feasible selection by a one-by-one rule (forced jobs first, then ``order``).

        ``"in-order"``: take jobs in window order, stop at the first that does not fit (Slurm's
        naive method). ``"first-fit"``: take every job that fits, in window order.
        ``"bin-packing"``: repeatedly take the fitting job whose request, as fractions of the
        platform, has the largest dot product with the free resources (Grandl et al.).
        """
        w = self.size
        x = np.zeros(w, dtype=bool)
        for i in np.flatnonzero(self.forced):
            y = x.copy()
            y[i] = True
            if self._fits_ignoring_forced(y):  # the other forced jobs are not in yet
                x = y
        idx = list(range(w)) if order is None else list(order)
        if rule in ("in-order", "first-fit"):
            for i in idx:
                if x[i]:
                    continue
                y = x.copy()
                y[i] = True
                if self._fits_ignoring_forced(y):
                    x = y
                elif rule == "in-order":
                    break
            return x
        if rule == "bin-packing":
            tn, tb = float(self.total_nodes), max(float(self.total_bb), EMPTY_SCALE)
            while True:
                free_n = self.free_nodes - float(x @ self.nodes)
                free_b = self.free_bb - float(x @ self.bb)
                best, best_score = -1, -math.inf
                for i in idx:
                    if x[i]:
                        continue
                    y = x.copy()
                    y[i] = True
                    if not self._fits_ignoring_forced(y):
                        continue
                    score = (self.nodes[i] / tn) * (free_n / tn) + (self.bb[i] / tb) * (free_b / tb)
                    if score > best_score:
                        best, best_score = i, score
                if best < 0:
                    return x
                x[best] = True
        raise InputError(f"unknown greedy rule {rule!r}", field="rule")

    def _fits_ignoring_forced(self, x: np.ndarray) -> bool:
        if not self.has_ssd:  # the two capacity rows (the greedy rules call this once per job)
            return bool(x @ self.nodes <= self.free_nodes and x @ self.bb <= self.bb_room)
        return bool(self.feasible_many(x[None, :], check_forced=False)[0])

    def fallback(self) -> np.ndarray:
        """The fast feasible answer of the solver contract: first fit in window order."""
        return self.greedy("first-fit")


def pareto_filter(F: np.ndarray) -> np.ndarray:
    """Indices of the rows of ``F`` (maximised) that no other row dominates, one per distinct
    objective vector (the first occurrence)."""
    F = np.asarray(F, dtype=float)
    if len(F) == 0:
        return np.zeros(0, dtype=np.int64)
    uniq, first = np.unique(F, axis=0, return_index=True)
    if uniq.shape[1] == 1:
        best = np.argmax(uniq[:, 0])
        return np.array([first[best]])
    if uniq.shape[1] == 2:
        # Sort by f1 descending, f2 descending; keep strictly increasing f2 along the sweep.
        o = np.lexsort((-uniq[:, 1], -uniq[:, 0]))
        f2 = uniq[o, 1]
        prev_max = np.maximum.accumulate(np.concatenate([[-np.inf], f2[:-1]]))
        keep = o[f2 > prev_max]
        return np.sort(first[keep])
    o = np.argsort(-uniq.sum(axis=1), kind="stable")
    kept: list[int] = []
    for i in o:
        if kept:
            K = uniq[kept]
            if np.any(np.all(uniq[i] <= K, axis=1)):
                continue
        kept.append(int(i))
    return np.sort(first[np.array(kept)])

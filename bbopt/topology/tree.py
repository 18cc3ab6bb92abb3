"""The I/O hierarchy of a platform: a bandwidth tree from the parallel file system to the nodes.

Herbein et al., HPDC 2016, Section 3.3: the PFS is the root, switch levels (a core switch pool
and edge switches on a TLCC/CTS-1 cluster; groups, chassis and routers on Kopanski & Rzadca's
dragonfly, Euro-Par 2021, Section 4.1) are the inner vertices and compute nodes the leaves.
Burst-buffer (BB) nodes may be placed anywhere in the tree. Every vertex ``v`` has a
**bandwidth**: the peak rate of the pool it stands for (the PFS itself at the root, the link from
``v`` to its parent elsewhere), in bytes/s; ``inf`` means "never a bottleneck". Like the paper's
pools, a vertex's bandwidth is shared by every flow that crosses it, in either direction.

:class:`IOTree` keeps the tree in networkx (for users: :meth:`IOTree.graph`) and precomputes
numpy arrays for the hot paths: parent pointers, depth levels, each compute node's ancestors.
**Allocation** (Section 3.4) charges a job's per-node bandwidth on every vertex from each of its
nodes up to the PFS; a node is usable only if every ancestor has the bandwidth left, counting what
the job's other nodes already took. :meth:`IOTree.select` finds such a node set (Herbein's greedy,
nodes taken in index order) with one bottom-up count and one top-down split over the levels, so a
check on 3,888 nodes costs a few dozen numpy operations.

Files are read and written by :mod:`bbopt.topology.formats`, the machines of the papers are
in :mod:`bbopt.topology.machines`, allocation state in :mod:`bbopt.topology.alloc`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from bbopt.errors import InputError
from bbopt.resources import format_bandwidth, parse_bandwidth

if TYPE_CHECKING:  # networkx is imported where a tree is built: it costs 0.1-0.3 s
    import networkx as nx

INF = math.inf
#: Relative slack when comparing bandwidth sums (rounding in byte/s arithmetic): the core's
#: :data:`bbopt.core.REL_TOL`, restated because the core names this module's types
#: (``tests/planner/test_links.py`` checks that they are equal).
REL_TOL = 1e-9

NODE = "node"
BB = "bb"
PFS = "pfs"
BB_TYPES = frozenset({"bb", "burst_buffer", "storage"})


class IOTree:
    """A bandwidth tree rooted at the PFS, with compute nodes (and BB nodes) at the leaves.

    Build it from a networkx ``DiGraph`` whose edges point from parent to child and whose vertex
    attributes are ``type`` (``"pfs"``, ``"node"``, ``"bb"``, anything else is a switch level),
    ``bandwidth`` (bytes/s, default inf) and, for BB nodes, ``capacity`` (bytes). Children are
    visited in insertion order; compute node ``i`` is the ``i``-th node vertex in that depth-first
    order, which is the node index the engine and the policies use.
    """

    def __init__(self, graph: nx.DiGraph, name: str = "io") -> None:
        import networkx as nx

        if not isinstance(graph, nx.DiGraph) or graph.number_of_nodes() == 0:
            raise InputError("an I/O topology needs a non-empty networkx DiGraph", field="graph")
        roots = [v for v in graph.nodes if graph.in_degree(v) == 0]
        if len(roots) != 1 or not nx.is_arborescence(graph):
            raise InputError(f"the I/O topology must be a tree with one root (found roots "
                             f"{roots[:5]})", field="graph")
        self.name = name
        self._graph = graph
        root = roots[0]
        order = list(nx.dfs_preorder_nodes(graph, root))
        vid = {v: i for i, v in enumerate(order)}
        V = len(order)
        self.labels: list[Any] = order
        self.vertex_of = vid
        self.kind = [str(graph.nodes[v].get("type", "switch")) for v in order]
        parent = np.full(V + 1, -1, dtype=np.int64)
        depth = np.zeros(V + 1, dtype=np.int64)
        for v in order[1:]:
            (p,) = graph.predecessors(v)
            parent[vid[v]] = vid[p]
            depth[vid[v]] = depth[vid[p]] + 1
        cap = np.empty(V + 1)
        for i, v in enumerate(order):
            cap[i] = parse_bandwidth(graph.nodes[v].get("bandwidth"), f"bandwidth of {v!r}")
        cap[V] = INF  # the sentinel that pads ancestor rows
        self.parent = parent
        self.depth = depth
        self.capacity = cap
        self.sentinel = V
        self.n_vertices = V
        self.node_vertex = np.array([i for i, k in enumerate(self.kind) if k == NODE],
                                    dtype=np.int64)
        if self.node_vertex.size == 0:
            raise InputError("the I/O topology has no compute node (type 'node')", field="type")
        self.bb_vertex = np.array([i for i, k in enumerate(self.kind) if k in BB_TYPES],
                                  dtype=np.int64)
        self.bb_capacity = np.array([float(graph.nodes[order[i]].get("capacity", 0.0))
                                     for i in self.bb_vertex])
        children: list[list[int]] = [[] for _ in range(V)]
        for i in range(1, V):
            children[parent[i]].append(i)
        self.children = children
        for i in self.node_vertex:
            if children[i]:
                raise InputError(f"compute node {order[i]!r} has children in the I/O tree",
                                 field="type")
        maxd = int(depth[:V].max())
        self.max_depth = maxd
        # Ancestors-or-self of every compute node, bottom-up, padded with the sentinel.
        anc = np.full((self.node_vertex.size, maxd + 1), V, dtype=np.int64)
        for r, v in enumerate(self.node_vertex):
            c, u = 0, int(v)
            while u >= 0:
                anc[r, c] = u
                u = int(parent[u])
                c += 1
        self.ancestors = anc
        # Levels for the vectorised count/split: vertices of each depth in id order (preorder
        # ids keep siblings contiguous and parents in order), with their parent groups.
        self._levels = []
        for d in range(1, maxd + 1):
            vs = np.flatnonzero(depth[:V] == d)
            par = parent[vs]
            starts = np.flatnonzero(np.r_[True, par[1:] != par[:-1]])
            self._levels.append((vs, par, starts, par[starts], np.diff(np.r_[starts, vs.size])))
        self._finite_paths: dict[int, tuple[tuple[int, int], ...]] = {}
        self._child_arrays = [np.asarray(c, dtype=np.int64) for c in children]
        self._is_node = np.zeros(V + 1, dtype=bool)
        self._is_node[self.node_vertex] = True
        self._node_index = np.full(V + 1, -1, dtype=np.int64)
        self._node_index[self.node_vertex] = np.arange(self.node_vertex.size)
        self._leaf_parent = np.array(
            [bool(c) and all(self.kind[x] == NODE for x in c) for c in children] + [False])
        self._finite = np.flatnonzero(np.isfinite(cap[:V]))
        self._tol = {REL_TOL: cap[self._finite] * REL_TOL}  # (by relative tolerance)
        self._root_tol = cap[0] * REL_TOL
        # Levels whose vertices are all unlimited need no clamping.
        self._level_finite = [bool(np.isfinite(cap[lv[0]]).any()) for lv in self._levels]

    # ---------------------------------------------------------------- plain facts
    @property
    def nodes(self) -> int:
        """Number of compute nodes."""
        return int(self.node_vertex.size)

    @property
    def root(self) -> int:
        return 0

    @property
    def pfs_bandwidth(self) -> float:
        return float(self.capacity[0])

    @property
    def bb_total(self) -> float:
        return float(self.bb_capacity.sum())

    def graph(self) -> nx.DiGraph:
        """A copy of the networkx tree (parent -> child edges)."""
        return self._graph.copy()

    def path(self, node: int) -> list[int]:
        """Vertex ids from compute node ``node`` up to the PFS (inclusive)."""
        row = self.ancestors[node]
        return [int(x) for x in row if x != self.sentinel]

    def chain(self, vertex: int, stop: int = -1) -> list[tuple[int, int]]:
        """``(vertex, child on the way)`` pairs from ``vertex`` up to, excluding, ``stop``
        (``-1``: up to and including the root). The child of the first vertex is ``-1``."""
        out = []
        prev = -1
        u = vertex
        while u != stop and u >= 0:
            out.append((u, prev))
            prev = u
            u = int(self.parent[u])
        return out

    def lca(self, a: int, b: int) -> int:
        da, db = self.depth[a], self.depth[b]
        while da > db:
            a = int(self.parent[a])
            da -= 1
        while db > da:
            b = int(self.parent[b])
            db -= 1
        while a != b:
            a, b = int(self.parent[a]), int(self.parent[b])
        return a

    def nearest_bb(self, vertex: int) -> int | None:
        """The BB vertex closest to ``vertex`` in the tree (ties: lowest id), or ``None``."""
        if self.bb_vertex.size == 0:
            return None
        best, best_d = None, None
        for b in self.bb_vertex:
            w = self.lca(vertex, int(b))
            d = int(self.depth[vertex] + self.depth[b] - 2 * self.depth[w])
            if best_d is None or d < best_d:
                best, best_d = int(b), d
        return best

    def describe(self) -> str:
        levels = []
        for d in range(self.max_depth + 1):
            vs = np.flatnonzero(self.depth[: self.n_vertices] == d)
            kinds = sorted({self.kind[v] for v in vs})
            bws = sorted({float(self.capacity[v]) for v in vs})
            levels.append(f"depth {d}: {vs.size} x {'/'.join(kinds)} "
                          f"@ {', '.join(format_bandwidth(b) for b in bws)}")
        return f"{self.name}: {self.nodes} nodes, {self.bb_vertex.size} BB nodes; " + "; ".join(
            levels)

    # ---------------------------------------------------------------- allocation
    def fresh_avail(self) -> np.ndarray:
        """Free bandwidth per vertex on an empty machine (sentinel included)."""
        return self.capacity.copy()

    def charge(self, avail: np.ndarray, nodes: Sequence[int] | np.ndarray, per_node: float,
               sign: float = 1.0) -> None:
        """Take (``sign=1``) or give back (``-1``) ``per_node`` bytes/s on every ancestor."""
        if per_node <= 0 or len(nodes) == 0:
            return
        rows = self.ancestors[np.asarray(nodes, dtype=np.int64)].ravel()
        np.subtract.at(avail, rows, sign * per_node)
        avail[self.sentinel] = INF

    def state_of(self, running: Iterable[Any]) -> tuple[np.ndarray, np.ndarray]:
        """Free bandwidth per vertex and the free-node mask, given ``RunningJob``-like objects
        with ``job`` and ``allocation``."""
        avail = self.fresh_avail()
        free = np.ones(self.nodes, dtype=bool)
        rows: list[np.ndarray] = []
        amounts: list[np.ndarray] = []
        for r in running:
            alloc = r.allocation
            if alloc is None:
                raise InputError(f"running job {r.job.id} has no allocation; I/O-aware "
                                 "scheduling needs the nodes of running jobs", field="allocation")
            idx = np.asarray(alloc, dtype=np.int64)
            free[idx] = False
            if r.job.bandwidth > 0:
                rr = self.ancestors[idx].ravel()
                rows.append(rr)
                amounts.append(np.full(rr.size, r.job.bandwidth))
        if rows:
            allrows = np.concatenate(rows)
            used = np.bincount(allrows, weights=np.concatenate(amounts),
                               minlength=self.n_vertices + 1)
            avail -= used
            avail[self.sentinel] = INF
        return avail, free

    def base_counts(self, free: np.ndarray) -> np.ndarray:
        """Free nodes per vertex before any bandwidth clamp: the compute nodes' 0/1, and, when
        the deepest level is unlimited, already summed into its parents (cacheable: it depends
        on the free nodes only; :class:`AllocState` keeps it up to date)."""
        base = np.zeros(self.n_vertices + 1)
        base[self.node_vertex] = free
        if not self._level_finite[-1]:
            vs, _par, starts, upar, _sizes = self._levels[-1]
            base[upar] += np.add.reduceat(base[vs], starts)
        return base

    def room(self, avail: np.ndarray, per_node: float, rel_tol: float = REL_TOL) -> np.ndarray:
        """Per vertex (sentinel included): how many more nodes of ``per_node`` bytes/s its own
        bandwidth admits, ``floor((avail + rel_tol * capacity) / per_node)``, ``inf`` where
        unlimited. The one fit rule of link bandwidth: the planner and the policies use it with
        the core tolerance :data:`REL_TOL`, the engine's ledger with
        :data:`bbopt.core.ENGINE_REL_TOL` (twice that), so that it is at least as lenient."""
        fin = self._finite
        tol = self._tol.get(rel_tol)
        if tol is None:
            tol = self._tol[rel_tol] = self.capacity[fin] * rel_tol
        k = np.full(self.n_vertices + 1, INF)
        k[fin] = np.floor((avail[fin] + tol) / per_node)
        return k

    def root_admits(self, avail: np.ndarray, nodes: int, per_node: float) -> bool:
        """Whether the root (the PFS) admits ``nodes`` more nodes of ``per_node`` bytes/s by
        :meth:`room`'s rule (``floor(x) >= n`` is ``x >= n`` for a whole ``n``): the cheap
        first test of a placement."""
        return (avail[0] + self._root_tol) / per_node >= nodes

    def _counts(self, avail: np.ndarray, base: np.ndarray, per_node: float) -> np.ndarray:
        """Per vertex: how many more nodes of ``per_node`` bytes/s its subtree can host."""
        k = self.room(avail, per_node)
        cnt = base.copy()
        levels = self._levels if self._level_finite[-1] else self._levels[:-1]
        flags = self._level_finite[: len(levels)]
        for (vs, _par, starts, upar, _sizes), finite in zip(reversed(levels), reversed(flags),
                                                            strict=True):
            if finite:
                c = np.minimum(cnt[vs], k[vs])
                cnt[vs] = c
            else:
                c = cnt[vs]
            cnt[upar] += np.add.reduceat(c, starts)
        cnt[0] = min(cnt[0], k[0])
        return cnt

    def capacity_for(self, avail: np.ndarray, free: np.ndarray, per_node: float,
                     base: np.ndarray | None = None) -> int:
        """How many nodes a job of ``per_node`` bytes/s could get now (at most the free ones)."""
        if per_node <= 0:
            return int(free.sum())
        if base is None:
            base = self.base_counts(free)
        return int(self._counts(avail, base, per_node)[0])

    def select(self, avail: np.ndarray, free: np.ndarray, nodes: int, per_node: float,
               base: np.ndarray | None = None) -> np.ndarray | None:
        """Herbein's allocation: ``nodes`` free nodes, taken in index order, each usable only if
        every ancestor has ``per_node`` left after the nodes taken before it; ``None`` if the job
        cannot get enough nodes (then nothing is allocated)."""
        if per_node <= 0:
            idx = np.flatnonzero(free)
            return idx[:nodes] if idx.size >= nodes else None
        if not self.root_admits(avail, nodes, per_node):
            return None
        if base is None:
            base = self.base_counts(free)
        cnt = self._counts(avail, base, per_node)
        if cnt[0] < nodes:
            return None
        # Top-down: every vertex hands its quota to its children in order, each taking as many
        # as its subtree can host. Only vertices with a positive quota are visited.
        chosen: list[int] = []
        stack = [(0, float(nodes))]
        kids = self._child_arrays
        is_node = self._is_node
        while stack:
            v, q = stack.pop()
            if is_node[v]:
                chosen.append(v)
                continue
            ch = kids[v]
            c = cnt[ch]
            take = np.minimum(np.maximum(q - (np.cumsum(c) - c), 0.0), c)
            pos = np.flatnonzero(take > 0.5)
            if self._leaf_parent[v]:
                chosen.extend(ch[pos].tolist())
                continue
            for j in pos[::-1]:
                stack.append((int(ch[j]), float(take[j])))
        return np.sort(self._node_index[np.asarray(chosen, dtype=np.int64)])

    def fits_empty(self, nodes: int, per_node: float) -> bool:
        """Whether ``nodes`` nodes of ``per_node`` bytes/s each fit on the empty machine."""
        free = np.ones(self.nodes, dtype=bool)
        return self.capacity_for(self.fresh_avail(), free, per_node) >= nodes

    def why_never_fits(self, nodes: int, per_node: float) -> str | None:
        """Why ``nodes`` nodes of ``per_node`` bytes/s each could not be placed even on an empty
        machine, or ``None``."""
        if per_node <= 0 or nodes > self.nodes:
            return None
        got = self.capacity_for(self.fresh_avail(), np.ones(self.nodes, dtype=bool), per_node)
        if got >= nodes:
            return None
        return (f"requests {nodes} nodes x {format_bandwidth(per_node)}; even an empty machine "
                f"gives at most {got} such nodes under the I/O tree (PFS "
                f"{format_bandwidth(self.pfs_bandwidth)})")

    # ---------------------------------------------------------------- flows for contention
    def finite_path(self, vertex: int, to: int | None = None) -> tuple[tuple[int, int], ...]:
        """``(vertex, entry child)`` hops of finite bandwidth on the way from ``vertex`` to the
        PFS (``to=None``) or to another vertex ``to`` (up to the common ancestor, then down).
        The entry child is ``-1`` at an endpoint and where it would be an endpoint whose own
        bandwidth is unlimited: there the flow is a child of its own, so flows from many such
        nodes can be counted as one aggregate."""
        if to is None:
            key = vertex
            hit = self._finite_paths.get(key)
            if hit is not None:
                return hit
            hops = self.chain(vertex)
            out = tuple((v, -1 if e == vertex else e) for v, e in hops
                        if math.isfinite(self.capacity[v]))
            self._finite_paths[key] = out
            return out
        w = self.lca(vertex, to)
        hops = self.chain(vertex, w) + self.chain(to, w)
        return tuple((v, -1 if e in (vertex, to) else e) for v, e in hops
                     if math.isfinite(self.capacity[v]))

    # ---------------------------------------------------------------- (de)serialisation
    def to_dict(self) -> dict[str, Any]:
        """The nested description (see the module docstring), one entry per vertex."""

        def rec(i: int) -> dict[str, Any]:
            label = self.labels[i]
            d: dict[str, Any] = {"type": self.kind[i], "name": str(label)}
            if math.isfinite(self.capacity[i]):
                d["bandwidth"] = float(self.capacity[i])
            attrs = self._graph.nodes[label]
            if "capacity" in attrs:
                d["capacity"] = float(attrs["capacity"])
            if self.children[i]:
                d["children"] = [rec(c) for c in self.children[i]]
            return d

        return {"name": self.name, "tree": rec(0)}

    def __repr__(self) -> str:
        return f"IOTree({self.describe()})"


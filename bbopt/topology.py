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

Descriptions read by :func:`load_topology` / :func:`platform_from_description` (YAML or JSON)::

    name: fig2
    tree:                                  # the root is the PFS
      type: pfs
      bandwidth: 1 GB/s
      children:
        - type: switch
          name: net                        # optional; default <type><k>
          bandwidth: 384 MB/s
          children:
            - {type: switch, bandwidth: 256 MB/s, count: 2,   # count replicates a subtree
               children: [{type: node, count: 2}]}            # bandwidth absent = inf
        - {type: bb, capacity: 40 GB, bandwidth: 1.25 GB/s}   # a burst-buffer node

Flux JGF (JSON Graph Format) is read and written by :func:`from_jgf` / :func:`to_jgf`:
``graph.nodes[].metadata{type, basename, name, id, uniq_id, rank, exclusive, unit, size,
paths{containment}}`` and ``graph.edges[]{source, target, metadata{subsystem: "containment"}}``
(edges of other subsystems are ignored). A vertex whose ``unit`` is a rate (``"B/s"``,
``"MB/s"``, ``"GB/s"``, ...) carries its bandwidth as its pool ``size``; alternatively a child
vertex of type ``bandwidth`` (or ``bw``) holds the bandwidth of its parent as a pool. Compute
nodes are vertices of type ``node`` (their sub-resources, sockets and cores, are ignored); BB
nodes are of type ``bb``, ``burst_buffer`` or ``storage`` with their capacity in ``properties``
(``capacity`` in bytes) or as the size of a ``ssd`` child in bytes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from bbopt.core import GB, Job, Platform
from bbopt.errors import InputError

INF = math.inf
#: Relative slack when comparing bandwidth sums (rounding in byte/s arithmetic).
_REL_TOL = 1e-9

NODE = "node"
BB = "bb"
PFS = "pfs"
_BB_TYPES = {"bb", "burst_buffer", "storage"}
_BW_TYPES = {"bandwidth", "bw"}
_RATE_UNITS = {"b/s": 1.0, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "tb/s": 1e12,
               "kib/s": 1024.0, "mib/s": 1024.0**2, "gib/s": 1024.0**3, "tib/s": 1024.0**4,
               "bps": 1.0}


def parse_bandwidth(value: Any, field: str = "bandwidth") -> float:
    """``"216 GB/s"``, ``"18MB/s"``, ``"inf"``, ``None`` (inf) or a number of bytes/s."""
    if value is None:
        return INF
    if isinstance(value, bool):
        raise InputError(f"cannot read {value!r} as a bandwidth", field=field)
    if isinstance(value, int | float):
        out = float(value)
    else:
        text = str(value).strip().lower().replace(" ", "")
        if text in ("inf", "infinite", "infinity", "unlimited"):
            return INF
        from bbopt.loading import parse_bytes

        if text.endswith("/s"):
            text = text[:-2]
        out = parse_bytes(text, field)
    if not (out > 0):
        raise InputError(f"bandwidth must be positive, got {value!r}", field=field)
    return out


class IOTree:
    """A bandwidth tree rooted at the PFS, with compute nodes (and BB nodes) at the leaves.

    Build it from a networkx ``DiGraph`` whose edges point from parent to child and whose vertex
    attributes are ``type`` (``"pfs"``, ``"node"``, ``"bb"``, anything else is a switch level),
    ``bandwidth`` (bytes/s, default inf) and, for BB nodes, ``capacity`` (bytes). Children are
    visited in insertion order; compute node ``i`` is the ``i``-th node vertex in that depth-first
    order, which is the node index the engine and the policies use.
    """

    def __init__(self, graph: nx.DiGraph, name: str = "io") -> None:
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
        self.bb_vertex = np.array([i for i, k in enumerate(self.kind) if k in _BB_TYPES],
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
        self._tol = cap[self._finite] * _REL_TOL
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
                          f"@ {', '.join(_fmt_bw(b) for b in bws)}")
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

    def _counts(self, avail: np.ndarray, base: np.ndarray, per_node: float) -> np.ndarray:
        """Per vertex: how many more nodes of ``per_node`` bytes/s its subtree can host."""
        fin = self._finite
        k = np.full(self.n_vertices + 1, INF)
        k[fin] = np.floor((avail[fin] + self._tol) / per_node)
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
        if avail[0] + self.capacity[0] * _REL_TOL < nodes * per_node:
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

    def fits_empty(self, job: Job) -> bool:
        free = np.ones(self.nodes, dtype=bool)
        return self.capacity_for(self.fresh_avail(), free, job.bandwidth) >= job.nodes

    def why_never_fits(self, job: Job) -> str | None:
        """Why ``job`` could not get its nodes and bandwidth even on an empty machine."""
        if job.bandwidth <= 0 or job.nodes > self.nodes:
            return None
        got = self.capacity_for(self.fresh_avail(), np.ones(self.nodes, dtype=bool),
                                job.bandwidth)
        if got >= job.nodes:
            return None
        return (f"requests {job.nodes} nodes x {_fmt_bw(job.bandwidth)}; even an empty machine "
                f"gives at most {got} such nodes under the I/O tree (PFS "
                f"{_fmt_bw(self.pfs_bandwidth)})")

    def ledger(self) -> BandwidthLedger:
        return BandwidthLedger(self)

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


class BandwidthLedger:
    """The engine's check of I/O-aware decisions: bandwidth charged per vertex never exceeds it."""

    def __init__(self, tree: IOTree) -> None:
        self.tree = tree
        self.avail = tree.fresh_avail()

    def charge(self, job: Job, nodes: Sequence[int]) -> str | None:
        """Charge ``job`` on ``nodes``; the reason it over-allocates a vertex, or ``None``."""
        if job.bandwidth <= 0:
            return None
        tree = self.tree
        tree.charge(self.avail, nodes, job.bandwidth)
        tol = np.where(np.isfinite(tree.capacity), tree.capacity * _REL_TOL, 0.0)
        bad = np.flatnonzero(self.avail < -tol)
        if bad.size:
            v = int(bad[0])
            used = tree.capacity[v] - self.avail[v]
            tree.charge(self.avail, nodes, job.bandwidth, sign=-1.0)
            return (f"over-allocates {tree.kind[v]} {tree.labels[v]!r}: "
                    f"{_fmt_bw(used)} would be charged on {_fmt_bw(tree.capacity[v])}")
        return None

    def why_never_fits(self, job: Job) -> str | None:
        return self.tree.why_never_fits(job)

    def release(self, job: Job, nodes: Sequence[int]) -> None:
        self.tree.charge(self.avail, nodes, job.bandwidth, sign=-1.0)


class AllocState:
    """Free nodes and free bandwidth per vertex at one instant, for placing jobs one by one.

    ``take``/``give`` keep the cached per-vertex free-node counts up to date, so successive
    checks (an EASY pass over a long queue) cost only the bandwidth clamp of each check.
    """

    __slots__ = ("tree", "avail", "free", "n_free", "base")

    def __init__(self, tree: IOTree, avail: np.ndarray, free: np.ndarray,
                 base: np.ndarray | None = None) -> None:
        self.tree = tree
        self.avail = avail
        self.free = free
        self.n_free = int(free.sum())
        self.base = tree.base_counts(free) if base is None else base

    @classmethod
    def of_running(cls, tree: IOTree, running: Iterable[Any]) -> AllocState:
        avail, free = tree.state_of(running)
        return cls(tree, avail, free)

    def copy(self) -> AllocState:
        return AllocState(self.tree, self.avail.copy(), self.free.copy(), self.base.copy())

    def _mark(self, nodes: np.ndarray, value: float) -> None:
        tree = self.tree
        self.free[nodes] = value > 0
        self.n_free += int(value) * len(nodes)
        v = tree.node_vertex[nodes]
        self.base[v] += value
        if not tree._level_finite[-1]:
            deep = tree.depth[v] == tree.max_depth
            np.add.at(self.base, tree.parent[v[deep]], value)

    def take(self, nodes: Sequence[int] | np.ndarray, per_node: float) -> None:
        nodes = np.asarray(nodes, dtype=np.int64)
        self._mark(nodes, -1.0)
        self.tree.charge(self.avail, nodes, per_node)

    def give(self, nodes: Sequence[int] | np.ndarray, per_node: float) -> None:
        nodes = np.asarray(nodes, dtype=np.int64)
        self._mark(nodes, 1.0)
        self.tree.charge(self.avail, nodes, per_node, sign=-1.0)

    def count(self, per_node: float) -> int:
        """How many nodes of ``per_node`` bytes/s could be placed now."""
        if per_node <= 0:
            return self.n_free
        return int(self.tree._counts(self.avail, self.base, per_node)[0])

    def fits(self, nodes: int, per_node: float) -> bool:
        if nodes > self.n_free:
            return False
        if per_node <= 0:
            return True
        tree = self.tree
        if self.avail[0] + tree.capacity[0] * _REL_TOL < nodes * per_node:
            return False
        return self.count(per_node) >= nodes

    def select(self, nodes: int, per_node: float) -> np.ndarray | None:
        if nodes > self.n_free:
            return None
        return self.tree.select(self.avail, self.free, nodes, per_node, self.base)


def _fmt_bw(x: float) -> str:
    if not math.isfinite(x):
        return "inf"
    for unit, f in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if abs(x) >= f:
            return f"{x / f:.4g} {unit}"
    return f"{x:.4g} B/s"


# -------------------------------------------------------------------- building trees
def from_description(data: Mapping[str, Any], source: str = "<description>") -> IOTree:
    """An :class:`IOTree` from the nested description of the module docstring."""
    if not isinstance(data, Mapping) or "tree" not in data:
        raise InputError("an I/O topology description needs a 'tree' mapping", source=source,
                         field="tree")
    g = nx.DiGraph()
    counters: dict[str, int] = {}

    def add(spec: Any, parent: Any, where: str) -> None:
        if not isinstance(spec, Mapping):
            raise InputError("must be a mapping", source=source, line=where)
        kind = str(spec.get("type", "switch"))
        count = spec.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InputError(f"count must be a positive integer, got {count!r}", source=source,
                             line=where, field="count")
        try:
            bw = parse_bandwidth(spec.get("bandwidth"), "bandwidth")
            cap = 0.0
            if kind in _BB_TYPES:
                from bbopt.loading import parse_bytes

                cap = parse_bytes(spec.get("capacity", 0), "capacity")
        except InputError as exc:
            raise InputError(str(exc).split(": ", 1)[-1], source=source, line=where,
                             field=exc.field) from None
        for c in range(count):
            k = counters.get(kind, 0)
            counters[kind] = k + 1
            base = spec.get("name")
            label = (f"{base}{c}" if count > 1 else str(base)) if base is not None else f"{kind}{k}"
            if label in g:
                label = f"{label}#{k}"
            attrs: dict[str, Any] = {"type": kind, "bandwidth": bw}
            if kind in _BB_TYPES:
                attrs["capacity"] = cap
            g.add_node(label, **attrs)
            if parent is not None:
                g.add_edge(parent, label)
            for j, child in enumerate(spec.get("children", []) or []):
                add(child, label, f"{where}.children[{j}]")

    add(data["tree"], None, "$.tree")
    return IOTree(g, name=str(data.get("name", "io")))


def load_topology(path: str | Path) -> IOTree:
    """Read a topology file: JGF (``{"graph": ...}``) or the nested YAML/JSON description."""
    from bbopt.loading import read_document

    return topology_from_data(read_document(path), str(path))


def topology_from_data(data: Any, source: str) -> IOTree:
    """An :class:`IOTree` from parsed data: JGF (``{"graph": ...}``) or the nested description."""
    if isinstance(data, Mapping) and "graph" in data:
        return from_jgf(data, source=source)
    return from_description(data, source=source)


def platform_from_topology(tree: IOTree, name: str | None = None) -> Platform:
    """A :class:`~bbopt.core.Platform` whose nodes and shared BB are those of ``tree``."""
    return Platform(nodes=tree.nodes, bb=tree.bb_total, name=name or tree.name, topology=tree)


def load_platform_with_topology(path: str | Path) -> Platform:
    """A platform from a topology file (JGF or description)."""
    return platform_from_topology(load_topology(path))


# -------------------------------------------------------------------- Flux JGF
def to_jgf(tree: IOTree) -> dict[str, Any]:
    """Flux JSON Graph Format of ``tree`` (containment subsystem; bandwidth as B/s pools)."""
    nodes = []
    edges = []
    paths: dict[int, str] = {}
    per_type: dict[str, int] = {}
    for i, label in enumerate(tree.labels):
        kind = tree.kind[i]
        k = per_type.get(kind, 0)
        per_type[kind] = k + 1
        name = str(label)
        parent = int(tree.parent[i])
        paths[i] = (paths[parent] if parent >= 0 else "") + "/" + name
        bw = float(tree.capacity[i])
        meta: dict[str, Any] = {
            "type": kind, "basename": kind, "name": name, "id": k, "uniq_id": i, "rank": -1,
            "exclusive": kind == NODE, "paths": {"containment": paths[i]},
        }
        if kind == NODE:
            meta.update(size=1, unit="")
        elif math.isfinite(bw):
            meta.update(size=bw, unit="B/s")
        else:
            meta.update(size=1, unit="")
        if kind in _BB_TYPES:
            meta["properties"] = {"capacity": float(tree._graph.nodes[label].get("capacity", 0))}
        nodes.append({"id": str(i), "metadata": meta})
        if parent >= 0:
            edges.append({"source": str(parent), "target": str(i),
                          "metadata": {"subsystem": "containment",
                                       "name": {"containment": "contains"}}})
        if kind in (NODE, *_BB_TYPES) and math.isfinite(bw):
            j = f"{i}.bw"
            nodes.append({"id": j, "metadata": {
                "type": "bandwidth", "basename": "bandwidth", "name": f"{name}.bw", "id": i,
                "uniq_id": len(tree.labels) + i, "rank": -1, "exclusive": False, "size": bw,
                "unit": "B/s", "paths": {"containment": paths[i] + "/bandwidth"}}})
            edges.append({"source": str(i), "target": j,
                          "metadata": {"subsystem": "containment",
                                       "name": {"containment": "contains"}}})
    return {"graph": {"directed": True, "nodes": nodes, "edges": edges,
                      "metadata": {"name": tree.name}}}


def from_jgf(data: Mapping[str, Any], source: str = "<jgf>") -> IOTree:
    """An :class:`IOTree` from Flux JGF (see the module docstring for the conventions)."""
    try:
        graph = data["graph"]
        jnodes = graph["nodes"]
        jedges = graph.get("edges", [])
    except (KeyError, TypeError):
        raise InputError("JGF needs graph.nodes and graph.edges", source=source,
                         field="graph") from None
    meta: dict[str, Mapping[str, Any]] = {}
    for k, n in enumerate(jnodes):
        if not isinstance(n, Mapping) or "id" not in n:
            raise InputError("a vertex needs an id", source=source, line=f"$.graph.nodes[{k}]")
        meta[str(n["id"])] = n.get("metadata", {}) or {}
    children: dict[str, list[str]] = {}
    has_parent: set[str] = set()
    for k, e in enumerate(jedges):
        em = e.get("metadata", {}) or {}
        sub = em.get("subsystem")
        if sub is None and isinstance(em.get("name"), Mapping):
            sub = next(iter(em["name"]), None)
        if sub not in (None, "containment"):
            continue
        s, t = str(e.get("source")), str(e.get("target"))
        if s not in meta or t not in meta:
            raise InputError(f"edge {s} -> {t} names an unknown vertex", source=source,
                             line=f"$.graph.edges[{k}]")
        children.setdefault(s, []).append(t)
        has_parent.add(t)
    roots = [v for v in meta if v not in has_parent]
    if len(roots) != 1:
        raise InputError(f"the containment graph must have one root, found {len(roots)}",
                         source=source, field="edges")

    def kind_of(v: str) -> str:
        return str(meta[v].get("type", "switch"))

    def rate_of(m: Mapping[str, Any], where: str) -> float | None:
        unit = str(m.get("unit", "") or "").strip().lower().replace(" ", "")
        if unit not in _RATE_UNITS:
            return None
        size = m.get("size", 0)
        if not isinstance(size, int | float) or isinstance(size, bool) or size <= 0:
            raise InputError(f"bandwidth pool size must be positive, got {size!r}",
                             source=source, line=where, field="size")
        return float(size) * _RATE_UNITS[unit]

    g = nx.DiGraph()

    def order_key(v: str) -> tuple:
        m = meta[v]
        return (m.get("uniq_id", m.get("id", 0)) if isinstance(m.get("uniq_id", m.get("id", 0)),
                                                                 int | float) else 0, v)

    stack = [roots[0]]
    while stack:
        v = stack.pop()
        m = meta[v]
        kind = kind_of(v)
        bw = rate_of(m, f"vertex {v}") if kind not in _BW_TYPES else None
        kids = sorted(children.get(v, []), key=order_key)
        cap = 0.0
        for c in kids:
            ck = kind_of(c)
            if ck in _BW_TYPES:
                r = rate_of(meta[c], f"vertex {c}")
                if r is None:
                    raise InputError("a bandwidth pool needs a rate unit such as 'GB/s'",
                                     source=source, line=f"vertex {c}", field="unit")
                bw = r
            elif ck == "ssd" and kind in _BB_TYPES:
                cap = float(meta[c].get("size", 0))
        if kind in _BB_TYPES:
            cap = float((m.get("properties") or {}).get("capacity", cap))
        attrs: dict[str, Any] = {"type": kind, "bandwidth": bw if bw is not None else INF}
        if kind in _BB_TYPES:
            attrs["capacity"] = cap
        g.add_node(v, **attrs)
        if kind == NODE:
            continue  # sockets, cores, memory and GPUs take no part in the I/O tree
        for c in reversed(kids):
            if kind_of(c) in _BW_TYPES or kind_of(c) == "ssd":
                continue
            g.add_edge(v, c)
            stack.append(c)
    # Keep the JGF vertex order stable: rebuild with children in order_key order.
    ordered = nx.DiGraph()
    name = str((graph.get("metadata") or {}).get("name", "jgf"))

    def rec(v: str) -> None:
        ordered.add_node(v, **g.nodes[v])
        for c in sorted(g.successors(v), key=order_key):
            ordered.add_edge(v, c)
            rec(c)

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10000))
    try:
        rec(roots[0])
    finally:
        sys.setrecursionlimit(limit)
    relabel = {v: str(meta[v].get("name", v)) for v in ordered.nodes}
    if len(set(relabel.values())) == len(relabel):
        ordered = nx.relabel_nodes(ordered, relabel, copy=True)
    return IOTree(ordered, name=name)


# -------------------------------------------------------------------- the papers' machines
def cts1_topology(underprovision: float = 0.0) -> IOTree:
    """Herbein et al., Section 4.1: CTS-1, 3,888 nodes in 24 scalable units.

    PFS 70 GB/s (perfect provisioning: 18 MB/s x 3,888 nodes) times ``1 - underprovision``;
    a 432 GB/s core switch pool; 24 edge switches of 216 GB/s with 162 nodes each; node links
    are not a bottleneck (the paper gives none).
    """
    if not (0.0 <= underprovision < 1.0):
        raise InputError(f"underprovision must be in [0, 1), got {underprovision!r}",
                         field="underprovision")
    g = nx.DiGraph()
    g.add_node("pfs", type=PFS, bandwidth=70 * GB * (1.0 - underprovision))
    g.add_node("core", type="core_switch_pool", bandwidth=432 * GB)
    g.add_edge("pfs", "core")
    n = 0
    for su in range(24):
        e = f"edge{su}"
        g.add_node(e, type="edge_switch", bandwidth=216 * GB)
        g.add_edge("core", e)
        for _ in range(162):
            g.add_node(f"node{n}", type=NODE, bandwidth=INF)
            g.add_edge(e, f"node{n}")
            n += 1
    label = f"cts1-{round(underprovision * 100)}pct" if underprovision else "cts1"
    return IOTree(g, name=label)


def cts1(underprovision: float = 0.0) -> Platform:
    """The CTS-1 platform of Herbein et al. (Section 4.1) with its I/O tree; ``underprovision``
    (0.0-0.3 in the paper) scales the PFS bandwidth down. The burst buffers sit on the nodes
    (no shared BB pool: ``Platform.bb`` is 0)."""
    tree = cts1_topology(underprovision)
    return Platform(nodes=tree.nodes, bb=0.0, name=tree.name, topology=tree)


def kopanski_dragonfly_topology(link: float = 1.25 * GB, pfs: float = 5 * GB,
                                bb_capacity: float = 40 * GB, router: float = INF,
                                chassis: float = INF, group: float = INF) -> IOTree:
    """Kopanski & Rzadca, Section 4.1: 108 nodes in 3 groups x 4 chassis x 3 routers x 3 nodes.

    The last node of every chassis is a BB node (12 x 40 GB), the other 96 are compute nodes.
    Every node's link is 10 Gbit/s (1.25 GB/s); one shared 5 GB/s link reaches the PFS. The
    router, chassis and group uplinks are not a bottleneck by default (a dragonfly's many
    parallel links); pass bandwidths to constrain them.
    """
    g = nx.DiGraph()
    g.add_node("pfs", type=PFS, bandwidth=pfs)
    n = b = 0
    for gi in range(3):
        gl = f"group{gi}"
        g.add_node(gl, type="group", bandwidth=group)
        g.add_edge("pfs", gl)
        for ci in range(4):
            cl = f"chassis{gi}.{ci}"
            g.add_node(cl, type="chassis", bandwidth=chassis)
            g.add_edge(gl, cl)
            for ri in range(3):
                rl = f"router{gi}.{ci}.{ri}"
                g.add_node(rl, type="router", bandwidth=router)
                g.add_edge(cl, rl)
                for ni in range(3):
                    if ri == 2 and ni == 2:
                        label = f"bb{b}"
                        b += 1
                        g.add_node(label, type=BB, bandwidth=link, capacity=bb_capacity)
                    else:
                        label = f"node{n}"
                        n += 1
                        g.add_node(label, type=NODE, bandwidth=link)
                    g.add_edge(rl, label)
    return IOTree(g, name="kopanski-dragonfly")


def kopanski_dragonfly(**options: float) -> Platform:
    """Kopanski & Rzadca's 96 compute nodes + 12 x 40 GB BB nodes, with the dragonfly I/O tree
    (options as :func:`kopanski_dragonfly_topology`)."""
    tree = kopanski_dragonfly_topology(**options)
    return Platform(nodes=tree.nodes, bb=tree.bb_total, name=tree.name, topology=tree)


def herbein_example_topology(switch: float = 256e6, network: float = 384e6,
                             pfs: float = 1e9) -> IOTree:
    """A small tree in the spirit of Herbein et al.'s Figures 2-3: PFS -> network switch ->
    two lowest-level switches of 256 MB/s with two nodes each (nodes 0-1 and 2-3)."""
    return from_description({"name": "herbein-fig2", "tree": {
        "type": PFS, "name": "pfs", "bandwidth": pfs, "children": [{
            "type": "switch", "name": "network_switch", "bandwidth": network, "children": [
                {"type": "switch", "name": "lls", "count": 2, "bandwidth": switch,
                 "children": [{"type": NODE, "count": 2}]}]}]}})


__all__ = [
    "AllocState", "BandwidthLedger", "IOTree", "cts1", "cts1_topology", "from_description",
    "from_jgf",
    "herbein_example_topology", "kopanski_dragonfly", "kopanski_dragonfly_topology",
    "load_platform_with_topology", "load_topology", "parse_bandwidth", "platform_from_topology",
    "to_jgf",
]

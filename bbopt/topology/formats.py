"""Reading and writing I/O trees: the nested YAML/JSON description and Flux JGF.

Descriptions read by :func:`from_description` (YAML or JSON, through
:func:`bbopt.loading.load_topology`)::

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
(``capacity`` in bytes) or as the total size of their ``ssd`` children in bytes. Near-node
storage as in flux-sched's rabbit graphs (``ssd`` vertices with a byte ``unit`` such as ``GiB``
under a ``chassis`` or ``rack``, or under a ``rabbit``/``storage_node`` server there) is read as
BB capacity, pooled into the platform's one shared burst buffer (with a warning saying so);
``ssd`` vertices under compute nodes are not used (a warning says how much).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from bbopt.core import Platform
from bbopt.errors import InputError, check_acyclic, check_keys
from bbopt.resources import RATE_UNITS, parse_bandwidth, parse_bytes
from bbopt.topology.tree import BB_TYPES, INF, NODE, IOTree

BW_TYPES = frozenset({"bandwidth", "bw"})
#: The keys of a nested description and of each of its vertices (any other is refused).
DESCRIPTION_KEYS = frozenset({"name", "tree"})
VERTEX_KEYS = frozenset({"type", "name", "bandwidth", "capacity", "count", "children"})
#: A description that expands (``count``, shared aliases) beyond this many vertices is refused.
MAX_VERTICES = 1_000_000


def from_description(data: Mapping[str, Any], source: str = "<description>") -> IOTree:
    """An :class:`IOTree` from the nested description of the module docstring."""
    if not isinstance(data, Mapping) or "tree" not in data:
        raise InputError("an I/O topology description needs a 'tree' mapping", source=source,
                         field="tree")
    check_acyclic(data, source)  # an alias cycle would make the walk below endless
    check_keys(data, DESCRIPTION_KEYS, source=source, line="$")
    _check_size(data["tree"], source)
    import networkx as nx  # here, not at module level: only building a tree needs it

    g = nx.DiGraph()
    counters: dict[str, int] = {}

    def add(spec: Any, parent: Any, where: str) -> None:
        if not isinstance(spec, Mapping):
            raise InputError("must be a mapping", source=source, line=where)
        check_keys(spec, VERTEX_KEYS, source=source, line=where)
        kind = str(spec.get("type", "switch"))
        count = spec.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InputError(f"count must be a positive integer, got {count!r}", source=source,
                             line=where, field="count")
        try:
            bw = parse_bandwidth(spec.get("bandwidth"), "bandwidth")
            cap = 0.0
            if kind in BB_TYPES:
                cap = parse_bytes(spec.get("capacity", 0), "capacity")
        except InputError as exc:
            raise InputError(str(exc).split(": ", 1)[-1], source=source, line=where,
                             field=exc.field) from None
        for c in range(count):
            if g.number_of_nodes() >= MAX_VERTICES:
                raise InputError(f"describes more than {MAX_VERTICES:,} vertices", source=source,
                                 line=where, field="count")
            k = counters.get(kind, 0)
            counters[kind] = k + 1
            base = spec.get("name")
            label = (f"{base}{c}" if count > 1 else str(base)) if base is not None else f"{kind}{k}"
            if label in g:
                label = f"{label}#{k}"
            attrs: dict[str, Any] = {"type": kind, "bandwidth": bw}
            if kind in BB_TYPES:
                attrs["capacity"] = cap
            g.add_node(label, **attrs)
            if parent is not None:
                g.add_edge(parent, label)
            for j, child in enumerate(spec.get("children", []) or []):
                add(child, label, f"{where}.children[{j}]")

    add(data["tree"], None, "$.tree")
    return IOTree(g, name=str(data.get("name", "io")))


def _check_size(tree: Any, source: str) -> None:
    """Refuse a description that expands (``count``, shared aliases) past :data:`MAX_VERTICES`
    before building anything, so that it fails at once instead of filling memory."""
    memo: dict[int, int] = {}

    def size(spec: Any, where: str) -> int:
        if not isinstance(spec, Mapping):
            return 1
        if id(spec) in memo:
            return memo[id(spec)]
        count = spec.get("count", 1)
        count = count if isinstance(count, int) and not isinstance(count, bool) else 1
        kids = spec.get("children", []) or []
        below = sum(size(c, f"{where}.children[{j}]") for j, c in enumerate(kids)) \
            if isinstance(kids, list) else 0
        n = max(count, 1) * (1 + below)
        if n > MAX_VERTICES:
            raise InputError(f"describes more than {MAX_VERTICES:,} vertices", source=source,
                             line=where, field="count")
        memo[id(spec)] = n
        return n

    size(tree, "$.tree")


def topology_from_data(data: Any, source: str) -> IOTree:
    """An :class:`IOTree` from parsed data: JGF (``{"graph": ...}``) or the nested description."""
    if isinstance(data, Mapping) and "graph" in data:
        return from_jgf(data, source=source)
    return from_description(data, source=source)


def platform_from_topology(tree: IOTree, name: str | None = None) -> Platform:
    """A :class:`~bbopt.core.Platform` whose nodes and shared BB are those of ``tree``."""
    return Platform(nodes=tree.nodes, bb=tree.bb_total, name=name or tree.name, topology=tree)


# -------------------------------------------------------------------- Flux JGF
#: Vertices that serve near-node storage (HPE Rabbit in flux-sched's graphs): their ``ssd``
#: children are a burst buffer; their own cores are not compute nodes.
STORAGE_SERVERS = frozenset({"rabbit", "storage_node"})


def _ssd_bytes(m: Mapping[str, Any], where: str, source: str) -> float:
    size = m.get("size", 0)
    unit = str(m.get("unit", "") or "B")
    try:
        return parse_bytes(f"{size} {unit}", "size")
    except InputError:
        raise InputError(f"an ssd size needs a byte unit, got {size!r} {unit!r}",
                         source=source, line=where, field="unit") from None


def _near_node_storage(meta: dict[str, Mapping[str, Any]], children: dict[str, list[str]],
                       source: str) -> None:
    """Rewrite near-node storage (flux-sched's rabbit graphs) as BB vertices, in place.

    ``ssd`` vertices under a chassis, rack or other grouping vertex become one BB vertex
    child of it holding their total size; a storage server (``rabbit``, ``storage_node``) with
    ``ssd`` children becomes a BB vertex of that total, one without them is left out (its
    storage is the chassis' ``ssd`` vertices). The simulator pools every BB vertex into one
    shared capacity: a job is not yet restricted to its chassis' storage, so this warns. ``ssd``
    vertices under compute nodes (node-local storage) are not read and are warned about.
    """
    import warnings

    def kind(v: str) -> str:
        return str(meta[v].get("type", "switch"))

    pooled: list[tuple[str, float]] = []
    unused = 0.0
    n_unused = 0
    for parent in list(children):
        kids = children[parent]
        ssds = [c for c in kids if kind(c) == "ssd"]
        pk = kind(parent)
        if pk in BB_TYPES:
            continue
        if pk == NODE:
            if ssds:
                unused += sum(_ssd_bytes(meta[c], f"vertex {c}", source) for c in ssds)
                n_unused += len(ssds)
            continue
        servers = [c for c in kids if kind(c) in STORAGE_SERVERS]
        for srv in servers:
            srv_ssds = [c for c in children.get(srv, []) if kind(c) == "ssd"]
            if not srv_ssds:
                kids.remove(srv)  # a storage server whose drives hang from the chassis
                continue
            total = sum(_ssd_bytes(meta[c], f"vertex {c}", source) for c in srv_ssds)
            meta[srv] = {**meta[srv], "type": "bb", "properties": {"capacity": total}}
            children[srv] = []
            pooled.append((str(meta[srv].get("name", srv)), total))
        if ssds:
            total = sum(_ssd_bytes(meta[c], f"vertex {c}", source) for c in ssds)
            name = str(meta[parent].get("name") or
                       str((meta[parent].get("paths") or {}).get("containment", parent))
                       .rsplit("/", 1)[-1])
            pool = f"{parent}/ssd-pool"
            meta[pool] = {"type": "bb", "name": f"{name}-ssd",
                          "properties": {"capacity": total}}
            kids.append(pool)
            pooled.append((name, total))
    if pooled:
        names = ", ".join(n for n, _ in pooled[:4]) + ("..." if len(pooled) > 4 else "")
        warnings.warn(f"{source}: near-node storage of {len(pooled)} groups "
                      f"({sum(t for _, t in pooled) / 1e12:.3g} TB in {names}) is read as one "
                      "pooled burst buffer: a job is not restricted to its own chassis' "
                      "storage", stacklevel=3)
    if n_unused:
        warnings.warn(f"{source}: {n_unused} node-local ssd vertices ({unused / 1e12:.3g} TB) "
                      "are not used (bbopt reads local SSDs from Platform.node_ssd)",
                      stacklevel=3)


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
        if kind in BB_TYPES:
            meta["properties"] = {"capacity": float(tree._graph.nodes[label].get("capacity", 0))}
        nodes.append({"id": str(i), "metadata": meta})
        if parent >= 0:
            edges.append({"source": str(parent), "target": str(i),
                          "metadata": {"subsystem": "containment",
                                       "name": {"containment": "contains"}}})
        if kind in (NODE, *BB_TYPES) and math.isfinite(bw):
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
    import networkx as nx

    try:
        graph = data["graph"]
        jnodes = graph["nodes"]
        jedges = graph.get("edges", [])
    except (KeyError, TypeError):
        raise InputError("JGF needs graph.nodes and graph.edges", source=source,
                         field="graph") from None
    if not isinstance(jnodes, list):
        raise InputError("must be a list of vertices", source=source, line="$.graph.nodes")
    meta: dict[str, Mapping[str, Any]] = {}
    for k, n in enumerate(jnodes):
        if not isinstance(n, Mapping) or "id" not in n:
            raise InputError("a vertex needs an id", source=source, line=f"$.graph.nodes[{k}]")
        m = n.get("metadata", {}) or {}
        if not isinstance(m, Mapping):
            raise InputError("must be an object", source=source, line=f"$.graph.nodes[{k}]",
                             field="metadata")
        if str(n["id"]) in meta:
            raise InputError(f"vertex id {n['id']!r} appears twice", source=source,
                             line=f"$.graph.nodes[{k}]", field="id")
        meta[str(n["id"])] = m
    children: dict[str, list[str]] = {}
    parent_edge: dict[str, int] = {}
    if not isinstance(jedges, list):
        raise InputError("must be a list of edges", source=source, line="$.graph.edges")
    for k, e in enumerate(jedges):
        where = f"$.graph.edges[{k}]"
        if not isinstance(e, Mapping):
            raise InputError(f"an edge must be an object with source and target, got {e!r}",
                             source=source, line=where)
        em = e.get("metadata", {}) or {}
        if not isinstance(em, Mapping):
            raise InputError("must be an object", source=source, line=where, field="metadata")
        sub = em.get("subsystem")
        if sub is None and isinstance(em.get("name"), Mapping):
            sub = next(iter(em["name"]), None)
        if sub not in (None, "containment"):
            continue
        for key in ("source", "target"):
            if key not in e:
                raise InputError("is missing", source=source, line=where, field=key)
        s, t = str(e.get("source")), str(e.get("target"))
        if s not in meta or t not in meta:
            raise InputError(f"edge {s} -> {t} names an unknown vertex", source=source,
                             line=where)
        if s == t:
            raise InputError(f"vertex {s} contains itself (a self-loop)", source=source,
                             line=where)
        if t in parent_edge:
            raise InputError(f"vertex {t} has a second containment parent (first in "
                             f"$.graph.edges[{parent_edge[t]}]); containment is a tree",
                             source=source, line=where)
        parent_edge[t] = k
        children.setdefault(s, []).append(t)
    has_parent = set(parent_edge)
    roots = [v for v in meta if v not in has_parent]
    if len(roots) != 1:
        raise InputError(f"the containment graph must have one root, found {len(roots)}"
                         + (" (every vertex lies on a cycle)" if not roots else ""),
                         source=source, line="$.graph.edges")
    # Every vertex has at most one parent; one not reachable from the root lies below a cycle.
    reached = {roots[0]}
    todo = [roots[0]]
    while todo:
        for c in children.get(todo.pop(), ()):
            if c not in reached:
                reached.add(c)
                todo.append(c)
    if len(reached) != len(meta):
        lost = sorted(v for v in meta if v not in reached)
        raise InputError(f"vertices {', '.join(lost[:5])}{' ...' if len(lost) > 5 else ''} "
                         "form a containment cycle, not connected to the root",
                         source=source, line="$.graph.edges")

    def kind_of(v: str) -> str:
        return str(meta[v].get("type", "switch"))

    _near_node_storage(meta, children, source)

    def rate_of(m: Mapping[str, Any], where: str) -> float | None:
        unit = str(m.get("unit", "") or "").strip().lower().replace(" ", "")
        if unit not in RATE_UNITS:
            return None
        size = m.get("size", 0)
        if (not isinstance(size, int | float) or isinstance(size, bool) or not size > 0
                or not math.isfinite(size)):
            raise InputError(f"bandwidth pool size must be positive, got {size!r}",
                             source=source, line=where, field="size")
        return float(size) * RATE_UNITS[unit]

    g = nx.DiGraph()

    def order_key(v: str) -> tuple:
        m = meta[v]
        return (m.get("uniq_id", m.get("id", 0)) if isinstance(m.get("uniq_id", m.get("id", 0)),
                                                                 int | float) else 0, v)

    stack = [roots[0]]
    seen: set[str] = set()
    while stack:
        v = stack.pop()
        if v in seen:  # cannot happen after the checks above; a guard against any loop
            raise InputError(f"vertex {v} is reached twice", source=source, line="$.graph.edges")
        seen.add(v)
        m = meta[v]
        kind = kind_of(v)
        bw = rate_of(m, f"vertex {v}") if kind not in BW_TYPES else None
        kids = sorted(children.get(v, []), key=order_key)
        cap = 0.0
        for c in kids:
            ck = kind_of(c)
            if ck in BW_TYPES:
                r = rate_of(meta[c], f"vertex {c}")
                if r is None:
                    raise InputError("a bandwidth pool needs a rate unit such as 'GB/s'",
                                     source=source, line=f"vertex {c}", field="unit")
                bw = r
            elif ck == "ssd" and kind in BB_TYPES:
                cap += _bytes_of(meta[c].get("size", 0), source, f"vertex {c}", "size")
        if kind in BB_TYPES:
            props = m.get("properties") or {}
            if not isinstance(props, Mapping):
                raise InputError("must be an object", source=source, line=f"vertex {v}",
                                 field="properties")
            cap = _bytes_of(props.get("capacity", cap), source, f"vertex {v}", "capacity")
        attrs: dict[str, Any] = {"type": kind, "bandwidth": bw if bw is not None else INF}
        if kind in BB_TYPES:
            attrs["capacity"] = cap
        g.add_node(v, **attrs)
        if kind == NODE:
            continue  # sockets, cores, memory and GPUs take no part in the I/O tree
        for c in reversed(kids):
            if kind_of(c) in BW_TYPES or kind_of(c) == "ssd":
                continue
            g.add_edge(v, c)
            stack.append(c)
    # Keep the JGF vertex order stable: rebuild with children in order_key order.
    ordered = nx.DiGraph()
    name = str((graph.get("metadata") or {}).get("name", "jgf"))

    todo: list[tuple[str | None, str]] = [(None, roots[0])]
    while todo:  # pre-order, children in order_key order, without recursion
        parent, v = todo.pop()
        ordered.add_node(v, **g.nodes[v])
        if parent is not None:
            ordered.add_edge(parent, v)
        todo.extend((v, c) for c in reversed(sorted(g.successors(v), key=order_key)))
    relabel = {v: str(meta[v].get("name", v)) for v in ordered.nodes}
    if len(set(relabel.values())) == len(relabel):
        ordered = nx.relabel_nodes(ordered, relabel, copy=True)
    return IOTree(ordered, name=name)




def _bytes_of(value: Any, source: str, where: str, field: str) -> float:
    """A capacity in bytes (a number or ``"40 GB"``), finite and >= 0."""
    try:
        out = parse_bytes(value, field)
    except InputError as exc:
        raise InputError(str(exc).split(": ", 1)[-1], source=source, line=where,
                         field=field) from None
    if not (out >= 0 and math.isfinite(out)):
        raise InputError(f"must be a finite number of bytes >= 0, got {value!r}", source=source,
                         line=where, field=field)
    return out

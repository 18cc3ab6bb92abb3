"""The papers' machines as I/O trees and platforms.

CTS-1 (Herbein et al., HPDC 2016, Section 4.1), Kopanski & Rzadca's dragonfly with 12 BB nodes
(Euro-Par 2021, Section 4.1) and the small example tree of Herbein's Figures 2-3.
"""

from __future__ import annotations

from bbopt.core import GB, Platform
from bbopt.errors import InputError
from bbopt.topology.formats import from_description
from bbopt.topology.tree import BB, INF, NODE, PFS, IOTree


def cts1_topology(underprovision: float = 0.0) -> IOTree:
    """Herbein et al., Section 4.1: CTS-1, 3,888 nodes in 24 scalable units.

    PFS 70 GB/s (perfect provisioning: 18 MB/s x 3,888 nodes) times ``1 - underprovision``;
    a 432 GB/s core switch pool; 24 edge switches of 216 GB/s with 162 nodes each; node links
    are not a bottleneck (the paper gives none).
    """
    if not (0.0 <= underprovision < 1.0):
        raise InputError(f"underprovision must be in [0, 1), got {underprovision!r}",
                         field="underprovision")
    import networkx as nx  # only building a tree needs it

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
    import networkx as nx  # only building a tree needs it

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


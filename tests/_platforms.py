"""One small platform of each kind the engine knows, shared by the tests (as fixtures in
tests/conftest.py) and by the policy conformance checks: BB in one pool, BB on four named nodes
(first fit), the same with the authors' proximity placement (Kopanski & Rzadca, Section 4.1),
node-local SSDs (Fan et al., BBSched), and Herbein et al.'s Figure 2-3 I/O tree."""

from __future__ import annotations

from bbopt import Platform
from bbopt.core import GB, dragonfly_proximity
from bbopt.topology import herbein_example_topology, platform_from_topology

#: 8 nodes, 100 GB of burst buffer in one pool.
POOL = Platform(8, 100 * GB, name="pool")
#: The same burst buffer on four named BB nodes of 25 GB (pieces placed first fit).
NAMED = Platform(8, 100 * GB, name="named", bb_nodes=(25 * GB,) * 4)
#: The named BB nodes placed by proximity: 2 compute nodes per chassis, 2 chassis per group.
PROXIMITY = Platform(8, 100 * GB, name="proximity", bb_nodes=(25 * GB,) * 4,
                     bb_proximity=dragonfly_proximity(8, 2, 2))
#: Node-local SSDs: four nodes of 50 GB and four of 100 GB, beside the pool.
SSD = Platform(8, 100 * GB, name="ssd", node_ssd=(50 * GB,) * 4 + (100 * GB,) * 4)
#: Herbein's Figure 2-3 tree: PFS 1 GB/s, network switch 384 MB/s, two 256 MB/s switches of
#: two nodes each (nodes 0-1 and 2-3); no burst buffer.
IO_TREE = platform_from_topology(herbein_example_topology(), name="io-tree")

PLATFORMS: dict[str, Platform] = {"pool": POOL, "named": NAMED, "proximity": PROXIMITY,
                                  "ssd": SSD, "io-tree": IO_TREE}

"""The I/O hierarchy of a platform: a bandwidth tree from the parallel file system to the nodes.

:mod:`~bbopt.topology.tree` holds the :class:`IOTree` type, :mod:`~bbopt.topology.alloc` the
allocation ledgers, :mod:`~bbopt.topology.formats` the YAML/JSON description and Flux JGF, and
:mod:`~bbopt.topology.machines` the papers' machines (Herbein et al., HPDC 2016, Sections 3.3-3.4
and 4.1; Kopanski & Rzadca, Euro-Par 2021, Section 4.1).
"""

from bbopt.resources import parse_bandwidth
from bbopt.topology.alloc import AllocState, BandwidthLedger
from bbopt.topology.formats import (
    from_description,
    from_jgf,
    platform_from_topology,
    to_jgf,
    topology_from_data,
)
from bbopt.topology.machines import (
    cts1,
    cts1_topology,
    herbein_example_topology,
    kopanski_dragonfly,
    kopanski_dragonfly_topology,
)
from bbopt.topology.tree import IOTree

__all__ = [
    "AllocState", "BandwidthLedger", "IOTree", "cts1", "cts1_topology", "from_description",
    "from_jgf", "herbein_example_topology", "kopanski_dragonfly", "kopanski_dragonfly_topology",
    "parse_bandwidth", "platform_from_topology",
    "to_jgf", "topology_from_data",
]

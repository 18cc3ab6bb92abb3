"""Workload generators of the five papers, one module per paper.

- :mod:`.kopanski` -- log-normal BB per processor and the phased job model (Kopanski & Rzadca,
  Euro-Par 2021, Section 4.1);
- :mod:`.bbsched` -- BB scenarios S1-S4 and local-SSD scenarios S5-S7 (Fan et al., HPDC 2019,
  Sections 4.1 and 5);
- :mod:`.capability` -- a Theta-like capability-computing workload (4,392 nodes, jobs of 128
  nodes and more, Lublin-Feitelson sizes and runtimes) for BBSched's S1-S4 (Fan et al., Table 2);
- :mod:`.herbein` -- user-arrival workload model with 18 MB/s per node (Herbein et al., HPDC 2016,
  Section 4.2);
- :mod:`.jeannot` -- periodic applications, Mira-based and Uniform protocols, BiNormal / Normal
  I/O profiles and the I/O load alpha of equation (2) (Jeannot, Pallez & Vidal, IJHPCA 2023);
- :mod:`.omfs` -- entities with entitlements, preemptable and checkpointable jobs (Zvi & Oren).

Every generator takes an explicit seed (an int or a ``numpy.random.Generator``) and returns new
:class:`~bbopt.core.Job` objects; the same seed gives the same jobs. Per-job model data that the
scheduling core does not read goes into ``Job.extra`` under a documented key, in SI units:

- ``extra["phases"]`` -- Kopanski's phased job (see :func:`.kopanski.with_phases`);
- ``extra["io"]`` -- a periodic I/O application (see :mod:`.jeannot`);
- ``extra["staging"]`` -- stage-in / run / stage-out volumes (BBSimulator SWF variant);
- ``extra["cores"]`` -- cores requested (Herbein's model);
- ``extra["original_user"]`` -- the trace's user before entity assignment (OMFS);
- ``extra["capability"]`` -- the runtime branch drawn (``"short"`` / ``"long"``).
"""

from __future__ import annotations

import numpy as np


def rng_of(seed: int | np.random.Generator) -> np.random.Generator:
    """A numpy Generator from a seed or a Generator (used as is)."""
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

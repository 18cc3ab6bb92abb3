"""The one availability structure of bbopt: when is there room for a job, and take it.

Every consumer of resources asks it: the engine's ledger (what is free now), the queue,
conservative and plan policies (earliest start, reservations over time) and the models that
reserve. Its parts:

- :mod:`bbopt.planner.profile`: the availability profile, free capacity over time for several
  dimensions (spans reserved and released as jobs start, end and move; earliest-fit queries;
  cheap copies for search), after Fluxion's planner (flux-sched, ``resource/planner``) and the
  profiles of Kopanski & Rzadca, Section 3.2;
- :mod:`bbopt.planner.scans`: its two-dimensional (nodes, BB) scans, the hot path;
- :mod:`bbopt.planner.bb`: how burst buffer is placed (one pool, named BB nodes first fit, the
  authors' proximity placement), a strategy chosen once from the platform;
- :class:`Planner`: a platform's nodes, BB (through its placement), node-local SSD and node ids
  over time, as policies plan on them (:mod:`bbopt.planner.plan`).
- :mod:`bbopt.planner.links`: link bandwidth on the platform's I/O tree, the planner's dimension
  for the policies that plan it (``Planner.of(state, links=True)``; Herbein et al., HPDC 2016,
  Section 3.4).
"""

from bbopt.planner.bb import BBPlacement, bb_placement
from bbopt.planner.plan import Planner
from bbopt.planner.profile import (
    OverbookedError,
    Profile,
    Release,
    first_fit_time,
    profile_of,
)
from bbopt.planner.scans import earlier_fit2, earliest_fit2

__all__ = ["BBPlacement", "OverbookedError", "Planner", "Profile", "Release", "bb_placement",
           "earlier_fit2", "earliest_fit2", "first_fit_time", "profile_of"]

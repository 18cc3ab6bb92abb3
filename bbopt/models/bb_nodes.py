"""The former home of the BB-node placement rule, kept as an import path: the rule lives in
:mod:`bbopt.planner.pieces` (Kopanski & Rzadca, Euro-Par 2021, Section 4.1). New code imports
it from there, or asks the planner's placement strategy (:mod:`bbopt.planner.bb`)."""

from bbopt.planner.pieces import (  # noqa: F401
    BBNodeSpace,
    Pieces,
    bb_node_space,
    bb_node_tolerance,
    contiguous_nodes,
    first_fit_pieces,
    first_fit_runs,
    free_compute_nodes,
    place_pieces,
    proximity_pieces,
    running_pieces,
)

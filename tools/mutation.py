"""Mutation testing of the modules that hold promised scheduling rules, one module at a time.

Runs mutmut 3 on one module with only the tests that check that module's rules (the map below),
so a change to the ledger or the metrics is scored in seconds to minutes, not with the whole
suite. With no module named, the modules changed since ``main`` (``git diff --name-only
main...``) that have an entry below are scored. Each run prints killed/total per module and the
surviving mutants (``mutmut show NAME`` prints one); see docs/testing.md for the scores and the
survivors argued equivalent.

    nice python tools/mutation.py bbopt/analysis/metrics.py
    nice python tools/mutation.py            # the changed modules
    python tools/mutation.py --list [MODULE...]  # the modules and their tests
    nice python tools/mutation.py bbopt/analysis/store.py --tests tests/analysis/test_store.py
    nice python tools/mutation.py MODULE --tests FILE... --mutants NAME...  # survivors again
    nice python tools/mutation.py MODULE --tests FILE... -k "not every_decision"  # a first pass

mutmut works in ``mutants/`` (a mutated copy of the package; not versioned).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: module -> the tests that check its rules, beyond those found by :func:`tests_for` (every
#: mutant runs the subset of them that reaches the mutated function).
TESTS: dict[str, list[str]] = {
    "bbopt/slurm/replay.py": [
        "tests/slurm/test_replay.py",
        "tests/slurm/test_replay_spec.py",
        "tests/slurm/test_replay_progress.py",
    ],
    "bbopt/slurm/bridge.py": [
        "tests/slurm/test_bridge_decisions.py",
        "tests/slurm/test_bridge_loop.py",
        "tests/slurm/test_site_and_run.py",
        "tests/slurm/test_cli_run_progress.py",
    ],
    "bbopt/slurm/pool.py": ["tests/slurm/test_commands.py", "tests/slurm/test_site_and_run.py"],
    "bbopt/slurm/site.py": ["tests/slurm/test_commands.py", "tests/slurm/test_site_and_run.py"],
    "bbopt/slurm/commands.py": [
        "tests/slurm/test_commands.py",
        "tests/slurm/test_site_and_run.py",
        "tests/slurm/test_bridge_decisions.py",
    ],
    "bbopt/planner/bb.py": [
        "tests/planner/test_bb_placement.py",
        "tests/planner/test_bb_nodes.py",
        "tests/planner/test_pieces.py",
    ],
    "bbopt/planner/pieces.py": [
        "tests/planner/test_pieces.py",
        "tests/planner/test_bb_nodes.py",
        "tests/planner/test_bb_placement.py",
    ],
    "bbopt/workloads/bb.py": ["tests/workloads/test_bb.py", "tests/workloads/test_generators.py"],
    "bbopt/analysis/metrics.py": [
        "tests/analysis/test_metrics.py",
        "tests/analysis/test_metrics_quantiles.py",
        "tests/analysis/test_metrics_decision_quality.py",
        "tests/analysis/test_metrics_counts.py",
    ],
    "bbopt/validation.py": ["tests/test_validation.py"],
    "bbopt/analysis/fairshare_metrics.py": [
        "tests/analysis/test_fairshare_metrics.py",
        "tests/policies/test_fairshare.py",
    ],
    "bbopt/analysis/intervals.py": ["tests/analysis/test_intervals.py"],
    "bbopt/workloads/generators/kopanski.py": [
        "tests/workloads/generators/test_kopanski.py",
        "tests/workloads/test_generators.py",
    ],
    "bbopt/runs.py": [
        "tests/test_runs.py",
        "tests/test_runs_inputs.py",
        "tests/test_runs_defaults.py",
        "tests/test_runs_budget_mode.py",
    ],
    "bbopt/workloads/generators/bbsched.py": [
        "tests/workloads/generators/test_bbsched.py",
        "tests/workloads/test_generators.py",
    ],
    "bbopt/workloads/generators/omfs.py": [
        "tests/workloads/generators/test_omfs.py",
        "tests/workloads/test_generators.py",
    ],
    # (test_generators.py's KTH fit takes seconds: score with -k "not kth", then run the
    # survivors again with it)
    "bbopt/workloads/generators/herbein.py": [
        "tests/workloads/generators/test_herbein.py",
        "tests/workloads/test_generators.py",
    ],
    "bbopt/workloads/generators/jeannot.py": [
        "tests/workloads/generators/test_jeannot.py",
        "tests/workloads/test_generators.py",
    ],
    "bbopt/workloads/generators/catalog.py": [
        "tests/workloads/generators/test_catalog.py",
        "tests/test_limits.py",
        "tests/cli/test_generate.py",
    ],
    "bbopt/simulation/ledger.py": [
        "tests/simulation/test_ledger_nodes.py",
        "tests/simulation/test_ledger_plain_starts.py",
        "tests/simulation/test_ledger.py",
    ],
    # (the engine: its own tests and those of what it drives, whole-trace replays aside)
    "bbopt/simulation/engine.py": [
        "tests/simulation/test_engine.py",
        "tests/simulation/test_engine_shortcuts.py",
        "tests/simulation/test_engine_submission_order.py",
        "tests/simulation/test_queue_blocks.py",
        "tests/simulation/test_checkpoint.py",
        "tests/simulation/test_result_stream.py",
        "tests/planner/test_bb_nodes.py",
        "tests/test_progress.py",
        "tests/gym/test_envs.py",
    ],
    "bbopt/simulation/result.py": [
        "tests/simulation/test_result.py",
        "tests/simulation/test_result_stream.py",
        "tests/simulation/test_engine.py",
    ],
    "bbopt/simulation/io_metrics.py": ["tests/simulation/test_io_metrics.py"],
    "bbopt/simulation/exclusive_io.py": [
        "tests/simulation/test_exclusive_io.py",
        "tests/simulation/test_exclusive_io_fifo.py",
    ],
    "bbopt/policies/eviction_candidates.py": [
        "tests/policies/test_eviction_candidates.py",
        "tests/policies/test_fairshare_budget.py",
        "tests/policies/test_fairshare.py",
    ],
    "bbopt/policies/registry.py": ["tests/policies/test_registry.py", "tests/test_registry.py"],
    "bbopt/workloads/swf.py": [
        "tests/workloads/test_swf.py",
        "tests/workloads/test_swf_bb.py",
        "tests/workloads/test_swf_ints.py",
        "tests/workloads/test_swf_files.py",
        "tests/workloads/test_swf_rules.py",
        "tests/workloads/test_swf_fast_paths.py",
    ],
    "bbopt/workloads/swf_files.py": [
        "tests/workloads/test_swf_files.py",
        "tests/workloads/test_swf.py",
        "tests/workloads/test_swf_bb.py",
        "tests/workloads/test_swf_rules.py",
    ],
    "bbopt/workloads/swf_ints.py": [
        "tests/workloads/test_swf_ints.py",
        "tests/workloads/test_swf_fast_paths.py",
    ],
    "bbopt/workloads/swf_writer.py": [
        "tests/workloads/test_swf_writer.py",
        "tests/workloads/test_swf_bb.py",
    ],
    "bbopt/workloads/batsim.py": [
        "tests/workloads/test_batsim.py",
        "tests/workloads/test_batsim_io_aware.py",
    ],
    "bbopt/analysis/frames.py": ["tests/analysis/test_frames.py"],
    "bbopt/solvers/base.py": [
        "tests/solvers/test_base_budget_modes.py",
        "tests/solvers/test_base_deterministic_budget.py",
        "tests/solvers/test_base.py",
    ],
    "bbopt/analysis/store.py": ["tests/analysis/test_sweep.py", "tests/analysis/test_store.py"],
    "bbopt/planner/profile.py": [
        "tests/planner/test_profile.py",
        "tests/planner/test_profile_merge.py",
        "tests/planner/test_scans_own_reservation.py",
        "tests/planner/test_profile_scans.py",
    ],
    # (modules with a compiled twin: score them with BBOPT_NO_JIT=1, then the functions that
    # only choose or feed the compiled loops without it; docs/testing.md)
    "bbopt/models/plan.py": [
        "tests/models/test_plan.py",
        "tests/models/test_plan_fast_paths.py",
        "tests/models/test_plan_walk.py",
        "tests/models/test_plan_named.py",
        "tests/models/test_plan_proximity.py",
        "tests/solvers/test_plan.py",
        "tests/solvers/test_plan_warm_start.py",
    ],
    # (BBOPT_NO_JIT=1 and -k "not compiled": the compiled twins are scored with models/plan.py)
    "bbopt/models/plan_named.py": [
        "tests/models/test_plan_named.py",
        "tests/models/test_plan_walk.py",
        "tests/models/test_plan_proximity.py",
        "tests/planner/jit/test_named.py",
    ],
    "bbopt/models/plan_walk.py": [
        "tests/models/test_plan_walk.py",
        "tests/models/test_plan_named.py",
        "tests/models/test_plan_fast_paths.py",
        "tests/planner/jit/test_pool.py",
        "tests/planner/jit/test_named.py",
    ],
    # (the plan backends: their own hand tests first, then the comparisons of backends)
    "bbopt/solvers/plan/greedy.py": ["tests/solvers/plan/test_greedy.py",
                                     "tests/solvers/test_plan.py"],
    "bbopt/solvers/plan/exhaustive.py": [
        "tests/solvers/plan/test_exhaustive.py",
        "tests/solvers/test_plan.py",
        "tests/models/test_plan_named.py",
    ],
    "bbopt/solvers/plan/annealing.py": [
        "tests/solvers/plan/test_annealing.py",
        "tests/solvers/test_plan.py",
        "tests/models/test_plan_walk.py",
        "tests/solvers/test_plan_warm_start.py",
    ],
    "bbopt/solvers/plan/cpsat.py": ["tests/solvers/plan/test_cpsat.py",
                                    "tests/solvers/test_plan.py"],
    "bbopt/policies/conservative.py": [
        "tests/policies/test_conservative.py",
        "tests/policies/test_conservative_kept.py",
        "tests/policies/test_conservative_schedules.py",
    ],
    # (with BBOPT_NO_JIT=1 only replan runs: score NamedArrays again with numba)
    "bbopt/policies/conservative_named.py": [
        "tests/policies/test_conservative_named.py",
        "tests/policies/test_conservative.py",
        "tests/policies/test_conservative_schedules.py",
    ],
    "bbopt/policies/plan.py": [
        "tests/policies/test_plan_options.py",
        "tests/policies/test_plan.py",
        "tests/policies/test_plan_audit.py",
        "tests/solvers/test_plan_warm_start.py",
        "tests/models/test_plan_named.py",
        "tests/models/test_plan_proximity.py",
    ],
    "bbopt/planner/scans.py": [
        "tests/planner/test_profile_scans.py",
        "tests/planner/test_scans_own_reservation.py",
    ],
    "bbopt/planner/plan.py": [
        "tests/planner/test_plan.py",
        "tests/planner/test_plan_edges.py",
        "tests/planner/test_bb_placement.py",
        "tests/planner/test_pieces.py",
        "tests/planner/test_bb_node_ids.py",
        "tests/planner/test_fast_path.py",
        "tests/planner/test_links.py",
    ],
    "bbopt/policies/queue.py": [
        "tests/policies/test_queue.py",
        "tests/policies/test_registry_kopanski_example.py",
        "tests/policies/test_registry_properties.py",
        "tests/simulation/test_queue_blocks.py",
    ],
    "bbopt/solvers/scalarize.py": [
        "tests/solvers/test_scalarize.py",
        "tests/solvers/test_scalarize_objectives.py",
        "tests/solvers/window/test_forms_fronts.py",
        "tests/solvers/window/test_subset_sums.py",
        "tests/models/test_window.py",
        "tests/models/test_window_evaluation.py",
        "tests/models/test_io_window.py",
        "tests/solvers/test_scip.py",
    ],
    "bbopt/models/preemption.py": [
        "tests/models/test_preemption.py",
        "tests/models/test_preemption_victims.py",
        "tests/solvers/test_preemption_bb_bytes.py",
    ],
    "bbopt/policies/io_window.py": [
        "tests/policies/test_io_window.py",
        "tests/models/test_io_window.py",
        "tests/models/test_io_window_evaluation.py",
        "tests/conformance/test_checks.py",
        "tests/test_runs_budget_mode.py",
    ],
    "bbopt/policies/io.py": [
        "tests/policies/test_io.py",
        "tests/policies/test_io_as_queue_rules.py",
        "tests/conformance/test_checks.py",
    ],
    "bbopt/planner/links.py": [
        "tests/planner/test_links.py",
        "tests/policies/test_io_as_queue_rules.py",
    ],
    "bbopt/models/window.py": [
        "tests/models/test_window_evaluation.py",
        "tests/models/test_window.py",
        "tests/policies/test_window_common.py",
        "tests/solvers/window/test_forms_fronts.py",
        "tests/solvers/window/test_subset_sums.py",
    ],
    "bbopt/models/packs.py": [
        "tests/models/test_packs_evaluation.py",
        "tests/models/test_packs.py",
        "tests/models/test_packs_builders.py",
    ],
    "bbopt/models/io_window.py": [
        "tests/models/test_io_window_evaluation.py",
        "tests/models/test_io_window.py",
    ],
    # (the I/O tree and its readers: the topology's own tests; tests/test_loading.py's deep JGF
    # chain and engine states aside with -k, docs/testing.md)
    "bbopt/topology/formats.py": [
        "tests/topology/test_formats.py",
        "tests/topology/test_formats_jgf_storage.py",
        "tests/topology/test_formats_description_keys.py",
    ],
    "bbopt/topology/tree.py": [
        "tests/topology/test_tree.py",
        "tests/topology/test_alloc.py",
        "tests/topology/test_machines.py",
    ],
    "bbopt/topology/alloc.py": ["tests/topology/test_alloc.py"],
    "bbopt/topology/machines.py": ["tests/topology/test_machines.py"],
    "bbopt/planner/node_ids.py": [
        "tests/planner/test_node_ids.py",
        "tests/planner/test_bb_node_ids.py",
    ],
    # (every test names the core: score it with its own files, -k "not no_policy_starts and
    # not engine_plans" for a first pass)
    "bbopt/core.py": ["tests/test_core.py", "tests/test_core_overdue.py"],
    "bbopt/planner/lists.py": ["tests/planner/test_lists.py"],
    # (with numba: NamedArrays and NamedWalk need the compiled kernels)
    "bbopt/planner/named.py": [
        "tests/planner/jit/test_named.py",
        "tests/policies/test_conservative_named.py",
    ],
    "bbopt/planner/fast_path.py": ["tests/planner/test_fast_path.py"],
    # (numba on: the kernels' Python side; a function the package runs only at import, such as
    # the kernel decorator or quick_init, is scored by tests that call it themselves)
    "bbopt/planner/jit/arrays.py": ["tests/planner/jit/test_arrays.py",
                                    "tests/planner/jit/test_compression.py"],
    "bbopt/planner/jit/cache.py": ["tests/planner/jit/test_cache.py"],
    # (the compression's decisions are also checked through conservative-bb's hand schedules)
    "bbopt/planner/jit/compression.py": ["tests/planner/jit/test_compression.py",
                                         "tests/planner/jit/test_compression_loop.py",
                                         "tests/planner/jit/test_arrays.py",
                                         "tests/policies/test_conservative_schedules.py"],
    # (kernels, numba off, see KERNEL_MODULES: each kernel called alone and the fixed-seed
    # twins first, -k leaving out the properties and the long replay; those for the survivors)
    "bbopt/planner/jit/named_conservative.py": [
        "tests/planner/jit/test_named_conservative.py",
        "tests/policies/test_conservative_named.py",
        "tests/planner/jit/test_named.py",
    ],
    "bbopt/planner/jit/named.py": ["tests/planner/jit/test_named.py",
                                   "tests/planner/jit/test_named_walk.py",
                                   "tests/planner/jit/test_named_place.py",
                                   "tests/planner/jit/test_named_search.py"],
    "bbopt/resources.py": ["tests/test_resources.py", "tests/test_limits.py"],
    "bbopt/quick_init.py": ["tests/test_quick_init.py"],
    "bbopt/gc_pause.py": ["tests/test_gc_pause.py"],
    "bbopt/policies/fairshare.py": [
        "tests/policies/test_fairshare.py",
        "tests/policies/test_fairshare_baselines.py",
        "tests/policies/test_fairshare_budget.py",
        "tests/policies/test_fairshare_properties.py",
    ],
    "bbopt/policies/fairshare_pass.py": [
        "tests/policies/test_fairshare_pass.py",
        "tests/policies/test_fairshare.py",
        "tests/policies/test_fairshare_baselines.py",
    ],
    "bbopt/policies/window.py": [
        "tests/policies/test_window.py",
        "tests/policies/test_window_common.py",
        "tests/policies/test_window_select.py",
    ],
    # (the window backends: their own tests first; tests/models/test_window.py solves the
    # model's windows with every backend, seconds per mutant: for the survivors)
    "bbopt/solvers/window/forms.py": [
        "tests/solvers/window/test_forms_drivers.py",
        "tests/solvers/window/test_forms_fronts.py",
        "tests/solvers/window/test_subset_sums.py",
        "tests/solvers/test_scalarize.py",
    ],
    "bbopt/solvers/window/subset_sums.py": [
        "tests/solvers/window/test_subset_sums.py",
        "tests/solvers/window/test_forms_fronts.py",
        "tests/solvers/window/test_forms_drivers.py",
    ],
    # (the exact backends' solvers against enumeration, and what each hands its solver)
    "bbopt/solvers/window/cpsat.py": [
        "tests/solvers/window/test_cpsat.py",
        "tests/solvers/test_scip.py",
    ],
    "bbopt/solvers/window/milp.py": ["tests/solvers/window/test_milp.py"],
    "bbopt/solvers/window/nsga2.py": [
        "tests/solvers/window/test_nsga2.py",
        "tests/solvers/window/test_nsga2_mating.py",
    ],
    "bbopt/solvers/window/highs.py": ["tests/solvers/window/test_highs.py"],
    "bbopt/solvers/scip.py": [
        "tests/solvers/window/test_scip.py",
        "tests/solvers/preemption/test_scip.py",
        "tests/solvers/packs/test_scip.py",
        "tests/solvers/test_scip.py",
    ],
    "bbopt/solvers/window/scip.py": [
        "tests/solvers/window/test_scip.py",
        "tests/solvers/test_scip.py",
    ],
    "bbopt/solvers/window/greedy.py": [
        "tests/solvers/window/test_greedy.py",
        "tests/policies/test_window_select.py",
    ],
    "bbopt/solvers/window/exhaustive.py": [
        "tests/solvers/window/test_exhaustive.py",
        "tests/models/test_window.py",
    ],
    "bbopt/policies/window_common.py": [
        "tests/policies/test_window_common.py",
        "tests/policies/test_window.py",
    ],
    "bbopt/policies/packs.py": [
        "tests/policies/test_packs.py",
        "tests/policies/test_packs_racks.py",
        "tests/policies/test_packs_budget.py",
    ],
    "bbopt/solvers/packs/_stages.py": [
        "tests/solvers/test_packs_offered.py",
        "tests/models/test_packs.py",
        "tests/policies/test_packs_budget.py",
    ],
    "bbopt/solvers/packs/greedy.py": [
        "tests/solvers/packs/test_greedy.py",
        "tests/models/test_packs.py",
    ],
    "bbopt/solvers/packs/exhaustive.py": [
        "tests/solvers/packs/test_exhaustive.py",
        "tests/models/test_packs.py",
        "tests/models/test_packs_builders.py",
    ],
    "bbopt/simulation/pack_metrics.py": ["tests/simulation/test_pack_metrics.py"],
    # (the victim-choice backends: each module's own tests and those every backend runs)
    "bbopt/solvers/preemption/greedy.py": [
        "tests/solvers/preemption/test_greedy.py",
        "tests/solvers/test_preemption.py",
    ],
    "bbopt/solvers/preemption/exhaustive.py": [
        "tests/solvers/preemption/test_exhaustive.py",
        "tests/solvers/test_preemption.py",
        "tests/solvers/test_preemption_bb_bytes.py",
    ],
    "bbopt/solvers/preemption/milp.py": [
        "tests/solvers/preemption/test_milp.py",
        "tests/solvers/test_preemption.py",
        "tests/solvers/test_preemption_bb_bytes.py",
    ],
    "bbopt/solvers/preemption/cpsat.py": [
        "tests/solvers/preemption/test_cpsat.py",
        "tests/solvers/test_preemption.py",
        "tests/solvers/test_preemption_bb_bytes.py",
    ],
    "bbopt/solvers/preemption/scip.py": [
        "tests/solvers/preemption/test_scip.py",
        "tests/solvers/preemption/test_milp.py",
        "tests/solvers/test_preemption.py",
        "tests/solvers/test_preemption_bb_bytes.py",
    ],
    # (the select-and-place backends; -k "not never_overallocates and not simulation_runs"
    # leaves out the property and the whole simulation of tests/models/test_io_window.py)
    "bbopt/solvers/io_window/forms.py": [
        "tests/solvers/io_window/test_cpsat.py",
        "tests/models/test_io_window.py",
        "tests/policies/test_io_window.py",
    ],
    "bbopt/solvers/io_window/exhaustive.py": [
        "tests/solvers/io_window/test_exhaustive.py",
        "tests/solvers/io_window/test_cpsat.py",
        "tests/models/test_io_window.py",
    ],
    "bbopt/solvers/io_window/cpsat.py": [
        "tests/solvers/io_window/test_cpsat.py",
        "tests/models/test_io_window.py",
    ],
    "bbopt/solvers/io_window/scip.py": [
        "tests/solvers/io_window/test_cpsat.py",
        "tests/models/test_io_window.py",
    ],
    # (the exact pack builders: each mutant solves; their exact-against-exhaustive properties
    # for the survivors)
    "bbopt/solvers/packs/cpsat.py": [
        "tests/solvers/packs/test_cpsat.py",
        "tests/models/test_packs.py",
        "tests/models/test_packs_builders.py",
        "tests/solvers/test_packs_offered.py",
    ],
    "bbopt/solvers/packs/milp.py": [
        "tests/solvers/packs/test_milp.py",
        "tests/models/test_packs.py",
        "tests/models/test_packs_builders.py",
        "tests/solvers/test_packs_offered.py",
    ],
    "bbopt/solvers/packs/scip.py": [
        "tests/solvers/packs/test_scip.py",
        "tests/models/test_packs.py",
        "tests/models/test_packs_builders.py",
        "tests/solvers/test_scip.py",
    ],
    # (the sweep: score each with these first, its runs' sweeps only for the survivors)
    "bbopt/analysis/sweep_spec.py": [
        "tests/analysis/test_sweep_spec.py",
        "tests/analysis/test_sweep_spec_refusals.py",
        "tests/analysis/test_sweep_spec_checks.py",
    ],
    "bbopt/analysis/sweep_inputs.py": ["tests/analysis/test_sweep_inputs.py"],
    "bbopt/analysis/sweep_schedule.py": ["tests/analysis/test_sweep_schedule.py"],
    "bbopt/analysis/sweep.py": [
        "tests/analysis/test_sweep.py",
        "tests/analysis/test_sweep_tasks.py",
        "tests/analysis/test_sweep_executors.py",
        "tests/analysis/test_sweep_schedule.py",
        "tests/analysis/test_sweep_shares.py",
        "tests/analysis/test_sweep_foreign_shares.py",
        "tests/analysis/test_sweep_platforms.py",
    ],
    "bbopt/analysis/workers.py": [
        "tests/analysis/test_sweep_workers.py",
        "tests/analysis/test_workers_progress.py",
    ],
    # (the input readers and units: each module's own tests first, for a first pass; the many
    # files that merely load a workload or a platform through them only for the survivors)
    "bbopt/units.py": ["tests/test_units.py", "tests/test_units_encoding.py"],
    "bbopt/schema.py": ["tests/test_schema.py", "tests/test_limits.py"],
    "bbopt/option_help.py": ["tests/test_option_help.py"],
    "bbopt/loading.py": ["tests/test_loading.py", "tests/test_loading_platforms.py"],
    "bbopt/workloads/shares.py": ["tests/workloads/test_shares.py"],
    "bbopt/workloads/archive.py": ["tests/workloads/test_archive.py"],
    "bbopt/workloads/columns.py": ["tests/workloads/test_columns.py"],
    "bbopt/interop/batsim/protocol.py": ["tests/interop/batsim/test_protocol.py",
                                         "tests/interop/test_batsim.py"],
}


#: Tests that need what mutmut's mutated copy does not hold: bbopt run in a fresh interpreter
#: from an installed plug-in package (mutmut's trampolines cannot record there), the site's
#: configuration (``mkdocs.yml``). They are left out of every run.
OUTSIDE = [
    "tests/test_registry.py::test_an_installed_plugin_package_is_used_by_compare_and_a_sweep",
    "tests/docs/test_pages.py::test_mkdocs_build_strict",
    # (``bbopt slurm run`` in a fresh interpreter, which mutmut's copy cannot start)
    "tests/slurm/test_site_and_run.py::test_run_without_a_reachable_slurm_fails_fast",
    "tests/slurm/test_site_and_run.py::test_run_with_no_slurm_installed_says_so",
]


#: module -> tests in its test files that check another module's rules and reach this one only
#: through the engine (the I/O-aware policies' properties, which simulate whole workloads for
#: every mutant of the fluid model): deselected from this module's runs.
ASIDE: dict[str, list[str]] = {
    "bbopt/simulation/io_model.py": [
        "tests/policies/test_io.py::test_io_aware_policies_never_over_allocate_a_link",
        "tests/policies/test_io.py::test_io_easy_backfills_without_delaying_the_head",
        "tests/topology/test_tree.py::test_select_is_herbeins_node_by_node_greedy",
    ],
    # (the plan model solved at every decision of a whole workload: a minute per mutant)
    "bbopt/planner/plan.py": [
        "tests/planner/test_pieces.py::test_no_start_is_refused_and_every_job_runs[plan-2]",
    ],
}


def tests_for(module: str) -> list[str]:
    """The test files of ``module`` (``bbopt/x/y.py``): those mapped in :data:`TESTS` that exist,
    and every test file that names the module (``bbopt.x.y`` or ``from bbopt.x import y``)."""
    dotted = module.removesuffix(".py").replace("/", ".")
    parent, _, name = dotted.rpartition(".")
    found = {p for p in TESTS.get(module, []) if (ROOT / p).exists()}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        text = path.read_text(encoding="utf-8")
        if re.search(rf"\b{re.escape(dotted)}\b", text) or re.search(
                rf"from {re.escape(parent)} import [^\n]*\b{name}\b", text):
            found.add(str(path.relative_to(ROOT)))
    return sorted(found)


def changed_modules(base: str = "main") -> list[str]:
    """The package's modules changed since the merge base with ``base``."""
    out = subprocess.run(
        ["git", "diff", "--name-only", f"{base}..."],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout.split()
    return [m for m in out if m.startswith("bbopt/") and m.endswith(".py")
            and (ROOT / m).exists() and tests_for(m)]


#: The compiled kernels' modules: every function there is ``@kernel()`` (numba's ``njit``), which
#: mutmut leaves alone (it does not mutate a decorated function). They are scored with numba's
#: compilation off (``NUMBA_DISABLE_JIT=1``: the kernels run as the Python they are written in)
#: and mutmut told to mutate a function decorated with ``kernel`` only: the tests comparing each
#: kernel with its Python reference (``tests/planner/jit/``) then run on the mutated kernel.
KERNEL_MODULES = ("bbopt/planner/jit/primitives.py", "bbopt/planner/jit/named.py",
                  "bbopt/planner/jit/named_conservative.py", "bbopt/planner/jit/pool.py",
                  "bbopt/planner/jit/compression.py")


def _mutate_kernels() -> None:
    """Have mutmut mutate the functions decorated with ``kernel(...)`` alone (it would skip
    them), with numba's compilation off in this process and the mutants' (see
    :data:`KERNEL_MODULES`). The decorator itself is never mutated."""
    import libcst as cst
    from mutmut.mutation.file_mutation import MutationVisitor

    os.environ["NUMBA_DISABLE_JIT"] = "1"
    skip = MutationVisitor._skip_node_and_children

    def kernel_only(node) -> bool:
        return isinstance(node, cst.FunctionDef) and bool(node.decorators) and all(
            isinstance(d.decorator, cst.Call) and isinstance(d.decorator.func, cst.Name)
            and d.decorator.func.value == "kernel" for d in node.decorators)

    def skip_unless_kernel(self, node) -> bool:
        return skip(self, node.with_changes(decorators=[]) if kernel_only(node) else node)

    MutationVisitor._skip_node_and_children = skip_unless_kernel


def run(module: str, max_children: int, tests: list[str] | None = None,
        mutants: list[str] | None = None, keyword: str | None = None) -> dict[str, int]:
    """Score one module with ``tests`` (default: :func:`tests_for`; only those matching
    pytest's ``-k`` expression ``keyword`` when given), all its mutants or only ``mutants``
    (names); returns the count of mutants per mutmut status."""
    from mutmut import configuration

    tests = tests or tests_for(module)
    if not tests:
        raise SystemExit(f"{module}: no test names it; map its tests in tools/mutation.py (TESTS)")
    copy = ROOT / "mutants" / module
    meta = copy.with_name(copy.name + ".meta")
    if copy.exists() and (not meta.exists() or "__mutmut_" not in copy.read_text()):
        # copied unmutated by a run on another module (after its own run, whose results that
        # copy no longer matches): have mutmut mutate it again
        copy.unlink()
        meta.unlink(missing_ok=True)
    cfg = configuration._load_config()
    if module in KERNEL_MODULES:
        _mutate_kernels()
        # (a mutant that loops for ever is common in a kernel: given up at 3x its tests' time)
        cfg.timeout_multiplier = 3.0
    cfg.only_mutate = [module]
    cfg.pytest_add_cli_args_test_selection = tests + [
        f"--deselect={t}" for t in OUTSIDE + ASIDE.get(module, [])] + (
        ["-k", keyword] if keyword else [])
    configuration._config = cfg
    from mutmut.__main__ import cli

    prefix = module.removesuffix(".py").replace("/", ".")
    with contextlib.suppress(SystemExit):
        cli.main(["run", "--max-children", str(max_children), *(mutants or [f"{prefix}*"])],
                 standalone_mode=False)
    return _score(prefix)


def _score(prefix: str) -> dict[str, int]:
    from mutmut.stats import status_by_exit_code

    counts: dict[str, int] = {}
    for meta in (ROOT / "mutants").rglob("*.meta"):
        data = json.loads(meta.read_text())
        for name, code in data.get("exit_code_by_key", {}).items():
            if not name.startswith(prefix + "."):  # (bbopt.x.window, not bbopt.x.window_common)
                continue
            status = status_by_exit_code[code]
            counts[status] = counts.get(status, 0) + 1
            if status in ("survived", "no tests"):
                print(f"  {status}: {name}")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="e.g. bbopt/analysis/metrics.py")
    parser.add_argument("--base", default="main", help="branch the changes are taken against")
    parser.add_argument("--max-children", type=int, default=1)
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--tests", nargs="+", metavar="FILE",
                        help="score with only these test files (e.g. a module's own fast "
                             "tests, when those naming it take long)")
    parser.add_argument("--mutants", nargs="+", metavar="NAME",
                        help="run only these mutants again (e.g. the survivors, with more tests)")
    parser.add_argument("-k", "--keyword", metavar="EXPR",
                        help="only the tests matching this pytest -k expression (e.g. a first "
                             "pass without a module's slow properties)")
    args = parser.parse_args(argv)
    if args.list:
        for module in args.modules or sorted(TESTS):
            print(module, " ".join(tests_for(module)))
        return 0
    modules = args.modules or changed_modules(args.base)
    for module in modules:
        counts = run(module, args.max_children, args.tests, args.mutants, args.keyword)
        total = sum(counts.values())
        killed = counts.get("killed", 0) + counts.get("timeout", 0)
        print(f"{module}: {killed}/{total} killed ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

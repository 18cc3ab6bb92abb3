"""Every public name and every command of bbopt is exercised by a test that asserts its result.

The public names are the ``__all__`` of ``bbopt`` and of each of its subpackages; the commands
are the leaves of ``bbopt --help`` (``bbopt slurm run``, ``bbopt data list``, ...: a group
such as ``bbopt slurm`` alone only prints its help). The two tables below name, for each, one
test that calls it and asserts what it returns, prints or writes. The checks keep the tables
complete (a new public name or command needs its row) and true: the test named exists, refers
to the name in its code (or runs the command's words), and asserts. They read the tests' source
only, so they cost milliseconds; the tests named run in their own files. Three need a real
Slurm (marked ``slurm``): the local cluster, the replay through it and ``bbopt slurm replay``;
what they do without Slurm is in tests/cli/test_slurm.py and tests/slurm/test_replay_spec.py.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import pkgutil
from pathlib import Path

import pytest

import bbopt

ROOT = Path(__file__).resolve().parent.parent

#: public name -> a test that calls it and asserts its result
NAMES = {
    "bbopt.BboptError":
        "tests/test_api.py::test_every_error_bbopt_raises_on_purpose_is_a_bbopt_error",
    "bbopt.Budget": "tests/solvers/test_base.py::test_a_wall_budget_is_the_budget_itself",
    "bbopt.ClusterState":
        "tests/test_validation.py::test_running_jobs_fill_the_nodes_exactly_but_not_more",
    "bbopt.Decision": "tests/policies/test_plan_audit.py::test_audit_flag_survives_json",
    "bbopt.InputError": "tests/test_schema.py::test_bad_json_names_line",
    "bbopt.InvalidDecision":
        "tests/simulation/test_engine.py::test_over_capacity_decision_is_refused_naming_the_job",
    "bbopt.Job":
        "tests/simulation/test_engine.py::test_a_job_is_killed_at_its_walltime_only_when_it_would_run_longer",
    "bbopt.Platform": "tests/test_core.py::test_the_answer_is_the_count_of_whole_pieces",
    "bbopt.Reservation":
        "tests/policies/test_conservative.py::test_a_start_that_did_not_happen_frees_its_slot",
    "bbopt.Result": "tests/solvers/test_base.py::test_the_gap_is_relative_to_the_bound",
    "bbopt.RunRecord":
        "tests/test_api.py::test_run_returns_a_record_with_its_spec_result_and_metrics",
    "bbopt.RunSpec": "tests/test_runs.py::test_measured_interval_is_recorded_under_one_name",
    "bbopt.RunningJob":
        "tests/test_validation.py::test_running_jobs_fill_the_nodes_exactly_but_not_more",
    "bbopt.SimulationResult": "tests/test_api.py::test_simulate_returns_the_per_job_record",
    "bbopt.SolveStats": "tests/policies/test_plan_audit.py::test_audit_flag_survives_json",
    "bbopt.Start":
        "tests/slurm/test_bridge_decisions.py::test_a_start_is_applied_when_its_nodes_fit_exactly",
    "bbopt.Status": "tests/solvers/test_base.py::test_an_infeasible_model_is_not_given_a_fallback",
    "bbopt.UnknownNameError": "tests/test_schema.py::test_unknown_policy_lists_known",
    "bbopt.available_policies": "tests/policies/test_packs.py::test_policies_are_registered",
    "bbopt.backends_for":
        "tests/solvers/test_base.py::test_the_backends_of_a_model_type_serve_its_subclasses_and_say_their_names",
    "bbopt.decide": "tests/test_schema.py::test_decision_round_trip",
    "bbopt.make_policy":
        "tests/policies/test_plan.py::test_former_option_name_solver_still_chooses_the_backend",
    "bbopt.metrics_frame":
        "tests/analysis/test_figures.py::test_to_pandas_matches_summarize_and_the_csv",
    "bbopt.register":
        "tests/test_registry.py::test_an_incomplete_policy_is_refused_when_it_is_registered",
    "bbopt.run": "tests/test_api.py::test_run_returns_a_record_with_its_spec_result_and_metrics",
    "bbopt.simulate": "tests/test_api.py::test_simulate_returns_the_per_job_record",
    "bbopt.solve":
        "tests/solvers/test_base.py::test_a_backend_without_an_answer_yields_the_fallback",
    "bbopt.summarize":
        "tests/analysis/test_metrics.py::test_utilisation_over_an_interval_shorter_than_a_second",
    "bbopt.to_pandas":
        "tests/analysis/test_figures.py::test_to_pandas_matches_summarize_and_the_csv",
    "bbopt.analysis.per_job":
        "tests/analysis/test_metrics.py::test_per_job_reads_the_result_itself_and_keeps_only_jobs_that_ran",
    "bbopt.analysis.summarize":
        "tests/analysis/test_metrics.py::test_utilisation_over_an_interval_shorter_than_a_second",
    "bbopt.gym.PickJobEnv":
        "tests/gym/test_envs.py::test_masked_in_starts_are_admitted_and_masked_out_do_not_fit",
    "bbopt.gym.RLSchedulerEnv":
        "tests/gym/test_rlscheduler.py::test_features_of_a_slot_and_of_empty_slots",
    "bbopt.gym.WindowEnv":
        "tests/gym/test_envs.py::test_window_subset_starts_in_window_order_while_it_fits",
    "bbopt.planner.BBPlacement":
        "tests/planner/test_bb_placement.py::test_a_pool_places_no_piece_and_is_shared",
    "bbopt.planner.OverbookedError": "tests/planner/test_profile.py::test_overbooking_raises",
    "bbopt.planner.Planner":
        "tests/planner/test_plan.py::test_earliest_is_the_first_start_that_fits_and_reserve_takes_it",
    "bbopt.planner.Profile": "tests/planner/test_profile.py::test_reserve_and_release_round_trip",
    "bbopt.planner.Release":
        "tests/planner/test_profile.py::test_a_release_holds_nodes_bb_and_optionally_its_node_set_and_bandwidth",
    "bbopt.planner.bb_placement":
        "tests/planner/test_bb_placement.py::test_named_bb_nodes_take_one_piece_per_compute_node_first_fit",
    "bbopt.planner.earlier_fit2":
        "tests/planner/test_scans_own_reservation.py::test_skipping_the_own_hold_answers_the_same",
    "bbopt.planner.earliest_fit2":
        "tests/planner/test_profile_scans.py::test_earliest_fit2_on_a_hand_profile",
    "bbopt.planner.first_fit_time":
        "tests/planner/test_profile.py::test_first_fit_time_gives_the_releases_of_one_instant_together",
    "bbopt.planner.profile_of":
        "tests/planner/test_profile.py::test_the_profile_of_a_state_frees_running_jobs_at_start_plus_walltime",
    "bbopt.policies.Policy":
        "tests/test_api.py::test_a_policy_is_anything_with_a_name_io_awareness_and_decide",
    "bbopt.policies.available_policies":
        "tests/policies/test_packs.py::test_policies_are_registered",
    "bbopt.policies.make_policy":
        "tests/policies/test_plan.py::test_former_option_name_solver_still_chooses_the_backend",
    "bbopt.policies.policy_options":
        "tests/test_option_help.py::test_every_option_of_every_policy_has_a_meaning",
    "bbopt.policies.register":
        "tests/test_registry.py::test_an_incomplete_policy_is_refused_when_it_is_registered",
    "bbopt.simulation.SimulationResult":
        "tests/test_api.py::test_simulate_returns_the_per_job_record",
    "bbopt.simulation.simulate":
        "tests/simulation/test_engine.py::test_a_job_is_killed_at_its_walltime_only_when_it_would_run_longer",
    "bbopt.slurm.Bridge":
        "tests/slurm/test_bridge_decisions.py::test_held_jobs_are_the_queue_and_starts_are_applied_nodes_first",
    "bbopt.slurm.LocalSlurm":
        "tests/slurm/test_cluster.py::test_a_directory_too_long_for_slurms_sockets_is_refused_before_anything_starts",
    "bbopt.slurm.SlurmCommands":
        "tests/slurm/test_commands.py::test_the_command_layer_reads_and_acts_on_the_recorded_fake",
    "bbopt.slurm.SlurmError":
        "tests/slurm/test_commands.py::test_an_unreachable_controller_is_a_slurm_error_saying_what_to_check",
    "bbopt.slurm.replay":
        "tests/slurm/test_bridge.py::test_fcfs_bb_starts_the_example_as_the_simulator_does",
    "bbopt.slurm.scale_workload":
        "tests/slurm/test_replay_spec.py::test_the_spec_is_the_first_jobs_scaled_to_the_emulated_nodes",
    "bbopt.slurm.why_unavailable":
        "tests/slurm/test_cluster_availability.py::test_missing_programs_are_named_in_order",
    "bbopt.solvers.Budget": "tests/solvers/test_base.py::test_a_wall_budget_is_the_budget_itself",
    "bbopt.solvers.BudgetExceeded":
        "tests/solvers/test_base.py::test_a_fallbacks_time_is_the_backends_plus_its_own",
    "bbopt.solvers.Result": "tests/solvers/test_base.py::test_the_gap_is_relative_to_the_bound",
    "bbopt.solvers.Solution":
        "tests/policies/test_window_common.py::test_bb_gain_must_exceed_twice_the_node_loss",
    "bbopt.solvers.backends_for":
        "tests/solvers/test_base.py::test_the_backends_of_a_model_type_serve_its_subclasses_and_say_their_names",
    "bbopt.solvers.register_backend":
        "tests/solvers/test_base.py::test_an_unregistered_backend_is_gone_and_the_default_seed_is_0",
    "bbopt.solvers.solve":
        "tests/solvers/test_base.py::test_a_backend_without_an_answer_yields_the_fallback",
    "bbopt.topology.AllocState":
        "tests/topology/test_alloc.py::test_placing_one_by_one_counts_what_each_switch_leaves",
    "bbopt.topology.BandwidthLedger":
        "tests/topology/test_alloc.py::test_the_ledger_charges_up_to_each_vertex_and_refuses_beyond_unchanged",
    "bbopt.topology.IOTree":
        "tests/topology/test_tree.py::test_nodes_are_numbered_depth_first_in_insertion_order",
    "bbopt.topology.cts1": "tests/topology/test_machines.py::test_papers_machines",
    "bbopt.topology.cts1_topology":
        "tests/topology/test_machines.py::test_cts1_is_3888_nodes_under_24_edge_switches",
    "bbopt.topology.from_description":
        "tests/topology/test_formats_description_keys.py::test_a_known_description_is_read",
    "bbopt.topology.from_jgf": "tests/topology/test_formats.py::test_jgf_round_trip",
    "bbopt.topology.herbein_example_topology":
        "tests/topology/test_alloc.py::test_placing_one_by_one_counts_what_each_switch_leaves",
    "bbopt.topology.kopanski_dragonfly": "tests/topology/test_machines.py::test_papers_machines",
    "bbopt.topology.kopanski_dragonfly_topology":
        "tests/topology/test_machines.py::test_the_dragonfly_has_96_compute_nodes_and_a_bb_node_per_chassis",
    "bbopt.topology.parse_bandwidth":
        "tests/test_resources.py::test_bandwidths_with_units_in_bytes_per_second",
    "bbopt.topology.platform_from_topology":
        "tests/models/test_io_window.py::test_joint_placement_beats_herbeins_greedy",
    "bbopt.topology.to_jgf":
        "tests/topology/test_formats.py::test_jgf_is_read_as_jgf_and_round_trips",
    "bbopt.topology.topology_from_data":
        "tests/topology/test_formats.py::test_a_description_is_read_as_a_description",
}

#: command (a leaf of ``bbopt --help``) -> a test that runs it and asserts its output
COMMANDS = {
    "simulate": "tests/cli/test_cli.py::test_simulate_writes_csv",
    "compare": "tests/cli/test_cli.py::test_compare_on_the_embedded_default",
    "decide": "tests/cli/test_cli.py::test_decide_reads_state_json",
    "policies": "tests/cli/test_exit_codes.py::test_python_dash_m_runs_the_command",
    "sweep": "tests/analysis/test_sweep.py::test_cli_sweep_and_collect",
    "report": "tests/cli/test_report.py::test_report_writes_page_tables_and_figures",
    "generate": "tests/cli/test_generate.py::test_sources_write_swf_and_batsim",
    "slurm cluster":
        "tests/cli/test_slurm.py::test_cluster_starts_the_pool_in_licenses_prints_its_conf_and_stops_on_ctrl_c",
    "slurm site-config":
        "tests/slurm/test_cli.py::test_site_config_prints_the_pool_and_writes_the_lua",
    "slurm run": "tests/cli/test_slurm.py::test_run_applies_a_policy_s_starts_to_the_held_jobs",
    "slurm replay": "tests/slurm/test_cli.py::test_replay_under_slurm_backfill_writes_every_job",
    "serve": "tests/interop/test_serve.py::test_stdio_service_answers_lines_until_end_of_input",
    "batsim scheduler": "tests/interop/test_batsim.py::test_cli_loop_back_is_byte_identical",
    "batsim server": "tests/interop/test_batsim.py::test_cli_loop_back_is_byte_identical",
    "bench capture": "tests/cli/test_bench.py::test_capture_writes_the_family_s_instances",
    "bench export": "tests/cli/test_bench.py::test_export_writes_the_integer_form_as_mps_and_lp",
    "bench run": "tests/cli/test_bench.py::test_run_solves_the_grid_into_a_resumable_store",
    "bench report": "tests/cli/test_bench.py::test_report_tables_the_store_s_runs",
    "data list": "tests/workloads/test_archive.py::test_cli_fetch_and_list",
    "data fetch": "tests/workloads/test_archive.py::test_cli_fetch_and_list",
}


def public_names() -> tuple[set[str], set[str]]:
    """``package.name`` for every name in the ``__all__`` of bbopt and of its subpackages, and
    the subpackages that cannot be imported here (an optional dependency missing)."""
    names = {f"bbopt.{n}" for n in bbopt.__all__}
    missing: set[str] = set()
    for info in pkgutil.walk_packages(bbopt.__path__, "bbopt."):
        if not info.ispkg:
            continue
        try:
            package = importlib.import_module(info.name)
        except ImportError:
            missing.add(info.name)
            continue
        names |= {f"{info.name}.{n}" for n in getattr(package, "__all__", ())}
    return names, missing


def commands() -> set[str]:
    """The leaf commands of ``bbopt --help``, as their words joined by spaces."""
    from bbopt.cli import _parser

    found: set[str] = set()

    def walk(parser: argparse.ArgumentParser, prefix: tuple[str, ...]) -> None:
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs and prefix:
            found.add(" ".join(prefix))
        for action in subs:
            for name, sub in action.choices.items():
                walk(sub, (*prefix, name))

    walk(_parser(), ())
    return found


@functools.cache
def _module(path: str) -> tuple[str, dict[str, ast.FunctionDef]]:
    source = (ROOT / path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    return source, {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}


def _code(node_id: str) -> list[ast.FunctionDef]:
    """The test function named by ``path::name`` and the module-level helpers it calls."""
    path, _, name = node_id.partition("::")
    _, functions = _module(path)
    assert name in functions, f"{node_id}: no such test"
    test = functions[name]
    called = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    return [test] + [functions[c] for c in sorted(called) if c in functions and c != name]


def _asserts(code: list[ast.FunctionDef]) -> bool:
    for node in (n for f in code for n in ast.walk(f)):
        if isinstance(node, ast.Assert):
            return True
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "raises":
            return True
    return False


def test_every_public_name_has_a_test():
    names, missing = public_names()
    assert sorted(names - set(NAMES)) == []
    assert sorted(n for n in set(NAMES) - names if n.rpartition(".")[0] not in missing) == []


def test_every_command_has_a_test():
    assert sorted(commands() - set(COMMANDS)) == []
    assert sorted(set(COMMANDS) - commands()) == []


@pytest.mark.parametrize("name", sorted(NAMES))
def test_the_test_of_a_name_refers_to_it_and_asserts(name):
    code = _code(NAMES[name])
    short = name.rpartition(".")[2]
    used = {n.id for f in code for n in ast.walk(f) if isinstance(n, ast.Name)}
    used |= {n.attr for f in code for n in ast.walk(f) if isinstance(n, ast.Attribute)}
    assert short in used, f"{NAMES[name]} does not refer to {short}"
    assert _asserts(code), f"{NAMES[name]} asserts nothing"


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_test_of_a_command_runs_it_and_asserts(command):
    code = _code(COMMANDS[command])
    words = command.split()
    runs = False
    for node in (n for f in code for n in ast.walk(f)):
        elts = node.elts if isinstance(node, ast.List | ast.Tuple) else \
            node.args if isinstance(node, ast.Call) else None
        if elts is not None:  # ["slurm", "run", ...] or a helper's run("decide", ...)
            texts = [e.value if isinstance(e, ast.Constant) else None for e in elts]
            runs |= any(texts[i:i + len(words)] == words for i in range(len(texts)))
    assert runs, f"{COMMANDS[command]} does not run `bbopt {command}`"
    assert _asserts(code), f"{COMMANDS[command]} asserts nothing"

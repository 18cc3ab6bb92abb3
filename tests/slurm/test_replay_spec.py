"""A replay through Slurm is described by a run specification like any run: the same option,
unit and budget-mode vocabulary, checked before a cluster starts, and the same metric names."""

from __future__ import annotations

import importlib

import pytest

from bbopt.cli import main
from bbopt.errors import InputError
from bbopt.runs import RunSpec, load, run
from bbopt.slurm.replay import replay_spec, run_replay, scale_workload

replay_module = importlib.import_module("bbopt.slurm.replay")  # (bbopt.slurm.replay: a function)


def test_the_spec_is_the_first_jobs_scaled_to_the_emulated_nodes():
    spec = replay_spec(RunSpec(first=40, seed=3, policy="plan-2", options={"budget": "2min"}),
                       nodes=8, speedup=600.0)
    raw = sorted(load(RunSpec(first=40, seed=3, bb="none"))[0].workload, key=lambda j: j.submit)
    widest = max(j.nodes for j in raw)
    scaled = scale_workload(raw, 600.0, nodes=8, trace_nodes=widest)
    assert [(j.id, j.submit, j.walltime, j.nodes) for j in spec.workload] == \
        [(j.id, j.submit, j.walltime, j.nodes) for j in scaled]
    assert spec.workload[0].submit == 0.0 and max(j.nodes for j in spec.workload) <= 8
    assert any(j.bb > 0 for j in spec.workload)  # Kopanski's log-normal draw
    assert (spec.platform.nodes, spec.platform.bb) == (8, 40e9)
    # the options as the bridge gets them: the run's budget mode added (the bridge's policy
    # reads the units as every policy does)
    assert spec.options == {"budget": "2min", "budget_mode": "deterministic"}


@pytest.mark.parametrize(("options", "field"), [({"budget": "lots"}, "budget"),
                                                ({"depht": 3}, "depht")])
def test_a_bad_option_is_refused_before_any_cluster(options, field):
    with pytest.raises(InputError, match=field):
        replay_spec(RunSpec(first=10, policy="plan-2", options=options))


def test_the_metrics_are_the_run_s_metrics(monkeypatch):
    """With the Slurm replay stood in for by the simulation of the same jobs, the replay's
    record has exactly bbopt.run's metrics, names and values."""
    spec = replay_spec(RunSpec(first=30, policy="sjf-bb", warmup=60.0), nodes=8,
                       speedup=100.0)

    def simulated(jobs, platform, *, policy, options, **_):
        return run(RunSpec(workload=jobs, platform=platform, policy=policy,
                           options=options)).result

    monkeypatch.setattr(replay_module, "replay", simulated)
    record = run_replay(spec, scheduler="bridge")
    timing = {k for k in record.metrics if "time" in k and k.startswith(("decision", "simul"))}
    assert timing == {"decision_time_mean", "decision_time_p50", "decision_time_p95",
                      "decision_time_max", "simulation_wall_time"}  # (machine time: differs)
    reference = run(spec).metrics
    assert record.metrics.keys() == reference.keys()
    assert {k: v for k, v in record.metrics.items() if k not in timing} == \
        {k: v for k, v in reference.items() if k not in timing}
    assert record.metrics["measured_from"] == 60.0


def test_the_command_refuses_bad_input_with_or_without_slurm(capsys):
    base = ["slurm", "replay", "--jobs", "10", "--scheduler", "bridge", "--policy", "plan-2"]
    assert main([*base, "-o", "budget=lots"]) == 2
    assert "budget" in capsys.readouterr().err
    assert main([*base, "--bb-unit", "0"]) == 2
    err = capsys.readouterr().err
    assert "--bb-unit" in err and "Traceback" not in err
    assert main([*base, "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err


def test_a_warm_up_longer_than_the_sped_up_trace_is_refused_before_any_cluster(capsys):
    """20 jobs sped up 6,000 times span 0.53 s: a 1 s warm-up leaves no submission to measure
    (the replay printed "mean wait nan")."""
    with pytest.raises(InputError, match=r"window \[1, 1\.52633\) s is empty"):
        replay_spec(RunSpec(first=20, policy="sjf-bb", warmup=1.0), nodes=8, speedup=6000.0)
    assert replay_spec(RunSpec(first=20, policy="sjf-bb", warmup=1.0), nodes=8,
                       speedup=600.0).warmup == 1.0  # 5.3 s: 12 submissions measured
    assert main(["slurm", "replay", "--jobs", "20", "--speedup", "6000", "--warmup", "1",
                 "--scheduler", "bridge", "--policy", "sjf-bb"]) == 2
    err = capsys.readouterr().err
    assert "is empty" in err and "nan" not in err and "Traceback" not in err


def test_a_window_whose_jobs_did_not_run_says_so_instead_of_nan():
    from bbopt.slurm.cli import _waited

    ran = {"mean_wait": 7.6, "finished": 12.0, "jobs": 12.0, "rejected": 0.0}
    assert _waited(ran) == "mean wait 7.60 s, finished 12"
    none = {"mean_wait": float("nan"), "finished": 0.0, "jobs": 3.0, "rejected": 3.0,
            "measured_from": 1.0, "measured_to": 6.25}
    assert _waited(none) == ("no wait measured: none of the 3 jobs submitted in the "
                             "measurement window [1, 6.25) s ran (finished 0, rejected 3)")

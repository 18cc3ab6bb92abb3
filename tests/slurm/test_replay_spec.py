"""A replay through Slurm is described by a run specification like any run: the same option,
unit and budget-mode vocabulary, checked before a cluster starts, and the same metric names."""

from __future__ import annotations

import importlib
from dataclasses import replace

import pytest

from bbopt.cli import main
from bbopt.core import Platform
from bbopt.errors import InputError
from bbopt.runs import RunSpec, load, measure, run
from bbopt.simulation.execution import Rigid
from bbopt.slurm.pool import DEFAULT_UNIT
from bbopt.slurm.replay import replay_spec, run_replay, scale_workload
from bbopt.workloads.bb import with_lognormal_bb

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


def _swf(path, header, bb=None):
    """Eight one-minute jobs of 1 to 16 processors, submitted 10 s apart (``bb``: a CQSim BB
    column, in GB)."""
    rows = []
    for k in range(1, 9):
        row = f"{k} {10 * k} 0 60 {2 * k} -1 -1 {2 * k} 120 -1 1 1 1 -1 1 -1 -1 -1"
        rows.append(row + (f" {bb}" if bb is not None else ""))
    path.write_text(header + "\n".join(rows) + "\n")
    return str(path)


def test_node_counts_scale_by_the_header_s_machine_unless_told_otherwise(tmp_path):
    """A trace of a 64-node machine (MaxNodes) on 8 nodes: 16 processors -> 2 nodes, not 8 as
    by the widest job (16) would give; a given ``trace_nodes`` wins over the header."""
    path = _swf(tmp_path / "t.swf", "; MaxNodes: 64\n")
    spec = replay_spec(RunSpec(workload=path, policy="fcfs-bb"), nodes=8, speedup=10.0)
    assert [j.nodes for j in spec.workload] == [1, 1, 1, 1, 1, 2, 2, 2]  # round(2k * 8 / 64)
    told = replay_spec(RunSpec(workload=path, policy="fcfs-bb"), nodes=8, speedup=10.0,
                       trace_nodes=16)
    assert [j.nodes for j in told.workload] == [1, 2, 3, 4, 5, 6, 7, 8]  # round(2k * 8 / 16)
    widest = replay_spec(RunSpec(workload=_swf(tmp_path / "u.swf", ""), policy="fcfs-bb"),
                         nodes=8, speedup=10.0)
    assert [j.nodes for j in widest.workload] == [1, 2, 3, 4, 5, 6, 7, 8]  # by the widest, 16
    given = replay_spec(RunSpec(workload=list(widest.workload), policy="fcfs-bb"), nodes=4)
    assert [j.nodes for j in given.workload] == [1, 1, 2, 2, 2, 3, 4, 4]  # jobs, no header: 8
    assert replay_spec(RunSpec(workload=[], policy="fcfs-bb")).workload == []


def test_the_defaults_are_sixteen_nodes_at_the_trace_s_own_speed(tmp_path):
    spec = replay_spec(RunSpec(workload=_swf(tmp_path / "t.swf", ""), policy="fcfs-bb"))
    assert spec.platform == Platform(nodes=16, bb=16 * 5e9, name="slurm-16")
    assert [j.submit for j in spec.workload] == [10.0 * k for k in range(8)]
    assert [j.walltime for j in spec.workload] == [120.0] * 8
    assert [j.nodes for j in spec.workload] == [2 * k for k in range(1, 9)]


def test_the_bb_requests_a_replay_draws_and_keeps(tmp_path):
    """``auto``: the trace's own requests when it has some, else Kopanski's log-normal draw with
    the spec's seed on the scaled node counts; ``lognormal`` always draws; ``none`` keeps the
    trace's. The draw is made after scaling: on the 8-node platform, not the trace's."""
    plain = _swf(tmp_path / "plain.swf", "")
    own = _swf(tmp_path / "own.swf", "; MaxNodes: 16\n; BurstBuffer: 480\n", bb=2)  # 2 GB each
    tiny = _swf(tmp_path / "tiny.swf", "; MaxNodes: 16\n; BurstBuffer: 480\n",
               bb="0.000000001")  # 1 B each

    def bb(workload, mode, seed=0):
        spec = RunSpec(workload=workload, policy="fcfs-bb", bb=mode, seed=seed)
        return [j.bb for j in replay_spec(spec, nodes=8, speedup=10.0).workload]

    scaled = replay_spec(RunSpec(workload=plain, policy="fcfs-bb", bb="none"), nodes=8,
                         speedup=10.0).workload
    assert bb(plain, "none") == [0.0] * 8
    assert bb(plain, "auto", seed=5) == [j.bb for j in with_lognormal_bb(scaled, 5)]
    assert bb(plain, "auto", seed=5) != bb(plain, "auto", seed=6)
    assert bb(own, "auto") == bb(own, "none") == [2e9] * 8
    drawn = bb(own, "lognormal", seed=5)
    assert drawn == [j.bb for j in with_lognormal_bb(scaled, 5)] and drawn != [2e9] * 8
    assert bb(tiny, "auto") == [1.0] * 8  # a request of one byte is a request


def test_the_trace_is_read_without_the_spec_s_platform_or_execution(tmp_path):
    """The replay's platform is the emulated one: the embedded workload is generated for the
    trace's own machine whatever platform the spec names, and the execution model is Slurm's
    (a rigid run): a checkpoint model asked for is dropped, its options too."""
    base = RunSpec(first=30, seed=3, policy="fcfs-bb")
    plain = replay_spec(base, nodes=8, speedup=60.0)
    other = replay_spec(replace(base, platform=Platform(nodes=4, bb=1e12),
                                execution="checkpoint",
                                execution_options={"pfs_bandwidth": 1e9}),
                        nodes=8, speedup=60.0)
    assert other.workload == plain.workload
    assert other.platform == plain.platform == Platform(nodes=8, bb=40e9, name="slurm-8")
    assert (other.execution, other.execution_options) == (None, {})


def test_a_given_bb_pool_is_the_emulated_pool(tmp_path):
    spec = replay_spec(RunSpec(workload=_swf(tmp_path / "t.swf", ""), policy="fcfs-bb"),
                       nodes=8, bb_pool=7e9)
    assert spec.platform.bb == 7e9


@pytest.mark.parametrize("name", [None, "kth"])
def test_a_replay_passes_every_setting_to_the_cluster_and_keeps_the_record(monkeypatch, name):
    """What run_replay hands the replay, by default and when told, and the record it returns:
    the spec, the replay's own result, the rigid model, the metrics measured on them."""
    spec = replace(replay_spec(RunSpec(first=12, policy="sjf-bb"), nodes=8, speedup=100.0),
                   name=name, tick=5.0)
    calls = []

    def recorded(jobs, platform, **kwargs):
        calls.append((jobs, platform, kwargs))
        return run(RunSpec(workload=jobs, platform=platform, policy="sjf-bb")).result

    monkeypatch.setattr(replay_module, "replay", recorded)
    record = run_replay(spec)
    jobs, platform, kwargs = calls[0]
    assert (jobs, platform) == (spec.workload, spec.platform)
    assert kwargs == dict(scheduler="slurm", policy="sjf-bb", options={}, bb_unit=DEFAULT_UNIT,
                          interval=1.0, tick=5.0, directory=None, scheduler_parameters=None,
                          timeout=None, workload_name=name or "slurm", progress=False)
    assert record.spec is spec and record.result is not None
    assert isinstance(record.model, Rigid)
    assert record.metrics == measure(record.result, record.model, spec)
    told = dict(scheduler="bridge", bb_unit=2e9, interval=0.5, directory="/x",
                scheduler_parameters={"bf_interval": 1}, timeout=30.0, progress=True)
    run_replay(spec, **told)
    assert calls[1][2] == {**kwargs, **told}

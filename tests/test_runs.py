"""One way to run: a cell gives the same metrics, under the same names, through ``bbopt compare``,
a sweep (in this process, in worker processes and on Dask) and the Python ``run``; the
measurement interval and the execution models' metrics are the same everywhere."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from bbopt.analysis.sweep import plan, run_sweep
from bbopt.analysis.sweep_spec import parse_spec
from bbopt.cli import main
from bbopt.core import Job, Platform
from bbopt.errors import InputError
from bbopt.runs import RunSpec, measurement_interval, run
from bbopt.workloads.swf_writer import write_swf
from bbopt.workloads.synthetic import kth_like

#: Metrics that measure this machine's speed, not the schedule.
TIMINGS = ("decision_time", "simulation_wall_time")
POLICIES = ("fcfs-bb", "conservative-bb")


def _schedule_metrics(metrics: dict) -> dict:
    return {k: v for k, v in metrics.items() if not k.startswith(TIMINGS)}


@pytest.fixture(scope="module")
def trace(tmp_path_factory) -> Path:
    """180 KTH-like jobs with their BB requests written into the trace (read back as they
    are, so every path reads the same jobs)."""
    path = tmp_path_factory.mktemp("trace") / "cell.swf"
    write_swf(kth_like(180, seed=3), path, bb_columns="cqsim")
    return path


def _same(a: dict, b: dict) -> None:
    a, b = _schedule_metrics(a), _schedule_metrics(b)
    assert sorted(a) == sorted(b)
    for k in a:
        assert a[k] == pytest.approx(b[k], nan_ok=True), k


def _cell(trace, capsys, execution: str) -> tuple[dict, dict]:
    """The cell's metrics per policy from ``bbopt compare``, and its sweep specification."""
    cli = ["compare", "--workload", str(trace), "--bb", "none", "--platform", "kopanski",
           "--policies", ",".join(POLICIES), "--warmup", "6h", "--cooldown", "6h",
           "--execution", execution, "--format", "json", "--no-progress", "--workers", "1"]
    assert main(cli) == 0
    doc = {"name": "cell", "workloads": {"w": {"file": str(trace), "bb": "none"}},
           "platforms": ["kopanski"], "policies": list(POLICIES), "seeds": [0],
           "executions": [execution], "warmup": "6h", "cooldown": "6h"}
    return json.loads(capsys.readouterr().out), doc


def _same_in_sweep(compared: dict, doc: dict, store: Path, **how) -> None:
    got: dict[str, dict] = {}

    def keep(task, out):
        got[task.policy] = out["metrics"]

    report = run_sweep(parse_spec(doc, source="<test>", base=store.parent), store,
                       progress=False, on_result=keep, **how)
    assert report.failed == 0, report.failures
    assert sorted(got) == sorted(POLICIES)
    for policy in POLICIES:
        _same(compared[policy], got[policy])


@pytest.mark.parametrize("execution", ["rigid", "io-contention"])
def test_one_cell_gives_the_same_metrics_through_every_path(trace, tmp_path, capsys, execution):
    compared, doc = _cell(trace, capsys, execution)
    spec = RunSpec(workload=str(trace), bb="none", platform="kopanski", warmup=6 * 3600.0,
                   cooldown=6 * 3600.0, execution=execution)
    for policy in POLICIES:
        _same(compared[policy], run(replace(spec, policy=policy)).metrics)

    executors = [{"executor": "serial"}]
    if execution == "rigid":  # (the worker pool once: its runs are the same code)
        executors.append({"executor": "processes", "workers": 2})
    for k, how in enumerate(executors):
        _same_in_sweep(compared, doc, tmp_path / f"store{k}", **how)
    if execution == "io-contention":  # Herbein's I/O metrics, in compare as in the sweep
        assert 0 < compared["fcfs-bb"]["system_efficiency"] <= 1


def test_one_cell_gives_the_same_metrics_on_dask(trace, tmp_path, capsys):
    pytest.importorskip("distributed", reason="Dask sweeps need the cluster extra")
    compared, doc = _cell(trace, capsys, "rigid")
    _same_in_sweep(compared, doc, tmp_path / "store", dask="local", workers=1)


def test_exclusive_io_metrics_have_one_name(tmp_path, capsys):
    assert main(["compare", "--workload", "jeannot:U-No:0.4:20", "--policies", "io-list",
                 "--format", "json", "--no-progress"]) == 0
    compared = json.loads(capsys.readouterr().out)["io-list"]
    assert "xio_max_stretch" in compared and "io_max_stretch" not in compared
    record = run(RunSpec(workload="jeannot:U-No:0.4:20", policy="io-list"))
    _same(compared, record.metrics)


def test_an_empty_measurement_interval_is_an_error_everywhere(trace, tmp_path):
    jobs = kth_like(30, seed=1)
    span = max(j.submit for j in jobs) - min(j.submit for j in jobs)
    first, mid = min(j.submit for j in jobs), sorted(j.submit for j in jobs)[15]
    # a window of 2 ms around one submission, and one just past it
    assert measurement_interval(jobs, mid - first - 1e-3, first + span - mid - 1e-3) == \
        pytest.approx((mid - 1e-3, mid + 1e-3))
    with pytest.raises(InputError, match="no submission"):
        measurement_interval(jobs, mid - first + 1e-3, first + span - mid - 2e-3)
    with pytest.raises(InputError, match="no submission"):
        measurement_interval(jobs, span / 2, span / 2)
    with pytest.raises(InputError, match="no submission"):
        measurement_interval(jobs, span + 1, 0)
    assert measurement_interval(jobs, span - 1, 0) == (min(j.submit for j in jobs) + span - 1,
                                                       max(j.submit for j in jobs) + 1.0)
    with pytest.raises(InputError, match="warmup"):
        run(RunSpec(workload=jobs, platform=Platform.kopanski(), warmup=span + 1))
    doc = {"name": "short", "workloads": {"w": {"file": str(trace), "bb": "none"}},
           "policies": ["fcfs-bb"], "warmup": "400d"}
    with pytest.raises(InputError, match="warmup") as err:  # before the sweep starts
        plan(parse_spec(doc, source="<test>", base=tmp_path))
    assert "workload w" in str(err.value)


def test_a_window_with_no_submission_inside_is_empty_though_it_has_a_length():
    """Submissions at 0, 0.5 and 10 s: the window [w, b) must hold one of them."""
    jobs = [Job(str(k), t, 60.0) for k, t in enumerate((0.0, 0.5, 10.0))]
    assert measurement_interval(jobs, 10.0, 0.0) == (10.0, 11.0)  # at the last submission
    with pytest.raises(InputError, match=r"window \[10\.0+1, 11\) s is empty"):
        measurement_interval(jobs, 10.0001, 0.0)  # just past it: [10.0001, 11) holds none
    assert measurement_interval(jobs, 0.5, 0.0) == (0.5, 11.0)
    # a warm-up and a cool-down leaving [0.6, 9.9): a second long, no submission inside
    with pytest.raises(InputError, match="no submission to measure") as err:
        measurement_interval(jobs, 0.6, 0.1)
    assert err.value.field == "warmup" and "span 0 to 10 s" in str(err.value)
    assert measurement_interval(jobs, 0.5, 0.1) == (0.5, 9.9)  # 0.5 is in


def test_measured_interval_is_recorded_under_one_name(trace):
    record = run(RunSpec(workload=str(trace), bb="none", platform="kopanski", warmup=3600.0))
    first = min(j.submit for j in record.result.jobs)
    assert record.metrics["measured_from"] == first + 3600.0
    assert math.isfinite(record.metrics["measured_to"])


def test_a_quantum_with_a_unit_is_measured_as_its_seconds():
    """``-o quantum=30min`` reaches the policy in seconds and the entitlement metrics too
    (they were computed from ``float("30min")``)."""
    from bbopt.loading import load_workload
    from bbopt.workloads.generators.omfs import assign_entities

    jobs, _ = load_workload(None, n_jobs=60)
    jobs, usage = assign_entities(jobs, n_entities=3, shares="usage", seed=0)
    text = run(RunSpec(workload=jobs, policy="omfs",
                       options={"shares": usage, "quantum": "30min"})).metrics
    number = run(RunSpec(workload=jobs, policy="omfs",
                         options={"shares": usage, "quantum": 1800})).metrics
    timing = {k for k in text if k.startswith(("decision_time", "simulation_wall"))}
    assert {k: v for k, v in text.items() if k not in timing} == \
        {k: v for k, v in number.items() if k not in timing}


def _jobs_at(*submits: float) -> list[Job]:
    return [Job(id=i, submit=s, nodes=1, walltime=10.0, runtime=5.0)
            for i, s in enumerate(submits)]


def test_seed_and_interval_lengths_are_checked_at_their_bounds():
    from bbopt.runs import _check_numbers

    _check_numbers(RunSpec(seed=0, warmup=0.0, cooldown=0.0))  # 0 is allowed for all three
    for bad in (-1, True, 1.5, "3"):
        with pytest.raises(InputError, match=r"a seed must be an integer >= 0, got") as e:
            _check_numbers(RunSpec(seed=bad))
        assert e.value.field == "seed"
    for key in ("warmup", "cooldown"):
        for bad in (-1e-9, math.nan):
            with pytest.raises(InputError, match=r"must be >= 0 seconds, got") as e:
                _check_numbers(RunSpec(**{key: bad}))
            assert e.value.field == key
        _check_numbers(RunSpec(**{key: 1e-9}))


def test_a_cool_down_alone_opens_an_interval_from_the_first_submission():
    jobs = _jobs_at(0.0, 5.0, 10.0)
    assert measurement_interval(jobs, 0.0, 0.0) is None
    assert measurement_interval(jobs, 0.0, 4.0) == (0.0, 6.0)
    assert measurement_interval(jobs, 1e-9, 0.0) == (1e-9, 11.0)
    assert measurement_interval(jobs, 0.0, 9.5) == (0.0, 0.5)  # [0, 0.5) holds the first
    with pytest.raises(InputError):
        measurement_interval(jobs, 0.0, 10.0)  # [0, 0) holds none
    with pytest.raises(InputError, match=r"a warm-up of 6 s and a cool-down of 5 s leave no "
                                         r"submission to measure: the window \[6, 5\) s is "
                                         r"empty \(the workload's submissions span 0 to 10 s\)"):
        measurement_interval(jobs, 6.0, 5.0)
    # the end is open: a cool-down that ends at a submission leaves it out
    with pytest.raises(InputError):
        measurement_interval(_jobs_at(0.0, 10.0), 1.0, 10.0)


def test_an_explicit_budget_mode_option_wins_and_policies_without_budgets_get_none():
    from bbopt.runs import with_budget_mode

    assert with_budget_mode("plan-2", {"budget": 1}, "wall") == {"budget": 1,
                                                                 "budget_mode": "wall"}
    assert with_budget_mode("plan-2", {"budget_mode": "deterministic"}, "wall") == {
        "budget_mode": "deterministic"}
    assert with_budget_mode("fcfs-bb", {}, "wall") == {}
    options = {"x": 1}
    assert with_budget_mode("fcfs-bb", options, "wall") is not options


def test_execution_options_alone_mean_checkpoint_restart_else_rigid():
    from bbopt.runs import execution_model

    assert type(execution_model(RunSpec())).__name__ == "Rigid"
    assert type(execution_model(RunSpec(execution_options={"on_kill": "requeue"}))
                ).__name__ == "CheckpointRestart"


def test_each_policy_keeps_only_the_options_it_accepts():
    from bbopt.runs import check_policies, for_policy

    spec = RunSpec(options={"budget": 2.0, "half_life": 60.0})
    assert dict(for_policy(spec, "plan-2").options) == {"budget": 2.0}
    assert dict(for_policy(spec, "fair-share").options) == {"half_life": 60.0}
    assert for_policy(spec, "fair-share").policy == "fair-share"
    check_policies(spec, ["plan-2", "fair-share"])
    with pytest.raises(InputError, match=r"no policy among fcfs-bb, fair-share accepts budget; "
                                         r"their options: half_life, shares") as e:
        check_policies(spec, ["fcfs-bb", "fair-share"])
    assert e.value.field == "-o budget"
    with pytest.raises(InputError, match=r"their options: none"):
        check_policies(RunSpec(options={"q": 1}), ["fcfs-bb"])
    with pytest.raises(InputError, match="seed"):
        check_policies(RunSpec(seed=-1), ["fcfs-bb"])

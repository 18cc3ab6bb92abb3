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


# -- assembly: each input reaches the run as given -------------------------------------------

def test_a_run_spec_defaults_to_the_documented_run():
    from dataclasses import asdict

    assert asdict(RunSpec()) == {
        "workload": None, "platform": None, "policy": "fcfs-bb", "options": {},
        "execution": None, "execution_options": {}, "seed": 0, "first": None, "bb": "auto",
        "bb_rules": True, "preemptable": None, "checkpointable": None, "tick": None,
        "budget_mode": "deterministic", "warmup": 0.0, "cooldown": 0.0, "shares": None,
        "name": None, "reader": {}}


def test_jobs_given_are_run_on_the_platform_given_else_kopanskis():
    from bbopt.runs import load

    jobs, platform = _jobs_at(0.0, 5.0), Platform(8, 1e9)
    spec, read = load(RunSpec(workload=tuple(jobs), platform=platform, name="mine"))
    assert read is None and spec.workload == jobs and spec.platform is platform
    assert spec.name == "mine" and spec.first is None
    spec, _ = load(RunSpec(workload=jobs, platform="kopanski"))
    assert spec.platform == Platform.kopanski() and spec.name == "workload"
    assert load(RunSpec(workload=jobs))[0].platform == Platform.kopanski()


@pytest.mark.parametrize("platform", [Platform.kopanski(), "kopanski", None])
def test_a_read_workload_gets_the_runs_first_seed_bb_and_rules(platform):
    """The same jobs as the readers give with the run's arguments, and not those of their
    defaults (seed 0, ``bb="auto"``, the rules on, all jobs)."""
    from bbopt.loading import read_workload, read_workload_and_platform
    from bbopt.runs import load

    spec, w = load(RunSpec(first=30, seed=3, bb="lognormal", bb_rules=False, platform=platform))
    if isinstance(platform, Platform):
        direct = read_workload(None, n_jobs=30, seed=3, bb="lognormal", platform=platform,
                               bb_rules=False)
        assert spec.platform is platform
    else:
        direct, own = read_workload_and_platform(None, platform, n_jobs=30, seed=3,
                                                 bb="lognormal", bb_rules=False)
        assert spec.platform == own == Platform.kopanski()
    assert spec.workload == direct.jobs == w.jobs and len(spec.workload) == 30
    assert [j.bb for j in spec.workload] == [j.bb for j in direct.jobs]
    assert spec.first is None and spec.name == w.name == direct.name
    defaults = read_workload(None, n_jobs=30, platform=Platform.kopanski())
    assert [j.bb for j in defaults.jobs] != [j.bb for j in spec.workload]
    for other in ({"seed": 0}, {"bb_rules": True}):  # each argument on its own counts
        again, _ = load(RunSpec(**{"first": 30, "seed": 3, "bb": "lognormal",
                                   "bb_rules": False, "platform": platform, **other}))
        assert [j.bb for j in again.workload] != [j.bb for j in spec.workload]
    assert load(RunSpec(first=30, seed=3, bb="none", platform=platform))[0].workload[0].bb == 0


@pytest.mark.parametrize(("preemptable", "checkpointable", "pre", "ckpt"), [
    (0.5, None, 0.5, 0.0), (None, 0.25, 0.25, 0.25), (0.5, 0.25, 0.5, 0.25),
    (0.1, 0.25, 0.25, 0.25)])
def test_preemptable_and_checkpointable_fractions_are_drawn_with_the_runs_seed(
        preemptable, checkpointable, pre, ckpt):
    """A checkpointable job is preemptable: the preemptable fraction is at least the
    checkpointable one."""
    from bbopt.runs import load
    from bbopt.workloads.generators.omfs import with_preemption_flags

    plain, _ = load(RunSpec(first=40, seed=2))
    spec, _ = load(RunSpec(first=40, seed=2, preemptable=preemptable,
                           checkpointable=checkpointable))
    assert spec.workload == with_preemption_flags(plain.workload, preemptable=pre,
                                                  checkpointable=ckpt, seed=2)
    assert sum(j.preemptable for j in spec.workload) == round(40 * pre)
    assert sum(j.checkpointable for j in spec.workload) == round(40 * ckpt)
    assert spec.workload != with_preemption_flags(plain.workload, preemptable=pre,
                                                  checkpointable=ckpt, seed=0)
    assert (spec.preemptable, spec.checkpointable) == (None, None)


def test_periodic_applications_run_on_exclusive_io_nodes_unless_told_otherwise():
    from bbopt.runs import load

    assert load(RunSpec(workload="jeannot:U-No:0.4:5"))[0].execution == "exclusive-io"
    assert load(RunSpec(workload="jeannot:U-No:0.4:5", execution="rigid"))[0].execution == \
        "rigid"
    assert load(RunSpec(first=5))[0].execution is None


def _entity_jobs() -> list[Job]:
    from bbopt.workloads.shares import with_shares

    jobs = [Job(f"{u}{i}", 10.0 * i, 100.0, runtime=50.0, nodes=2, user=u)
            for i in range(4) for u in "ab"]
    return with_shares(jobs, {"a": 0.75, "b": 0.25})


def test_a_shares_policy_gets_the_workloads_own_entitlements_and_others_nothing():
    from bbopt.runs import entitled

    spec = RunSpec(workload=_entity_jobs(), options={"quantum": 60})
    given, own = entitled(spec, ["fcfs-bb", "omfs"])
    assert own == {"a": 0.75, "b": 0.25}
    assert dict(given.options) == {"quantum": 60, "shares": {"a": 0.75, "b": 0.25}}
    assert dict(spec.options) == {"quantum": 60}
    assert entitled(spec, ["fcfs-bb"]) == (spec, None)


def test_a_policy_object_gets_no_budget_mode():
    from bbopt.policies import make_policy
    from bbopt.runs import with_budget_mode

    policy = make_policy("fcfs-bb")
    options = {"x": 1}
    assert with_budget_mode(policy, options, "wall") == {"x": 1}
    assert with_budget_mode(policy, options, "wall") is not options


def test_the_execution_model_gets_its_options_and_an_object_is_used_as_it_is():
    from bbopt.runs import execution_model
    from bbopt.simulation.execution import make_execution_model

    model = execution_model(RunSpec(execution="checkpoint",
                                    execution_options={"memory_per_node": "2GB"}))
    assert type(model).__name__ == "CheckpointRestart" and model.memory_per_node == 2e9
    assert execution_model(RunSpec(execution_options={"memory_per_node": 5e8})
                           ).memory_per_node == 5e8
    rigid = make_execution_model("rigid")
    assert execution_model(RunSpec(execution=rigid)) is rigid
    assert type(execution_model(RunSpec(execution="io-contention"))).__name__ != "Rigid"


class _Extra:
    """An execution model's own metrics: one new name, one the job metrics already have."""

    def metrics(self, result):
        return {"mean_wait": -1.0, "extra_metric": 2.5}


def _entity_result():
    from bbopt.simulation import simulate

    return simulate(_entity_jobs(), Platform(4, 0.0), "fcfs-bb")


def test_the_job_metrics_keep_their_names_and_the_models_add_theirs():
    from bbopt.analysis.metrics import summarize
    from bbopt.runs import measure

    result = _entity_result()
    plain = RunSpec(workload=_entity_jobs(), shares={"a": 0.5, "b": 0.5})
    metrics = measure(result, _Extra(), plain)
    assert metrics["extra_metric"] == 2.5
    assert metrics["mean_wait"] == summarize(result)["mean_wait"] > 0
    assert "measured_from" not in metrics


def test_the_interval_replaces_the_job_metrics_and_is_recorded():
    from bbopt.analysis.metrics import summarize
    from bbopt.runs import measure

    result = _entity_result()  # submissions at 0, 10, 20, 30 s (two each)
    metrics = measure(result, _Extra(), RunSpec(warmup=10.0, cooldown=10.0))
    assert (metrics["measured_from"], metrics["measured_to"]) == (10.0, 20.0)
    inside = summarize(result, interval=(10.0, 20.0))
    assert {k: metrics[k] for k in inside} == pytest.approx(inside, nan_ok=True, rel=1e-12)
    assert inside["mean_wait"] != summarize(result)["mean_wait"]
    assert metrics["extra_metric"] == 2.5


def test_entitlements_measured_are_the_specs_then_the_options_then_the_workloads():
    from bbopt.analysis.table import fairshare_metrics
    from bbopt.runs import measure

    result = _entity_result()
    own = {"a": 0.75, "b": 0.25}
    given, option = {"a": 0.1, "b": 0.9}, {"a": 0.4, "b": 0.6}

    def fair(shares, quantum=1800.0):
        return fairshare_metrics(result, shares, quantum)

    assert fair(own) != fair(given) != fair(option)
    for spec, shares in ((RunSpec(), own), (RunSpec(options={"shares": option}), option),
                         (RunSpec(shares=given, options={"shares": option}), given)):
        metrics = measure(result, _Extra(), spec)
        assert {k: metrics[k] for k in fair(shares)} == pytest.approx(fair(shares), nan_ok=True,
                                                                      rel=1e-12)


@pytest.mark.parametrize(("deprived", "options", "quantum"), [
    (1000.0, {}, 1800.0), (1000.0, {"quantum": "1min"}, 60.0), (2900.0, {}, 1800.0),
    (2900.0, {"quantum": 3600}, 3600.0)])
def test_the_entitlement_metrics_use_the_runs_quantum_in_seconds_else_half_an_hour(
        deprived, options, quantum):
    """Entity b, entitled to half the machine, waits ``deprived`` seconds behind a's jobs: an
    episode within the quantum or not."""
    from bbopt.analysis.table import fairshare_metrics
    from bbopt.runs import measure
    from bbopt.simulation import simulate
    from bbopt.workloads.shares import with_shares

    jobs = [Job(f"a{i}", 0.0, 4000.0, runtime=100.0 + deprived, nodes=2, user="a")
            for i in range(2)] + [Job("b0", 100.0, 4000.0, runtime=3000.0, nodes=2, user="b")]
    jobs = with_shares(jobs, {"a": 0.5, "b": 0.5})
    result = simulate(jobs, Platform(4, 0.0), "fcfs-bb")
    metrics = measure(result, _Extra(), RunSpec(options=options))
    expected = fairshare_metrics(result, {"a": 0.5, "b": 0.5}, quantum)
    assert {k: metrics[k] for k in expected} == pytest.approx(expected, nan_ok=True, rel=1e-12)
    others = [fairshare_metrics(result, {"a": 0.5, "b": 0.5}, q) for q in (60.0, 1800.0, 3600.0)
              if q != quantum]
    assert any(o != pytest.approx(expected, nan_ok=True) for o in others)


def test_a_run_passes_its_tick_name_and_observers_to_the_simulation():
    """Job 1 (two nodes) waits behind job 0 until 100 s; FCFS decides at each submission
    and end that leaves something to decide, and with a 30 s tick also at 30, 60 and 90 s."""
    jobs = [Job("0", 0.0, 100.0, runtime=100.0, nodes=2),
            Job("1", 1.0, 100.0, runtime=50.0, nodes=2),
            Job("2", 2.0, 100.0, runtime=50.0, nodes=1)]
    spec = RunSpec(workload=jobs, platform=Platform(3, 0.0), policy="fcfs")
    decided, ended = [], []
    record = run(replace(spec, name="three"),
                 on_decision=lambda state, decision: decided.append(state.time),
                 on_job_end=lambda result, k: ended.append(result.jobs[k].id))
    assert record.result.workload_name == "three"
    assert sorted(ended) == ["0", "1", "2"]
    assert decided == [0.0, 2.0, 100.0]
    ticked = []
    run(replace(spec, tick=30.0), on_decision=lambda state, decision: ticked.append(state.time))
    assert ticked == [0.0, 2.0, 30.0, 60.0, 90.0, 100.0]
    assert run(spec).result.workload_name == "workload"


def test_a_run_measures_its_own_spec():
    jobs = _jobs_at(0.0, 5.0, 10.0)
    record = run(RunSpec(workload=jobs, platform=Platform(4, 0.0), warmup=5.0))
    assert (record.metrics["measured_from"], record.metrics["measured_to"]) == (5.0, 11.0)
    assert record.spec.workload == jobs and record.spec.platform == Platform(4, 0.0)
    assert type(record.model).__name__ == "Rigid"
    assert record.metrics["finished"] == 2.0  # the jobs submitted at 5 and 10 s


@pytest.mark.parametrize(("reports_per_run", "expected"), [
    (10, [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 25]), (25, list(range(1, 26))),
    (50, list(range(1, 26)))])
def test_a_detached_run_reports_every_total_over_reports_per_run_jobs_and_the_last(
        monkeypatch, reports_per_run, expected):
    from bbopt import runs

    monkeypatch.setattr(runs, "REPORTS_PER_RUN", reports_per_run)
    jobs = [Job(str(k), float(k), 20.0, runtime=10.0) for k in range(25)]
    spec = RunSpec(workload=jobs, platform=Platform(2, 0.0), policy="sjf-bb")
    got = []
    result, metrics = runs.run_detached(spec, got.append)
    assert got == [("sjf-bb", n, 25) for n in expected]
    assert result.jobs == [] and metrics["finished"] == 25.0
    _same(metrics, run(spec).metrics)


def test_a_detached_run_without_a_listener_reports_nothing():
    from bbopt.runs import REPORTS_PER_RUN, run_detached

    result, metrics = run_detached(RunSpec(workload=_jobs_at(0.0, 1.0), platform=Platform(2, 0)))
    assert result.jobs == [] and metrics["finished"] == 2.0
    assert REPORTS_PER_RUN == 200


def _any_keyword(monkeypatch) -> None:
    """A policy ``any`` that takes any keyword (``"**"``)."""
    import bbopt.policies as policies

    real_options, real_make = policies.policy_options, policies.make_policy
    monkeypatch.setattr(policies, "policy_options",
                        lambda name: {"**": None} if name == "any" else real_options(name))
    monkeypatch.setattr(policies, "make_policy",
                        lambda name, **o: None if name == "any" else real_make(name, **o))


def test_a_policy_taking_any_keyword_keeps_every_option(monkeypatch):
    from bbopt.runs import check_policies, for_policy

    _any_keyword(monkeypatch)
    spec = RunSpec(options={"budget": 2.0, "half_life": 60.0})
    assert for_policy(spec, "any") == replace(spec, policy="any")
    check_policies(RunSpec(options={"q": 1}), ["fcfs-bb", "any"])  # no option is unknown


def test_policies_are_checked_with_the_runs_budget_mode_and_execution_model():
    from bbopt.errors import UnknownNameError
    from bbopt.runs import check_policies

    with pytest.raises(InputError, match="budget_mode"):
        check_policies(RunSpec(budget_mode="fastest"), ["plan-2"])
    check_policies(RunSpec(budget_mode="wall"), ["plan-2"])
    with pytest.raises(UnknownNameError, match="unknown execution model 'no-such-model'"):
        check_policies(RunSpec(execution="no-such-model"), ["fcfs-bb"])
    with pytest.raises(InputError, match="warmup"):
        check_policies(RunSpec(warmup=-1.0), ["fcfs-bb"])


def test_jobs_given_keep_their_first_in_submission_order_and_get_the_preemption_fractions():
    """As for a file: ``first`` keeps the earliest submissions (in the given order), and the
    preemptable and checkpointable fractions are drawn with the run's seed."""
    from bbopt.runs import load
    from bbopt.workloads.generators.omfs import with_preemption_flags

    jobs = _jobs_at(5.0, 0.0, 10.0, 1.0)
    spec, _ = load(RunSpec(workload=jobs, first=2))
    assert [j.id for j in spec.workload] == [1, 3] and spec.first is None
    assert load(RunSpec(workload=jobs, first=4))[0].workload == jobs
    many = [Job(str(k), float(k), 10.0) for k in range(40)]
    spec, _ = load(RunSpec(workload=many, seed=5, preemptable=0.5, checkpointable=0.25))
    assert spec.workload == with_preemption_flags(many, preemptable=0.5, checkpointable=0.25,
                                                  seed=5)
    assert sum(j.checkpointable for j in spec.workload) == 10
    assert (spec.preemptable, spec.checkpointable) == (None, None)
    with pytest.raises(InputError, match="jobs"):
        load(RunSpec(workload=jobs, first=-1))

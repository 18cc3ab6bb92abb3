"""A run's assembly input by input (:mod:`bbopt.runs`): each field of a :class:`RunSpec` reaches
the reader, the policy, the execution model, the simulation and the measurement as given, and
its defaults are the documented ones."""

from __future__ import annotations

from dataclasses import replace

import pytest

from bbopt.core import Job, Platform
from bbopt.errors import InputError
from bbopt.runs import RunSpec, measurement_interval, run
from bbopt.workloads.swf_writer import write_swf
from bbopt.workloads.synthetic import kth_like


def _jobs_at(*submits: float) -> list[Job]:
    return [Job(id=i, submit=s, nodes=1, walltime=10.0, runtime=5.0)
            for i, s in enumerate(submits)]


def _same(a: dict, b: dict) -> None:
    """The same metrics but the machine's timings."""
    a, b = ({k: v for k, v in m.items() if not k.startswith(("decision_time",
                                                             "simulation_wall_time"))}
            for m in (a, b))
    assert sorted(a) == sorted(b)
    for k in a:
        assert a[k] == pytest.approx(b[k], nan_ok=True), k


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
    """An execution model's own metrics (of the run it is given): one new name, one the job
    metrics already have."""

    def metrics(self, result):
        return {"mean_wait": -1.0, "extra_metric": len(result.jobs) + 0.5}


def _entity_result():
    from bbopt.simulation import simulate

    return simulate(_entity_jobs(), Platform(4, 0.0), "fcfs-bb")


def test_the_job_metrics_keep_their_names_and_the_models_add_theirs():
    from bbopt.analysis.metrics import summarize
    from bbopt.runs import measure

    result = _entity_result()
    plain = RunSpec(workload=_entity_jobs(), shares={"a": 0.5, "b": 0.5})
    metrics = measure(result, _Extra(), plain)
    assert metrics["extra_metric"] == 8.5
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
    assert metrics["extra_metric"] == 8.5


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
    (1000.0, {}, 1800.0), (1800.5, {}, 1800.0), (1000.0, {"quantum": "1min"}, 60.0),
    (2900.0, {}, 1800.0), (2900.0, {"quantum": 3600}, 3600.0)])
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


def test_an_unreadable_quantum_is_named_in_the_error():
    from bbopt.runs import measure

    with pytest.raises(InputError, match="field 'quantum': cannot read 'soon'") as err:
        measure(_entity_result(), _Extra(), RunSpec(options={"quantum": "soon"}))
    assert err.value.field == "quantum"


def test_a_cool_down_under_a_second_opens_an_interval():
    jobs = _jobs_at(0.0, 5.0, 10.0)
    assert measurement_interval(jobs, 0.0, 0.5) == (0.0, 9.5)
    assert measurement_interval(jobs, 0.0, 1.0) == (0.0, 9.0)


def test_a_first_count_of_given_jobs_is_checked_like_a_files():
    from bbopt.limits import MAX_JOBS
    from bbopt.runs import load

    for bad in (0, MAX_JOBS + 1):
        with pytest.raises(InputError, match="must be between 1 and 100,000,000") as err:
            load(RunSpec(workload=_jobs_at(0.0), first=bad))
        assert err.value.field == "jobs"


def test_a_platform_named_for_given_or_read_jobs_is_the_one_built(tmp_path):
    from bbopt.runs import load

    path = tmp_path / "p.json"
    path.write_text('{"nodes": 40, "bb": "100GB"}')
    for workload in (_jobs_at(0.0, 1.0), None):
        platform = load(RunSpec(workload=workload, first=2, platform=str(path)))[0].platform
        assert (platform.nodes, platform.bb) == (40, 100e9)


def test_a_trace_file_is_read_with_the_platform_and_reader_options_given(tmp_path):
    """On a platform that is not Kopanski's, the BB requests are drawn without his generator's
    rules (they fit his machine); the reader's options reach the reader."""
    from bbopt.loading import read_workload
    from bbopt.runs import load

    path = tmp_path / "t.swf"
    write_swf(kth_like(30, seed=1), path)
    other = Platform(200, 9e12)
    spec, w = load(RunSpec(workload=str(path), platform=other, bb="lognormal"))
    assert spec.platform is other
    direct = read_workload(str(path), bb="lognormal", platform=other)
    assert spec.workload == direct.jobs and w.name == "t"
    kopanski = read_workload(str(path), bb="lognormal", platform=Platform.kopanski())
    assert [j.bb for j in direct.jobs] != [j.bb for j in kopanski.jobs]
    assert load(RunSpec(workload=str(path), platform=Platform.kopanski(), bb="lognormal")
                )[0].workload == kopanski.jobs  # his rules, on his platform given as an object
    for platform in (other, None):
        with pytest.raises(TypeError, match="no_such_option"):
            load(RunSpec(workload=str(path), platform=platform, reader={"no_such_option": 1}))


def test_a_run_hands_the_simulation_its_options_model_and_progress(monkeypatch):
    import bbopt.simulation as simulation

    real, seen = simulation.simulate, []

    def simulate(*args, **kwargs):
        seen.append(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(simulation, "simulate", simulate)
    spec = RunSpec(workload=_jobs_at(0.0, 1.0), platform=Platform(2, 0.0), policy="plan-2",
                   options={"budget": 0.01}, execution="checkpoint")
    record = run(spec)
    assert seen[-1]["options"] == {"budget": 0.01, "budget_mode": "deterministic"}
    assert seen[-1]["execution"] is record.model
    assert type(record.model).__name__ == "CheckpointRestart"
    assert seen[-1]["progress"] is False
    run(replace(spec, budget_mode="wall"), progress=True)
    assert seen[-1]["progress"] is True
    assert seen[-1]["options"] == {"budget": 0.01, "budget_mode": "wall"}


def test_a_bad_option_is_refused_before_the_measurement_interval_is_looked_at():
    with pytest.raises(InputError) as err:
        run(RunSpec(workload=_jobs_at(0.0, 1.0), policy="plan-2", options={"budget": -1.0},
                    warmup=1e9))
    assert err.value.field != "warmup" and "budget" in str(err.value)


def test_a_trace_without_a_name_runs_as_workload(tmp_path):
    path = tmp_path / ".swf"
    write_swf(kth_like(5, seed=1), path)
    record = run(RunSpec(workload=str(path), bb="none"))
    assert record.spec.name == "" and record.result.workload_name == "workload"


def test_every_option_no_policy_accepts_is_named():
    from bbopt.runs import check_policies

    with pytest.raises(InputError, match=r"no policy among fcfs-bb accepts q, z; their options: "
                                         r"none") as err:
        check_policies(RunSpec(options={"z": 1, "q": 2}), ["fcfs-bb"])
    assert err.value.field == "-o q"

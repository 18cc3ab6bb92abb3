"""The generators are one :class:`bbopt.registry.Registry`: names with their about text and
options from the signature, a plug-in generator registered from outside, an incomplete one
refused at registration."""

from __future__ import annotations

import inspect

import pytest

from bbopt.cli import main
from bbopt.core import Job
from bbopt.errors import InputError, UnknownNameError
from bbopt.registry import Registry
from bbopt.workloads.generators.catalog import GENERATORS, apply, generator


def test_generators_are_a_registry_with_about_and_options():
    assert isinstance(GENERATORS, Registry)
    assert GENERATORS.get("first").about == "keep the first n jobs"
    required = inspect.Parameter.empty
    assert GENERATORS.get("kth-like").options() == {"jobs": required, "seed": required,
                                                    "n_jobs": 3000, "nodes": 96, "load": 0.9,
                                                    "bb": True}
    assert generator("kth-like").parameters() == {"n_jobs": 3000, "nodes": 96, "load": 0.9,
                                                  "bb": True}
    assert generator("herbein").kind == "source"
    assert generator("io-rate").kind == "transform"
    with pytest.raises(UnknownNameError, match="kth-like"):
        generator("kth-lik")


def test_a_plugin_generator_is_listed_and_applied(capsys):
    def halve(jobs: list[Job], seed: int, *, keep: int = 2) -> list[Job]:
        """every keep-th job"""
        return jobs[::keep]

    GENERATORS.add("every-other", halve)
    try:
        jobs = apply("kth-like", None, 1, n_jobs=10)
        assert [j.id for j in apply("every-other", jobs, 0)] == [j.id for j in jobs[::2]]
        assert [j.id for j in apply("every-other", jobs, 0, keep=3)] == \
            [j.id for j in jobs[::3]]
        with pytest.raises(InputError, match="no parameter 'kep'"):
            apply("every-other", jobs, 0, kep=3)
        assert main(["generate", "--list"]) == 0
        out = capsys.readouterr().out
        assert "every-other" in out and "every keep-th job" in out and "keep=2" in out
    finally:
        GENERATORS.remove("every-other")
    assert "every-other" not in GENERATORS


@pytest.mark.parametrize("fn, missing", [
    (lambda jobs: jobs, "takes (jobs)"),
    (lambda workload, seed: workload, "takes (workload, seed)"),
    ("not a function", "not callable"),
])
def test_an_incomplete_generator_is_refused(fn, missing):
    with pytest.raises(InputError, match=missing.replace("(", r"\(").replace(")", r"\)")):
        GENERATORS.add("broken", fn)
    assert "broken" not in GENERATORS


def test_exact_walltime_sets_each_walltime_to_the_runtime():
    jobs = [Job("a", 0, walltime=3600, runtime=600, nodes=2),
            Job("b", 5, walltime=100, runtime=100),
            Job("c", 9, walltime=50)]  # no runtime: kept
    out = apply("exact-walltime", jobs, 0)
    assert [(j.id, j.walltime, j.runtime) for j in out] == [
        ("a", 600.0, 600), ("b", 100.0, 100), ("c", 50, None)]
    assert generator("exact-walltime").kind == "transform"


def _same(a: list[Job], b: list[Job]) -> bool:
    """The same jobs with the same ``extra`` (which job equality leaves out)."""
    return a == b and [j.extra for j in a] == [j.extra for j in b]


def _jobs(n: int = 12) -> list[Job]:
    return [Job(str(i), 10 * i, walltime=600, runtime=300, nodes=1 + i % 5, bb=(i % 3) * 1e9,
                user=str(i % 4)) for i in range(n)]


def test_kth_like_and_herbein_pass_their_options_on():
    from bbopt.workloads.generators.herbein import HerbeinModel
    from bbopt.workloads.synthetic import kth_like

    assert apply("kth-like", None, 1, n_jobs=10, nodes=50, load=0.5, bb=False) == \
        kth_like(n_jobs=10, seed=1, nodes=50, load=0.5, bb=False)
    assert apply("kth-like", None, 1, n_jobs=10) == \
        kth_like(n_jobs=10, seed=1, nodes=96, load=0.9, bb=True)
    herbein = HerbeinModel.default()
    assert _same(apply("herbein", None, 2, n_jobs=7, max_nodes=4, cores_per_node=2),
                 herbein.generate(n_jobs=7, max_nodes=4, cores_per_node=2, seed=2))
    assert apply("herbein", None, 2, n_jobs=None, duration=3600.0) == \
        herbein.generate(duration=3600.0, seed=2)
    assert _same(apply("herbein", None, 2),
                 herbein.generate(n_jobs=2000, cores_per_node=36, seed=2))
    assert len(apply("kth-like", None, 1)) == 3000


def test_jeannot_and_capability_pass_their_options_on():
    from bbopt.workloads.generators.capability import CapabilityModel
    from bbopt.workloads.generators.jeannot import generate

    assert _same(apply("jeannot", None, 3, n_apps=8, alpha=0.3, protocol="uniform",
                       io_profile="normal", nodes=1024, strict=False),
                 generate(8, alpha=0.3, protocol="uniform", io_profile="normal", nodes=1024,
                          strict=False, seed=3).jobs)
    assert _same(apply("jeannot", None, 0, n_apps=8),
                 generate(8, alpha=0.5, protocol="mira", io_profile="binormal", seed=0).jobs)
    with pytest.raises(InputError, match="not reached"):
        apply("jeannot", None, 0, n_apps=5)  # strict by default
    gamma = CapabilityModel.long_gamma[0]
    assert apply("capability", None, 1, n_jobs=20, load=0.5, min_nodes=256,
                 long_log_scale=0.02) == \
        CapabilityModel(load=0.5, min_nodes=256, long_gamma=(gamma, 0.02)).generate(20, 1)
    assert apply("capability", None, 1, n_jobs=20) == \
        CapabilityModel(load=0.85, min_nodes=128, long_gamma=(gamma, 0.03)).generate(20, 1)
    assert len(apply("capability", None, 1)) == 8000


def test_transforms_pass_their_options_on():
    from bbopt.workloads.bb import with_lognormal_bb
    from bbopt.workloads.generators.bbsched import bbsched_scenario, with_ssd_requests
    from bbopt.workloads.generators.kopanski import kopanski_workload
    from bbopt.workloads.generators.omfs import assign_entities, with_preemption_flags
    from bbopt.workloads.shares import with_shares

    jobs = _jobs()
    assert apply("lognormal-bb", jobs, 4, rules=True) == with_lognormal_bb(jobs, 4, rules=True)
    assert apply("lognormal-bb", jobs, 4) == with_lognormal_bb(jobs, 4, rules=False)
    assert _same(apply("kopanski", jobs, 4, phases=False, rules=True, checkpoint_factor=2.0,
                       io_out=True), kopanski_workload(jobs, 4, phases=False, rules=True,
                                                       io_out=True, checkpoint_factor=2.0))
    assert _same(apply("kopanski", jobs, 4), kopanski_workload(
        jobs, 4, phases=True, rules=False, io_out=False, checkpoint_factor=1.0))
    assert _same(apply("kopanski", jobs, 4, checkpoint_factor=3.0), kopanski_workload(
        jobs, 4, checkpoint_factor=3.0))
    assert not _same(apply("kopanski", jobs, 4, checkpoint_factor=3.0), apply("kopanski", jobs, 4))
    wide = [Job(str(i), 0, walltime=100, nodes=1, bb=b * 1e12) for i, b in enumerate(
        [30, 6, 0, 0, 0, 0, 0, 0])]
    assert apply("bbsched", wide, 5, scenario="S1", scale=0.5) == \
        bbsched_scenario(wide, "S1", 5, scale=0.5)
    assert apply("bbsched", wide, 5) == bbsched_scenario(wide, "S4", 5, scale=1.0)
    assert apply("ssd", jobs, 5, small_share=0.2) == with_ssd_requests(jobs, 0.2, 5)
    assert apply("ssd", jobs, 5) == with_ssd_requests(jobs, 0.5, 5)
    out, entitled = assign_entities(jobs, by="random", n_entities=3, shares="equal", seed=1)
    assert apply("omfs-entities", jobs, 1, by="random", n_entities=3, shares="equal") == \
        with_shares(out, entitled)
    out, entitled = assign_entities(jobs, by="user", n_entities=None, shares="usage", seed=1)
    assert apply("omfs-entities", jobs, 1) == with_shares(out, entitled)
    assert apply("omfs-preemption", jobs, 1, preemptable=0.3, checkpointable=0.2) == \
        with_preemption_flags(jobs, preemptable=0.3, checkpointable=0.2, seed=1)
    assert apply("omfs-preemption", jobs, 1) == \
        with_preemption_flags(jobs, preemptable=0.5, checkpointable=0.5, seed=1)


def test_the_simple_transforms_by_hand():
    jobs = _jobs(5)  # 1 to 5 nodes
    assert [j.nodes for j in apply("max-nodes", jobs, 0, nodes=3)] == [1, 2, 3]
    big = [Job(str(n), 0, walltime=10, nodes=n) for n in (99, 100, 101)]
    assert [j.nodes for j in apply("max-nodes", big, 0)] == [99, 100]
    assert [j.nodes for j in apply("scale-nodes", jobs, 0, factor=3)] == [3, 6, 9, 12, 15]
    assert [j.nodes for j in apply("scale-nodes", jobs, 0)] == [32, 64, 96, 128, 160]
    assert {j.bandwidth for j in apply("io-rate", jobs, 0, per_node=5e6)} == {5e6}
    assert {j.bandwidth for j in apply("io-rate", jobs, 0)} == {18e6}
    assert [j.id for j in apply("first", jobs, 0, n=2)] == ["0", "1"]
    assert len(apply("first", _jobs(1001), 0)) == 1000
    zero = [Job("z", 0, walltime=50, runtime=0.0), Job("t", 0, walltime=50, runtime=1e-3)]
    assert [j.walltime for j in apply("exact-walltime", zero, 0)] == [50, 1e-3]


def test_theta_original_asks_a_share_log_uniformly_over_thetas_range_scaled():
    import numpy as np

    jobs = _jobs(400)
    every = apply("theta-original", jobs, 7, nodes=4392, share=1.0)
    bb = np.array([j.bb for j in every])
    assert bb.min() >= 1e9 and bb.max() <= 285e12 and np.all(bb % 1e6 == 0)
    # log-uniform: the median of the logs halfway between 1 GB and 285 TB
    assert np.median(np.log(bb)) == pytest.approx((np.log(1e9) + np.log(285e12)) / 2, rel=0.02)
    assert [j.bb for j in apply("theta-original", jobs, 7, nodes=4392, share=0.0)] == [0.0] * 400
    scaled = np.array([j.bb for j in apply("theta-original", jobs, 7, nodes=43920, share=1.0)])
    assert scaled == pytest.approx(bb * 10, rel=1e-3, abs=1e6)  # the same draws, 10 x
    rng = np.random.default_rng(7)
    asks = rng.random(400) < 0.25
    size = np.round(np.exp(rng.uniform(np.log(1e9), np.log(285e12), 400)) / 4392 * 100 / 1e6)
    quarter = apply("theta-original", jobs, 7, share=0.25, nodes=100)
    assert [j.bb for j in quarter] == [float(s * 1e6) if a else 0.0 for a, s in zip(
        asks, size, strict=True)]
    assert apply("theta-original", jobs, 7) == \
        apply("theta-original", jobs, 7, nodes=100, share=0.1718)
    assert all(j.nodes == k.nodes and j.id == k.id for j, k in zip(quarter, jobs, strict=True))


def test_registration_and_kinds():
    def pos_only(jobs, seed, /, *, k=1):
        return jobs

    def source(jobs, seed):
        return []

    source.__annotations__["jobs"] = None  # a plug-in written without postponed annotations
    GENERATORS.add("pos-only", pos_only)
    GENERATORS.add("plain-source", source)
    try:
        assert generator("pos-only").kind == "transform"
        assert generator("pos-only").parameters() == {"k": 1}
        assert generator("plain-source").kind == "source"
        assert generator("plain-source").fn is source
        assert generator("plain-source").name == "plain-source"
        with pytest.raises(InputError, match=r": generator 'plain-source' left no jobs$") as e:
            apply("plain-source", None, 0)
        assert e.value.field == "plain-source"
    finally:
        GENERATORS.remove("pos-only")
        GENERATORS.remove("plain-source")
    with pytest.raises(InputError, match=r": generator 'broken' is not callable: 3$") as e:
        GENERATORS.add("broken", 3)
    assert e.value.field == "broken"
    with pytest.raises(InputError, match=r": generator 'broken' must take \(jobs, seed, \*, "
                                         r"options\.\.\.\), takes \(jobs, seed, n\)$") as e:
        GENERATORS.add("broken", lambda jobs, seed, n: jobs)
    assert e.value.field == "broken"


def test_apply_refuses_a_wrong_kind_of_call():
    jobs = _jobs(3)
    with pytest.raises(InputError, match=r": generator 'first' has no parameter 'm'; its "
                                         r"parameters: n$") as e:
        apply("first", jobs, 0, m=2, z=1)
    assert e.value.field == "m"
    with pytest.raises(InputError, match=r": generator 'kth-like' has no parameter 'size'; its "
                                         r"parameters: n_jobs, nodes, load, bb$"):
        apply("kth-like", None, 0, size=2)
    with pytest.raises(InputError, match=r"parameters: none$") as e:
        apply("exact-walltime", jobs, 0, n=2)
    with pytest.raises(InputError, match=r": 'kth-like' makes a workload; it cannot transform "
                                         r"one$") as e:
        apply("kth-like", jobs, 0)
    assert e.value.field == "kth-like"
    with pytest.raises(InputError, match=r": 'first' transforms a workload; give it one \(a file "
                                         r"or a source\)$") as e:
        apply("first", None, 0)
    assert e.value.field == "first"
    assert apply("first", (j for j in jobs), 0, n=2) == jobs[:2]  # any iterable of jobs
    assert apply("first", jobs, "3", n=1) == jobs[:1]


def test_check_parameters_null_kind_and_text():
    from bbopt.workloads.generators.catalog import check_parameters

    with pytest.raises(InputError, match=r": generator 'g': n cannot be null \(default 1000\)$"
                       ) as e:
        check_parameters("g", {"n": None}, {"n": 1000})
    assert e.value.field == "n"
    check_parameters("g", {"n": None}, {"n": 1000}, nullable=frozenset({"n"}))
    check_parameters("g", {"extra": None}, {"n": 1000})  # not a known default: left to the call
    check_parameters("g", {"n": None})
    # a null or unranged parameter first does not spare the ones after it
    for first in ({"extra": None}, {"whatever": "x"}):
        with pytest.raises(InputError, match=r"must be between 1 and") as e:
            check_parameters("g", {**first, "n": 0}, {"n": 1000})
        assert e.value.field == "n"
    with pytest.raises(InputError, match=r": generator 'g': bb must be true or false, got 1$"
                       ) as e:
        check_parameters("g", {"bb": 1}, {"bb": True})
    assert e.value.field == "bb"
    with pytest.raises(InputError, match=r": generator 'g': by must be a name, got 3$") as e:
        check_parameters("g", {"by": 3}, {"by": "user"})
    assert e.value.field == "by"
    check_parameters("g", {"per_node": "18e6", "n": "5", "whatever": "x"})
    for key, text in (("per_node", "fast"), ("n", "5.5")):
        with pytest.raises(InputError, match=rf": generator 'g': {key} must be a number, got "
                                             rf"'{text}'$") as e:
            check_parameters("g", {key: text})
        assert e.value.field == key
    with pytest.raises(InputError, match=r": generator 'g': must be between 1 and "
                                         r"100,000,000, got 0$") as e:
        check_parameters("g", {"n": "0"})
    assert e.value.field == "n"
    with pytest.raises(InputError, match=r": generator 'g': must be in \(0, 1e\+10\], got 0$"
                       ) as e:
        check_parameters("g", {"duration": 0})
    assert e.value.field == "duration"


_COUNTS = {"n_jobs": 10**8, "n_apps": 10**8, "n": 10**8, "n_entities": 10**6,
           "nodes": 10**7, "max_nodes": 10**7, "min_nodes": 10**7, "factor": 10**7,
           "cores_per_node": 10**4}
_NUMBERS = {"duration": (1e10, True), "load": (100.0, True), "alpha": (1e3, True),
            "scale": (1e6, True), "long_log_scale": (10.0, True), "share": (1.0, False),
            "small_share": (1.0, False), "preemptable": (1.0, False),
            "checkpointable": (1.0, False), "per_node": (1e15, False)}


@pytest.mark.parametrize("key", sorted(_COUNTS))
def test_count_parameters_range_from_1(key):
    from bbopt.workloads.generators.catalog import check_parameters

    high = _COUNTS[key]
    for ok in (1, high):
        check_parameters("g", {key: ok})
    for bad in (0, high + 1, 2.5):
        with pytest.raises(InputError) as e:
            check_parameters("g", {key: bad})
        assert e.value.field == key


@pytest.mark.parametrize("key", sorted(_NUMBERS))
def test_number_parameters_range_from_0(key):
    from bbopt.workloads.generators.catalog import check_parameters

    high, open_low = _NUMBERS[key]
    check_parameters("g", {key: high})
    check_parameters("g", {key: 1e-12})
    for bad in (-1e-12, high * (1 + 1e-9), float("nan")):
        with pytest.raises(InputError) as e:
            check_parameters("g", {key: bad})
        assert e.value.field == key
    if open_low:
        with pytest.raises(InputError, match=r"must be in \(0, "):
            check_parameters("g", {key: 0.0})
    else:
        check_parameters("g", {key: 0.0})

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

"""What ``bbopt simulate`` costs besides the replay: the modules it imports, the SWF reader's
fast path and the log-normal BB draw.

- ``import bbopt`` and a queue policy by name import neither pandas nor the solver models:
  the package's pandas-backed and solver names, and the policy modules, load on first use;
- every built-in policy name is declared with the module that registers it (a missing or
  wrong line would import the wrong module, or every module, for that name);
- the reader builds jobs whose columns passed ``Job``'s checks without repeating them per job:
  the jobs equal, field for field, those built with the checks; a record that fails a check
  still raises naming its line;
- the BB draw's unchecked copies equal ``dataclasses.replace``'s.
"""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from bbopt import InputError
from bbopt.core import Job
from bbopt.workloads import swf
from bbopt.workloads.bb import KOPANSKI_RULES, lognormal_bb_per_processor, with_lognormal_bb
from bbopt.workloads.swf import read_swf

HEAVY = ("pandas", "scipy", "ortools", "pulp", "pymoo", "networkx", "bbopt.solvers",
         "bbopt.models.window", "bbopt.models.plan", "bbopt.policies.window",
         "bbopt.policies.plan", "bbopt.analysis.frames")


def _imported_after(code: str) -> list[str]:
    probe = (f"import sys\n{code}\n"
             f"print(' '.join(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                         text=True).stdout
    return out.split()


def test_a_queue_policy_run_imports_no_pandas_and_no_solver():
    code = ("import bbopt, bbopt.cli\n"
            "from bbopt import Job, Platform, simulate\n"
            "simulate([Job('a', 0, 10, 5, 1, 1.0)], Platform(2, 10.0), 'sjf-bb')\n"
            "simulate([Job('a', 0, 10, 5, 1, 1.0)], Platform(2, 10.0), 'conservative-bb')")
    assert _imported_after(code) == []


def test_the_lazy_names_still_resolve():
    import bbopt

    assert bbopt.to_pandas.__module__ == "bbopt.analysis.frames"
    assert callable(bbopt.solve) and bbopt.Budget.__name__ == "Budget"
    with pytest.raises(AttributeError):
        bbopt.no_such_name  # noqa: B018
    assert "pandas" in _imported_after("import bbopt\nbbopt.to_pandas")


def test_every_builtin_policy_is_declared_with_its_module():
    from bbopt.policies import available_policies
    from bbopt.policies.registry import POLICIES

    names = available_policies()  # imports every declared module
    declared = dict(POLICIES._declared)
    modules = set(declared.values())
    builtin = {n for n in names if POLICIES.get(n).obj.__module__ in modules}
    assert set(declared) == builtin  # (other tests may register policies of their own)
    for name, module in declared.items():
        assert POLICIES.get(name).obj.__module__ == module, name


def test_a_policy_by_name_imports_its_module_alone():
    code = "from bbopt.policies import make_policy\nmake_policy('plan-2')"
    got = _imported_after(code)
    assert "bbopt.policies.plan" in got and "bbopt.policies.window" not in got


def _fields(job: Job) -> tuple:
    return tuple((f.name, getattr(job, f.name), type(getattr(job, f.name)))
                 for f in dataclasses.fields(Job)) + (("extra", dict(job.extra)),)


@pytest.mark.parametrize("groups", [False, True])
def test_unchecked_jobs_equal_checked_ones(kth_swf, monkeypatch, groups):
    fast = read_swf(kth_swf, groups=groups).jobs
    monkeypatch.setattr(swf, "valid_columns", lambda *a: False)  # every job checked
    slow = read_swf(kth_swf, groups=groups).jobs
    assert len(fast) == len(slow) == 28467
    assert [_fields(j) for j in fast] == [_fields(j) for j in slow]


def test_a_record_failing_a_job_check_is_still_named(tmp_path):
    p = tmp_path / "t.swf"
    p.write_text("1 0 -1 10 2 -1 -1 2 60 -1 1 3 1 -1 -1 -1 -1 -1\n"
                 "2 5 -1 10 2 -1 -1 2 -1 -1 1 3 1 -1 -1 -1 -1 -1\n")
    with pytest.raises(InputError) as e:
        read_swf(p, missing_walltime=0.0)  # record 2's walltime becomes 0: not positive
    assert e.value.line == 2 and "walltime" in str(e.value)


@pytest.mark.parametrize("rules", [None, True])
def test_bb_draw_copies_equal_replace(kth_swf, rules):
    jobs = read_swf(kth_swf).jobs[:3000]
    got = with_lognormal_bb(jobs, seed=3, rules=rules)
    per_proc = lognormal_bb_per_processor(len(jobs), np.random.default_rng(3))
    want = [dataclasses.replace(j, bb=(KOPANSKI_RULES.per_node(j, float(p)) if rules
                                       else float(p)) * j.nodes)
            for j, p in zip(jobs, per_proc, strict=True)]
    assert [_fields(j) for j in got] == [_fields(j) for j in want]

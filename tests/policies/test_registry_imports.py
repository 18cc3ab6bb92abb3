"""What a run by policy name imports: ``import bbopt`` and a queue policy by name import neither
pandas nor the solver models (the package's pandas-backed and solver names, and the policy
modules, load on first use), and every built-in policy name is declared with the module that
registers it (a missing or wrong line would import the wrong module, or every module, for that
name)."""

from __future__ import annotations

import subprocess
import sys

import pytest

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

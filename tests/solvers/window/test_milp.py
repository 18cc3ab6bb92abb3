"""The ``milp`` window backend (Fan et al., BBSched, Section 3.2, solved exactly by CBC through
PuLP): its solver answers what the drivers ask (checked against enumeration), the CBC command
line it runs (seed, time limit, deadline), the time it gives each solve, a CBC killed at its
deadline or failing, and the guard on rounded answers."""

from __future__ import annotations

import numpy as np
import pulp
import pytest

from bbopt.core import GB, Status
from bbopt.errors import InputError
from bbopt.solvers import Budget
from bbopt.solvers.window import milp
from bbopt.solvers.window.forms import linear_form
from bbopt.solvers.window.milp import _DeadlineCbc, _Pulp, solve_milp
from tests.solvers.window import _int_solvers
from tests.solvers.window._int_solvers import FORCED, LEVELS


def test_the_solver_answers_what_the_drivers_ask():
    _int_solvers.check_all(lambda lf: _Pulp(lf, Budget(30.0), 0, "cbc"))


@pytest.mark.parametrize("seconds, limit, deadline", [
    (1.0, 0.98, 1.0),  # CBC's own limit 20 ms short of what is left; killed 20 ms after it
    (0.031, 0.011, 0.031),
    (0.03, 0.01, 0.03),
    (0.025, 0.01, 0.03),  # never under 10 ms
])
def test_cbc_limit_and_deadline(seconds, limit, deadline):
    cmd = _DeadlineCbc(seconds, 7)
    assert cmd.timeLimit == pytest.approx(limit) and cmd.deadline == pytest.approx(deadline)
    assert cmd.options == ["randomSeed 8", "randomCbcSeed 8"] and not cmd.killed and not cmd.msg


def _tiny():
    prob = pulp.LpProblem("t", pulp.LpMaximize)
    x = pulp.LpVariable("x", cat="Binary")
    prob += x
    prob += (x <= 1, "c")
    return prob, x


def test_the_cbc_command_line(monkeypatch, tmp_path):
    """Maximise, CBC's limit in elapsed seconds, each option as a flag and its value; the
    temporary files are removed after the solve."""
    seen = []
    real = milp.subprocess.Popen

    def popen(args, **kw):
        seen.append(list(args))
        return real(args, **kw)

    monkeypatch.setattr(milp.subprocess, "Popen", popen)
    cmd = _DeadlineCbc(1.0, 2)
    cmd.tmpDir = str(tmp_path)
    prob, x = _tiny()
    assert prob.solve(cmd) == pulp.LpStatusOptimal and x.varValue == 1
    (args,) = seen
    assert args[0] == cmd.path and args[1].endswith(".mps")
    assert args[2:-1] == ["-max", "-sec", "0.98", "-timeMode", "elapsed", "-randomSeed", "3",
                          "-randomCbcSeed", "3", "-branch", "-printingOptions", "all",
                          "-solution"]
    assert args[-1].endswith(".sol") and list(tmp_path.iterdir()) == []
    prob.sense = pulp.LpMinimize
    seen.clear()
    prob.solve(_DeadlineCbc(1.0, 2))
    assert "-max" not in seen[0] and x.varValue == 0


@pytest.mark.parametrize("path", ["/bin/false", "/bin/true"])
def test_a_cbc_that_fails_or_writes_no_solution_solves_nothing(path, tmp_path):
    cmd = _DeadlineCbc(1.0, 0)
    cmd.path, cmd.tmpDir = path, str(tmp_path)
    prob, _ = _tiny()
    assert prob.solve(cmd) == pulp.LpStatusNotSolved and not cmd.killed
    assert list(tmp_path.iterdir()) == []


@pytest.fixture
def stuck(tmp_path):
    """A "CBC" that never ends by itself."""
    path = tmp_path / "stuck-cbc"
    path.write_text("#!/bin/sh\nexec sleep 30\n")
    path.chmod(0o755)
    return str(path)


def test_a_cbc_past_its_deadline_is_killed(stuck, tmp_path):
    files = tmp_path / "files"
    files.mkdir()
    cmd = _DeadlineCbc(1.0, 0)
    cmd.path, cmd.deadline, cmd.tmpDir = stuck, 0.2, str(files)
    prob, _ = _tiny()
    assert prob.solve(cmd) == pulp.LpStatusNotSolved and cmd.killed
    assert list(files.iterdir()) == []
    cmd = _DeadlineCbc(1.0, 0)
    cmd.path = str(tmp_path / "no-cbc")
    with pytest.raises(pulp.PulpSolverError, match="cannot execute CBC"):
        prob.solve(cmd)


class Killed(_Pulp):
    path = ""

    def _cmd(self, seconds):
        cmd = super()._cmd(seconds)
        cmd.path, cmd.deadline = self.path, 0.2
        return cmd


def test_a_killed_solve_falls_back(stuck):
    lf = linear_form(FORCED, ["nodes", "bb"])
    Killed.path = stuck
    assert Killed(lf, Budget(30.0), 0, "cbc").maximize(*lf.objectives["nodes"], 5.0) == (
        Status.FALLBACK, None, None, None)


@pytest.mark.parametrize("seconds, work, given", [
    (5.0, None, 5.0),
    (5.0, 0.5, 2.0),  # four times the work asked
    (1.0, 0.5, 1.0),  # never more than what is left
    (5.0, 0.01, 0.1),  # at least five times the least solve
    (0.02, None, 0.02),  # the least solve
    (0.0199, None, None),  # under it: no solve, the fallback answers
])
def test_the_time_given_to_each_solve(monkeypatch, seconds, work, given):
    asked = []
    real = _Pulp._cmd

    def cmd(self, s):
        asked.append(s)
        return real(self, max(s, 1.0))  # (the answer itself is not what is checked here)

    monkeypatch.setattr(_Pulp, "_cmd", cmd)
    lf = linear_form(FORCED, ["nodes", "bb"])
    out = _Pulp(lf, Budget(30.0), 0, "cbc").maximize(*lf.objectives["nodes"], seconds,
                                                      work=work)
    if given is None:
        assert asked == [] and out == (Status.FALLBACK, None, None, None)
    else:
        assert asked == [pytest.approx(given)] and out[0] is Status.OPTIMAL


def test_rounded_answers_are_checked_against_every_row_levels_included():
    """On the SSD levels' form: the 40 GB job with its level count (feasible), the same
    selection with no job counted on the levels (an auxiliary row broken), and a row at
    exactly its bound."""
    lf = linear_form(LEVELS, ["nodes", "ssd_waste"])
    s = _Pulp(lf, Budget(30.0), 0, "cbc")
    status, x, a, _ = s.maximize(*lf.objectives["nodes"], 10.0)
    assert status is Status.OPTIMAL and s._feasible(x.astype(np.int64), a)
    assert not s._feasible(x.astype(np.int64), np.zeros_like(a))
    plain = linear_form(FORCED, ["nodes", "bb"])
    p = _Pulp(plain, Budget(30.0), 0, "cbc")
    at = np.array([1, 1, 0, 1, 0])  # 7 nodes of 7
    assert int(plain.rows[0][0] @ at) == plain.rows[0][2] and p._feasible(at, np.zeros(0))
    assert not p._feasible(np.array([1, 1, 1, 1, 0]), np.zeros(0))


def test_unknown_or_missing_solvers_are_refused():
    lf = linear_form(FORCED, ["nodes", "bb"])
    with pytest.raises(InputError, match="unknown MILP solver 'glpk'; known: cbc, highs") as e:
        _Pulp(lf, Budget(30.0), 0, "glpk")._cmd(1.0)
    assert e.value.field == "solver"
    if not pulp.HiGHS_CMD(msg=False).available():
        with pytest.raises(InputError, match="^field 'solver': the HiGHS command-line solver is "
                                             "not installed; use solver=cbc$") as e:
            _Pulp(lf, Budget(30.0), 0, "highs")._cmd(1.0)
        assert e.value.field == "solver"


def test_the_backend():
    r = solve_milp(FORCED, Budget(30.0), 0, form="weighted")
    assert r.backend == "milp" and r.status is Status.OPTIMAL
    assert tuple(FORCED.evaluate(r.solution)) == (7.0, 8 * GB)
    r = solve_milp(FORCED, Budget(30.0), 0, form="lexicographic", priority=("bb", "nodes"))
    assert tuple(FORCED.evaluate(r.solution)) == (5.0, 11 * GB)
    assert r.solution.dtype == bool  # (a selection, as every backend answers it)
    lf = linear_form(FORCED, ("nodes", "bb"))
    _, x, a_counts, _ = _Pulp(lf, Budget(30.0), 0, "cbc").maximize(*lf.objectives["nodes"], 10.0)
    assert x.dtype == bool and a_counts.dtype == np.int64


def fake_cbc(tmp_path, first: str, xs: list[int], code: int = 0) -> str:
    """A "CBC" that writes a solution file (its first line ``first``, the values ``xs`` of
    the renamed binaries X0000000, ...) and exits with ``code``."""
    lines = "".join(f"      {i} X{i:07d}  {v}  0\\n" for i, v in enumerate(xs))
    path = tmp_path / "fake-cbc"
    path.write_text("#!/bin/sh\nwhile [ $# -gt 1 ]; do\n"
                    '  if [ "$1" = "-solution" ]; then out="$2"; fi; shift\ndone\n'
                    f"printf '{first}\\n{lines}' > \"$out\"\nexit {code}\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("first, xs, code, want", [
    # stopped by its time limit with a selection: an answer, not proven
    ("Stopped on time - objective value 7.00000000", [1, 1, 0, 1, 0], 0,
     (Status.FEASIBLE, [True, True, False, True, False])),
    ("Optimal - objective value 7.00000000", [1, 1, 0, 1, 0], 0,
     (Status.OPTIMAL, [True, True, False, True, False])),
    ("Infeasible - objective value 0.00000000", [0, 0, 0, 0, 0], 0, (Status.INFEASIBLE, None)),
    # a solution file, but CBC failed: no answer
    ("Optimal - objective value 7.00000000", [1, 1, 0, 1, 0], 1, (Status.FALLBACK, None)),
    # "optimal" values that break the node row (9 nodes of 7): no answer
    ("Optimal - objective value 9.00000000", [1, 1, 1, 1, 0], 0, (Status.FALLBACK, None)),
])
def test_what_is_made_of_cbcs_answer(tmp_path, first, xs, code, want):
    lf = linear_form(FORCED, ["nodes", "bb"])
    Killed.path = fake_cbc(tmp_path, first, xs, code)

    class Fake(Killed):
        def _cmd(self, seconds):
            cmd = super()._cmd(seconds)
            cmd.deadline = 30.0
            return cmd

    status, x, _, bound = Fake(lf, Budget(30.0), 0, "cbc").maximize(*lf.objectives["nodes"], 5.0)
    assert (status, None if x is None else list(x)) == want and bound is None

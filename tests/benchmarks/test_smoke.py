"""Every speed script runs through the suite's entry point on a tiny input and leaves its record
in the JSON file: an API change that breaks a benchmark fails here, not when it is next run for
its figures. The scripts whose tiny run takes about a CPU second (:data:`QUICK`) run in the fast
suite, two side by side; the others, whose tiny run still replays a trace or starts child
processes (2-11 CPU s each), run in the ``slow`` suite."""

from __future__ import annotations

import json

import pytest

from benchmarks.speed.__main__ import TINY, main, scripts
from tests._workload_data import KTH_SWF, data_file

MACHINE_KEYS = {"host", "machine", "processor", "cpus", "system", "python", "packages", "commit",
                "load_average"}
SCRIPT_KEYS = {"name", "command", "returncode", "wall_s", "cpu_s", "load_average_before",
               "load_average_after", "stdout", "stderr"}


#: Scripts whose tiny run takes about a CPU second (measured: 0.6-1.5 CPU s each, children
#: included); the fast suite runs these.
QUICK = ("big_swf", "compare_workers", "omfs_speed", "plan_evaluator", "scaling",
         "whole_process")

#: Scripts that need a client outside the README's install (``.[dev,plot,interop]``): its
#: module. batsim_agreement speaks Batsim's protocol over ZeroMQ (the ``batsim`` extra).
NEEDS = {"batsim_agreement": "zmq"}


def _tiny(tmp_path_factory, names: list[str]) -> tuple[int, dict]:
    """``names`` on tiny inputs, two scripts side by side: (exit code, record)."""
    data = data_file(KTH_SWF).parent
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("BBOPT_DATA", str(data))
        out = tmp_path_factory.mktemp("speed") / "speed.json"
        code = main([*names, "--tiny", "-j", "2", "--json", str(out)])
    return code, json.loads(out.read_text())


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    return _tiny(tmp_path_factory, list(QUICK))


@pytest.fixture(scope="module")
def tiny_run_slow(tmp_path_factory):
    return _tiny(tmp_path_factory, [n for n in scripts() if n not in QUICK])


def test_every_speed_script_has_a_tiny_input():
    assert sorted(TINY) == scripts()
    assert set(QUICK) <= set(scripts())
    assert "named_plan" in scripts() and "__main__" not in scripts()


def test_the_record_describes_the_machine(tiny_run):
    code, record = tiny_run
    assert record["suite"] == "speed" and record["tiny"] is True and record["parallel"] == 2
    assert set(record["machine"]) == MACHINE_KEYS
    assert len(record["machine"]["load_average"]) == 3
    assert record["machine"]["packages"]["bbopt"] and record["machine"]["cpus"] >= 1
    assert [r["name"] for r in record["scripts"]] == list(QUICK)
    assert code == (0 if all(r["returncode"] == 0 for r in record["scripts"]) else 1)


@pytest.mark.parametrize("name", [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow)
                                  for n in scripts()])
def test_speed_script_runs_tiny(name, request):
    if name in NEEDS:
        pytest.importorskip(NEEDS[name], reason=f"{name} needs {NEEDS[name]} (the batsim extra)")
    _, record = request.getfixturevalue("tiny_run" if name in QUICK else "tiny_run_slow")
    (run,) = [r for r in record["scripts"] if r["name"] == name]
    assert run["returncode"] == 0, run["stderr"]
    assert set(run) == SCRIPT_KEYS
    assert run["command"][1].endswith(f"speed/{name}.py")
    assert run["command"][2:] == TINY[name]
    assert run["cpu_s"] > 0 and run["wall_s"] > 0
    assert run["stdout"].strip(), f"{name} printed no table"


def test_unknown_script_is_refused(tmp_path, capsys):
    assert main(["no_such_benchmark", "--json", str(tmp_path / "x.json")]) == 2
    assert "no_such_benchmark" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()

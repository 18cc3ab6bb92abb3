"""The one registry class and plug-ins: names found lazily by module, options from the
signature, incomplete entries refused at registration; an installed plug-in package (policy and
backend, entry points) used by ``bbopt compare`` and a sweep specification, and a plug-in module
named by ``--plugin`` or a spec's ``plugins:``, without any change to bbopt."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from bbopt.cli import main
from bbopt.errors import InputError, UnknownNameError
from bbopt.registry import Registry

ROOT = Path(__file__).resolve().parents[1]


def test_a_declared_name_is_imported_on_first_use(tmp_path, monkeypatch):
    (tmp_path / "lazy_things.py").write_text(textwrap.dedent('''
        class Thing:
            """A thing that counts.

            More text."""

            def __init__(self, name="thing", step: int = 2, *, scale: float = 1.0):
                pass
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry("thing", check=None)
    reg.declare({"counter": "lazy_things:Thing"})
    assert "lazy_things" not in sys.modules and "counter" in reg
    entry = reg.get("counter")
    assert "lazy_things" in sys.modules
    assert entry.about == "A thing that counts."
    assert entry.options() == {"step": 2, "scale": 1.0}
    reg.add("fixed", entry.obj, "one step", step=1)
    assert reg.get("fixed").options() == {"scale": 1.0}
    assert reg.names() == ["counter", "fixed"]
    with pytest.raises(UnknownNameError, match="known: counter, fixed"):
        reg.get("countre")


def test_an_incomplete_policy_is_refused_when_it_is_registered():
    from bbopt.policies import register

    class NoFlag:  # (it used to die with AttributeError inside the engine)
        def __init__(self, name="no-flag"):
            self.name = name

        def decide(self, state):
            raise AssertionError

    with pytest.raises(InputError, match="io_aware"):
        register("no-flag")(NoFlag)

    class NoDecide:
        io_aware = False

    with pytest.raises(InputError, match=r"missing decide\(state\)"):
        register("no-decide")(NoDecide)
    from bbopt.simulation.execution import EXECUTION_MODELS

    with pytest.raises(InputError, match="missing reset, start, next_time, finish"):
        EXECUTION_MODELS.add("nothing", object)


PLUGIN_MODULE = '''
"""A user's policy module: registering is importing it."""
from bbopt import Decision
from bbopt.core import Start
from bbopt.policies import register


@register("smallest-first")
class SmallestFirst:
    """Start the narrowest waiting jobs that fit."""

    io_aware = False

    def __init__(self, name="smallest-first"):
        self.name = name

    def decide(self, state):
        free_nodes, free_bb = state.free()
        starts = []
        for job in sorted(state.queue, key=lambda j: j.nodes):
            if job.nodes <= free_nodes and job.bb <= free_bb:
                starts.append(Start(job.id))
                free_nodes -= job.nodes
                free_bb -= job.bb
        return Decision(start=tuple(starts))
'''


def test_a_plugin_module_named_on_the_command_line_and_in_a_spec(tmp_path, monkeypatch, capsys):
    (tmp_path / "my_policies.py").write_text(PLUGIN_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["compare", "--jobs", "60", "--bb", "none", "--policies", "smallest-first,fcfs-bb",
            "--format", "json", "--no-progress"]
    assert main([*args, "--plugin", "no_such_module"]) == 2
    assert "no_such_module" in capsys.readouterr().err
    assert main([*args, "--plugin", "my_policies"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert metrics["smallest-first"]["finished"] == 60
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "p", "plugins": ["my_policies"], "policies": ["smallest-first"],
        "workloads": {"w": {"generator": {"name": "kth-like", "n_jobs": 60}}}}))
    assert main(["sweep", str(spec), "--out", str(tmp_path / "r"), "--serial",
                 "--no-progress"]) == 0
    assert len(list((tmp_path / "r").rglob("*.json"))) >= 1


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """examples/plugin installed with pip into a folder of its own (no network: the build
    backend is the one installed with bbopt's tools)."""
    tmp = tmp_path_factory.mktemp("plugin")
    shutil.copytree(ROOT / "examples" / "plugin", tmp / "src")
    target = tmp / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--no-index", "--target", str(target),
                    str(tmp / "src")], check=True, timeout=300, capture_output=True)
    return target


def _bbopt(target: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(target), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "bbopt", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def test_an_installed_plugin_package_is_used_by_compare_and_a_sweep(installed, tmp_path):
    r = _bbopt(installed, "compare", "--jobs", "120", "--bb", "none", "--policies",
               "widest-first,bbsched", "-o", "backend=widest", "--format", "json",
               "--no-progress", "--workers", "1", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    metrics = json.loads(r.stdout)
    assert metrics["widest-first"]["finished"] + metrics["widest-first"]["killed"] == 120
    assert metrics["bbsched"]["decisions_fallback"] == 0  # the plug-in backend answered
    r = _bbopt(installed, "policies", cwd=tmp_path)
    assert "widest-first" in r.stdout and "widest first" in r.stdout
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump({
        "name": "plugged", "policies": ["widest-first",
                                        {"name": "bbsched", "options": {"backend": "widest"}}],
        "workloads": {"w": {"generator": {"name": "kth-like", "n_jobs": 80}}}}))
    r = _bbopt(installed, "sweep", str(spec), "--out", str(tmp_path / "r"), "--workers", "2",
               "--no-progress", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = _bbopt(installed, "sweep", "collect", str(tmp_path / "r"), cwd=tmp_path)
    assert "widest-first" in r.stdout and "bbsched" in r.stdout


def test_readers_platforms_and_backends_share_the_registry(tmp_path, monkeypatch):
    from bbopt.core import Job
    from bbopt.loading import PLATFORMS, READERS, load_platform, load_workload
    from bbopt.models.window import WindowModel
    from bbopt.solvers.base import backends_for, register_backend

    def read_lines(path):
        return [Job(str(k), float(k), 60.0, runtime=30.0, nodes=1)
                for k, _ in enumerate(Path(path).read_text().split())]

    monkeypatch.setitem(READERS._entries, ".jobs", None)  # (undone after the test)
    READERS.add(".jobs", read_lines, "one job per word")
    (tmp_path / "w.jobs").write_text("a b c")
    jobs, _ = load_workload(tmp_path / "w.jobs", bb="none")
    assert [j.id for j in jobs] == ["0", "1", "2"]
    assert "kopanski" in PLATFORMS and PLATFORMS.get("cts1").about.startswith("LLNL")
    assert load_platform("kopanski").nodes == 96
    model = WindowModel.from_jobs(jobs, free_nodes=2, free_bb=0.0)
    assert {"cpsat", "greedy", "nsga2"} <= set(backends_for(model))
    with pytest.raises(InputError, match="must be a function"):
        register_backend(WindowModel, "not-a-function")(42)


class _Sized:
    """A sized thing.

    More text."""

    def __init__(self, size: int = 1, depth: int = 2) -> None:
        self.size, self.depth = size, depth


def test_the_decorator_registers_the_object_its_about_and_fixed_options():
    reg = Registry("thing")
    assert reg.register("big", about="A big one", size=9)(_Sized) is _Sized
    entry = reg.get("big")
    assert (entry.name, entry.obj, entry.about, entry.fixed) == ("big", _Sized, "A big one",
                                                                 {"size": 9})
    assert entry.options() == {"depth": 2}
    reg.register("plain")(_Sized)
    assert reg.get("plain").about == "A sized thing."  # the docstring's first line
    assert list(reg) == ["big", "plain"] and len(reg) == 2
    reg.remove("plain")
    reg.remove("never-registered")  # forgetting an unknown name is no error
    assert list(reg) == ["big"]


@pytest.mark.parametrize("module", ["", "  ", 3, None])
def test_a_plugin_that_is_not_a_module_name_is_refused_with_its_field(module):
    from bbopt.registry import load_plugins

    with pytest.raises(InputError) as caught:
        load_plugins([module])
    assert caught.value.reason == f"a plug-in is a module name, got {module!r}"
    assert caught.value.field == "--plugin"
    with pytest.raises(InputError) as caught:
        load_plugins(["json", module], where="plugins")
    assert caught.value.field == "plugins"


def test_a_plugin_that_does_not_import_is_named_with_its_place():
    from bbopt.registry import load_plugins

    with pytest.raises(InputError) as caught:
        load_plugins(["bbopt_no_such_plugin"])
    assert caught.value.reason == ("cannot import plug-in 'bbopt_no_such_plugin': No module "
                                   "named 'bbopt_no_such_plugin'")
    assert caught.value.field == "--plugin"
    with pytest.raises(InputError) as caught:
        load_plugins(["json", "bbopt_no_such_plugin"], where="plugins")
    assert caught.value.field == "plugins[1]"
    with pytest.raises(InputError) as caught:
        load_plugins(["bbopt_no_such_plugin", "json"])
    assert caught.value.field == "--plugin[0]"


class _EntryPoint:
    def __init__(self, name, value, load):
        self.name, self.value, self.load = name, value, load


def _with_entry_points(monkeypatch, *eps):
    import importlib.metadata

    def entry_points(group):
        assert group == "bbopt.things"
        return list(eps)

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)


def test_an_entry_point_is_loaded_on_first_use(monkeypatch):
    _with_entry_points(monkeypatch, _EntryPoint("sized", "pkg.mod:Sized", lambda: _Sized))
    reg = Registry("thing", group="bbopt.things")
    assert "sized" in reg and reg.known() == ["sized"]
    entry = reg.get("sized")
    assert (entry.name, entry.obj, entry.about) == ("sized", _Sized, "A sized thing.")


def test_a_broken_entry_point_is_named_with_its_group(monkeypatch):
    def broken():
        raise ValueError("boom")

    _with_entry_points(monkeypatch, _EntryPoint("bad", "pkg.bad:Thing", broken))
    reg = Registry("thing", group="bbopt.things")
    with pytest.raises(InputError) as caught:
        reg.get("bad")
    assert caught.value.reason == ("the thing plug-in 'bad' (pkg.bad:Thing) does not load: "
                                   "ValueError: boom")
    assert caught.value.field == "bbopt.things"


def test_a_module_entry_point_registers_its_own_names(monkeypatch):
    import types

    reg = Registry("thing", group="bbopt.things")
    module = types.ModuleType("pkg.things")

    def load():
        reg.add("mod", _Sized, about="from the module")
        return module

    _with_entry_points(monkeypatch, _EntryPoint("mod", "pkg.things", load),
                       _EntryPoint("empty", "pkg.empty", lambda: module))
    entry = reg.get("mod")
    assert (entry.obj, entry.about) == (_Sized, "from the module")  # not the module itself
    with pytest.raises(UnknownNameError):
        reg.get("empty")  # a module that registers nothing under its name
    assert "empty" not in reg.names() and reg.names() == ["mod"]

"""The Slurm side without a Slurm: ``site-config`` validates and escapes what slurmctld will run,
never replaces a file silently and refuses a zero license unit; ``slurm run`` gives up at once,
with a message, when no controller answers, and says while it runs when Slurm commands fail.
The command layer is faked (scripts on PATH, or a :class:`SlurmCommands` whose ``run`` is
replaced)."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.cli import main
from bbopt.errors import InputError
from bbopt.slurm.bridge import Bridge
from bbopt.slurm.cli import RunProgress
from bbopt.slurm.cluster import SlurmError
from bbopt.slurm.commands import SlurmCommands
from bbopt.slurm.site import (
    MAX_LICENSES,
    check_partition,
    job_submit_lua,
    lua_string,
    slurm_conf_lines,
)

ROOT = Path(__file__).resolve().parents[2]


def _unlua(literal: str) -> str:
    """The text of a Lua string literal as :func:`lua_string` writes them."""
    assert literal[0] == literal[-1] == '"'
    inner = literal[1:-1]
    # every backslash starts a three-digit escape; nothing else can end the string
    assert re.fullmatch(r'(?:[ !#-\[\]-~]|\\[0-9]{3})*', inner), inner
    raw = re.sub(r"\\([0-9]{3})", lambda m: chr(int(m.group(1))), inner)
    return raw.encode("latin-1").decode("utf-8")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_lua_string_round_trips_and_cannot_end_the_literal(text):
    assert _unlua(lua_string(text)) == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_a_partition_name_is_valid_or_refused_and_never_breaks_the_script(name):
    try:
        check_partition(name)
    except InputError as exc:
        assert exc.field == "--partition"
        with pytest.raises(InputError):
            job_submit_lua([name])
        return
    lua = job_submit_lua([name])
    line = next(x for x in lua.splitlines() if x.startswith("local BBOPT_PARTITIONS"))
    assert line == f'local BBOPT_PARTITIONS = {{ ["{name}"] = true }}  -- empty: every partition'


@pytest.mark.parametrize("name, ok", [
    ("batch", True), ("gpu.a100-1", True), ("a" * 64, True), ("a" * 65, False), ("", False),
    ('x"] = true } os.execute("id") --', False), ("a b", False), ("a,b", False),
    ("a=b", False), ("-x", False), ("x\n", False), ("é", False)])
def test_partition_names(name, ok):
    if ok:
        assert check_partition(name) == name
    else:
        with pytest.raises(InputError, match="not a Slurm partition name"):
            check_partition(name)


def test_site_config_refuses_an_injected_partition_and_writes_nothing(tmp_path, capsys):
    lua = tmp_path / "job_submit.lua"
    rc = main(["slurm", "site-config", "--bb", "480TB", "--partition", 'p"] = 1 } os.exit() --',
               "--lua", str(lua)])
    err = capsys.readouterr()
    assert rc == 2 and "not a Slurm partition name" in err.err and err.out == ""
    assert not lua.exists()


def test_site_config_replaces_a_file_only_with_force(tmp_path, capsys):
    lua = tmp_path / "job_submit.lua"
    lua.write_text("-- the site's own\n")
    args = ["slurm", "site-config", "--bb", "480TB", "--bb-unit", "1TB", "--lua", str(lua)]
    assert main(args) == 2
    assert "exists; give --force" in capsys.readouterr().err
    assert lua.read_text() == "-- the site's own\n"
    assert main([*args, "--force"]) == 0
    assert "function slurm_job_submit" in lua.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["job_submit.lua"]  # no temporary left


@pytest.mark.parametrize("unit, bb, message", [
    ("0", "480TB", "at least 1 byte per license"),
    ("0.5", "480TB", "at least 1 byte per license"),
    ("1", "480TB", "licenses; Slurm counts 1 to"),  # 4.8e14 licenses
    ("1TB", "0.5TB", "licenses; Slurm counts 1 to"),  # 0 licenses
    ("1TB", "0", "must be > 0 bytes")])
def test_site_config_license_unit_and_count(unit, bb, message, capsys):
    assert main(["slurm", "site-config", "--bb", bb, "--bb-unit", unit]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


def test_license_count_bounds():
    assert slurm_conf_lines(MAX_LICENSES * 1.0, 1.0)[0] == f"Licenses=bb:{MAX_LICENSES}"
    with pytest.raises(InputError):
        slurm_conf_lines(MAX_LICENSES + 1.0, 1.0)
    assert slurm_conf_lines(1.0, 1.0)[0] == "Licenses=bb:1"


def _fake_slurm(tmp_path: Path, scontrol: str) -> dict[str, str]:
    """An environment whose PATH has only a fake ``scontrol`` (a shell script body)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "scontrol"
    script.write_text("#!/bin/sh\n" + scontrol + "\n")
    script.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:/usr/bin:/bin", "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("scontrol, message", [
    ("exec sleep 60", "timed out after 1 s"),  # a controller that never answers
    ('echo "slurm_load_ctl_conf error: Unable to contact slurm controller" >&2; exit 1',
     "Unable to contact slurm controller"),
    ('echo "Slurmctld(primary) at head is DOWN"; exit 0', "not up")])
def test_run_without_a_reachable_slurm_fails_fast(tmp_path, scontrol, message):
    env = _fake_slurm(tmp_path, scontrol)
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "bbopt", "slurm", "run", "--state-dir",
                           str(tmp_path / "state"), "--connect-timeout", "1s"], env=env,
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr and "cannot reach Slurm" in proc.stderr or "not up" in message
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert time.monotonic() - t0 < 30  # bounded (the fake controller sleeps 60 s)


def test_run_with_no_slurm_installed_says_so(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "bbopt", "slurm", "run", "--state-dir",
                           str(tmp_path / "state")], env=env, capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert proc.returncode == 2
    assert "scontrol not found (is Slurm installed?)" in proc.stderr


class FlakySlurm(SlurmCommands):
    """A Slurm whose commands fail for the first ``failures`` calls, then show an idle node."""

    def __init__(self, failures: int) -> None:
        super().__init__(env={})
        self.failures = failures
        self.calls = 0

    def run(self, argv, check=True):
        self.calls += 1
        if self.calls <= self.failures:
            raise SlurmError(f"{argv[0]} timed out after 30 s")
        return {"sinfo": "n1 idle\n"}.get(argv[0], "")


def test_run_progress_reports_failures_at_once_and_recovery(tmp_path):
    bridge = Bridge(FlakySlurm(failures=3), "fcfs-bb", state_dir=tmp_path, interval=0.01)
    out = io.StringIO()
    progress = RunProgress(bridge, every=1e-9, stream=out)  # a line after every poll
    bridge.run(max_seconds=0.2, stop=lambda: progress.tick() or False, on_step=progress.step)
    lines = out.getvalue().splitlines()
    failed = [x for x in lines if "a Slurm command failed" in x]
    assert len(failed) == 1 and "timed out after 30 s" in failed[0]
    assert str(tmp_path / "errors.jsonl") in failed[0]
    assert sum("Slurm answers again" in x for x in lines) == 1
    assert lines.index(failed[0]) < next(k for k, x in enumerate(lines) if "answers again" in x)
    assert re.search(r"\d+ decisions, 0 jobs started, [1-3] failed polls", lines[-1])


@pytest.mark.parametrize("over, field", [({"interval": 1e-6}, "interval"),
                                         ({"interval": 0.0}, "interval"),
                                         ({"tick": 1e-6}, "tick"), ({"tick": 0.5}, "tick")])
def test_the_bridge_refuses_periods_that_would_hammer_slurmctld(tmp_path, over, field):
    with pytest.raises(InputError) as exc:
        Bridge(FlakySlurm(0), "fcfs-bb", state_dir=tmp_path, **over)
    assert exc.value.field == field

"""Result files survive a reader that goes away (``bbopt ... | head``), get the permissions an
ordinary file would, are written whole or not at all, are checked before any work (a bad
``--out``, ``--plot`` or result file refused naming it), and say where they came from."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bbopt import Job, Platform, simulate
from bbopt.errors import InputError
from bbopt.outputs import (
    IMAGE_SUFFIXES,
    _umask,
    atomic_path,
    check_out_dir,
    check_out_file,
    check_plot_path,
    echo,
    provenance,
    run_file,
    streamed_csv,
    write_json,
    write_run,
    write_skipped,
    write_split,
    write_text,
)


@pytest.mark.parametrize("command", [
    ["simulate", "--policy", "fcfs-bb"],
    ["compare", "--policies", "fcfs-bb,sjf-bb", "--format", "csv"],
])
def test_closed_stdout_does_not_lose_the_results(tmp_path: Path, command):
    out = tmp_path / "res"
    proc = subprocess.Popen([sys.executable, "-m", "bbopt.cli", *command, "--jobs", "40",
                             "--no-progress", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()  # the reader is gone before anything is printed
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert b"Traceback" not in stderr
    assert (out / "summary.json").stat().st_size > 0
    assert (out / "fcfs-bb_jobs.csv").read_text().count("\n") == 41  # header + 40 jobs


def test_policies_into_a_closed_pipe_is_quiet():
    proc = subprocess.Popen([sys.executable, "-m", "bbopt.cli", "policies", "-v"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    proc.stdout.close()
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0 and stderr == b""


def test_written_files_have_ordinary_permissions(tmp_path: Path):
    mask = os.umask(0o027)
    try:
        path = write_text(tmp_path / "a.csv", "x\n")
    finally:
        os.umask(mask)
    assert path.stat().st_mode & 0o777 == 0o640


def refusal(call, *args, **kw):
    """``(reason, source, field)`` of the InputError ``call(*args, **kw)`` raises."""
    with pytest.raises(InputError) as info:
        call(*args, **kw)
    return info.value.reason, info.value.source, info.value.field


def test_atomic_path_writes_beside_the_file_and_renames_when_done(tmp_path: Path):
    final = tmp_path / "a.csv"
    final.write_text("old\n")
    with atomic_path(str(final)) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".a.")
        assert tmp.name.endswith(".tmp.csv") and tmp.exists() and tmp != final
        tmp.write_text("new\n")
        assert final.read_text() == "old\n"  # not visible before the block ends
    assert final.read_text() == "new\n" and sorted(os.listdir(tmp_path)) == ["a.csv"]
    assert final.stat().st_mode & 0o777 == 0o666 & ~_umask()


@pytest.mark.parametrize("error", [ValueError, KeyboardInterrupt])
def test_atomic_path_keeps_the_old_file_when_the_block_fails(tmp_path: Path, error):
    final = tmp_path / "a.csv"
    final.write_text("old\n")
    with pytest.raises(error), atomic_path(final) as tmp:
        tmp.write_text("half")
        raise error
    assert final.read_text() == "old\n" and os.listdir(tmp_path) == ["a.csv"]


def test_atomic_path_syncs_the_whole_file_before_the_rename(tmp_path: Path, monkeypatch):
    synced = []

    def fsync(fd):
        synced.append(os.fstat(fd).st_ino)
        assert not (tmp_path / "a.csv").exists()

    monkeypatch.setattr(os, "fsync", fsync)
    with atomic_path(tmp_path / "a.csv") as tmp:
        tmp.write_text("x")
    assert synced == [(tmp_path / "a.csv").stat().st_ino]  # the file renamed: the same inode


def test_umask_is_read_without_changing_it():
    mask = os.umask(0o027)
    try:
        assert _umask() == 0o027 and _umask() == 0o027
    finally:
        os.umask(mask)


def test_streamed_csv_is_the_runs_jobs_csv(tmp_path: Path):
    jobs = [Job(str(k), float(k), walltime=10, runtime=5, nodes=1 + k % 2) for k in range(6)]
    result = streamed_csv(tmp_path / "s.csv", lambda on_end: simulate(
        jobs, Platform(2), "fcfs", on_job_end=on_end))
    result.to_csv(tmp_path / "whole.csv")
    assert (tmp_path / "s.csv").read_text() == (tmp_path / "whole.csv").read_text()
    assert len(result.jobs) == 6


def test_streamed_rows_reach_the_disk_while_the_run_goes(tmp_path: Path):
    """The rows of jobs already ended are written during the run (through the file's buffer,
    8 KiB here): 1,500 jobs' rows fill it many times before the run returns."""
    jobs = [Job(str(k), float(k), walltime=10, runtime=5) for k in range(1500)]
    during = []

    def run(on_end):
        result = simulate(jobs, Platform(4), "fcfs", on_job_end=on_end)
        (tmp,) = tmp_path.glob(".s.*.tmp.csv")
        during.append(tmp.read_text())
        return result

    streamed_csv(tmp_path / "s.csv", run)
    final = (tmp_path / "s.csv").read_text()
    assert len(during[0]) >= 8192 and final.startswith(during[0])


def test_echo_prints_a_line_and_survives_a_reader_gone(tmp_path: Path, capsys, monkeypatch):
    echo("a")
    echo("b", end="")
    echo()
    assert capsys.readouterr().out == "a\nb\n"
    target = tmp_path / "out"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT)

    class Gone:
        def write(self, text):
            raise BrokenPipeError

        def fileno(self):
            return fd

    monkeypatch.setattr(sys, "stdout", Gone())
    echo("lost")  # no error
    os.write(fd, b"to /dev/null now")
    os.close(fd)
    assert target.read_text() == ""


def test_write_text_and_json(tmp_path: Path):
    assert write_text(str(tmp_path / "t.txt"), "é\n") == tmp_path / "t.txt"
    assert (tmp_path / "t.txt").read_bytes() == "é\n".encode()
    assert write_json(tmp_path / "j.json", {"a": [1], "p": Path("x/y")}) == tmp_path / "j.json"
    assert (tmp_path / "j.json").read_text() == '{\n  "a": [\n    1\n  ],\n  "p": "x/y"\n}\n'


def test_check_out_dir_creates_it_or_refuses_before_any_work(tmp_path: Path):
    new = tmp_path / "x" / "y"
    assert check_out_dir(str(new), ["a.csv"], force=False) == new and new.is_dir()
    (new / "b.csv").write_text("")
    (new / "a.csv").write_text("")
    names = ["c.csv", "b.csv", "a.csv"]
    assert refusal(check_out_dir, new, names, False) == (
        "would overwrite a.csv and 1 more; choose another --out or add --force", str(new),
        "--out")
    assert refusal(check_out_dir, new, ["c.csv", "b.csv"], False)[0] == (
        "would overwrite b.csv; choose another --out or add --force")
    assert check_out_dir(new, names, force=True) == new
    assert check_out_dir(new, ["c.csv"], force=False) == new
    (tmp_path / "f").write_text("")
    assert refusal(check_out_dir, tmp_path / "f", [], True) == (
        "exists and is not a directory", str(tmp_path / "f"), "--out")
    assert refusal(check_out_dir, tmp_path / "f" / "sub", [], True) == (
        "is not a directory", str(tmp_path / "f"), "--out")  # the nearest existing ancestor


def test_an_unwritable_place_is_refused(tmp_path: Path, monkeypatch):
    asked = []

    def access(path, mode):
        asked.append((Path(path), mode))
        return False

    monkeypatch.setattr(os, "access", access)
    assert refusal(check_out_dir, tmp_path / "new" / "out", [], False) == (
        "is not writable", str(tmp_path), "--out")
    assert asked == [(tmp_path, os.W_OK | os.X_OK)]
    assert refusal(check_out_file, tmp_path / "r.csv", False, "--csv") == (
        "is not writable", str(tmp_path), "--csv")
    assert refusal(check_plot_path, tmp_path / "p.png", False) == (
        "is not writable", str(tmp_path), "--plot")
    assert not (tmp_path / "new").exists()


def test_check_plot_path(tmp_path: Path, monkeypatch):
    assert check_plot_path(str(tmp_path / "p.PNG"), False) == tmp_path / "p.PNG"
    assert refusal(check_plot_path, tmp_path / "p.txt", False) == (
        f"needs an image extension ({', '.join(IMAGE_SUFFIXES)})", str(tmp_path / "p.txt"),
        "--plot")
    (tmp_path / "d.png").mkdir()
    assert refusal(check_plot_path, tmp_path / "d.png", True) == (
        "is a directory", str(tmp_path / "d.png"), "--plot")
    (tmp_path / "e.svg").write_text("")
    assert refusal(check_plot_path, tmp_path / "e.svg", False) == (
        "exists; choose another name or add --force", str(tmp_path / "e.svg"), "--plot")
    assert check_plot_path(tmp_path / "e.svg", True) == tmp_path / "e.svg"
    assert refusal(check_plot_path, tmp_path / "no" / "p.pdf", False) == (
        "no such directory", str(tmp_path / "no"), "--plot")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert refusal(check_plot_path, tmp_path / "p.png", False) == (
        "needs matplotlib: pip install 'bbopt[plot]'", None, "--plot")


def test_check_out_file(tmp_path: Path):
    assert check_out_file(str(tmp_path / "r.csv"), False) == tmp_path / "r.csv"
    assert check_out_file(tmp_path / "sub" / "r.csv", False) == tmp_path / "sub" / "r.csv"
    assert refusal(check_out_file, tmp_path, True) == ("is a directory", str(tmp_path), "--out")
    (tmp_path / "r.csv").write_text("")
    assert refusal(check_out_file, tmp_path / "r.csv", False, "--skipped") == (
        "exists; choose another name or add --force", str(tmp_path / "r.csv"), "--skipped")
    assert check_out_file(tmp_path / "r.csv", True) == tmp_path / "r.csv"


def test_provenance_records_what_produced_a_result(monkeypatch):
    from datetime import UTC, datetime
    from types import SimpleNamespace

    from bbopt import __version__

    workload = SimpleNamespace(name="kth", path="/d/kth.swf", sha256="ab12", jobs=[1, 2, 3],
                               total=5, skipped=[(1, "r", "x")])
    platform = SimpleNamespace(name="p", nodes=8, bb=1e9, topology=None)
    started = datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=UTC)
    got = provenance(workload=workload, seed=7, platform=platform,
                     policies=iter(["fcfs", "bbsched", "bin-packing"]),
                     options={"budget": 0.5}, budget_mode="wall", started=started,
                     command=["simulate", "--jobs", "a b"])
    assert got == {
        "bbopt_version": __version__, "command": "bbopt simulate --jobs 'a b'",
        "python": sys.version.split()[0], "started": "2026-01-02T03:04:05+00:00",
        "workload": {"name": "kth", "path": "/d/kth.swf", "sha256": "ab12", "jobs": 3,
                     "jobs_in_file": 5, "skipped_records": 1},
        "seed": 7, "platform": {"name": "p", "nodes": 8, "bb": 1e9, "topology": False},
        "policies": ["fcfs", "bbsched", "bin-packing"], "policy_options": {"budget": 0.5},
        "budget_mode": "wall", "budgets": {"bbsched": 0.5, "bin-packing": 0.5}}
    monkeypatch.setattr(sys, "argv", ["bbopt", "compare", "--seed", "7"])
    platform.topology = object()
    got = provenance(workload=workload, seed=7, platform=platform, policies=["bbsched"],
                     options={})
    assert got["command"] == "bbopt compare --seed 7" and got["budgets"] == {"bbsched": 2.0}
    assert got["budget_mode"] is None and got["platform"]["topology"] is True
    when = datetime.fromisoformat(got["started"])
    assert when.tzinfo is not None and when.microsecond == 0
    assert abs((datetime.now(UTC) - when).total_seconds()) < 60


def test_run_file_names():
    assert run_file("fcfs-bb") == "fcfs-bb_jobs.csv"
    assert run_file("rl:models/a.zip", "segments") == "rl:models_a.zip_segments.csv"
    assert run_file("rl:c:\\m\\a") == "rl:c:_m_a_jobs.csv"


class Run:
    """What ``write_run`` reads of a result: its jobs, states and segments."""

    def __init__(self, jobs, rejected, segments):
        self.jobs = [None] * jobs
        self.state = ["rejected"] * rejected + ["done"] * (jobs - rejected)
        self.segments = [None] * segments

    def to_csv(self, path):
        Path(path).write_text("jobs\n")

    def segments_to_csv(self, path):
        Path(path).write_text("segments\n")


@pytest.mark.parametrize(("jobs", "rejected", "segments", "written"), [
    (3, 0, 3, False), (3, 0, 4, True), (3, 1, 2, False), (3, 1, 3, True)])
def test_segments_are_written_only_when_a_job_ran_in_more_than_one(tmp_path: Path, jobs,
                                                                   rejected, segments, written):
    write_run(tmp_path, "a/b", Run(jobs, rejected, segments))
    assert (tmp_path / "a_b_jobs.csv").read_text() == "jobs\n"
    assert (tmp_path / "a_b_segments.csv").exists() is written
    if written:
        assert (tmp_path / "a_b_segments.csv").read_text() == "segments\n"


def test_a_streamed_run_writes_no_jobs_csv_again(tmp_path: Path):
    write_run(tmp_path, "x", Run(2, 0, 3), jobs_csv=False)
    assert sorted(os.listdir(tmp_path)) == ["x_segments.csv"]


def test_write_split_and_skipped(tmp_path: Path):
    import json

    import pandas as pd

    table = pd.DataFrame({"metric": ["wait"], "mean": [1.5]})
    table.attrs["raw"] = pd.DataFrame({"part": [0, 1], "wait": [1.0, 2.0]})
    write_split(tmp_path, table, {"seed": 3})
    assert (tmp_path / "split_summary.csv").read_text() == "metric,mean\nwait,1.5\n"
    assert (tmp_path / "split_parts.csv").read_text() == "part,wait\n0,1.0\n1,2.0\n"
    assert json.loads((tmp_path / "summary.json").read_text()) == {
        "provenance": {"seed": 3}, "split": [{"metric": "wait", "mean": 1.5}]}
    path = write_skipped(str(tmp_path / "s.csv"), [(3, "bad, field", 'a "b"'), (9, "x", "y")])
    assert path == tmp_path / "s.csv"
    assert path.read_bytes() == b'line,reason,record\n3,"bad, field","a ""b"""\n9,x,y\n'

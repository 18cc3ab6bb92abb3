"""The local Slurm's processes without Slurm: daemons started on stand-in programs (shell
scripts named ``munged``, ``slurmctld``, ``slurmd``, ``sinfo``, ``squeue`` and ``scancel`` first
on ``PATH``) with their logs, environment and death signal, readiness, restart, the jobs
cancelled and the processes ended at the stop."""

import ctypes
import os
import shutil
import signal
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from bbopt.slurm import cluster
from bbopt.slurm.cluster import LocalSlurm, SlurmError, _end_processes, _exists, job_processes

#: Stand-in programs: each notes its call in ``$FAKE_CALLS``; the clients need the cluster's
#: configuration (``SLURM_CONF``), as Slurm's do.


CLIENT = 'echo "$(basename "$0")" >> "$FAKE_CALLS"\n[ -f "$SLURM_CONF" ] || exit 1\n'


FAKE = {
    # munged: makes the socket it is given (a moment later), then stays up like a daemon
    "munged": 'sleep 0.1\nfor a in "$@"; do case $a in --socket=*) : > "${a#--socket=}";; esac; '
              'done\nexec sleep 60\n',
    "slurmctld": "exec sleep 60\n",
    "slurmd": "exec sleep 60\n",
    "sinfo": CLIENT + '[ "$*" = "-h -N -o %N %T" ] || exit 2\ncat "$FAKE_SINFO"\n',
    # squeue: prints $FAKE_SQUEUE.1, .2, ... one per call, the last one again and again
    "squeue": CLIENT + '[ "$*" = "-h -o %i %T" ] || exit 2\nset -- "$FAKE_SQUEUE".*\n'
                       '[ -f "$1" ] || exit 0\ncat "$1"\n[ $# -gt 1 ] && rm "$1"\nexit 0\n',
    # scancel: records its arguments, says so and fails (as when a job has just ended)
    "scancel": CLIENT + 'echo "$@" >> "$FAKE_SCANCEL"\necho scancel-said; echo scancel-err >&2\n'
                        'exit 1\n',
}


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch):
    """Stand-in Slurm programs first on ``PATH``; the files that script and record them
    (``squeue``: what its successive calls print, written with :func:`_squeue`)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKE.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + body)
        (bin_dir / name).chmod(0o755)
    files = {k: tmp_path / f"{k}.txt" for k in ("sinfo", "squeue", "scancel", "calls")}
    for key, path in files.items():
        if key != "squeue":
            path.write_text("")
        monkeypatch.setenv(f"FAKE_{key.upper()}", str(path))
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir, files


def _squeue(files, *outputs: str) -> None:
    for k, text in enumerate(outputs):
        Path(f"{files['squeue']}.{k}").write_text(text)


def _pdeathsig_in_a_child(before=None) -> int:
    """The death signal a forked child has after :func:`_die_with_parent` (its exit code)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 99
        try:
            if before is not None:
                before()
            cluster._die_with_parent()
            sig = ctypes.c_int(-1)
            ctypes.CDLL(None).prctl(2, ctypes.byref(sig))  # PR_GET_PDEATHSIG
            code = sig.value
        finally:
            os._exit(code)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def test_a_daemon_asks_for_sigterm_when_its_parent_dies():
    assert _pdeathsig_in_a_child() == signal.SIGTERM


def test_without_prctl_a_daemon_starts_all_the_same(monkeypatch):
    class NoPrctl:
        def __init__(self, *args, **kwargs):
            pass

    monkeypatch.setattr(cluster.ctypes, "CDLL", NoPrctl)  # AttributeError
    assert cluster._die_with_parent() is None

    def no_libc(*args, **kwargs):
        raise OSError("no libc")

    monkeypatch.setattr(cluster.ctypes, "CDLL", no_libc)
    assert cluster._die_with_parent() is None


def test_the_death_signal_is_asked_from_the_main_thread_only():
    assert cluster._death_signal() is cluster._die_with_parent
    got = []
    t = threading.Thread(target=lambda: got.append(cluster._death_signal()))
    t.start()
    t.join()
    assert got == [None]


def _sleeper(tmp_path, name: str, env: dict) -> subprocess.Popen:
    exe = tmp_path / name
    if not exe.exists():
        shutil.copy(shutil.which("sleep"), exe)
    return subprocess.Popen([str(exe), "30"], env={"PATH": os.environ["PATH"], **env})


def test_job_processes_are_the_steps_and_tasks_of_this_cluster_only(tmp_path):
    conf = tmp_path / "slurm.conf"
    task = _sleeper(tmp_path, "sleep", {"SLURM_CONF": str(conf), "SLURM_JOB_ID": "4"})
    step = _sleeper(tmp_path, "slurmstepd", {"SLURM_CONF": str(conf)})
    client = _sleeper(tmp_path, "sleep", {"SLURM_CONF": str(conf)})
    other = _sleeper(tmp_path, "slurmstepd", {"SLURM_CONF": "/other/slurm.conf",
                                              "SLURM_JOB_ID": "4"})
    procs = [task, step, client, other]
    try:
        deadline = time.monotonic() + 5
        while sorted(job_processes(conf)) != sorted([task.pid, step.pid]):
            assert time.monotonic() < deadline, job_processes(conf)
            time.sleep(0.02)
        assert job_processes(str(conf)) == job_processes(conf)
    finally:
        for p in procs:
            p.kill()
            p.wait()


def test_the_process_looking_is_never_one_of_them(tmp_path, monkeypatch):
    conf = tmp_path / "slurm.conf"
    task = _sleeper(tmp_path, "sleep", {"SLURM_CONF": str(conf), "SLURM_JOB_ID": "4"})
    try:
        deadline = time.monotonic() + 5
        while job_processes(conf) != [task.pid]:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        monkeypatch.setattr(cluster.os, "getpid", lambda: task.pid)
        assert job_processes(conf) == []
    finally:
        task.kill()
        task.wait()


def test_processes_end_on_sigterm_else_on_sigkill_after_the_grace(tmp_path):
    obeys = subprocess.Popen(["sleep", "30"])
    ready = tmp_path / "ready"
    deaf = subprocess.Popen(["sh", "-c", f"trap '' TERM; : > {ready}; exec sleep 30"])
    gone = subprocess.Popen(["true"])
    gone.wait()
    deadline = time.monotonic() + 5
    while not ready.exists():
        assert time.monotonic() < deadline
        time.sleep(0.01)
    started = time.monotonic()
    _end_processes([obeys.pid, deaf.pid, gone.pid], grace=0.3)
    took = time.monotonic() - started
    assert obeys.wait(5) == -signal.SIGTERM and deaf.wait(5) == -signal.SIGKILL
    assert 0.3 <= took < 2.0


def test_ending_processes_waits_only_until_they_have_ended():
    p = subprocess.Popen(["sleep", "30"])
    started = time.monotonic()
    _end_processes([p.pid], grace=5.0)
    assert time.monotonic() - started < 1.0  # (a zombie has ended: not waited for)
    assert p.wait(5) == -signal.SIGTERM
    _end_processes([p.pid], grace=5.0)  # reaped: nothing to signal


def test_a_process_exists_until_it_has_ended(monkeypatch):
    p = subprocess.Popen(["sleep", "30"])
    assert _exists(p.pid)
    p.kill()
    deadline = time.monotonic() + 5
    while _exists(p.pid):  # a zombie until reaped, yet ended
        assert time.monotonic() < deadline
        time.sleep(0.01)
    assert Path(f"/proc/{p.pid}").exists()
    p.wait()
    assert not _exists(p.pid)

    class Unreadable:
        def __init__(self, path):
            pass

        def read_text(self):
            raise OSError("no /proc")

    monkeypatch.setattr(cluster, "Path", Unreadable)
    assert _exists(os.getpid())  # alive as far as kill can tell


def _environ(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/environ").read_text().split("\0")


def test_start_runs_munged_the_controller_and_one_slurmd_per_node(fake_slurm, short_dir):
    bin_dir, files = fake_slurm
    files["sinfo"].write_text("n1 idle\nn2 idle*\n")
    d = short_dir / "c"
    c = LocalSlurm(2, directory=d)
    try:
        started = time.monotonic()
        assert c.start(timeout=5) is c
        assert time.monotonic() - started < 0.9  # (munged's socket looked for every 50 ms)
        pids = c.pids
        assert [p.args for p in c._procs] == [
            [str(bin_dir / "munged"), "-F", "--force", f"--socket={d}/munge.sock",
             f"--key-file={d}/munge/munge.key", f"--pid-file={d}/munge/munged.pid",
             f"--log-file={d}/munge/munged.log", f"--seed-file={d}/munge/munged.seed"],
            [str(bin_dir / "slurmctld"), "-D", "-i", "-f", f"{d}/slurm.conf"],
            [str(bin_dir / "slurmd"), "-D", "-N", "n1", "-f", f"{d}/slurm.conf"],
            [str(bin_dir / "slurmd"), "-D", "-N", "n2", "-f", f"{d}/slurm.conf"]]
        key = d / "munge" / "munge.key"
        assert len(key.read_bytes()) == 1024 and stat.S_IMODE(key.stat().st_mode) == 0o400
        for pid in pids:
            assert f"SLURM_CONF={d}/slurm.conf" in _environ(pid)
            assert os.getsid(pid) == pid  # a session of its own
        assert sorted(p.name for p in d.glob("*.out")) == [
            "munged.out", "slurmctld.out", "slurmd-n1.out", "slurmd-n2.out"]
        _squeue(files, "5 RUNNING\n6 PENDING\n", "")
        c.stop()
        assert files["scancel"].read_text() == "5 6\n"  # every job, running or not
        assert c.pids == [] and c._procs == [] and c._logs == []
        for pid in pids:
            assert not _exists(pid)
        c.start(timeout=5)  # a key is kept
        assert len(key.read_bytes()) == 1024
    finally:
        c.stop()
    assert files["scancel"].read_text() == "5 6\n"  # no job: nothing cancelled


def test_a_cluster_is_ready_when_every_node_is_up(fake_slurm, short_dir):
    _, files = fake_slurm
    d = short_dir
    c = LocalSlurm(2, directory=d)
    c.write_config()
    for listed in ("n1 idle\nn2 allocated\n", "n1 mixed\n\nn2 idle*\n"):
        files["sinfo"].write_text(listed)
        c.wait_ready(timeout=0.5)
    (d / "slurmctld.log").write_text("L" * 700)
    for listed in ("n1 idle\n", "n1 idle\nn2 down*\n", "n1 idle\nn2 idle\nn3 idle\n"):
        files["sinfo"].write_text(listed)
        started = time.monotonic()
        with pytest.raises(SlurmError) as err:
            c.wait_ready(timeout=0.1)
        assert time.monotonic() - started < 0.9  # (sinfo asked every 0.2 s)
        assert str(err.value) == (f"cluster not ready after 0.1 s: {listed.strip()} / "
                                  + "L" * 600)


def test_a_cluster_not_ready_says_the_end_of_sinfos_last_answer(fake_slurm, short_dir):
    _, files = fake_slurm
    d = short_dir
    c = LocalSlurm(1, directory=d)
    c.write_config()
    files["sinfo"].write_text("n1 " + "d" * 400 + "\n")
    with pytest.raises(SlurmError) as err:
        c.wait_ready(timeout=0.1)
    assert str(err.value) == "cluster not ready after 0.1 s: " + "d" * 300 + \
        " / (no slurmctld.log)"
    with pytest.raises(SlurmError) as err:  # no time at all: sinfo never asked
        c.wait_ready(timeout=0)
    assert str(err.value) == "cluster not ready after 0 s:  / (no slurmctld.log)"


def test_a_failing_sinfo_is_not_ready(fake_slurm, short_dir):
    bin_dir, files = fake_slurm
    (bin_dir / "sinfo").write_text('#!/bin/sh\necho "n1 idle"\nexit 1\n')
    d = short_dir
    c = LocalSlurm(1, directory=d)
    with pytest.raises(SlurmError, match=r"^cluster not ready after 0\.2 s: n1 idle / "
                                         r"\(no slurmctld\.log\)$"):
        c.wait_ready(timeout=0.2)


def test_a_daemon_that_exits_stops_the_start_with_its_code(fake_slurm, short_dir):
    bin_dir, files = fake_slurm
    (bin_dir / "slurmctld").write_text("#!/bin/sh\nexit 3\n")
    files["sinfo"].write_text("n1 down\n")
    d = short_dir / "c"
    c = LocalSlurm(1, directory=d)
    with pytest.raises(SlurmError) as err:
        c.start(timeout=5)
    assert str(err.value) == f"{bin_dir}/slurmctld exited with 3: (no slurmctld.log)"
    assert c.pids == [] and c._procs == []  # munged stopped too


def test_a_munged_that_makes_no_socket_is_reported_at_once(fake_slurm, short_dir):
    bin_dir, _ = fake_slurm
    (bin_dir / "munged").write_text("#!/bin/sh\nexit 1\n")
    d = short_dir / "c"
    c = LocalSlurm(1, directory=d)
    (d / "munge").mkdir(parents=True)
    (d / "munge" / "munged.log").write_text("bad key")
    started = time.monotonic()
    with pytest.raises(SlurmError, match=r"^munged did not start: bad key$"):
        c.start(timeout=5)
    assert time.monotonic() - started < 5


def test_the_controller_restarts_with_the_same_command(fake_slurm, short_dir):
    _, files = fake_slurm
    files["sinfo"].write_text("n1 idle\n")
    d = short_dir
    with LocalSlurm(1, directory=d) as c:
        old = c._procs[1]
        c.restart_controller(down=0.0, timeout=2)
        new = c._procs[1]
        assert new.pid != old.pid and old.poll() is not None
        assert new.args == old.args and new.args[0].endswith("/slurmctld")
        assert c.pids == [c._procs[0].pid, new.pid, c._procs[2].pid]
        assert os.getsid(new.pid) == new.pid
    assert c.pids == [] and d.is_dir()  # a given directory is kept


def test_stopping_cancels_every_job_and_waits_while_one_holds_a_node(fake_slurm, monkeypatch,
                                                                    capfd, short_dir):
    _, files = fake_slurm
    d = short_dir
    c = LocalSlurm(1, directory=d)
    c.write_config()
    c._procs.append(subprocess.Popen(["sleep", "30"]))  # (a daemon: the cluster is up)
    monkeypatch.setattr(cluster.time, "sleep", lambda s: None)
    _squeue(files, "5 RUNNING\n6 PENDING\n", "5 COMPLETING\n", "5 CONFIGURING\n",
            "5 SUSPENDED\n", "6 PENDING\n5 RUNNING\n", "6 PENDING\n", "9 RUNNING\n")
    c.stop()  # (scancel's failure and output are its own)
    assert files["scancel"].read_text() == "5 6\n"
    assert files["calls"].read_text().split() == ["squeue", "scancel"] + ["squeue"] * 5
    assert "scancel-" not in "".join(capfd.readouterr())
    assert c.pids == []


def test_stopping_gives_up_waiting_after_the_timeout_and_without_squeue(fake_slurm, short_dir):
    bin_dir, files = fake_slurm
    d = short_dir
    c = LocalSlurm(1, directory=d)
    c.write_config()
    _squeue(files, "5 RUNNING\n")
    started = time.monotonic()
    c._cancel_jobs(timeout=0.3)
    assert 0.3 <= time.monotonic() - started < 1.0
    assert files["scancel"].read_text() == "5\n"
    (bin_dir / "squeue").write_text(f"#!/bin/sh\n{CLIENT}echo '5 RUNNING'\nexit 1\n")
    c._cancel_jobs(timeout=0.3)  # squeue fails: nothing to cancel
    (bin_dir / "squeue").unlink()
    c._cancel_jobs(timeout=0.3)  # no squeue at all: nothing either
    assert files["scancel"].read_text() == "5\n"


def test_a_cluster_never_started_asks_slurm_nothing_when_stopped(fake_slurm, short_dir):
    _, files = fake_slurm
    d = short_dir
    LocalSlurm(1, directory=d).stop()
    assert files["calls"].read_text() == ""


def test_stopping_ends_the_jobs_left_by_the_daemons(fake_slurm, tmp_path, short_dir):
    _, files = fake_slurm
    files["sinfo"].write_text("n1 idle\n")
    d = short_dir
    other = tmp_path / "other.conf"
    c = LocalSlurm(1, directory=d).start(timeout=5)
    task = _sleeper(tmp_path, "sleep", {"SLURM_CONF": str(c.conf), "SLURM_JOB_ID": "3"})
    kept = _sleeper(tmp_path, "sleep", {"SLURM_CONF": str(other), "SLURM_JOB_ID": "3"})
    deadline = time.monotonic() + 5
    while job_processes(c.conf) != [task.pid]:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    c.stop()
    assert task.wait(5) == -signal.SIGTERM and kept.poll() is None
    kept.kill()
    kept.wait()


def _fd(pid: int, fd: int) -> str:
    return os.readlink(f"/proc/{pid}/fd/{fd}")


def test_a_daemon_writes_to_its_log_reads_nothing_and_dies_with_its_parent(fake_slurm, tmp_path,
                                                                            short_dir):
    """The controller's stand-in notes its death signal (``PR_GET_PDEATHSIG``), before and
    after a restart."""
    import sys

    bin_dir, files = fake_slurm
    (bin_dir / "slurmctld").write_text(
        f"#!{sys.executable}\nimport ctypes, os, time\nsig = ctypes.c_int(-1)\n"
        "ctypes.CDLL(None).prctl(2, ctypes.byref(sig))\n"
        "open(os.environ['FAKE_CALLS'], 'a').write(f'pdeathsig {sig.value}\\n')\n"
        "time.sleep(60)\n")
    files["sinfo"].write_text("n1 idle\n")
    d = short_dir
    saved, (r, w) = os.dup(0), os.pipe()
    os.dup2(r, 0)  # (this process reads a pipe: a daemon must not)
    try:
        with LocalSlurm(1, directory=d) as c:
            for restart in (False, True):
                if restart:
                    started = time.monotonic()
                    c.restart_controller(timeout=2)  # at once: no time down by default
                    assert time.monotonic() - started < 0.9
                ctl = c._procs[1].pid
                assert _fd(ctl, 0) == "/dev/null"
                assert _fd(ctl, 1) == _fd(ctl, 2) == str(d / "slurmctld.out")
                assert f"SLURM_CONF={d}/slurm.conf" in _environ(ctl)
                deadline = time.monotonic() + 5
                while files["calls"].read_text().count("pdeathsig") < 1 + restart:
                    assert time.monotonic() < deadline
                    time.sleep(0.02)
            assert files["calls"].read_text().count(f"pdeathsig {int(signal.SIGTERM)}") == 2
            assert _fd(c._procs[2].pid, 1) == str(d / "slurmd-n1.out")
            started = time.monotonic()
            c.restart_controller(down=0.3, timeout=2)
            assert time.monotonic() - started >= 0.3
    finally:
        os.dup2(saved, 0)
        for fd in (saved, r, w):
            os.close(fd)


def test_a_daemon_is_asked_for_sigterm_on_its_parents_death(monkeypatch):
    calls = []

    class Libc:
        def __init__(self, name, use_errno=False):
            calls.append(("CDLL", name, use_errno))

        def prctl(self, *args):
            calls.append(("prctl", *args))

    monkeypatch.setattr(cluster.ctypes, "CDLL", Libc)
    cluster._die_with_parent()
    assert calls == [("CDLL", None, True), ("prctl", 1, signal.SIGTERM)]


def test_a_process_named_with_a_parenthesis_exists(tmp_path):
    exe = tmp_path / "x) Z"  # (/proc/PID/stat: "PID (x) Z) S ...")
    shutil.copy(shutil.which("sleep"), exe)
    p = subprocess.Popen([str(exe), "30"])
    try:
        assert _exists(p.pid)
    finally:
        p.kill()
        p.wait()

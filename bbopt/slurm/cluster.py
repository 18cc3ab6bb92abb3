"""A whole Slurm cluster on one machine, for tests and experiments.

:class:`LocalSlurm` writes a ``slurm.conf`` for ``nodes`` emulated nodes in a temporary directory,
starts its own ``munged``, one ``slurmctld`` and one ``slurmd -N nodeX`` per node (Slurm's
multiple-slurmd support: every node is ``NodeHostname=localhost`` with its own port), and stops
exactly the processes it started: first its jobs (cancelled; a job's ``slurmstepd`` outlives
``slurmd``, so what is left of them is found by the ``slurm.conf`` in its environment), then
the daemons. Everything it writes (state, spool, logs, munge key and socket)
lives under its directory; nothing is installed system-wide, and only loopback ports are used.

The shared burst buffer is a cluster license (``Licenses=bb:<count>``, see
:mod:`bbopt.slurm.pool` for why); job completion records go to ``jobcomp/filetxt`` so real start
and end times can be read back. Scheduling is Slurm's own ``sched/backfill`` with FIFO priorities
(``priority/basic``) and whole-node allocation (``select/linear``); the backfill parameters are
the arguments of :class:`LocalSlurm` and are written into the configuration verbatim.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

from bbopt.errors import BboptError
from bbopt.slurm.site import job_submit_lua

#: Longest unix socket path Slurm accepts (``sun_path`` of 108 bytes with its terminating NUL).
MAX_SOCKET_PATH = 107
#: The Slurm and munge programs a local cluster needs.
REQUIRED_PROGRAMS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo")


class SlurmError(BboptError):
    """A Slurm daemon or command failed (the message carries its output or log tail)."""


def missing_programs() -> list[str]:
    """The programs of :data:`REQUIRED_PROGRAMS` not found on ``PATH`` (and ``/usr/sbin``)."""
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/sbin"
    return [p for p in REQUIRED_PROGRAMS if shutil.which(p, path=path) is None]


def why_unavailable() -> str | None:
    """Why a local cluster cannot start here (missing programs, not root), or ``None``."""
    missing = missing_programs()
    if missing:
        return ("Slurm is not installed (missing " + ", ".join(missing)
                + "; on Debian: apt-get install slurm-wlm munge)")
    if os.geteuid() != 0:
        return "a local Slurm cluster needs root (slurmd runs jobs as their submitting user)"
    return None


def _free_ports(n: int) -> list[int]:
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


def _program(name: str) -> str:
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin" + os.pathsep + "/sbin"
    found = shutil.which(name, path=path)
    if found is None:
        raise SlurmError(f"{name} not found: {why_unavailable()}")
    return found


def job_processes(conf: str | Path) -> list[int]:
    """Processes run for the jobs of the cluster configured by ``conf``: ``slurmstepd``s, and
    job tasks (``SLURM_JOB_ID`` set), whose environment has ``SLURM_CONF=<conf>`` (Linux
    ``/proc``; nothing elsewhere). A client shell that merely points at the cluster is not one."""
    want = f"SLURM_CONF={conf}".encode()
    found = []
    proc = Path("/proc")
    if not proc.is_dir():
        return found
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            env = (entry / "environ").read_bytes().split(b"\0")
            comm = (entry / "comm").read_text().strip()
        except OSError:
            continue
        if want in env and (comm == "slurmstepd"
                            or any(v.startswith(b"SLURM_JOB_ID=") for v in env)):
            found.append(int(entry.name))
    return found


def _end_processes(pids: list[int], grace: float = 3.0) -> None:
    """SIGTERM ``pids``, then SIGKILL those still there after ``grace`` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        alive = []
        for pid in pids:
            try:
                os.kill(pid, sig)
                alive.append(pid)
            except (ProcessLookupError, PermissionError):
                pass
        if not alive or sig == signal.SIGKILL:
            return
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and any(_exists(p) for p in alive):
            time.sleep(0.1)
        pids = [p for p in alive if _exists(p)]


def _exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has ended; its parent reaps it
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


class LocalSlurm:
    """A Slurm cluster of ``nodes`` emulated nodes in ``directory`` (a new temporary one if None).

    ``bb_licenses`` is the size of the ``bb`` license pool (0: no pool); ``scheduler_parameters``
    are appended to ``SchedulerParameters`` (e.g. ``{"bf_interval": 1}``; a value ``None``
    writes the bare flag, e.g. ``{"bf_licenses": None}``). ``hold_new_jobs`` installs the
    site's ``job_submit.lua`` of :mod:`bbopt.slurm.site`: every job is submitted held, for the
    bridge to start, as on a site that puts bbopt in front of Slurm. Use as a context
    manager, or call :meth:`start` and :meth:`stop`. Client commands must run with
    :attr:`env` (it points ``SLURM_CONF`` at this cluster).
    """

    def __init__(self, nodes: int = 16, *, bb_licenses: int = 0,
                 directory: str | Path | None = None, partition: str = "batch",
                 node_prefix: str = "n",
                 scheduler_parameters: Mapping[str, object] | None = None,
                 cluster_name: str = "bbopt", hold_new_jobs: bool = False) -> None:
        if nodes < 1:
            raise ValueError(f"nodes must be >= 1, got {nodes}")
        self.nodes = nodes
        self.bb_licenses = bb_licenses
        self.partition = partition
        self.node_prefix = node_prefix
        self.cluster_name = cluster_name
        self.hold_new_jobs = hold_new_jobs
        params = {"bf_interval": 1, "bf_resolution": 1, "sched_min_interval": 0,
                  "bf_max_job_test": 1000, "default_queue_depth": 1000}
        params.update(scheduler_parameters or {})
        self.scheduler_parameters = params
        self._owns_dir = directory is None
        self.directory = Path(directory) if directory else None
        self._procs: list[subprocess.Popen] = []
        self._logs: list = []

    # -- names and environment -------------------------------------------------------------

    @property
    def node_names(self) -> list[str]:
        return [f"{self.node_prefix}{i}" for i in range(1, self.nodes + 1)]

    @property
    def conf(self) -> Path:
        return self.directory / "slurm.conf"

    @property
    def jobcomp(self) -> Path:
        """The ``jobcomp/filetxt`` file: one line per finished job with its real times."""
        return self.directory / "jobcomp.txt"

    @property
    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["SLURM_CONF"] = str(self.conf)
        for var in [k for k in env if k.startswith(("SLURM_", "SBATCH_", "SQUEUE_"))]:
            if var != "SLURM_CONF":
                del env[var]
        return env

    @property
    def pids(self) -> list[int]:
        """Process ids of the daemons this object started (and has not yet stopped)."""
        return [p.pid for p in self._procs if p.poll() is None]

    # -- configuration --------------------------------------------------------------------

    def write_config(self) -> Path:
        d = self.directory
        ctl_port, *node_ports = _free_ports(1 + self.nodes)
        host = socket.gethostname()
        sched = ",".join(k if v is None else f"{k}={v}"
                         for k, v in self.scheduler_parameters.items())
        lines = [
            f"ClusterName={self.cluster_name}",
            f"SlurmctldHost={host}(127.0.0.1)",
            f"SlurmctldPort={ctl_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={d / 'munge.sock'}",
            f"StateSaveLocation={d / 'state'}",
            f"SlurmdSpoolDir={d / 'spool'}/%n",
            f"SlurmctldPidFile={d / 'slurmctld.pid'}",
            f"SlurmdPidFile={d / 'slurmd-%n.pid'}",
            f"SlurmctldLogFile={d / 'slurmctld.log'}",
            f"SlurmdLogFile={d / 'slurmd-%n.log'}",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            "ProctrackType=proctrack/pgid",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/filetxt",
            f"JobCompLoc={self.jobcomp}",
            "MpiDefault=none",
            "MailProg=/bin/true",
            "SwitchType=switch/none",
            "ReturnToService=2",
            "SchedulerType=sched/backfill",
            f"SchedulerParameters={sched}",
            "SelectType=select/linear",
            "PriorityType=priority/basic",
            "MinJobAge=600",
            "KillWait=2",
            "InactiveLimit=0",
            "SlurmdTimeout=300",
            "SlurmctldTimeout=30",
            "MessageTimeout=10",
            "SlurmdParameters=config_overrides",
        ]
        if self.bb_licenses > 0:
            lines.append(f"Licenses=bb:{self.bb_licenses}")
        if self.hold_new_jobs:
            (d / "job_submit.lua").write_text(job_submit_lua((self.partition,)))
            lines.append("JobSubmitPlugins=lua")
        for name, port in zip(self.node_names, node_ports, strict=True):
            lines.append(f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} "
                         "CPUs=1 RealMemory=100 State=UNKNOWN")
        lines.append(f"PartitionName={self.partition} Nodes=ALL Default=YES MaxTime=INFINITE "
                     "State=UP")
        self.conf.write_text("\n".join(lines) + "\n")
        return self.conf

    def longest_socket_path(self) -> str:
        """The longest unix socket path the cluster will use: a job step's socket in the
        spool directory of its node (``<node>_<job id>.<step id>``, job ids up to 10 digits)."""
        node = max(self.node_names, key=len)
        return str(self.directory / "spool" / node / f"{node}_{'9' * 10}.4294967291")

    # -- life cycle -----------------------------------------------------------------------

    def start(self, timeout: float = 30.0) -> LocalSlurm:
        if self.directory is None:
            self.directory = Path(tempfile.mkdtemp(prefix="bbopt-slurm-"))
        d = self.directory
        longest = self.longest_socket_path()
        if len(os.fsencode(longest)) > MAX_SOCKET_PATH:
            raise SlurmError(f"the cluster's directory {d} is too long: Slurm's unix sockets "
                             f"(e.g. {longest}) must stay within {MAX_SOCKET_PATH} bytes; "
                             "use a shorter directory")
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o755)
        for sub in ("state", "spool", "munge"):
            (d / sub).mkdir(exist_ok=True)
        for name in self.node_names:
            (d / "spool" / name).mkdir(exist_ok=True)
        self.write_config()
        try:
            self._start_munge()
            self._spawn("slurmctld", [_program("slurmctld"), "-D", "-i", "-f", str(self.conf)])
            for name in self.node_names:
                self._spawn(f"slurmd-{name}", [_program("slurmd"), "-D", "-N", name,
                                               "-f", str(self.conf)])
            self.wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_munge(self) -> None:
        d = self.directory
        key = d / "munge" / "munge.key"
        if not key.exists():
            key.write_bytes(os.urandom(1024))
            os.chmod(key, 0o400)
        self._spawn("munged", [_program("munged"), "-F", "--force",
                               f"--socket={d / 'munge.sock'}", f"--key-file={key}",
                               f"--pid-file={d / 'munge' / 'munged.pid'}",
                               f"--log-file={d / 'munge' / 'munged.log'}",
                               f"--seed-file={d / 'munge' / 'munged.seed'}"])
        deadline = time.monotonic() + 10
        while not (d / "munge.sock").exists():
            if time.monotonic() > deadline or self._procs[-1].poll() is not None:
                raise SlurmError("munged did not start: " + self._tail(d / "munge" / "munged.log"))
            time.sleep(0.05)

    def _spawn(self, name: str, argv: list[str]) -> None:
        out = open(self.directory / f"{name}.out", "ab")  # noqa: SIM115 - closed in stop()
        self._logs.append(out)
        self._procs.append(subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=self.env,
                                            start_new_session=True))

    def wait_ready(self, timeout: float = 30.0) -> None:
        """Wait until every node is idle (or allocated) in ``sinfo``."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            for p in self._procs:
                if p.poll() is not None:
                    raise SlurmError(f"{p.args[0]} exited with {p.returncode}: "
                                     + self._tail(self.directory / "slurmctld.log"))
            r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], env=self.env,
                               capture_output=True, text=True)
            last = r.stdout + r.stderr
            states = [line.split()[1] for line in r.stdout.splitlines() if line.strip()]
            if (r.returncode == 0 and len(states) == self.nodes
                    and all(s.rstrip("*") in ("idle", "allocated", "mixed") for s in states)):
                return
            time.sleep(0.2)
        raise SlurmError(f"cluster not ready after {timeout:g} s: {last.strip()[-300:]} / "
                         + self._tail(self.directory / "slurmctld.log"))

    def stop(self) -> None:
        """Stop the cluster: cancel its jobs, stop the daemons this object started (slurmds,
        then slurmctld, then munged), and end what is left of its jobs.

        A job's ``slurmstepd`` and its tasks are not children of ``slurmd`` (they run in their
        own session and outlive it, so that a restarted ``slurmd`` can find them again); they
        are this cluster's because their environment names its ``slurm.conf``
        (:func:`job_processes`).
        """
        if self._procs and self.directory is not None:
            self._cancel_jobs()
        for p in reversed(self._procs):
            if p.poll() is None:
                p.terminate()
        for p in reversed(self._procs):
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout=5)
        self._procs.clear()
        if self.directory is not None:
            _end_processes(job_processes(self.conf))
        for f in self._logs:
            f.close()
        self._logs.clear()

    def restart_controller(self, down: float = 0.0, timeout: float = 30.0) -> None:
        """Stop ``slurmctld``, wait ``down`` seconds, and start it again on its saved state
        (jobs, holds and licenses survive, as on a site where the controller restarts)."""
        k = next(i for i, p in enumerate(self._procs) if p.args[0].endswith("slurmctld"))
        old = self._procs[k]
        old.terminate()
        old.wait(timeout=30)
        time.sleep(down)
        self._procs[k] = subprocess.Popen(old.args, stdout=self._logs[k], stderr=subprocess.STDOUT,
                                          stdin=subprocess.DEVNULL, env=self.env,
                                          start_new_session=True)
        self.wait_ready(timeout)

    def _cancel_jobs(self, timeout: float = 15.0) -> None:
        """``scancel`` every job of the cluster and wait until none holds a node."""
        def squeue() -> list[str] | None:
            try:
                r = subprocess.run(["squeue", "-h", "-o", "%i %T"], env=self.env,
                                   capture_output=True, text=True, timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                return None
            return r.stdout.split() if r.returncode == 0 else None

        listed = squeue()
        if not listed:
            return
        ids = listed[0::2]
        subprocess.run(["scancel", *ids], env=self.env, capture_output=True, timeout=10,
                       check=False)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            listed = squeue()
            if not listed or not any(s in ("RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED")
                                     for s in listed[1::2]):
                return
            time.sleep(0.2)

    def cleanup(self) -> None:
        """Stop, then remove the directory if this object created it."""
        self.stop()
        if self._owns_dir and self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)

    def __enter__(self) -> LocalSlurm:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.cleanup()

    @staticmethod
    def _tail(path: Path, n: int = 600) -> str:
        try:
            return path.read_text(errors="replace")[-n:]
        except OSError:
            return f"(no {path.name})"

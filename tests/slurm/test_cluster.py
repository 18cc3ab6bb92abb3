"""The local Slurm fixture: with a real Slurm (marked ``slurm``) it runs jobs and its bb license
pool is enforced by Slurm itself; without one, its names, paths, client environment,
configuration text and directory are checked (its processes: ``test_cluster_daemons.py``)."""

import os
import shutil
import socket
import stat
import time
from pathlib import Path

import pytest

from bbopt.slurm import cluster
from bbopt.slurm.cluster import (
    MAX_SOCKET_PATH,
    LocalSlurm,
    SlurmError,
    _free_ports,
    job_processes,
)
from bbopt.slurm.commands import SlurmCommands
from bbopt.slurm.replay import read_jobcomp
from bbopt.slurm.site import job_submit_lua


def wait_done(cluster, ids, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        records = read_jobcomp(cluster.jobcomp)
        if all(i in records for i in ids):
            return records
        time.sleep(0.2)
    raise AssertionError(f"jobs {ids} not finished after {timeout} s")


@pytest.mark.slurm
@pytest.mark.cluster(nodes=2, bb_licenses=10)
def test_the_cluster_runs_a_job_and_records_its_times(local_slurm):
    s = SlurmCommands(env=local_slurm.env)
    assert [n.name for n in s.nodes()] == ["n1", "n2"]
    assert all(n.usable for n in s.nodes())
    jid = s.submit(name="hello", seconds=1, walltime=60, nodes=2, licenses={"bb": 3})
    rec = wait_done(local_slurm, [jid])[jid]
    assert rec["JobState"] == "COMPLETED"
    assert rec["NodeList"] == "n[1-2]"
    assert rec["StartTime"] <= rec["EndTime"]


@pytest.mark.slurm
@pytest.mark.cluster(nodes=2, bb_licenses=10)
def test_a_job_asking_more_bb_than_the_pool_is_refused(local_slurm):
    s = SlurmCommands(env=local_slurm.env)
    assert s.licenses()["bb"].total == 10
    with pytest.raises(SlurmError, match="[Ll]icense"):
        s.submit(name="too-big", seconds=1, walltime=60, licenses={"bb": 11})


@pytest.mark.slurm
@pytest.mark.cluster(nodes=2, bb_licenses=10)
def test_slurm_holds_a_job_until_the_pool_has_room(local_slurm):
    s = SlurmCommands(env=local_slurm.env)
    a = s.submit(name="a", seconds=2, walltime=60, licenses={"bb": 6})
    b = s.submit(name="b", seconds=1, walltime=60, licenses={"bb": 6})  # a node is free, BB not
    time.sleep(1.0)
    pending = {j.id: j for j in s.jobs()}
    assert pending[b].state == "PENDING"  # reason Licenses, or Priority behind a blocked job
    recs = wait_done(local_slurm, [a, b])
    assert recs[b]["StartTime"] >= recs[a]["EndTime"]


@pytest.mark.slurm
@pytest.mark.cluster(nodes=2)
def test_stop_ends_exactly_the_processes_it_started(local_slurm):
    """Daemons and the running job's slurmstepd and tasks (which outlive slurmd) all end."""
    pids = local_slurm.pids
    assert len(pids) == 1 + 1 + 2  # munged, slurmctld, two slurmd
    s = SlurmCommands(env=local_slurm.env)
    jid = s.submit(name="long", seconds=120, walltime=300, nodes=1)
    deadline = time.monotonic() + 20
    while not job_processes(local_slurm.conf):
        assert time.monotonic() < deadline, f"job {jid} never ran"
        time.sleep(0.2)
    started = time.monotonic()
    local_slurm.stop()
    assert time.monotonic() - started < 30
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert job_processes(local_slurm.conf) == []


# -- without Slurm: names, paths, configuration ----------------------------------------------

def test_a_cluster_has_at_least_one_node_and_the_documented_defaults():
    with pytest.raises(ValueError, match=r"^nodes must be >= 1, got 0$"):
        LocalSlurm(0)
    one = LocalSlurm(1, directory="/d")
    assert one.node_names == ["n1"] and one.directory == Path("/d") and not one._owns_dir
    c = LocalSlurm()
    assert (c.nodes, c.bb_licenses, c.partition, c.node_prefix, c.cluster_name,
            c.hold_new_jobs, c.directory, c._owns_dir) == (16, 0, "batch", "n", "bbopt",
                                                            False, None, True)
    assert c.node_names == [f"n{i}" for i in range(1, 17)]
    assert c.scheduler_parameters == {"bf_interval": 1, "bf_resolution": 1,
                                      "sched_min_interval": 0, "bf_max_job_test": 1000,
                                      "default_queue_depth": 1000}
    assert c.pids == []
    c.stop()  # never started: nothing to stop


def test_scheduler_parameters_are_added_to_the_defaults_in_order():
    c = LocalSlurm(3, directory="/d", node_prefix="cn",
                   scheduler_parameters={"bf_interval": 5, "bf_licenses": None})
    assert list(c.scheduler_parameters.items()) == [
        ("bf_interval", 5), ("bf_resolution", 1), ("sched_min_interval", 0),
        ("bf_max_job_test", 1000), ("default_queue_depth", 1000), ("bf_licenses", None)]
    assert c.node_names == ["cn1", "cn2", "cn3"]
    assert c.conf == Path("/d/slurm.conf") and c.jobcomp == Path("/d/jobcomp.txt")


def test_the_client_environment_points_at_this_cluster_only(monkeypatch):
    for var, value in {"SLURM_JOB_ID": "7", "SLURM_CONF": "/other.conf", "SBATCH_PARTITION":
                       "p", "SQUEUE_FORMAT": "%i", "BBOPT_X": "kept"}.items():
        monkeypatch.setenv(var, value)
    env = LocalSlurm(1, directory="/d").env
    assert env["SLURM_CONF"] == "/d/slurm.conf" and env["BBOPT_X"] == "kept"
    assert not {"SLURM_JOB_ID", "SBATCH_PARTITION", "SQUEUE_FORMAT"} & set(env)
    assert os.environ["SLURM_CONF"] == "/other.conf"


def _config(monkeypatch, tmp_path, **kwargs) -> str:
    monkeypatch.setattr(cluster, "_free_ports", lambda n: list(range(7000, 7000 + n)))
    monkeypatch.setattr(cluster.socket, "gethostname", lambda: "host")
    return LocalSlurm(directory=tmp_path, **kwargs).write_config().read_text()


def test_the_configuration_is_written_line_by_line(monkeypatch, tmp_path):
    d = tmp_path
    text = _config(monkeypatch, d, nodes=2, bb_licenses=10, partition="p", cluster_name="cl",
                   scheduler_parameters={"bf_licenses": None})
    assert text == f"""ClusterName=cl
SlurmctldHost=host(127.0.0.1)
SlurmctldPort=7000
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge.sock
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc={d}/jobcomp.txt
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
ReturnToService=2
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1,bf_resolution=1,sched_min_interval=0,\
bf_max_job_test=1000,default_queue_depth=1000,bf_licenses
SelectType=select/linear
PriorityType=priority/basic
MinJobAge=600
KillWait=2
InactiveLimit=0
SlurmdTimeout=300
SlurmctldTimeout=30
MessageTimeout=10
SlurmdParameters=config_overrides
Licenses=bb:10
NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=7001 CPUs=1 RealMemory=100 \
State=UNKNOWN
NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=7002 CPUs=1 RealMemory=100 \
State=UNKNOWN
PartitionName=p Nodes=ALL Default=YES MaxTime=INFINITE State=UP
"""
    assert not (d / "job_submit.lua").exists()


def test_a_pool_of_one_license_is_written_and_none_is_not(monkeypatch, tmp_path):
    assert "\nLicenses=bb:1\n" in _config(monkeypatch, tmp_path, nodes=1, bb_licenses=1)
    assert "Licenses" not in _config(monkeypatch, tmp_path, nodes=1, bb_licenses=0)


def test_holding_new_jobs_installs_the_sites_job_submit_script(monkeypatch, tmp_path):
    text = _config(monkeypatch, tmp_path, nodes=1, partition="p", hold_new_jobs=True)
    assert "\nSlurmdParameters=config_overrides\nJobSubmitPlugins=lua\nNodeName=n1 " in text
    assert (tmp_path / "job_submit.lua").read_text() == job_submit_lua(("p",))


def test_free_ports_are_distinct_and_free_again():
    assert _free_ports(0) == []
    ports = _free_ports(3)
    assert len(set(ports)) == 3 and all(1024 <= p < 65536 for p in ports)
    for p in ports:  # (their sockets are closed: each can be bound again)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", p))


def test_the_longest_socket_path_is_a_step_socket_of_the_longest_node_name():
    c = LocalSlurm(12, directory="/d")
    assert c.longest_socket_path() == "/d/spool/n10/n10_9999999999.4294967291"


def _no_programs(monkeypatch) -> None:
    def missing(name):
        raise SlurmError(f"{name} not found")
    monkeypatch.setattr(cluster, "_program", missing)


def test_a_directory_too_long_for_slurms_sockets_is_refused_before_anything_starts(monkeypatch,
                                                                                   short_dir):
    """A directory whose step sockets take exactly 107 bytes is used; one byte more is refused
    before anything is made."""
    _no_programs(monkeypatch)
    base = short_dir
    room = MAX_SOCKET_PATH - len(str(base)) - len("/spool/n1/n1_9999999999.4294967291")
    at = LocalSlurm(1, directory=base / ("x" * (room - 1)))
    assert len(at.longest_socket_path()) == MAX_SOCKET_PATH == 107
    with pytest.raises(SlurmError, match="^munged not found$"):
        at.start()
    d = at.directory
    assert stat.S_IMODE(d.stat().st_mode) == 0o755
    assert sorted(p.name for p in d.iterdir()) == ["munge", "slurm.conf", "spool", "state"]
    assert [p.name for p in (d / "spool").iterdir()] == ["n1"]
    over = LocalSlurm(1, directory=base / ("x" * room))
    with pytest.raises(SlurmError) as err:
        over.start()
    assert str(err.value) == (
        f"the cluster's directory {over.directory} is too long: Slurm's unix sockets (e.g. "
        f"{over.longest_socket_path()}) must stay within 107 bytes; use a shorter directory")
    assert over.pids == [] and not over.directory.exists()


def test_a_cluster_without_a_directory_makes_one_and_removes_it_after(monkeypatch, short_dir):
    _no_programs(monkeypatch)
    own = LocalSlurm(1)
    with pytest.raises(SlurmError):
        own.start()
    assert own.directory.name.startswith("bbopt-slurm-") and own.directory.is_dir()
    own.cleanup()
    assert not own.directory.exists()
    base = short_dir
    given = LocalSlurm(1, directory=base / "c")
    with pytest.raises(SlurmError):
        given.start()
    given.cleanup()
    assert (base / "c" / "slurm.conf").exists()


def test_programs_are_looked_up_on_path_then_in_the_sbin_directories(monkeypatch):
    seen = []

    def which(name, path=None):
        seen.append(path)
        return None if name == "slurmd" else f"/opt/{name}"

    monkeypatch.setattr(cluster.shutil, "which", which)
    monkeypatch.setenv("PATH", "/a:/b")
    assert cluster._program("sinfo") == "/opt/sinfo"
    assert seen == ["/a:/b:/usr/sbin:/sbin"]
    with pytest.raises(SlurmError) as err:
        cluster._program("slurmd")
    assert str(err.value) == "slurmd not found: " + cluster.why_unavailable()
    assert cluster.missing_programs() == ["slurmd"]
    assert set(seen) == {"/a:/b:/usr/sbin:/sbin"}


def test_a_log_tail_is_its_last_characters_or_says_it_is_missing(tmp_path):
    log = tmp_path / "x.log"
    log.write_bytes(b"a" * 700 + b"\xff" + b"b" * 9)
    assert LocalSlurm._tail(log) == "a" * 590 + "\ufffd" + "b" * 9
    assert LocalSlurm._tail(log, 3) == "bbb"
    assert LocalSlurm._tail(tmp_path / "none.log") == "(no none.log)"


def test_a_cluster_makes_its_directorys_parents_and_cleans_up_twice(monkeypatch, short_dir):
    _no_programs(monkeypatch)
    base = short_dir
    c = LocalSlurm(1, directory=base / "a" / "b")
    with pytest.raises(SlurmError):
        c.start()
    assert (base / "a" / "b" / "slurm.conf").exists()
    own = LocalSlurm(1)
    with pytest.raises(SlurmError):
        own.start()
    shutil.rmtree(own.directory)
    own.cleanup()  # already gone: nothing to remove, no error


def test_without_path_programs_are_looked_up_in_the_sbin_directories(monkeypatch):
    seen = []
    monkeypatch.setattr(cluster.shutil, "which", lambda name, path=None: seen.append(path))
    monkeypatch.delenv("PATH")
    assert cluster.missing_programs() == list(cluster.REQUIRED_PROGRAMS)
    with pytest.raises(SlurmError):
        cluster._program("munged")
    assert set(seen) == {":/usr/sbin:/sbin"}

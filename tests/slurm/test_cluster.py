"""The local Slurm fixture runs jobs, and its bb license pool is enforced by Slurm itself."""

import os
import time

import pytest

from bbopt.slurm.cluster import LocalSlurm, SlurmError, job_processes
from bbopt.slurm.commands import SlurmCommands
from bbopt.slurm.replay import read_jobcomp

pytestmark = pytest.mark.slurm


def wait_done(cluster, ids, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        records = read_jobcomp(cluster.jobcomp)
        if all(i in records for i in ids):
            return records
        time.sleep(0.2)
    raise AssertionError(f"jobs {ids} not finished after {timeout} s")


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


@pytest.mark.cluster(nodes=2, bb_licenses=10)
def test_a_job_asking_more_bb_than_the_pool_is_refused(local_slurm):
    s = SlurmCommands(env=local_slurm.env)
    assert s.licenses()["bb"].total == 10
    with pytest.raises(SlurmError, match="[Ll]icense"):
        s.submit(name="too-big", seconds=1, walltime=60, licenses={"bb": 11})


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


def test_a_directory_too_long_for_slurms_sockets_is_refused_before_anything_starts(tmp_path):
    cluster = LocalSlurm(2, directory=tmp_path / ("x" * 60))
    with pytest.raises(SlurmError, match="too long"):
        cluster.start()
    assert cluster.pids == [] and not cluster.directory.exists()

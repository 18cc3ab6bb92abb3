"""The bridge in front of a real Slurm: the paper's 8-job example starts as ``bbopt simulate``
says, a start that does not fit is refused, and a killed bridge restarts without losing or
double-starting a job."""

import dataclasses
import json
import signal
import subprocess
import sys
import threading
import time

import pytest

from bbopt import Decision, Job, simulate, summarize
from bbopt.core import TB, Start
from bbopt.slurm.bridge import Bridge
from bbopt.slurm.commands import SlurmCommands
from bbopt.slurm.replay import read_jobcomp, replay, submit_workload
from tests._paper_examples import KOPANSKI_PLATFORM, kopanski_jobs
from tests.slurm.conftest import require_slurm

pytestmark = pytest.mark.slurm

PLATFORM = KOPANSKI_PLATFORM


def example(minute: float) -> list[Job]:
    return kopanski_jobs(minute)


@pytest.mark.slow
def test_fcfs_bb_starts_the_example_as_the_simulator_does():
    """One scaled minute is 5 s; the bridge decides every minute as the paper's scheduler
    does. Slurm's latencies are kept away from the minute marks, where they would decide which
    tick sees an event: each job is submitted 2 s before its minute (the scheduler at minute k
    sees what was submitted by minute k, as in the simulator, however slow sbatch is on a busy
    machine; the whole replay is one minute later than the simulation, so that this holds for
    minute 0 too), and each sleep is 3 s shorter than its walltime, so that the job has ended in
    Slurm, despite Slurm's start latency, by the minute at which the simulator ends it."""
    require_slurm()
    minute, interval = 5.0, 0.2
    jobs = example(minute)
    sim = simulate(jobs, PLATFORM, "fcfs-bb", tick=minute)
    real_jobs = [dataclasses.replace(j, submit=j.submit + minute - 2.0,
                                     runtime=j.walltime - 3.0) for j in jobs]
    real = replay(real_jobs, PLATFORM, scheduler="bridge", policy="fcfs-bb", bb_unit=TB,
                  interval=interval, tick=minute, timeout=150)
    sim_start = {j.id: sim.start[k] for k, j in enumerate(jobs)}
    real_start = {j.id: real.start[k] - minute for k, j in enumerate(real_jobs)}
    assert summarize(real)["finished"] == 8
    # the same start order (jobs the simulator starts at the same minute may start in any order)
    for a in sim_start:
        for b in sim_start:
            if sim_start[a] < sim_start[b]:
                assert real_start[a] < real_start[b], (a, b, real_start)
    for jid in sim_start:
        # the settling delay after a tick, Slurm's scheduling loop, whole-second times; a job
        # that missed its minute would be 5 s late
        assert -0.5 <= real_start[jid] - sim_start[jid] <= interval + 3.0, (jid, real_start)


class StartEverything:
    """A deliberately wrong policy: it starts every waiting job, fitting or not."""

    name = "start-everything"
    io_aware = False

    def decide(self, state):
        return Decision(start=tuple(Start(j.id) for j in state.queue))


@pytest.mark.cluster(nodes=4, bb_licenses=10)
def test_the_bridge_never_starts_what_does_not_fit(local_slurm, tmp_path):
    s = SlurmCommands(env=local_slurm.env)
    ids = [s.submit(name=f"j{k}", seconds=5, walltime=10, nodes=2, licenses={"bb": b},
                    hold=True) for k, b in enumerate((3, 3, 1, 6))]
    bridge = Bridge(s, StartEverything(), state_dir=tmp_path / "b", bb_unit=TB)
    record = bridge.step(force=True)
    # nodes for two jobs of 2; the 4th would also exceed the BB pool
    assert record.started == ids[:2]
    assert set(record.refused) == set(ids[2:])
    assert "does not fit" in record.refused[ids[2]]
    by_id = {j.id: j for j in s.jobs()}
    assert [by_id[i].held for i in ids] == [False, False, True, True]
    assert sorted(record.nodes[ids[0]] + record.nodes[ids[1]]) == ["n1", "n2", "n3", "n4"]
    # Slurm cancels a started job: the bridge goes on and gives its nodes to the next job
    freed = record.nodes[ids[0]]
    s.cancel(ids[0])
    deadline = time.monotonic() + 20
    while True:
        record = bridge.step(force=True)
        if record is not None and record.started:
            break
        assert time.monotonic() < deadline, "the cancelled job's nodes were never reused"
        time.sleep(0.2)
    assert record.started == [ids[2]]
    assert record.nodes[ids[2]] == freed  # the only idle nodes
    for i in ids:
        s.cancel(i)


@pytest.mark.cluster(nodes=4, bb_licenses=10)
def test_the_bridge_refuses_a_start_whose_burst_buffer_an_earlier_start_took(local_slurm,
                                                                              tmp_path):
    """Nodes are free for all three jobs; the pool of 10 holds the first and the third: the
    decision's second start would need burst buffer that its first start has just taken."""
    s = SlurmCommands(env=local_slurm.env)
    ids = [s.submit(name=f"b{k}", seconds=5, walltime=10, nodes=1, licenses={"bb": b},
                    hold=True) for k, b in enumerate((6, 5, 3))]
    bridge = Bridge(s, StartEverything(), state_dir=tmp_path / "b", bb_unit=TB)
    record = bridge.step(force=True)
    assert record.started == [ids[0], ids[2]]
    assert list(record.refused) == [ids[1]]
    assert "does not fit" in record.refused[ids[1]]
    by_id = {j.id: j for j in s.jobs()}
    assert [by_id[i].held for i in ids] == [False, True, False]
    for i in ids:
        s.cancel(i)


@pytest.mark.cluster(nodes=2, bb_licenses=10, hold_new_jobs=True)
def test_with_the_sites_job_submit_lua_plain_sbatch_jobs_wait_for_the_bridge(local_slurm,
                                                                            tmp_path):
    """Users keep their usual sbatch: the site's job_submit.lua holds every new job, Slurm's own
    scheduler starts none, the bridge starts them in its policy's order."""
    s = SlurmCommands(env=local_slurm.env)
    a = s.submit(name="a", seconds=1, walltime=60, nodes=1, licenses={"bb": 8})
    b = s.submit(name="b", seconds=1, walltime=60, nodes=1, licenses={"bb": 4})
    time.sleep(1.5)  # Slurm's scheduler has had its chance (sched_min_interval=0, bf_interval=1)
    by_id = {j.id: j for j in s.jobs()}
    assert by_id[a].held and by_id[b].held
    bridge = Bridge(s, "fcfs-bb", state_dir=tmp_path / "b", interval=0.2)
    record = bridge.step(force=True)
    assert record.started == [a]  # a node is free for b, but not the BB
    bridge.run(until_idle=True, max_seconds=30)
    records = read_jobcomp(local_slurm.jobcomp)
    assert {r["JobState"] for r in records.values()} == {"COMPLETED"}
    assert records[b]["StartTime"] >= records[a]["EndTime"]


def _bridge(env, state_dir, *extra):
    argv = [sys.executable, "-m", "bbopt.cli", "slurm", "run", "--policy", "conservative-bb",
            "--state-dir", str(state_dir), "--interval", "0.2", "--bb-unit", "1TB", *extra]
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _log(state_dir):
    path = state_dir / "decisions.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.mark.slow
@pytest.mark.cluster(nodes=4, bb_licenses=10)
def test_a_killed_bridge_restarts_without_losing_or_repeating_a_start(local_slurm, tmp_path):
    """conservative-bb keeps its reservations in its memory: the restart reads them back."""
    s = SlurmCommands(env=local_slurm.env)
    state_dir = tmp_path / "bridge"
    jobs = example(1.5)
    ids: dict[str, str] = {}
    origin = time.time() + 0.5
    submitter = threading.Thread(target=submit_workload, args=(s, jobs),
                                 kwargs=dict(origin=origin, hold=True, bb_unit=TB, submitted=ids))
    submitter.start()
    first = _bridge(local_slurm.env, state_dir)
    try:
        deadline = time.monotonic() + 30
        while sum(len(r["started"]) for r in _log(state_dir)) < 3:
            assert time.monotonic() < deadline and first.poll() is None, first.stdout.read()
            time.sleep(0.1)
        first.send_signal(signal.SIGKILL)  # no chance to tidy up
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
    submitter.join(timeout=30)
    started_before = sum(len(r["started"]) for r in _log(state_dir))
    assert started_before < 8  # the restart has work left
    saved = json.loads((state_dir / "bridge.json").read_text())
    assert saved["policy"] == "conservative-bb" and "reservations" in saved["memory"]
    time.sleep(1.0)  # jobs go on and end while no bridge runs
    second = _bridge(local_slurm.env, state_dir, "--until-idle", "--max-time", "90")
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0, out
    started = [jid for r in _log(state_dir) for jid in r["started"]]
    assert sorted(started, key=int) == sorted(ids.values(), key=int)  # each exactly once
    records = read_jobcomp(local_slurm.jobcomp)
    assert sorted(records, key=int) == sorted(ids.values(), key=int)
    assert all(r["JobState"] == "COMPLETED" for r in records.values())
    assert not any(r["refused"] for r in _log(state_dir))


@pytest.mark.slow
@pytest.mark.cluster(nodes=2, bb_licenses=10)
def test_the_bridge_outlives_a_controller_restart(local_slurm, tmp_path):
    """slurmctld is down longer than a Slurm command may take: the failed polls are logged, the
    bridge goes on, and once the controller is back (holds kept in its state) the held job is
    started, once."""
    s = SlurmCommands(env=local_slurm.env, timeout=3.0)
    jid = s.submit(name="a", seconds=1, walltime=60, hold=True)
    bridge = Bridge(s, "fcfs-bb", state_dir=tmp_path / "b", interval=0.2)
    down = threading.Thread(target=local_slurm.restart_controller, kwargs={"down": 7.0})
    down.start()
    time.sleep(1.0)
    try:
        bridge.run(until_idle=True, max_seconds=60)
    finally:
        down.join(timeout=60)
    assert bridge.errors >= 1
    errors = [json.loads(line) for line in (tmp_path / "b" / "errors.jsonl").open()]
    assert len(errors) == bridge.errors
    assert all(e["error"].split()[0] in ("squeue", "sinfo", "scontrol") for e in errors)
    assert [jid] == [j for r in _log(tmp_path / "b") for j in r["started"]]
    assert read_jobcomp(local_slurm.jobcomp)[jid]["JobState"] == "COMPLETED"

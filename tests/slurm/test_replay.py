"""The replay's parts that need no Slurm: a trace scaled in time and nodes, jobs submitted in
submit order with their walltime, licenses and comment (on a recorded command layer), Slurm's
job completion records read and turned into a schedule; and the whole replay on a fake
cluster (:class:`tests.slurm.fake.FakeCluster`: a controller of its own on the real clock, so a
replay takes a second or two), under Slurm's scheduler and the bridge. The replay through a real
Slurm is in test_site_and_run.py and the slurm-marked tests."""

from __future__ import annotations

import math
import sys
import time

import pytest

from bbopt.core import GB, Job, JobState, Platform
from bbopt.errors import InputError
from bbopt.slurm.cluster import SlurmError
from bbopt.slurm.commands import SlurmCommands
from bbopt.slurm.replay import collect, read_jobcomp, scale_workload, submit_workload
from tests.slurm.fake import FakeCluster


def _job(jid, submit, walltime=600.0, runtime=300.0, nodes=4, bb=0.0):
    return Job(jid, submit, walltime, runtime, nodes=nodes, bb=bb)


def test_a_trace_is_scaled_in_time_from_its_first_submission():
    jobs = [_job("a", 1000.0), _job("b", 1600.0, runtime=None)]
    out = scale_workload(jobs, 10.0)
    assert [(j.id, j.submit, j.walltime, j.runtime, j.nodes) for j in out] == [
        ("a", 0.0, 60.0, 30.0, 4), ("b", 60.0, 60.0, None, 4)]
    assert scale_workload([], 2.0) == []
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(InputError, match="speed-up must be > 0") as err:
            scale_workload(jobs, bad)
        assert err.value.field == "speedup"


def test_node_counts_are_scaled_rounded_and_kept_within_the_machine():
    jobs = [_job(str(n), 0.0, nodes=n) for n in (1, 3, 5, 96, 100)]
    out = scale_workload(jobs, 1.0, nodes=16, trace_nodes=96)
    # 1 * 16/96 = 0.17 -> at least 1; 3 -> 0.5 -> round half to even 0 -> 1; 5 -> 0.83 -> 1;
    # 96 -> 16; 100 -> 16.7 -> 17, cut to the 16 nodes
    assert [j.nodes for j in out] == [1, 1, 1, 16, 16]
    assert [j.nodes for j in scale_workload(jobs, 1.0, nodes=48, trace_nodes=96)] == [
        1, 2, 2, 48, 48]
    assert [j.nodes for j in scale_workload(jobs, 1.0, nodes=16)] == [1, 3, 5, 96, 100]
    assert [j.nodes for j in scale_workload(jobs, 1.0, nodes=16, trace_nodes=0)] == [
        1, 3, 5, 96, 100]


def test_job_completion_records_by_job_id(tmp_path):
    path = tmp_path / "jobcomp.txt"
    assert read_jobcomp(path) == {}
    path.write_text(
        "JobId=7 UserId=a(1) JobState=COMPLETED StartTime=2027-01-01T00:00:10 "
        "NodeList=n[1-2] Comment=x=y\n"
        "garbage without fields\n"
        "UserId=b JobState=FAILED\n"
        "JobId=8 JobState=TIMEOUT\n")
    recs = read_jobcomp(path)
    assert set(recs) == {"7", "8"}
    assert recs["7"] == {"JobId": "7", "UserId": "a(1)", "JobState": "COMPLETED",
                         "StartTime": "2027-01-01T00:00:10", "NodeList": "n[1-2]",
                         "Comment": "x=y"}


class _Recorder(SlurmCommands):
    """``sbatch`` recorded; job ids 100, 101, ..."""

    def __init__(self) -> None:
        super().__init__(env={})
        self.calls: list[tuple[str, ...]] = []

    def run(self, argv, check: bool = True) -> str:
        self.calls.append(tuple(argv))
        return f"{99 + len(self.calls)};cluster\n"


def test_jobs_are_submitted_in_submit_order_with_what_slurm_needs():
    commands = _Recorder()
    jobs = [_job("late", 2.0, walltime=90.0, runtime=200.0, nodes=2, bb=2.5 * GB),
            _job("early", 1.0, walltime=61.0, runtime=None, nodes=1)]
    done: dict[str, str] = {}
    ids = submit_workload(commands, jobs, origin=time.time() - 10.0, hold=True,
                          submitted=done)
    assert ids == {"early": "100", "late": "101"} and done is ids
    early, late = commands.calls
    assert early[:9] == ("sbatch", "--parsable", "-J", "bbopt-early", "-N", "1", "--time", "2",
                         "-o")
    assert "--hold" in early and "-L" not in early
    assert early[-2:] == ("--wrap", "sleep 61.000")  # no runtime: the walltime
    assert late[late.index("-L") + 1] == "bb:3"  # 2.5 GB in 1 GB licenses, rounded up
    assert late[-2:] == ("--wrap", "sleep 90.000")  # a runtime past the walltime is cut
    assert late[late.index("--comment") + 1] == "bbopt:walltime=90,id=late"
    assert late[late.index("-N") + 1] == "2"
    free = _Recorder()
    submit_workload(free, jobs[:1], origin=time.time() - 10.0, hold=False, bb_unit=0.5 * GB)
    assert "--hold" not in free.calls[0] and "bb:5" in free.calls[0]


class _Clock:
    """The replay's clock, frozen: ``sleep`` and a stop event's ``wait`` are recorded."""

    def __init__(self, now: float) -> None:
        self.now, self.slept, self.waited = now, [], []

    def time(self) -> float:
        return self.now

    def sleep(self, seconds) -> None:
        self.slept.append(seconds)

    def wait(self, seconds) -> bool:
        self.waited.append(seconds)
        return False


def test_each_job_is_submitted_when_its_time_comes(monkeypatch):
    import sys

    replay_module = sys.modules[submit_workload.__module__]  # (the package exports a replay())
    clock = _Clock(5000.0)
    monkeypatch.setattr(replay_module, "time", clock)
    jobs = [_job("a", 0.0, walltime=61.0, runtime=30.0), _job("b", 0.5), _job("c", 2.0)]
    commands = _Recorder()
    submit_workload(commands, jobs, origin=5000.0, hold=True)
    # a job due now is not waited for; the others wait their delay from the (frozen) clock
    assert clock.slept == [0.5, 2.0]
    assert commands.calls[0][-2:] == ("--wrap", "sleep 30.000")  # the runtime, not the walltime
    stop = _Clock(5000.0)
    submit_workload(_Recorder(), jobs, origin=5000.0, hold=True, stop=stop)
    assert stop.waited == [0.5, 2.0] and clock.slept == [0.5, 2.0]


def test_a_stopped_submission_leaves_the_rest_unsubmitted():
    import threading

    commands = _Recorder()
    stop = threading.Event()
    stop.set()
    jobs = [_job("now", 0.0), _job("later", 3600.0)]
    ids = submit_workload(commands, jobs, origin=time.time(), hold=True, stop=stop)
    assert list(ids) == ["now"]


def _stamp(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(t))


def test_completion_records_become_the_schedule():
    origin = 1_800_000_000.0
    plat = Platform(nodes=4, bb=10 * GB)
    jobs = [_job("e", 0.0), _job("a", 0.0), _job("b", 5.0), _job("c", 5.0), _job("d", 5.0),
            _job("f", 5.0)]
    ids = {"a": "1", "b": "2", "c": "3", "d": "4", "f": "5"}  # e was never submitted
    recs = {
        "1": {"StartTime": _stamp(origin + 10), "EndTime": _stamp(origin + 70),
              "JobState": "COMPLETED", "NodeList": "n[2-3],x9"},
        # truncated to a second before its submission: started at its submission
        "2": {"StartTime": _stamp(origin + 4), "EndTime": _stamp(origin + 4),
              "JobState": "TIMEOUT", "NodeList": "n1"},
        "3": {"StartTime": "Unknown", "EndTime": _stamp(origin + 9), "JobState": "CANCELLED"},
        "4": {"StartTime": _stamp(origin + 20), "EndTime": _stamp(origin + 30),
              "JobState": "FAILED", "NodeList": "n4"},
        # a record without a node list or a state: no nodes, and an empty reason
        "5": {"StartTime": _stamp(origin + 40), "EndTime": _stamp(origin + 50)},
    }
    res = collect(jobs, ids, recs, origin=origin, platform=plat, policy="slurm",
                  node_names=["n1", "n2", "n3", "n4"], workload_name="w")
    assert res.policy == "slurm" and res.workload_name == "w" and res.platform is plat
    assert (res.start[1], res.end[1], res.state[1], res.allocation[1]) == (
        10.0, 70.0, JobState.FINISHED, (1, 2))
    assert (res.start[2], res.end[2], res.state[2], res.allocation[2]) == (
        5.0, 5.0, JobState.KILLED, (0,))
    assert (res.start[4], res.end[4], res.state[4]) == (20.0, 30.0, JobState.FINISHED)
    assert (res.start[5], res.end[5], res.state[5], res.allocation[5]) == (
        40.0, 50.0, JobState.FINISHED, ())
    assert res.reasons == {"d": "FAILED", "f": ""}
    untouched = collect(jobs, {}, {}, origin=origin, platform=plat, policy="slurm",
                        node_names=["n1"])
    assert untouched.workload_name == "slurm"
    # a record without a start, and a job never submitted, stay as no run left them
    assert [res.state[k] for k in (0, 3)] == [untouched.state[0], untouched.state[3]]
    assert all(math.isnan(res.start[k]) and math.isnan(untouched.start[k]) for k in (0, 3))
    assert res.allocation[3] == untouched.allocation[3] and "c" not in res.reasons
    # a record without its start or end time at all is left alike
    bare = collect(jobs[:2], ids, {"1": {"EndTime": _stamp(origin + 9)}}, origin=origin,
                   platform=plat, policy="slurm", node_names=["n1"])
    no_end = collect(jobs[:2], ids, {"1": {"StartTime": _stamp(origin + 9)}}, origin=origin,
                     platform=plat, policy="slurm", node_names=["n1"])
    assert math.isnan(bare.start[1]) and math.isnan(no_end.start[1])


# -- the whole replay on a fake cluster (a controller of its own on the real clock) ------------

@pytest.fixture
def fake_cluster(monkeypatch):
    """``replay`` with :class:`tests.slurm.fake.FakeCluster` for ``LocalSlurm``: its command
    layer answers for the cluster the replay made."""
    replay_module = sys.modules[submit_workload.__module__]
    monkeypatch.setattr(replay_module, "LocalSlurm", FakeCluster)
    monkeypatch.setattr(replay_module, "SlurmCommands",
                        lambda env: FakeCluster.last.slurm if env == FakeCluster.last.env
                        else None)
    return replay_module.replay


def _short(jid, nodes=1, bb=0.0, runtime=0.0, walltime=60.0, submit=0.0):
    return Job(jid, submit, walltime, runtime, nodes=nodes, bb=bb)


def test_a_replay_under_slurms_scheduler_runs_every_job_that_fits(fake_cluster, tmp_path):
    """Slurm's own scheduler (first come, first served on the fake): a job wider than the
    machine is left out, BB goes as whole licenses of the unit (2.2 GB -> 5 of 0.5 GB, the
    pool 4.7 GB -> 9), the settings reach the cluster, and the schedule comes back from the
    completion records with the trace's ids, nodes and states."""
    platform = Platform(nodes=2, bb=4.7 * GB)
    jobs = [_short("a", nodes=2, bb=2.2 * GB), _short("wide", nodes=3), _short("b"),
            _short("c", runtime=0.3, walltime=0.5)]
    res = fake_cluster(jobs, platform, bb_unit=0.5 * GB, interval=0.02, directory=tmp_path,
                       scheduler_parameters={"bf_interval": 1}, workload_name="w")
    cluster = FakeCluster.last
    assert cluster.made == {"nodes": 2, "bb_licenses": 9, "directory": tmp_path,
                            "scheduler_parameters": {"bf_interval": 1}}
    assert [j.id for j in res.jobs] == ["a", "b", "c"]
    assert [j.bb for j in res.jobs] == [2.5 * GB, 0.0, 0.0]
    assert cluster.slurm.jobs_by_id["1000"].licenses == 5
    assert (res.policy, res.workload_name, res.platform) == ("slurm-backfill", "w", platform)
    assert res.state == [JobState.FINISHED] * 3
    # a holds both nodes; b, then c, start on the lowest free node once the one before has
    # ended (a sleep of 0 ends when the controller next looks)
    assert res.allocation == [(0, 1), (0,), (0,)]
    assert all(res.start[k] >= res.jobs[k].submit and res.end[k] >= res.start[k]
               for k in range(3))
    sbatch = [c for c in cluster.slurm.calls if c[0] == "sbatch"]
    assert [c[c.index("-J") + 1] for c in sbatch] == ["bbopt-a", "bbopt-b", "bbopt-c"]
    assert [c[-1] for c in sbatch] == ["sleep 0.000", "sleep 0.000", "sleep 0.300"]
    assert all("--hold" not in c for c in sbatch)


def test_a_replay_under_the_bridge_submits_held_jobs_and_the_policy_starts_them(fake_cluster,
                                                                               tmp_path):
    platform = Platform(nodes=2, bb=2 * GB)
    jobs = [_short("x", nodes=2, bb=GB), _short("y", bb=GB), _short("z")]
    res = fake_cluster(jobs, platform, scheduler="bridge", bb_unit=GB, interval=0.02,
                       directory=tmp_path)  # (fcfs-bb by default)
    cluster = FakeCluster.last
    sbatch = [c for c in cluster.slurm.calls if c[0] == "sbatch"]
    assert len(sbatch) == 3 and all("--hold" in c for c in sbatch)
    released = [c[2] for c in cluster.slurm.calls if c[:2] == ("scontrol", "release")]
    assert sorted(released) == ["1000", "1001", "1002"]
    assert res.policy == "fcfs-bb"
    assert res.state == [JobState.FINISHED] * 3
    assert res.allocation[0] == (0, 1)
    assert (tmp_path / "bridge").is_dir()  # the bridge's state beside the cluster's


def test_a_failed_submission_stops_the_replay_with_slurms_message(fake_cluster, tmp_path,
                                                                    monkeypatch):
    made = FakeCluster.__init__

    def failing(self, *args, **kw):
        made(self, *args, **kw)
        self.slurm.failing["sbatch"] = "Invalid account"

    monkeypatch.setattr(FakeCluster, "__init__", failing)
    with pytest.raises(SlurmError) as err:
        fake_cluster([_short("a")], Platform(nodes=1), interval=0.02, directory=tmp_path)
    assert str(err.value) == ("submitting the workload failed: sbatch failed (1): "
                              "Invalid account")


def test_a_replay_past_its_timeout_returns_what_ended(fake_cluster, tmp_path):
    """A job still running when the timeout passes is left without a start or an end (the
    first submission comes one to two seconds after the replay begins)."""
    jobs = [_short("quick"), _short("stuck", runtime=3600.0, walltime=7200.0)]
    res = fake_cluster(jobs, Platform(nodes=2), interval=0.02, timeout=3.0, directory=tmp_path)
    assert res.state[0] == JobState.FINISHED and res.state[1] != JobState.FINISHED
    assert math.isnan(res.start[1]) and math.isnan(res.end[1])
    running = FakeCluster.last.slurm.jobs_by_id["1001"]
    assert running.state == "RUNNING"


def test_an_unknown_scheduler_is_refused_before_any_cluster(fake_cluster):
    FakeCluster.last = None
    with pytest.raises(InputError) as err:
        fake_cluster([_short("a")], Platform(nodes=1), scheduler="pbs")
    assert (str(err.value), err.value.field) == (
        "field 'scheduler': scheduler must be one of slurm, bridge, got 'pbs'", "scheduler")
    assert FakeCluster.last is None


class _Bar:
    """A progress display that records what it was made with and how far it went."""

    def __init__(self, made):
        self.made, self.n, self.closed = made, 0, False

    def update(self, n=1):
        self.n += n

    def close(self):
        self.closed = True


def test_a_replay_hands_the_bridge_its_settings_and_shows_the_jobs_ended(fake_cluster,
                                                                       tmp_path, monkeypatch):
    """The bridge is made with the replay's policy, options, interval (1 s by default), tick
    and BB unit and starts from the replay's origin, the first whole second after the next
    one; the progress display counts the jobs as they end."""
    import bbopt.progress
    replay_module = sys.modules[submit_workload.__module__]
    real_bridge = replay_module.Bridge
    made = []

    def bridge(commands, policy, options, **kw):
        made.append((policy, options, dict(kw)))
        kw.update(interval=0.02, tick=None)  # (the test polls fast, whatever was asked)
        made.append(real_bridge(commands, policy, options, **kw))
        return made[-1]

    bars = []
    monkeypatch.setattr(replay_module, "Bridge", bridge)
    monkeypatch.setattr(bbopt.progress, "progress",
                        lambda total, **kw: bars.append(_Bar((total, kw))) or bars[-1])
    read = []

    class Clock:  # (the replay's clock, as it reads it)
        monotonic, sleep = staticmethod(time.monotonic), staticmethod(time.sleep)

        @staticmethod
        def time():
            read.append(time.time())
            return read[-1]

    monkeypatch.setattr(replay_module, "time", Clock)
    jobs = [_short("x", nodes=2, bb=GB), _short("y"), _short("wide", nodes=5)]
    res = fake_cluster(jobs, Platform(nodes=2, bb=2 * GB), scheduler="bridge", bb_unit=GB,
                       policy="conservative-bb", options={"depth": 3}, tick=5.0,
                       directory=tmp_path, progress=True)
    (policy, options, kw), made_bridge = made
    assert (policy, options) == ("conservative-bb", {"depth": 3})
    assert kw["interval"] == 1.0 and kw["tick"] == 5.0 and kw["bb_unit"] == GB
    assert kw["state_dir"] == tmp_path / "bridge"
    (bar,) = bars
    assert bar.made == (2, {"unit": "job", "desc": "replay", "enabled": True})
    assert bar.n == 2 and bar.closed
    assert made_bridge.origin == math.ceil(read[0]) + 1.0
    assert (res.policy, res.workload_name) == ("conservative-bb", "slurm")
    assert res.state == [JobState.FINISHED] * 2


def test_a_replay_under_slurms_scheduler_shows_no_progress_unless_asked(fake_cluster, tmp_path,
                                                                        monkeypatch):
    import bbopt.progress
    bars = []
    monkeypatch.setattr(bbopt.progress, "progress",
                        lambda total, **kw: bars.append(_Bar((total, kw))) or bars[-1])
    fake_cluster([_short("a")], Platform(nodes=1), interval=0.02, directory=tmp_path)
    assert bars[0].made == (1, {"unit": "job", "desc": "replay", "enabled": False})

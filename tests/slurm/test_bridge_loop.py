"""The bridge's bookkeeping on the recorded fake of Slurm (tests/slurm/fake.py): the decision log
and the state file line by line, the memory kept and dropped, the periodic bridge's pauses at
and around a tick, failed polls, what a poll reads (released, admin-held and finished jobs, the
pseudo-job of unusable nodes, the partition, the BB unit) and the starts applied within one
decision."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from bbopt.core import GB, ClusterState, Decision, Start
from bbopt.errors import InputError
from bbopt.slurm.bridge import UNAVAILABLE, Bridge, StepRecord
from tests.slurm.fake import FakeJob, FakeSlurm

NOW = 1_800_000_000.0


@dataclass
class Scripted:
    """Starts the jobs it is told to; remembers ``memory`` and raises ``fail`` when the state
    brings a memory."""

    starts: tuple[Start, ...] = ()
    name: str = "scripted"
    io_aware: bool = False
    memory: dict | None = None
    fail: Exception | None = None
    seen: list = field(default_factory=list)

    def decide(self, state: ClusterState) -> Decision:
        self.seen.append(state)
        if self.fail is not None and state.memory:
            raise self.fail
        return Decision(start=self.starts, memory=self.memory)


def _bridge(slurm: FakeSlurm, tmp_path, policy="fcfs", **kw) -> Bridge:
    return Bridge(slurm, policy, state_dir=tmp_path / "a" / "b", clock=slurm.clock, **kw)


def test_a_step_writes_its_record_and_the_state_file(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=2, licenses=6, submit=NOW - 30))
    slurm.add(FakeJob("2", nodes=2, licenses=6, submit=NOW - 20))
    bridge = _bridge(slurm, tmp_path, policy="fcfs-bb")  # (a state directory two levels down)
    assert bridge.interval == 1.0 and bridge.errors == 0
    assert Bridge(slurm, state_dir=tmp_path / "default").policy_name == "fcfs-bb"
    slurm.now = NOW + 0.1234567
    bridge.step()
    lines = (tmp_path / "a" / "b" / "decisions.jsonl").read_text().splitlines()
    assert len(lines) == 1
    logged = json.loads(lines[0])
    assert logged.pop("decision_time") >= 0.0
    assert logged == {"time": 30.123457, "clock": round(NOW + 0.1234567, 6), "running": 0,
                      "queue": 2, "started": ["1"], "nodes": {"1": ["n1", "n2"]},
                      "refused": {}, "backend": "rule", "status": "FEASIBLE", "memory_reset": ""}
    saved = json.loads((tmp_path / "a" / "b" / "bridge.json").read_text())
    assert saved == {"policy": "fcfs-bb", "origin": NOW - 30, "memory": {},
                     "released": {"1": NOW + 0.1234567}}
    assert not list((tmp_path / "a" / "b").glob("*.tmp"))


def test_a_record_as_json():
    record = StepRecord(time=1.23456789, clock=2.0000004, running=3, queue=4, decision_time=0.5,
                        started=["7"], nodes={"7": ["n1"]}, refused={"8": "not waiting"},
                        backend="cp-sat", status="FEASIBLE", memory_reset="ValueError: x")
    assert json.loads(record.to_json()) == {
        "time": 1.234568, "clock": 2.0, "running": 3, "queue": 4, "decision_time": 0.5,
        "started": ["7"], "nodes": {"7": ["n1"]}, "refused": {"8": "not waiting"},
        "backend": "cp-sat", "status": "FEASIBLE", "memory_reset": "ValueError: x"}


def test_the_memory_is_kept_across_a_restart_and_handed_to_the_policy(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=1, submit=NOW))
    policy = Scripted(memory={"plan": [1, 2]})
    bridge = _bridge(slurm, tmp_path, policy=policy)
    bridge.step()
    assert bridge.memory == {"plan": [1, 2]}
    saved = json.loads((tmp_path / "a" / "b" / "bridge.json").read_text())
    assert saved["policy"] == "scripted"  # a policy object is known by its name
    again = _bridge(slurm, tmp_path, policy=Scripted())  # same name: the state is its own
    assert again.memory == {"plan": [1, 2]} and again.origin == NOW
    again.step(force=True)
    assert again.policy.seen[-1].memory == {"plan": [1, 2]}
    # a decision without memory leaves the kept one alone
    assert again.memory == {"plan": [1, 2]}


def test_a_memory_the_past_contradicts_is_dropped_and_said(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=1, submit=NOW))
    policy = Scripted(memory={"k": 1}, fail=ValueError("stale"))
    bridge = _bridge(slurm, tmp_path, policy=policy)
    assert bridge.step().memory_reset == ""
    slurm.add(FakeJob("2", nodes=1, submit=NOW))
    record = bridge.step()
    assert record.memory_reset == "ValueError: stale"
    assert policy.seen[-1].memory == {} and bridge.memory == {"k": 1}
    logged = json.loads((tmp_path / "a" / "b" / "decisions.jsonl").read_text().splitlines()[-1])
    assert logged["memory_reset"] == "ValueError: stale"
    # without a memory to drop, the policy's error is the bridge's
    fresh = Bridge(slurm, Scripted(fail=ValueError("x")), state_dir=tmp_path / "d",
                   clock=slurm.clock)
    fresh.policy.fail = None
    assert fresh.step() is not None
    broken = Bridge(slurm, _Broken(), state_dir=tmp_path / "e", clock=slurm.clock)
    with pytest.raises(RuntimeError, match="no memory"):
        broken.step()


@dataclass
class _Broken:
    name: str = "broken"
    io_aware: bool = False

    def decide(self, state: ClusterState) -> Decision:
        raise RuntimeError("no memory")


def test_a_state_file_that_cannot_be_read_or_is_another_policys_is_refused(tmp_path):
    slurm = FakeSlurm(now=NOW)
    state = tmp_path / "s"
    state.mkdir()
    (state / "bridge.json").write_text("{not json")
    with pytest.raises(InputError, match="cannot read the bridge state") as bad:
        Bridge(slurm, "fcfs", state_dir=state)
    assert bad.value.source == str(state / "bridge.json")
    (state / "bridge.json").write_text(json.dumps({"policy": "fcfs-bb"}))
    with pytest.raises(InputError, match="not 'fcfs': use another --state-dir") as other:
        Bridge(slurm, "fcfs", state_dir=state)
    assert other.value.source == str(state / "bridge.json") and other.value.field == "policy"
    with pytest.raises(InputError, match="has no option 'nonsense'") as option:
        Bridge(slurm, "fcfs-bb", {"nonsense": 1}, state_dir=tmp_path / "t")
    assert option.value.field == "nonsense" and not (tmp_path / "t" / "bridge.json").exists()


def test_the_pause_runs_to_the_next_tick_and_settles_half_a_second(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=1, submit=NOW))
    plain = _bridge(slurm, tmp_path)
    assert plain._pause(0.3) == pytest.approx(0.7) and plain._pause(1.5) == 0.0
    periodic = Bridge(slurm, "fcfs", state_dir=tmp_path / "p", clock=slurm.clock, tick=60.0)
    assert periodic._pause(0.3) == pytest.approx(0.7)  # no origin yet: the interval
    periodic.observe()  # the origin: NOW
    slurm.now = NOW + 59.9
    assert periodic._pause(0.3) == pytest.approx(0.6)  # to 60.5 s
    slurm.now = NOW + 60.0 - 1e-8  # (at the tick within rounding: the next is 120.5 s)
    assert periodic._pause(0.3) == pytest.approx(0.7)
    slurm.now = NOW + 179.8
    assert periodic._pause(0.0) == pytest.approx(0.7)  # to 180.5 s, within the interval
    # ticks count from the origin (the first submission, whole seconds), not from the epoch
    other = FakeSlurm(now=NOW + 3.7)
    other.add(FakeJob("0", nodes=1, submit=NOW + 3.5))
    shifted = Bridge(other, "fcfs", state_dir=tmp_path / "q", clock=other.clock, tick=60.0)
    shifted.observe()
    assert shifted.origin == NOW + 3
    other.now = NOW + 3 + 59.9
    assert shifted._pause(0.3) == pytest.approx(0.6)


def test_a_periodic_bridge_decides_at_a_tick_reached_within_rounding(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=4, submit=NOW))
    slurm.add(FakeJob("2", nodes=4, submit=NOW))
    bridge = _bridge(slurm, tmp_path, tick=60.0)
    assert bridge.step().time == 0.0
    slurm.now = NOW + 60.0 - 1e-8
    record = bridge.step()
    assert record is not None and record.time == 60.0


def test_failed_polls_are_counted_and_logged_one_line_each(tmp_path):
    slurm = FakeSlurm(now=NOW + 0.1234567)
    slurm.add(FakeJob("1", submit=NOW))
    bridge = _bridge(slurm, tmp_path, interval=0.01)
    seen: list[StepRecord] = []
    polls = []

    def stop() -> bool:
        polls.append(1)
        if len(polls) == 1:
            slurm.failing["squeue"] = "second"  # the idle check's poll fails
        return len(polls) == 3

    slurm.failing["squeue"] = "first"
    bridge.run(until_idle=True, stop=stop, on_step=seen.append)
    assert bridge.errors == 2
    lines = [json.loads(x) for x in
             (tmp_path / "a" / "b" / "errors.jsonl").read_text().splitlines()]
    assert [x["clock"] for x in lines] == [round(NOW + 0.1234567, 6)] * 2
    assert all(x["error"].endswith(m) for x, m in zip(lines, ["first", "second"], strict=True))
    assert [r.started for r in seen] == [["1"]] and len(polls) == 3


def test_an_idle_partition_ends_the_run_and_a_busy_one_does_not(tmp_path):
    slurm = FakeSlurm(now=NOW)
    polls = []
    _bridge(slurm, tmp_path, interval=0.01).run(until_idle=True,
                                               stop=lambda: polls.append(1) or False)
    assert len(polls) == 1
    slurm.add(FakeJob("1", submit=NOW, state="RUNNING", reason="None", start=NOW,
                      node_list=("n1",)))
    polls.clear()
    Bridge(slurm, "fcfs", state_dir=tmp_path / "x", clock=slurm.clock, interval=0.01).run(
        until_idle=True, stop=lambda: polls.append(1) or len(polls) == 2)
    assert len(polls) == 2


def test_a_poll_reads_released_held_and_finished_jobs(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("done", submit=NOW - 100, state="COMPLETED", reason="None"))
    slurm.add(FakeJob("admin", submit=NOW - 90, reason="JobHeldAdmin"))
    slurm.add(FakeJob("10", nodes=1, submit=NOW - 50))
    slurm.add(FakeJob("9", nodes=1, submit=NOW - 50))
    slurm.add(FakeJob("b", nodes=1, submit=NOW - 50))
    slurm.add(FakeJob("late", nodes=1, time_limit=900.0, submit=NOW - 80, state="RUNNING",
                      reason="None", start=NOW - 60, node_list=("n1",)))
    slurm.add(FakeJob("early", nodes=1, time_limit=60.0, submit=NOW - 80, state="RUNNING",
                      reason="None", start=NOW - 40, node_list=("n2",)))
    slurm.add(FakeJob("ours", nodes=1, submit=NOW - 80, reason="Resources",
                      req_nodes=("n3",)))
    slurm.add(FakeJob("theirs", nodes=1, submit=NOW - 80, reason="Priority"))
    bridge = _bridge(slurm, tmp_path)
    bridge.released["ours"] = NOW - 5
    obs = bridge.observe()
    origin = NOW - 100
    state = obs.state
    # the held jobs by submission, then numeric ids before the others, in number order
    assert [j.id for j in state.queue] == ["9", "10", "b"]
    assert [(r.job.id, r.start, r.allocation) for r in state.running] == [
        ("early", 60.0, (1,)), ("ours", 95.0, (2,)), ("theirs", 100.0, None),
        ("late", 40.0, (0,))]  # by expected end: 120, 695, 700, 940 s
    assert obs.active == 7 and set(obs.slurm_jobs) == {"9", "10", "b", "late", "early",
                                                        "ours", "theirs"}
    assert state.time == NOW - origin and bridge.origin == origin


def test_unusable_nodes_are_one_pseudo_job_not_counted_as_work(tmp_path):
    slurm = FakeSlurm(now=NOW, node_states={"n3": "down", "n4": "drained"})
    slurm.add(FakeJob("1", nodes=1, submit=NOW))
    bridge = _bridge(slurm, tmp_path, interval=2.5)
    obs = bridge.observe()
    (pseudo,) = obs.state.running
    assert pseudo.job.id == UNAVAILABLE and pseudo.job.nodes == 2
    assert pseudo.job.submit == 0.0 and pseudo.job.walltime == 2.5
    assert pseudo.start == obs.state.time and pseudo.allocation == (2, 3)
    assert obs.active == 1 and obs.free_nodes == [0, 1]


def test_the_partition_and_the_bb_unit_reach_every_poll(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=1, licenses=3, submit=NOW))
    bridge = _bridge(slurm, tmp_path, partition="debug", bb_unit=2 * GB)
    obs = bridge.observe()
    assert obs.state.queue[0].bb == 6 * GB and obs.state.platform.bb == 20 * GB
    polls = [c for c in slurm.calls if c[0] in ("squeue", "sinfo")]
    assert len(polls) == 2 and all("debug" in " ".join(c) for c in polls)


def test_starts_of_one_decision_share_what_is_free(tmp_path):
    slurm = FakeSlurm(now=NOW)
    for jid, nodes, lic in (("1", 3, 0), ("2", 2, 0), ("3", 1, 6), ("4", 1, 6)):
        slurm.add(FakeJob(jid, nodes=nodes, licenses=lic, submit=NOW))
    starts = tuple(Start(j) for j in ("1", "2", "3", "4"))
    record = _bridge(slurm, tmp_path, policy=Scripted(starts=starts)).step()
    assert record.started == ["1", "3"]
    assert record.refused == {
        "2": "does not fit: needs 2 nodes and 0 B, free 1 and 1e+10 B",
        "4": "does not fit: needs 1 nodes and 6e+09 B, free 0 and 4e+09 B"}


def test_nodes_named_by_the_policy_are_used_in_its_order(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=4, submit=NOW))
    policy = Scripted(starts=(Start("1", nodes=(3, 2, 1, 0)),))
    _bridge(slurm, tmp_path, policy=policy).step()
    assert ("scontrol", "update", "JobId=1", "NodeList=n4,n3,n2,n1") in slurm.actions()


def test_release_times_are_kept_while_slurm_lists_the_job(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=1, submit=NOW))
    bridge = _bridge(slurm, tmp_path)
    bridge.step()
    slurm.now = NOW + 10
    slurm.add(FakeJob("2", nodes=1, submit=NOW + 10))
    bridge.step()
    assert bridge.released == {"1": NOW, "2": NOW + 10}
    del slurm.jobs_by_id["1"]  # ended
    slurm.add(FakeJob("3", nodes=1, submit=NOW + 10))
    bridge.step()
    assert bridge.released == {"2": NOW + 10, "3": NOW + 10}


def test_a_running_job_without_a_start_time_runs_from_now(tmp_path):
    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("q", nodes=1, submit=NOW - 10))
    slurm.add(FakeJob("r", nodes=1, licenses=2, submit=NOW - 10, state="CONFIGURING",
                      reason="None", start=None, node_list=("n2",)))
    obs = _bridge(slurm, tmp_path, bb_unit=2 * GB).observe()
    (r,) = obs.state.running
    assert (r.job.id, r.start, r.allocation, r.job.bb) == ("r", 10.0, (1,), 4 * GB)


def test_the_policys_options_reach_every_decision(tmp_path):
    slurm = FakeSlurm(now=NOW)
    for jid in "123":
        slurm.add(FakeJob(jid, nodes=4, submit=NOW))
    deep = _bridge(slurm, tmp_path, policy="conservative-bb")
    deep.step()
    assert deep.memory == {"reservations": {"2": 600.0, "3": 1200.0}}
    slurm2 = FakeSlurm(now=NOW)
    for jid in "123":
        slurm2.add(FakeJob(jid, nodes=4, submit=NOW))
    shallow = Bridge(slurm2, "conservative-bb", {"depth": 1}, state_dir=tmp_path / "s",
                     clock=slurm2.clock)
    shallow.step()
    assert shallow.memory == {"reservations": {}}


def test_the_retried_decision_keeps_the_options(tmp_path):
    from bbopt.policies.registry import POLICIES, register

    @register("test-stale-memory")
    class StaleMemory:
        """Refuses any memory; starts the first ``take`` waiting jobs."""

        io_aware = False

        def __init__(self, name: str = "test-stale-memory", take: int = 1) -> None:
            self.name, self.take = name, take

        def decide(self, state: ClusterState) -> Decision:
            if state.memory:
                raise ValueError("stale")
            return Decision(start=tuple(Start(j.id) for j in state.queue[:self.take]),
                            memory={"seen": len(state.queue)})

    try:
        slurm = FakeSlurm(now=NOW)
        for jid in "12345":
            slurm.add(FakeJob(jid, nodes=1, submit=NOW))
        bridge = _bridge(slurm, tmp_path, policy="test-stale-memory", options={"take": 2})
        assert bridge.step().started == ["1", "2"]
        slurm.add(FakeJob("6", nodes=1, submit=NOW))
        record = bridge.step()
        assert record.memory_reset == "ValueError: stale" and record.started == ["3", "4"]
    finally:
        POLICIES.remove("test-stale-memory")


def test_the_decision_time_is_the_policys_own(tmp_path, monkeypatch):
    import itertools

    import bbopt.slurm.bridge as bridge_module

    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=1, submit=NOW))
    ticks = itertools.count(1e6, 0.25)  # a counter far from zero: each reading 0.25 s later
    monkeypatch.setattr(bridge_module.time, "perf_counter", lambda: next(ticks))
    record = _bridge(slurm, tmp_path).step()
    assert 0.25 <= record.decision_time < 100.0


def test_the_loop_sleeps_what_is_left_of_the_interval(tmp_path, monkeypatch):
    import bbopt.slurm.bridge as bridge_module

    slurm = FakeSlurm(now=NOW)
    slurm.add(FakeJob("1", nodes=1, submit=NOW))
    slept: list[float] = []
    monkeypatch.setattr(bridge_module.time, "sleep", slept.append)
    polls = []
    _bridge(slurm, tmp_path, interval=5.0).run(stop=lambda: polls.append(1) or len(polls) == 3)
    assert len(slept) == 2 and all(4.0 < s <= 5.0 for s in slept)

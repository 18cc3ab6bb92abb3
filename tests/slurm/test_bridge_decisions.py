"""The bridge's decision logic on a recorded fake of Slurm's commands (tests/slurm/fake.py): what
it reads from squeue, sinfo and scontrol becomes the state a policy decides on, and only starts
that fit are applied (``scontrol update NodeList=`` then ``scontrol release``), each once, also
across a restart. The same bridge in front of a real Slurm is in test_bridge.py."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from bbopt.core import GB, ClusterState, Decision, Start
from bbopt.slurm.bridge import UNAVAILABLE, Bridge
from tests.slurm.fake import FakeJob, FakeSlurm

NOW = 1_800_000_000.0


@dataclass
class Scripted:
    """A policy that starts the jobs it is told to, whatever fits (to test the bridge's
    checks)."""

    starts: tuple[Start, ...]
    name: str = "scripted"
    io_aware: bool = False

    def decide(self, state: ClusterState) -> Decision:
        self.seen = state
        return Decision(start=self.starts)


def _slurm(**kw) -> FakeSlurm:
    return FakeSlurm(now=NOW, **kw)


def _bridge(slurm: FakeSlurm, tmp_path, policy="fcfs-bb", **kw) -> Bridge:
    return Bridge(slurm, policy, state_dir=tmp_path / "bridge", clock=slurm.clock, **kw)


def _released(slurm: FakeSlurm) -> list[str]:
    return [c[2] for c in slurm.actions() if c[:2] == ("scontrol", "release")]


def test_held_jobs_are_the_queue_and_starts_are_applied_nodes_first(tmp_path):
    slurm = _slurm()
    slurm.add(FakeJob("1", nodes=2, licenses=6, submit=NOW - 30))
    slurm.add(FakeJob("2", nodes=2, licenses=6, submit=NOW - 20))
    bridge = _bridge(slurm, tmp_path, policy="fcfs")
    record = bridge.step()
    # fcfs: 1 starts; 2 needs 6 of the 4 free BB licenses and waits, and so does all behind it
    assert record.started == ["1"] and record.refused == {}
    assert slurm.actions() == [("scontrol", "update", "JobId=1", "NodeList=n1,n2"),
                               ("scontrol", "release", "1")]
    state = bridge.observe()
    assert [j.id for j in state.state.queue] == ["2"]
    assert state.state.platform.bb == 10 * GB and state.state.platform.nodes == 4
    assert state.state.queue[0].bb == 6 * GB and state.state.queue[0].submit == 10.0
    assert [(r.job.id, r.start, r.allocation) for r in state.state.running] == [("1", 30.0,
                                                                                  (0, 1))]


@pytest.mark.parametrize("licenses,ok", [(9, True), (10, True), (11, False)])
def test_a_start_is_applied_when_its_bb_fits_exactly_and_refused_one_license_over(
        tmp_path, licenses, ok):
    slurm = _slurm(bb_licenses=10)
    slurm.add(FakeJob("1", licenses=licenses, submit=NOW - 5))
    record = _bridge(slurm, tmp_path, policy=Scripted((Start("1"),))).step()
    if ok:
        assert record.started == ["1"] and _released(slurm) == ["1"]
    else:
        assert record.started == [] and _released(slurm) == []
        assert record.refused["1"].startswith("does not fit: needs 1 nodes")


@pytest.mark.parametrize("nodes,ok", [(3, True), (4, True), (5, False)])
def test_a_start_is_applied_when_its_nodes_fit_exactly(tmp_path, nodes, ok):
    slurm = _slurm(node_names=("n1", "n2", "n3", "n4"))
    slurm.add(FakeJob("1", nodes=nodes, submit=NOW - 5))
    record = _bridge(slurm, tmp_path, policy=Scripted((Start("1"),))).step()
    assert (record.started == ["1"]) is ok
    assert (_released(slurm) == ["1"]) is ok


def test_a_start_of_a_job_that_is_not_waiting_is_refused(tmp_path):
    slurm = _slurm()
    slurm.add(FakeJob("1", submit=NOW - 5))
    record = _bridge(slurm, tmp_path, policy=Scripted((Start("9"), Start("1"), Start("1")))).step()
    assert record.started == ["1"]
    assert record.refused == {"9": "not waiting", "1": "not waiting"}
    assert _released(slurm) == ["1"]  # its second start: no longer waiting, not applied


def test_nodes_asked_by_the_policy_are_used_when_idle_else_the_first_idle_ones(tmp_path):
    slurm = _slurm()
    slurm.add(FakeJob("1", nodes=2, submit=NOW - 5))
    slurm.add(FakeJob("2", nodes=1, submit=NOW - 5))
    policy = Scripted((Start("1", (3, 2)), Start("2", (3,))))
    record = _bridge(slurm, tmp_path, policy=policy).step()
    # 1 gets the nodes it asked; 2 asked for a node 1 now holds, so it gets the first idle one
    assert record.nodes == {"1": ["n4", "n3"], "2": ["n1"]}


def test_a_node_down_is_a_running_pseudo_job_and_is_never_given(tmp_path):
    slurm = _slurm(node_states={"n1": "down*"})
    slurm.add(FakeJob("1", nodes=3, submit=NOW - 5))
    slurm.add(FakeJob("2", nodes=1, submit=NOW - 5))
    bridge = _bridge(slurm, tmp_path, policy="fcfs", interval=2.0)
    obs = bridge.observe()
    (pseudo,) = obs.state.running
    assert pseudo.job.id == UNAVAILABLE and pseudo.job.nodes == 1
    assert pseudo.allocation == (0,) and pseudo.expected_end == obs.state.time + 2.0
    record = bridge.step()
    assert record.started == ["1"] and record.nodes == {"1": ["n2", "n3", "n4"]}


@pytest.mark.parametrize("ran", [599.0, 600.0, 700.0])
def test_a_job_at_or_past_its_walltime_still_holds_its_node(tmp_path, ran):
    # one node; r has run 599 s (inside its 600 s walltime), exactly 600 s or 700 s (Slurm kills
    # at whole minutes): it is seen with Slurm's walltime, and w never gets its node
    slurm = _slurm(node_names=("n1",))
    slurm.add(FakeJob("r", state="RUNNING", reason="None", start=NOW - ran, time_limit=600,
                      submit=NOW - ran, node_list=("n1",)))
    slurm.add(FakeJob("w", submit=NOW - 1))
    bridge = _bridge(slurm, tmp_path, policy="fcfs", interval=5.0)
    obs = bridge.observe()
    (r,) = obs.state.running
    assert r.job.walltime == 600.0 and obs.state.time - r.start == ran
    assert obs.free_nodes == []
    assert bridge.step(force=True).started == [] and _released(slurm) == []


def test_a_released_job_not_yet_running_holds_its_nodes_from_its_release(tmp_path):
    slurm = _slurm()
    slurm.add(FakeJob("1", nodes=2, licenses=4, state="PENDING", reason="None",
                      req_nodes=("n3", "n4"), submit=NOW - 10))
    slurm.add(FakeJob("2", nodes=3, submit=NOW - 5))
    bridge = _bridge(slurm, tmp_path, policy="fcfs")
    obs = bridge.observe()
    (r,) = obs.state.running
    assert r.job.id == "1" and r.allocation == (2, 3) and r.start == obs.state.time
    assert obs.free_nodes == [0, 1]
    assert bridge.step() is None or _released(slurm) == []  # 2 needs 3 nodes: not started


def test_a_restarted_bridge_never_releases_a_job_twice(tmp_path):
    slurm = _slurm()
    slurm.add(FakeJob("1", nodes=4, submit=NOW - 30))
    slurm.add(FakeJob("2", nodes=4, submit=NOW - 20))
    first = _bridge(slurm, tmp_path, policy="fcfs")
    assert first.step().started == ["1"]
    slurm.now += 10
    second = _bridge(slurm, tmp_path, policy="fcfs")
    assert second.origin == first.origin and second.released == {"1": NOW}
    assert second.step(force=True).started == []
    assert _released(slurm) == ["1"]
    del slurm.jobs_by_id["1"]  # 1 finished: 2 starts, and 1's release time is forgotten
    slurm.now += 10
    assert second.step().started == ["2"]
    assert second.released == {"2": NOW + 20}


def test_a_restart_under_another_policy_is_refused(tmp_path):
    from bbopt.errors import InputError

    slurm = _slurm()
    slurm.add(FakeJob("1", submit=NOW))
    _bridge(slurm, tmp_path, policy="fcfs").step()
    with pytest.raises(InputError, match="written by policy 'fcfs'"):
        _bridge(slurm, tmp_path, policy="fcfs-bb")


def test_a_failed_release_is_refused_and_the_next_start_still_applied(tmp_path):
    slurm = _slurm(failing={"release": "Job has already finished"})
    slurm.add(FakeJob("1", submit=NOW - 5))
    slurm.add(FakeJob("2", submit=NOW - 4))
    record = _bridge(slurm, tmp_path, policy="fcfs").step()
    assert record.started == ["2"] and "Job has already finished" in record.refused["1"]
    assert record.nodes == {"2": ["n1"]}  # the node 1 did not get is still free for 2


def test_the_bridge_decides_again_only_when_what_it_sees_changes(tmp_path):
    slurm = _slurm()
    slurm.add(FakeJob("1", nodes=4, submit=NOW - 30))
    slurm.add(FakeJob("2", nodes=4, submit=NOW - 20))
    bridge = _bridge(slurm, tmp_path, policy="fcfs")
    assert bridge.step().started == ["1"]
    assert bridge.step().started == []  # 1 now runs: a change, decided on
    assert bridge.step() is None  # nothing changed since
    assert bridge.step(force=True).started == []
    slurm.add(FakeJob("3", nodes=1, submit=NOW))
    assert bridge.step() is not None  # a new job is a change


def test_a_periodic_bridge_decides_at_every_tick_and_states_the_nominal_time(tmp_path):
    slurm = _slurm()
    slurm.add(FakeJob("1", nodes=4, submit=NOW))
    slurm.add(FakeJob("2", nodes=4, submit=NOW))
    bridge = _bridge(slurm, tmp_path, policy="fcfs", tick=60.0)
    assert bridge.step().time == 0.0  # the first poll fixes the origin
    slurm.now = NOW + 59.8
    assert bridge.step().time == 0.0  # tick 0 once the origin is known
    slurm.now = NOW + 59.9
    assert bridge.step() is None
    slurm.now = NOW + 60.4
    record = bridge.step()
    assert record is not None and record.time == 60.0


def test_a_failed_poll_is_logged_and_the_next_poll_goes_on(tmp_path):
    slurm = _slurm(failing={"squeue": "slurm_load_jobs error: Socket timed out"})
    slurm.add(FakeJob("1", submit=NOW))
    bridge = _bridge(slurm, tmp_path, policy="fcfs", interval=0.01)
    bridge.run(stop=lambda: bool(_released(slurm)))
    assert bridge.errors == 1
    assert "Socket timed out" in (tmp_path / "bridge" / "errors.jsonl").read_text()
    assert _released(slurm) == ["1"]

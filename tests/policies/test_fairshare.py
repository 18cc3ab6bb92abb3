"""Memoryless fair share (Zvi & Oren, Algorithm 1) on hand-built states, and checkpoint/restart
accounting on a two-job example worked out by hand."""

from __future__ import annotations

import json

import pytest

from bbopt.core import ClusterState, Decision, Job, JobState, Platform, RunningJob
from bbopt.errors import InvalidDecision
from bbopt.policies import make_policy
from bbopt.simulation import simulate
from bbopt.simulation.checkpoint import CheckpointRestart
from bbopt.workloads.shares import entitled_nodes, parse_shares

THIRDS = {"A": 1 / 3, "B": 1 / 3, "C": 1 / 3}


def _job(jid, user, nodes, *, pre=True, ckpt=True, submit=0.0, wall=10_000.0, run=None, bb=0.0,
         priority=0.0):
    return Job(jid, submit, wall, run if run is not None else wall, nodes, bb=bb, user=user,
               preemptable=pre, checkpointable=ckpt, priority=priority)


def _state(t, running, queue, nodes=12):
    return ClusterState(t, Platform(nodes=nodes), tuple(RunningJob(j, s) for j, s in running),
                        tuple(queue))


def _three_entity_state(t):
    """12 nodes, entitlements 4 / 4 / 4. B holds 6 (b1: 4 from t=0, b2: 2 from t=500), C holds 6
    (c2: 4 from t=50, c1: 2 from t=100); A holds nothing and asks for 4 nodes."""
    running = [(_job("b1", "B", 4), 0.0), (_job("b2", "B", 2), 500.0),
               (_job("c2", "C", 4), 50.0), (_job("c1", "C", 2), 100.0)]
    return _state(t, running, [_job("a1", "A", 4, submit=t)])


def test_entitled_job_evicts_exactly_the_least_prioritised_jobs_within_the_slack():
    # Candidates youngest first: b2, c1, c2, b1. B and C may each lose 2 nodes (6 - 4): b2 and
    # c1 cover the 4 nodes; c2 and b1 (4 nodes each) would take their entity below its share.
    d = make_policy("omfs", shares=THIRDS, quantum=1800).decide(_three_entity_state(4000.0))
    assert d.preempt == ("b2", "c1")
    assert d.started_ids == []  # a1 starts when the checkpoints are written
    assert d.memory["claims"] == {"a1": ["b2", "c1"]}


def test_priority_orders_the_victims_before_age():
    state = _three_entity_state(4000.0)
    running = tuple(RunningJob(r.job if r.job.id != "c1" else _job("c1", "C", 2, priority=5),
                               r.start) for r in state.running)
    state = ClusterState(state.time, state.platform, running, state.queue)
    # c1 now has a higher priority than every other candidate: b2 (2 nodes) is taken, then c1
    # is the last resort after c2 and b1, which exceed their entity's slack -> b2, c1 again;
    # with c1 preferred kept, a 2-node request takes only b2.
    small = ClusterState(state.time, state.platform, running, (_job("a1", "A", 2),))
    d = make_policy("omfs", shares=THIRDS, quantum=1800).decide(small)
    assert d.preempt == ("b2",)


def test_a_job_younger_than_the_quantum_is_never_evicted():
    # At t=2000, b2 has run 1500 s < 1800: only c1 is eligible and cannot cover 4 nodes alone
    # (c2 and b1 exceed their entity's slack), so nothing is evicted at all.
    pol = make_policy("omfs", shares=THIRDS, quantum=1800)
    d = pol.decide(_three_entity_state(2000.0))
    assert "b2" not in d.preempt
    assert d.preempt == ()
    # With no quantum, b2 is the first victim.
    d0 = make_policy("omfs", shares=THIRDS, quantum=0).decide(_three_entity_state(2000.0))
    assert d0.preempt == ("b2", "c1")


@pytest.mark.parametrize("t,preempt", [(2299.0, ()), (2300.0, ("b2", "c1")),
                                       (2301.0, ("b2", "c1"))])
def test_a_job_may_be_evicted_from_exactly_one_quantum_of_running(t, preempt):
    # b2 started at 500: at 2300 it has run exactly the 1800 s quantum and may be evicted; one
    # second earlier it may not, and c1 alone cannot cover a1's 4 nodes
    d = make_policy("omfs", shares=THIRDS, quantum=1800).decide(_three_entity_state(t))
    assert d.preempt == preempt


def test_non_preemptable_job_beyond_the_entitlement_waits_unless_it_drains_an_idle_machine():
    pol = make_policy("omfs", shares=THIRDS)
    big = _job("a1", "A", 5, pre=False, ckpt=False)  # A is entitled to 4 of 12 nodes
    busy = [(_job("b1", "B", 2), 0.0)]
    assert pol.decide(_state(10.0, busy, [big])).started_ids == []  # line 26
    # wider than A's whole entitlement, line 26 would hold it forever: it drains the machine
    assert pol.decide(_state(0.0, [], [big])).started_ids == ["a1"]
    # not before a job ahead of it that started in the same decision
    first = _job("c1", "C", 2, priority=1.0)  # ahead in the priority order
    assert pol.decide(_state(0.0, [], [first, big])).started_ids == ["c1"]
    # a job within the entitlement but beyond what A's non-preemptable jobs leave waits
    a_np = [(_job("a0", "A", 3, pre=False, ckpt=False), 0.0)]
    assert pol.decide(_state(10.0, a_np, [_job("a2", "A", 2, pre=False, ckpt=False)])
                      ).started_ids == []
    at_share = _job("a2", "A", 4, pre=False, ckpt=False)
    assert pol.decide(_state(0.0, [], [at_share])).started_ids == ["a2"]
    # A preemptable job of the same size runs on the idle machine (line 29).
    assert pol.decide(_state(0.0, [], [_job("a3", "A", 5)])).started_ids == ["a3"]


def test_non_preemptable_jobs_wider_than_their_entitlement_all_run():
    """A workload of non-preemptable jobs, some wider than their entity's entitlement: the
    replay ends with every job run (once, never evicted), where line 26 alone stalls it."""
    jobs = [_job(f"j{k}", "ABC"[k % 3], 1 + (5 * k) % 9, pre=False, ckpt=False,
                 submit=100.0 * k, wall=1000.0 + 300 * (k % 4)) for k in range(30)]
    res = simulate(jobs, Platform(nodes=12), "omfs", options={"shares": THIRDS})
    assert all(s == JobState.FINISHED for s in res.state)
    assert sum(j.nodes > 4 for j in jobs) >= 5
def test_a_job_within_idle_nodes_runs_without_eviction():
    # B is over its entitlement and asks for 2 of the 2 idle nodes: it just runs.
    running = [(_job("b1", "B", 6), 0.0), (_job("c1", "C", 4), 0.0)]
    d = make_policy("omfs", shares=THIRDS, quantum=0).decide(
        _state(5000.0, running, [_job("b9", "B", 2)]))
    assert d.started_ids == ["b9"] and d.preempt == ()


def test_beyond_entitlement_job_never_evicts():
    running = [(_job("b1", "B", 6), 0.0), (_job("c1", "C", 6), 0.0)]
    d = make_policy("omfs", shares=THIRDS, quantum=0).decide(
        _state(5000.0, running, [_job("a1", "A", 5)]))
    assert d.preempt == () and d.started_ids == []


def test_burst_buffer_deficit_is_covered_too():
    plat = Platform(nodes=12, bb=100.0)
    running = (RunningJob(_job("b1", "B", 1, bb=60.0), 0.0),
               RunningJob(_job("b2", "B", 1, bb=10.0), 10.0),
               RunningJob(_job("b3", "B", 6), 20.0))
    state = ClusterState(5000.0, plat, running, (_job("a1", "A", 2, bb=80.0),))
    d = make_policy("omfs", shares=THIRDS, quantum=0).decide(state)
    # 4 idle nodes, 30 B idle BB: 50 B more are needed; youngest first: b3 (no BB), b2 (10),
    # then b1 (60) -- B may lose 8 - 4 = 4 nodes, b3 alone takes 6 > 4 so it is skipped.
    assert d.preempt == ("b2", "b1")


def test_shares_parsing_and_entitlements(tmp_path):
    assert parse_shares("a:50,b:30,c:20") == pytest.approx({"a": .5, "b": .3, "c": .2})
    f = tmp_path / "shares.yaml"
    f.write_text("shares:\n  a: 0.25\n  b: 0.75\n")
    assert parse_shares(str(f)) == {"a": 0.25, "b": 0.75}
    assert entitled_nodes({"a": 0.25, "b": 0.75}, 10) == {"a": 2, "b": 7}
    from bbopt.errors import InputError

    with pytest.raises(InputError, match="sum"):
        parse_shares({"a": 0.8, "b": 0.5})
    with pytest.raises(InputError, match="shares.b"):
        parse_shares({"a": 0.5, "b": "x"})


# -- checkpoint/restart accounting on two jobs, worked out by hand --------------------------------
# 4 nodes; A is entitled to 2 nodes, B to none. b (B, 4 nodes, runtime 5000, walltime 10000)
# starts at 0; a (A, 2 nodes, runtime 1000) arrives at 2000, is within A's entitlement and b has
# run past the quantum (1000 s): b is evicted. Checkpoint = restart = 1 GB / 10 MB/s = 100 s.
def _two_jobs(checkpointable: bool):
    b = Job("b", 0.0, 10_000.0, 5000.0, 4, user="B", preemptable=True,
            checkpointable=checkpointable)
    a = Job("a", 2000.0, 1000.0, 1000.0, 2, user="A", preemptable=True)
    return [b, a]


def _run_two(checkpointable, on_kill="drop"):
    model = CheckpointRestart(memory_per_node=1e9, pfs_bandwidth=1e7, on_kill=on_kill)
    return simulate(_two_jobs(checkpointable), Platform(nodes=4), "omfs",
                    options={"shares": {"A": 0.5, "B": 0.0}, "quantum": 1000.0},
                    execution=model)


def test_checkpointed_job_pays_checkpoint_and_restart_and_keeps_its_work():
    r = _run_two(True)
    # b: runs [0, 2000], writes its checkpoint until 2100 (keeping its nodes); a runs
    # [2100, 3100]; b restarts at 3100: 100 s restart + the 3000 s left -> ends at 6200.
    assert r.segments == [("b", 0.0, 2100.0, "checkpointed"), ("a", 2100.0, 3100.0, "finished"),
                          ("b", 3100.0, 6200.0, "finished")]
    assert (r.start, r.end) == ([0.0, 2100.0], [6200.0, 3100.0])
    assert r.state == [JobState.FINISHED, JobState.FINISHED]
    p = r.preemption["b"]
    assert p == {"evictions": 1, "checkpoints": 1, "restarts": 1, "kills": 0,
                 "checkpoint_time": 100.0, "restart_time": 100.0, "work_done": 5000.0,
                 "lost_work": 0.0}


def test_killed_job_is_dropped_with_its_work_lost():
    r = _run_two(False, "drop")
    assert r.segments == [("b", 0.0, 2000.0, "dropped"), ("a", 2000.0, 3000.0, "finished")]
    assert r.state == [JobState.DROPPED, JobState.FINISHED]
    assert r.end == [2000.0, 3000.0]
    assert r.preemption["b"]["lost_work"] == 2000.0
    assert r.preemption["b"]["work_done"] == 0.0


def test_killed_job_is_requeued_from_scratch():
    r = _run_two(False, "requeue")
    assert r.segments == [("b", 0.0, 2000.0, "requeued"), ("a", 2000.0, 3000.0, "finished"),
                          ("b", 3000.0, 8000.0, "finished")]
    assert r.state == [JobState.FINISHED, JobState.FINISHED]
    p = r.preemption["b"]
    assert (p["lost_work"], p["work_done"], p["restart_time"]) == (2000.0, 5000.0, 0.0)


def test_requeued_job_is_offered_with_its_remaining_walltime():
    seen = {}

    def watch(state, decision):
        for job in state.queue:
            if job.id == "b":
                seen[state.time] = job.walltime

    model = CheckpointRestart(memory_per_node=1e9, pfs_bandwidth=1e7)
    simulate(_two_jobs(True), Platform(nodes=4), "omfs",
             options={"shares": {"A": 0.5, "B": 0.0}, "quantum": 1000.0}, execution=model,
             on_decision=watch)
    # walltime 10000 - 2000 done + 100 restart
    assert seen[2100.0] == 8100.0


def _csv(path):
    import csv

    return list(csv.DictReader(path.read_text().splitlines()))


def test_jobs_csv_keeps_one_row_per_job_and_segments_go_to_a_second_csv(tmp_path):
    r = _run_two(True)
    rows = _csv(r.to_csv(tmp_path / "jobs.csv"))
    assert [(x["job_id"], x["starting_time"], x["finish_time"]) for x in rows] == [
        ("b", "0", "6200"), ("a", "2100", "3100")]
    assert [(x["evictions"], x["checkpoint_time"], x["restart_time"], x["lost_work"])
            for x in rows] == [("1", "100", "100", "0"), ("0", "0", "0", "0")]
    segs = _csv(r.segments_to_csv(tmp_path / "segments.csv"))
    assert [(x["job_id"], x["segment"], x["why"]) for x in segs] == [
        ("b", "1", "checkpointed"), ("a", "1", "finished"), ("b", "2", "finished")]
    dropped = _run_two(False)
    rows = _csv(dropped.to_csv(tmp_path / "d.csv"))
    assert rows[0]["final_state"] == "COMPLETED_KILLED" and rows[0]["success"] == "0"
    assert (rows[0]["kills"], rows[0]["lost_work"]) == ("1", "2000")
    # without an execution model that preempts, jobs.csv keeps its columns
    plain = simulate(_two_jobs(True), Platform(nodes=4), "fcfs-bb")
    assert "evictions" not in _csv(plain.to_csv(tmp_path / "p.csv"))[0]


def test_swf_used_memory_is_the_checkpoint_image(tmp_path):
    from bbopt.workloads.swf import read_swf
    from bbopt.workloads.swf_writer import write_swf

    # field 7: 2 GB per processor (in KB); 8 processors on 4-processor nodes -> 2 nodes of 8 GB
    line = "1 0 -1 500 8 -1 2097152 8 1000 -1 1 3 -1 -1 -1 -1 -1 -1\n"
    none = "2 10 -1 500 4 -1 -1 4 1000 -1 1 3 -1 -1 -1 -1 -1 -1\n"
    (tmp_path / "m.swf").write_text(line + none)
    jobs = read_swf(tmp_path / "m.swf", procs_per_node=4).jobs
    assert jobs[0].nodes == 2 and jobs[0].extra["memory_per_node"] == 8 * 2**30
    assert "memory_per_node" not in jobs[1].extra
    model = CheckpointRestart(memory_per_node=1e9, pfs_bandwidth=2**30)
    assert model.checkpoint_time(jobs[0]) == 8.0  # the trace's image, not the default
    assert model.checkpoint_time(jobs[1]) == pytest.approx(1e9 / 2**30)
    back = read_swf(write_swf(jobs, tmp_path / "w.swf")).jobs
    assert back[0].extra["memory_per_node"] == 8 * 2**30


class _Evicts:
    """A policy that evicts one named job at its first chance."""

    name = "evicts"
    io_aware = False

    def __init__(self, victim, quantum=None, at_once=False):
        self.victim, self.quantum, self.done, self.at_once = victim, quantum, False, at_once

    def decide(self, state):
        from bbopt.core import Start

        running = {r.job.id for r in state.running}
        if (self.victim in running or self.at_once) and not self.done:
            self.done = True
            return Decision(preempt=(self.victim,))
        free = state.free()[0]
        starts = []
        for j in state.queue:
            if j.nodes <= free:
                starts.append(Start(j.id))
                free -= j.nodes
        return Decision(start=tuple(starts))


def test_engine_refuses_evictions_it_cannot_apply():
    jobs = [Job("x", 0, 100, 100, 1, preemptable=True), Job("y", 10, 100, 100, 1)]
    with pytest.raises(InvalidDecision, match="cannot preempt"):
        simulate(jobs, Platform(nodes=4), _Evicts("x"))  # rigid model
    with pytest.raises(InvalidDecision, match="quantum"):
        simulate(jobs, Platform(nodes=4), _Evicts("x", quantum=50), execution="checkpoint")
    fixed = [Job("x", 0, 100, 100, 1), Job("y", 10, 100, 100, 1)]
    with pytest.raises(InvalidDecision, match="not preemptable"):
        simulate(fixed, Platform(nodes=4), _Evicts("x"), execution="checkpoint")
    with pytest.raises(InvalidDecision, match="not running"):
        simulate(fixed, Platform(nodes=4), _Evicts("y", at_once=True), execution="checkpoint")


def test_fairshare_metrics_of_the_two_job_example():
    from bbopt.analysis.fairshare_metrics import fairshare_summary

    m = fairshare_summary(_run_two(True), {"A": 0.5, "B": 0.0}, quantum=1000.0)
    # A's 2-node demand appears at 2000 and is held at 2100 (b's checkpoint): one episode.
    assert m["satisfaction"] == {"episodes": 1.0, "p50": 100.0, "p95": 100.0, "max": 100.0,
                                 "within_quantum": 1.0}
    assert m["utilisation"] == pytest.approx((4 * 5000 + 2 * 1000) / (4 * 6200))
    assert m["cr_node_hours"] == pytest.approx(4 * 200 / 3600)
    assert (m["checkpoints"], m["restarts"], m["kills"], m["thrashing_jobs"]) == (1, 1, 0, 0)
    assert m["entities"]["A"]["node_time_share"] == pytest.approx(2000 / 22000)
    assert m["entities"]["A"]["mean_wait"] == 100.0
    dropped = fairshare_summary(_run_two(False), {"A": 0.5, "B": 0.0})
    assert dropped["lost_node_hours"] == pytest.approx(4 * 2000 / 3600)
    assert dropped["dropped"] == 1 and dropped["satisfaction"]["max"] == 0.0


def test_cli_runs_omfs_with_a_shares_file_and_reports_entitlements(tmp_path, capsys):
    from bbopt.cli import main

    # the two-job example as an SWF trace: user 2 (b, 4 nodes) runs; user 1 (a, 2 nodes) is
    # entitled to half the machine and evicts b by checkpoint (1 GB per node at 10 MB/s)
    (tmp_path / "w.swf").write_text(
        "1 0 -1 5000 4 -1 -1 4 10000 -1 1 2 -1 -1 -1 -1 -1 -1\n"
        "2 2000 -1 1000 2 -1 -1 2 1000 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    (tmp_path / "shares.yaml").write_text("shares:\n  '1': 50\n  '2': 0\n")
    (tmp_path / "p.json").write_text('{"nodes": 4, "bb": 0}')
    out = tmp_path / "out"
    assert main(["simulate", "-w", str(tmp_path / "w.swf"), "-p", str(tmp_path / "p.json"),
                 "--bb", "none", "--policy", "omfs", "--shares", str(tmp_path / "shares.yaml"),
                 "-o", "quantum=1000", "--checkpointable", "1", "--checkpoint",
                 "memory_per_node=1GB", "--checkpoint", "pfs_bandwidth=10MB/s",
                 "--no-progress", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "entitlement wait p50 [min]" in text and "checkpoints" in text
    rows = _csv(out / "omfs_jobs.csv")
    assert [(x["job_id"], x["starting_time"], x["finish_time"], x["evictions"])
            for x in rows] == [("1", "0", "6200", "1"), ("2", "2100", "3100", "0")]
    segs = _csv(out / "omfs_segments.csv")
    assert [x["why"] for x in segs] == ["checkpointed", "finished", "finished"]


def test_strict_protection_keeps_an_entity_waiting_that_the_papers_reading_serves():
    # 12 nodes, 4 each. B and C each hold one 6-node job (2 beyond their entitlement): evicting
    # either drops its entity to 0 < 4, so the strict rule finds no victim and A waits; the
    # paper's reading (victims of entities "utilizing more than their allotment", protect="over")
    # evicts the least prioritised of them (the younger, c) and A runs.
    running = [(_job("b", "B", 6), 0.0), (_job("c", "C", 6), 100.0)]
    state = _state(4000.0, running, [_job("a", "A", 4, submit=4000.0)])
    strict = make_policy("omfs", shares=THIRDS).decide(state)
    assert strict.preempt == () and strict.started_ids == []
    over = make_policy("omfs", shares=THIRDS, protect="over").decide(state)
    assert over.preempt == ("c",)
    with pytest.raises(ValueError, match="greedy"):
        make_policy("omfs-opt", shares=THIRDS, protect="over")


def test_cli_compare_passes_the_checkpoint_model_to_every_policy(tmp_path, capsys):
    from bbopt.cli import main

    (tmp_path / "w.swf").write_text(
        "1 0 -1 5000 4 -1 -1 4 10000 -1 1 2 -1 -1 -1 -1 -1 -1\n"
        "2 2000 -1 1000 2 -1 -1 2 1000 -1 1 1 -1 -1 -1 -1 -1 -1\n")
    (tmp_path / "p.json").write_text('{"nodes": 4, "bb": 0}')
    assert main(["compare", "-w", str(tmp_path / "w.swf"), "-p", str(tmp_path / "p.json"),
                 "--bb", "none", "--policies", "omfs,partition", "-o", "shares=1:50,2:0",
                 "-o", "quantum=1000", "--checkpointable", "1", "--checkpoint",
                 "memory_per_node=1GB", "--checkpoint", "pfs_bandwidth=10MB/s", "--workers", "1",
                 "--format", "json", "--no-progress"]) == 0
    m = json.loads(capsys.readouterr().out)
    # omfs checkpoints job 1 for job 2 (served after the 100 s checkpoint); partition lets
    # job 2 wait for the oversize job 1 to end at 5000
    assert (m["omfs"]["checkpoints"], m["omfs"]["entitlement_p50"]) == (1.0, 100.0)
    assert (m["partition"]["checkpoints"], m["partition"]["entitlement_p50"]) == (0.0, 3000.0)


def test_eviction_cost_is_wasted_node_time():
    """The victim choice's cost: a checkpointable job wastes ``nodes x (checkpoint + restart)``
    = 4 x 2 x 8 GB / 2 GB/s = 32 node-seconds (not 16 without the restart, nor 8 per node);
    a killed one ``nodes x`` the work since its segment started: 4 x (1000 - 400) = 2400 (not
    600 unweighted, nor 4000 from its submission)."""
    p = make_policy("omfs", shares={"a": 1.0}, memory_per_node=8e9, checkpoint_bandwidth=2e9)
    ckpt = RunningJob(Job("c", 0.0, 3600.0, nodes=4, preemptable=True, checkpointable=True),
                      400.0)
    killed = RunningJob(Job("k", 0.0, 3600.0, nodes=4, preemptable=True), 400.0)
    assert p.eviction_cost(ckpt, 1000.0) == 32.0
    assert p.eviction_cost(killed, 1000.0) == 2400.0
    # the trace's image per node wins over the default: 4 x 2 x 1 GB / 2 GB/s
    img = RunningJob(Job("i", 0.0, 3600.0, nodes=4, preemptable=True, checkpointable=True,
                         extra={"memory_per_node": 1e9}), 400.0)
    assert p.eviction_cost(img, 1000.0) == 4.0


# -- the eviction candidates and the victim-choice model of one deficit ---------------------------

def test_candidates_are_the_over_entitled_entities_jobs_least_prioritised_first():
    # B and C hold 6 each (entitled to 4): every job of theirs is a candidate for A's job,
    # youngest segment first; a job of B sees only C's; a taken job is left out; an entity
    # back at its entitlement gives none
    pol = make_policy("omfs", shares=THIRDS, quantum=0)
    state = _three_entity_state(4000.0)
    entitled = entitled_nodes(THIRDS, 12)
    held = {"B": 6, "C": 6}

    def ids(job, held=held, taken=frozenset()):
        return [r.job.id for r in pol.candidates(state, job, entitled, held, set(taken))]

    assert ids(_job("a1", "A", 4)) == ["b2", "c1", "c2", "b1"]
    assert ids(_job("b9", "B", 1)) == ["c1", "c2"]
    assert ids(_job("a1", "A", 4), taken={"c1"}) == ["b2", "c2", "b1"]
    assert ids(_job("a1", "A", 4), held={"B": 4, "C": 6}) == ["c1", "c2"]


def test_victim_model_holds_the_deficit_the_slack_and_the_costs():
    from bbopt.policies.fairshare import _Free

    # C has no share: entitled to 0, it may lose all 6 nodes; B may lose 2. A asks for 4 nodes
    # and 80 B with nothing free (the BB owed to claims makes the free BB negative): the whole
    # request is the deficit. Checkpoint + restart of 1 GB per node at 1 GB/s: 2 s per node.
    shares = {"A": 1 / 3, "B": 1 / 3}
    pol = make_policy("omfs-opt", shares=shares, quantum=0, penalty=7.0, memory_per_node=1e9,
                      checkpoint_bandwidth=1e9)
    state = ClusterState(4000.0, Platform(nodes=12, bb=100.0), _three_entity_state(0.0).running,
                         ())
    model, cands = pol.model_for(state, _job("a1", "A", 4, bb=80.0), _Free(0, -5.0, 0.0),
                                 entitled_nodes(shares, 12), {"B": 6, "C": 6})
    assert [r.job.id for r in cands] == ["b2", "c1", "c2", "b1"] == list(model.ids)
    assert list(model.nodes) == [2, 2, 4, 4] and list(model.cost) == [4.0, 4.0, 8.0, 8.0]
    assert dict(zip(["B", "C"], model.slack.tolist(), strict=True)) == {"B": 2, "C": 6}
    assert (model.need_nodes, model.need_bb) == (4, 80.0)
    assert (model.penalty, model.bb_capacity) == (7.0, 100.0)
    # with 1 node and 0.5 B free, the deficit is what is left
    model, _ = pol.model_for(state, _job("a1", "A", 4, bb=80.0), _Free(1, 0.5, 0.0),
                             entitled_nodes(shares, 12), {"B": 6, "C": 6})
    assert (model.need_nodes, model.need_bb) == (3, 79.5)


@pytest.mark.parametrize("penalty,victims", [(39.0, ("v2", "v3")), (41.0, ("v1",))])
def test_the_eviction_penalty_weighs_the_number_of_victims(penalty, victims):
    # A needs 2 of 4 busy nodes from B's killable jobs: v1 (2 nodes, run 50 s: 100 node-s of
    # lost work) or v2 + v3 (1 node each, 30 s: 60). A penalty p per eviction: 100 + p against
    # 60 + 2p, the pair is cheaper below p = 40, v1 above
    running = [(_job("v1", "B", 2, ckpt=False), 950.0), (_job("v2", "B", 1, ckpt=False), 970.0),
               (_job("v3", "B", 1, ckpt=False), 970.0)]
    d = make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, penalty=penalty, budget=5.0
                    ).decide(_state(1000.0, running, [_job("a1", "A", 2)], nodes=4))
    assert d.preempt == victims
    assert d.alternatives[0]["cost"] == pytest.approx(min(100 + penalty, 60 + 2 * penalty))


def _opt_state(nodes=4):
    """A (entitled to half) asks for 2 of ``nodes`` busy nodes held by B (no share): v1 (2
    nodes, run 50 s) or v2 + v3 (1 node, 30 s each) may be killed, and ``nodes - 4`` more of
    B's 1-node jobs, each run 1000 s."""
    running = [(_job("v1", "B", 2, ckpt=False), 950.0), (_job("v2", "B", 1, ckpt=False), 970.0),
               (_job("v3", "B", 1, ckpt=False), 970.0)]
    running += [(_job(f"w{k}", "B", 1, ckpt=False), 0.0) for k in range(nodes - 4)]
    return _state(1000.0, running, [_job("a1", "A", 2)], nodes=nodes)


def test_omfs_opt_reports_its_victim_choice_and_the_greedy_one():
    from bbopt.core import Status

    d = make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, penalty=50.0,
                    budget=5.0).decide(_opt_state())
    (info,) = d.alternatives
    # v1: 100 + 50 = 150; Algorithm 1 takes the youngest first, v2 and v3: 60 + 100 = 160
    assert {k: v for k, v in info.items() if k != "solve_time"} == {
        "job": "a1", "victims": ["v1"], "cost": 150.0, "status": "OPTIMAL", "candidates": 3,
        "greedy_cost": 160.0, "greedy_victims": ["v2", "v3"]}
    assert info["solve_time"] >= 0.0
    s = d.stats
    assert (s.backend, s.status, s.objective, s.bound, s.budget) == (
        "exhaustive", Status.OPTIMAL, 150.0, 150.0, 5.0)
    # without the audit, no greedy victims are computed
    (plain,) = make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, audit=False,
                           budget=5.0).decide(_opt_state()).alternatives
    assert "greedy_cost" not in plain and "greedy_victims" not in plain


@pytest.mark.parametrize("nodes,backend", [(12, "exhaustive"), (13, "exhaustive"),
                                           (14, "cpsat")])
def test_auto_enumerates_up_to_twelve_candidates_and_solves_above(nodes, backend):
    # B's jobs on 12, 13, 14 nodes: 11, 12, 13 candidates; the same victims either way
    d = make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, budget=5.0
                    ).decide(_opt_state(nodes))
    assert d.alternatives[0]["candidates"] == nodes - 1
    assert d.stats.backend == backend and d.preempt == ("v2", "v3")


def test_victim_choices_share_the_decisions_wall_budget_and_are_seeded(monkeypatch):
    """The first victim choice of a wall budget B gets what is left of B less the share kept
    for the decision's end (MIN_SOLVE_SHARE = 0.2): at most 0.8 B, less the time already
    spent; in deterministic mode its work limits whole. Always seed 0."""
    import time

    import bbopt.solvers.base as base
    from bbopt.solvers.base import Budget

    seen = []
    real = base.solve

    def recording(model, backend, budget=None, seed=0, **kw):
        seen.append((budget, seed))
        return real(model, backend, budget, seed, **kw)

    monkeypatch.setattr(base, "solve", recording)
    before = time.perf_counter()
    make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, budget=20.0
                ).decide(_opt_state())
    spent = time.perf_counter() - before
    ((budget, seed),) = seen
    assert seed == 0 and budget.mode == "wall"
    assert 16.0 - spent <= budget.seconds <= 16.0
    seen.clear()
    make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, budget=2.0,
                budget_mode="deterministic").decide(_opt_state())
    assert seen == [(Budget.of(2.0, mode="deterministic"), 0)]


def test_a_victim_choice_past_the_deadline_gets_the_floor_of_the_budget(monkeypatch):
    # a tenth of the share kept: 0.1 x 0.2 x 2 s = 0.04 s
    import time

    import bbopt.solvers.base as base
    from bbopt.policies.fairshare import _Free

    seen = []
    real = base.solve
    monkeypatch.setattr(base, "solve", lambda m, b, budget=None, seed=0, **kw: (
        seen.append(budget), real(m, b, budget, seed, **kw))[1])
    pol = make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, budget=2.0)
    state = _opt_state()
    job = state.queue[0]
    entitled, held = entitled_nodes({"A": 0.5, "B": 0.0}, 4), {"B": 4}
    cands = pol.candidates(state, job, entitled, held)
    chosen, info, stats = pol._victims(state, job, _Free(0, 0.0, 0.0), entitled, held, set(),
                                       cands, time.perf_counter() - 10.0)
    assert [b.seconds for b in seen] == [pytest.approx(0.04)]
    assert [r.job.id for r in chosen] == ["v2", "v3"]


def test_no_solver_runs_when_no_victim_set_can_cover_the_deficit():
    # 12 nodes, 4 each: B holds 6 (slack 2), C exactly 4, Z one node it may not lose; A needs
    # 4 with 1 idle: 3 more than B may give. The quick test says so: nothing evicted, no solve.
    running = [(_job("b1", "B", 4), 0.0), (_job("b2", "B", 2), 500.0), (_job("c1", "C", 4), 0.0),
               (_job("z", "Z", 1, pre=False, ckpt=False), 0.0)]
    state = _state(4000.0, running, [_job("a1", "A", 4)])
    d = make_policy("omfs-opt", shares=THIRDS, budget=5.0).decide(state)
    assert d.preempt == () and d.alternatives == () and d.stats.backend == "rule"


def test_algorithm_1_evicts_without_a_solver_report():
    from bbopt.core import Status

    d = make_policy("omfs", shares=THIRDS).decide(_three_entity_state(4000.0))
    assert d.preempt == ("b2", "c1")
    assert d.alternatives == () and (d.stats.backend, d.stats.status) == ("rule",
                                                                          Status.FEASIBLE)


# -- claims: the resources of jobs being evicted belong to the job that evicted them ----------

def _claim_state(queue, memory=None, *, evicting=True):
    """14 nodes and 100 B (A, B, C entitled to 4 nodes each). b2 (2 nodes, 10 B) and c1 (1
    node, 10 B) are being evicted for a1 (4 nodes, 30 B); 2 nodes and 15 B are idle. a1 is owed
    4 - 3 = 1 node and 30 - 20 = 10 B more than its victims give back: 1 node, 5 B are free for
    the others."""
    flag = {"evicting": True} if evicting else {}
    running = [(_job("b1", "B", 4, bb=40.0), 0.0), (_job("c2", "C", 5, bb=25.0), 0.0),
               (Job("b2", 0.0, 10_000.0, 10_000.0, 2, bb=10.0, user="B", preemptable=True,
                    checkpointable=True, extra=flag), 500.0),
               (Job("c1", 0.0, 10_000.0, 10_000.0, 1, bb=10.0, user="C", preemptable=True,
                    checkpointable=True, extra=flag), 100.0)]
    if not evicting:
        running = running[:2]
    plat = Platform(nodes=14, bb=100.0)
    return ClusterState(4000.0, plat, tuple(RunningJob(j, s) for j, s in running),
                        (_job("a1", "A", 4, bb=30.0), *queue),
                        memory if memory is not None else {"claims": {"a1": ["b2", "c1"]}})


@pytest.mark.parametrize("other,started", [
    (_job("d1", "D", 1), ["d1"]),               # 1 node, 0 B: fits what is not owed
    (_job("d1", "D", 1, bb=5.0), ["d1"]),       # 5 B: exactly what is not owed
    (_job("d1", "D", 1, bb=6.0), []),           # 1 B too much
    (_job("d1", "D", 2), []),                   # 1 node too many
])
def test_resources_owed_to_a_claim_are_kept_from_the_others(other, started):
    d = make_policy("omfs", shares=THIRDS).decide(_claim_state([other]))
    assert d.started_ids == started and d.preempt == ()
    assert d.memory["claims"] == {"a1": ["b2", "c1"]}  # its victims are still checkpointing


def test_a_claim_starts_once_its_victims_are_gone_and_counts_for_its_entity():
    # b2 and c1 have left: a1 (non-preemptable, 4 nodes) starts first; A's non-preemptable
    # nodes are then 4, so a2 (1 more, non-preemptable) waits by line 26
    a1 = _job("a1", "A", 4, bb=30.0, pre=False, ckpt=False)
    state = _claim_state([_job("a2", "A", 1, pre=False, ckpt=False)], evicting=False)
    state = ClusterState(state.time, state.platform, state.running, (a1, *state.queue[1:]),
                         state.memory)
    d = make_policy("omfs", shares=THIRDS).decide(state)
    assert d.started_ids == ["a1"] and d.memory["claims"] == {}


def test_a_claim_whose_victims_are_back_and_that_still_does_not_fit_is_dropped():
    # the victims are gone but a1 now needs 6 nodes: the claim lapses, a1 is a waiting job
    # again (beyond A's entitlement: it takes EASY's reservation)
    state = _claim_state([], evicting=False)
    big = _job("a1", "A", 6, bb=30.0)
    state = ClusterState(state.time, state.platform, state.running, (big,), state.memory)
    d = make_policy("omfs", shares=THIRDS).decide(state)
    assert d.started_ids == [] and d.memory["claims"] == {} and d.preempt == ()
    assert [r.job_id for r in d.reservations] == ["a1"]


# -- EASY inside omfs: a job within its entitlement starts even when late ------------------------

@pytest.mark.parametrize("nodes,wall,started", [
    (2, 1000.0, ["a1"]),         # a1 ends after b1's reservation: the 2 nodes spare there go
    (2, 500.0, ["a1", "d1"]),    # ends exactly at the reservation: d1 takes a spare node
    (2, 400.0, ["a1", "d1"]),
    (3, 1000.0, ["a1"]),         # within A's entitlement: starts though it takes 3 > 2 spare
])
def test_a_job_within_its_entitlement_starts_and_takes_from_the_reservations_spare(
        nodes, wall, started):
    # 8 nodes (A, B entitled to 4): c1 (no share) holds 5 until 500. b1 (B, 6 nodes: beyond its
    # entitlement) waits with EASY's reservation at 500, where 8 - 6 = 2 nodes are spare.
    # d1 (no share, 1 node, ending after 500) may only backfill on what a1 left spare.
    from bbopt.core import Reservation

    state = _state(0.0, [(_job("c1", "C", 5, wall=500.0, pre=False, ckpt=False), 0.0)],
                   [_job("b1", "B", 6), _job("a1", "A", nodes, wall=wall), _job("d1", "D", 1)],
                   nodes=8)
    d = make_policy("omfs", shares={"A": 0.5, "B": 0.5}).decide(state)
    assert d.started_ids == started and d.reservations == (Reservation("b1", 500.0),)


# -- the rest of Algorithm 1's pass, each rule with the job after it -------------------------------

def test_a_job_without_a_user_belongs_to_the_entity_unknown():
    from bbopt.policies.fairshare import entity_of

    anon = Job("n", 0.0, 100.0, 100.0, 4)
    assert entity_of(anon) == "unknown" and entity_of(_job("a", "A", 1)) == "A"
    # "unknown" entitled to half of 8 nodes: 4 nodes are within its cap on a busy machine
    busy = [(_job("b1", "B", 1), 0.0)]
    d = make_policy("capping", shares={"unknown": 0.5, "B": 0.5}).decide(
        _state(0.0, busy, [anon], nodes=8))
    assert d.started_ids == ["n"]


def test_omfs_options_and_their_defaults():
    from bbopt.core import GB
    from bbopt.policies.fairshare import MemorylessFairShare

    p = MemorylessFairShare()
    assert (p.name, p.quantum, p.budget, p.protect, p.memory_per_node,
            p.checkpoint_bandwidth, p.audit) == ("omfs", 1800.0, 0.05, "strict", 64 * GB,
                                                 1 * GB, False)
    assert MemorylessFairShare(backend="auto").audit is True
    assert MemorylessFairShare(protect="over").protect == "over"
    for bad in (-1.0, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="quantum must be >= 0 seconds, got"):
            MemorylessFairShare(quantum=bad)
    with pytest.raises(ValueError, match="protect must be 'strict' or 'over', got 'loose'"):
        MemorylessFairShare(protect="loose")
    with pytest.raises(ValueError, match=r"^protect='over' is Algorithm 1's greedy reading; the "
                                         r"exact victim choice keeps every victim entity at its "
                                         r"entitlement$"):
        MemorylessFairShare(protect="over", backend="auto")


def test_the_pool_leaves_out_jobs_being_evicted():
    pol = make_policy("omfs", shares=THIRDS, quantum=0)
    assert [r.job.id for r in pol.pool(_claim_state([]))] == ["b1", "c2"]


def test_the_victim_model_leaves_out_taken_jobs_and_follows_the_protection():
    from bbopt.policies.fairshare import _Free

    state = _three_entity_state(4000.0)
    args = (state, _job("a1", "A", 4), _Free(0, 0.0, 0.0), entitled_nodes(THIRDS, 12),
            {"B": 6, "C": 6})
    strict = make_policy("omfs", shares=THIRDS, quantum=0)
    model, cands = strict.model_for(*args, taken={"c1"})
    assert list(model.ids) == ["b2", "c2", "b1"] and model.over_only is False
    over = make_policy("omfs", shares=THIRDS, quantum=0, protect="over")
    assert over.model_for(*args)[0].over_only is True


@pytest.mark.parametrize("nodes,started", [(2, ["a2"]), (3, [])])
def test_line_26_counts_every_running_non_preemptable_job_of_the_entity(nodes, started):
    # A (entitled to 4) runs two non-preemptable 1-node jobs: a non-preemptable job of 2 nodes
    # brings it to exactly 4 and starts, one of 3 waits
    running = [(_job("a0", "A", 1, pre=False, ckpt=False), 0.0),
               (_job("a1", "A", 1, pre=False, ckpt=False), 0.0)]
    d = make_policy("omfs", shares=THIRDS).decide(
        _state(10.0, running, [_job("a2", "A", nodes, pre=False, ckpt=False)]))
    assert d.started_ids == started


def test_a_waiting_non_preemptable_job_holds_back_only_itself():
    # a1 waits by line 26 (A's non-preemptable nodes would exceed 4); b1 behind it starts
    running = [(_job("a0", "A", 3, pre=False, ckpt=False), 0.0)]
    d = make_policy("omfs", shares=THIRDS).decide(
        _state(10.0, running, [_job("a1", "A", 2, pre=False, ckpt=False), _job("b1", "B", 2)]))
    assert d.started_ids == ["b1"]


def test_after_a_drain_the_rest_of_the_idle_machine_is_still_used():
    # a1 (5 nodes, non-preemptable, wider than A's 4) drains the idle machine; b1 runs beside
    d = make_policy("omfs", shares=THIRDS).decide(
        _state(0.0, [], [_job("a1", "A", 5, pre=False, ckpt=False), _job("b1", "B", 2)]))
    assert d.started_ids == ["a1", "b1"]


def test_a_job_beyond_what_its_entity_has_left_evicts_nobody():
    # A holds 2 of its 4: a job of 3 is beyond what is left (2) and waits; a job of 2 evicts
    state = _three_entity_state(4000.0)
    running = (*state.running, RunningJob(_job("a0", "A", 2), 0.0))
    wide = ClusterState(4000.0, Platform(nodes=14), running, (_job("a1", "A", 3),))
    d = make_policy("omfs", shares=THIRDS).decide(wide)
    assert d.preempt == () and d.started_ids == []
    fits = ClusterState(4000.0, Platform(nodes=14), running, (_job("a1", "A", 2),))
    assert make_policy("omfs", shares=THIRDS).decide(fits).preempt == ("b2",)


def test_a_job_without_candidates_or_cover_waits_and_the_next_is_offered():
    # 12 nodes, 4 each: B and C hold exactly 4, D (no share) 2 non-preemptable nodes: no
    # candidate for a1 (A, 4 nodes, 2 idle). It takes the reservation (at 10,000) and b9
    # (beyond B's entitlement, ending at 5,000) backfills
    running = [(_job("b1", "B", 4), 0.0), (_job("c1", "C", 4), 0.0),
               (_job("d0", "D", 2, pre=False, ckpt=False), 0.0)]
    d = make_policy("omfs", shares=THIRDS).decide(
        _state(4000.0, running, [_job("a1", "A", 4), _job("b9", "B", 1, wall=1000.0)]))
    assert d.started_ids == ["b9"] and d.preempt == ()
    assert [(r.job_id, r.start) for r in d.reservations] == [("a1", 10_000.0)]


def test_a_job_whose_deficit_no_victim_set_covers_waits_and_the_next_is_offered():
    running = [(_job("b1", "B", 4), 0.0), (_job("b2", "B", 2), 500.0), (_job("c1", "C", 4), 0.0),
               (_job("z", "Z", 1, pre=False, ckpt=False), 0.0)]
    queue = [_job("a1", "A", 4), _job("b9", "B", 1, wall=1000.0)]
    for name in ("omfs", "omfs-opt"):
        d = make_policy(name, shares=THIRDS, budget=5.0).decide(_state(4000.0, running, queue))
        assert d.started_ids == ["b9"] and d.preempt == (), name


def _evict_state(idle, a1_bb=0.0, free_bb=0.0, x=None):
    """14 nodes, 100 B (A, B, C entitled to 4): B holds b1 (4) and b2 (2 nodes, 10 B, the
    youngest), C c2 (4) and c1 (2 nodes, 10 B); Z a non-preemptable node when ``idle`` is 1.
    a1 (A, 4 nodes, ``a1_bb``) needs evictions; x (D, 1 node) comes after it."""
    b1_bb = 80.0 - free_bb
    running = [(_job("b1", "B", 4, bb=b1_bb), 0.0), (_job("b2", "B", 2, bb=10.0), 500.0),
               (_job("c2", "C", 4), 50.0), (_job("c1", "C", 2, bb=10.0), 100.0)]
    if idle == 1:
        running.append((_job("z", "Z", 1, pre=False, ckpt=False), 0.0))
    queue = [_job("a1", "A", 4, bb=a1_bb), x or _job("x", "D", 1, wall=100.0)]
    plat = Platform(nodes=14, bb=100.0)
    return ClusterState(4000.0, plat, tuple(RunningJob(j, s) for j, s in running),
                        tuple(queue))


@pytest.mark.parametrize("idle,preempt,started", [
    (2, ("b2",), []),          # b2's 2 nodes and the 2 idle ones are a1's: nothing for x
    (1, ("b2", "c1"), ["x"]),  # b2 and c1 give 4, so the idle node is left for x
])
def test_the_idle_nodes_an_eviction_relies_on_are_kept_for_its_job(idle, preempt, started):
    d = make_policy("omfs", shares=THIRDS).decide(_evict_state(idle))
    assert d.preempt == preempt and d.started_ids == started
    assert d.memory["claims"] == {"a1": list(preempt)}


@pytest.mark.parametrize("a1_bb,free_bb,x_bb,started", [
    (60.0, 50.0, 10.0, ["x"]),   # 50 free + 20 freed - 60 = 10 B left: x fits exactly
    (60.0, 50.0, 11.0, []),
    (15.0, 10.0, 10.0, ["x"]),   # the victims' 20 B cover a1's 15: the 10 free stay free
    (15.0, 10.0, 11.0, []),
])
def test_the_idle_burst_buffer_an_eviction_relies_on_is_kept_for_its_job(a1_bb, free_bb, x_bb,
                                                                         started):
    state = _evict_state(1, a1_bb, free_bb, _job("x", "D", 1, wall=100.0, bb=x_bb))
    d = make_policy("omfs", shares=THIRDS).decide(state)
    assert d.preempt == ("b2", "c1") and d.started_ids == started


def test_a_second_eviction_takes_other_victims_and_sees_the_first_ones_gone():
    # 16 nodes, 4 entities entitled to 4. B and C hold 8 each. a1 takes the youngest, b2;
    # then B holds 6, still 2 over: e1 takes b3, B's next youngest (not b2 again, and not a
    # job of C as if B were back at its entitlement)
    shares = {"A": 0.25, "B": 0.25, "C": 0.25, "E": 0.25}
    running = [(_job("b1", "B", 4), 0.0), (_job("b2", "B", 2), 600.0),
               (_job("b3", "B", 2), 500.0), (_job("c1", "C", 4), 0.0),
               (_job("c2", "C", 2), 100.0), (_job("c3", "C", 2), 50.0)]
    d = make_policy("omfs", shares=shares).decide(
        _state(4000.0, running, [_job("a1", "A", 2), _job("e1", "E", 2)], nodes=16))
    assert d.preempt == ("b2", "b3")
    assert d.memory["claims"] == {"a1": ["b2"], "e1": ["b3"]}


def test_a_kept_claim_counts_for_line_26_and_a_claim_can_block_a_reservation():
    # a1 (non-preemptable) keeps its claim: A's non-preemptable nodes are 4, a2 waits; d (14
    # nodes: the whole machine, less the node owed to a1) gets no reservation at infinity
    a1 = _job("a1", "A", 4, bb=30.0, pre=False, ckpt=False)
    state = _claim_state([_job("a2", "A", 1, pre=False, ckpt=False), _job("d", "D", 14)])
    state = ClusterState(state.time, state.platform, state.running, (a1, *state.queue[1:]),
                         state.memory)
    d = make_policy("omfs", shares=THIRDS).decide(state)
    assert d.started_ids == [] and d.memory["claims"] == {"a1": ["b2", "c1"]}
    assert d.reservations == ()


@pytest.mark.parametrize("step,evicts", [(0.38, True), (0.4, True), (0.42, False)])
def test_victims_are_looked_for_only_before_four_fifths_of_the_budget(monkeypatch, step,
                                                                      evicts):
    """Each look at the clock finds ``step`` budgets gone: the look before the victim choice
    (the second) finds 2 x ``step``; past 0.8 (the budget less MIN_SOLVE_SHARE) the job waits,
    holds EASY's reservation, and the decision is a FALLBACK."""
    from bbopt.core import Status
    from bbopt.policies import fairshare
    from tests._slow_clock import SlowClock

    pol = make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, budget=1.0)
    monkeypatch.setattr(fairshare, "_time", SlowClock(step))
    d = pol.decide(_opt_state())
    assert d.preempt == (("v2", "v3") if evicts else ())
    assert (d.stats.status is Status.FALLBACK) is not evicts
    assert [r.job_id for r in d.reservations] == ([] if evicts else ["a1"])


@pytest.mark.parametrize("step", [0.42, 0.5])
def test_out_of_time_a_job_needing_victims_waits_and_the_others_are_still_offered(monkeypatch,
                                                                                  step):
    # one node idle: a1 (2 nodes) would need a victim but the budget is spent; x (1 node of
    # B, ending before a1's reservation) still starts
    from bbopt.policies import fairshare
    from tests._slow_clock import SlowClock

    running = [(_job("v1", "B", 2, ckpt=False), 950.0), (_job("v2", "B", 1, ckpt=False), 970.0)]
    state = _state(1000.0, running, [_job("a1", "A", 2), _job("x", "B", 1, wall=100.0)],
                   nodes=4)
    pol = make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, budget=1.0)
    monkeypatch.setattr(fairshare, "_time", SlowClock(step))
    d = pol.decide(state)
    assert d.preempt == () and d.started_ids == ["x"]


def test_omfs_reports_its_own_decision_time():
    import time

    pol = make_policy("omfs", shares=THIRDS)
    before = time.perf_counter()
    d = pol.decide(_three_entity_state(4000.0))
    assert 0.0 < d.stats.wall_time <= time.perf_counter() - before


def test_the_decision_carries_the_status_of_its_victim_choice(monkeypatch):
    # a backend that answers with a feasible, unproven choice: the decision says so
    from dataclasses import replace

    import bbopt.solvers.base as base
    from bbopt.core import Status

    real = base.solve
    monkeypatch.setattr(base, "solve", lambda *a, **kw: replace(real(*a, **kw),
                                                                status=Status.FEASIBLE))
    d = make_policy("omfs-opt", shares={"A": 0.5, "B": 0.0}, quantum=0, budget=5.0
                    ).decide(_opt_state())
    assert d.preempt == ("v2", "v3") and d.stats.status is Status.FEASIBLE
    assert d.alternatives[0]["status"] == "FEASIBLE"


def _fresh_start_state(queue, nodes=12):
    """Entitlements of a third each: A runs a0 and C runs c0 (4 nodes each, neither
    preemptable, until 10,000); the other nodes are free (4 of 12)."""
    running = [(_job("a0", "A", 4, pre=False, ckpt=False), 0.0),
               (_job("c0", "C", 4, pre=False, ckpt=False), 0.0)]
    return _state(100.0, running, queue, nodes=nodes)


@pytest.mark.parametrize("quantum,started", [(0.0, ["b1", "c1"]), (0.001, ["a1", "c1"]),
                                             (1800.0, ["a1", "c1"])])
def test_a_job_started_earlier_in_the_pass_is_taken_back_for_an_entitled_job(quantum, started):
    # 13 nodes (4 entitled each), 5 free: a1 (A, over its entitlement) comes first and takes 4;
    # b1 (B, holding nothing, not preemptable) is within its entitlement and needs 4. Algorithm
    # 1 counts a1 among the running jobs: with no quantum it is the victim, taken back before it
    # runs (nothing to checkpoint), and b1 starts now; with any quantum a1 is too young to be
    # evicted and b1 waits. Either way the pass goes on: c1 takes the node left.
    queue = [_job("a1", "A", 4), _job("b1", "B", 4, pre=False, ckpt=False),
             _job("c1", "C", 1, wall=50.0)]
    d = make_policy("omfs", shares=THIRDS, quantum=quantum).decide(
        _fresh_start_state(queue, nodes=13))
    assert d.started_ids == started
    assert d.preempt == ()
    assert d.memory["claims"] == {}


def test_a_job_taken_back_for_an_entitled_job_starts_it_beyond_easys_reservation():
    # c2 (C, 8 nodes) waits first and holds EASY's reservation at 200, when a0' ends; a1 ends
    # by then and backfills; b1, within B's entitlement, takes a1 back and starts although it
    # ends after the reservation with no node spare there (an entitled job always runs)
    running = [(_job("a0", "A", 4, pre=False, ckpt=False, wall=200.0), 0.0),
               (_job("c0", "C", 4, pre=False, ckpt=False), 0.0)]
    queue = [_job("c2", "C", 8), _job("a1", "A", 4, wall=50.0), _job("b1", "B", 4)]
    d = make_policy("omfs", shares=THIRDS, quantum=0).decide(_state(100.0, running, queue))
    assert d.started_ids == ["b1"] and d.preempt == ()
    assert [(r.job_id, r.start) for r in d.reservations] == [("c2", 200.0)]


@pytest.mark.parametrize("protect, started", [("strict", ["a1", "c1"]),
                                               ("over", ["b1", "c1"])])
def test_with_protect_over_a_start_of_the_pass_is_taken_back_whatever_the_quantum(protect,
                                                                                 started):
    # the case above with a 30 min quantum: a1 has not run, so with protect="over" its quantum
    # does not keep b1 waiting; the strict reading leaves a start of the pass to its quantum
    queue = [_job("a1", "A", 4), _job("b1", "B", 4, pre=False, ckpt=False),
             _job("c1", "C", 1, wall=50.0)]
    d = make_policy("omfs", shares=THIRDS, quantum=1800, protect=protect).decide(
        _fresh_start_state(queue, nodes=13))
    assert d.started_ids == started and d.preempt == ()


def test_a_job_taken_back_frees_its_nodes_beside_a_running_victim():
    # a1 (2 nodes) starts first; b1 needs 4: the candidates youngest first are a1 (just started)
    # then a2 (running since 0); A holds 8 of its 4, so both go: a1 waits again, a2 is evicted
    # and b1 claims the 2 free nodes and a2's 2.
    running = [(_job("a0", "A", 4, pre=False, ckpt=False), 0.0), (_job("a2", "A", 2), 0.0),
               (_job("c0", "C", 4, pre=False, ckpt=False), 0.0)]
    state = _state(100.0, running, [_job("a1", "A", 2), _job("b1", "B", 4)])
    d = make_policy("omfs", shares=THIRDS, quantum=0).decide(state)
    assert d.started_ids == []
    assert d.preempt == ("a2",)
    assert d.memory["claims"] == {"b1": ["a2"]}


def test_the_exact_victim_choice_takes_back_a_fresh_start_at_no_cost():
    # omfs-opt on the same pass: a1 (checkpointable, 4 nodes: 4 x 2 x 64 GB / 1 GB/s = 512
    # node-s if it were running) costs nothing to take back
    queue = [_job("a1", "A", 4), _job("b1", "B", 4)]
    d = make_policy("omfs-opt", shares=THIRDS, quantum=0).decide(_fresh_start_state(queue))
    assert d.started_ids == ["b1"] and d.preempt == ()
    (info,) = d.alternatives
    assert info["victims"] == ["a1"] and info["cost"] == 0.0


def test_algorithm_1s_victims_come_in_its_order_a_fresh_start_among_them():
    # 14 nodes (4 entitled each), A holds 6 and a1 takes the 4 free: b1 needs 4. In Algorithm
    # 1's order a2 (priority -1, running) comes before a1 (started in this pass): omfs evicts
    # a2 and takes a1 back, and b1 claims a2's node beside the 4 given back; the exact choice
    # takes back a1 alone (it costs nothing, and covers b1) and b1 starts now
    running = [(_job("a0", "A", 4, pre=False, ckpt=False), 0.0),
               (_job("a3", "A", 1, pre=False, ckpt=False), 0.0),
               (_job("a2", "A", 1, priority=-1.0), 0.0),
               (_job("c0", "C", 4, pre=False, ckpt=False), 0.0)]
    state = _state(100.0, running, [_job("a1", "A", 4), _job("b1", "B", 4)], nodes=14)
    d = make_policy("omfs", shares=THIRDS, quantum=0).decide(state)
    assert (d.started_ids, d.preempt, d.memory["claims"]) == ([], ("a2",), {"b1": ["a2"]})
    exact = make_policy("omfs-opt", shares=THIRDS, quantum=0).decide(state)
    assert (exact.started_ids, exact.preempt) == (["b1"], ())

"""The engine's promises at their edges: a job is killed at its walltime exactly when it would
run longer (not at equality), and on crowded workloads (exact capacity, coinciding ends and
arrivals, zero-length runs) no instant holds more nodes or BB than the platform has, every job
ends at start + min(runtime, walltime) and none starts before its submission.

The engine validates decisions, records every outcome, and is deterministic."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import Decision, InputError, InvalidDecision, Job, Platform, Start, make_policy, simulate
from bbopt.analysis.metrics import summarize
from bbopt.core import ENGINE_REL_TOL, JobState, RunningJobs
from bbopt.workloads.synthetic import kth_like
from tests._policies import PoolOnly
from tests._random_workloads import crowded_workloads


@pytest.mark.parametrize("runtime,state,end", [
    (100.0 - 1e-6, JobState.FINISHED, 100.0 - 1e-6),
    (100.0, JobState.FINISHED, 100.0),
    (100.0 + 1e-6, JobState.KILLED, 100.0),
])
def test_a_job_is_killed_at_its_walltime_only_when_it_would_run_longer(runtime, state, end):
    res = simulate([Job("a", 0.0, 100.0, runtime)], Platform(1), "fcfs")
    assert res.state == [state] and res.end == [end]


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded_workloads(), st.sampled_from(["fcfs", "fcfs-bb", "sjf-bb", "conservative-bb",
                                             "filler"]))
def test_crowded_workloads_keep_capacity_and_walltimes(jobs, policy):
    platform = Platform(8, 100.0)
    res = simulate(jobs, platform, policy)
    events = []
    for job, start, end, state in zip(jobs, res.start, res.end, res.state, strict=True):
        if state not in (JobState.FINISHED, JobState.KILLED):
            continue
        assert start >= job.submit
        killed = job.runtime > job.walltime
        assert state == (JobState.KILLED if killed else JobState.FINISHED)
        assert end == start + min(job.runtime, job.walltime)
        events += [(end, 0, -job.nodes, -job.bb), (start, 1, job.nodes, job.bb)]
    nodes = bb = 0.0
    for _, _, dn, dbb in sorted(events):  # ends before starts at the same instant
        nodes += dn
        bb += dbb
        assert nodes <= platform.nodes and bb <= platform.bb + 1e-9


PLATFORM = Platform(nodes=4, bb=10.0)


class Greedy:
    """Starts whatever it is told to, to test the engine's checks."""

    name = "test"

    io_aware = False

    def __init__(self, pick):
        self.pick = pick

    def decide(self, state):
        return Decision(start=tuple(Start(i) for i in self.pick(state)))


def test_over_capacity_decision_is_refused_naming_the_job():
    jobs = [Job("a", 0, 10, 10, 3), Job("b", 0, 10, 10, 3)]
    bad = Greedy(lambda s: [j.id for j in s.queue])
    with pytest.raises(InvalidDecision, match="job b"):
        simulate(jobs, PLATFORM, bad)


def test_bb_over_capacity_is_refused():
    jobs = [Job("a", 0, 10, 10, 1, 6.0), Job("b", 0, 10, 10, 1, 6.0)]
    with pytest.raises(InvalidDecision, match="burst buffer"):
        simulate(jobs, PLATFORM, Greedy(lambda s: [j.id for j in s.queue]))


def test_starting_an_unknown_or_running_job_is_refused():
    jobs = [Job("a", 0, 10, 10, 1)]
    with pytest.raises(InvalidDecision, match="job zzz"):
        simulate(jobs, PLATFORM, Greedy(lambda s: ["zzz"]))
    with pytest.raises(InvalidDecision, match="started twice"):
        simulate(jobs, PLATFORM, Greedy(lambda s: ["a", "a"]))


def test_busy_node_set_is_refused():
    jobs = [Job("a", 0, 10, 10, 2), Job("b", 0, 10, 10, 2)]

    class Pin:
        name = "pin"
        io_aware = False

        def decide(self, state):
            return Decision(start=tuple(Start(j.id, (0, 1)) for j in state.queue))

    with pytest.raises(InvalidDecision, match="busy"):
        simulate(jobs, PLATFORM, Pin())


def test_local_ssd_requests_are_enforced_per_node():
    # Nodes 0, 1 have 100 B of SSD, nodes 2, 3 have 200 B; a asks 150 B on each of 2 nodes.
    ssd = Platform(nodes=4, bb=10.0, node_ssd=(100.0, 100.0, 200.0, 200.0))
    a = Job("a", 0, 10, 10, 2, ssd=150.0)

    class Pin:
        name = "pin"
        io_aware = False

        def __init__(self, nodes):
            self.nodes = nodes

        def decide(self, state):
            return Decision(start=tuple(Start(j.id, self.nodes) for j in state.queue))

    with pytest.raises(InvalidDecision, match="less than the 150 B of local SSD"):
        simulate([a], ssd, Pin((1, 2)))
    # Without a node set the engine takes admissible nodes, least SSD first.
    small = Job("s", 0, 10, 10, 1, ssd=50.0)
    res = simulate([a, small], ssd, Pin(None))
    assert res.allocation == [(2, 3), (0,)]
    # ... and refuses when too few free nodes have enough SSD.
    b = Job("b", 0, 10, 10, 1, ssd=150.0)
    with pytest.raises(InvalidDecision, match="job b"):
        simulate([a, b], ssd, Greedy(lambda s: [j.id for j in s.queue]))


def test_policy_that_starves_an_idle_machine_is_caught():
    jobs = [Job("a", 0, 10, 10, 1)]
    with pytest.raises(InvalidDecision, match="idle machine"):
        simulate(jobs, PLATFORM, Greedy(lambda s: []))


def test_kill_at_walltime_and_reject_with_reason():
    jobs = [Job("long", 0, walltime=5, runtime=50), Job("huge", 0, 5, 5, nodes=5),
            Job("fat", 0, 5, 5, bb=11.0)]
    res = simulate(jobs, PLATFORM, "fcfs-bb")
    assert res.state == ["killed", "rejected", "rejected"]
    assert res.end[0] == 5
    assert "nodes" in res.reasons["huge"] and "burst buffer" in res.reasons["fat"]
    m = summarize(res)
    assert (m["finished"], m["killed"], m["rejected"]) == (0, 1, 2)


def test_memory_travels_between_decisions():
    seen = []

    class Counter:
        name = "counter"
        io_aware = False

        def decide(self, state):
            seen.append(state.memory.get("n", 0))
            return Decision(start=tuple(Start(j.id) for j in state.queue[:1]),
                            memory={"n": state.memory.get("n", 0) + 1})

    simulate([Job(str(k), k, 1, 1) for k in range(4)], PLATFORM, Counter())
    assert seen == [0, 1, 2, 3]


def test_same_seed_same_csv(tmp_path):
    for name in ("a", "b"):
        jobs = kth_like(400, seed=7)
        simulate(jobs, Platform.kopanski(), "sjf-bb").to_csv(tmp_path / f"{name}.csv")
    assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "b.csv").read_bytes()
    other = kth_like(400, seed=8)
    simulate(other, Platform.kopanski(), "sjf-bb").to_csv(tmp_path / "c.csv")
    assert (tmp_path / "a.csv").read_bytes() != (tmp_path / "c.csv").read_bytes()


def test_jobs_csv_has_batsim_columns(tmp_path):
    import csv

    from bbopt.simulation.result import BATSIM_COLUMNS

    res = simulate(kth_like(50, seed=1), Platform.kopanski(), "fcfs-bb")
    path = res.to_csv(tmp_path / "jobs.csv")
    rows = list(csv.DictReader(path.open()))
    assert tuple(rows[0])[: len(BATSIM_COLUMNS)] == BATSIM_COLUMNS
    for row in rows:
        if row["final_state"] == "REJECTED":
            continue
        assert float(row["finish_time"]) == pytest.approx(
            float(row["starting_time"]) + float(row["execution_time"]))
        assert float(row["waiting_time"]) == pytest.approx(
            float(row["starting_time"]) - float(row["submission_time"]))
        # evalys' interval set ("0-3 7"): as many nodes as the job asked for
        held = sum(int(b) - int(a) + 1 for a, _, b in
                   (part.partition("-") if "-" in part else (part, "-", part)
                    for part in row["allocated_resources"].split()))
        assert held == int(row["requested_number_of_resources"])


def test_duplicate_ids_are_an_input_error():
    from bbopt import InputError

    with pytest.raises(InputError, match="duplicate"):
        simulate([Job("a", 0, 1), Job("a", 1, 1)], PLATFORM)


def test_execution_model_is_pluggable():
    """A model that runs every job at half its trace runtime decides the end times."""
    import heapq

    class HalfTime:
        def reset(self, jobs, platform):
            self.jobs, self.heap = jobs, []

        def start(self, k, t, allocation):
            heapq.heappush(self.heap, (t + self.jobs[k].runtime / 2, k))

        def next_time(self):
            return self.heap[0][0] if self.heap else float("inf")

        def finish(self, t):
            out = []
            while self.heap and self.heap[0][0] == t:
                out.append((heapq.heappop(self.heap)[1], "finished"))
            return out

    jobs = [Job("a", 0, 100, 40, 4), Job("b", 0, 100, 40, 4)]
    res = simulate(jobs, PLATFORM, "fcfs", execution=HalfTime())
    assert res.start == [0, 20] and res.end == [20, 40]
    with pytest.raises(Exception, match="execution model"):
        simulate(jobs, PLATFORM, "fcfs", execution="quantum")


def test_tick_schedules_periodically_while_jobs_wait():
    """With ``tick=60`` the engine decides at every event and at each multiple of 60 s while a
    job waits: r holds the machine 0-300, w waits from 10 to 300; after w starts, nothing waits
    and the ticks stop (w ends at 400 without a decision)."""
    jobs = [Job("r", 0, 300, 300, 2), Job("w", 10, 100, 100, 2)]
    fcfs = make_policy("fcfs")
    # asked even when nothing fits (tests/simulation/test_engine_shortcuts)
    fcfs.idle_unless_fits = False
    times = []
    res = simulate(jobs, Platform(2, 0.0), fcfs, tick=60,
                   on_decision=lambda state, decision: times.append(state.time))
    assert times == [0, 10, 60, 120, 180, 240, 300]
    assert res.start == [0, 300]
    times.clear()
    simulate(jobs, Platform(2, 0.0), fcfs, on_decision=lambda s, d: times.append(s.time))
    assert times == [0, 10, 300]


class _Caller:
    """FCFS that asks to be called at fixed times (as a Batsim scheduler's CALL_ME_LATER)."""

    name = "caller"
    io_aware = False

    def __init__(self, calls):
        self.calls = sorted(calls)
        self.asked: list[tuple[float, int]] = []

    def next_call(self) -> float:
        return self.calls[0] if self.calls else float("inf")

    def decide(self, state):
        self.asked.append((state.time, len(state.queue)))
        while self.calls and self.calls[0] <= state.time:
            self.calls.pop(0)
        return make_policy("fcfs").decide(state)


def test_a_policy_is_asked_at_the_times_it_asked_for_until_the_last_job_ends():
    """a runs 0-50 alone, b waits from 10 to 50; calls at 5 and 70 (nothing waiting: asked all
    the same), 30 (b waiting), 100 (after the last end, at 90: dropped)."""
    jobs = [Job("a", 0, walltime=50, runtime=50, nodes=4),
            Job("b", 10, walltime=40, runtime=40, nodes=4)]
    policy = _Caller([5.0, 30.0, 70.0, 100.0])
    res = simulate(jobs, Platform(nodes=4), policy)
    assert list(res.start) == [0.0, 50.0] and list(res.end) == [50.0, 90.0]
    assert policy.asked == [(0.0, 1), (5.0, 0), (10.0, 1), (30.0, 1), (50.0, 1), (70.0, 0)]
    assert policy.calls == [100.0]


# ---------------------------------------------------------------- evictions, checked
class _Evicts:
    """FCFS that preempts the jobs named for an instant (``plan``: time -> job ids, once) and
    records what it saw: the waiting ids and each running job's (id, expected end, evicting)."""

    name = "evicts"
    io_aware = False

    def __init__(self, plan, quantum=None):
        self.plan = dict(plan)  # (its entries are taken as they are used)
        self.quantum = quantum
        self.seen = []

    def decide(self, state):
        self.seen.append((state.time, [j.id for j in state.queue],
                          [(r.job.id, r.expected_end, bool(r.job.extra.get("evicting")))
                           for r in state.running]))
        fcfs = make_policy("fcfs").decide(state)
        return Decision(start=fcfs.start, preempt=tuple(self.plan.pop(state.time, ())))


def _checkpoint_model():
    """Images of 1 GB per node at 100 MB/s: 10 s to checkpoint, 10 s to restart."""
    from bbopt.simulation.checkpoint import CheckpointRestart

    return CheckpointRestart(memory_per_node=1e9, pfs_bandwidth=1e8)


def _evicted_jobs(**flags):
    """a holds the 4 nodes from 0 (1000 s of work); c (4 nodes) arrives at 100, d (1 node) at
    105."""
    flags = flags or {"checkpointable": True}
    return [Job("a", 0, 1000, 1000, 4, **flags), Job("c", 100, 10, 10, 4),
            Job("d", 105, 5, 5, 1)]


def test_an_evicted_job_holds_its_nodes_until_its_checkpoint_then_waits_in_arrival_order():
    """a, evicted at 100, keeps its nodes until its 10 s checkpoint ends at 110 (seen running,
    evicting, with that end at 105); it is then back in the queue before c and d (it arrived
    first), restarts at 110 for 10 s of restart and its 900 s of work left: ends at 1020."""
    policy = _Evicts({100.0: ("a",)})
    res = simulate(_evicted_jobs(), PLATFORM, policy, execution=_checkpoint_model())
    assert policy.seen == [
        (0.0, ["a"], []),
        (100.0, ["c"], [("a", 1000.0, False)]),
        (105.0, ["c", "d"], [("a", 110.0, True)]),
        (110.0, ["a", "c", "d"], []),
        (1020.0, ["c", "d"], []),
        (1030.0, ["d"], []),
    ]
    assert res.start == [0.0, 1020.0, 1030.0]  # the record keeps a's first start
    assert res.end == [1020.0, 1030.0, 1035.0]
    assert res.segments == [("a", 0.0, 110.0, "checkpointed"), ("a", 110.0, 1020.0, "finished"),
                            ("c", 1020.0, 1030.0, "finished"), ("d", 1030.0, 1035.0, "finished")]
    assert res.state == ["finished"] * 3


def test_a_preemptable_job_without_checkpoint_is_dropped_at_once():
    policy = _Evicts({100.0: ("a",)})
    res = simulate(_evicted_jobs(preemptable=True), PLATFORM, policy,
                   execution=_checkpoint_model())
    assert res.state == ["dropped", "finished", "finished"]
    assert (res.start, res.end) == ([0.0, 100.0, 110.0], [100.0, 110.0, 115.0])
    assert res.segments[0] == ("a", 0.0, 100.0, "dropped")


@pytest.mark.parametrize("quantum,refused", [(None, False), (99.5, False), (100.0, False),
                                             (100.5, True)])
def test_an_eviction_before_the_policys_quantum_is_refused(quantum, refused):
    """a has run 100 s when evicted: refused only under a quantum above that."""
    policy = _Evicts({100.0: ("a",)}, quantum=quantum)
    if refused:
        with pytest.raises(InvalidDecision, match=r"^invalid decision \(t=100s, job a\): has run "
                           r"100 s, less than the policy's quantum of 100\.5 s$"):
            simulate(_evicted_jobs(), PLATFORM, policy, execution=_checkpoint_model())
    else:
        res = simulate(_evicted_jobs(), PLATFORM, policy, execution=_checkpoint_model())
        assert res.segments[0] == ("a", 0.0, 110.0, "checkpointed")


@pytest.mark.parametrize("plan,flags,message", [
    ({100.0: ("zzz",)}, {}, "is not running, so it cannot be preempted"),
    ({100.0: ("c",)}, {}, "is not running, so it cannot be preempted"),  # c waits
    ({100.0: ("a",), 105.0: ("a",)}, {"checkpointable": True}, "is already being evicted"),
    ({100.0: ("a",)}, {"preemptable": False}, "is not preemptable"),
])
def test_evictions_of_jobs_not_running_not_preemptable_or_already_leaving_are_refused(
        plan, flags, message):
    job_id = plan[max(plan)][0]
    with pytest.raises(InvalidDecision, match=rf"\(t={max(plan):g}s, job {job_id}\): {message}$"):
        simulate(_evicted_jobs(**flags), PLATFORM, _Evicts(plan), execution=_checkpoint_model())


def test_an_execution_model_without_evictions_refuses_them():
    with pytest.raises(InvalidDecision, match=r"job a\): the execution model cannot preempt"):
        simulate(_evicted_jobs(), PLATFORM, _Evicts({100.0: ("a",)}))


# ---------------------------------------------------------------- starts refused on BB nodes
def test_a_start_refused_by_the_bb_nodes_keeps_its_place_in_arrival_order_and_is_counted():
    """BB nodes of 10 + 10: a (6 on BB node 0) leaves no node that takes one of h's two pieces
    of 6 until it ends at 10; h's start is refused at 0, 2 and 3 and it stays ahead of y (which
    waits for 4 nodes) and x (which arrives at 2 and runs 2-3)."""
    named = Platform(nodes=4, bb=20.0, bb_nodes=(10.0, 10.0))
    jobs = [Job("a", 0, 10, 10, 1, 6.0), Job("h", 0, 5, 5, 2, 12.0), Job("y", 0, 5, 5, 4),
            Job("x", 2, 1, 1, 1)]
    policy = PoolOnly()
    res = simulate(jobs, named, policy)
    assert policy.queues == [(0.0, ["a", "h", "y"]), (2.0, ["h", "y", "x"]), (3.0, ["h", "y"]),
                             (10.0, ["h", "y"]), (15.0, ["y"])]
    assert res.refused_starts == 3
    assert (res.start, res.end) == ([0.0, 10.0, 15.0, 2.0], [10.0, 15.0, 20.0, 3.0])


# ---------------------------------------------------------------- the run's arguments
def test_defaults_name_the_run_and_options_reach_the_policy():
    jobs = [Job("a", 0, 10, 10, 1)]
    res = simulate(jobs)  # Kopanski's platform, fcfs-bb
    assert (res.platform, res.policy, res.workload_name) == (
        Platform.kopanski(), "fcfs-bb", "workload")
    named = simulate(jobs, PLATFORM, "sjf-bb", workload_name="kth")
    assert (named.policy, named.workload_name) == ("sjf-bb", "kth")
    with pytest.raises(InputError, match="no_such_option"):
        simulate(jobs, PLATFORM, "fcfs", options={"no_such_option": 1})


def test_duplicate_ids_name_the_first_id_seen_twice():
    jobs = [Job("a", 0, 1), Job("b", 1, 1), Job("b", 2, 1), Job("a", 3, 1)]
    with pytest.raises(InputError, match="duplicate job id 'b'") as err:
        simulate(jobs, PLATFORM)
    assert err.value.field == "id"


def test_bandwidth_is_enforced_as_the_policy_declares_unless_told():
    """300 MB/s on one node exceeds every 256 MB/s switch of Herbein's tree: an I/O-aware
    policy's engine rejects the job at submission, fcfs's runs it, unless told to enforce."""
    from bbopt.core import MB
    from tests._platforms import IO_TREE

    jobs = [Job("w", 0, 10, 10, 1, bandwidth=300 * MB)]
    assert simulate(jobs, IO_TREE, "fcfs").state == ["finished"]
    for policy, enforce in (("fcfs", True), ("io-fcfs", None)):
        res = simulate(jobs, IO_TREE, policy, enforce_bandwidth=enforce)
        assert res.state == ["rejected"]
        assert res.reasons["w"].startswith("requests 1 nodes x 300 MB/s; even an empty machine")


@pytest.mark.parametrize("job,reason", [
    (Job("p", 0, 5, 5, 1, 15.0), "requests 1 pieces of 15 B of burst buffer, the 2 BB nodes "
                                 "hold 0 such pieces"),  # the pool has 20 B, no BB node 15
    (Job("q", 0, 5, 5, 2, 15.0), None),  # two pieces of 7.5 B
])
def test_a_job_whose_pieces_no_bb_node_can_hold_is_rejected_though_the_pool_could(job, reason):
    res = simulate([job], Platform(4, 20.0, bb_nodes=(10.0, 10.0)), "fcfs")
    assert res.state == (["rejected"] if reason else ["finished"])
    assert res.reasons.get(job.id) == reason


@pytest.mark.parametrize("ssd,state", [(0.0, "finished"), (0.5, "rejected")])
def test_any_local_ssd_asked_of_a_platform_without_ssd_is_rejected(ssd, state):
    res = simulate([Job("s", 0, 5, 5, 1, ssd=ssd)], PLATFORM, "fcfs")
    assert res.state == [state]
    assert res.reasons.get("s") == ("requests local SSD, platform has none" if ssd else None)


def test_each_decision_is_recorded_with_its_stats_and_on_job_end_sees_each_final_record():
    decisions, ended = [], []
    jobs = [Job("a", 0, 10, 10, 4), Job("huge", 1, 5, 5, nodes=5), Job("b", 2, 5, 5, 4)]
    res = simulate(jobs, PLATFORM, _Evicts({}),
                   on_decision=lambda s, d: decisions.append((s.time, d)),
                   on_job_end=lambda r, k: ended.append((k, r.state[k], r.end[k])))
    assert [t for t, _ in decisions] == [0.0, 2.0, 10.0]  # (huge is rejected: no decision)
    assert [d.start for _, d in decisions] == [(Start("a"),), (), (Start("b"),)]
    assert res.decision_stats == [d.stats for _, d in decisions]
    assert len(res.decision_times) == 3 and sum(res.decision_times) <= res.wall_time
    assert [k for k, *_ in ended] == [1, 0, 2]
    assert ended[1:] == [(0, "finished", 10.0), (2, "finished", 15.0)]
    assert ended[0][1] == "rejected"


# ---------------------------------------------------------------- jobs past their walltime
class _RunsToTheEnd:
    """Every job runs its whole runtime, past its walltime if longer (never killed)."""

    def reset(self, jobs, platform):
        self.jobs, self.ends = jobs, []

    def start(self, k, t, allocation):
        self.ends.append((t + self.jobs[k].runtime, k))
        self.ends.sort()

    def next_time(self):
        return self.ends[0][0] if self.ends else float("inf")

    def finish(self, t):
        out = [(k, "finished") for end, k in self.ends if end == t]
        self.ends = [e for e in self.ends if e[0] != t]
        return out


class _StalePlan:
    """FCFS that keeps a plan in its memory; the plan no longer fits at ``stale`` (the policy
    raises OverbookedError there while it has memory). Records (time, had memory, the running
    jobs' expected ends)."""

    name = "stale"
    io_aware = False

    def __init__(self, stale):
        self.stale = stale
        self.asked = []

    def decide(self, state):
        from bbopt.errors import OverbookedError

        self.asked.append((state.time, bool(state.memory),
                           [r.expected_end for r in state.running]))
        if state.time == self.stale and state.memory:
            raise OverbookedError("the kept plan overbooks the profile")
        return Decision(start=make_policy("fcfs").decide(state).start, memory={"plan": 1})


@pytest.mark.parametrize("runtime", [99.0, 100.0])
def test_a_job_ending_by_its_walltime_leaves_the_kept_plan_in_force(runtime):
    """a (walltime 100) ends at its runtime, not later: the plan kept is the policy's to keep,
    and its error at a's end propagates."""
    from bbopt.errors import OverbookedError

    jobs = [Job("a", 0, 100, runtime, 1), Job("b", 10, 10, 10, 1)]
    with pytest.raises(OverbookedError):
        simulate(jobs, Platform(1), _StalePlan(stale=runtime), execution=_RunsToTheEnd())


def test_a_job_ending_past_its_walltime_makes_the_next_decision_plan_afresh():
    """a (walltime 100) runs to 101: the decision at its end is taken again without memory when
    the kept plan no longer fits, and b starts at once."""
    jobs = [Job("a", 0, 100, 101, 1), Job("b", 10, 10, 10, 1)]
    policy = _StalePlan(stale=101.0)
    res = simulate(jobs, Platform(1), policy, execution=_RunsToTheEnd())
    assert policy.asked == [(0.0, False, []), (10.0, True, [100.0]), (101.0, True, []),
                            (101.0, False, [])]
    assert res.start == [0.0, 101.0]


@pytest.mark.parametrize("arrival,seen_end", [(99.0, 100.0), (100.0, 101.0), (100.5, 101.5)])
def test_a_job_at_or_past_its_walltime_is_planned_to_end_one_grace_second_later(arrival,
                                                                                seen_end):
    """a (walltime 100) runs to 150; b arrives at 99, 100 or 100.5: from its walltime on, the
    policy sees a ending one second (OVERDUE_GRACE) after now, and the kept plan, made before,
    is dropped if it no longer fits."""
    jobs = [Job("a", 0, 100, 150, 1), Job("b", arrival, 10, 10, 1)]
    policy = _StalePlan(stale=arrival)
    if arrival < 100:
        from bbopt.errors import OverbookedError

        # before a's walltime nothing is overdue: the kept plan is the policy's to keep, and
        # its error propagates
        with pytest.raises(OverbookedError, match="the kept plan overbooks the profile"):
            simulate(jobs, Platform(1), policy, execution=_RunsToTheEnd())
        assert policy.asked[-1] == (arrival, True, [seen_end])
        return
    res = simulate(jobs, Platform(1), policy, execution=_RunsToTheEnd())
    assert policy.asked[1:3] == [(arrival, True, [seen_end]), (arrival, False, [seen_end])]
    assert res.start == [0.0, 150.0]


# ---------------------------------------------------------------- decisions taken outside
def test_stepwise_applies_decisions_taken_outside_and_records_their_wall_time():
    """The caller starts the head of the queue at each instant (a policy that is asked even
    when nothing fits, with a tick of 2 s); what it declares as the decision's wall time and
    memory are recorded, and the run's arguments are those given."""
    from bbopt.simulation.engine import stepwise

    jobs = [Job("a", 0, 10, 10, 4), Job("b", 1, 5, 5, 4), Job("c", 1, 5, 5, 5)]
    with pytest.raises(InputError, match="no_such_option"):
        stepwise(jobs, PLATFORM, "fcfs", options={"no_such_option": 1})
    engine = stepwise(jobs, PLATFORM, _Evicts({}), workload_name="w", tick=2.0)
    seen = []
    for n, t in enumerate(engine.instants()):
        state = engine.state(t)
        seen.append((t, [j.id for j in state.queue], state.memory))
        free, _ = state.free()
        head = state.queue[0]
        start = (Start(head.id),) if head.nodes <= free else ()
        engine.apply(Decision(start=start, memory={"n": n}), t, wall=0.25 * (n + 1))
    res = engine.result
    assert seen == [(0.0, ["a"], {}), (1.0, ["b"], {"n": 0}), (2.0, ["b"], {"n": 1}),
                    (4.0, ["b"], {"n": 2}), (6.0, ["b"], {"n": 3}), (8.0, ["b"], {"n": 4}),
                    (10.0, ["b"], {"n": 5})]
    assert res.decision_times == [0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75]
    assert (res.start[:2], res.end[:2], res.state) == ([0.0, 10.0], [10.0, 15.0],
                                                       ["finished", "finished", "rejected"])
    assert (res.policy, res.workload_name, len(res.decision_stats)) == ("evicts", "w", 7)


# ---------------------------------------------------------------- when the policy is asked
def _asked_at(jobs, platform, policy="fcfs", **kw):
    times = []
    simulate(jobs, platform, policy, on_decision=lambda s, d: times.append(s.time), **kw)
    return times


@pytest.mark.parametrize("late,asked", [
    (Job("x", 5, 10, 10, 2), False),  # 2 nodes, 1 free
    (Job("x", 5, 10, 10, 1, 7.0), False),  # 1 node, 7 B of BB: 6 free
    (Job("x", 5, 10, 10, 1, 6.0), True),  # exactly what is free
])
def test_a_policy_idle_unless_fits_is_asked_only_when_a_waiting_job_fits(late, asked):
    """r holds 3 of 4 nodes and 4 of 10 B until 100; w (2 nodes, no BB) waits from 1; x
    arrives at 5: fcfs (idle unless some waiting job fits) is asked at 5 only when x fits."""
    jobs = [Job("r", 0, 100, 100, 3, 4.0), Job("w", 1, 10, 10, 2), late]
    times = _asked_at(jobs, Platform(4, 10.0))
    assert times[:2 + asked] == [0.0] + [5.0] * asked + [100.0]


def test_a_job_within_the_bb_tolerance_of_what_is_free_fits():
    """The ledger admits BB within its relative tolerance (2e-12 of the platform's BB): a job
    asking exactly free + tolerance fits and the policy is asked; a bit more does not."""
    tol = 10.0 * ENGINE_REL_TOL
    for bb, asked in ((6.0 + tol, True), (6.0 + 4 * tol, False)):
        jobs = [Job("r", 0, 100, 100, 3, 4.0), Job("x", 5, 10, 10, 1, bb)]
        assert (5.0 in _asked_at(jobs, Platform(4, 10.0))) is asked


def test_a_fitting_job_behind_sixteen_that_do_not_is_seen():
    """Seventeen waiting jobs (no blocks: the queue was never long): the first sixteen need 2
    nodes, the last arrives at 5 and needs 1; the one free node makes the policy be asked."""
    jobs = [Job("r", 0, 100, 100, 3)] + [Job(f"w{i}", 1, 10, 10, 2) for i in range(16)] + [
        Job("x", 5, 10, 10, 1)]
    assert _asked_at(jobs, Platform(4), "fcfs-bb")[:2] == [0.0, 5.0]


EXACT = (10.0 - 4.0) + 10.0 * ENGINE_REL_TOL  # what is free beside r, with the BB tolerance


@pytest.mark.parametrize("x_nodes,x_bb,asked", [(1, EXACT, True), (1, 6.5, False),
                                                (2, 0.0, False)])
def test_in_a_long_queue_the_blocks_of_jobs_show_an_exact_fit(x_nodes, x_bb, asked):
    """70 jobs wait behind r (3 nodes, 4 B of 10) from 0, the policy seeing them in blocks;
    each needs 2 nodes and 7 B; x arrives at 5 with 20 more like them (so that its block is
    full and summarised): fcfs-bb is asked at 5 only if x fits the one free node and the 6
    free B (exactly, with the tolerance, or not at all)."""
    jobs = [Job("r", 0, 100, 100, 3, 4.0)] + [
        Job(f"w{i}", 0, 10, 10, 2, 7.0) for i in range(70)] + [
        Job("x", 5, 10, 10, x_nodes, x_bb)] + [Job(f"v{i}", 5, 10, 10, 2, 7.0) for i in range(20)]
    queues = []
    res = simulate(jobs, Platform(4, 10.0), "fcfs-bb",
                   on_decision=lambda s, d: queues.append((s.time, type(s.queue).__name__)))
    assert queues[0] == (0.0, "QueueView")
    assert (queues[1][0] == 5.0) is asked
    assert res.state[71] == "finished"


@pytest.mark.parametrize("waiting,kind", [(64, "tuple"), (65, "QueueView")])
def test_queues_up_to_64_jobs_are_handed_over_as_tuples_longer_ones_as_views(waiting, kind):
    jobs = [Job(f"w{i}", 0, 10, 10, 5) for i in range(waiting)]
    seen = []

    class Looks:
        name = "looks"
        io_aware = False

        def decide(self, state):
            seen.append(type(state.queue).__name__)
            return Decision(start=tuple(Start(j.id) for j in state.queue[:1]))

    simulate(jobs, Platform(5), Looks())
    assert seen[0] == kind


def test_a_policy_that_asks_to_be_called_is_asked_until_the_last_job_has_ended():
    """a and a2 run 0-50 (and end together), huge is rejected at 60 when b arrives; b runs
    60-100. Calls at 70 (nothing waits: asked), at 100 (the last end: dropped) and 120."""
    jobs = [Job("a", 0, 50, 50, 2), Job("a2", 0, 50, 50, 2), Job("huge", 60, 5, 5, 5),
            Job("b", 60, 40, 40, 4)]
    policy = _Caller([70.0, 100.0, 120.0])
    res = simulate(jobs, Platform(4), policy)
    assert policy.asked == [(0.0, 2), (60.0, 1), (70.0, 0)]
    assert policy.calls == [100.0, 120.0]
    assert res.end[3] == 100.0


class _PhaseEvents:
    """Rigid runs, plus an event every 5 s of each run where nothing ends (an I/O phase
    boundary); records the platform it was reset with and each start's allocation."""

    ends_only_at_next_time = True

    def reset(self, jobs, platform):
        self.jobs, self.platform, self.events, self.started = jobs, platform, [], []

    def start(self, k, t, allocation):
        self.started.append((k, t, allocation))
        end = t + self.jobs[k].runtime
        self.events += [(t + 5 * i, None) for i in range(1, int(self.jobs[k].runtime // 5))]
        self.events.append((end, k))
        self.events.sort(key=lambda e: e[0])

    def next_time(self):
        return self.events[0][0] if self.events else float("inf")

    def finish(self, t):
        out = [(k, "finished") for when, k in self.events if when == t and k is not None]
        self.events = [e for e in self.events if e[0] != t]
        return out


def test_instants_where_nothing_ends_or_arrives_ask_nothing():
    """a runs 0-12 with events at 5 and 10 where nothing ends; b waits: the policy (asked even
    when nothing fits) is asked at 0, 1 and 12 only; the model got the platform and a's
    nodes."""
    model = _PhaseEvents()
    jobs = [Job("a", 0, 20, 12, 4), Job("b", 1, 5, 5, 4)]
    assert _asked_at(jobs, PLATFORM, _Evicts({}), execution=model) == [0.0, 1.0, 12.0]
    assert model.platform is PLATFORM
    assert model.started == [(0, 0.0, (0, 1, 2, 3)), (1, 12.0, (0, 1, 2, 3))]


def test_an_idle_machine_with_jobs_waiting_is_an_error_naming_the_first():
    with pytest.raises(InvalidDecision, match=r"^invalid decision \(t=infs, job b\): the policy "
                       r"left 2 jobs waiting on an idle machine$"):
        simulate([Job("b", 0, 10, 10, 1), Job("a", 1, 10, 10, 1)], PLATFORM,
                 Greedy(lambda s: []))


def test_a_start_of_a_job_not_waiting_is_refused_naming_why():
    with pytest.raises(InvalidDecision, match=r"^invalid decision \(t=0s, job zzz\): is not "
                       r"waiting$"):
        simulate([Job("a", 0, 10, 10, 1)], PLATFORM, Greedy(lambda s: ["zzz"]))
    with pytest.raises(InvalidDecision, match=r"^invalid decision \(t=0s, job a\): started "
                       r"twice$"):
        simulate([Job("a", 0, 10, 10, 1)], PLATFORM, Greedy(lambda s: ["a", "a"]))


def test_the_run_reports_no_progress_unless_asked(monkeypatch, capsys):
    monkeypatch.setenv("BBOPT_PROGRESS_EVERY", "1e-9")
    simulate(kth_like(300, seed=0), Platform.kopanski(), "fcfs")
    assert capsys.readouterr().err == ""


def test_on_a_terminal_the_bar_waits_a_second_and_is_cleared_at_the_end(monkeypatch):
    from bbopt import progress
    from bbopt.simulation.engine import _progress

    monkeypatch.setattr(progress, "_is_terminal", lambda stream: True)
    bar = _progress(10, True, "fcfs")
    assert (bar.total, bar.unit, bar.desc, bar.leave, bar.delay) == (10, "job", "fcfs", False,
                                                                     1.0)
    bar.close()
    assert _progress(10, False, "fcfs") is None


# ---------------------------------------------------------------- more of the run, by hand
def test_an_evicted_jobs_view_keeps_its_nodes_and_pieces_and_ends_when_its_checkpoint_does():
    """On BB nodes of 10 + 10: f fills the machine until 50, then a (2 nodes, 8 B) runs; c
    arrives at 100 and a is evicted (after 50 s of run): until its checkpoint ends at 110, d
    (arriving at 105) sees a on the same nodes with the same BB pieces, ending at 110."""
    named = Platform(4, 20.0, bb_nodes=(10.0, 10.0))
    jobs = [Job("f", 0, 50, 50, 4), Job("a", 0, 1000, 1000, 2, 8.0, checkpointable=True),
            Job("c", 100, 10, 10, 2), Job("d", 105, 5, 5, 1)]
    seen = {}

    class Records(_Evicts):
        def decide(self, state):
            seen[state.time] = {r.job.id: (r.allocation, r.bb_pieces, r.expected_end,
                                           bool(r.job.extra.get("evicting")))
                                for r in state.running}
            assert type(state.running) is RunningJobs
            return super().decide(state)

    res = simulate(jobs, named, Records({100.0: ("a",)}), execution=_checkpoint_model())
    nodes, pieces, end, evicting = seen[100.0]["a"]
    assert (end, evicting) == (1050.0, False) and pieces is not None and len(nodes) == 2
    assert seen[105.0]["a"] == (nodes, pieces, 110.0, True)
    assert seen[105.0]["c"][0] is not None
    assert ("a", 50.0, 110.0, "checkpointed") in res.segments
    with pytest.raises(InvalidDecision, match=r"^invalid decision \(t=100s, job a\): has run "
                       r"50 s, less than the policy's quantum of 60 s$"):
        simulate(jobs, named, _Evicts({100.0: ("a",)}, quantum=60.0),
                 execution=_checkpoint_model())


def test_an_eviction_a_fifth_of_a_second_after_the_start_without_quantum_is_allowed():
    """A 0.1 s checkpoint (10 MB per node at 100 MB/s): a, evicted at 0.2, is seen by d at
    0.25 ending at 0.3."""
    from bbopt.simulation.checkpoint import CheckpointRestart

    model = CheckpointRestart(memory_per_node=1e7, pfs_bandwidth=1e8)
    jobs = [Job("a", 0, 1000, 1000, 4, checkpointable=True), Job("c", 0.2, 10, 10, 4),
            Job("d", 0.25, 5, 5, 1)]
    policy = _Evicts({0.2: ("a",)})
    res = simulate(jobs, PLATFORM, policy, execution=model)
    assert policy.seen[2] == (0.25, ["c", "d"], [("a", pytest.approx(0.3), True)])
    assert res.segments[0] == ("a", 0.0, pytest.approx(0.3), "checkpointed")
    assert res.preemption["a"]["evictions"] == 1


def test_jobs_evicted_together_come_back_together_in_arrival_order():
    """a and b (2 nodes each) are both evicted at 100 for c (4 nodes): both checkpoints end at
    110, both are back before c and restart (10 s of restart, 900 s of work left)."""
    jobs = [Job("a", 0, 1000, 1000, 2, checkpointable=True),
            Job("b", 0, 1000, 1000, 2, checkpointable=True), Job("c", 100, 10, 10, 4)]
    policy = _Evicts({100.0: ("a", "b")})
    res = simulate(jobs, PLATFORM, policy, execution=_checkpoint_model())
    assert policy.seen[2][:2] == (110.0, ["a", "b", "c"])
    assert (res.start, res.end) == ([0.0, 0.0, 1020.0], [1020.0, 1020.0, 1030.0])
    assert [s[3] for s in res.segments] == ["checkpointed", "checkpointed", "finished",
                                            "finished", "finished"]


def test_a_job_back_in_an_empty_queue_restarts_at_once():
    """a (2 nodes) is evicted at 100 while c takes the 2 free nodes: nothing waits when a's
    checkpoint ends at 110, and a restarts then."""
    jobs = [Job("a", 0, 1000, 1000, 2, checkpointable=True), Job("c", 100, 50, 50, 2)]
    policy = _Evicts({100.0: ("a",)})
    res = simulate(jobs, PLATFORM, policy, execution=_checkpoint_model())
    assert [s[:2] for s in policy.seen] == [(0.0, ["a"]), (100.0, ["c"]), (110.0, ["a"])]
    assert (res.start, res.end) == ([0.0, 100.0], [1020.0, 150.0])


def test_an_execution_model_without_evictions_names_the_instant():
    with pytest.raises(InvalidDecision, match=r"^invalid decision \(t=100s, job a\): the "
                                              r"execution model cannot preempt jobs$"):
        simulate(_evicted_jobs(), PLATFORM, _Evicts({100.0: ("a",)}))


def test_two_starts_refused_in_one_decision_both_keep_waiting():
    """Three BB nodes of 10 B: a's three pieces of 6 leave 4 on each, so neither h1 nor h2 (one
    piece of 5 each) can be placed though the pool has 12 B: both are refused at 0, both wait
    in arrival order and start when a ends at 10."""
    named = Platform(nodes=5, bb=30.0, bb_nodes=(10.0, 10.0, 10.0))
    jobs = [Job("a", 0, 10, 10, 3, 18.0), Job("h1", 0, 5, 5, 1, 5.0), Job("h2", 0, 5, 5, 1, 5.0)]
    policy = PoolOnly()
    res = simulate(jobs, named, policy)
    assert policy.queues == [(0.0, ["a", "h1", "h2"]), (10.0, ["h1", "h2"])]
    assert res.refused_starts == 2
    assert res.start == [0.0, 10.0, 10.0]


def test_an_over_capacity_start_names_the_instant_and_what_is_free():
    jobs = [Job("a", 0, 10, 10, 3), Job("b", 0, 10, 10, 3)]
    with pytest.raises(InvalidDecision, match=r"^invalid decision \(t=0s, job b\): needs 3 "
                                              r"nodes, 1 free$"):
        simulate(jobs, PLATFORM, Greedy(lambda s: [j.id for j in s.queue]))


def test_the_run_lasts_at_least_its_decisions_and_at_most_the_call():
    from time import perf_counter

    t0 = perf_counter()
    res = simulate(kth_like(200, seed=2), Platform.kopanski(), "fcfs-bb")
    elapsed = perf_counter() - t0
    assert sum(res.decision_times) <= res.wall_time <= elapsed


def test_a_policy_without_a_name_is_recorded_by_what_it_prints():
    from bbopt.policies.registry import POLICIES, register

    class Nameless:
        io_aware = False

        def __init__(self, name="nameless"):
            pass

        def decide(self, state):
            return Decision(start=tuple(Start(j.id) for j in state.queue))

    register("test-nameless")(Nameless)
    try:
        res = simulate([Job("a", 0, 1, 1)], PLATFORM, "test-nameless")
    finally:
        POLICIES.remove("test-nameless")
    assert res.policy.startswith("<") and "Nameless object at" in res.policy


def test_progress_lines_count_every_256_jobs_ended(monkeypatch, capsys):
    monkeypatch.setenv("BBOPT_PROGRESS_EVERY", "1e-9")
    simulate(kth_like(600, seed=0), Platform.kopanski(), "fcfs", progress=True)
    err = capsys.readouterr().err
    assert [ln.split(",")[0] for ln in err.splitlines()] == [
        "fcfs: 256/600 jobs", "fcfs: 512/600 jobs", "fcfs: 600/600 jobs"]


def test_stepwise_defaults_and_arguments(monkeypatch, capsys):
    """fcfs-bb by default, no progress shown, the execution model and bandwidth enforcement
    given are used, and a decision applied without its wall time took none."""
    from bbopt.core import MB
    from bbopt.simulation.engine import stepwise
    from tests._platforms import IO_TREE

    monkeypatch.setenv("BBOPT_PROGRESS_EVERY", "1e-9")
    model = _PhaseEvents()
    engine = stepwise([Job("a", 0, 10, 10, 1), Job("b", 0, 10, 10, 1)], execution=model)
    assert engine.policy.name == "fcfs-bb" and engine.platform == Platform.kopanski()
    for t in engine.instants():
        engine.apply(Decision(start=tuple(Start(j.id) for j in engine.state(t).queue)), t)
    assert engine.result.decision_times == [0.0]
    assert [k for k, *_ in model.started] == [0, 1]
    assert capsys.readouterr().err == ""
    wide = stepwise([Job("w", 0, 10, 10, 1, bandwidth=300 * MB)], IO_TREE, "fcfs",
                    enforce_bandwidth=True)
    assert list(wide.instants()) == [] and wide.result.state == ["rejected"]


def test_a_model_that_may_end_jobs_at_any_instant_is_asked_at_every_instant():
    """The same phases, declared as possibly ending jobs at other instants too: the engine asks
    the model at each arrival as well (0, 1 and 3), not only at its own instants."""

    class Eager(_PhaseEvents):
        ends_only_at_next_time = False

        def finish(self, t):
            self.asked.append(t)
            return super().finish(t)

    model = Eager()
    model.asked = []
    jobs = [Job("a", 0, 20, 12, 4), Job("b", 1, 5, 5, 4), Job("c", 3, 5, 5, 4)]
    simulate(jobs, PLATFORM, _Evicts({}), execution=model)
    assert model.asked == [0.0, 1.0, 3.0, 5.0, 12.0, 17.0, 22.0]


def test_a_requeued_job_counts_among_the_waiting_of_its_size():
    """A policy idle unless some waiting job fits, called at 100 at its own request: a and b
    (2 nodes each) fill the machine, c (2 nodes) waits from 50; a is evicted at 100 and back
    at 110 with c: both fit the 2 nodes freed, so the policy is asked at 110 and starts a, and
    at 1000, when b ends, c."""

    class CalledAt100(_Evicts):
        idle_unless_fits = True

        def next_call(self):
            return 100.0 if not self.seen or self.seen[-1][0] < 100.0 else math.inf

    jobs = [Job("a", 0, 1000, 1000, 2, checkpointable=True), Job("b", 0, 1000, 1000, 2),
            Job("c", 50, 50, 50, 2)]
    policy = CalledAt100({100.0: ("a",)})
    res = simulate(jobs, PLATFORM, policy, execution=_checkpoint_model())
    assert [s[:2] for s in policy.seen] == [(0.0, ["a", "b"]), (100.0, ["c"]),
                                            (110.0, ["a", "c"]), (1000.0, ["c"])]
    assert (res.start, res.end) == ([0.0, 0.0, 1000.0], [1020.0, 1000.0, 1050.0])

"""Incremental requests of the decision service: a delta (jobs submitted, started, ended; the
clock) applied to the session's state decides as the whole state does, and a delta that does
not apply is refused naming its JSON path and field, leaving the session's state as it was."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import ClusterState, Job, Platform, RunningJob
from bbopt.api import decide
from bbopt.core import GB
from bbopt.errors import InputError
from bbopt.interop.delta import apply_delta
from bbopt.interop.serve import DecisionService
from bbopt.schema import job_to_dict, loads_decision, state_to_dict

PLATFORM = Platform(nodes=4, bb=100 * GB)


def start_state() -> ClusterState:
    return ClusterState(
        time=10.0, platform=PLATFORM,
        running=(RunningJob(Job("r", 0, walltime=600, nodes=2, bb=30 * GB), start=0.0),),
        queue=(Job("a", 0, walltime=300, nodes=1, bb=60 * GB),
               Job("b", 5, walltime=300, nodes=4)))


def body(state: ClusterState) -> dict:
    d = state_to_dict(state)
    del d["memory"]
    return d


def decision(reply: dict):
    assert reply["ok"], reply
    return loads_decision(json.dumps(reply["decision"]))


@pytest.fixture
def service():
    s = DecisionService(warm=())
    assert s.handle({"policy": "conservative-bb", "session": "rm",
                     "state": body(start_state())})["ok"]
    return s


def test_a_delta_decides_as_the_whole_state_after_the_same_events(service):
    """r ends and a starts at t=40; c arrives; the delta's decision is the whole state's (with
    the memory the session kept), and the session's state is that state."""
    memory = service.sessions["rm"].memory["conservative-bb"]
    c = Job("c", 35, walltime=100, nodes=2, bb=10 * GB)
    reply = service.handle({"policy": "conservative-bb", "session": "rm", "delta": {
        "time": 40, "submitted": [job_to_dict(c)], "started": [{"id": "a", "allocation": [3]}],
        "ended": ["r"]}})
    a = start_state().queue[0]
    whole = ClusterState(40.0, PLATFORM, (RunningJob(a, 40.0, (3,)),),
                         (start_state().queue[1], c), memory)
    assert decision(reply).start == decide(whole, "conservative-bb").start
    assert decision(reply).reservations == decide(whole, "conservative-bb").reservations
    kept = service.sessions["rm"].state
    assert (kept.time, kept.running, kept.queue) == (40.0, whole.running, whole.queue)
    assert list(service.sessions["rm"].jobs) == ["b", "c"]


def test_an_empty_delta_asks_again_at_the_same_time(service):
    first = service.sessions["rm"].state
    reply = service.handle({"policy": "fcfs-bb", "session": "rm", "delta": {}})
    assert [s.job_id for s in decision(reply).start] == ["a"]
    assert service.sessions["rm"].state == first


@pytest.mark.parametrize(("delta", "path", "field"), [
    ([], "$.delta", None),
    ({"submited": []}, "$.delta", "submited"),
    ({"time": 9.999}, "$.delta", "time"),  # just before the session's 10 s
    ({"time": "later"}, "$.delta", "time"),
    ({"submitted": {"id": "c"}}, "$.delta", "submitted"),
    ({"submitted": [{"id": "a", "walltime": 5}]}, "$.delta.submitted[0]", "id"),  # waiting
    ({"submitted": [{"id": "r", "walltime": 5}]}, "$.delta.submitted[0]", "id"),  # running
    ({"submitted": [{"id": "c", "walltime": 5}, {"id": "c", "walltime": 5}]},
     "$.delta.submitted[1]", "id"),
    ({"submitted": [{"id": "c", "walltime": -5}]}, "$.delta.submitted[0]", "walltime"),
    ({"submitted": [{"id": "c", "walltime": 5, "submit": 10.5}]}, "$.delta.submitted[0]",
     "submit"),  # from the future
    ({"started": [{"id": "zz"}]}, "$.delta.started[0]", "id"),
    ({"started": [{"id": "r"}]}, "$.delta.started[0]", "id"),  # already running
    ({"started": [{"id": "a", "jobb": 1}]}, "$.delta.started[0]", "jobb"),
    ({"started": [{"id": True}]}, "$.delta.started[0]", "id"),
    ({"started": [{"id": "a"}, {"id": "b"}]}, "$.delta.started[1]", "job"),  # 2+1+4 > 4 nodes
    ({"started": [{"id": "a", "start": 10.5}]}, "$.delta.started[0]", "start"),  # future
    ({"started": [{"id": "b", "start": 4.0}], "ended": ["r"]}, "$.delta.started[0]",
     "submit"),  # b came at 5 s
    ({"started": [{"id": "a", "allocation": [0, 1]}]}, "$.delta.started[0]", "allocation"),
    ({"started": [{"id": "a", "allocation": [4]}]}, "$.delta.started[0]", "allocation"),
    ({"ended": ["zz"]}, "$.delta.ended[0]", "id"),
    ({"ended": ["r", "r"]}, "$.delta.ended[1]", "id"),
    ({"ended": [None]}, "$.delta.ended[0]", "id"),
])
def test_a_delta_that_does_not_apply_is_refused_and_changes_nothing(service, delta, path,
                                                                    field):
    before = service.sessions["rm"].state
    jobs = dict(service.sessions["rm"].jobs)
    reply = service.handle({"id": 9, "policy": "fcfs-bb", "session": "rm", "delta": delta})
    assert (reply["ok"], reply["id"]) == (False, 9)
    assert (reply["error"]["path"], reply["error"]["field"]) == (path, field)
    assert service.sessions["rm"].state is before and service.sessions["rm"].jobs == jobs
    ok = service.handle({"policy": "fcfs-bb", "session": "rm", "delta": {"time": 10}})
    assert [s.job_id for s in decision(ok).start] == ["a"]  # time at the session's: accepted


@pytest.mark.parametrize(("delta", "running", "queue"), [
    ({"time": 10, "submitted": [{"id": "c", "walltime": 5, "submit": 10}]}, ["r"],
     ["a", "b", "c"]),  # submitted at now: accepted
    ({"started": [{"id": "a", "start": 10}]}, ["r", "a"], ["b"]),  # started at now
    ({"started": [{"id": "b", "start": 5.0}], "ended": ["r"]}, ["b"], ["a"]),  # at its submit
    ({"ended": ["a"]}, ["r"], ["b"]),  # withdrawn while waiting
    ({"submitted": [{"id": 7, "walltime": 5}], "started": [{"id": 7}], "ended": [7]}, ["r"],
     ["a", "b"]),  # came, started and ended within one delta
])
def test_deltas_at_the_limits_apply(service, delta, running, queue):
    assert service.handle({"policy": "fcfs-bb", "session": "rm", "delta": delta})["ok"]
    s = service.sessions["rm"].state
    assert ([r.job.id for r in s.running], [j.id for j in s.queue]) == (running, queue)


def test_a_delta_needs_a_state_first_and_not_both():
    s = DecisionService(warm=())
    r = s.handle({"policy": "fcfs-bb", "delta": {}})
    assert (r["error"]["path"], r["error"]["field"]) == ("$", "delta")
    r = s.handle({"policy": "fcfs-bb", "delta": {}, "state": body(start_state())})
    assert (r["error"]["path"], r["error"]["field"]) == ("$", "state")


# -- property: a stream of deltas keeps the session's state where the whole states are ---------

EVENTS = st.lists(st.tuples(st.sampled_from(("submit", "start", "end", "withdraw", "tick")),
                            st.integers(0, 5), st.integers(1, 4), st.integers(0, 60)),
                  max_size=25)


@settings(max_examples=40, deadline=None)
@given(EVENTS)
def test_deltas_keep_the_state_the_whole_states_describe(events):
    """Random events on a 4-node machine, sent as deltas to one session and as whole states
    to another: both sessions hold the same state and answer the same decisions. (sjf-bb:
    conservative-bb's remembered reservations assume its starts were applied, which random
    starts break.)"""
    s = DecisionService(warm=())
    state = ClusterState(0.0, PLATFORM)
    s.handle({"policy": "sjf-bb", "session": "whole", "state": body(state)})
    s.handle({"policy": "sjf-bb", "session": "delta", "state": body(state)})
    fresh = 0
    for kind, pick, nodes, dt in events:
        now = state.time + dt
        queue, running = list(state.queue), list(state.running)
        delta: dict = {"time": now}
        if kind == "submit":
            job = Job(f"j{fresh}", now, walltime=100.0 + pick, nodes=nodes, bb=pick * 10 * GB)
            fresh += 1
            queue.append(job)
            delta["submitted"] = [job_to_dict(job)]
        elif kind == "start" and queue:
            job = queue[pick % len(queue)]
            used = sum(r.job.nodes for r in running), sum(r.job.bb for r in running)
            if used[0] + job.nodes > PLATFORM.nodes or used[1] + job.bb > PLATFORM.bb:
                continue
            queue.remove(job)
            running.append(RunningJob(job, now))
            delta["started"] = [{"id": job.id}]
        elif kind in ("end", "withdraw") and (running if kind == "end" else queue):
            pool = [r.job for r in running] if kind == "end" else queue
            job = pool[pick % len(pool)]
            running = [r for r in running if r.job.id != job.id]
            queue = [j for j in queue if j.id != job.id]
            delta["ended"] = [job.id]
        state = ClusterState(now, PLATFORM, tuple(running), tuple(queue))
        whole = s.handle({"policy": "sjf-bb", "session": "whole", "state": body(state)})
        by_delta = s.handle({"policy": "sjf-bb", "session": "delta", "delta": delta})
        for reply in (whole, by_delta):
            del reply["decision"]["stats"]["wall_time"]
        assert by_delta["decision"] == whole["decision"]
        kept = s.sessions["delta"].state
        assert (kept.time, kept.running, kept.queue) == (state.time, state.running, state.queue)
        assert list(s.sessions["delta"].jobs) == [j.id for j in state.queue]


def test_a_refused_delta_changes_nothing_an_applied_one_updates_the_queue():
    s0 = start_state()
    queue = {j.id: (job_to_dict(j), j) for j in s0.queue}
    copy = dict(queue)
    with pytest.raises(InputError):
        apply_delta(s0, queue, {"time": 20, "started": [{"id": "a"}], "ended": ["zz"]})
    assert queue == copy and list(queue) == ["a", "b"] and s0 == start_state()
    s1 = apply_delta(s0, queue, {"time": 20, "started": [{"id": "a"}], "ended": ["b"],
                                 "submitted": [{"id": "c", "walltime": 9}]})
    assert ([r.job.id for r in s1.running], list(queue)) == (["r", "a"], ["c"])
    assert s0 == start_state() and s1.queue == (queue["c"][1],)


@pytest.mark.parametrize("gone", [(), (0,), (0, 9), (3, 4, 5), tuple(range(0, 30, 3))])
def test_jobs_leave_the_queue_wherever_they_are(gone):
    """A few waiting jobs cut out, many filtered: the same queue, in arrival order."""
    jobs = tuple(Job(f"j{k}", 0, walltime=60) for k in range(30))
    s0 = ClusterState(100.0, PLATFORM, queue=jobs)
    queue = {j.id: (None, j) for j in jobs}
    s1 = apply_delta(s0, queue, {"ended": [f"j{k}" for k in gone]})
    assert s1.queue == tuple(j for k, j in enumerate(jobs) if k not in gone)
    assert list(queue) == [j.id for j in s1.queue]


def test_the_client_sends_changes_over_a_socket(tmp_path):
    """ServiceClient.decide_changes with bbopt's own objects: the decision is bbopt.decide's
    on the state the changes make."""
    import threading

    from bbopt.interop.client import ServiceClient, ServiceError
    from bbopt.interop.transport import open_servers, serve_sockets

    service = DecisionService(warm=())
    servers = open_servers(service, unix=str(tmp_path / "s.sock"))
    thread = threading.Thread(target=serve_sockets, args=(service, servers), daemon=True)
    thread.start()
    try:
        with ServiceClient.unix(str(tmp_path / "s.sock"), timeout=30) as client:
            with pytest.raises(ServiceError) as err:
                client.decide_changes("sjf-bb", time=20)
            assert (err.value.path, err.value.field) == ("$", "delta")
            s0 = start_state()
            assert [s.job_id for s in client.decide(s0, "sjf-bb").decision.start] == ["a"]
            a, b = s0.queue
            c = Job("c", 15, walltime=50, nodes=1)
            reply = client.decide_changes("sjf-bb", time=20, submitted=[c],
                                          started=[RunningJob(a, 12.0, (2,))], ended=["r"])
            whole = ClusterState(20.0, PLATFORM, (RunningJob(a, 12.0, (2,)),), (b, c))
            assert reply.decision.start == decide(whole, "sjf-bb").start
            assert [s.job_id for s in reply.decision.start] == ["c"]
            with pytest.raises(ServiceError) as err:
                client.decide_changes("sjf-bb", started=[{"id": "a"}])
            assert (err.value.path, err.value.field) == ("$.delta.started[0]", "id")
    finally:
        service.stopping.set()
        thread.join(10)


def test_a_kept_plan_the_resource_manager_did_not_follow_keeps_what_still_holds():
    """conservative-bb reserves the jobs behind those it advises to start, but the resource
    manager starts none of them until it starts j0 an instant later (at 1 s, on one of the 4
    nodes): the session's policy checks its kept reservations against that state instead of
    failing. j1, j3 and j5 were held at 100 s before j8 (also at 100 s), and j0 now holds a
    node until 101 s, so j8's slot no longer holds: it is planned again with the jobs that
    have no reservation, and j1, j3 and j5 move up to the three free nodes -- as the
    in-process decision fed the same memory."""
    s = DecisionService(warm=())
    platform = {"nodes": 4, "bb": 1e11}
    assert s.handle({"policy": "conservative-bb", "state": {"time": 0, "platform": platform}})
    for k in range(10):
        r = s.handle({"policy": "conservative-bb", "delta": {
            "submitted": [{"id": f"j{k}", "walltime": 100, "nodes": 1}]}})
        assert r["ok"], r
    memory = s.sessions["default"].memory["conservative-bb"]
    assert memory == {"reservations": {"j1": 100.0, "j3": 100.0, "j5": 100.0, "j8": 100.0,
                                       "j7": 200.0, "j9": 200.0}}
    r = s.handle({"policy": "conservative-bb", "delta": {"time": 1, "started": [{"id": "j0"}]}})
    assert r["ok"], r
    state = replace(s.sessions["default"].state, memory=memory)
    assert decision(r).start == decide(state, "conservative-bb").start
    assert [x.job_id for x in decision(r).start] == ["j1", "j3", "j5"]


def refusal(delta, state=None, **kw):
    """``(source, line, field, reason)`` of the error refusing ``delta`` on ``state``."""
    state = start_state() if state is None else state
    with pytest.raises(InputError) as info:
        apply_delta(state, {j.id: ({}, j) for j in state.queue}, delta, **kw)
    e = info.value
    return e.source, e.line, e.field, e.reason


@pytest.mark.parametrize(("delta", "line", "field", "reason"), [
    ({"time": 9.5}, "$.delta", "time",
     "9.5 is before the session's time 10: the clock cannot go back"),
    ({"submitted": [{"id": "a", "walltime": 5}]}, "$.delta.submitted[0]", "id",
     "job 'a' is already waiting"),
    ({"submitted": [{"id": "r", "walltime": 5}]}, "$.delta.submitted[0]", "id",
     "job 'r' is already running"),
    ({"submitted": [{"id": "c", "walltime": -5}]}, "$.delta.submitted[0]", "walltime",
     "job c: walltime must be in (0, 1e+10] s, got -5.0"),
    ({"started": [{"id": "zz"}]}, "$.delta.started[0]", "id",
     "job 'zz' is not waiting (unknown)"),
    ({"started": [{"id": "r"}]}, "$.delta.started[0]", "id", "job 'r' is not waiting (running)"),
    ({"started": [{"id": True}]}, "$.delta.started[0]", "id",
     "must be a job id (a string or an integer), got True"),
    ({"started": 5}, "$.delta", "started", "must be a list, got int"),
    ({"started": [{"id": "a", "start": "now"}]}, "$.delta.started[0]", "start",
     "must be a finite number, got 'now'"),
    ({"started": [{"id": "a", "allocation": "0"}]}, "$.delta.started[0]", "allocation",
     "must be a list of integers, got '0'"),
    ({"started": [{"id": "a"}, {"id": "b"}]}, "$.delta.started[1]", "job",
     "running jobs use 7 nodes up to here; the platform has 4"),
    ({"ended": {"r": 1}}, "$.delta", "ended", "must be a list, got dict"),
    ({"ended": ["zz"]}, "$.delta.ended[0]", "id", "job 'zz' is neither running nor waiting"),
    ({"ended": [None]}, "$.delta.ended[0]", "id",
     "must be a job id (a string or an integer), got None"),
    ({"ended": [1.5]}, "$.delta.ended[0]", "id",
     "must be a job id (a string or an integer), got 1.5"),
])
def test_each_refusal_names_the_request_its_place_and_why(delta, line, field, reason):
    """Every refusal names the request it came from (``source``, "request" by default), the
    delta's JSON path and field, and its reason in full (the job reader's and the state
    check's too)."""
    source, at, name, why = refusal(delta, source="rm-7")
    assert (source, at, name) == ("rm-7", line, field)
    assert why == reason
    assert refusal(delta)[:3] == ("request", line, field)


def test_a_state_already_impossible_is_refused_at_the_delta_itself():
    """A running job the delta left alone that breaks the state (here the state handed in
    already uses 6 of 4 nodes) is located at the whole delta, ``$.delta``."""
    state = replace(start_state(), running=(
        RunningJob(Job("r", 0, walltime=600, nodes=2), start=0.0),
        RunningJob(Job("s", 0, walltime=600, nodes=4), start=0.0)))
    source, line, field, reason = refusal({"time": 11}, state, source="rm")
    assert (source, line, field) == ("rm", "$.delta", "job")
    assert reason.startswith("running jobs use 6 nodes up to here")

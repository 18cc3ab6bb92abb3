"""bbopt's simulator on Batsim's side, against a Batsim scheduler scripted in-process (in the
link's place: no socket): every message Batsim sends, each answer's events applied or refused
with its whole reason, the calls asked for, the end and the abort after an error."""

from __future__ import annotations

import json
import math
from types import SimpleNamespace

import pytest

from bbopt.core import Job, Platform, Start, Status
from bbopt.interop.batsim import server
from bbopt.interop.batsim.protocol import ProtocolError, encode
from bbopt.interop.batsim.server import RemoteScheduler, serve_batsim


class _Link:
    """A scripted Batsim scheduler in a :class:`~bbopt.interop.batsim.protocol.Link`'s place:
    each message sent (checked as strict JSON) is answered with ``answers(message)``."""

    def __init__(self, answers=None):
        self.answers = answers or (lambda msg: {"now": msg["now"], "events": []})
        self.got: list = []
        self.reply = None
        self.closed = False

    def send(self, message):
        msg = json.loads(encode(message))
        self.got.append(msg)
        self.reply = self.answers(msg)

    def receive(self, peer):
        assert peer == "the scheduler"
        reply, self.reply = self.reply, None
        if isinstance(reply, Exception):
            raise reply
        return reply if isinstance(reply, bytes) else json.dumps(reply).encode()

    def close(self):
        self.closed = True


def _ex(job, alloc, t):
    return {"timestamp": t, "type": "EXECUTE_JOB", "data": {"job_id": job, "alloc": alloc}}


def _greedy(msg):
    """Start each job submitted at once: 2 nodes on 0-1, 4 on 2-5."""
    return {"now": msg["now"], "events": [
        _ex(e["data"]["job_id"], "0-1" if e["data"]["job"]["res"] == 2 else "2-5", msg["now"])
        for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]}


def _serve(monkeypatch, jobs, platform, answers, **kw):
    link = _Link(answers)
    opened = []

    def open_link(endpoint, kind, timeout):
        opened.append((endpoint, kind, timeout))
        return link

    monkeypatch.setattr(server, "Link", open_link)
    return link, opened, serve_batsim(jobs, platform, "ipc://x", **kw)


JOBS = [Job("a", 0, walltime=100, runtime=50, nodes=2, bb=1e9),
        Job("b", 10, walltime=100, runtime=50, nodes=4),
        Job("c", 5, walltime=10, runtime=5, nodes=9)]  # (wider than the 8 nodes: rejected)


def _node(i):
    return {"id": i, "name": f"node{i}", "state": "idle", "properties": {}, "zone_properties": {}}


CONFIG = {"redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
          "redis-prefix": "default", "profiles-forwarded-on-submission": False,
          "dynamic-jobs-enabled": False, "dynamic-jobs-acknowledged": False,
          "profile-reuse-enabled": False, "sched-config": "", "forward-unknown-events": False}


def test_a_replay_sends_batsims_messages_and_applies_the_starts(monkeypatch):
    seen = []
    link, opened, res = _serve(monkeypatch, JOBS, Platform(nodes=8, bb=4e9), _greedy,
                               workload_name="wl", workload_path="/w.json",
                               on_job_end=lambda r, k: seen.append((k, str(r.state[k]))))
    assert opened == [("ipc://x", "req", 600.0)] and link.closed
    assert (res.workload_name, list(res.start[:2]), list(res.end[:2])) == ("wl", [0, 10],
                                                                           [50, 60])
    assert seen == [(2, "rejected"), (0, "finished"), (1, "finished")]
    begin = {"nb_resources": 9, "nb_compute_resources": 8, "nb_storage_resources": 1,
             "allow_compute_sharing": False, "allow_storage_sharing": True, "config": CONFIG,
             "compute_resources": [_node(i) for i in range(8)],
             "storage_resources": [{"id": 8, "name": "bb", "state": "idle", "properties": {
                 "role": "storage", "bb_capacity": "4000000000.0"}, "zone_properties": {}}],
             "workloads": {"w0": "/w.json"},
             "profiles": {"w0": {"a": {"type": "delay", "delay": 50, "bb": 5e8},
                                 "b": {"type": "delay", "delay": 50},
                                 "c": {"type": "delay", "delay": 5}}}}
    assert link.got == [
        {"now": 0, "events": [{"timestamp": 0, "type": "SIMULATION_BEGINS", "data": begin}]},
        {"now": 0, "events": [{"timestamp": 0, "type": "JOB_SUBMITTED", "data": {
            "job_id": "w0!a", "job": {"id": "w0!a", "subtime": 0, "res": 2, "walltime": 100,
                                      "profile": "a"}}}]},
        {"now": 10, "events": [
            {"timestamp": 10, "type": "JOB_SUBMITTED", "data": {
                "job_id": "w0!b", "job": {"id": "w0!b", "subtime": 10, "res": 4,
                                          "walltime": 100, "profile": "b"}}},
            {"timestamp": 10, "type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}}]},
        {"now": 50, "events": [{"timestamp": 50, "type": "JOB_COMPLETED", "data": {
            "job_id": "w0!a", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
            "alloc": "0-1"}}]},
        {"now": 60, "events": [
            {"timestamp": 60, "type": "JOB_COMPLETED", "data": {
                "job_id": "w0!b", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
                "alloc": "2-5"}},
            {"timestamp": 60, "type": "SIMULATION_ENDS", "data": {}}]}]


def test_a_platform_without_bb_has_no_storage_resource():
    link = _Link()
    r = RemoteScheduler(link, JOBS[1:2], Platform(nodes=2, bb=0.0))
    r.begin()
    data = link.got[0]["events"][0]["data"]
    assert (data["nb_resources"], data["nb_compute_resources"], data["nb_storage_resources"],
            data["storage_resources"], data["workloads"]) == (2, 2, 0, [], {"w0": ""})
    assert (r.name, r.io_aware, r.messages, r.now) == ("batsim-scheduler", False, 1, 0.0)


def _remote(jobs=JOBS[:2], answers=None, nodes=8):
    return RemoteScheduler(_Link(answers), jobs, Platform(nodes=nodes, bb=4e9))


def test_each_job_end_is_told_with_batsims_state_and_the_earliest_end_kept():
    r = _remote(jobs=[Job(k, 0, walltime=10, runtime=5, nodes=1) for k in "abcd"])
    result = SimpleNamespace(state=["finished", "killed", "dropped", "rejected"],
                             end=[9.0, 7.0, 8.0, math.nan], allocation=[(0,), (1, 2), None, ()])
    for k in range(4):
        r.job_ended(result, k)
    assert r.rejected == {3} and r.ended_at == 7.0 and r.next_call() == 7.0
    assert r.ended == [
        {"timestamp": 9.0, "type": "JOB_COMPLETED", "data": {
            "job_id": "w0!a", "job_state": "COMPLETED_SUCCESSFULLY", "return_code": 0,
            "alloc": "0"}},
        {"timestamp": 7.0, "type": "JOB_COMPLETED", "data": {
            "job_id": "w0!b", "job_state": "COMPLETED_WALLTIME_REACHED", "return_code": 1,
            "alloc": "1-2"}},
        {"timestamp": 8.0, "type": "JOB_COMPLETED", "data": {
            "job_id": "w0!c", "job_state": "COMPLETED_KILLED", "return_code": 1, "alloc": ""}}]


def test_the_news_in_time_order_completions_first_and_the_calls_due():
    jobs = [Job("x", 4, walltime=10, runtime=5, nodes=1), Job("y", 2, walltime=10, runtime=5,
                                                           nodes=1),
            Job("z", 9, walltime=10, runtime=5, nodes=1), Job("r", 3, walltime=10, runtime=5,
                                                           nodes=99)]
    r = _remote(jobs=jobs)
    r.begin()
    r.rejected.add(3)
    r.calls = [4.0, 4.5, 6.0]
    r.ended, r.ended_at = [{"timestamp": 4, "type": "JOB_COMPLETED", "data": {}}], 4.0
    kinds = [(e["timestamp"], e["type"], e["data"].get("job_id")) for e in r._news(4.5)]
    assert kinds == [(2, "JOB_SUBMITTED", "w0!y"), (4, "JOB_COMPLETED", None),
                     (4, "JOB_SUBMITTED", "w0!x"), (4.0, "REQUESTED_CALL", None),
                     (4.5, "REQUESTED_CALL", None)]
    assert (r.calls, r.ended, r.ended_at, r.next_call()) == ([6.0], [], math.inf, 6.0)
    # the last submission (z, at 9) says that none will follow, at its own time, once
    assert [(e["timestamp"], e["type"]) for e in r._news(9.5)] == [
        (6.0, "REQUESTED_CALL"), (9, "JOB_SUBMITTED"), (9, "NOTIFY")]
    assert r._news(20) == [] and r.next_call() == math.inf


def test_no_jobs_say_none_will_follow_at_the_first_message():
    r = _remote(jobs=[])
    assert r._news(3.0) == [{"timestamp": 3.0, "type": "NOTIFY", "data": {
        "type": "no_more_static_job_to_submit"}}]


def _ev(kind, t=10, **data):
    return {"timestamp": t, "type": kind, "data": data}


def test_the_answers_events_applied():
    r = _remote()
    r.begin()
    waiting = {"a": JOBS[0], "b": JOBS[1]}
    reply = {"events": [_ex("w0!b", "7 2-4", 10), _ev("CALL_ME_LATER", timestamp=10.001),
                        _ev("CALL_ME_LATER", timestamp=12), _ev("SET_JOB_METADATA"),
                        _ev("ANSWER"), _ev("NOTIFY", type="registration_finished"),
                        _ev("NOTIFY", type="continue_registration"), _ex("w0!a", "0-1", 10)]}
    assert r._apply(reply, 10.0, waiting) == [Start("b", (2, 3, 4, 7)), Start("a", (0, 1))]
    assert r.calls == [10.001, 12.0] and r.next_call() == 10.001


@pytest.mark.parametrize("event, message", [
    (_ex("w0!zz", "0-3", 10), ": unknown job 'w0!zz'"),
    (_ex("w0!a", "0-1", 10), ": job 'w0!a' is not waiting"),
    (_ex("w0!b", "5-8", 10), ", field 'alloc': resource 8 is not a compute resource (0-7)"),
    (_ex("w0!b", "0-2", 10), ", field 'alloc': 3 resources for a job of 4"),
    (_ex("w0!b", "0-4", 10), ", field 'alloc': 5 resources for a job of 4"),
    (_ex("w0!b", "", 10), ", field 'alloc': an interval set must be a non-empty string like "
                          "'0-3 7', got ''"),
    ({"timestamp": 10, "type": "EXECUTE_JOB", "data": {"alloc": "0"}},
     ", field 'job_id': missing or of the wrong type (None)"),
    (_ev("CALL_ME_LATER", timestamp=10), ", field 'timestamp': a call at 10 is not after now "
                                         "(10)"),
    (_ev("CALL_ME_LATER", timestamp=9.5), ", field 'timestamp': a call at 9.5 is not after now "
                                          "(10)"),
    (_ev("CALL_ME_LATER", timestamp=math.inf), ", field 'timestamp': not a finite time"),
    (_ev("CALL_ME_LATER", timestamp="11"), ", field 'timestamp': missing or of the wrong type "
                                           "('11')"),
    (_ev("REJECT_JOB", job_id="w0!b"), ": bbopt's simulator runs every job that fits the "
                                       "platform (it rejects the others itself, at submission)"),
    (_ev("KILL_JOB", job_ids=["w0!b"]), ": bbopt's simulator does not do KILL_JOB"),
    (_ev("NOTIFY", type="no_more_job"), ": bbopt's simulator does not do NOTIFY"),
])
def test_each_refused_event_names_its_place_and_reason(event, message):
    r = _remote()
    r.begin()
    reply = {"events": [_ev("ANSWER"), event]}
    with pytest.raises(ProtocolError) as caught:
        r._apply(reply, 10.0, {"b": JOBS[1]})
    assert str(caught.value) == (f"message from the scheduler at t=10, events[1] "
                                 f"({event['type']}){message}")
    assert r.calls == []


def test_the_last_node_is_a_compute_resource():
    r = _remote()
    r.begin()
    assert r._apply({"events": [_ex("w0!b", "4-7", 10)]}, 10.0, {"b": JOBS[1]}) == [
        Start("b", (4, 5, 6, 7))]


def _answered(events, now=10.0):
    """A RemoteScheduler whose scheduler answers its next message with ``events``."""
    r = _remote(answers=lambda msg: {"now": msg["now"], "events": events})
    return r, now


def test_an_answer_in_the_past_is_refused_beyond_the_rounding():
    # at t=1e9 the rounding allowed is 1 s: an event at now - 1 is kept, one at now - 1.5 not
    r = _remote(answers=lambda msg: {"now": msg["now"], "events": [
        _ex("w0!a", "0-1", msg["now"] - 1)]})
    assert r.exchange(1e9, [])["events"][0]["timestamp"] == 1e9 - 1
    assert (r.now, r.messages, r.can_send) == (1e9, 1, True)
    r.exchange(1e9 + 1, [])
    assert (r.now, r.messages) == (1e9 + 1, 2)
    r, _ = _answered([_ex("w0!a", "0-1", 1e9 - 1.5)])
    with pytest.raises(ProtocolError) as caught:
        r.exchange(1e9, [])
    assert str(caught.value) == ("message from the scheduler: a EXECUTE_JOB at 999999998.5, "
                                 "before now (1000000000.0): it would change the past")
    assert r.now == 0.0
    # below 1 s the rounding is 1e-9 s
    r, _ = _answered([_ex("w0!a", "0-1", 0.5 - 0.5e-9)])
    r.exchange(0.5, [])
    r, _ = _answered([_ex("w0!a", "0-1", 0.5 - 2e-9)])
    with pytest.raises(ProtocolError, match="it would change the past"):
        r.exchange(0.5, [])


def test_a_refusal_by_the_scheduler_ends_the_exchange():
    r, _ = _answered([_ev("NOTIFY", type="protocol_error", message="mine")])
    with pytest.raises(ProtocolError) as caught:
        r.exchange(10.0, [])
    assert str(caught.value) == "the scheduler refused the message at t=10: mine"
    assert r.can_send is False
    r.abort()  # (it has exited: nothing more is sent)
    assert len(r.link.got) == 1
    r, _ = _answered([_ev("NOTIFY", 2.5, type="protocol_error")])
    with pytest.raises(ProtocolError) as caught:
        r.exchange(2.5, [])
    assert str(caught.value) == "the scheduler refused the message at t=2.5: "
    r, _ = _answered([_ev("NOTIFY", type="other")])
    assert r.exchange(10.0, [])["events"] == [_ev("NOTIFY", type="other")]


def test_an_answer_that_is_not_the_protocol_names_the_scheduler():
    r = _remote(answers=lambda msg: {"now": msg["now"] - 1, "events": []})
    with pytest.raises(ProtocolError) as caught:
        r.exchange(10.0, [])
    assert str(caught.value) == ("message from the scheduler, field 'now': 9.0 is before 10.0 "
                                 "(time cannot go back)")
    r = _remote(answers=lambda msg: {"now": msg["now"], "events": [_ev("JOB_SUBMITTED")]})
    with pytest.raises(ProtocolError, match=r"^message from the scheduler, events\[0\], field "
                                            "'type': unknown event type 'JOB_SUBMITTED'"):
        r.exchange(10.0, [])


def test_a_decision_is_the_answers_starts():
    r = _remote(answers=_greedy)
    r.begin()
    state = SimpleNamespace(time=0, queue=(JOBS[0],))
    decision = r.decide(state)
    assert decision.start == (Start("a", (0, 1)),) and decision.preempt == ()
    assert (decision.stats.backend, decision.stats.status) == ("batsim", Status.FEASIBLE)
    assert 0 < decision.stats.wall_time < 1
    assert r.link.got[-1]["events"][0]["data"]["job_id"] == "w0!a"


def test_the_end_comes_with_the_last_completions_and_drops_the_calls():
    r = _remote()
    r.begin()
    r._news(10)  # (every job told)
    r.calls = [70.0]
    r.ended = [{"timestamp": 62.0, "type": "JOB_COMPLETED", "data": {}}]
    r.finish(60.0)
    assert r.link.got[-1] == {"now": 62.0, "events": [
        {"timestamp": 62.0, "type": "JOB_COMPLETED", "data": {}},
        {"timestamp": 62.0, "type": "SIMULATION_ENDS", "data": {}}]}
    assert r.calls == []
    r = _remote(answers=lambda msg: {"now": msg["now"], "events": [
        _ex("w0!a", "0-1", 5)] if msg["events"][-1]["type"] == "SIMULATION_ENDS" else []})
    r.begin()
    r._news(10)
    with pytest.raises(ProtocolError) as caught:
        r.finish(5.0)
    assert str(caught.value) == "the scheduler started a job after the last one ended"
    assert r.link.got[-1]["events"] == [{"timestamp": 5.0, "type": "SIMULATION_ENDS",
                                         "data": {}}]


def test_an_abort_says_the_end_at_the_last_time_and_waits_once():
    r = _remote()
    r.now = 7.5
    r.abort()
    assert r.link.got == [{"now": 7.5, "events": [{"timestamp": 7.5, "type": "SIMULATION_ENDS",
                                                   "data": {}}]}]
    assert r.can_send is False and r.link.reply is None  # (its answer was read)
    silent = _remote(answers=lambda msg: ProtocolError("no message"))
    silent.abort()  # (a scheduler gone silent: given up on)
    assert len(silent.link.got) == 1 and silent.can_send is False


def test_a_start_the_engine_refuses_ends_the_run_with_its_reason(monkeypatch):
    def answers(msg):  # b on a's nodes
        return {"now": msg["now"], "events": [
            _ex(e["data"]["job_id"], "0-1" if e["data"]["job"]["res"] == 2 else "0-3", msg["now"])
            for e in msg["events"] if e["type"] == "JOB_SUBMITTED"]}

    link = _Link(answers)
    monkeypatch.setattr(server, "Link", lambda endpoint, kind, timeout: link)
    with pytest.raises(ProtocolError) as caught:
        serve_batsim(JOBS[:2], Platform(nodes=8, bb=4e9), "ipc://x", timeout=3.0)
    assert str(caught.value).startswith("the scheduler's decision was refused: invalid decision "
                                        "(t=10s, job b): ")
    assert link.got[-1] == {"now": 10, "events": [
        {"timestamp": 10, "type": "SIMULATION_ENDS", "data": {}}]}
    assert link.closed


def test_a_protocol_error_is_raised_as_is_and_the_link_closed(monkeypatch):
    link = _Link(lambda msg: b"]]")
    monkeypatch.setattr(server, "Link", lambda endpoint, kind, timeout: link)
    with pytest.raises(ProtocolError) as caught:
        serve_batsim(JOBS[:2], Platform(nodes=8), "ipc://x")
    assert str(caught.value).startswith("message from the scheduler is not JSON: ")
    assert link.closed and link.got[-1]["events"][0]["type"] == "SIMULATION_ENDS"


def test_a_run_where_no_job_ran_ends_at_its_last_submission(monkeypatch):
    # c (submitted at 5) is rejected by the engine, unseen: the scheduler is told at 5 that
    # every job was submitted, and the simulation ends there
    link, _, res = _serve(monkeypatch, JOBS[2:], Platform(nodes=8), None)
    assert [str(s) for s in res.state] == ["rejected"] and res.workload_name == "workload"
    assert link.got[0]["events"][0]["data"]["workloads"] == {"w0": ""}
    assert link.got[1:] == [{"now": 5, "events": [
        {"timestamp": 5, "type": "NOTIFY", "data": {"type": "no_more_static_job_to_submit"}},
        {"timestamp": 5, "type": "SIMULATION_ENDS", "data": {}}]}]


def test_a_rejected_last_job_after_every_end_is_told_as_the_end(monkeypatch):
    """a runs from 0 to 50; c (too wide, rejected unseen) is submitted at 100: the completion
    at 50 is a message of its own (a submission is still to come), then at 100 the NOTIFY that
    every job was submitted with SIMULATION_ENDS."""
    jobs = [JOBS[0], Job("c", 100, walltime=10, runtime=5, nodes=9)]
    link, _, res = _serve(monkeypatch, jobs, Platform(nodes=8, bb=2e9), _greedy)
    assert [str(s) for s in res.state] == ["finished", "rejected"]
    assert [(m["now"], [e["type"] for e in m["events"]]) for m in link.got[1:]] == [
        (0, ["JOB_SUBMITTED"]), (50, ["JOB_COMPLETED"]),
        (100, ["NOTIFY", "SIMULATION_ENDS"])]
    assert link.got[-1]["events"][0] == {"timestamp": 100, "type": "NOTIFY",
                                         "data": {"type": "no_more_static_job_to_submit"}}


def test_the_end_is_the_last_end_of_a_job_that_ran(monkeypatch):
    # the rejected job first: its end (NaN) is not the run's
    link, _, res = _serve(monkeypatch, [JOBS[2], JOBS[1]], Platform(nodes=8), _greedy)
    assert list(res.end[1:]) == [60]
    assert link.got[-1]["now"] == 60 and link.got[-1]["events"][-1]["type"] == "SIMULATION_ENDS"


def test_the_answer_to_the_beginning_may_ask_a_call_and_start_nothing():
    r = _remote(answers=lambda msg: {"now": 0, "events": [_ev("CALL_ME_LATER", 0,
                                                              timestamp=0.5)]})
    r.begin()
    assert r.calls == [0.5]
    r = _remote(answers=lambda msg: {"now": 0, "events": [_ex("w0!a", "0-1", 0)]})
    with pytest.raises(ProtocolError) as caught:
        r.begin()
    assert str(caught.value) == ("message from the scheduler at t=0, events[0] (EXECUTE_JOB): "
                                 "job 'w0!a' is not waiting")


def test_a_bb_pool_of_one_byte_is_a_storage_resource():
    link = _Link()
    RemoteScheduler(link, JOBS[1:2], Platform(nodes=2, bb=1.0)).begin()
    data = link.got[0]["events"][0]["data"]
    assert (data["nb_resources"], data["nb_storage_resources"]) == (3, 1)
    assert data["storage_resources"][0]["properties"] == {"role": "storage", "bb_capacity": "1.0"}


def test_a_silent_scheduler_leaves_nothing_to_say():
    r = _remote(answers=lambda msg: ProtocolError("no message from the scheduler"))
    with pytest.raises(ProtocolError, match="^no message from the scheduler$"):
        r.exchange(3.0, [])
    assert (r.can_send, r.messages, r.now) == (False, 0, 0.0)
    r.abort()
    assert len(r.link.got) == 1


def test_an_error_not_of_a_decision_is_raised_as_itself(monkeypatch):
    from bbopt.errors import InputError

    # (an empty workload: the Batsim document of SIMULATION_BEGINS cannot be written)
    link = _Link()
    monkeypatch.setattr(server, "Link", lambda endpoint, kind, timeout: link)
    with pytest.raises(InputError) as caught:
        serve_batsim([], Platform(nodes=2), "ipc://x")
    assert str(caught.value) == "empty workload: no jobs to write"
    assert link.closed

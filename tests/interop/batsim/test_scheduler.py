"""bbopt's policy as Batsim's scheduler, message by message without sockets: starts, waits,
releases, the scheduling calls asked for, the end, and each refusal's whole message."""

from __future__ import annotations

import pytest

from bbopt.interop.batsim.protocol import ProtocolError
from bbopt.interop.batsim.scheduler import PolicyScheduler


def _begin(n=4, storage=None, profiles=None):
    data = {"compute_resources": [{"id": i} for i in reversed(range(n))],
            "storage_resources": storage if storage is not None else [],
            "profiles": profiles if profiles is not None else {"w0": {"p": {"type": "delay",
                                                                             "delay": 10}}}}
    return {"timestamp": 0, "type": "SIMULATION_BEGINS", "data": data}


def _job(k, res=2, t=0, walltime=60):
    return {"timestamp": t, "type": "JOB_SUBMITTED", "data": {
        "job_id": f"w0!{k}", "job": {"id": f"w0!{k}", "subtime": t, "res": res,
                                      "walltime": walltime, "profile": "p"}}}


def _ev(kind, t, **data):
    return {"timestamp": t, "type": kind, "data": data}


def test_starts_waits_releases_and_the_end():
    s = PolicyScheduler("fcfs", tick=10.0)
    assert s.answer({"now": 0, "events": [_begin()]}) == {"now": 0, "events": []}
    assert (s.platform.nodes, s.platform.bb, s.platform.name, s.storage) == (4, 0.0, "batsim",
                                                                             None)
    reply = s.answer({"now": 3, "events": [_job(1, t=3), _job(2, t=3), _job(3, t=3)]})
    assert reply == {"now": 3, "events": [
        {"timestamp": 3, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0-1"}},
        {"timestamp": 3, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2", "alloc": "2-3"}},
        {"timestamp": 3, "type": "CALL_ME_LATER", "data": {"timestamp": 10.0}}]}
    assert list(s.queue) == ["w0!3"] and s.decisions == 1
    # a scheduling call at 10 with nothing freed: the job still waits, the next call at 20
    assert s.answer({"now": 10, "events": [_ev("REQUESTED_CALL", 10)]})["events"] == [
        {"timestamp": 10, "type": "CALL_ME_LATER", "data": {"timestamp": 20.0}}]
    assert s.answer({"now": 11, "events": [_ev("NOTIFY", 11, type="x")]}) == {
        "now": 11, "events": []}  # nothing changed: no decision
    assert s.decisions == 2
    reply = s.answer({"now": 13, "events": [_ev("JOB_COMPLETED", 13, job_id="w0!2")]})
    assert reply["events"] == [
        {"timestamp": 13, "type": "EXECUTE_JOB", "data": {"job_id": "w0!3", "alloc": "2-3"}}]
    assert sorted(s.live) == ["w0!1", "w0!3"] and s.queue == {}
    # a kill of a job already gone is ignored; the others are released
    s.answer({"now": 14, "events": [_ev("JOB_KILLED", 14, job_ids=["w0!2", "w0!1", "w0!3"])]})
    assert s.live == {} and s.running == [] and s.running_keys == []
    assert s.answer({"now": 20, "events": [_ev("SIMULATION_ENDS", 20)]}) == {
        "now": 20, "events": []}
    assert s.ended


@pytest.mark.parametrize("begin, message", [
    (_begin(n=0), "events[0] (SIMULATION_BEGINS), field 'compute_resources': ids must be "
                  "0..n-1, got 0 resources"),
    ({**_begin(), "data": {**_begin()["data"], "compute_resources": [{"id": 0}, {"id": 2}]}},
     "events[0] (SIMULATION_BEGINS), field 'compute_resources': ids must be 0..n-1, got 2 "
     "resources"),
    (_begin(storage=[{"id": 4, "properties": {"size": "big"}}]),
     "events[0] (SIMULATION_BEGINS): storage resource 4 has size 'big', not a number of bytes"),
    (_begin(profiles=[1]), "events[0] (SIMULATION_BEGINS), field 'profiles': must be an object"),
])
def test_a_bad_beginning_is_refused(begin, message):
    with pytest.raises(ProtocolError) as caught:
        PolicyScheduler("fcfs").answer({"now": 0, "events": [begin]})
    assert str(caught.value) == message


def test_the_bb_pool_sums_the_sized_storage_and_maps_to_the_first():
    s = PolicyScheduler("fcfs")
    storage = [{"id": 7}, {"id": 5, "properties": {"size": 1e9}},
               {"id": 6, "properties": {"bb_capacity": "2e9", "size": 1}}]
    s.answer({"now": 0, "events": [_begin(storage=storage)]})
    assert (s.platform.bb, s.storage) == (3e9, 5)


def test_a_given_platform_larger_than_batsims_is_refused():
    from bbopt.core import Platform

    with pytest.raises(ProtocolError) as caught:
        PolicyScheduler("fcfs", platform=Platform(nodes=5, bb=0.0)).answer(
            {"now": 0, "events": [_begin(n=4)]})
    assert str(caught.value) == ("events[0] (SIMULATION_BEGINS): the platform has 5 nodes, "
                                 "Batsim's 4 compute resources")
    s = PolicyScheduler("fcfs", platform=Platform(nodes=4, bb=5.0, name="given"))
    s.answer({"now": 0, "events": [_begin(n=4)]})
    assert s.platform.name == "given"


@pytest.mark.parametrize("events, message", [
    ([_begin(), _begin()], "events[1] (SIMULATION_BEGINS): a second SIMULATION_BEGINS"),
    ([_begin(), _ev("QUERY", 0)], "events[1] (QUERY): bbopt's scheduler answers no QUERY"),
    ([_begin(), {**_job(1), "data": {**_job(1)["data"], "job": {
        **_job(1)["data"]["job"], "profile": "q"}}}],
     "events[1] (JOB_SUBMITTED): job 'w0!1' has profile 'q', which SIMULATION_BEGINS did not "
     "give (nor the event)"),
    ([_begin(), _job(1, res=5), _ev("SIMULATION_ENDS", 0)], "SIMULATION_ENDS with 0 jobs "
                                                            "waiting"),
    ([_begin(n=1), _job(1, res=1), _job(2, res=1), _ev("SIMULATION_ENDS", 0)],
     "SIMULATION_ENDS with 2 jobs waiting"),
])
def test_a_message_that_breaks_the_protocol_is_refused(events, message):
    with pytest.raises(ProtocolError) as caught:
        PolicyScheduler("fcfs").answer({"now": 0, "events": events})
    assert str(caught.value) == message


def _answer(events, policy="fcfs", now=0, **kw):
    s = PolicyScheduler(policy, **kw)
    return s, s.answer({"now": now, "events": events})


def test_a_job_that_never_fits_is_rejected_and_others_wait_on_kills():
    s, reply = _answer([_begin(), _job(1, res=5), _job(2, res=4), _job(3, res=4)])
    assert reply["events"] == [
        {"timestamp": 0, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}},
        {"timestamp": 0, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2", "alloc": "0-3"}}]
    # states and answers change nothing: no decision
    assert s.answer({"now": 1, "events": [_ev("RESOURCE_STATE_CHANGED", 1), _ev("ANSWER", 1)]}
                    )["events"] == []
    assert s.decisions == 1
    assert s.answer({"now": 2, "events": [_ev("JOB_KILLED", 2, job_ids=["w0!2"])]})["events"] == [
        {"timestamp": 2, "type": "EXECUTE_JOB", "data": {"job_id": "w0!3", "alloc": "0-3"}}]


def test_jobs_ending_together_are_released_by_their_own_entry():
    s, _ = _answer([_begin()] + [_job(k, res=1) for k in range(1, 5)])
    for k in (2, 4, 1, 3):
        s.answer({"now": 5, "events": [_ev("JOB_COMPLETED", 5, job_id=f"w0!{k}")]})
        assert f"w0!{k}" not in {rj.job.id for rj in s.running}
    assert s.running == [] and s.ledger.used_nodes == 0


def test_profiles_by_workload_the_event_own_and_the_job_id_kept():
    begin = _begin(profiles={"": {"p": {"type": "delay", "delay": 5}},
                             "w1": {"p": {"type": "delay", "delay": 7}}})
    plain = {"timestamp": 0, "type": "JOB_SUBMITTED", "data": {
        "job_id": "7", "job": {"id": "other", "subtime": 0, "res": 1, "walltime": 60,
                               "profile": "p"}}}
    nested = {"timestamp": 0, "type": "JOB_SUBMITTED", "data": {
        "job_id": "w1!x!2", "job": {"subtime": 0, "res": 1, "walltime": 60, "profile": "p"}}}
    s, reply = _answer([begin, plain, nested])
    assert [e["data"]["job_id"] for e in reply["events"]] == ["7", "w1!x!2"]
    unknown = {"timestamp": 0, "type": "JOB_SUBMITTED", "data": {
        "job_id": "w9!1", "job": {"subtime": 0, "res": 1, "walltime": 60, "profile": "p"}}}
    with pytest.raises(ProtocolError) as caught:
        _answer([begin, unknown])
    assert str(caught.value) == ("events[1] (JOB_SUBMITTED): job 'w9!1' has profile 'p', "
                                 "which SIMULATION_BEGINS did not give (nor the event)")


def test_the_storage_mapping_only_for_a_job_with_bb_on_a_storage_resource():
    from bbopt.core import Platform

    def with_bb(k, bb):
        ev = _job(k, res=1)
        return {**ev, "data": {**ev["data"], "profile": {"type": "delay", "delay": 10, "bb": bb}}}

    storage = [{"id": 4, "properties": {"bb_capacity": "100e9"}}]
    _, reply = _answer([_begin(storage=storage), with_bb(1, 1e9), with_bb(2, 1), _job(3, res=1)])
    assert [e["data"] for e in reply["events"]] == [
        {"job_id": "w0!1", "alloc": "0", "storage_mapping": {"bb": 4}},
        {"job_id": "w0!2", "alloc": "1", "storage_mapping": {"bb": 4}},
        {"job_id": "w0!3", "alloc": "2"}]
    _, reply = _answer([_begin(), with_bb(1, 1e9)], platform=Platform(nodes=4, bb=10e9))
    assert [e["data"] for e in reply["events"]] == [{"job_id": "w0!1", "alloc": "0"}]


@pytest.mark.parametrize("events, message", [
    ([_job(1)], "events[0] (JOB_SUBMITTED): the first event must be SIMULATION_BEGINS"),
    ([_begin(), _ev("JOB_COMPLETED", 0, job_id="w0!9")],
     "events[1] (JOB_COMPLETED): job 'w0!9' is not running"),
    ([_begin(), _job(1), _job(1)], "events[2] (JOB_SUBMITTED): job 'w0!1' submitted twice"),
    ([_begin(), _job(1, walltime=-5)], "events[1] (JOB_SUBMITTED): JOB_SUBMITTED w0!1"),
    ([_begin(), _ev("JOB_COMPLETED", 0)], "events[1] (JOB_COMPLETED), field 'job_id': "),
    ([_begin(), _ev("JOB_KILLED", 0, job_ids="w0!1")], "events[1] (JOB_KILLED), field "
                                                       "'job_ids': "),
    ([_begin(), _ev("JOB_SUBMITTED", 0, job={})], "events[1] (JOB_SUBMITTED), field 'job_id': "),
    ([_begin(), _ev("JOB_SUBMITTED", 0, job_id="w0!1", job=[])],
     "events[1] (JOB_SUBMITTED), field 'job': "),
    ([_ev("SIMULATION_BEGINS", 0)], "events[0] (SIMULATION_BEGINS), field 'compute_resources': "),
    ([_ev("SIMULATION_BEGINS", 0, compute_resources=[{"id": "0"}])],
     "events[0] (SIMULATION_BEGINS).compute_resources, field 'id': "),
    ([_begin(storage=[{"id": "s", "properties": {"size": 5}}])],
     "events[0] (SIMULATION_BEGINS).storage_resources, field 'id': "),
])
def test_each_refusal_names_its_event_and_field(events, message):
    with pytest.raises(ProtocolError) as caught:
        _answer(events)
    assert str(caught.value).startswith(message)


def test_a_running_job_submitted_again_is_refused():
    s, _ = _answer([_begin(), _job(1)])
    assert list(s.live) == ["w0!1"]
    with pytest.raises(ProtocolError) as caught:
        s.answer({"now": 1, "events": [_job(1, t=1)]})
    assert str(caught.value) == "events[0] (JOB_SUBMITTED): job 'w0!1' submitted twice"


class _Scripted:
    """A policy that notes what it is told and answers from a script."""

    name = "scripted"
    io_aware = False

    def __init__(self, answers):
        self.answers = list(answers)
        self.seen = []

    def decide(self, state):
        self.seen.append((state.time, state.memory))
        return self.answers.pop(0)


def test_the_policy_is_told_the_time_and_its_memory_and_its_nodes_are_kept():
    from bbopt.core import Decision, Start

    policy = _Scripted([Decision(start=(Start("w0!1", (3, 2)),), memory={"k": 1}),
                        Decision(), Decision(memory={"k": 2})])
    s = PolicyScheduler(policy)
    s.answer({"now": 0, "events": [_begin()]})
    reply = s.answer({"now": 4, "events": [_job(1, t=4), _job(2, t=4)]})
    assert reply["events"] == [
        {"timestamp": 4, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "2-3"}}]
    assert s.live["w0!1"].start == 4
    s.answer({"now": 6, "events": [_ev("REQUESTED_CALL", 6)]})  # no memory: the last kept
    s.answer({"now": 9, "events": [_ev("REQUESTED_CALL", 9)]})
    assert policy.seen == [(4, {}), (6, {"k": 1}), (9, {"k": 1})]
    assert s.memory == {"k": 2}


def test_a_policy_that_preempts_is_refused():
    from bbopt.core import Decision

    s = PolicyScheduler(_Scripted([Decision(preempt=("w0!1",))]))
    s.answer({"now": 0, "events": [_begin()]})
    with pytest.raises(ProtocolError) as caught:
        s.answer({"now": 1, "events": [_job(1, t=1)]})
    assert str(caught.value) == ("the policy preempts jobs; bbopt's Batsim scheduler does not "
                                 "kill jobs")


def test_the_policy_options_are_passed_on():
    with pytest.raises(Exception, match="bogus"):
        PolicyScheduler("fcfs", {"bogus": 1})


def test_a_start_the_ledger_refuses_names_the_job_and_the_time():
    from bbopt.core import Decision, Start
    from bbopt.errors import InvalidDecision

    # w0!1 holds 3 of the 4 nodes; the script also starts w0!2 (2 nodes) at t=4
    s = PolicyScheduler(_Scripted([Decision(start=(Start("w0!1"), Start("w0!2")))]))
    s.answer({"now": 0, "events": [_begin()]})
    with pytest.raises(InvalidDecision) as caught:
        s.answer({"now": 4, "events": [_job(1, res=3, t=4), _job(2, res=2, t=4)]})
    assert str(caught.value) == "invalid decision (t=4s, job w0!2): needs 2 nodes, 1 free"


# -- run_scheduler: the socket side, against a scripted Batsim (REQ) in this thread ---------------

def _batsim(endpoint, messages, *args):
    """``run_scheduler(endpoint, *args)`` on a thread, sent ``messages`` in turn by a scripted
    Batsim; the replies it got (until a silence of 5 s) and what run_scheduler returned or
    raised."""
    import json
    import threading

    zmq = pytest.importorskip("zmq", reason="pyzmq is not installed (pip install "
                                             "'bbopt[batsim]')")
    from bbopt.interop.batsim.scheduler import run_scheduler

    box: dict = {}

    def run():
        try:
            box["value"] = run_scheduler(endpoint, *args)
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    ctx = zmq.Context()
    req = ctx.socket(zmq.REQ)
    req.setsockopt(zmq.RCVTIMEO, 5000)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(endpoint)
    replies = []
    try:
        for m in messages:
            req.send(json.dumps(m).encode())
            replies.append(json.loads(req.recv()))
    except zmq.Again:
        pass
    finally:
        req.close()
        ctx.term()
    thread.join(5)
    assert not thread.is_alive()
    return replies, box


def _ends(now):
    return {"now": now, "events": [_ev("SIMULATION_ENDS", now)]}


def test_run_scheduler_answers_each_message_with_the_given_platform_and_tick(endpoint):
    from bbopt.core import Platform

    # Batsim has 5 compute resources, the given platform 4: a job of 5 can never fit it
    messages = [{"now": 0, "events": [_begin(n=5)]},
                {"now": 3, "events": [_job(1, res=5, t=3), _job(2, res=2, t=3),
                                      _job(3, res=3, t=3)]},
                {"now": 13, "events": [_ev("JOB_COMPLETED", 13, job_id="w0!2")]}, _ends(20)]
    replies, box = _batsim(endpoint, messages, "fcfs", None,
                           Platform(nodes=4, bb=0.0, name="given"), 10.0, 5.0)
    assert replies == [
        {"now": 0, "events": []},
        {"now": 3, "events": [
            {"timestamp": 3, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}},
            {"timestamp": 3, "type": "EXECUTE_JOB", "data": {"job_id": "w0!2", "alloc": "0-1"}},
            {"timestamp": 3, "type": "CALL_ME_LATER", "data": {"timestamp": 10.0}}]},
        {"now": 13, "events": [
            {"timestamp": 13, "type": "EXECUTE_JOB", "data": {"job_id": "w0!3", "alloc": "0-2"}}]},
        {"now": 20, "events": []}]
    s = box["value"]
    assert (s.ended, s.now, s.decisions, s.platform.name) == (True, 20, 2, "given")


def test_run_scheduler_passes_the_options_on_and_waits_600_s_by_default(endpoint, monkeypatch):
    from bbopt.interop.batsim import scheduler

    opened = []

    class Recorded(scheduler.Link):
        def __init__(self, endpoint, kind, timeout):
            opened.append((endpoint, kind, timeout))
            super().__init__(endpoint, kind, timeout)

    monkeypatch.setattr(scheduler, "Link", Recorded)
    replies, box = _batsim(endpoint, [{"now": 0, "events": [_begin()]}, _ends(1)], "naive",
                           {"window": 3})
    assert replies == [{"now": 0, "events": []}, {"now": 1, "events": []}]
    assert opened == [(endpoint, "rep", 600.0)]
    assert (box["value"].policy.window, box["value"].decisions) == (3, 0)


def _notify(now, message):
    return {"now": now, "events": [{"timestamp": now, "type": "NOTIFY", "data": {
        "type": "protocol_error", "message": message}}]}


@pytest.mark.parametrize("messages, now, message", [
    # refused before any time was read: the NOTIFY is at t=0
    ([{"now": "soon", "events": []}], 0,
     "message from Batsim, field 'now': must be a number, got 'soon'"),
    ([{"now": 2, "events": [_ev("JOB_EXPLODED", 2)]}], 0,
     "message from Batsim, events[0], field 'type': unknown event type 'JOB_EXPLODED' (known: "
     "ANSWER, JOB_COMPLETED, JOB_KILLED, JOB_SUBMITTED, NOTIFY, QUERY, REQUESTED_CALL, "
     "RESOURCE_STATE_CHANGED, SIMULATION_BEGINS, SIMULATION_ENDS)"),
    # refused by the scheduler: the NOTIFY is at the message's time
    ([{"now": 5, "events": [_begin()]}, {"now": 7, "events": [
        _ev("JOB_COMPLETED", 7, job_id="w0!9")]}], 7,
     "events[0] (JOB_COMPLETED): job 'w0!9' is not running"),
    # a message before the last one: refused at the last one's time
    ([{"now": 5, "events": [_begin()]}, {"now": 3, "events": []}], 5,
     "message from Batsim, field 'now': 3 is before 5 (time cannot go back)"),
])
def test_run_scheduler_says_why_it_refuses_then_raises(endpoint, messages, now, message):
    replies, box = _batsim(endpoint, messages, "fcfs", None, None, None, 5.0)
    assert replies[-1] == _notify(now, message)
    assert replies[:-1] == [{"now": m["now"], "events": []} for m in messages[:-1]]
    assert type(box["error"]) is ProtocolError and str(box["error"]) == message


def test_run_scheduler_gives_up_when_batsim_is_silent(endpoint):
    from bbopt.interop.batsim.scheduler import run_scheduler

    pytest.importorskip("zmq", reason="pyzmq is not installed (pip install 'bbopt[batsim]')")
    with pytest.raises(ProtocolError) as caught:
        run_scheduler(endpoint, "fcfs", timeout=0.2)
    assert str(caught.value) == f"no message from Batsim on {endpoint} within 0.2 s"

"""Batsim's protocol, both sides: bbopt's simulator driving bbopt's scheduler over a socket
reproduces the in-process jobs.csv byte for byte; a malformed or out-of-order message ends both
sides with a protocol error, never a hang (every receive is bounded)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytest.importorskip("zmq", reason="pyzmq is not installed (pip install 'bbopt[batsim]')")

import zmq  # noqa: E402

from bbopt.core import GB, Job, Platform  # noqa: E402
from bbopt.interop.batsim.protocol import ProtocolError, parse_intervals  # noqa: E402
from bbopt.interop.batsim.scheduler import PolicyScheduler, run_scheduler  # noqa: E402
from bbopt.interop.batsim.server import serve_batsim  # noqa: E402
from bbopt.loading import read_workload  # noqa: E402
from bbopt.simulation import simulate  # noqa: E402
from tests._workload_data import KTH_BATSIM, data_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _csv(result, path: Path) -> bytes:
    result.to_csv(path)
    return path.read_bytes()


def _in_thread(fn, *args, **kw):
    box: dict = {}

    def run():
        try:
            box["value"] = fn(*args, **kw)
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


@pytest.mark.parametrize("policy", ["fcfs-bb", "sjf-bb", "conservative-bb", "filler"])
def test_loop_back_reproduces_the_in_process_jobs_csv(policy, endpoint, tmp_path):
    """The KTH part (1,221 jobs, BB from the profiles, 4 jobs wider than the machine) under the
    policy in-process and through the protocol: the same bytes."""
    w = read_workload(data_file(KTH_BATSIM))
    platform = Platform(nodes=96, bb=96 * 5 * GB)
    ref = simulate(w.jobs, platform, policy, workload_name=w.name)
    thread, box = _in_thread(run_scheduler, endpoint, policy, timeout=30)
    res = serve_batsim(w.jobs, platform, endpoint, workload_name=w.name, timeout=30)
    thread.join(30)
    assert "error" not in box and not thread.is_alive()
    assert box["value"].ended
    assert _csv(res, tmp_path / "b.csv") == _csv(ref, tmp_path / "a.csv")
    assert ref.state.count("rejected") == 4


def test_cli_loop_back_is_byte_identical(endpoint, tmp_path):
    """`bbopt batsim scheduler` and `bbopt batsim server` as two processes, against
    `bbopt simulate`'s jobs.csv (the first 300 KTH jobs, the platform the trace declares)."""
    kth = str(data_file(KTH_BATSIM))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "bbopt"]
    sched = subprocess.Popen([*cmd, "batsim", "scheduler", "--policy", "sjf-bb", "--socket",
                              endpoint, "--timeout", "60"], cwd=ROOT, env=env,
                             stderr=subprocess.PIPE, text=True)
    try:
        server = subprocess.run([*cmd, "batsim", "server", "-w", kth, "--jobs", "300",
                                 "--socket", endpoint, "--timeout", "60", "--out",
                                 str(tmp_path / "b")], cwd=ROOT, env=env, capture_output=True,
                                text=True, timeout=120)
        assert server.returncode == 0, server.stderr
        assert sched.wait(timeout=60) == 0
    finally:
        if sched.poll() is None:
            sched.kill()
            sched.wait(10)
    ref = subprocess.run([*cmd, "simulate", "-w", kth, "--jobs", "300", "--policy", "sjf-bb",
                          "--no-progress", "--out", str(tmp_path / "a")], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert ref.returncode == 0, ref.stderr
    assert (tmp_path / "b" / "batsim_jobs.csv").read_bytes() == \
        (tmp_path / "a" / "sjf-bb_jobs.csv").read_bytes()


def test_interval_sets():
    assert parse_intervals("0-2 5", "alloc") == (0, 1, 2, 5)
    for bad in ("", "3-1", "a", "1 1", "0-3 2", -1, "-2"):
        with pytest.raises(ProtocolError, match="alloc"):
            parse_intervals(bad, "alloc")


# -- bbopt's scheduler refuses bad messages from Batsim ------------------------------------------

BEGIN = {"timestamp": 0, "type": "SIMULATION_BEGINS", "data": {
    "compute_resources": [{"id": i} for i in range(4)],
    "storage_resources": [{"id": 4, "properties": {"bb_capacity": "100e9"}}],
    "profiles": {"w0": {"p": {"type": "delay", "delay": 10}}}}}
JOB = {"timestamp": 1, "type": "JOB_SUBMITTED", "data": {
    "job_id": "w0!1", "job": {"id": "w0!1", "subtime": 1, "res": 2, "walltime": 60,
                              "profile": "p"}}}


def test_scheduler_answers_with_storage_mapping_for_bb():
    s = PolicyScheduler("fcfs-bb")
    assert s.answer({"now": 0, "events": [BEGIN]}) == {"now": 0, "events": []}
    assert (s.platform.nodes, s.platform.bb, s.storage) == (4, 100e9, 4)
    bbjob = {**JOB, "data": {"job_id": "w0!2", "job": {**JOB["data"]["job"], "id": "w0!2"},
                             "profile": {"type": "delay", "delay": 10, "bb": 1e9}}}
    reply = s.answer({"now": 1, "events": [JOB, bbjob]})
    assert reply["events"] == [
        {"timestamp": 1, "type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "0-1"}},
        {"timestamp": 1, "type": "EXECUTE_JOB",
         "data": {"job_id": "w0!2", "alloc": "2-3", "storage_mapping": {"bb": 4}}}]
    wide = {**JOB, "data": {"job_id": "w0!3", "job": {**JOB["data"]["job"], "id": "w0!3",
                                                      "res": 5}}}
    assert s.answer({"now": 2, "events": [wide]})["events"] == [
        {"timestamp": 2, "type": "REJECT_JOB", "data": {"job_id": "w0!3"}}]


@pytest.mark.parametrize(("messages", "error"), [
    ([b"{not json"], "not JSON"),
    ([{"now": 1, "events": [JOB]}], "first event must be SIMULATION_BEGINS"),
    ([{"now": 5, "events": [BEGIN]}, {"now": 3, "events": []}], "time cannot go back"),
    ([{"now": 5, "events": [{**JOB, "timestamp": 2}, {**BEGIN, "timestamp": 1}]}],
     "events must be in time order"),
    ([{"now": 0, "events": [{**JOB, "timestamp": 9}]}], "after the message's now"),
    ([{"now": 0, "events": [BEGIN, {"timestamp": 0, "type": "JOB_EXPLODED", "data": {}}]}],
     "unknown event type"),
    ([{"now": 1, "events": [BEGIN, {"timestamp": 1, "type": "JOB_COMPLETED",
                                    "data": {"job_id": "w0!9"}}]}], "is not running"),
    ([{"now": 1, "events": [BEGIN, JOB, JOB]}], "submitted twice"),
    ([{"now": "soon", "events": []}], "'now'"),
])
def test_scheduler_refuses_a_bad_message_and_both_sides_exit(endpoint, messages, error):
    thread, box = _in_thread(run_scheduler, endpoint, "fcfs-bb", timeout=10)
    ctx = zmq.Context()
    req = ctx.socket(zmq.REQ)
    req.setsockopt(zmq.RCVTIMEO, 10000)
    req.setsockopt(zmq.LINGER, 0)
    req.connect(endpoint)
    try:
        import json

        for k, m in enumerate(messages):
            req.send(m if isinstance(m, bytes) else json.dumps(m).encode())
            reply = json.loads(req.recv())
            if k < len(messages) - 1:
                assert not reply["events"]
        assert reply["events"][0]["type"] == "NOTIFY"
        assert reply["events"][0]["data"]["type"] == "protocol_error"
        assert error in reply["events"][0]["data"]["message"]
    finally:
        req.close()
        ctx.term()
    thread.join(10)
    assert not thread.is_alive()
    assert isinstance(box.get("error"), ProtocolError) and error in str(box["error"])


def test_scheduler_gives_up_when_batsim_is_silent(endpoint):
    with pytest.raises(ProtocolError, match="no message from Batsim .* within 0.2 s"):
        run_scheduler(endpoint, "fcfs-bb", timeout=0.2)


# -- bbopt's simulator refuses bad answers from a scheduler ---------------------------------------

JOBS = [Job("a", 0, walltime=100, runtime=50, nodes=2), Job("b", 10, walltime=100, runtime=50,
                                                             nodes=4)]


def _fake_scheduler(endpoint, answers, box):
    """A REP socket answering Batsim's messages with ``answers(msg)`` until SIMULATION_ENDS
    (or a bounded silence); what it received goes into ``box``."""
    import json

    ctx = zmq.Context()
    rep = ctx.socket(zmq.REP)
    rep.setsockopt(zmq.RCVTIMEO, 10000)
    rep.setsockopt(zmq.LINGER, 0)
    rep.bind(endpoint)
    box["got"] = []
    try:
        while True:
            try:
                msg = json.loads(rep.recv())
            except zmq.Again:
                box["silence"] = True
                return
            box["got"].append(msg)
            answer = answers(msg)
            rep.send(answer)
            if any(e["type"] == "SIMULATION_ENDS" for e in msg["events"]):
                return
            if b'"protocol_error"' in answer:  # (a scheduler that refused exits)
                return
    finally:
        rep.close()
        ctx.term()


def _answer(events):
    """Answer the first message naming job b with ``events``, every other with nothing."""
    import json

    def answers(msg):
        if any(e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!b"
               for e in msg["events"]):
            return events if isinstance(events, bytes) else json.dumps(
                {"now": msg["now"], "events": events}).encode()
        return json.dumps({"now": msg["now"], "events": []}).encode()
    return answers


def _ex(job, alloc, t=10):
    return {"timestamp": t, "type": "EXECUTE_JOB", "data": {"job_id": job, "alloc": alloc}}


@pytest.mark.parametrize(("events", "error"), [
    (b"]]", "not JSON"),
    ([_ex("w0!zz", "0-3")], "unknown job"),
    ([_ex("w0!b", "0-2")], "3 resources for a job of 4"),
    ([_ex("w0!b", "6-9")], "not a compute resource"),
    ([_ex("w0!b", "0-3")], "refused"),  # nodes 0-1 are a's: the engine's check
    ([_ex("w0!b", "2-3 6-7", t=3)], "change the past"),
    ([{"timestamp": 10, "type": "REJECT_JOB", "data": {"job_id": "w0!b"}}], "REJECT_JOB"),
    ([{"timestamp": 10, "type": "KILL_JOB", "data": {"job_ids": ["w0!a"]}}], "KILL_JOB"),
    ([{"timestamp": 10, "type": "NOTIFY", "data": {"type": "protocol_error",
                                                   "message": "mine"}}], "refused the message"),
])
def test_simulator_refuses_a_bad_answer_and_both_sides_exit(endpoint, events, error):
    import json

    # a starts at once on nodes 0-1; b's message is answered with ``events``
    first = {"now": 0, "events": [_ex("w0!a", "0-1", t=0)]}

    inner = _answer(events)

    def answers(msg):
        if any(e["data"].get("job_id") == "w0!a" and e["type"] == "JOB_SUBMITTED"
               for e in msg["events"]):
            return json.dumps(first).encode()
        return inner(msg)

    box: dict = {}
    thread = threading.Thread(target=_fake_scheduler, args=(endpoint, answers, box),
                              daemon=True)
    thread.start()
    with pytest.raises(ProtocolError, match=error):
        serve_batsim(JOBS, Platform(nodes=8), endpoint, timeout=10)
    thread.join(15)
    assert not thread.is_alive()
    last = box["got"][-1]["events"]
    if "refused the message" not in error:  # (a scheduler that refused has exited already)
        assert [e["type"] for e in last] == ["SIMULATION_ENDS"]


def test_simulator_gives_up_when_no_scheduler_answers(endpoint):
    with pytest.raises(ProtocolError, match="no message from the scheduler .* within 0.2 s"):
        serve_batsim(JOBS, Platform(nodes=8), endpoint, timeout=0.2)


def test_messages_come_when_batsim_sends_them(endpoint):
    """Batsim's own message sequence: a CALL_ME_LATER is answered with a REQUESTED_CALL at the
    time asked, in a message of its own (t=5; t=55, with no job waiting), every completion in
    a message at its time (a at t=50, on an empty queue), the last completion with
    SIMULATION_ENDS, and a call still pending then (t=1000) dropped."""
    import json

    calls = {"SIMULATION_BEGINS": 5, "REQUESTED_CALL": 55, "NOTIFY": 1000}

    def answers(msg):
        events = []
        for e in msg["events"]:
            if e["type"] == "JOB_SUBMITTED":
                n = e["data"]["job"]["res"]
                events.append(_ex(e["data"]["job_id"], "0-1" if n == 2 else "2-5",
                                  t=msg["now"]))
            at = calls.pop(e["type"], None)
            if at is not None:
                events.append({"timestamp": msg["now"], "type": "CALL_ME_LATER",
                               "data": {"timestamp": at}})
        return json.dumps({"now": msg["now"], "events": events}).encode()

    box: dict = {}
    thread = threading.Thread(target=_fake_scheduler, args=(endpoint, answers, box), daemon=True)
    thread.start()
    res = serve_batsim(JOBS, Platform(nodes=8), endpoint, timeout=10)
    thread.join(15)
    assert list(res.start) == [0.0, 10.0] and list(res.end) == [50.0, 60.0]
    seen = [(m["now"], [(e["type"], e["timestamp"]) for e in m["events"]]) for m in box["got"]]
    assert seen == [
        (0.0, [("SIMULATION_BEGINS", 0.0)]),
        (0.0, [("JOB_SUBMITTED", 0.0)]),
        (5.0, [("REQUESTED_CALL", 5.0)]),
        (10.0, [("JOB_SUBMITTED", 10.0), ("NOTIFY", 10.0)]),
        (50.0, [("JOB_COMPLETED", 50.0)]),
        (55.0, [("REQUESTED_CALL", 55.0)]),
        (60.0, [("JOB_COMPLETED", 60.0), ("SIMULATION_ENDS", 60.0)]),
    ]
    assert not calls  # (every call was asked)


@pytest.mark.parametrize(("at", "refused"), [(9.999, True), (10.0, True), (10.001, False)])
def test_a_call_must_be_after_now(endpoint, at, refused):
    """Batsim refuses a CALL_ME_LATER not after its clock: so does bbopt's simulator, and both
    sides exit; just after now, the call comes at its time."""
    import json

    def answers(msg):
        events = []
        if any(e["type"] == "JOB_SUBMITTED" and e["data"]["job_id"] == "w0!b"
               for e in msg["events"]):
            events.append({"timestamp": 10, "type": "CALL_ME_LATER", "data": {"timestamp": at}})
        for e in msg["events"]:
            if e["type"] == "JOB_SUBMITTED":
                n = e["data"]["job"]["res"]
                events.append(_ex(e["data"]["job_id"], "0-1" if n == 2 else "2-5",
                                  t=msg["now"]))
        return json.dumps({"now": msg["now"], "events": events}).encode()

    box: dict = {}
    thread = threading.Thread(target=_fake_scheduler, args=(endpoint, answers, box), daemon=True)
    thread.start()
    if refused:
        with pytest.raises(ProtocolError, match="is not after now"):
            serve_batsim(JOBS, Platform(nodes=8), endpoint, timeout=10)
    else:
        serve_batsim(JOBS, Platform(nodes=8), endpoint, timeout=10)
    thread.join(15)
    assert not thread.is_alive()
    calls = [(m["now"], e["timestamp"]) for m in box["got"] for e in m["events"]
             if e["type"] == "REQUESTED_CALL"]
    assert calls == ([] if refused else [(at, at)])
    assert box["got"][-1]["events"][-1]["type"] == "SIMULATION_ENDS"

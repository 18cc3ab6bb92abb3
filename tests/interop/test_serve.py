"""The decision service: strict JSON out, errors naming the field, sessions keeping the policy's
memory, budget flags, and the stdin/stdout and socket transports with their shutdown."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from bbopt import ClusterState, Job, Platform, RunningJob
from bbopt.api import decide
from bbopt.core import GB
from bbopt.interop.client import ServiceClient, ServiceError
from bbopt.interop.serve import DecisionService
from bbopt.interop.transport import open_servers, serve_sockets
from bbopt.policies import available_policies
from bbopt.schema import dumps, loads_decision, loads_state, state_to_dict

ROOT = Path(__file__).resolve().parents[2]


def strict(text: str):
    """JSON as JavaScript's JSON.parse or Go's encoding/json read it: no NaN, no Infinity."""
    def refuse(name):
        raise ValueError(f"{name} in bbopt's JSON")
    return json.loads(text, parse_constant=refuse)


def wide_state(memory=None) -> ClusterState:
    """``w`` is wider than the machine and ``x`` asks more BB than exists: neither ever fits."""
    return ClusterState(
        time=0.0, platform=Platform(nodes=4, bb=100 * GB),
        running=(RunningJob(Job("r", 0, walltime=600, nodes=2), start=0.0),),
        queue=(Job("a", 0, walltime=300, nodes=1, bb=60 * GB),
               Job("w", 0, walltime=300, nodes=8),
               Job("b", 0, walltime=300, nodes=4),
               Job("x", 0, walltime=100, nodes=1, bb=500 * GB)),
        memory=memory or {})


def test_every_policy_writes_strict_json_and_says_never_fits():
    state = wide_state()
    checked = 0
    for name in available_policies():
        try:
            decision = decide(state, name)
        except Exception:  # (policies that need an I/O tree or options: not this state)
            continue
        text = dumps(decision)
        d = strict(text)
        checked += 1
        for r in d["reservations"]:
            assert isinstance(r["never_fits"], bool)
            assert (r["start"] is None) == r["never_fits"]
        never = {r.job_id for r in decision.reservations if math.isinf(r.start)}
        assert {r["job_id"] for r in d["reservations"] if r["never_fits"]} == never
        back = loads_decision(text)
        assert back.reservations == decision.reservations  # never_fits reads back as inf
    assert checked >= 15
    d = strict(dumps(decide(state, "fcfs-bb")))
    assert d["reservations"] == [{"job_id": "w", "start": None, "never_fits": True}]


def test_infinite_memory_survives_the_json_round_trip():
    """conservative-bb remembers "never" for jobs that never fit: written as {"$float": ...}."""
    first = decide(wide_state(), "conservative-bb")
    assert first.memory["reservations"]["w"] == math.inf
    text = dumps(first)
    assert strict(text)["memory"]["reservations"]["w"] == {"$float": "Infinity"}
    memory = loads_decision(text).memory
    assert memory == first.memory
    state_text = dumps(wide_state(memory))
    strict(state_text)
    again = loads_state(state_text)
    assert again.memory == first.memory
    assert decide(again, "conservative-bb").reservations == \
        decide(wide_state(first.memory), "conservative-bb").reservations


def test_cli_decide_output_is_strict_json(tmp_path):
    path = tmp_path / "state.json"
    path.write_text(dumps(wide_state()))
    out = subprocess.run([sys.executable, "-m", "bbopt", "decide", str(path), "--policy",
                          "sjf-bb"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    assert strict(out.stdout)["reservations"][0] == \
        {"job_id": "w", "start": None, "never_fits": True}


@pytest.fixture(scope="module")
def service():
    return DecisionService(warm=("fcfs-bb",))


STATE = {"time": 0, "platform": {"nodes": 4},
         "queue": [{"id": "a", "walltime": 60, "nodes": 2}, {"id": "b", "walltime": 60,
                                                              "nodes": 4}]}


@pytest.mark.parametrize(("request_", "path", "field"), [
    ({"policy": "fcfs-bb"}, "$", "state"),
    ({"state": STATE}, "$", "policy"),
    ({"policy": "fcfs-bb", "state": STATE, "polcy": 1}, "$", "polcy"),
    ({"policy": "no-such", "state": STATE}, "$", "policy"),
    ({"policy": "conservative-bb", "options": {"dept": 3}, "state": STATE}, "$.options", "dept"),
    ({"policy": "fcfs-bb", "options": [], "state": STATE}, "$", "options"),
    ({"policy": "fcfs-bb", "budget": 0, "state": STATE}, "$", "budget"),
    ({"policy": "fcfs-bb", "budget": -1, "state": STATE}, "$", "budget"),
    ({"policy": "fcfs-bb", "budget": True, "state": STATE}, "$", "budget"),
    ({"policy": "fcfs-bb", "state": {**STATE, "time": "now"}}, "$.state", "time"),
    ({"policy": "fcfs-bb", "state": {**STATE, "queue": [{"id": "a", "walltime": -5}]}},
     "$.state.queue[0]", "walltime"),
    ({"policy": "fcfs-bb", "state": {**STATE, "platform": {"nodez": 4}}}, "$.state.platform",
     "nodez"),
    ({"policy": "fcfs-bb", "session": 3, "state": STATE}, "$", "session"),
])
def test_bad_request_names_path_and_field_and_service_stays_up(service, request_, path, field):
    reply = service.handle({"id": "r1", **request_})
    assert reply["ok"] is False and reply["id"] == "r1"
    assert (reply["error"]["path"], reply["error"]["field"]) == (path, field)
    strict(json.dumps(reply, allow_nan=False))
    good = service.handle({"policy": "fcfs-bb", "state": STATE})
    assert good["ok"] and good["decision"]["start"] == [{"job_id": "a", "nodes": None}]


def test_bad_lines_get_error_lines(service):
    for line in (b"not json\n", b"[1, 2]\n", b'{"policy": "fcfs-bb", "state": NaN}\n',
                 b"\xff\xfe\n"):
        reply = strict(service.handle_line(line, "t"))
        assert reply["ok"] is False and reply["error"]["message"]


def test_session_memory_on_starts_the_resource_manager_chose(service):
    """The session keeps conservative-bb's reservations for j4-j7 at 100 s; the resource
    manager starts j0 alone, at 1 s, so the kept memory meets a state it did not decide: the
    service answers as the in-process decision fed that memory does, reservations that still
    hold kept (three of j4-j7 move up to now), the one that does not planned again."""
    jobs = tuple(Job(f"j{i}", 0.0, 100.0, nodes=1) for i in range(10))
    s0 = ClusterState(0.0, Platform(nodes=4, bb=0.0), (), jobs)
    later = ClusterState(1.0, s0.platform, (RunningJob(jobs[0], 1.0),), jobs[1:])
    expected = decide(replace(later, memory=decide(s0, "conservative-bb").memory),
                      "conservative-bb")
    assert expected.started_ids == ["j4", "j5", "j6"]
    assert service.handle({"policy": "conservative-bb", "session": "rm",
                           "state": state_to_dict(s0)})["ok"]
    body = state_to_dict(later)
    del body["memory"]
    reply = service.handle({"policy": "conservative-bb", "session": "rm", "state": body})
    assert reply["ok"], reply
    got = loads_decision(json.dumps(reply["decision"]))
    assert got.started_ids == expected.started_ids
    assert got.reservations == expected.reservations


def test_session_keeps_the_memory_so_the_client_sends_only_the_state(service):
    """conservative-bb's second decision with the memory left to the session equals the
    in-process decision fed its memory by hand; another session starts empty."""
    s0 = wide_state()
    first = decide(s0, "conservative-bb")
    later = ClusterState(time=50.0, platform=s0.platform, running=s0.running,
                         queue=s0.queue[1:])
    expected = decide(ClusterState(later.time, later.platform, later.running, later.queue,
                                   first.memory), "conservative-bb")
    fresh = decide(later, "conservative-bb")
    body = state_to_dict(later)
    del body["memory"]
    r1 = service.handle({"policy": "conservative-bb", "session": "s",
                         "state": {**state_to_dict(s0), "memory": {}}})
    assert r1["ok"]
    r2 = service.handle({"policy": "conservative-bb", "session": "s", "state": body})
    assert loads_decision(json.dumps(r2["decision"])).reservations == expected.reservations
    assert service.sessions["s"].memory["conservative-bb"] == expected.memory
    r3 = service.handle({"policy": "conservative-bb", "session": "other", "state": body})
    assert loads_decision(json.dumps(r3["decision"])).reservations == fresh.reservations


def test_budget_flags_cold_and_overrun(service):
    """A warmed policy's decision is not cold; the first of an unwarmed one is, and the next
    is not; a budget the decision cannot hold is an overrun: held is false in both cases."""
    r = service.handle({"policy": "fcfs-bb", "state": STATE, "budget": 10.0})
    assert r["budget"] == {"seconds": 10.0, "held": True, "cold": False, "overrun": False}
    r = service.handle({"policy": "filler", "state": STATE})
    assert (r["budget"]["cold"], r["budget"]["held"]) == (True, False)
    r = service.handle({"policy": "filler", "state": STATE})
    assert (r["budget"]["cold"], r["budget"]["held"]) == (False, True)
    r = service.handle({"policy": "sjf-bb", "state": STATE, "budget": 1e-12})
    assert r["budget"]["overrun"] is True and r["budget"]["held"] is False
    assert r["timing"]["decide"] > 1e-12 and r["timing"]["parse"] > 0


def test_budget_goes_to_a_policy_with_a_budget_option(service):
    r = service.handle({"policy": "bbsched", "state": STATE, "budget": 0.25})
    assert r["ok"] and r["decision"]["stats"]["budget"] == 0.25
    r = service.handle({"policy": "bbsched", "state": STATE, "budget": 0.25,
                        "options": {"budget": 1.0}})
    assert (r["ok"], r["error"]["field"]) == (False, "budget")


def test_unix_socket_sessions_per_connection_and_shutdown(tmp_path):
    service = DecisionService(warm=())
    path = str(tmp_path / "bbopt.sock")
    servers = open_servers(service, unix=path, port=0)
    thread = threading.Thread(target=serve_sockets, args=(service, servers), daemon=True)
    thread.start()
    try:
        port = servers[1].server_address[1]
        state = wide_state()
        with ServiceClient.unix(path, timeout=30) as a, ServiceClient.tcp(port, timeout=30) as b:
            ra = a.decide(state, "conservative-bb")
            assert ra.decision.reservations == decide(state, "conservative-bb").reservations
            assert ra.cold and not ra.budget_held
            rb = b.decide(state, "conservative-bb")
            assert not rb.cold and rb.budget_held
            assert len(service.sessions) == 2  # one per connection
            with pytest.raises(ServiceError) as err:
                a.decide({"time": 0, "platform": {"nodes": -1}}, "fcfs-bb")
            assert err.value.path == "$.state.platform" and err.value.field == "nodes"
            a.file.write(b"garbage\n")
            a.file.flush()
            assert strict(a.file.readline())["ok"] is False
            assert a.decide(state, "fcfs-bb").decision.start == decide(state, "fcfs-bb").start
    finally:
        service.stopping.set()
        thread.join(10)
    assert not thread.is_alive()
    assert not os.path.exists(path)


def _serve(args, **kw):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "bbopt", "serve", "--warm", "", *args],
                            cwd=ROOT, env=env, **kw)


def test_stdio_service_answers_lines_until_end_of_input():
    lines = [json.dumps({"id": 1, "policy": "fcfs-bb", "state": STATE}), "{oops",
             json.dumps({"id": 2, "policy": "sjf-bb", "state": STATE})]
    proc = _serve([], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = proc.communicate("\n".join(lines).encode() + b"\n", timeout=120)
    assert proc.returncode == 0, err
    replies = [strict(x) for x in out.decode().splitlines()]
    assert [(r["id"], r["ok"]) for r in replies] == [(1, True), (None, False), (2, True)]


def test_socket_service_stops_on_sigterm(tmp_path):
    path = tmp_path / "s.sock"
    proc = _serve(["--socket", str(path)], stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()  # announced once listening (after the warm-up)
        assert "listening on unix:" in line
        with ServiceClient.unix(str(path), timeout=60) as c:
            assert c.decide(wide_state(), "fcfs-bb").decision.start
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
    assert not path.exists()


def test_a_resent_queue_is_read_again_only_where_it_changed():
    """The session keeps the jobs of the last request: an unchanged job is not read again, a
    changed one is (its new walltime decides), a bad one is refused with its path."""
    service = DecisionService(warm=())
    body = state_to_dict(wide_state())
    del body["memory"]
    r1 = service.handle({"policy": "conservative-bb", "session": "q", "state": body})
    kept = dict(service.sessions["q"].jobs)
    r2 = service.handle({"policy": "conservative-bb", "session": "q", "state": body})
    assert r2["decision"]["reservations"] == r1["decision"]["reservations"]
    assert all(service.sessions["q"].jobs[k][1] is kept[k][1] for k in kept)  # not re-read
    longer = json.loads(json.dumps(body))
    longer["queue"][2]["walltime"] = 5000.0  # b: 4 nodes, 300 s -> 5000 s
    memory = service.sessions["q"].memory["conservative-bb"]
    r3 = service.handle({"policy": "conservative-bb", "session": "q", "state": longer})
    expected = decide(replace(loads_state(json.dumps(longer)), memory=memory), "conservative-bb")
    assert loads_decision(json.dumps(r3["decision"])).reservations == expected.reservations
    b = service.sessions["q"].jobs["b"][1]
    assert b.walltime == 5000.0 and b is not kept["b"][1]
    assert service.sessions["q"].jobs["a"][1] is kept["a"][1]
    longer = json.loads(json.dumps(longer))  # (the service keeps the objects it was sent)
    longer["queue"][1]["nodes"] = "many"
    r4 = service.handle({"policy": "conservative-bb", "session": "q", "state": longer})
    assert (r4["error"]["path"], r4["error"]["field"]) == ("$.state.queue[1]", "nodes")
    longer["queue"][1] = dict(longer["queue"][0])  # a duplicate id: the whole state's check
    r5 = service.handle({"policy": "conservative-bb", "session": "q", "state": longer})
    assert r5["ok"] is False and "twice" in r5["error"]["message"]
    assert r3["ok"]

"""Batsim's protocol messages as bbopt reads and writes them: interval sets of resource ids,
strict JSON on the wire, every field of a message checked with a message that names the sender,
the event and the field, and every wait of a link bounded."""

from __future__ import annotations

import json
import re

import pytest

from bbopt.interop.batsim.protocol import (
    FROM_BATSIM,
    FROM_SCHEDULER,
    ProtocolError,
    decode,
    encode,
    event,
    field,
    intervals,
    parse_intervals,
)


def _refused(raw, message, *, allowed=FROM_BATSIM, not_before=None):
    with pytest.raises(ProtocolError) as exc:
        decode(raw, "Batsim", allowed, not_before)
    assert str(exc.value) == message


def _msg(now, *events):
    return json.dumps({"now": now, "events": list(events)}).encode()


# -- interval sets --------------------------------------------------------------------------------

@pytest.mark.parametrize("ids, text", [((0, 1, 2, 5), "0-2 5"), ([7], "7"), ((3, 4), "3-4"),
                                       ((9, 1, 2), "1-2 9"), ((), "")])
def test_intervals_write_runs_of_ids(ids, text):
    assert intervals(ids) == text


@pytest.mark.parametrize("text, ids", [("3 0-1 7-8", (0, 1, 3, 7, 8)), ("0", (0,)),
                                       ("2-2", (2,)), ("  4-5  ", (4, 5)), ("0-0 1", (0, 1)),
                                       ("2 0-1", (0, 1, 2)), ("5 3-4", (3, 4, 5))])
def test_parse_intervals_reads_sorted_ids(text, ids):
    assert parse_intervals(text, "alloc") == ids


@pytest.mark.parametrize("text, message", [
    ("", "alloc: an interval set must be a non-empty string like '0-3 7', got ''"),
    ("  ", "alloc: an interval set must be a non-empty string like '0-3 7', got '  '"),
    (5, "alloc: an interval set must be a non-empty string like '0-3 7', got 5"),
    ("a", "alloc: 'a' is not an interval of resource ids"),
    ("1-b", "alloc: '1-b' is not an interval of resource ids"),
    ("-2", "alloc: '-2' is not an interval of resource ids"),
    ("3-1", "alloc: '3-1' is not an interval of resource ids"),
    ("0-3 2", "alloc: '2' overlaps another interval"),
    ("4 3-4", "alloc: '3-4' overlaps another interval"),
    ("1 1", "alloc: '1' overlaps another interval"),
])
def test_a_bad_interval_set_is_named(text, message):
    with pytest.raises(ProtocolError) as exc:
        parse_intervals(text, "alloc")
    assert str(exc.value) == message


def test_intervals_and_parse_intervals_round_trip():
    ids = (0, 2, 3, 4, 9, 10, 12)
    assert parse_intervals(intervals(ids), "x") == ids


# -- the wire -------------------------------------------------------------------------------------

def test_encode_is_compact_strict_json():
    assert encode({"now": 1.5, "events": [event(1, "NOTIFY", type="x")]}) == \
        b'{"now":1.5,"events":[{"timestamp":1,"type":"NOTIFY","data":{"type":"x"}}]}'
    with pytest.raises(ValueError):
        encode({"now": float("nan"), "events": []})


def test_event_holds_its_data():
    assert event(2.0, "EXECUTE_JOB", job_id="w!1", alloc="0-1") == {
        "timestamp": 2.0, "type": "EXECUTE_JOB", "data": {"job_id": "w!1", "alloc": "0-1"}}
    assert event(0, "CALL_ME_LATER") == {"timestamp": 0, "type": "CALL_ME_LATER", "data": {}}


def test_decode_returns_the_message_and_fills_missing_data():
    msg = decode(_msg(5, {"timestamp": 1, "type": "JOB_SUBMITTED", "data": {"job_id": "a"}},
                      {"timestamp": 1, "type": "NOTIFY"},
                      {"timestamp": 5, "type": "REQUESTED_CALL", "data": None}),
                 "Batsim", FROM_BATSIM, not_before=5)
    assert msg == {"now": 5, "events": [
        {"timestamp": 1, "type": "JOB_SUBMITTED", "data": {"job_id": "a"}},
        {"timestamp": 1, "type": "NOTIFY"},
        {"timestamp": 5, "type": "REQUESTED_CALL", "data": {}}]}
    assert decode(_msg(0.5, ), "x", FROM_BATSIM) == {"now": 0.5, "events": []}


@pytest.mark.parametrize("raw, message", [
    (b"{", "message from Batsim is not JSON: Expecting property name enclosed in double quotes: "
           "line 1 column 2 (char 1)"),
    (b"\xff", "message from Batsim is not JSON: 'utf-8' codec can't decode byte 0xff in "
              "position 0: invalid start byte"),
    (b'{"now": NaN, "events": []}', "message from Batsim: NaN is not a JSON number"),
    (b'{"now": 1, "events": [{"timestamp": -Infinity}]}',
     "message from Batsim: -Infinity is not a JSON number"),
    (b"[]", "message from Batsim must be an object with 'now' and 'events'"),
    (b'{"events": []}', "message from Batsim, field 'now': must be a number, got None"),
    (b'{"now": true, "events": []}',
     "message from Batsim, field 'now': must be a number, got True"),
    (b'{"now": "1", "events": []}',
     "message from Batsim, field 'now': must be a number, got '1'"),
    (b'{"now": 1e999, "events": []}',
     "message from Batsim, field 'now': must be a number, got inf"),
    (b'{"now": 1}', "message from Batsim, field 'events': must be a list"),
    (b'{"now": 1, "events": {}}', "message from Batsim, field 'events': must be a list"),
    (b'{"now": 1, "events": [3]}', "message from Batsim, events[0]: must be an object"),
    (b'{"now": 1, "events": [{"type": "NOTIFY"}]}',
     "message from Batsim, events[0], field 'timestamp': must be a number, got None"),
    (b'{"now": 1, "events": [{"timestamp": false, "type": "NOTIFY"}]}',
     "message from Batsim, events[0], field 'timestamp': must be a number, got False"),
    (b'{"now": 1, "events": [{"timestamp": 0, "type": "EXECUTE_JOB"}]}',
     "message from Batsim, events[0], field 'type': unknown event type 'EXECUTE_JOB' (known: "
     + ", ".join(sorted(FROM_BATSIM)) + ")"),
    (b'{"now": 1, "events": [{"timestamp": 0, "type": "NOTIFY", "data": [1]}]}',
     "message from Batsim, events[0], field 'data': must be an object"),
    (b'{"now": 1, "events": [{"timestamp": 0, "type": "NOTIFY", "data": 0}]}',
     "message from Batsim, events[0], field 'data': must be an object"),
])
def test_a_bad_message_is_refused_naming_its_field(raw, message):
    _refused(raw, message)


def test_events_in_time_order_none_after_now():
    ok = {"timestamp": 3, "type": "NOTIFY"}
    _refused(_msg(4, ok, {"timestamp": 2, "type": "NOTIFY"}),
             "message from Batsim, events[1], field 'timestamp': 2 is before the previous "
             "event's 3 (events must be in time order)")
    _refused(_msg(2, {"timestamp": 2.5, "type": "NOTIFY"}),
             "message from Batsim, events[0], field 'timestamp': 2.5 is after the message's now 2")
    # equal timestamps are in order; the first event may be at any time up to now
    assert len(decode(_msg(3, ok, ok), "Batsim", FROM_BATSIM)["events"]) == 2
    assert decode(_msg(-5, {"timestamp": -7, "type": "NOTIFY"}), "B", FROM_BATSIM)["now"] == -5


@pytest.mark.parametrize("now, ts, ok", [
    (1000.0, 1000.0 + 0.5e-6, True),      # within 1e-9 of now (relative): rounding
    (1000.0, 1000.0 + 2e-6, False),       # beyond it
    (0.0, 0.5e-9, True), (0.0, 2e-9, False),  # absolute 1e-9 below |now| = 1
    (0.0, 1e-9, True),                      # at the bound itself
    (0.5, 0.5 + 0.9e-9, True), (0.5, 0.5 + 1.1e-9, False),  # max(1, |now|) = 1, not 0.5
    (-1000.0, -1000.0 + 0.5e-6, True), (-1000.0, -1000.0 + 2e-6, False),  # |now|, not now
])
def test_an_event_at_now_up_to_rounding_is_accepted(now, ts, ok):
    raw = _msg(now, {"timestamp": ts, "type": "NOTIFY"})
    if ok:
        assert decode(raw, "Batsim", FROM_BATSIM)["events"][0]["timestamp"] == ts
    else:
        with pytest.raises(ProtocolError, match="is after the message's now"):
            decode(raw, "Batsim", FROM_BATSIM)


def test_time_cannot_go_back():
    _refused(_msg(4.5, ), "message from Batsim, field 'now': 4.5 is before 5 (time cannot go back)",
             not_before=5)
    assert decode(_msg(5), "Batsim", FROM_BATSIM, not_before=5)["now"] == 5
    assert decode(_msg(-1), "Batsim", FROM_BATSIM, not_before=None)["now"] == -1


def test_the_scheduler_side_allows_its_own_events():
    raw = _msg(1, {"timestamp": 1, "type": "EXECUTE_JOB", "data": {}})
    assert decode(raw, "the scheduler", FROM_SCHEDULER)["events"][0]["type"] == "EXECUTE_JOB"
    with pytest.raises(ProtocolError, match=re.escape(
            "message from the scheduler, events[0], field 'type': unknown event type "
            "'JOB_SUBMITTED'")):
        decode(_msg(1, {"timestamp": 1, "type": "JOB_SUBMITTED"}), "the scheduler",
               FROM_SCHEDULER)


@pytest.mark.parametrize("data, kind, value", [({"n": 3}, int, 3), ({"n": 3.5}, (int, float), 3.5),
                                               ({"n": "x"}, str, "x"), ({"n": 0}, int, 0)])
def test_field_returns_a_value_of_its_type(data, kind, value):
    assert field(data, "n", "JOB_SUBMITTED", kind) == value


@pytest.mark.parametrize("data, kind, shown", [({}, int, "None"), ({"n": True}, int, "True"),
                                               ({"n": False}, (int, str), "False"),
                                               ({"n": "3"}, int, "'3'")])
def test_field_of_the_wrong_type_is_named(data, kind, shown):
    with pytest.raises(ProtocolError) as exc:
        field(data, "n", "events[2]", kind)
    assert str(exc.value) == f"events[2], field 'n': missing or of the wrong type ({shown})"


# -- the link: bounded waits ----------------------------------------------------------------------

zmq = pytest.importorskip("zmq", reason="pyzmq is not installed (pip install 'bbopt[batsim]')")


def test_a_link_carries_messages_both_ways(endpoint):
    from bbopt.interop.batsim.protocol import Link

    rep = Link(endpoint, "rep", 2.0)
    req = Link(endpoint, "req", 2.0)
    try:
        assert (rep.timeout, rep.endpoint) == (2.0, endpoint)
        assert rep.socket.getsockopt(zmq.TYPE) == zmq.REP
        assert req.socket.getsockopt(zmq.TYPE) == zmq.REQ
        for link in (rep, req):
            assert link.socket.getsockopt(zmq.LINGER) == 0
            assert link.socket.getsockopt(zmq.RCVTIMEO) == 2000
            assert link.socket.getsockopt(zmq.SNDTIMEO) == 2000
        req.send({"now": 0, "events": []})
        assert rep.receive("Batsim") == b'{"now":0,"events":[]}'
        rep.send({"now": 0, "events": [event(0, "NOTIFY")]})
        assert json.loads(req.receive("the scheduler"))["events"][0]["type"] == "NOTIFY"
    finally:
        req.close()
        rep.close()
    assert rep.socket.closed and rep.context.closed


@pytest.mark.parametrize("timeout, ms", [(0.0001, 1), (0.0126, 12), (0.25, 250)])
def test_a_link_waits_at_least_a_millisecond(endpoint, timeout, ms):
    from bbopt.interop.batsim.protocol import Link

    link = Link(endpoint, "req", timeout)
    try:
        assert link.socket.getsockopt(zmq.RCVTIMEO) == ms
        assert link.socket.getsockopt(zmq.SNDTIMEO) == ms
    finally:
        link.close()


def test_a_silent_peer_is_an_error_naming_it(endpoint):
    from bbopt.interop.batsim.protocol import Link

    link = Link(endpoint, "rep", 0.05)
    try:
        with pytest.raises(ProtocolError) as exc:
            link.receive("Batsim")
        assert str(exc.value) == f"no message from Batsim on {endpoint} within 0.05 s"
        with pytest.raises(ProtocolError) as exc:  # a REP socket must receive first
            link.send({"now": 0, "events": []})
        assert str(exc.value).startswith(f"cannot send on {endpoint}: ")
    finally:
        link.close()


def test_a_receive_out_of_turn_is_an_error_naming_the_endpoint(endpoint):
    from bbopt.interop.batsim.protocol import Link

    link = Link(endpoint, "req", 0.05)
    try:
        with pytest.raises(ProtocolError) as exc:  # a REQ socket must send first
            link.receive("the scheduler")
        assert str(exc.value).startswith(f"cannot receive on {endpoint}: ")
    finally:
        link.close()


def test_the_scheduler_binds_and_the_simulator_connects():
    import socket

    from bbopt.interop.batsim.protocol import Link

    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        endpoint = f"tcp://127.0.0.1:{s.getsockname()[1]}"
    first = Link(endpoint, "rep", 0.1)
    try:  # one side binds the endpoint: a second binding is refused, any number may connect
        with pytest.raises(ProtocolError) as exc:
            Link(endpoint, "rep", 0.1)
        assert str(exc.value).startswith(f"cannot bind {endpoint}: ")
        Link(endpoint, "req", 0.1).close()
        Link(endpoint, "req", 0.1).close()
    finally:
        first.close()


@pytest.mark.parametrize("kind, verb", [("rep", "bind"), ("req", "connect")])
def test_a_bad_endpoint_is_an_error_naming_it(kind, verb):
    from bbopt.interop.batsim.protocol import Link

    with pytest.raises(ProtocolError) as exc:
        Link("nowhere://x", kind, 0.1)
    assert str(exc.value).startswith(f"cannot {verb} nowhere://x: ")

"""decide(state) as a pure function, and the JSON round trip of states and decisions."""

import json
import math

import pytest

import bbopt
from bbopt import ClusterState, InputError, Job, Platform, RunningJob, UnknownNameError
from bbopt.core import GB
from bbopt.schema import decision_from_dict, dumps, loads_decision, loads_state, state_to_dict


def state():
    p = Platform(4, 10 * GB)
    running = (RunningJob(Job("r", 0, 600, None, 2, 6 * GB), 0.0, (0, 1)),)
    queue = (Job("q1", 10, 100, None, 3, 2 * GB), Job("q2", 20, 50, None, 1, 1 * GB),
             Job("q3", 30, 1000, None, 2, 5 * GB))
    return ClusterState(100.0, p, running, queue)


def test_decide_easy_on_a_state():
    d = bbopt.decide(state(), "fcfs-bb")
    # q1 needs 3 nodes (2 free): reserved at 600; q2 ends before that: backfilled; q3 (BB) no.
    assert d.started_ids == ["q2"]
    assert [(r.job_id, r.start) for r in d.reservations] == [("q1", 600.0)]


def test_unknown_policy_lists_known():
    with pytest.raises(UnknownNameError, match="sjf-bb"):
        bbopt.decide(state(), "sjf")


def test_unknown_option_lists_options():
    with pytest.raises(InputError, match="depth"):
        bbopt.decide(state(), "conservative-bb", dept=3)


def test_state_round_trip():
    s = state()
    back = loads_state(dumps(s))
    assert back == s
    d1, d2 = bbopt.decide(s, "sjf-bb"), bbopt.decide(back, "sjf-bb")
    assert (d1.start, d1.reservations) == (d2.start, d2.reservations)


def test_decision_round_trip():
    d = bbopt.decide(state(), "conservative-bb")
    back = loads_decision(dumps(d))
    assert back.start == d.start and back.reservations == d.reservations
    assert back.stats.status == d.stats.status and back.memory == d.memory


@pytest.mark.parametrize("mutate, path, field", [
    (lambda d: d["queue"][1].pop("walltime"), "$.queue[1]", "walltime"),
    (lambda d: d["queue"][0].update(nodes="x"), "$.queue[0]", "nodes"),
    (lambda d: d["queue"][2].update(bb=-1), "$.queue[2]", "bb"),
    (lambda d: d["running"][0].update(start="soon"), "$.running[0]", "start"),
    (lambda d: d["platform"].update(nodes=0), "$.platform", "nodes"),
    (lambda d: d.update(time=None), "$", "time"),
])
def test_state_errors_name_path_and_field(mutate, path, field):
    d = state_to_dict(state())
    mutate(d)
    with pytest.raises(InputError) as err:
        loads_state(json.dumps(d), "s.json")
    msg = str(err.value)
    assert "s.json" in msg and path in msg and field in msg


def test_bad_json_names_line():
    with pytest.raises(InputError, match="line 2"):
        loads_state('{\n "time": ,}', "s.json")


def test_decision_status_checked():
    with pytest.raises(InputError, match="status"):
        decision_from_dict({"stats": {"status": "GREAT"}})


def test_state_with_io_tree_round_trips_and_decides(io_tree_platform):
    platform = io_tree_platform
    s = ClusterState(0.0, platform, (), (Job("a", 0, 100, None, 1, bandwidth=64e6),))
    back = loads_state(dumps(s))
    assert back.platform.nodes == platform.nodes
    assert list(back.platform.topology.capacity) == list(platform.topology.capacity)
    assert bbopt.decide(back, "io-easy").started_ids == ["a"]


def test_backfill_veto_takes_nothing():
    """A candidate vetoed by ``accept`` (e.g. no SSD nodes) leaves the head's surplus intact."""
    from bbopt.policies.queue import backfill

    s = state()  # 4 nodes, 2 free now; the head reservation leaves 1 node spare at t=600
    long1, long2 = Job("l1", 0, 5000, None, 1), Job("l2", 0, 5000, None, 1)
    got = backfill(s, [long1, long2], 600.0, (2, 4 * GB), (1, 4 * GB),
                   accept=lambda job: job.id != "l1")
    assert [j.id for j in got] == ["l2"]
    assert [j.id for j in backfill(s, [long1, long2], 600.0, (2, 4 * GB), (1, 4 * GB))] == ["l1"]


# --------------------------------------------------------------------------------------------
# every field read with its default and refused naming source, JSON path and field; the JSON
# forms written whole (hand-written expectations)


def _refusal(call, *args, **kwargs):
    with pytest.raises(InputError) as err:
        call(*args, **kwargs)
    e = err.value
    return e.source, e.line, e.field, e.reason


def test_a_job_takes_every_default_and_reads_every_field():
    from bbopt.schema import job_from_dict

    got = job_from_dict({"id": 7, "walltime": 10})
    assert got == Job(id="7", submit=0.0, walltime=10.0, runtime=None, nodes=1, bb=0.0,
                      ssd=0.0, bandwidth=0.0, user=None, priority=0.0, preemptable=False,
                      checkpointable=False)
    assert got.extra == {}
    full = {"id": "a", "submit": 5, "walltime": 10, "runtime": 8, "nodes": 3.0, "bb": 2e9,
            "ssd": 1e9, "bandwidth": 1e6, "user": 42, "priority": 2, "preemptable": True,
            "checkpointable": True, "extra": {"k": 1}}
    got = job_from_dict(full)
    assert got == Job(id="a", submit=5.0, walltime=10.0, runtime=8.0, nodes=3, bb=2e9,
                      ssd=1e9, bandwidth=1e6, user="42", priority=2.0, preemptable=True,
                      checkpointable=True)
    assert got.extra == {"k": 1} and type(got.nodes) is int
    assert job_from_dict({"id": 1, "walltime": 10, "runtime": None, "user": None}).runtime \
        is None
    assert _refusal(job_from_dict, {"walltime": 10}) == ("<json>", "$", "id", "is missing")
    assert _refusal(job_from_dict, {"id": 1}, "$.queue[4]", "q.json") == \
        ("q.json", "$.queue[4]", "walltime", "is missing")


@pytest.mark.parametrize("change, line, field, reason", [
    ({"id": None}, "$.queue[1]", "id", "is missing"),
    ({"id": True}, "$.queue[1]", "id", "must be a string or an integer, got True"),
    ({"id": 1.5}, "$.queue[1]", "id", "must be a string or an integer, got 1.5"),
    ({"preemptable": 1}, "$.queue[1]", "preemptable", "must be true or false, got 1"),
    ({"checkpointable": "yes"}, "$.queue[1]", "checkpointable",
     "must be true or false, got 'yes'"),
    ({"walltime": None}, "$.queue[1]", "walltime", "must be a finite number, got None"),
    ({"walltime": -1}, "$.queue[1]", "walltime",
     "job b: walltime must be in (0, 1e+10] s, got -1.0"),
    ({"submit": "x"}, "$.queue[1]", "submit", "must be a finite number, got 'x'"),
    ({"runtime": "x"}, "$.queue[1]", "runtime", "must be a finite number, got 'x'"),
    ({"nodes": 2.5}, "$.queue[1]", "nodes", "must be an integer, got 2.5"),
    ({"nodes": True}, "$.queue[1]", "nodes", "must be an integer, got True"),
    ({"nodes": None}, "$.queue[1]", "nodes", "must be an integer, got None"),
    ({"bb": float("inf")}, "$.queue[1]", "bb", "must be a finite number, got inf"),
    ({"bb": 10**400}, "$.queue[1]", "bb", "must be a finite number, got an integer of 401 "
                                          "digits"),
    ({"bb": int(1e308)}, "$.queue[1]", "bb", "must be a finite number, got an integer of 309 "
                                             "digits"),
    ({"ssd": "x"}, "$.queue[1]", "ssd", "must be a finite number, got 'x'"),
    ({"bandwidth": "x"}, "$.queue[1]", "bandwidth", "must be a finite number, got 'x'"),
    ({"priority": False}, "$.queue[1]", "priority", "must be a finite number, got False"),
    ({"extra": []}, "$.queue[1].extra", None, "must be an object, got list"),
    ({"walltim": 1}, "$.queue[1]", "walltim", "unknown key; did you mean 'walltime'?"),
])
def test_each_refused_job_field_is_named_with_its_path(change, line, field, reason):
    from bbopt.schema import state_from_dict

    job = {"id": "b", "walltime": 10, **change}
    job = {k: v for k, v in job.items() if v is not None or k != "id"}
    d = {"time": 0, "platform": {"nodes": 4}, "queue": [{"id": "a", "walltime": 5}, job]}
    assert _refusal(state_from_dict, d, "s.json") == ("s.json", line, field, reason)


def test_a_finite_number_is_a_float_and_an_integer_below_1e308():
    from bbopt.schema import job_from_dict

    assert job_from_dict({"id": 1, "walltime": 10, "priority": 1.5e308}).priority == 1.5e308
    assert job_from_dict({"id": 1, "walltime": 10, "priority": int(1e308) - 1}).priority == \
        pytest.approx(1e308)
    assert _refusal(job_from_dict, {"id": 1, "walltime": 10, "priority": float("nan")})[3] == \
        "must be a finite number, got nan"


def _state(**change):
    d = {"time": 0, "platform": {"nodes": 4},
         "running": [{"job": {"id": "r", "walltime": 50, "nodes": 2}, "start": 0,
                      "allocation": [0, 1]}],
         "queue": [{"id": "a", "walltime": 5}]}
    for key, value in change.items():
        where, _, name = key.rpartition("__")
        target = d
        for step in where.split("__") if where else ():
            target = target[int(step)] if step.isdigit() else target[step]
        target[int(name) if name.isdigit() else name] = value
    return d


@pytest.mark.parametrize("change, line, field, reason", [
    ({"version": 2}, "$", "version", "unsupported version 2; this bbopt reads 1"),
    ({"version": "1"}, "$", "version", "unsupported version '1'; this bbopt reads 1"),
    ({"time": None}, "$", "time", "must be a finite number, got None"),
    ({"tim": 1}, "$", "tim", "unknown key; did you mean 'time'?"),
    ({"memory": []}, "$.memory", None, "must be an object, got list"),
    ({"running": {}}, "$", "running", "must be a list, got dict"),
    ({"queue": "a"}, "$", "queue", "must be a list, got str"),
    ({"platform": None}, "$.platform", None, "must be an object, got NoneType"),
    ({"platform__nodes": True}, "$.platform", "nodes", "must be an integer, got True"),
    ({"platform": {"bb": 1}}, "$.platform", "nodes", "is missing"),
    ({"platform__nodes": 0}, "$.platform", "nodes",
     "platform nodes must be an integer in [1, 10,000,000], got 0"),
    ({"platform__bb": "x"}, "$.platform", "bb", "must be a finite number, got 'x'"),
    ({"platform__node_ssd": "x"}, "$.platform", "node_ssd",
     "must be a list of numbers, got 'x'"),
    ({"platform__node_ssd": [1, 2, True, 4]}, "$.platform", "node_ssd[2]",
     "must be a finite number, got True"),
    ({"platform__nodez": 1}, "$.platform", "nodez", "unknown key; did you mean 'nodes'?"),
    ({"running__0": []}, "$.running[0]", None, "must be an object, got list"),
    ({"running__0__begin": 0}, "$.running[0]", "begin", "unknown key; known: allocation, "
                                                        "job, start"),
    ({"running__0__job": {"walltime": 5}}, "$.running[0].job", "id", "is missing"),
    ({"running__0__start": None}, "$.running[0]", "start", "must be a finite number, got None"),
    ({"running__0__allocation": "x"}, "$.running[0]", "allocation",
     "must be a list of integers, got 'x'"),
    ({"running__0__allocation": [0, 1.5]}, "$.running[0]", "allocation[1]",
     "must be an integer, got 1.5"),
    ({"running__0__allocation": [0, True]}, "$.running[0]", "allocation[1]",
     "must be an integer, got True"),
])
def test_each_refused_state_field_is_named_with_its_path(change, line, field, reason):
    from bbopt.schema import state_from_dict

    assert _refusal(state_from_dict, _state(**change), "s.json") == \
        ("s.json", line, field, reason)


def test_a_state_takes_its_defaults_and_reads_every_field():
    from bbopt.schema import state_from_dict

    d = _state(platform={"nodes": 2}, running__0__allocation=[0.0, 1.0])
    del d["queue"]
    s = state_from_dict(d)
    assert s == ClusterState(0.0, Platform(2, 0.0, "cluster"), (RunningJob(
        Job("r", 0.0, 50.0, nodes=2), 0.0, (0, 1)),), ())
    assert s.memory == {} and type(s.running[0].allocation[0]) is int
    s = state_from_dict(_state(version=1, platform={"nodes": 2, "bb": 5, "name": 3,
                                                    "node_ssd": [1, 2]},
                               running__0__allocation=None,
                               memory={"never": {"$float": "Infinity"}, "k": [1]}))
    assert s.platform == Platform(2, 5.0, "3", (1.0, 2.0))
    assert s.running[0].allocation is None and s.queue == (Job("a", 0.0, 5.0),)
    assert s.memory == {"never": math.inf, "k": [1]}
    assert _refusal(state_from_dict, [])[:2] == ("<json>", "$")


def test_an_impossible_state_is_refused_unless_checked_later():
    from bbopt.schema import state_from_dict

    d = _state(queue=[{"id": "r", "walltime": 5}])  # the id of a running job
    with pytest.raises(InputError) as err:
        state_from_dict(d, "s.json")
    assert err.value.source == "s.json" and "'r'" in err.value.reason
    assert [j.id for j in state_from_dict(d, check=False).queue] == ["r"]
    text = json.dumps(d)
    with pytest.raises(InputError):
        loads_state(text)
    assert loads_state(text, check=False).queue[0].id == "r"


def test_a_topology_error_names_the_state_and_its_path():
    from bbopt.schema import state_from_dict

    with pytest.raises(InputError) as err:
        state_from_dict(_state(platform={"nodes": 2, "topology": {"graph": 3}}), "s.json")
    assert (err.value.source, err.value.field) == ("s.json: $.platform.topology", "graph")


def test_a_decision_is_written_whole():
    import numpy as np

    from bbopt.core import Decision, Reservation, SolveStats, Start, Status
    from bbopt.schema import decision_to_dict

    d = Decision(start=(Start("a", (0, 2)), Start("b")),
                 reservations=(Reservation("c", 600.0), Reservation("w", math.inf)),
                 preempt=("p",), alternatives=({"x": np.float64(1.5), 2: (np.int64(3), math.inf)},),
                 stats=SolveStats("cpsat", Status.FEASIBLE, objective=math.inf,
                                  bound=(1.0, np.float64(2.0)), gap=math.nan, wall_time=0.25,
                                  budget=math.inf, audited=True),
                 memory={"never": math.inf, "low": -math.inf, "odd": [math.nan, 1]})
    assert decision_to_dict(d) == {
        "version": 1,
        "start": [{"job_id": "a", "nodes": [0, 2]}, {"job_id": "b", "nodes": None}],
        "reservations": [{"job_id": "c", "start": 600.0, "never_fits": False},
                         {"job_id": "w", "start": None, "never_fits": True}],
        "preempt": ["p"],
        "alternatives": [{"x": 1.5, "2": [3, None]}],
        "stats": {"backend": "cpsat", "status": "FEASIBLE", "objective": None,
                  "bound": [1.0, 2.0], "gap": None, "wall_time": 0.25, "budget": None,
                  "audited": True},
        "memory": {"never": {"$float": "Infinity"}, "low": {"$float": "-Infinity"},
                   "odd": [{"$float": "NaN"}, 1]},
    }
    assert decision_to_dict(Decision())["memory"] is None
    stats = SolveStats(objective=np.float64(3.5), gap=0.125, budget=2)
    assert decision_to_dict(Decision(stats=stats))["stats"] == {
        "backend": "greedy", "status": "OPTIMAL", "objective": 3.5, "bound": None, "gap": 0.125,
        "wall_time": 0.0, "budget": 2, "audited": False}
    assert decision_to_dict(Decision(memory={}))["memory"] == {}


def test_a_state_is_written_whole_and_read_back():
    import numpy as np

    from bbopt.schema import state_to_dict

    s = ClusterState(5.0, Platform(2, 1e9, "p", (3.0, 4.0)),
                     (RunningJob(Job("r", 0.0, 9.0, nodes=2), 1.0, (0, 1)),
                      RunningJob(Job("u", 0.0, 9.0), 2.0)),
                     (Job("q", 1.0, 3.0, extra={"k": 1}),),
                     memory={"t": np.array([1.0, math.inf]), 3: (1, 2)})
    job = {"submit": 0.0, "walltime": 9.0, "runtime": None, "bb": 0.0, "ssd": 0.0,
           "bandwidth": 0.0, "user": None, "priority": 0.0, "preemptable": False,
           "checkpointable": False, "extra": {}}
    assert state_to_dict(s) == {
        "version": 1, "time": 5.0,
        "platform": {"nodes": 2, "bb": 1e9, "name": "p", "node_ssd": [3.0, 4.0],
                     "topology": None},
        "running": [{"job": {"id": "r", **job, "nodes": 2}, "start": 1.0, "allocation": [0, 1]},
                    {"job": {"id": "u", **job, "nodes": 1}, "start": 2.0, "allocation": None}],
        "queue": [{"id": "q", **job, "submit": 1.0, "walltime": 3.0, "nodes": 1,
                   "extra": {"k": 1}}],
        "memory": {"t": [1.0, {"$float": "Infinity"}], "3": [1, 2]},
    }
    assert state_to_dict(ClusterState(0.0, Platform(2), ()))["platform"]["node_ssd"] is None
    back = loads_state(dumps(s), check=False)
    assert back.memory == {"t": [1.0, math.inf], "3": [1, 2]}
    assert back.running == s.running and back.queue == s.queue and back.platform == s.platform


def test_dumps_indents_by_two_in_field_order_and_never_writes_nan():
    from bbopt.core import Decision, SolveStats

    assert dumps(Decision()).startswith('{\n  "version": 1,\n  "start": [],\n  "reservations"')
    assert dumps(Decision(), indent=None).startswith('{"version": 1, "start": [], "reserv')
    with pytest.raises(ValueError, match="not JSON compliant"):
        dumps(Decision(stats=SolveStats(wall_time=math.nan)))


def test_the_float_key_stands_alone_for_a_non_finite_number():
    from bbopt.schema import _memory_from_json

    got = _memory_from_json({"a": [{"$float": "-Infinity"}, {"$float": "NaN"}],
                             "b": {"$float": "Infinity", "c": 1}, "d": {"$float": "Infinity"}})
    assert got["a"][0] == -math.inf and math.isnan(got["a"][1]) and got["d"] == math.inf
    assert got["b"] == {"$float": "Infinity", "c": 1}


def test_a_decision_takes_every_default_and_reads_every_field():
    from bbopt.core import Decision, Reservation, SolveStats, Start, Status

    assert decision_from_dict({}) == Decision()
    assert decision_from_dict({}).stats == SolveStats("greedy", Status.OPTIMAL, None, None,
                                                      None, 0.0, None, False)
    full = {"start": [{"job_id": 1, "nodes": [0.0, 2]}, {"job_id": "b", "nodes": None}],
            "reservations": [{"job_id": "c", "start": 600}, {"job_id": 7, "never_fits": True},
                             {"job_id": "d", "start": 5, "never_fits": False}],
            "preempt": [3, "p"], "alternatives": [{"x": 1}],
            "stats": {"backend": 5, "status": "FALLBACK", "objective": [1, 2], "bound": 3,
                      "gap": 0.5, "wall_time": 2, "budget": 1.5, "audited": 1},
            "memory": {"never": {"$float": "Infinity"}}}
    got = decision_from_dict(full)
    assert got == Decision(
        start=(Start("1", (0, 2)), Start("b")),
        reservations=(Reservation("c", 600.0), Reservation("7", math.inf),
                      Reservation("d", 5.0)),
        preempt=("3", "p"), alternatives=({"x": 1},),
        stats=SolveStats("5", Status.FALLBACK, (1, 2), 3, 0.5, 2.0, 1.5, True),
        memory={"never": math.inf})
    assert type(got.start[0].nodes[0]) is int and type(got.stats.wall_time) is float


@pytest.mark.parametrize("d, line, field, reason", [
    ([], "$", None, "must be an object, got list"),
    ({"start": {}}, "$", "start", "must be a list, got dict"),
    ({"start": [[]]}, "$.start[0]", None, "must be an object, got list"),
    ({"reservations": [{"job_id": "a", "start": 1}, 3]}, "$.reservations[1]", None,
     "must be an object, got int"),
    ({"reservations": [{"job_id": "a", "never_fits": "yes"}]}, "$.reservations[0]",
     "never_fits", "must be true or false, got 'yes'"),
    ({"reservations": [{"job_id": "a"}]}, "$.reservations[0]", "start", "is missing"),
    ({"reservations": [{"job_id": "a", "never_fits": None, "start": 1}]}, "$.reservations[0]",
     "never_fits", "must be true or false, got None"),
    ({"reservations": {}}, "$", "reservations", "must be a list, got dict"),
    ({"stats": []}, "$.stats", None, "must be an object, got list"),
    ({"stats": {"status": "GREAT"}}, "$.stats", "status", "unknown status 'GREAT'"),
    ({"stats": {"status": "optimal"}}, "$.stats", "status", "unknown status 'optimal'"),
    ({"preempt": "a"}, "$", "preempt", "must be a list, got str"),
    ({"alternatives": 1}, "$", "alternatives", "must be a list, got int"),
])
def test_each_refused_decision_field_is_named_with_its_path(d, line, field, reason):
    assert _refusal(decision_from_dict, d, "d.json") == ("d.json", line, field, reason)
    assert _refusal(loads_decision, json.dumps(d), "d.json") == ("d.json", line, field, reason)
    assert _refusal(loads_decision, json.dumps(d))[0] == "<json>"
    assert _refusal(decision_from_dict, d)[0] == "<json>"


def test_text_that_is_no_json_decision_is_refused_naming_the_source():
    assert _refusal(loads_decision, '{"start": [}', "d.json") == \
        ("d.json", 1, None, "not valid JSON: Expecting value (column 12)")


def test_a_nullable_number_given_null_is_null_not_its_default():
    from bbopt.schema import _Reader

    r = _Reader("x")
    assert r.number({"k": None}, "k", "$", 5.0, nullable=True) is None
    assert r.number({}, "k", "$", 5.0, nullable=True) == 5.0
    assert r.number({"k": 2}, "k", "$", 5.0, nullable=True) == 2.0


@pytest.mark.parametrize("text, line, reason", [
    ('{\n "time": ,}', 2, "not valid JSON: Expecting value (column 10)"),
    (b'{"a": "\xff"}', None, "not UTF-8 text (byte 7)"),
    ('{"time": NaN}', None, "NaN is not a JSON number"),
    ('{"time": -Infinity}', None, "-Infinity is not a JSON number"),
    ('{"time": ' + "1" * 5000 + "}", None, "not valid JSON: Exceeds the limit (4300 digits) for "
     "integer string conversion: value has 5000 digits; use sys.set_int_max_str_digits() to "
     "increase the limit"),
    ("[" * 100_000 + "]" * 100_000, None, "not valid JSON: nested too deeply"),
    ('{"a": 1, "a": 2}', "$", "key 'a' appears twice (JSON keeps only the last)"),
])
def test_text_that_is_no_json_state_is_refused_naming_the_source(text, line, reason):
    assert _refusal(loads_state, text, "s.json")[:2] == ("s.json", line)
    assert _refusal(loads_state, text, "s.json")[3] == reason
    assert _refusal(loads_state, text)[0] == "<json>"


def test_a_state_in_bytes_with_or_without_a_byte_order_mark():
    text = json.dumps(_state())
    for data in (text.encode(), b"\xef\xbb\xbf" + text.encode(), "\ufeff" + text):
        assert loads_state(data).platform.nodes == 4

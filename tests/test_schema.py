"""decide(state) as a pure function, and the JSON round trip of states and decisions."""

import json

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

"""The limits of a possible cluster state (bbopt.validation), each checked at the limit, just
inside it and just outside it: a running job may start at the state's time but not after it, the
running jobs may fill the platform's nodes and burst buffer exactly but not more, an allocation
index may be the last node but not one past it, a queued job may be submitted at the state's
time but not after it."""

from __future__ import annotations

import math

import pytest

from bbopt.core import ClusterState, Job, Platform, RunningJob
from bbopt.errors import InputError
from bbopt.validation import validate_state

GB = 1e9


def _job(jid: str = "a", submit: float = 0.0, nodes: int = 1, bb: float = 0.0,
         ssd: float = 0.0) -> Job:
    return Job(jid, submit, 100.0, 100.0, nodes=nodes, bb=bb, ssd=ssd)


def _state(time: float = 10.0, running=(), queue=(), memory=None, nodes: int = 4,
           bb: float = 10 * GB, node_ssd=None) -> ClusterState:
    return ClusterState(time, Platform(nodes, bb, node_ssd=node_ssd), tuple(running),
                        tuple(queue), memory or {})


def _fails(state: ClusterState, path: str, field: str, says: str = "") -> InputError:
    with pytest.raises(InputError) as err:
        validate_state(state, source="state.json")
    assert err.value.line == path and err.value.field == field
    assert "state.json" in str(err.value) and says in str(err.value)
    assert len(str(err.value)) > len("state.json") + len(path) + len(field) + 10
    return err.value


@pytest.mark.parametrize("time", [0.0, 1e-300, 5.0])
def test_time_zero_and_above_is_a_state(time):
    validate_state(_state(time=time))


@pytest.mark.parametrize("time", [-1e-9, math.inf, math.nan])
def test_time_below_zero_or_not_finite_is_refused(time):
    _fails(_state(time=time), "$", "time", f"must be a finite number >= 0, got {time!r}")


@pytest.mark.parametrize("start", [0.0, 9.0, 10.0])
def test_a_running_job_may_start_up_to_the_state_time(start):
    validate_state(_state(running=[RunningJob(_job(), start)]))


def test_a_running_job_starting_just_after_the_state_time_is_refused():
    _fails(_state(running=[RunningJob(_job(), 10.000001)]), "$.running[0]", "start",
           "job a starts at 10, after the state's time 10: a running job cannot start in the "
           "future")


def test_a_running_job_starting_before_zero_is_refused():
    _fails(_state(running=[RunningJob(_job(), -1e-9)]), "$.running[0]", "start",
           "must be a finite number >= 0, got -1e-09")


def test_a_job_submitted_at_its_start_runs_one_submitted_after_it_does_not():
    validate_state(_state(running=[RunningJob(_job(submit=5.0), 5.0)]))
    _fails(_state(running=[RunningJob(_job(submit=5.000001), 5.0)]), "$.running[0].job",
           "submit", "job a was submitted at 5, after its start 5")


@pytest.mark.parametrize("nodes,ok", [(3, True), (4, True), (5, False)])
def test_running_jobs_fill_the_nodes_exactly_but_not_more(nodes, ok):
    running = [RunningJob(_job("a", nodes=2), 0.0), RunningJob(_job("b", nodes=nodes - 2), 0.0)]
    state = _state(running=running)
    if ok:
        validate_state(state)
    else:
        err = _fails(state, "$.running[1]", "job")
        assert "5 nodes" in str(err) and "has 4" in str(err)


@pytest.mark.parametrize("over,ok", [(0.0, True), (10.0, True), (11.0, False)])
def test_running_jobs_fill_the_burst_buffer_within_its_rounding_slack(over, ok):
    # the slack is 1e-9 relative plus 1e-6 B: 10 B over on 10 GB is a rounding of byte sums,
    # 11 B is not
    running = [RunningJob(_job("a", bb=4 * GB), 0.0), RunningJob(_job("b", bb=6 * GB + over), 0.0)]
    state = _state(running=running, bb=10 * GB)
    if ok:
        validate_state(state)
    else:
        _fails(state, "$.running[1]", "job")


def test_the_burst_buffer_slack_is_relative_and_small():
    running = [RunningJob(_job("a", bb=1000.0), 0.0)]
    validate_state(_state(running=running, bb=1000.0))
    _fails(_state(running=running, bb=999.0), "$.running[0]", "job")


@pytest.mark.parametrize("index,ok", [(0, True), (3, True), (4, False), (-1, False)])
def test_allocation_indices_run_from_zero_to_the_last_node(index, ok):
    state = _state(running=[RunningJob(_job(), 0.0, allocation=(index,))])
    if ok:
        validate_state(state)
    else:
        _fails(state, "$.running[0]", "allocation", f"node {index!r} is not an index in 0..3")


@pytest.mark.parametrize("index", [True, 1.0, "1"])
def test_allocation_indices_are_integers(index):
    _fails(_state(running=[RunningJob(_job(), 0.0, allocation=(index,))]), "$.running[0]",
           "allocation", f"node {index!r} is not an index")


def test_an_allocation_lists_exactly_the_job_nodes():
    validate_state(_state(running=[RunningJob(_job(nodes=2), 0.0, allocation=(0, 1))]))
    _fails(_state(running=[RunningJob(_job(nodes=2), 0.0, allocation=(0,))]),
           "$.running[0]", "allocation", "lists 1 nodes for a job of 2")
    _fails(_state(running=[RunningJob(_job(nodes=2), 0.0, allocation=(0, 1, 2))]),
           "$.running[0]", "allocation")


def test_a_node_held_twice_is_named_with_its_other_holder():
    twice = _fails(_state(running=[RunningJob(_job(nodes=2), 0.0, allocation=(1, 1))]),
                   "$.running[0]", "allocation", "node 1 is")
    assert str(twice).endswith("node 1 is twice in this allocation")
    shared = _fails(_state(running=[RunningJob(_job("a"), 0.0, allocation=(2,)),
                                    RunningJob(_job("b"), 0.0, allocation=(2,))]),
                    "$.running[1]", "allocation")
    assert str(shared).endswith("node 2 is also in $.running[0].allocation")


@pytest.mark.parametrize("have,ok", [(2 * GB, True), (2 * GB - 1, False), (3 * GB, True)])
def test_a_node_needs_at_least_the_job_ssd_per_node(have, ok):
    state = _state(running=[RunningJob(_job(ssd=2 * GB), 0.0, allocation=(1,))],
                   node_ssd=(0.0, have, 0.0, 0.0))
    if ok:
        validate_state(state)
    else:
        _fails(state, "$.running[0]", "allocation")


@pytest.mark.parametrize("submit,ok", [(9.0, True), (10.0, True), (10.000001, False)])
def test_a_queued_job_may_be_submitted_up_to_the_state_time(submit, ok):
    state = _state(queue=[_job("early", submit=1.0), _job("q", submit=submit)])
    if ok:
        validate_state(state)
    else:
        _fails(state, "$.queue[1]", "submit", "job q is submitted at 10, after the state's "
               "time 10: a queued job cannot come from the future")


def test_a_job_id_repeated_among_running_jobs_is_named():
    _fails(_state(running=[RunningJob(_job("x"), 0.0), RunningJob(_job("x"), 0.0)]),
           "$.running[1].job", "id", "job id 'x' appears twice (also at $.running[0].job)")


def test_a_queued_job_from_the_future_is_named_not_an_earlier_one_at_the_time():
    _fails(_state(queue=[_job("now", submit=10.0), _job("late", submit=11.0)]), "$.queue[1]",
           "submit", "job late is submitted at 11")


def test_a_burst_buffer_of_zero_bytes_admits_only_the_absolute_rounding():
    validate_state(_state(running=[RunningJob(_job(bb=1e-6), 0.0)], bb=0.0))
    _fails(_state(running=[RunningJob(_job(bb=2e-6), 0.0)], bb=0.0), "$.running[0]", "job",
           "running jobs use 2e-06 B of burst buffer up to here; the platform has 0 B")


def test_running_jobs_over_the_nodes_are_named_with_the_count():
    _fails(_state(running=[RunningJob(_job(nodes=5), 0.0)]), "$.running[0]", "job",
           "running jobs use 5 nodes up to here; the platform has 4")


@pytest.mark.parametrize("node_ssd,says", [(None, "node 1 has 0 B of SSD, job a holds 0.5 B"),
                                           ((0.0, 0.25, 0.0, 0.0),
                                            "node 1 has 0.25 B of SSD, job a holds 0.5 B")])
def test_a_fraction_of_a_byte_of_ssd_needs_a_node_that_has_it(node_ssd, says):
    _fails(_state(running=[RunningJob(_job(ssd=0.5), 0.0, allocation=(1,))], node_ssd=node_ssd),
           "$.running[0]", "allocation", says)


def test_a_repeated_job_id_is_named_at_its_second_place():
    err = _fails(_state(running=[RunningJob(_job("x"), 0.0)], queue=[_job("x")]),
                 "$.queue[0]", "id")
    assert "$.running[0].job" in str(err)


@pytest.mark.parametrize(("running", "queue", "path", "other"), [
    (("x", "x"), ("x",), "$.running[1].job", "$.running[0].job"),
    (("x", "x", "x"), ("y",), "$.running[1].job", "$.running[0].job"),
    (("x", "y"), ("z", "y"), "$.queue[1]", "$.running[1].job")])
def test_a_job_id_repeated_however_often_is_named(running, queue, path, other):
    # ids repeated so that the distinct ids number the running jobs less the queued ones (or
    # any count but their sum): a repeat is found whatever the counts
    state = _state(running=[RunningJob(_job(j), 0.0) for j in running],
                   queue=[_job(j) for j in queue])
    err = _fails(state, path, "id")
    assert str(err).endswith(f"appears twice (also at {other})")


@pytest.mark.parametrize("ssd", [-1.0, math.inf, math.nan])
def test_platform_ssd_sizes_are_finite_bytes_at_or_above_zero(ssd):
    from bbopt.schema import state_from_dict

    doc = {"time": 0, "platform": {"nodes": 4, "bb": 0, "node_ssd": [0.0, ssd, 0.0, 0.0]},
           "running": [], "queue": []}
    with pytest.raises(InputError) as err:
        state_from_dict(doc, source="state.json")
    assert (err.value.line, err.value.field) == ("$.platform", "node_ssd[1]")
    assert "state.json" in str(err.value) and f"got {ssd!r}" in str(err.value)


@pytest.mark.parametrize("value,ok", [(0, True), (3, True), (3.0, True), (-1, False),
                                      (1.5, False), (True, False), (math.inf, False)])
def test_rounds_are_whole_counts_from_zero(value, ok):
    state = _state(memory={"rounds": {"a": value}})
    if ok:
        validate_state(state)
    else:
        _fails(state, "$.memory.rounds", "a", f"must be an integer >= 0, got {value!r}")


@pytest.mark.parametrize("value,ok", [(0.0, True), (-5.0, True), (math.inf, True),
                                      (-math.inf, False), (math.nan, False), ("1", False)])
def test_reservations_are_finite_times_or_never(value, ok):
    state = _state(memory={"reservations": {"a": value}})
    if ok:
        validate_state(state)
    else:
        _fails(state, "$.memory.reservations", "a", f"must be a finite time or +inf, got {value!r}")


@pytest.mark.parametrize("memory,path,field,says", [
    ([], "$", "memory", "must be an object, got list"),
    ({"rounds": []}, "$.memory", "rounds", "must be an object {job id: count}, got list"),
    ({"reservations": 3}, "$.memory", "reservations", "must be an object {job id: time}, got int"),
])
def test_memory_shapes_are_objects(memory, path, field, says):
    state = ClusterState(0.0, Platform(1), (), (), memory)
    _fails(state, path, field, says)


def _counting(monkeypatch) -> list[str | None]:
    """Every module that checks a state calls :func:`validate_state` through its own name:
    count the calls (by source) across all of them."""
    import bbopt.api
    import bbopt.interop.delta
    import bbopt.interop.serve
    import bbopt.schema

    calls: list[str | None] = []

    def counted(state, source=None):
        calls.append(source)
        validate_state(state, source)

    for module in (bbopt.api, bbopt.schema, bbopt.interop.serve, bbopt.interop.delta):
        monkeypatch.setattr(module, "validate_state", counted)
    return calls


def _json_state(**change) -> dict:
    return {"time": 10.0, "platform": {"nodes": 4, "bb": 1e10},
            "running": [{"job": {"id": "r", "submit": 0.0, "walltime": 100.0, "nodes": 2},
                         "start": 0.0, "allocation": [0, 1]}],
            "queue": [{"id": "q", "submit": 5.0, "walltime": 50.0, "nodes": 2}], **change}


def test_decide_checks_a_json_state_once(monkeypatch, tmp_path, capsys):
    import json

    from bbopt.cli import main

    calls = _counting(monkeypatch)
    path = tmp_path / "state.json"
    path.write_text(json.dumps(_json_state()))
    assert main(["decide", "--policy", "fcfs-bb", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["start"] == [{"job_id": "q", "nodes": None}]
    assert len(calls) == 1
    # an impossible state is still refused, naming the file, the JSON path and the field
    path.write_text(json.dumps(_json_state(time=-1.0)))
    calls.clear()
    assert main(["decide", "--policy", "fcfs-bb", str(path)]) == 2
    err = capsys.readouterr().err
    assert "state.json" in err and "$" in err and "'time'" in err and "Traceback" not in err
    assert len(calls) == 1


def test_the_service_checks_a_json_state_once(monkeypatch):
    from bbopt.interop.serve import DecisionService

    calls = _counting(monkeypatch)
    service = DecisionService(warm=())
    reply = service.handle({"id": 1, "policy": "fcfs-bb", "state": _json_state()})
    assert reply["ok"] and [s["job_id"] for s in reply["decision"]["start"]] == ["q"]
    assert calls == ["request"]
    calls.clear()  # the same queue again: its jobs are not read again, the state is checked
    reply = service.handle({"id": 2, "policy": "fcfs-bb", "state": _json_state()})
    assert reply["ok"] and calls == ["request"]
    calls.clear()  # a running job past the platform's nodes: refused, one check
    bad = _json_state()
    bad["running"][0]["allocation"] = [3, 4]
    reply = service.handle({"id": 3, "policy": "fcfs-bb", "state": bad})
    assert not reply["ok"] and reply["error"]["path"].startswith("$.state.running[0]")
    assert calls == ["request"]


def _named(running, bb_nodes=(10 * GB, 10 * GB)) -> ClusterState:
    return ClusterState(10.0, Platform(4, sum(bb_nodes), bb_nodes=bb_nodes), tuple(running),
                        (), {})


@pytest.mark.parametrize(("over", "ok"), [(-1e6, True), (0.0, True), (10.0, True),
                                          (11.0, False), (1e6, False)])
def test_named_pieces_fill_a_bb_node_within_its_rounding_slack(over, ok):
    # two jobs' pieces on BB node 1 (10 GB): full to the byte and 10 B over (1e-9 relative plus
    # 1e-6 B) is rounding; 11 B over is not
    a = RunningJob(_job("a", nodes=2, bb=8 * GB), 0.0, bb_pieces=((0, 4 * GB), (1, 4 * GB)))
    b = RunningJob(_job("b", bb=6 * GB + over), 0.0, bb_pieces=((1, 6 * GB + over),))
    if ok:
        validate_state(_named([a, b]))
    else:
        err = _fails(_named([a, b]), "$.running[1].bb_pieces", "bb_pieces", "BB node 1")
        assert "holds 1e+10 B" in str(err)


@pytest.mark.parametrize(("pieces", "ok"), [
    (((0, 3 * GB), (1, 3 * GB)), True),
    (((0, 3 * GB), (1, 3 * GB + 6.0)), True),    # 6 B over 6 GB: within the rounding slack
    (((0, 3 * GB), (1, 3 * GB + 7.1)), False),   # 7.1 B over: not
    (((0, 3 * GB), (1, 3 * GB - 7.1)), False),
    (((0, 6 * GB),), True),
    (((0, 3 * GB),), False),
])
def test_named_pieces_add_up_to_the_job_bb(pieces, ok):
    state = _named([RunningJob(_job("a", nodes=2, bb=6 * GB), 0.0, bb_pieces=pieces)])
    if ok:
        validate_state(state)
    else:
        _fails(state, "$.running[0].bb_pieces", "bb_pieces", "add up to")


@pytest.mark.parametrize(("node", "ok"), [(0, True), (1, True), (2, False), (-1, False),
                                          (True, False), (1.0, False)])
def test_named_pieces_name_a_bb_node_by_its_index(node, ok):
    state = _named([RunningJob(_job("a", bb=GB), 0.0, bb_pieces=((node, GB),))])
    if ok:
        validate_state(state)
    else:
        _fails(state, "$.running[0].bb_pieces", "bb_pieces", "0..1")


@pytest.mark.parametrize("size", [-1.0, math.inf, math.nan, "1"])
def test_a_named_piece_is_finite_bytes_at_or_above_zero(size):
    state = _named([RunningJob(_job("a", bb=0.0), 0.0, bb_pieces=((0, size),))])
    _fails(state, "$.running[0].bb_pieces", "bb_pieces", ">= 0")


def test_a_zero_byte_piece_of_a_job_without_bb_is_a_state():
    validate_state(_named([RunningJob(_job("a", bb=0.0), 0.0, bb_pieces=((0, 0.0),))]))


def test_named_pieces_on_a_pooled_burst_buffer_are_refused():
    state = _state(running=[RunningJob(_job("a", bb=GB), 0.0, bb_pieces=((0, GB),))])
    _fails(state, "$.running[0].bb_pieces", "bb_pieces", "one pool")


@pytest.mark.parametrize(("piece", "ok"), [(0.0, True), (1e-6, True), (1.1e-6, False)])
def test_pieces_of_a_job_without_bb_may_round_to_a_millionth_of_a_byte(piece, ok):
    # the absolute part of the slack alone (the relative part of 0 B is 0 B), at and above it
    state = _named([RunningJob(_job("a", bb=0.0), 0.0, bb_pieces=((1, piece),))])
    if ok:
        validate_state(state)
    else:
        err = _fails(state, "$.running[0].bb_pieces", "bb_pieces")
        assert str(err).endswith(f"the pieces add up to {piece:.6g} B, job a holds 0 B of "
                                 "burst buffer")


def test_a_bb_node_filled_to_its_slack_exactly_is_a_state():
    full = 10 * GB * (1 + 1e-9) + 1e-6  # the node's capacity with its whole rounding slack
    validate_state(_named([RunningJob(_job("a", bb=full), 0.0, bb_pieces=((0, full),))]))
    over = RunningJob(_job("a", bb=full + 1e-5), 0.0, bb_pieces=((0, full + 1e-5),))
    err = _fails(_named([over]), "$.running[0].bb_pieces", "bb_pieces")
    assert str(err).endswith("running jobs' pieces take 1e+10 B of BB node 0 up to here; it "
                             "holds 1e+10 B")


def test_the_refusals_of_named_pieces_say_what_is_wrong_in_full():
    pooled = _state(running=[RunningJob(_job("a", bb=GB), 0.0, bb_pieces=((0, GB),))])
    err = _fails(pooled, "$.running[0].bb_pieces", "bb_pieces")
    assert str(err).endswith("names BB nodes, but the platform's burst buffer is one pool (no "
                             "bb_nodes)")
    err = _fails(_named([RunningJob(_job("a", bb=GB), 0.0, bb_pieces=((2, GB),))]),
                 "$.running[0].bb_pieces", "bb_pieces")
    assert str(err).endswith("BB node 2 is not an index in 0..1")
    err = _fails(_named([RunningJob(_job("a", bb=GB), 0.0, bb_pieces=((0, -2.0),))]),
                 "$.running[0].bb_pieces", "bb_pieces")
    assert str(err).endswith("a piece must be finite bytes >= 0, got -2.0")


def test_pieces_in_whole_bytes_are_bytes():
    validate_state(_named([RunningJob(_job("a", nodes=2, bb=6 * GB), 0.0,
                                      bb_pieces=((0, 4_000_000_000), (1, 2_000_000_000)))]))


def test_pieces_are_checked_on_a_job_without_an_allocation_and_before_it():
    # the second job's pieces overfill node 1 (its allocation is fine): the pieces are named
    a = RunningJob(_job("a", bb=10 * GB), 0.0, allocation=(0,), bb_pieces=((1, 10 * GB),))
    b = RunningJob(_job("b", bb=GB), 0.0, allocation=(0,), bb_pieces=((1, GB),))
    _fails(_named([a, b]), "$.running[1].bb_pieces", "bb_pieces", "BB node 1")

"""A start that names its BB pieces on named BB nodes (``Start.bb_pieces``): the ledger checks
them (one piece of ``bb / nodes`` bytes per compute node, each on a BB node of the platform, the
pieces on one BB node within its free space and the placement's tolerance) and takes them
instead of placing the job by the platform's rule; the JSON schema carries them."""

from __future__ import annotations

import pytest

from bbopt import Job, Platform, simulate
from bbopt.core import Decision, Start
from bbopt.errors import InputError, InvalidDecision
from bbopt.schema import decision_from_dict, decision_to_dict
from bbopt.simulation.ledger import Ledger

NAMED = Platform(4, 16.0, bb_nodes=(8.0, 8.0))


def test_named_pieces_are_taken_as_named_not_first_fit():
    ledger = Ledger(NAMED)
    a = Job("a", 0.0, 10.0, nodes=2, bb=8.0)  # first fit: both 4 B pieces on BB node 0
    assert ledger.admit(a, None, 0.0, ((1, 4.0), (1, 4.0))) == (0, 1)
    assert ledger.pieces_of(a) == ((1, 4.0), (1, 4.0)) and ledger.bb.free == [8.0, 0.0]
    assert ledger.used_bb == 8.0 and ledger.used_nodes == 2
    ledger.release(a, (0, 1))
    assert ledger.bb.free == [8.0, 8.0] and ledger.pieces_of(a) == ()


def test_named_pieces_are_checked_at_below_and_above_a_bb_nodes_free_space():
    ledger = Ledger(NAMED)
    ledger.admit(Job("x", 0.0, 10.0, nodes=1, bb=4.0), None, 0.0, ((1, 4.0),))
    tol = ledger.bb.tol  # BB node 1 has 4 B free
    for extra, ok in ((0.0, True), (tol / 2, True), (tol, True), (2 * tol, False)):
        job = Job(f"j{extra}", 0.0, 10.0, nodes=1, bb=4.0 + extra)
        if ok:
            ledger.release(job, ledger.admit(job, None, 0.0, ((1, 4.0 + extra),)))
        else:
            with pytest.raises(InvalidDecision, match="pieces on BB node 1 take"):
                ledger.admit(job, None, 0.0, ((1, 4.0 + extra),))
    assert ledger.bb.free[1] == pytest.approx(4.0)


@pytest.mark.parametrize(("job", "pieces", "why"), [
    (Job("a", 0.0, 10.0, nodes=2, bb=8.0), ((0, 4.0),), "names 1 BB pieces for its 2 nodes"),
    (Job("a", 0.0, 10.0, nodes=2, bb=8.0), ((0, 3.0), (0, 5.0)), "names a piece of 3 B"),
    (Job("a", 0.0, 10.0, nodes=2, bb=8.0), ((0, 4.0), (2, 4.0)), "names BB node 2"),
    (Job("a", 0.0, 10.0, nodes=2, bb=8.0), ((0, 4.0), (-1, 4.0)), "names BB node -1"),
    (Job("a", 0.0, 10.0, nodes=1, bb=0.0), ((0, 4.0),), "requests no burst buffer"),
])
def test_named_pieces_that_do_not_match_the_job_are_refused_with_the_reason(job, pieces, why):
    ledger = Ledger(NAMED)
    with pytest.raises(InvalidDecision, match=why) as info:
        ledger.admit(job, None, 7.0, pieces)
    assert info.value.job_id == "a" and info.value.time == 7.0
    # nothing taken
    assert ledger.used_nodes == 0 and ledger.free_nodes == [0, 1, 2, 3]
    assert ledger.bb.free == [8.0, 8.0]


def _why(error: InvalidDecision) -> str:
    """The reason of a refusal, without its place (time and job)."""
    return str(error).split("): ", 1)[1]


def test_the_refusals_say_what_is_wrong_in_full():
    ledger = Ledger(NAMED)
    job = Job("a", 0.0, 10.0, nodes=2, bb=8.0)
    for pieces, why in [
            (((0, 4.0), (2, 4.0)), "names BB node 2; the platform has BB nodes 0-1"),
            (((0, 3.0), (0, 5.0)), "names a piece of 3 B; its pieces are 4 B"),
            (((0, 4.0),), "names 1 BB pieces for its 2 nodes")]:
        with pytest.raises(InvalidDecision) as info:
            ledger.admit(job, None, 0.0, pieces)
        assert _why(info.value) == why
    with pytest.raises(InvalidDecision) as info:
        ledger.admit(Job("z", 0.0, 10.0, nodes=1), None, 0.0, ((0, 4.0),))
    assert _why(info.value) == "names BB pieces, but requests no burst buffer"
    with pytest.raises(InvalidDecision) as info:
        Ledger(Platform(4, 16.0)).admit(job, None, 0.0, ((0, 4.0), (0, 4.0)))
    assert _why(info.value) == "names BB pieces, but the platform's burst buffer is one pool"
    with pytest.raises(InvalidDecision) as info:  # (two pieces that fit alone, not together)
        Ledger(Platform(4, 16.0, bb_nodes=(6.0, 10.0))).admit(job, None, 0.0,
                                                             ((0, 4.0), (0, 4.0)))
    assert _why(info.value) == "its pieces on BB node 0 take 8 B, 6 B are free"


def test_a_piece_is_its_share_of_the_request_within_a_billionth():
    platform = Platform(2, 4e9, bb_nodes=(2e9, 2e9))
    job = Job("a", 0.0, 10.0, nodes=1, bb=1e9)
    # one byte off a gigabyte piece is a billionth: taken; two bytes are not
    assert Ledger(platform).admit(job, None, 0.0, ((0, 1e9 + 1.0),)) == (0,)
    with pytest.raises(InvalidDecision, match="names a piece of"):
        Ledger(platform).admit(job, None, 0.0, ((0, 1e9 + 2.0),))
    # a request of half a byte still has a piece to name
    tiny = Ledger(Platform(2, 4.0, bb_nodes=(2.0, 2.0)))
    assert tiny.admit(Job("t", 0.0, 10.0, nodes=1, bb=0.5), None, 0.0, ((1, 0.5),)) == (0,)
    assert tiny.bb.free == [2.0, 1.5]


def test_a_job_without_bb_may_name_no_pieces():
    ledger = Ledger(NAMED)
    assert ledger.admit(Job("a", 0.0, 10.0, nodes=1), None, 0.0, ()) == (0,)
    assert ledger.pieces_of(Job("a", 0.0, 10.0)) == ()


def test_pieces_on_a_pooled_platform_are_refused_even_on_the_plain_path():
    ledger = Ledger(Platform(4, 16.0))
    with pytest.raises(InvalidDecision, match="one pool"):
        ledger.admit(Job("a", 0.0, 10.0, nodes=1, bb=4.0), None, 0.0, ((0, 4.0),))
    assert ledger.used_nodes == 0 and ledger.used_bb == 0.0


def test_named_pieces_override_the_proximity_placement_and_keep_its_nodes():
    platform = Platform(4, 16.0, bb_nodes=(8.0, 8.0),
                        bb_proximity=((0, 1), (0, 1), (1, 0), (1, 0)))
    ledger = Ledger(platform)
    a = Job("a", 0.0, 10.0, nodes=2, bb=8.0)  # proximity: nodes 0-1, pieces on BB node 0
    assert ledger.admit(a, None, 0.0, ((1, 4.0), (0, 4.0))) == (0, 1)
    assert ledger.pieces_of(a) == ((1, 4.0), (0, 4.0)) and ledger.bb.free == [4.0, 4.0]


class _LastNodeFirst:
    """Starts every waiting job it can, naming its pieces on the highest BB node with room."""

    name = "last-node-first"
    io_aware = False

    def decide(self, state):
        free = list(state.platform.bb_nodes)
        for r in state.running:
            for b, size in r.bb_pieces:
                free[b] -= size
        nodes = state.platform.nodes - sum(r.job.nodes for r in state.running)
        starts = []
        for job in state.queue:
            piece = job.bb / job.nodes
            pieces = []
            for _ in range(job.nodes):
                b = max((b for b in range(len(free)) if free[b] >= piece), default=None)
                if b is None:
                    break
                free[b] -= piece
                pieces.append((b, piece))
            if job.nodes > nodes or len(pieces) < job.nodes:
                for b, size in pieces:
                    free[b] += size
                continue
            nodes -= job.nodes
            starts.append(Start(job.id, None, tuple(pieces)))
        return Decision(start=tuple(starts))


def test_the_engine_takes_the_pieces_a_policy_names():
    jobs = [Job("a", 0.0, 10.0, 10.0, nodes=2, bb=8.0), Job("b", 1.0, 10.0, 10.0, nodes=1, bb=6.0)]
    seen = []
    res = simulate(jobs, NAMED, _LastNodeFirst(),
                   on_decision=lambda s, d: seen.append({r.job.id: r.bb_pieces
                                                         for r in s.running}))
    assert list(res.start) == [0.0, 1.0]
    # a's two pieces on BB node 1 (first fit would have put them on node 0), then b's on node 0
    assert seen[1] == {"a": ((1, 4.0), (1, 4.0))}


def test_a_policy_naming_pieces_that_do_not_fit_stops_the_replay_with_the_reason():
    class Greedy:
        name = "greedy"
        io_aware = False

        def decide(self, state):
            return Decision(start=tuple(Start(j.id, None, ((0, j.bb),)) for j in state.queue))

    jobs = [Job("a", 0.0, 10.0, 10.0, nodes=1, bb=6.0), Job("b", 0.0, 10.0, 10.0, nodes=1, bb=6.0)]
    with pytest.raises(InvalidDecision, match="pieces on BB node 0 take 6 B, 2 B are free"):
        simulate(jobs, NAMED, Greedy())


def test_the_json_decision_carries_the_pieces_only_when_named():
    d = Decision(start=(Start("a", None, ((1, 4.0), (1, 4.0))), Start("b")))
    doc = decision_to_dict(d)
    assert doc["start"][0]["bb_pieces"] == [[1, 4.0], [1, 4.0]]
    assert "bb_pieces" not in doc["start"][1]
    back = decision_from_dict(doc)
    assert back.start == d.start


def test_json_pieces_read_a_whole_float_as_a_bb_node_and_take_any_positive_size():
    doc = {"start": [{"job_id": "a", "nodes": None, "bb_pieces": [[1.0, 0.5], [0, 4e9]]}]}
    (start,) = decision_from_dict(doc).start
    assert start.bb_pieces == ((1, 0.5), (0, 4e9)) and type(start.bb_pieces[0][0]) is int


@pytest.mark.parametrize(("pieces", "field", "why"), [
    ({"a": 1}, "bb_pieces", "must be a list of"),
    ([[0, 4.0, 1]], "bb_pieces[0]", "must be a [BB node, bytes] pair"),
    ([[1.5, 4.0]], "bb_pieces[0]", "must name a BB node index"),
    ([[True, 4.0]], "bb_pieces[0]", "must name a BB node index"),
    ([[0, -4.0]], "bb_pieces[0]", "must give a positive number of bytes, got -4"),
    ([[0, 0]], "bb_pieces[0]", "must give a positive number of bytes, got 0"),
    ([[0, 4.0], [1, "x"]], "bb_pieces[1]", "positive number of bytes"),
])
def test_bad_json_pieces_name_the_path_and_field(pieces, field, why):
    doc = {"start": [{"job_id": "a", "nodes": None, "bb_pieces": pieces}]}
    with pytest.raises(InputError, match="must|positive") as info:
        decision_from_dict(doc, "reply.json")
    text = str(info.value)
    assert "reply.json" in text and "$.start[0]" in text and field in text and why in text

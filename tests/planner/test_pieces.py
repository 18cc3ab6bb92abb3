"""Proximity placement on the Kopanski Dragonfly (``Platform.kopanski(named_bb=True,
bb_placement="proximity")``): a piece goes on its chassis' BB node, then its group's, then any;
compute nodes are taken as consecutive runs; EASY's head holds named compute nodes that a
backfilled job still running at the shadow time must avoid. Hand-worked cases."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.core import GB, dragonfly_proximity
from bbopt.errors import InputError
from bbopt.planner.pieces import (
    contiguous_nodes,
    pieces_of_bytes,
    proximity_pieces,
)
from bbopt.simulation.ledger import Ledger

PROX = Platform.kopanski(named_bb=True, bb_placement="proximity")
FIRST_FIT = Platform.kopanski(named_bb=True)
CHASSIS5 = tuple(range(40, 48))  # chassis 5 (its BB node is 5), group 1: chassis 4-7


def test_dragonfly_layout():
    prox = dragonfly_proximity(96, 8, 4)
    assert len(prox) == 96
    # compute node 41: chassis 5, group 1 (chassis 4, 5, 6, 7), then the rest ascending
    assert prox[41] == (5, 4, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11)
    assert prox[0] == (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
    assert prox[95] == (11, 8, 9, 10, 0, 1, 2, 3, 4, 5, 6, 7)
    assert PROX.bb_proximity == prox and FIRST_FIT.bb_proximity is None


def _ledger_with(free_gb: dict[int, float]) -> Ledger:
    """A proximity ledger whose BB nodes have ``free_gb`` GB free (others 40 GB)."""
    ledger = Ledger(PROX)
    for b, f in free_gb.items():
        ledger.bb_nodes.free[b] = f * GB
    return ledger


def test_a_piece_goes_to_its_chassis_bb_node():
    ledger = _ledger_with({})
    job = Job("j", 0, 10, 10, nodes=2, bb=8 * GB)  # pieces of 4 GB on nodes 40, 41
    ledger.admit(job, CHASSIS5[:2], 0.0)
    assert ledger.pieces_of(job) == ((5, 4 * GB), (5, 4 * GB))


def test_then_the_groups_bb_nodes_then_any():
    # chassis 5's BB node has 5 GB free: one 4 GB piece; the group's first (BB node 4) has
    # 4 GB: one more; BB nodes 6 and 7 are full; so the fourth piece goes to "any": BB node 0.
    ledger = _ledger_with({5: 5, 4: 4, 6: 1, 7: 0.5})
    job = Job("j", 0, 10, 10, nodes=4, bb=16 * GB)
    ledger.admit(job, CHASSIS5[:4], 0.0)
    assert ledger.pieces_of(job) == ((5, 4 * GB), (4, 4 * GB), (0, 4 * GB), (0, 4 * GB))


def test_first_fit_mode_is_unchanged():
    ledger = Ledger(FIRST_FIT)
    job = Job("j", 0, 10, 10, nodes=2, bb=8 * GB)
    ledger.admit(job, CHASSIS5[:2], 0.0)
    assert ledger.pieces_of(job) == ((0, 4 * GB), (0, 4 * GB))


def test_a_start_that_cannot_be_placed_gives_its_nodes_back():
    from bbopt.simulation.ledger import StartRefused

    ledger = _ledger_with(dict.fromkeys(range(12), 3.0))  # 3 GB everywhere: no 4 GB piece
    job = Job("j", 0, 10, 10, nodes=2, bb=8 * GB)
    with pytest.raises(StartRefused):
        ledger.admit(job, CHASSIS5[:2], 0.0)
    assert ledger.free_nodes == list(range(96)) and ledger.used_nodes == 0


def test_contiguous_nodes_by_hand():
    # runs: 0-2 (3), 5-6 (2), 9 (1), 20-27 (8)
    free = [0, 1, 2, 5, 6, 9, *range(20, 28)]
    assert contiguous_nodes(free, 2) == (5, 6)  # the shortest run that holds 2
    assert contiguous_nodes(free, 3) == (0, 1, 2)
    assert contiguous_nodes(free, 1) == (9,)
    assert contiguous_nodes(free, 8) == tuple(range(20, 28))
    # 12: no run holds it: the longest runs first (20-27, 0-2), then 1 of the run 5-6
    assert contiguous_nodes(free, 12) == (0, 1, 2, 5, *range(20, 28))
    assert contiguous_nodes(free, 15) is None
    assert contiguous_nodes([0, 1, 4, 5], 2) == (0, 1)  # equal runs: the lowest


def test_the_engine_takes_consecutive_runs_when_the_policy_names_none():
    ledger = Ledger(PROX)
    ledger.admit(Job("a", 0, 10, 10, nodes=3), None, 0.0)
    ledger.admit(Job("b", 0, 10, 10, nodes=5), None, 0.0)
    ledger.release(Job("a", 0, 10, 10, nodes=3), (0, 1, 2))
    got = ledger.admit(Job("c", 0, 10, 10, nodes=2), None, 0.0)
    assert got == (0, 1)  # the run 0-2 (3) is shorter than 8-95


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0, 40), min_size=12, max_size=12),
       st.integers(1, 30), st.floats(0.01, 40))
def test_proximity_places_exactly_when_first_fit_does(free, nodes, piece_gb):
    # Equal pieces: one job is placeable on a given space by either order exactly when the
    # BB nodes hold `nodes` such pieces; only where they go differs.
    from bbopt.planner.pieces import first_fit_pieces

    free = [f * GB for f in free]
    bb = nodes * piece_gb * GB
    compute = tuple(range(30, 30 + nodes))
    ff = first_fit_pieces(free, nodes, bb, 0.0)
    px = proximity_pieces(free, compute, bb, 0.0, PROX.bb_proximity)
    assert (ff is None) == (px is None)
    if px is not None:
        assert len(px) == nodes
        for b in range(12):
            assert sum(s for k, s in px if k == b) <= free[b] + 1e-6


def _reservation_jobs(c_walltime: float) -> list[Job]:
    # x (8 nodes) gets 0-7, a (40) 8-47, b (48) 48-95. x ends at 50: 0-7 free. At 60 the
    # head h (44 nodes) waits for a (ends at 100); there the free nodes are 0-47, one run, so h
    # is reserved 0-43, which holds every node free now. c (4 nodes) still running at 100
    # would have to use them: refused; the count-based EASY leaves it 48 - 44 = 4 nodes.
    return [Job("x", 0, 50, 50, nodes=8), Job("a", 0, 100, 100, nodes=40),
            Job("b", 0, 1000, 1000, nodes=48), Job("h", 60, 100, 100, nodes=44),
            Job("c", 60, c_walltime, c_walltime, nodes=4)]


def test_a_backfill_that_would_use_the_heads_reserved_nodes_is_refused():
    prox = simulate(_reservation_jobs(200), PROX, "fcfs-easy")
    count = simulate(_reservation_jobs(200), FIRST_FIT, "fcfs-easy")
    assert count.start[4] == 60  # count-based EASY: 4 extra nodes, c backfills
    assert prox.start[3] == 100 and prox.start[4] == 100  # c waits for h's start
    assert prox.allocation[3] == tuple(range(44))
    assert prox.allocation[4] == (44, 45, 46, 47)
    assert prox.refused_starts == 0


def test_a_backfill_that_ends_before_the_shadow_may_use_them():
    prox = simulate(_reservation_jobs(30), PROX, "fcfs-easy")
    assert prox.start[4] == 60 and prox.allocation[4] == (0, 1, 2, 3)
    assert prox.start[3] == 100


def _bb_jobs(c_walltime: float) -> list[Job]:
    # f (11 nodes, 0-10) fills BB nodes 0-10 with 40 GB pieces (chassis 0's nodes: BB 0, the
    # group's 1-3, then 4-7; chassis 1's: 8-10, its own and its group's being full). a (nodes
    # 11-12) puts its 2 GB pieces on the only BB node left, 11: 36 GB free until 80. h (40
    # nodes, pieces of 1 GB) needs 40 GB there: it waits for BB only, until 80 (shadow). c (2
    # nodes, pieces of 4 GB) fits BB 11 now.
    return [Job("f", 0, 1000, 1000, nodes=11, bb=440 * GB),
            Job("a", 0, 80, 80, nodes=2, bb=4 * GB),
            Job("h", 10, 100, 100, nodes=40, bb=40 * GB),
            Job("c", 10, c_walltime, c_walltime, nodes=2, bb=8 * GB)]


@pytest.mark.parametrize("policy", ["fcfs-bb", "sjf-bb"])
def test_bb_aware_easy_refuses_a_late_candidate_that_takes_the_heads_bb(policy):
    # c still running at 80 would leave 32 GB on BB 11: h not placeable: refused. fcfs-easy
    # reserves processors only (shadow now, nodes 13-52): c starts on 53-54, and h then waits
    # for c's end at 260.
    bb_aware = simulate(_bb_jobs(250), PROX, policy)
    easy = simulate(_bb_jobs(250), PROX, "fcfs-easy")
    assert bb_aware.start[2] == 80 and bb_aware.start[3] == 180  # after h (on BB 11)
    assert easy.start[3] == 10 and easy.allocation[3] == (53, 54)
    assert easy.start[2] == 260
    assert bb_aware.refused_starts == 0 and easy.refused_starts == 0


@pytest.mark.parametrize("policy", ["fcfs-bb", "sjf-bb"])
def test_bb_aware_easy_backfills_a_candidate_that_ends_by_the_shadow(policy):
    res = simulate(_bb_jobs(30), PROX, policy)
    assert res.start[3] == 10 and res.start[2] == 80


@pytest.mark.parametrize("policy", ["fcfs", "filler", "fcfs-easy", "fcfs-bb", "sjf-bb",
                                    "plan-2"])
def test_no_start_is_refused_and_every_job_runs(policy):
    from bbopt.workloads.synthetic import kth_like

    jobs = kth_like(150, seed=4)
    res = simulate(jobs, PROX, policy)
    # the jobs no placement can ever hold are rejected as on first-fit named nodes; all others run
    rejected = [s == "rejected" for s in simulate(jobs, FIRST_FIT, "fcfs").state]
    assert [s == "rejected" for s in res.state] == rejected and any(rejected)
    assert res.state.count("finished") == len(jobs) - sum(rejected)
    assert res.refused_starts == 0  # (plan-2 places its starts now as the engine does)


def test_platform_option_validation():
    from bbopt.loading import load_platform

    assert load_platform("kopanski:proximity") == PROX
    assert load_platform("kopanski:named") == FIRST_FIT
    with pytest.raises(InputError):
        Platform.kopanski(bb_placement="proximity")  # needs named BB nodes
    with pytest.raises(InputError):
        Platform.kopanski(named_bb=True, bb_placement="nearest")
    with pytest.raises(InputError):
        Platform(nodes=2, bb=2.0, bb_nodes=(1.0, 1.0), bb_proximity=((0, 1),))


def test_a_hand_built_state_replays_running_pieces_by_proximity():
    # A running job on chassis 5 whose pieces are not given is placed again on its own
    # nodes' BB node, as the engine placed it; fcfs then places a job of chassis 0 beside it.
    from bbopt.core import ClusterState, RunningJob
    from bbopt.planner.pieces import running_pieces

    r = RunningJob(Job("r", 0, 100, 100, nodes=2, bb=8 * GB), 0.0, CHASSIS5[:2])
    state = ClusterState(10.0, PROX, (r,), (Job("q", 10, 50, 50, nodes=2, bb=8 * GB),))
    assert running_pieces(state) == {"r": ((5, 4 * GB), (5, 4 * GB))}
    from bbopt import decide

    d = decide(state, "fcfs")
    assert [(s.job_id, s.nodes) for s in d.start] == [("q", (0, 1))]


# The first-fit rule's edges: a job without BB, a BB node with exactly one piece left (it
# takes it), pieces that fill a BB node exactly (the piece-by-piece path, since the closed
# form's margin is zero there), a one-byte job.


def test_first_fit_runs_at_the_edges():
    from bbopt.planner.pieces import first_fit_pieces, first_fit_runs

    assert first_fit_runs([4.0, 8.0], 3, 0.0, 0.0) == ()
    assert first_fit_pieces([4.0, 8.0], 3, 0.0, 0.0) == ()
    assert first_fit_runs([0.5, 1.0], 1, 1.0, 0.0) == ((1, 1),)  # one byte, not "no BB"
    # BB node 0 has exactly one 4 B piece left: it takes it; node 1 exactly two
    assert first_fit_runs([4.0, 8.0], 3, 12.0, 0.0) == ((0, 1), (1, 2))
    assert first_fit_runs([8.0], 2, 8.0, 0.0) == ((0, 2),)
    assert first_fit_runs([8.0 - 1e-6, 8.0], 2, 8.0, 0.0) == ((0, 1), (1, 1))
    assert first_fit_runs([8.0 - 1e-6], 2, 8.0, 0.0) is None
    # within the tolerance the short node still takes its piece, beyond it not
    assert first_fit_runs([4.0 - 1e-6, 0.0], 1, 4.0, 1e-6) == ((0, 1),)
    assert first_fit_runs([4.0 - 2e-6, 0.0], 1, 4.0, 1e-6) is None


def test_proximity_pieces_at_the_edges():
    prox = dragonfly_proximity(8, 2, 2)  # compute nodes 4, 5: chassis 2 (BB node 2) first
    assert proximity_pieces([10.0, 10.0, 4.0, 10.0], (4, 5), 0.0, 0.0, prox) == ()
    assert proximity_pieces([10.0, 10.0, 1.0, 10.0], (4,), 1.0, 0.0, prox) == ((2, 1.0),)
    # BB node 2 holds exactly two 4 B pieces; a third goes to the next in the group (3)
    assert proximity_pieces([10.0, 10.0, 8.0, 10.0], (4, 5), 8.0, 0.0, prox) == (
        (2, 4.0), (2, 4.0))
    assert proximity_pieces([10.0, 10.0, 8.0, 10.0], (4, 5, 6), 12.0, 0.0, prox) == (
        (2, 4.0), (2, 4.0), (3, 4.0))


def test_contiguous_nodes_of_nothing_is_empty():
    assert contiguous_nodes([0, 1, 2], 0) == ()
    assert contiguous_nodes([0, 1, 2], 3) == (0, 1, 2)
    assert contiguous_nodes([0, 1, 2], 4) is None


def test_proximity_placement_names_the_count_it_needed():
    from bbopt.planner.pieces import place_pieces

    with pytest.raises(ValueError, match="needs the job's 3 compute nodes, got 2"):
        place_pieces([10.0] * 4, 3, 12.0, 0.0, dragonfly_proximity(8, 2, 2), (4, 5))


def _hand_state(running, platform=None):
    from bbopt.core import ClusterState

    platform = platform or Platform(nodes=8, bb=30.0, bb_nodes=(10.0, 10.0, 10.0))
    return ClusterState(100.0, platform, tuple(running), ())


def test_running_pieces_keeps_the_given_ones_and_places_the_others_in_start_order():
    from bbopt.core import RunningJob
    from bbopt.planner.pieces import bb_node_space, running_pieces

    given = RunningJob(Job("given", 0, 500, 500, nodes=1, bb=6.0), 50.0, None,
                       ((1, 6.0),))
    late = RunningJob(Job("late", 0, 500, 500, nodes=2, bb=8.0), 20.0, (0, 1))  # 4 B pieces
    early = RunningJob(Job("early", 0, 500, 500, nodes=1, bb=7.0), 10.0)
    nobb = RunningJob(Job("nobb", 0, 500, 500, nodes=1, bb=0.0), 5.0)
    state = _hand_state([late, nobb, given, early])
    held = running_pieces(state)
    # the given pieces first (node 1 keeps 4 B), then by start: early (7 B on node 0),
    # late (one 4 B piece on node 1's last 4 B, one on node 2: first fit, its compute nodes
    # known but the platform without proximity); the job without BB holds none
    assert held == {"given": ((1, 6.0),), "early": ((0, 7.0),),
                    "late": ((1, 4.0), (2, 4.0))}
    assert bb_node_space(state).free == [3.0, 0.0, 6.0]
    assert bb_node_space(state, {"x": ((2, 1.5),)}).free == [10.0, 10.0, 8.5]
    assert bb_node_space(_hand_state([], Platform(nodes=8, bb=30.0))) is None
    assert running_pieces(_hand_state([late], Platform(nodes=8, bb=30.0))) == {}


def test_a_running_job_that_no_longer_fits_is_spread_over_what_is_free():
    from bbopt.core import RunningJob
    from bbopt.planner.pieces import running_pieces

    full = RunningJob(Job("full", 0, 500, 500, nodes=1, bb=6.0), 0.0, None, ((0, 6.0),))
    # two 6 B pieces fit nowhere (4, 10 B free would take one): spread 12 B as 4 : 10
    wide = RunningJob(Job("wide", 0, 500, 500, nodes=2, bb=12.0), 10.0)
    state = _hand_state([full, wide], Platform(nodes=8, bb=20.0, bb_nodes=(10.0, 10.0)))
    held = running_pieces(state)
    assert held["wide"] == ((0, 12.0 * 4.0 / 14.0), (1, 12.0 * 10.0 / 14.0))
    assert held["full"] == ((0, 6.0),)


def test_spread_counts_only_bb_nodes_with_space_left():
    from bbopt.core import RunningJob
    from bbopt.planner.pieces import bb_node_space, running_pieces

    plat = Platform(nodes=8, bb=30.0, bb_nodes=(10.0, 10.0, 10.0))
    over = RunningJob(Job("over", 0, 500, 500, nodes=1, bb=12.0), 0.0, None, ((0, 12.0),))
    most = RunningJob(Job("most", 0, 500, 500, nodes=1, bb=9.0), 0.0, None, ((1, 9.0),))
    # half a byte placed first fit (node 0, overbooked to -2 B, has no room; node 1 has 1 B);
    # then two 12 B pieces fit no BB node: 24 B spread over node 1 (0.5 B left) and node 2
    # (10 B); node 0 takes nothing
    tiny = RunningJob(Job("tiny", 0, 500, 500, nodes=1, bb=0.5), 5.0)
    wide = RunningJob(Job("wide", 0, 500, 500, nodes=2, bb=24.0), 10.0)
    held = running_pieces(_hand_state([over, most, wide, tiny], plat))
    assert held["tiny"] == ((1, 0.5),)
    assert held["wide"] == ((1, 24.0 * 0.5 / 10.5), (2, 24.0 * 10.0 / 10.5))
    space = bb_node_space(_hand_state([over, most], plat))
    assert space.free == [-2.0, 1.0, 10.0] and space.tol == 10.0 * 1e-12
    # nothing left anywhere: the job holds no piece; half a byte left: it all goes there
    full = RunningJob(Job("full", 0, 500, 500, nodes=1, bb=10.0), 0.0, None, ((0, 10.0),))
    late = RunningJob(Job("late", 0, 500, 500, nodes=2, bb=4.0), 5.0)
    one = Platform(nodes=8, bb=10.0, bb_nodes=(10.0,))
    assert running_pieces(_hand_state([full, late], one))["late"] == ()
    most_of = RunningJob(Job("m", 0, 500, 500, nodes=1, bb=9.5), 0.0, None, ((0, 9.5),))
    assert running_pieces(_hand_state([most_of, late], one))["late"] == ((0, 4.0),)
    # a BB node with exactly nothing left takes no piece of a spread either
    two = Platform(nodes=8, bb=20.0, bb_nodes=(10.0, 10.0))
    wide = RunningJob(Job("wide", 0, 500, 500, nodes=2, bb=24.0), 10.0)
    assert running_pieces(_hand_state([full, wide], two))["wide"] == ((1, 24.0),)


def test_first_fit_counts_pieces_one_by_one_where_rounding_decides():
    from bbopt.planner.pieces import first_fit_runs

    # 0.7 B pieces on 26.599999999999994 B: subtracted one by one, 38 fit (the 38th leaves
    # 0.7 - 4e-15 B short of nothing); the quotient floor((f - piece) / piece) + 1 says 37
    assert first_fit_runs([26.599999999999994, 100.0], 64, 0.7 * 64, 0.0) == ((0, 38), (1, 26))
    # 0.1 B pieces on 2.500000000000001 B: 24 one by one, where the quotient says 25
    assert first_fit_runs([2.500000000000001, 100.0], 40, 0.1 * 40, 0.0) == ((0, 24), (1, 16))


@given(st.lists(st.integers(0, 3), min_size=1, max_size=6),
       st.sampled_from([0.5, 1.0, 3.0, 7.5, 1e9 / 3]))
def test_the_pieces_of_bytes_held_are_listed_one_per_compute_node_in_bb_node_order(counts,
                                                                                  piece):
    """A job holding ``counts[b]`` pieces on BB node ``b`` (bytes summed piece by piece, as a
    profile's demand holds them) gets back one ``(b, bb / nodes)`` per piece, in BB node order
    as first fit lists them, for pieces of half a byte as of a third of a gigabyte; a job
    without BB none."""
    nodes = sum(counts)
    held = []
    for c in counts:
        total = 0.0
        for _ in range(c):
            total += piece
        held.append(total)
    if nodes == 0:
        assert pieces_of_bytes(held, 1, 0.0) == ()
        return
    share = piece * nodes / nodes
    assert pieces_of_bytes(held, nodes, piece * nodes) == tuple(
        (b, share) for b, c in enumerate(counts) for _ in range(c))

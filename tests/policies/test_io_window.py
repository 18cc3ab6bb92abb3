"""io-window (BBSched's window selection placed on Herbein's I/O tree) as a policy: its options
and refusals, what a decision reports (the backend's status, bound, the Pareto set as
alternatives with the one chosen, the time from the decision's own start), and a feasible
decision marked FALLBACK when the backend hands back no selection."""

from __future__ import annotations

import time

import pytest

import bbopt.policies.io_window as io_window
from bbopt import ClusterState, Job, Platform, decide
from bbopt.core import GB, MB, RunningJob, Status
from bbopt.errors import InputError
from bbopt.models.io_window import IOWindowModel
from bbopt.policies import make_policy
from bbopt.policies.io_window import IOWindowPolicy
from bbopt.solvers.base import Budget, Result
from bbopt.topology import herbein_example_topology, platform_from_topology
from tests._platforms import POOL

WIDE = platform_from_topology(herbein_example_topology(network=1e12, pfs=1e12))


def _state(platform=WIDE) -> ClusterState:
    """Two jobs of two nodes, each fitting alone or together on the tree."""
    a = Job("A", 0, 100, runtime=100, nodes=2, bandwidth=100 * MB)
    b = Job("B", 0, 100, runtime=100, nodes=2, bandwidth=150 * MB)
    return ClusterState(0.0, platform, queue=(a, b))


def test_defaults_and_options():
    p = IOWindowPolicy()
    assert (p.name, p.window, p.starvation, p.backend, p.budget_seconds, p.seed) == (
        "io-window", 20, 50, "cpsat", 2.0, 0)
    assert p.objectives == ("nodes", "bb") and p.backend_options == {}
    assert p.budget == Budget.of(2.0, None, "wall")
    q = IOWindowPolicy(window=1, budget=0.5, deterministic=3.0, seed=7,
                       objectives=["bb"], backend_options={"workers": 1})
    assert (q.window, q.budget_seconds, q.seed, q.objectives) == (1, 0.5, 7, ("bb",))
    assert q.budget == Budget.of(0.5, 3.0, "wall") and q.backend_options == {"workers": 1}
    assert make_policy("io-window").name == "io-window"
    for bad in (0, -1):
        with pytest.raises(InputError) as err:
            IOWindowPolicy(window=bad)
        assert (err.value.reason, err.value.field) == ("window must be >= 1", "window")


def test_a_platform_without_a_tree_is_refused_naming_the_policy():
    with pytest.raises(InputError, match="policy 'io-window' needs a platform") as err:
        decide(_state(POOL), IOWindowPolicy())
    assert err.value.field == "topology"


def test_a_decision_reports_the_front_and_the_choice():
    before = time.perf_counter()
    d = decide(_state(), "io-window")
    elapsed = time.perf_counter() - before
    assert sorted(s.job_id for s in d.start) == ["A", "B"]
    assert all(len(s.nodes) == 2 for s in d.start)
    assert d.stats.backend == "cpsat" and d.stats.status is Status.OPTIMAL
    assert 0.0 <= d.stats.wall_time <= elapsed and d.stats.budget == 2.0
    chosen = [a for a in d.alternatives if a["chosen"]]
    assert len(chosen) == 1 and sorted(chosen[0]["jobs"]) == ["A", "B"]
    assert chosen[0]["objectives"] == {"nodes": 4.0, "bb": 0.0}
    assert d.stats.objective == (4.0, 0.0)
    assert d.memory == {"rounds": {}}


def test_a_window_of_one_selects_the_first_job_and_reserves_the_next():
    """A alone is selected; B, outside the window, cannot start beside it (A's nodes are
    those the selection placed, not the greedy's) and holds EASY's reservation at A's end."""
    d = decide(_state(), IOWindowPolicy(window=1))
    assert [a["jobs"] for a in d.alternatives if a["chosen"]] == [["A"]]
    assert [s.job_id for s in d.start] == ["A"]
    assert [(r.job_id, r.start) for r in d.reservations] == [("B", 100.0)]


def test_a_backend_that_finds_nothing_still_gives_a_feasible_decision(recording_backend):
    """The backend answers no selection (it cannot, forced jobs fitting together, but a
    user's backend may): the model's own fallback is placed and the decision says FALLBACK."""
    recording_backend(IOWindowModel, lambda m: Result(Status.INFEASIBLE, None, backend="records"))
    d = decide(_state(), IOWindowPolicy(backend="records"))
    assert d.stats.status is Status.FALLBACK and d.stats.backend == "records"
    assert d.stats.objective == (2.0, 0.0)  # (Herbein's first fit: A on nodes 0 and 1)
    assert [(s.job_id, s.nodes) for s in d.start] == [("A", (0, 1))]
    assert [(r.job_id, r.start) for r in d.reservations] == [("B", 100.0)]
    assert d.alternatives == ()


def _fallback_answer(model, **fields) -> Result:
    x = model.fallback()
    return Result(Status.FEASIBLE, x, tuple(model.evaluate(x)), backend="records", **fields)


def test_the_backend_is_given_the_seed_the_budget_and_the_options(recording_backend):
    seen = recording_backend(IOWindowModel, lambda m: _fallback_answer(
        m, bound=(9.0, 9.0), info={"k": 1}))
    d = decide(_state(), IOWindowPolicy(backend="records", seed=11, budget=1.5,
                                        backend_options={"depth": 3}))
    assert seen["seed"] == 11 and seen["options"] == {"form": "pareto", "depth": 3}
    assert 0.0 < seen["budget"].seconds < 1.5
    assert d.stats.status is Status.FEASIBLE and d.stats.backend == "records"
    assert d.stats.bound == (9.0, 9.0)
    assert [a["chosen"] for a in d.alternatives] == [True]
    assert d.stats.budget == 1.5


def test_a_later_job_backfills_beside_the_selection_on_nodes_it_names():
    """Window of one: A selected (nodes 2, 3); B holds the reservation at 100 s; C (one node,
    50 s) backfills on node 0, ending before B's reservation."""
    c = Job("C", 0, 50, runtime=50, nodes=1, bandwidth=1 * MB)
    d = decide(ClusterState(0.0, WIDE, queue=(*_state().queue, c)), IOWindowPolicy(window=1))
    assert [(s.job_id, s.nodes) for s in d.start] == [("A", (2, 3)), ("C", (0,))]
    assert [(r.job_id, r.start) for r in d.reservations] == [("B", 100.0)]


def test_a_job_no_tree_can_hold_gets_no_reservation():
    x = Job("X", 0, 100, runtime=100, nodes=1, bandwidth=1e15)
    d = decide(ClusterState(0.0, WIDE, queue=(x,)), IOWindowPolicy())
    assert d.start == () and d.reservations == ()


def test_an_empty_queue_names_no_backend():
    d = decide(ClusterState(0.0, WIDE, queue=()), IOWindowPolicy())
    assert (d.stats.backend, d.stats.status, d.stats.objective) == ("none", Status.FEASIBLE,
                                                                    None)
    assert d.start == () and d.reservations == () and d.alternatives == ()


def test_the_backend_gets_the_budget_less_its_tail_and_the_time_spent(monkeypatch,
                                                                       recording_backend):
    """The wall budget less a tenth (the decision's tail) less the time the decision has
    spent, including the check before it (here 5 s more than the machine's clock: all but
    the least budget gone, and a decision reporting at least those 5 s)."""
    seen = recording_backend(IOWindowModel, _fallback_answer)
    decide(_state(), IOWindowPolicy(backend="records", budget=0.5))
    fresh = seen["budget"].seconds
    monkeypatch.setattr(io_window, "decision_elapsed", lambda: 5.0)
    late = IOWindowPolicy(backend="records", budget=20.0).decide(_state())
    assert 0.3 < fresh <= 0.5 * 0.9
    assert 12.9 < seen["budget"].seconds <= 20.0 * 0.9 - 5.0
    assert late.stats.wall_time >= 5.0


R_NODES = RunningJob(Job("R", 0, 1000, runtime=1000, nodes=2, bandwidth=1 * MB), 0.0, (0, 1))
BB_TREE = Platform(nodes=4, bb=100 * GB, topology=WIDE.topology, name="bb-tree")


def test_the_utilisations_shown_are_fractions_of_the_whole_machine():
    """Two of the four nodes run R: A's two nodes are half the machine (not all of what is
    free); a platform without BB shows none used; with 100 GB, 60 of them held by a running
    job, A's 40 GB are 0.4 of the machine's BB (not all of what is free)."""
    a = _state().queue[0]
    d = decide(ClusterState(0.0, WIDE, running=(R_NODES,), queue=(a,)), IOWindowPolicy())
    assert [(x["jobs"], x["utilization"]) for x in d.alternatives] == [
        (["A"], {"nodes": 0.5, "bb": 0.0})]
    held = RunningJob(Job("R", 0, 1000, runtime=1000, nodes=1, bb=60 * GB, bandwidth=1 * MB),
                      0.0, (0,))
    a40 = Job("A", 0, 100, runtime=100, nodes=2, bb=40 * GB, bandwidth=1 * MB)
    d = decide(ClusterState(0.0, BB_TREE, running=(held,), queue=(a40,)), IOWindowPolicy())
    assert [(x["jobs"], x["utilization"]) for x in d.alternatives] == [
        (["A"], {"nodes": 0.5, "bb": 0.4})]


def test_the_window_is_scored_on_the_policys_objectives():
    a = _state().queue[0]
    d = decide(ClusterState(0.0, WIDE, running=(R_NODES,), queue=(a,)),
               IOWindowPolicy(objectives=["nodes"]))
    assert [x["objectives"] for x in d.alternatives] == [{"nodes": 2.0}]


def test_no_job_is_selected_beyond_the_free_bb():
    full = RunningJob(Job("R", 0, 1000, runtime=1000, nodes=1, bb=100 * GB, bandwidth=1 * MB),
                      0.0, (0,))
    b = Job("B", 0, 100, runtime=100, nodes=1, bb=1.0, bandwidth=1 * MB)
    d = decide(ClusterState(0.0, BB_TREE, running=(full,), queue=(b,)), IOWindowPolicy())
    assert d.start == () and [x["jobs"] for x in d.alternatives] == [[]]


def test_a_starving_job_over_a_full_pool_blocks_beyond_the_fit_slack_only():
    """The pool's 100 B are all held by R (slack 1e-7 B). A starving B asking 1e-7 B is
    forced and starts (within the slack); asking 2e-7 B or 1 B it cannot start, so it is the
    blocker: no window is optimised (the decision names "starvation", no front) and B holds
    the reservation at R's end. A full pool read as 1 B free would force the 1 B job instead."""
    tiny = Platform(nodes=4, bb=100.0, topology=WIDE.topology, name="tiny-bb")
    full = RunningJob(Job("R", 0, 1000, runtime=1000, nodes=1, bb=100.0, bandwidth=1 * MB),
                      0.0, (0,))

    def decision(bb: float):
        b = Job("B", 0, 100, runtime=100, nodes=1, bb=bb, bandwidth=1 * MB)
        state = ClusterState(0.0, tiny, running=(full,), queue=(b,),
                             memory={"rounds": {"B": 50}})
        return decide(state, IOWindowPolicy())

    d = decision(1e-7)
    assert [(s.job_id, s.nodes) for s in d.start] == [("B", (1,))] and d.reservations == ()
    assert (d.stats.backend, d.memory) == ("cpsat", {"rounds": {}})
    for over in (2e-7, 1.0):
        d = decision(over)
        assert d.start == () and d.alternatives == ()
        assert [(r.job_id, r.start) for r in d.reservations] == [("B", 1000.0)]
        assert (d.stats.backend, d.stats.status) == ("starvation", Status.FEASIBLE)
        assert d.memory == {"rounds": {"B": 51}}

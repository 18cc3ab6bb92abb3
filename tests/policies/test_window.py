"""BBSched and its baselines as policies (Fan et al., HPDC 2019, Sections 3.1, 3.2.4, 4.3, 5)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bbopt
from bbopt.analysis.metrics import summarize
from bbopt.core import GB, TB, ClusterState, Job, Platform, RunningJob
from bbopt.models.window import WindowModel
from bbopt.policies.window import bbsched_rule
from bbopt.policies.window_common import DECISION_RULES
from bbopt.solvers import Solution
from bbopt.workloads.synthetic import kth_like

WINDOW_POLICIES = ["bbsched", "naive", "weighted", "weighted-cpu", "weighted-bb",
                   "constrained-cpu", "constrained-bb", "bin-packing"]


def table1_state(memory=None) -> ClusterState:
    jobs = [Job(f"J{i + 1}", 0.0, 3600.0, nodes=n, bb=b * TB)
            for i, (n, b) in enumerate([(80, 20), (10, 85), (40, 5), (10, 0), (20, 0)])]
    return ClusterState(0.0, Platform(100, 100 * TB), (), tuple(jobs), memory or {})


def test_table1_naive_and_decision_maker():
    assert bbopt.decide(table1_state(), "naive").started_ids == ["J1", "J4"]
    d = bbopt.decide(table1_state(), "bbsched")
    assert sorted(d.started_ids) == ["J2", "J3", "J4", "J5"]
    assert len(d.alternatives) == 2
    chosen = [a for a in d.alternatives if a["chosen"]]
    assert chosen[0]["jobs"] == ["J2", "J3", "J4", "J5"]
    assert chosen[0]["utilization"] == {"nodes": 0.8, "bb": 0.9}
    assert d.stats.backend == "cpsat" and d.stats.status is bbopt.Status.OPTIMAL
    # The paper's configuration (NSGA-II) reaches the same decision.
    assert sorted(bbopt.decide(table1_state(), "bbsched-nsga2").started_ids) == [
        "J2", "J3", "J4", "J5"]
    # Section 1: constrained, weighted-cpu and bin packing pick {J1, J5}.
    for name in ("constrained-cpu", "weighted-cpu", "bin-packing"):
        assert sorted(bbopt.decide(table1_state(), name).started_ids) == ["J1", "J5"], name


def test_decision_rule_is_pluggable():
    d = bbopt.decide(table1_state(), "bbsched", decision_rule="max-nodes")
    assert sorted(d.started_ids) == ["J1", "J5"]
    d = bbopt.decide(table1_state(), "bbsched", decision_rule=lambda front, model: 0)
    assert sorted(d.started_ids) == ["J1", "J5"]  # the front is sorted by decreasing nodes


def test_max_node_ties_go_to_the_jobs_nearest_the_window_front():
    """Three 5-node jobs, 10 nodes free, no BB: every pair fills the machine, so the max-node
    solutions tie on nodes and BB. The decision maker (and the max-nodes rule) take the pair
    nearest the window front, {J1, J2} (order weights 3 + 2), not {J2, J3} or {J1, J3}, in
    whatever order the front lists them."""
    m = WindowModel(nodes=[5, 5, 5], bb=[0, 0, 0], free_nodes=10, free_bb=1.0,
                    objectives=("nodes", "bb"))
    pairs = [np.array(x, bool) for x in ([0, 1, 1], [1, 0, 1], [1, 1, 0])]
    for rot in range(3):
        front = [Solution(x, (10.0, 0.0)) for x in pairs[rot:] + pairs[:rot]]
        want = (2 - rot) % 3
        assert bbsched_rule(front, m) == want, rot
        assert DECISION_RULES["max-nodes"](front, m) == want, rot
    # Among equal nodes and order, the most BB.
    m2 = WindowModel(nodes=[5, 5], bb=[1, 3], free_nodes=10, free_bb=4.0,
                     objectives=("nodes", "bb"), order=[1, 1])
    front = [Solution(np.array([1, 0], bool), (5.0, 1.0)),
             Solution(np.array([0, 1], bool), (5.0, 3.0))]
    assert bbsched_rule(front, m2) == 1


def test_four_objective_rule():
    m = WindowModel(nodes=[1, 1], bb=[0, 0], free_nodes=10, free_bb=1.0,
                    ssd=[0, 0], free_node_ssd=[1.0] * 10,
                    objectives=("nodes", "bb", "ssd", "ssd_waste"))
    base = Solution(np.array([1, 1], bool), (10.0, 0.0, 0.0, -5.0))
    other = Solution(np.array([1, 0], bool), (9.0, 0.2, 0.1, 0.0))  # loss 0.1, gains 0.3+0.5
    assert bbsched_rule([base, other], m) == 1
    weak = Solution(np.array([1, 0], bool), (9.0, 0.1, 0.0, -4.8))  # gains 0.12 < 4 x 0.1
    assert bbsched_rule([base, weak], m) == 0


def test_starving_job_is_selected():
    # Unforced, both policies start J2-J5 (J1 waits one round). J1 has waited 50 rounds: it is
    # forced into the selection. Beside it, bbsched maximises nodes (J5: 100 nodes);
    # constrained-bb maximises BB, a tie (J1's 20 TB) broken towards the window front (J4).
    for name, other in (("bbsched", "J5"), ("constrained-bb", "J4")):
        assert sorted(bbopt.decide(table1_state(), name).started_ids) == ["J2", "J3", "J4", "J5"]
        d = bbopt.decide(table1_state({"rounds": {"J1": 50}}), name)
        assert sorted(d.started_ids) == ["J1", other], name
        # Every window job not started spent one more round there; J1's counter is gone.
        assert d.memory["rounds"] == {j: 1 for j in ("J2", "J3", "J4", "J5") if j != other}


def test_decision_rule_factor_is_two():
    """Fan et al., Section 3.2.4: leave the max-node solution only for a BB gain above twice the
    node loss. Window {J1 (80 nodes, 10 TB), J2 (70 nodes, x TB)} on 100 nodes, 100 TB: the
    front is {J1} and {J2}; loss 0.1. x = 25: gain 0.15 (above 1x, below 2x): keep J1.
    x = 35: gain 0.25 > 0.2: take J2."""
    def state(x):
        jobs = (Job("J1", 0.0, 3600.0, nodes=80, bb=10 * TB),
                Job("J2", 0.0, 3600.0, nodes=70, bb=x * TB))
        return ClusterState(0.0, Platform(100, 100 * TB), (), jobs)

    assert bbopt.decide(state(25), "bbsched").started_ids == ["J1"]
    assert bbopt.decide(state(35), "bbsched").started_ids == ["J2"]
    assert bbopt.decide(state(25), "bbsched", decision_rule=lambda f, m: bbsched_rule(
        f, m, factor=1.0)).started_ids == ["J2"]


def test_cqsim_decision_rule_is_relative_to_the_bb_in_use():
    """The rule of the authors' simulator (CQSim, branch BBSched, ``best_from_ga``): leave the
    max-node solution for one whose system BB utilisation is more than 30 % above it, with a
    node loss below 0.1. Window {J1 (80 nodes, 10 TB), J2 (n nodes, x TB)} on 100 nodes, 100 TB.
    """
    def state(n, x, running_bb=0.0):
        jobs = (Job("J1", 0.0, 3600.0, nodes=80, bb=10 * TB),
                Job("J2", 0.0, 3600.0, nodes=n, bb=x * TB))
        running = (RunningJob(Job("R", 0.0, 7200.0, nodes=1, bb=running_bb * TB), 0.0),) \
            if running_bb else ()
        return ClusterState(0.0, Platform(100, 100 * TB), running, jobs)

    def started(*args):
        return bbopt.decide(state(*args), "bbsched", decision_rule="cqsim").started_ids

    # loss 0.09; BB 0.10 -> 0.13 is a gain of exactly 30 %: kept; 0.14 switches
    assert started(71, 13) == ["J1"]
    assert started(71, 14) == ["J2"]
    # the paper's rule (gain > 2 x loss = 0.18) keeps J1 on the same window
    assert bbopt.decide(state(71, 14), "bbsched").started_ids == ["J1"]
    # a node loss of 0.1 is never accepted, whatever the gain (the paper's rule switches)
    assert started(70, 50) == ["J1"]
    assert bbopt.decide(state(70, 50), "bbsched").started_ids == ["J2"]
    # 50 TB already in use: 0.60 -> 0.64 is below 30 %, 0.60 -> 0.79 above
    assert started(71, 14, 50.0) == ["J1"]
    assert started(71, 29, 50.0) == ["J2"]


@pytest.mark.parametrize("policy", ["bbsched", "constrained-cpu"])
def test_starvation_counter_grows_across_rounds_and_forces_the_job(policy):
    """X (6 of 10 nodes) waits while every round a fresh pair of 5-node jobs fills the machine
    exactly (the node-maximising choice). Its counter grows by one per round it is passed over;
    with ``starvation=3``, the fourth round forces X (and the pair no longer fits beside it)."""
    platform = Platform(10, TB)
    x = Job("X", 0.0, 3600.0, nodes=6)
    memory: dict = {}
    seen = []
    for k in range(4):
        pair = (Job(f"A{k}", 0.0, 3600.0, nodes=5), Job(f"B{k}", 0.0, 3600.0, nodes=5))
        d = bbopt.decide(ClusterState(100.0 * k, platform, (), (x, *pair), memory), policy,
                         starvation=3)
        memory = d.memory
        seen.append((sorted(d.started_ids), memory["rounds"].get("X")))
    assert seen == [([f"A{k}", f"B{k}"], k + 1) for k in range(3)] + [(["X"], None)]

def test_dependencies_keep_jobs_out_of_the_window():
    jobs = list(table1_state().queue)
    jobs[1] = Job("J2", 0.0, 3600.0, nodes=10, bb=85 * TB, extra={"dependencies": ["J9"]})
    running = (RunningJob(Job("J9", 0.0, 100.0, nodes=1), 0.0),)
    state = ClusterState(0.0, Platform(101, 100 * TB), running, tuple(jobs))
    assert "J2" not in bbopt.decide(state, "bbsched").started_ids


@st.composite
def states(draw, starver: bool = False):
    """A random state; with ``starver``, a job that has starved (50 rounds) and fits what is free
    now sits among the first 8 waiting jobs, behind jobs that do not starve."""
    n_nodes = draw(st.integers(8, 64))
    platform = Platform(n_nodes, draw(st.integers(10, 200)) * GB)
    k = draw(st.integers(1, 30))
    jobs = tuple(
        Job(str(i), 0.0, float(draw(st.integers(60, 7200))),
            nodes=draw(st.integers(1, n_nodes)),
            bb=draw(st.integers(0, int(platform.bb / GB))) * GB)
        for i in range(k))
    # Some of them are running already (as long as they fit).
    running, used_n, used_b = [], 0, 0.0
    for job in jobs[: draw(st.integers(0, k // 2))]:
        if used_n + job.nodes < n_nodes and used_b + job.bb <= platform.bb:
            running.append(RunningJob(job, 0.0))
            used_n += job.nodes
            used_b += job.bb
    waiting = [j for j in jobs if all(r.job is not j for r in running)]
    if not starver:
        starving = {j.id: 50 for j in waiting if draw(st.booleans()) and draw(st.booleans())}
        return ClusterState(10.0, platform, tuple(running), tuple(waiting), {"rounds": starving})
    free_gb = int((platform.bb - used_b) / GB)
    s = Job("S", 0.0, float(draw(st.integers(60, 7200))),
            nodes=draw(st.integers(1, n_nodes - used_n)), bb=draw(st.integers(0, free_gb)) * GB)
    pos = draw(st.integers(0, min(7, len(waiting))))
    waiting.insert(pos, s)
    starving = {"S": 50, **{j.id: 50 for j in waiting[pos + 1:] if draw(st.booleans())}}
    return ClusterState(10.0, platform, tuple(running), tuple(waiting), {"rounds": starving})


def check_capacity(state, d):
    by_id = {j.id: j for j in state.queue}
    started = [by_id[s] for s in d.started_ids]
    free_n, free_b = state.free()
    assert len(set(d.started_ids)) == len(started)
    assert sum(j.nodes for j in started) <= free_n
    assert sum(j.bb for j in started) <= free_b * (1 + 1e-9)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states(), st.sampled_from(WINDOW_POLICIES))
def test_decisions_respect_capacity(state, policy):
    check_capacity(state, bbopt.decide(state, policy, window=8))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(states(starver=True), st.sampled_from(WINDOW_POLICIES))
def test_first_starving_job_that_fits_always_starts(state, policy):
    d = bbopt.decide(state, policy, window=8)
    check_capacity(state, d)
    assert "S" in d.started_ids


def test_window_policies_schedule_a_small_trace_by_hand():
    """Every window policy on 4 nodes, 10 TB (no tick, so decisions at submissions and ends).
    t=0: a (2 nodes, 8 TB, 100 s) and b (2 nodes, 0 TB, 50 s) arrive: both fit, all start.
    t=10: c (2 nodes, 4 TB, 10 s) arrives: no node free. It becomes the EASY head at b's end
    (50). t=50: b ends; c needs 4 TB, 2 free until a ends at 100: it waits, reserved at 100;
    d (arrived 20; 2 nodes, 0 TB, 50 s) ends at 100 = shadow: backfilled at 50. t=100: c."""
    jobs = [Job("a", 0, 100, 100, 2, 8 * TB), Job("b", 0, 50, 50, 2, 0.0),
            Job("c", 10, 10, 10, 2, 4 * TB), Job("d", 20, 50, 50, 2, 0.0)]
    for policy in WINDOW_POLICIES + ["bbsched-nsga2"]:
        opts = {"backend_options": {"generations": 50}} if policy == "bbsched-nsga2" else {}
        res = bbopt.simulate(jobs, Platform(4, 10 * TB), policy, options=opts)
        assert res.start == [0, 0, 100, 50], policy


def test_ssd_extension_places_jobs_on_large_enough_ssds():
    rng = np.random.default_rng(0)
    node_ssd = tuple(float(s) for s in np.repeat([128 * GB, 256 * GB], 48))
    platform = Platform(96, 480 * GB, node_ssd=node_ssd)
    jobs = [Job(j.id, j.submit, j.walltime, j.runtime, j.nodes, j.bb,
                ssd=float(rng.choice([0, 100, 200]) * GB)) for j in kth_like(120, seed=3)]
    jobs = [j for j in jobs if platform.why_never_fits(j) is None]
    seen = []

    def check(state, decision):
        for s in decision.start:
            job = next(j for j in state.queue if j.id == s.job_id)
            assert s.nodes is not None
            assert all(node_ssd[k] >= job.ssd for k in s.nodes)
        seen.append(decision)

    res = bbopt.simulate(jobs, platform, "bbsched", on_decision=check)
    assert summarize(res)["finished"] == len(jobs)
    assert any(len(d.alternatives) > 1 for d in seen)


def test_wfp_order_puts_the_highest_utility_job_at_the_window_front():
    # At t = 3600: A (1 node, 1 h asked, waited 1 h) scores 1; B (64 nodes, 4 h asked, waited
    # 1 h) scores 64 / 64 = 1 too but arrived later; C (32 nodes, 1 h asked, waited 0.5 h)
    # scores 32 / 8 = 4. With one free node and window 1, WFP's window holds C alone, which
    # does not fit: nothing is selected and C holds the EASY reservation, while FCFS starts A.
    jobs = (Job("A", 0.0, 3600.0, nodes=1), Job("B", 0.0, 4 * 3600.0, nodes=64),
            Job("C", 1800.0, 3600.0, nodes=32))
    running = (RunningJob(Job("R", 0.0, 7200.0, nodes=63), 0.0),)
    state = ClusterState(3600.0, Platform(64, TB), running, jobs)
    fcfs = bbopt.decide(state, "naive", window=1, order="fcfs")
    wfp = bbopt.decide(state, "naive", window=1, order="wfp")
    assert fcfs.started_ids[0] == "A"
    assert [r.job_id for r in wfp.reservations] == ["C"]
    assert "C" not in wfp.started_ids
    # A still backfills: it ends (t = 7200) by C's reserved start (R ends at 7200).
    assert wfp.started_ids == ["A"]


def test_reserve_bb_false_lets_backfilling_take_the_heads_burst_buffer():
    # H needs 20 nodes (11 free until R ends at t=100, then 21) and all 10 TB of BB; C (1 node,
    # 10 TB, runs past t=100) fits the node left over at H's reserved start, but takes its BB.
    running = (RunningJob(Job("R", 0.0, 100.0, nodes=10), 0.0),)
    queue = (Job("H", 0.0, 3600.0, nodes=20, bb=10 * TB), Job("C", 0.0, 1000.0, nodes=1,
                                                                bb=10 * TB))
    state = ClusterState(0.0, Platform(21, 10 * TB), running, queue)
    held = bbopt.decide(state, "bbsched", window=1)
    ignored = bbopt.decide(state, "bbsched", window=1, reserve_bb=False)
    assert held.started_ids == [] and ignored.started_ids == ["C"]
    assert held.reservations[0].job_id == ignored.reservations[0].job_id == "H"


@pytest.mark.parametrize("policy", ["bbsched", "naive", "bin-packing"])
def test_window_holds_exactly_window_jobs(policy):
    """The machine is full until 100 s: nothing starts, and exactly the first ``window`` (2)
    waiting jobs spend a round in the window (the starvation counters); the first holds the
    EASY reservation."""
    running = (RunningJob(Job("R", 0.0, 100.0, nodes=4), 0.0),)
    queue = tuple(Job(f"J{k}", 0.0, 60.0, nodes=1 + k % 3) for k in range(5))
    d = bbopt.decide(ClusterState(10.0, Platform(4, TB), running, queue), policy, window=2)
    assert d.started_ids == []
    assert d.memory["rounds"] == {"J0": 1, "J1": 1}
    assert [(r.job_id, r.start) for r in d.reservations] == [("J0", 100.0)]


def test_window_policy_options_defaults_and_refusals():
    from bbopt.errors import InputError, UnknownNameError
    from bbopt.policies.window import WindowPolicy
    from bbopt.solvers.base import Budget

    p = WindowPolicy()
    assert (p.name, p.method, p.window, p.starvation, p.backend, p.budget_seconds, p.seed,
            p.objectives, p.order, p.use_ssd, p.reserve_bb) == (
        "bbsched", "pareto", 20, 50, "cpsat", 2.0, 0, None, "fcfs", True, True)
    assert p.budget == Budget.of(2.0)
    q = WindowPolicy(objectives=["nodes", "bb"], budget=1.0, deterministic=3.0,
                     budget_mode="deterministic")
    assert q.objectives == ("nodes", "bb")
    assert q.budget == Budget.of(1.0, 3.0, "deterministic") and q.budget_seconds == 1.0
    with pytest.raises(InputError, match="^field 'method': unknown window method 'random'$") as e:
        WindowPolicy(method="random")
    assert e.value.field == "method"
    with pytest.raises(InputError, match="^field 'window': window must be >= 1$") as e:
        WindowPolicy(window=0)
    assert e.value.field == "window"
    assert WindowPolicy(window=1).window == 1
    with pytest.raises(UnknownNameError, match=r"^unknown order 'lifo'; known: fcfs, priority, "
                                               r"wfp$"):
        WindowPolicy(order="lifo")


@pytest.mark.parametrize("nodes,bb,ssd,fits", [
    ((1, 1), (2.0, 2.0), (100.0, 50.0), True),    # 2 nodes, 4 B: exactly what is free
    ((1, 2), (2.0, 2.0), (100.0, 50.0), False),   # 3 nodes of 2
    ((1, 1), (2.0, 2.1), (100.0, 50.0), False),   # 4.1 B of 4
    ((1, 1), (2.0, 2.0), (100.0, 100.0), False),  # one node only has 100 B of SSD
])
def test_jobs_fit_together_on_the_free_nodes_bb_and_ssds(nodes, bb, ssd, fits):
    from bbopt.policies.window import _fits_together

    jobs = [Job(f"j{k}", 0.0, 60.0, nodes=n, bb=b, ssd=s)
            for k, (n, b, s) in enumerate(zip(nodes, bb, ssd, strict=True))]
    assert _fits_together(jobs, 2, 4.0, [100.0, 60.0], 100.0) is fits
    # without SSDs only nodes and BB count
    assert _fits_together(jobs, 2, 4.0, None, 100.0) is (sum(nodes) <= 2 and sum(bb) <= 4.0)


@pytest.mark.parametrize("request_ssd,nodes,got", [
    (100.0, 2, (3, 2)),   # the smallest SSDs that hold the request, an SSD of exactly it first
    (100.0, 3, None),     # only 2 nodes have 100 B
    (201.0, 1, None),
])
def test_a_backfilled_job_takes_the_smallest_admissible_ssds(request_ssd, nodes, got):
    from bbopt.policies.window import _smallest_admissible

    job = Job("j", 0.0, 60.0, nodes=nodes, ssd=request_ssd)
    assert _smallest_admissible(job, [3, 1, 2], [100.0, 50.0, 200.0]) == got


def _ssd_state(queue, named: bool = True) -> ClusterState:
    """The SSD platform (nodes 0-3 with 50 GB of SSD, 4-7 with 100 GB), with its 100 GB of BB
    on four named BB nodes of 25 GB (``named``) or in one pool; R (4 nodes: 0, 1, 4, 5; 80 GB:
    on named BB nodes a 20 GB piece on each, 5 GB left on each) runs until t = 1000."""
    from dataclasses import replace

    from tests._platforms import NAMED, SSD

    platform = replace(SSD, name="ssd-named", bb_nodes=NAMED.bb_nodes) if named else SSD
    r = RunningJob(Job("R", 0.0, 1000.0, nodes=4, bb=80 * GB), 0.0, allocation=(0, 1, 4, 5))
    return ClusterState(0.0, platform, (r,), tuple(queue))


@pytest.mark.parametrize("policy", ["naive", "bbsched"])
def test_ssd_backfill_takes_the_smallest_free_ssds_and_places_its_bb_pieces(policy):
    """Window of one: A (1 node, 60 GB of SSD, 2 GB of BB) is selected and placed on the
    smallest free SSD that holds it (node 6; 2 and 3 have 50 GB). H (8 nodes) holds the
    reservation at R's end. Backfilled (all end by then): C, as A, on the next such SSD (7, not
    A's 6 again); D (10 GB) fits the 16 GB of pooled BB left but no BB node has 10 GB (5, 3, 5,
    5 left): refused; E (no SSD asked) on the smallest free SSD, node 2."""
    queue = (Job("A", 0.0, 100.0, nodes=1, bb=2 * GB, ssd=60 * GB),
             Job("H", 0.0, 100.0, nodes=8),
             Job("C", 0.0, 100.0, nodes=1, bb=2 * GB, ssd=60 * GB),
             Job("D", 0.0, 100.0, nodes=1, bb=10 * GB),
             Job("E", 0.0, 100.0, nodes=1))
    d = bbopt.decide(_ssd_state(queue), policy, window=1)
    assert [(s.job_id, s.nodes) for s in d.start] == [("A", (6,)), ("C", (7,)), ("E", (2,))]
    assert [(r.job_id, r.start) for r in d.reservations] == [("H", 1000.0)]
    # With the BB in one pool D's 10 GB fit: it takes node 2 and E the next, node 3.
    d = bbopt.decide(_ssd_state(queue, named=False), policy, window=1)
    assert [(s.job_id, s.nodes) for s in d.start] == [
        ("A", (6,)), ("C", (7,)), ("D", (2,)), ("E", (3,))]


@pytest.mark.parametrize("policy", ["naive", "bbsched"])
def test_a_window_selection_whose_bb_pieces_do_not_fit_the_named_bb_nodes_waits(
        named_platform, policy):
    """The window counts pooled BB: with R holding 20 GB on each of the four 25 GB BB nodes,
    W (10 GB) and V (5 GB) fit the 20 GB left together, and both are selected; W's piece fits
    no BB node (5 GB left on each) and W waits, V starts. The utilisations are of the whole
    platform (2 of 8 nodes, 15 of 100 GB), not of what is free (4 nodes, 20 GB)."""
    r = RunningJob(Job("R", 0.0, 1000.0, nodes=4, bb=80 * GB), 0.0)
    queue = (Job("W", 0.0, 100.0, nodes=1, bb=10 * GB), Job("V", 0.0, 100.0, nodes=1, bb=5 * GB))
    d = bbopt.decide(ClusterState(0.0, named_platform, (r,), queue), policy, window=2)
    assert d.started_ids == ["V"]
    assert [(r.job_id, r.start) for r in d.reservations] == [("W", 0.0)]
    if policy == "bbsched":
        assert [(a["jobs"], a["utilization"]) for a in d.alternatives] == [
            (["W", "V"], {"nodes": 0.25, "bb": 0.15})]


def test_the_ssd_utilisation_is_a_share_of_the_platforms_ssd():
    """Nodes 4-7 (400 of the 600 GB of SSD) busy: S (2 nodes, 30 GB each) goes on nodes 0 and
    1 (50 GB), using 60 GB and wasting 40: 0.1 and -1/15 of the platform's SSD (0.3 and -0.2
    of the free SSD would be the wrong scale)."""
    from tests._platforms import SSD

    r = RunningJob(Job("R", 0.0, 1000.0, nodes=4), 0.0, allocation=(4, 5, 6, 7))
    state = ClusterState(0.0, SSD, (r,), (Job("S", 0.0, 100.0, nodes=2, ssd=30 * GB),))
    d = bbopt.decide(state, "bbsched")
    assert [(s.job_id, s.nodes) for s in d.start] == [("S", (0, 1))]
    chosen = [a for a in d.alternatives if a["chosen"]]
    assert chosen[0]["utilization"] == pytest.approx(
        {"nodes": 0.25, "bb": 0.0, "ssd": 0.1, "ssd_waste": -40 / 600}, rel=1e-12)


def test_the_objectives_option_is_the_models():
    """Table 1 with the node objective alone: the front is {J1, J5} (100 nodes), not BBSched's
    switch to {J2, J3, J4, J5} for their BB."""
    d = bbopt.decide(table1_state(), "bbsched", objectives=["nodes"])
    assert sorted(d.started_ids) == ["J1", "J5"]
    assert [a["objectives"] for a in d.alternatives] == [{"nodes": 100.0}]


@pytest.mark.parametrize("policy", ["bbsched", "naive", "weighted"])
def test_a_platform_without_burst_buffer(policy):
    """No BB at all: the window is chosen by nodes (a, 3 of 4, not b), BB utilisation 0."""
    queue = (Job("a", 0.0, 100.0, nodes=3), Job("b", 0.0, 100.0, nodes=2))
    d = bbopt.decide(ClusterState(0.0, Platform(4, 0.0), (), queue), policy)
    assert d.started_ids == ["a"]
    if policy == "bbsched":
        assert [(a["jobs"], a["utilization"]) for a in d.alternatives] == [
            (["a"], {"nodes": 0.75, "bb": 0.0})]


@pytest.mark.parametrize("bb, starts", [(999.5, True), (1000.0, True), (1000.5, False)])
def test_a_full_pool_admits_a_window_job_within_the_fit_slack_only(bb, starts):
    """R holds the whole 1 TB pool: the fit rule's slack is 1e-9 of it, 1000 B. A window job
    asking up to 1000 B starts (Slurm's window order); 1000.5 B waits for R's end."""
    r = RunningJob(Job("R", 0.0, 1000.0, nodes=1, bb=TB), 0.0)
    state = ClusterState(0.0, Platform(4, TB), (r,), (Job("J", 0.0, 100.0, nodes=1, bb=bb),))
    d = bbopt.decide(state, "naive")
    assert d.started_ids == (["J"] if starts else [])
    assert [(r.job_id, r.start) for r in d.reservations] == ([] if starts else [("J", 1000.0)])


def test_reserve_bb_false_reserves_the_head_when_its_nodes_are_free():
    """H (2 nodes, 8 TB): 1 node and 4 TB free now; R1's 3 nodes are back at t = 100, R2's
    6 TB at t = 1000. Its processors alone are free at 100: that is its reservation without
    ``reserve_bb``; with it, at 1000."""
    running = (RunningJob(Job("R1", 0.0, 100.0, nodes=3), 0.0),
               RunningJob(Job("R2", 0.0, 1000.0, nodes=1, bb=6 * TB), 0.0))
    state = ClusterState(0.0, Platform(5, 10 * TB), running,
                         (Job("H", 0.0, 3600.0, nodes=2, bb=8 * TB),))
    for reserve_bb, start in ((True, 1000.0), (False, 100.0)):
        d = bbopt.decide(state, "bbsched", reserve_bb=reserve_bb)
        assert [(r.job_id, r.start) for r in d.reservations] == [("H", start)], reserve_bb

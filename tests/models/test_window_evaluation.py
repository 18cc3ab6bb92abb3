"""BBSched's window model evaluated by hand (Fan et al., HPDC 2019, Sections 3.2.1 and 5).

The capacity rows at exactly the free nodes and burst buffer and one over, the SSD placement's
Hall rows and least-waste assigned counts on levels where the recurrence's variants differ, the
integer form's rounding (requests up, capacities down), the objectives table, the greedy rules
and the Pareto filter, each on values computed by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import GB, MB, TB, Job
from bbopt.errors import InputError
from bbopt.models.window import OBJECTIVES, WindowModel, integer_unit, objective, pareto_filter


def three_levels(ssd, nodes, **kw) -> WindowModel:
    """Four free nodes on three SSD levels: 100 GB (one node), 200 GB (two), 400 GB (one)."""
    w = len(nodes)
    return WindowModel(nodes=nodes, bb=[0.0] * w, free_nodes=4, free_bb=0.0,
                       ssd=np.asarray(ssd, float) * GB,
                       free_node_ssd=np.array([200, 400, 100, 200]) * GB, **kw)


# --- the integer unit ---------------------------------------------------------------------------

def test_integer_unit_is_the_smallest_power_of_ten_keeping_the_target():
    assert integer_unit(1e6 * MB) == MB  # exactly a million units: kept
    assert integer_unit(1e6 * MB + 1.0) == 10 * MB  # one byte more: the next power of ten
    assert integer_unit(5e5 * MB) == MB
    assert integer_unit(2e7 * MB) == 100 * MB
    assert integer_unit(1e4, target=1e4, minimum=1.0) == 1.0
    assert integer_unit(1e4 + 1, target=1e4, minimum=1.0) == 10.0
    assert integer_unit(0.0) == MB


# --- construction and refusals ------------------------------------------------------------------

def reason(**kw) -> tuple[str, str | None]:
    with pytest.raises(InputError) as e:
        WindowModel(**kw)
    return e.value.reason, e.value.field


def test_refusals_name_the_field():
    base = {"nodes": [1, 2], "bb": [0.0, 0.0], "free_nodes": 2, "free_bb": 0.0}
    assert reason(**{**base, "bb": [0.0]}) == ("bb must have one entry per job", "bb")
    assert reason(**{**base, "nodes": [0, 2]}) == (
        "node requests must be >= 1 and BB requests >= 0", None)
    assert reason(**{**base, "bb": [-1.0, 0.0]})[0] == (
        "node requests must be >= 1 and BB requests >= 0")
    assert reason(**{**base, "objectives": ("nodes", "nodes")}) == (
        "objectives must be distinct and not empty", "objectives")
    assert reason(**{**base, "objectives": ()}) == (
        "objectives must be distinct and not empty", "objectives")
    assert reason(**{**base, "objectives": ("nodes", "speed")}) == (
        "unknown objective 'speed'; known: nodes, bb, order, ssd, ssd_waste, bandwidth",
        "objectives")
    assert reason(**{**base, "free_node_ssd": [GB]}) == (
        "free_node_ssd needs one entry per free node", "free_node_ssd")
    assert reason(**{**base, "ssd": [0.0, 1.0]}) == (
        "SSD requests or objectives need free_node_ssd", "ssd")
    assert reason(**{**base, "objectives": ("nodes", "ssd_waste")}) == (
        "SSD requests or objectives need free_node_ssd", "ssd")
    assert reason(**{**base, "job_ids": ("a",)}) == ("job_ids must have one entry per job",
                                                      "job_ids")
    # the bounds themselves are accepted: one node, 0 B of BB, SSD requests of 0 B
    m = WindowModel(nodes=[1, 1], bb=[0.0, 0.0], free_nodes=2, free_bb=0.0, ssd=[0.0, 0.0],
                    job_ids=("a", "b"))
    assert m.size == 2 and m.job_ids == ("a", "b") and not m.has_ssd


def test_objective_lookup():
    assert objective("bb") is OBJECTIVES["bb"]
    with pytest.raises(InputError) as e:
        objective("speed")
    assert e.value.field == "objectives"


def test_defaults_order_forced_totals():
    m = WindowModel(nodes=[1, 2, 3], bb=[0.0, GB, 0.0], free_nodes=5, free_bb=3 * GB)
    assert m.order.tolist() == [3, 2, 1] and m.order.dtype == np.int64
    assert m.forced.tolist() == [False, False, False]
    assert m.ssd.tolist() == [0.0] * 3 and m.bandwidth.tolist() == [0.0] * 3
    assert (m.total_nodes, m.total_bb, m.total_ssd) == (5, 3 * GB, None)
    s = three_levels([0], [1])
    assert s.free_node_ssd.tolist() == [100 * GB, 200 * GB, 200 * GB, 400 * GB]  # sorted
    assert s.total_ssd == 900 * GB
    given = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0, total_nodes=9,
                        total_bb=7.0, order=[4], forced=[1])
    assert (given.total_nodes, given.total_bb, given.order.tolist(), given.forced.tolist()) == (
        9, 7.0, [4], [True])


def test_from_jobs_reads_every_field():
    jobs = [Job("a", 0.0, 60.0, nodes=2, bb=3 * GB, ssd=GB, bandwidth=5e8),
            Job("b", 1.0, 60.0, nodes=1, bb=0.0, ssd=0.0, bandwidth=0.0)]
    m = WindowModel.from_jobs(jobs, 3, 4 * GB, total_nodes=8, total_bb=16 * GB,
                              objectives=("nodes", "ssd"), free_node_ssd=[GB, GB, 2 * GB],
                              total_ssd=10 * GB, order=[1, 7], forced=[False, True])
    assert m.nodes.tolist() == [2, 1] and m.bb.tolist() == [3 * GB, 0.0]
    assert m.ssd.tolist() == [GB, 0.0] and m.bandwidth.tolist() == [5e8, 0.0]
    assert (m.free_nodes, m.free_bb, m.total_nodes, m.total_bb, m.total_ssd) == (
        3, 4 * GB, 8, 16 * GB, 10 * GB)
    assert m.objectives == ("nodes", "ssd") and m.job_ids == ("a", "b")
    assert m.free_node_ssd.tolist() == [GB, GB, 2 * GB]
    assert m.order.tolist() == [1, 7] and m.forced.tolist() == [False, True]
    plain = WindowModel.from_jobs(jobs[1:], 1, 0.0)
    assert plain.objectives == ("nodes", "bb") and not plain.has_ssd
    assert plain.order.tolist() == [1] and plain.forced.tolist() == [False]


# --- capacities ---------------------------------------------------------------------------------

def test_bb_room_is_the_core_fit_slack_of_the_platform_capacity():
    # 1 TB of BB on the platform: a relative 1e-9 slack is 1000 B, taken on the total, not on
    # the 100 GB that are free.
    m = WindowModel(nodes=[1, 1, 1], bb=[100 * GB + 1000, 100 * GB + 1001, 100 * GB],
                    free_nodes=4, free_bb=100 * GB, total_bb=TB)
    assert m.bb_room == 100 * GB + 1000
    assert m.feasible_many(np.eye(3)).tolist() == [True, False, True]
    assert m.greedy("first-fit").tolist() == [True, False, False]


def test_nodes_at_exactly_the_free_count_and_one_over():
    m = WindowModel(nodes=[3, 1, 2], bb=[0.0] * 3, free_nodes=4, free_bb=0.0)
    assert m.feasible_many([[1, 1, 0], [1, 0, 1], [0, 1, 1]]).tolist() == [True, False, True]
    assert m.greedy("in-order").tolist() == [True, True, False]


def test_forced_jobs_are_checked_unless_told_not_to():
    m = WindowModel(nodes=[1, 1], bb=[0.0] * 2, free_nodes=2, free_bb=0.0, forced=[False, True])
    assert m.feasible_many([[1, 0], [0, 1]]).tolist() == [False, True]
    assert m.feasible_many([[1, 0]], check_forced=False).tolist() == [True]
    assert not m.feasible([1, 0]) and m.feasible([1, 1])


def test_a_selection_of_the_wrong_length_is_refused():
    m = WindowModel(nodes=[1, 1, 1], bb=[0.0] * 3, free_nodes=3, free_bb=0.0)
    with pytest.raises(InputError) as e:
        m.evaluate([1, 0])
    assert e.value.reason == "a selection has 2 entries for a window of 3"


# --- SSD levels and placement -------------------------------------------------------------------

def test_levels_and_each_jobs_lowest_admissible_level():
    m = three_levels([100, 100.000000001, 400, 0, 400.000000001], [1, 1, 1, 1, 1])
    sizes, counts = m.levels()
    assert sizes.tolist() == [100 * GB, 200 * GB, 400 * GB] and counts.tolist() == [1, 2, 1]
    # a request equal to a level's size is admitted there; one byte more needs the next
    assert m.job_levels().tolist() == [0, 1, 2, 0, -1]
    assert m.job_levels().dtype == np.int64
    plain = WindowModel(nodes=[1], bb=[0.0], free_nodes=6, free_bb=0.0)
    sizes, counts = plain.levels()
    assert sizes.tolist() == [np.inf] and counts.tolist() == [6]
    busy = WindowModel(nodes=[1], bb=[0.0], free_nodes=0, free_bb=0.0, free_node_ssd=[])
    sizes, counts = busy.levels()
    assert sizes.tolist() == [0.0] and counts.tolist() == [0] and counts.dtype == np.int64
    assert busy.feasible_many([[0], [1]]).tolist() == [True, False]


def test_hall_rows_at_exactly_the_nodes_of_a_level_and_one_over():
    # levels 100 / 200 / 400 GB with 1 / 2 / 1 nodes: 3 nodes of 200 GB or more
    m = three_levels([150, 150, 0, 300, 500], [2, 1, 1, 1, 1])
    assert m.feasible_many([
        [1, 0, 1, 0, 0],  # 2 nodes of >= 200 GB and one of any size
        [1, 1, 0, 0, 0],  # 3 nodes of >= 200 GB: exactly those there are
        [1, 1, 0, 1, 0],  # 4 nodes of >= 200 GB: one over
        [0, 0, 1, 1, 0],
        [0, 0, 0, 0, 1],  # asks more SSD than any node has
    ]).tolist() == [True, True, False, True, False]
    assert m.feasible_many([[1, 1, 1, 0, 0]]).tolist() == [True]  # 4 nodes in all: every one
    two = three_levels([300, 300], [1, 1])  # one node of 400 GB: one over at the top level
    assert two.feasible_many([[1, 0], [1, 1]]).tolist() == [True, False]


def test_least_waste_assigned_counts_and_waste():
    m = three_levels([10, 150, 0, 50], [4, 1, 1, 1],
                     objectives=("nodes", "ssd", "ssd_waste"))
    X = np.array([[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 1, 1], [0, 0, 0, 1], [0, 0, 0, 0]])
    D, A = m._placement_counts(X.astype(bool))
    assert D.tolist() == [[4, 0, 0], [2, 1, 0], [2, 0, 0], [1, 0, 0], [0, 0, 0]]
    # A_1 = D_1, A_j = max(D_j, A_{j-1} - c_{j-1}): every node assigned for the 4-node job
    assert A.tolist() == [[4, 3, 1], [2, 1, 0], [2, 1, 0], [1, 0, 0], [0, 0, 0]]
    waste = m.ssd_waste_many(X)
    # 900 GB assigned for 40 GB used; 100 + 200 for 150; 100 + 200 for 50; 100 for 50
    assert waste.tolist() == [860 * GB, 150 * GB, 250 * GB, 50 * GB, 0.0]
    values = m.evaluate_many(X)
    assert values[:, 0].tolist() == [4.0, 2.0, 2.0, 1.0, 0.0]
    assert values[:, 1].tolist() == [40 * GB, 150 * GB, 50 * GB, 50 * GB, 0.0]
    assert values[:, 2].tolist() == (-waste).tolist()
    assert m.evaluate([1, 0, 0, 0]) == (4.0, 40 * GB, -860 * GB)
    assert m.values("ssd_waste", [0, 0, 0, 1]).tolist() == [-50 * GB]
    plain = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0)
    assert plain.ssd_waste_many([[1], [0]]).tolist() == [0.0, 0.0]


def test_placement_gives_the_most_demanding_first_the_smallest_admissible_nodes():
    m = WindowModel(nodes=[2, 2, 1], bb=[0.0] * 3, free_nodes=5, free_bb=0.0,
                    ssd=[0.0, 150 * GB, 0.0],
                    free_node_ssd=np.array([400, 100, 200, 200, 300]) * GB)
    ids, ssd = [10, 11, 12, 13, 14], np.array([400, 100, 200, 200, 300]) * GB
    # job 1 (150 GB) first on the two 200 GB nodes; then jobs 0 and 2 in window order
    assert m.placement([1, 1, 1], ids, ssd) == {1: (12, 13), 0: (11, 14), 2: (10,)}
    assert m.placement([1, 0, 1], ids, ssd) == {0: (11, 12), 2: (13,)}
    assert m.placement([0, 1, 0], ids, ssd) == {1: (12, 13)}
    with pytest.raises(InputError) as e:
        m.placement([0, 1, 0], ids[1:3], ssd[1:3])
    assert e.value.reason == "job 1 of the window cannot be placed on the free nodes"


def test_integer_form_rounds_requests_up_and_capacities_down():
    # free 0.5 TB but a request of 3 TB: the unit is 10 MB (3e5 units), not 1 MB
    m = WindowModel(nodes=[1, 4, 5, 2, 1], bb=[3 * TB, 0.5 * TB, 0.0, 20 * MB + 1, 0.5 * TB + 1],
                    free_nodes=4, free_bb=0.5 * TB, forced=[False, False, False, True, False])
    f = m.integer_form()
    assert f is m.integer_form()  # cached
    assert f.bb_unit == 10 * MB
    assert f.bb.tolist() == [300_000, 50_000, 0, 3, 50_001] and f.free_bb == 50_000
    assert f.free_nodes == 4 and f.nodes.tolist() == [1, 4, 5, 2, 1]
    # selectable: nodes and BB at exactly the free amounts, not one node or one unit over
    assert f.allowed.tolist() == [False, True, False, True, False]
    assert f.order.tolist() == [5, 4, 3, 2, 1] and f.forced.tolist() == [0, 0, 0, 1, 0]
    assert (f.ssd_unit, f.ssd.tolist(), f.level.tolist()) == (1.0, [0] * 5, [0] * 5)
    assert f.level_size.tolist() == [0] and f.level_count.tolist() == [4]
    for a in (f.bb, f.ssd, f.level, f.level_size, f.level_count):
        assert a.dtype == np.int64
    exact = WindowModel(nodes=[1, 1], bb=[20 * MB, 3 * MB], free_nodes=2, free_bb=0.5 * TB)
    assert exact.integer_form().bb.tolist() == [20, 3]  # whole units stay whole (1 MB)
    assert exact.integer_form().free_bb == 500_000


def test_integer_form_of_ssd_levels():
    m = WindowModel(nodes=[1, 2, 4, 1], bb=[0.0] * 4, free_nodes=4, free_bb=0.0,
                    ssd=[50.00001 * GB, 150 * GB, 500 * GB, 400 * GB],
                    free_node_ssd=np.array([100.00001, 200, 200, 400]) * GB)
    f = m.integer_form()
    assert f.ssd_unit == 100 * MB  # 400 GB is 4000 units of 100 MB: at most 1e4
    assert f.level_size.tolist() == [1000, 2000, 4000] and f.level_count.tolist() == [1, 2, 1]
    assert f.ssd.tolist() == [501, 1500, 5000, 4000]
    assert f.level.tolist() == [0, 1, -1, 2]
    for a in (f.ssd, f.level, f.level_size, f.level_count):
        assert a.dtype == np.int64
    assert f.allowed.tolist() == [True, True, False, True]
    assert f.level_demand().tolist() == [[1, 2, 0, 1], [0, 2, 0, 1], [0, 0, 0, 1]]
    # the largest level within 1e4 units of 1 MB, then just over
    for size, unit in ((10_000 * MB, MB), (10_000.5 * MB, 10 * MB)):
        one = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0, free_node_ssd=[size])
        assert one.integer_form().ssd_unit == unit
    waste = OBJECTIVES["ssd_waste"]
    assert waste.level_integer(m).tolist() == [-1000, -1000, -2000]


# --- the objectives table -----------------------------------------------------------------------

def test_objectives_table_flags():
    flags = {name: (o.unit, o.linear, o.needs_ssd, o.gain, o.monotone)
             for name, o in OBJECTIVES.items()}
    assert flags == {
        "nodes": ("nodes", True, False, False, True),
        "bb": ("B", True, False, True, True),
        "order": ("", True, False, False, True),
        "ssd": ("B", True, True, True, True),
        "ssd_waste": ("B", False, True, True, False),
        "bandwidth": ("B/s", True, False, False, True),
    }
    assert list(OBJECTIVES) == ["nodes", "bb", "order", "ssd", "ssd_waste", "bandwidth"]


def test_objective_scales_coefficients_and_integer_units():
    m = WindowModel(nodes=[3, 1], bb=[2 * GB, 0.0], free_nodes=4, free_bb=5 * GB,
                    total_nodes=10, total_bb=20 * GB, ssd=[GB, 0.0],
                    free_node_ssd=[GB, GB, 2 * GB, 2 * GB], total_ssd=8 * GB,
                    bandwidth=[2000002333.5, 0.0],
                    objectives=("nodes", "bb", "order", "ssd", "ssd_waste", "bandwidth"))
    assert m.scales().tolist() == [10.0, 20 * GB, 3.0, 8 * GB, 8 * GB, 6000007000.5]
    o = OBJECTIVES
    assert o["nodes"].coefficients(m).tolist() == [3.0, 1.0]
    assert o["order"].coefficients(m).tolist() == [2.0, 1.0]
    assert o["ssd"].coefficients(m).tolist() == [3 * GB, 0.0]
    assert o["bandwidth"].coefficients(m).tolist() == [6000007000.5, 0.0]
    assert o["nodes"].integer(m).tolist() == [3, 1] and o["nodes"].integer_unit(m) == 1.0
    assert o["order"].integer(m).tolist() == [2, 1] and o["order"].integer_unit(m) == 1.0
    assert o["bb"].integer(m).tolist() == [2000, 0] and o["bb"].integer_unit(m) == MB
    # the largest bandwidth demand, 6.000007e9 B/s, in units of 1e4 B/s: 600000.7 rounds up
    assert o["bandwidth"].integer_unit(m) == 1e4
    assert o["bandwidth"].integer(m).tolist() == [600_001, 0]
    assert o["ssd"].integer(m).tolist() == [3000, 0] and o["ssd"].integer_unit(m) == MB
    assert o["ssd_waste"].integer(m).tolist() == [3000, 0]
    assert o["ssd_waste"].integer_unit(m) == MB
    assert m.evaluate([1, 0]) == (3.0, 2 * GB, 2.0, 3 * GB, -GB, 6000007000.5)
    # the floors: no bandwidth asked, order weights summing to 0, no BB on the platform
    bare = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0, order=[0],
                       objectives=("nodes", "bb", "order", "bandwidth"))
    assert bare.scales().tolist() == [1.0, 1e-300, 1.0, 1.0]
    assert OBJECTIVES["bandwidth"].integer_unit(bare) == 1.0
    ssd0 = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0, free_node_ssd=[0.0],
                       objectives=("ssd",))
    assert ssd0.scales().tolist() == [1.0]


def test_values_of_an_objective_outside_the_model():
    m = WindowModel(nodes=[2, 1, 1], bb=[0.0, GB, 0.0], free_nodes=4, free_bb=GB)
    assert m.values("order", [[1, 0, 1], [0, 1, 0]]).tolist() == [4.0, 2.0]
    assert m.values("bandwidth", [1, 1, 1]).tolist() == [0.0]
    with pytest.raises(InputError):
        m.values("speed", [1, 0, 0])
    assert m.selected([1, 0, 1]) == [0, 2]
    assert m.evaluate(np.array([0, 1, 1])) == (2.0, GB)


# --- greedy rules -------------------------------------------------------------------------------

def test_in_order_stops_at_the_first_misfit_and_first_fit_goes_on():
    m = WindowModel(nodes=[2, 3, 1], bb=[0.0] * 3, free_nodes=4, free_bb=0.0)
    assert m.greedy("in-order").tolist() == [True, False, False]
    assert m.greedy("first-fit").tolist() == [True, False, True]
    assert m.fallback().tolist() == [True, False, True]
    assert m.greedy("first-fit", order=[2, 1, 0]).tolist() == [False, True, True]
    assert m.greedy("in-order", order=[1, 0, 2]).tolist() == [False, True, False]
    with pytest.raises(InputError) as e:
        m.greedy("best-fit")
    assert (e.value.reason, e.value.field) == ("unknown greedy rule 'best-fit'", "rule")


def test_forced_job_that_does_not_fit_is_left_out_by_the_greedy_rules():
    m = WindowModel(nodes=[1, 5, 2], bb=[0.0] * 3, free_nodes=4, free_bb=0.0,
                    forced=[False, True, True])
    for rule in ("in-order", "first-fit", "bin-packing"):
        x = m.greedy(rule)
        assert x[2] and not x[1], rule


def test_bin_packing_takes_the_largest_dot_product_with_what_is_free():
    # 10 nodes and 10 TB: scores 0.6 (A), 0.8 (B), 0.7 (C); then, with 9 nodes and 3 TB free,
    # A 0.6 x 0.9 = 0.54 beats C 0.5 x 0.9 + 0.2 x 0.3 = 0.51. First fit in the order C, A, B
    # would take C and B.
    m = WindowModel(nodes=[5, 6, 1], bb=[2 * TB, 0.0, 7 * TB], free_nodes=10, free_bb=10 * TB)
    assert m.greedy("bin-packing").tolist() == [False, True, True]
    assert m.greedy("first-fit").tolist() == [True, False, True]
    # the platform's totals, not what is free, weigh each request
    half = WindowModel(nodes=[5, 6, 1], bb=[2 * TB, 0.0, 7 * TB], free_nodes=10,
                       free_bb=10 * TB, total_nodes=20, total_bb=100 * TB)
    assert half.greedy("bin-packing").tolist() == [False, True, True]
    # equal scores: the first in the order
    tie = WindowModel(nodes=[6, 6], bb=[0.0, 0.0], free_nodes=10, free_bb=0.0)
    assert tie.greedy("bin-packing").tolist() == [True, False]
    assert tie.greedy("bin-packing", order=[1, 0]).tolist() == [False, True]


def test_bin_packing_free_amounts_after_each_pick():
    # 8 nodes, 8 TB. Scores: A (4 nodes, 0 B) 0.5, B (2 nodes, 3 TB) 0.25 + 0.375 = 0.625,
    # C (3 nodes, 3 TB) 0.375 + 0.375 = 0.75: C first. Then 5 nodes and 5 TB are free:
    # A 0.5 x 0.625 = 0.3125, B 0.25 x 0.625 + 0.375 x 0.625 = 0.39: B, and A no longer fits.
    m = WindowModel(nodes=[4, 2, 3], bb=[0.0, 3 * TB - 1, 3 * TB], free_nodes=8, free_bb=8 * TB)
    assert m.greedy("bin-packing").tolist() == [False, True, True]
    assert m.greedy("first-fit").tolist() == [True, True, False]


# --- the Pareto filter --------------------------------------------------------------------------

def test_pareto_filter_keeps_the_first_of_each_undominated_vector():
    assert pareto_filter(np.zeros((0, 2))).tolist() == []
    assert pareto_filter(np.zeros((0, 2))).dtype == np.int64
    assert pareto_filter([[3.0], [5.0], [5.0], [1.0]]).tolist() == [1]
    F = [[1, 5], [3, 3], [3, 3], [2, 2], [5, 1], [3, 2], [4, 1], [1, 5]]
    assert pareto_filter(F).tolist() == [0, 1, 4]
    G = [[1, 1, 1], [2, 0, 0], [0, 2, 0], [1, 1, 1], [1, 1, 0], [0, 0, 3], [0, 0, 2]]
    assert pareto_filter(G).tolist() == [0, 1, 2, 5]


def test_greedy_answers_a_boolean_selection_past_forced_jobs_in_the_window():
    # job 1 is forced and taken first; the pass in window order goes on past it
    m = WindowModel(nodes=[1, 1, 1], bb=[0.0] * 3, free_nodes=3, free_bb=0.0,
                    forced=[False, True, False])
    for rule in ("in-order", "first-fit", "bin-packing"):
        x = m.greedy(rule)
        assert x.dtype == bool and x.tolist() == [True, True, True], rule
    assert m.greedy().tolist() == [True, True, True]  # first fit by default
    assert WindowModel(nodes=[2, 1], bb=[0.0] * 2, free_nodes=2, free_bb=0.0).greedy().tolist() \
        == [True, False]


def test_an_empty_window():
    m = WindowModel(nodes=[], bb=[], free_nodes=3, free_bb=GB,
                    objectives=("nodes", "bb", "bandwidth"))
    assert m.size == 0 and OBJECTIVES["bandwidth"].integer_unit(m) == 1.0
    assert m.greedy("first-fit").tolist() == [] and m.evaluate([]) == (0.0, 0.0, 0.0)
    s = three_levels([], [])
    assert s.integer_form().level_demand().shape == (3, 0)
    assert s.integer_form().level_demand().dtype == np.int64


def test_greedy_rules_respect_the_ssd_placement_and_take_every_forced_job():
    # 3 nodes of 200 GB or more: two 2-node jobs asking 150 GB per node do not both fit
    m = three_levels([150, 150, 0], [2, 2, 1])
    assert m.greedy("first-fit").tolist() == [True, False, True]
    assert m.greedy("in-order").tolist() == [True, False, False]
    assert m.greedy("bin-packing").tolist() == [True, False, True]
    both = three_levels([0, 150, 300], [1, 1, 1], forced=[False, True, True])
    for rule in ("in-order", "first-fit", "bin-packing"):
        assert both.greedy(rule).tolist() == [True, True, True], rule


def test_ssd_windows_check_the_bb_and_node_rows_too():
    m = WindowModel(nodes=[1, 1, 2], bb=[GB, 0.0, 0.0], free_nodes=2, free_bb=0.5 * GB,
                    ssd=[0.0, 0.0, 0.0], free_node_ssd=[GB, GB], forced=[False, True, False])
    assert m.feasible_many([[1, 1, 0], [0, 1, 0], [0, 0, 1], [0, 1, 1]]).tolist() == [
        False, True, False, False]


def test_arrays_are_converted_to_their_kinds():
    m = WindowModel(nodes=[2.0, 1.0], bb=[1, 0], free_nodes=3, free_bb=2, ssd=[1, 0],
                    free_node_ssd=[2, 1, 1], bandwidth=[3, 0], forced=[0, 1])
    assert m.nodes.dtype == np.int64 and m.forced.dtype == bool
    for a in (m.bb, m.ssd, m.free_node_ssd, m.bandwidth):
        assert a.dtype == np.float64
    # forced given as 0/1 is a mask (job 1 forced), not the indices 0 and 1
    assert m.feasible_many([[0, 1], [1, 0], [1, 1]]).tolist() == [True, False, True]

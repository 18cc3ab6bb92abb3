"""The select-and-place window model on the I/O tree evaluated by hand (Herbein et al., HPDC
2016, Section 3.4, with BBSched's window, Fan et al., HPDC 2019, Section 3.2.1): groups of free
nodes, the vertex rows kept (only those that can bind), node links at exactly a job's bandwidth
and one step over, every row a placement may break, Herbein's greedy group by group, and the
integer form's rounding."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import GB, MB, REL_TOL, Job
from bbopt.errors import InputError
from bbopt.models.io_window import IOWindowModel
from bbopt.models.window import WindowModel
from bbopt.topology import from_description

INF = float("inf")


def herbein_case(forced=None) -> IOWindowModel:
    """Groups: nodes 0-1 behind 100 MB/s links, nodes 2-4 unlimited. Vertex 7 (150 MB/s) above
    the first group, vertex 9 (400 MB/s) above both. Jobs: 2 nodes at 100 MB/s, 2 nodes at
    120 MB/s (too fast for the first group's links), 1 node at 50 MB/s."""
    window = WindowModel(nodes=[2, 2, 1], bb=[0.0, 0.0, GB], free_nodes=5, free_bb=10 * GB,
                         forced=forced)
    return IOWindowModel(window=window, bandwidth=[100 * MB, 120 * MB, 50 * MB],
                         group_nodes=([0, 1], [2, 3, 4]), group_link=[100 * MB, INF],
                         vertices=[7, 9], vertex_avail=[150 * MB, 400 * MB],
                         membership=[[True, False], [True, True]])


def one_vertex(bandwidth: float, nodes: int = 3) -> IOWindowModel:
    """Three unlimited nodes under one vertex of 300 B/s."""
    window = WindowModel(nodes=[nodes], bb=[0.0], free_nodes=3, free_bb=0.0)
    return IOWindowModel(window=window, bandwidth=[bandwidth], group_nodes=([0, 1, 2],),
                         group_link=[INF], vertices=[0], vertex_avail=[300.0],
                         membership=[[True]])


def test_refusals_name_the_field():
    m = herbein_case()
    kw = {"window": m.window, "bandwidth": m.bandwidth, "group_nodes": m.group_nodes,
          "group_link": m.group_link, "vertices": m.vertices, "vertex_avail": m.vertex_avail,
          "membership": m.membership}
    for change, message, name in (
            ({"bandwidth": [1.0, 1.0]}, "bandwidth needs one entry >= 0 per window job",
             "bandwidth"),
            ({"bandwidth": [1.0, -1e-300, 0.0]}, "bandwidth needs one entry >= 0 per window job",
             "bandwidth"),
            ({"group_link": [INF]}, "group_link needs one entry per group", "group_link"),
            ({"vertex_avail": [1.0]}, "membership/vertex_avail must have one row per vertex",
             "membership"),
            ({"membership": [[True, False, True]]},
             "membership/vertex_avail must have one row per vertex", "membership"),
            ({"membership": [True, False, True, True, False]},
             "membership/vertex_avail must have one row per vertex", "membership"),
            ({"group_nodes": ([0, 1], [2, 3])}, "the groups must hold exactly the free nodes",
             "group_nodes")):
        with pytest.raises(InputError) as e:
            IOWindowModel(**{**kw, **change})
        assert (e.value.reason, e.value.field) == (message, name)
    assert IOWindowModel(**{**kw, "bandwidth": [0.0, 0.0, 0.0]}).size == 3


def test_structure_admissible_groups_and_upper_bounds():
    m = herbein_case()
    assert (m.size, m.groups, m.objectives) == (3, 2, ("nodes", "bb"))
    assert m.group_size().tolist() == [2, 3]
    assert m.admissible().tolist() == [[True, True], [False, True], [True, True]]
    assert m.upper().tolist() == [[2, 2], [0, 2], [1, 1]]
    assert m.membership.dtype == bool and m.vertices.tolist() == [7, 9]
    # a link at exactly the job's bandwidth suffices, and within its relative slack
    link = 100 * MB
    for bw, ok in ((link, True), (link * (1 + REL_TOL / 2), True), (link * (1 + 3 * REL_TOL),
                                                                      False)):
        w = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0)
        one = IOWindowModel(window=w, bandwidth=[bw], group_nodes=([0],), group_link=[link],
                            vertices=[], vertex_avail=[], membership=np.zeros((0, 1), bool))
        assert one.admissible().tolist() == [[ok]], bw


def test_herbeins_greedy_group_by_group_within_every_vertex():
    m = herbein_case()
    # job 0: one node of the first group (vertex 7 leaves room for one at 100 MB/s), one of the
    # second; job 1: vertex 9 has 200 MB/s left, one node at 120 MB/s: not placed; job 2: the
    # last node of the first group, vertex 7 then exactly full
    first_fit = m.greedy("first-fit")
    assert first_fit.tolist() == [[1, 1], [0, 0], [1, 0]]
    assert m.fallback().tolist() == first_fit.tolist()
    assert m.greedy("in-order").tolist() == [[1, 1], [0, 0], [0, 0]]
    assert m.violations(first_fit) == [] and m.feasible(first_fit)
    assert m.placement(first_fit) == {0: (0, 2), 2: (1,)}
    assert m.evaluate(first_fit) == (3.0, GB)
    assert m.selection(first_fit).tolist() == [True, False, True]
    with pytest.raises(InputError) as e:
        m.greedy("best-fit")
    assert (e.value.reason, e.value.field) == ("unknown greedy rule 'best-fit'", "rule")
    # place_one leaves what it is given untouched and takes nothing when it fails
    left, avail = m.group_size(), m.vertex_avail.copy()
    assert m.place_one(0, left, avail).tolist() == [1, 1]
    assert avail.tolist() == [150 * MB, 400 * MB] and left.tolist() == [2, 3]
    assert m.place_one(1, left, avail).tolist() == [0, 2]  # alone, job 1 fits
    after = np.array([50 * MB, 200 * MB])
    assert m.place_one(1, np.array([1, 2]), after) is None
    assert after.tolist() == [50 * MB, 200 * MB]
    assert m.place_one(2, np.array([0, 3]), avail).tolist() == [0, 1]


def test_forced_jobs_are_placed_first():
    m = herbein_case(forced=[False, False, True])
    # job 2 first: node 0; then job 0: vertex 7 has 100 MB/s left: node 1 and one node of the
    # second group (in window order, in-order would stop at job 1 before job 2)
    assert m.greedy("in-order").tolist() == [[1, 1], [0, 0], [1, 0]]
    m = herbein_case(forced=[False, True, False])
    # job 1 first: two nodes of the second group (240 of vertex 9's 400 MB/s); job 0 then finds
    # one node's room under vertex 9 and no second: skipped (first fit) or the stop (in order)
    assert m.greedy("first-fit").tolist() == [[0, 0], [0, 2], [1, 0]]
    assert m.greedy("in-order").tolist() == [[0, 0], [0, 2], [0, 0]]
    assert m.violations(np.zeros((3, 2), int)) == [
        "the window's node, BB or forced rows are broken"]


def test_greedy_counts_the_free_bb_and_the_free_nodes():
    w = WindowModel(nodes=[2, 2, 1], bb=[6 * GB, 4 * GB, GB], free_nodes=3, free_bb=10 * GB)
    m = IOWindowModel(window=w, bandwidth=[0.0] * 3, group_nodes=([0, 1, 2],),
                      group_link=[INF], vertices=[], vertex_avail=[],
                      membership=np.zeros((0, 1), bool))
    # job 0 leaves 4 GB (exactly job 1's) but one node; job 2 takes it
    assert m.greedy("first-fit").tolist() == [[2], [0], [1]]
    assert m.greedy("in-order").tolist() == [[2], [0], [0]]
    w = WindowModel(nodes=[1, 1, 1], bb=[6 * GB, 4 * GB + 1e3, GB], free_nodes=3,
                    free_bb=10 * GB)
    m = IOWindowModel(window=w, bandwidth=[0.0] * 3, group_nodes=([0, 1, 2],),
                      group_link=[INF], vertices=[], vertex_avail=[],
                      membership=np.zeros((0, 1), bool))
    # 10 GB + the platform slack of 10 bytes: 1 kB over is refused
    assert m.greedy("first-fit").tolist() == [[1], [0], [1]]


def test_place_one_within_the_vertex_slack():
    # 3 nodes at 100 B/s fill 300 B/s; 100 + 5e-8 B/s each is within the 3e-7 B/s slack
    assert one_vertex(100.0).place_one(0, np.array([3]), np.array([300.0])).tolist() == [3]
    assert one_vertex(100 + 5e-8).place_one(0, np.array([3]), np.array([300.0])).tolist() == [3]
    assert one_vertex(100 + 2e-7).place_one(0, np.array([3]), np.array([300.0])) is None
    assert one_vertex(100 + 2e-7, nodes=2).greedy().tolist() == [[2]]
    # a job without bandwidth is not held back by an exhausted vertex
    assert one_vertex(0.0).place_one(0, np.array([3]), np.array([0.0])).tolist() == [3]
    assert one_vertex(100.0).place_one(0, np.array([3]), np.array([-50.0])) is None


def test_violations_name_every_broken_row():
    m = herbein_case()
    assert m.violations([[1, 0], [0, 0], [0, 0]]) == ["jobs [0] get a wrong number of nodes"]
    assert m.violations([[0, 0], [1, 1], [0, 0]]) == [
        "a job uses node links slower than its bandwidth"]
    assert m.violations([[2, 0], [0, 0], [1, 0]]) == [
        "groups [0] over-filled", "vertices [7] over-allocated"]
    assert m.violations([[0, 2], [0, 2], [0, 0]]) == [
        "groups [1] over-filled", "vertices [9] over-allocated"]
    assert m.violations([[3, -1], [0, 0], [0, 0]]) == [
        "negative counts", "groups [0] over-filled", "vertices [7] over-allocated"]
    assert not m.feasible([[3, -1], [0, 0], [0, 0]])
    with pytest.raises(InputError) as e:
        m.violations([[1, 1], [0, 0]])
    assert e.value.reason == "a placement must be a 3 x 2 count matrix, got shape (2, 2)"
    # a vertex's load at its bandwidth plus REL_TOL of it and 1e-6 B/s passes, a hair more not
    for extra, ok in ((0.0, True), (1.2e-6, True), (1.4e-6, False)):
        v = one_vertex(100.0 + extra / 3)
        assert v.feasible([[3]]) is ok, extra


def test_placement_hands_out_each_groups_nodes_in_index_order():
    m = herbein_case()
    assert m.placement([[0, 2], [0, 0], [0, 1]]) == {0: (2, 3), 2: (4,)}
    assert m.placement([[1, 1], [0, 2], [0, 0]]) == {0: (0, 2), 1: (3, 4)}


def test_integer_bandwidth_rounds_requests_up_and_capacities_down():
    m = herbein_case()
    req, cap, unit = m.integer_bandwidth()
    assert m.integer_bandwidth() is m.integer_bandwidth()  # cached
    assert unit == 1000.0  # 400 MB/s is 400,000 units of 1 kB/s
    assert req.tolist() == [100_000, 120_000, 50_000] and cap.tolist() == [150_000, 400_000]
    w = WindowModel(nodes=[1, 1], bb=[0.0, 0.0], free_nodes=1, free_bb=0.0)
    odd = IOWindowModel(window=w, bandwidth=[2e6 + 1, 0.0], group_nodes=([0],),
                        group_link=[INF], vertices=[3], vertex_avail=[1e6 - 1],
                        membership=[[True]])
    req, cap, unit = odd.integer_bandwidth()
    assert unit == 10.0 and req.tolist() == [200_001, 0] and cap.tolist() == [99_999]
    empty = IOWindowModel(window=w, bandwidth=[0.0, 0.0], group_nodes=([0],), group_link=[INF],
                          vertices=[], vertex_avail=[], membership=np.zeros((0, 1), bool))
    req, cap, unit = empty.integer_bandwidth()
    assert unit == 1.0 and req.tolist() == [0, 0] and cap.tolist() == []


def tree():
    """PFS (1000 MB/s) -> switch (300 MB/s) -> nodes 0, 1 (100 MB/s links); PFS -> an
    unlimited switch -> nodes 2, 3. Vertices in depth-first order: PFS 0, switch 1, nodes 2 and
    3, switch 4, nodes 5 and 6."""
    return from_description({"tree": {"type": "pfs", "bandwidth": 1000 * MB, "children": [
        {"type": "switch", "bandwidth": 300 * MB,
         "children": [{"type": "node", "count": 2, "bandwidth": 100 * MB}]},
        {"type": "switch", "children": [{"type": "node", "count": 2}]}]}})


def jobs(top: float) -> list[Job]:
    return [Job("a", 0.0, 10.0, nodes=1, bandwidth=top, bb=GB),
            Job("b", 0.0, 10.0, nodes=2, bandwidth=50 * MB)]


def test_from_tree_keeps_only_the_vertex_rows_that_can_bind():
    t = tree()
    free = np.ones(4, bool)
    # 4 free nodes at 250 MB/s are exactly the PFS's 1000 MB/s: that row never binds
    m = IOWindowModel.from_tree(jobs(250 * MB), t, t.fresh_avail(), free, 5 * GB,
                                total_nodes=8, total_bb=20 * GB, objectives=("nodes", "order"),
                                order=[1, 5], forced=[False, True])
    assert [g.tolist() for g in m.group_nodes] == [[0, 1], [2, 3]]
    assert m.group_link.tolist() == [100 * MB, INF]
    assert m.vertices.tolist() == [1] and m.vertex_avail.tolist() == [300 * MB]
    assert m.membership.tolist() == [[True, False]]
    assert m.bandwidth.tolist() == [250 * MB, 50 * MB]
    w = m.window
    assert (w.free_nodes, w.free_bb, w.total_nodes, w.total_bb) == (4, 5 * GB, 8, 20 * GB)
    assert w.objectives == ("nodes", "order") and w.job_ids == ("a", "b")
    assert w.order.tolist() == [1, 5] and w.forced.tolist() == [False, True]
    # one byte/s more and the PFS row is kept, over both groups
    m = IOWindowModel.from_tree(jobs(250 * MB + 1), t, t.fresh_avail(), free, 5 * GB)
    assert m.vertices.tolist() == [0, 1]
    assert m.membership.tolist() == [[True, True], [True, False]]
    assert m.vertex_avail.tolist() == [1000 * MB, 300 * MB]
    assert (m.window.total_nodes, m.window.objectives) == (4, ("nodes", "bb"))


def test_from_tree_groups_by_parent_and_free_link_and_clamps_what_is_left():
    t = tree()
    avail = t.fresh_avail()
    avail[1] = -5.0  # a switch over-committed by running jobs: nothing left
    avail[3] = 50 * MB  # node 1's link half taken
    m = IOWindowModel.from_tree(jobs(10 * MB), t, avail, np.ones(4, bool), -1.0)
    assert [g.tolist() for g in m.group_nodes] == [[0], [1], [2, 3]]
    assert m.group_link.tolist() == [100 * MB, 50 * MB, INF]
    assert m.vertices.tolist() == [1] and m.vertex_avail.tolist() == [0.0]
    assert m.membership.tolist() == [[True, True, False]]
    assert m.window.free_bb == 0.0
    busy = IOWindowModel.from_tree(jobs(10 * MB), t, t.fresh_avail(),
                                   np.array([True, False, True, True]), GB)
    assert [g.tolist() for g in busy.group_nodes] == [[0], [2, 3]]
    assert busy.window.free_nodes == 3
    # no job draws bandwidth: no row at all
    still = IOWindowModel.from_tree([Job("c", 0.0, 1.0, nodes=4)], t, avail, np.ones(4, bool),
                                    GB)
    assert still.vertices.tolist() == [] and still.membership.shape == (0, 3)


def two_groups(bandwidth: float, avail: float, nodes: int = 3) -> IOWindowModel:
    """Two unlimited groups of two nodes under one vertex of ``avail`` B/s."""
    window = WindowModel(nodes=[nodes], bb=[0.0], free_nodes=4, free_bb=0.0)
    return IOWindowModel(window=window, bandwidth=[bandwidth], group_nodes=([0, 1], [2, 3]),
                         group_link=[INF, INF], vertices=[0], vertex_avail=[avail],
                         membership=[[True, True]])


def test_place_one_at_a_byte_per_second():
    # 1 B/s per node under a vertex of 2 B/s: two nodes, not three, across both groups
    assert two_groups(1.0, 2.0).place_one(0, np.array([2, 2]), np.array([2.0])) is None
    assert two_groups(1.0, 2.0, nodes=2).place_one(0, np.array([2, 2]),
                                                   np.array([2.0])).tolist() == [2, 0]
    assert two_groups(1.0, 2.0).place_one(0, np.array([1, 2]), np.array([2.0])) is None
    row = two_groups(0.5, 2.0).place_one(0, np.array([1, 2]), np.array([2.0]))
    assert row.tolist() == [1, 2] and row.dtype == np.int64


def test_place_one_goes_on_past_a_group_without_room():
    m = herbein_case()
    # vertex 7 (over the first group) exhausted: job 2 takes a node of the second group
    assert m.place_one(2, np.array([2, 3]), np.array([0.0, 400 * MB])).tolist() == [0, 1]
    y = m.greedy()
    assert y.dtype == np.int64


def test_a_vertex_at_its_bandwidth_plus_its_slack_is_not_over_allocated():
    avail = 300.0
    edge = avail + (avail * REL_TOL + 1e-6)
    w = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0)
    m = IOWindowModel(window=w, bandwidth=[edge], group_nodes=([0],), group_link=[INF],
                      vertices=[0], vertex_avail=[avail], membership=[[True]])
    assert m.violations([[1]]) == []


def test_placement_of_three_jobs_sharing_a_group():
    m = herbein_case()
    assert m.placement([[0, 1], [0, 1], [0, 1]]) == {0: (2,), 1: (3,), 2: (4,)}


def test_integer_bandwidth_unit_from_the_vertices_and_its_bound():
    w = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0)

    def unit(bw: float, avail: float) -> tuple[float, np.ndarray, np.ndarray]:
        m = IOWindowModel(window=w, bandwidth=[bw], group_nodes=([0],), group_link=[INF],
                          vertices=[0], vertex_avail=[avail], membership=[[True]])
        req, cap, u = m.integer_bandwidth()
        return u, req, cap

    assert unit(1e8, 2e9)[0] == 1e4  # the vertex, not the request, sets the unit
    assert unit(0.0, 1_000_000.5)[0] == 10.0  # just over a million units of 1 B/s
    assert unit(0.0, 1_000_000.0)[0] == 1.0
    u, req, cap = unit(1e8, 2e9)
    assert req.dtype == np.int64 and cap.dtype == np.int64


def test_from_tree_rows_beside_unlimited_vertices_and_at_the_edge():
    # an unlimited PFS above a switch of 300 MB/s: the switch's row is kept
    t = from_description({"tree": {"type": "pfs", "children": [
        {"type": "switch", "bandwidth": 300 * MB,
         "children": [{"type": "node", "count": 2}]}]}})
    m = IOWindowModel.from_tree(jobs(200 * MB), t, t.fresh_avail(), np.ones(2, bool), GB)
    assert m.vertices.tolist() == [1] and m.vertex_avail.tolist() == [300 * MB]
    # two nodes at exactly the switch's bandwidth and its slack: the row never binds
    edge = 300 * MB * (1 + REL_TOL) / 2
    m = IOWindowModel.from_tree(jobs(edge), t, t.fresh_avail(), np.ones(2, bool), GB)
    assert m.vertices.tolist() == []
    # 1 B/s per node under a switch with 1 B/s left binds
    avail = t.fresh_avail()
    avail[1] = 1.0
    m = IOWindowModel.from_tree([Job("a", 0.0, 1.0, nodes=2, bandwidth=1.0)], t, avail,
                                np.ones(2, bool), GB)
    assert m.vertices.tolist() == [1]
    # no job in the window
    empty = IOWindowModel.from_tree([], t, t.fresh_avail(), np.ones(2, bool), GB)
    assert empty.size == 0 and empty.vertices.tolist() == []
    req, cap, unit = empty.integer_bandwidth()
    assert req.tolist() == [] and unit == 1.0


def test_arrays_are_converted_to_their_kinds():
    window = WindowModel(nodes=[2, 2, 1], bb=[0.0, 0.0, GB], free_nodes=5, free_bb=10 * GB)
    m = IOWindowModel(window=window, bandwidth=[100_000_000, 120_000_000, 50_000_000],
                      group_nodes=([0.0, 1.0], [2.0, 3.0, 4.0]), group_link=[100_000_000, 10 ** 12],
                      vertices=[7.0, 9.0], vertex_avail=[150_000_000, 400_000_000],
                      membership=[[1, 0], [1, 1]])
    assert m.bandwidth.dtype == np.float64 and m.vertex_avail.dtype == np.float64
    assert m.group_link.dtype == np.float64 and m.membership.dtype == bool
    assert m.vertices.dtype == np.int64 and all(g.dtype == np.int64 for g in m.group_nodes)
    # membership given as 0/1 is a mask of groups, not their indices
    assert m.greedy().tolist() == herbein_case().greedy().tolist() == [[1, 1], [0, 0], [1, 0]]


def test_a_link_at_exactly_the_relative_slack_over_a_jobs_bandwidth():
    link = 100 * MB
    w = WindowModel(nodes=[1], bb=[0.0], free_nodes=1, free_bb=0.0)
    one = IOWindowModel(window=w, bandwidth=[link * (1 + REL_TOL)], group_nodes=([0],),
                        group_link=[link], vertices=[], vertex_avail=[],
                        membership=np.zeros((0, 1), bool))
    assert one.admissible().tolist() == [[True]]

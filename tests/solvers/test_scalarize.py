"""The one objective form turned into Results, by hand (Fan et al., BBSched, Sections 3.2 and
3.2.4; :mod:`bbopt.solvers.scalarize`): on a window of three jobs every form's answer, key,
bound, statistics and the queue-order tie-break are computed here and compared exactly.

The window: jobs of 1, 2 and 4 nodes asking 10, 0 and 30 GB, 6 nodes and 40 GB free, a machine
of 8 nodes and 80 GB (so the utilisation fractions are nodes / 8 and bytes / 80 GB), order
weights 3, 2, 1 (the job nearest the window front weighs most). Its feasible selections:

====  =========  =====  =========  ============  =====
name  selection  nodes  BB (GB)    weighted sum  order
====  =========  =====  =========  ============  =====
A     1 0 0      1      10         0.25          3
B     0 1 0      2      0          0.25          2
C     1 1 0      3      10         0.5           5
D     0 0 1      4      30         0.875         1
E     1 0 1      5      40         1.125         4
G     0 1 1      6      30         1.125         3
====  =========  =====  =========  ============  =====
"""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import GB, Status
from bbopt.errors import InputError
from bbopt.models.window import WindowModel
from bbopt.solvers.scalarize import (
    Candidates,
    Form,
    best_result,
    integer_weights,
    pareto_result,
    scalar_result,
)

WINDOW = WindowModel(nodes=[1, 2, 4], bb=[10 * GB, 0.0, 30 * GB], free_nodes=6,
                     free_bb=40 * GB, total_nodes=8, total_bb=80 * GB)
SEL = {"A": [1, 0, 0], "B": [0, 1, 0], "C": [1, 1, 0], "D": [0, 0, 1], "E": [1, 0, 1],
       "G": [0, 1, 1]}
VALUES = {"A": (1.0, 10e9), "B": (2.0, 0.0), "C": (3.0, 10e9), "D": (4.0, 30e9),
          "E": (5.0, 40e9), "G": (6.0, 30e9)}
CANDS = Candidates(WINDOW)


def _cs(*names: str) -> list[np.ndarray]:
    return [np.array(SEL[n], dtype=bool) for n in names]


def _name(x) -> str:
    return next(n for n, s in SEL.items() if list(np.asarray(x, dtype=int)) == s)


def test_the_window_is_the_one_of_the_table():
    assert WINDOW.objectives == ("nodes", "bb")
    assert list(WINDOW.scales()) == [8.0, 80e9]
    assert list(WINDOW.order) == [3, 2, 1]
    for n, x in zip(SEL, _cs(*SEL), strict=True):
        assert WINDOW.evaluate(x) == VALUES[n]


# --- Form ----------------------------------------------------------------------------------

def test_an_unknown_form_is_refused_naming_the_known_ones():
    with pytest.raises(InputError) as err:
        Form.of(("nodes", "bb"), "best")
    assert err.value.reason == "unknown form 'best'; known: pareto, weighted, lexicographic"
    assert err.value.field == "form"


def test_form_defaults_and_priority():
    f = Form.of(("nodes", "bb"))
    assert (f.kind, f.names, list(f.weights), f.tiebreak) == ("pareto", ("nodes", "bb"),
                                                              [1.0, 1.0], True)
    assert Form.of(("nodes", "bb"), "weighted", weights=[]).weights.tolist() == [1.0, 1.0]
    w = Form.of(("nodes", "bb"), "weighted", weights=[2, 0.5], tiebreak=False)
    assert w.weights.dtype == np.float64 and w.weights.tolist() == [2.0, 0.5]
    assert w.tiebreak is False
    lex = Form.of(("nodes", "bb"), "lexicographic", priority=("bb",))
    assert lex.names == ("bb",)
    assert Form.of(("nodes", "bb"), "lexicographic").names == ("nodes", "bb")
    assert Form.of(("nodes", "bb"), "pareto", priority=("bb",)).names == ("nodes", "bb")


def test_form_stages_add_the_tiebreak_once():
    weighted = Form.of(WINDOW.objectives, "weighted")
    assert weighted.stages(WINDOW) == [{"nodes": 10_000_000, "bb": 1000}, {"order": 1}]
    assert Form.of(WINDOW.objectives, "weighted", tiebreak=False).stages(WINDOW) == [
        {"nodes": 10_000_000, "bb": 1000}]
    lex = Form.of(WINDOW.objectives, "lexicographic", priority=("bb", "nodes"))
    assert lex.stages(WINDOW) == [{"bb": 1}, {"nodes": 1}, {"order": 1}]
    own = Form.of(WINDOW.objectives, "lexicographic", priority=("order", "bb"))
    assert own.stages(WINDOW) == [{"order": 1}, {"bb": 1}]


def test_form_value_and_keys():
    weighted = Form.of(WINDOW.objectives, "weighted", weights=[1.0, 3.0])
    assert weighted.value(WINDOW, VALUES["E"]) == 5 / 8 + 3 * 0.5
    lex = Form.of(WINDOW.objectives, "lexicographic", priority=("bb", "nodes"))
    assert lex.value(WINDOW, VALUES["E"]) == (40e9, 5.0)
    X = np.array(_cs("A", "E", "G"))
    keys = Form.of(WINDOW.objectives, "weighted").keys(WINDOW, X)
    assert keys.tolist() == [[0.25, 3.0], [1.125, 4.0], [1.125, 3.0]]
    plain = Form.of(WINDOW.objectives, "weighted", tiebreak=False).keys(WINDOW, X)
    assert plain.tolist() == [[0.25], [1.125], [1.125]]
    assert lex.keys(WINDOW, X).tolist() == [[10e9, 1.0, 3.0], [40e9, 5.0, 4.0],
                                            [30e9, 6.0, 3.0]]


# --- integer weights -----------------------------------------------------------------------

def test_integer_weights_by_hand():
    """Units: 8 nodes / 1 node and 80 GB / 1 MB; weights (1, 1) give ratios 1/8 and 1/80,000,
    so 1000 times each over the least: 10,000,000 and 1000."""
    assert integer_weights(WINDOW, [1.0, 1.0]) == {"nodes": 10_000_000, "bb": 1000}
    assert integer_weights(WINDOW, [0.0, 2.0]) == {"bb": 1000}  # (a zero weight left out)
    assert integer_weights(WINDOW, [1e-4, 1.0]) == {"nodes": 1000, "bb": 1000}
    assert integer_weights(WINDOW, [3e-4, 1.0]) == {"nodes": 3000, "bb": 1000}


def test_integer_weights_of_an_objective_over_no_capacity(recwarn):
    """No BB free and none on the platform: every selection scores 0 B, so the BB weight
    counts for nothing (no overflow of 1 / 1e-300), and weights on it alone leave the tie-break
    to decide."""
    empty = WindowModel(nodes=[1, 2], bb=[0.0, 0.0], free_nodes=3, free_bb=0.0)
    assert integer_weights(empty, [1.0, 1.0]) == {"nodes": 1000}
    assert integer_weights(empty, [0.0, 1.0]) == {}
    assert integer_weights(empty, [2.0, 0.0]) == {"nodes": 1000}
    assert not recwarn.list


@pytest.mark.parametrize("weights, message", [
    ([1.0], "1 weights for 2 objectives"),
    ([1.0, 1.0, 1.0], "3 weights for 2 objectives"),
    ([1.0, -0.5], "weights must be >= 0"),
    ([float("nan"), 1.0], "weights must be >= 0"),
    ([0.0, 0.0], "at least one weight must be positive"),
])
def test_integer_weights_refusals(weights, message):
    with pytest.raises(InputError) as err:
        integer_weights(WINDOW, weights)
    assert err.value.reason == message
    assert err.value.field == "weights"


# --- Results -------------------------------------------------------------------------------

def test_pareto_result_keeps_the_front_sorted_by_the_first_objective():
    info = {"nodes explored": 7}
    r = pareto_result(CANDS, _cs(*SEL), Status.FEASIBLE, "mine", info)
    assert [_name(s.x) for s in r.pareto] == ["G", "E"]
    assert [s.objectives for s in r.pareto] == [VALUES["G"], VALUES["E"]]
    assert _name(r.solution) == "G" and r.objective == VALUES["G"]
    assert (r.status, r.backend, r.info, r.bound) == (Status.FEASIBLE, "mine", info, None)


def test_pareto_result_prefers_the_selection_nearest_the_front_among_equals():
    """Two jobs alike: selecting either gives the same objective values; the one nearer the
    window front (order weight 3 against 2) is kept, whatever the candidates' order; with equal
    order weights too, the first candidate."""
    twins = WindowModel(nodes=[2, 2, 1], bb=[0.0, 0.0, 0.0], free_nodes=2, free_bb=0.0,
                        total_nodes=8, total_bb=80 * GB)
    first, second = np.array([1, 0, 0], bool), np.array([0, 1, 0], bool)
    for cs in ([second, first], [first, second]):
        r = pareto_result(Candidates(twins), cs, Status.OPTIMAL, "b", {})
        assert len(r.pareto) == 1 and r.pareto[0].x.tolist() == first.tolist()
    alike = WindowModel(nodes=[2, 1, 1], bb=[0.0, 0.0, 0.0], free_nodes=2, free_bb=0.0,
                        total_nodes=8, total_bb=80 * GB)
    head, pair = np.array([1, 0, 0], bool), np.array([0, 1, 1], bool)  # order 3 and 2 + 1
    for cs in ([head, pair], [pair, head]):
        r = pareto_result(Candidates(alike), cs, Status.OPTIMAL, "b", {})
        assert r.solution.tolist() == cs[0].tolist()


def test_scalar_result_of_a_weighted_solve_and_its_bound():
    form = Form.of(WINDOW.objectives, "weighted")
    e = _cs("E")[0]
    r = scalar_result(CANDS, e, form, Status.OPTIMAL, "cp")
    assert (r.status, r.objective, r.bound, r.backend) == (Status.OPTIMAL, 1.125, 1.125, "cp")
    assert r.info == {"objectives": VALUES["E"]} and r.solution is e
    cases = [((), None), ([(1000, 1200.0)], 1.125 * 1200.0 / 1000), ([(1000, 900.0)], 1.125),
             ([(1, 1.5)], 1.125 * 1.5 / 1), ([(0, 5.0)], None), ([(1000, None)], None)]
    for bounds, bound in cases:  # a feasible answer: the stage-1 ratio bounds it
        got = scalar_result(CANDS, e, form, Status.FEASIBLE, "cp", bounds)
        assert got.bound == bound and got.objective == 1.125


def test_scalar_result_of_a_lexicographic_solve():
    form = Form.of(WINDOW.objectives, "lexicographic", priority=("bb", "nodes"))
    g = _cs("G")[0]
    r = scalar_result(CANDS, g, form, Status.FEASIBLE, "ilp")
    assert (r.status, r.objective, r.bound, r.backend) == (Status.FEASIBLE, (30e9, 6.0), None,
                                                           "ilp")
    assert r.info == {"objectives": VALUES["G"]} and r.solution is g


def test_best_result_of_every_form():
    info = {"candidates": 6}
    none = best_result(CANDS, [], Form.of(WINDOW.objectives), "ex", info)
    assert (none.status, none.solution, none.backend) == (Status.INFEASIBLE, None, "ex")
    front = best_result(CANDS, _cs(*SEL), Form.of(WINDOW.objectives), "ex", info)
    assert front.status is Status.OPTIMAL and front.backend == "ex" and front.info == info
    assert [_name(s.x) for s in front.pareto] == ["G", "E"]
    weighted = Form.of(WINDOW.objectives, "weighted")
    w = best_result(CANDS, _cs("G", "E", "A"), weighted, "ex", info)  # E: equal sum, order 4
    assert (_name(w.solution), w.objective, w.bound, w.status) == ("E", 1.125, 1.125,
                                                                   Status.OPTIMAL)
    assert w.backend == "ex" and w.info == {"objectives": VALUES["E"], "candidates": 6}
    flat = best_result(CANDS, _cs("G", "E"), Form.of(WINDOW.objectives, "weighted",
                                                     tiebreak=False), "ex", {})
    assert _name(flat.solution) == "G"  # (no tie-break: the first of equals)
    lex = Form.of(WINDOW.objectives, "lexicographic", priority=("bb", "nodes"))
    r = best_result(CANDS, _cs("G", "E", "D"), lex, "ex", info)
    assert (_name(r.solution), r.objective, r.bound) == ("E", (40e9, 5.0), None)
    assert r.backend == "ex" and r.info == {"objectives": VALUES["E"], "candidates": 6}


def test_best_result_from_keys_given_by_the_backend():
    """Keys handed over (the best of each part): the largest key wins, its first entry is the
    weighted objective (and its bound); a lexicographic answer is the key's first entries."""
    weighted = Form.of(WINDOW.objectives, "weighted")
    r = best_result(CANDS, _cs("A", "D"), weighted, "parts", {}, keys=[(0.9, 3.0), (0.8, 9.0)])
    assert (_name(r.solution), r.objective, r.bound) == ("A", 0.9, 0.9)
    lex = Form.of(WINDOW.objectives, "lexicographic", priority=("bb",))
    r = best_result(CANDS, _cs("A", "D"), lex, "parts", {}, keys=[(1.0, 2.0), (1.0, 5.0)])
    assert (_name(r.solution), r.objective) == ("D", (1.0,))

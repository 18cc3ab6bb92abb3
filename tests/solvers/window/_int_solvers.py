"""What every exact window backend's solver must answer (the
:class:`~bbopt.solvers.window.forms.IntSolver` the drivers use; Fan et al., BBSched, Section
3.2, solved exactly), checked against the enumerating stand-in of ``test_forms_drivers``: the
optimum of each objective with the forced and refused jobs kept, the temporary rows the
epsilon-constraint pushes and pops, the permanent disjunctions of the disjunctive front, the
auxiliary level counts of the wasted-SSD objective, and an infeasible program."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from bbopt.core import GB, Status
from bbopt.models.window import WindowModel
from bbopt.solvers.window.forms import LinearForm, linear_form
from tests.solvers.window.test_forms_drivers import Enumerating

#: 7 free nodes, 11 GB: J0 (4 nodes, 2 GB), J1 and J2 (2 nodes, 5 GB), J3 forced (1 node,
#: 1 GB), J4 (8 nodes: never fits, refused). Node optimum 7 ({J0, J1 or J2, J3}: 8 GB); BB
#: optimum 11 GB ({J1, J2, J3}: 5 nodes).
FORCED = WindowModel(nodes=[4, 2, 2, 1, 8], bb=[2 * GB, 5 * GB, 5 * GB, GB, GB], free_nodes=7,
                     free_bb=11 * GB, forced=[False, False, False, True, False])
#: Two 1-node jobs (40 GB and 80 GB of SSD) on a 50 GB and a 100 GB node: the wasted SSD
#: counts the jobs placed per SSD level (auxiliary integers A).
LEVELS = WindowModel(nodes=[1, 1], bb=[0.0, 0.0], free_nodes=2, free_bb=0.0,
                     ssd=[40 * GB, 80 * GB], free_node_ssd=[50 * GB, 100 * GB],
                     objectives=("nodes", "ssd_waste"))

#: J0 (2 nodes, 2 GB) asks 100 GB of SSD on nodes of 50 GB: refused, though it fits the node
#: and BB rows (and would beat J1, 2 nodes, and J2, 2 GB, on 2 nodes and 2 GB).
UNFIT = WindowModel(nodes=[2, 2, 1], bb=[2 * GB, 0.0, 2 * GB], free_nodes=2, free_bb=2 * GB,
                    ssd=[100 * GB, 0.0, 0.0], free_node_ssd=[50 * GB, 50 * GB])

Solve = tuple[Status, np.ndarray | None, np.ndarray | None, float | None]


def value(lf: LinearForm, name: str, answer: Solve) -> int:
    _, x, a, _ = answer
    return lf.value(name, x, a if lf.k else np.zeros(0, np.int64))


def feasible(lf: LinearForm, x: np.ndarray, a: np.ndarray, extra=()) -> bool:
    x = x.astype(np.int64)
    a = a.astype(np.int64) if lf.k else np.zeros(0, np.int64)
    rows = [(cx, ca, ub) for cx, ca, ub in lf.rows]
    return (not np.any(x[lf.fix0]) and bool(np.all(x[lf.fix1]))
            and all(int(cx @ x) + (int(ca @ a) if lf.k else 0) <= ub for cx, ca, ub in rows)
            and all(int(cx @ x) + (int(ca @ a) if lf.k else 0) >= r for cx, ca, r in extra))


def check_each_objective(make: Callable[[LinearForm], object], model: WindowModel,
                         names: list[str]) -> None:
    """Every objective of the form maximised alone: the enumerated optimum, proven, with the
    forced jobs in and the refused ones out."""
    lf = linear_form(model, names)
    solver, ref = make(lf), Enumerating(lf)
    for name, (cx, ca) in lf.objectives.items():
        got, want = solver.maximize(cx, ca, 10.0), ref.maximize(cx, ca, 10.0)
        assert got[0] is Status.OPTIMAL, name
        assert feasible(lf, got[1], got[2]), name
        assert value(lf, name, got) == value(lf, name, want), name


def check_rows_pushed_popped_and_disjunctions(make: Callable[[LinearForm], object]) -> None:
    """On ``FORCED``: nodes maximised with BB >= 9 GB pushed (5 nodes: {J1, J2, J3}), then the
    row popped (7 nodes again); BB >= 12 GB pushed (over the capacity): infeasible; then a
    permanent disjunction "nodes >= 7 or BB >= 11 GB" and BB maximised (11 GB: {J1, J2, J3}),
    and nodes maximised under it (7)."""
    lf = linear_form(FORCED, ["nodes", "bb"])
    solver = make(lf)
    (cn, an), (cb, ab) = lf.objectives["nodes"], lf.objectives["bb"]
    gb = int(cb[3])  # J3's 1 GB in the form's BB units
    h = solver.push_ge(cb, ab, 9 * gb)
    got = solver.maximize(cn, an, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "nodes", got) == 5
    assert list(got[1]) == [False, True, True, True, False]
    solver.pop(h)
    got = solver.maximize(cn, an, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "nodes", got) == 7
    h = solver.push_ge(cb, ab, 12 * gb)
    assert solver.maximize(cn, an, 10.0)[:3] == (Status.INFEASIBLE, None, None)
    solver.pop(h)
    solver.add_any_ge([(cn, an, 7), (cb, ab, 11 * gb)])
    got = solver.maximize(cb, ab, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "bb", got) == 11 * gb
    assert feasible(lf, got[1], got[2])
    got = solver.maximize(cn, an, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "nodes", got) == 7
    # a disjunction only one way of which is open: nodes >= 7 (BB then at most 8 GB) or
    # BB >= 12 GB (impossible)
    solver.add_any_ge([(cn, an, 7), (cb, ab, 12 * gb)])
    got = solver.maximize(cb, ab, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "bb", got) == 8 * gb


def check_levels(make: Callable[[LinearForm], object]) -> None:
    """On ``LEVELS``: the wasted SSD maximised (no job, nothing wasted); the least waste of a
    one-node selection (the 40 GB job on the 50 GB node) pushed as a floor, under which nodes
    are maximised (1 node, the level counts A of the answer consistent with every row), then
    the floor popped (2 nodes)."""
    lf = linear_form(LEVELS, ["nodes", "ssd_waste"])
    assert lf.k > 0
    solver, ref = make(lf), Enumerating(lf)
    (cn, an), (cw, aw) = lf.objectives["nodes"], lf.objectives["ssd_waste"]
    got = solver.maximize(cw, aw, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "ssd_waste", got) == 0
    assert list(got[1]) == [False, False]
    h = ref.push_ge(cn, an, 1)
    floor = value(lf, "ssd_waste", ref.maximize(cw, aw, 10.0))  # -10 GB in the form's units
    ref.pop(h)
    assert floor < 0
    h = solver.push_ge(cw, aw, floor)
    got = solver.maximize(cn, an, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "nodes", got) == 1
    assert list(got[1]) == [True, False]
    assert feasible(lf, got[1], got[2], [(cw, aw, floor)])
    solver.pop(h)
    got = solver.maximize(cn, an, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "nodes", got) == 2
    assert feasible(lf, got[1], got[2])
    # "both jobs, or no more waste than the floor": the waste's least value is negative, so
    # the big-M of its term counts it (M = floor - least); both jobs still reachable
    solver.add_any_ge([(cn, an, 2), (cw, aw, floor)])
    got = solver.maximize(cn, an, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "nodes", got) == 2
    got = solver.maximize(cw, aw, 10.0)
    assert got[0] is Status.OPTIMAL and value(lf, "ssd_waste", got) == 0


def check_all(make: Callable[[LinearForm], object]) -> None:
    check_each_objective(make, FORCED, ["nodes", "bb"])
    check_each_objective(make, LEVELS, ["nodes", "ssd_waste"])
    check_each_objective(make, UNFIT, ["nodes", "bb"])
    check_rows_pushed_popped_and_disjunctions(make)
    check_levels(make)

"""Jeannot et al.'s pack model evaluated by hand (IJHPCA 2023, equation (1) and the average
bandwidth constraint): the node row at exactly the free nodes and one over, the average-bandwidth
row at the longest member's time alone and within its relative slack, times alone and I/O times
from the I/O node's bandwidth, the objective stages, the tie-break order's scores, the greedy
builders' first fit, the seeded random order and the integer form's rounding."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import Job
from bbopt.errors import InputError
from bbopt.models.packs import REL, PackModel, integer_form, order_keys


def model(q, t, u, cap, stages=None, **kw) -> PackModel:
    q, t, u = (np.asarray(a, dtype=float if k else np.int64) for k, a in enumerate((q, t, u)))
    ids = tuple(f"a{i}" for i in range(len(q)))
    stages = stages if stages is not None else (q * t,)
    return PackModel(ids, q, t, u, t, cap, tuple(np.asarray(s, float) for s in stages), **kw)


def periodic(id_, n, w, v, nodes, submit=0.0):
    """``n`` iterations of ``w`` seconds of compute then ``v`` bytes of I/O."""
    return Job(id_, submit, walltime=1.0, nodes=nodes,
               extra={"io": {"iterations": n, "compute_seconds": w, "io_bytes": v}})


def refusal(**kw) -> tuple[str, str | None]:
    base = {"q": [1, 1], "t": [10.0, 10.0], "u": [0.0, 0.0], "cap": 2}
    base.update(kw)
    with pytest.raises(InputError) as e:
        model(**base)
    return e.value.reason, e.value.field


# --- the model's refusals -------------------------------------------------------------------

def test_refusals_name_the_field():
    ids = ("a", "b")
    one = np.ones(2)
    for name in ("nodes", "duration", "io_time", "char"):
        arrays = {"nodes": np.ones(2, np.int64), "duration": one, "io_time": 0 * one,
                  "char": one}
        arrays[name] = arrays[name][:1]
        with pytest.raises(InputError) as e:
            PackModel(ids, arrays["nodes"], arrays["duration"], arrays["io_time"],
                      arrays["char"], 2, (one,))
        assert (e.value.reason, e.value.field) == (
            f"pack model: {name} has 1 entries for 2 applications", name)
    stage_msg = ("pack model: every objective stage needs one coefficient per application",
                 "stages")
    assert refusal(stages=()) == stage_msg
    assert refusal(stages=([1.0, 1.0], [1.0])) == stage_msg
    assert refusal(cap=-1) == ("pack model: capacity must be >= 0, got -1", "capacity")
    dur = ("pack model: durations must be > 0 and I/O times >= 0", "duration")
    assert refusal(t=[10.0, 0.0]) == dur
    assert refusal(u=[0.0, -1e-300]) == dur
    over = ("pack model: an application's I/O time exceeds its duration", "io_time")
    assert refusal(u=[0.0, 10.0 * (1 + 3 * REL)]) == over
    assert refusal(tolerance=1.0) == ("pack model: tolerance must be in [0, 1), got 1.0",
                                      "tolerance")
    assert refusal(tolerance=-0.01)[1] == "tolerance"
    # the bounds themselves: no free node, a tiny duration, I/O as long as the time alone and
    # within the relative slack over it, a tolerance just below 1
    for kw in ({"cap": 0}, {"t": [1e-300, 10.0]}, {"u": [10.0, 10.0 * (1 + REL / 2)]},
               {"tolerance": 0.99}):
        base = {"q": [1, 1], "t": [10.0, 10.0], "u": [0.0, 0.0], "cap": 2, **kw}
        model(**base)


def test_from_jobs_refuses_an_unknown_objective_and_a_bandwidth_not_above_zero():
    jobs = [Job("a", 0.0, 10.0)]
    with pytest.raises(InputError) as e:
        PackModel.from_jobs(jobs, 1, 1e9, objective="speed")
    assert (e.value.reason, e.value.field) == (
        "pack objective must be one of work, stretch-work, lexicographic, got 'speed'",
        "objective")
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(InputError) as e:
            PackModel.from_jobs(jobs, 1, bad)
        assert e.value.reason == f"bandwidth must be > 0 bytes/s, got {bad!r}"
        assert e.value.field == "bandwidth"
    assert PackModel.from_jobs(jobs, 1, 1e-300).size == 1


# --- equation (1) and the objective stages ---------------------------------------------------

def jeannot_jobs() -> list[Job]:
    # A: 3 x (2 s + 1.5 GB at 0.5 GB/s = 3 s); B: no I/O profile, its walltime; C: nothing to do
    return [periodic("A", 3, 2.0, 1.5e9, nodes=2, submit=10.0),
            Job("B", 40.0, 100.0, nodes=3),
            periodic("C", 1, 0.0, 0.0, nodes=1)]


def test_times_alone_io_times_and_characteristic_times():
    m = PackModel.from_jobs(jeannot_jobs(), 5.0, 0.5e9, now=30.0)
    assert m.ids == ("A", "B", "C") and m.nodes.tolist() == [2, 3, 1]
    assert m.duration.tolist() == [15.0, 100.0, 1e-9]  # n (w + v / b); a job's own walltime
    assert m.io_time.tolist() == [9.0, 0.0, 0.0]  # n v / b
    assert m.char.tolist() == [5.0, 100.0, 0.0]  # w + v / b
    assert m.capacity == 5 and type(m.capacity) is int
    assert m.stages[0].tolist() == [30.0, 300.0, 1e-9] and m.names == ("work",)
    assert (m.tolerance, m.seed, m.fallback_order) == (0.0, 0, "max")


def test_stretch_work_counts_the_wait_from_submission_never_negative():
    m = PackModel.from_jobs(jeannot_jobs(), 5, 0.5e9, now=30.0, objective="stretch-work")
    # A: 2 x (30 - 10 + 15) = 70; B submitted after now: 3 x (0 + 100); C: 1 x (30 + 1e-9)
    assert m.stages[0].tolist() == [70.0, 300.0, 30.0 + 1e-9]
    assert m.names == ("stretch-work",)
    lex = PackModel.from_jobs(jeannot_jobs(), 5, 0.5e9, now=30.0, objective="lexicographic",
                              tolerance=0.25, seed=3, fallback_order="char")
    assert [s.tolist() for s in lex.stages] == [[30.0, 300.0, 1e-9], [70.0, 300.0, 30.0 + 1e-9]]
    assert lex.names == ("work", "stretch-work")
    assert (lex.tolerance, lex.seed, lex.fallback_order) == (0.25, 3, "char")
    assert lex.evaluate(np.array([1, 0, 1], bool)) == (30.0 + 1e-9, 100.0 + 1e-9)


def test_tiebreak_scores_the_first_in_the_order_most():
    # Char, non-decreasing: C (0), A (5), B (100): scores 3, 2, 1 by that order
    m = PackModel.from_jobs(jeannot_jobs(), 5, 0.5e9, tiebreak="char")
    assert m.stages[1].tolist() == [2.0, 1.0, 3.0] and m.names == ("work", "char-order")
    # Max, non-increasing time alone: B (100), A (15), C
    m = PackModel.from_jobs(jeannot_jobs(), 5, 0.5e9, objective="lexicographic",
                            tiebreak="max")
    assert m.stages[2].tolist() == [2.0, 3.0, 1.0]
    assert m.names == ("work", "stretch-work", "max-order")


# --- the rows ----------------------------------------------------------------------------------

def test_node_row_at_exactly_the_free_nodes_and_one_over():
    m = model([2, 2, 3], [10, 10, 10], [0, 0, 0], cap=4)
    assert m.feasible(np.array([1, 1, 0], bool)) and not m.feasible(np.array([0, 1, 1], bool))
    assert m.feasible(np.zeros(3, bool))  # the empty pack
    assert m.greedy([0, 1, 2]).tolist() == [True, True, False]
    assert m.greedy([2, 1, 0]).tolist() == [False, False, True]
    assert model([1], [10], [0], cap=0).feasible(np.zeros(1, bool))


def test_average_bandwidth_row_within_its_relative_slack():
    # the longest member lasts 10 s: 10 s of I/O fit, 10 s + 5 ns too (slack 1e-9 x 10 s),
    # 10 s + 20 ns do not
    for extra, fits in ((0.0, True), (5e-9, True), (2e-8, False)):
        m = model([1, 1], [10, 10], [6, 4 + extra], cap=2)
        both = np.ones(2, bool)
        assert m.feasible(both) is fits, extra
        assert m.greedy([0, 1]).tolist() == [True, fits], extra


def test_a_longer_member_raises_the_pack_time():
    # in the order 0, 1: 2 s of I/O in a 2 s pack, then 7 s more in a pack of 10 s: 9 <= 10
    m = model([1, 1, 1], [2, 10, 10], [2, 7, 1.5], cap=3)
    assert m.greedy([0, 1, 2]).tolist() == [True, True, False]  # 10.5 s of I/O > 10 s
    assert m.greedy([0, 2, 1]).tolist() == [True, False, True]
    assert m.pack_duration(np.array([1, 1, 0], bool)) == 10.0
    assert m.pack_duration(np.zeros(3, bool)) == 0.0
    assert m.evaluate(np.array([1, 0, 1], bool)) == (12.0,)
    allowed, rhs = m.threshold_rows(2)  # equal times alone are allowed beside the longest
    assert allowed.tolist() == [True, True, True] and rhs == 10.0
    allowed, rhs = m.threshold_rows(0)
    assert allowed.tolist() == [True, False, False] and rhs == 2.0


def test_greedy_on_no_application_and_the_fallback_order():
    empty = PackModel((), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0), 4,
                      (np.zeros(0),))
    assert empty.greedy("max").tolist() == [] and empty.size == 0
    # fallback: first fit in the model's order (Max by default, Char here)
    m = PackModel(("a", "b"), np.array([2, 2]), np.array([5.0, 9.0]), np.zeros(2),
                  np.array([1.0, 2.0]), 2, (np.ones(2),), fallback_order="char")
    assert m.fallback().tolist() == [True, False]
    assert m.greedy().tolist() == [False, True]
    assert m.greedy("char-desc").tolist() == [False, True]


# --- orders ------------------------------------------------------------------------------------

def test_random_order_is_a_fixed_function_of_the_seed_and_the_ids():
    ids = ("a", "b", "c", "d", "e", "f")
    z = np.zeros(6)
    assert order_keys("random", ids, z, z, seed=0).tolist() == [1, 4, 5, 0, 3, 2]
    assert order_keys("random", ids, z, z, seed=1).tolist() == [3, 5, 2, 0, 1, 4]
    assert order_keys("random", ids, z, z, seed=7).tolist() == [0, 1, 3, 2, 4, 5]
    # equal ids draw equal keys: they keep the input order
    assert order_keys("random", ("x", "x", "y"), np.zeros(3), np.zeros(3)).tolist() == [2, 0, 1]
    assert order_keys("random", ("x", "y", "x"), np.zeros(3), np.zeros(3)).tolist() == [1, 0, 2]
    with pytest.raises(InputError) as e:
        order_keys("min", ids, z, z)
    assert (e.value.reason, e.value.field) == (
        "pack order must be one of random, max, char, char-desc, got 'min'", "order")
    # Char-desc: ties keep the input order too
    assert order_keys("char-desc", ("a", "b", "c"), np.zeros(3),
                      np.array([1.0, 2.0, 1.0])).tolist() == [1, 0, 2]
    assert order_keys("max", ("a", "b", "c"), np.array([1.0, 2.0, 1.0]),
                      np.zeros(3)).tolist() == [1, 0, 2]


# --- the integer form ------------------------------------------------------------------------

def test_integer_form_rounds_durations_down_io_up_on_a_power_of_two():
    # resolution 1000 over a longest 10 s: 2 ** floor(log2(100)) = 64 units per second
    t = np.array([10.0, (212 - 1e-8) / 64, 3.3])
    u = np.array([10.0, 1.1, 3.3])
    m = PackModel(("a", "b", "c"), np.array([1, 1, 1]), t, u, t, 3,
                  (np.array([20.0, -5.0, 0.0]), np.zeros(3)))
    t_int, u_int, stages, scale = integer_form(m, resolution=1000)
    assert scale == 64.0
    # 212 - 1e-8 units is 212 within the relative slack; 3.3 s is 211.2 units: 211
    assert t_int.tolist() == [640, 212, 211]
    # 1.1 s is 70.4 units: 71; 3.3 s of I/O is 212 units up, but never more than its time alone
    assert u_int.tolist() == [640, 71, 211]
    assert stages[0].tolist() == [1000, -250, 0]  # the largest |coefficient| is the resolution
    assert stages[1].tolist() == [0, 0, 0]
    assert t_int.dtype == np.int64 and stages[0].dtype == np.int64
    t_int, u_int, stages, scale = integer_form(m)
    assert scale == 2.0 ** 26 and stages[0].tolist() == [10 ** 9, -250_000_000, 0]
    empty = PackModel((), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(0), 1,
                      (np.zeros(0),))
    t_int, u_int, stages, scale = integer_form(empty)
    assert scale == 2.0 ** 29 and t_int.tolist() == [] and stages[0].tolist() == []


def test_io_at_exactly_the_relative_slack_over_the_time_alone():
    t = 10.0
    edge = t * (1 + REL)
    m = model([1, 1], [t, t], [edge, 0.0], cap=2)  # accepted at construction
    assert m.feasible(np.array([1, 0], bool)) and m.feasible(np.array([1, 1], bool))
    assert m.greedy([0, 1]).tolist() == [True, True]


def test_zero_one_selections_given_as_integers():
    m = model([1, 2, 3], [10, 5, 2], [6, 5, 1], cap=4)
    assert m.feasible([1, 0, 1]) and not m.feasible([1, 1, 0])
    assert m.evaluate([1, 0, 1]) == (16.0,)
    assert m.pack_duration([0, 1, 1]) == 5.0


def test_short_packs_are_not_given_a_second():
    # two applications of half a second, the first all I/O: the pack lasts 0.5 s, so 0.4 s more
    # of I/O do not fit
    m = model([1, 1], [0.5, 0.5], [0.5, 0.4], cap=2)
    x = m.greedy([0, 1])
    assert x.tolist() == [True, False] and x.dtype == bool


def test_seeds_reach_the_random_orders():
    jobs = [Job(k, 0.0, 10.0 + i) for i, k in enumerate("abcdef")]
    z = np.zeros(6)
    ids = tuple("abcdef")
    assert order_keys("random", ids, z, z).tolist() == order_keys("random", ids, z, z,
                                                                  seed=0).tolist()
    five = order_keys("random", ids, z, z, seed=5)
    assert five.tolist() != order_keys("random", ids, z, z, seed=0).tolist()
    m = PackModel.from_jobs(jobs, 6, 1e9, tiebreak="random", seed=5)
    expected = np.empty(6)
    expected[five] = np.arange(6, 0, -1)
    assert m.stages[1].tolist() == expected.tolist()
    one = PackModel.from_jobs(jobs, 1, 1e9, seed=5)  # a pack of one: the first in the order
    assert np.flatnonzero(one.greedy("random")).tolist() == [int(five[0])]
    assert one.nodes.dtype == np.int64


def test_stretch_work_from_the_default_decision_time_zero():
    m = PackModel.from_jobs([Job("a", 0.0, 10.0, nodes=2)], 2, 1e9, objective="stretch-work")
    assert m.stages[0].tolist() == [20.0]


def test_integer_form_scales_a_stage_whose_coefficients_are_below_one():
    t = np.array([1.0, 2.0])
    m = PackModel(("a", "b"), np.array([1, 1]), t, np.array([0.3, 0.0]), t, 2,
                  (np.array([0.5, 0.25]),))
    t_int, u_int, stages, scale = integer_form(m, resolution=1000)
    assert scale == 256.0 and t_int.tolist() == [256, 512] and u_int.tolist() == [77, 0]
    assert u_int.dtype == np.int64
    assert stages[0].tolist() == [1000, 500]

"""Exclusive I/O worked by hand on two racks: each rack's I/O node serves its own FIFO (requests
in the order they became due, ties at one instant in job-index order, a transfer ending before
the compute phases ending at the same instant), and the racks never wait for each other."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.simulation.exclusive_io import ExclusiveIO, io_node_usage, time_alone

B = 1e9


def periodic(id_: str, n: int, w: float, io_seconds: float, nodes: int = 1,
             submit: float = 0.0) -> Job:
    t = n * (w + io_seconds)
    return Job(id_, submit, walltime=t, runtime=t, nodes=nodes,
               extra={"io": {"model": "periodic", "iterations": n, "compute_seconds": w,
                             "io_bytes": io_seconds * B, "io_bandwidth": B}})


def run(jobs, nodes, racks):
    model = ExclusiveIO(racks=racks)
    res = simulate(jobs, Platform(nodes=nodes), "fcfs", execution=model)
    return res, model


def order(model, rack, jobs):
    return [(jobs[k].id, s, e) for s, e, k in io_node_usage(model.transfers, 2)[rack]]


def test_two_racks_fifo_order_worked_by_hand():
    """4 nodes in racks [2, 2]. A (2 nodes) fills rack 0 alone; B and C (1 node each) share
    rack 1. A: 2 x (1 s compute, 3 s I/O); B: 2 x (2 s, 2 s); C: 3 x (1 s, 1 s).

    Rack 0: A's I/O 1-4 and 5-8, never delayed: A ends at 8, its time alone.
    Rack 1: t=1 C due, I/O 1-2. t=2 C's transfer ends first, then B's compute: B's I/O 2-4
    while C computes 2-3. t=3 C due, waits (FIFO). t=4 C's I/O 4-5 (waited 1); B computes 4-6.
    t=5 C computes 5-6. t=6 B and C due at once: index order, B first (6-8), C waits to 8-9.
    Ends: A 8, B 8, C 9; C waited 3 s, B none.
    """
    jobs = [periodic("A", 2, 1.0, 3.0, nodes=2), periodic("B", 2, 2.0, 2.0),
            periodic("C", 3, 1.0, 1.0)]
    res, model = run(jobs, 4, [2, 2])
    assert res.start == [0.0, 0.0, 0.0]
    assert order(model, 0, jobs) == [("A", 1, 4), ("A", 5, 8)]
    assert order(model, 1, jobs) == [("C", 1, 2), ("B", 2, 4), ("C", 4, 5), ("B", 6, 8),
                                     ("C", 8, 9)]
    assert res.end == pytest.approx([8.0, 8.0, 9.0])
    assert res.end[0] == pytest.approx(time_alone(jobs[0]))
    waits = model.job_stats()
    assert [waits[k]["io_wait"] for k in range(3)] == pytest.approx([0.0, 0.0, 3.0])
    assert [waits[k]["io_node"] for k in range(3)] == [0.0, 1.0, 1.0]


def test_a_tie_at_one_instant_goes_in_job_index_order():
    """The same three jobs with C listed before B: identical up to t=6, where C (now the lower
    index) takes the node first (6-7) and B waits until 7 (7-9): C ends at 7, B at 9."""
    jobs = [periodic("A", 2, 1.0, 3.0, nodes=2), periodic("C", 3, 1.0, 1.0),
            periodic("B", 2, 2.0, 2.0)]
    res, model = run(jobs, 4, [2, 2])
    assert order(model, 1, jobs) == [("C", 1, 2), ("B", 2, 4), ("C", 4, 5), ("C", 6, 7),
                                     ("B", 7, 9)]
    assert res.end == pytest.approx([8.0, 7.0, 9.0])


def test_one_rack_serialises_what_two_racks_run_in_parallel():
    """The same jobs on one I/O node: A's long transfers now sit in the same FIFO.

    t=1 A and C due (index order): A 1-4, C waits. t=2 B due, behind C. t=4 C 4-5. t=5 C's
    transfer ends first, so B (due 2) takes the node 5-7; then A's compute ends and A queues.
    t=6 C queues behind A. t=7 A 7-10 (its last: A ends at 10). t=9 B queues behind C.
    t=10 C 10-11. t=11 B 11-13 (B ends at 13). t=12 C queues: 13-14 (C ends at 14).
    """
    jobs = [periodic("A", 2, 1.0, 3.0, nodes=2), periodic("B", 2, 2.0, 2.0),
            periodic("C", 3, 1.0, 1.0)]
    res, model = run(jobs, 4, 1)
    got = [(jobs[k].id, s, e) for s, e, k in io_node_usage(model.transfers, 1)[0]]
    assert got == [("A", 1, 4), ("C", 4, 5), ("B", 5, 7), ("A", 7, 10), ("C", 10, 11),
                   ("B", 11, 13), ("C", 13, 14)]
    assert res.end == pytest.approx([10.0, 13.0, 14.0])


spec_st = st.tuples(st.integers(1, 4), st.integers(1, 5), st.integers(0, 4))


@settings(max_examples=40, deadline=None)
@given(left=st.lists(spec_st, min_size=1, max_size=4),
       right=st.lists(spec_st, min_size=1, max_size=4))
def test_racks_are_independent(left, right):
    """Jobs placed one per node on a 2 x 4-node machine: rack 0 gets the first four, rack 1 the
    others. Each rack's transfers and ends are exactly those of its jobs alone on a one-rack
    machine: an I/O node never serves, nor waits for, another rack's jobs."""
    def jobs_of(specs, tag):
        return [periodic(f"{tag}{i}", n, float(w), float(io)) for i, (n, w, io) in
                enumerate(specs)]

    lj, rj = jobs_of(left, "l"), jobs_of(right, "r")
    pad = [periodic(f"p{i}", 1, 1e6, 0.0) for i in range(4 - len(lj))]  # fill rack 0's nodes
    jobs = [*lj, *pad, *rj]
    res, model = run(jobs, 8, [4, 4])
    for tag, own in (("l", lj), ("r", rj)):
        alone, m1 = run(own, 4, 1)
        mine = [k for k, j in enumerate(jobs) if j.id.startswith(tag)]
        assert [res.end[k] for k in mine] == pytest.approx(alone.end)
        rack = 0 if tag == "l" else 1
        busy = [(jobs[k].id, s, e) for s, e, k in io_node_usage(model.transfers, 2)[rack]
                if not jobs[k].id.startswith("p")]
        assert busy == [(own[k].id, s, e) for s, e, k in io_node_usage(m1.transfers, 1)[0]]

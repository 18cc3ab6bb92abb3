"""The exclusive-I/O execution model (Jeannot, Pallez & Vidal): Figure 2's two identical
applications, three applications worked by hand, two racks with their own I/O node, and the
invariants of the model on random periodic workloads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.errors import InputError
from bbopt.simulation.exclusive_io import ExclusiveIO, io_node_usage, time_alone

B = 1e9  # the I/O node's bandwidth in bytes/s: an I/O phase of v bytes lasts v / 1e9 s


def periodic(id_: str, n: int, w: float, io_seconds: float, nodes: int = 1,
             submit: float = 0.0) -> Job:
    t = n * (w + io_seconds)
    return Job(id_, submit, walltime=t, runtime=t, nodes=nodes,
               extra={"io": {"model": "periodic", "iterations": n, "compute_seconds": w,
                             "io_bytes": io_seconds * B, "io_bandwidth": B}})


def run(jobs, nodes=4, model=None, policy="fcfs"):
    model = model or ExclusiveIO()
    res = simulate(jobs, Platform(nodes=nodes), policy, execution=model)
    return res, model


def test_figure2_two_identical_applications_take_turns_and_synchronise():
    """Both compute 2 s then transfer 1 s, three times: B waits 1 s at its first I/O and never
    again (A: 0-2 c, 2-3 io, 3-5 c, 5-6 io, 6-8 c, 8-9 io; B shifted by one second)."""
    a, b = periodic("A", 3, 2.0, 1.0), periodic("B", 3, 2.0, 1.0)
    res, model = run([a, b])
    assert res.start == [0.0, 0.0]
    assert res.end == pytest.approx([9.0, 10.0])
    assert time_alone(a) == pytest.approx(9.0)
    usage = io_node_usage(model.transfers)[0]
    # small integers: the arithmetic is exact
    assert [(s, e) for s, e, _ in usage] == [(2, 3), (3, 4), (5, 6), (6, 7), (8, 9), (9, 10)]
    assert [k for _, _, k in usage] == [0, 1, 0, 1, 0, 1]  # in turn
    stats = model.job_stats()
    assert stats[0]["io_wait"] == 0.0
    assert stats[1]["io_wait"] == pytest.approx(1.0)  # only the first iteration is delayed


def test_three_applications_worked_by_hand():
    """A: 2 x (3 s compute, 2 s I/O); B: 2 x (1 s, 1 s); C: 1 x (2 s, 3 s), all at 0.

    t=1 B's I/O 1-2; t=2 B computes 2-3 and C's I/O takes the node 2-5; t=3 A then B queue
    (same instant, index order); t=5 C ends, A's I/O 5-7; t=7 A computes 7-10, B's I/O 7-8 and
    B ends at 8; t=10 A's last I/O 10-12. Ends 12, 8, 5 (alone: 10, 4, 5).
    """
    jobs = [periodic("A", 2, 3.0, 2.0), periodic("B", 2, 1.0, 1.0), periodic("C", 1, 2.0, 3.0)]
    res, model = run(jobs)
    assert res.end == pytest.approx([12.0, 8.0, 5.0])
    assert [time_alone(j) for j in jobs] == pytest.approx([10.0, 4.0, 5.0])
    assert [(k, s, e) for s, e, k in io_node_usage(model.transfers)[0]] == [
        (1, 1, 2), (2, 2, 5), (0, 5, 7), (1, 7, 8), (0, 10, 12)]
    waits = model.job_stats()
    assert waits[0]["io_wait"] == pytest.approx(2.0)  # 3 -> 5
    assert waits[1]["io_wait"] == pytest.approx(4.0)  # 3 -> 7
    assert waits[2]["io_wait"] == 0.0


def test_two_racks_have_their_own_io_node():
    """Figure 2's pair on one rack interferes; one application per rack does not."""
    a, b = periodic("A", 3, 2.0, 1.0, nodes=2), periodic("B", 3, 2.0, 1.0, nodes=2)
    # 4 nodes, two racks of 2: the engine gives A nodes 0-1 (rack 0), B nodes 2-3 (rack 1).
    res, model = run([a, b], nodes=4, model=ExclusiveIO(racks=2))
    assert res.end == pytest.approx([9.0, 9.0])
    assert {r for _, r, _, _ in model.transfers} == {0, 1}
    # Both on rack 0 of a 2 x 4-node machine: they share its I/O node again.
    res, model = run([a, b], nodes=8, model=ExclusiveIO(racks=[4, 4]))
    assert res.end == pytest.approx([9.0, 10.0])
    assert {r for _, r, _, _ in model.transfers} == {0}
    # A slower I/O node on rack 1 stretches only the I/O of the job placed there.
    res, _ = run([a, b], nodes=4, model=ExclusiveIO(racks=2, bandwidth=[B, B / 2]))
    assert res.end == pytest.approx([9.0, 3 * (2.0 + 2.0)])


def test_rack_of_a_job_is_where_most_of_its_nodes_are():
    model = ExclusiveIO(racks=[2, 3])
    model.reset([], Platform(nodes=5))
    assert model.rack_for((0, 2, 3)) == 1
    assert model.rack_for((1, 2)) == 0  # a tie goes to the lowest rack
    with pytest.raises(InputError, match="rack sizes sum to 4"):
        ExclusiveIO(racks=[2, 2]).reset([], Platform(nodes=5))
    with pytest.raises(InputError, match="bandwidths for 2 racks"):
        ExclusiveIO(racks=2, bandwidth=[1.0])


def test_bad_periodic_description_names_the_field():
    bad = Job("x", 0, walltime=10, extra={"io": {"iterations": 2, "compute_seconds": 1.0}})
    with pytest.raises(InputError, match="io_bytes") as e:
        run([bad])
    assert e.value.field == "io.io_bytes"


def test_kill_at_walltime_frees_the_io_node():
    # A's walltime cuts it inside its first transfer (2-3): killed at 2.5, B's I/O starts then.
    a = periodic("A", 3, 2.0, 1.0)
    a = Job("A", 0, walltime=2.5, runtime=a.runtime, extra=a.extra)
    b = periodic("B", 1, 2.0, 1.0)
    b = Job("B", 0, walltime=5.0, runtime=b.runtime, extra=b.extra)
    res, model = run([a, b], model=ExclusiveIO(kill_at_walltime=True))
    assert res.state == ["killed", "finished"]
    assert res.end == pytest.approx([2.5, 3.5])
    assert sorted((s, e) for _, _, s, e in model.transfers) == [(2, 2.5), (2.5, 3.5)]


job_st = st.tuples(st.integers(1, 5), st.integers(1, 6), st.integers(0, 4), st.integers(1, 4),
                   st.integers(0, 10))


@settings(max_examples=60, deadline=None)
@given(specs=st.lists(job_st, min_size=1, max_size=10), racks=st.integers(1, 2))
def test_invariants_of_exclusive_io(specs, racks):
    """Never two transfers at once on one I/O node, never more nodes than exist, every job ends,
    no job beats its time alone, and an I/O node never idles while a request waits."""
    jobs = [periodic(f"j{i}", n, float(w), float(io), nodes=q, submit=float(s))
            for i, (n, w, io, q, s) in enumerate(specs)]
    model = ExclusiveIO(racks=racks)
    res = simulate(jobs, Platform(nodes=4), "fcfs-easy", execution=model)
    assert res.state == ["finished"] * len(jobs)
    for k, job in enumerate(jobs):
        assert res.end[k] >= res.start[k] + time_alone(job) - 1e-9
        # the time beyond the time alone is exactly the time spent waiting for the I/O node
        assert res.end[k] - res.start[k] == pytest.approx(
            time_alone(job) + model.job_stats()[k]["io_wait"], abs=1e-9)
    events = sorted({t for k in range(len(jobs)) for t in (res.start[k], res.end[k])})
    for t in events:
        used = sum(j.nodes for k, j in enumerate(jobs) if res.start[k] <= t < res.end[k])
        assert used <= 4
    usage = io_node_usage(model.transfers, racks)
    for r, busy in enumerate(usage):
        for (_, e0, _), (s1, _, _) in zip(busy, busy[1:], strict=False):
            assert s1 >= e0 - 1e-9  # exclusive
        # work conservation: while a request waits, its I/O node is busy
        gaps = [(e0, s1) for (_, e0, _), (s1, _, _) in zip(busy, busy[1:], strict=False)]
        for (_, r_k, s, _), due in zip(model.transfers, model.due, strict=True):
            assert due <= s
            if r_k == r and due < s:
                assert all(max(e0, due) >= min(s1, s) - 1e-9 for e0, s1 in gaps)

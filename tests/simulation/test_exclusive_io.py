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


@pytest.mark.parametrize("kwargs,message,field", [
    ({"racks": 0}, "racks must be >= 1, got 0", "racks"),
    ({"racks": []}, "rack sizes must be positive integers", "racks"),
    ({"racks": [2, 0]}, "rack sizes must be positive integers", "racks"),
    ({"racks": [2, 2], "bandwidth": [B]}, "1 bandwidths for 2 racks", "bandwidth"),
    ({"bandwidth": 0.0}, "I/O node bandwidth must be > 0 bytes/s", "bandwidth"),
    ({"racks": 2, "bandwidth": [B, -1.0]}, "I/O node bandwidth must be > 0 bytes/s",
     "bandwidth"),
])
def test_bad_racks_and_bandwidths_are_refused_naming_the_field(kwargs, message, field):
    with pytest.raises(InputError, match=f"^field '{field}': {message}$"):
        ExclusiveIO(**kwargs)


def test_one_rack_and_whole_bandwidths_are_accepted_as_given():
    model = ExclusiveIO(racks=1, bandwidth=2)
    assert (model.racks, model.bandwidth) == (1, (2.0,))
    assert isinstance(model.bandwidth[0], float)
    assert ExclusiveIO(racks=[1, 3], bandwidth=[1, 2]).bandwidth == (1.0, 2.0)
    assert ExclusiveIO(racks=(1, 3)).racks == (1, 3)
    assert ExclusiveIO(racks=3).bandwidth == (None, None, None)
    assert ExclusiveIO().kill_at_walltime is False


def test_the_io_node_without_a_platform_or_a_second_rack_is_rack_zero():
    model = ExclusiveIO(racks=2)
    assert model.rack_for((3,)) == 0  # not reset with a platform: no racks known
    model.reset([], Platform(nodes=4))
    assert (model.rack_for((3,)), model.rack_for(()), model.rack_for((2, 3, 0))) == (1, 0, 1)
    one = ExclusiveIO()
    one.reset([], Platform(nodes=4))
    assert one.rack_for((3,)) == 0


def test_a_job_without_io_computes_its_runtime_or_walltime_and_uses_no_io_node():
    jobs = [Job("r", 0, walltime=50, runtime=20), Job("w", 0, walltime=30)]
    res, model = run(jobs, model=ExclusiveIO(racks=2))
    assert res.end == [20.0, 30.0] and res.state == ["finished", "finished"]
    assert model.job_stats() == {0: {"io_wait": 0.0, "elapsed": 20.0, "io_node": -1.0},
                                 1: {"io_wait": 0.0, "elapsed": 30.0, "io_node": -1.0}}
    assert model.transfers == []


def test_a_periodic_job_needs_a_bandwidth_from_itself_or_the_model():
    job = periodic("p", 1, 1.0, 1.0)
    bare = Job("p", 0, walltime=2, runtime=2, extra={"io": {
        k: v for k, v in job.extra["io"].items() if k != "io_bandwidth"}})
    with pytest.raises(InputError, match=r"^field 'io.io_bandwidth': job p: no I/O bandwidth "
                                         r"\(io.io_bandwidth\) and none given to the "
                                         r"exclusive-io model$"):
        run([bare])
    res, model = run([bare], model=ExclusiveIO(bandwidth=B / 4))  # 4 s of I/O at B / 4
    assert res.end == [5.0]
    assert model.transfers == [(0, 0, 1.0, 5.0)] and model.due == [1.0]


def test_a_job_killed_while_its_io_waits_leaves_the_fifo():
    """A transfers 2-5; B computes 0-3 and waits from 3 for the node; B is killed at 4 while
    waiting; C's request (due at 4.5) gets the node when A's ends at 5."""
    a = periodic("A", 1, 2.0, 3.0)
    b = periodic("B", 1, 3.0, 1.0)
    b = Job("B", 0, walltime=4.0, runtime=b.runtime, extra=b.extra)
    c = periodic("C", 1, 4.5, 1.0)
    c = Job("C", 0, walltime=10.0, runtime=c.runtime, extra=c.extra)
    res, model = run([a, b, c], model=ExclusiveIO(kill_at_walltime=True))
    assert res.state == ["finished", "killed", "finished"]
    assert res.end == pytest.approx([5.0, 4.0, 6.0])
    assert [(k, s, e) for k, _, s, e in model.transfers] == [(0, 2.0, 5.0), (2, 5.0, 6.0)]
    stats = model.job_stats()
    assert stats[1] == {"io_wait": 0.0, "elapsed": 4.0, "io_node": 0.0}
    assert stats[2]["io_wait"] == pytest.approx(0.5)


def test_a_job_killed_in_its_compute_phase_holds_no_transfer():
    a = periodic("A", 2, 2.0, 1.0)
    a = Job("A", 0, walltime=1.0, runtime=a.runtime, extra=a.extra)
    res, model = run([a], model=ExclusiveIO(kill_at_walltime=True))
    assert (res.state, res.end, model.transfers) == (["killed"], [1.0], [])


def test_a_zero_byte_io_phase_ends_at_the_instant_it_is_due():
    job = periodic("z", 2, 1.5, 0.0)
    res, model = run([job])
    assert res.end == [3.0]
    assert [(s, e) for _, _, s, e in model.transfers] == [(1.5, 1.5), (3.0, 3.0)]


def test_io_node_usage_sorts_each_nodes_transfers():
    transfers = [(2, 1, 5.0, 6.0), (0, 0, 3.0, 4.0), (1, 1, 1.0, 2.0), (3, 0, 0.0, 1.0)]
    assert io_node_usage(transfers, 3) == [[(0.0, 1.0, 3), (3.0, 4.0, 0)],
                                           [(1.0, 2.0, 1), (5.0, 6.0, 2)], []]
    assert io_node_usage([]) == [[]]


def test_run_metrics_and_curves_are_jeannots_named_xio():
    from bbopt.simulation.pack_metrics import USAGE_BINS, pack_metrics, usage_over_time

    a, b = periodic("A", 3, 2.0, 1.0), periodic("B", 3, 2.0, 1.0)
    res, model = run([a, b])
    metrics = model.metrics(res)
    assert metrics == pytest.approx(
        {f"xio_{k}": float(v) for k, v in pack_metrics(res, model).items()}, nan_ok=True)
    assert metrics and all(type(v) is float for v in metrics.values())
    curves = model.curves(res)
    expected = usage_over_time(res, model, bins=USAGE_BINS)
    assert curves == {k: [float(x) for x in v] for k, v in expected.items()}
    assert all(len(v) == USAGE_BINS for v in curves.values())


def test_a_bandwidth_under_one_byte_per_second_is_still_a_bandwidth():
    """Half a byte per second, one byte per I/O phase: 2 s of I/O after 1 s of computing."""
    slow = Job("s", 0, walltime=3, runtime=3, extra={"io": {
        "model": "periodic", "iterations": 1, "compute_seconds": 1.0, "io_bytes": 1.0,
        "io_bandwidth": 0.5}})
    res, model = run([slow])
    assert res.end == [3.0] and model.transfers == [(0, 0, 1.0, 3.0)]


def test_rack_sizes_given_as_a_list_are_kept_as_a_tuple_of_ints():
    assert ExclusiveIO(racks=[1, 3]).racks == (1, 3)
    assert ExclusiveIO(racks=[2.0, 2.0]).racks == (2, 2)


def test_a_second_job_killed_in_its_transfer_frees_the_node_for_the_first():
    """B (job 1) transfers 1-3 but its walltime ends it at 2: its transfer is cut there and A's
    request, due at 1.5, is served 2-3; a job submitted at 5 is measured from its start."""
    b = periodic("B", 1, 1.0, 2.0)
    b = Job("B", 0, walltime=2.0, runtime=b.runtime, extra=b.extra)
    late = Job("L", 5, walltime=4, runtime=4)
    a = periodic("A", 1, 1.5, 1.0)
    a = Job("A", 0, walltime=10.0, runtime=a.runtime, extra=a.extra)
    res, model = run([a, b, late],
                     model=ExclusiveIO(kill_at_walltime=True))
    assert res.state == ["finished", "killed", "finished"]
    assert res.end == pytest.approx([3.0, 2.0, 9.0])
    assert [(k, s, e) for k, _, s, e in model.transfers] == [(1, 1.0, 2.0), (0, 2.0, 3.0)]
    stats = model.job_stats()
    assert stats[0]["io_wait"] == pytest.approx(0.5) and stats[2]["elapsed"] == 4.0


def test_every_end_of_an_instant_is_reported_before_the_policy_decides():
    """On 2 nodes, X and Y are both killed at their walltime 10 while Z (2 nodes) and W (1)
    arrive then: filler sees both nodes free and starts Z first, W after it."""
    jobs = [Job("X", 0, 10, 20, 1), Job("Y", 0, 10, 20, 1), Job("Z", 10, 5, 5, 2),
            Job("W", 10, 5, 5, 1)]
    res = simulate(jobs, Platform(nodes=2), "filler",
                   execution=ExclusiveIO(kill_at_walltime=True))
    assert res.state == ["killed", "killed", "finished", "finished"]
    assert res.start[2:] == [10.0, 15.0]


def test_the_stale_end_of_a_killed_job_hides_no_other_end_of_its_instant():
    """On 3 nodes: X is killed at 10 (its compute end at 20 stays queued, stale); at 20 P's
    transfer, V's and U's runs end: Z (3 nodes) and W (1) arriving then see all 3 nodes free,
    so filler starts Z first."""
    p = periodic("P", 1, 19.0, 1.0)
    jobs = [Job("X", 0, 10, 20, 1), p, Job("V", 0, 30, 20, 1), Job("U", 10, 10, 10, 1),
            Job("Z", 20, 5, 5, 3), Job("W", 20, 5, 5, 1)]
    res = simulate(jobs, Platform(nodes=3), "filler",
                   execution=ExclusiveIO(kill_at_walltime=True))
    assert res.state == ["killed"] + ["finished"] * 5
    assert res.end[1:4] == [20.0, 20.0, 20.0]
    assert res.start[4:] == [20.0, 25.0]

"""The I/O hierarchy: Herbein's Figure 3 and Section 3.4 walk-through, allocation invariants,
the fluid contention model, Kopanski's phased jobs, the papers' machines and JGF round trips."""

from __future__ import annotations

import dataclasses

import pytest

from bbopt import Decision, InvalidDecision, Job, Start, simulate
from bbopt.core import GB, MB
from bbopt.errors import InputError
from bbopt.policies.registry import register
from bbopt.simulation.io_metrics import io_summary
from bbopt.simulation.io_model import Flow, IOContention, PhasedIO, contention, sorted_shares
from bbopt.topology import (
    from_description,
    herbein_example_topology,
    kopanski_dragonfly,
    platform_from_topology,
)


def _example(**kw):
    return platform_from_topology(herbein_example_topology(**kw))


# --------------------------------------------------------------------------- contention model
def test_sorted_shares_follows_the_paper_formula():
    assert sorted_shares([192 * MB, 192 * MB], 256 * MB) == [128 * MB, 128 * MB]
    # Small requests are served in full, the rest split what remains equally.
    assert sorted_shares([50.0, 300.0, 10.0], 200.0) == [50.0, 140.0, 10.0]
    # Enough for everyone: everyone gets its request, the rest stays at the parent.
    assert sorted_shares([1.0, 2.0], 10.0) == [1.0, 2.0]
    # Counts stand for that many equal children.
    assert sorted_shares([100.0], 150.0, [3]) == [50.0]


def test_figure3_contention_and_interference():
    """Job1 on three nodes at 192 MB/s, two of them under a 256 MB/s switch: 128 MB/s, I=2/3."""
    tree = herbein_example_topology(network=1e12, pfs=1e12)
    flows = [Flow(192 * MB, 1, tree.finite_path(int(tree.node_vertex[i]))) for i in (0, 1, 2)]
    assert contention(tree, flows) == pytest.approx([128 * MB, 128 * MB, 192 * MB])
    # In the simulator (I/O-ignorant policy: it is placed on nodes 0-2 as in the figure), the
    # job computes at I = 128/192 and its 100 s of work take 150 s.
    model = IOContention()
    job = Job("1", 0, walltime=1000, runtime=100, nodes=3, bandwidth=192 * MB)
    res = simulate([job], platform_from_topology(tree), "fcfs", execution=model)
    assert res.end[0] == pytest.approx(150.0)
    s = io_summary(res, model)
    assert s["compute_share_min"] == pytest.approx(2 / 3)
    assert s["system_efficiency"] == pytest.approx(2 / 3)
    assert s["interfered_node_time_share"] == pytest.approx(1.0)


def test_contention_is_resolved_bottom_up():
    """A 200 MB/s switch above a narrow 50 MB/s switch (nodes 0, 1) and a wide one (nodes 2, 3);
    nodes 0, 1 and 2 each ask 192 MB/s. Leaves first: the narrow switch splits 50 into 25 + 25,
    so the upper switch sees 50 and 192 (242 > 200) and gives 50 and the remaining 150. Resolved
    top-down instead, the upper switch would split 384 against 192 into 100 + 100 before the
    narrow switch cuts its side to 50, leaving node 2 at 100 and 50 MB/s unused."""
    tree = from_description({"name": "two-switches", "tree": {
        "type": "pfs", "name": "pfs", "bandwidth": 1e12, "children": [{
            "type": "switch", "name": "upper", "bandwidth": 200 * MB, "children": [
                {"type": "switch", "name": "narrow", "bandwidth": 50 * MB,
                 "children": [{"type": "node", "count": 2}]},
                {"type": "switch", "name": "wide", "bandwidth": 1000 * MB,
                 "children": [{"type": "node", "count": 2}]}]}]}})
    flows = [Flow(192 * MB, 1, tree.finite_path(int(tree.node_vertex[i]))) for i in (0, 1, 2)]
    assert contention(tree, flows) == pytest.approx([25 * MB, 25 * MB, 150 * MB])


def test_engine_refuses_an_over_allocating_io_aware_decision():
    @register("test-io-rogue")
    class Rogue:
        io_aware = True

        def __init__(self, name="test-io-rogue"):
            self.name = name

        def decide(self, state):
            return Decision(start=tuple(Start(j.id, (2 * k,)) for k, j in enumerate(state.queue)))

    platform = _example(switch=100 * MB)
    jobs = [Job(str(k), 0, 10, 10, 1, bandwidth=60 * MB) for k in range(2)]
    simulate(jobs, platform, "test-io-rogue")  # nodes 0 and 2: different switches, fine
    jobs = [Job(str(k), 0, 10, 10, 2, bandwidth=60 * MB) for k in range(1)]

    @register("test-io-rogue2")
    class Rogue2(Rogue):
        def decide(self, state):
            return Decision(start=(Start(state.queue[0].id, (0, 1)),))

    with pytest.raises(InvalidDecision, match="over-allocates"):
        simulate([Job("x", 0, 10, 10, 2, bandwidth=60 * MB)], _example(switch=100 * MB),
                 "test-io-rogue2")


# --------------------------------------------------------------------------- allocation


# --------------------------------------------------------------------------- phased jobs
def test_phased_job_timeline_on_the_dragonfly():
    """Stage-in 1 s (BB link 1.25 GB/s), 10 s compute, checkpoint 1 s (node and BB links), 10 s
    compute with the 1 s drain in the background, stage-out 1 s: 23 s."""
    platform = kopanski_dragonfly()
    vol = 1.25 * GB
    job = Job("p", 0, walltime=100, runtime=20, nodes=1, bb=vol,
              extra={"phases": {"compute": [10.0, 10.0]}})
    model = PhasedIO()
    res = simulate([job], platform, "fcfs-bb", execution=model)
    assert res.end[0] == pytest.approx(23.0)
    st_ = model.job_stats()[0]
    assert st_["stage_in"] == pytest.approx(1.0)
    assert st_["compute"] == pytest.approx(20.0)
    assert st_["checkpoint"] == pytest.approx(1.0)
    assert st_["stage_out"] == pytest.approx(1.0)
    assert st_["drain"] == pytest.approx(1.0)
    assert st_["computed"] == pytest.approx(20.0)


def test_phased_transfers_share_the_bb_link():
    """Two one-node jobs of the same chassis stage in to the same BB node: 0.625 GB/s each."""
    platform = kopanski_dragonfly()
    vol = 1.25 * GB
    jobs = [Job(str(k), 0, walltime=100, runtime=10, nodes=1, bb=vol,
                extra={"phases": {"compute": [10.0], "stage_out": 0.0}}) for k in range(2)]
    model = PhasedIO()
    res = simulate(jobs, platform, "fcfs-bb", execution=model)
    assert res.end == pytest.approx([12.0, 12.0])
    # Through the 5 GB/s PFS link: 8 one-node jobs in 8 different chassis (nodes 0, 8, ...).

    @register("test-spread")
    class Spread:
        io_aware = False

        def __init__(self, name="test-spread"):
            self.name = name

        def decide(self, state):
            return Decision(start=tuple(Start(j.id, (8 * k,)) for k, j in enumerate(state.queue)))

    jobs = [Job(str(k), 0, walltime=100, runtime=10, nodes=1, bb=vol,
                extra={"phases": {"compute": [10.0], "stage_out": 0.0}}) for k in range(8)]
    res = simulate(jobs, platform, "test-spread", execution=PhasedIO())
    assert res.end == pytest.approx([12.0] * 8)  # 8 x 1.25 GB/s on 5 GB/s: 0.625 each


def test_default_phase_structure_and_kill_at_walltime():
    model = PhasedIO()
    job = Job("a", 0, walltime=4 * 3600, runtime=3 * 3600, nodes=2, bb=10 * GB)
    steps = model._steps(job)
    assert [k for k, _ in steps] == ["stage_in", "compute", "checkpoint", "compute",
                                     "checkpoint", "compute", "stage_out"]
    assert sum(v for k, v in steps if k == "compute") == pytest.approx(3 * 3600)
    gen = Job("g", 0, walltime=9000, runtime=7200, nodes=2, bb=10 * GB, extra={"phases": {
        "model": "kopanski", "compute_phases": 2, "compute_seconds": 3600.0, "checkpoints": 1,
        "checkpoint_bytes": 5 * GB, "stage_in_bytes": 10 * GB, "stage_out_bytes": 0.0}})
    assert model._steps(gen) == [("stage_in", 10 * GB), ("compute", 3600.0),
                                 ("checkpoint", 5 * GB), ("compute", 3600.0)]
    long = Job("l", 0, walltime=20, runtime=10, nodes=1, bb=1.25 * GB * 20)
    res = simulate([long], kopanski_dragonfly(), "fcfs-bb", execution=PhasedIO())
    assert res.state == ["killed"] and res.end == [20.0]


def test_rigid_jobs_without_bandwidth_run_as_in_the_rigid_model():
    from bbopt.workloads.synthetic import kth_like

    jobs = kth_like(150, seed=3)
    platform = dataclasses.replace(kopanski_dragonfly(), bb=480 * GB)
    a = simulate(jobs, platform, "fcfs-bb")
    b = simulate(jobs, platform, "fcfs-bb", execution="io-contention")
    assert a.state == b.state
    assert a.start == pytest.approx(b.start, nan_ok=True)
    assert a.end == pytest.approx(b.end, nan_ok=True)


# --------------------------------------------------------------------------- machines, formats


def test_fixed_duration_accounting_keeps_runtime_and_loses_computation():
    """Herbein's emulator (stretch=False): the Figure 3 job at I = 2/3 still ends after its
    100 s, having computed 66.7 s of them; with stretching (default) it ends at 150 s. A job
    started after it is therefore not delayed by the contention."""
    tree = herbein_example_topology(network=1e12, pfs=1e12)
    platform = platform_from_topology(tree)
    job = Job("1", 0, walltime=1000, runtime=100, nodes=3, bandwidth=192 * MB)
    after = Job("2", 1, walltime=1000, runtime=10, nodes=platform.nodes)
    for stretch, end in ((True, 150.0), (False, 100.0)):
        model = IOContention(stretch=stretch)
        res = simulate([job, after], platform, "fcfs", execution=model)
        assert res.end[0] == pytest.approx(end)
        assert res.start[1] == pytest.approx(end)
        s = model.job_stats()[0]
        assert s["computed"] == pytest.approx(100.0 if stretch else 200 / 3)
        assert s["blocked"] == pytest.approx(50.0 if stretch else 100 / 3)
        assert io_summary(res, model)["compute_share_min"] == pytest.approx(2 / 3)


# --------------------------------------------------------------------------- edges of the models
def test_sorted_shares_counts_weigh_what_is_taken_and_what_is_left():
    # 3 children of 10 and one of 100 under 100: the three take 30, the last gets 70 (not 90)
    assert sorted_shares([100.0, 10.0], 100.0, [1, 3]) == [70.0, 10.0]
    # a request equal to the share is served in full; nothing under a peak of 0
    assert sorted_shares([50.0, 50.0], 100.0) == [50.0, 50.0]
    assert sorted_shares([5.0, 1.0], 0.0) == [0.0, 0.0]
    assert sorted_shares([5.0], 10.0, [0.0]) == [0.0]  # no child left to share among


@pytest.mark.parametrize("runtime,phases", [(100.0, 1), (5399.0, 1), (5401.0, 2),
                                            (3 * 3600.0, 3), (9000.0, 2), (12 * 3600.0, 10),
                                            (11 * 3600.0, 10)])
def test_a_phased_job_without_phases_computes_one_phase_an_hour_at_most_ten(runtime, phases):
    job = Job("a", 0, walltime=runtime, runtime=runtime, nodes=2, bb=10.0)
    steps = PhasedIO()._steps(job)
    compute = [v for k, v in steps if k == "compute"]
    assert compute == pytest.approx([runtime / phases] * phases, rel=1e-15)
    assert [v for k, v in steps if k == "checkpoint"] == [10.0] * (phases - 1)
    assert steps[0] == ("stage_in", 10.0) and steps[-1] == ("stage_out", 10.0)


def test_phase_options_and_their_refusals():
    job = Job("a", 0, walltime=7200, runtime=7200, nodes=1, bb=0.0)
    assert PhasedIO(checkpoint_interval=1800)._steps(job) == [("compute", 1800.0)] * 4
    assert PhasedIO(max_phases=1)._steps(job) == [("compute", 7200.0)]
    assert IOContention()._steps(job) == [("compute", 7200.0)]
    assert IOContention()._steps(Job("w", 0, walltime=50.0)) == [("compute", 50.0)]
    with pytest.raises(InputError, match="checkpoint_interval must be positive") as info:
        PhasedIO(checkpoint_interval=0)
    assert info.value.field == "checkpoint_interval"
    with pytest.raises(InputError, match="max_phases must be >= 1"):
        PhasedIO(max_phases=0)


@pytest.mark.parametrize("phases,message", [
    ([1.0], "extra\\['phases'\\] must be a mapping"),
    ({"compute": []}, "phases.compute must be non-negative seconds"),
    ({"compute": [1.0, -0.5]}, "phases.compute must be non-negative seconds"),
    ({"compute": [1.0, 2.0, 3.0], "checkpoint": [4.0]}, "1 checkpoints for 3 compute phases"),
])
def test_bad_phases_are_refused_naming_the_job(phases, message):
    job = Job("j7", 0, walltime=10, runtime=10, bb=1.0, extra={"phases": phases})
    with pytest.raises(InputError, match=f"^field 'phases': job j7: {message}"):
        PhasedIO()._steps(job)


def test_given_phases_with_a_checkpoint_per_gap_and_zero_volumes_skipped():
    job = Job("a", 0, walltime=100, runtime=30, bb=8.0, extra={"phases": {
        "compute": [10, 0, 20], "checkpoint": [3.0, 0.0], "stage_in": 0.0}})
    assert PhasedIO()._steps(job) == [("compute", 10.0), ("checkpoint", 3.0), ("compute", 0.0),
                                      ("compute", 20.0), ("stage_out", 8.0)]
    gen = Job("g", 0, walltime=100, runtime=90, bb=8.0,
              extra={"phases": {"compute_phases": 3}})  # the generator's layout, defaults
    assert PhasedIO()._steps(gen) == [("stage_in", 8.0), ("compute", 30.0), ("checkpoint", 8.0),
                                      ("compute", 30.0), ("checkpoint", 8.0), ("compute", 30.0),
                                      ("stage_out", 8.0)]


@pytest.mark.parametrize("options,end,state,computed", [
    ({}, 150.0, "killed", 75.0),  # I = 1/2: 100 s of work would take 200 s, killed at 150
    ({"kill_at_walltime": False}, 200.0, "finished", 100.0),  # Herbein's: runs to completion
    ({"stretch": False}, 100.0, "finished", 50.0),  # the emulator's: runtime kept, work lost
])
def test_half_the_bandwidth_halves_the_computation(options, end, state, computed):
    # two nodes of one 256 MB/s switch, each streaming 256 MB/s: each gets 128, I = 1/2
    job = Job("a", 0, walltime=150, runtime=100, nodes=2, bandwidth=256 * MB)
    model = IOContention(**options)
    res = simulate([job], _example(), "fcfs", execution=model)
    assert res.end == [end] and res.state == [state]
    st_ = model.job_stats()[0]
    assert (st_["computed"], st_["blocked"], st_["interfered"], st_["compute"]) == (
        computed, end - computed, end, end)
    assert st_["elapsed"] == end and model.contended_time() == (end, end)


def test_a_checkpoint_to_the_nodes_own_bb_takes_volume_over_the_local_bandwidth():
    # the example tree has no BB node: a checkpoint stays on the node (200 B per node)
    from bbopt import Platform

    platform = Platform(4, 1000.0, topology=herbein_example_topology())
    job = Job("b", 0, walltime=1000, runtime=20, nodes=2, bb=400.0,
              extra={"phases": {"compute": [10.0, 10.0], "stage_in": 0.0, "stage_out": 0.0}})
    for bandwidth, end in ((float("inf"), 20.0), (100.0, 22.0)):
        model = PhasedIO(local_bb_bandwidth=bandwidth)
        res = simulate([job], platform, "fcfs", execution=model)
        assert res.end[0] == pytest.approx(end, abs=1e-5)
        assert model.job_stats()[0]["checkpoint"] == pytest.approx(end - 20.0, abs=1e-12)


def test_a_checkpoint_goes_to_the_nearest_bb_node_not_through_the_pfs():
    # PFS at 0.5 GB/s: a checkpoint of 1.25 GB over the node's 1.25 GB/s link to its BB node
    # takes 1 s; only its drain to the PFS takes 2.5 s
    job = Job("p", 0, walltime=100, runtime=20, nodes=1, bb=1.25 * GB,
              extra={"phases": {"compute": [10.0, 10.0], "stage_in": 0.0, "stage_out": 0.0}})
    model = PhasedIO()
    res = simulate([job], kopanski_dragonfly(pfs=0.5 * GB), "fcfs-bb", execution=model)
    assert res.end == [21.0]
    assert (model.job_stats()[0]["checkpoint"], model.job_stats()[0]["drain"]) == (1.0, 2.5)


def test_the_nodes_of_one_job_share_their_bb_nodes_link():
    # nodes 0 and 1, one chassis: 1.25 GB each over one 1.25 GB/s BB link, 0.625 GB/s each
    job = Job("q", 0, walltime=100, runtime=10, nodes=2, bb=2.5 * GB,
              extra={"phases": {"compute": [10.0], "stage_out": 0.0}})
    model = PhasedIO()
    res = simulate([job], kopanski_dragonfly(), "fcfs-bb", execution=model)
    assert res.end == [12.0] and model.job_stats()[0]["stage_in"] == 2.0


def test_without_an_io_tree_transfers_run_at_the_local_bb_bandwidth():
    from bbopt import Platform

    job = Job("b", 0, walltime=1000, runtime=20, nodes=2, bb=400.0,
              extra={"phases": {"compute": [10.0, 10.0]}})
    for bandwidth, end in ((float("inf"), 20.0), (100.0, 26.0)):  # 200 B per node
        model = PhasedIO(local_bb_bandwidth=bandwidth)
        res = simulate([job], Platform(4, 1000.0), "fcfs", execution=model)
        assert res.end == [end]
        st_ = model.job_stats()[0]
        assert [st_[k] for k in ("stage_in", "checkpoint", "stage_out", "drain")] == [
            (end - 20.0) / 3] * 4


def test_the_local_bb_bandwidth_does_not_bound_transfers_through_the_tree():
    from bbopt import Platform

    platform = Platform(4, 1000.0, topology=herbein_example_topology())
    job = Job("b", 0, walltime=1000, runtime=20, nodes=2, bb=400.0,
              extra={"phases": {"compute": [20.0], "stage_out": 0.0}})
    model = PhasedIO(local_bb_bandwidth=100.0)
    simulate([job], platform, "fcfs", execution=model)
    assert model.job_stats()[0]["stage_in"] < 1e-5  # 200 B per node from the PFS, not 2 s


def test_a_synchronous_group_runs_at_its_smallest_demand():
    tree = herbein_example_topology()  # no link is a bottleneck for these
    flows = [Flow(50.0, 1, tree.finite_path(3)), Flow(100.0, 1, tree.finite_path(6))]
    assert contention(tree, flows, jobs=["j", "j"]) == [50.0, 50.0]
    assert contention(tree, flows) == [50.0, 100.0]


def test_the_models_metrics_are_herbeins():
    job = Job("a", 0, walltime=150, runtime=100, nodes=2, bandwidth=256 * MB)
    model = IOContention(kill_at_walltime=False)
    res = simulate([job], _example(), "fcfs", execution=model)
    got = model.metrics(res)
    assert got == io_summary(res, model)
    assert (got["system_efficiency"], got["compute_share_min"], got["mean_turnaround"]) == (
        0.5, 0.5, 200.0)


def test_a_synchronous_job_cut_at_the_top_runs_at_its_slowest_flow():
    # PFS 100 over two unlimited switches. J streams 100 from one node under each switch, K 100
    # from a node under the first: the PFS gives each switch 50, the first splits it 25 / 25, so
    # J's flow under the second switch (50 there) runs at J's rate, 25
    tree = from_description({"name": "t", "tree": {"type": "pfs", "bandwidth": 100.0,
                                                   "children": [{"type": "switch", "count": 2,
                                                                 "children": [{"type": "node",
                                                                               "count": 2}]}]}})
    nodes = [int(v) for v in tree.node_vertex]
    flows = [Flow(100.0, 1, tree.finite_path(nodes[0])),
             Flow(100.0, 1, tree.finite_path(nodes[2])),
             Flow(100.0, 1, tree.finite_path(nodes[1]))]
    assert contention(tree, flows, jobs=["J", "J", "K"]) == [25.0, 25.0, 25.0]
    assert contention(tree, flows) == [25.0, 50.0, 25.0]


# --------------------------------------------------------------------------- options and phases
def test_option_refusals_name_the_field_and_the_limits_are_inclusive():
    with pytest.raises(InputError) as info:
        PhasedIO(max_phases=0)
    assert (str(info.value), info.value.field) == (
        "field 'max_phases': max_phases must be >= 1", "max_phases")
    with pytest.raises(InputError) as info:
        PhasedIO(checkpoint_interval=0.0)
    assert (str(info.value), info.value.field) == (
        "field 'checkpoint_interval': checkpoint_interval must be positive",
        "checkpoint_interval")
    # any positive interval, one below a second included: a 1 s job in two checkpointed halves
    job = Job("a", 0, walltime=1.0, runtime=1.0, nodes=1, bb=0.0)
    assert PhasedIO(checkpoint_interval=0.5)._steps(job) == [("compute", 0.5)] * 2
    assert PhasedIO(max_phases=1, checkpoint_interval=0.5)._steps(job) == [("compute", 1.0)]


def test_the_generators_layout_is_read_field_by_field():
    # every value differs from its default (runtime / phases for the phases, Job.bb for volumes)
    job = Job("g", 0, walltime=9000, runtime=9000, nodes=2, bb=10 * GB, extra={"phases": {
        "model": "kopanski", "compute_phases": 3, "compute_seconds": 1000.0,
        "checkpoint_bytes": 5 * GB, "stage_in_bytes": 7 * GB, "stage_out_bytes": 3 * GB}})
    assert PhasedIO()._steps(job) == [
        ("stage_in", 7 * GB), ("compute", 1000.0), ("checkpoint", 5 * GB), ("compute", 1000.0),
        ("checkpoint", 5 * GB), ("compute", 1000.0), ("stage_out", 3 * GB)]


def test_a_job_without_phases_in_its_extra_data_gets_the_default_phases():
    # e.g. a job read with an I/O profile for another model
    job = Job("x", 0, walltime=7200, runtime=7200, nodes=1, bb=4.0,
              extra={"io": {"volume": 1.0}})
    assert PhasedIO()._steps(job) == [("stage_in", 4.0), ("compute", 3600.0),
                                      ("checkpoint", 4.0), ("compute", 3600.0),
                                      ("stage_out", 4.0)]
    assert PhasedIO()._steps(dataclasses.replace(job, extra=None)) == PhasedIO()._steps(job)


def test_only_empty_transfers_are_skipped_half_a_byte_is_moved():
    job = Job("t", 0, walltime=100, runtime=20, bb=8.0, extra={"phases": {
        "compute": [10.0, 10.0], "checkpoint": [0.5], "stage_in": 0.5, "stage_out": 0.5}})
    assert PhasedIO()._steps(job) == [("stage_in", 0.5), ("compute", 10.0), ("checkpoint", 0.5),
                                      ("compute", 10.0), ("stage_out", 0.5)]


# --------------------------------------------------------------------------- fluid dynamics
def _one_switch(bandwidth):
    """Two nodes under one switch of ``bandwidth`` B/s, below an unconstrained PFS."""
    return platform_from_topology(from_description({"name": "one-switch", "tree": {
        "type": "pfs", "bandwidth": 1e12, "children": [{
            "type": "switch", "bandwidth": bandwidth,
            "children": [{"type": "node", "count": 2}]}]}}))


def test_a_stream_of_half_a_byte_per_second_is_contended_like_any_other():
    # two nodes streaming 0.5 B/s each under a 0.5 B/s switch: I = 1/2, 10 s of work take 20 s
    job = Job("h", 0, walltime=1000, runtime=10, nodes=2, bandwidth=0.5)
    res = simulate([job], _one_switch(0.5), "fcfs", execution=IOContention())
    assert res.end == [20.0]


@pytest.mark.parametrize("link,interfered", [(1.0 - 1e-9, 0.0), (1.0 - 2e-9, 10.0)])
def test_interference_counts_from_one_part_in_a_billion_below_full_speed(link, interfered):
    # a 1 B/s stream on a link of 1 - 1e-9 B/s runs at I = 1 - 1e-9: rounding, not interference;
    # at I = 1 - 2e-9 its 10 s count as interfered
    job = Job("i", 0, walltime=1000, runtime=10, nodes=1, bandwidth=1.0)
    model = IOContention(stretch=False)
    simulate([job], _one_switch(link), "fcfs", execution=model)
    assert model.job_stats()[0]["interfered"] == interfered
    assert model.contended_time() == (interfered, 10.0)


def test_the_synchronous_bottleneck_is_each_jobs_own():
    # 64 and 128 MB/s streams on the example machine, nowhere contended: neither job is slowed
    # to the other's rate
    jobs = [Job("a", 0, walltime=1000, runtime=10, nodes=1, bandwidth=64 * MB),
            Job("b", 0, walltime=1000, runtime=10, nodes=1, bandwidth=128 * MB)]
    model = IOContention()
    res = simulate(jobs, _example(), "fcfs", execution=model)
    assert res.end == [10.0, 10.0]
    assert [model.job_stats()[k]["computed"] for k in (0, 1)] == [10.0, 10.0]


@pytest.mark.parametrize("stretch,end,computed", [(True, 25.0, 20.0), (False, 20.0, 15.0)])
def test_a_job_killed_at_its_walltime_hands_its_bandwidth_back_at_once(stretch, end, computed):
    # k and l share a 256 MB/s switch at 256 MB/s each (I = 1/2) until k is killed at t = 10:
    # l has then done 5 s of its 20 (10 s of its runtime without stretching) and finishes the
    # rest at full speed
    k = Job("k", 0, walltime=10, runtime=100, nodes=1, bandwidth=256 * MB)
    line = Job("l", 0, walltime=1000, runtime=20, nodes=1, bandwidth=256 * MB)
    model = IOContention(stretch=stretch)
    res = simulate([k, line], _example(), "fcfs", execution=model)
    assert res.state == ["killed", "finished"] and res.end == [10.0, end]
    assert model.job_stats()[1]["computed"] == computed
    assert model.job_stats()[1]["blocked"] == 5.0


def test_without_stretching_a_phase_ends_after_its_runtime_whatever_happens_meanwhile():
    # k (10 s) and l (10.5 s) both at I = 1/2; k ends at 10 s, l half a second later having
    # computed 5 + 0.5 s
    jobs = [Job("k", 0, walltime=1000, runtime=10, nodes=1, bandwidth=256 * MB),
            Job("l", 0, walltime=1000, runtime=10.5, nodes=1, bandwidth=256 * MB)]
    model = IOContention(stretch=False)
    res = simulate(jobs, _example(), "fcfs", execution=model)
    assert res.end == [10.0, 10.5]
    assert [model.job_stats()[k]["computed"] for k in (0, 1)] == [5.0, 5.5]


def test_a_transfer_slowed_midway_keeps_what_it_has_moved():
    # a stages in 2.5 GB through its BB node's 1.25 GB/s link; b (same chassis) starts at 1 s
    # with 0.625 GB: they share the link at 0.625 GB/s each until b is done at 2 s, then a moves
    # its last 0.625 GB alone in 0.5 s
    phases = {"compute": [10.0], "stage_out": 0.0}
    jobs = [Job("a", 0, walltime=100, runtime=10, nodes=1, bb=2.5 * GB, extra={"phases": phases}),
            Job("b", 1, walltime=100, runtime=10, nodes=1, bb=0.625 * GB,
                extra={"phases": phases})]
    model = PhasedIO()
    res = simulate(jobs, kopanski_dragonfly(), "fcfs-bb", execution=model)
    assert res.start == [0.0, 1.0] and res.end == [12.5, 12.0]
    assert [model.job_stats()[k]["stage_in"] for k in (0, 1)] == [2.5, 1.0]
    # the same to the byte: 1.6 B and 0.5 B through a 1 B/s switch (no BB node: from the PFS);
    # a has 0.1 B left when b is done at 2 s, moved in 0.1 s
    jobs = [Job("a", 0, walltime=100, runtime=10, nodes=1,
                extra={"phases": dict(phases, stage_in=1.6)}),
            Job("b", 1, walltime=100, runtime=10, nodes=1,
                extra={"phases": dict(phases, stage_in=0.5)})]
    model = PhasedIO()
    res = simulate(jobs, _one_switch(1.0), "fcfs", execution=model)
    assert res.end == pytest.approx([12.1, 12.0], abs=1e-9)
    assert [model.job_stats()[k]["stage_in"] for k in (0, 1)] == pytest.approx([2.1, 1.0],
                                                                             abs=1e-9)


def test_a_job_ends_when_its_last_drain_does_and_waits_for_it():
    # PFS at 0.5 GB/s: p's checkpoint (1 s to its BB node) drains for 2.5 s from t = 11, past
    # the end of its last 0.5 s phase at 11.5: p waits 2 s for it and ends at 13.5. q, a plain
    # job on another node, ends at 12.5, in the middle of the wait.
    p = Job("p", 0, walltime=100, runtime=10.5, nodes=1, bb=1.25 * GB, extra={"phases": {
        "compute": [10.0, 0.5], "stage_in": 0.0, "stage_out": 0.0}})
    q = Job("q", 0, walltime=100, runtime=12.5, nodes=1)
    model = PhasedIO()
    res = simulate([p, q], kopanski_dragonfly(pfs=0.5 * GB), "fcfs-bb", execution=model)
    assert res.end == [13.5, 12.5] and res.state == ["finished", "finished"]
    st_ = model.job_stats()[0]
    assert [st_[k] for k in ("compute", "checkpoint", "drain", "drain_wait", "elapsed")] == [
        10.5, 1.0, 2.5, 2.0, 13.5]
    # some job computes until q ends at 12.5, not during p's wait after it
    assert model.contended_time() == (0.0, 12.5)


def test_a_platform_whose_topology_is_not_an_io_tree_runs_without_contention():
    # e.g. the tree's networkx graph given as the topology: no I/O tree to share
    tree = herbein_example_topology()
    platform = dataclasses.replace(platform_from_topology(tree), topology=tree.graph())
    job = Job("a", 0, walltime=150, runtime=100, nodes=2, bandwidth=256 * MB)
    model = IOContention()
    res = simulate([job], platform, "fcfs", execution=model)
    assert res.end == [100.0] and model.tree is None

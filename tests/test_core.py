"""The domain types of :mod:`bbopt.core`: a job's and a platform's fields at and beyond their
bounds, the one fit rule, the authors' Dragonfly order of BB nodes and KTH machine (Kopanski &
Rzadca, Sections 3.1 and 4.1), whether a job can ever run on a platform
(``Platform.why_never_fits``, on named BB nodes where a job's BB is split into one equal piece
per node), what running jobs hold, a decision's clock, and the periodic applications' reading
(Jeannot, Pallez & Vidal: Equation (1), racks)."""

from __future__ import annotations

import math

from hypothesis import example, given
from hypothesis import strategies as st

from bbopt.core import Job, Platform

NAMED = Platform(nodes=8, bb=21.0, bb_nodes=(10.0, 10.0, 1.0))


def _job(nodes: int, bb: float) -> Job:
    return Job(id="j", submit=0.0, walltime=60.0, nodes=nodes, bb=bb)


def test_a_subnormal_request_fits_instead_of_overflowing():
    # 2e-313 B per piece makes capacity / piece infinite: every BB node takes all the pieces
    assert NAMED.why_never_fits(_job(2, 2e-313)) is None
    assert NAMED.why_never_fits(_job(8, 5e-324)) is None


def test_pieces_per_bb_node_at_just_below_and_above_the_threshold():
    # pieces of 5 B: two on each 10 B node, none on the 1 B one, four in all
    assert NAMED.why_never_fits(_job(4, 20.0)) is None
    # pieces of 5.0001 B: one on each node, two in all, for four pieces
    assert NAMED.why_never_fits(_job(4, 20.0004)) == (
        "requests 4 pieces of 5 B of burst buffer, the 3 BB nodes hold 2 such pieces")
    # pieces of 4.999 B still two per node
    assert NAMED.why_never_fits(_job(4, 19.996)) is None
    # five pieces of 4 B: two per node, four in all
    assert NAMED.why_never_fits(_job(5, 20.0)) == (
        "requests 5 pieces of 4 B of burst buffer, the 3 BB nodes hold 4 such pieces")


def test_a_job_whose_pieces_fit_is_still_checked_for_its_local_ssd():
    """The first BB node holds both pieces of 5 B, where the count of pieces stops; the job's
    100 B of local SSD per node, more than any node has, still makes it never fit."""
    platform = Platform(nodes=8, bb=21.0, bb_nodes=(10.0, 10.0, 1.0),
                        node_ssd=(50.0,) * 4 + (80.0,) * 4)
    job = Job(id="j", submit=0.0, walltime=60.0, nodes=2, bb=10.0, ssd=100.0)
    assert platform.why_never_fits(job) == "fewer than 2 nodes have 100 B of SSD"
    assert platform.why_never_fits(Job(id="k", submit=0.0, walltime=60.0, nodes=2, bb=10.0,
                                       ssd=80.0)) is None


@given(nodes=st.integers(1, 8), bb=st.floats(0.0, 20.0, allow_subnormal=True),
       caps=st.lists(st.floats(1e-3, 1e3), min_size=1, max_size=4))
@example(nodes=2, bb=5e-324, caps=[1.0])
def test_the_answer_is_the_count_of_whole_pieces(nodes, bb, caps):
    platform = Platform(nodes=8, bb=sum(caps), bb_nodes=tuple(caps))
    job = _job(nodes, bb)
    reason = platform.why_never_fits(job)
    if bb > sum(caps):
        assert reason is not None and "platform has" in reason
        return
    if bb == 0:
        assert reason is None
        return
    piece = bb / nodes  # (0 when a subnormal request is split: every node then takes all)
    room = sum(nodes if piece == 0 or c / piece >= 1e300
               else min(nodes, math.floor(c / piece * (1 + 1e-12))) for c in caps)
    assert (reason is None) == (room >= nodes)


def test_a_nodes_local_ssd_is_refused_below_zero_above_the_limit_and_when_not_a_number():
    import pytest

    from bbopt.errors import InputError
    from bbopt.limits import MAX_BYTES

    for ok in (0.0, 1.0, float(MAX_BYTES)):
        assert Platform(nodes=2, bb=0.0, node_ssd=(ok, 1e12)).node_ssd[0] == ok
    for bad in (-1.0, -0.5, MAX_BYTES * 1.01, math.nan, math.inf):
        with pytest.raises(InputError, match=r"must be a finite number of bytes >= 0 and <= ") \
                as err:
            Platform(nodes=2, bb=0.0, node_ssd=(1e12, bad))
        assert err.value.field == "node_ssd[1]"


# --- the job's fields: each range at, just below and just above its bounds

def _refused(field: str, reason: str | None = None, **fields):
    """The InputError of ``Job(**fields)`` (on top of a valid job), checked to name ``field``."""
    import pytest

    from bbopt.errors import InputError

    base = {"id": "j", "submit": 0.0, "walltime": 60.0}
    with pytest.raises(InputError) as err:
        Job(**(base | fields))
    assert err.value.field == field
    if reason is not None:
        assert err.value.reason == reason
    return err.value


def test_a_jobs_node_count_is_an_integer_from_one_to_the_limit():
    import numpy as np

    from bbopt.limits import MAX_NODES

    assert Job("j", 0.0, 60.0, nodes=1).nodes == 1
    assert Job("j", 0.0, 60.0, nodes=MAX_NODES).nodes == MAX_NODES
    wide = Job("j", 0.0, 60.0, nodes=np.int64(3))  # numpy integers are integers
    assert wide.nodes == 3 and type(wide.nodes) is int
    _refused("nodes", "job j: nodes must be an integer in [1, 10,000,000], got 0", nodes=0)
    _refused("nodes", "job j: nodes must be an integer in [1, 10,000,000], got 10000001",
             nodes=MAX_NODES + 1)
    _refused("nodes", "job j: nodes must be an integer in [1, 10,000,000], got 1e+30",
             nodes=10**30)
    _refused("nodes", nodes=True)
    _refused("nodes", nodes=np.bool_(True))
    _refused("nodes", nodes=2.0)


def test_a_jobs_numbers_must_be_numbers():
    import numpy as np

    for name in ("submit", "walltime", "bb", "ssd", "bandwidth", "priority", "runtime"):
        _refused(name, f"job j: {name} must be a number, got 'x'", **{name: "x"})
        _refused(name, f"job j: {name} must be a number, got True", **{name: True})
        if name != "runtime":
            _refused(name, f"job j: {name} must be a number, got None", **{name: None})
    job = Job("j", np.float32(1.0), np.int32(60), runtime=None, nodes=2, bb=np.float64(4.0),
              priority=np.int8(-3))
    assert (job.submit, job.walltime, job.runtime, job.bb, job.priority) == (1.0, 60, None, 4.0,
                                                                              -3)
    assert job.demand == (2, 4.0) and job.bb_per_node == 2.0


def test_a_jobs_times_at_and_beyond_their_bounds():
    import math

    from bbopt.limits import MAX_SECONDS

    above = math.nextafter(MAX_SECONDS, math.inf)
    assert Job("j", 0.0, 5e-324).walltime == 5e-324
    assert Job("j", MAX_SECONDS, MAX_SECONDS, runtime=MAX_SECONDS).runtime == MAX_SECONDS
    assert Job("j", 0.0, 1.0, runtime=0.0).runtime == 0.0
    wall = "job j: walltime must be in (0, 1e+10] s, got "
    _refused("walltime", wall + "0.0", walltime=0.0)
    _refused("walltime", wall + repr(above), walltime=above)
    _refused("walltime", wall + "nan", walltime=math.nan)
    _refused("submit", "job j: submit time must be in [0, 1e+10] s, got -5e-324", submit=-5e-324)
    _refused("submit", f"job j: submit time must be in [0, 1e+10] s, got {above!r}",
             submit=above)
    _refused("runtime", "job j: runtime must be in [0, 1e+10] s, got -5e-324", runtime=-5e-324)
    _refused("runtime", f"job j: runtime must be in [0, 1e+10] s, got {above!r}", runtime=above)


def test_a_jobs_bytes_and_bandwidth_at_and_beyond_their_bounds():
    import math

    from bbopt.limits import MAX_BANDWIDTH, MAX_BYTES

    job = Job("j", 0.0, 1.0, bb=MAX_BYTES, ssd=MAX_BYTES, bandwidth=MAX_BANDWIDTH)
    assert (job.bb, job.ssd, job.bandwidth) == (MAX_BYTES, MAX_BYTES, MAX_BANDWIDTH)
    assert Job("j", 0.0, 1.0, bb=0.0, ssd=0.0, bandwidth=0.0).bb == 0.0
    for name, high in (("bb", MAX_BYTES), ("ssd", MAX_BYTES), ("bandwidth", MAX_BANDWIDTH)):
        above = math.nextafter(high, math.inf)
        _refused(name, f"job j: {name} must be in [0, {high:g}], got -5e-324", **{name: -5e-324})
        _refused(name, f"job j: {name} must be in [0, {high:g}], got {above!r}", **{name: above})
        _refused(name, **{name: math.nan})


# --- the one fit rule

def test_a_demand_fits_up_to_one_billionth_of_the_capacity_above_the_free_amount():
    import math

    from bbopt.core import REL_TOL, fits, slack

    assert REL_TOL == 1e-9 and slack(1e9) == 1.0 and slack(4e9) == 4.0
    assert fits(14.0, 10.0, 4e9)  # 4 B of slack on 4 GB: at the bound
    assert not fits(math.nextafter(14.0, math.inf), 10.0, 4e9)
    assert fits(13.5, 10.0, 4e9) and fits(10.0, 10.0, 0.0)
    assert not fits(math.nextafter(10.0, math.inf), 10.0, 0.0)
    assert fits(-1.0, -2.0, 1e9) and not fits(-1.0, -2.5, 1e9)


# --- the platform

def test_the_authors_dragonfly_order_of_bb_nodes():
    import pytest

    from bbopt.core import dragonfly_proximity

    rows = dragonfly_proximity()  # 96 compute nodes, 8 per chassis, 4 chassis per group
    assert len(rows) == 96
    assert rows[0] == (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
    assert rows[7] == rows[0] and rows[8][:4] == (1, 0, 2, 3)
    assert rows[95] == (11, 8, 9, 10, 0, 1, 2, 3, 4, 5, 6, 7)
    assert rows[44] == (5, 4, 6, 7, 0, 1, 2, 3, 8, 9, 10, 11)
    # a last group cut short by the count of BB nodes: 3 chassis, groups of 2
    assert dragonfly_proximity(6, 2, 2) == ((0, 1, 2),) * 2 + ((1, 0, 2),) * 2 + ((2, 0, 1),) * 2
    assert dragonfly_proximity(6, 3, 1) == ((0, 1),) * 3 + ((1, 0),) * 3
    with pytest.raises(ValueError, match=r"^7 compute nodes are not whole chassis of 2$"):
        dragonfly_proximity(7, 2, 2)


def _platform_refused(field: str, reason: str | None = None, **fields):
    import pytest

    from bbopt.errors import InputError

    with pytest.raises(InputError) as err:
        Platform(**({"nodes": 2} | fields))
    assert err.value.field == field
    if reason is not None:
        assert err.value.reason == reason


def test_a_platforms_nodes_and_bb_at_and_beyond_their_bounds():
    import math

    import numpy as np

    from bbopt.limits import MAX_BYTES, MAX_NODES

    numpy_nodes = Platform(np.int16(5), bb=MAX_BYTES)
    assert numpy_nodes.nodes == 5 and type(numpy_nodes.nodes) is int
    assert numpy_nodes.capacity == (5, MAX_BYTES) and numpy_nodes.capacity.bb == MAX_BYTES
    assert Platform(1).capacity.nodes == 1 and Platform(MAX_NODES).nodes == MAX_NODES
    nodes = "platform nodes must be an integer in [1, 10,000,000], got "
    _platform_refused("nodes", nodes + "0", nodes=0)
    _platform_refused("nodes", nodes + "10000001", nodes=MAX_NODES + 1)
    _platform_refused("nodes", nodes + "True", nodes=True)
    _platform_refused("nodes", nodes + "2.0", nodes=2.0)
    _platform_refused("bb", "platform bb must be in [0, 1e+21] bytes, got -5e-324", bb=-5e-324)
    above = math.nextafter(MAX_BYTES, math.inf)
    _platform_refused("bb", f"platform bb must be in [0, 1e+21] bytes, got {above!r}", bb=above)
    _platform_refused("node_ssd", "node_ssd has 3 entries for 2 nodes", node_ssd=(1.0,) * 3)
    _platform_refused("node_ssd", "node_ssd has 1 entries for 2 nodes", node_ssd=(1.0,))


def test_named_bb_nodes_sum_to_the_bb_within_one_billionth():
    import math

    assert Platform(2, bb=1e9 * (1 + 0.9e-9), bb_nodes=(1e9,)).bb_nodes == (1e9,)
    assert Platform(2, bb=1e9 * (1 - 0.9e-9), bb_nodes=(1e9,)).bb_nodes == (1e9,)
    assert Platform(2, bb=3.0, bb_nodes=(1.0, 2.0)).bb_nodes == (1.0, 2.0)
    _platform_refused("bb_nodes", "bb_nodes sum to 1e+09 B, bb is 1e+09 B",
                      bb=1e9 * (1 + 1.1e-9), bb_nodes=(1e9,))
    _platform_refused("bb_nodes", "bb_nodes sum to 3 B, bb is 4 B", bb=4.0, bb_nodes=(1.0, 2.0))
    positive = "bb_nodes must be positive capacities in bytes"
    for bad in ((), (1.0, 0.0), (1.0, -1.0), (math.inf,), (math.nan,)):
        _platform_refused("bb_nodes", positive, bb=1.0, bb_nodes=bad)
    assert Platform(2, bb=5e-324, bb_nodes=(5e-324,)).bb == 5e-324


def test_a_proximity_orders_every_bb_node_for_every_compute_node():
    ok = Platform(2, bb=2.0, bb_nodes=(1.0, 1.0), bb_proximity=((0, 1), (1, 0)))
    assert ok.bb_proximity == ((0, 1), (1, 0))
    assert Platform(1, bb=1.0, bb_nodes=(1.0,), bb_proximity=((0,),)).bb_proximity == ((0,),)
    message = "bb_proximity must give, for each compute node, an order of all the bb_nodes"
    for bad in (((0, 1),), ((0, 1), (1, 0), (0, 1)), ((0, 1), (1, 1)), ((0, 1), (1,)),
                ((0, 1), (1, 2))):
        _platform_refused("bb_proximity", message, bb=2.0, bb_nodes=(1.0, 1.0),
                          bb_proximity=bad)
    _platform_refused("bb_proximity", message, nodes=1, bb=0.0, bb_proximity=((),))


def test_the_kth_machine_of_the_paper():
    import pytest

    from bbopt.core import GB, dragonfly_proximity
    from bbopt.errors import InputError

    pool = Platform.kopanski()
    assert (pool.nodes, pool.bb, pool.name, pool.bb_nodes) == (96, 480 * GB, "kopanski-kth", None)
    named = Platform.kopanski(named_bb=True)
    assert (named.nodes, named.bb, named.name) == (96, 480 * GB, "kopanski-kth-named")
    assert named.bb_nodes == (40 * GB,) * 12 and named.bb_proximity is None
    near = Platform.kopanski(named_bb=True, bb_placement="proximity")
    assert (near.nodes, near.bb, near.name) == (96, 480 * GB, "kopanski-kth-proximity")
    assert near.bb_nodes == (40 * GB,) * 12
    assert near.bb_proximity == dragonfly_proximity(96, 8, 4)
    with pytest.raises(InputError) as err:
        Platform.kopanski(bb_placement="proximity")
    assert (err.value.field, err.value.reason) == (
        "bb_placement", "bb_placement='proximity' needs named_bb=True")
    with pytest.raises(InputError) as err:
        Platform.kopanski(named_bb=True, bb_placement="nearest")
    assert (err.value.field, err.value.reason) == (
        "bb_placement", "bb_placement must be 'first-fit' or 'proximity', got 'nearest'")


def test_a_job_never_fits_beyond_the_nodes_the_bb_or_the_ssds():
    ssd = Platform(4, bb=100.0, node_ssd=(10.0, 20.0, 20.0, 30.0))
    assert ssd.why_never_fits(Job("j", 0.0, 1.0, nodes=4, bb=100.0)) is None
    assert ssd.why_never_fits(Job("j", 0.0, 1.0, nodes=5)) == (
        "requests 5 nodes, platform has 4")
    assert ssd.why_never_fits(Job("j", 0.0, 1.0, bb=100.5)) == (
        "requests 100.5 B of burst buffer, platform has 100 B")
    # three nodes have 20 B of SSD (two of exactly 20 B), one has 30 B
    assert ssd.why_never_fits(Job("j", 0.0, 1.0, nodes=3, ssd=20.0)) is None
    assert ssd.why_never_fits(Job("j", 0.0, 1.0, nodes=4, ssd=20.0)) == (
        "fewer than 4 nodes have 20 B of SSD")
    assert ssd.why_never_fits(Job("j", 0.0, 1.0, nodes=1, ssd=30.0)) is None
    assert ssd.why_never_fits(Job("j", 0.0, 1.0, nodes=1, ssd=30.5)) == (
        "fewer than 1 nodes have 30.5 B of SSD")
    none = Platform(4, bb=100.0)
    assert none.why_never_fits(Job("j", 0.0, 1.0, ssd=1.0)) == (
        "requests local SSD, platform has none")
    assert none.why_never_fits(Job("j", 0.0, 1.0, ssd=0.0)) is None
    # named BB nodes: a job without BB is never refused for its pieces
    assert NAMED.why_never_fits(_job(8, 0.0)) is None
    # a piece exactly the size of a BB node, and every piece on one node
    assert NAMED.why_never_fits(_job(2, 20.0)) is None
    assert NAMED.why_never_fits(_job(3, 3.0)) is None
    assert NAMED.why_never_fits(_job(3, 21.0)) == (
        "requests 3 pieces of 7 B of burst buffer, the 3 BB nodes hold 2 such pieces")
    # below one byte: a piece of half a byte on BB nodes of a quarter never fits
    tiny = Platform(2, bb=0.5, bb_nodes=(0.25, 0.25))
    assert tiny.why_never_fits(_job(1, 0.5)) == (
        "requests 1 pieces of 0.5 B of burst buffer, the 2 BB nodes hold 0 such pieces")
    assert tiny.why_never_fits(_job(2, 0.5)) is None


# --- running jobs and what a state holds

def test_what_the_running_jobs_hold_and_what_is_free():
    from bbopt.core import ClusterState, RunningJob, RunningJobs

    a = RunningJob(Job("a", 0.0, 30.0, nodes=3, bb=2.5), start=5.0)
    b = RunningJob(Job("b", 0.0, 10.0, nodes=2, bb=4.0), start=20.0)
    assert (a.expected_end, b.expected_end) == (35.0, 30.0)
    summed = RunningJobs((b, a))
    assert summed == (b, a) and summed.held == (5, 6.5)
    assert RunningJobs().held == (0, 0.0) and RunningJobs((a,), held=(7, 1.0)).held == (7, 1.0)
    platform = Platform(8, bb=10.0)
    assert ClusterState(0.0, platform, (a, b)).used() == (5, 6.5)
    assert ClusterState(0.0, platform, (a, b)).free() == (3, 3.5)
    assert ClusterState(0.0, platform).free() == (8, 10.0)
    # the engine's view: the total its ledger keeps is taken as is
    view = RunningJobs.of([b, a], (6, 7.0))
    assert type(view) is RunningJobs and view == (b, a) and view.held == (6, 7.0)
    assert ClusterState(0.0, platform, view).used() == (6, 7.0)
    assert ClusterState(0.0, platform, view).free() == (2, 3.0)


# --- a decision's clock

class _Clock:
    """``time.perf_counter`` and ``time.thread_time`` set by hand."""

    def __init__(self) -> None:
        self.wall = 100.0
        self.cpu = 7.0

    def perf_counter(self) -> float:
        return self.wall

    def thread_time(self) -> float:
        return self.cpu


def test_the_slowdown_is_wall_per_cpu_second_between_one_and_fifty(monkeypatch):
    import math

    import pytest

    from bbopt import core

    clock = _Clock()
    monkeypatch.setattr(core, "_time", clock)
    assert core.decision_slowdown() == 1.0 and core.decision_elapsed() == 0.0
    with core.decision_asked(98.0):  # asked 2 s of wall time ago, CPU counted from now
        assert core.decision_elapsed() == 2.0
        clock.cpu += 0.5
        clock.wall += 1.0
        assert core.decision_slowdown() == 3.0 / 0.5 and core.decision_elapsed() == 3.0
        clock.wall += 147.0  # 150 s for 0.5 s of CPU
        assert core.decision_slowdown() == 50.0
        clock.wall = 98.25  # less wall than CPU time
        assert core.decision_slowdown() == 1.0
        clock.wall = 97.0  # a clock before the asking: nothing spent
        assert core.decision_elapsed() == 0.0
    clock.cpu = 0.0
    with core.decision_asked(98.0):
        clock.wall, clock.cpu = 98.0078125, 1e-3  # 1 ms of CPU: enough to tell
        assert core.decision_slowdown() == pytest.approx(7.8125)
        clock.cpu = math.nextafter(1e-3, 0.0)  # under 1 ms: too little
        assert core.decision_slowdown() == 1.0
    clock.wall, clock.cpu = 500.0, 100.0
    assert core.decision_slowdown() == 1.0 and core.decision_elapsed() == 0.0


def test_a_decisions_statistics_pickle_as_their_values():
    import pickle

    from bbopt.core import Decision, SolveStats, Start, Status

    stats = SolveStats("cpsat", Status.FEASIBLE, (1.0, 2.0), 3.0, 0.25, 0.5, 1.5, True)
    back = pickle.loads(pickle.dumps(stats))
    assert back == stats and back.status is Status.FEASIBLE and back.audited is True
    assert (back.backend, back.objective, back.bound, back.gap, back.wall_time, back.budget) == (
        "cpsat", (1.0, 2.0), 3.0, 0.25, 0.5, 1.5)
    assert Decision(start=(Start("b"), Start("a", (0, 1)))).started_ids == ["b", "a"]
    assert Decision().started_ids == []


# --- periodic applications (Jeannot, Pallez & Vidal)

def _periodic(io) -> Job:
    return Job("p", 0.0, 1000.0, runtime=900.0, extra={"io": io})


def test_a_periodic_jobs_iterations_compute_and_bytes():
    from bbopt.core import periodic_spec

    assert periodic_spec(Job("p", 0.0, 1.0)) is None
    assert periodic_spec(Job("p", 0.0, 1.0, extra=None)) is None  # (as a reader may leave it)
    assert periodic_spec(Job("p", 0.0, 1.0, extra={"other": 1})) is None
    spec = periodic_spec(_periodic({"iterations": "3", "compute_seconds": 2, "io_bytes": "5"}))
    assert spec == (3, 2.0, 5.0) and type(spec[0]) is int and type(spec[2]) is float
    assert periodic_spec(_periodic({"iterations": 1, "compute_seconds": 0.0,
                                    "io_bytes": 0.0})) == (1, 0.0, 0.0)


def test_a_periodic_jobs_bad_values_name_their_field():
    import math

    import pytest

    from bbopt.core import periodic_spec
    from bbopt.errors import InputError

    good = {"iterations": 2, "compute_seconds": 1.0, "io_bytes": 1.0}
    cases = [
        ([1, 2], "io", "job p: extra['io'] must be a mapping"),
        ({"compute_seconds": 1.0, "io_bytes": 1.0}, "io.iterations",
         "job p: extra['io'] lacks 'iterations'"),
        ({"iterations": 1, "io_bytes": 1.0}, "io.compute_seconds",
         "job p: extra['io'] lacks 'compute_seconds'"),
        ({"iterations": 1, "compute_seconds": 1.0}, "io.io_bytes",
         "job p: extra['io'] lacks 'io_bytes'"),
        (good | {"iterations": "2.5"}, "io", "job p: extra['io'] iterations, compute_seconds and "
                                             "io_bytes must be numbers"),
        (good | {"io_bytes": None}, "io", None),
        (good | {"iterations": 0}, "io.iterations", "job p: io.iterations must be >= 1, got 0"),
        (good | {"compute_seconds": -5e-324}, "io.compute_seconds",
         "job p: io.compute_seconds must be >= 0, got -5e-324"),
        (good | {"io_bytes": math.inf}, "io.io_bytes", "job p: io.io_bytes must be >= 0, got inf"),
        (good | {"io_bytes": math.nan}, "io.io_bytes", "job p: io.io_bytes must be >= 0, got nan"),
        (good | {"compute_seconds": -math.inf}, "io.compute_seconds", None),
    ]
    for io, field, reason in cases:
        with pytest.raises(InputError) as err:
            periodic_spec(_periodic(io))
        assert err.value.field == field, io
        if reason is not None:
            assert err.value.reason == reason


def test_rack_sizes_split_the_nodes_larger_first_or_are_given():
    import pytest

    from bbopt.core import rack_sizes
    from bbopt.errors import InputError

    assert rack_sizes(3, 10) == [4, 3, 3] and rack_sizes(4, 10) == [3, 3, 2, 2]
    assert rack_sizes(1, 5) == [5] and rack_sizes(5, 5) == [1] * 5
    assert rack_sizes((2.0, 3), 5) == [2, 3] and type(rack_sizes((2.0, 3), 5)[0]) is int
    assert rack_sizes([1], 1) == [1]
    for racks, nodes, field_reason in (
            (0, 5, "0 racks for 5 nodes"), (6, 5, "6 racks for 5 nodes"),
            ([], 0, "rack sizes must be positive integers"),
            ([2, 0, 3], 5, "rack sizes must be positive integers"),
            ([3, -1, 3], 5, "rack sizes must be positive integers"),
            ([2, 2], 5, "rack sizes sum to 4, platform has 5 nodes"),
            ([3, 3], 5, "rack sizes sum to 6, platform has 5 nodes")):
        with pytest.raises(InputError) as err:
            rack_sizes(racks, nodes)
        assert (err.value.field, err.value.reason) == ("racks", field_reason)


def test_time_alone_is_equation_one():
    import pytest

    from bbopt.core import time_alone
    from bbopt.errors import InputError

    # n (w + v / b): 3 iterations of 10 s and 100 B at 20 B/s, 45 s (not 3 * 10 + 5 nor 3 * 10 +
    # 3 * 100 * 20)
    io = {"iterations": 3, "compute_seconds": 10.0, "io_bytes": 100.0, "io_bandwidth": 20.0}
    assert time_alone(_periodic(io)) == 45.0
    assert time_alone(_periodic(io), bandwidth=50.0) == 36.0
    assert time_alone(Job("j", 0.0, 60.0, runtime=0.0)) == 0.0
    assert time_alone(Job("j", 0.0, 60.0, runtime=20.0)) == 20.0
    assert time_alone(Job("j", 0.0, 60.0)) == 60.0
    # a bandwidth below 1 B/s is a bandwidth: 2 (1 + 1 / 0.5) = 6 s
    slow = {"iterations": 2, "compute_seconds": 1.0, "io_bytes": 1.0, "io_bandwidth": 0.5}
    assert time_alone(_periodic(slow)) == 6.0 and time_alone(_periodic(io), 0.25) == 1230.0
    for bad in ({k: v for k, v in io.items() if k != "io_bandwidth"}, io | {"io_bandwidth": 0}):
        with pytest.raises(InputError) as err:
            time_alone(_periodic(bad))
        assert (err.value.field, err.value.reason) == (
            "io.io_bandwidth", "job p: no I/O bandwidth (io.io_bandwidth)")
    with pytest.raises(InputError):
        time_alone(_periodic(io), bandwidth=-1.0)

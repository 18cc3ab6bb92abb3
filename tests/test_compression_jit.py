"""conservative-bb's compression compiled (bbopt.policies.compression_jit) against the Python
loop: one contract. Every decision of a replay with the compiled loop (every compression,
however small, runs compiled here) must be the Python one -- the same starts, the same
reservations at the same float times, the same memory -- both when the profile is kept between
decisions (the log of freed slots) and when it is rebuilt (every start before a reservation's
own scanned). Sizes and times are fractional, so the float operations must be the same ones in
the same order; some BB requests fill the pool to within its fit tolerance, so rows go below
zero and a job's own hold is tested.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("numba")

from bbopt import Job, Platform, simulate  # noqa: E402
from bbopt.jit import kernels  # noqa: E402
from bbopt.policies import conservative, make_policy  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402
from tests._workload_data import KTH_SWF, data_file  # noqa: E402

PLATFORM = Platform(nodes=8, bb=100.0)
#: (the fixture below patches module constants the same way for every example)
SUPPRESSED = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture]


@pytest.fixture
def every_compression_compiled(monkeypatch):
    """Compressions of any size run compiled; the calls and moves are counted."""
    monkeypatch.setattr(conservative, "COMPILED_FROM", 1)
    seen = {"calls": 0, "moved": 0}
    inner = conservative._compress_compiled

    def counted(*args):
        out = inner(*args)
        seen["calls"] += 1
        seen["moved"] += len(out)
        return out

    monkeypatch.setattr(conservative, "_compress_compiled", counted)
    return seen


@st.composite
def fractional_workloads(draw):
    """5 to 30 jobs with fractional walltimes, runtimes and BB (thirds and sevenths), most ending
    early; a few BB requests above the pool or half of it by most of the fit tolerance (1e-7
    of 100), which leave rows below minus half of it."""
    jobs = []
    for k in range(draw(st.integers(5, 30))):
        walltime = draw(st.integers(1, 60)) / 3
        bb = draw(st.one_of(st.integers(0, 700).map(lambda x: x / 7),
                            st.sampled_from([100.0 + 9e-8, 50.0 + 4.5e-8, 100.0 - 1e-12])))
        jobs.append(Job(id=str(k), submit=draw(st.integers(0, 90)) / 3, walltime=walltime,
                        runtime=walltime * draw(st.sampled_from([0.0, 0.25, 0.5, 0.9, 1.0])),
                        nodes=draw(st.integers(1, 8)), bb=bb))
    return jobs


def _replay(jobs, platform, compiled: bool, depth=None):
    decisions = []

    def observe(state, decision):
        decisions.append((state.time, decision.started_ids, decision.reservations,
                          decision.memory))

    res = simulate(jobs, platform, "conservative-bb",
                   options={"depth": depth, "compiled": compiled}, on_decision=observe)
    return res, decisions


@settings(max_examples=200, deadline=None, suppress_health_check=SUPPRESSED)
@given(fractional_workloads(), st.sampled_from([None, 2, 1000]))
def test_the_compiled_compression_takes_the_python_decisions(every_compression_compiled, jobs,
                                                             depth):
    py, py_decisions = _replay(jobs, PLATFORM, compiled=False, depth=depth)
    jit, jit_decisions = _replay(jobs, PLATFORM, compiled=True, depth=depth)
    assert jit_decisions == py_decisions
    assert (jit.start, jit.end, jit.state) == (py.start, py.end, py.state)


@settings(max_examples=100, deadline=None, suppress_health_check=SUPPRESSED)
@given(fractional_workloads())
def test_a_rebuilt_profile_compressed_compiled_gives_the_kept_one(every_compression_compiled,
                                                                   jobs):
    """A fresh compiled policy on each state of a replay (no kept profile: every reservation
    scanned from now on) decides as the policy that kept its profile."""
    def observe(state, decision):
        fresh = make_policy("conservative-bb", compiled=True).decide(state)
        assert (fresh.started_ids, fresh.reservations, fresh.memory) == (
            decision.started_ids, decision.reservations, decision.memory), state.time

    simulate(jobs, PLATFORM, "conservative-bb", options={"compiled": False},
             on_decision=observe)


def test_kth_replays_the_same_with_the_compiled_compression(every_compression_compiled):
    """3,000 KTH jobs with log-normal BB on a third of Kopanski's machine: the same schedule,
    and the compiled loop did move reservations (thousands of them)."""
    trace = read_swf(data_file(KTH_SWF), max_nodes=96, oversize="drop")
    jobs = with_lognormal_bb(trace.jobs[:3000], seed=0)
    platform = Platform(nodes=96, bb=480e9)
    py, _ = _replay(jobs, platform, compiled=False)
    assert every_compression_compiled["calls"] == 0
    jit, _ = _replay(jobs, platform, compiled=True)
    assert (jit.start, jit.end) == (py.start, py.end)
    assert every_compression_compiled["moved"] > 1000


def test_unset_the_policy_switches_to_the_compiled_loop_after_enough_work(monkeypatch):
    """Automatic: large compressions run in Python until they looked at SWITCH_AFTER
    reservations, then compiled (or at once when the kernels are loaded already)."""
    assert kernels(conservative._KERNELS) is not None  # loaded: unset means compiled
    policy = make_policy("conservative-bb")
    assert policy._compiled(conservative.COMPILED_FROM)
    monkeypatch.setattr(conservative, "_KERNELS", "not.loaded")  # as in a fresh process
    monkeypatch.setattr(conservative, "SWITCH_AFTER", 50)
    policy = make_policy("conservative-bb")
    assert [policy._compiled(20) for _ in range(4)] == [False, False, False, True]
    assert not make_policy("conservative-bb", compiled=False)._compiled(10**6)
    with pytest.raises(ValueError, match="compiled"):
        make_policy("conservative-bb", compiled="yes")

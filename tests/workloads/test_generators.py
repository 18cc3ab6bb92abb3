"""Workload generators of the five papers hit their target statistics, deterministically."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.core import GB, HOUR, MB, TB, Job
from bbopt.errors import InputError
from bbopt.workloads.generators import bbsched, herbein, jeannot, kopanski, omfs
from bbopt.workloads.swf import read_swf
from bbopt.workloads.synthetic import kth_like
from tests._workload_data import KTH_SWF, data_file


def _jobs(n=2000, seed=0):
    return kth_like(n, seed=seed, bb=False)


# -- Kopanski ---------------------------------------------------------------------------------

def test_lognormal_median_per_processor():
    out = kopanski.with_lognormal_bb(_jobs(20000), seed=1)
    per_proc = np.array([j.bb / j.nodes for j in out])
    assert np.median(per_proc) == pytest.approx(2.63 * GB, rel=0.03)


@given(seed=st.integers(0, 2**32 - 1), size=st.integers(0, 300))
@settings(max_examples=30, deadline=None)
def test_lognormal_draw_is_scipys_bit_for_bit(seed, size):
    """The numpy draw (no scipy.stats import) gives scipy's lognorm.rvs numbers exactly and
    leaves the generator in the same state."""
    from scipy import stats

    from bbopt.workloads import bb

    mine, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    kib = stats.lognorm.rvs(bb.LOGNORM_S, loc=bb.LOGNORM_LOC, scale=bb.LOGNORM_SCALE, size=size,
                            random_state=theirs)
    expected = np.round(np.clip(kib * 1024.0, bb.BB_PER_PROC_MIN, bb.BB_PER_PROC_MAX))
    assert np.array_equal(bb.lognormal_bb_per_processor(size, mine), expected)
    assert mine.random() == theirs.random()


def test_phases_layout_and_bounds():
    jobs = kopanski.kopanski_workload(_jobs(500), seed=2)
    seen = set()
    for j in jobs:
        ph = j.extra["phases"]
        # one phase per hour of runtime, rounded, at least 1 and at most 10
        assert ph["compute_phases"] == min(max(round(j.runtime / HOUR), 1), 10)
        seen.add(ph["compute_phases"])
        assert ph["compute_phases"] * ph["compute_seconds"] == pytest.approx(j.runtime)
        assert ph["checkpoints"] == ph["compute_phases"] - 1
        assert ph["stage_in_bytes"] == ph["stage_out_bytes"] == j.bb == ph["checkpoint_bytes"]
    assert {1, 10} <= seen and len(seen) >= 5  # the sample covers the clipped range
    long = Job("x", 0, walltime=100 * HOUR, runtime=50 * HOUR)
    assert kopanski.phases_of(long)["compute_phases"] == 10
    assert kopanski.phases_of(long, phase_length=10 * HOUR)["compute_phases"] == 5
    assert kopanski.phases_of(Job("y", 0, 60, 1.0))["compute_phases"] == 1


def test_io_taken_out_as_the_authors_generator():
    # KTH job 15 in the authors' I/O-aware part 0: 4 nodes, walltime 53,940 s, runtime 3,477 s,
    # 4,548,221,140 B per node -> computation 3,331,456,923,520 flop at 1 Gflop/s
    bb = 4 * 4_548_221_140.0
    job = Job("15", 0, walltime=53_940, runtime=3_477, nodes=4, bb=bb)
    (out,) = kopanski.with_io_taken_out([job])
    assert out.runtime == pytest.approx(3_331.45692352, abs=1e-6)
    assert (out.walltime, out.nodes, out.bb) == (53_940, 4, bb)
    # the floor: at least 5 % of the runtime (not 0, not the runtime)
    big = Job("b", 0, walltime=3_600, runtime=100, nodes=1, bb=40 * GB)
    assert kopanski.with_io_taken_out([big])[0].runtime == pytest.approx(5.0)
    # walltime 120 s keeps its runtime, 121 s does not
    short = Job("s", 0, walltime=120, runtime=100, nodes=1, bb=1 * GB)
    assert kopanski.with_io_taken_out([short])[0].runtime == 100
    longer = Job("l", 0, walltime=121, runtime=100, nodes=1, bb=1 * GB)
    assert kopanski.with_io_taken_out([longer])[0].runtime == pytest.approx(100 - 32.0)
    # per node, not total: 2 nodes of 1 GB each take out 32 s as 1 node of 1 GB does
    two = Job("t", 0, walltime=3_600, runtime=1_000, nodes=2, bb=2 * GB)
    assert kopanski.with_io_taken_out([two])[0].runtime == pytest.approx(968.0)


def test_kopanski_workload_io_out_feeds_the_phases():
    jobs = _jobs(300)
    plain = kopanski.kopanski_workload(jobs, seed=3, rules=True)
    out = kopanski.kopanski_workload(jobs, seed=3, rules=True, io_out=True)
    assert [j.bb for j in out] == [j.bb for j in plain]  # the same draw
    shorter = 0
    for p, o in zip(plain, out, strict=True):
        assert o.runtime <= p.runtime
        shorter += o.runtime < p.runtime
        ph = o.extra["phases"]
        assert ph["compute_phases"] * ph["compute_seconds"] == pytest.approx(o.runtime)
    assert shorter > 0


# -- BBSched ----------------------------------------------------------------------------------

def _trace_with_few_bb(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    jobs = _jobs(n, seed)
    out = []
    for k, j in enumerate(jobs):
        if k % 50 == 0:  # 2 % of the jobs request BB, spread from 1 GB to 60 TB
            from dataclasses import replace

            j = replace(j, bb=float(np.exp(rng.uniform(np.log(1 * GB), np.log(60 * TB)))))
        out.append(j)
    return out


@pytest.mark.parametrize("name", ["S1", "S2", "S3", "S4"])
def test_bbsched_scenarios(name):
    trace = _trace_with_few_bb()
    share, above = bbsched.BB_SCENARIOS[name]
    out = bbsched.bbsched_scenario(trace, name, seed=5)
    has = np.array([j.bb > 0 for j in out])
    assert has.mean() == pytest.approx(share, abs=1 / len(out))
    original = {j.id: j.bb for j in trace}
    pool = {j.bb for j in trace if j.bb > above}
    for j in out:
        if original[j.id] > 0:
            assert j.bb == original[j.id]  # existing requests are kept
        elif j.bb > 0:
            assert j.bb in pool
    assert out == bbsched.bbsched_scenario(trace, name, seed=5)


def test_bbsched_needs_a_distribution_when_the_trace_has_none():
    with pytest.raises(InputError, match="distribution"):
        bbsched.bbsched_scenario(_jobs(100), "S3")

    def lognormal(rng, size):
        return rng.lognormal(np.log(10 * TB), 1.0, size)

    out = bbsched.bbsched_scenario(_jobs(1000), "S3", seed=1, distribution=lognormal)
    values = np.array([j.bb for j in out if j.bb > 0])
    assert len(values) == 500 and values.min() > 20 * TB


def test_bbsched_thresholds_scale_to_a_smaller_machine():
    def loguniform(rng, size):
        return np.exp(rng.uniform(np.log(1 * GB), np.log(6 * TB), size))

    # On a machine with 1 % of the paper's BB, S4 draws requests above 1 % of 20 TB.
    out = bbsched.bbsched_scenario(_jobs(1000), "S4", seed=2, distribution=loguniform,
                                   scale=0.01)
    values = np.array([j.bb for j in out if j.bb > 0])
    assert len(values) == 750 and values.min() > 0.2 * TB
    assert np.mean(values < 2 * TB) > 0.3  # unscaled, nothing below 20 TB would be drawn
    with pytest.raises(InputError, match="scale"):
        bbsched.bbsched_scenario(_jobs(10), "S4", distribution=loguniform, scale=0.0)


@pytest.mark.parametrize("name", ["S5", "S6", "S7"])
def test_ssd_scenarios(name):
    out = bbsched.bbsched_scenario(_trace_with_few_bb(), name, seed=3)
    ssd = np.array([j.ssd for j in out])
    small = ssd <= 128 * GB
    assert small.mean() == pytest.approx(bbsched.SSD_SCENARIOS[name], abs=1e-3)
    assert ssd.max() <= 256 * GB and ssd[~small].min() >= 129 * GB
    assert np.mean([j.bb > 0 for j in out]) == pytest.approx(0.75, abs=1e-3)  # on top of S2
    platform = bbsched.theta_ssd_platform(100, 1 * TB)
    assert sorted(set(platform.node_ssd)) == [128 * GB, 256 * GB]


# -- Herbein ----------------------------------------------------------------------------------

def test_herbein_fit_and_generate_on_kth():
    trace = read_swf(data_file(KTH_SWF))
    start = herbein.start_of_swf(trace.header)
    model = herbein.HerbeinModel.fit(trace.jobs, start=start)
    assert model.rates["weekday_day"] > model.rates["weekend_night"]
    assert set(model.node_bins[0].tolist()) <= {1, 2, 4, 8, 16, 32, 64}
    week = 7 * 86400
    jobs = model.generate(duration=4 * week, start=start, seed=0)
    assert all(j.bandwidth == 18 * MB for j in jobs)
    assert all(j.nodes & (j.nodes - 1) == 0 for j in jobs)  # powers of two
    expected = model.expected_arrivals(4 * week, start) * float(
        model.jobs_per_arrival[0] @ model.jobs_per_arrival[1])
    assert len(jobs) == pytest.approx(expected, rel=0.1)
    pairs = {tuple(p) for p in model.time_pairs[0].tolist()}
    assert all((j.walltime, j.runtime) in pairs for j in jobs[:200])
    assert [j.id for j in jobs[:3]] == ["1", "2", "3"]


def test_herbein_arrival_rates_by_time_range():
    model = herbein.HerbeinModel.default()
    jobs = model.generate(duration=20 * 7 * 86400, seed=4)
    # one job per arrival would make job counts Poisson; use arrival instants instead
    arrivals = sorted({j.submit for j in jobs})
    counts = dict.fromkeys(herbein.RANGES, 0)
    for t in arrivals:
        counts[herbein.time_range(t)] += 1
    exposure = dict.fromkeys(herbein.RANGES, 0.0)
    for a, b, r in herbein._segments(0.0, 20 * 7 * 86400):
        exposure[r] += b - a
    for r in herbein.RANGES:
        assert counts[r] / exposure[r] == pytest.approx(model.rates[r], rel=0.12)
    assert model.generate(n_jobs=50, seed=1) == model.generate(n_jobs=50, seed=1)
    assert len(model.generate(n_jobs=50, seed=1)) == 50


def test_time_ranges():
    h = 3600
    assert herbein.time_range(10 * h) == "weekday_day"
    assert herbein.time_range(4 * 86400 + 23 * h) == "weekday_night"  # Friday 23:00
    assert herbein.time_range(5 * 86400 + 2 * h) == "weekend_night"  # Saturday 2:00
    assert herbein.time_range(6 * 86400 + 18 * h + 59 * 60) == "weekend_day"


# -- Jeannot ----------------------------------------------------------------------------------

@pytest.mark.parametrize(("protocol", "profile", "alpha"), [
    ("mira", "binormal", 0.5), ("mira", "normal", 0.5), ("mira", "normal", 0.3),
    ("uniform", "normal", 0.3), ("uniform", "binormal", 0.3),
])
def test_jeannot_alpha_within_5_percent(protocol, profile, alpha):
    wl = jeannot.generate(1000, alpha=alpha, protocol=protocol, io_profile=profile, seed=7)
    assert wl.relative_error < 0.05
    assert jeannot.io_load(wl.jobs, wl.nodes) == pytest.approx(wl.alpha)
    for j in wl.jobs[:50]:
        io = j.extra["io"]
        assert 10 <= io["iterations"] <= 100
        assert j.runtime == pytest.approx(io["iterations"] * (
            io["compute_seconds"] + io["io_bytes"] / io["io_bandwidth"]))
        assert io["io_bytes"] == pytest.approx(
            io["io_fraction"] * io["compute_seconds"] * j.nodes / wl.nodes * io["io_bandwidth"])


def test_mira_processors_and_durations():
    rng = np.random.default_rng(0)
    q = jeannot.mira_processors(100_000, rng)
    assert q.min() >= 512 and q.max() <= 49152
    assert q.mean() - 512 == pytest.approx(1 / 1.35e-4, rel=0.03)
    d = jeannot.mira_durations(q, rng)
    assert np.median(d[q < 4096]) == pytest.approx(HOUR, rel=0.02)
    assert np.median(d[(q >= 4096) & (q <= 16384)]) == pytest.approx(2 * HOUR, rel=0.02)
    assert np.median(d[q > 16384]) == pytest.approx(0.5 * HOUR, rel=0.02)


def test_uniform_processor_mean_follows_equation_2_rearrangement():
    sizes = jeannot.UNIFORM_SIZES
    for q_bar in (3.0, 341.25, 1500.0):
        w = jeannot.max_entropy_weights(sizes, q_bar)
        assert float(w @ sizes) == pytest.approx(q_bar, rel=1e-6)
    assert np.allclose(jeannot.max_entropy_weights(sizes, 341.25), 1 / 12, atol=1e-6)


def test_binormal_truncated_means_as_in_the_paper():
    u = np.random.default_rng(0).uniform(size=400_000)
    assert jeannot._trunc_normal(u, 0.1).mean() == pytest.approx(0.289, abs=0.003)
    assert jeannot._trunc_normal(u, 0.9).mean() == pytest.approx(0.711, abs=0.003)


def test_unreachable_alpha_is_reported():
    with pytest.raises(InputError, match="reaches about"):
        jeannot.generate(300, alpha=0.05, protocol="mira", io_profile="binormal", seed=1)
    wl = jeannot.generate(300, alpha=0.05, protocol="mira", io_profile="binormal", seed=1,
                          strict=False)
    assert wl.alpha > 0.05


# -- OMFS -------------------------------------------------------------------------------------

def test_entities_from_users_and_random():
    jobs = _jobs(1000)
    out, shares = omfs.assign_entities(jobs, by="user", shares="usage")
    assert sum(shares.values()) == pytest.approx(1.0)
    assert {j.user for j in out} == set(shares)
    work = {}
    for j in out:
        work[j.user] = work.get(j.user, 0.0) + j.nodes * j.runtime
    total = sum(work.values())
    assert all(shares[e] == pytest.approx(w / total) for e, w in work.items())
    folded, eq = omfs.assign_entities(jobs, by="user", n_entities=4, shares="equal", seed=1)
    assert len(eq) <= 4 and all(v == pytest.approx(1 / len(eq)) for v in eq.values())
    assert all(j.extra["original_user"] == o.user for j, o in zip(folded, jobs, strict=True))
    rnd, _ = omfs.assign_entities(jobs, by="random", n_entities=3, seed=2)
    assert {j.user for j in rnd} == {"e0", "e1", "e2"}
    with pytest.raises(InputError, match="no share"):
        omfs.assign_entities(jobs, by="random", n_entities=3, shares={"e0": 1})


@settings(max_examples=30, deadline=None)
@given(st.floats(0, 1), st.floats(0, 1), st.integers(0, 2**16))
def test_preemption_flags_fractions(pre, ckpt, seed):
    pre, ckpt = max(pre, ckpt), min(pre, ckpt)
    jobs = _jobs(200)
    out = omfs.with_preemption_flags(jobs, preemptable=pre, checkpointable=ckpt, seed=seed)
    assert sum(j.preemptable for j in out) == round(pre * 200)
    assert sum(j.checkpointable for j in out) == round(ckpt * 200)
    assert all(j.preemptable for j in out if j.checkpointable)


def test_herbein_cts1_calibration_matches_the_papers_setting():
    """HerbeinModel.cts1: offered load as asked over a week, power-of-two jobs up to 2,048
    nodes at 18 MB/s per node, and 2,500 jobs arriving about as fast as in the paper (a job
    every ~127 s: 31.7 s between state changes, four per job)."""
    HerbeinModel = herbein.HerbeinModel
    for load in (0.5, 0.9):
        assert HerbeinModel.cts1(load=load).offered_load(3888) == pytest.approx(load)
    jobs = HerbeinModel.cts1().generate(n_jobs=2500, max_nodes=3888, seed=3)
    nodes = np.array([j.nodes for j in jobs])
    assert len(jobs) == 2500 and nodes.max() <= 2048
    assert np.all(nodes & (nodes - 1) == 0)  # powers of two
    assert np.mean(nodes <= 8) > 0.5  # biased to small sizes
    assert all(j.bandwidth == 18 * MB for j in jobs)
    gap = (max(j.submit for j in jobs) - min(j.submit for j in jobs)) / len(jobs)
    assert 60 < gap < 160
    # The jobs ask for about the machine: node-seconds over 3,888 nodes x the span.
    asked = sum(j.nodes * j.runtime for j in jobs) / (3888 * gap * len(jobs))
    assert 0.6 < asked < 1.6

"""The capability-computing workload (Theta-like) for BBSched's S1-S4: the stated properties
(Cobalt's 128-node minimum, Theta's size, 17.18 % of jobs in [1 GB, 285 TB], offered load)
hold on the draws, and the Lublin-Feitelson shapes (power-of-two sizes, wider jobs longer)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bbopt.core import GB, TB
from bbopt.errors import InputError
from bbopt.workloads.generators.bbsched import bbsched_scenario
from bbopt.workloads.generators.capability import (
    THETA_NODES,
    CapabilityModel,
    job_rate_per_day,
    theta_platform,
)

JOBS = CapabilityModel().generate(6000, seed=3)


def test_sizes_are_capability_jobs_on_theta():
    nodes = np.array([j.nodes for j in JOBS])
    assert nodes.min() >= 128 and nodes.max() <= THETA_NODES
    assert (nodes >= 1024).mean() > 0.05  # the upper stage reaches the whole machine
    pow2 = np.array([n & (n - 1) == 0 for n in nodes])
    assert 0.6 < pow2.mean() < 0.9  # pow2_prob 0.75 plus non-rounded draws that land on one


def test_offered_load_and_job_rate():
    span = JOBS[-1].submit - JOBS[0].submit
    load = sum(j.nodes * j.runtime for j in JOBS) / (THETA_NODES * span)
    assert load == pytest.approx(0.85, rel=0.05)
    assert job_rate_per_day(JOBS) == pytest.approx(len(JOBS) / (span / 86400), rel=1e-3)
    assert all(b.submit >= a.submit for a, b in zip(JOBS, JOBS[1:], strict=False))


def test_original_bb_requests_follow_theta():
    bb = np.array([j.bb for j in JOBS])
    asks = bb > 0
    assert asks.mean() == pytest.approx(0.1718, abs=0.015)
    assert bb[asks].min() >= 1 * GB and bb[asks].max() <= 285 * TB
    # log-uniform: the median request is near the geometric mean of the range
    assert math.log(np.median(bb[asks])) == pytest.approx(math.log(math.sqrt(285e3) * GB),
                                                          abs=0.6)


def test_wider_jobs_run_longer_and_walltimes_bound_runtimes():
    nodes = np.array([j.nodes for j in JOBS])
    rt = np.array([j.runtime for j in JOBS])
    assert np.median(rt[nodes >= 2048]) > 5 * np.median(rt[nodes <= 256])
    assert all(j.runtime <= j.walltime <= 24 * 3600 for j in JOBS)
    m = CapabilityModel()
    p = m.short_probability(np.array([128, 4392]))
    assert p[0] == pytest.approx(0.78 - 0.0054 * 128 * 128 / 4392)
    assert p[1] == pytest.approx(0.78 - 0.0054 * 128)


def test_same_seed_same_jobs_and_s4_on_it():
    again = CapabilityModel().generate(6000, seed=3)
    assert [(j.submit, j.nodes, j.runtime, j.bb) for j in again] == \
        [(j.submit, j.nodes, j.runtime, j.bb) for j in JOBS]
    s4 = bbsched_scenario(JOBS, "S4", 1)
    assert np.mean([j.bb > 0 for j in s4]) == pytest.approx(0.75, abs=0.001)
    added = [b.bb for a, b in zip(JOBS, s4, strict=True) if a.bb == 0 and b.bb > 0]
    assert min(added) > 20 * TB
    assert theta_platform().bb == 1.26e15 and theta_platform().nodes == 4392


def test_bad_parameters_are_refused():
    with pytest.raises(InputError, match="min_nodes"):
        CapabilityModel(min_nodes=5000)
    with pytest.raises(InputError, match="n_jobs"):
        CapabilityModel().generate(0)


def test_catalog_parameters_reach_the_model():
    """The sweep's ``capability`` generator: defaults are the model's; a smaller long-branch
    scale gives shorter long jobs, so at the same offered load Theta's ~470 jobs a day."""
    from bbopt.workloads.generators.catalog import apply

    assert apply("capability", None, 3, n_jobs=6000) == JOBS
    fast = apply("capability", None, 3, n_jobs=6000, long_log_scale=0.023)
    assert [j.nodes for j in fast] == [j.nodes for j in JOBS]  # same sizes, shorter runs
    assert 400 < job_rate_per_day(fast) < 550 and job_rate_per_day(JOBS) < 120
    span = fast[-1].submit - fast[0].submit
    assert sum(j.nodes * j.runtime for j in fast) / (THETA_NODES * span) == pytest.approx(
        0.85, rel=0.05)
    small = apply("capability", None, 3, n_jobs=2000, min_nodes=8, load=0.5)
    assert min(j.nodes for j in small) < 128 and min(j.nodes for j in small) >= 8


def replay(m: CapabilityModel, n: int, seed: int):
    """The jobs' fields from the generator's draws, in their order (the module docstring's
    rules written out): ``(nodes, runtime, short, walltime, submit, bb)``."""
    rng = np.random.default_rng(seed)
    lo, hi = math.log2(m.min_nodes), math.log2(m.nodes)
    med = min(max(hi - m.u_med_offset, lo), hi)
    first = rng.random(n) < m.u_prob
    e = np.where(first, rng.uniform(lo, med, n), rng.uniform(med, hi, n))
    e = np.where(rng.random(n) < m.pow2_prob, np.round(e), e)
    nodes = np.clip(np.round(2.0 ** e), m.min_nodes, m.nodes).astype(int)
    p = np.clip(m.pb + m.pa * 128.0 * nodes / m.nodes, 0.0, 1.0)
    short = rng.random(n) < p
    log_rt = np.where(short, rng.gamma(*m.short_gamma, n), rng.gamma(*m.long_gamma, n))
    runtime = np.round(np.clip(np.exp(log_rt), *m.runtime_range))
    f = rng.uniform(*m.overestimate, n)
    walltime = np.maximum(np.minimum(np.ceil(runtime * f / 600.0) * 600.0, m.max_walltime),
                          runtime)
    rate = m.load * m.nodes / float(np.mean(nodes * runtime))
    submit = np.floor(np.cumsum(rng.exponential(1.0 / rate, n)))
    submit -= submit[0]
    asks = rng.random(n) < m.bb_share
    bb = np.round(np.exp(rng.uniform(*np.log(m.bb_range), n)) / GB) * GB
    return nodes, runtime, short, walltime, submit, np.where(asks, bb, 0.0)


MODELS = [
    CapabilityModel(),
    # a small machine: u_med clamped to the lower end, short jobs likelier, walltimes capped
    CapabilityModel(nodes=64, min_nodes=2, u_med_offset=9.0, u_prob=0.3, pow2_prob=0.2,
                    pa=-0.01, pb=0.9, runtime_range=(5.0, 7200.0), overestimate=(1.5, 4.0),
                    max_walltime=3600.0, load=1.4, bb_share=0.6, bb_range=(2 * GB, 50 * GB)),
    # u_med past the upper end (a negative offset): clamped to the machine
    CapabilityModel(nodes=1000, min_nodes=10, u_med_offset=-3.0, short_gamma=(2.0, 1.5),
                    long_gamma=(50.0, 0.15)),
]


@pytest.mark.parametrize(("model", "seed"), [(MODELS[0], 11), (MODELS[1], 5), (MODELS[2], 0)])
def test_jobs_are_the_replayed_draws(model, seed):
    jobs = model.generate(400, seed=np.random.default_rng(seed))
    nodes, runtime, short, walltime, submit, bb = replay(model, 400, seed)
    assert [j.id for j in jobs] == [str(k) for k in range(1, 401)]
    assert [j.nodes for j in jobs] == nodes.tolist()
    assert [j.runtime for j in jobs] == runtime.tolist()
    assert [j.walltime for j in jobs] == walltime.tolist()
    assert [j.submit for j in jobs] == submit.tolist()
    assert [j.bb for j in jobs] == bb.tolist()
    assert [j.extra for j in jobs] == [{"capability": "short" if s else "long"} for s in short]
    assert 0 < short.sum() < 400 and 0 < (bb > 0).sum() < 400  # both branches drawn
    assert model.generate(400, seed) == jobs  # a seed or its generator: the same jobs


def test_the_small_machines_draws_meet_each_clip_and_cap():
    m = MODELS[1]
    jobs = m.generate(3000, seed=2)
    rt = np.array([j.runtime for j in jobs])
    assert rt.min() == 5.0 and rt.max() == 7200.0
    # the cap at 3600 s (over a shorter runtime), and a runtime past the cap its own walltime
    assert any(j.walltime == 3600.0 and j.runtime * 1.5 > 3000.0 for j in jobs)
    assert max(j.walltime for j in jobs) == 7200.0
    assert all(j.walltime == max(min(math.ceil(j.walltime / 600) * 600, 3600.0), j.runtime)
               for j in jobs)
    assert {j.nodes for j in jobs} >= {2, 64}


def test_short_probability_by_hand():
    m = CapabilityModel()
    p = m.short_probability(np.array([128, 2196, 4392]))
    assert p.tolist() == pytest.approx([0.78 - 0.6912 * 128 / 4392, 0.78 - 0.3456, 0.0888])
    steep = CapabilityModel(nodes=128, pa=-0.01, pb=1.2)
    assert steep.short_probability(np.array([1, 42, 128])).tolist() == pytest.approx(
        [1.0, 1.2 - 0.42, 0.0])  # clipped to [0, 1] at both ends


@pytest.mark.parametrize(("kw", "field", "reason"), [
    ({"min_nodes": 0}, "min_nodes", "min_nodes must be in [1, nodes], got 0"),
    ({"min_nodes": 4393}, "min_nodes", "min_nodes must be in [1, nodes], got 4393"),
    ({"load": 0.0}, "load", "load must be > 0, got 0.0"),
    ({"load": float("nan")}, "load", "load must be > 0, got nan"),
    ({"bb_share": -0.01}, "bb_share", "bb_share must be in [0, 1], got -0.01"),
    ({"bb_share": 1.01}, "bb_share", "bb_share must be in [0, 1], got 1.01"),
    ({"u_prob": -0.1}, "u_prob", "u_prob and pow2_prob must be probabilities"),
    ({"u_prob": 1.1}, "u_prob", "u_prob and pow2_prob must be probabilities"),
    ({"pow2_prob": -0.1}, "u_prob", "u_prob and pow2_prob must be probabilities"),
    ({"pow2_prob": 1.1}, "u_prob", "u_prob and pow2_prob must be probabilities"),
])
def test_each_refusal_at_its_bound(kw, field, reason):
    with pytest.raises(InputError) as info:
        CapabilityModel(**kw)
    assert (info.value.field, info.value.reason) == (field, reason)


@pytest.mark.parametrize("kw", [{"min_nodes": 1}, {"min_nodes": 4392}, {"load": 0.01},
                                {"bb_share": 0.0}, {"bb_share": 1.0}, {"u_prob": 0.0},
                                {"u_prob": 1.0}, {"pow2_prob": 0.0}, {"pow2_prob": 1.0}])
def test_each_bound_itself_is_accepted(kw):
    m = CapabilityModel(**kw)
    assert len(m.generate(3, seed=1)) == 3


@pytest.mark.parametrize("n", [0, -2])
def test_at_least_one_job(n):
    with pytest.raises(InputError) as info:
        CapabilityModel().generate(n)
    assert (info.value.field, info.value.reason) == ("n_jobs", f"n_jobs must be >= 1, got {n}")
    one = CapabilityModel().generate(1)
    assert len(one) == 1 and one[0].submit == 0.0


def test_the_default_seed_is_0_and_sizes_are_integers():
    m = CapabilityModel()
    assert m.generate(50) == m.generate(50, seed=0) != m.generate(50, seed=1)
    sizes = m.sizes(np.random.default_rng(4), 100)
    assert sizes.dtype.kind == "i" and sizes.tolist() == replay(m, 100, 4)[0].tolist()


def test_job_rate_per_day_by_hand():
    from bbopt import Job

    jobs = [Job(str(k), t, 10) for k, t in enumerate([43200.0, 0.0, 86400.0, 21600.0])]
    assert job_rate_per_day(jobs) == 3.0  # 3 gaps over one day
    assert job_rate_per_day([Job("a", 5.0, 10), Job("b", 5.0, 10)]) == math.inf
    assert job_rate_per_day(jobs[:1]) == math.inf
    assert job_rate_per_day([Job("a", 0.0, 10), Job("b", 1.0, 10)]) == 86400.0  # a 1 s span
    assert job_rate_per_day([Job("a", 0.0, 10), Job("b", 0.5, 10)]) == 172800.0


def test_theta_platform():
    p = theta_platform()
    assert (p.nodes, p.bb, p.name) == (4392, 1.26e15, "theta")
    small = theta_platform(5 * 10**14)
    assert small.bb == 5e14 and type(small.bb) is float and small.nodes == 4392
